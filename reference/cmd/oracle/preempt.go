package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"
)

// makePreemptCase generates preemption case seed's input (with volumes, a
// case of gen-preempt --volumes) and upstream's answer for it, computed
// from the input as decoded from its JSON.
func makePreemptCase(ctx context.Context, seed uint64, index int, volumes bool) (*PreemptCase, error) {
	raw, err := json.Marshal(generatePreempt(seed, volumes))
	if err != nil {
		return nil, err
	}
	in := &PreemptInput{}
	if err := json.Unmarshal(raw, in); err != nil {
		return nil, err
	}
	want, err := evaluatePreempt(ctx, in)
	if err != nil {
		return nil, fmt.Errorf("preemption case %d (seed %d): %w", index, seed, err)
	}
	return &PreemptCase{Seed: seed, Index: index, Input: in, Want: want}, nil
}

// genPreempt writes n preemption cases of the run seed as JSON lines; with
// stats, the cases have volumes and stats counts what decided them.
func genPreempt(ctx context.Context, w io.Writer, seed uint64, n int, stats *preemptStats) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	for i := range n {
		c, err := makePreemptCase(ctx, caseSeed(seed, i), i, stats != nil)
		if err != nil {
			return err
		}
		if stats != nil {
			stats.add(c)
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

func genPreemptCmd(args []string) error {
	fs := flags("gen-preempt")
	seed := fs.Uint64("seed", 1, "the run's seed")
	n := fs.Int("cases", 100, "how many cases")
	out := fs.String("out", "", "the cases file (default: standard output)")
	volumes := fs.Bool("volumes", false, "cases with volumes, the volume plugins on")
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
	var stats *preemptStats
	if *volumes {
		stats = newPreemptStats()
	}
	if err := genPreempt(context.Background(), w, *seed, *n, stats); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "oracle: %d preemption cases (seed %d) in %.1fs\n", *n, *seed, time.Since(start).Seconds())
	if stats != nil {
		stats.print(os.Stderr)
	}
	return nil
}

func runPreemptCmd(args []string) error {
	fs := flags("run-preempt")
	seed := fs.Uint64("seed", 0, "the case's seed, as a cases file prints it")
	jsonl := fs.Bool("jsonl", false, "print one cases-file line (index 0)")
	volumes := fs.Bool("volumes", false, "a case of gen-preempt --volumes")
	if err := fs.Parse(args); err != nil {
		return err
	}
	c, err := makePreemptCase(context.Background(), *seed, 0, *volumes)
	if err != nil {
		return err
	}
	var out []byte
	if *jsonl {
		out, err = json.Marshal(c)
	} else {
		out, err = json.MarshalIndent(struct {
			Seed  uint64        `json:"seed"`
			Input *PreemptInput `json:"input"`
			Want  *PreemptWant  `json:"want"`
		}{c.Seed, c.Input, c.Want}, "", "  ")
	}
	if err != nil {
		return err
	}
	_, err = fmt.Printf("%s\n", out)
	return err
}
