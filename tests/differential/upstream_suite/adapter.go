// Package dracoadapter puts draco's C++ allocator behind the internal Allocator interface of
// k8s.io/dynamic-resource-allocation/structured, so that upstream's shared allocator test table
// (structured/internal/allocatortesting) runs against it. tests/differential/upstream_suite.sh
// copies this package into a temporary copy of that module (it imports internal packages, so it
// must live inside the module); it is draco code, not upstream's.
//
// Each Allocate call serialises its inputs (node, classes, slices, allocated state, claims,
// features) to one JSON line for the long-lived `allocator_adapter` process named by
// $DRACO_ALLOCATOR_ADAPTER and turns the answer back into Go values and errors.
package dracoadapter

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/dynamic-resource-allocation/cel"
	"k8s.io/dynamic-resource-allocation/structured/internal"
)

// Channel is reported by Allocator.Channel: no upstream channel, so the table's expectations for
// the best implementation apply.
const Channel internal.AllocatorChannel = "draco"

// process is the shared allocator_adapter child; calls are serialised.
type process struct {
	mu   sync.Mutex
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Reader
	err  error
	next int
}

var (
	procOnce sync.Once
	proc     process
)

func start() {
	path := os.Getenv("DRACO_ALLOCATOR_ADAPTER")
	if path == "" {
		proc.err = errors.New("DRACO_ALLOCATOR_ADAPTER is not set")
		return
	}
	cmd := exec.Command(path)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		proc.err = err
		return
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		proc.err = err
		return
	}
	if err := cmd.Start(); err != nil {
		proc.err = fmt.Errorf("start %s: %w", path, err)
		return
	}
	proc.cmd, proc.in = cmd, in
	proc.out = bufio.NewReaderSize(out, 1<<20)
}

// Stop ends the child process (call from TestMain after the tests).
func Stop() {
	if proc.cmd == nil {
		return
	}
	_ = proc.in.Close()
	_ = proc.cmd.Wait()
}

// call sends one request line and returns the answer line.
func call(req map[string]any) (*answer, error) {
	procOnce.Do(start)
	if proc.err != nil {
		return nil, proc.err
	}
	proc.mu.Lock()
	defer proc.mu.Unlock()
	proc.next++
	req["id"] = fmt.Sprintf("call-%d", proc.next)
	line, err := json.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("encode request: %w", err)
	}
	if _, err := proc.in.Write(append(line, '\n')); err != nil {
		proc.err = fmt.Errorf("allocator_adapter: %w", err)
		return nil, proc.err
	}
	resp, err := proc.out.ReadBytes('\n')
	if err != nil {
		proc.err = fmt.Errorf("allocator_adapter: %w", err)
		return nil, proc.err
	}
	var a answer
	if err := json.Unmarshal(resp, &a); err != nil {
		return nil, fmt.Errorf("decode answer %q: %w", resp, err)
	}
	if a.ID != req["id"] {
		return nil, fmt.Errorf("answer %q for request %q", a.ID, req["id"])
	}
	return &a, nil
}

type answer struct {
	ID            string                         `json:"id"`
	Steps         int64                          `json:"steps"`
	Results       []resourceapi.AllocationResult `json:"results"`
	Unsatisfiable bool                           `json:"unsatisfiable"`
	Reason        string                         `json:"reason"`
	Timeout       bool                           `json:"timeout"`
	Error         *string                        `json:"error"`
	InputError    *string                        `json:"inputError"`
}

// Allocator is draco's allocator for one snapshot (what upstream's NewAllocator returns).
type Allocator struct {
	features internal.Features
	state    internal.AllocatedState
	classes  internal.DeviceClassLister
	slices   []*resourceapi.ResourceSlice
	stats    internal.Stats
}

var _ internal.Allocator = &Allocator{}
var _ internal.AllocatorExtended = &Allocator{}

// NewAllocator has the signature the shared test table expects. The CEL cache is not used:
// draco compiles selectors itself.
func NewAllocator(_ context.Context, features internal.Features, state internal.AllocatedState,
	classes internal.DeviceClassLister, slices []*resourceapi.ResourceSlice, _ *cel.Cache) (internal.Allocator, error) {
	return &Allocator{features: features, state: state, classes: classes, slices: slices}, nil
}

func (a *Allocator) Channel() internal.AllocatorChannel { return Channel }

// GetStats returns the allocateOne invocations of the last Allocate call (draco's exact search).
func (a *Allocator) GetStats() internal.Stats { return a.stats }

// featureKeys maps the allocator features onto draco's scenario feature keys.
func featureKeys(f internal.Features) map[string]bool {
	return map[string]bool{
		"adminAccess":             f.AdminAccess,
		"compatibilityGroups":     f.CompatibilityGroups,
		"consumableCapacity":      f.ConsumableCapacity,
		"derivedAttributes":       f.DerivedAttributes,
		"deviceBinding":           f.DeviceBindingAndStatus,
		"deviceTaints":            f.DeviceTaints,
		"deviceTaintRules":        false, // rules are merged by the caller, not the allocator
		"fractionalCapacityRange": f.FractionalCapacityRange,
		"listTypeAttributes":      f.ListTypeAttributes,
		"optionalNodeOperations":  f.OptionalNodeOperations,
		"partitionableDevices":    f.PartitionableDevices,
		"prioritizedList":         f.PrioritizedList,
	}
}

// allocatedClaims expresses the allocated state as allocated claims, the form draco reads (as
// the scheduler's GatherAllocatedState would have produced the state from them): exclusive
// devices without a share ID, shared ones with their share ID, aggregated capacity as a share
// consuming it.
func allocatedClaims(s internal.AllocatedState) []resourceapi.ResourceClaim {
	var results []resourceapi.DeviceRequestAllocationResult
	add := func(id internal.DeviceID, share *types.UID, consumed map[resourceapi.QualifiedName]resource.Quantity) {
		results = append(results, resourceapi.DeviceRequestAllocationResult{
			Request:          "allocated",
			Driver:           id.Driver.String(),
			Pool:             id.Pool.String(),
			Device:           id.Device.String(),
			ShareID:          share,
			ConsumedCapacity: consumed,
		})
	}
	for id := range s.AllocatedDevices {
		add(id, nil, nil)
	}
	n := 0
	for id := range s.AllocatedSharedDeviceIDs {
		share := types.UID(id.ShareID.String())
		if share == "" {
			n++
			share = types.UID(fmt.Sprintf("allocated-share-%d", n))
		}
		add(id.GetDeviceID(), &share, nil)
	}
	for id, consumed := range s.AggregatedCapacity {
		n++
		share := types.UID(fmt.Sprintf("allocated-capacity-%d", n))
		c := make(map[resourceapi.QualifiedName]resource.Quantity, len(consumed))
		for name, q := range consumed {
			if q != nil {
				v := q.DeepCopy()
				wireQuantity(&v)
				c[name] = v
			}
		}
		add(id, &share, c)
	}
	if len(results) == 0 {
		return nil
	}
	return []resourceapi.ResourceClaim{{
		Status: resourceapi.ResourceClaimStatus{
			Allocation: &resourceapi.AllocationResult{
				Devices: resourceapi.DeviceAllocationResult{Results: results},
			},
		},
	}}
}

// Allocate runs draco's allocator for `node`. A context that is already done (or expires while
// draco searches) fails the call like upstream's interrupt checks.
func (a *Allocator) Allocate(ctx context.Context, node *v1.Node, claims []*resourceapi.ResourceClaim) ([]resourceapi.AllocationResult, error) {
	a.stats = internal.Stats{}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("filter operation aborted: %w", err)
	}
	classes, err := a.classes.List()
	if err != nil {
		return nil, fmt.Errorf("list device classes: %w", err)
	}
	req := map[string]any{
		"node":            node,
		"classes":         classes,
		"slices":          wireSlices(a.slices),
		"allocatedClaims": allocatedClaims(a.state),
		"claims":          wireClaims(claims),
		"features":        featureKeys(a.features),
	}
	if deadline, ok := ctx.Deadline(); ok {
		ms := time.Until(deadline).Milliseconds()
		if ms < 1 {
			ms = 1
		}
		req["timeoutMs"] = ms
	}
	ans, err := call(req)
	if err != nil {
		return nil, err
	}
	a.stats.NumAllocateOneInvocations = ans.Steps
	switch {
	case ans.InputError != nil:
		return nil, fmt.Errorf("allocator_adapter rejected the input: %s", *ans.InputError)
	case ans.Timeout:
		return nil, fmt.Errorf("%s: %w", *ans.Error, context.DeadlineExceeded)
	case ans.Error != nil:
		return nil, errors.New(*ans.Error)
	case ans.Unsatisfiable && ans.Reason != "":
		return nil, fmt.Errorf("%s%w", ans.Reason, internal.ErrFailedAllocationOnNode)
	case ans.Unsatisfiable:
		return nil, nil
	}
	if len(ans.Results) != len(claims) {
		return nil, fmt.Errorf("draco returned %d results for %d claims", len(ans.Results), len(claims))
	}
	for i := range ans.Results {
		restoreRepresentation(&ans.Results[i], claims[i], a.slices, a.features)
	}
	return ans.Results, nil
}

// restoreRepresentation gives the values draco returned the Go representation upstream's
// allocator would have given them. JSON carries only values, while reflect.DeepEqual (which the
// table uses) also compares a resource.Quantity's format and scale and nil versus empty slices.
// Values are never changed: a consumed amount takes the representation of the input quantity it
// came from when that input has the same value (else it stays as decoded), and binding
// conditions are the device's own slices when they have the same content.
func restoreRepresentation(r *resourceapi.AllocationResult, claim *resourceapi.ResourceClaim,
	resourceSlices []*resourceapi.ResourceSlice, features internal.Features) {
	for i := range r.Devices.Results {
		res := &r.Devices.Results[i]
		device := findDevice(resourceSlices, res)
		if device == nil {
			continue
		}
		if features.DeviceBindingAndStatus {
			if slices.Equal(res.BindingConditions, device.BindingConditions) {
				res.BindingConditions = slices.Clone(device.BindingConditions)
			}
			if slices.Equal(res.BindingFailureConditions, device.BindingFailureConditions) {
				res.BindingFailureConditions = slices.Clone(device.BindingFailureConditions)
			}
		}
		for name, q := range res.ConsumedCapacity {
			capacity, ok := device.Capacity[name]
			if !ok {
				continue
			}
			res.ConsumedCapacity[name] = representation(q, requestedCapacity(claim, res.Request, name), capacity)
		}
	}
}

func findDevice(slices []*resourceapi.ResourceSlice, res *resourceapi.DeviceRequestAllocationResult) *resourceapi.Device {
	for _, s := range slices {
		if s.Spec.Driver != res.Driver || s.Spec.Pool.Name != res.Pool {
			continue
		}
		for i := range s.Spec.Devices {
			if s.Spec.Devices[i].Name == res.Device {
				return &s.Spec.Devices[i]
			}
		}
	}
	return nil
}

// requestedCapacity is the claim's request for capacity `name` in request "req" or "req/sub".
func requestedCapacity(claim *resourceapi.ResourceClaim, request string, name resourceapi.QualifiedName) *resource.Quantity {
	for _, req := range claim.Spec.Devices.Requests {
		if req.Exactly != nil && req.Name == request && req.Exactly.Capacity != nil {
			if q, ok := req.Exactly.Capacity.Requests[name]; ok {
				return &q
			}
		}
		for _, sub := range req.FirstAvailable {
			if req.Name+"/"+sub.Name == request && sub.Capacity != nil {
				if q, ok := sub.Capacity.Requests[name]; ok {
					return &q
				}
			}
		}
	}
	return nil
}

// representation picks the input a consumed amount comes from (the request, the policy default
// or minimum, a valid value, the capacity itself, or a value rounded up to the range's step, which
// upstream builds in the step's format) and uses its representation when it has value q.
func representation(q resource.Quantity, requested *resource.Quantity, capacity resourceapi.DeviceCapacity) resource.Quantity {
	source, stepFormat := consumedSource(requested, capacity)
	if source != nil {
		if source.Cmp(q) == 0 {
			return source.DeepCopy()
		}
		return q
	}
	if q.MilliValue()%1000 == 0 {
		return *resource.NewQuantity(q.Value(), stepFormat)
	}
	return *resource.NewMilliQuantity(q.MilliValue(), stepFormat)
}

// consumedSource returns the input quantity the consumed amount is taken from, or nil and the
// step's format when it is computed by rounding up to a step.
func consumedSource(requested *resource.Quantity, capacity resourceapi.DeviceCapacity) (*resource.Quantity, resource.Format) {
	policy := capacity.RequestPolicy
	if requested == nil {
		if policy != nil && policy.Default != nil {
			return policy.Default, ""
		}
		return &capacity.Value, ""
	}
	if policy == nil {
		return requested, ""
	}
	if rng := policy.ValidRange; rng != nil && rng.Min != nil {
		switch {
		case requested.Cmp(*rng.Min) < 0:
			return rng.Min, ""
		case rng.Step == nil:
			return requested, ""
		default:
			return nil, rng.Step.Format
		}
	}
	for i := range policy.ValidValues {
		if requested.Cmp(policy.ValidValues[i]) <= 0 {
			return &policy.ValidValues[i], ""
		}
	}
	return requested, ""
}

// wireQuantity makes q print exactly: apimachinery's encoder prints some values wrongly in their
// own format (a DecimalSI 1e21 prints as "1"); those are sent in DecimalExponent notation.
func wireQuantity(q *resource.Quantity) {
	printed := q.DeepCopy()
	if back, err := resource.ParseQuantity(printed.String()); err == nil && back.Cmp(*q) == 0 {
		return
	}
	exp := q.DeepCopy()
	exp.Format = resource.DecimalExponent
	*q = exp
}

func wireQuantities[K comparable](m map[K]resource.Quantity) {
	for k, q := range m {
		wireQuantity(&q)
		m[k] = q
	}
}

func wireRequirements(c *resourceapi.CapacityRequirements) {
	if c != nil {
		wireQuantities(c.Requests)
	}
}

// wireClaims returns copies of the claims whose quantities print exactly (inputs are not
// modified).
func wireClaims(claims []*resourceapi.ResourceClaim) []*resourceapi.ResourceClaim {
	out := make([]*resourceapi.ResourceClaim, len(claims))
	for i, c := range claims {
		c = c.DeepCopy()
		for r := range c.Spec.Devices.Requests {
			req := &c.Spec.Devices.Requests[r]
			if req.Exactly != nil {
				wireRequirements(req.Exactly.Capacity)
			}
			for s := range req.FirstAvailable {
				wireRequirements(req.FirstAvailable[s].Capacity)
			}
		}
		out[i] = c
	}
	return out
}

func wireCounters(m map[string]resourceapi.Counter) {
	for k, c := range m {
		wireQuantity(&c.Value)
		m[k] = c
	}
}

// wireSlices returns copies of the slices whose quantities print exactly.
func wireSlices(in []*resourceapi.ResourceSlice) []*resourceapi.ResourceSlice {
	out := make([]*resourceapi.ResourceSlice, len(in))
	for i, s := range in {
		s = s.DeepCopy()
		for c := range s.Spec.SharedCounters {
			wireCounters(s.Spec.SharedCounters[c].Counters)
		}
		for d := range s.Spec.Devices {
			dev := &s.Spec.Devices[d]
			for c := range dev.ConsumesCounters {
				wireCounters(dev.ConsumesCounters[c].Counters)
			}
			for name, capacity := range dev.Capacity {
				wireQuantity(&capacity.Value)
				if p := capacity.RequestPolicy; p != nil {
					for _, q := range []*resource.Quantity{p.Default} {
						if q != nil {
							wireQuantity(q)
						}
					}
					for v := range p.ValidValues {
						wireQuantity(&p.ValidValues[v])
					}
					if rng := p.ValidRange; rng != nil {
						for _, q := range []*resource.Quantity{rng.Min, rng.Max, rng.Step} {
							if q != nil {
								wireQuantity(q)
							}
						}
					}
				}
				dev.Capacity[name] = capacity
			}
		}
		out[i] = s
	}
	return out
}
