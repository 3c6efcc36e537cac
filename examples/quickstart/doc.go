// Package quickstart is the smallest end-to-end use of megaproof: build a
// three-task megakernel schedule with
// [github.com/megaproof/megaproof/schedule.Builder], verify it with
// [github.com/megaproof/megaproof/verify.Run], then break it (drop one
// wait) and print the finding and its witness, the interleaving that
// exhibits the bug, checked by
// [github.com/megaproof/megaproof/schedule.CheckWitness].
//
// The code is this package's Example; run it with
//
//	go test ./examples/quickstart -run Example -v
package quickstart
