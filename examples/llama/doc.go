// Command llama generates a decode-step megakernel schedule for a
// Llama-family model and GPU, verifies it with megaproof, and prints a
// summary; -json writes the program in megaproof's JSON form.
//
//	go run ./examples/llama -model llama-3.2-1b -target h200
//	go run ./examples/llama -model llama-2-13b -target h100 -tile 32 -strategy balanced
//	go run ./examples/llama -config qwen05b-a100-lpt-split4 -json -o qwen.json
//	go run ./examples/llama -list
//
// The library is package [github.com/megaproof/megaproof/examples/llama/llamagen].
package main
