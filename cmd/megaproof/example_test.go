package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// racyMLP is the README's two-layer MLP with down.1's wait dropped.
const racyMLP = `{"format": "megaproof/v1", "name": "tiny-mlp-racy",
 "launch": {"target": "H200", "sms": 132, "blocks_per_sm": 1, "workers": 2, "cooperative": true},
 "buffers": [{"name": "x", "kind": "input", "size": 1024}, {"name": "w1", "kind": "weight", "size": 65536},
             {"name": "w2", "kind": "weight", "size": 65536}, {"name": "h", "kind": "scratch", "size": 1024},
             {"name": "y", "kind": "output", "size": 1024}],
 "counters": [{"name": "h_ready"}],
 "tasks": [
  {"name": "up.0", "op": "gemv", "worker": 0, "reads": [{"buffer": "x", "length": 1024}, {"buffer": "w1", "length": 512, "rows": 64, "stride": 1024}], "writes": [{"buffer": "h", "length": 512}], "after": [{"signal": "h_ready"}]},
  {"name": "up.1", "op": "gemv", "worker": 1, "reads": [{"buffer": "x", "length": 1024}, {"buffer": "w1", "offset": 512, "length": 512, "rows": 64, "stride": 1024}], "writes": [{"buffer": "h", "offset": 512, "length": 512}], "after": [{"signal": "h_ready"}]},
  {"name": "down.0", "op": "gemv", "worker": 0, "before": [{"wait": "h_ready", "ge": 2}], "reads": [{"buffer": "h", "length": 1024}, {"buffer": "w2", "length": 512, "rows": 64, "stride": 1024}], "writes": [{"buffer": "y", "length": 512}]},
  {"name": "down.1", "op": "gemv", "worker": 1, "reads": [{"buffer": "h", "length": 1024}, {"buffer": "w2", "offset": 512, "length": 512, "rows": 64, "stride": 1024}], "writes": [{"buffer": "y", "offset": 512, "length": 512}]}]}`

// Verify with --format sarif: each finding is a result at the line of the
// task it names, with the witness's threads as thread flows.
func Example_sarif() {
	dir, _ := os.MkdirTemp("", "megaproof")
	defer os.RemoveAll(dir)
	file := filepath.Join(dir, "tiny-mlp-racy.json")
	os.WriteFile(file, []byte(racyMLP), 0o644)
	var out strings.Builder
	status := run([]string{"verify", "--format", "sarif", file}, strings.NewReader(""), &out, os.Stderr)
	var log sarifOut
	json.Unmarshal([]byte(out.String()), &log)
	fmt.Println("exit status", status)
	for _, r := range log.Runs[0].Results {
		l := r.Locations[0]
		fmt.Printf("%s at line %d (%s), %d thread flows\n", r.RuleID, l.PhysicalLocation.Region.StartLine, l.LogicalLocations[0].Name, len(r.CodeFlows[0].ThreadFlows))
	}
	// Output:
	// exit status 1
	// race.raw at line 8 (up.0), 2 thread flows
	// uninitialized-read at line 11 (down.1), 1 thread flows
}

// Draw the neighbourhood of finding 0 with its racing pair, as Graphviz
// input: --radius 0 keeps the finding's own tasks only.
func Example_dotFocus() {
	dir, _ := os.MkdirTemp("", "megaproof")
	defer os.RemoveAll(dir)
	file := filepath.Join(dir, "tiny-mlp-racy.json")
	os.WriteFile(file, []byte(racyMLP), 0o644)
	run([]string{"dot", "--focus", "finding:0", "--radius", "0", file}, strings.NewReader(""), os.Stdout, os.Stderr)
	// Output:
	// strict digraph {
	//   label="tiny-mlp-racy — 4 tasks, 2 workers on H200 — 2 tasks drawn — unsafe, 2 findings";
	//   labelloc="t";
	//   rankdir="LR";
	//   "t0" [ class="finding", color="red", fontsize="10", label="up.0\ngemv\nworker 0", penwidth="3", shape="box", tooltip="finding:0 race.raw",  weight=0 ];
	//   "t0" -> "t3" [ class="race", color="red", constraint="false", dir="both", fontcolor="red", label="finding:0 race.raw", penwidth="3",  weight=1 ];
	//   "t3" [ class="finding", color="red", fontsize="10", label="down.1\ngemv\nworker 1", penwidth="3", shape="box", tooltip="finding:0 race.raw",  weight=0 ];
	// }
}
