package main

import (
	_ "embed"
	"fmt"
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

func runSchema(args []string, stdout, stderr io.Writer) int {
	which := "result"
	switch len(args) {
	case 0:
	case 1:
		which = args[0]
	default:
		which = ""
	}
	switch which {
	case "result":
		stdout.Write(resultSchema)
	case "program":
		stdout.Write(programSchema)
	default:
		fmt.Fprintln(stderr, "usage: megaproof schema [result|program]")
		return exitInvalid
	}
	return exitSafe
}
