package main

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/klog/v2"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	schedcache "k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	frameworkplugins "k8s.io/kubernetes/pkg/scheduler/framework/plugins"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/defaultpreemption"
	plfeature "k8s.io/kubernetes/pkg/scheduler/framework/plugins/feature"
	"k8s.io/kubernetes/pkg/scheduler/framework/preemption"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	"k8s.io/kubernetes/pkg/scheduler/util"
)

// noNominator is the PodNominator of a scheduler with no nominated pods.
type noNominator struct{}

func (noNominator) AddNominatedPod(klog.Logger, fwk.PodInfo, *fwk.NominatingInfo) {}
func (noNominator) DeleteNominatedPodIfExists(*v1.Pod)                            {}
func (noNominator) UpdateNominatedPod(klog.Logger, *v1.Pod, fwk.PodInfo)          {}
func (noNominator) NominatedPodsForNode(string) []fwk.PodInfo                     { return nil }

// preemptRecorder stands in for the API calls that evict victims: the
// Executor's PreemptPod records the candidate it was given instead.
type preemptRecorder struct {
	mu      sync.Mutex
	node    string
	victims []*v1.Pod
	calls   int
}

// preemptRegistry is the in-tree registry whose DefaultPreemption is
// upstream's, made by defaultpreemption.New with the process's feature
// gates, except that its Executor evicts synchronously (async preemption
// only changes when the evictions happen) into rec instead of the API.
func preemptRegistry(rec *preemptRecorder, plugin **defaultpreemption.DefaultPreemption) frameworkruntime.Registry {
	registry := frameworkplugins.NewInTreeRegistry()
	fts := plfeature.NewSchedulerFeaturesFromGates(utilfeature.DefaultFeatureGate)
	fts.EnableAsyncPreemption = false
	registry[defaultpreemption.Name] = func(ctx context.Context, args runtime.Object, fh fwk.Handle) (fwk.Plugin, error) {
		pl, err := defaultpreemption.New(ctx, args, fh, fts)
		if err != nil {
			return nil, err
		}
		pl.Executor.PreemptPod = func(_ context.Context, c preemption.Candidate, _ preemption.ExecutorPreemptor, _ *v1.Pod, _ string) (bool, error) {
			rec.mu.Lock()
			defer rec.mu.Unlock()
			rec.calls++
			rec.node = c.Name()
			rec.victims = c.Victims().Pods
			return false, nil
		}
		*plugin = pl
		return pl, nil
	}
	return registry
}

func podKey(p *v1.Pod) string { return p.Namespace + "/" + p.Name }

func victimKeys(pods []*v1.Pod) []string {
	keys := make([]string, 0, len(pods))
	for _, p := range pods {
		keys = append(keys, podKey(p))
	}
	slices.Sort(keys)
	return keys
}

// candidateOf computes what pickOneNodeForPreemption compares for a
// candidate, with upstream's own functions where it has them. victims.Pods
// is in upstream's order (most important first).
func candidateOf(node string, victims *extenderv1.Victims) PreemptCandidate {
	c := PreemptCandidate{
		Node:            node,
		Victims:         victimKeys(victims.Pods),
		PDBViolations:   victims.NumPDBViolations,
		HighestPriority: corev1helpers.PodPriority(victims.Pods[0]),
		NumVictims:      len(victims.Pods),
	}
	for _, p := range victims.Pods {
		c.SumPriorities += int64(corev1helpers.PodPriority(p)) + int64(math.MaxInt32+1)
	}
	c.EarliestStartOfHighest = util.GetEarliestPodStartTime(victims).UTC().Format("2006-01-02T15:04:05Z")
	return c
}

// compareCandidates orders candidates as pickOneNodeForPreemption prefers
// them: negative when a is better than b, 0 when they tie on all criteria.
func compareCandidates(a, b PreemptCandidate) int {
	return cmp.Or(
		cmp.Compare(a.PDBViolations, b.PDBViolations),
		cmp.Compare(a.HighestPriority, b.HighestPriority),
		cmp.Compare(a.SumPriorities, b.SumPriorities),
		cmp.Compare(a.NumVictims, b.NumVictims),
		// RFC 3339 in UTC with whole seconds sorts as time; later is better.
		-cmp.Compare(a.EarliestStartOfHighest, b.EarliestStartOfHighest),
	)
}

// tiedBest lists the candidates that tie with the best one, in their order.
func tiedBest(cands []PreemptCandidate) []string {
	tied := []string{}
	if len(cands) == 0 {
		return tied
	}
	best := slices.MinFunc(cands, compareCandidates)
	for _, c := range cands {
		if compareCandidates(c, best) == 0 {
			tied = append(tied, c.Node)
		}
	}
	return tied
}

// numCandidates is upstream's calculateNumCandidates.
func numCandidates(numNodes, percentage, absolute int32) int32 {
	n := numNodes * percentage / 100
	n = max(n, absolute)
	return min(n, numNodes)
}

// evaluatePreempt runs the scheduling cycle up to PostFilter as
// schedule_one does: PreFilter, Filter on every node into a NodeToStatus,
// then RunPostFilterPlugins, whose only plugin is upstream's
// DefaultPreemption. It then dry-runs preemption on every potential node
// (upstream's DryRunPreemption, offset 0, all of them) to list the
// candidates, and checks that upstream's pick is one it allows.
func evaluatePreempt(ctx context.Context, in *PreemptInput) (*PreemptWant, error) {
	cfg, err := decodeProfile(in.Profile)
	if err != nil {
		return nil, err
	}
	factory, err := newInformerFactory(&in.Input)
	if err != nil {
		return nil, err
	}
	// The preemptor is read back from the pod informer; PDBs from theirs.
	podIndexer := factory.Core().V1().Pods().Informer().GetIndexer()
	for _, p := range append([]*v1.Pod{in.Pod}, in.Pods...) {
		if err := podIndexer.Add(p); err != nil {
			return nil, err
		}
	}
	pdbIndexer := factory.Policy().V1().PodDisruptionBudgets().Informer().GetIndexer()
	for _, pdb := range in.PodDisruptionBudgets {
		if err := pdbIndexer.Add(pdb); err != nil {
			return nil, err
		}
	}
	snapshot := schedcache.NewSnapshot(in.Pods, in.Nodes)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	rec := &preemptRecorder{}
	var pl *defaultpreemption.DefaultPreemption
	// The scheduling cases' options (with the storage objects of a case of
	// gen-preempt --volumes), plus what preemption reads.
	opts := append(frameworkOptions(cfg, factory, snapshot),
		frameworkruntime.WithMutableSnapshotLister(snapshot),
		frameworkruntime.WithPodNominator(noNominator{}),
	)
	f, err := frameworkruntime.NewFramework(ctx, preemptRegistry(rec, &pl), &cfg.Profiles[0], opts...)
	if err != nil {
		return nil, fmt.Errorf("building the framework: %w", err)
	}
	defer func() { _ = f.Close() }()
	if pl == nil {
		return nil, fmt.Errorf("the profile does not enable %s", defaultpreemption.Name)
	}
	postFilter := f.ListPlugins().PostFilter.Enabled
	if len(postFilter) != 1 || postFilter[0].Name != defaultpreemption.Name {
		return nil, fmt.Errorf("PostFilter plugins %v, want only %s", postFilter, defaultpreemption.Name)
	}

	want := &PreemptWant{
		Nodes: []NodeResult{}, Victims: []string{}, PotentialNodes: []string{},
		Candidates: []PreemptCandidate{}, Tied: []string{},
	}
	pod := in.Pod
	state := framework.NewCycleState()
	nodeToStatus := framework.NewDefaultNodeToStatus()
	preRes, s, _ := f.RunPreFilterPlugins(ctx, state, pod)
	want.PreFilter = statusOf(s)
	switch {
	case s.IsRejected():
		nodeToStatus.SetAbsentNodesStatus(s)
	case !s.IsSuccess():
		return nil, fmt.Errorf("PreFilter: %w", s.AsError())
	case !preRes.AllNodes():
		return nil, fmt.Errorf("PreFilter narrowed the nodes to %v; the preemption generator does not make that", preRes.NodeNames)
	default:
		for _, n := range in.Nodes {
			ni, err := snapshot.Get(n.Name)
			if err != nil {
				return nil, err
			}
			fs := f.RunFilterPlugins(ctx, state, pod, ni)
			if fs.IsSuccess() {
				return nil, fmt.Errorf("node %s fits the pod: preemption would not run", n.Name)
			}
			if !fs.IsRejected() {
				return nil, fmt.Errorf("Filter on %s: %w", n.Name, fs.AsError())
			}
			nodeToStatus.Set(n.Name, fs)
			want.Nodes = append(want.Nodes, NodeResult{Name: n.Name, Filter: statusOf(fs)})
		}
	}

	result, ps := f.RunPostFilterPlugins(ctx, state, pod, nodeToStatus)
	if ps.Code() == fwk.Error {
		return nil, fmt.Errorf("PostFilter: %w", ps.AsError())
	}
	want.PostFilter = PostFilterStatus{Code: ps.Code().String(), Plugin: ps.Plugin(), Message: ps.Message()}
	upstreamPick := ""
	if result != nil && result.NominatingInfo != nil {
		upstreamPick = result.NominatedNodeName
	}

	potential, err := nodeToStatus.NodesForStatusCode(snapshot.NodeInfos(), fwk.Unschedulable)
	if err != nil {
		return nil, err
	}
	order := map[string]int{}
	for i, n := range in.Nodes {
		order[n.Name] = i
	}
	slices.SortFunc(potential, func(a, b fwk.NodeInfo) int { return cmp.Compare(order[a.Node().Name], order[b.Node().Name]) })
	for _, ni := range potential {
		want.PotentialNodes = append(want.PotentialNodes, ni.Node().Name)
	}
	dpArgs, ok := pluginArgs(cfg.Profiles[0].PluginConfig)
	if !ok {
		return nil, fmt.Errorf("no %s args in the defaulted profile", defaultpreemption.Name)
	}
	want.NumCandidates = numCandidates(int32(len(potential)), dpArgs.MinCandidateNodesPercentage, dpArgs.MinCandidateNodesAbsolute)
	want.AllConsidered = int(want.NumCandidates) == len(potential)

	eligible := pod.Spec.PreemptionPolicy == nil || *pod.Spec.PreemptionPolicy != v1.PreemptNever
	if eligible && len(potential) > 0 {
		pdbs, err := factory.Policy().V1().PodDisruptionBudgets().Lister().List(labels.Everything())
		if err != nil {
			return nil, err
		}
		cands, _, err := pl.Evaluator.DryRunPreemption(ctx, state, pod, potential, pdbs, 0, int32(len(potential)))
		if err != nil {
			return nil, fmt.Errorf("DryRunPreemption: %w", err)
		}
		for _, c := range cands {
			want.Candidates = append(want.Candidates, candidateOf(c.Name(), c.Victims()))
		}
		slices.SortFunc(want.Candidates, func(a, b PreemptCandidate) int { return cmp.Compare(order[a.Node], order[b.Node]) })
		want.Tied = tiedBest(want.Candidates)
	}

	if !ps.IsSuccess() {
		if len(want.Candidates) > 0 {
			return nil, fmt.Errorf("PostFilter failed (%s) but the dry run found %d candidates", ps.Message(), len(want.Candidates))
		}
		if upstreamPick != "" || rec.calls > 0 {
			return nil, fmt.Errorf("PostFilter failed (%s) but nominated %q", ps.Message(), upstreamPick)
		}
		return want, nil
	}

	// Upstream picked a node: it must be a candidate, with the victims the
	// dry run found there and the executor was given, and allowed by the
	// tie rule the README states.
	i := slices.IndexFunc(want.Candidates, func(c PreemptCandidate) bool { return c.Node == upstreamPick })
	if i < 0 {
		return nil, fmt.Errorf("upstream nominated %q, which is not a candidate", upstreamPick)
	}
	picked := want.Candidates[i]
	if rec.calls > 0 && (rec.node != upstreamPick || !slices.Equal(victimKeys(rec.victims), picked.Victims)) {
		return nil, fmt.Errorf("upstream evicted %v on %s, the dry run has %v on %s", victimKeys(rec.victims), rec.node, picked.Victims, upstreamPick)
	}
	if err := allowedPick(want, upstreamPick); err != nil {
		return nil, fmt.Errorf("upstream's own pick: %w", err)
	}
	if msg := successMessage(upstreamPick, picked.NumVictims); ps.Message() != msg {
		return nil, fmt.Errorf("upstream's message %q, expected %q", ps.Message(), msg)
	}
	want.NominatedNode = want.Tied[0]
	best := want.Candidates[slices.IndexFunc(want.Candidates, func(c PreemptCandidate) bool { return c.Node == want.NominatedNode })]
	want.Victims = best.Victims
	want.PostFilter.Message = successMessage(want.NominatedNode, best.NumVictims)
	return want, nil
}

// pluginArgs finds DefaultPreemption's args in a defaulted profile.
func pluginArgs(pcs []config.PluginConfig) (*config.DefaultPreemptionArgs, bool) {
	for _, pc := range pcs {
		if pc.Name == defaultpreemption.Name {
			a, ok := pc.Args.(*config.DefaultPreemptionArgs)
			return a, ok
		}
	}
	return nil, false
}

// successMessage is DefaultPreemption's message when it nominates a node.
func successMessage(node string, victims int) string {
	return fmt.Sprintf("preemption: found a potential placement for pod on node %v, preempting %d victims", node, victims)
}

// allowedPick says whether node is a pick upstream could make: with all
// potential nodes considered, one of the tied best candidates; otherwise
// (upstream stops after NumCandidates, from a random offset) any candidate,
// but one without PDB violations if any candidate has none.
func allowedPick(want *PreemptWant, node string) error {
	i := slices.IndexFunc(want.Candidates, func(c PreemptCandidate) bool { return c.Node == node })
	if i < 0 {
		return fmt.Errorf("%q is not a candidate", node)
	}
	if want.AllConsidered {
		if !slices.Contains(want.Tied, node) {
			return fmt.Errorf("%q is a candidate but not among the best %v", node, want.Tied)
		}
		return nil
	}
	if want.Candidates[i].PDBViolations > 0 && slices.ContainsFunc(want.Candidates, func(c PreemptCandidate) bool { return c.PDBViolations == 0 }) {
		return fmt.Errorf("%q violates %d PDBs, and a candidate without violations exists", node, want.Candidates[i].PDBViolations)
	}
	return nil
}
