package main

import (
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"

	v1 "k8s.io/api/core/v1"
)

// histogram counts what VolumeBinding and VolumeZone decided over the
// cases of gen --volumes: per outcome, the cases where it happens and the
// nodes (PreFilter outcomes count cases only).
type histogram struct {
	binding, zone tally
	total         int
}

type tally struct{ cases, nodes map[string]int }

func newTally() tally { return tally{cases: map[string]int{}, nodes: map[string]int{}} }

func newHistogram() *histogram {
	return &histogram{binding: newTally(), zone: newTally()}
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

// The filter plugins of the volume cases' profile that run after
// VolumeZone: a node they reject passed it.
var afterVolumeZone = map[string]bool{
	"PodTopologySpread": true, "InterPodAffinity": true, "NodeDeclaredFeatures": true,
}

// zoneFeatures: what the topology labels VolumeZone reads on the volumes
// bound to the pod's persistentVolumeClaim volumes hold ("beta key",
// "multi-zone value", "region"); nil when none has one.
func zoneFeatures(in *Input) []string {
	claims := map[string]*v1.PersistentVolumeClaim{}
	for _, c := range in.PersistentVolumeClaims {
		claims[c.Name] = c
	}
	volumes := map[string]*v1.PersistentVolume{}
	for _, pv := range in.PersistentVolumes {
		volumes[pv.Name] = pv
	}
	seen := map[string]bool{}
	for _, v := range in.Pod.Spec.Volumes {
		if v.PersistentVolumeClaim == nil || claims[v.PersistentVolumeClaim.ClaimName] == nil {
			continue
		}
		pv := volumes[claims[v.PersistentVolumeClaim.ClaimName].Spec.VolumeName]
		if pv == nil {
			continue
		}
		for _, k := range topologyLabels {
			value, ok := pv.Labels[k]
			if !ok {
				continue
			}
			seen["zone label"] = true
			seen["beta key"] = seen["beta key"] || strings.HasPrefix(k, "failure-domain.beta.")
			seen["multi-zone value"] = seen["multi-zone value"] || strings.Contains(value, "__")
			seen["region"] = seen["region"] || strings.HasSuffix(k, "/region")
		}
	}
	var out []string
	for k, ok := range seen {
		if ok {
			out = append(out, k)
		}
	}
	return out
}

var topologyLabels = []string{
	v1.LabelFailureDomainBetaZone, v1.LabelFailureDomainBetaRegion, labelZone, labelRegion,
}

func hasTopologyLabel(n *v1.Node) bool {
	for _, k := range topologyLabels {
		if _, ok := n.Labels[k]; ok {
			return true
		}
	}
	return false
}

// zoneOutcomes: the case's VolumeZone outcomes, with how many nodes each.
func zoneOutcomes(c *Case) map[string]int {
	out := map[string]int{}
	pvcs := 0
	for _, v := range c.Input.Pod.Spec.Volumes {
		if v.PersistentVolumeClaim != nil {
			pvcs++
		}
	}
	if pvcs == 0 {
		out["no persistentVolumeClaim volume (VolumeZone skips)"] = 0
		return out
	}
	w := c.Want
	if w.PreFilter.Code != "Success" {
		if w.PreFilter.Plugin == "VolumeZone" {
			out[fmt.Sprintf("PreFilter %s: %s", w.PreFilter.Code, quoted.ReplaceAllString(strings.Join(w.PreFilter.Reasons, "; "), `"…"`))] = 0
		} else {
			out["PreFilter rejected by another plugin"] = 0
		}
		return out
	}
	features := zoneFeatures(c.Input)
	zoned := len(features) > 0
	if !zoned {
		out["no bound volume with zone labels (VolumeZone skips)"] = 0
	}
	nodes := map[string]*v1.Node{}
	for _, n := range c.Input.Nodes {
		nodes[n.Name] = n
	}
	reached := false
	for _, n := range w.Nodes {
		switch {
		case n.Filter.Plugin == "VolumeZone":
			reached = true
			out[fmt.Sprintf("Filter %s: %s", n.Filter.Code, strings.Join(n.Filter.Reasons, " + "))]++
		case !zoned:
		case n.Filter.Code == "Success" || afterVolumeZone[n.Filter.Plugin]:
			reached = true
			if hasTopologyLabel(nodes[n.Name]) {
				out["passed: node's zone labels match"]++
			} else {
				out["passed: node has no zone label"]++
			}
		}
	}
	if zoned && !reached {
		out["every node rejected before VolumeZone"] = 0
	}
	if reached {
		for _, f := range features {
			out["reached, volume has: "+f] = 0
		}
	}
	return out
}

func (h *histogram) add(c *Case) {
	h.total++
	h.binding.add(outcomes(c))
	h.zone.add(zoneOutcomes(c))
}

func (t tally) add(outcomes map[string]int) {
	for k, n := range outcomes {
		t.cases[k]++
		t.nodes[k] += n
	}
}

func (h *histogram) print(w io.Writer) {
	h.binding.print(w, fmt.Sprintf("oracle: VolumeBinding outcomes over %d cases (cases, nodes):", h.total))
	h.zone.print(w, fmt.Sprintf("oracle: VolumeZone outcomes over %d cases (cases, nodes):", h.total))
}

func (t tally) print(w io.Writer, title string) {
	keys := make([]string, 0, len(t.cases))
	for k := range t.cases {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	fmt.Fprintln(w, title)
	for _, k := range keys {
		if t.nodes[k] > 0 {
			fmt.Fprintf(w, "  %6d %7d  %s\n", t.cases[k], t.nodes[k], k)
		} else {
			fmt.Fprintf(w, "  %6d %7s  %s\n", t.cases[k], "", k)
		}
	}
}
