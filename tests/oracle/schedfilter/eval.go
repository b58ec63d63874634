package main

// eval: runs kube-scheduler v1.37.2's own framework (default profile minus DynamicResources) on
// each scenario and prints, per pending pod and node, `ok` or the plugin that rejected the node,
// following Scheduler.findNodesThatFitPod (pkg/scheduler/schedule_one.go): PreFilter once per
// pod, then Filter per node (first failing plugin wins), nodes outside a PreFilterResult carry
// the plugin(s) that narrowed the node set.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	clientscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/klog/v2"
	configv1 "k8s.io/kube-scheduler/config/v1"
	fwk "k8s.io/kube-scheduler/framework"
	schedconfig "k8s.io/kubernetes/pkg/scheduler/apis/config"
	schedscheme "k8s.io/kubernetes/pkg/scheduler/apis/config/scheme"
	internalcache "k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	frameworkplugins "k8s.io/kubernetes/pkg/scheduler/framework/plugins"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/nodevolumelimits"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	"k8s.io/kubernetes/pkg/scheduler/metrics"
	"k8s.io/utils/ptr"
)

// defaultProfile is kube-scheduler v1.37.2's default profile (scheme defaulting of an empty
// KubeSchedulerConfiguration, with the compiled-in feature gates) with DynamicResources
// disabled the way a user would disable it.
func defaultProfile() (*schedconfig.KubeSchedulerProfile, error) {
	versioned := configv1.KubeSchedulerConfiguration{
		Profiles: []configv1.KubeSchedulerProfile{{
			SchedulerName: ptr.To(v1.DefaultSchedulerName),
			Plugins: &configv1.Plugins{MultiPoint: configv1.PluginSet{
				Disabled: []configv1.Plugin{{Name: "DynamicResources"}},
			}},
		}},
	}
	schedscheme.Scheme.Default(&versioned)
	var cfg schedconfig.KubeSchedulerConfiguration
	if err := schedscheme.Scheme.Convert(&versioned, &cfg, nil); err != nil {
		return nil, err
	}
	if len(cfg.Profiles) != 1 {
		return nil, fmt.Errorf("expected one profile, got %d", len(cfg.Profiles))
	}
	return &cfg.Profiles[0], nil
}

type scenario struct {
	namespaces []*v1.Namespace
	nodes      []*v1.Node
	placed     []*v1.Pod
	pending    []*v1.Pod
	all        []runtime.Object
}

func decodeScenario(line []byte) (*scenario, error) {
	var list struct {
		Kind  string            `json:"kind"`
		Items []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(line, &list); err != nil {
		return nil, fmt.Errorf("invalid JSON: %v", err)
	}
	if list.Kind != "List" {
		return nil, fmt.Errorf("kind %q, want List", list.Kind)
	}
	dec := clientscheme.Codecs.UniversalDeserializer()
	sc := &scenario{}
	for i, raw := range list.Items {
		obj, gvk, err := dec.Decode(raw, nil, nil)
		if err != nil {
			return nil, fmt.Errorf("items[%d]: %v", i, err)
		}
		switch o := obj.(type) {
		case *v1.Namespace:
			sc.namespaces = append(sc.namespaces, o)
		case *v1.Node:
			sc.nodes = append(sc.nodes, o)
		case *v1.Pod:
			if o.Namespace == "" {
				o.Namespace = metav1NamespaceDefault
			}
			if o.Spec.NodeName != "" {
				sc.placed = append(sc.placed, o)
			} else {
				sc.pending = append(sc.pending, o)
			}
		case *v1.PersistentVolumeClaim:
			if o.Namespace == "" {
				o.Namespace = metav1NamespaceDefault
			}
		default:
			switch gvk.Kind {
			case "PersistentVolume", "StorageClass", "CSINode":
			default:
				return nil, fmt.Errorf("items[%d]: unsupported kind %s", i, gvk.Kind)
			}
		}
		sc.all = append(sc.all, obj)
	}
	return sc, nil
}

const metav1NamespaceDefault = "default"

func terminal(p *v1.Pod) bool {
	return p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed
}

type evaluator struct {
	registry frameworkruntime.Registry
	profile  *schedconfig.KubeSchedulerProfile
	// filterOrder is the profile's Filter plugin order, printed with -v.
	filterOrder []string
}

func newEvaluator() (*evaluator, error) {
	profile, err := defaultProfile()
	if err != nil {
		return nil, err
	}
	// The framework records plugin metrics unconditionally (as kube-scheduler's New does).
	metrics.Register()
	return &evaluator{registry: frameworkplugins.NewInTreeRegistry(), profile: profile}, nil
}

// podResult is one output line's result per node, in node input order.
type podResult struct {
	pod     *v1.Pod
	results []string
}

func (e *evaluator) evalScenario(parent context.Context, sc *scenario) ([]podResult, error) {
	ctx, cancel := context.WithCancel(parent)
	defer cancel()

	nodeSet := sets.New[string]()
	for _, n := range sc.nodes {
		if nodeSet.Has(n.Name) {
			return nil, fmt.Errorf("duplicate node %q", n.Name)
		}
		nodeSet.Insert(n.Name)
	}
	// The scheduler's snapshot only holds nodes that exist; pods bound to unknown nodes are
	// invisible to every filter. Terminal pods are never seen: kube-scheduler's pod informer
	// lists with status.phase!=Succeeded,status.phase!=Failed (scheduler.NewInformerFactory).
	var placed []*v1.Pod
	for _, p := range sc.placed {
		if nodeSet.Has(p.Spec.NodeName) && !terminal(p) {
			placed = append(placed, p)
		}
	}
	var objects []runtime.Object
	for _, o := range sc.all {
		if p, ok := o.(*v1.Pod); !ok || !terminal(p) {
			objects = append(objects, o)
		}
	}
	client := fake.NewSimpleClientset(objects...)
	factory := informers.NewSharedInformerFactory(client, 0)
	snapshot := internalcache.NewSnapshot(placed, sc.nodes)
	fw, err := frameworkruntime.NewFramework(ctx, e.registry, e.profile,
		frameworkruntime.WithClientSet(client),
		frameworkruntime.WithInformerFactory(factory),
		frameworkruntime.WithSnapshotSharedLister(snapshot),
		frameworkruntime.WithMutableSnapshotLister(snapshot),
		frameworkruntime.WithSharedCSIManager(
			nodevolumelimits.NewCSIManager(factory.Storage().V1().CSINodes().Lister())),
		frameworkruntime.WithParallelism(1),
		frameworkruntime.WithLogger(klog.Background()),
	)
	if err != nil {
		return nil, fmt.Errorf("framework: %v", err)
	}
	if e.filterOrder == nil {
		for _, p := range fw.ListPlugins().Filter.Enabled {
			e.filterOrder = append(e.filterOrder, p.Name)
		}
	}
	factory.Start(ctx.Done())
	for typ, ok := range factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return nil, fmt.Errorf("informer %v did not sync", typ)
		}
	}

	var out []podResult
	for _, pod := range sc.pending {
		out = append(out, podResult{pod: pod, results: e.evalPod(ctx, fw, snapshot, pod, sc.nodes)})
	}
	cancel()
	factory.Shutdown()
	return out, nil
}

func pluginList(s sets.Set[string]) string {
	l := sets.List(s)
	if len(l) == 0 {
		return "PreFilter"
	}
	return strings.Join(l, ",")
}

func (e *evaluator) evalPod(ctx context.Context, fw framework.Framework, snapshot *internalcache.Snapshot,
	pod *v1.Pod, nodes []*v1.Node) []string {
	results := make([]string, len(nodes))
	state := framework.NewCycleState()
	preRes, s, narrowing := fw.RunPreFilterPlugins(ctx, state, pod)
	if !s.IsSuccess() {
		name := s.Plugin()
		if name == "" {
			name = pluginList(narrowing)
		}
		if !s.IsRejected() {
			name = "error:" + name
			fmt.Fprintf(os.Stderr, "pod %s/%s: PreFilter error: %v\n", pod.Namespace, pod.Name, s.AsError())
		}
		for i := range results {
			results[i] = name
		}
		return results
	}
	for i, n := range nodes {
		if !preRes.AllNodes() && !preRes.NodeNames.Has(n.Name) {
			results[i] = pluginList(narrowing)
			continue
		}
		nodeInfo, err := snapshot.Get(n.Name)
		if err != nil {
			results[i] = "error:snapshot"
			continue
		}
		st := fw.RunFilterPlugins(ctx, state, pod, nodeInfo)
		switch {
		case st.IsSuccess():
			results[i] = "ok"
		case st.IsRejected():
			results[i] = st.Plugin()
		default:
			fmt.Fprintf(os.Stderr, "pod %s/%s node %s: Filter error: %v\n", pod.Namespace, pod.Name, n.Name, st.AsError())
			results[i] = "error:" + st.Plugin()
		}
	}
	return results
}

var _ fwk.NodeInfo = (*framework.NodeInfo)(nil)

// runEval reads scenarios (JSON lines) from r and writes the contract's output to w.
func runEval(r io.Reader, w io.Writer, verbose bool) error {
	e, err := newEvaluator()
	if err != nil {
		return err
	}
	ctx := context.Background()
	in := bufio.NewReader(r)
	out := bufio.NewWriter(w)
	defer out.Flush()
	idx := 0
	for {
		line, rerr := in.ReadBytes('\n')
		if len(strings.TrimSpace(string(line))) > 0 {
			e.writeScenario(ctx, out, idx, line)
			idx++
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return rerr
		}
	}
	if verbose {
		fmt.Fprintf(os.Stderr, "filter order: %s\n", strings.Join(e.filterOrder, " "))
	}
	return nil
}

func (e *evaluator) writeScenario(ctx context.Context, out *bufio.Writer, idx int, line []byte) {
	sc, err := decodeScenario(line)
	if err != nil {
		fmt.Fprintf(out, "scenario %d error %s\n", idx, oneLine(err.Error()))
		return
	}
	res, err := e.evalScenario(ctx, sc)
	if err != nil {
		fmt.Fprintf(out, "scenario %d error %s\n", idx, oneLine(err.Error()))
		return
	}
	fmt.Fprintf(out, "scenario %d\n", idx)
	for _, pr := range res {
		for i, n := range sc.nodes {
			fmt.Fprintf(out, "%s/%s %s %s\n", pr.pod.Namespace, pr.pod.Name, n.Name, pr.results[i])
		}
	}
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// sortedKeys is used by the summary printers.
func sortedKeys(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
