package main

import (
	"context"
	"encoding/json"
	"flag"
	"io"
	"regexp"
	"strings"
	"sync"

	resourceapi "k8s.io/api/resource/v1"
	dracel "k8s.io/dynamic-resource-allocation/cel"
)

// celFeatures is the optional "features" object of a cel input line.
type celFeatures struct {
	ConsumableCapacity *bool `json:"consumableCapacity,omitempty"`
	ListTypeAttributes *bool `json:"listTypeAttributes,omitempty"`
}

func (f *celFeatures) resolve() dracel.Features {
	out := dracel.Features{EnableConsumableCapacity: true, EnableListTypeAttributes: false}
	if f == nil {
		return out
	}
	if f.ConsumableCapacity != nil {
		out.EnableConsumableCapacity = *f.ConsumableCapacity
	}
	if f.ListTypeAttributes != nil {
		out.EnableListTypeAttributes = *f.ListTypeAttributes
	}
	return out
}

// CELDevice is the "device" object of a cel input line.
type CELDevice struct {
	Driver                   string                                                    `json:"driver"`
	Attributes               map[resourceapi.QualifiedName]resourceapi.DeviceAttribute `json:"attributes,omitempty"`
	Capacity                 map[resourceapi.QualifiedName]resourceapi.DeviceCapacity  `json:"capacity,omitempty"`
	AllowMultipleAllocations *bool                                                     `json:"allowMultipleAllocations,omitempty"`
}

// CELInput is one line of `oracle cel` input.
type CELInput struct {
	ID       string       `json:"id"`
	Expr     string       `json:"expr"`
	Device   CELDevice    `json:"device"`
	Features *celFeatures `json:"features,omitempty"`
}

// CELOutput is one line of `oracle cel` output. Exactly one of CompileError, Result, EvalError
// is set.
type CELOutput struct {
	ID            string  `json:"id"`
	CompileError  *string `json:"compileError,omitempty"`
	Result        *bool   `json:"result,omitempty"`
	EvalError     *string `json:"evalError,omitempty"`
	ErrorClass    string  `json:"errorClass,omitempty"`
	Cost          *uint64 `json:"cost,omitempty"`
	CostVaries    bool    `json:"costVaries,omitempty"`
	EstimatedCost *uint64 `json:"estimatedCost"`
}

type celCompiler interface {
	CompileCELExpression(expression string, options dracel.Options) dracel.CompilationResult
}

var (
	compilersMu sync.Mutex
	compilers   = map[dracel.Features]celCompiler{}
)

// compilerFor returns the upstream compiler for a feature set. GetCompiler only caches one
// feature set, so each compiler is kept here once created.
func compilerFor(f dracel.Features) celCompiler {
	compilersMu.Lock()
	defer compilersMu.Unlock()
	c, ok := compilers[f]
	if !ok {
		c = dracel.GetCompiler(f)
		compilers[f] = c
	}
	return c
}

// compileSelector compiles like the scheduler's cel.Cache.GetOrCompile.
var dracelOptionsNoEstimate = dracel.Options{DisableCostEstimation: true}

func compileSelector(f dracel.Features, expr string) dracel.CompilationResult {
	return compilerFor(f).CompileCELExpression(expr, dracel.Options{DisableCostEstimation: true})
}

func (d *CELDevice) toUpstream() dracel.Device {
	return dracel.Device{
		Driver:                   d.Driver,
		AllowMultipleAllocations: d.AllowMultipleAllocations,
		Attributes:               d.Attributes,
		Capacity:                 d.Capacity,
	}
}

// mapComprehension matches a macro call whose receiver is a map: the attribute/capacity maps or
// a map literal.
var mapComprehension = regexp.MustCompile(`(device\.(attributes|capacity)(\[[^\]]*\])?|\})\.(all|exists|exists_one|map|filter)\(`)

func iteratesMap(expr string) bool { return mapComprehension.MatchString(expr) }

func classifyEvalError(msg string) string {
	switch {
	case strings.Contains(msg, "operation cancelled: actual cost limit exceeded"):
		return "costLimit"
	case strings.Contains(msg, "no such key"):
		return "noSuchKey"
	case strings.Contains(msg, "no such overload"), strings.Contains(msg, "no matching overload"):
		return "noSuchOverload"
	case strings.Contains(msg, "division by zero"), strings.Contains(msg, "modulus by zero"):
		return "divideByZero"
	case strings.Contains(msg, "overflow"):
		return "overflow"
	case strings.Contains(msg, "could not be converted to bool"):
		return "notBool"
	case strings.HasPrefix(msg, "attribute "):
		return "attribute"
	case strings.Contains(msg, "index out of range"), strings.Contains(msg, "index '"):
		return "indexOutOfRange"
	default:
		return "invalidArgument"
	}
}

// evalCEL produces the oracle answer for one input.
func evalCEL(in *CELInput) CELOutput {
	out := CELOutput{ID: in.ID}
	features := in.Features.resolve()
	compiled := compileSelector(features, in.Expr)
	if compiled.Error != nil {
		msg := compiled.Error.Detail
		out.CompileError = &msg
		return out
	}
	est := compilerFor(features).CompileCELExpression(in.Expr, dracel.Options{})
	if est.Error == nil {
		c := est.MaxCost
		out.EstimatedCost = &c
	}
	matches, details, err := compiled.DeviceMatches(context.Background(), in.Device.toUpstream())
	if details != nil {
		if c := details.ActualCost(); c != nil {
			cost := *c
			out.Cost = &cost
		}
	}
	if out.Cost != nil && iteratesMap(in.Expr) {
		// Go map iteration order is random, so a short-circuiting comprehension over a map has
		// no stable cost upstream.
		out.Cost = nil
		out.CostVaries = true
	}
	if err != nil {
		msg := err.Error()
		out.EvalError = &msg
		out.ErrorClass = classifyEvalError(msg)
		return out
	}
	out.Result = &matches
	return out
}

func runCEL(args []string, r io.Reader, w io.Writer) error {
	fs := flag.NewFlagSet("cel", flag.ContinueOnError)
	if err := fs.Parse(args); err != nil {
		return flagError{err}
	}
	lw := newLineWriter(w)
	err := forEachLine(r, func(line []byte) error {
		var in CELInput
		if err := json.Unmarshal(line, &in); err != nil {
			return lw.write(inputErrorLine{ID: idOnly(line), InputError: err.Error()})
		}
		return lw.write(evalCEL(&in))
	})
	if ferr := lw.flush(); err == nil {
		err = ferr
	}
	return err
}
