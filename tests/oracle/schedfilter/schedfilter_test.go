package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A hand-written scenario whose answer follows from the plugins' documented behaviour.
const tinyScenario = `{"apiVersion":"v1","kind":"List","items":[
{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"default"}},
{"apiVersion":"v1","kind":"Node","metadata":{"name":"a","labels":{"kubernetes.io/hostname":"a"}},
 "spec":{"unschedulable":true},"status":{"allocatable":{"cpu":"4","memory":"8Gi","pods":"10"}}},
{"apiVersion":"v1","kind":"Node","metadata":{"name":"b","labels":{"kubernetes.io/hostname":"b"}},
 "status":{"allocatable":{"cpu":"4","memory":"8Gi","pods":"10"}}},
{"apiVersion":"v1","kind":"Node","metadata":{"name":"c","labels":{"kubernetes.io/hostname":"c"}},
 "status":{"allocatable":{"cpu":"1","memory":"8Gi","pods":"10"}}},
{"apiVersion":"v1","kind":"Node","metadata":{"name":"d","labels":{"kubernetes.io/hostname":"d"}},
 "status":{"allocatable":{"cpu":"4","memory":"8Gi","pods":"10"}}},
{"apiVersion":"v1","kind":"Pod","metadata":{"name":"old","namespace":"default","labels":{"app":"x"}},
 "spec":{"nodeName":"b","containers":[{"name":"c","image":"i","ports":[{"containerPort":80,"hostPort":80,"protocol":"TCP"}]}]},
 "status":{"phase":"Running"}},
{"apiVersion":"v1","kind":"Pod","metadata":{"name":"done","namespace":"default"},
 "spec":{"nodeName":"d","containers":[{"name":"c","image":"i","resources":{"requests":{"cpu":"4"}}}]},
 "status":{"phase":"Succeeded"}},
{"apiVersion":"v1","kind":"Pod","metadata":{"name":"new","namespace":"default"},
 "spec":{"containers":[{"name":"c","image":"i","resources":{"requests":{"cpu":"2"}},
   "ports":[{"containerPort":80,"hostPort":80,"protocol":"TCP"}]}]}}
]}`

func TestEvalTinyScenario(t *testing.T) {
	var out bytes.Buffer
	if err := runEval(strings.NewReader(strings.ReplaceAll(tinyScenario, "\n", "")+"\nnot json\n"), &out, false); err != nil {
		t.Fatal(err)
	}
	want := "scenario 0\n" +
		"default/new a NodeUnschedulable\n" +
		"default/new b NodePorts\n" +
		"default/new c NodeResourcesFit\n" +
		"default/new d ok\n"
	got := out.String()
	if !strings.HasPrefix(got, want) || !strings.Contains(got, "scenario 1 error invalid JSON") {
		t.Fatalf("got\n%s\nwant prefix\n%s", got, want)
	}
}

func TestGenDeterministicAndCompareClean(t *testing.T) {
	var a, b bytes.Buffer
	if err := runGen(&a, 42, 15); err != nil {
		t.Fatal(err)
	}
	if err := runGen(&b, 42, 15); err != nil {
		t.Fatal(err)
	}
	if a.String() != b.String() {
		t.Fatal("gen is not deterministic for a seed")
	}
	dir := t.TempDir()
	scen := filepath.Join(dir, "s.jsonl")
	os.WriteFile(scen, a.Bytes(), 0o644)
	var o bytes.Buffer
	if err := runEval(bytes.NewReader(a.Bytes()), &o, false); err != nil {
		t.Fatal(err)
	}
	oracle := filepath.Join(dir, "o.txt")
	os.WriteFile(oracle, o.Bytes(), 0o644)
	var sum bytes.Buffer
	if bad, err := runCompare(&sum, scen, oracle, oracle, "", "", 0); err != nil || bad != 0 {
		t.Fatalf("self-compare: %d mismatches, %v", bad, err)
	}
	// Flip one verdict: compare must report it.
	flipped := strings.Replace(o.String(), " ok\n", " NodePorts\n", 1)
	draco := filepath.Join(dir, "d.txt")
	os.WriteFile(draco, []byte(flipped), 0o644)
	sum.Reset()
	if bad, err := runCompare(&sum, scen, oracle, draco, "", "", 0); err != nil || bad != 1 {
		t.Fatalf("flipped verdict: %d mismatches, %v\n%s", bad, err, sum.String())
	}
	if !strings.Contains(sum.String(), "scheduler filter parity: 14/15 scenarios identical feasible sets") {
		t.Fatalf("summary:\n%s", sum.String())
	}
}
