package main

// gen: random cluster snapshots exercising every default Filter plugin. A candidate scenario is
// evaluated with the oracle itself and kept when some pending pod has a feasible set that is
// neither empty nor every node (or, for 10% of scenarios, whatever came out), so that parity is
// about which nodes fit, not only whether any does.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"time"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

const (
	labelHostname = "kubernetes.io/hostname"
	labelZone     = "topology.kubernetes.io/zone"
	labelRegion   = "topology.kubernetes.io/region"
	csiDriver     = "ebs.csi.example.com"
	gpuResource   = "example.com/gpu"
)

var (
	allZones   = []string{"zone-a", "zone-b", "zone-c"}
	namespaces = []string{"default", "team-a", "team-b"}
	apps       = []string{"web", "db", "cache", "batch"}
)

type generator struct {
	r       *rand.Rand
	zones   []string
	nodes   []*v1.Node
	objects []any
	placed  []*v1.Pod
	// volumes usable by pending pods, by kind.
	boundPVCs     []string // namespace/name of PVCs bound to zonal CSI PVs
	localPVCs     []string // unbound PVCs of class "local" (matching PVs on some nodes)
	wffcPVCs      []string // unbound PVCs of class "wffc-zonal" (dynamic provisioning)
	immediatePVCs []string // unbound PVCs of class "immediate"
	rwopPVCs      []string // bound RWOP PVCs already used by a placed pod
	gcePDs        []string // inline GCE PDs used by placed pods
	pvcSeq        int
}

func (g *generator) chance(p float64) bool  { return g.r.Float64() < p }
func (g *generator) pick(s []string) string { return s[g.r.IntN(len(s))] }
func q(s string) resource.Quantity          { return resource.MustParse(s) }

func typed(kind, apiVersion string) metav1.TypeMeta {
	return metav1.TypeMeta{Kind: kind, APIVersion: apiVersion}
}

// scenario builds one candidate scenario's item list.
func (g *generator) scenario() []any {
	g.objects = nil
	g.placed = nil
	g.boundPVCs, g.localPVCs, g.wffcPVCs, g.immediatePVCs, g.rwopPVCs, g.gcePDs = nil, nil, nil, nil, nil, nil
	g.pvcSeq = 0
	g.zones = allZones[:2+g.r.IntN(2)]
	for _, ns := range namespaces {
		labels := map[string]string{"kubernetes.io/metadata.name": ns}
		if ns != "default" {
			labels["team"] = ns[len(ns)-1:]
			labels["env"] = map[bool]string{true: "prod", false: "dev"}[ns == "team-a"]
		}
		g.objects = append(g.objects, &v1.Namespace{TypeMeta: typed("Namespace", "v1"),
			ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: labels}})
	}
	g.genNodes(3 + g.r.IntN(5))
	g.genStorage()
	for i, n := 0, g.r.IntN(3*len(g.nodes)); i < n; i++ {
		g.genPlacedPod(i)
	}
	for i, n := 0, 1+g.r.IntN(3); i < n; i++ {
		g.objects = append(g.objects, g.genPendingPod(i))
	}
	return g.objects
}

func (g *generator) genNodes(n int) {
	g.nodes = nil
	taints := []v1.Taint{
		{Key: "dedicated", Value: "infra", Effect: v1.TaintEffectNoSchedule},
		{Key: "spot", Value: "true", Effect: v1.TaintEffectNoExecute},
		{Key: "gpu", Value: "true", Effect: v1.TaintEffectNoSchedule},
		{Key: "maintenance", Effect: v1.TaintEffectPreferNoSchedule},
		{Key: "dedicated", Value: "ml", Effect: v1.TaintEffectNoSchedule},
		{Key: "edge", Effect: v1.TaintEffectNoSchedule},
	}
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("node-%d", i)
		labels := map[string]string{labelHostname: name, labelRegion: "region-1",
			"disk": g.pick([]string{"ssd", "hdd"}), "tier": fmt.Sprint(1 + g.r.IntN(5))}
		if g.chance(0.04) {
			delete(labels, labelHostname) // hostname-scoped terms cannot match this node
		}
		if !g.chance(0.1) {
			labels[labelZone] = g.pick(g.zones)
		}
		if g.chance(0.4) {
			labels["gpu"] = "true"
		}
		alloc := v1.ResourceList{
			v1.ResourceCPU:              q(g.pick([]string{"2", "4", "8", "3500m"})),
			v1.ResourceMemory:           q(g.pick([]string{"4Gi", "8Gi", "16Gi"})),
			v1.ResourcePods:             q(g.pick([]string{"110", "110", "110", "3"})),
			v1.ResourceEphemeralStorage: q(g.pick([]string{"20Gi", "50Gi"})),
		}
		if g.chance(0.5) {
			alloc["hugepages-2Mi"] = q(g.pick([]string{"0", "512Mi", "1Gi"}))
		}
		if labels["gpu"] == "true" || g.chance(0.2) {
			alloc[gpuResource] = q(g.pick([]string{"0", "1", "2", "4"}))
		}
		node := &v1.Node{TypeMeta: typed("Node", "v1"),
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
			Status: v1.NodeStatus{Allocatable: alloc, Capacity: alloc,
				Conditions: []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue}}}}
		for _, t := range taints {
			if g.chance(0.07) {
				node.Spec.Taints = append(node.Spec.Taints, t)
			}
		}
		if g.chance(0.08) {
			node.Spec.Unschedulable = true
			node.Spec.Taints = append(node.Spec.Taints, v1.Taint{
				Key: v1.TaintNodeUnschedulable, Effect: v1.TaintEffectNoSchedule})
		}
		g.nodes = append(g.nodes, node)
		g.objects = append(g.objects, node)
		if g.chance(0.85) {
			drv := storagev1.CSINodeDriver{Name: csiDriver, NodeID: name, TopologyKeys: []string{labelZone}}
			if g.chance(0.8) {
				drv.Allocatable = &storagev1.VolumeNodeResources{Count: ptr.To(int32(1 + g.r.IntN(2)))}
			}
			g.objects = append(g.objects, &storagev1.CSINode{TypeMeta: typed("CSINode", "storage.k8s.io/v1"),
				ObjectMeta: metav1.ObjectMeta{Name: name},
				Spec:       storagev1.CSINodeSpec{Drivers: []storagev1.CSINodeDriver{drv}}})
		}
	}
}

func (g *generator) storageClass(name, provisioner string, mode storagev1.VolumeBindingMode,
	topo []v1.TopologySelectorTerm) {
	g.objects = append(g.objects, &storagev1.StorageClass{
		TypeMeta: typed("StorageClass", "storage.k8s.io/v1"), ObjectMeta: metav1.ObjectMeta{Name: name},
		Provisioner: provisioner, VolumeBindingMode: &mode, AllowedTopologies: topo,
		ReclaimPolicy: ptr.To(v1.PersistentVolumeReclaimDelete)})
}

func (g *generator) pvc(ns, class string, mode v1.PersistentVolumeAccessMode, size, volume string) *v1.PersistentVolumeClaim {
	g.pvcSeq++
	c := &v1.PersistentVolumeClaim{TypeMeta: typed("PersistentVolumeClaim", "v1"),
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("claim-%d", g.pvcSeq), Namespace: ns},
		Spec: v1.PersistentVolumeClaimSpec{AccessModes: []v1.PersistentVolumeAccessMode{mode},
			StorageClassName: ptr.To(class), VolumeMode: ptr.To(v1.PersistentVolumeFilesystem),
			Resources: v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: q(size)}}},
		Status: v1.PersistentVolumeClaimStatus{Phase: v1.ClaimPending}}
	if volume != "" {
		c.Spec.VolumeName = volume
		c.Annotations = map[string]string{"pv.kubernetes.io/bind-completed": "yes"}
		c.Status = v1.PersistentVolumeClaimStatus{Phase: v1.ClaimBound,
			AccessModes: c.Spec.AccessModes, Capacity: c.Spec.Resources.Requests}
	}
	g.objects = append(g.objects, c)
	return c
}

func (g *generator) pv(name, class string, mode v1.PersistentVolumeAccessMode, size string,
	src v1.PersistentVolumeSource, labels map[string]string, affinity *v1.VolumeNodeAffinity,
	claim *v1.PersistentVolumeClaim) {
	p := &v1.PersistentVolume{TypeMeta: typed("PersistentVolume", "v1"),
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec: v1.PersistentVolumeSpec{Capacity: v1.ResourceList{v1.ResourceStorage: q(size)},
			PersistentVolumeSource: src, AccessModes: []v1.PersistentVolumeAccessMode{mode},
			StorageClassName: class, NodeAffinity: affinity, VolumeMode: ptr.To(v1.PersistentVolumeFilesystem),
			PersistentVolumeReclaimPolicy: v1.PersistentVolumeReclaimRetain},
		Status: v1.PersistentVolumeStatus{Phase: v1.VolumeAvailable}}
	if claim != nil {
		p.Spec.ClaimRef = &v1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1",
			Namespace: claim.Namespace, Name: claim.Name}
		p.Status.Phase = v1.VolumeBound
	}
	g.objects = append(g.objects, p)
}

func nodeAffinityFor(key string, values ...string) *v1.VolumeNodeAffinity {
	return &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
		MatchExpressions: []v1.NodeSelectorRequirement{{Key: key, Operator: v1.NodeSelectorOpIn, Values: values}}}}}}
}

func (g *generator) genStorage() {
	var topo []v1.TopologySelectorTerm
	if g.chance(0.8) {
		z := g.zones[:1+g.r.IntN(len(g.zones)-1)]
		topo = []v1.TopologySelectorTerm{{MatchLabelExpressions: []v1.TopologySelectorLabelRequirement{
			{Key: labelZone, Values: append([]string(nil), z...)}}}}
	}
	g.storageClass("wffc-zonal", csiDriver, storagev1.VolumeBindingWaitForFirstConsumer, topo)
	g.storageClass("local", "kubernetes.io/no-provisioner", storagev1.VolumeBindingWaitForFirstConsumer, nil)
	g.storageClass("immediate", csiDriver, storagev1.VolumeBindingImmediate, nil)
	ns := "default"
	// Zonal CSI volumes bound to claims; zone label (VolumeZone) and sometimes node affinity.
	for i, n := 0, 1+g.r.IntN(4); i < n; i++ {
		zone := g.pick(g.zones)
		name := fmt.Sprintf("pv-ebs-%d", i)
		claim := g.pvc(ns, "wffc-zonal", v1.ReadWriteOnce, "10Gi", name)
		var aff *v1.VolumeNodeAffinity
		if g.chance(0.4) {
			aff = nodeAffinityFor(labelZone, zone)
		}
		g.pv(name, "wffc-zonal", v1.ReadWriteOnce, "10Gi",
			v1.PersistentVolumeSource{CSI: &v1.CSIPersistentVolumeSource{Driver: csiDriver, VolumeHandle: "vol-" + name}},
			map[string]string{labelZone: zone}, aff, claim)
		g.boundPVCs = append(g.boundPVCs, ns+"/"+claim.Name)
	}
	// Local PVs on some nodes, available; unbound local claims match them by size.
	for i, node := range g.nodes {
		if !g.chance(0.4) {
			continue
		}
		size := g.pick([]string{"5Gi", "20Gi"})
		g.pv(fmt.Sprintf("pv-local-%d", i), "local", v1.ReadWriteOnce, size,
			v1.PersistentVolumeSource{Local: &v1.LocalVolumeSource{Path: "/mnt/disk"}}, nil,
			nodeAffinityFor(labelHostname, node.Name), nil)
	}
	if g.chance(0.5) {
		node := g.nodes[g.r.IntN(len(g.nodes))]
		name := "pv-local-bound"
		claim := g.pvc(ns, "local", v1.ReadWriteOnce, "5Gi", name)
		g.pv(name, "local", v1.ReadWriteOnce, "5Gi",
			v1.PersistentVolumeSource{Local: &v1.LocalVolumeSource{Path: "/mnt/bound"}}, nil,
			nodeAffinityFor(labelHostname, node.Name), claim)
		g.boundPVCs = append(g.boundPVCs, ns+"/"+claim.Name)
	}
	for i, n := 0, 1+g.r.IntN(2); i < n; i++ {
		g.localPVCs = append(g.localPVCs, ns+"/"+g.pvc(ns, "local", v1.ReadWriteOnce, g.pick([]string{"5Gi", "10Gi"}), "").Name)
	}
	for i, n := 0, 1+g.r.IntN(2); i < n; i++ {
		g.wffcPVCs = append(g.wffcPVCs, ns+"/"+g.pvc(ns, "wffc-zonal", v1.ReadWriteOnce, "1Gi", "").Name)
	}
	g.immediatePVCs = append(g.immediatePVCs, ns+"/"+g.pvc(ns, "immediate", v1.ReadWriteOnce, "1Gi", "").Name)
	if g.chance(0.3) { // no class: never delayed binding
		g.immediatePVCs = append(g.immediatePVCs, ns+"/"+g.pvc(ns, "", v1.ReadWriteOnce, "1Gi", "").Name)
	}
	// A ReadWriteOncePod claim (bound); placed pods may use it.
	name := "pv-rwop"
	claim := g.pvc(ns, "wffc-zonal", v1.ReadWriteOncePod, "1Gi", name)
	g.pv(name, "wffc-zonal", v1.ReadWriteOncePod, "1Gi",
		v1.PersistentVolumeSource{CSI: &v1.CSIPersistentVolumeSource{Driver: csiDriver, VolumeHandle: "vol-rwop"}},
		nil, nil, claim)
	g.rwopPVCs = append(g.rwopPVCs, ns+"/"+claim.Name)
}

func (g *generator) podLabels() map[string]string {
	l := map[string]string{"app": g.pick(apps), "pod-template-hash": g.pick([]string{"h1", "h2"})}
	if g.chance(0.5) {
		l["security"] = g.pick([]string{"S1", "S2"})
	}
	return l
}

func (g *generator) requests(big bool) v1.ResourceList {
	rl := v1.ResourceList{
		v1.ResourceCPU:    q(g.pick([]string{"100m", "250m", "500m", "1", "1500m"})),
		v1.ResourceMemory: q(g.pick([]string{"128Mi", "512Mi", "1Gi", "2Gi"})),
	}
	if big {
		rl[v1.ResourceCPU] = q(g.pick([]string{"1", "2", "3", "4", "6"}))
		rl[v1.ResourceMemory] = q(g.pick([]string{"1Gi", "3Gi", "6Gi", "10Gi"}))
	}
	if g.chance(0.2) {
		rl[v1.ResourceEphemeralStorage] = q(g.pick([]string{"1Gi", "10Gi", "30Gi"}))
	}
	return rl
}

// limitsFor gives the limits the API server requires for hugepages and extended resources
// (equal to the requests).
func limitsFor(rl v1.ResourceList) v1.ResourceList {
	var lim v1.ResourceList
	for k, v := range rl {
		if k == gpuResource || k == "hugepages-2Mi" || k == "example.com/fpga" {
			if lim == nil {
				lim = v1.ResourceList{}
			}
			lim[k] = v
		}
	}
	return lim
}

func (g *generator) container(name string, rl v1.ResourceList) v1.Container {
	return v1.Container{Name: name, Image: "registry.example/app:1",
		Resources:                v1.ResourceRequirements{Requests: rl, Limits: limitsFor(rl)},
		TerminationMessagePath:   v1.TerminationMessagePathDefault,
		TerminationMessagePolicy: v1.TerminationMessageReadFile, ImagePullPolicy: v1.PullIfNotPresent}
}

func (g *generator) hostPort() v1.ContainerPort {
	p := v1.ContainerPort{ContainerPort: 80, HostPort: int32(g.pick2([]int{8080, 8080, 9090, 53})),
		Protocol: v1.ProtocolTCP}
	if p.HostPort == 53 || g.chance(0.2) {
		p.Protocol = v1.ProtocolUDP
	}
	if g.chance(0.25) {
		p.HostIP = g.pick([]string{"10.0.0.1", "10.0.0.2", "0.0.0.0"})
	}
	p.ContainerPort = p.HostPort
	return p
}

func (g *generator) pick2(s []int) int { return s[g.r.IntN(len(s))] }

func (g *generator) pickPhase() v1.PodPhase {
	if g.chance(0.5) {
		return v1.PodSucceeded
	}
	return v1.PodFailed
}

func pvcVolume(ref string) v1.Volume {
	name := ref[len("default/"):]
	return v1.Volume{Name: "v-" + name, VolumeSource: v1.VolumeSource{
		PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: name}}}
}

func gceVolume(pd string, ro bool) v1.Volume {
	return v1.Volume{Name: "pd-" + pd, VolumeSource: v1.VolumeSource{
		GCEPersistentDisk: &v1.GCEPersistentDiskVolumeSource{PDName: pd, FSType: "ext4", ReadOnly: ro}}}
}

func basePod(name, ns string, labels map[string]string) *v1.Pod {
	return &v1.Pod{TypeMeta: typed("Pod", "v1"),
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels, UID: types.UID("uid-" + ns + "-" + name)},
		Spec: v1.PodSpec{RestartPolicy: v1.RestartPolicyAlways, SchedulerName: v1.DefaultSchedulerName,
			DNSPolicy: v1.DNSClusterFirst, TerminationGracePeriodSeconds: ptr.To(int64(30)),
			ServiceAccountName: "default", Priority: ptr.To(int32(0))}}
}

func (g *generator) genPlacedPod(i int) {
	ns := namespaces[g.r.IntN(4)%3] // default twice as likely
	pod := basePod(fmt.Sprintf("placed-%d", i), ns, g.podLabels())
	node := g.nodes[g.r.IntN(len(g.nodes))]
	pod.Spec.NodeName = node.Name
	c := g.container("main", g.requests(false))
	if g.chance(0.2) {
		c.Ports = []v1.ContainerPort{g.hostPort()}
	}
	if g.chance(0.15) {
		c.Resources.Requests[gpuResource] = q(g.pick([]string{"1", "2"}))
		c.Resources.Limits = limitsFor(c.Resources.Requests)
	}
	if g.chance(0.1) {
		c.Resources.Requests["hugepages-2Mi"] = q("256Mi")
		c.Resources.Limits = limitsFor(c.Resources.Requests)
	}
	pod.Spec.Containers = []v1.Container{c}
	switch x := g.r.IntN(100); {
	case x < 8: // a sidecar adds to the usage, an init container only raises the maximum
		side := g.container("sidecar", g.requests(false))
		side.RestartPolicy = ptr.To(v1.ContainerRestartPolicyAlways)
		pod.Spec.InitContainers = []v1.Container{g.container("init", g.requests(true)), side}
	case x < 13:
		pod.Spec.RuntimeClassName = ptr.To("kata")
		pod.Spec.Overhead = v1.ResourceList{v1.ResourceCPU: q("250m"), v1.ResourceMemory: q("160Mi")}
	case x < 18:
		cpu := c.Resources.Requests[v1.ResourceCPU].DeepCopy()
		cpu.Add(q("1"))
		mem := c.Resources.Requests[v1.ResourceMemory].DeepCopy()
		mem.Add(q("1Gi"))
		pod.Spec.Resources = &v1.ResourceRequirements{Requests: v1.ResourceList{
			v1.ResourceCPU: cpu, v1.ResourceMemory: mem}}
	}
	pod.Status = v1.PodStatus{Phase: v1.PodRunning}
	switch x := g.r.IntN(100); {
	case x < 4: // finished: invisible to kube-scheduler
		pod.Status.Phase = g.pickPhase()
	case x < 9: // terminating: still occupies the node, not counted by topology spread
		pod.DeletionTimestamp = &metav1.Time{Time: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
		pod.DeletionGracePeriodSeconds = ptr.To(int64(30))
		pod.Finalizers = []string{"example.com/hold"}
	}
	// In-place resize in progress: actuated resources above the (lowered) spec.
	if g.chance(0.1) {
		actual := c.Resources.Requests.DeepCopy()
		actual[v1.ResourceCPU] = q("3")
		pod.Status.ContainerStatuses = []v1.ContainerStatus{{Name: "main", Ready: true,
			Image: c.Image, ImageID: c.Image, AllocatedResources: actual,
			Resources: &v1.ResourceRequirements{Requests: actual, Limits: limitsFor(actual)}}}
	}
	if g.chance(0.15) {
		key := g.pick([]string{labelHostname, labelHostname, labelZone})
		term := v1.PodAffinityTerm{TopologyKey: key, LabelSelector: &metav1.LabelSelector{
			MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: metav1.LabelSelectorOpIn,
				Values: []string{g.pick(apps)}}}}}
		switch g.r.IntN(5) {
		case 0:
			term.NamespaceSelector = &metav1.LabelSelector{}
		case 1:
			term.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}
		case 2:
			term.Namespaces = []string{g.pick(namespaces)}
		}
		pod.Spec.Affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{term}}}
	}
	if ns == "default" && g.chance(0.35) {
		ref := g.pick(g.boundPVCs)
		pod.Spec.Volumes = append(pod.Spec.Volumes, pvcVolume(ref))
	}
	if g.chance(0.1) {
		// An inline CSI volume of the attach-limited driver (counts for NodeVolumeLimits).
		pod.Spec.Volumes = append(pod.Spec.Volumes, v1.Volume{Name: "inline", VolumeSource: v1.VolumeSource{
			CSI: &v1.CSIVolumeSource{Driver: csiDriver}}})
	}
	if ns == "default" && len(g.rwopPVCs) > 0 && g.chance(0.1) {
		pod.Spec.Volumes = append(pod.Spec.Volumes, pvcVolume(g.rwopPVCs[0]))
	}
	if g.chance(0.15) {
		pd := fmt.Sprintf("pd-%d", g.r.IntN(3))
		pod.Spec.Volumes = append(pod.Spec.Volumes, gceVolume(pd, g.chance(0.3)))
		g.gcePDs = append(g.gcePDs, pd)
	}
	g.placed = append(g.placed, pod)
	g.objects = append(g.objects, pod)
}

// runGen writes n accepted scenarios for seed to w; a summary goes to stderr.
func runGen(w io.Writer, seed int64, n int) error {
	e, err := newEvaluator()
	if err != nil {
		return err
	}
	g := &generator{r: rand.New(rand.NewPCG(uint64(seed), 0x5eed))}
	out := bufio.NewWriter(w)
	defer out.Flush()
	ctx := context.Background()
	partial, tries := 0, 0
	for i := 0; i < n; i++ {
		var line []byte
		for attempt := 0; ; attempt++ {
			tries++
			items := g.scenario()
			line, err = json.Marshal(map[string]any{"apiVersion": "v1", "kind": "List", "items": items})
			if err != nil {
				return err
			}
			sc, err := decodeScenario(line)
			if err != nil {
				return fmt.Errorf("generated scenario does not decode: %v", err)
			}
			res, err := e.evalScenario(ctx, sc)
			if err != nil {
				return fmt.Errorf("generated scenario does not evaluate: %v", err)
			}
			if hasPartial(res) {
				partial++
				break
			}
			if attempt >= 20 || g.chance(0.1) {
				break
			}
		}
		out.Write(line)
		out.WriteByte('\n')
	}
	fmt.Fprintf(os.Stderr, "schedfilter gen: seed %d: %d scenarios (%d candidates), %d with a partial feasible set\n",
		seed, n, tries, partial)
	return nil
}

func hasPartial(res []podResult) bool {
	for _, pr := range res {
		ok := 0
		for _, r := range pr.results {
			if r == "ok" {
				ok++
			}
		}
		if ok > 0 && ok < len(pr.results) {
			return true
		}
	}
	return false
}
