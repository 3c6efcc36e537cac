package main

import (
	_ "embed"
	"io"
)

// resultSchema is the JSON Schema of one verify --json object.
//
//go:embed schema/result.schema.json
var resultSchema []byte

// programSchema is the JSON Schema of the megaproof/v1 program format.
//
//go:embed schema/program.schema.json
var programSchema []byte

// amkSchema is the JSON Schema of the AutoMegaKernel IR JSON verify reads.
//
//go:embed schema/amk.schema.json
var amkSchema []byte

// schemas are the schemas megaproof schema prints, the default first.
var schemas = []struct {
	name string
	doc  []byte
}{{"result", resultSchema}, {"program", programSchema}, {"amk", amkSchema}}

func runSchema(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("schema", "[result|program|amk]", `Prints a JSON Schema (draft 2020-12):
  result   one object of verify --json and verify --stream output (the default)
  program  the megaproof/v1 program format
  amk      the AutoMegaKernel IR JSON that verify reads (what megaproof requires of it)`, stderr)
	args, status, done := parseFlags(fs, args, 0, 1)
	if done {
		return status
	}
	which := "result"
	if len(args) == 1 {
		which = args[0]
	}
	for _, s := range schemas {
		if s.name == which {
			stdout.Write(s.doc)
			return exitSafe
		}
	}
	fs.Usage()
	return exitInvalid
}
