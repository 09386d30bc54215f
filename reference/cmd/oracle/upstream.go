package main

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/scheme"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/validation"
	schedcache "k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	frameworkplugins "k8s.io/kubernetes/pkg/scheduler/framework/plugins"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/names"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/nodevolumelimits"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
)

// decodeProfile turns a KubeSchedulerConfiguration YAML into its one
// profile as kube-scheduler does (cmd/kube-scheduler/app/options
// loadConfig): the scheme's UniversalDecoder, which applies the v1 defaults
// (default plugins merged with the profile's, default plugin args), then
// upstream's validation.
func decodeProfile(data string) (*config.KubeSchedulerConfiguration, error) {
	obj, gvk, err := scheme.Codecs.UniversalDecoder().Decode([]byte(data), nil, nil)
	if err != nil {
		return nil, fmt.Errorf("decoding the profile: %w", err)
	}
	cfg, ok := obj.(*config.KubeSchedulerConfiguration)
	if !ok {
		return nil, fmt.Errorf("the profile decodes as %s, not KubeSchedulerConfiguration", gvk)
	}
	cfg.TypeMeta.APIVersion = gvk.GroupVersion().String()
	if err := validation.ValidateKubeSchedulerConfiguration(cfg); err != nil {
		return nil, fmt.Errorf("validating the profile: %w", err)
	}
	if len(cfg.Profiles) != 1 {
		return nil, fmt.Errorf("the configuration has %d profiles, want 1", len(cfg.Profiles))
	}
	return cfg, nil
}

// The client behind the informer factories. The informers are never
// started: each case's objects go straight into their indexers, which is
// what the plugins' listers read.
var client = fake.NewSimpleClientset()

// newInformerFactory holds the case's namespaces, services and workload
// controllers, for InterPodAffinity (namespaceSelector) and
// PodTopologySpread (default constraints' selectors).
func newInformerFactory(in *Input) (informers.SharedInformerFactory, error) {
	f := informers.NewSharedInformerFactory(client, 0)
	add := func(idx cache.Indexer, obj any) error { return idx.Add(obj) }
	for _, o := range in.Namespaces {
		if err := add(f.Core().V1().Namespaces().Informer().GetIndexer(), o); err != nil {
			return nil, err
		}
	}
	for _, o := range in.Services {
		if err := add(f.Core().V1().Services().Informer().GetIndexer(), o); err != nil {
			return nil, err
		}
	}
	for _, o := range in.ReplicationControllers {
		if err := add(f.Core().V1().ReplicationControllers().Informer().GetIndexer(), o); err != nil {
			return nil, err
		}
	}
	for _, o := range in.ReplicaSets {
		if err := add(f.Apps().V1().ReplicaSets().Informer().GetIndexer(), o); err != nil {
			return nil, err
		}
	}
	for _, o := range in.StatefulSets {
		if err := add(f.Apps().V1().StatefulSets().Informer().GetIndexer(), o); err != nil {
			return nil, err
		}
	}
	// VolumeBinding's objects. Its assume caches read the PV and PVC
	// informers' indexers (adding its storage class index to what they
	// already hold); its listers read the others.
	for _, o := range in.StorageClasses {
		if err := add(f.Storage().V1().StorageClasses().Informer().GetIndexer(), o); err != nil {
			return nil, err
		}
	}
	for _, o := range in.CSIDrivers {
		if err := add(f.Storage().V1().CSIDrivers().Informer().GetIndexer(), o); err != nil {
			return nil, err
		}
	}
	for _, o := range in.CSIStorageCapacities {
		if err := add(f.Storage().V1().CSIStorageCapacities().Informer().GetIndexer(), o); err != nil {
			return nil, err
		}
	}
	for _, o := range in.PersistentVolumes {
		if err := add(f.Core().V1().PersistentVolumes().Informer().GetIndexer(), o); err != nil {
			return nil, err
		}
	}
	for _, o := range in.PersistentVolumeClaims {
		if err := add(f.Core().V1().PersistentVolumeClaims().Informer().GetIndexer(), o); err != nil {
			return nil, err
		}
	}
	// NodeVolumeLimits': its VolumeAttachment index is added to what the
	// indexer holds when the plugin is built.
	for _, o := range in.CSINodes {
		if err := add(f.Storage().V1().CSINodes().Informer().GetIndexer(), o); err != nil {
			return nil, err
		}
	}
	for _, o := range in.VolumeAttachments {
		if err := add(f.Storage().V1().VolumeAttachments().Informer().GetIndexer(), o); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// frameworkOptions are what evaluate and evaluatePreempt build their
// framework with: the client, the case's informers (which hold its storage
// objects, for the volume plugins' listers), its snapshot, the profile's
// parallelism, and NodeVolumeLimits' CSI manager over the CSINode lister.
func frameworkOptions(cfg *config.KubeSchedulerConfiguration, factory informers.SharedInformerFactory, snapshot *schedcache.Snapshot) []frameworkruntime.Option {
	return []frameworkruntime.Option{
		frameworkruntime.WithClientSet(client),
		frameworkruntime.WithInformerFactory(factory),
		frameworkruntime.WithSnapshotSharedLister(snapshot),
		frameworkruntime.WithParallelism(int(cfg.Parallelism)),
		frameworkruntime.WithSharedCSIManager(nodevolumelimits.NewCSIManager(factory.Storage().V1().CSINodes().Lister())),
	}
}

// volumeDecisions reads, from the cycle state VolumeBinding's Filter left,
// how it would bind the pod's unbound delayed-binding claims on node:
// stateData.podVolumesByNode[node], whose StaticBindings (BindingInfo's pvc
// and pv) and DynamicProvisions (PVC) it keeps. The state and BindingInfo's
// fields are unexported, so they are read through reflect (read only, no
// unsafe); a layout other than v1.37.2's is an error, not a silent miss.
// nil when VolumeBinding has no state or nothing to bind on node.
func volumeDecisions(state fwk.CycleState, node string) ([]VolumeDecision, error) {
	data, err := state.Read(fwk.StateKey(names.VolumeBinding))
	if err != nil {
		return nil, nil // VolumeBinding is not in the profile
	}
	field := func(v reflect.Value, name string) (reflect.Value, error) {
		for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
			if v.IsNil() {
				return reflect.Value{}, fmt.Errorf("VolumeBinding's state: nil before %s", name)
			}
			v = v.Elem()
		}
		f := v.FieldByName(name)
		if !f.IsValid() {
			return reflect.Value{}, fmt.Errorf("VolumeBinding's state: %s has no field %s", v.Type(), name)
		}
		return f, nil
	}
	objectName := func(v reflect.Value, name string) (string, error) {
		obj, err := field(v, name)
		if err != nil {
			return "", err
		}
		meta, err := field(obj, "ObjectMeta")
		if err != nil {
			return "", err
		}
		n, err := field(meta, "Name")
		if err != nil {
			return "", err
		}
		return n.String(), nil
	}
	byNode, err := field(reflect.ValueOf(data), "podVolumesByNode")
	if err != nil {
		return nil, err
	}
	if byNode.Kind() != reflect.Map || byNode.IsNil() {
		return nil, nil // the pod has no claim (PreFilter's Skip)
	}
	pv := byNode.MapIndex(reflect.ValueOf(node))
	if !pv.IsValid() || pv.IsNil() {
		return nil, nil
	}
	var out []VolumeDecision
	static, err := field(pv, "StaticBindings")
	if err != nil {
		return nil, err
	}
	for i := range static.Len() {
		claim, err := objectName(static.Index(i), "pvc")
		if err != nil {
			return nil, err
		}
		volume, err := objectName(static.Index(i), "pv")
		if err != nil {
			return nil, err
		}
		out = append(out, VolumeDecision{Claim: claim, Volume: volume})
	}
	dynamic, err := field(pv, "DynamicProvisions")
	if err != nil {
		return nil, err
	}
	for i := range dynamic.Len() {
		claim, err := objectName(dynamic.Index(i), "PVC")
		if err != nil {
			return nil, err
		}
		out = append(out, VolumeDecision{Claim: claim})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Claim < out[j].Claim })
	return out, nil
}

func statusOf(s *fwk.Status) Status {
	if s == nil {
		return Status{Code: fwk.Success.String(), Reasons: []string{}}
	}
	out := Status{Code: s.Code().String(), Plugin: s.Plugin(), Reasons: s.Reasons()}
	if out.Reasons == nil {
		out.Reasons = []string{}
	}
	return out
}

// evaluate runs kube-scheduler's framework, built from the case's profile
// with the in-tree registry, over the case: PreFilter once, Filter on every
// node (no sampling, no early stop), then PreScore, Score and
// NormalizeScore over the nodes that passed.
func evaluate(ctx context.Context, in *Input) (*Want, error) {
	cfg, err := decodeProfile(in.Profile)
	if err != nil {
		return nil, err
	}
	factory, err := newInformerFactory(in)
	if err != nil {
		return nil, err
	}
	snapshot := schedcache.NewSnapshot(in.Pods, in.Nodes)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	f, err := frameworkruntime.NewFramework(ctx, frameworkplugins.NewInTreeRegistry(), &cfg.Profiles[0],
		frameworkOptions(cfg, factory, snapshot)...)
	if err != nil {
		return nil, fmt.Errorf("building the framework: %w", err)
	}
	defer func() { _ = f.Close() }()

	want := &Want{Nodes: []NodeResult{}, Skipped: []string{}, Weights: map[string]int64{}}
	scorePlugins := sets.New[string]()
	for _, p := range f.ListPlugins().Score.Enabled {
		want.Weights[p.Name] = int64(p.Weight)
		scorePlugins.Insert(p.Name)
	}

	pod := in.Pod
	state := framework.NewCycleState()
	preRes, s, withNodes := f.RunPreFilterPlugins(ctx, state, pod)
	want.PreFilter = statusOf(s)
	if !s.IsSuccess() {
		return want, nil
	}

	// The nodes a PreFilterResult leaves out get the status findNodesThatFitPod
	// (schedule_one.go) gives them; it names no plugin, so the plugins that
	// narrowed the set are named here, joined by ",".
	excluded := Status{
		Code:    fwk.UnschedulableAndUnresolvable.String(),
		Plugin:  strings.Join(sets.List(withNodes), ","),
		Reasons: []string{fmt.Sprintf("node(s) didn't satisfy plugin(s) %v", sets.List(withNodes))},
	}
	var feasible []fwk.NodeInfo
	var feasibleAt []int
	for _, n := range in.Nodes {
		r := NodeResult{Name: n.Name}
		if !preRes.AllNodes() && !preRes.NodeNames.Has(n.Name) {
			r.Filter = excluded
		} else {
			ni, err := snapshot.Get(n.Name)
			if err != nil {
				return nil, err
			}
			r.Filter = statusOf(f.RunFilterPlugins(ctx, state, pod, ni))
			if r.Filter.Code == fwk.Success.String() {
				feasible = append(feasible, ni)
				feasibleAt = append(feasibleAt, len(want.Nodes))
			}
		}
		want.Nodes = append(want.Nodes, r)
	}
	if len(feasible) == 0 {
		return want, nil
	}

	if s := f.RunPreScorePlugins(ctx, state, pod, feasible); !s.IsSuccess() {
		return nil, fmt.Errorf("PreScore: %w", s.AsError())
	}
	for name := range state.GetSkipScorePlugins() {
		if scorePlugins.Has(name) {
			want.Skipped = append(want.Skipped, name)
		}
	}
	sort.Strings(want.Skipped)
	scores, s := f.RunScorePlugins(ctx, state, pod, feasible)
	if !s.IsSuccess() {
		return nil, fmt.Errorf("Score: %w", s.AsError())
	}
	for i, ns := range scores {
		r := &want.Nodes[feasibleAt[i]]
		if r.VolumeDecisions, err = volumeDecisions(state, r.Name); err != nil {
			return nil, err
		}
		r.Scores = map[string]Score{}
		for j, raw := range ns.RawScores {
			weighted := ns.Scores[j]
			if weighted.Name != raw.Name {
				return nil, fmt.Errorf("node %s: raw score %d is %s, weighted is %s", ns.Name, j, raw.Name, weighted.Name)
			}
			r.Scores[raw.Name] = Score{Raw: raw.Score, Normalized: weighted.Score / want.Weights[raw.Name]}
		}
	}
	return want, nil
}
