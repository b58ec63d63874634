package dracoadapter

import (
	"os"
	"testing"

	"k8s.io/dynamic-resource-allocation/structured/internal"
	"k8s.io/dynamic-resource-allocation/structured/internal/allocatortesting"
)

func TestMain(m *testing.M) {
	code := m.Run()
	Stop()
	os.Exit(code)
}

// TestAllocator runs upstream's shared allocator table with every allocator feature supported:
// each case enables the features it needs, as for upstream's experimental allocator.
func TestAllocator(t *testing.T) {
	allocatortesting.TestAllocator(t, internal.FeaturesAll, NewAllocator)
}

func TestLexicographicalAllocator(t *testing.T) {
	allocatortesting.TestLexicographicalAllocator(t, internal.FeaturesAll, NewAllocator)
}
