package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
)

// PreemptAnswer is what a driver reports for a preemption case.
type PreemptAnswer struct {
	PostFilter    PostFilterStatus `json:"postFilter"`
	NominatedNode string           `json:"nominatedNode"`
	Victims       []string         `json:"victims"`
}

// storedPreemptCase is a preemption cases-file line, its input kept as
// it is written.
type storedPreemptCase struct {
	Seed  uint64          `json:"seed"`
	Index int             `json:"index"`
	Input json.RawMessage `json:"input"`
	Want  PreemptWant     `json:"want"`
}

// decodePreemptGot reads one answer line: {"index": i, "want": {...}} (a
// "seed" and an "input" may come along; of the want only postFilter,
// nominatedNode and victims are compared) or {"index": i, "postFilter":
// ..., "nominatedNode": ..., "victims": [...]}.
func decodePreemptGot(line []byte) (int, *PreemptAnswer, error) {
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
	if w, ok := fields["want"]; ok {
		delete(fields, "input")
		delete(fields, "want")
		if len(fields) > 0 {
			return 0, nil, fmt.Errorf("unknown fields next to \"want\": %v", sortedKeys(fields))
		}
		want := &PreemptWant{}
		if err := strictDecode(w, want); err != nil {
			return 0, nil, err
		}
		return index, &PreemptAnswer{PostFilter: want.PostFilter, NominatedNode: want.NominatedNode, Victims: want.Victims}, nil
	}
	rest, err := json.Marshal(fields)
	if err != nil {
		return 0, nil, err
	}
	got := &PreemptAnswer{}
	return index, got, strictDecode(rest, got)
}

func comparePreemptCmd(args []string, out io.Writer) error {
	fs := flags("compare-preempt")
	casesPath := fs.String("cases", "", "the preemption cases file (oracle gen-preempt)")
	gotPath := fs.String("got", "", "the driver's answers, one JSON line per case")
	inputs := fs.Int("inputs", 3, "print the input JSON of the first N mismatching cases")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *casesPath == "" || *gotPath == "" {
		return errors.New("compare-preempt needs --cases and --got")
	}
	var cases []storedPreemptCase
	err := eachLine(*casesPath, func(_ int, line []byte) error {
		var c storedPreemptCase
		if err := json.Unmarshal(line, &c); err != nil {
			return err
		}
		cases = append(cases, c)
		return nil
	})
	if err != nil {
		return err
	}
	got := map[int]*PreemptAnswer{}
	var problems []string
	err = eachLine(*gotPath, func(n int, line []byte) error {
		index, a, err := decodePreemptGot(line)
		if err != nil {
			return err
		}
		if _, dup := got[index]; dup {
			problems = append(problems, fmt.Sprintf("%s:%d: a second answer for case %d", *gotPath, n, index))
			return nil
		}
		got[index] = a
		return nil
	})
	if err != nil {
		return err
	}
	return comparePreempt(out, cases, got, problems, *inputs)
}

// comparePreempt prints every case whose answer upstream could not have
// given (with its input for the first `inputs` of them), then a summary;
// errMismatch if anything did not match.
func comparePreempt(out io.Writer, cases []storedPreemptCase, got map[int]*PreemptAnswer, problems []string, inputs int) error {
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
			diffs = diffPreempt(&c.Want, g)
		}
		if len(diffs) == 0 {
			matched++
			continue
		}
		fmt.Fprintf(out, "MISMATCH case %d (seed %d): rerun with `oracle run-preempt --seed %d%s`\n", c.Index, c.Seed, c.Seed, volumesFlag(c.Input))
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
	fmt.Fprintf(out, "oracle: %d preemption cases, %d matched\n", len(cases), matched)
	if matched != len(cases) || len(problems) > 0 {
		return errMismatch
	}
	return nil
}

// diffPreempt lists why got is not an answer upstream could give: the
// code and plugin must be upstream's; on failure the message too, with no
// node and no victims; on success the node must be a pick allowedPick
// accepts (one of the tied best, or with not all nodes considered any
// candidate, without PDB violations if one exists), the victims exactly
// that candidate's, and the message upstream's wording for that node and
// victim count.
func diffPreempt(want *PreemptWant, got *PreemptAnswer) []string {
	var d []string
	w, g := want.PostFilter, got.PostFilter
	if w.Code != g.Code {
		d = append(d, fmt.Sprintf("postFilter.code: want %q, got %q", w.Code, g.Code))
	}
	if w.Plugin != g.Plugin {
		d = append(d, fmt.Sprintf("postFilter.plugin: want %q, got %q", w.Plugin, g.Plugin))
	}
	victims := slices.Sorted(slices.Values(emptyIfNil(got.Victims)))
	if w.Code != "Success" {
		if w.Message != g.Message {
			d = append(d, fmt.Sprintf("postFilter.message: want %q, got %q", w.Message, g.Message))
		}
		if got.NominatedNode != "" {
			d = append(d, fmt.Sprintf("nominatedNode: want \"\", got %q", got.NominatedNode))
		}
		if len(victims) > 0 {
			d = append(d, fmt.Sprintf("victims: want [], got %s", js(victims)))
		}
		return d
	}
	if err := allowedPick(want, got.NominatedNode); err != nil {
		d = append(d, fmt.Sprintf("nominatedNode: %v (upstream: %q, tied %s, all considered %t)", err, want.NominatedNode, js(want.Tied), want.AllConsidered))
		return d
	}
	c := want.Candidates[slices.IndexFunc(want.Candidates, func(c PreemptCandidate) bool { return c.Node == got.NominatedNode })]
	if !slices.Equal(c.Victims, victims) {
		d = append(d, fmt.Sprintf("victims on %s: want %s, got %s", c.Node, js(c.Victims), js(victims)))
	}
	if msg := successMessage(got.NominatedNode, len(victims)); g.Message != msg {
		d = append(d, fmt.Sprintf("postFilter.message: want %q, got %q", msg, g.Message))
	}
	return d
}
