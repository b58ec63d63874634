// Command schedfilter is the kube-scheduler filter oracle for draco's feasibility parity test
// (issue #13): `eval` runs kube-scheduler v1.37.2's own framework on scenarios, `gen` writes
// generated scenarios. Input/output format: README.md here.
package main

import (
	"flag"
	"fmt"
	"os"

	"k8s.io/klog/v2"
)

func usage() {
	fmt.Fprintf(os.Stderr, "usage:\n  schedfilter eval [-v] <scenarios.jsonl|->\n"+
		"  schedfilter gen --seed S --n N\n"+
		"  schedfilter compare [--scenarios F] [--findings F] [--label L] <oracle-out> <draco-out>\n")
	os.Exit(2)
}

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	// The framework logs at V(4)+ only; keep stderr for our diagnostics.
	klog.SetOutput(os.Stderr)
	switch os.Args[1] {
	case "eval":
		fs := flag.NewFlagSet("eval", flag.ExitOnError)
		verbose := fs.Bool("v", false, "print the Filter plugin order to stderr")
		_ = fs.Parse(os.Args[2:])
		if fs.NArg() != 1 {
			usage()
		}
		in := os.Stdin
		if fs.Arg(0) != "-" {
			f, err := os.Open(fs.Arg(0))
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			defer f.Close()
			in = f
		}
		if err := runEval(in, os.Stdout, *verbose); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	case "gen":
		fs := flag.NewFlagSet("gen", flag.ExitOnError)
		seed := fs.Int64("seed", 1, "random seed")
		n := fs.Int("n", 100, "number of scenarios")
		_ = fs.Parse(os.Args[2:])
		if fs.NArg() != 0 || *n < 0 {
			usage()
		}
		if err := runGen(os.Stdout, *seed, *n); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	case "compare":
		fs := flag.NewFlagSet("compare", flag.ExitOnError)
		scen := fs.String("scenarios", "", "scenario file (to quote mismatching scenarios)")
		findings := fs.String("findings", "", "append mismatches (Markdown) to this file")
		label := fs.String("label", "parity run", "heading for the findings")
		maxFindings := fs.Int("max-findings", 5, "mismatching scenarios written to --findings")
		_ = fs.Parse(os.Args[2:])
		if fs.NArg() != 2 {
			usage()
		}
		bad, err := runCompare(os.Stdout, *scen, fs.Arg(0), fs.Arg(1), *findings, *label, *maxFindings)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		if bad > 0 {
			os.Exit(1)
		}
	default:
		usage()
	}
}
