package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"sort"
	"strings"
)

// errMismatch: compare found a difference; it has printed them.
var errMismatch = errors.New("mismatch")

// storedCase is a cases-file line, its input kept as it is written.
type storedCase struct {
	Seed  uint64          `json:"seed"`
	Index int             `json:"index"`
	Input json.RawMessage `json:"input"`
	Want  Want            `json:"want"`
}

// volumesFlag is " --volumes" when a stored input is a volumes case (its
// storage lists are present only then), for the rerun hint.
func volumesFlag(input json.RawMessage) string {
	var lists struct {
		PersistentVolumes json.RawMessage `json:"persistentVolumes"`
	}
	if json.Unmarshal(input, &lists) == nil && lists.PersistentVolumes != nil {
		return " --volumes"
	}
	return ""
}

// eachLine calls fn with every non-empty line of the file (lines may be
// long: a case is tens of kilobytes).
func eachLine(path string, fn func(n int, line []byte) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	for n := 1; ; n++ {
		line, err := r.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			if ferr := fn(n, line); ferr != nil {
				return fmt.Errorf("%s:%d: %w", path, n, ferr)
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

func strictDecode(data []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(data))
	d.DisallowUnknownFields()
	return d.Decode(v)
}

// decodeGot reads one line of kscore's answers: {"index": i, "want": {...}}
// (a "seed" and an "input" may come along), or the want's own fields next
// to "index".
func decodeGot(line []byte) (int, *Want, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(line, &fields); err != nil {
		return 0, nil, err
	}
	rawIndex, ok := fields["index"]
	if !ok {
		return 0, nil, errors.New(`no "index"`)
	}
	var index int
	if err := json.Unmarshal(rawIndex, &index); err != nil {
		return 0, nil, fmt.Errorf("index: %w", err)
	}
	delete(fields, "index")
	delete(fields, "seed")
	want := &Want{}
	if w, ok := fields["want"]; ok {
		delete(fields, "input")
		delete(fields, "want")
		if len(fields) > 0 {
			return 0, nil, fmt.Errorf("unknown fields next to \"want\": %v", sortedKeys(fields))
		}
		return index, want, strictDecode(w, want)
	}
	rest, err := json.Marshal(fields)
	if err != nil {
		return 0, nil, err
	}
	return index, want, strictDecode(rest, want)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func compareCmd(args []string, out io.Writer) error {
	fs := flags("compare")
	casesPath := fs.String("cases", "", "the cases file (oracle gen)")
	gotPath := fs.String("got", "", "kscore's answers, one JSON line per case")
	inputs := fs.Int("inputs", 3, "print the input JSON of the first N mismatching cases (the rest: seed and differences)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *casesPath == "" || *gotPath == "" {
		return errors.New("compare needs --cases and --got")
	}
	var cases []storedCase
	err := eachLine(*casesPath, func(_ int, line []byte) error {
		var c storedCase
		if err := json.Unmarshal(line, &c); err != nil {
			return err
		}
		cases = append(cases, c)
		return nil
	})
	if err != nil {
		return err
	}
	got := map[int]*Want{}
	var problems []string
	err = eachLine(*gotPath, func(n int, line []byte) error {
		index, want, err := decodeGot(line)
		if err != nil {
			return err
		}
		if _, dup := got[index]; dup {
			problems = append(problems, fmt.Sprintf("%s:%d: a second answer for case %d", *gotPath, n, index))
			return nil
		}
		got[index] = want
		return nil
	})
	if err != nil {
		return err
	}
	return compare(out, cases, got, problems, *inputs)
}

// compare prints every case whose answer differs from upstream's or is
// missing (with its input for the first `inputs` of them), then a summary
// line; errMismatch if anything did not match.
func compare(out io.Writer, cases []storedCase, got map[int]*Want, problems []string, inputs int) error {
	matched, shown := 0, 0
	known := map[int]bool{}
	for i := range cases {
		c := &cases[i]
		known[c.Index] = true
		g, ok := got[c.Index]
		var diffs []string
		if !ok {
			diffs = []string{"no answer for this case"}
		} else {
			diffs = diffWant(c.Want, *g)
		}
		if len(diffs) == 0 {
			matched++
			continue
		}
		fmt.Fprintf(out, "MISMATCH case %d (seed %d): rerun with `oracle run --seed %d%s`\n", c.Index, c.Seed, c.Seed, volumesFlag(c.Input))
		for _, d := range diffs {
			fmt.Fprintf(out, "  %s\n", d)
		}
		if shown < inputs {
			fmt.Fprintf(out, "  input: %s\n", bytes.TrimSpace(c.Input))
			shown++
		}
	}
	for _, index := range slices.Sorted(maps.Keys(got)) {
		if !known[index] {
			problems = append(problems, fmt.Sprintf("an answer for case %d, which the cases file does not have", index))
		}
	}
	for _, p := range problems {
		fmt.Fprintf(out, "PROBLEM %s\n", p)
	}
	fmt.Fprintf(out, "oracle: %d cases, %d matched\n", len(cases), matched)
	if matched != len(cases) || len(problems) > 0 {
		return errMismatch
	}
	return nil
}

func js(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%v", v)
	}
	return string(b)
}

func emptyIfNilSlice[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// emptyIfNil makes a missing list and an empty one the same.
func emptyIfNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func diffStatus(path string, want, got Status) []string {
	var d []string
	if want.Code != got.Code {
		d = append(d, fmt.Sprintf("%s.code: want %q, got %q", path, want.Code, got.Code))
	}
	if want.Plugin != got.Plugin {
		d = append(d, fmt.Sprintf("%s.plugin: want %q, got %q", path, want.Plugin, got.Plugin))
	}
	if !slices.Equal(emptyIfNil(want.Reasons), emptyIfNil(got.Reasons)) {
		d = append(d, fmt.Sprintf("%s.reasons: want %s, got %s", path, js(emptyIfNil(want.Reasons)), js(emptyIfNil(got.Reasons))))
	}
	return d
}

// cycleError: a Filter error on any node fails kube-scheduler's whole
// cycle (findNodesThatPassFilters), and kscore's scorer answers the cycle
// with it, which the driver reports as the preFilter status
// `scorer: plugin "P": M`. The answer matches when upstream's Filter
// erred on some node with that plugin and message (upstream's cycle fails
// with whichever node's error comes first).
func cycleError(want, got Want) bool {
	if want.PreFilter.Code != "Success" || got.PreFilter.Code != "Error" ||
		len(got.PreFilter.Reasons) != 1 {
		return false
	}
	for _, n := range want.Nodes {
		prefix := fmt.Sprintf("running %q filter plugin: ", n.Filter.Plugin)
		if n.Filter.Code != "Error" || len(n.Filter.Reasons) != 1 ||
			!strings.HasPrefix(n.Filter.Reasons[0], prefix) {
			continue
		}
		msg := strings.TrimPrefix(n.Filter.Reasons[0], prefix)
		if got.PreFilter.Reasons[0] == fmt.Sprintf("scorer: plugin %q: %s", n.Filter.Plugin, msg) {
			return true
		}
	}
	return false
}

// diffWant lists the fields where got differs from want, one line each.
// Missing lists and maps count as empty.
func diffWant(want, got Want) []string {
	if cycleError(want, got) {
		return nil
	}
	d := diffStatus("preFilter", want.PreFilter, got.PreFilter)
	if len(want.Nodes) != len(got.Nodes) {
		d = append(d, fmt.Sprintf("nodes: want %d, got %d", len(want.Nodes), len(got.Nodes)))
	}
	for i := range min(len(want.Nodes), len(got.Nodes)) {
		w, g := want.Nodes[i], got.Nodes[i]
		path := fmt.Sprintf("nodes[%d]", i)
		if w.Name != g.Name {
			d = append(d, fmt.Sprintf("%s.name: want %q, got %q", path, w.Name, g.Name))
			continue
		}
		path = fmt.Sprintf("nodes[%d](%s)", i, w.Name)
		d = append(d, diffStatus(path+".filter", w.Filter, g.Filter)...)
		// VolumeBinding's decisions, in any order (the want's is by claim).
		wd, gd := slices.Clone(w.VolumeDecisions), slices.Clone(g.VolumeDecisions)
		byClaim := func(a, b VolumeDecision) int { return strings.Compare(a.Claim, b.Claim) }
		slices.SortFunc(wd, byClaim)
		slices.SortFunc(gd, byClaim)
		if !slices.Equal(wd, gd) {
			d = append(d, fmt.Sprintf("%s.volumeDecisions: want %s, got %s", path, js(emptyIfNilSlice(wd)), js(emptyIfNilSlice(gd))))
		}
		plugins := sortedKeys(w.Scores)
		for _, p := range sortedKeys(g.Scores) {
			if _, ok := w.Scores[p]; !ok {
				plugins = append(plugins, p)
			}
		}
		for _, p := range plugins {
			ws, wok := w.Scores[p]
			gs, gok := g.Scores[p]
			switch {
			case !gok:
				d = append(d, fmt.Sprintf("%s.scores.%s: want %s, got none", path, p, js(ws)))
			case !wok:
				d = append(d, fmt.Sprintf("%s.scores.%s: want none, got %s", path, p, js(gs)))
			case ws != gs:
				d = append(d, fmt.Sprintf("%s.scores.%s: want %s, got %s", path, p, js(ws), js(gs)))
			}
		}
	}
	if !slices.Equal(emptyIfNil(want.Skipped), emptyIfNil(got.Skipped)) {
		d = append(d, fmt.Sprintf("skipped: want %s, got %s", js(emptyIfNil(want.Skipped)), js(emptyIfNil(got.Skipped))))
	}
	names := sortedKeys(want.Weights)
	for _, p := range sortedKeys(got.Weights) {
		if _, ok := want.Weights[p]; !ok {
			names = append(names, p)
		}
	}
	for _, p := range names {
		ww, wok := want.Weights[p]
		gw, gok := got.Weights[p]
		switch {
		case !gok:
			d = append(d, fmt.Sprintf("weights.%s: want %d, got none", p, ww))
		case !wok:
			d = append(d, fmt.Sprintf("weights.%s: want none, got %d", p, gw))
		case ww != gw:
			d = append(d, fmt.Sprintf("weights.%s: want %d, got %d", p, ww, gw))
		}
	}
	return d
}
