package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"reflect"
	"strings"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	dracel "k8s.io/dynamic-resource-allocation/cel"
	"k8s.io/dynamic-resource-allocation/structured"
	"k8s.io/utils/ptr"
)

// AllocFeatures is the optional "features" object of a scenario. nil fields take the
// kube-scheduler 1.37 defaults.
type AllocFeatures struct {
	AdminAccess             *bool `json:"adminAccess,omitempty"`
	PrioritizedList         *bool `json:"prioritizedList,omitempty"`
	PartitionableDevices    *bool `json:"partitionableDevices,omitempty"`
	DeviceTaints            *bool `json:"deviceTaints,omitempty"`
	DeviceTaintRules        *bool `json:"deviceTaintRules,omitempty"`
	DeviceBinding           *bool `json:"deviceBinding,omitempty"`
	ConsumableCapacity      *bool `json:"consumableCapacity,omitempty"`
	FractionalCapacityRange *bool `json:"fractionalCapacityRange,omitempty"`
	ListTypeAttributes      *bool `json:"listTypeAttributes,omitempty"`
	OptionalNodeOperations  *bool `json:"optionalNodeOperations,omitempty"`
	DerivedAttributes       *bool `json:"derivedAttributes,omitempty"`
	CompatibilityGroups     *bool `json:"compatibilityGroups,omitempty"`
}

type resolvedFeatures struct {
	alloc            structured.Features
	cel              dracel.Features
	deviceTaintRules bool
}

func (f *AllocFeatures) resolve() resolvedFeatures {
	if f == nil {
		f = &AllocFeatures{}
	}
	d := func(p *bool, def bool) bool { return ptr.Deref(p, def) }
	r := resolvedFeatures{
		alloc: structured.Features{
			AdminAccess:             d(f.AdminAccess, true),
			PrioritizedList:         d(f.PrioritizedList, true),
			PartitionableDevices:    d(f.PartitionableDevices, true),
			DeviceTaints:            d(f.DeviceTaints, true),
			DeviceBindingAndStatus:  d(f.DeviceBinding, true),
			ConsumableCapacity:      d(f.ConsumableCapacity, true),
			FractionalCapacityRange: d(f.FractionalCapacityRange, false),
			ListTypeAttributes:      d(f.ListTypeAttributes, false),
			OptionalNodeOperations:  d(f.OptionalNodeOperations, false),
			DerivedAttributes:       d(f.DerivedAttributes, false),
			CompatibilityGroups:     d(f.CompatibilityGroups, false),
		},
		deviceTaintRules: d(f.DeviceTaintRules, true),
	}
	r.cel = dracel.Features{
		EnableConsumableCapacity: r.alloc.ConsumableCapacity,
		EnableListTypeAttributes: r.alloc.ListTypeAttributes,
	}
	return r
}

// Scenario is one line of `oracle allocate` input.
type Scenario struct {
	ID               string                         `json:"id"`
	Mode             string                         `json:"mode,omitempty"`
	Node             *v1.Node                       `json:"node"`
	Nodes            []*v1.Node                     `json:"nodes,omitempty"`
	Classes          []*resourceapi.DeviceClass     `json:"classes"`
	Slices           []*resourceapi.ResourceSlice   `json:"slices"`
	AllocatedClaims  []*resourceapi.ResourceClaim   `json:"allocatedClaims"`
	Claims           []*resourceapi.ResourceClaim   `json:"claims"`
	DeviceTaintRules []*resourceapi.DeviceTaintRule `json:"deviceTaintRules,omitempty"`
	Features         *AllocFeatures                 `json:"features,omitempty"`
}

// FillUpEntry is the per-claim outcome in fillUp mode.
type FillUpEntry struct {
	Node          string                        `json:"node,omitempty"`
	Result        *resourceapi.AllocationResult `json:"result,omitempty"`
	Unsatisfiable bool                          `json:"unsatisfiable,omitempty"`
}

// AllocOutput is one line of `oracle allocate` output.
type AllocOutput struct {
	ID            string                          `json:"id"`
	Results       *[]resourceapi.AllocationResult `json:"results,omitempty"`
	Unsatisfiable bool                            `json:"unsatisfiable,omitempty"`
	Reason        string                          `json:"reason,omitempty"`
	Timeout       bool                            `json:"timeout,omitempty"`
	Error         string                          `json:"error,omitempty"`
	FillUp        []FillUpEntry                   `json:"fillUp,omitempty"`

	budgetExceeded bool
}

func (o *AllocOutput) outcome() string {
	switch {
	case o.Timeout:
		return "timeout"
	case o.Error != "":
		return "error"
	case o.Unsatisfiable:
		return "unsatisfiable"
	default:
		return "results"
	}
}

type classLister struct {
	byName map[string]*resourceapi.DeviceClass
	all    []*resourceapi.DeviceClass
}

func newClassLister(classes []*resourceapi.DeviceClass) *classLister {
	l := &classLister{byName: map[string]*resourceapi.DeviceClass{}}
	for _, c := range classes {
		if c == nil {
			continue
		}
		l.byName[c.Name] = c
		l.all = append(l.all, c)
	}
	return l
}

func (l *classLister) List() ([]*resourceapi.DeviceClass, error) { return l.all, nil }

func (l *classLister) Get(name string) (*resourceapi.DeviceClass, error) {
	if c, ok := l.byName[name]; ok {
		return c, nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Group: "resource.k8s.io", Resource: "deviceclasses"}, name)
}

// prepared holds everything derived from a scenario that the scheduler computes once per pod.
type prepared struct {
	features resolvedFeatures
	classes  *classLister
	slices   []*resourceapi.ResourceSlice
	state    structured.AllocatedState
	celCache *dracel.Cache
}

// defaultClaim applies the API server's defaulting for ResourceClaims (pkg/apis/resource/v1).
func defaultClaim(c *resourceapi.ResourceClaim) {
	defTol := func(ts []resourceapi.DeviceToleration) {
		for i := range ts {
			if ts[i].Operator == "" {
				ts[i].Operator = resourceapi.DeviceTolerationOpEqual
			}
		}
	}
	for i := range c.Spec.Devices.Requests {
		r := &c.Spec.Devices.Requests[i]
		if r.Exactly != nil {
			if r.Exactly.AllocationMode == "" {
				r.Exactly.AllocationMode = resourceapi.DeviceAllocationModeExactCount
			}
			if r.Exactly.AllocationMode == resourceapi.DeviceAllocationModeExactCount && r.Exactly.Count == 0 {
				r.Exactly.Count = 1
			}
			defTol(r.Exactly.Tolerations)
		}
		for j := range r.FirstAvailable {
			s := &r.FirstAvailable[j]
			if s.AllocationMode == "" {
				s.AllocationMode = resourceapi.DeviceAllocationModeExactCount
			}
			if s.AllocationMode == resourceapi.DeviceAllocationModeExactCount && s.Count == 0 {
				s.Count = 1
			}
			defTol(s.Tolerations)
		}
	}
	if c.Status.Allocation != nil {
		for i := range c.Status.Allocation.Devices.Results {
			defTol(c.Status.Allocation.Devices.Results[i].Tolerations)
		}
	}
}

// applyTaintRules mirrors resourceslice/tracker.applyPatches.
func applyTaintRules(slices []*resourceapi.ResourceSlice, rules []*resourceapi.DeviceTaintRule) []*resourceapi.ResourceSlice {
	if len(rules) == 0 {
		return slices
	}
	out := make([]*resourceapi.ResourceSlice, 0, len(slices))
	for _, slice := range slices {
		patched := slice
		for _, rule := range rules {
			if rule == nil {
				continue
			}
			sel := rule.Spec.DeviceSelector
			if sel == nil {
				continue
			}
			if sel.Driver != nil && *sel.Driver != slice.Spec.Driver {
				continue
			}
			if sel.Pool != nil && *sel.Pool != slice.Spec.Pool.Name {
				continue
			}
			for i, dev := range slice.Spec.Devices {
				if sel.Device != nil && *sel.Device != dev.Name {
					continue
				}
				if patched == slice {
					patched = slice.DeepCopy()
				}
				patched.Spec.Devices[i].Taints = append(patched.Spec.Devices[i].Taints, rule.Spec.Taint)
			}
		}
		out = append(out, patched)
	}
	return out
}

func newAllocatedState() structured.AllocatedState {
	return structured.AllocatedState{
		AllocatedDevices:         sets.New[structured.DeviceID](),
		AllocatedSharedDeviceIDs: sets.New[structured.SharedDeviceID](),
		AggregatedCapacity:       structured.NewConsumedCapacityCollection(),
	}
}

// addAllocation mirrors the scheduler's foreachAllocatedDevice / GatherAllocatedState.
func addAllocation(state *structured.AllocatedState, alloc *resourceapi.AllocationResult, consumableCapacity bool) {
	if alloc == nil {
		return
	}
	for _, result := range alloc.Devices.Results {
		if ptr.Deref(result.AdminAccess, false) {
			continue
		}
		id := structured.MakeDeviceID(result.Driver, result.Pool, result.Device)
		if consumableCapacity && result.ShareID != nil {
			state.AllocatedSharedDeviceIDs.Insert(structured.MakeSharedDeviceID(id, result.ShareID))
			if result.ConsumedCapacity != nil {
				state.AggregatedCapacity.Insert(structured.NewDeviceConsumedCapacity(id, result.ConsumedCapacity))
			}
			continue
		}
		state.AllocatedDevices.Insert(id)
	}
}

func prepare(s *Scenario) *prepared {
	p := &prepared{features: s.Features.resolve()}
	p.classes = newClassLister(s.Classes)
	for _, c := range s.Claims {
		if c != nil {
			defaultClaim(c)
		}
	}
	p.state = newAllocatedState()
	for _, c := range s.AllocatedClaims {
		if c == nil {
			continue
		}
		defaultClaim(c)
		addAllocation(&p.state, c.Status.Allocation, p.features.alloc.ConsumableCapacity)
	}
	slices := make([]*resourceapi.ResourceSlice, 0, len(s.Slices))
	for _, sl := range s.Slices {
		if sl != nil {
			slices = append(slices, sl)
		}
	}
	if p.features.deviceTaintRules {
		slices = applyTaintRules(slices, s.DeviceTaintRules)
	}
	p.slices = slices
	p.celCache = celCacheFor(p.features.cel)
	return p
}

var (
	celCachesMu sync.Mutex
	celCaches   = map[dracel.Features]*dracel.Cache{}
)

// celCacheFor returns a process-wide upstream cel.Cache per CEL feature set. The scheduler keeps
// one LRU cache across scheduling cycles; it caches only successful compilations, so sharing it
// across scenarios changes timing, never results.
func celCacheFor(f dracel.Features) *dracel.Cache {
	celCachesMu.Lock()
	defer celCachesMu.Unlock()
	c, ok := celCaches[f]
	if !ok {
		c = dracel.NewCache(4096, f)
		celCaches[f] = c
	}
	return c
}

// preFilter mirrors the scheduler's PreFilter checks on unallocated claims. It returns a
// non-empty unschedulable reason or a fatal error.
func (p *prepared) preFilter(claims []*resourceapi.ResourceClaim) (string, error) {
	check := func(className, requestName string) (string, error) {
		if className == "" {
			return "", fmt.Errorf("request %s: unsupported request type", requestName)
		}
		if _, err := p.classes.Get(className); err != nil {
			return fmt.Sprintf("request %s: device class %s does not exist", requestName, className), nil
		}
		return "", nil
	}
	for _, claim := range claims {
		for _, request := range claim.Spec.Devices.Requests {
			switch {
			case request.Exactly != nil:
				if reason, err := check(request.Exactly.DeviceClassName, request.Name); reason != "" || err != nil {
					return reason, err
				}
			case len(request.FirstAvailable) > 0:
				if !p.features.alloc.PrioritizedList {
					return fmt.Sprintf("resource claim %s/%s, request %s: has subrequests, but the DRAPrioritizedList feature is disabled", claim.Namespace, claim.Name, request.Name), nil
				}
				for _, sub := range request.FirstAvailable {
					if reason, err := check(sub.DeviceClassName, request.Name+"/"+sub.Name); reason != "" || err != nil {
						return reason, err
					}
				}
			default:
				return fmt.Sprintf("resource claim %s/%s, request %s: unknown request type", claim.Namespace, claim.Name, request.Name), nil
			}
		}
	}
	return "", nil
}

type allocOptions struct {
	timeout time.Duration
	// maxAllocateOneCalls > 0 aborts Allocate once upstream's allocateOne counter exceeds it
	// (the outcome is then marked budgetExceeded). Used by the generator.
	maxAllocateOneCalls int64
}

type allocStats struct {
	allocateOneCalls int64
}

func nodeOrEmpty(n *v1.Node) *v1.Node {
	if n == nil {
		return &v1.Node{}
	}
	return n
}

// allocateOnce runs NewAllocator + Allocate for one node, mapping the outcome like the
// scheduler's Filter.
func (p *prepared) allocateOnce(node *v1.Node, claims []*resourceapi.ResourceClaim, opts allocOptions, stats *allocStats) (out AllocOutput) {
	ctx := context.Background()
	allocator, err := structured.NewAllocator(ctx, p.features.alloc, p.state, p.classes, p.slices, p.celCache)
	if err != nil {
		return AllocOutput{Error: err.Error()}
	}
	return p.allocateWith(allocator, node, claims, opts, stats)
}

func (p *prepared) allocateWith(allocator structured.Allocator, node *v1.Node, claims []*resourceapi.ResourceClaim, opts allocOptions, stats *allocStats) (out AllocOutput) {
	ctx := context.Background()
	if opts.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, opts.timeout)
		defer cancel()
	}
	defer func() {
		if r := recover(); r != nil {
			out = AllocOutput{Error: fmt.Sprintf("panic in upstream allocator: %v", r)}
		}
	}()
	if opts.maxAllocateOneCalls > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		done := make(chan struct{})
		defer func() { close(done); cancel() }()
		go func() {
			ticker := time.NewTicker(200 * time.Microsecond)
			defer ticker.Stop()
			for {
				select {
				case <-done:
					return
				case <-ticker.C:
					if allocateOneCalls(allocator) > opts.maxAllocateOneCalls {
						cancel()
						return
					}
				}
			}
		}()
	}
	results, err := allocator.Allocate(ctx, nodeOrEmpty(node), claims)
	calls := allocateOneCalls(allocator)
	if stats != nil {
		stats.allocateOneCalls = calls
	}
	if opts.maxAllocateOneCalls > 0 && calls > opts.maxAllocateOneCalls {
		return AllocOutput{budgetExceeded: true, Error: "search budget exceeded"}
	}
	switch {
	case err != nil && errors.Is(err, context.DeadlineExceeded):
		return AllocOutput{Timeout: true, Error: err.Error()}
	case err != nil && errors.Is(err, structured.ErrFailedAllocationOnNode):
		return AllocOutput{Unsatisfiable: true, Reason: err.Error()}
	case err != nil:
		return AllocOutput{Error: err.Error()}
	case results == nil:
		return AllocOutput{Unsatisfiable: true}
	}
	canonicalizeShareIDs(results)
	return AllocOutput{Results: &results}
}

// allocateOneCalls reads the upstream search-effort counter (internal.Stats, cumulative per
// allocator) if the variant exposes GetStats; -1 otherwise. The type lives in an internal
// package, so it is read through reflection.
func allocateOneCalls(a structured.Allocator) int64 {
	m := reflect.ValueOf(a).MethodByName("GetStats")
	if !m.IsValid() || m.Type().NumIn() != 0 || m.Type().NumOut() != 1 {
		return -1
	}
	v := m.Call(nil)[0]
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return -1
		}
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return -1
	}
	f := v.FieldByName("NumAllocateOneInvocations")
	if !f.IsValid() || f.Kind() != reflect.Int64 {
		return -1
	}
	return f.Int()
}

// canonicalizeShareIDs replaces upstream's random share UUIDs by sequential ones.
func canonicalizeShareIDs(results []resourceapi.AllocationResult) {
	n := 0
	for i := range results {
		for j := range results[i].Devices.Results {
			r := &results[i].Devices.Results[j]
			if r.ShareID != nil {
				n++
				id := types.UID(fmt.Sprintf("00000000-0000-4000-8000-%012d", n))
				r.ShareID = &id
			}
		}
	}
}

// run evaluates a whole scenario (single or fillUp mode).
func (s *Scenario) run(opts allocOptions, stats *allocStats) AllocOutput {
	p := prepare(s)
	out := p.runPrepared(s, opts, stats)
	out.ID = s.ID
	return out
}

func (p *prepared) runPrepared(s *Scenario, opts allocOptions, stats *allocStats) AllocOutput {
	switch s.Mode {
	case "", "single":
		if reason, err := p.preFilter(s.Claims); err != nil {
			return AllocOutput{Error: err.Error()}
		} else if reason != "" {
			return AllocOutput{Unsatisfiable: true, Reason: reason}
		}
		return p.allocateOnce(s.Node, s.Claims, opts, stats)
	case "fillUp":
		return p.fillUp(s, opts)
	default:
		return AllocOutput{Error: fmt.Sprintf("unknown mode %q", s.Mode)}
	}
}

func (p *prepared) fillUp(s *Scenario, opts allocOptions) AllocOutput {
	nodes := s.Nodes
	if len(nodes) == 0 {
		nodes = []*v1.Node{s.Node}
	}
	state := p.state
	// Clone so that the prepared state can be reused (benchmarks).
	p2 := *p
	p2.state = structured.AllocatedState{
		AllocatedDevices:         state.AllocatedDevices.Clone(),
		AllocatedSharedDeviceIDs: state.AllocatedSharedDeviceIDs.Clone(),
		AggregatedCapacity:       state.AggregatedCapacity.Clone(),
	}
	entries := make([]FillUpEntry, 0, len(s.Claims))
	shares := 0
	for i, claim := range s.Claims {
		claims := []*resourceapi.ResourceClaim{claim}
		if reason, err := p2.preFilter(claims); err != nil {
			return AllocOutput{Error: err.Error()}
		} else if reason != "" {
			entries = append(entries, FillUpEntry{Unsatisfiable: true})
			continue
		}
		ctx := context.Background()
		allocator, err := structured.NewAllocator(ctx, p2.features.alloc, p2.state, p2.classes, p2.slices, p2.celCache)
		if err != nil {
			return AllocOutput{Error: err.Error()}
		}
		done := false
		for k := range nodes {
			node := nodes[(i+k)%len(nodes)]
			out := p2.allocateWith(allocator, node, claims, opts, nil)
			if out.Error != "" {
				return AllocOutput{Error: out.Error, Timeout: out.Timeout}
			}
			if out.Results == nil {
				continue
			}
			res := (*out.Results)[0]
			for j := range res.Devices.Results {
				if r := &res.Devices.Results[j]; r.ShareID != nil {
					shares++
					id := types.UID(fmt.Sprintf("00000000-0000-4000-8000-%012d", shares))
					r.ShareID = &id
				}
			}
			addAllocation(&p2.state, &res, p2.features.alloc.ConsumableCapacity)
			entries = append(entries, FillUpEntry{Node: nodeOrEmpty(node).Name, Result: &res})
			done = true
			break
		}
		if !done {
			entries = append(entries, FillUpEntry{Unsatisfiable: true})
		}
	}
	return AllocOutput{FillUp: entries}
}

func decodeScenario(line []byte) (*Scenario, error) {
	var s Scenario
	dec := json.NewDecoder(strings.NewReader(string(line)))
	if err := dec.Decode(&s); err != nil {
		return nil, err
	}
	return &s, nil
}

func allocFlags(name string, args []string) (*flag.FlagSet, *allocOptions, *string, error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	opts := &allocOptions{}
	fs.DurationVar(&opts.timeout, "timeout", 10*time.Second, "per-Allocate timeout (scheduler filterTimeout); 0 disables")
	variant := fs.String("allocator", "", "restrict to allocator variant: stable, incubating, experimental")
	return fs, opts, variant, nil
}

func applyVariant(v string) error {
	switch v {
	case "":
		return nil
	case "stable", "incubating", "experimental":
		structured.EnableAllocators(v)
		return nil
	default:
		return flagError{fmt.Errorf("unknown allocator variant %q", v)}
	}
}

func runAllocate(args []string, r io.Reader, w io.Writer) error {
	fs, opts, variant, _ := allocFlags("allocate", args)
	if err := fs.Parse(args); err != nil {
		return flagError{err}
	}
	if err := applyVariant(*variant); err != nil {
		return err
	}
	lw := newLineWriter(w)
	err := forEachLine(r, func(line []byte) error {
		s, err := decodeScenario(line)
		if err != nil {
			return lw.write(inputErrorLine{ID: idOnly(line), InputError: err.Error()})
		}
		out := s.run(*opts, nil)
		return lw.write(out)
	})
	if ferr := lw.flush(); err == nil {
		err = ferr
	}
	return err
}
