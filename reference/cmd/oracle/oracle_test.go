package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	featuregatetesting "k8s.io/component-base/featuregate/testing"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	podutil "k8s.io/kubernetes/pkg/api/pod"
	"k8s.io/kubernetes/pkg/apis/core"
	_ "k8s.io/kubernetes/pkg/apis/core/install"
	corevalidation "k8s.io/kubernetes/pkg/apis/core/validation"
	"k8s.io/kubernetes/pkg/apis/policy"
	_ "k8s.io/kubernetes/pkg/apis/policy/install"
	policyvalidation "k8s.io/kubernetes/pkg/apis/policy/validation"
	"k8s.io/kubernetes/pkg/features"
	"k8s.io/kubernetes/pkg/scheduler/metrics"
	st "k8s.io/kubernetes/pkg/scheduler/testing"
)

func TestMain(m *testing.M) {
	metrics.Register()
	// Config defaulting logs through the global logger; tests log through
	// their own context.
	klog.SetOutput(io.Discard)
	klog.LogToStderr(false)
	os.Exit(m.Run())
}

// The generator's profile when it varies nothing.
const stockProfile = `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: kscore-default
  percentageOfNodesToScore: 100
  plugins:
    multiPoint:
      disabled:
      - name: VolumeBinding
      - name: VolumeRestrictions
      - name: VolumeZone
      - name: NodeVolumeLimits
      - name: DynamicResources
      - name: DefaultPreemption
`

var capacity = map[v1.ResourceName]string{"cpu": "4", "memory": "8Gi", "pods": "110"}

func zoneNode(name, zone string) *v1.Node {
	return st.MakeNode().Name(name).Label(labelHostname, name).Label(labelZone, zone).Capacity(capacity).Obj()
}

func runningPod(name, node string) *st.PodWrapper {
	return st.MakePod().Name(name).Namespace("default").UID(name).Node(node).Phase(v1.PodRunning).
		Container("registry.k8s.io/pause:3.10").Req(map[v1.ResourceName]string{"cpu": "1", "memory": "1Gi"})
}

func emptyInput() *Input {
	return &Input{
		Pods: []*v1.Pod{}, Services: []*v1.Service{}, ReplicaSets: []*appsv1.ReplicaSet{},
		StatefulSets: []*appsv1.StatefulSet{}, ReplicationControllers: []*v1.ReplicationController{},
		Namespaces: []*v1.Namespace{{ObjectMeta: metav1.ObjectMeta{Name: "default", Labels: map[string]string{v1.LabelMetadataName: "default"}}}},
		Profile:    stockProfile,
	}
}

func evaluateJSON(t *testing.T, in *Input) string {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	want, err := evaluate(ctx, in)
	if err != nil {
		t.Fatalf("evaluate: %v", err)
	}
	out, err := json.MarshalIndent(want, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

func checkJSON(t *testing.T, got, want string) {
	t.Helper()
	var compact bytes.Buffer
	if err := json.Compact(&compact, []byte(want)); err != nil {
		t.Fatalf("the expected JSON: %v", err)
	}
	var gotCompact bytes.Buffer
	if err := json.Compact(&gotCompact, []byte(got)); err != nil {
		t.Fatal(err)
	}
	if gotCompact.String() != compact.String() {
		t.Errorf("upstream answers\n%s\nthe test expects\n%s", got, want)
	}
}

// One case whose answer is known: a hard zone spread constraint rejects
// zone-a (two web pods there, one in zone-b), an existing pod's required
// anti-affinity rejects n4, and the pod's node affinity by name leaves n5
// out in PreFilter. Only n3 is left, and it is scored.
func TestKnownAnswer(t *testing.T) {
	in := emptyInput()
	in.Nodes = []*v1.Node{
		zoneNode("n1", "zone-a"), zoneNode("n2", "zone-a"),
		zoneNode("n3", "zone-b"), zoneNode("n4", "zone-b"), zoneNode("n5", "zone-c"),
	}
	web := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
	in.Pods = []*v1.Pod{
		runningPod("web-1", "n1").Label("app", "web").Obj(),
		runningPod("web-2", "n2").Label("app", "web").Obj(),
		runningPod("web-3", "n3").Label("app", "web").Obj(),
		runningPod("guard", "n4").Label("app", "guard").
			PodAntiAffinity(labelHostname, web, st.PodAntiAffinityWithRequiredReq).Obj(),
	}
	in.Pod = st.MakePod().Name("incoming").Namespace("default").UID("incoming").Label("app", "web").
		Container("registry.k8s.io/pause:3.10").Req(map[v1.ResourceName]string{"cpu": "1", "memory": "1Gi"}).
		SpreadConstraint(1, labelZone, v1.DoNotSchedule, web, nil, nil, nil, nil).
		NodeAffinity(&v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: st.MakeNodeSelector().
			In(metav1.ObjectNameField, []string{"n1"}, st.NodeSelectorTypeMatchFields).
			In(metav1.ObjectNameField, []string{"n2"}, st.NodeSelectorTypeMatchFields).
			In(metav1.ObjectNameField, []string{"n3"}, st.NodeSelectorTypeMatchFields).
			In(metav1.ObjectNameField, []string{"n4"}, st.NodeSelectorTypeMatchFields).Obj()}).Obj()

	checkJSON(t, evaluateJSON(t, in), `{
  "preFilter": {"code": "Success", "plugin": "", "reasons": []},
  "nodes": [
    {"name": "n1", "filter": {"code": "Unschedulable", "plugin": "PodTopologySpread",
      "reasons": ["node(s) didn't match pod topology spread constraints"]}},
    {"name": "n2", "filter": {"code": "Unschedulable", "plugin": "PodTopologySpread",
      "reasons": ["node(s) didn't match pod topology spread constraints"]}},
    {"name": "n3", "filter": {"code": "Success", "plugin": "", "reasons": []},
      "scores": {
        "ImageLocality": {"raw": 0, "normalized": 0},
        "NodeResourcesBalancedAllocation": {"raw": 72, "normalized": 72},
        "NodeResourcesFit": {"raw": 57, "normalized": 57},
        "TaintToleration": {"raw": 0, "normalized": 100}}},
    {"name": "n4", "filter": {"code": "Unschedulable", "plugin": "InterPodAffinity",
      "reasons": ["node(s) didn't satisfy existing pods anti-affinity rules"]}},
    {"name": "n5", "filter": {"code": "UnschedulableAndUnresolvable", "plugin": "NodeAffinity",
      "reasons": ["node(s) didn't satisfy plugin(s) [NodeAffinity]"]}}
  ],
  "skipped": ["InterPodAffinity", "NodeAffinity", "PodTopologySpread"],
  "weights": {"ImageLocality": 1, "InterPodAffinity": 2, "NodeAffinity": 2,
    "NodeResourcesBalancedAllocation": 1, "NodeResourcesFit": 1, "PodTopologySpread": 2, "TaintToleration": 3}
}`)
}

// spec.nodeName and node affinity by name that name different nodes leave
// none: PreFilter fails, in no plugin's name (the framework's own status).
func TestPreFilterFails(t *testing.T) {
	in := emptyInput()
	in.Nodes = []*v1.Node{zoneNode("n1", "zone-a"), zoneNode("n2", "zone-a")}
	in.Pod = st.MakePod().Name("incoming").Namespace("default").UID("incoming").Node("n1").
		Container("registry.k8s.io/pause:3.10").
		NodeAffinityIn(metav1.ObjectNameField, []string{"n2"}, st.NodeSelectorTypeMatchFields).Obj()
	checkJSON(t, evaluateJSON(t, in), `{
  "preFilter": {"code": "UnschedulableAndUnresolvable", "plugin": "",
    "reasons": ["node(s) didn't satisfy plugin(s) [NodeAffinity NodeName] simultaneously"]},
  "nodes": [], "skipped": [],
  "weights": {"ImageLocality": 1, "InterPodAffinity": 2, "NodeAffinity": 2,
    "NodeResourcesBalancedAllocation": 1, "NodeResourcesFit": 1, "PodTopologySpread": 2, "TaintToleration": 3}
}`)
}

func genBytes(t *testing.T, seed uint64, n int) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := gen(context.Background(), &b, seed, n, nil); err != nil {
		t.Fatalf("gen: %v", err)
	}
	return b.Bytes()
}

// The same seed gives the same bytes, and `run` remakes any case from the
// seed the case prints.
func TestDeterministic(t *testing.T) {
	const n = 25
	first, second := genBytes(t, 42, n), genBytes(t, 42, n)
	if !bytes.Equal(first, second) {
		t.Fatal("two runs with seed 42 differ")
	}
	lines := bytes.Split(bytes.TrimSpace(first), []byte("\n"))
	if len(lines) != n {
		t.Fatalf("%d lines, want %d", len(lines), n)
	}
	if bytes.Equal(genBytes(t, 43, 1), lines[0]) {
		t.Error("seeds 42 and 43 make the same first case")
	}
	var c struct {
		Seed uint64 `json:"seed"`
	}
	if err := json.Unmarshal(lines[7], &c); err != nil {
		t.Fatal(err)
	}
	again, err := makeCase(context.Background(), c.Seed, 7, false)
	if err != nil {
		t.Fatal(err)
	}
	line, err := json.Marshal(again)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(line, lines[7]) {
		t.Errorf("case 7 remade from its seed %d differs from the generated one", c.Seed)
	}
}

// compare passes kscore's answers that are upstream's, and reports a
// changed score, a missing case and an unknown one.
func TestCompare(t *testing.T) {
	dir := t.TempDir()
	cases := filepath.Join(dir, "cases.jsonl")
	if err := os.WriteFile(cases, genBytes(t, 5, 12), 0o644); err != nil {
		t.Fatal(err)
	}
	var got []map[string]any
	err := eachLine(cases, func(_ int, line []byte) error {
		var c map[string]any
		if err := json.Unmarshal(line, &c); err != nil {
			return err
		}
		// Half the answers in each form compare accepts.
		if len(got)%2 == 0 {
			got = append(got, map[string]any{"index": c["index"], "want": c["want"]})
		} else {
			w := c["want"].(map[string]any)
			w["index"] = c["index"]
			got = append(got, w)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	write := func(answers []map[string]any) string {
		var b bytes.Buffer
		for _, a := range answers {
			line, err := json.Marshal(a)
			if err != nil {
				t.Fatal(err)
			}
			b.Write(line)
			b.WriteByte('\n')
		}
		path := filepath.Join(dir, "got.jsonl")
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	run := func(answers []map[string]any) (string, error) {
		var out bytes.Buffer
		err := compareCmd([]string{"--cases", cases, "--got", write(answers)}, &out)
		return out.String(), err
	}

	out, err := run(got)
	if err != nil || !strings.HasSuffix(out, "oracle: 12 cases, 12 matched\n") {
		t.Fatalf("upstream's own answers: %v\n%s", err, out)
	}

	// Change one score of one feasible node.
	changed := false
	for _, a := range got {
		w := a
		if inner, ok := a["want"].(map[string]any); ok {
			w = inner
		}
		for _, n := range w["nodes"].([]any) {
			scores, ok := n.(map[string]any)["scores"].(map[string]any)
			if !ok || changed {
				continue
			}
			s := scores["TaintToleration"].(map[string]any)
			s["normalized"] = s["normalized"].(float64) + 1
			changed = true
		}
	}
	if !changed {
		t.Fatal("no case has a feasible node")
	}
	out, err = run(got)
	if !errors.Is(err, errMismatch) || !strings.Contains(out, ".scores.TaintToleration: want {") ||
		!strings.Contains(out, "  input: {") || !strings.HasSuffix(out, "oracle: 12 cases, 11 matched\n") {
		t.Errorf("a changed score: %v\n%s", err, out)
	}

	got[0]["index"] = 99
	out, err = run(got[:len(got)-1])
	if !errors.Is(err, errMismatch) || !strings.Contains(out, "no answer for this case") ||
		!strings.Contains(out, "an answer for case 99") {
		t.Errorf("missing and unknown cases: %v\n%s", err, out)
	}
}

// A Filter error on a node fails upstream's cycle: kscore's answer for the
// cycle (the driver's preFilter error) matches when some node erred with
// its plugin and message.
func TestCompareFilterErrorFailsTheCycle(t *testing.T) {
	want := Want{
		PreFilter: Status{Code: "Success"},
		Nodes: []NodeResult{
			{Name: "n1", Filter: Status{Code: "Unschedulable", Plugin: "NodeVolumeLimits", Reasons: []string{"x"}}},
			{Name: "n2", Filter: Status{Code: "Error", Plugin: "NodeVolumeLimits",
				Reasons: []string{`running "NodeVolumeLimits" filter plugin: boom`}}},
		},
	}
	got := Want{PreFilter: Status{Code: "Error", Reasons: []string{`scorer: plugin "NodeVolumeLimits": boom`}}}
	if d := diffWant(want, got); len(d) != 0 {
		t.Errorf("the cycle's error: %v", d)
	}
	got.PreFilter.Reasons[0] = `scorer: plugin "NodeVolumeLimits": other`
	if d := diffWant(want, got); len(d) == 0 {
		t.Error("another message matched")
	}
	want.Nodes[1].Filter.Code = "Unschedulable"
	got.PreFilter.Reasons[0] = `scorer: plugin "NodeVolumeLimits": boom`
	if d := diffWant(want, got); len(d) == 0 {
		t.Error("an error matched where upstream has none")
	}
}

// The generated pods and nodes, with and without --volumes, are ones the
// API server accepts (defaulted and validated as it does), with the alpha
// gates on that two of the specs NodeDeclaredFeatures reads need.
func TestGeneratedObjectsAreValid(t *testing.T) {
	featuregatetesting.SetFeatureGatesDuringTest(t, utilfeature.DefaultFeatureGate, featuregatetesting.FeatureOverrides{
		features.UserNamespacesHostNetworkSupport: true,
		features.VolumeBindMountOptions:           true,
	})
	for i := range 300 {
		seed := caseSeed(3, i/2)
		in := generate(seed, i%2 == 1) // with --volumes: the pod's claim volumes
		for _, p := range append(slices.Clone(in.Pods), in.Pod) {
			p = p.DeepCopy()
			legacyscheme.Scheme.Default(p)
			internal := &core.Pod{}
			if err := legacyscheme.Scheme.Convert(p, internal, nil); err != nil {
				t.Fatal(err)
			}
			opts := podutil.GetValidationOptionsFromPodSpecAndMeta(&internal.Spec, nil, &internal.ObjectMeta, nil)
			if errs := corevalidation.ValidatePodCreate(internal, opts); len(errs) > 0 {
				t.Errorf("seed %d: pod %s: %v", seed, p.Name, errs.ToAggregate())
			}
		}
		for _, n := range in.Nodes {
			n = n.DeepCopy()
			legacyscheme.Scheme.Default(n)
			internal := &core.Node{}
			if err := legacyscheme.Scheme.Convert(n, internal, nil); err != nil {
				t.Fatal(err)
			}
			if errs := corevalidation.ValidateNode(internal); len(errs) > 0 {
				t.Errorf("seed %d: node %s: %v", seed, n.Name, errs.ToAggregate())
			}
		}
	}
}

func BenchmarkCase(b *testing.B) {
	ctx := context.Background()
	for i := 0; b.Loop(); i++ {
		if _, err := makeCase(ctx, caseSeed(1, i), i, false); err != nil {
			b.Fatal(err)
		}
	}
}

// The generator's preemption profile when it sets no args: the stock one
// with DefaultPreemption on.
const preemptStockProfile = `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: kscore-default
  percentageOfNodesToScore: 100
  plugins:
    multiPoint:
      disabled:
      - name: VolumeBinding
      - name: VolumeRestrictions
      - name: VolumeZone
      - name: NodeVolumeLimits
      - name: DynamicResources
`

func emptyPreemptInput() *PreemptInput {
	in := &PreemptInput{Input: *emptyInput(), PodDisruptionBudgets: []*policyv1.PodDisruptionBudget{}}
	in.Profile = preemptStockProfile
	return in
}

// victim is a running pod of priority prio, started `start` hours after
// the origin, requesting cpu cores.
func victim(name, node string, prio int32, start int64, cpu string) *st.PodWrapper {
	return st.MakePod().Name(name).Namespace("default").UID(name).Node(node).Phase(v1.PodRunning).
		Priority(prio).StartTime(metav1.Unix(1767225600+3600*start, 0)).
		Container("registry.k8s.io/pause:3.10").Req(map[v1.ResourceName]string{"cpu": cpu, "memory": "1Gi"})
}

func preemptor(prio int32, cpu string) *st.PodWrapper {
	return st.MakePod().Name("incoming").Namespace("default").UID("incoming").Priority(prio).
		Container("registry.k8s.io/pause:3.10").Req(map[v1.ResourceName]string{"cpu": cpu, "memory": "1Gi"})
}

func evaluatePreemptT(t *testing.T, in *PreemptInput) *PreemptWant {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	want, err := evaluatePreempt(ctx, in)
	if err != nil {
		t.Fatalf("evaluatePreempt: %v", err)
	}
	return want
}

// n1 (4 cpu) runs a and b (priority 10, a older), c (100) and d (1000),
// 1 cpu each; the pod (priority 500) needs 2. Removing a, b and c makes it
// fit; reprieving by importance (c, then a, then b) keeps c only: the
// victims are a and b. n2 runs only pods of higher priority: no victims.
func TestPreemptMinimalVictims(t *testing.T) {
	in := emptyPreemptInput()
	in.Nodes = []*v1.Node{zoneNode("n1", "zone-a"), zoneNode("n2", "zone-a")}
	in.Pods = []*v1.Pod{
		victim("a", "n1", 10, 1, "1").Obj(), victim("b", "n1", 10, 2, "1").Obj(),
		victim("c", "n1", 100, 3, "1").Obj(), victim("d", "n1", 1000, 4, "1").Obj(),
		victim("e", "n2", 1000, 5, "2").Obj(), victim("f", "n2", 2000, 6, "2").Obj(),
	}
	in.Pod = preemptor(500, "2").Obj()
	got := evaluatePreemptT(t, in)
	out, err := json.MarshalIndent(struct {
		PostFilter    PostFilterStatus   `json:"postFilter"`
		NominatedNode string             `json:"nominatedNode"`
		Victims       []string           `json:"victims"`
		Potential     []string           `json:"potentialNodes"`
		All           bool               `json:"allConsidered"`
		Candidates    []PreemptCandidate `json:"candidates"`
		Tied          []string           `json:"tied"`
	}{got.PostFilter, got.NominatedNode, got.Victims, got.PotentialNodes, got.AllConsidered, got.Candidates, got.Tied}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	checkJSON(t, string(out), `{
  "postFilter": {"code": "Success", "plugin": "",
    "message": "preemption: found a potential placement for pod on node n1, preempting 2 victims"},
  "nominatedNode": "n1", "victims": ["default/a", "default/b"],
  "potentialNodes": ["n1", "n2"], "allConsidered": true,
  "candidates": [{"node": "n1", "victims": ["default/a", "default/b"], "pdbViolations": 0,
    "highestPriority": 10, "sumPriorities": 4294967316, "numVictims": 2,
    "earliestStartOfHighest": "2026-01-01T01:00:00Z"}],
  "tied": ["n1"]
}`)
}

// x on n1 and y on n2 each block the pod. Without PDBs n1 wins (x's
// priority 0 is below y's 10), but a PDB that allows no disruption covers
// x: n2 is chosen, and x is spared.
func TestPreemptSparesPDBProtectedPod(t *testing.T) {
	in := emptyPreemptInput()
	in.Nodes = []*v1.Node{zoneNode("n1", "zone-a"), zoneNode("n2", "zone-a")}
	in.Pods = []*v1.Pod{
		victim("x", "n1", 0, 1, "2").Label("app", "db").Obj(), victim("h1", "n1", 1000, 2, "2").Obj(),
		victim("y", "n2", 10, 3, "2").Label("app", "web").Obj(), victim("h2", "n2", 1000, 4, "2").Obj(),
	}
	in.Pod = preemptor(500, "2").Obj()
	pdb := st.MakePDB().Name("db").Namespace("default").MatchLabel("app", "db").MinAvailable("1").DisruptionsAllowed(0).Obj()
	pdb.TypeMeta = metav1.TypeMeta{APIVersion: "policy/v1", Kind: "PodDisruptionBudget"}

	if got := evaluatePreemptT(t, in); got.NominatedNode != "n1" || !slices.Equal(got.Victims, []string{"default/x"}) {
		t.Errorf("without the PDB: nominated %q, victims %v; want n1, [default/x]", got.NominatedNode, got.Victims)
	}
	in.PodDisruptionBudgets = []*policyv1.PodDisruptionBudget{pdb}
	got := evaluatePreemptT(t, in)
	if got.NominatedNode != "n2" || !slices.Equal(got.Victims, []string{"default/y"}) || !slices.Equal(got.Tied, []string{"n2"}) {
		t.Errorf("with the PDB: nominated %q, victims %v, tied %v; want n2, [default/y], [n2]", got.NominatedNode, got.Victims, got.Tied)
	}
	if len(got.Candidates) != 2 || got.Candidates[0].PDBViolations != 1 || got.Candidates[1].PDBViolations != 0 {
		t.Errorf("candidates %s; want n1 with 1 PDB violation, n2 with none", js(got.Candidates))
	}
}

// A pod with preemptionPolicy Never does not preempt: upstream's message,
// no candidates.
func TestPreemptNever(t *testing.T) {
	in := emptyPreemptInput()
	in.Nodes = []*v1.Node{zoneNode("n1", "zone-a")}
	in.Pods = []*v1.Pod{victim("a", "n1", 0, 1, "4").Obj()}
	in.Pod = preemptor(500, "2").PreemptionPolicy(v1.PreemptNever).Obj()
	got := evaluatePreemptT(t, in)
	want := PostFilterStatus{Code: "Unschedulable", Plugin: "DefaultPreemption", Message: "preemption: not eligible due to preemptionPolicy=Never."}
	if got.PostFilter != want || got.NominatedNode != "" || len(got.Victims) != 0 || len(got.Candidates) != 0 {
		t.Errorf("got %s", js(got))
	}
}

// No node helps: n1 fails on a taint (not a potential node), n2 runs only
// pods of higher priority. Upstream's FitError wording.
func TestPreemptNoCandidate(t *testing.T) {
	in := emptyPreemptInput()
	tainted := zoneNode("n1", "zone-a")
	tainted.Spec.Taints = []v1.Taint{{Key: "dedicated", Value: "batch", Effect: v1.TaintEffectNoSchedule}}
	in.Nodes = []*v1.Node{tainted, zoneNode("n2", "zone-a")}
	in.Pods = []*v1.Pod{victim("a", "n2", 1000, 1, "4").Obj()}
	in.Pod = preemptor(500, "2").Obj()
	got := evaluatePreemptT(t, in)
	want := PostFilterStatus{Code: "Unschedulable", Plugin: "DefaultPreemption",
		Message: "preemption: 0/2 nodes are available: 1 No preemption victims found for incoming pod, 1 Preemption is not helpful for scheduling."}
	if got.PostFilter != want || got.NominatedNode != "" || !slices.Equal(got.PotentialNodes, []string{"n2"}) {
		t.Errorf("got %s", js(got))
	}
}

func genPreemptBytes(t *testing.T, seed uint64, n int, volumes bool) []byte {
	t.Helper()
	var b bytes.Buffer
	var stats *preemptStats
	if volumes {
		stats = newPreemptStats()
	}
	if err := genPreempt(context.Background(), &b, seed, n, stats); err != nil {
		t.Fatalf("genPreempt: %v", err)
	}
	return b.Bytes()
}

// The same seed gives the same preemption cases, with and without volumes,
// and run-preempt remakes one from its seed.
func TestPreemptDeterministic(t *testing.T) {
	const n = 40
	for _, volumes := range []bool{false, true} {
		first, second := genPreemptBytes(t, 42, n, volumes), genPreemptBytes(t, 42, n, volumes)
		if !bytes.Equal(first, second) {
			t.Fatalf("two runs with seed 42 (volumes %t) differ", volumes)
		}
		lines := bytes.Split(bytes.TrimSpace(first), []byte("\n"))
		if len(lines) != n {
			t.Fatalf("%d lines, want %d", len(lines), n)
		}
		if bytes.Equal(genPreemptBytes(t, 43, 1, volumes), lines[0]) {
			t.Error("seeds 42 and 43 make the same first case")
		}
		var c struct {
			Seed uint64 `json:"seed"`
		}
		if err := json.Unmarshal(lines[9], &c); err != nil {
			t.Fatal(err)
		}
		again, err := makePreemptCase(context.Background(), c.Seed, 9, volumes)
		if err != nil {
			t.Fatal(err)
		}
		line, err := json.Marshal(again)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(line, lines[9]) {
			t.Errorf("case 9 remade from its seed %d (volumes %t) differs from the generated one", c.Seed, volumes)
		}
	}
}

// compare-preempt passes upstream's own answers and another node of a tie
// (with its victims), and fails a candidate outside the tie, wrong victims,
// and a wrong failure message.
func TestComparePreempt(t *testing.T) {
	dir := t.TempDir()
	casesPath := filepath.Join(dir, "cases.jsonl")
	if err := os.WriteFile(casesPath, genPreemptBytes(t, 1, 150, false), 0o644); err != nil {
		t.Fatal(err)
	}
	var cases []storedPreemptCase
	if err := eachLine(casesPath, func(_ int, line []byte) error {
		var c storedPreemptCase
		cases = append(cases, c)
		return json.Unmarshal(line, &cases[len(cases)-1])
	}); err != nil {
		t.Fatal(err)
	}
	answers := func() map[int]*PreemptAnswer {
		got := map[int]*PreemptAnswer{}
		for _, c := range cases {
			got[c.Index] = &PreemptAnswer{PostFilter: c.Want.PostFilter, NominatedNode: c.Want.NominatedNode, Victims: c.Want.Victims}
		}
		return got
	}
	run := func(got map[int]*PreemptAnswer) (string, error) {
		var out bytes.Buffer
		err := comparePreempt(&out, cases, got, nil, 0)
		return out.String(), err
	}
	if out, err := run(answers()); err != nil {
		t.Fatalf("upstream's own answers: %v\n%s", err, out)
	}
	candidate := func(c *storedPreemptCase, node string) PreemptCandidate {
		return c.Want.Candidates[slices.IndexFunc(c.Want.Candidates, func(x PreemptCandidate) bool { return x.Node == node })]
	}
	var tie, outside, failed *storedPreemptCase
	for i := range cases {
		c := &cases[i]
		w := &c.Want
		switch {
		case w.AllConsidered && len(w.Tied) > 1 && tie == nil:
			tie = c
		case w.AllConsidered && len(w.Tied) == 1 && len(w.Candidates) > 1 && outside == nil:
			outside = c
		case w.PostFilter.Code != "Success" && failed == nil:
			failed = c
		}
	}
	if tie == nil || outside == nil || failed == nil {
		t.Fatalf("no case with a tie (%v), a candidate outside the tie (%v) or a failure (%v)", tie != nil, outside != nil, failed != nil)
	}

	got := answers()
	other := candidate(tie, tie.Want.Tied[1])
	got[tie.Index] = &PreemptAnswer{NominatedNode: other.Node, Victims: other.Victims,
		PostFilter: PostFilterStatus{Code: "Success", Message: successMessage(other.Node, other.NumVictims)}}
	if out, err := run(got); err != nil {
		t.Errorf("another tied node: %v\n%s", err, out)
	}

	worse := outside.Want.Candidates[slices.IndexFunc(outside.Want.Candidates, func(x PreemptCandidate) bool { return x.Node != outside.Want.NominatedNode })]
	got[outside.Index] = &PreemptAnswer{NominatedNode: worse.Node, Victims: worse.Victims,
		PostFilter: PostFilterStatus{Code: "Success", Message: successMessage(worse.Node, worse.NumVictims)}}
	out, err := run(got)
	if !errors.Is(err, errMismatch) || !strings.Contains(out, "is a candidate but not among the best") {
		t.Errorf("a candidate outside the tie: %v\n%s", err, out)
	}

	got = answers()
	best := candidate(outside, outside.Want.NominatedNode)
	got[outside.Index].Victims = append(slices.Clone(best.Victims), "default/nobody")
	out, err = run(got)
	if !errors.Is(err, errMismatch) || !strings.Contains(out, "victims on "+best.Node) {
		t.Errorf("an extra victim: %v\n%s", err, out)
	}

	got = answers()
	got[failed.Index].PostFilter.Message += " "
	out, err = run(got)
	if !errors.Is(err, errMismatch) || !strings.Contains(out, "postFilter.message") || !strings.HasSuffix(out, "oracle: 150 preemption cases, 149 matched\n") {
		t.Errorf("a changed failure message: %v\n%s", err, out)
	}
}

// The preemption generator's pods, nodes and PDBs, and with --volumes its
// storage objects, are ones the API server accepts.
func TestGeneratedPreemptObjectsAreValid(t *testing.T) {
	for i := range 300 {
		seed := caseSeed(3, i/2)
		in := generatePreempt(seed, i%2 == 1)
		validateStorage(t, &in.Input)
		for _, p := range append(slices.Clone(in.Pods), in.Pod) {
			p = p.DeepCopy()
			legacyscheme.Scheme.Default(p)
			internal := &core.Pod{}
			if err := legacyscheme.Scheme.Convert(p, internal, nil); err != nil {
				t.Fatal(err)
			}
			opts := podutil.GetValidationOptionsFromPodSpecAndMeta(&internal.Spec, nil, &internal.ObjectMeta, nil)
			if errs := corevalidation.ValidatePodCreate(internal, opts); len(errs) > 0 {
				t.Errorf("seed %d: pod %s: %v", seed, p.Name, errs.ToAggregate())
			}
		}
		for _, n := range in.Nodes {
			n = n.DeepCopy()
			legacyscheme.Scheme.Default(n)
			internal := &core.Node{}
			if err := legacyscheme.Scheme.Convert(n, internal, nil); err != nil {
				t.Fatal(err)
			}
			if errs := corevalidation.ValidateNode(internal); len(errs) > 0 {
				t.Errorf("seed %d: node %s: %v", seed, n.Name, errs.ToAggregate())
			}
		}
		for _, pdb := range in.PodDisruptionBudgets {
			pdb = pdb.DeepCopy()
			legacyscheme.Scheme.Default(pdb)
			internal := &policy.PodDisruptionBudget{}
			if err := legacyscheme.Scheme.Convert(pdb, internal, nil); err != nil {
				t.Fatal(err)
			}
			if errs := policyvalidation.ValidatePodDisruptionBudget(internal, policyvalidation.PodDisruptionBudgetValidationOptions{}); len(errs) > 0 {
				t.Errorf("seed %d: PDB %s: %v", seed, pdb.Name, errs.ToAggregate())
			}
		}
	}
}

// The API server keeps pod names unique in a namespace, and the shim's cache
// keys pods by namespace and name; seed 5508311591522471 once drew the same
// name for two replicas.
func TestGeneratedPodNamesAreUnique(t *testing.T) {
	seeds := []uint64{5508311591522471}
	for i := range 3000 {
		seeds = append(seeds, caseSeed(5, i))
	}
	for _, seed := range seeds {
		in := generate(seed, false)
		seen := map[string]bool{}
		for _, p := range append(slices.Clone(in.Pods), in.Pod) {
			key := p.Namespace + "/" + p.Name
			if seen[key] {
				t.Errorf("seed %d: two pods named %s", seed, key)
			}
			seen[key] = true
		}
	}
}
