package main

import (
	"flag"
	"fmt"
	"io"
	"strings"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

const perfDriver = "test-driver.cdi.k8s.io"

func perfNode(i int, labels map[string]string) *v1.Node {
	return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("node-%d", i), Labels: labels}}
}

func perfClass(selectors ...string) *resourceapi.DeviceClass {
	cl := &resourceapi.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: "test-class"}}
	for _, s := range append([]string{fmt.Sprintf("device.driver == %q", perfDriver)}, selectors...) {
		cl.Spec.Selectors = append(cl.Spec.Selectors, resourceapi.DeviceSelector{CEL: &resourceapi.CELDeviceSelector{Expression: s}})
	}
	return cl
}

// perfSlice is the scheduler_perf node-local slice: devices instance-i with 4 attributes and
// 1Gi memory.
func perfSlice(node string, devices int) *resourceapi.ResourceSlice {
	s := &resourceapi.ResourceSlice{
		ObjectMeta: metav1.ObjectMeta{Name: node + "-slice"},
		Spec: resourceapi.ResourceSliceSpec{
			Driver:   perfDriver,
			Pool:     resourceapi.ResourcePool{Name: node, Generation: 1, ResourceSliceCount: 1},
			NodeName: ptr.To(node),
		},
	}
	for i := 0; i < devices; i++ {
		s.Spec.Devices = append(s.Spec.Devices, resourceapi.Device{
			Name: fmt.Sprintf("instance-%d", i),
			Attributes: map[resourceapi.QualifiedName]resourceapi.DeviceAttribute{
				"model":                {StringValue: ptr.To("A100")},
				"family":               {StringValue: ptr.To("GPU")},
				"driverVersion":        {VersionValue: ptr.To("1.2.3")},
				"dra.example.com/numa": {IntValue: ptr.To(int64(i))},
			},
			Capacity: map[resourceapi.QualifiedName]resourceapi.DeviceCapacity{"memory": {Value: resource.MustParse("1Gi")}},
		})
	}
	return s
}

func perfClaim(name string, requests int, count int64, selectors []string, constraints []resourceapi.DeviceConstraint) *resourceapi.ResourceClaim {
	c := &resourceapi.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name)}}
	for r := 0; r < requests; r++ {
		ex := &resourceapi.ExactDeviceRequest{DeviceClassName: "test-class", AllocationMode: resourceapi.DeviceAllocationModeExactCount, Count: count}
		for _, s := range selectors {
			ex.Selectors = append(ex.Selectors, resourceapi.DeviceSelector{CEL: &resourceapi.CELDeviceSelector{Expression: s}})
		}
		c.Spec.Devices.Requests = append(c.Spec.Devices.Requests, resourceapi.DeviceRequest{Name: fmt.Sprintf("req-%d", r), Exactly: ex})
	}
	c.Spec.Devices.Constraints = constraints
	return c
}

func allocatedClaim(i int, results ...resourceapi.DeviceRequestAllocationResult) *resourceapi.ResourceClaim {
	c := perfClaim(fmt.Sprintf("allocated-%d", i), 1, 1, nil, nil)
	c.Status.Allocation = &resourceapi.AllocationResult{Devices: resourceapi.DeviceAllocationResult{Results: results}}
	return c
}

// steadyCluster builds nodes x devices with `allocated` devices pre-allocated (node-major order).
func steadyCluster(nodes, devices, allocated int) ([]*v1.Node, []*resourceapi.ResourceSlice, []*resourceapi.ResourceClaim) {
	var ns []*v1.Node
	var slices []*resourceapi.ResourceSlice
	var claims []*resourceapi.ResourceClaim
	for n := 0; n < nodes; n++ {
		node := perfNode(n, map[string]string{"node-with-dra": "true"})
		ns = append(ns, node)
		slices = append(slices, perfSlice(node.Name, devices))
	}
	// Spread allocations evenly: device d of node n gets allocated in round d*nodes+n.
	for k := 0; k < allocated; k++ {
		n, d := k%nodes, k/nodes
		claims = append(claims, allocatedClaim(k, resourceapi.DeviceRequestAllocationResult{
			Request: "req-0", Driver: perfDriver, Pool: ns[n].Name, Device: fmt.Sprintf("instance-%d", d),
		}))
	}
	return ns, slices, claims
}

func steadyLines(name string, nodes, devices, allocated, lines int, selectors []string, requests int, constraints []resourceapi.DeviceConstraint) []*Scenario {
	ns, slices, pre := steadyCluster(nodes, devices, allocated)
	var out []*Scenario
	for l := 0; l < lines; l++ {
		out = append(out, &Scenario{
			ID:              fmt.Sprintf("%s-%d", name, l),
			Node:            ns[(l*nodes/lines+l)%nodes],
			Classes:         []*resourceapi.DeviceClass{perfClass()},
			Slices:          slices,
			AllocatedClaims: pre,
			Claims:          []*resourceapi.ResourceClaim{perfClaim("claim", requests, 1, selectors, constraints)},
		})
	}
	return out
}

func singlePool(node string, n int, mk func(i int) resourceapi.Device) *resourceapi.ResourceSlice {
	s := &resourceapi.ResourceSlice{
		ObjectMeta: metav1.ObjectMeta{Name: node + "-slice"},
		Spec: resourceapi.ResourceSliceSpec{
			Driver: perfDriver, Pool: resourceapi.ResourcePool{Name: node, Generation: 1, ResourceSliceCount: 1}, NodeName: ptr.To(node),
		},
	}
	for i := 0; i < n; i++ {
		s.Spec.Devices = append(s.Spec.Devices, mk(i))
	}
	return s
}

func perfScenarios(name string) ([]*Scenario, []CELInput, error) {
	switch {
	case name == "S1-empty":
		return steadyLines(name, 500, 10, 0, 10, nil, 1, nil), nil, nil
	case name == "S1-half":
		return steadyLines(name, 500, 10, 2500, 10, nil, 1, nil), nil, nil
	case name == "S1-full":
		return steadyLines(name, 500, 10, 4990, 10, nil, 1, nil), nil, nil
	case name == "S1-cl2":
		return steadyLines(name, 5000, 8, 36000, 3, nil, 1, nil), nil, nil
	case name == "S2":
		ns, slices, _ := steadyCluster(500, 10, 0)
		s := &Scenario{ID: "S2", Mode: "fillUp", Nodes: ns, Classes: []*resourceapi.DeviceClass{perfClass()}, Slices: slices}
		for i := 0; i < 5000; i++ {
			s.Claims = append(s.Claims, perfClaim(fmt.Sprintf("claim-%d", i), 1, 1, nil, nil))
		}
		return []*Scenario{s}, nil, nil
	case name == "S3a":
		sel := fmt.Sprintf(`device.attributes[%q].driverVersion.major() >= 1 && device.capacity[%q].memory.isGreaterThan(quantity("1Mi"))`, perfDriver, perfDriver)
		return steadyLines(name, 500, 10, 0, 10, []string{sel}, 1, nil), nil, nil
	case name == "S3b":
		con := []resourceapi.DeviceConstraint{{MatchAttribute: ptr.To(resourceapi.FullyQualifiedName(perfDriver + "/model"))}}
		return steadyLines(name, 500, 10, 0, 10, nil, 2, con), nil, nil
	case name == "S3c":
		exprs := []string{
			fmt.Sprintf("device.driver == %q", perfDriver),
			fmt.Sprintf("device.attributes[%q].model == \"A100\"", perfDriver),
			fmt.Sprintf("device.attributes[%q].driverVersion.isGreaterThan(semver(\"1.0.0\"))", perfDriver),
			fmt.Sprintf("device.capacity[%q].memory.compareTo(quantity(\"512Mi\")) >= 0", perfDriver),
			fmt.Sprintf("device.attributes[%q].family in [\"GPU\", \"FPGA\"]", perfDriver),
		}
		slice := perfSlice("node-0", 10)
		var out []CELInput
		for e, expr := range exprs {
			for _, d := range slice.Spec.Devices {
				out = append(out, CELInput{ID: fmt.Sprintf("S3c-%d-%s", e, d.Name), Expr: expr, Device: CELDevice{Driver: perfDriver, Attributes: d.Attributes, Capacity: d.Capacity}})
			}
		}
		return nil, out, nil
	case name == "S4a":
		node := perfNode(0, nil)
		counters := map[string]resourceapi.Counter{"mem": {Value: resource.MustParse("70Gi")}}
		for i := 1; i <= 8; i++ {
			counters[fmt.Sprintf("cpu%d", i)] = resourceapi.Counter{Value: resource.MustParse("1")}
		}
		cs := &resourceapi.ResourceSlice{
			ObjectMeta: metav1.ObjectMeta{Name: "node-0-counters"},
			Spec: resourceapi.ResourceSliceSpec{Driver: perfDriver, Pool: resourceapi.ResourcePool{Name: "node-0", Generation: 1, ResourceSliceCount: 2},
				NodeName: ptr.To("node-0"), SharedCounters: []resourceapi.CounterSet{{Name: "cs", Counters: counters}}},
		}
		ds := singlePool("node-0", 8, func(i int) resourceapi.Device {
			mem := "10Gi"
			if i == 0 {
				mem = "20Gi"
			}
			return resourceapi.Device{Name: fmt.Sprintf("device-%d", i+1), ConsumesCounters: []resourceapi.DeviceCounterConsumption{{
				CounterSet: "cs", Counters: map[string]resourceapi.Counter{"mem": {Value: resource.MustParse(mem)}, fmt.Sprintf("cpu%d", i+1): {Value: resource.MustParse("1")}},
			}}}
		})
		ds.Spec.Pool.ResourceSliceCount = 2
		return []*Scenario{{ID: "S4a", Node: node, Classes: []*resourceapi.DeviceClass{perfClass()}, Slices: []*resourceapi.ResourceSlice{cs, ds},
			Claims: []*resourceapi.ResourceClaim{perfClaim("claim", 1, 7, nil, nil)}}}, nil, nil
	case name == "S4b":
		var nodes []*v1.Node
		for n := 0; n < 100; n++ {
			nodes = append(nodes, perfNode(n, map[string]string{"node-with-dra": "true"}))
		}
		sel := &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchExpressions: []v1.NodeSelectorRequirement{{Key: "node-with-dra", Operator: v1.NodeSelectorOpIn, Values: []string{"true"}}}}}}
		var slices []*resourceapi.ResourceSlice
		var pre []*resourceapi.ResourceClaim
		uses := [][]string{{"c0", "c1"}, {"c2", "c3"}, {"c0"}, {"c1"}, {"c2"}, {"c3"}}
		for p := 0; p < 2000; p++ {
			pool := fmt.Sprintf("pool-%04d", p)
			counters := map[string]resourceapi.Counter{}
			for c := 0; c < 4; c++ {
				counters[fmt.Sprintf("c%d", c)] = resourceapi.Counter{Value: resource.MustParse("1")}
			}
			slices = append(slices, &resourceapi.ResourceSlice{
				ObjectMeta: metav1.ObjectMeta{Name: pool + "-counters"},
				Spec: resourceapi.ResourceSliceSpec{Driver: perfDriver, Pool: resourceapi.ResourcePool{Name: pool, Generation: 1, ResourceSliceCount: 2},
					NodeSelector: sel.DeepCopy(), SharedCounters: []resourceapi.CounterSet{{Name: "cs", Counters: counters}}},
			})
			ds := &resourceapi.ResourceSlice{
				ObjectMeta: metav1.ObjectMeta{Name: pool + "-devices"},
				Spec:       resourceapi.ResourceSliceSpec{Driver: perfDriver, Pool: resourceapi.ResourcePool{Name: pool, Generation: 1, ResourceSliceCount: 2}, NodeSelector: sel.DeepCopy()},
			}
			for d, u := range uses {
				cc := map[string]resourceapi.Counter{}
				for _, c := range u {
					cc[c] = resourceapi.Counter{Value: resource.MustParse("1")}
				}
				ds.Spec.Devices = append(ds.Spec.Devices, resourceapi.Device{
					Name: fmt.Sprintf("device-%d", d),
					Attributes: map[resourceapi.QualifiedName]resourceapi.DeviceAttribute{
						"preallocate":           {BoolValue: ptr.To(d == 0)},
						"dra.example.com/slice": {IntValue: ptr.To(int64(p))},
					},
					ConsumesCounters: []resourceapi.DeviceCounterConsumption{{CounterSet: "cs", Counters: cc}},
				})
			}
			slices = append(slices, ds)
			pre = append(pre, allocatedClaim(p, resourceapi.DeviceRequestAllocationResult{Request: "req-0", Driver: perfDriver, Pool: pool, Device: "device-0"}))
		}
		con := []resourceapi.DeviceConstraint{{MatchAttribute: ptr.To(resourceapi.FullyQualifiedName("dra.example.com/slice"))}}
		var out []*Scenario
		for l := 0; l < 5; l++ {
			out = append(out, &Scenario{ID: fmt.Sprintf("S4b-%d", l), Node: nodes[l*20], Classes: []*resourceapi.DeviceClass{perfClass()},
				Slices: slices, AllocatedClaims: pre, Claims: []*resourceapi.ResourceClaim{perfClaim("claim", 1, 2, nil, con)}})
		}
		return out, nil, nil
	case strings.HasPrefix(name, "S5a-"):
		var m int
		if _, err := fmt.Sscanf(name, "S5a-%d", &m); err != nil || m < 1 || m > 31 {
			return nil, nil, fmt.Errorf("S5a-M needs 1 <= M <= 31")
		}
		ds := singlePool("node-0", m, func(i int) resourceapi.Device { return resourceapi.Device{Name: fmt.Sprintf("device-%d", i)} })
		return []*Scenario{{ID: name, Node: perfNode(0, nil), Classes: []*resourceapi.DeviceClass{perfClass()}, Slices: []*resourceapi.ResourceSlice{ds},
			Claims: []*resourceapi.ResourceClaim{perfClaim("claim", 1, int64(m+1), nil, nil)}}}, nil, nil
	case name == "S5b":
		ds := singlePool("node-0", 64, func(i int) resourceapi.Device {
			vals := []string{}
			n := 47
			if i >= 32 {
				vals = append(vals, "shared-value")
				n = 46
			}
			for k := 0; k < n; k++ {
				vals = append(vals, fmt.Sprintf("v-%d-%d", i, k))
			}
			return resourceapi.Device{Name: fmt.Sprintf("device-%02d", i), Attributes: map[resourceapi.QualifiedName]resourceapi.DeviceAttribute{
				"dra.example.com/match": {StringValues: vals},
			}}
		})
		con := []resourceapi.DeviceConstraint{{MatchAttribute: ptr.To(resourceapi.FullyQualifiedName("dra.example.com/match"))}}
		return []*Scenario{{ID: "S5b", Node: perfNode(0, nil), Classes: []*resourceapi.DeviceClass{perfClass()}, Slices: []*resourceapi.ResourceSlice{ds},
			Claims: []*resourceapi.ResourceClaim{perfClaim("claim", 32, 1, nil, con)}, Features: &AllocFeatures{ListTypeAttributes: ptr.To(true)}}}, nil, nil
	case name == "S5c":
		// 32 devices, 8 colors x 4; each of 4 claims needs 8 devices with distinct colors, so
		// every claim must take exactly one device of each color.
		ds := singlePool("node-0", 32, func(i int) resourceapi.Device {
			return resourceapi.Device{Name: fmt.Sprintf("device-%02d", i), Attributes: map[resourceapi.QualifiedName]resourceapi.DeviceAttribute{
				"dra.example.com/color": {IntValue: ptr.To(int64(i / 4))},
			}}
		})
		con := []resourceapi.DeviceConstraint{{DistinctAttribute: ptr.To(resourceapi.FullyQualifiedName("dra.example.com/color"))}}
		var claims []*resourceapi.ResourceClaim
		for c := 0; c < 4; c++ {
			claims = append(claims, perfClaim(fmt.Sprintf("claim-%d", c), 1, 8, nil, con))
		}
		return []*Scenario{{ID: "S5c", Node: perfNode(0, nil), Classes: []*resourceapi.DeviceClass{perfClass()}, Slices: []*resourceapi.ResourceSlice{ds}, Claims: claims}}, nil, nil
	case name == "S5d":
		ds := singlePool("node-0", 32, func(i int) resourceapi.Device { return resourceapi.Device{Name: fmt.Sprintf("device-%02d", i)} })
		claim := perfClaim("claim", 1, 0, nil, nil)
		claim.Spec.Devices.Requests[0].Exactly.AllocationMode = resourceapi.DeviceAllocationModeAll
		pre := []*resourceapi.ResourceClaim{allocatedClaim(0, resourceapi.DeviceRequestAllocationResult{Request: "req-0", Driver: perfDriver, Pool: "node-0", Device: "device-17"})}
		return []*Scenario{{ID: "S5d", Node: perfNode(0, nil), Classes: []*resourceapi.DeviceClass{perfClass()}, Slices: []*resourceapi.ResourceSlice{ds},
			AllocatedClaims: pre, Claims: []*resourceapi.ResourceClaim{claim}}}, nil, nil
	case name == "S5e":
		// 16 devices with numa = i % 4; three requests, each firstAvailable count 4 / 3 / 2,
		// all under one matchAttribute numa: only the last subrequests fit together.
		ds := singlePool("node-0", 16, func(i int) resourceapi.Device {
			return resourceapi.Device{Name: fmt.Sprintf("device-%02d", i), Attributes: map[resourceapi.QualifiedName]resourceapi.DeviceAttribute{
				"dra.example.com/numa": {IntValue: ptr.To(int64(i % 4))},
			}}
		})
		claim := &resourceapi.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Name: "claim", Namespace: "default", UID: "uid-claim"}}
		for r := 0; r < 3; r++ {
			req := resourceapi.DeviceRequest{Name: fmt.Sprintf("req-%d", r)}
			for k, cnt := range []int64{4, 3, 1} {
				req.FirstAvailable = append(req.FirstAvailable, resourceapi.DeviceSubRequest{
					Name: fmt.Sprintf("sub-%d", k), DeviceClassName: "test-class", AllocationMode: resourceapi.DeviceAllocationModeExactCount, Count: cnt,
				})
			}
			claim.Spec.Devices.Requests = append(claim.Spec.Devices.Requests, req)
		}
		claim.Spec.Devices.Constraints = []resourceapi.DeviceConstraint{{MatchAttribute: ptr.To(resourceapi.FullyQualifiedName("dra.example.com/numa"))}}
		return []*Scenario{{ID: "S5e", Node: perfNode(0, nil), Classes: []*resourceapi.DeviceClass{perfClass()}, Slices: []*resourceapi.ResourceSlice{ds},
			Claims: []*resourceapi.ResourceClaim{claim}}}, nil, nil
	}
	return nil, nil, fmt.Errorf("unknown scenario %q", name)
}

var allPerfScenarios = []string{"S1-empty", "S1-half", "S1-full", "S1-cl2", "S2", "S3a", "S3b", "S3c", "S4a", "S4b",
	"S5a-8", "S5a-16", "S5a-20", "S5a-24", "S5a-28", "S5a-31", "S5b", "S5c", "S5d", "S5e"}

func runGenPerf(args []string, w io.Writer) error {
	fs := flag.NewFlagSet("gen-perf", flag.ContinueOnError)
	name := fs.String("scenario", "", "scenario name (see README) or 'all'")
	_ = fs.Uint64("seed", 1, "unused: the performance scenarios are fixed")
	if err := fs.Parse(args); err != nil {
		return flagError{err}
	}
	names := []string{*name}
	if *name == "all" {
		names = allPerfScenarios
	}
	lw := newLineWriter(w)
	for _, n := range names {
		scen, cels, err := perfScenarios(n)
		if err != nil {
			return flagError{err}
		}
		for _, s := range scen {
			if err := lw.write(s); err != nil {
				return err
			}
		}
		for _, c := range cels {
			if err := lw.write(c); err != nil {
				return err
			}
		}
	}
	return lw.flush()
}
