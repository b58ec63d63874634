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
				c[name] = q.DeepCopy()
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
		"slices":          a.slices,
		"allocatedClaims": allocatedClaims(a.state),
		"claims":          claims,
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
		restoreRepresentation(&ans.Results[i], claims[i], a.slices)
	}
	return ans.Results, nil
}

// restoreRepresentation gives each consumed-capacity quantity of `r` the Go representation the
// same value has among the inputs (the claim's capacity request, the device's capacity value or
// request policy), else the one upstream builds for a value rounded up to a step. JSON carries
// only the value; resource.Quantity also keeps its format and scale, which reflect.DeepEqual
// compares. Values are never changed.
func restoreRepresentation(r *resourceapi.AllocationResult, claim *resourceapi.ResourceClaim, slices []*resourceapi.ResourceSlice) {
	for i := range r.Devices.Results {
		res := &r.Devices.Results[i]
		for name, q := range res.ConsumedCapacity {
			candidates, stepFormat := representations(claim, res, name, slices)
			res.ConsumedCapacity[name] = pickRepresentation(q, candidates, stepFormat)
		}
	}
}

func pickRepresentation(q resource.Quantity, candidates []resource.Quantity, stepFormat resource.Format) resource.Quantity {
	for _, c := range candidates {
		if c.Cmp(q) == 0 {
			return c.DeepCopy()
		}
	}
	if stepFormat == "" {
		stepFormat = q.Format
	}
	if q.MilliValue()%1000 == 0 {
		return *resource.NewQuantity(q.Value(), stepFormat)
	}
	return *resource.NewMilliQuantity(q.MilliValue(), stepFormat)
}

// representations lists the input quantities a consumed amount of capacity `name` can come from
// and the format of the device's range step.
func representations(claim *resourceapi.ResourceClaim, res *resourceapi.DeviceRequestAllocationResult,
	name resourceapi.QualifiedName, slices []*resourceapi.ResourceSlice) ([]resource.Quantity, resource.Format) {
	var out []resource.Quantity
	var stepFormat resource.Format
	for _, req := range claim.Spec.Devices.Requests {
		if req.Exactly != nil && req.Name == res.Request && req.Exactly.Capacity != nil {
			if q, ok := req.Exactly.Capacity.Requests[name]; ok {
				out = append(out, q)
			}
		}
		for _, sub := range req.FirstAvailable {
			if req.Name+"/"+sub.Name == res.Request && sub.Capacity != nil {
				if q, ok := sub.Capacity.Requests[name]; ok {
					out = append(out, q)
				}
			}
		}
	}
	for _, s := range slices {
		if s.Spec.Driver != res.Driver || s.Spec.Pool.Name != res.Pool {
			continue
		}
		for _, d := range s.Spec.Devices {
			c, ok := d.Capacity[name]
			if d.Name != res.Device || !ok {
				continue
			}
			out = append(out, c.Value)
			if p := c.RequestPolicy; p != nil {
				if p.Default != nil {
					out = append(out, *p.Default)
				}
				out = append(out, p.ValidValues...)
				if rng := p.ValidRange; rng != nil {
					if rng.Min != nil {
						out = append(out, *rng.Min)
					}
					if rng.Max != nil {
						out = append(out, *rng.Max)
					}
					if rng.Step != nil {
						stepFormat = rng.Step.Format
					}
				}
			}
		}
	}
	return out, stepFormat
}
