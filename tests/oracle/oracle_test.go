package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func genBytes(t *testing.T, fn func(args []string, w *bytes.Buffer) error, args ...string) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := fn(args, &buf); err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	return buf.Bytes()
}

func genAlloc(args []string, w *bytes.Buffer) error { return runGenAlloc(args, w) }
func genCEL(args []string, w *bytes.Buffer) error   { return runGenCEL(args, w) }

func TestGenAllocDeterministicAndPrefix(t *testing.T) {
	a := genBytes(t, genAlloc, "-n", "40", "-seed", "7")
	b := genBytes(t, genAlloc, "-n", "40", "-seed", "7")
	if !bytes.Equal(a, b) {
		t.Fatal("gen-alloc output differs between two runs with the same seed")
	}
	tail := genBytes(t, genAlloc, "-n", "10", "-seed", "7", "-start", "30")
	lines := bytes.SplitAfter(a, []byte("\n"))
	if got := bytes.Join(lines[30:40], nil); !bytes.Equal(got, tail) {
		t.Fatal("-start 30 -n 10 is not the suffix of -n 40")
	}
	c := genBytes(t, genAlloc, "-n", "40", "-seed", "8")
	if bytes.Equal(a, c) {
		t.Fatal("different seeds gave identical output")
	}
}

func TestGenAllocReplayMatchesAllocate(t *testing.T) {
	out := genBytes(t, genAlloc, "-n", "60", "-seed", "3")
	var scenarios, expected bytes.Buffer
	outcomes := map[string]int{}
	for _, line := range bytes.Split(bytes.TrimSpace(out), []byte("\n")) {
		var l struct {
			Scenario json.RawMessage `json:"scenario"`
			Expected json.RawMessage `json:"expected"`
		}
		if err := json.Unmarshal(line, &l); err != nil {
			t.Fatal(err)
		}
		scenarios.Write(l.Scenario)
		scenarios.WriteByte('\n')
		expected.Write(l.Expected)
		expected.WriteByte('\n')
		var o AllocOutput
		if err := json.Unmarshal(l.Expected, &o); err != nil {
			t.Fatal(err)
		}
		outcomes[o.outcome()]++
	}
	var got bytes.Buffer
	if err := runAllocate(nil, &scenarios, &got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), expected.Bytes()) {
		t.Fatal("oracle allocate on the emitted scenarios differs from the expected output")
	}
	for _, k := range []string{"results", "unsatisfiable", "error"} {
		if outcomes[k] == 0 {
			t.Errorf("no %q outcome among 60 scenarios: %v", k, outcomes)
		}
	}
	if outcomes["timeout"] != 0 {
		t.Errorf("generator emitted timeouts: %v", outcomes)
	}
}

func TestGenCELDeterministicAndReplay(t *testing.T) {
	a := genBytes(t, genCEL, "-n", "300", "-seed", "5")
	if b := genBytes(t, genCEL, "-n", "300", "-seed", "5"); !bytes.Equal(a, b) {
		t.Fatal("gen-cel output differs between two runs with the same seed")
	}
	var inputs, expected bytes.Buffer
	kinds := map[string]int{}
	for _, line := range bytes.Split(bytes.TrimSpace(a), []byte("\n")) {
		var l struct {
			Input    json.RawMessage `json:"input"`
			Expected json.RawMessage `json:"expected"`
		}
		if err := json.Unmarshal(line, &l); err != nil {
			t.Fatal(err)
		}
		inputs.Write(l.Input)
		inputs.WriteByte('\n')
		expected.Write(l.Expected)
		expected.WriteByte('\n')
		var o CELOutput
		_ = json.Unmarshal(l.Expected, &o)
		switch {
		case o.CompileError != nil:
			kinds["compile"]++
		case o.EvalError != nil:
			kinds["eval"]++
		default:
			kinds["result"]++
		}
	}
	var got bytes.Buffer
	if err := runCEL(nil, &inputs, &got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), expected.Bytes()) {
		t.Fatal("oracle cel on the emitted inputs differs from the expected output")
	}
	if kinds["compile"] == 0 || kinds["eval"] == 0 || kinds["result"] == 0 {
		t.Errorf("missing outcome kinds: %v", kinds)
	}
}

func TestCELProtocol(t *testing.T) {
	in := strings.Join([]string{
		`{"id":"ok","expr":"device.attributes[\"d.example.com\"].model == \"x\"","device":{"driver":"d.example.com","attributes":{"model":{"string":"x"}}}}`,
		`{"id":"key","expr":"device.attributes[\"d.example.com\"].nope == 1","device":{"driver":"d.example.com"}}`,
		`{"id":"dom","expr":"device.attributes[\"other\"].size() == 0","device":{"driver":"d.example.com"}}`,
		`{"id":"cmp","expr":"device.attributes[\"d.example.com\"].model ==","device":{"driver":"d.example.com"}}`,
		`{"id":"cost","expr":"lists.range(1000).all(x, lists.range(1000).all(y, x + y >= 0))","device":{"driver":"d.example.com"}}`,
		`not json`,
	}, "\n")
	var out bytes.Buffer
	if err := runCEL(nil, strings.NewReader(in), &out); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	want := []string{`"result":true`, `"errorClass":"noSuchKey"`, `"result":true`, `"compileError":`, `"errorClass":"costLimit"`, `"inputError":`}
	if len(lines) != len(want) {
		t.Fatalf("got %d lines, want %d:\n%s", len(lines), len(want), out.String())
	}
	for i, w := range want {
		if !strings.Contains(lines[i], w) {
			t.Errorf("line %d = %s, want it to contain %s", i, lines[i], w)
		}
	}
}

func TestAllocateShareIDsCanonicalAndStateRespected(t *testing.T) {
	scenario := `{"id":"t","node":{"metadata":{"name":"n"}},"classes":[{"metadata":{"name":"c"}}],` +
		`"slices":[{"metadata":{"name":"s"},"spec":{"driver":"d.example.com","pool":{"name":"n","generation":1,"resourceSliceCount":1},"nodeName":"n",` +
		`"devices":[{"name":"a"},{"name":"b","allowMultipleAllocations":true,"capacity":{"mem":{"value":"4Gi"}}}]}}],` +
		`"allocatedClaims":[{"metadata":{"name":"old"},"status":{"allocation":{"devices":{"results":[{"request":"r","driver":"d.example.com","pool":"n","device":"a"}]}}}}],` +
		`"claims":[{"metadata":{"name":"x"},"spec":{"devices":{"requests":[{"name":"r","exactly":{"deviceClassName":"c","capacity":{"requests":{"mem":"1Gi"}}}},{"name":"s","exactly":{"deviceClassName":"c","capacity":{"requests":{"mem":"1Gi"}}}}]}}}]}`
	var out bytes.Buffer
	if err := runAllocate(nil, strings.NewReader(scenario+"\n"+scenario+"\n"), &out); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 || lines[0] != lines[1] {
		t.Fatalf("non-deterministic output:\n%s", out.String())
	}
	for _, w := range []string{`"device":"b","shareID":"00000000-0000-4000-8000-000000000001"`, `"shareID":"00000000-0000-4000-8000-000000000002"`} {
		if !strings.Contains(lines[0], w) {
			t.Errorf("output %s lacks %s", lines[0], w)
		}
	}
	if strings.Contains(lines[0], `"device":"a"`) {
		t.Errorf("allocated device a was handed out again: %s", lines[0])
	}
}

func TestPerfScenariosBuild(t *testing.T) {
	for _, n := range []string{"S4a", "S5a-8", "S5b", "S5c", "S5d", "S5e"} {
		scen, _, err := perfScenarios(n)
		if err != nil || len(scen) == 0 {
			t.Fatalf("%s: %v", n, err)
		}
		out := scen[0].run(allocOptions{}, nil)
		wantUnsat := strings.HasPrefix(n, "S5a") || n == "S5d"
		if out.Error != "" || out.Unsatisfiable != wantUnsat {
			t.Errorf("%s: outcome %+v, want unsatisfiable=%v", n, out, wantUnsat)
		}
	}
}
