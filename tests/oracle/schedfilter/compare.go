package main

// compare: diffs the oracle's output against draco's feasibility_harness output (both in the
// contract's format) and prints the parity summary; optionally appends findings (scenario JSON
// reduced to the mismatching pod, both outputs) in Markdown.

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

type scenarioOut struct {
	err   string            // non-empty for `scenario <i> error ...`
	lines []string          // "<ns>/<pod> <node> <result>" in order
	res   map[string]string // "<ns>/<pod> <node>" -> result
	pods  []string          // pods in order of first appearance
}

func parseOutput(path string) (map[int]*scenarioOut, int, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	out := map[int]*scenarioOut{}
	var cur *scenarioOut
	maxIdx := -1
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for ln := 1; sc.Scan(); ln++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		f := strings.Fields(line)
		if f[0] == "scenario" && len(f) >= 2 {
			idx, err := strconv.Atoi(f[1])
			if err != nil {
				return nil, 0, fmt.Errorf("%s:%d: bad scenario index", path, ln)
			}
			cur = &scenarioOut{res: map[string]string{}}
			if len(f) >= 3 && f[2] == "error" {
				cur.err = strings.Join(f[3:], " ")
				if cur.err == "" {
					cur.err = "error"
				}
			}
			out[idx] = cur
			if idx > maxIdx {
				maxIdx = idx
			}
			continue
		}
		if cur == nil || len(f) != 3 {
			return nil, 0, fmt.Errorf("%s:%d: unexpected line %q", path, ln, line)
		}
		key := f[0] + " " + f[1]
		if _, dup := cur.res[key]; !dup {
			if len(cur.pods) == 0 || cur.pods[len(cur.pods)-1] != f[0] {
				cur.pods = append(cur.pods, f[0])
			}
		}
		cur.res[key] = f[2]
		cur.lines = append(cur.lines, line)
	}
	return out, maxIdx + 1, sc.Err()
}

func feasible(s *scenarioOut, pod string) []string {
	var nodes []string
	for _, l := range s.lines {
		f := strings.Fields(l)
		if f[0] == pod && f[2] == "ok" {
			nodes = append(nodes, f[1])
		}
	}
	return nodes
}

type comparison struct {
	total, identical, partial, attribution int
	oraclePlugin, dracoPlugin              map[string]int
	mismatches                             []int
	mismatchPods                           map[int][]string
}

func compareOutputs(oracle, draco map[int]*scenarioOut, n int) *comparison {
	c := &comparison{total: n, oraclePlugin: map[string]int{}, dracoPlugin: map[string]int{},
		mismatchPods: map[int][]string{}}
	count := func(s *scenarioOut, into map[string]int) {
		seen := map[string]bool{}
		for _, r := range s.res {
			if r != "ok" && !seen[r] {
				seen[r] = true
				into[r]++
			}
		}
	}
	for i := 0; i < n; i++ {
		o, d := oracle[i], draco[i]
		if o == nil {
			o = &scenarioOut{err: "missing from oracle output", res: map[string]string{}}
		}
		if d == nil {
			d = &scenarioOut{err: "missing from draco output", res: map[string]string{}}
		}
		count(o, c.oraclePlugin)
		count(d, c.dracoPlugin)
		for _, pod := range o.pods {
			fs := len(feasible(o, pod))
			if fs > 0 && fs < countPodLines(o, pod) {
				c.partial++
				break
			}
		}
		same := o.err == "" && d.err == "" && len(o.res) == len(d.res)
		bad := map[string]bool{}
		for key, ores := range o.res {
			dres, ok := d.res[key]
			if !ok || (ores == "ok") != (dres == "ok") {
				same = false
				bad[strings.Fields(key)[0]] = true
			} else if ores != dres {
				c.attribution++
			}
		}
		for _, pod := range o.pods {
			if bad[pod] {
				c.mismatchPods[i] = append(c.mismatchPods[i], pod)
			}
		}
		if same {
			c.identical++
		} else {
			c.mismatches = append(c.mismatches, i)
		}
	}
	return c
}

func countPodLines(s *scenarioOut, pod string) int {
	n := 0
	for _, l := range s.lines {
		if strings.HasPrefix(l, pod+" ") {
			n++
		}
	}
	return n
}

// reduceScenario keeps only the pending pods named in keep (ns/name); other pending pods are
// independent of them by the contract, so the reduced scenario shows the same mismatch.
func reduceScenario(line string, keep []string) string {
	var list map[string]any
	if json.Unmarshal([]byte(line), &list) != nil {
		return line
	}
	items, _ := list["items"].([]any)
	var kept []any
	for _, it := range items {
		m, _ := it.(map[string]any)
		if m["kind"] == "Pod" {
			spec, _ := m["spec"].(map[string]any)
			meta, _ := m["metadata"].(map[string]any)
			if spec != nil && (spec["nodeName"] == nil || spec["nodeName"] == "") {
				ns, _ := meta["namespace"].(string)
				if ns == "" {
					ns = "default"
				}
				name, _ := meta["name"].(string)
				found := false
				for _, k := range keep {
					found = found || k == ns+"/"+name
				}
				if !found {
					continue
				}
			}
		}
		kept = append(kept, it)
	}
	list["items"] = kept
	b, err := json.Marshal(list)
	if err != nil {
		return line
	}
	return string(b)
}

func readLines(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) != "" {
			lines = append(lines, sc.Text())
		}
	}
	return lines, sc.Err()
}

// runCompare prints the summary to w and returns the number of feasible-set mismatches.
func runCompare(w io.Writer, scenariosPath, oraclePath, dracoPath, findingsPath, label string, maxFindings int) (int, error) {
	oracle, n, err := parseOutput(oraclePath)
	if err != nil {
		return 0, err
	}
	draco, _, err := parseOutput(dracoPath)
	if err != nil {
		return 0, err
	}
	c := compareOutputs(oracle, draco, n)
	fmt.Fprintf(w, "scheduler filter parity: %d/%d scenarios identical feasible sets\n", c.identical, c.total)
	fmt.Fprintf(w, "plugin attribution mismatches (same feasibility, different plugin): %d\n", c.attribution)
	fmt.Fprintf(w, "scenarios with a partial feasible set (some but not all nodes): %d/%d\n", c.partial, c.total)
	fmt.Fprintf(w, "scenarios where a plugin rejected a node (oracle / draco):\n")
	names := map[string]int{}
	for k := range c.oraclePlugin {
		names[k] = 1
	}
	for k := range c.dracoPlugin {
		names[k] = 1
	}
	for _, k := range sortedKeys(names) {
		fmt.Fprintf(w, "  %-20s %6d / %6d\n", k, c.oraclePlugin[k], c.dracoPlugin[k])
	}
	if len(c.mismatches) == 0 {
		return 0, nil
	}
	var scen []string
	if scenariosPath != "" {
		if scen, err = readLines(scenariosPath); err != nil {
			return 0, err
		}
	}
	var fw io.Writer = io.Discard
	if findingsPath != "" {
		f, err := os.OpenFile(findingsPath, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			return 0, err
		}
		defer f.Close()
		fw = f
		fmt.Fprintf(fw, "\n## %s: %d/%d scenarios with a feasible-set mismatch\n", label, len(c.mismatches), c.total)
	}
	for k, i := range c.mismatches {
		o, d := oracle[i], draco[i]
		if k < 10 {
			fmt.Fprintf(w, "MISMATCH scenario %d pods %v\n", i, c.mismatchPods[i])
		}
		if k >= maxFindings {
			continue
		}
		fmt.Fprintf(fw, "\n### scenario %d (pods %s)\n\n", i, strings.Join(c.mismatchPods[i], ", "))
		fmt.Fprintf(fw, "| pod node | oracle (kube-scheduler) | draco |\n|---|---|---|\n")
		for _, l := range o.lines {
			f := strings.Fields(l)
			key := f[0] + " " + f[1]
			dres := "(missing)"
			if d != nil {
				if d.err != "" {
					dres = "error " + d.err
				} else if r, ok := d.res[key]; ok {
					dres = r
				}
			}
			mark := ""
			if (f[2] == "ok") != (dres == "ok") {
				mark = " **<-**"
			}
			fmt.Fprintf(fw, "| %s | %s | %s%s |\n", key, f[2], dres, mark)
		}
		if i < len(scen) {
			fmt.Fprintf(fw, "\nScenario (other pending pods removed):\n\n```json\n%s\n```\n",
				reduceScenario(scen[i], c.mismatchPods[i]))
		}
	}
	return len(c.mismatches), nil
}
