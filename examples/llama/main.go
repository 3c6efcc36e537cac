package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/megaproof/megaproof/examples/llama/llamagen"
	"github.com/megaproof/megaproof/schedule"
	"github.com/megaproof/megaproof/verify"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is the command; it returns the exit status: 0 safe, 1 unsafe, 2
// usage or invalid input, 3 inconclusive (as megaproof verify does).
func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("llama", flag.ContinueOnError)
	fs.SetOutput(stderr)
	def := llamagen.DefaultConfig()
	var (
		model    = fs.String("model", def.Model.Name, "model: "+modelNames())
		target   = fs.String("target", def.Target.Name, "GPU: "+targetNames())
		strategy = fs.String("strategy", def.Strategy.String(), "round-robin, balanced, dynamic or barrier")
		config   = fs.String("config", "", "a named configuration from -list (overrides the other knobs)")
		tile     = fs.Int("tile", def.Tile, "output columns per GEMV tile")
		batch    = fs.Int("batch", 1, "sequences decoded together")
		pos      = fs.Int("pos", def.Pos, "decode position")
		splits   = fs.Int("splits", 1, "split-KV chunks per head")
		workers  = fs.Int("workers", 0, "workers launched (default SMs × blocks per SM)")
		epoch    = fs.Bool("epoch", false, "share counters across layers with layer-scaled thresholds")
		pages    = fs.Int("pages", 0, "page slots for scratch reuse with credit counters (0: no reuse)")
		rows     = fs.Bool("rows", false, "attention tasks per sequence at batch > 1 (llamagen.Config.RowAttention)")
		asJSON   = fs.Bool("json", false, "write the program as JSON instead of verifying it")
		out      = fs.String("o", "", "write the JSON to `FILE` instead of standard output")
		list     = fs.Bool("list", false, "list the named configurations")
		noVerify = fs.Bool("noverify", false, "generate only")
	)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "llama: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	if *list {
		for _, n := range llamagen.Configs() {
			fmt.Fprintf(stdout, "%-40s %s\n", n.Name, n.Reason)
		}
		return 0
	}
	cfg, err := buildConfig(*config, *model, *target, *strategy)
	if err != nil {
		fmt.Fprintln(stderr, "llama:", err)
		return 2
	}
	if *config == "" {
		cfg.Tile, cfg.Batch, cfg.Pos, cfg.Splits, cfg.Workers, cfg.Epoch, cfg.Pages = *tile, *batch, *pos, *splits, *workers, *epoch, *pages
		cfg.RowAttention = *rows
	}

	t0 := time.Now()
	p, err := llamagen.Generate(cfg)
	if err != nil {
		fmt.Fprintln(stderr, "llama:", err)
		return 2
	}
	genTime := time.Since(t0)

	if *asJSON || *out != "" {
		w := stdout
		if *out != "" {
			f, err := os.Create(*out)
			if err != nil {
				fmt.Fprintln(stderr, "llama:", err)
				return 2
			}
			defer f.Close()
			w = f
		}
		if err := schedule.Encode(w, p); err != nil {
			fmt.Fprintln(stderr, "llama:", err)
			return 2
		}
		if *out == "" {
			return 0
		}
	}

	fmt.Fprintf(stdout, "model     %s\n", cfg.Model.Name)
	fmt.Fprintf(stdout, "target    %s (%d SMs × %d blocks)\n", cfg.Target.Name, cfg.Target.SMs, cfg.Target.PerSM)
	fmt.Fprintf(stdout, "strategy  %s\n", cfg.Strategy)
	fmt.Fprintf(stdout, "program   %s\n", p.Name)
	fmt.Fprintf(stdout, "tasks     %d\n", len(p.Tasks))
	fmt.Fprintf(stdout, "workers   %d\n", p.Launch.Workers)
	fmt.Fprintf(stdout, "generate  %v\n", genTime.Round(time.Millisecond))
	if *noVerify {
		return 0
	}
	t0 = time.Now()
	r, err := verify.Run(context.Background(), p, verify.Config{})
	if err != nil {
		fmt.Fprintln(stderr, "llama: verify:", err)
		return 2
	}
	fmt.Fprintf(stdout, "verdict   %s\n", r.Verdict)
	fmt.Fprintf(stdout, "verify    %v\n", time.Since(t0).Round(time.Millisecond))
	for i, f := range r.Findings {
		if i == 5 {
			fmt.Fprintf(stdout, "  ... and %d more findings\n", len(r.Findings)-i)
			break
		}
		fmt.Fprintf(stdout, "  %s: %s (witness of %d events)\n", f.Code, f.Message, len(f.Witness))
	}
	switch r.Verdict {
	case verify.Safe:
		return 0
	case verify.Unsafe:
		return 1
	case verify.Inconclusive:
		return 3
	}
	return 2
}

func buildConfig(named, model, target, strategy string) (llamagen.Config, error) {
	if named != "" {
		for _, n := range llamagen.Configs() {
			if n.Name == named {
				return n.Config, nil
			}
		}
		return llamagen.Config{}, fmt.Errorf("unknown configuration %q (see -list)", named)
	}
	m, err1 := llamagen.LookupModel(model)
	t, err2 := llamagen.LookupTarget(target)
	s, err3 := llamagen.ParseStrategy(strategy)
	if err := errors.Join(err1, err2, err3); err != nil {
		return llamagen.Config{}, err
	}
	return llamagen.Config{Model: m, Target: t, Strategy: s}, nil
}

func modelNames() string {
	s := ""
	for i, m := range llamagen.Models() {
		if i > 0 {
			s += ", "
		}
		s += m.Name
	}
	return s
}

func targetNames() string {
	s := ""
	for i, t := range llamagen.Targets() {
		if i > 0 {
			s += ", "
		}
		s += t.Name
	}
	return s
}
