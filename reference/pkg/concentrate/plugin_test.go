package concentrate

import (
	"context"
	"os"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2/ktesting"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/defaultbinder"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/queuesort"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	"k8s.io/kubernetes/pkg/scheduler/metrics"
	st "k8s.io/kubernetes/pkg/scheduler/testing"
	tf "k8s.io/kubernetes/pkg/scheduler/testing/framework"
)

const weight = 10

func TestMain(m *testing.M) {
	// The framework runtime records metrics; upstream's tests register them first.
	metrics.Register()
	os.Exit(m.Run())
}

// newFramework builds a real scheduler framework (upstream's runtime) with Concentrate
// enabled at PreScore, Score and Filter with weight 10, over a snapshot of the given
// pods and nodes, the way kube-scheduler runs it.
func newFramework(t *testing.T, args runtime.Object, pods []*v1.Pod, nodes []*v1.Node) (framework.Framework, []fwk.NodeInfo) {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	t.Cleanup(cancel)
	snapshot := cache.NewSnapshot(pods, nodes)
	factory := func(ctx context.Context, _ runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
		return New(ctx, args, h)
	}
	f, err := tf.NewFramework(ctx, []tf.RegisterPluginFunc{
		tf.RegisterQueueSortPlugin(queuesort.Name, queuesort.New),
		tf.RegisterBindPlugin(defaultbinder.Name, defaultbinder.New),
		tf.RegisterPluginAsExtensionsWithWeight(Name, weight, factory, "PreScore", "Score", "Filter"),
	}, "concentrate-scheduler", frameworkruntime.WithSnapshotSharedLister(snapshot))
	if err != nil {
		t.Fatalf("building framework: %v", err)
	}
	infos, err := snapshot.NodeInfos().List()
	if err != nil {
		t.Fatalf("listing node infos: %v", err)
	}
	return f, infos
}

// scoreAll runs PreScore then Score (+NormalizeScore, weight) through the framework and
// returns node name -> (raw Concentrate score, normalised Concentrate score before weight).
func scoreAll(t *testing.T, f framework.Framework, pod *v1.Pod, nodes []fwk.NodeInfo) (raw, norm map[string]int64, skipped bool) {
	t.Helper()
	ctx := context.Background()
	state := framework.NewCycleState()
	if s := f.RunPreScorePlugins(ctx, state, pod, nodes); !s.IsSuccess() {
		t.Fatalf("PreScore: %v", s)
	}
	scores, s := f.RunScorePlugins(ctx, state, pod, nodes)
	if !s.IsSuccess() {
		t.Fatalf("Score: %v", s)
	}
	raw, norm = map[string]int64{}, map[string]int64{}
	skipped = true
	for _, ns := range scores {
		for _, ps := range ns.RawScores {
			if ps.Name == Name {
				raw[ns.Name] = ps.Score
			}
		}
		for _, ps := range ns.Scores {
			if ps.Name == Name {
				skipped = false
				if ps.Score%weight != 0 {
					t.Fatalf("weighted score %d of %s is not a multiple of weight %d", ps.Score, ns.Name, weight)
				}
				norm[ns.Name] = ps.Score / weight
			}
		}
	}
	return raw, norm, skipped
}

func threeNodes() []*v1.Node {
	return []*v1.Node{
		st.MakeNode().Name("node-a").Obj(),
		st.MakeNode().Name("node-b").Obj(),
		st.MakeNode().Name("node-c").Obj(),
	}
}

func pod(name, node string, labels map[string]string) *st.PodWrapper {
	return st.MakePod().Name(name).UID(name).Namespace("default").Node(node).Labels(labels)
}

var web = map[string]string{"app": "web"}

// (a) A node with more matching pods scores higher; only same-namespace, live,
// non-terminating pods with the same label value count.
func TestMoreMatchingPodsScoresHigher(t *testing.T) {
	pods := []*v1.Pod{
		pod("a1", "node-a", web).Obj(),
		pod("a2", "node-a", web).Obj(),
		pod("a3", "node-a", web).Obj(),
		pod("b1", "node-b", web).Obj(),
		// none of these count:
		pod("b-other-ns", "node-b", web).Namespace("other").Obj(),
		pod("b-done", "node-b", web).Phase(v1.PodSucceeded).Obj(),
		pod("b-failed", "node-b", web).Phase(v1.PodFailed).Obj(),
		pod("b-deleting", "node-b", web).Terminating().Obj(),
		pod("b-other-value", "node-b", map[string]string{"app": "db"}).Obj(),
		pod("c-no-label", "node-c", nil).Obj(),
	}
	f, nodes := newFramework(t, nil, pods, threeNodes())
	incoming := st.MakePod().Name("new").Namespace("default").Labels(web).Obj()
	raw, norm, skipped := scoreAll(t, f, incoming, nodes)
	if skipped {
		t.Fatal("Concentrate was skipped for a pod carrying labelKey")
	}
	wantRaw := map[string]int64{"node-a": 3, "node-b": 1, "node-c": 0}
	for n, w := range wantRaw {
		if raw[n] != w {
			t.Errorf("raw score of %s = %d, want %d (all raw: %v)", n, raw[n], w, raw)
		}
	}
	if !(norm["node-a"] > norm["node-b"] && norm["node-b"] > norm["node-c"]) {
		t.Errorf("want node-a > node-b > node-c, got normalised scores %v", norm)
	}
}

// (b) Normalisation maps the raw range onto [0, 100] as score*100/max (integer).
func TestNormalizeMapsOntoMaxNodeScore(t *testing.T) {
	pods := []*v1.Pod{ // raw scores: node-a 3, node-b 1, node-c 0
		pod("a1", "node-a", web).Obj(),
		pod("a2", "node-a", web).Obj(),
		pod("a3", "node-a", web).Obj(),
		pod("b1", "node-b", web).Obj(),
	}
	f, nodes := newFramework(t, nil, pods, threeNodes())
	incoming := st.MakePod().Name("new").Namespace("default").Labels(web).Obj()
	_, norm, _ := scoreAll(t, f, incoming, nodes)
	want := map[string]int64{"node-a": fwk.MaxNodeScore, "node-b": 33, "node-c": 0}
	for n, w := range want {
		if norm[n] != w {
			t.Errorf("normalised score of %s = %d, want %d (all: %v)", n, norm[n], w, norm)
		}
	}

	// Direct call: the extremes land on 0 and MaxNodeScore, the rest in between.
	p, err := New(context.Background(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	list := fwk.NodeScoreList{{Name: "x", Score: 7}, {Name: "y", Score: 2}, {Name: "z", Score: 0}}
	if s := p.(fwk.ScorePlugin).ScoreExtensions().NormalizeScore(context.Background(), nil, incoming, list); !s.IsSuccess() {
		t.Fatalf("NormalizeScore: %v", s)
	}
	wantList := []int64{100, 28, 0}
	for i := range list {
		if list[i].Score != wantList[i] {
			t.Errorf("NormalizeScore(7,2,0)[%d] = %d, want %d", i, list[i].Score, wantList[i])
		}
	}
}

// (c) An empty cluster gives equal scores, not an error; so does a pod without labelKey.
func TestEmptyClusterEqualScores(t *testing.T) {
	f, nodes := newFramework(t, nil, nil, threeNodes())
	incoming := st.MakePod().Name("new").Namespace("default").Labels(web).Obj()
	_, norm, _ := scoreAll(t, f, incoming, nodes)
	for _, n := range []string{"node-a", "node-b", "node-c"} {
		if norm[n] != norm["node-a"] {
			t.Errorf("empty cluster: scores differ: %v", norm)
		}
	}

	// A pod without labelKey: PreScore skips, Score does not run, all nodes equal.
	pods := []*v1.Pod{pod("a1", "node-a", web).Obj()}
	f, nodes = newFramework(t, nil, pods, threeNodes())
	unlabelled := st.MakePod().Name("plain").Namespace("default").Obj()
	_, norm, skipped := scoreAll(t, f, unlabelled, nodes)
	if !skipped {
		t.Errorf("pod without labelKey: want Concentrate skipped, got scores %v", norm)
	}
}

// Score works without PreScore (a profile enabling Concentrate at score only).
func TestScoreWithoutPreScore(t *testing.T) {
	p, _ := New(context.Background(), nil, nil)
	ni := framework.NewNodeInfo(pod("a1", "node-a", web).Obj(), pod("a2", "node-a", web).Obj())
	ni.SetNode(st.MakeNode().Name("node-a").Obj())
	got, s := p.(fwk.ScorePlugin).Score(context.Background(), framework.NewCycleState(),
		st.MakePod().Name("new").Namespace("default").Labels(web).Obj(), ni)
	if !s.IsSuccess() || got != 2 {
		t.Errorf("Score without PreScore = %d, %v; want 2, success", got, s)
	}
}

func TestRejectEverything(t *testing.T) {
	args := &runtime.Unknown{Raw: []byte(`{"labelKey":"app","rejectEverything":true}`), ContentType: runtime.ContentTypeJSON}
	f, nodes := newFramework(t, args, nil, threeNodes())
	incoming := st.MakePod().Name("new").Namespace("default").Labels(web).Obj()
	for _, ni := range nodes {
		s := f.RunFilterPlugins(context.Background(), framework.NewCycleState(), incoming, ni)
		if s.Code() != fwk.Unschedulable {
			t.Fatalf("Filter on %s: code %v, want Unschedulable", ni.Node().Name, s.Code())
		}
		if s.Plugin() != Name || len(s.Reasons()) != 1 || s.Reasons()[0] != RejectReason {
			t.Errorf("Filter on %s: plugin %q reasons %q", ni.Node().Name, s.Plugin(), s.Reasons())
		}
	}
	// The FailedScheduling message as kube-scheduler builds it.
	diag := framework.Diagnosis{NodeToStatus: framework.NewDefaultNodeToStatus()}
	for _, ni := range nodes {
		diag.NodeToStatus.Set(ni.Node().Name, fwk.NewStatus(fwk.Unschedulable, RejectReason))
	}
	msg := (&framework.FitError{Pod: incoming, NumAllNodes: 3, Diagnosis: diag}).Error()
	if want := "0/3 nodes are available: 3 node(s) were rejected by Concentrate (rejectEverything)."; !strings.HasPrefix(msg, want) {
		t.Errorf("FitError = %q, want prefix %q", msg, want)
	}

	// Default: Filter accepts.
	f, nodes = newFramework(t, nil, nil, threeNodes())
	if s := f.RunFilterPlugins(context.Background(), framework.NewCycleState(), incoming, nodes[0]); !s.IsSuccess() {
		t.Errorf("Filter without rejectEverything: %v", s)
	}
}

func TestArgs(t *testing.T) {
	for _, tc := range []struct {
		name    string
		obj     runtime.Object
		want    Args
		wantErr string
	}{
		{name: "nil gives defaults", obj: nil, want: Args{LabelKey: "app"}},
		{name: "empty object gives defaults", obj: &runtime.Unknown{Raw: []byte(`{}`)}, want: Args{LabelKey: "app"}},
		{name: "json", obj: &runtime.Unknown{Raw: []byte(`{"labelKey":"team","rejectEverything":true}`), ContentType: runtime.ContentTypeJSON},
			want: Args{LabelKey: "team", RejectEverything: true}},
		{name: "yaml", obj: &runtime.Unknown{Raw: []byte("labelKey: example.com/tier\n"), ContentType: runtime.ContentTypeYAML},
			want: Args{LabelKey: "example.com/tier"}},
		{name: "typed", obj: &Args{RejectEverything: true}, want: Args{LabelKey: "app", RejectEverything: true}},
		{name: "invalid label key", obj: &runtime.Unknown{Raw: []byte(`{"labelKey":"not a key!"}`)}, wantErr: "labelKey"},
		{name: "unknown field", obj: &runtime.Unknown{Raw: []byte(`{"labelkey":"app"}`)}, wantErr: "labelkey"},
		{name: "wrong type", obj: &runtime.Unknown{Raw: []byte(`{"rejectEverything":"yes"}`)}, wantErr: "rejectEverything"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := New(context.Background(), tc.obj, nil)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one naming %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := p.(*Concentrate).Args(); got != tc.want {
				t.Errorf("args = %+v, want %+v", got, tc.want)
			}
		})
	}
}
