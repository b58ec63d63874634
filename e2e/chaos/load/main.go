// Command load is the pod load of draco's chaos and soak scripts (e2e/chaos/chaos.sh, soak.sh).
// The nodes, ResourceSlices and DeviceClass come from tests/bench/throughput's `setup`; this
// creates gated pods from a one-device claim template, either a fixed number as fast as its
// workers go (-pods) or at a steady rate for a while (-rate, -duration), and plays the kubelet: a
// bound pod succeeds at once, which releases its device; with -delete-done a succeeded pod is
// then deleted, so that a long run keeps a constant number of objects. Every API call is retried
// until it succeeds: the faults the scripts inject hit this client too.
//
//	load -ns NS -pods N [-rate R -duration D] [-delete-done] [-timeline FILE]
//
// It exits when every created pod was bound and finished (with -delete-done: deleted), or after
// -timeout, printing a JSON summary. The timeline file gets one line per claim seen allocated: the
// Unix time in seconds (millisecond resolution), which the scripts use for "allocation rate back"
// after a fault.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
)

const driver = "bench.draco.dev" // tests/bench/throughput's DeviceClass and driver

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "load:", err)
	os.Exit(1)
}

// retry calls fn until it returns nil or a permanent outcome (ok reports whether err counts as
// done, e.g. AlreadyExists for a create), or ctx ends.
func retry(ctx context.Context, what string, fn func() error, ok func(error) bool) {
	delay := 100 * time.Millisecond
	for attempt := 0; ; attempt++ {
		err := fn()
		if err == nil || (ok != nil && ok(err)) {
			return
		}
		if attempt == 5 {
			fmt.Fprintf(os.Stderr, "load: %s still failing: %v\n", what, err)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(delay):
		}
		if delay < 2*time.Second {
			delay *= 2
		}
	}
}

type state struct {
	mu        sync.Mutex
	bound     map[string]bool
	finishing map[string]bool // Succeeded patch queued
	deleting  map[string]bool // delete queued
	allocated map[string]bool // claims seen allocated
	created   atomic.Int64
	nBound    atomic.Int64
	nDone     atomic.Int64
	nDeleted  atomic.Int64
	// Pods the "kubelet" could not start at first: a claim not allocated on the pod's node or not
	// reserved for the pod (a real kubelet refuses it and retries); and the refusals in all.
	waited    map[string]bool
	nRefusals atomic.Int64
	timeline  *bufio.Writer
	work      chan func()
}

func main() {
	fs := flag.NewFlagSet("load", flag.ExitOnError)
	kubeconfig := fs.String("kubeconfig", os.Getenv("KUBECONFIG"), "kubeconfig")
	ns := fs.String("ns", "chaos", "namespace (created if missing)")
	pods := fs.Int("pods", 2000, "pods to create (with -rate: at most this many, 0 = no limit)")
	rate := fs.Float64("rate", 0, "pods per second (0 = as fast as -concurrency allows)")
	duration := fs.Duration("duration", 0, "with -rate: stop creating after this long")
	deleteDone := fs.Bool("delete-done", false, "delete a pod once it succeeded")
	conc := fs.Int("concurrency", 16, "client workers")
	timeline := fs.String("timeline", "", "append one line per claim seen allocated (Unix seconds)")
	timeout := fs.Duration("timeout", 30*time.Minute, "give up after")
	_ = fs.Parse(os.Args[1:])
	if *rate > 0 && *duration == 0 && *pods == 0 {
		fatal(fmt.Errorf("-rate needs -duration or -pods"))
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		fatal(err)
	}
	cfg.QPS, cfg.Burst = 2000, 4000
	cs := kubernetes.NewForConfigOrDie(cfg)
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()

	retry(ctx, "namespace", func() error {
		_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: *ns}}, metav1.CreateOptions{})
		return err
	}, apierrors.IsAlreadyExists)
	// The ServiceAccount admission plugin refuses pods until the default ServiceAccount exists.
	retry(ctx, "default service account", func() error {
		_, err := cs.CoreV1().ServiceAccounts(*ns).Get(ctx, "default", metav1.GetOptions{})
		return err
	}, func(error) bool { return false })
	tmpl := &resourcev1.ResourceClaimTemplate{ObjectMeta: metav1.ObjectMeta{Name: "gpu", Namespace: *ns},
		Spec: resourcev1.ResourceClaimTemplateSpec{Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{
			Requests: []resourcev1.DeviceRequest{{Name: "gpu", Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: driver}}}}}}}
	retry(ctx, "template", func() error {
		_, err := cs.ResourceV1().ResourceClaimTemplates(*ns).Create(ctx, tmpl, metav1.CreateOptions{})
		return err
	}, apierrors.IsAlreadyExists)

	s := &state{bound: map[string]bool{}, finishing: map[string]bool{}, deleting: map[string]bool{},
		allocated: map[string]bool{}, waited: map[string]bool{}, work: make(chan func(), 1<<16)}
	if *timeline != "" {
		f, err := os.OpenFile(*timeline, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			fatal(err)
		}
		defer f.Close()
		s.timeline = bufio.NewWriter(f)
		defer func() { s.mu.Lock(); _ = s.timeline.Flush(); s.mu.Unlock() }()
		go func() {
			for range time.Tick(time.Second) {
				s.mu.Lock()
				_ = s.timeline.Flush()
				s.mu.Unlock()
			}
		}()
	}
	for w := 0; w < *conc; w++ {
		go func() {
			for fn := range s.work {
				fn()
			}
		}()
	}

	factory := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(*ns))
	claims := factory.Resource().V1().ResourceClaims().Lister()
	// usable: what the kubelet checks before it prepares a pod's claims (allocated for its node,
	// reserved for the pod); the claim names come from the pod's status.
	usable := func(p *corev1.Pod) string {
		for _, st := range p.Status.ResourceClaimStatuses {
			if st.ResourceClaimName == nil {
				continue
			}
			c, err := claims.ResourceClaims(p.Namespace).Get(*st.ResourceClaimName)
			if err != nil || c.Status.Allocation == nil {
				return "claim " + *st.ResourceClaimName + " not allocated"
			}
			for _, r := range c.Status.Allocation.Devices.Results {
				if r.Pool != p.Spec.NodeName {
					return "claim " + c.Name + " allocated on " + r.Pool
				}
			}
			reserved := false
			for _, r := range c.Status.ReservedFor {
				reserved = reserved || r.UID == p.UID
			}
			if !reserved {
				return "claim " + c.Name + " not reserved for the pod"
			}
		}
		if len(p.Status.ResourceClaimStatuses) == 0 {
			return "no claim recorded"
		}
		return ""
	}
	podLister := factory.Core().V1().Pods().Lister()
	var finish func(name string)
	finish = func(name string) {
		p, err := podLister.Pods(*ns).Get(name)
		if err != nil {
			return
		}
		if why := usable(p); why != "" {
			// As the kubelet: refuse, and try again shortly (its pod workers back off).
			s.nRefusals.Add(1)
			s.mu.Lock()
			if !s.waited[name] {
				s.waited[name] = true
				fmt.Fprintf(os.Stderr, "load: kubelet refuses %s on %s: %s\n", name, p.Spec.NodeName, why)
			}
			s.mu.Unlock()
			time.AfterFunc(200*time.Millisecond, func() { s.work <- func() { finish(name) } })
			return
		}
		patch := []byte(`{"status":{"phase":"Succeeded"}}`)
		retry(ctx, "pod status", func() error {
			_, err := cs.CoreV1().Pods(*ns).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}, "status")
			return err
		}, apierrors.IsNotFound)
		s.nDone.Add(1)
	}
	onPod := func(obj any) {
		p, ok := obj.(*corev1.Pod)
		if !ok || p.Spec.NodeName == "" {
			return
		}
		name := p.Name
		s.mu.Lock()
		defer s.mu.Unlock()
		if !s.bound[name] {
			s.bound[name] = true
			s.nBound.Add(1)
		}
		// The "kubelet": a bound pod whose claims it may use finishes at once.
		if p.Status.Phase != corev1.PodSucceeded && !s.finishing[name] {
			s.finishing[name] = true
			s.work <- func() { finish(name) }
		}
		if p.Status.Phase == corev1.PodSucceeded && *deleteDone && !s.deleting[name] {
			s.deleting[name] = true
			s.work <- func() {
				zero := int64(0)
				retry(ctx, "pod delete", func() error {
					return cs.CoreV1().Pods(*ns).Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
				}, apierrors.IsNotFound)
				s.nDeleted.Add(1)
			}
		}
	}
	factory.Core().V1().Pods().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: onPod, UpdateFunc: func(_, o any) { onPod(o) }})
	onClaim := func(obj any) {
		c, ok := obj.(*resourcev1.ResourceClaim)
		if !ok || c.Status.Allocation == nil {
			return
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.allocated[c.Name] {
			return
		}
		s.allocated[c.Name] = true
		if s.timeline != nil {
			fmt.Fprintf(s.timeline, "%.3f\n", float64(time.Now().UnixMilli())/1000)
		}
	}
	factory.Resource().V1().ResourceClaims().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: onClaim, UpdateFunc: func(_, o any) { onClaim(o) }})
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())

	start := time.Now()
	var creationDone atomic.Bool
	go func() {
		tick := time.Duration(0)
		if *rate > 0 {
			tick = time.Duration(float64(time.Second) / *rate)
		}
		sem := make(chan struct{}, *conc)
		for i := 0; ; i++ {
			if *pods > 0 && i >= *pods {
				break
			}
			if *duration > 0 && time.Since(start) >= *duration {
				break
			}
			if tick > 0 {
				// Steady: pod i is due at start + i*tick (no catch-up burst after a stall
				// beyond the concurrency limit).
				if d := time.Until(start.Add(time.Duration(i) * tick)); d > 0 {
					time.Sleep(d)
				}
			}
			sem <- struct{}{}
			go func(i int) {
				defer func() { <-sem }()
				createPod(ctx, cs, *ns, fmt.Sprintf("p-%d", i))
				s.created.Add(1)
			}(i)
		}
		for j := 0; j < *conc; j++ {
			sem <- struct{}{}
		}
		close(sem)
		creationDone.Store(true)
	}()
	last := time.Now()
	for ctx.Err() == nil {
		c := s.created.Load()
		// Done when every pod was bound and the "kubelet" finished (and deleted) it.
		if creationDone.Load() && s.nBound.Load() >= c && s.nDone.Load() >= c &&
			(!*deleteDone || s.nDeleted.Load() >= c) {
			break
		}
		if time.Since(last) >= 10*time.Second {
			last = time.Now()
			s.mu.Lock()
			na := len(s.allocated)
			s.mu.Unlock()
			fmt.Fprintf(os.Stderr, "load: %s %.0fs created=%d allocated=%d bound=%d succeeded=%d deleted=%d\n",
				time.Now().UTC().Format("15:04:05"), time.Since(start).Seconds(), c, na, s.nBound.Load(),
				s.nDone.Load(), s.nDeleted.Load())
		}
		time.Sleep(50 * time.Millisecond)
	}
	created := s.created.Load()
	secs := time.Since(start).Seconds()
	s.mu.Lock()
	out, _ := json.Marshal(map[string]any{"namespace": *ns, "created": created, "bound": s.nBound.Load(),
		"allocated": len(s.allocated), "seconds": secs, "pods_per_second": float64(s.nBound.Load()) / secs,
		"kubelet_waited": len(s.waited), "kubelet_refusals": s.nRefusals.Load(),
		"timed_out": ctx.Err() != nil})
	s.mu.Unlock()
	fmt.Println(string(out))
	if ctx.Err() != nil {
		os.Exit(1)
	}
}

// createPod creates one gated pod, retrying through faults (AlreadyExists: an earlier attempt
// that reported an error did land).
func createPod(ctx context.Context, cs *kubernetes.Clientset, ns, name string) {
	tmplName := "gpu"
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: corev1.PodSpec{
			SchedulingGates: []corev1.PodSchedulingGate{{Name: "draco.dev/allocation"}},
			ResourceClaims:  []corev1.PodResourceClaim{{Name: "gpu", ResourceClaimTemplateName: &tmplName}},
			Containers: []corev1.Container{{Name: "c", Image: "registry.invalid/ml:1",
				Resources: corev1.ResourceRequirements{Claims: []corev1.ResourceClaim{{Name: "gpu"}}}}},
			NodeSelector: map[string]string{"draco.dev/bench": "true"},
		}}
	retry(ctx, "pod create", func() error {
		_, err := cs.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{})
		return err
	}, apierrors.IsAlreadyExists)
}
