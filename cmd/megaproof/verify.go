package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/megaproof/megaproof/examples/llama/llamagen"
	"github.com/megaproof/megaproof/schedule"
	"github.com/megaproof/megaproof/schedule/amk"
	"github.com/megaproof/megaproof/schedule/mpk"
	"github.com/megaproof/megaproof/verify"
)

// defaultFile is the name reports give the embedded default schedule.
const defaultFile = "(default)"

// stdinFile is the file argument that reads standard input.
const stdinFile = "-"

// Codes the command adds to the verifier's: a file that cannot be read,
// and an internal failure (a panic) while reading or verifying one.
const (
	codeIO       = "invalid.io"
	codeInternal = "internal"
)

// defaultMaxBytes is the default input size limit, --max-bytes.
const defaultMaxBytes = 1 << 30

// Input formats a report names.
const (
	formatMegaproof = schedule.Format
	formatAMK       = "amk"
	formatMPK       = "mpk"
)

// mpkIterations is the number of iterations an MPK task graph is unrolled
// for (verify -iterations).
var mpkIterations = mpk.DefaultIterations

// inputFormat is one input format verify reads: detect tells it from
// content, decode maps it into a program. Formats are tried in order; the
// last one, megaproof JSON, takes everything the others do not detect.
type inputFormat struct {
	name   string
	detect func(data []byte) bool
	decode func(data []byte, cfg verify.Config) (*schedule.Program, error)
}

var inputFormats = []inputFormat{
	{formatMPK, mpk.Detect, decodeMPK},
	{formatAMK, amk.Detect, func(data []byte, _ verify.Config) (*schedule.Program, error) { return amk.Unmarshal(data) }},
	{formatMegaproof, func([]byte) bool { return true }, func(data []byte, _ verify.Config) (*schedule.Program, error) { return schedule.Unmarshal(data) }},
}

// decodeMPK maps an MPK task graph. Where the verdict can depend on which
// worker ends each iteration (mpk.Options.Histories), it maps every such
// history and returns the first one verify.Run under cfg (the verdict's own
// configuration) finds unsafe, else the first it finds inconclusive, so that
// verify, replay, report and dot all see a history in which the schedule
// fails; the default history when every one is safe, and Programs' error
// when it has one (more histories than mpk decides, or an END with fewer
// num_triggers than triggers) and every program is safe.
func decodeMPK(data []byte, cfg verify.Config) (*schedule.Program, error) {
	g, err := mpk.Parse(data)
	if err != nil {
		return nil, err
	}
	ps, limit := mpk.Options{Iterations: mpkIterations}.Programs(g)
	switch {
	case len(ps) == 0:
		return nil, limit
	case len(ps) == 1 && limit == nil:
		return ps[0], nil
	}
	chosen, inconclusive := ps[0], false
	for _, p := range ps {
		res, err := verify.Run(context.Background(), p, cfg)
		if err != nil {
			return nil, err
		}
		switch {
		case res.Verdict == verify.Unsafe:
			return p, nil
		case res.Verdict == verify.Inconclusive && !inconclusive:
			chosen, inconclusive = p, true
		}
	}
	if limit != nil {
		return nil, limit // more histories than were decided, all safe
	}
	return chosen, nil
}

// decode reads a program in any input format, detected from content; cfg
// is the configuration its verdict will be decided under (an MPK graph's
// history is chosen under it).
func decode(data []byte, cfg verify.Config) (*schedule.Program, string, error) {
	for _, f := range inputFormats {
		if f.detect(data) {
			p, err := f.decode(data, cfg)
			return p, f.name, err
		}
	}
	panic("unreachable: the last input format detects everything")
}

// verifier holds the options of one verify invocation.
type verifier struct {
	cfg      verify.Config
	maxBytes int64
	json     bool
	verbose  bool
	// sarif collects the reports into one SARIF log (--format sarif);
	// data is the last document read, for its regions.
	sarif  *sarifWriter
	data   []byte
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
}

// runProgram is the verifier the command calls; tests replace it.
var runProgram = verify.Run

const verifyDoc = `Decides, for each FILE, whether the schedule can deadlock, race, read
uninitialized memory or access memory out of bounds, and prints its verdict
as soon as it is decided: safe, unsafe (findings with replayable witnesses),
invalid (the JSON path of every problem) or inconclusive (the bound that
was hit). Several files are decided in parallel, one per core, and
printed in the order given.

FILE is megaproof JSON (format "megaproof/v1"), AutoMegaKernel IR JSON or
a Mirage MPK task graph, told apart by content; - reads standard input. With no FILE, verify checks
an embedded default schedule, a Llama-3.2-1B decode step on an H200.

--json prints one JSON object per file, one per line (megaproof schema
result). --format sarif prints one SARIF 2.1.0 log for all files: a rule
per finding code, a result per finding with the region of its JSON path in
the file, the witness as thread flows and the fix as a replacement when the
finding carries a patch. --stream reads one document per line of standard input and prints
one JSON object per line for each, in order, as soon as it is decided; an
empty line is an invalid document. A program that cannot be read is an
invalid.io record, one larger than --max-bytes an invalid.limit record; an
internal failure on one file is an internal record (exit status 4) and the
other files are still verified.

` + exitStatusDoc + `
Across several files the worst status wins, in the order unsafe, internal
error, invalid, inconclusive, safe.`

func runVerify(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("verify", "[flags] [FILE...]", verifyDoc, stderr)
	v := &verifier{stdin: stdin, stdout: stdout, stderr: stderr, maxBytes: defaultMaxBytes}
	fs.BoolVar(&v.json, "json", false, "print one JSON object per file, one per line (--format json)")
	format := fs.String("format", "text", "the output `format`: text, json (as --json) or sarif (one SARIF 2.1.0 log for all files)")
	stream := fs.Bool("stream", false, "read one document per line of standard input, print one JSON object per line")
	fs.BoolVar(&v.verbose, "v", false, "say what each analysis covered: tasks, threads, steps, accesses, pairs, engine")
	fs.IntVar(&v.cfg.MaxStates, "max-states", verify.DefaultMaxStates, "the explorer's state `budget` on programs with semaphores; beyond it the verdict is inconclusive")
	fs.IntVar(&mpkIterations, "iterations", mpk.DefaultIterations, "consecutive iterations of an MPK task graph to verify")
	fs.Var((*byteSize)(&v.maxBytes), "max-bytes", "the input size `limit` per document, in bytes (suffixes KiB, MiB, GiB)")
	files, err := parseInterspersed(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitSafe
		}
		return exitInvalid
	}
	if v.cfg.MaxStates < 1 || v.maxBytes < 1 {
		fmt.Fprintln(stderr, "megaproof verify: --max-states and --max-bytes must be positive")
		return exitInvalid
	}
	if mpkIterations < 1 || mpkIterations > mpk.MaxIterations {
		fmt.Fprintf(stderr, "megaproof verify: --iterations must be between 1 and %d\n", mpk.MaxIterations)
		return exitInvalid
	}
	switch *format {
	case "text":
	case "json":
		v.json = true
	case "sarif":
		if v.json || *stream {
			fmt.Fprintln(stderr, "megaproof verify: --format sarif writes one log for all files; it takes neither --json nor --stream")
			return exitInvalid
		}
		v.sarif = newSARIF()
	default:
		fmt.Fprintf(stderr, "megaproof verify: unknown --format %q; want text, json or sarif\n", *format)
		return exitInvalid
	}
	if *stream {
		if len(files) > 0 {
			fmt.Fprintln(stderr, "megaproof verify: --stream reads standard input and takes no FILE")
			return exitInvalid
		}
		return v.stream()
	}
	status := exitSafe
	if len(files) == 0 {
		status = v.emit(v.guard(defaultFile, v.verifyDefault))
	}
	status = worse(status, v.batch(files))
	if v.sarif != nil {
		if err := v.sarif.write(v.stdout, status); err != nil {
			fmt.Fprintf(v.stderr, "megaproof: %v\n", err)
			return exitInvalid
		}
	}
	return status
}

// batchGCPercent is the collector's GOGC during a batch of several files.
const batchGCPercent = 400

// batchWorkers is how many files verify decides at once; tests set it.
var batchWorkers = func() int { return runtime.GOMAXPROCS(0) }

// batch verifies files on up to batchWorkers goroutines and prints the
// reports in the order of the files, each as soon as it and every report
// before it are decided. At most twice as many reports as workers are
// held at once. Standard input among the files makes the batch sequential
// (a second "-" reads what the first left), and so does a SARIF log (it
// locates each report in the document read last).
func (v *verifier) batch(files []string) int {
	n := min(batchWorkers(), len(files))
	if slices.Contains(files, stdinFile) || v.sarif != nil {
		n = 1
	}
	if len(files) > 1 && os.Getenv("GOGC") == "" {
		// Many programs, each garbage once decided: collecting at 5× the
		// live heap instead of 2× takes about a quarter less CPU on
		// batches of small programs, whose live heap is a program per
		// worker. GOGC set in the environment still decides.
		defer debug.SetGCPercent(debug.SetGCPercent(batchGCPercent))
	}
	status := exitSafe
	if n <= 1 {
		for _, f := range files {
			status = worse(status, v.emit(v.guard(f, func() *verify.Report { return v.verifyFile(f) })))
		}
		return status
	}
	stderr := v.stderr
	v.stderr = &lockedWriter{w: stderr}
	defer func() { v.stderr = stderr }()
	done := make([]chan *verify.Report, len(files))
	for i := range done {
		done[i] = make(chan *verify.Report, 1)
	}
	// A worker takes a slot before it takes the next file, and the slot
	// is given back once that file's report is printed: the files taken
	// and not yet printed are a run starting at the next to print, so the
	// printer never waits on a file that no worker holds.
	slots := make(chan struct{}, 2*n)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			for {
				slots <- struct{}{}
				i := int(next.Add(1) - 1)
				if i >= len(files) {
					<-slots
					return
				}
				f := files[i]
				done[i] <- v.guard(f, func() *verify.Report { return v.verifyFile(f) })
			}
		})
	}
	for i := range files {
		status = worse(status, v.emit(<-done[i]))
		<-slots
	}
	wg.Wait()
	return status
}

// lockedWriter serializes the writes of a batch's workers.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

// emit prints one report and returns its exit status.
func (v *verifier) emit(r *verify.Report) int {
	var err error
	switch {
	case v.sarif != nil:
		err = v.sarif.add(r, v.data)
		v.data = nil
	case v.json:
		err = writeJSON(v.stdout, r)
	default:
		err = writeText(v.stdout, r, v.verbose)
	}
	if err != nil {
		fmt.Fprintf(v.stderr, "megaproof: %v\n", err)
		return exitInvalid
	}
	return reportStatus(r)
}

// guard runs work, turning a panic into an internal record; the panic and
// its stack go to stderr so that it can be reported.
func (v *verifier) guard(file string, work func() *verify.Report) (r *verify.Report) {
	defer func() {
		if x := recover(); x != nil {
			fmt.Fprintf(v.stderr, "megaproof: internal error on %s: %v\n%s", clean(file), x, debug.Stack())
			r = &verify.Report{File: file, Verdict: verify.Inconclusive, Findings: []verify.ReportFinding{{
				Code:    codeInternal,
				Message: fmt.Sprintf("megaproof failed internally: %v (please report it with this input)", x),
			}}}
		}
	}()
	return work()
}

// reportStatus is the exit status of one report.
func reportStatus(r *verify.Report) int {
	for _, f := range r.Findings {
		if f.Code == codeInternal {
			return exitInternal
		}
	}
	return exitStatus(r.Verdict)
}

// stream verifies one document per line of standard input.
func (v *verifier) stream() int {
	v.json = true
	in := bufio.NewReaderSize(v.stdin, 1<<16)
	status := exitSafe
	for n := 1; ; n++ {
		line, tooLong, err := readLine(in, v.maxBytes)
		if err == io.EOF && line == nil && !tooLong {
			return status
		}
		file := stdinFile + ":" + strconv.Itoa(n)
		var r *verify.Report
		switch {
		case err != nil && err != io.EOF:
			r = ioReport(file, err)
		case tooLong:
			r = limitReport(file, v.maxBytes)
		default:
			r = v.guard(file, func() *verify.Report { return v.verifyData(file, line) })
		}
		status = worse(status, v.emit(r))
		if err != nil {
			return status
		}
	}
}

// readLine reads one line without its line ending. A line longer than
// limit is consumed and reported as tooLong, without being kept.
func readLine(in *bufio.Reader, limit int64) (line []byte, tooLong bool, err error) {
	var buf []byte
	var n int64
	for {
		chunk, err := in.ReadSlice('\n')
		n += int64(len(chunk))
		if !tooLong {
			buf = append(buf, chunk...)
		}
		if err == bufio.ErrBufferFull {
			if n > limit+1 && !tooLong {
				tooLong, buf = true, nil
			}
			continue
		}
		if err == io.EOF && n == 0 {
			return nil, false, io.EOF
		}
		buf = bytes.TrimSuffix(buf, []byte("\n"))
		buf = bytes.TrimSuffix(buf, []byte("\r"))
		if !tooLong && int64(len(buf)) > limit {
			tooLong, buf = true, nil
		}
		if tooLong {
			return nil, true, err
		}
		if buf == nil {
			buf = []byte{}
		}
		return buf, false, err
	}
}

// verifyFile reads and verifies one file.
func (v *verifier) verifyFile(file string) *verify.Report {
	var spare *[]byte
	if v.sarif == nil {
		spare = docBuffers.Get().(*[]byte)
	}
	data, r := v.read(file, spare)
	if r != nil {
		return r
	}
	// A large document is not kept: nothing refers to it once decoded.
	pooled := spare != nil && cap(data) <= maxPooledDocument
	if pooled {
		*spare = data[:0]
	}
	r = v.verifyData(file, data)
	if pooled {
		docBuffers.Put(spare)
	}
	return r
}

// maxPooledDocument is the largest buffer docBuffers keeps: a larger
// document is dropped once decoded, as it would be without the pool, so
// that it does not stay alive while its program is verified.
const maxPooledDocument = 1 << 20

// docBuffers holds the buffers of documents already verified, for the
// next file a worker reads: a batch of files then reads into memory that
// is already mapped and cached instead of a fresh allocation per file.
// A buffer is handed back once its report is made; no report refers to
// the bytes it was read from (the readers copy every string they keep).
var docBuffers = sync.Pool{New: func() any { return new([]byte) }}

// read reads one document from a file or, for "-", standard input. It
// returns an invalid.io or invalid.limit record when it cannot.
func (v *verifier) read(file string, spare *[]byte) ([]byte, *verify.Report) {
	var data []byte
	var err error
	if file == stdinFile {
		data, err = readDocument(v.stdin, v.maxBytes, nil)
	} else {
		var f *os.File
		if f, err = openDocument(file); err == nil {
			var reuse []byte
			if spare != nil {
				reuse = *spare
			}
			data, err = readDocument(f, v.maxBytes, reuse)
			f.Close()
		}
	}
	switch {
	case errors.Is(err, errTooLarge):
		return nil, limitReport(file, v.maxBytes)
	case err != nil:
		return nil, ioReport(file, err)
	}
	return data, nil
}

// verifyData decodes and verifies one document.
func (v *verifier) verifyData(file string, data []byte) *verify.Report {
	if v.sarif != nil {
		v.data = data
	}
	p, format, err := decode(data, v.cfg)
	if err != nil {
		r := verify.InvalidReport(err)
		r.File = file
		if c := r.Findings[0].Code; c != schedule.CodeSyntax && c != schedule.CodeFormat {
			r.Format = format // recognized, though malformed
		}
		return r
	}
	r := v.verifyProgram(file, p, formatPaths(format, p))
	r.Format = format
	return r
}

// formatPaths is the JSON path table of an input format for program p
// read in it: nil (no paths) for one without.
func formatPaths(format string, p *schedule.Program) schedule.Locator {
	switch format {
	case formatMegaproof:
		return schedule.Paths{}
	case formatAMK:
		return amk.Paths{Program: p}
	case formatMPK:
		return mpk.Paths{Program: p}
	}
	return nil
}

// verifyDefault verifies the embedded default schedule.
func (v *verifier) verifyDefault() *verify.Report {
	p, err := defaultProgram()
	if err != nil {
		r := verify.InvalidReport(err)
		r.File = defaultFile
		return r
	}
	r := v.verifyProgram(defaultFile, p, schedule.Paths{})
	r.Format = formatMegaproof
	return r
}

// defaultProgram is the schedule verify checks when given no file: the
// Llama-3.2-1B decode step on an H200 from package llamagen.
func defaultProgram() (*schedule.Program, error) {
	return llamagen.Default()
}

// verifyProgram runs the verifier on a decoded program. A verifier error
// (it has no bound to report) makes the report inconclusive, never safe.
func (v *verifier) verifyProgram(file string, p *schedule.Program, loc schedule.Locator) *verify.Report {
	res, err := runProgram(context.Background(), p, v.cfg)
	if err != nil {
		return &verify.Report{
			File: file, Program: p.Name, Verdict: verify.Inconclusive,
			Findings: []verify.ReportFinding{{Code: verify.CodeInconclusive, Message: "the verifier stopped: " + err.Error()}},
		}
	}
	r := res.ReportAt(p, loc)
	r.File = file
	return r
}

// ioReport is the record of a file that cannot be read.
func ioReport(file string, err error) *verify.Report {
	return &verify.Report{File: file, Verdict: verify.Invalid, Findings: []verify.ReportFinding{{Code: codeIO, Message: err.Error()}}}
}

// limitReport is the record of a document beyond the size limit.
func limitReport(file string, limit int64) *verify.Report {
	return &verify.Report{File: file, Verdict: verify.Invalid, Findings: []verify.ReportFinding{{
		Code: schedule.CodeLimit, Path: "$",
		Message: fmt.Sprintf("the document is larger than the input limit of %s (--max-bytes)", byteSize(limit)),
	}}}
}

// errTooLarge reports a document beyond the size limit.
var errTooLarge = errors.New("document too large")

// readDocument reads a whole document of at most limit bytes, or returns
// errTooLarge. A regular file larger than limit is refused before it is
// read. From a stream, bytes are kept only while they may still be
// decoded: once the first MiB cannot begin any JSON document (a JSON
// syntax error strictly inside it, as in /dev/zero), the rest is only
// counted, and if the stream ends within the limit the kept prefix gives
// the same first syntax error that the whole document would.
//
// A regular file is read into reuse when it has room for it.
func readDocument(r io.Reader, limit int64, reuse []byte) ([]byte, error) {
	const sniff = 1 << 20
	var buf []byte
	regular := false
	var size int64 // a regular file's size when it was opened
	if f, ok := r.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
			if size = fi.Size(); size > limit {
				return nil, errTooLarge
			}
			if int64(cap(reuse)) > fi.Size() {
				buf = reuse[:0]
			} else {
				buf = make([]byte, 0, fi.Size()+1)
			}
			regular = true
		}
	}
	var n int64
	doomed := false
	var scratch []byte
	for {
		var k int
		var err error
		if !doomed && len(buf) < cap(buf) {
			// A regular file is read straight into its buffer.
			k, err = r.Read(buf[len(buf):cap(buf)])
			buf = buf[:len(buf)+k]
		} else {
			if scratch == nil {
				scratch = make([]byte, 1<<16)
			}
			k, err = r.Read(scratch)
			if !doomed {
				buf = append(buf, scratch[:k]...)
			}
		}
		n += int64(k)
		if n > limit {
			return nil, errTooLarge
		}
		// Only a stream is sniffed: a regular file's size is within the
		// limit, and its first read may bring all of it (a 31 MB file
		// would be parsed once more just to be kept).
		if !regular && !doomed && len(buf) >= sniff && len(buf)-k < sniff {
			doomed = cannotBeginJSON(buf)
		}
		// A regular file is read to the size it had when it was opened,
		// without a last read to see its end (a file of size 0, as in
		// /proc, is read to its end).
		if err == io.EOF || err == nil && regular && size > 0 && int64(len(buf)) == size {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// cannotBeginJSON reports whether prefix holds a JSON syntax error before
// its end (after an optional UTF-8 byte order mark), so that no
// continuation makes it a JSON document.
func cannotBeginJSON(prefix []byte) bool {
	prefix = bytes.TrimPrefix(prefix, []byte("\xef\xbb\xbf"))
	var se *json.SyntaxError
	err := json.Unmarshal(prefix, new(json.RawMessage))
	return errors.As(err, &se) && se.Offset < int64(len(prefix))
}

// parseInterspersed parses flags that may appear before, between or after
// file arguments and returns the files. A lone "-" is a file (standard
// input); "--" ends the flags.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var files []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return files, nil
		}
		rest := fs.Args()
		if len(args) > len(rest) && args[len(args)-len(rest)-1] == "--" {
			return append(files, rest...), nil
		}
		files = append(files, rest[0])
		args = rest[1:]
	}
}

// exitStatus maps a verdict to its exit status.
func exitStatus(v verify.Verdict) int {
	switch v {
	case verify.Safe:
		return exitSafe
	case verify.Unsafe:
		return exitUnsafe
	case verify.Inconclusive:
		return exitInconclusive
	}
	return exitInvalid
}

// worse combines exit statuses: unsafe beats an internal error, which
// beats invalid, which beats inconclusive, which beats safe.
func worse(a, b int) int {
	rank := func(s int) int {
		switch s {
		case exitUnsafe:
			return 4
		case exitInternal:
			return 3
		case exitInvalid:
			return 2
		case exitInconclusive:
			return 1
		}
		return 0
	}
	if rank(b) > rank(a) {
		return b
	}
	return a
}

// byteSize is a byte count flag that accepts KiB, MiB and GiB suffixes.
type byteSize int64

func (b byteSize) String() string {
	switch {
	case b > 0 && b%(1<<30) == 0:
		return fmt.Sprintf("%dGiB", b>>30)
	case b > 0 && b%(1<<20) == 0:
		return fmt.Sprintf("%dMiB", b>>20)
	case b > 0 && b%(1<<10) == 0:
		return fmt.Sprintf("%dKiB", b>>10)
	}
	return strconv.FormatInt(int64(b), 10)
}

func (b *byteSize) Set(s string) error {
	mul := int64(1)
	for _, u := range []struct {
		suffix string
		mul    int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}} {
		if t, ok := strings.CutSuffix(s, u.suffix); ok {
			s, mul = t, u.mul
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 1 || n > (1<<62)/mul {
		return fmt.Errorf("want a positive byte count such as 1048576 or 64MiB")
	}
	*b = byteSize(n * mul)
	return nil
}
