// Command oracle is the Go side of kscore's differential test: it makes
// random cluster snapshots, runs kube-scheduler v1.37's own plugins on them
// in process, and records per node what upstream decides (Filter status,
// raw and normalized scores), so that a driver can run the same cases
// through kscore and compare.
//
//	oracle gen --seed S --cases N [--out FILE]   cases as JSON lines
//	oracle compare --cases FILE --got FILE       check kscore's answers
//	oracle run --seed S [--jsonl]                one case from its seed
//	oracle gen-preempt / compare-preempt / run-preempt: the same for
//	DefaultPreemption's PostFilter
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/scheduler/metrics"
)

const usage = `usage:
  oracle gen --seed S --cases N [--out FILE] [--volumes]
      N random cases, one JSON line each: {"seed","index","input","want"}.
      Case i is made from its own seed, derived from S and i. --volumes:
      with VolumeBinding on and storage objects and claims in most cases
      (prints a histogram of VolumeBinding's outcomes to stderr).
  oracle compare --cases FILE --got FILE
      Compare kscore's answers (one JSON line per case with "index" and
      either "want" or the want's fields) with the cases' "want"; exit 1 on
      any mismatch or missing case.
  oracle run --seed S [--jsonl] [--volumes]
      Make the case of one case seed (as printed in "seed") and print it
      with upstream's answer; --jsonl prints it as a cases-file line.
  oracle gen-preempt --seed S --cases N [--out FILE] [--volumes]
      N random preemption cases (the pod fits no node; upstream's
      DefaultPreemption PostFilter answers), one JSON line each.
      --volumes: with VolumeBinding, VolumeRestrictions, NodeVolumeLimits
      and VolumeZone on, and in about half the cases storage objects and
      volumes that decide which victims preemption needs (prints what
      decided the cases to stderr).
  oracle compare-preempt --cases FILE --got FILE
      Compare a driver's PostFilter answers with the preemption cases'
      "want", accepting any pick tied with upstream's (see README).
  oracle run-preempt --seed S [--jsonl] [--volumes]
      One preemption case from its seed.
`

func main() {
	metrics.Register()
	// The plugins log through klog; the oracle's output is its JSON.
	klog.SetOutput(io.Discard)
	klog.LogToStderr(false)
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "gen":
		err = genCmd(os.Args[2:])
	case "compare":
		err = compareCmd(os.Args[2:], os.Stdout)
	case "run":
		err = runCmd(os.Args[2:])
	case "gen-preempt":
		err = genPreemptCmd(os.Args[2:])
	case "compare-preempt":
		err = comparePreemptCmd(os.Args[2:], os.Stdout)
	case "run-preempt":
		err = runPreemptCmd(os.Args[2:])
	case "-h", "--help", "help":
		fmt.Print(usage)
		return
	default:
		fmt.Fprintf(os.Stderr, "oracle: unknown command %q\n%s", os.Args[1], usage)
		os.Exit(2)
	}
	if errors.Is(err, errMismatch) {
		os.Exit(1)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "oracle: %v\n", err)
		os.Exit(2)
	}
}

func flags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet("oracle "+name, flag.ContinueOnError)
	fs.Usage = func() { fmt.Fprint(os.Stderr, usage) }
	return fs
}

// makeCase generates case seed's input and upstream's answer for it. The
// answer is computed from the input as decoded from its JSON, so it is the
// answer for exactly what the cases file holds.
func makeCase(ctx context.Context, seed uint64, index int, volumes bool) (*Case, error) {
	raw, err := json.Marshal(generate(seed, volumes))
	if err != nil {
		return nil, err
	}
	in := &Input{}
	if err := json.Unmarshal(raw, in); err != nil {
		return nil, err
	}
	want, err := evaluate(ctx, in)
	if err != nil {
		return nil, fmt.Errorf("case %d (seed %d): %w", index, seed, err)
	}
	return &Case{Seed: seed, Index: index, Input: in, Want: want}, nil
}

func genCmd(args []string) error {
	fs := flags("gen")
	seed := fs.Uint64("seed", 1, "the run's seed")
	n := fs.Int("cases", 100, "how many cases")
	out := fs.String("out", "", "the cases file (default: standard output)")
	volumes := fs.Bool("volumes", false, "cases with volumes, VolumeBinding on")
	if err := fs.Parse(args); err != nil {
		return err
	}
	w := io.Writer(os.Stdout)
	if *out != "" {
		f, err := os.Create(*out)
		if err != nil {
			return err
		}
		defer f.Close()
		w = f
	}
	start := time.Now()
	var h *histogram
	if *volumes {
		h = newHistogram()
	}
	if err := gen(context.Background(), w, *seed, *n, h); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "oracle: %d cases (seed %d) in %.1fs\n", *n, *seed, time.Since(start).Seconds())
	if h != nil {
		h.print(os.Stderr)
	}
	return nil
}

// gen writes n cases of the run seed as JSON lines; with a histogram, the
// cases have volumes and h counts their outcomes.
func gen(ctx context.Context, w io.Writer, seed uint64, n int, h *histogram) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	for i := range n {
		c, err := makeCase(ctx, caseSeed(seed, i), i, h != nil)
		if err != nil {
			return err
		}
		if h != nil {
			h.add(c)
		}
		line, err := json.Marshal(c)
		if err != nil {
			return err
		}
		bw.Write(line)
		bw.WriteByte('\n')
	}
	return bw.Flush()
}

func runCmd(args []string) error {
	fs := flags("run")
	seed := fs.Uint64("seed", 0, "the case's seed, as a cases file prints it")
	jsonl := fs.Bool("jsonl", false, "print one cases-file line (index 0)")
	volumes := fs.Bool("volumes", false, "a case of gen --volumes")
	if err := fs.Parse(args); err != nil {
		return err
	}
	c, err := makeCase(context.Background(), *seed, 0, *volumes)
	if err != nil {
		return err
	}
	var out []byte
	if *jsonl {
		out, err = json.Marshal(c)
	} else {
		out, err = json.MarshalIndent(struct {
			Seed  uint64 `json:"seed"`
			Input *Input `json:"input"`
			Want  *Want  `json:"want"`
		}{c.Seed, c.Input, c.Want}, "", "  ")
	}
	if err != nil {
		return err
	}
	_, err = fmt.Printf("%s\n", out)
	return err
}
