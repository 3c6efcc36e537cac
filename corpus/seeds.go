package corpus

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/megaproof/megaproof/examples/llama/llamagen"
	"github.com/megaproof/megaproof/schedule"
)

// A Seed is a recipe for one safe-by-construction program the corpus
// mutates: a generator name and its parameters, written
// "gen:key=value,key=value". Seeds are regenerated from their recipe, never
// stored as program files (except the few hand-written JSON seeds under
// testdata/seeds).
//
// Generators:
//
//	llama:...         llamagen.Generate with a custom small model (keys below)
//	llama-named:NAME  a configuration of llamagen.Configs, optionally with workers=N
//	llama-default:    llamagen.Default
//	proto:kind=...    a hand-written protocol: ring, barrier, handoff, mutex,
//	                  groups (two barrier groups), sema-* (semaphore pipelines)
//	progen:size=...   a program drawn from internal/progen with a fixed seed,
//	                  stored in testdata/progen.tsv
//	json:FILE         a hand-written program in testdata/seeds
//	file:PATH         a program in a JSON file on disk (a downstream seed)
//	program:NAME      a program given to [RegisterProgram] in this process
type Seed struct {
	// ID is short and unique, e.g. "llama-017".
	ID string
	// Recipe regenerates the program.
	Recipe string
	// Big marks seeds of thousands of tasks, whose sites are sampled
	// sparsely.
	Big bool
}

// Program regenerates the seed's program from its recipe.
func (s Seed) Program() (*schedule.Program, error) {
	return Build(s.Recipe)
}

// Build builds the program a seed recipe describes.
func Build(recipe string) (*schedule.Program, error) {
	gen, args, _ := strings.Cut(recipe, ":")
	switch gen {
	case "file":
		data, err := os.ReadFile(args)
		if err != nil {
			return nil, fmt.Errorf("corpus: recipe %q: %w", recipe, err)
		}
		p, err := schedule.Unmarshal(data)
		if err != nil {
			return nil, fmt.Errorf("corpus: recipe %q: %w", recipe, err)
		}
		return p, nil
	case "program":
		v, ok := registered.Load(args)
		if !ok {
			return nil, fmt.Errorf("corpus: recipe %q: no program registered under %q", recipe, args)
		}
		return v.(*schedule.Program).Clone(), nil
	}
	rest := args
	if gen == "llama-named" || gen == "json" {
		rest = strings.TrimPrefix(args, firstField(args)) // a positional first field
	}
	kv, err := parseArgs(rest)
	if err != nil {
		return nil, fmt.Errorf("corpus: recipe %q: %w", recipe, err)
	}
	var p *schedule.Program
	switch gen {
	case "llama":
		p, err = buildLlama(kv)
	case "llama-named":
		p, err = buildNamed(firstField(args), kv)
	case "llama-default":
		p, err = llamagen.Default()
	case "proto":
		p, err = buildProto(kv)
	case "progen":
		p, err = buildProgen(kv)
	case "json":
		p, err = buildJSON(firstField(args))
	default:
		err = fmt.Errorf("unknown generator %q", gen)
	}
	if err != nil {
		return nil, fmt.Errorf("corpus: recipe %q: %w", recipe, err)
	}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("corpus: recipe %q built an invalid program: %w", recipe, err)
	}
	return p, nil
}

var registered sync.Map // name → *schedule.Program (a private clone)

// RegisterProgram makes the recipe "program:NAME" build a copy of p in
// this process, so that a downstream corpus can use programs it builds
// itself as seeds ([Generate], [Check]). p must be valid; it is copied, and
// a name can be registered once.
func RegisterProgram(name string, p *schedule.Program) (recipe string, err error) {
	if name == "" || strings.ContainsAny(name, "\t\n") {
		return "", fmt.Errorf("corpus: program name %q is empty or holds a tab or newline", name)
	}
	if err := p.Validate(); err != nil {
		return "", fmt.Errorf("corpus: program %q: %w", name, err)
	}
	if _, loaded := registered.LoadOrStore(name, p.Clone()); loaded {
		return "", fmt.Errorf("corpus: a program is already registered under %q", name)
	}
	return "program:" + name, nil
}

// firstField returns args up to its first comma.
func firstField(args string) string {
	f, _, _ := strings.Cut(args, ",")
	return f
}

type params map[string]string

func parseArgs(s string) (params, error) {
	kv := params{}
	for f := range strings.SplitSeq(s, ",") {
		if f == "" {
			continue
		}
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			return nil, fmt.Errorf("parameter %q is not key=value", f)
		}
		kv[k] = v
	}
	return kv, nil
}

func (kv params) int(key string, def int) (int, error) {
	v, ok := kv[key]
	if !ok {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, fmt.Errorf("parameter %s: %w", key, err)
	}
	return n, nil
}

// ints reads several integer parameters at once; the first error wins.
func (kv params) ints(keys []string, defs []int) ([]int, error) {
	out := make([]int, len(keys))
	for i, k := range keys {
		n, err := kv.int(k, defs[i])
		if err != nil {
			return nil, err
		}
		out[i] = n
	}
	return out, nil
}

var llamaKeys = []string{"layers", "hidden", "inter", "heads", "kv", "hd", "vocab", "sms", "persm", "tile", "batch", "pos", "splits", "workers", "coop", "epoch", "pages"}

func buildLlama(kv params) (*schedule.Program, error) {
	v, err := kv.ints(llamaKeys, []int{1, 64, 128, 2, 1, 32, 64, 2, 1, 64, 1, 3, 1, 0, 0, 0, 0})
	if err != nil {
		return nil, err
	}
	name := kv["strategy"]
	if name == "" {
		name = "round-robin"
	}
	st, err := llamagen.ParseStrategy(name)
	if err != nil {
		return nil, err
	}
	cfg := llamagen.Config{
		Model:  llamagen.Model{Name: "toy", Layers: v[0], Hidden: v[1], Intermediate: v[2], Heads: v[3], KVHeads: v[4], HeadDim: v[5], Vocab: v[6]},
		Target: llamagen.Target{Name: "toy", SMs: v[7], PerSM: v[8]},
		Tile:   v[9], Batch: v[10], Pos: v[11], Splits: v[12], Workers: v[13],
		Cooperative: v[14] != 0, Epoch: v[15] != 0, Pages: v[16], Strategy: st,
	}
	return llamagen.Generate(cfg)
}

func buildNamed(name string, kv params) (*schedule.Program, error) {
	for _, n := range llamagen.Configs() {
		if n.Name != name {
			continue
		}
		cfg := n.Config
		w, err := kv.int("workers", 0)
		if err != nil {
			return nil, err
		}
		if w > 0 {
			cfg.Workers = w
		}
		return llamagen.Generate(cfg)
	}
	return nil, fmt.Errorf("no llamagen configuration named %q", name)
}

func buildProgen(kv params) (*schedule.Program, error) {
	seed, err := kv.int("seed", 0)
	if err != nil {
		return nil, err
	}
	size := kv["size"]
	if size != "small" && size != "medium" {
		return nil, fmt.Errorf("progen size %q (want small or medium)", size)
	}
	doc, ok := progenPrograms()[progenKey{size, seed}]
	if !ok {
		return nil, fmt.Errorf("progen:size=%s,seed=%d is not stored in %s", size, seed, ProgenFile)
	}
	return schedule.Unmarshal(doc)
}

// seedDir is where hand-written JSON seeds live, relative to the package.
const seedDir = "testdata/seeds"

func buildJSON(name string) (*schedule.Program, error) {
	if name != filepath.Base(name) {
		return nil, fmt.Errorf("json seed %q must be a file name in %s", name, seedDir)
	}
	data, err := jsonSeed(name)
	if err != nil {
		return nil, err
	}
	return schedule.Unmarshal(data)
}

// jsonSeed reads a hand-written seed, from the embedded copy.
func jsonSeed(name string) ([]byte, error) {
	data, err := seedFS.ReadFile(seedDir + "/" + name)
	if err != nil {
		return nil, fmt.Errorf("json seed: %w", err)
	}
	return data, nil
}

// Seeds returns every seed of the corpus in a fixed order.
func Seeds() []Seed { return slices.Clone(seeds()) }

// progenSmall and progenMedium are the internal/progen draws (Small and
// Medium options) the corpus uses as seeds: the first draws that every
// oracle which applies found safe (`go generate ./corpus` reports a seed
// that is not, and drops its mutants).
var (
	progenSmall = []int{2, 4, 6, 7, 8, 12, 13, 14, 16, 17, 18, 20, 21, 22, 24, 25, 27, 29, 33, 36, 37, 38, 39, 43, 44, 48, 49, 51, 54, 55,
		56, 58, 59, 60, 61, 62, 63, 64, 66, 67, 68, 70, 72, 76, 77, 78, 80, 81, 83, 84, 89, 90, 93, 95, 98, 99, 101, 104, 108, 110,
		115, 116, 120, 121, 122, 126, 128, 133, 138, 139, 140, 141, 142, 148, 149, 150, 152, 153, 155, 156, 158, 159, 160, 161, 162, 163, 164, 165, 166, 169,
		170, 174, 176, 178, 179, 181, 185, 186, 188, 189, 192, 195, 197, 200, 203, 206, 212, 215, 217, 219, 220, 221, 222, 223, 224, 225, 227, 228, 230, 231}
	progenMedium = []int{7, 12, 14, 24, 27, 35, 37, 38, 48, 58, 62, 68}
)

var seeds = sync.OnceValue(func() []Seed {
	var out []Seed
	add := func(prefix, recipe string, big bool) {
		out = append(out, Seed{ID: fmt.Sprintf("%s-%03d", prefix, countPrefix(out, prefix)), Recipe: recipe, Big: big})
	}
	for _, r := range llamaRecipes() {
		add("llama", r, false)
	}
	for _, r := range protoRecipes() {
		add("proto", r, false)
	}
	for _, i := range progenSmall {
		add("progen", fmt.Sprintf("progen:size=small,seed=%d", i), false)
	}
	for _, i := range progenMedium {
		add("progenm", fmt.Sprintf("progen:size=medium,seed=%d", i), false)
	}
	for _, name := range jsonSeedNames() {
		add("json", "json:"+name, false)
	}
	for _, r := range largeRecipes() {
		add("large", r, false)
	}
	add("big", "llama-default:", true)
	add("big", "llama-named:qwen05b-l40s-barrier-pages1-pos0", true)
	add("big", "llama-named:smollm2-h100-rr", true)
	add("big", "llama-named:llama32-1b-h200-epoch-pages2", true)
	add("huge", "llama-named:llama2-13b-h100-rr-t32", true)
	// After huge-000, so that the seeds before them keep their places (and
	// so their sampled sites).
	add("big", "llama-named:smollm2-l4-epoch-split3-t96", true)
	add("big", "llama-named:qwen05b-a100-lpt-split4", true)
	// Last, for the same reason.
	for _, r := range groupRecipes() {
		add("proto", r, false)
	}
	for _, r := range largeGroupRecipes() {
		add("large", r, false)
	}
	return out
})

// largeRecipes are programs of 1,000 to 1,400 tasks on 2 to 8 workers:
// Llama-family lowerings with a dozen layers (every strategy but dynamic,
// split-KV, epoch counters, page reuse, batching, non-cooperative launches
// that fit) and long protocol chains (handoffs with the fence idiom and
// with release/acquire, barrier phases). Few workers keep the
// definitional checker's search over poison orders small, so that it
// decides their memory-order and scope mutants.
func largeRecipes() []string {
	const shape = "hidden=256,inter=512,heads=4,kv=2,hd=64,vocab=256"
	return []string{
		"llama:layers=12," + shape + ",sms=4,persm=1,strategy=round-robin,tile=32,pos=7,splits=1,coop=1",
		"llama:layers=12," + shape + ",sms=8,persm=1,strategy=balanced,tile=32,pos=3,splits=2,coop=1,epoch=1",
		"llama:layers=14,hidden=256,inter=512,heads=4,kv=1,hd=64,vocab=256,sms=6,persm=1,strategy=round-robin,tile=32,pos=15,splits=1,coop=0,pages=2",
		"llama:layers=12," + shape + ",sms=4,persm=1,strategy=balanced,tile=32,pos=7,splits=1,coop=1,batch=2",
		"llama:layers=12," + shape + ",sms=5,persm=1,strategy=barrier,tile=32,pos=7,splits=1,coop=1",
		"llama:layers=16,hidden=128,inter=512,heads=4,kv=2,hd=32,vocab=256,sms=3,persm=1,strategy=round-robin,tile=32,pos=7,splits=2,coop=1,pages=1",
		"llama:layers=12," + shape + ",sms=3,persm=1,strategy=barrier,tile=32,pos=3,splits=2,coop=1",
		"proto:kind=handoff,workers=2,length=1000,fenced=1",
		"proto:kind=handoff,workers=4,length=1100,fenced=1",
		"proto:kind=handoff,workers=3,length=1000,fenced=0",
		"proto:kind=barrier,workers=8,phases=128",
	}
}

func countPrefix(s []Seed, prefix string) int {
	n := 0
	for _, x := range s {
		if strings.HasPrefix(x.ID, prefix+"-") {
			n++
		}
	}
	return n
}

func jsonSeedNames() []string {
	ents, err := seedFS.ReadDir(seedDir)
	if err != nil {
		return nil
	}
	var names []string
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".json") {
			names = append(names, e.Name())
		}
	}
	slices.Sort(names)
	return names
}

// llamaRecipes enumerates small custom Llama-family lowerings: a fixed
// table of shapes crossed with strategies, tile sizes, split-KV, epoch
// counters, pages, worker counts and launch kinds, thinned by a
// deterministic rule so that every knob appears with every strategy.
func llamaRecipes() []string {
	shapes := []string{
		"layers=1,hidden=64,inter=128,heads=2,kv=1,hd=32,vocab=64",
		"layers=1,hidden=64,inter=64,heads=1,kv=1,hd=64,vocab=64",
		"layers=2,hidden=64,inter=128,heads=2,kv=2,hd=32,vocab=64",
		"layers=1,hidden=128,inter=256,heads=4,kv=2,hd=32,vocab=128",
		"layers=2,hidden=128,inter=256,heads=4,kv=1,hd=32,vocab=64",
		"layers=1,hidden=256,inter=256,heads=4,kv=2,hd=64,vocab=128",
		"layers=3,hidden=64,inter=64,heads=2,kv=1,hd=32,vocab=64",
	}
	strategies := []string{"round-robin", "balanced", "dynamic", "barrier"}
	var out []string
	for si := range shapes {
		for _, st := range strategies {
			for variant := range 7 {
				shape := shapes[si]
				tile := []int{64, 32, 128, 64, 96, 32, 64}[(variant+si)%7]
				workers := 1 + (variant+si)%4
				splits := 1 + (variant/2+si)%3
				pos := []int{0, 3, 7, 15}[(variant+2*si)%4]
				epoch := (variant+si)%3 == 1
				pages := (variant + si) % 3
				coop, sms := 1, workers
				switch (variant + 3*si) % 5 {
				case 0:
					coop = 0 // non-cooperative, fits
				case 1:
					// Non-cooperative launches beyond capacity are
					// exceed-capacity's outputs, not seeds: this variant
					// fits, on one worker per SM.
					if st != "barrier" {
						coop = 0
					}
				}
				if st == "dynamic" {
					// One thread per task: keep dynamic lowerings within
					// the explorer's reach (a few dozen tasks).
					shape, tile, splits = shapes[si%2], max(tile, 64), min(splits, 2)
				}
				r := fmt.Sprintf("llama:%s,sms=%d,persm=1,strategy=%s,tile=%d,pos=%d,splits=%d,coop=%d", shape, sms, st, tile, pos, splits, coop)
				if pages > 0 && strings.HasPrefix(shape, "layers=1,") {
					pages = 0
				}
				if epoch {
					r += ",epoch=1"
				}
				if pages > 0 {
					r += fmt.Sprintf(",pages=%d", pages)
				}
				if variant == 6 && si%2 == 0 && st != "dynamic" {
					r += ",batch=2"
				}
				if !slices.Contains(out, r) {
					out = append(out, r)
				}
			}
		}
	}
	return out
}
