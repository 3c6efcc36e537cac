package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/url"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/megaproof/megaproof/verify"
)

// SARIF 2.1.0 (OASIS): the subset of the object model verify writes. The
// field names and nesting are the standard's; sarif_test.go validates the
// output against the official schema.
const (
	sarifVersion = "2.1.0"
	sarifSchema  = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
	sarifInfoURI = "https://github.com/megaproof/megaproof"
)

type sarifLog struct {
	Schema  string     `json:"$schema"`
	Version string     `json:"version"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool        sarifTool         `json:"tool"`
	Invocations []sarifInvocation `json:"invocations"`
	Artifacts   []sarifArtifact   `json:"artifacts,omitempty"`
	Results     []sarifResult     `json:"results"`
	ColumnKind  string            `json:"columnKind"`
}

type sarifTool struct {
	Driver sarifDriver `json:"driver"`
}

type sarifDriver struct {
	Name           string      `json:"name"`
	Version        string      `json:"version,omitempty"`
	InformationURI string      `json:"informationUri"`
	Rules          []sarifRule `json:"rules"`
}

type sarifRule struct {
	ID                   string            `json:"id"`
	ShortDescription     sarifText         `json:"shortDescription"`
	FullDescription      sarifText         `json:"fullDescription"`
	Help                 sarifText         `json:"help"`
	DefaultConfiguration sarifRuleConfig   `json:"defaultConfiguration"`
	Properties           map[string]string `json:"properties,omitempty"`
}

type sarifRuleConfig struct {
	Level string `json:"level"`
}

type sarifText struct {
	Text string `json:"text"`
}

type sarifInvocation struct {
	ExecutionSuccessful bool `json:"executionSuccessful"`
	ExitCode            int  `json:"exitCode"`
}

type sarifArtifact struct {
	Location   sarifArtifactLocation `json:"location"`
	Length     int                   `json:"length,omitempty"`
	MimeType   string                `json:"mimeType,omitempty"`
	Properties map[string]any        `json:"properties,omitempty"`
}

type sarifArtifactLocation struct {
	URI   string `json:"uri"`
	Index int    `json:"index"`
}

type sarifResult struct {
	RuleID           string          `json:"ruleId"`
	RuleIndex        int             `json:"ruleIndex"`
	Level            string          `json:"level"`
	Message          sarifText       `json:"message"`
	Locations        []sarifLocation `json:"locations,omitempty"`
	RelatedLocations []sarifLocation `json:"relatedLocations,omitempty"`
	CodeFlows        []sarifCodeFlow `json:"codeFlows,omitempty"`
	Fixes            []sarifFix      `json:"fixes,omitempty"`
	Properties       map[string]any  `json:"properties,omitempty"`
}

type sarifLocation struct {
	ID               *int                   `json:"id,omitempty"`
	PhysicalLocation *sarifPhysicalLocation `json:"physicalLocation,omitempty"`
	LogicalLocations []sarifLogicalLocation `json:"logicalLocations,omitempty"`
	Message          *sarifText             `json:"message,omitempty"`
}

type sarifPhysicalLocation struct {
	ArtifactLocation sarifArtifactLocation `json:"artifactLocation"`
	Region           *sarifRegion          `json:"region,omitempty"`
}

type sarifRegion struct {
	StartLine   int `json:"startLine,omitempty"`
	StartColumn int `json:"startColumn,omitempty"`
	EndLine     int `json:"endLine,omitempty"`
	EndColumn   int `json:"endColumn,omitempty"`
	ByteOffset  int `json:"byteOffset"`
	ByteLength  int `json:"byteLength"`
}

type sarifLogicalLocation struct {
	Name               string `json:"name"`
	FullyQualifiedName string `json:"fullyQualifiedName,omitempty"`
	Kind               string `json:"kind"`
}

type sarifCodeFlow struct {
	Message     sarifText         `json:"message"`
	ThreadFlows []sarifThreadFlow `json:"threadFlows"`
}

type sarifThreadFlow struct {
	ID        string                    `json:"id"`
	Message   sarifText                 `json:"message"`
	Locations []sarifThreadFlowLocation `json:"locations"`
}

type sarifThreadFlowLocation struct {
	Location       sarifLocation        `json:"location"`
	ExecutionOrder int                  `json:"executionOrder"`
	Importance     string               `json:"importance,omitempty"`
	State          map[string]sarifText `json:"state,omitempty"`
}

type sarifFix struct {
	Description     sarifText             `json:"description"`
	ArtifactChanges []sarifArtifactChange `json:"artifactChanges"`
}

type sarifArtifactChange struct {
	ArtifactLocation sarifArtifactLocation `json:"artifactLocation"`
	Replacements     []sarifReplacement    `json:"replacements"`
}

type sarifReplacement struct {
	DeletedRegion   sarifRegion `json:"deletedRegion"`
	InsertedContent *sarifText  `json:"insertedContent,omitempty"`
}

// finding is a verify.ReportFinding as its JSON reads, with the fields
// that locate it (locations, patch, the annotated witness) decoded
// whether or not the report carries them: SARIF and the HTML report read
// the same JSON that verify --json prints.
type finding struct {
	Code          string     `json:"code"`
	Message       string     `json:"message"`
	Path          string     `json:"path,omitempty"`
	Tasks         []string   `json:"tasks,omitempty"`
	Related       []string   `json:"related,omitempty"`
	Fix           string     `json:"fix,omitempty"`
	Locations     []location `json:"locations,omitempty"`
	Patch         []patchOp  `json:"patch,omitempty"`
	Witness       []event    `json:"witness"`
	WitnessLength int        `json:"witness_length"`
}

// location is one task or step a finding involves, by JSON path.
type location struct {
	Path string `json:"path"`
	Task string `json:"task,omitempty"`
	Role string `json:"role,omitempty"`
}

// patchOp is one RFC 6902 operation.
type patchOp struct {
	Op    string          `json:"op"`
	Path  string          `json:"path"`
	Value json.RawMessage `json:"value,omitempty"`
	From  string          `json:"from,omitempty"`
}

// event is one annotated witness event: a step ("thread", "step"), a
// hold ("hold", "at") or an advance ("advance", with the steps that
// matter among those it runs in "marks").
type event struct {
	Thread     int32           `json:"thread"`
	Step       int32           `json:"step"`
	Hold       *int32          `json:"hold"`
	At         int32           `json:"at"`
	Advance    bool            `json:"advance"`
	Marks      []event         `json:"marks"`
	ThreadName string          `json:"thread_name,omitempty"`
	Task       string          `json:"task,omitempty"`
	Op         string          `json:"op,omitempty"`
	Object     string          `json:"object,omitempty"`
	Value      json.RawMessage `json:"value,omitempty"`
	Marked     bool            `json:"marked,omitempty"`
	Path       string          `json:"path,omitempty"`
}

// threadName is the event's thread as people read it.
func (e *event) threadName() string {
	if e.ThreadName != "" {
		return e.ThreadName
	}
	return "thread " + strconv.Itoa(int(e.thread()))
}

// thread is the thread a step or hold is of.
func (e *event) thread() int32 {
	if e.Hold != nil {
		return *e.Hold
	}
	return e.Thread
}

// findings reads a report's findings through their JSON.
func findings(r *verify.Report) ([]finding, error) {
	b, err := json.Marshal(r.Findings)
	if err != nil {
		return nil, err
	}
	var out []finding
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// sarifWriter collects the reports of one verify invocation into one
// SARIF run, written by flush.
type sarifWriter struct {
	run   sarifRun
	rules map[string]int
}

func newSARIF() *sarifWriter {
	s := &sarifWriter{rules: map[string]int{}}
	s.run.Tool.Driver = sarifDriver{Name: "megaproof", InformationURI: sarifInfoURI, Rules: sarifRules()}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		s.run.Tool.Driver.Version = bi.Main.Version
	}
	for i, r := range s.run.Tool.Driver.Rules {
		s.rules[r.ID] = i
	}
	s.run.Results = []sarifResult{}
	s.run.ColumnKind = "unicodeCodePoints"
	return s
}

// sarifRules is the rule table: one rule per finding code megaproof
// explain documents, with the check of verify.Checks() that reports it.
func sarifRules() []sarifRule {
	check := map[string]string{}
	for _, c := range verify.Checks() {
		for _, code := range c.Codes {
			if check[code] == "" {
				check[code] = c.Name
			}
		}
	}
	rules := make([]sarifRule, 0, len(codeDocs))
	for _, d := range codeDocs {
		r := sarifRule{
			ID:                   d.code,
			ShortDescription:     sarifText{d.summary},
			FullDescription:      sarifText{d.summary + " Example: " + d.example},
			Help:                 sarifText{d.fix},
			DefaultConfiguration: sarifRuleConfig{codeLevel(d.code)},
		}
		if c := check[d.code]; c != "" {
			r.Properties = map[string]string{"check": c}
		}
		rules = append(rules, r)
	}
	return rules
}

// codeLevel is a code's SARIF level: error for what makes a schedule
// unsafe or unreadable, warning for an undecided one.
func codeLevel(code string) string {
	if code == verify.CodeInconclusive {
		return "warning"
	}
	return "error"
}

// artifactURI renders a file argument as a relative or file URI.
func artifactURI(file string) string {
	if filepath.IsAbs(file) {
		return (&url.URL{Scheme: "file", Path: filepath.ToSlash(file)}).String()
	}
	return (&url.URL{Path: filepath.ToSlash(file)}).String()
}

// add appends one document's report. data is the document's bytes, nil
// when there are none (the embedded default, an unreadable file): its
// results then carry logical locations only.
func (s *sarifWriter) add(r *verify.Report, data []byte) error {
	fs, err := findings(r)
	if err != nil {
		return err
	}
	art := -1
	if data != nil {
		art = len(s.run.Artifacts)
		props := map[string]any{"verdict": r.Verdict.String()}
		if r.Format != "" {
			props["format"] = r.Format
		}
		if r.Program != "" {
			props["program"] = r.Program
		}
		s.run.Artifacts = append(s.run.Artifacts, sarifArtifact{
			Location: sarifArtifactLocation{URI: artifactURI(r.File), Index: art},
			Length:   len(data), MimeType: "application/json", Properties: props,
		})
	}
	// Every path any finding names, located in one pass.
	var paths []string
	for _, f := range fs {
		if f.Path != "" {
			paths = append(paths, f.Path)
		}
		for _, l := range f.Locations {
			paths = append(paths, l.Path)
		}
		for _, e := range f.Witness {
			if e.Path != "" {
				paths = append(paths, e.Path)
			}
			for _, m := range e.Marks {
				if m.Path != "" {
					paths = append(paths, m.Path)
				}
			}
		}
		for _, op := range f.Patch {
			paths = append(paths, pointerPaths(op.Path)...)
			paths = append(paths, parentPaths(op.Path)...)
		}
	}
	var loc *docIndex
	if data != nil {
		loc = newDocIndex(data, paths)
	}
	for _, f := range fs {
		s.run.Results = append(s.run.Results, s.result(r, &f, art, loc))
	}
	return nil
}

// docIndex holds the located paths of one document and their positions.
type docIndex struct {
	data  []byte
	spans map[string]span
	pos   map[int]position
}

func newDocIndex(data []byte, paths []string) *docIndex {
	d := &docIndex{data: data, spans: locatePaths(data, paths)}
	var offs []int
	for _, sp := range d.spans {
		offs = append(offs, sp.start, sp.end)
		if sp.member >= 0 {
			offs = append(offs, sp.member)
		}
	}
	d.pos = positions(data, offs)
	return d
}

// region is the region of the value at path, with its member name when
// it is an object member ("wrker": 0); nil when nothing of it is in the
// document.
func (d *docIndex) region(path string) *sarifRegion {
	if d == nil {
		return nil
	}
	sp, ok := d.spans[path]
	if !ok {
		return nil
	}
	if sp.member >= 0 {
		return d.regionOf(sp.member, sp.end)
	}
	return d.regionOf(sp.start, sp.end)
}

func (d *docIndex) regionOf(start, end int) *sarifRegion {
	a, b := d.pos[start], d.pos[end]
	if a.line == 0 || b.line == 0 {
		return &sarifRegion{ByteOffset: start, ByteLength: end - start}
	}
	return &sarifRegion{StartLine: a.line, StartColumn: a.col, EndLine: b.line, EndColumn: b.col, ByteOffset: start, ByteLength: end - start}
}

// where is one place of a finding: a JSON path and the task there.
func (s *sarifWriter) where(art int, loc *docIndex, path, task, msg string) sarifLocation {
	var l sarifLocation
	if art >= 0 {
		l.PhysicalLocation = &sarifPhysicalLocation{ArtifactLocation: sarifArtifactLocation{URI: s.run.Artifacts[art].Location.URI, Index: art}}
		if path != "" {
			l.PhysicalLocation.Region = loc.region(path)
		}
	}
	if task != "" {
		l.LogicalLocations = []sarifLogicalLocation{{Name: task, FullyQualifiedName: path, Kind: "function"}}
	} else if path != "" {
		l.LogicalLocations = []sarifLogicalLocation{{Name: path, FullyQualifiedName: path, Kind: "element"}}
	}
	if msg != "" {
		l.Message = &sarifText{msg}
	}
	return l
}

func (s *sarifWriter) result(r *verify.Report, f *finding, art int, loc *docIndex) sarifResult {
	res := sarifResult{RuleID: f.Code, Level: codeLevel(f.Code), Message: sarifText{f.Message}}
	if i, ok := s.rules[f.Code]; ok {
		res.RuleIndex = i
	} else {
		res.RuleIndex = -1
	}
	props := map[string]any{"witness_length": f.WitnessLength}
	if len(f.Tasks) > 0 {
		props["tasks"] = f.Tasks
	}
	if len(f.Related) > 0 {
		props["related"] = f.Related
	}
	if f.Fix != "" {
		props["fix"] = f.Fix
	}
	if len(f.Patch) > 0 {
		props["patch"] = f.Patch
	}
	res.Properties = props

	// The primary location: the first of locations, else the finding's
	// path, else its first task; the others are related locations.
	switch {
	case len(f.Locations) > 0:
		l0 := f.Locations[0]
		res.Locations = []sarifLocation{s.where(art, loc, l0.Path, l0.Task, "")}
		for i, l := range f.Locations[1:] {
			rl := s.where(art, loc, l.Path, l.Task, firstNonEmpty(l.Role, l.Task, l.Path))
			id := i + 1
			rl.ID = &id
			res.RelatedLocations = append(res.RelatedLocations, rl)
		}
	case f.Path != "":
		task := ""
		if len(f.Tasks) > 0 {
			task = f.Tasks[0]
		}
		res.Locations = []sarifLocation{s.where(art, loc, f.Path, task, "")}
	case len(f.Tasks) > 0:
		res.Locations = []sarifLocation{s.where(art, loc, "", f.Tasks[0], "")}
	case art >= 0:
		res.Locations = []sarifLocation{s.where(art, loc, "$", "", "")}
	}
	if len(f.Locations) == 0 {
		for i, t := range f.Tasks[min(1, len(f.Tasks)):] {
			rl := s.where(-1, loc, "", t, t)
			id := i + 1
			rl.ID = &id
			res.RelatedLocations = append(res.RelatedLocations, rl)
		}
	}

	if flow, ok := s.codeFlow(f, art, loc); ok {
		res.CodeFlows = []sarifCodeFlow{flow}
	}
	if fix, ok := s.fix(f, art, loc); ok {
		res.Fixes = []sarifFix{fix}
	}
	return res
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

// codeFlow renders a witness as one code flow with a thread flow per
// thread, each thread's events in trace order; executionOrder is the
// event's place in the whole trace, marked events are essential, and each
// location's state holds the sync object's value after the event. A hold
// is a location of its thread's flow; an advance, which moves many
// threads, is a location of an "advance" flow of its own, whose message
// lists the steps that matter among those it runs and whose region is
// the first of them.
func (s *sarifWriter) codeFlow(f *finding, art int, loc *docIndex) (sarifCodeFlow, bool) {
	if len(f.Witness) == 0 {
		return sarifCodeFlow{}, false
	}
	flow := sarifCodeFlow{Message: sarifText{fmt.Sprintf("a trace of %d events that reaches the finding", len(f.Witness))}}
	index := map[string]int{}
	add := func(e *event, key, name string, order int, prefix string) {
		k, ok := index[key]
		if !ok {
			k = len(flow.ThreadFlows)
			index[key] = k
			flow.ThreadFlows = append(flow.ThreadFlows, sarifThreadFlow{ID: name, Message: sarifText{name}})
		}
		text := prefix + firstNonEmpty(e.Op, "step "+strconv.Itoa(int(e.Step)))
		if e.Task != "" {
			text = strconv.Quote(e.Task) + ": " + text
		}
		tl := sarifThreadFlowLocation{Location: s.where(art, loc, e.Path, e.Task, text), ExecutionOrder: order}
		if e.Marked {
			tl.Importance = "essential"
		}
		if e.Object != "" && len(e.Value) > 0 {
			tl.State = map[string]sarifText{e.Object: {strings.Trim(string(e.Value), `"`)}}
		}
		flow.ThreadFlows[k].Locations = append(flow.ThreadFlows[k].Locations, tl)
	}
	for i := range f.Witness {
		e := &f.Witness[i]
		if !e.Advance {
			add(e, strconv.Itoa(int(e.thread())), e.threadName(), i+1, "")
			continue
		}
		adv := *e
		var runs []string
		for j := range e.Marks {
			m := &e.Marks[j]
			if j == 0 {
				adv.Path, adv.Task = m.Path, m.Task
			}
			text := m.threadName() + " step " + strconv.Itoa(int(m.Step)) + ": " + firstNonEmpty(m.Op, "step")
			if m.Task != "" {
				text = m.threadName() + " " + strconv.Quote(m.Task) + " step " + strconv.Itoa(int(m.Step)) + ": " + firstNonEmpty(m.Op, "step")
			}
			runs = append(runs, text)
		}
		if len(runs) > 0 {
			adv.Op = firstNonEmpty(e.Op, "advance") + ", running " + strings.Join(runs, "; ")
		}
		adv.Task = ""
		add(&adv, "advance", "advance", i+1, "")
	}
	return flow, true
}

// fix renders a finding's patch as SARIF replacements of the input's
// bytes, when every operation maps to one; otherwise the patch stays in
// the result's properties only.
func (s *sarifWriter) fix(f *finding, art int, loc *docIndex) (sarifFix, bool) {
	if len(f.Patch) == 0 || art < 0 || loc == nil {
		return sarifFix{}, false
	}
	reps, ok := patchReplacements(loc, f.Patch)
	if !ok {
		return sarifFix{}, false
	}
	var offs []int
	for _, r := range reps {
		if _, ok := loc.pos[r.start]; !ok {
			offs = append(offs, r.start)
		}
		if _, ok := loc.pos[r.end]; !ok {
			offs = append(offs, r.end)
		}
	}
	maps.Copy(loc.pos, positions(loc.data, offs))
	out := make([]sarifReplacement, len(reps))
	for i, r := range reps {
		out[i] = sarifReplacement{DeletedRegion: *loc.regionOf(r.start, r.end)}
		if r.text != "" {
			out[i].InsertedContent = &sarifText{r.text}
		}
	}
	desc := firstNonEmpty(f.Fix, "apply the patch")
	return sarifFix{
		Description: sarifText{desc},
		ArtifactChanges: []sarifArtifactChange{{
			ArtifactLocation: sarifArtifactLocation{URI: s.run.Artifacts[art].Location.URI, Index: art},
			Replacements:     out,
		}},
	}, true
}

// replacement replaces bytes [start, end) of a document with text.
type replacement struct {
	start, end int
	text       string
}

// pointerPaths are the JSON paths an RFC 6901 pointer may name: each
// all-digit token is an array index or a member name, so both are
// candidates ("-" is the end of an array and names no value).
func pointerPaths(ptr string) []string {
	toks, ok := pointerTokens(ptr)
	if !ok {
		return nil
	}
	paths := []string{"$"}
	for _, t := range toks {
		var next []string
		for _, p := range paths {
			if isIndex(t) {
				next = append(next, p+"["+t+"]")
			}
			next = append(next, p+"."+t)
		}
		if len(next) > 8 {
			next = next[:8] // a pathological pointer: keep the index readings
		}
		paths = next
	}
	return paths
}

// parentPaths are the candidate paths of the pointer's parent.
func parentPaths(ptr string) []string {
	i := strings.LastIndexByte(ptr, '/')
	if i < 0 {
		return nil
	}
	if i == 0 {
		return []string{"$"}
	}
	return pointerPaths(ptr[:i])
}

func pointerTokens(ptr string) ([]string, bool) {
	if ptr == "" {
		return nil, true
	}
	if ptr[0] != '/' {
		return nil, false
	}
	toks := strings.Split(ptr[1:], "/")
	for i, t := range toks {
		toks[i] = strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~")
	}
	return toks, true
}

func isIndex(t string) bool {
	if t == "" || (len(t) > 1 && t[0] == '0') {
		return false
	}
	for i := 0; i < len(t); i++ {
		if t[i] < '0' || t[i] > '9' {
			return false
		}
	}
	return true
}

// resolve returns the span of the value ptr names, if it is in the
// document.
func (d *docIndex) resolve(ptr string) (span, bool) {
	for _, p := range pointerPaths(ptr) {
		if sp, ok := d.spans[p]; ok && sp.exact {
			return sp, true
		}
	}
	return span{}, false
}

// patchReplacements maps RFC 6902 add, remove and replace operations to
// byte replacements of the original document. It reports false when some
// operation does not map (move, copy, test, a path not in the document)
// or when the operations do not commute with the original's byte offsets:
// an operation under an array that an earlier add or remove shifted, an
// object that both loses and gains a member, or replacements that overlap.
func patchReplacements(d *docIndex, ops []patchOp) ([]replacement, bool) {
	var out []replacement
	var shifted []string // pointers of arrays an add or remove changed
	// Objects that lose a member and objects that gain one: a member
	// removed and one added in the same object can leave its commas wrong
	// (removing the only member, then appending), so that is refused.
	removedFrom, addedTo := map[string]bool{}, map[string]bool{}
	for _, op := range ops {
		for _, a := range shifted {
			if strings.HasPrefix(op.Path, a+"/") {
				return nil, false
			}
		}
		parentPtr := op.Path[:max(strings.LastIndexByte(op.Path, '/'), 0)]
		last := op.Path[strings.LastIndexByte(op.Path, '/')+1:]
		switch op.Op {
		case "replace":
			sp, ok := d.resolve(op.Path)
			if !ok || len(op.Value) == 0 {
				return nil, false
			}
			out = append(out, replacement{sp.start, sp.end, compactJSON(op.Value)})
		case "remove":
			sp, ok := d.resolve(op.Path)
			if !ok || op.Path == "" {
				return nil, false
			}
			start := sp.start
			if sp.member >= 0 {
				start = sp.member
				if addedTo[parentPtr] {
					return nil, false
				}
				removedFrom[parentPtr] = true
			} else {
				shifted = append(shifted, parentPtr)
			}
			out = append(out, d.cut(start, sp.end))
		case "add":
			if len(op.Value) == 0 || op.Path == "" {
				return nil, false
			}
			parent, ok := d.resolve(parentPtr)
			if !ok {
				return nil, false
			}
			val := compactJSON(op.Value)
			switch d.data[parent.start] {
			case '[':
				shifted = append(shifted, parentPtr)
				if el, ok := d.resolve(op.Path); ok && isIndex(last) {
					out = append(out, replacement{el.start, el.start, val + ","})
				} else if last == "-" || isIndex(last) && d.count(parent) == mustAtoi(last) {
					out = append(out, d.append(parent, val))
				} else {
					return nil, false
				}
			case '{':
				if el, ok := d.resolve(op.Path); ok {
					out = append(out, replacement{el.start, el.end, val})
				} else {
					if removedFrom[parentPtr] {
						return nil, false
					}
					addedTo[parentPtr] = true
					key, _ := json.Marshal(last)
					out = append(out, d.append(parent, string(key)+":"+val))
				}
			default:
				return nil, false
			}
		default:
			return nil, false
		}
	}
	for i := range out {
		for j := range i {
			a, b := out[i], out[j]
			if a.start < b.end && b.start < a.end || a.start == b.start && a.end == a.start && b.end == b.start {
				return nil, false
			}
		}
	}
	return out, true
}

func mustAtoi(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		return -1
	}
	return n
}

// cut removes [start, end) with the comma that separates it from the
// next element, or else from the previous one.
func (d *docIndex) cut(start, end int) replacement {
	j := skipSpace(d.data, end)
	if j < len(d.data) && d.data[j] == ',' {
		return replacement{start, skipSpace(d.data, j+1), ""}
	}
	i := start
	for i > 0 && isSpace(d.data[i-1]) {
		i--
	}
	if i > 0 && d.data[i-1] == ',' {
		return replacement{i - 1, end, ""}
	}
	return replacement{start, end, ""}
}

// append inserts text as the last element of the container at sp, right
// after its last element (or its opening bracket), so that the layout
// around it is kept.
func (d *docIndex) append(sp span, text string) replacement {
	at := sp.end - 1
	for at > sp.start+1 && isSpace(d.data[at-1]) {
		at--
	}
	if at > sp.start+1 {
		text = "," + text
	}
	return replacement{at, at, text}
}

// count is the number of elements of the array at sp.
func (d *docIndex) count(sp span) int {
	l := &locator{data: d.data, prefix: map[string]bool{}}
	i := skipSpace(d.data, sp.start+1)
	n := 0
	for i < sp.end-1 {
		i = skipSpace(d.data, l.skip(i))
		n++
		if i < len(d.data) && d.data[i] == ',' {
			i = skipSpace(d.data, i+1)
		} else {
			break
		}
	}
	return n
}

func isSpace(b byte) bool { return b == ' ' || b == '\t' || b == '\n' || b == '\r' }

func skipSpace(data []byte, i int) int {
	for i < len(data) && isSpace(data[i]) {
		i++
	}
	return i
}

// compactJSON renders a JSON value on one line without HTML escapes.
func compactJSON(v json.RawMessage) string {
	var buf bytes.Buffer
	if json.Compact(&buf, v) != nil {
		return string(v)
	}
	return buf.String()
}

// write writes the SARIF log as one line of JSON (a witness of thousands
// of events makes an indented log several times larger; jq . indents it).
func (s *sarifWriter) write(w io.Writer, status int) error {
	s.run.Invocations = []sarifInvocation{{ExecutionSuccessful: status != exitInternal, ExitCode: status}}
	log := sarifLog{Schema: sarifSchema, Version: sarifVersion, Runs: []sarifRun{s.run}}
	bw := bufio.NewWriterSize(w, 1<<16)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(log); err != nil {
		return err
	}
	return bw.Flush()
}
