package main

import (
	"fmt"
	"io"
	"os"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// Exit statuses (see the package documentation).
const (
	exitSafe         = 0
	exitUnsafe       = 1
	exitInvalid      = 2 // invalid input or bad usage
	exitInconclusive = 3
)

// command is one subcommand. Adding a subcommand is adding a row to
// commands.
type command struct {
	name    string
	args    string // argument synopsis for usage
	summary string
	run     func(args []string, stdout, stderr io.Writer) int
}

var commands []command

func init() {
	commands = []command{
		{"verify", "[--json] [FILE...]", "decide whether schedules can deadlock or race (no FILE: the embedded default)", runVerify},
		{"explain", "[CODE]", "print the documentation of a finding code (all codes without CODE)", runExplain},
		{"dot", "FILE", "print the task graph of a schedule in Graphviz form", runDot},
		{"schema", "[result|program]", "print the JSON Schema of verify --json output or of the program format", runSchema},
		{"corpus", "[--json]", "run the regression corpus: verify against oracle-labelled mutants", runCorpus},
	}
}

// run is the whole command: it parses args (without the program name),
// writes to stdout and stderr, and returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return exitInvalid
	}
	switch args[0] {
	case "help", "-h", "-help", "--help":
		usage(stdout)
		return exitSafe
	}
	for _, c := range commands {
		if c.name == args[0] {
			return c.run(args[1:], stdout, stderr)
		}
	}
	fmt.Fprintf(stderr, "megaproof: unknown command %q\n\n", args[0])
	usage(stderr)
	return exitInvalid
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "megaproof proves megakernel schedules free of deadlocks and data races.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Usage:")
	for _, c := range commands {
		fmt.Fprintf(w, "  megaproof %-8s %-20s %s\n", c.name, c.args, c.summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Exit status: 0 safe, 1 unsafe, 2 invalid input or usage, 3 inconclusive.")
}
