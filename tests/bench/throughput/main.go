// Command throughput drives draco's end-to-end throughput benchmark against a live API server
// (tests/bench/throughput.sh runs it). Subcommands:
//
//	setup   -nodes N -devices D            fake Ready nodes bench-node-i + one ResourceSlice each
//	writes  -n N -concurrency C            raw write ceiling: ResourceClaim status-update loop
//	run     -ns NS -pods N [-gate]         create N pods from a claim template, act as the kubelet
//	                                       (a bound pod succeeds at once, releasing its device),
//	                                       wait until every pod was bound, report timings
//	steady  -ns NS -rate R -duration D     steady state: R pods/s for D, each deleted (grace 0)
//	        [-gate]                        as soon as it is seen bound; reports create->bound
//	cleanup -ns NS                         delete the namespace's pods and wait for claims to go
//
// Timings come from informer observations in this process (one clock, millisecond resolution):
// claim latency = first seen allocated - first seen created; pod latency = bound - created.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
)

const driver = "bench.draco.dev"

func client(kubeconfig string) *kubernetes.Clientset {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		fatal(err)
	}
	cfg.QPS, cfg.Burst = 5000, 10000
	return kubernetes.NewForConfigOrDie(cfg)
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "throughput:", err)
	os.Exit(1)
}

func parallel(n, workers int, fn func(i int) error) error {
	var next atomic.Int64
	var firstErr error
	var mu sync.Mutex
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				if err := fn(i); err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	return firstErr
}

func setup(cs *kubernetes.Clientset, nodes, devices int) {
	ctx := context.Background()
	class := &resourcev1.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: driver},
		Spec: resourcev1.DeviceClassSpec{Selectors: []resourcev1.DeviceSelector{{CEL: &resourcev1.CELDeviceSelector{
			Expression: fmt.Sprintf("device.driver == %q", driver)}}}}}
	if _, err := cs.ResourceV1().DeviceClasses().Create(ctx, class, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		fatal(err)
	}
	err := parallel(nodes, 16, func(i int) error {
		name := fmt.Sprintf("bench-node-%d", i)
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name,
			Labels: map[string]string{"kubernetes.io/hostname": name, "draco.dev/bench": "true"}}}
		if _, err := cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
		rl := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("64"),
			corev1.ResourceMemory: resource.MustParse("256Gi"), corev1.ResourcePods: resource.MustParse("110")}
		var err error
		for attempt := 0; attempt < 10; attempt++ {
			var n *corev1.Node
			if n, err = cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{}); err != nil {
				return err
			}
			n.Status.Capacity, n.Status.Allocatable = rl, rl
			n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue,
				Reason: "KubeletReady", LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()}}
			if _, err = cs.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
				break
			}
		}
		if err != nil {
			return err
		}
		slice := &resourcev1.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: name + "-" + driver},
			Spec: resourcev1.ResourceSliceSpec{Driver: driver, NodeName: &name,
				Pool: resourcev1.ResourcePool{Name: name, Generation: 1, ResourceSliceCount: 1}}}
		for d := 0; d < devices; d++ {
			idx := int64(d)
			slice.Spec.Devices = append(slice.Spec.Devices, resourcev1.Device{Name: fmt.Sprintf("gpu-%d", d),
				Attributes: map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{"index": {IntValue: &idx}}})
		}
		_, err = cs.ResourceV1().ResourceSlices().Create(ctx, slice, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			err = nil
		}
		return err
	})
	if err != nil {
		fatal(err)
	}
	// Nodes (and their slices) a run with more nodes left behind would make this run's cluster
	// larger than asked: delete every bench node numbered N or above.
	list, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: "draco.dev/bench=true"})
	if err != nil {
		fatal(err)
	}
	for _, n := range list.Items {
		var i int
		if _, err := fmt.Sscanf(n.Name, "bench-node-%d", &i); err != nil || i < nodes {
			continue
		}
		err := cs.ResourceV1().ResourceSlices().Delete(ctx, n.Name+"-"+driver, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			fatal(err)
		}
		if err := cs.CoreV1().Nodes().Delete(ctx, n.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			fatal(err)
		}
	}
}

func percentile(v []float64, p float64) float64 {
	if len(v) == 0 {
		return 0
	}
	sort.Float64s(v)
	i := int(p*float64(len(v))+0.5) - 1
	if i < 0 {
		i = 0
	}
	if i >= len(v) {
		i = len(v) - 1
	}
	return v[i]
}

// writes measures the raw status-update ceiling: N claims, each updated once with an allocation.
func writes(cs *kubernetes.Clientset, ns string, n, rounds, conc int) {
	ctx := context.Background()
	_, _ = cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	claims := make([]*resourcev1.ResourceClaim, n)
	if err := parallel(n, conc, func(i int) error {
		c := &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("w-%d", i), Namespace: ns},
			Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{{
				Name: "gpu", Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: driver}}}}}}
		got, err := cs.ResourceV1().ResourceClaims(ns).Create(ctx, c, metav1.CreateOptions{})
		claims[i] = got
		return err
	}); err != nil {
		fatal(err)
	}
	// Several rounds over the same claims (each write uses the object the previous one
	// returned); the median round is the ceiling, so one noisy second does not decide it.
	var rates []float64
	total, totalSecs := 0, 0.0
	for round := 0; round < rounds; round++ {
		start := time.Now()
		if err := parallel(n, conc, func(i int) error {
			c := claims[i].DeepCopy()
			node := fmt.Sprintf("bench-node-%d", i%200)
			// An allocation cannot be changed once set: even rounds set it, odd rounds clear it.
			c.Status.Allocation = nil
			if round%2 == 0 {
				c.Status.Allocation = &resourcev1.AllocationResult{Devices: resourcev1.DeviceAllocationResult{
					Results: []resourcev1.DeviceRequestAllocationResult{{Request: "gpu", Driver: driver, Pool: node, Device: "gpu-0"}}}}
			}
			got, err := cs.ResourceV1().ResourceClaims(ns).UpdateStatus(ctx, c, metav1.UpdateOptions{})
			if err == nil {
				claims[i] = got
			}
			return err
		}); err != nil {
			fatal(err)
		}
		secs := time.Since(start).Seconds()
		rates = append(rates, float64(n)/secs)
		total += n
		totalSecs += secs
	}
	sorted := append([]float64(nil), rates...)
	sort.Float64s(sorted)
	out, _ := json.Marshal(map[string]any{"writes": total, "seconds": totalSecs, "rounds": rounds,
		"round_writes_per_second": rates, "writes_per_second": sorted[len(sorted)/2], "concurrency": conc})
	fmt.Println(string(out))
	_ = cs.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{})
}

// waitDefaultServiceAccount waits until kube-controller-manager has created the namespace's
// default ServiceAccount: the ServiceAccount admission plugin refuses pods until then.
func waitDefaultServiceAccount(ctx context.Context, cs *kubernetes.Clientset, ns string) {
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
		_, err := cs.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{})
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			fatal(fmt.Errorf("namespace %s: no default ServiceAccount after a minute: %w", ns, err))
		}
	}
}

// prepareNamespace creates the namespace and the one-device claim template the pods use.
func prepareNamespace(ctx context.Context, cs *kubernetes.Clientset, ns string) *resourcev1.ResourceClaimTemplate {
	_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		fatal(err)
	}
	waitDefaultServiceAccount(ctx, cs, ns)
	tmpl := &resourcev1.ResourceClaimTemplate{ObjectMeta: metav1.ObjectMeta{Name: "gpu", Namespace: ns},
		Spec: resourcev1.ResourceClaimTemplateSpec{Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{
			Requests: []resourcev1.DeviceRequest{{Name: "gpu", Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: driver}}}}}}}
	if _, err := cs.ResourceV1().ResourceClaimTemplates(ns).Create(ctx, tmpl, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		fatal(err)
	}
	return tmpl
}

// benchPod is one benchmark pod: one claim from `tmpl`, on a bench node, gated for draco if `gate`.
func benchPod(ns, name, tmpl string, gate bool) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: corev1.PodSpec{
			ResourceClaims: []corev1.PodResourceClaim{{Name: "gpu", ResourceClaimTemplateName: &tmpl}},
			Containers: []corev1.Container{{Name: "c", Image: "registry.invalid/ml:1",
				Resources: corev1.ResourceRequirements{Claims: []corev1.ResourceClaim{{Name: "gpu"}}}}},
			NodeSelector: map[string]string{"draco.dev/bench": "true"},
		}}
	if gate {
		p.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: "draco.dev/allocation"}}
	}
	return p
}

type tracker struct {
	mu           sync.Mutex
	podCreated   map[string]time.Time
	podBound     map[string]time.Time
	claimSeen    map[string]time.Time
	claimAlloc   map[string]time.Time
	ungated      map[string]time.Time // pod seen without scheduling gates (gate mode)
	podClaim     map[string]string    // pod name -> generated claim name
	completed    map[string]bool
	boundCount   atomic.Int64
	finishing    atomic.Int64 // bound pods queued to finish whose patch is not done yet
	completeChan chan *corev1.Pod
	holder       map[string]string   // driver/pool/device -> claim holding it
	claimDevs    map[string][]string // claim -> devices it holds
	doubles      int
	// pod name -> the generated claims (controller owner) seen for it before it was bound: more
	// than one means two controllers made one each.
	ownerClaims map[string]map[string]bool
}

// release forgets the devices `claim` held. t.mu must be held.
func (t *tracker) release(claim string) {
	for _, d := range t.claimDevs[claim] {
		if t.holder[d] == claim {
			delete(t.holder, d)
		}
	}
	delete(t.claimDevs, claim)
}

func run(cs *kubernetes.Clientset, ns string, pods int, gate bool, conc int, timeout time.Duration) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	tmpl := prepareNamespace(ctx, cs, ns)
	t := &tracker{podCreated: map[string]time.Time{}, podBound: map[string]time.Time{}, claimSeen: map[string]time.Time{},
		claimAlloc: map[string]time.Time{}, ungated: map[string]time.Time{}, podClaim: map[string]string{},
		holder: map[string]string{}, claimDevs: map[string][]string{},
		completed: map[string]bool{}, completeChan: make(chan *corev1.Pod, pods),
		ownerClaims: map[string]map[string]bool{}}
	factory := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(ns))
	onPod := func(obj any) {
		p, ok := obj.(*corev1.Pod)
		if !ok {
			return
		}
		now := time.Now()
		t.mu.Lock()
		if gate && len(p.Spec.SchedulingGates) == 0 {
			if _, seen := t.ungated[p.Name]; !seen {
				t.ungated[p.Name] = now
			}
		}
		for _, st := range p.Status.ResourceClaimStatuses {
			if st.ResourceClaimName != nil {
				t.podClaim[p.Name] = *st.ResourceClaimName
			}
		}
		if p.Spec.NodeName == "" {
			t.mu.Unlock()
			return
		}
		if _, seen := t.podBound[p.Name]; !seen {
			t.podBound[p.Name] = now
			t.boundCount.Add(1)
		}
		done := t.completed[p.Name]
		if !done && p.Status.Phase != corev1.PodSucceeded {
			t.completed[p.Name] = true
		}
		t.mu.Unlock()
		if !done && p.Status.Phase != corev1.PodSucceeded {
			t.finishing.Add(1)
			t.completeChan <- p
		}
	}
	factory.Core().V1().Pods().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: onPod, UpdateFunc: func(_, o any) { onPod(o) }})
	onClaim := func(obj any) {
		c, ok := obj.(*resourcev1.ResourceClaim)
		if !ok {
			return
		}
		now := time.Now()
		t.mu.Lock()
		if _, seen := t.claimSeen[c.Name]; !seen {
			t.claimSeen[c.Name] = now
		}
		for _, o := range c.OwnerReferences {
			if o.Kind != "Pod" || o.Controller == nil || !*o.Controller {
				continue
			}
			if _, bound := t.podBound[o.Name]; !bound {
				if t.ownerClaims[o.Name] == nil {
					t.ownerClaims[o.Name] = map[string]bool{}
				}
				t.ownerClaims[o.Name][c.Name] = true
			}
		}
		if _, seen := t.claimAlloc[c.Name]; !seen && c.Status.Allocation != nil {
			t.claimAlloc[c.Name] = now
		}
		// Independent double-allocation check, in the API server's event order: a device
		// allocated while another live claim still holds it.
		if c.Status.Allocation == nil {
			t.release(c.Name)
		} else if _, held := t.claimDevs[c.Name]; !held {
			var devs []string
			for _, r := range c.Status.Allocation.Devices.Results {
				d := r.Driver + "/" + r.Pool + "/" + r.Device
				if other, busy := t.holder[d]; busy && other != c.Name {
					t.doubles++
					fmt.Fprintf(os.Stderr, "double allocation: %s held by %s and %s\n", d, other, c.Name)
				}
				t.holder[d] = c.Name
				devs = append(devs, d)
			}
			t.claimDevs[c.Name] = devs
		}
		t.mu.Unlock()
	}
	onClaimDelete := func(obj any) {
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		if c, ok := obj.(*resourcev1.ResourceClaim); ok {
			t.mu.Lock()
			t.release(c.Name)
			t.mu.Unlock()
		}
	}
	factory.Resource().V1().ResourceClaims().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: onClaim, UpdateFunc: func(_, o any) { onClaim(o) }, DeleteFunc: onClaimDelete})
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())

	// The "kubelet": a bound pod finishes at once (phase Succeeded), releasing its device.
	for w := 0; w < conc; w++ {
		go func() {
			for p := range t.completeChan {
				patch := []byte(`{"status":{"phase":"Succeeded"}}`)
				_, _ = cs.CoreV1().Pods(ns).Patch(ctx, p.Name, types.MergePatchType, patch, metav1.PatchOptions{}, "status")
				t.finishing.Add(-1)
			}
		}()
	}

	start := time.Now()
	go func() {
		_ = parallel(pods, conc, func(i int) error {
			name := fmt.Sprintf("p-%d", i)
			p := benchPod(ns, name, tmpl.Name, gate)
			now := time.Now()
			_, err := cs.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{})
			t.mu.Lock()
			t.podCreated[name] = now
			t.mu.Unlock()
			if err != nil {
				fmt.Fprintln(os.Stderr, "create:", err)
			}
			return err
		})
	}()
	deadline := time.Now().Add(timeout)
	for t.boundCount.Load() < int64(pods) {
		if time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	total := time.Since(start).Seconds()
	// The last pods bound finish too (their claims must be released), before the "kubelet" stops.
	for drain := time.Now().Add(30 * time.Second); t.finishing.Load() > 0 && time.Now().Before(drain); {
		time.Sleep(20 * time.Millisecond)
	}
	t.mu.Lock()
	var claimLat, podLat []float64
	for name, a := range t.claimAlloc {
		if s, ok := t.claimSeen[name]; ok {
			claimLat = append(claimLat, a.Sub(s).Seconds()*1000)
		}
	}
	for name, b := range t.podBound {
		if c, ok := t.podCreated[name]; ok {
			podLat = append(podLat, b.Sub(c).Seconds()*1000)
		}
	}
	// Per-pod stage breakdown (ms): created -> claim seen -> claim allocated -> gate removed
	// (gate mode only) -> bound.
	var sCreate, sAlloc, sUngate, sBind []float64
	for name, created := range t.podCreated {
		claim, ok := t.podClaim[name]
		seen, ok1 := t.claimSeen[claim]
		alloc, ok2 := t.claimAlloc[claim]
		bound, ok3 := t.podBound[name]
		if !ok || !ok1 || !ok2 || !ok3 {
			continue
		}
		sCreate = append(sCreate, seen.Sub(created).Seconds()*1000)
		last := alloc
		if u, ok := t.ungated[name]; ok && gate {
			sUngate = append(sUngate, u.Sub(alloc).Seconds()*1000)
			last = u
		}
		sAlloc = append(sAlloc, alloc.Sub(seen).Seconds()*1000)
		sBind = append(sBind, bound.Sub(last).Seconds()*1000)
	}
	bound := len(t.podBound)
	doubles := t.doubles
	extra, claimsBeforeBound := 0, 0
	for _, set := range t.ownerClaims {
		claimsBeforeBound += len(set)
		if len(set) > 1 {
			extra++
		}
	}
	t.mu.Unlock()
	out, _ := json.Marshal(map[string]any{
		"stage_claim_created_ms_p50": percentile(sCreate, 0.5), "stage_claim_allocated_ms_p50": percentile(sAlloc, 0.5),
		"stage_gate_removed_ms_p50": percentile(sUngate, 0.5), "stage_bound_ms_p50": percentile(sBind, 0.5),
		"stage_bound_ms_p90": percentile(sBind, 0.9), "stages_measured": len(sBind),
		"pods": pods, "bound": bound, "seconds": total, "pods_per_second": float64(bound) / total,
		"claim_alloc_ms_p50": percentile(claimLat, 0.5), "claim_alloc_ms_p90": percentile(claimLat, 0.9),
		"claim_alloc_ms_p99": percentile(claimLat, 0.99), "claims_measured": len(claimLat),
		"pod_bound_ms_p50": percentile(podLat, 0.5), "pod_bound_ms_p99": percentile(podLat, 0.99),
		"api_double_allocations": doubles,
		"claims_before_bound":    claimsBeforeBound, "pods_with_two_claims": extra,
	})
	fmt.Println(string(out))
}

// steady creates pods at a fixed `rate` (pods/s) for `duration` and deletes each one (grace 0, as
// a kubelet finishing it at once would lead to) as soon as it is seen bound, so the cluster stays
// below saturation and create->bound measures the control plane's latency, not a queue's length.
func steady(cs *kubernetes.Clientset, ns string, rate float64, duration time.Duration, gate bool,
	conc int, timeout time.Duration) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	tmpl := prepareNamespace(ctx, cs, ns)
	total := int(rate*duration.Seconds() + 0.5)
	var mu sync.Mutex
	created := map[string]time.Time{}
	bound := map[string]time.Time{}
	ungated := map[string]time.Time{}
	// Stages of each pod as this client's watches see them (keyed by pod name): its claim
	// created, the claim allocated, the pod's claim statuses written.
	claimSeen := map[string]time.Time{}
	claimAlloc := map[string]time.Time{}
	statuses := map[string]time.Time{}
	var boundCount, createErrs atomic.Int64
	toDelete := make(chan string, total)
	onPod := func(obj any) {
		p, ok := obj.(*corev1.Pod)
		if !ok {
			return
		}
		now := time.Now()
		mu.Lock()
		defer mu.Unlock()
		if _, seen := statuses[p.Name]; !seen && len(p.Status.ResourceClaimStatuses) > 0 {
			statuses[p.Name] = now
		}
		if _, seen := ungated[p.Name]; !seen && gate && len(p.Spec.SchedulingGates) == 0 {
			ungated[p.Name] = now
		}
		if _, seen := bound[p.Name]; !seen && p.Spec.NodeName != "" {
			bound[p.Name] = now
			boundCount.Add(1)
			toDelete <- p.Name
		}
	}
	factory := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(ns))
	factory.Core().V1().Pods().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: onPod, UpdateFunc: func(_, o any) { onPod(o) }})
	onClaim := func(obj any) {
		c, ok := obj.(*resourcev1.ResourceClaim)
		if !ok {
			return
		}
		now := time.Now()
		for _, o := range c.OwnerReferences {
			if o.Kind != "Pod" {
				continue
			}
			mu.Lock()
			if _, seen := claimSeen[o.Name]; !seen {
				claimSeen[o.Name] = now
			}
			if _, seen := claimAlloc[o.Name]; !seen && c.Status.Allocation != nil {
				claimAlloc[o.Name] = now
			}
			mu.Unlock()
		}
	}
	factory.Resource().V1().ResourceClaims().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: onClaim, UpdateFunc: func(_, o any) { onClaim(o) }})
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	zero := int64(0)
	for w := 0; w < conc; w++ {
		go func() {
			for name := range toDelete {
				_ = cs.CoreV1().Pods(ns).Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
			}
		}()
	}
	// Creates on a fixed schedule (pod i at start + i/rate), each in its own goroutine so that a
	// slow answer does not delay the next; at most `conc` creates in flight.
	sem := make(chan struct{}, conc)
	start := time.Now()
	for i := 0; i < total; i++ {
		time.Sleep(time.Until(start.Add(time.Duration(float64(i) / rate * float64(time.Second)))))
		sem <- struct{}{}
		go func(i int) {
			defer func() { <-sem }()
			name := fmt.Sprintf("s-%d", i)
			now := time.Now()
			mu.Lock()
			created[name] = now
			mu.Unlock()
			if _, err := cs.CoreV1().Pods(ns).Create(ctx, benchPod(ns, name, tmpl.Name, gate), metav1.CreateOptions{}); err != nil {
				createErrs.Add(1)
				fmt.Fprintln(os.Stderr, "create:", err)
			}
		}(i)
	}
	createSecs := time.Since(start).Seconds()
	deadline := time.Now().Add(timeout)
	for boundCount.Load()+createErrs.Load() < int64(total) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	secs := time.Since(start).Seconds()
	mu.Lock()
	var lat, ungate []float64
	for name, b := range bound {
		if c, ok := created[name]; ok {
			lat = append(lat, b.Sub(c).Seconds()*1000)
		}
	}
	for name, u := range ungated {
		if c, ok := created[name]; ok {
			ungate = append(ungate, u.Sub(c).Seconds()*1000)
		}
	}
	// Median time from pod creation until each stage was seen, per stage over the bound pods seen
	// at that stage before they were bound (the gate's removal is gate_removed_ms_p50 above).
	stage := map[string][]float64{}
	for name, c := range created {
		b, ok := bound[name]
		if !ok {
			continue
		}
		for key, m := range map[string]map[string]time.Time{"claim_created": claimSeen,
			"claim_allocated": claimAlloc, "statuses": statuses} {
			if t, ok := m[name]; ok && !t.After(b) {
				stage[key] = append(stage[key], t.Sub(c).Seconds()*1000)
			}
		}
	}
	nBound := len(bound)
	mu.Unlock()
	res := map[string]any{
		"mode": "steady", "rate": rate, "duration_seconds": duration.Seconds(), "pods": total,
		"bound": nBound, "create_errors": createErrs.Load(), "create_seconds": createSecs, "seconds": secs,
		"pods_per_second":  float64(nBound) / secs,
		"pod_bound_ms_p50": percentile(lat, 0.5), "pod_bound_ms_p90": percentile(lat, 0.9),
		"pod_bound_ms_p99": percentile(lat, 0.99), "pod_bound_ms_max": percentile(lat, 1),
		"gate_removed_ms_p50": percentile(ungate, 0.5), "gate_removed_ms_p99": percentile(ungate, 0.99),
	}
	for key, v := range stage {
		res["stage_"+key+"_ms_p50"] = percentile(v, 0.5)
	}
	out, _ := json.Marshal(res)
	fmt.Println(string(out))
}

func cleanup(cs *kubernetes.Clientset, ns string, timeout time.Duration) {
	ctx := context.Background()
	zero := int64(0)
	_ = cs.CoreV1().Pods(ns).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: &zero}, metav1.ListOptions{})
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		l, err := cs.ResourceV1().ResourceClaims(ns).List(ctx, metav1.ListOptions{})
		if err == nil && len(l.Items) == 0 {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	_ = cs.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{})
}

func main() {
	if len(os.Args) < 2 {
		fatal(fmt.Errorf("usage: throughput setup|writes|run|steady|cleanup [flags]"))
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	kubeconfig := fs.String("kubeconfig", os.Getenv("KUBECONFIG"), "kubeconfig")
	ns := fs.String("ns", "bench", "namespace")
	nodes := fs.Int("nodes", 200, "fake nodes")
	devices := fs.Int("devices", 8, "devices per node")
	pods := fs.Int("pods", 2000, "pods")
	n := fs.Int("n", 2000, "writes")
	conc := fs.Int("concurrency", 32, "client concurrency")
	rounds := fs.Int("rounds", 1, "writes: passes over the n claims; the median pass is reported")
	gate := fs.Bool("gate", false, "add draco's scheduling gate")
	rate := fs.Float64("rate", 20, "steady: pods created per second")
	duration := fs.Duration("duration", 2*time.Minute, "steady: how long pods are created")
	timeout := fs.Duration("timeout", 15*time.Minute, "give up after")
	_ = fs.Parse(os.Args[2:])
	cs := client(*kubeconfig)
	switch os.Args[1] {
	case "setup":
		setup(cs, *nodes, *devices)
	case "writes":
		writes(cs, *ns, *n, *rounds, *conc)
	case "run":
		run(cs, *ns, *pods, *gate, *conc, *timeout)
	case "steady":
		steady(cs, *ns, *rate, *duration, *gate, *conc, *timeout)
	case "cleanup":
		cleanup(cs, *ns, *timeout)
	default:
		fatal(fmt.Errorf("unknown subcommand %s", os.Args[1]))
	}
}
