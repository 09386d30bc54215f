package main

import (
	"fmt"
	"io"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
)

// preemptStats counts what decided the cases of gen-preempt --volumes: the
// potential nodes' Filter statuses, the candidates' and the nominated
// node's, and which kinds of victims the nominated node's include.
type preemptStats struct {
	total, withVolumes int
	potential          tally // by Filter status (cases, nodes)
	candidates         tally // by the candidate's Filter status
	nominated          map[string]int
	victims            map[string]int // nominated cases with such a victim
	outcome            map[string]int
}

func newPreemptStats() *preemptStats {
	return &preemptStats{
		potential: newTally(), candidates: newTally(),
		nominated: map[string]int{}, victims: map[string]int{}, outcome: map[string]int{},
	}
}

// filterKey names a Filter status by plugin, and for VolumeRestrictions
// by kind of conflict.
func filterKey(s Status) string {
	if s.Plugin == "VolumeRestrictions" && len(s.Reasons) > 0 {
		if strings.Contains(s.Reasons[0], "ReadWriteOncePod") {
			return "VolumeRestrictions (ReadWriteOncePod)"
		}
		return "VolumeRestrictions (disk)"
	}
	return s.Plugin
}

// hasVolumes: the case has storage objects or in-tree disks.
func hasVolumes(in *PreemptInput) bool {
	return len(in.PersistentVolumeClaims) > 0 || slices.ContainsFunc(in.Pod.Spec.Volumes, func(v v1.Volume) bool {
		return needsDiskCheck(v)
	})
}

func needsDiskCheck(v v1.Volume) bool {
	return v.GCEPersistentDisk != nil || v.AWSElasticBlockStore != nil || v.ISCSI != nil || v.RBD != nil
}

// sameDisk: a and b are the same in-tree disk (kind and identity).
func sameDisk(a, b v1.Volume) bool {
	switch {
	case a.GCEPersistentDisk != nil && b.GCEPersistentDisk != nil:
		return a.GCEPersistentDisk.PDName == b.GCEPersistentDisk.PDName
	case a.AWSElasticBlockStore != nil && b.AWSElasticBlockStore != nil:
		return a.AWSElasticBlockStore.VolumeID == b.AWSElasticBlockStore.VolumeID
	case a.ISCSI != nil && b.ISCSI != nil:
		return a.ISCSI.IQN == b.ISCSI.IQN
	case a.RBD != nil && b.RBD != nil:
		return a.RBD.RBDImage == b.RBD.RBDImage && a.RBD.RBDPool == b.RBD.RBDPool
	}
	return false
}

// victimKinds: what the nominated node's victims hold that the pod needs.
func victimKinds(c *PreemptCase) map[string]bool {
	out := map[string]bool{}
	pods := map[string]*v1.Pod{}
	for _, p := range c.Input.Pods {
		pods[podKey(p)] = p
	}
	for _, key := range c.Want.Victims {
		p := pods[key]
		if p == nil {
			continue
		}
		for _, vol := range p.Spec.Volumes {
			switch {
			case vol.PersistentVolumeClaim != nil && vol.PersistentVolumeClaim.ClaimName == "exclusive":
				out["a user of the pod's ReadWriteOncePod claim"] = true
			case vol.PersistentVolumeClaim != nil || vol.Ephemeral != nil:
				out["a pod with claim volumes"] = true
			case needsDiskCheck(vol) && slices.ContainsFunc(c.Input.Pod.Spec.Volumes, func(d v1.Volume) bool { return sameDisk(d, vol) }):
				out["a holder of the pod's in-tree disk"] = true
			}
		}
	}
	return out
}

func (s *preemptStats) add(c *PreemptCase) {
	s.total++
	if !hasVolumes(c.Input) {
		return
	}
	s.withVolumes++
	w := c.Want
	s.outcome[w.PostFilter.Code]++
	status := map[string]Status{}
	for _, n := range w.Nodes {
		status[n.Name] = n.Filter
	}
	count := func(t tally, names []string) {
		seen := map[string]bool{}
		for _, name := range names {
			k := filterKey(status[name])
			t.nodes[k]++
			if !seen[k] {
				seen[k] = true
				t.cases[k]++
			}
		}
	}
	count(s.potential, w.PotentialNodes)
	var cands []string
	for _, cand := range w.Candidates {
		cands = append(cands, cand.Node)
	}
	count(s.candidates, cands)
	if w.NominatedNode == "" {
		return
	}
	s.nominated[filterKey(status[w.NominatedNode])]++
	for k := range victimKinds(c) {
		s.victims[k]++
	}
}

func (s *preemptStats) print(w io.Writer) {
	fmt.Fprintf(w, "oracle: %d of %d preemption cases have volumes; PostFilter:", s.withVolumes, s.total)
	for _, k := range sortedKeys(s.outcome) {
		fmt.Fprintf(w, " %s %d", k, s.outcome[k])
	}
	fmt.Fprintln(w)
	for _, t := range []struct {
		what string
		t    tally
	}{{"potential nodes", s.potential}, {"candidates", s.candidates}} {
		fmt.Fprintf(w, "  %s, by their Filter status (cases, nodes):\n", t.what)
		for _, k := range sortedKeys(t.t.nodes) {
			fmt.Fprintf(w, "    %-40s %5d %6d\n", k, t.t.cases[k], t.t.nodes[k])
		}
	}
	fmt.Fprintln(w, "  nominated nodes, by their Filter status (cases):")
	for _, k := range sortedKeys(s.nominated) {
		fmt.Fprintf(w, "    %-40s %5d\n", k, s.nominated[k])
	}
	fmt.Fprintln(w, "  nominations whose victims include (cases):")
	for _, k := range sortedKeys(s.victims) {
		fmt.Fprintf(w, "    %-44s %5d\n", k, s.victims[k])
	}
}
