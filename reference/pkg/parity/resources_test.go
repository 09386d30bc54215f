// Package parity checks shared fixtures against kube-scheduler's own plugins,
// run in process: what upstream answers is what the fixture says, and
// kscore's C++ tests (tests/parity) check kscore against the same fixture.
package parity

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/klog/v2/ktesting"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/defaultbinder"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/feature"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/names"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/noderesources"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/queuesort"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	"k8s.io/kubernetes/pkg/scheduler/metrics"
	tf "k8s.io/kubernetes/pkg/scheduler/testing/framework"
)

// The fixture shared with kscore's C++ test (tests/parity/resources_test.cc).
const fixture = "../../../tests/testdata/parity/resources.json"

type want struct {
	Filter   []string `json:"filter"`
	Fit      int64    `json:"fit"`
	Balanced int64    `json:"balanced"`
}

type resourceCase struct {
	Name        string          `json:"name"`
	Allocatable v1.ResourceList `json:"allocatable"`
	OnNode      []*v1.Pod       `json:"onNode"`
	Pod         *v1.Pod         `json:"pod"`
	Want        want            `json:"want"`
}

func TestMain(m *testing.M) {
	metrics.Register()
	os.Exit(m.Run())
}

func loadCases(t *testing.T) []resourceCase {
	t.Helper()
	raw, err := os.ReadFile(filepath.FromSlash(fixture))
	if err != nil {
		t.Fatalf("reading the fixture: %v", err)
	}
	var f struct {
		Cases []resourceCase `json:"cases"`
	}
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatalf("decoding %s: %v", fixture, err)
	}
	if len(f.Cases) == 0 {
		t.Fatalf("%s has no cases", fixture)
	}
	return f.Cases
}

// The node every case runs on, unless the case gives its allocatable.
func node(allocatable v1.ResourceList) *v1.Node {
	if len(allocatable) == 0 {
		allocatable = v1.ResourceList{
			v1.ResourceCPU:    resource.MustParse("4"),
			v1.ResourceMemory: resource.MustParse("16Gi"),
			v1.ResourcePods:   resource.MustParse("110"),
		}
	}
	return &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "node"},
		Status:     v1.NodeStatus{Allocatable: allocatable, Capacity: allocatable},
	}
}

// upstream runs NodeResourcesFit and NodeResourcesBalancedAllocation with
// their default args and kube-scheduler v1.37's default feature gates
// (pod-level resources, in-place resize), through the real framework.
func upstream(t *testing.T, c resourceCase) want {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	t.Cleanup(cancel)
	n := node(c.Allocatable)
	for i, p := range c.OnNode {
		p.Namespace = "default"
		p.UID = types.UID("uid-" + p.Name)
		p.Spec.NodeName = n.Name
		c.OnNode[i] = p
	}
	c.Pod.Namespace = "default"
	c.Pod.UID = "uid-incoming"
	snapshot := cache.NewSnapshot(c.OnNode, []*v1.Node{n})

	fts := feature.NewSchedulerFeaturesFromGates(utilfeature.DefaultFeatureGate)
	fts.EnableDRAExtendedResource = false // kscore runs no DRA
	resources := []config.ResourceSpec{{Name: "cpu", Weight: 1}, {Name: "memory", Weight: 1}}
	fitArgs := &config.NodeResourcesFitArgs{
		ScoringStrategy: &config.ScoringStrategy{Type: config.LeastAllocated, Resources: resources},
	}
	balancedArgs := &config.NodeResourcesBalancedAllocationArgs{Resources: resources}
	fit := func(ctx context.Context, _ runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
		return noderesources.NewFit(ctx, fitArgs, h, fts)
	}
	balanced := func(ctx context.Context, _ runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
		return noderesources.NewBalancedAllocation(ctx, balancedArgs, h, fts)
	}
	f, err := tf.NewFramework(ctx, []tf.RegisterPluginFunc{
		tf.RegisterQueueSortPlugin(queuesort.Name, queuesort.New),
		tf.RegisterBindPlugin(defaultbinder.Name, defaultbinder.New),
		tf.RegisterPluginAsExtensions(names.NodeResourcesFit, fit, "PreFilter", "Filter", "PreScore", "Score"),
		tf.RegisterPluginAsExtensions(names.NodeResourcesBalancedAllocation, balanced, "PreScore", "Score"),
	}, "parity", frameworkruntime.WithSnapshotSharedLister(snapshot))
	if err != nil {
		t.Fatalf("building the framework: %v", err)
	}
	infos, err := snapshot.NodeInfos().List()
	if err != nil {
		t.Fatalf("listing node infos: %v", err)
	}

	got := want{Filter: []string{}, Fit: -1, Balanced: -1}
	state := framework.NewCycleState()
	if _, s, _ := f.RunPreFilterPlugins(ctx, state, c.Pod); !s.IsSuccess() {
		t.Fatalf("PreFilter: %v", s)
	}
	if s := f.RunFilterPlugins(ctx, state, c.Pod, infos[0]); !s.IsSuccess() {
		got.Filter = s.Reasons()
	}
	// Scores are kept for a node the filters rejected too: the plugins'
	// arithmetic is what is compared.
	if s := f.RunPreScorePlugins(ctx, state, c.Pod, infos); !s.IsSuccess() {
		t.Fatalf("PreScore: %v", s)
	}
	scores, s := f.RunScorePlugins(ctx, state, c.Pod, infos)
	if !s.IsSuccess() {
		t.Fatalf("Score: %v", s)
	}
	for _, ps := range scores[0].Scores {
		switch ps.Name {
		case names.NodeResourcesFit:
			got.Fit = ps.Score
		case names.NodeResourcesBalancedAllocation:
			got.Balanced = ps.Score
		}
	}
	return got
}

// TestResourcesFixtureMatchesUpstream: every case's `want` is what
// kube-scheduler answers. KSCORE_PARITY_PRINT=1 prints upstream's answers.
func TestResourcesFixtureMatchesUpstream(t *testing.T) {
	for _, c := range loadCases(t) {
		t.Run(c.Name, func(t *testing.T) {
			got := upstream(t, c)
			if os.Getenv("KSCORE_PARITY_PRINT") != "" {
				out, _ := json.Marshal(got)
				t.Logf("%s: %s", c.Name, out)
			}
			if c.Want.Filter == nil {
				c.Want.Filter = []string{}
			}
			if !reflect.DeepEqual(got, c.Want) {
				t.Errorf("kube-scheduler answers %+v, the fixture says %+v", got, c.Want)
			}
		})
	}
}
