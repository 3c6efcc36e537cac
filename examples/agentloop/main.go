package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"

	"github.com/megaproof/megaproof/examples/llama/llamagen"
	"github.com/megaproof/megaproof/schedule"
	"github.com/megaproof/megaproof/verify"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// options configure the loop.
type options struct {
	seed      uint64
	rounds    int
	model     string
	layers    int     // truncate the model to this many layers (0: all)
	brokenPct float64 // fraction of proposals that are deliberately broken
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("agentloop", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o options
	fs.Uint64Var(&o.seed, "seed", 1, "random seed")
	fs.IntVar(&o.rounds, "n", 12, "proposals")
	fs.StringVar(&o.model, "model", "smollm2-135m", "model")
	fs.IntVar(&o.layers, "layers", 4, "layers to keep (0: all)")
	fs.Float64Var(&o.brokenPct, "broken", 0.4, "fraction of deliberately broken proposals")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if err := loop(context.Background(), o, stdout); err != nil {
		fmt.Fprintln(stderr, "agentloop:", err)
		return 1
	}
	return 0
}

// proposal is one candidate schedule.
type proposal struct {
	cfg   llamagen.Config
	fault llamagen.Fault
	// broken says the proposal applies fault.
	broken bool
}

func (p proposal) String() string {
	s := p.cfg.Name() + fmt.Sprintf("/w%d", p.cfg.Workers)
	if p.broken {
		s += " +" + p.fault.String()
	}
	return s
}

// loop runs the search and prints one line per proposal.
func loop(ctx context.Context, o options, w io.Writer) error {
	m, err := llamagen.LookupModel(o.model)
	if err != nil {
		return err
	}
	if o.layers > 0 && o.layers < m.Layers {
		m.Layers = o.layers
	}
	rng := rand.New(rand.NewPCG(o.seed, 0x6d65676170726f6f))
	targets := llamagen.Targets()
	tilesFor := []int{64, 96, 128, 192, 256}
	faults := []llamagen.Fault{llamagen.DropWait, llamagen.LowerThreshold, llamagen.ShiftTile, llamagen.ExtraWorker}

	var best *proposal
	bestScore := 0.0
	accepted, rejected := 0, 0
	for round := 1; round <= o.rounds; round++ {
		pr := proposal{cfg: llamagen.Config{
			Model:    m,
			Target:   targets[rng.IntN(len(targets))],
			Strategy: llamagen.Strategy(rng.IntN(4)),
			Tile:     tilesFor[rng.IntN(len(tilesFor))],
			Splits:   1 + rng.IntN(4),
			Pos:      rng.IntN(4096),
			MaxSeq:   4096,
			Epoch:    rng.IntN(2) == 0,
			Pages:    rng.IntN(3),
		}}
		pr.cfg.Workers = pr.cfg.Target.Capacity() / (1 + rng.IntN(2))
		if rng.Float64() < o.brokenPct {
			pr.broken = true
			pr.fault = faults[rng.IntN(len(faults))]
			if pr.cfg.Strategy == llamagen.Barrier && pr.fault != llamagen.ExtraWorker {
				pr.cfg.Strategy = llamagen.RoundRobin // the other faults edit counter waits
			}
		}
		p, err := llamagen.Generate(pr.cfg)
		if err == nil && pr.broken {
			p, err = llamagen.Twin(p, pr.fault)
		}
		if err != nil {
			return fmt.Errorf("round %d: %s: %w", round, pr, err)
		}
		r, err := verify.Run(ctx, p, verify.Config{})
		if err != nil {
			return err
		}
		if r.Verdict != verify.Safe {
			rejected++
			fmt.Fprintf(w, "#%d rejected %s (%d tasks): %s\n", round, pr, len(p.Tasks), r.Verdict)
			for i, f := range r.Findings {
				if i == 3 {
					fmt.Fprintf(w, "    ... %d more\n", len(r.Findings)-i)
					break
				}
				fmt.Fprintf(w, "    %s: %s [witness %d events]\n", f.Code, f.Message, len(f.Witness))
			}
			if !pr.broken {
				fmt.Fprintf(w, "    (an unbroken proposal was rejected: a generator or verifier bug)\n")
			}
			continue
		}
		accepted++
		score := estimate(p)
		fmt.Fprintf(w, "#%d accepted %s (%d tasks): est %.1f µs\n", round, pr, len(p.Tasks), score)
		if pr.broken {
			fmt.Fprintf(w, "    (a broken proposal was accepted: a verifier bug)\n")
		}
		if best == nil || score < bestScore {
			best, bestScore = &pr, score
		}
	}
	fmt.Fprintf(w, "accepted %d, rejected %d\n", accepted, rejected)
	if best != nil {
		fmt.Fprintf(w, "best %s: est %.1f µs\n", best, bestScore)
	}
	return nil
}

// estimate is a toy cost model: each task moves its footprint's bytes at
// an SM's share of HBM bandwidth; a task starts when its worker is free
// (static queues) and every earlier signaler of a counter it waits on has
// finished, plus 0.5 µs per cross-worker handoff and 1 µs per barrier
// generation, and never faster than all workers streaming together. It
// returns the estimated makespan in µs.
func estimate(p *schedule.Program) float64 {
	const perWorkerBytesPerUs = 3.3e6 / 132 // 3.3 TB/s across 132 SMs
	finish := make([]float64, len(p.Tasks))
	free := make([]float64, p.Launch.Workers)
	doneBy := make([]float64, len(p.Counters)) // latest finish of a signaler so far
	barrier := 0.0
	end := 0.0
	var total uint64
	for i, t := range p.Tasks {
		start := 0.0
		if t.Pinned() {
			start = free[t.Worker]
		}
		for _, s := range t.Before {
			switch s.Kind {
			case schedule.Wait:
				start = max(start, doneBy[s.Object]+0.5)
			case schedule.Sync:
				start = max(start, barrier) + 1
			}
		}
		var bytes uint64
		for _, a := range append(t.Reads, t.Writes...) {
			bytes += a.Length * a.RowCount()
		}
		total += bytes
		finish[i] = start + float64(bytes)/perWorkerBytesPerUs
		for _, s := range t.After {
			if s.Kind == schedule.Signal {
				doneBy[s.Object] = max(doneBy[s.Object], finish[i])
			}
		}
		if t.Pinned() {
			free[t.Worker] = finish[i]
		}
		barrier = max(barrier, finish[i])
		end = max(end, finish[i])
	}
	// Dynamic tasks have no queue: bound them by the launch's bandwidth.
	return max(end, float64(total)/perWorkerBytesPerUs/float64(p.Launch.Workers))
}
