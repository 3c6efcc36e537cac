package amk_test

import (
	"fmt"
	"os"

	"github.com/megaproof/megaproof/schedule"
	"github.com/megaproof/megaproof/schedule/amk"
)

// Two GEMV tiles, the second pinned to SM 1, write the two column halves of
// a [2, 8] F16 output; a consumer all-joins their shared counter. With a
// task pinned, AMK's loader queues the unpinned ones on SM 0, one at a
// time in topological order: the counter queue.sm0 stands for that queue.
func ExampleUnmarshal() {
	ir := []byte(`{
	  "ir_version": "0.2.0",
	  "target": {"name": "h100", "num_sms": 132},
	  "buffers": [
	    {"id": 0, "name": "x", "kind": "IO_INPUT", "dtype": "F16", "shape": [2, 4]},
	    {"id": 1, "name": "w", "kind": "WEIGHT", "dtype": "F16", "shape": [8, 4]},
	    {"id": 7, "name": "y", "kind": "ACTIVATION", "dtype": "F16", "shape": [2, 8]},
	    {"id": 3, "name": "out", "kind": "IO_OUTPUT", "dtype": "F16", "shape": [2, 8]}
	  ],
	  "counters": [{"id": 5, "init": 0}, {"id": 6}],
	  "tasks": [
	    {"id": 10, "op": "GEMV_TILE", "inputs": [0, 1], "outputs": [7], "out_counter": 5,
	     "params": {"K": 4, "N_tile": 4, "n_off": 0}, "sm": null},
	    {"id": 11, "op": "GEMV_TILE", "inputs": [0, 1], "outputs": [7], "out_counter": 5,
	     "params": {"K": 4, "N_tile": 4, "n_off": 4}, "sm": 1},
	    {"id": 12, "op": "COPY", "inputs": [7], "outputs": [3], "out_counter": 6,
	     "waits": [{"counter": 5, "threshold": 2}]}
	  ]
	}`)
	fmt.Println("AMK IR:", amk.Detect(ir))
	p, err := amk.Unmarshal(ir)
	if err != nil {
		fmt.Println(err)
		return
	}
	schedule.Encode(os.Stdout, p)
	// Output:
	// AMK IR: true
	// {
	//   "format": "megaproof/v1",
	//   "launch": {"target":"h100","sms":132,"blocks_per_sm":1,"workers":132,"cooperative":true},
	//   "buffers": [
	//     {"name":"x","kind":"input","size":16},
	//     {"name":"w","kind":"weight","size":64},
	//     {"name":"y","kind":"scratch","size":32},
	//     {"name":"out","kind":"output","size":32}
	//   ],
	//   "counters": [
	//     {"name":"c5"},
	//     {"name":"c6"},
	//     {"name":"queue.sm0"}
	//   ],
	//   "tasks": [
	//     {"name":"t10.GEMV_TILE","op":"GEMV_TILE","params":{"K":4,"N_tile":4,"n_off":0},"reads":[{"buffer":"x","length":16},{"buffer":"w","length":32}],"writes":[{"buffer":"y","length":8,"rows":2,"stride":16}],"after":[{"signal":"c5"},{"signal":"queue.sm0"}]},
	//     {"name":"t11.GEMV_TILE","op":"GEMV_TILE","params":{"K":4,"N_tile":4,"n_off":4},"reads":[{"buffer":"x","length":16},{"buffer":"w","offset":32,"length":32}],"writes":[{"buffer":"y","offset":8,"length":8,"rows":2,"stride":16}],"after":[{"signal":"c5"}]},
	//     {"name":"t12.COPY","op":"COPY","before":[{"wait":"c5","ge":2},{"wait":"queue.sm0","ge":1}],"reads":[{"buffer":"y","length":32}],"writes":[{"buffer":"out","length":32}],"after":[{"signal":"c6"},{"signal":"queue.sm0"}]}
	//   ]
	// }
}

// Malformed IR yields invalid.* diagnostics with paths into the AMK
// document.
func ExampleUnmarshal_invalid() {
	_, err := amk.Unmarshal([]byte(`{"buffers": [], "counters": [{"id": 0}], "tasks": [
	  {"id": 0, "op": "NOP", "inputs": [4], "outputs": [], "out_counter": 0,
	   "waits": [{"counter": 0, "threshold": 0}]}]}`))
	fmt.Println(err)
	// Output:
	// invalid.reference at $.tasks[0].inputs[0]: no buffer has id 4
	// invalid.threshold at $.tasks[0].waits[0].threshold: threshold 0; want at least 1
}
