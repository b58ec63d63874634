package main

import (
	"context"
	"encoding/json"
	"flag"
	"io"
	"slices"
	"time"

	"k8s.io/dynamic-resource-allocation/structured"
)

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	sum := 0.0
	for _, x := range xs {
		sum += x
	}
	return sum / float64(len(xs))
}

// timeBatches runs fn iters times split into up to 10 batches and returns the median per-call
// time in ns over the batches.
func timeBatches(iters int, fn func()) float64 {
	if iters < 1 {
		iters = 1
	}
	batches := min(10, iters)
	per := iters / batches
	var samples []float64
	for b := 0; b < batches; b++ {
		start := time.Now()
		for i := 0; i < per; i++ {
			fn()
		}
		samples = append(samples, float64(time.Since(start).Nanoseconds())/float64(per))
	}
	return median(samples)
}

type benchCELLine struct {
	ID        string  `json:"id"`
	Iters     int     `json:"iters"`
	EvalNs    float64 `json:"evalNs"`
	CompileNs float64 `json:"compileNs"`
	Error     string  `json:"error,omitempty"`
}

type benchSummary struct {
	Summary bool    `json:"summary"`
	Count   int     `json:"count"`
	Median  float64 `json:"medianNs"`
	Mean    float64 `json:"meanNs"`
}

func runBenchCEL(args []string, r io.Reader, w io.Writer) error {
	fs := flag.NewFlagSet("bench-cel", flag.ContinueOnError)
	iters := fs.Int("iters", 1000, "evaluations per input line")
	if err := fs.Parse(args); err != nil {
		return flagError{err}
	}
	lw := newLineWriter(w)
	var evals []float64
	err := forEachLine(r, func(line []byte) error {
		var in CELInput
		if err := json.Unmarshal(line, &in); err != nil {
			return lw.write(inputErrorLine{ID: idOnly(line), InputError: err.Error()})
		}
		f := in.Features.resolve()
		compiler := compilerFor(f)
		compiled := compileSelector(f, in.Expr)
		out := benchCELLine{ID: in.ID, Iters: *iters}
		if compiled.Error != nil {
			out.Error = compiled.Error.Detail
			return lw.write(out)
		}
		out.CompileNs = timeBatches(min(*iters, 200), func() {
			_ = compiler.CompileCELExpression(in.Expr, dracelOptionsNoEstimate)
		})
		dev := in.Device.toUpstream()
		ctx := context.Background()
		out.EvalNs = timeBatches(*iters, func() { _, _, _ = compiled.DeviceMatches(ctx, dev) })
		evals = append(evals, out.EvalNs)
		return lw.write(out)
	})
	if err == nil {
		err = lw.write(benchSummary{Summary: true, Count: len(evals), Median: median(evals), Mean: mean(evals)})
	}
	if ferr := lw.flush(); err == nil {
		err = ferr
	}
	return err
}

type benchAllocLine struct {
	ID               string  `json:"id"`
	Iters            int     `json:"iters"`
	Ns               float64 `json:"ns"`
	AllocateNs       float64 `json:"allocateNs,omitempty"`
	NewAllocatorNs   float64 `json:"newAllocatorNs,omitempty"`
	PerClaimNs       float64 `json:"perClaimNs,omitempty"`
	Outcome          string  `json:"outcome"`
	AllocateOneCalls int64   `json:"allocateOneCalls"`
}

func runBenchAlloc(args []string, r io.Reader, w io.Writer) error {
	fs, opts, variant, _ := allocFlags("bench-alloc", args)
	iters := fs.Int("iters", 20, "repetitions per scenario")
	if err := fs.Parse(args); err != nil {
		return flagError{err}
	}
	if err := applyVariant(*variant); err != nil {
		return err
	}
	lw := newLineWriter(w)
	var all []float64
	err := forEachLine(r, func(line []byte) error {
		s, err := decodeScenario(line)
		if err != nil {
			return lw.write(inputErrorLine{ID: idOnly(line), InputError: err.Error()})
		}
		p := prepare(s)
		var stats allocStats
		first := p.runPrepared(s, *opts, &stats) // warm-up; also the outcome
		out := benchAllocLine{ID: s.ID, Iters: *iters, Outcome: first.outcome(), AllocateOneCalls: stats.allocateOneCalls}
		n := *iters
		if first.Timeout {
			n = 1 // already took the whole timeout
		}
		var samples []float64
		for i := 0; i < n; i++ {
			start := time.Now()
			p.runPrepared(s, *opts, nil)
			samples = append(samples, float64(time.Since(start).Nanoseconds()))
		}
		out.Ns = median(samples)
		if s.Mode == "fillUp" {
			if len(s.Claims) > 0 {
				out.PerClaimNs = out.Ns / float64(len(s.Claims))
			}
		} else if !first.Timeout {
			ctx := context.Background()
			out.NewAllocatorNs = timeBatches(n, func() {
				_, _ = structured.NewAllocator(ctx, p.features.alloc, p.state, p.classes, p.slices, p.celCache)
			})
			allocator, err := structured.NewAllocator(ctx, p.features.alloc, p.state, p.classes, p.slices, p.celCache)
			if err == nil {
				var as []float64
				for i := 0; i < n; i++ {
					start := time.Now()
					p.allocateWith(allocator, s.Node, s.Claims, *opts, nil)
					as = append(as, float64(time.Since(start).Nanoseconds()))
				}
				out.AllocateNs = median(as)
			}
		}
		all = append(all, out.Ns)
		return lw.write(out)
	})
	if err == nil {
		err = lw.write(benchSummary{Summary: true, Count: len(all), Median: median(all), Mean: mean(all)})
	}
	if ferr := lw.flush(); err == nil {
		err = ferr
	}
	return err
}
