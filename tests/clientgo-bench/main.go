// clientgo-bench: the client-go half of tests/bench/k8sclient_vs_clientgo.sh.
//
//	clientgo-bench [-kubeconfig F] [-context C] -mode list|watch -resource resourceslices|configmaps [-namespace NS] [-expect N]
//
// list:  a typed SharedInformer lists and caches the objects labelled draco-bench=k8sclient.
// watch: one watch with sendInitialEvents=true streams and decodes N events.
// Prints one JSON line like the C++ bench: {"client":"client-go","op":..,"objects":..,
// "seconds":..,"cpu_seconds":..,"peak_rss_mb":..}.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
)

const benchLabel = "draco-bench=k8sclient"

func peakRSSMB() float64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		line := s.Text()
		if strings.HasPrefix(line, "VmHWM:") {
			fields := strings.Fields(line)
			kb, _ := strconv.ParseFloat(fields[1], 64)
			return kb / 1024
		}
	}
	return 0
}

func cpuSeconds() float64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
}

func report(op string, objects int, secs, cpu float64) {
	out, _ := json.Marshal(map[string]any{
		"client": "client-go", "op": op, "objects": objects,
		"seconds": secs, "cpu_seconds": cpu, "peak_rss_mb": peakRSSMB(),
	})
	fmt.Println(string(out))
}

func main() {
	kubeconfig := flag.String("kubeconfig", os.Getenv("KUBECONFIG"), "kubeconfig path")
	kubeContext := flag.String("context", "", "kubeconfig context")
	mode := flag.String("mode", "list", "list or watch")
	resource := flag.String("resource", "resourceslices", "resourceslices or configmaps")
	namespace := flag.String("namespace", "default", "namespace for configmaps")
	expect := flag.Int("expect", 10000, "objects/events expected")
	flag.Parse()

	rules := &clientcmd.ClientConfigLoadingRules{ExplicitPath: *kubeconfig}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules,
		&clientcmd.ConfigOverrides{CurrentContext: *kubeContext}).ClientConfig()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	cfg.QPS = 1000
	cfg.Burst = 2000
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	slices := *resource == "resourceslices"
	ctx := context.Background()

	switch *mode {
	case "list":
		start := time.Now()
		cpu0 := cpuSeconds()
		opts := []informers.SharedInformerOption{
			informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = benchLabel }),
		}
		if !slices {
			opts = append(opts, informers.WithNamespace(*namespace))
		}
		factory := informers.NewSharedInformerFactoryWithOptions(cs, 0, opts...)
		var inf cache.SharedIndexInformer
		if slices {
			inf = factory.Resource().V1().ResourceSlices().Informer()
		} else {
			inf = factory.Core().V1().ConfigMaps().Informer()
		}
		stop := make(chan struct{})
		factory.Start(stop)
		if !cache.WaitForCacheSync(stop, inf.HasSynced) {
			fmt.Fprintln(os.Stderr, "cache did not sync")
			os.Exit(1)
		}
		n := len(inf.GetStore().ListKeys())
		report("list", n, time.Since(start).Seconds(), cpuSeconds()-cpu0)
		close(stop)
		if n < *expect {
			os.Exit(2)
		}
	case "watch":
		start := time.Now()
		cpu0 := cpuSeconds()
		send := true
		timeout := int64(600)
		lo := metav1.ListOptions{
			LabelSelector:        benchLabel,
			SendInitialEvents:    &send,
			ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan,
			AllowWatchBookmarks:  true,
			TimeoutSeconds:       &timeout,
		}
		var w watch.Interface
		if slices {
			w, err = cs.ResourceV1().ResourceSlices().Watch(ctx, lo)
		} else {
			w, err = cs.CoreV1().ConfigMaps(*namespace).Watch(ctx, lo)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		events := 0
		bytes := 0
		for events < *expect {
			ev, ok := <-w.ResultChan()
			if !ok {
				break
			}
			switch ev.Type {
			case watch.Error:
				fmt.Fprintln(os.Stderr, ev.Object)
				os.Exit(1)
			case watch.Bookmark:
				continue
			}
			if m, ok := ev.Object.(metav1.Object); ok {
				bytes += len(m.GetName())
			}
			events++
		}
		report("watch", events, time.Since(start).Seconds(), cpuSeconds()-cpu0)
		w.Stop()
		if events < *expect || bytes == 0 {
			os.Exit(2)
		}
	default:
		fmt.Fprintln(os.Stderr, "unknown -mode")
		os.Exit(64)
	}
}
