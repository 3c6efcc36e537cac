package corpus

import (
	_ "embed"
	"strconv"
	"strings"
	"sync"
)

// ProgenFile holds the programs of the progen:size=...,seed=N seeds, drawn
// from internal/progen once and stored, so that package corpus (and the
// megaproof command that runs it) does not link the random program
// generator. Each line is size, seed and the program's canonical JSON
// (compacted),
// separated by tabs. The stored programs are the seeds: internal/progen
// may change what it draws without moving the corpus. `go test ./corpus
// -run TestProgenSeeds -update` rewrites the file from internal/progen.
const ProgenFile = "testdata/progen.tsv"

//go:embed testdata/progen.tsv
var progenTSV string

type progenKey struct {
	size string
	seed int
}

// progenPrograms indexes the stored programs by size and seed. A malformed
// line is skipped; its seed then fails to build, naming the file.
var progenPrograms = sync.OnceValue(func() map[progenKey][]byte {
	m := map[progenKey][]byte{}
	for line := range strings.SplitSeq(progenTSV, "\n") {
		f := strings.SplitN(line, "\t", 3)
		if len(f) != 3 {
			continue
		}
		seed, err := strconv.Atoi(f[1])
		if err != nil {
			continue
		}
		m[progenKey{f[0], seed}] = []byte(f[2])
	}
	return m
})
