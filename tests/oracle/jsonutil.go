package main

import (
	"encoding/json"

	"k8s.io/apimachinery/pkg/runtime"
)

func runtimeRaw(s string) runtime.RawExtension { return runtime.RawExtension{Raw: []byte(s)} }

// jsonRoundTrip returns a deep copy of s made through its JSON encoding, i.e. exactly what a
// reader of the emitted line sees.
func jsonRoundTrip(s *Scenario) (*Scenario, error) {
	b, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	return decodeScenario(b)
}
