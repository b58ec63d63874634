package main

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// genPendingPod builds a pod without nodeName carrying one to four constraint families.
func (g *generator) genPendingPod(i int) *v1.Pod {
	ns := "default"
	if g.chance(0.25) {
		ns = g.pick(namespaces)
	}
	pod := basePod(fmt.Sprintf("new-%d", i), ns, g.podLabels())
	pod.Spec.Containers = []v1.Container{g.container("main", g.requests(false))}
	features := []func(*v1.Pod){g.withNodeSelector, g.withNodeAffinity, g.withTolerations,
		g.withHostPorts, g.withResources, g.withBoundVolumes, g.withUnboundVolumes,
		g.withSharedDisks, g.withSpread, g.withSpread, g.withPodAffinity, g.withPodAntiAffinity}
	for k, n := 0, 1+g.r.IntN(3); k < n; k++ {
		features[g.r.IntN(len(features))](pod)
	}
	if g.chance(0.3) {
		g.withTolerations(pod)
	}
	return pod
}

func (g *generator) withNodeSelector(pod *v1.Pod) {
	sel := map[string]string{}
	switch g.r.IntN(4) {
	case 0:
		sel["disk"] = g.pick([]string{"ssd", "hdd"})
	case 1:
		sel["gpu"] = "true"
	case 2:
		sel[labelZone] = g.pick(g.zones)
	default:
		sel["disk"] = "ssd"
		sel[labelRegion] = "region-1"
	}
	pod.Spec.NodeSelector = sel
}

func (g *generator) nodeSelectorRequirement() v1.NodeSelectorRequirement {
	switch g.r.IntN(7) {
	case 0:
		return v1.NodeSelectorRequirement{Key: labelZone, Operator: v1.NodeSelectorOpIn,
			Values: []string{g.pick(g.zones), g.pick(allZones)}}
	case 1:
		return v1.NodeSelectorRequirement{Key: "disk", Operator: v1.NodeSelectorOpNotIn, Values: []string{"hdd"}}
	case 2:
		return v1.NodeSelectorRequirement{Key: "gpu", Operator: v1.NodeSelectorOpExists}
	case 3:
		return v1.NodeSelectorRequirement{Key: "gpu", Operator: v1.NodeSelectorOpDoesNotExist}
	case 4:
		return v1.NodeSelectorRequirement{Key: "tier", Operator: v1.NodeSelectorOpGt, Values: []string{fmt.Sprint(1 + g.r.IntN(3))}}
	case 5:
		return v1.NodeSelectorRequirement{Key: "tier", Operator: v1.NodeSelectorOpLt, Values: []string{fmt.Sprint(2 + g.r.IntN(3))}}
	default:
		return v1.NodeSelectorRequirement{Key: labelZone, Operator: v1.NodeSelectorOpNotIn, Values: []string{g.pick(g.zones)}}
	}
}

func (g *generator) withNodeAffinity(pod *v1.Pod) {
	var terms []v1.NodeSelectorTerm
	for t, n := 0, 1+g.r.IntN(2); t < n; t++ {
		var term v1.NodeSelectorTerm
		for e, m := 0, 1+g.r.IntN(2); e < m; e++ {
			term.MatchExpressions = append(term.MatchExpressions, g.nodeSelectorRequirement())
		}
		if g.chance(0.2) {
			var names []string
			for _, node := range g.nodes {
				if g.chance(0.5) {
					names = append(names, node.Name)
				}
			}
			if g.chance(0.2) {
				names = append(names, "node-missing")
			}
			term.MatchFields = []v1.NodeSelectorRequirement{{Key: "metadata.name",
				Operator: v1.NodeSelectorOpIn, Values: names}}
			if len(names) == 0 {
				term.MatchFields[0].Operator = v1.NodeSelectorOpNotIn
				term.MatchFields[0].Values = []string{g.nodes[0].Name}
			}
			if g.chance(0.5) {
				term.MatchExpressions = nil
			}
		}
		terms = append(terms, term)
	}
	ensureAffinity(pod).NodeAffinity = &v1.NodeAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{NodeSelectorTerms: terms}}
}

func ensureAffinity(pod *v1.Pod) *v1.Affinity {
	if pod.Spec.Affinity == nil {
		pod.Spec.Affinity = &v1.Affinity{}
	}
	return pod.Spec.Affinity
}

func (g *generator) withTolerations(pod *v1.Pod) {
	all := []v1.Toleration{
		{Key: "dedicated", Operator: v1.TolerationOpEqual, Value: "infra", Effect: v1.TaintEffectNoSchedule},
		{Key: "spot", Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute},
		{Key: "gpu", Operator: v1.TolerationOpExists},
		{Key: v1.TaintNodeUnschedulable, Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoSchedule},
		{Key: "dedicated", Operator: v1.TolerationOpEqual, Value: "ml"},
		{Key: "spot", Operator: v1.TolerationOpEqual, Value: "false", Effect: v1.TaintEffectNoExecute},
		{Key: "dedicated", Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute},
		{Key: "edge", Operator: v1.TolerationOpEqual, Effect: v1.TaintEffectNoSchedule},
		{Key: "edge", Value: "x"},
		{Operator: v1.TolerationOpExists},
	}
	for k, t := range all {
		if (k < len(all)-1 && g.chance(0.3)) || g.chance(0.03) {
			pod.Spec.Tolerations = append(pod.Spec.Tolerations, t)
		}
	}
	if g.chance(0.3) {
		pod.Spec.Tolerations = append(pod.Spec.Tolerations, v1.Toleration{Key: "spot",
			Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute, TolerationSeconds: ptr.To(int64(30))})
	}
}

func (g *generator) withHostPorts(pod *v1.Pod) {
	c := &pod.Spec.Containers[0]
	for k, n := 0, 1+g.r.IntN(2); k < n; k++ {
		c.Ports = append(c.Ports, g.hostPort())
	}
	if len(c.Ports) == 2 && c.Ports[0] == c.Ports[1] {
		c.Ports = c.Ports[:1]
	}
}

func (g *generator) withResources(pod *v1.Pod) {
	main := &pod.Spec.Containers[0]
	main.Resources.Requests = g.requests(g.chance(0.6))
	if g.chance(0.35) {
		main.Resources.Requests[gpuResource] = q(g.pick([]string{"1", "2", "3"}))
	}
	if g.chance(0.05) {
		main.Resources.Requests["example.com/fpga"] = q("1") // no node has it
	}
	if g.chance(0.2) {
		main.Resources.Requests["hugepages-2Mi"] = q(g.pick([]string{"256Mi", "768Mi"}))
	}
	main.Resources.Limits = limitsFor(main.Resources.Requests)
	if g.chance(0.3) {
		pod.Spec.Containers = append(pod.Spec.Containers, g.container("second", g.requests(false)))
	}
	if g.chance(0.3) {
		pod.Spec.InitContainers = append(pod.Spec.InitContainers, g.container("init", g.requests(true)))
	}
	if g.chance(0.3) {
		side := g.container("sidecar", g.requests(false))
		side.RestartPolicy = ptr.To(v1.ContainerRestartPolicyAlways)
		pod.Spec.InitContainers = append(pod.Spec.InitContainers, side)
	}
	if g.chance(0.2) {
		pod.Spec.RuntimeClassName = ptr.To("kata")
		pod.Spec.Overhead = v1.ResourceList{v1.ResourceCPU: q("250m"), v1.ResourceMemory: q("160Mi")}
	}
	if g.chance(0.15) {
		// Pod-level requests at least the containers' aggregate (API validation).
		cpu, mem := q("0"), q("0")
		for _, c := range pod.Spec.Containers {
			cpu.Add(c.Resources.Requests[v1.ResourceCPU])
			mem.Add(c.Resources.Requests[v1.ResourceMemory])
		}
		for _, c := range pod.Spec.InitContainers {
			if c.RestartPolicy != nil {
				cpu.Add(c.Resources.Requests[v1.ResourceCPU])
				mem.Add(c.Resources.Requests[v1.ResourceMemory])
			}
		}
		cpu.Add(q(g.pick([]string{"0", "500m", "2"})))
		mem.Add(q(g.pick([]string{"0", "1Gi", "4Gi"})))
		pod.Spec.Resources = &v1.ResourceRequirements{Requests: v1.ResourceList{
			v1.ResourceCPU: cpu, v1.ResourceMemory: mem}}
	}
}

func addVolume(pod *v1.Pod, v v1.Volume) {
	if pod.Namespace != "default" { // the generated claims live in default
		pod.Namespace = "default"
		pod.UID = types.UID("uid-default-" + pod.Name)
	}
	for _, o := range pod.Spec.Volumes {
		if o.Name == v.Name {
			return
		}
	}
	pod.Spec.Volumes = append(pod.Spec.Volumes, v)
}

// withBoundVolumes: claims bound to zonal CSI PVs (VolumeZone, VolumeBinding node affinity,
// NodeVolumeLimits when several are used).
func (g *generator) withBoundVolumes(pod *v1.Pod) {
	for k, n := 0, 1+g.r.IntN(3); k < n; k++ {
		addVolume(pod, pvcVolume(g.pick(g.boundPVCs)))
	}
	if g.chance(0.3) {
		addVolume(pod, pvcVolume(g.pick(g.wffcPVCs)))
	}
}

// withUnboundVolumes: WaitForFirstConsumer claims (local PVs, dynamic provisioning with
// allowedTopologies), rarely an Immediate unbound or a missing claim.
func (g *generator) withUnboundVolumes(pod *v1.Pod) {
	for k, n := 0, 1+g.r.IntN(2); k < n; k++ {
		switch x := g.r.IntN(100); {
		case x < 45:
			addVolume(pod, pvcVolume(g.pick(g.localPVCs)))
		case x < 90:
			addVolume(pod, pvcVolume(g.pick(g.wffcPVCs)))
		case x < 93:
			addVolume(pod, pvcVolume(g.pick(g.immediatePVCs)))
		default:
			addVolume(pod, pvcVolume("default/claim-missing"))
		}
	}
	if g.chance(0.2) {
		addVolume(pod, v1.Volume{Name: "scratch", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}})
	}
}

// withSharedDisks: inline disks used by placed pods (VolumeRestrictions Filter) or, rarely, the
// ReadWriteOncePod claim (VolumeRestrictions PreFilter).
func (g *generator) withSharedDisks(pod *v1.Pod) {
	if len(g.gcePDs) == 0 || g.chance(0.15) {
		addVolume(pod, pvcVolume(g.pick(g.rwopPVCs)))
		return
	}
	addVolume(pod, gceVolume(g.pick(g.gcePDs), g.chance(0.3)))
}

func (g *generator) selectorFor(app string) *metav1.LabelSelector {
	if g.chance(0.3) {
		return &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}
	}
	return &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
		{Key: "app", Operator: metav1.LabelSelectorOpIn, Values: []string{app}}}}
}

func policy(g *generator) *v1.NodeInclusionPolicy {
	switch g.r.IntN(3) {
	case 0:
		return ptr.To(v1.NodeInclusionPolicyHonor)
	case 1:
		return ptr.To(v1.NodeInclusionPolicyIgnore)
	}
	return nil
}

func (g *generator) withSpread(pod *v1.Pod) {
	for k, n := 0, 1+g.r.IntN(2); k < n; k++ {
		c := v1.TopologySpreadConstraint{MaxSkew: int32(1 + g.r.IntN(2)*g.r.IntN(2)),
			TopologyKey:       g.pick([]string{labelZone, labelHostname}),
			WhenUnsatisfiable: v1.DoNotSchedule, LabelSelector: g.selectorFor(pod.Labels["app"])}
		switch x := g.r.IntN(100); {
		case x < 15: // the pod does not match its own selector
			c.LabelSelector = g.selectorFor(g.pick(apps))
		case x < 20: // a key only some nodes carry
			c.TopologyKey = "disk"
		case x < 23:
			c.TopologyKey = labelRegion
		}
		if g.chance(0.1) {
			c.WhenUnsatisfiable = v1.ScheduleAnyway
		}
		if g.chance(0.3) {
			c.MinDomains = ptr.To(int32(2 + g.r.IntN(4)))
		}
		c.NodeAffinityPolicy = policy(g)
		c.NodeTaintsPolicy = policy(g)
		if g.chance(0.3) {
			c.MatchLabelKeys = []string{"pod-template-hash"}
			if g.chance(0.2) {
				c.MatchLabelKeys = append(c.MatchLabelKeys, "controller-revision-hash") // absent
			}
		}
		pod.Spec.TopologySpreadConstraints = append(pod.Spec.TopologySpreadConstraints, c)
	}
}

func (g *generator) affinityTerm(app string) v1.PodAffinityTerm {
	t := v1.PodAffinityTerm{TopologyKey: g.pick([]string{labelHostname, labelZone, labelZone}),
		LabelSelector: g.selectorFor(app)}
	switch g.r.IntN(6) {
	case 0:
		t.Namespaces = []string{g.pick(namespaces)}
	case 1:
		t.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"team": g.pick([]string{"a", "b"})}}
	case 2:
		t.NamespaceSelector = &metav1.LabelSelector{}
	case 3: // union of the list and the selector
		t.Namespaces = []string{g.pick(namespaces)}
		t.NamespaceSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "env", Operator: metav1.LabelSelectorOpIn, Values: []string{g.pick([]string{"prod", "dev"})}}}}
	}
	if g.chance(0.03) {
		t.LabelSelector = nil // selects no pod
	}
	return t
}

func (g *generator) withPodAffinity(pod *v1.Pod) {
	a := &v1.PodAffinity{}
	for k, n := 0, 1+g.r.IntN(2); k < n; k++ {
		app := g.pick(apps)
		if g.chance(0.15) {
			app = pod.Labels["app"] // may match itself only
		}
		a.RequiredDuringSchedulingIgnoredDuringExecution = append(
			a.RequiredDuringSchedulingIgnoredDuringExecution, g.affinityTerm(app))
	}
	ensureAffinity(pod).PodAffinity = a
}

func (g *generator) withPodAntiAffinity(pod *v1.Pod) {
	a := &v1.PodAntiAffinity{}
	for k, n := 0, 1+g.r.IntN(2); k < n; k++ {
		a.RequiredDuringSchedulingIgnoredDuringExecution = append(
			a.RequiredDuringSchedulingIgnoredDuringExecution, g.affinityTerm(g.pick(apps)))
	}
	ensureAffinity(pod).PodAntiAffinity = a
}
