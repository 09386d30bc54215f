// Package concentrate is the seed's Concentrate plugin for kube-scheduler: it prefers
// the node that already runs the most pods sharing the incoming pod's labelKey value
// (the deliberate inverse of default spreading). It is the reference the C++ scorer's
// Concentrate must agree with.
package concentrate

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	fwk "k8s.io/kube-scheduler/framework"
)

// Name is the plugin name used in KubeSchedulerConfiguration profiles.
const Name = "Concentrate"

// RejectReason is the Filter reason with rejectEverything. kube-scheduler prefixes the
// node count, so the FailedScheduling event reads
// "0/3 nodes are available: 3 node(s) were rejected by Concentrate (rejectEverything)."
const RejectReason = "node(s) were rejected by Concentrate (rejectEverything)"

// stateKey is where PreScore leaves the incoming pod's label value for Score.
const stateKey fwk.StateKey = "PreScore" + Name

// preScoreState is the CycleState entry written by PreScore.
type preScoreState struct {
	// value of the incoming pod's labelKey label.
	value string
}

// Clone implements fwk.StateData. The state is immutable once written.
func (s *preScoreState) Clone() fwk.StateData { return s }

// Concentrate implements PreScore, Score (+NormalizeScore) and Filter.
type Concentrate struct {
	args Args
}

var (
	_ fwk.PreScorePlugin  = &Concentrate{}
	_ fwk.ScorePlugin     = &Concentrate{}
	_ fwk.ScoreExtensions = &Concentrate{}
	_ fwk.FilterPlugin    = &Concentrate{}
)

// Concentrate deliberately does not implement fwk.SignPlugin: without it the
// framework turns opportunistic batching off, so every pod is scored against the
// current placements (which is what Concentrate is about).

// New is the plugin factory registered with app.WithPlugin(Name, New).
func New(_ context.Context, obj runtime.Object, _ fwk.Handle) (fwk.Plugin, error) {
	args, err := DecodeArgs(obj)
	if err != nil {
		return nil, err
	}
	return &Concentrate{args: *args}, nil
}

// Name implements fwk.Plugin.
func (c *Concentrate) Name() string { return Name }

// Args returns the plugin's effective (defaulted) arguments.
func (c *Concentrate) Args() Args { return c.args }

// Filter rejects every node when rejectEverything is set, and accepts every node
// otherwise. (Filter only runs when the profile enables Concentrate at filter or
// multiPoint.)
func (c *Concentrate) Filter(_ context.Context, _ fwk.CycleState, _ *v1.Pod, _ fwk.NodeInfo) *fwk.Status {
	if c.args.RejectEverything {
		return fwk.NewStatus(fwk.Unschedulable, RejectReason)
	}
	return nil
}

// PreScore computes the incoming pod's labelKey value once and writes it to
// CycleState. A pod without the label skips Score (all nodes equal).
func (c *Concentrate) PreScore(_ context.Context, state fwk.CycleState, pod *v1.Pod, _ []fwk.NodeInfo) *fwk.Status {
	value, ok := pod.Labels[c.args.LabelKey]
	if !ok {
		return fwk.NewStatus(fwk.Skip)
	}
	state.Write(stateKey, &preScoreState{value: value})
	return nil
}

// labelValue reads PreScore's value from CycleState. When PreScore did not run (a
// profile may enable Concentrate at score only, and kube-scheduler then does not
// call its PreScore) the value is derived from the pod the same way.
func (c *Concentrate) labelValue(state fwk.CycleState, pod *v1.Pod) (string, bool, error) {
	data, err := state.Read(stateKey)
	if err == nil {
		s, ok := data.(*preScoreState)
		if !ok {
			return "", false, fmt.Errorf("%s: CycleState %q holds %T, want *preScoreState", Name, stateKey, data)
		}
		return s.value, true, nil
	}
	value, ok := pod.Labels[c.args.LabelKey]
	return value, ok, nil
}

// Score is the number of pods on the node in the pod's namespace, not terminated
// (phase not Succeeded/Failed), not being deleted, carrying labelKey=value.
func (c *Concentrate) Score(_ context.Context, state fwk.CycleState, pod *v1.Pod, nodeInfo fwk.NodeInfo) (int64, *fwk.Status) {
	value, ok, err := c.labelValue(state, pod)
	if err != nil {
		return 0, fwk.AsStatus(err)
	}
	if !ok {
		return 0, nil
	}
	var n int64
	for _, pi := range nodeInfo.GetPods() {
		if matches(pi.GetPod(), pod.Namespace, c.args.LabelKey, value) {
			n++
		}
	}
	return n, nil
}

func matches(p *v1.Pod, namespace, key, value string) bool {
	if p == nil || p.Namespace != namespace || p.DeletionTimestamp != nil {
		return false
	}
	if p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed {
		return false
	}
	v, ok := p.Labels[key]
	return ok && v == value
}

// ScoreExtensions implements fwk.ScorePlugin.
func (c *Concentrate) ScoreExtensions() fwk.ScoreExtensions { return c }

// NormalizeScore maps raw scores onto [0, MaxNodeScore] as score*100/max (integer
// division, like kube-scheduler's default normaliser). All zero: left as they are.
func (c *Concentrate) NormalizeScore(_ context.Context, _ fwk.CycleState, _ *v1.Pod, scores fwk.NodeScoreList) *fwk.Status {
	var highest int64
	for i := range scores {
		if scores[i].Score > highest {
			highest = scores[i].Score
		}
	}
	if highest == 0 {
		return nil
	}
	for i := range scores {
		scores[i].Score = scores[i].Score * fwk.MaxNodeScore / highest
	}
	return nil
}
