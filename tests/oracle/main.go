// Command oracle runs the upstream Kubernetes DRA CEL compiler and structured allocator
// (k8s.io/dynamic-resource-allocation v0.37.2) on JSON-lines input. It is the reference that
// draco's C++ implementation is diff-tested and benchmarked against. See README.md for the
// protocol.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
)

func usage() {
	fmt.Fprintf(os.Stderr, `usage: oracle <subcommand> [flags]
subcommands:
  cel          evaluate CEL selectors (JSON lines on stdin)
  allocate     run the structured allocator on scenarios (JSON lines on stdin)
  gen-alloc    -n N -seed S: generate allocation scenarios with expected output
  gen-cel      -n N -seed S: generate CEL inputs with expected output
  bench-cel    -iters N: benchmark CEL evaluation
  bench-alloc  -iters N: benchmark allocation
  gen-perf     -scenario NAME: write performance scenarios
`)
}

func main() {
	if len(os.Args) < 2 {
		usage()
		os.Exit(2)
	}
	cmd, args := os.Args[1], os.Args[2:]
	var err error
	switch cmd {
	case "cel":
		err = runCEL(args, os.Stdin, os.Stdout)
	case "allocate":
		err = runAllocate(args, os.Stdin, os.Stdout)
	case "gen-alloc":
		err = runGenAlloc(args, os.Stdout)
	case "gen-cel":
		err = runGenCEL(args, os.Stdout)
	case "bench-cel":
		err = runBenchCEL(args, os.Stdin, os.Stdout)
	case "bench-alloc":
		err = runBenchAlloc(args, os.Stdin, os.Stdout)
	case "gen-perf":
		err = runGenPerf(args, os.Stdout)
	case "-h", "--help", "help":
		usage()
		return
	default:
		usage()
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "oracle %s: %v\n", cmd, err)
		if _, ok := err.(flagError); ok {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

type flagError struct{ error }

// forEachLine calls fn for every non-empty line of r.
func forEachLine(r io.Reader, fn func(line []byte) error) error {
	br := bufio.NewReaderSize(r, 1<<20)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			trimmed := trimSpace(line)
			if len(trimmed) > 0 {
				if ferr := fn(trimmed); ferr != nil {
					return ferr
				}
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t' || b[0] == '\r' || b[0] == '\n') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t' || b[len(b)-1] == '\r' || b[len(b)-1] == '\n') {
		b = b[:len(b)-1]
	}
	return b
}

// lineWriter writes one JSON value per line.
type lineWriter struct {
	w   *bufio.Writer
	enc *json.Encoder
}

func newLineWriter(w io.Writer) *lineWriter {
	bw := bufio.NewWriterSize(w, 1<<16)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	return &lineWriter{w: bw, enc: enc}
}

// write encodes v (no HTML escaping) followed by a newline.
func (lw *lineWriter) write(v any) error { return lw.enc.Encode(v) }

func (lw *lineWriter) flush() error { return lw.w.Flush() }

// idOnly extracts "id" from a line that failed to decode fully.
func idOnly(line []byte) string {
	var v struct {
		ID string `json:"id"`
	}
	_ = json.Unmarshal(line, &v)
	return v.ID
}

type inputErrorLine struct {
	ID         string `json:"id"`
	InputError string `json:"inputError"`
}
