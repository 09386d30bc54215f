package main

import (
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"
)

// histogram counts what VolumeBinding decided over the cases of
// gen --volumes: per outcome, the cases where it happens and the nodes
// (PreFilter outcomes count cases only).
type histogram struct {
	cases map[string]int
	nodes map[string]int
	total int
}

func newHistogram() *histogram {
	return &histogram{cases: map[string]int{}, nodes: map[string]int{}}
}

var (
	quoted = regexp.MustCompile(`"[^"]*"`)
	objRef = regexp.MustCompile(`[a-z0-9.-]+/[a-z0-9.-]+`)
)

// outcomes: the case's VolumeBinding outcomes, with how many nodes each.
func outcomes(c *Case) map[string]int {
	out := map[string]int{}
	claims := 0
	for _, v := range c.Input.Pod.Spec.Volumes {
		if v.PersistentVolumeClaim != nil || v.Ephemeral != nil {
			claims++
		}
	}
	if claims == 0 {
		out["no claim (VolumeBinding skips)"] = 0
		return out
	}
	w := c.Want
	if w.PreFilter.Code != "Success" {
		if w.PreFilter.Plugin == "VolumeBinding" {
			out[fmt.Sprintf("PreFilter %s: %s", w.PreFilter.Code, objRef.ReplaceAllString(quoted.ReplaceAllString(strings.Join(w.PreFilter.Reasons, "; "), `"…"`), "…/…"))] = 0
		} else {
			out["PreFilter rejected by another plugin"] = 0
		}
		return out
	}
	reached := false
	for _, n := range w.Nodes {
		switch {
		case n.Filter.Plugin == "VolumeBinding":
			reached = true
			out[fmt.Sprintf("Filter %s: %s", n.Filter.Code, strings.Join(n.Filter.Reasons, " + "))]++
		case n.Filter.Code == "Success":
			reached = true
			static, provision := 0, 0
			for _, d := range n.VolumeDecisions {
				if d.Volume == "" {
					provision++
				} else {
					static++
				}
			}
			switch {
			case static > 0 && provision > 0:
				out["feasible: static binding + provisioning"]++
			case static > 0:
				out["feasible: static binding"]++
			case provision > 0:
				out["feasible: provisioning"]++
			default:
				out["feasible: all claims bound"]++
			}
			if s, ok := n.Scores["VolumeBinding"]; ok && s.Raw > 0 {
				out["scored: VolumeBinding raw > 0"]++
			}
		}
	}
	if !reached {
		out["every node rejected before VolumeBinding"] = 0
	}
	return out
}

func (h *histogram) add(c *Case) {
	h.total++
	for k, n := range outcomes(c) {
		h.cases[k]++
		h.nodes[k] += n
	}
}

func (h *histogram) print(w io.Writer) {
	keys := make([]string, 0, len(h.cases))
	for k := range h.cases {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	fmt.Fprintf(w, "oracle: VolumeBinding outcomes over %d cases (cases, nodes):\n", h.total)
	for _, k := range keys {
		if h.nodes[k] > 0 {
			fmt.Fprintf(w, "  %6d %7d  %s\n", h.cases[k], h.nodes[k], k)
		} else {
			fmt.Fprintf(w, "  %6d %7s  %s\n", h.cases[k], "", k)
		}
	}
}
