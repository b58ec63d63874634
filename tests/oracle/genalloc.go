package main

import (
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// GenAllocLine is one line of gen-alloc output.
type GenAllocLine struct {
	Scenario *Scenario   `json:"scenario"`
	Expected AllocOutput `json:"expected"`
}

// gen wraps a seeded RNG with helpers. All randomness of one scenario comes from one gen.
type gen struct {
	r *rand.Rand
}

func newGen(seed, stream uint64) *gen {
	return &gen{r: rand.New(rand.NewPCG(seed, stream))}
}

func (g *gen) intn(n int) int               { return g.r.IntN(n) }
func (g *gen) between(lo, hi int) int       { return lo + g.r.IntN(hi-lo+1) }
func (g *gen) chance(p float64) bool        { return g.r.Float64() < p }
func pick[T any](g *gen, xs ...T) T         { return xs[g.r.IntN(len(xs))] }
func (g *gen) q(s string) resource.Quantity { return resource.MustParse(s) }

var fixedTime = metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))

const (
	driverGPU = "gpu.example.com"
	driverNIC = "nic.example.com"
	extDomain = "ext.example.com"
)

var (
	models         = []string{"a100", "h100", "x1"}
	driverVersions = []string{"1.0.0", "1.2.3", "2.0.0-rc.1", "2.1.0", "10.0.1"}
	memSizes       = []string{"1Gi", "8Gi", "16Gi", "40Gi", "80Gi"}
	zones          = []string{"a", "b"}
)

// genCtx accumulates the objects of one scenario.
type genCtx struct {
	g          *gen
	nodes      []*v1.Node
	drivers    []string
	features   AllocFeatures
	listAttrs  bool
	slices     []*resourceapi.ResourceSlice
	devices    []devRef // every generated device (for pre-allocation and taint rules)
	sliceCount int
}

type devRef struct {
	driver, pool, name string
	multi              bool
	capacity           map[resourceapi.QualifiedName]resourceapi.DeviceCapacity
}

func (c *genCtx) genNodes() {
	n := c.g.between(1, 4)
	for i := 0; i < n; i++ {
		c.nodes = append(c.nodes, &v1.Node{
			ObjectMeta: metav1.ObjectMeta{
				Name:   fmt.Sprintf("node-%d", i),
				Labels: map[string]string{"zone": zones[i%2], "rack": fmt.Sprintf("r%d", c.g.intn(2))},
			},
		})
	}
}

func (c *genCtx) nodeSelector() *v1.NodeSelector {
	var term v1.NodeSelectorTerm
	switch c.g.intn(3) {
	case 0:
		term.MatchExpressions = []v1.NodeSelectorRequirement{{Key: "zone", Operator: v1.NodeSelectorOpIn, Values: []string{pick(c.g, zones...)}}}
	case 1:
		term.MatchFields = []v1.NodeSelectorRequirement{{Key: "metadata.name", Operator: v1.NodeSelectorOpIn, Values: []string{c.nodes[c.g.intn(len(c.nodes))].Name}}}
	default:
		term.MatchExpressions = []v1.NodeSelectorRequirement{{Key: "rack", Operator: pick(c.g, v1.NodeSelectorOpIn, v1.NodeSelectorOpNotIn), Values: []string{"r0"}}}
	}
	return &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{term}}
}

// attributes for one device of driver d.
func (c *genCtx) attributes(d string, index int) map[resourceapi.QualifiedName]resourceapi.DeviceAttribute {
	g := c.g
	a := map[resourceapi.QualifiedName]resourceapi.DeviceAttribute{}
	a["model"] = resourceapi.DeviceAttribute{StringValue: ptr.To(pick(g, models...))}
	a["index"] = resourceapi.DeviceAttribute{IntValue: ptr.To(int64(index))}
	if g.chance(0.8) {
		name := resourceapi.QualifiedName("numa")
		if g.chance(0.3) {
			name = resourceapi.QualifiedName(d + "/numa")
		}
		a[name] = resourceapi.DeviceAttribute{IntValue: ptr.To(int64(g.intn(4)))}
	}
	if g.chance(0.8) {
		a["healthy"] = resourceapi.DeviceAttribute{BoolValue: ptr.To(g.chance(0.8))}
	}
	if g.chance(0.8) {
		a["driverVersion"] = resourceapi.DeviceAttribute{VersionValue: ptr.To(pick(g, driverVersions...))}
	}
	if g.chance(0.5) {
		a[extDomain+"/family"] = resourceapi.DeviceAttribute{StringValue: ptr.To(pick(g, "gpu", "fpga"))}
	}
	if c.listAttrs && g.chance(0.6) {
		n := g.between(1, 4)
		vals := make([]int64, 0, n)
		seen := map[int64]bool{}
		for len(vals) < n {
			v := int64(g.intn(6))
			if !seen[v] {
				seen[v] = true
				vals = append(vals, v)
			}
		}
		a["links"] = resourceapi.DeviceAttribute{IntValues: vals}
	}
	return a
}

func (c *genCtx) capacity(multi bool) map[resourceapi.QualifiedName]resourceapi.DeviceCapacity {
	g := c.g
	cp := map[resourceapi.QualifiedName]resourceapi.DeviceCapacity{}
	if g.chance(0.85) {
		mem := pick(g, memSizes...)
		dc := resourceapi.DeviceCapacity{Value: g.q(mem)}
		if multi && mem != "1Gi" && g.chance(0.6) {
			if g.chance(0.5) {
				dc.RequestPolicy = &resourceapi.CapacityRequestPolicy{
					Default:    ptr.To(g.q("1Gi")),
					ValidRange: &resourceapi.CapacityRequestPolicyRange{Min: ptr.To(g.q("1Gi")), Step: ptr.To(g.q("1Gi")), Max: ptr.To(g.q(mem))},
				}
			} else {
				vals := []resource.Quantity{g.q("1Gi")}
				for _, s := range []string{"4Gi", "8Gi", "16Gi"} {
					if q := g.q(s); q.Cmp(dc.Value) <= 0 {
						vals = append(vals, g.q(s))
					}
				}
				dc.RequestPolicy = &resourceapi.CapacityRequestPolicy{Default: ptr.To(g.q("1Gi")), ValidValues: vals}
			}
		}
		cp["memory"] = dc
	}
	if g.chance(0.4) {
		cp["cores"] = resourceapi.DeviceCapacity{Value: *resource.NewQuantity(int64(pick(g, 2, 4, 8)), resource.DecimalSI)}
	}
	return cp
}

// genPool creates the slices of one pool.
func (c *genCtx) genPool(driver, poolName string, placement func(s *resourceapi.ResourceSliceSpec)) {
	g := c.g
	gen := int64(g.between(0, 3))
	numDeviceSlices := g.between(1, 2)
	partitionable := g.chance(0.25) && ptr.Deref(c.features.PartitionableDevices, true)
	total := numDeviceSlices
	if partitionable {
		total++
	}
	var slices []*resourceapi.ResourceSlice
	mkSlice := func(gen, count int64) *resourceapi.ResourceSlice {
		c.sliceCount++
		s := &resourceapi.ResourceSlice{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%s-%d", strings.Split(driver, ".")[0], strings.ReplaceAll(poolName, "/", "-"), c.sliceCount)},
			Spec: resourceapi.ResourceSliceSpec{
				Driver: driver,
				Pool:   resourceapi.ResourcePool{Name: poolName, Generation: gen, ResourceSliceCount: count},
			},
		}
		placement(&s.Spec)
		return s
	}
	counterSets := []string{}
	if partitionable {
		s := mkSlice(gen, int64(total))
		n := g.between(1, 2)
		for i := 0; i < n; i++ {
			name := fmt.Sprintf("cs-%d", i)
			counterSets = append(counterSets, name)
			s.Spec.SharedCounters = append(s.Spec.SharedCounters, resourceapi.CounterSet{
				Name: name,
				Counters: map[string]resourceapi.Counter{
					"mem":   {Value: g.q(pick(g, "40Gi", "80Gi"))},
					"cores": {Value: *resource.NewQuantity(int64(pick(g, 4, 8)), resource.DecimalSI)},
				},
			})
		}
		// Counter slices must not set perDeviceNodeSelection without devices; use the pool's
		// placement unless it is per-device, then all nodes.
		if s.Spec.PerDeviceNodeSelection != nil {
			s.Spec.PerDeviceNodeSelection = nil
			s.Spec.AllNodes = ptr.To(true)
		}
		slices = append(slices, s)
	}
	devIndex := 0
	usedNames := []string{}
	for k := 0; k < numDeviceSlices; k++ {
		s := mkSlice(gen, int64(total))
		n := g.between(1, 12)
		for j := 0; j < n; j++ {
			name := fmt.Sprintf("dev-%d", devIndex)
			if len(usedNames) > 0 && j == 0 && g.chance(0.01) {
				name = pick(g, usedNames...) // duplicate: invalid pool
			}
			usedNames = append(usedNames, name)
			multi := ptr.Deref(c.features.ConsumableCapacity, true) && g.chance(0.15)
			dev := resourceapi.Device{
				Name:       name,
				Attributes: c.attributes(driver, devIndex),
				Capacity:   c.capacity(multi),
			}
			devIndex++
			if multi {
				dev.AllowMultipleAllocations = ptr.To(true)
			}
			if s.Spec.PerDeviceNodeSelection != nil {
				switch g.intn(3) {
				case 0:
					dev.NodeName = ptr.To(c.nodes[g.intn(len(c.nodes))].Name)
				case 1:
					dev.AllNodes = ptr.To(true)
				default:
					dev.NodeSelector = c.nodeSelector()
				}
			}
			if partitionable && g.chance(0.8) {
				cs := pick(g, counterSets...)
				if g.chance(0.005) {
					cs = "cs-missing" // invalid pool
				}
				dev.ConsumesCounters = []resourceapi.DeviceCounterConsumption{{
					CounterSet: cs,
					Counters: map[string]resourceapi.Counter{
						"mem":   {Value: g.q(pick(g, "10Gi", "20Gi", "40Gi"))},
						"cores": {Value: *resource.NewQuantity(int64(pick(g, 1, 2, 4)), resource.DecimalSI)},
					},
				}}
				// Compatibility groups: mostly with the gate on; with it off, such slices are
				// ignored and make their pool incomplete.
				if g.chance(0.02) || (ptr.Deref(c.features.CompatibilityGroups, false) && g.chance(0.6)) {
					dev.ConsumesCounters[0].CompatibilityGroups = pickSubset(g, []string{"train", "infer", "mig"})
				}
			}
			if g.chance(0.1) {
				nt := g.between(1, 2)
				for t := 0; t < nt; t++ {
					dev.Taints = append(dev.Taints, resourceapi.DeviceTaint{
						Key:       pick(g, "example.com/unhealthy", "example.com/maint"),
						Value:     pick(g, "", "true"),
						Effect:    pick(g, resourceapi.DeviceTaintEffectNoSchedule, resourceapi.DeviceTaintEffectNoExecute, resourceapi.DeviceTaintEffectNone),
						TimeAdded: &fixedTime,
					})
				}
			}
			if g.chance(0.04) {
				dev.BindsToNode = ptr.To(g.chance(0.5))
				dev.BindingConditions = []string{"example.com/ready"}
				dev.BindingFailureConditions = []string{"example.com/failed"}
			}
			s.Spec.Devices = append(s.Spec.Devices, dev)
			c.devices = append(c.devices, devRef{driver: driver, pool: poolName, name: name, multi: multi, capacity: dev.Capacity})
		}
		slices = append(slices, s)
	}
	// Incomplete pool: drop one slice.
	if len(slices) > 1 && g.chance(0.03) {
		i := g.intn(len(slices))
		slices = append(slices[:i], slices[i+1:]...)
	}
	// Stale slice of an older generation (ignored by upstream).
	if gen > 0 && g.chance(0.1) {
		s := mkSlice(gen-1, 1)
		s.Spec.Devices = []resourceapi.Device{{Name: "stale-0", Attributes: c.attributes(driver, 99)}}
		slices = append(slices, s)
	}
	// Newer generation being published (makes the pool incomplete/obsolete).
	if g.chance(0.02) {
		s := mkSlice(gen+1, 2)
		s.Spec.Devices = []resourceapi.Device{{Name: "new-0", Attributes: c.attributes(driver, 98)}}
		slices = append(slices, s)
	}
	c.slices = append(c.slices, slices...)
}

func (c *genCtx) genSlices() {
	g := c.g
	for _, d := range c.drivers {
		for _, n := range c.nodes {
			if g.chance(0.8) {
				node := n.Name
				c.genPool(d, pick(g, node, "local/"+node), func(s *resourceapi.ResourceSliceSpec) { s.NodeName = ptr.To(node) })
			}
		}
		numNet := g.between(0, 2)
		for i := 0; i < numNet; i++ {
			pool := fmt.Sprintf("net-%d", i)
			switch g.intn(3) {
			case 0:
				c.genPool(d, pool, func(s *resourceapi.ResourceSliceSpec) { s.AllNodes = ptr.To(true) })
			case 1:
				sel := c.nodeSelector()
				c.genPool(d, pool, func(s *resourceapi.ResourceSliceSpec) { s.NodeSelector = sel.DeepCopy() })
			default:
				if ptr.Deref(c.features.PartitionableDevices, true) {
					c.genPool(d, pool, func(s *resourceapi.ResourceSliceSpec) { s.PerDeviceNodeSelection = ptr.To(true) })
				} else {
					c.genPool(d, pool, func(s *resourceapi.ResourceSliceSpec) { s.AllNodes = ptr.To(true) })
				}
			}
		}
	}
	// Shuffle slice order: upstream must not depend on input order.
	g.r.Shuffle(len(c.slices), func(i, j int) { c.slices[i], c.slices[j] = c.slices[j], c.slices[i] })
}

// selector generates a valid CEL selector for devices of driver d. With errProne, the
// expression may fail at runtime on some devices.
func (c *genCtx) selector(d string, errProne bool) string {
	g := c.g
	attr := fmt.Sprintf("device.attributes[%q]", d)
	capa := fmt.Sprintf("device.capacity[%q]", d)
	simple := []func() string{
		func() string { return fmt.Sprintf("%s.model == %q", attr, pick(g, models...)) },
		func() string {
			return fmt.Sprintf("%s.model in [%q, %q]", attr, pick(g, models...), pick(g, models...))
		},
		func() string { return fmt.Sprintf("%s.index %s %d", attr, pick(g, ">=", "<", "!="), g.intn(8)) },
		func() string { return fmt.Sprintf("%s.index %% 2 == %d", attr, g.intn(2)) },
		func() string { return fmt.Sprintf("has(%s.healthy) && %s.healthy", attr, attr) },
		func() string {
			return fmt.Sprintf("has(%s.driverVersion) && %s.driverVersion.isGreaterThan(semver(%q))", attr, attr, pick(g, "1.0.0", "1.5.0", "2.0.0"))
		},
		func() string {
			return fmt.Sprintf("%s.?memory.orValue(quantity(\"0\")).compareTo(quantity(%q)) >= 0", capa, pick(g, memSizes...))
		},
		func() string {
			return fmt.Sprintf("%s.?family.orValue(\"\") == %q", fmt.Sprintf("device.attributes[%q]", extDomain), pick(g, "gpu", "fpga"))
		},
		func() string { return fmt.Sprintf("%s.?numa.orValue(-1) == %d", attr, g.intn(4)) },
		func() string { return "device.allowMultipleAllocations" },
		func() string { return "!device.allowMultipleAllocations" },
		func() string { return fmt.Sprintf("device.driver == %q", d) },
		func() string { return fmt.Sprintf("%s.model.startsWith(%q)", attr, pick(g, "a", "h", "x")) },
		func() string { return fmt.Sprintf("cel.bind(a, %s, a.index + size(a.model) > %d)", attr, g.intn(8)) },
	}
	if c.listAttrs {
		simple = append(simple, func() string { return fmt.Sprintf("%s.?links.orValue([]).exists(l, l == %d)", attr, g.intn(6)) })
	}
	risky := []func() string{
		func() string { return fmt.Sprintf("%s.healthy", attr) },                                 // missing key
		func() string { return fmt.Sprintf("%s.numa >= %d", attr, g.intn(3)) },                   // missing key
		func() string { return fmt.Sprintf("10 / (%s.index - %d) >= 0", attr, g.intn(4)) },       // division by zero
		func() string { return fmt.Sprintf("%s.driverVersion.major() >= 2", attr) },              // missing key
		func() string { return fmt.Sprintf("%s.memory.isGreaterThan(quantity(\"4Gi\"))", capa) }, // missing key
	}
	one := func() string {
		if errProne && g.chance(0.5) {
			return pick(g, risky...)()
		}
		return pick(g, simple...)()
	}
	switch g.intn(4) {
	case 0:
		return one() + " && " + one()
	case 1:
		return one() + " || " + one()
	default:
		return one()
	}
}

func (c *genCtx) genClasses() []*resourceapi.DeviceClass {
	g := c.g
	var out []*resourceapi.DeviceClass
	for _, d := range c.drivers {
		name := strings.Split(d, ".")[0]
		cl := &resourceapi.DeviceClass{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: resourceapi.DeviceClassSpec{
				Selectors: []resourceapi.DeviceSelector{{CEL: &resourceapi.CELDeviceSelector{Expression: fmt.Sprintf("device.driver == %q", d)}}},
			},
		}
		if g.chance(0.3) {
			cl.Spec.Config = []resourceapi.DeviceClassConfiguration{{DeviceConfiguration: opaque(d, fmt.Sprintf(`{"class":%q}`, name))}}
		}
		out = append(out, cl)
		// A narrower class with an extra selector.
		cl2 := &resourceapi.DeviceClass{
			ObjectMeta: metav1.ObjectMeta{Name: name + "-sel"},
			Spec: resourceapi.DeviceClassSpec{
				Selectors: []resourceapi.DeviceSelector{
					{CEL: &resourceapi.CELDeviceSelector{Expression: fmt.Sprintf("device.driver == %q", d)}},
					{CEL: &resourceapi.CELDeviceSelector{Expression: c.selector(d, false)}},
				},
			},
		}
		if g.chance(0.3) {
			cl2.Spec.Config = []resourceapi.DeviceClassConfiguration{{DeviceConfiguration: opaque(d, `{"narrow":true}`)}}
		}
		out = append(out, cl2)
	}
	out = append(out, &resourceapi.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: "any"}})
	return out
}

func opaque(driver, params string) resourceapi.DeviceConfiguration {
	return resourceapi.DeviceConfiguration{Opaque: &resourceapi.OpaqueDeviceConfiguration{
		Driver:     driver,
		Parameters: runtimeRaw(params),
	}}
}

func (c *genCtx) tolerations() []resourceapi.DeviceToleration {
	g := c.g
	if !g.chance(0.3) {
		return nil
	}
	var out []resourceapi.DeviceToleration
	n := g.between(1, 2)
	for i := 0; i < n; i++ {
		t := resourceapi.DeviceToleration{Key: pick(g, "example.com/unhealthy", "example.com/maint", "")}
		if t.Key == "" || g.chance(0.5) {
			t.Operator = resourceapi.DeviceTolerationOpExists
		} else {
			t.Operator = resourceapi.DeviceTolerationOpEqual
			t.Value = pick(g, "", "true")
		}
		t.Effect = pick(g, "", resourceapi.DeviceTaintEffectNoSchedule, resourceapi.DeviceTaintEffectNoExecute)
		out = append(out, t)
	}
	return out
}

// driverOf returns the driver a class targets, or "" for the unrestricted class.
func driverOfClass(name string) string {
	switch {
	case strings.HasPrefix(name, "gpu"):
		return driverGPU
	case strings.HasPrefix(name, "nic"):
		return driverNIC
	}
	return ""
}

func (c *genCtx) genClaim(idx int, classes []*resourceapi.DeviceClass, errProne bool) *resourceapi.ResourceClaim {
	g := c.g
	claim := &resourceapi.ResourceClaim{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("claim-%d", idx), Namespace: "default", UID: types.UID(fmt.Sprintf("uid-claim-%d", idx))},
	}
	numReq := pick(g, 1, 1, 2, 2, 3)
	var refs []string // request and request/subrequest names
	var reqNames []string
	mkExact := func(sel bool) (cls string, mode resourceapi.DeviceAllocationMode, count int64, selectors []resourceapi.DeviceSelector) {
		cl := classes[g.intn(len(classes))]
		cls = cl.Name
		mode = resourceapi.DeviceAllocationModeExactCount
		count = int64(pick(g, 1, 1, 1, 1, 2, 2, 3))
		if g.chance(0.06) {
			mode = resourceapi.DeviceAllocationModeAll
			count = 0
		}
		if sel && g.chance(0.4) {
			d := driverOfClass(cls)
			if d == "" {
				d = pick(g, c.drivers...)
			}
			n := g.between(1, 2)
			for i := 0; i < n; i++ {
				selectors = append(selectors, resourceapi.DeviceSelector{CEL: &resourceapi.CELDeviceSelector{Expression: c.selector(d, errProne)}})
			}
		}
		return
	}
	capReq := func() *resourceapi.CapacityRequirements {
		if !ptr.Deref(c.features.ConsumableCapacity, true) || !g.chance(0.2) {
			return nil
		}
		return &resourceapi.CapacityRequirements{Requests: map[resourceapi.QualifiedName]resource.Quantity{
			"memory": g.q(pick(g, "512Mi", "1Gi", "2Gi", "5Gi", "10Gi")),
		}}
	}
	for i := 0; i < numReq; i++ {
		name := fmt.Sprintf("req-%d", i)
		reqNames = append(reqNames, name)
		refs = append(refs, name)
		req := resourceapi.DeviceRequest{Name: name}
		if ptr.Deref(c.features.PrioritizedList, true) && g.chance(0.3) {
			n := g.between(1, 3)
			for k := 0; k < n; k++ {
				cls, mode, count, sels := mkExact(true)
				sub := resourceapi.DeviceSubRequest{
					Name: fmt.Sprintf("sub-%d", k), DeviceClassName: cls, AllocationMode: mode, Count: count,
					Selectors: sels, Tolerations: c.tolerations(), Capacity: capReq(),
				}
				sub.DerivedAttributes = c.derivedAttributes()
				req.FirstAvailable = append(req.FirstAvailable, sub)
				refs = append(refs, name+"/"+sub.Name)
			}
		} else {
			cls, mode, count, sels := mkExact(true)
			ex := &resourceapi.ExactDeviceRequest{
				DeviceClassName: cls, AllocationMode: mode, Count: count, Selectors: sels,
				Tolerations: c.tolerations(), Capacity: capReq(),
			}
			ex.DerivedAttributes = c.derivedAttributes()
			if g.chance(0.08) {
				ex.AdminAccess = ptr.To(true)
			}
			req.Exactly = ex
		}
		claim.Spec.Devices.Requests = append(claim.Spec.Devices.Requests, req)
	}
	if g.chance(0.3) {
		n := pick(g, 1, 1, 2)
		for i := 0; i < n; i++ {
			con := resourceapi.DeviceConstraint{}
			if g.chance(0.5) {
				con.Requests = pickSubset(g, reqNames)
			}
			if g.chance(0.7) || !ptr.Deref(c.features.ConsumableCapacity, true) {
				con.MatchAttribute = ptr.To(resourceapi.FullyQualifiedName(pick(g, driverGPU+"/model", driverGPU+"/numa", driverNIC+"/model", extDomain+"/family", driverGPU+"/driverVersion")))
			} else {
				con.DistinctAttribute = ptr.To(resourceapi.FullyQualifiedName(pick(g, driverGPU+"/index", driverNIC+"/index", driverGPU+"/numa")))
			}
			claim.Spec.Devices.Constraints = append(claim.Spec.Devices.Constraints, con)
		}
	}
	if g.chance(0.3) {
		cfg := resourceapi.DeviceClaimConfiguration{DeviceConfiguration: opaque(pick(g, c.drivers...), fmt.Sprintf(`{"claim":%d}`, idx))}
		if g.chance(0.6) {
			cfg.Requests = pickSubset(g, refs)
		}
		claim.Spec.Devices.Config = append(claim.Spec.Devices.Config, cfg)
	}
	return claim
}

func pickSubset(g *gen, xs []string) []string {
	var out []string
	for _, x := range xs {
		if g.chance(0.5) {
			out = append(out, x)
		}
	}
	if len(out) == 0 {
		out = append(out, pick(g, xs...))
	}
	return out
}

// genAllocated creates claims that already hold some of the generated devices.
func (c *genCtx) genAllocated() []*resourceapi.ResourceClaim {
	g := c.g
	var out []*resourceapi.ResourceClaim
	if len(c.devices) == 0 {
		return nil
	}
	n := g.between(0, 3)
	used := map[string]bool{}
	share := 0
	for i := 0; i < n; i++ {
		claim := &resourceapi.ResourceClaim{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("allocated-%d", i), Namespace: "default", UID: types.UID(fmt.Sprintf("uid-allocated-%d", i))},
			Spec: resourceapi.ResourceClaimSpec{Devices: resourceapi.DeviceClaim{Requests: []resourceapi.DeviceRequest{{
				Name: "req-0", Exactly: &resourceapi.ExactDeviceRequest{DeviceClassName: "any", AllocationMode: resourceapi.DeviceAllocationModeAll},
			}}}},
		}
		alloc := &resourceapi.AllocationResult{}
		k := g.between(1, 3)
		for j := 0; j < k; j++ {
			d := c.devices[g.intn(len(c.devices))]
			res := resourceapi.DeviceRequestAllocationResult{Request: "req-0", Driver: d.driver, Pool: d.pool, Device: d.name}
			if d.multi {
				share++
				res.ShareID = ptr.To(types.UID(fmt.Sprintf("00000000-0000-4000-9000-%012d", share)))
				cc := map[resourceapi.QualifiedName]resource.Quantity{}
				for name, cp := range d.capacity {
					if name == "memory" {
						cc[name] = g.q("1Gi")
						if v := cp.Value; v.Cmp(g.q("8Gi")) >= 0 && g.chance(0.5) {
							cc[name] = g.q("4Gi")
						}
					} else {
						cc[name] = cp.Value
					}
				}
				res.ConsumedCapacity = cc
			} else {
				key := d.driver + "/" + d.pool + "/" + d.name
				if used[key] {
					continue
				}
				used[key] = true
				if g.chance(0.1) {
					res.AdminAccess = ptr.To(true)
				}
			}
			alloc.Devices.Results = append(alloc.Devices.Results, res)
		}
		if len(alloc.Devices.Results) == 0 {
			continue
		}
		claim.Status.Allocation = alloc
		out = append(out, claim)
	}
	return out
}

func (c *genCtx) genTaintRules() []*resourceapi.DeviceTaintRule {
	g := c.g
	if len(c.devices) == 0 || !g.chance(0.15) {
		return nil
	}
	d := c.devices[g.intn(len(c.devices))]
	sel := &resourceapi.DeviceTaintSelector{Driver: ptr.To(d.driver)}
	if g.chance(0.7) {
		sel.Pool = ptr.To(d.pool)
	}
	if g.chance(0.5) {
		sel.Device = ptr.To(d.name)
	}
	return []*resourceapi.DeviceTaintRule{{
		ObjectMeta: metav1.ObjectMeta{Name: "rule-0"},
		Spec: resourceapi.DeviceTaintRuleSpec{
			DeviceSelector: sel,
			Taint: resourceapi.DeviceTaint{Key: "example.com/maint", Value: "true",
				Effect: pick(g, resourceapi.DeviceTaintEffectNoSchedule, resourceapi.DeviceTaintEffectNoExecute), TimeAdded: &fixedTime},
		},
	}}
}

// derivedAttributes gives a request derived attributes (DRADerivedAttributes scenarios only),
// named like the attributes constraints refer to, some failing at evaluation.
func (c *genCtx) derivedAttributes() []resourceapi.DeviceDerivedAttribute {
	g := c.g
	if !ptr.Deref(c.features.DerivedAttributes, false) || !g.chance(0.5) {
		return nil
	}
	var out []resourceapi.DeviceDerivedAttribute
	for _, name := range pickSubset(g, []string{driverGPU + "/model", driverGPU + "/numa", extDomain + "/family", driverGPU + "/index"}) {
		out = append(out, resourceapi.DeviceDerivedAttribute{
			Name: resourceapi.FullyQualifiedName(name),
			Expression: pick(g,
				`"same"`,
				`device.driver`,
				fmt.Sprintf(`device.attributes[%q].model`, driverGPU),
				fmt.Sprintf(`device.attributes[%q].numa`, driverGPU),
				fmt.Sprintf(`device.attributes[%q].numa %% 2`, driverGPU),
				fmt.Sprintf(`device.attributes[%q].missing`, driverGPU),
				`device.allowMultipleAllocations`,
			),
		})
	}
	return out
}

// genScenario builds scenario number idx for a seed. attempt varies the stream when a scenario
// had to be regenerated.
func genScenario(seed uint64, idx, attempt int) *Scenario {
	g := newGen(seed, uint64(idx)*1000+uint64(attempt))
	c := &genCtx{g: g}
	// Features: mostly the 1.37 defaults.
	switch g.intn(20) {
	case 0:
		c.features.PartitionableDevices = ptr.To(false)
	case 1:
		c.features.DeviceTaints = ptr.To(false)
	case 2:
		c.features.ListTypeAttributes = ptr.To(true)
		c.listAttrs = true
	case 3:
		c.features.ConsumableCapacity = ptr.To(false)
	case 4:
		c.features.PrioritizedList = ptr.To(false)
	case 5:
		c.features.CompatibilityGroups = ptr.To(true)
	case 6:
		c.features.DerivedAttributes = ptr.To(true)
	}
	c.genNodes()
	c.drivers = []string{driverGPU}
	if g.chance(0.4) {
		c.drivers = append(c.drivers, driverNIC)
	}
	c.genSlices()
	classes := c.genClasses()
	errProne := g.chance(0.08)
	var claims []*resourceapi.ResourceClaim
	nc := pick(g, 1, 1, 2, 2, 3)
	for i := 0; i < nc; i++ {
		claims = append(claims, c.genClaim(i, classes, errProne))
	}
	s := &Scenario{
		ID:               fmt.Sprintf("gen-%d-%d", seed, idx),
		Node:             c.nodes[g.intn(len(c.nodes))],
		Classes:          classes,
		Slices:           c.slices,
		AllocatedClaims:  c.genAllocated(),
		Claims:           claims,
		DeviceTaintRules: c.genTaintRules(),
	}
	if c.features != (AllocFeatures{}) {
		f := c.features
		s.Features = &f
	}
	return s
}

// maxGenAllocateOneCalls bounds the upstream search effort of an accepted scenario. The
// counter is deterministic, so whether a scenario is accepted does not depend on machine speed
// (the timeout is only a safety net far above the time this budget needs).
const maxGenAllocateOneCalls = 5000

// genAllocLine generates scenario idx and its expected output, regenerating (deterministically)
// when upstream's search effort exceeds the budget.
func genAllocLine(seed uint64, idx int, timeout time.Duration) (GenAllocLine, error) {
	for attempt := 0; attempt < 50; attempt++ {
		s := genScenario(seed, idx, attempt)
		raw, err := jsonRoundTrip(s)
		if err != nil {
			return GenAllocLine{}, err
		}
		var stats allocStats
		out := raw.run(allocOptions{timeout: timeout, maxAllocateOneCalls: maxGenAllocateOneCalls}, &stats)
		if out.Timeout || out.budgetExceeded {
			continue
		}
		// Emit the scenario as generated (not the defaulted copy used by run).
		emitted, err := jsonRoundTrip(s)
		if err != nil {
			return GenAllocLine{}, err
		}
		return GenAllocLine{Scenario: emitted, Expected: out}, nil
	}
	return GenAllocLine{}, fmt.Errorf("scenario %d: no attempt within the search budget", idx)
}

func runGenAlloc(args []string, w io.Writer) error {
	fs := flag.NewFlagSet("gen-alloc", flag.ContinueOnError)
	n := fs.Int("n", 100, "number of scenarios")
	seed := fs.Uint64("seed", 1, "seed")
	start := fs.Int("start", 0, "index of the first scenario")
	timeout := fs.Duration("timeout", 20*time.Second, "safety timeout per scenario (regenerate on timeout)")
	if err := fs.Parse(args); err != nil {
		return flagError{err}
	}
	lw := newLineWriter(w)
	for i := *start; i < *start+*n; i++ {
		line, err := genAllocLine(*seed, i, *timeout)
		if err != nil {
			return err
		}
		if err := lw.write(line); err != nil {
			return err
		}
	}
	return lw.flush()
}
