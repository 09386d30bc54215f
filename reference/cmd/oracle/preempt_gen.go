package main

import (
	"fmt"
	"math/rand/v2"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

var (
	// Priorities of running pods and of the pod to place.
	victimPriorities   = []int32{-10, 0, 10, 100, 100, 1000, 5000}
	preemptorPriority  = []int32{10, 100, 1000, 1000, 5000}
	preemptApps        = []string{"web", "db", "batch", "cache"}
	preemptNamespaces  = []string{"default", "team-a"}
	preemptPort        = int32(8080)
	dedicatedTaint     = v1.Taint{Key: "dedicated", Value: "batch", Effect: v1.TaintEffectNoSchedule}
	preemptStartOrigin = int64(1767225600 - 7*86400)
)

type preemptGenerator struct {
	r    *rand.Rand
	in   *PreemptInput
	uids int
	// starts: the start times in use per node; all: those drawn outside
	// the pool.
	starts map[string]map[int64]bool
	all    map[int64]bool
	pool   []int64
}

// generatePreempt makes preemption case seed's input: every node fails
// Filter for the pod, most for reasons preemption can resolve (resources,
// pod count, the host port), some for reasons it cannot (a taint, the node
// selector, cordoned). With volumes (gen-preempt --volumes), the volume
// plugins are on and, in about half the cases, storage objects from a
// second random stream make volumes decide too (preempt_vol_gen.go).
func generatePreempt(seed uint64, volumes bool) *PreemptInput {
	g := &preemptGenerator{
		r: rand.New(rand.NewPCG(seed, 0x707265656d7074)),
		in: &PreemptInput{Input: Input{
			Nodes: []*v1.Node{}, Pods: []*v1.Pod{}, Namespaces: []*v1.Namespace{},
			Services: []*v1.Service{}, ReplicaSets: []*appsv1.ReplicaSet{},
			StatefulSets: []*appsv1.StatefulSet{}, ReplicationControllers: []*v1.ReplicationController{},
		}, PodDisruptionBudgets: []*policyv1.PodDisruptionBudget{}},
		starts: map[string]map[int64]bool{}, all: map[int64]bool{},
	}
	r := g.r
	if chance(r, 0.4) {
		for i := range 6 {
			s := preemptStartOrigin - 3600*int64(i+1)
			g.pool = append(g.pool, s)
		}
	}
	g.in.Profile = preemptProfile(r, volumes)
	for _, ns := range preemptNamespaces {
		g.in.Namespaces = append(g.in.Namespaces, &v1.Namespace{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
			ObjectMeta: metav1.ObjectMeta{Name: ns, UID: g.uid("ns"), Labels: map[string]string{v1.LabelMetadataName: ns}},
		})
	}
	pod := g.preemptor()
	g.in.Pod = pod
	var vols *preemptVols
	if volumes {
		vols = newPreemptVols(rand.New(rand.NewPCG(seed, 0x70766f6c756d6573)), g)
	}
	for i := range 2 + r.IntN(11) {
		n := g.preemptNode(i)
		if vols.lightNode(n) {
			g.fillLight(n, pod)
		} else {
			g.fillNode(n, pod)
		}
	}
	vols.finish()
	for i := range pick(r, []int{0, 1, 1, 2, 3}) {
		g.in.PodDisruptionBudgets = append(g.in.PodDisruptionBudgets, g.pdb(i))
	}
	return g.in
}

func (g *preemptGenerator) uid(kind string) types.UID {
	g.uids++
	return types.UID(fmt.Sprintf("%s-%04d", kind, g.uids))
}

// start is a start time no other pod on the node has, so that victims of
// equal priority have a strict order there. In some cases pods on
// different nodes share start times (from a pool of six), so that
// candidates can tie on every criterion.
func (g *preemptGenerator) start(node string) *metav1.Time {
	if g.starts[node] == nil {
		g.starts[node] = map[int64]bool{}
	}
	used := g.starts[node]
	for _, i := range g.r.Perm(len(g.pool)) {
		if s := g.pool[i]; !used[s] {
			used[s] = true
			return ptr.To(metav1.Unix(s, 0))
		}
	}
	for {
		s := preemptStartOrigin + int64(g.r.IntN(6*86400))
		if !g.all[s] {
			g.all[s] = true
			used[s] = true
			return ptr.To(metav1.Unix(s, 0))
		}
	}
}

// preemptProfile is the stock profile less the plugins kscore lacks, with
// DefaultPreemption on (and with volumes, VolumeBinding, VolumeRestrictions,
// NodeVolumeLimits and VolumeZone, as gen --volumes); some cases set its
// args, most so that every potential node is still dry-run, about 1 in 10
// so that not all are. volumes draws nothing from r.
func preemptProfile(r *rand.Rand, volumes bool) string {
	w := &yamlWriter{}
	w.line(0, "apiVersion: kubescheduler.config.k8s.io/v1")
	w.line(0, "kind: KubeSchedulerConfiguration")
	w.line(0, "profiles:")
	w.line(0, "- schedulerName: kscore-default")
	w.line(2, "percentageOfNodesToScore: 100")
	w.line(2, "plugins:")
	w.line(4, "multiPoint:")
	w.line(6, "disabled:")
	for _, name := range disabledPlugins {
		if name != "DefaultPreemption" && !(volumes && volumePlugins[name]) {
			w.line(6, "- name: %s", name)
		}
	}
	var pct, abs int
	switch x := r.Float64(); {
	case x < 0.65:
		return w.b.String()
	case x < 0.9: // every potential node (at most 12) is considered
		pct, abs = pick(r, []int{0, 10, 50, 100}), pick(r, []int{12, 50, 100})
		if chance(r, 0.3) {
			pct, abs = 100, pick(r, []int{0, 1})
		}
	default: // upstream stops after a few candidates
		pct, abs = pick(r, []int{0, 10, 20}), pick(r, []int{1, 2})
	}
	w.line(2, "pluginConfig:")
	w.line(2, "- name: DefaultPreemption")
	w.line(4, "args:")
	w.line(6, "minCandidateNodesPercentage: %d", pct)
	w.line(6, "minCandidateNodesAbsolute: %d", abs)
	return w.b.String()
}

func milli(m int64) resource.Quantity { return *resource.NewMilliQuantity(m, resource.DecimalSI) }
func mebi(m int64) resource.Quantity  { return *resource.NewQuantity(m*mb, resource.BinarySI) }

func (g *preemptGenerator) preemptor() *v1.Pod {
	r := g.r
	ns := pick(r, preemptNamespaces)
	app := pick(r, preemptApps)
	c := v1.Container{Name: "app", Image: "registry.k8s.io/pause:3.10", Resources: v1.ResourceRequirements{
		Requests: v1.ResourceList{
			v1.ResourceCPU:    milli(pick(r, []int64{500, 1000, 1000, 1500, 2000})),
			v1.ResourceMemory: mebi(pick(r, []int64{256, 512, 1024})),
		},
	}}
	if chance(r, 0.3) {
		c.Ports = []v1.ContainerPort{{ContainerPort: preemptPort, HostPort: preemptPort, Protocol: v1.ProtocolTCP}}
	}
	p := &v1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: "incoming", Namespace: ns, UID: g.uid("pod"),
			Labels: map[string]string{labelApp: app}},
		Spec: v1.PodSpec{
			SchedulerName: schedulerName, Containers: []v1.Container{c},
			Priority: ptr.To(pick(r, preemptorPriority)),
		},
		Status: v1.PodStatus{Phase: v1.PodPending},
	}
	switch x := r.Float64(); {
	case x < 0.1:
		p.Spec.PreemptionPolicy = ptr.To(v1.PreemptNever)
	case x < 0.2:
		p.Spec.PreemptionPolicy = ptr.To(v1.PreemptLowerPriority)
	}
	if chance(r, 0.3) {
		p.Spec.NodeSelector = map[string]string{"pool": "a"}
	}
	if chance(r, 0.3) {
		p.Spec.Tolerations = []v1.Toleration{{Key: dedicatedTaint.Key, Operator: v1.TolerationOpEqual, Value: dedicatedTaint.Value, Effect: dedicatedTaint.Effect}}
	}
	return p
}

func (g *preemptGenerator) preemptNode(i int) *v1.Node {
	r := g.r
	name := fmt.Sprintf("n%d", i+1)
	labels := map[string]string{
		labelHostname: name, labelZone: fmt.Sprintf("zone-%c", 'a'+r.IntN(2)),
		"pool": pick(r, []string{"a", "a", "a", "b"}),
	}
	cores := pick(r, []int64{2, 4, 4, 8})
	capacity := v1.ResourceList{
		v1.ResourceCPU:    milli(cores * 1000),
		v1.ResourceMemory: mebi(pick(r, []int64{4, 8, 16}) * 1024),
		v1.ResourcePods:   *resource.NewQuantity(pick(r, []int64{110, 110, 110, 110, 3, 5}), resource.DecimalSI),
	}
	n := &v1.Node{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Node"},
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: g.uid("node"), Labels: labels},
		Status:     v1.NodeStatus{Capacity: capacity, Allocatable: capacity.DeepCopy()},
	}
	if chance(r, 0.15) {
		n.Spec.Taints = append(n.Spec.Taints, dedicatedTaint)
	}
	if chance(r, 0.05) {
		n.Spec.Unschedulable = true
		n.Spec.Taints = append(n.Spec.Taints, v1.Taint{Key: v1.TaintNodeUnschedulable, Effect: v1.TaintEffectNoSchedule})
	}
	g.in.Nodes = append(g.in.Nodes, n)
	return n
}

// fillNode puts running pods on the node. Unless the pod's host port is
// taken there (by one of them), they leave less of cpu or memory than the
// pod requests, or no pod slot, so that the pod fits nowhere.
func (g *preemptGenerator) fillNode(n *v1.Node, pod *v1.Pod) {
	r := g.r
	alloc := n.Status.Allocatable
	slots := alloc.Pods().Value()
	freeCPU, freeMem := alloc.Cpu().MilliValue(), alloc.Memory().Value()/mb
	wantCPU, wantMem := pod.Spec.Containers[0].Resources.Requests.Cpu().MilliValue(), pod.Spec.Containers[0].Resources.Requests.Memory().Value()/mb
	wantsPort := len(pod.Spec.Containers[0].Ports) > 0
	// What the pods must exhaust: cpu, memory, or (a port holder placed)
	// nothing; sometimes a little more than needed.
	byMemory := chance(r, 0.3)
	portHeld := wantsPort && chance(r, 0.4)
	var placed int64
	for placed < slots {
		if portHeld && placed > 0 && chance(r, 0.3) {
			break
		}
		if !portHeld && (!byMemory && freeCPU < wantCPU || byMemory && freeMem < wantMem) && !chance(r, 0.15) {
			break
		}
		cpu := min(freeCPU, pick(r, []int64{100, 250, 500, 500, 1000, 1500}))
		mem := min(freeMem, pick(r, []int64{128, 256, 512, 1024, 2048}))
		if byMemory {
			mem = min(freeMem, pick(r, []int64{512, 1024, 2048, 4096}))
		}
		if cpu <= 0 && mem <= 0 {
			break
		}
		p := g.runningPod(n.Name, cpu, mem, portHeld && placed == 0)
		g.in.Pods = append(g.in.Pods, p)
		freeCPU -= cpu
		freeMem -= mem
		placed++
	}
}

// fillLight puts 1–4 running pods on the node (fewer with few pod slots)
// that leave the pod's cpu, memory and a pod slot free, and hold no host
// port: in gen-preempt --volumes, the node's volumes block it instead.
func (g *preemptGenerator) fillLight(n *v1.Node, pod *v1.Pod) {
	r := g.r
	alloc := n.Status.Allocatable
	req := pod.Spec.Containers[0].Resources.Requests
	spareCPU := alloc.Cpu().MilliValue() - req.Cpu().MilliValue()
	spareMem := alloc.Memory().Value()/mb - req.Memory().Value()/mb
	count := min(alloc.Pods().Value()-1, int64(1+r.IntN(4)))
	for range count {
		cpu := min(spareCPU, pick(r, []int64{0, 100, 250, 500}))
		mem := min(spareMem, pick(r, []int64{128, 256, 512}))
		g.in.Pods = append(g.in.Pods, g.runningPod(n.Name, cpu, mem, false))
		spareCPU -= cpu
		spareMem -= mem
	}
}

// hog is a running pod on node that takes all of its cpu, so that the pod
// fits there no longer.
func (g *preemptGenerator) hog(n *v1.Node) {
	g.in.Pods = append(g.in.Pods, g.runningPod(n.Name, n.Status.Allocatable.Cpu().MilliValue(), 0, false))
}

func (g *preemptGenerator) runningPod(node string, cpu, mem int64, port bool) *v1.Pod {
	r := g.r
	requests := v1.ResourceList{}
	if cpu > 0 {
		requests[v1.ResourceCPU] = milli(cpu)
	}
	if mem > 0 {
		requests[v1.ResourceMemory] = mebi(mem)
	}
	c := v1.Container{Name: "app", Image: "registry.k8s.io/pause:3.10", Resources: v1.ResourceRequirements{Requests: requests}}
	if port {
		c.Ports = []v1.ContainerPort{{ContainerPort: preemptPort, HostPort: preemptPort, Protocol: v1.ProtocolTCP}}
	}
	app := pick(r, preemptApps)
	uid := g.uid("pod")
	p := &v1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%s", app, uid[4:]), Namespace: pick(r, preemptNamespaces),
			UID: uid, Labels: map[string]string{labelApp: app}},
		Spec:   v1.PodSpec{SchedulerName: schedulerName, NodeName: node, Containers: []v1.Container{c}},
		Status: v1.PodStatus{Phase: v1.PodRunning, StartTime: g.start(node)},
	}
	if chance(r, 0.9) {
		p.Spec.Priority = ptr.To(pick(r, victimPriorities))
	}
	if chance(r, 0.04) {
		p.DeletionTimestamp = ptr.To(deletedAt)
		p.DeletionGracePeriodSeconds = ptr.To[int64](30)
	}
	return p
}

// pdb covers one app in one namespace (rarely with an empty selector,
// which the scheduler takes to match no pod), allowing 0–2 disruptions;
// rarely it lists a running pod as already disrupted.
func (g *preemptGenerator) pdb(i int) *policyv1.PodDisruptionBudget {
	r := g.r
	ns := pick(r, preemptNamespaces)
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{labelApp: pick(r, preemptApps)}}
	if chance(r, 0.05) {
		sel = &metav1.LabelSelector{}
	}
	pdb := &policyv1.PodDisruptionBudget{
		TypeMeta:   metav1.TypeMeta{APIVersion: "policy/v1", Kind: "PodDisruptionBudget"},
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("pdb-%d", i), Namespace: ns, UID: g.uid("pdb")},
		Spec:       policyv1.PodDisruptionBudgetSpec{Selector: sel, MinAvailable: ptr.To(intstr.FromInt32(1))},
		Status:     policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: pick(r, []int32{0, 0, 1, 2})},
	}
	if chance(r, 0.1) && len(g.in.Pods) > 0 {
		p := pick(r, g.in.Pods)
		pdb.Status.DisruptedPods = map[string]metav1.Time{p.Name: metav1.Unix(preemptStartOrigin+7*86400, 0)}
	}
	return pdb
}
