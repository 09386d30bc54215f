package parity

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2/ktesting"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/feature"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/interpodaffinity"
	plugintesting "k8s.io/kubernetes/pkg/scheduler/framework/plugins/testing"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
)

// The fixture shared with kscore's C++ test (tests/parity/ipa_test.cc).
const ipaFixture = "../../../tests/testdata/parity/interpodaffinity.json"

type ipaWant struct {
	PreFilter string   `json:"preFilter"`
	Filter    []string `json:"filter,omitempty"`
	PreScore  string   `json:"preScore"`
	Raw       []int64  `json:"raw,omitempty"`
	Scores    []int64  `json:"scores,omitempty"`
}

type ipaArgs struct {
	HardPodAffinityWeight              *int32 `json:"hardPodAffinityWeight"`
	IgnorePreferredTermsOfExistingPods bool   `json:"ignorePreferredTermsOfExistingPods"`
}

type ipaCase struct {
	Name string    `json:"name"`
	Args *ipaArgs  `json:"args"`
	Pods []*v1.Pod `json:"pods"`
	Pod  *v1.Pod   `json:"pod"`
	Want ipaWant   `json:"want"`
}

type ipaDoc struct {
	Nodes      []*v1.Node      `json:"nodes"`
	Namespaces []*v1.Namespace `json:"namespaces"`
	Cases      []ipaCase       `json:"cases"`
}

func loadIPA(t *testing.T) ipaDoc {
	t.Helper()
	raw, err := os.ReadFile(filepath.FromSlash(ipaFixture))
	if err != nil {
		t.Fatalf("reading the fixture: %v", err)
	}
	var d ipaDoc
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatalf("decoding %s: %v", ipaFixture, err)
	}
	if len(d.Cases) == 0 || len(d.Nodes) == 0 {
		t.Fatalf("%s has no cases or no nodes", ipaFixture)
	}
	return d
}

// A status as the fixture writes it: "" for success, else the code and
// the reasons.
func statusString(s *fwk.Status) string {
	if s.IsSuccess() {
		return ""
	}
	out := s.Code().String()
	if r := s.Reasons(); len(r) > 0 {
		out += ": " + strings.Join(r, ", ")
	}
	return out
}

// upstreamIPA runs kube-scheduler's InterPodAffinity with the case's args
// and kube-scheduler v1.37's default feature gates on every node: PreFilter,
// Filter per node, PreScore, Score and NormalizeScore over all nodes.
func upstreamIPA(t *testing.T, d ipaDoc, c ipaCase) ipaWant {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	t.Cleanup(cancel)
	args := &config.InterPodAffinityArgs{HardPodAffinityWeight: 1}
	if c.Args != nil {
		if c.Args.HardPodAffinityWeight != nil {
			args.HardPodAffinityWeight = *c.Args.HardPodAffinityWeight
		}
		args.IgnorePreferredTermsOfExistingPods = c.Args.IgnorePreferredTermsOfExistingPods
	}
	for _, p := range append([]*v1.Pod{c.Pod}, c.Pods...) {
		if p.Namespace == "" {
			p.Namespace = "default"
		}
	}
	snapshot := cache.NewSnapshot(c.Pods, d.Nodes)
	var objs []runtime.Object
	for _, ns := range d.Namespaces {
		objs = append(objs, ns)
	}
	p := plugintesting.SetupPluginWithInformers(ctx, t,
		frameworkruntime.FactoryAdapter(feature.Features{}, interpodaffinity.New),
		args, snapshot, objs)

	var infos []fwk.NodeInfo
	for _, n := range d.Nodes {
		info, err := snapshot.NodeInfos().Get(n.Name)
		if err != nil {
			t.Fatalf("node %s: %v", n.Name, err)
		}
		infos = append(infos, info)
	}
	var got ipaWant
	state := framework.NewCycleState()
	_, s := p.(fwk.PreFilterPlugin).PreFilter(ctx, state, c.Pod, infos)
	got.PreFilter = statusString(s)
	if s.IsSuccess() {
		for _, info := range infos {
			got.Filter = append(got.Filter,
				statusString(p.(fwk.FilterPlugin).Filter(ctx, state, c.Pod, info)))
		}
	}
	s = p.(fwk.PreScorePlugin).PreScore(ctx, state, c.Pod, infos)
	got.PreScore = statusString(s)
	if !s.IsSuccess() {
		return got
	}
	var scores fwk.NodeScoreList
	for _, info := range infos {
		score, s := p.(fwk.ScorePlugin).Score(ctx, state, c.Pod, info)
		if !s.IsSuccess() {
			t.Fatalf("Score: %v", s)
		}
		got.Raw = append(got.Raw, score)
		scores = append(scores, fwk.NodeScore{Name: info.Node().Name, Score: score})
	}
	if s := p.(fwk.ScorePlugin).ScoreExtensions().NormalizeScore(ctx, state, c.Pod, scores); !s.IsSuccess() {
		t.Fatalf("NormalizeScore: %v", s)
	}
	for _, ns := range scores {
		got.Scores = append(got.Scores, ns.Score)
	}
	return got
}

// TestInterPodAffinityFixtureMatchesUpstream: every case's `want` is what
// kube-scheduler answers. KSCORE_PARITY_PRINT=1 prints upstream's answers.
func TestInterPodAffinityFixtureMatchesUpstream(t *testing.T) {
	d := loadIPA(t)
	for _, c := range d.Cases {
		t.Run(c.Name, func(t *testing.T) {
			got := upstreamIPA(t, d, c)
			if os.Getenv("KSCORE_PARITY_PRINT") != "" {
				out, _ := json.Marshal(got)
				t.Logf("%s: %s", c.Name, out)
			}
			if !reflect.DeepEqual(got, c.Want) {
				t.Errorf("kube-scheduler answers %+v, the fixture says %+v", got, c.Want)
			}
		})
	}
}
