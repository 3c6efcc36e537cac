package main

import (
	"bytes"
	"fmt"
	"os"
	"strings"

	"github.com/megaproof/megaproof/corpus"
	"github.com/megaproof/megaproof/mutate"
)

const (
	beginMark = "<!-- counts:begin (go generate ./corpus) -->\n"
	endMark   = "<!-- counts:end -->\n"
)

// countsTable renders per-class and per-oracle counts as Markdown.
func countsTable(entries []corpus.Entry, rep *corpus.GenerateReport) string {
	var s corpus.Summary
	large := map[string]int{}
	for _, e := range entries {
		s.Add(corpus.Outcome{Entry: e, Kind: corpus.OutcomeOK})
		if e.Operator != corpus.SeedOperator && e.Verdict == corpus.VerdictUnsafe && e.Size >= corpus.LargeTasks {
			large[e.Operator]++
		}
	}
	var b strings.Builder
	b.WriteString("| class (operator) | source | faulty | of them ≥ 1,000 tasks | safe | malformed |\n|---|---|--:|--:|--:|--:|\n")
	classes := 0
	for _, op := range mutate.Operators() {
		c := s.Classes[op.Name]
		if c.Faulty > 0 {
			classes++
		}
		fmt.Fprintf(&b, "| `%s` | %s | %d | %d | %d | %d |\n", op.Name, op.Source, c.Faulty, large[op.Name], c.Safe, c.Malformed)
	}
	fmt.Fprintf(&b, "| **total** | | **%d** | **%d** | **%d** | **%d** |\n\n", s.Faulty, s.LargeFaulty, s.Safe, s.Malformed)
	oracles := []string{corpus.OracleExplore, corpus.OracleDefcheck, corpus.OracleBrute}
	var by []string
	for _, o := range oracles {
		by = append(by, fmt.Sprintf("%d by %s", s.LabelledBy[o], o))
	}
	fmt.Fprintf(&b, "%d entries; %d classes with faulty entries; %d seeds (%d unsafe, %d that no oracle decides); labels (an entry two oracles agreed on counts for both): %s; %d oracle disagreements; %d sampled recipes left out because no oracle decided them within its budget, %d byte-level duplicates left out.\n",
		len(entries), classes, s.Seeds, s.UnsafeSeeds, s.UndecidedSeeds, strings.Join(by, ", "), s.OracleDisagreements, len(rep.Undecided), rep.Duplicates)
	return b.String()
}

// rewriteReadme replaces the counts section of the README.
func rewriteReadme(path, table string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	i := bytes.Index(data, []byte(beginMark))
	j := bytes.Index(data, []byte(endMark))
	if i < 0 || j < i {
		return fmt.Errorf("%s: no counts section (%q ... %q)", path, strings.TrimSpace(beginMark), strings.TrimSpace(endMark))
	}
	var b bytes.Buffer
	b.Write(data[:i+len(beginMark)])
	b.WriteString(table)
	b.Write(data[j:])
	return os.WriteFile(path, b.Bytes(), 0o644)
}
