package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// Exit statuses (see the package documentation).
const (
	exitSafe         = 0
	exitUnsafe       = 1
	exitInvalid      = 2 // invalid input or bad usage
	exitInconclusive = 3
	exitInternal     = 4 // megaproof failed on some input: a bug to report
)

// exitStatusDoc is the exit status line of every usage text.
const exitStatusDoc = "Exit status: 0 safe, 1 unsafe, 2 invalid input or usage, 3 inconclusive, 4 internal error."

// command is one subcommand. Adding a subcommand is adding a row to
// commands.
type command struct {
	name    string
	args    string // argument synopsis for usage
	summary string
	run     func(args []string, stdin io.Reader, stdout, stderr io.Writer) int
}

var commands []command

func init() {
	commands = []command{
		{"verify", "[flags] [FILE...]", "decide whether schedules can deadlock or race (no FILE: the embedded default)", runVerify},
		{"replay", "[flags] FILE", "replay a finding's witness step by step with the state, and confirm it", runReplay},
		{"explain", "[CODE]", "print the documentation of a finding code (all codes without CODE)", runExplain},
		{"report", "[-o FILE] [FILE]", "write an HTML report: verdict, findings, fixes, witness swimlane", runReport},
		{"dot", "[flags] [FILE]", "print the task graph of a schedule in Graphviz form, findings drawn", runDot},
		{"schema", "[result|program|amk]", "print a JSON Schema: verify --json output, the program format, AutoMegaKernel IR", runSchema},
		{"corpus", "[flags]", "run the regression corpus: verify against oracle-labelled mutants", runCorpus},
		{"version", "", "print the version megaproof was built from", runVersion},
	}
}

// run is the whole command: it parses args (without the program name),
// reads stdin where a command reads standard input, writes to stdout and
// stderr, and returns the exit status.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return exitInvalid
	}
	switch args[0] {
	case "-h", "-help", "--help":
		usage(stdout)
		return exitSafe
	case "help":
		if len(args) == 2 {
			// megaproof help CMD is megaproof CMD -h.
			for _, c := range commands {
				if c.name == args[1] {
					return c.run([]string{"-h"}, stdin, stdout, stdout)
				}
			}
		}
		usage(stdout)
		return exitSafe
	case "-version", "--version":
		return runVersion(args[1:], stdin, stdout, stderr)
	}
	for _, c := range commands {
		if c.name == args[0] {
			return c.run(args[1:], stdin, stdout, stderr)
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
		fmt.Fprintf(w, "  megaproof %-8s %-22s %s\n", c.name, c.args, c.summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "megaproof COMMAND -h describes a command and all its flags; megaproof --version prints the version.")
	fmt.Fprintln(w, exitStatusDoc)
}

// newFlags returns a flag set for a command whose -h prints the synopsis,
// the description and every flag.
func newFlags(name, synopsis, description string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintf(w, "usage: megaproof %s %s\n\n%s\n", name, synopsis, description)
		var lines []string
		fs.VisitAll(func(f *flag.Flag) {
			dash := "--"
			if len(f.Name) == 1 {
				dash = "-"
			}
			arg, text := flag.UnquoteUsage(f)
			head := dash + f.Name
			if arg != "" {
				head += " " + arg
			}
			if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" {
				text += " (default " + f.DefValue + ")"
			}
			lines = append(lines, fmt.Sprintf("  %-22s %s", head, text))
		})
		if len(lines) > 0 {
			fmt.Fprintf(w, "\nFlags:\n%s\n", strings.Join(lines, "\n"))
		}
	}
	return fs
}

// parseFlags parses a command's flags and checks that min to max
// positional arguments follow (max < 0: any number); it prints usage on a
// mismatch. done reports that the caller should return status at once.
func parseFlags(fs *flag.FlagSet, args []string, min, max int) (rest []string, status int, done bool) {
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return nil, exitSafe, true
		}
		return nil, exitInvalid, true
	}
	if n := fs.NArg(); n < min || (max >= 0 && n > max) {
		fs.Usage()
		return nil, exitInvalid, true
	}
	return fs.Args(), exitSafe, false
}

func runVersion(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("version", "", "Prints the module version megaproof was built from (a tag when installed with go install ...@version, (devel) in a checkout), the VCS revision when the build recorded one, and the Go version.", stderr)
	if _, status, done := parseFlags(fs, args, 0, 0); done {
		return status
	}
	fmt.Fprintln(stdout, versionString())
	return exitSafe
}

// versionString describes the build from its embedded build information.
func versionString() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "megaproof (no build information)"
	}
	v := "megaproof " + bi.Main.Version
	if v == "megaproof " {
		v += "(devel)"
	}
	var rev, when, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			when = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				modified = ", modified"
			}
		}
	}
	if rev != "" {
		v += fmt.Sprintf(" (%s %s%s)", rev, when, modified)
	}
	return v + " " + bi.GoVersion
}
