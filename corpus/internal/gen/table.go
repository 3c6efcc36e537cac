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
func countsTable(entries []corpus.Entry, unlabeled int) string {
	type row struct{ faulty, safe, malformed int }
	per := map[string]*row{}
	oracle := map[string]int{}
	var total row
	for _, e := range entries {
		r := per[e.Operator]
		if r == nil {
			r = &row{}
			per[e.Operator] = r
		}
		switch e.Verdict {
		case corpus.VerdictUnsafe:
			r.faulty++
			total.faulty++
		case corpus.VerdictSafe:
			r.safe++
			total.safe++
		default:
			r.malformed++
			total.malformed++
		}
		if e.Oracle != "" {
			oracle[e.Oracle]++
		}
	}
	var b strings.Builder
	b.WriteString("| class (operator) | source | faulty | safe | malformed |\n|---|---|--:|--:|--:|\n")
	classes := 0
	for _, op := range mutate.Operators() {
		r := per[op.Name]
		if r == nil {
			r = &row{}
		}
		if r.faulty > 0 {
			classes++
		}
		fmt.Fprintf(&b, "| `%s` | %s | %d | %d | %d |\n", op.Name, op.Source, r.faulty, r.safe, r.malformed)
	}
	fmt.Fprintf(&b, "| **total** | | **%d** | **%d** | **%d** |\n\n", total.faulty, total.safe, total.malformed)
	fmt.Fprintf(&b, "%d entries; %d classes with faulty entries; labels: %d by verify/explore, %d by internal/defcheck; %d sampled recipes left out because no oracle could decide them.\n",
		len(entries), classes, oracle[corpus.OracleExplore], oracle[corpus.OracleDefcheck], unlabeled)
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
