package main

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// The stock plugins kscore does not implement. The others (and
// SchedulingGates, PrioritySort, DefaultBinder, which take no part in
// Filter or Score) stay as kube-scheduler enables them.
var disabledPlugins = []string{
	"VolumeBinding", "VolumeRestrictions", "VolumeZone", "NodeVolumeLimits",
	"DynamicResources", "DefaultPreemption",
}

// volumePlugins: the disabled plugins that the cases of gen --volumes and
// gen-preempt --volumes turn on.
var volumePlugins = map[string]bool{
	"VolumeBinding": true, "VolumeRestrictions": true, "VolumeZone": true, "NodeVolumeLimits": true,
}

// The default profile's score plugins and their weights at v1.37.
var scorePluginWeights = []struct {
	name   string
	weight int
}{
	{"TaintToleration", 3}, {"NodeAffinity", 2}, {"NodeResourcesFit", 1},
	{"PodTopologySpread", 2}, {"InterPodAffinity", 2},
	{"NodeResourcesBalancedAllocation", 1}, {"ImageLocality", 1},
}

var topologyKeys = []string{labelHostname, labelZone, labelRegion}

// yamlWriter writes indented YAML lines.
type yamlWriter struct{ b strings.Builder }

func (w *yamlWriter) line(indent int, format string, args ...any) {
	w.b.WriteString(strings.Repeat(" ", indent))
	fmt.Fprintf(&w.b, format, args...)
	w.b.WriteByte('\n')
}

// genProfile is the KubeSchedulerConfiguration for one case: the stock
// profile less the plugins kscore lacks; about half the cases also change
// plugin weights or args. With vr (the cases of gen --volumes),
// VolumeBinding, VolumeZone and VolumeRestrictions stay on, and vr sometimes draws
// VolumeBinding's weight and args; r draws what it draws without vr, so the
// rest of the profile is the same.
func genProfile(r *rand.Rand, vr *rand.Rand) string {
	w := &yamlWriter{}
	w.line(0, "apiVersion: kubescheduler.config.k8s.io/v1")
	w.line(0, "kind: KubeSchedulerConfiguration")
	w.line(0, "profiles:")
	w.line(0, "- schedulerName: kscore-default")
	w.line(2, "percentageOfNodesToScore: 100")
	w.line(2, "plugins:")
	w.line(4, "multiPoint:")
	reweigh := chance(r, 0.15)
	volumeWeight := vr != nil && chance(vr, 0.1)
	if reweigh || volumeWeight {
		w.line(6, "enabled:")
	}
	if reweigh {
		for _, i := range r.Perm(len(scorePluginWeights))[:1+r.IntN(2)] {
			w.line(6, "- name: %s", scorePluginWeights[i].name)
			w.line(8, "weight: %d", 1+r.IntN(10))
		}
	}
	if volumeWeight {
		w.line(6, "- name: VolumeBinding")
		w.line(8, "weight: %d", 1+vr.IntN(10))
	}
	w.line(6, "disabled:")
	for _, name := range disabledPlugins {
		if volumePlugins[name] && vr != nil {
			continue
		}
		w.line(6, "- name: %s", name)
	}

	var args []func()
	if chance(r, 0.35) {
		args = append(args, func() { spreadArgs(w, r) })
	}
	if chance(r, 0.3) {
		args = append(args, func() {
			w.line(2, "- name: InterPodAffinity")
			w.line(4, "args:")
			w.line(6, "hardPodAffinityWeight: %d", pick(r, []int{0, 1, 1, 5, 50, 100, r.IntN(101)}))
			w.line(6, "ignorePreferredTermsOfExistingPods: %t", chance(r, 0.5))
		})
	}
	if chance(r, 0.4) {
		args = append(args, func() { fitArgs(w, r) })
	}
	if chance(r, 0.2) {
		args = append(args, func() {
			w.line(2, "- name: NodeResourcesBalancedAllocation")
			w.line(4, "args:")
			w.line(6, "resources:")
			for _, name := range resourceSubset(r) {
				w.line(6, "- name: %s", name)
				w.line(8, "weight: 1")
			}
		})
	}
	if chance(r, 0.1) {
		args = append(args, func() { nodeAffinityArgs(w, r) })
	}
	if vr != nil && chance(vr, 0.2) {
		args = append(args, func() { volumeBindingArgs(w, vr) })
	}
	if len(args) > 0 {
		w.line(2, "pluginConfig:")
		for _, a := range args {
			a()
		}
	}
	return w.b.String()
}

func spreadArgs(w *yamlWriter, r *rand.Rand) {
	w.line(2, "- name: PodTopologySpread")
	w.line(4, "args:")
	if chance(r, 0.25) {
		w.line(6, "defaultingType: System")
		return
	}
	w.line(6, "defaultingType: List")
	n := r.IntN(3)
	if n == 0 {
		w.line(6, "defaultConstraints: []")
		return
	}
	w.line(6, "defaultConstraints:")
	// (topologyKey, whenUnsatisfiable) pairs must not repeat.
	seen := map[string]bool{}
	for range n {
		key := pick(r, topologyKeys)
		when := pick(r, []string{"ScheduleAnyway", "ScheduleAnyway", "DoNotSchedule"})
		if seen[key+when] {
			continue
		}
		seen[key+when] = true
		w.line(6, "- maxSkew: %d", 1+r.IntN(4))
		w.line(8, "topologyKey: %s", key)
		w.line(8, "whenUnsatisfiable: %s", when)
	}
}

// resourceSubset is a non-empty set of native resources to score on.
// Extended resources are left out: scoring them asks the DRA manager, which
// the oracle does not run.
func resourceSubset(r *rand.Rand) []string {
	all := []string{"cpu", "memory", "ephemeral-storage"}
	var out []string
	for _, name := range all {
		if chance(r, 0.6) {
			out = append(out, name)
		}
	}
	if len(out) == 0 {
		out = append(out, pick(r, all[:2]))
	}
	return out
}

func fitArgs(w *yamlWriter, r *rand.Rand) {
	w.line(2, "- name: NodeResourcesFit")
	w.line(4, "args:")
	if chance(r, 0.15) {
		w.line(6, "ignoredResources: [%s]", extendedResource)
	} else if chance(r, 0.1) {
		w.line(6, "ignoredResourceGroups: [example.com]")
	}
	typ := pick(r, []string{"LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"})
	w.line(6, "scoringStrategy:")
	w.line(8, "type: %s", typ)
	w.line(8, "resources:")
	for _, name := range resourceSubset(r) {
		w.line(8, "- name: %s", name)
		w.line(10, "weight: %d", 1+r.IntN(5))
	}
	if typ != "RequestedToCapacityRatio" {
		return
	}
	w.line(8, "requestedToCapacityRatio:")
	w.line(10, "shape:")
	u := 0
	if chance(r, 0.5) {
		u = r.IntN(40)
	}
	for range 1 + r.IntN(4) {
		w.line(10, "- utilization: %d", u)
		w.line(12, "score: %d", r.IntN(11))
		u += 1 + r.IntN(50)
		if u > 100 {
			break
		}
	}
}

func nodeAffinityArgs(w *yamlWriter, r *rand.Rand) {
	w.line(2, "- name: NodeAffinity")
	w.line(4, "args:")
	w.line(6, "addedAffinity:")
	if chance(r, 0.6) {
		w.line(8, "requiredDuringSchedulingIgnoredDuringExecution:")
		w.line(10, "nodeSelectorTerms:")
		w.line(10, "- matchExpressions:")
		if chance(r, 0.5) {
			w.line(12, "- {key: %s, operator: NotIn, values: [%s]}", labelDisk, pick(r, diskTypes))
		} else {
			w.line(12, "- {key: %s, operator: Exists}", labelZone)
		}
	}
	if chance(r, 0.6) {
		w.line(8, "preferredDuringSchedulingIgnoredDuringExecution:")
		w.line(8, "- weight: %d", 1+r.IntN(100))
		w.line(10, "preference:")
		w.line(12, "matchExpressions:")
		w.line(12, "- {key: %s, operator: In, values: [%s]}", labelDisk, pick(r, diskTypes))
	}
}

// volumeBindingArgs sets VolumeBinding's scoring shape (StorageCapacityScoring
// is on by default at v1.37): utilization 0..100 rising, scores 0..10.
func volumeBindingArgs(w *yamlWriter, r *rand.Rand) {
	w.line(2, "- name: VolumeBinding")
	w.line(4, "args:")
	w.line(6, "bindTimeoutSeconds: %d", pick(r, []int{600, 30}))
	w.line(6, "shape:")
	u := 0
	if chance(r, 0.5) {
		u = r.IntN(40)
	}
	for range 1 + r.IntN(4) {
		w.line(6, "- utilization: %d", u)
		w.line(8, "score: %d", r.IntN(11))
		u += 1 + r.IntN(50)
		if u > 100 {
			break
		}
	}
}
