// kbench: the Go side of hack/bench.sh, one small binary on client-go v0.37.2.
//
//	kbench nodes --kubeconfig K --from A --to B     create Ready, untainted Nodes bench-node-A..B-1
//	             [--zones V1,V2,..] [--memory Q]    (zone label values dealt round robin, "" for none;
//	             [--csi-limit N]                    memory capacity, default 16Gi; --csi-limit: upstream's
//	                                                nodeAllocatableStrategy for ebs.csi.aws.com, an
//	                                                allocatable count and a CSINode allowing N volumes)
//	kbench run   --kubeconfig K --pods M --scheduler S --out F
//	                                                watch pods, then create M pods (groups of 10 sharing
//	                                                an app label) in parallel; wait until all are bound;
//	                                                write throughput, latencies and placements as JSON
//	             [--shape spread|antiaffinity|preemption|hostport|csipvs|intreepvs] [--init]
//	                                                instead: upstream scheduler_perf's TopologySpreading,
//	                                                SchedulingPodAntiAffinity, PreemptionBasic,
//	                                                HostPortConflict, SchedulingCSIPVs or SchedulingInTreePVs pods
//	                                                (--init: that workload's unmeasured init pods), in
//	                                                upstream's namespaces; the measured run checks the
//	                                                constraint (preemption: and counts the victims)
//	kbench bind  --kubeconfig K --scheduler S       the floor: a trivial binder, round robin over the
//	             [--events]                         nodes, no filtering, no scoring; with --events it
//	                                                also writes the Scheduled event kube-scheduler writes
//
// Go with client-go rather than C++ on shim/kube: the binder then is the same client stack
// (informer, rate limiter, HTTP/2 transport) kube-scheduler uses, so run (e) measures what the
// API server takes from an upstream-grade client, not a second implementation of ours; and the
// load generator/observer shares that code.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/events"
)

const (
	runLabel    = "kbench-run"
	zoneKey     = "topology.kubernetes.io/zone"
	hostnameKey = "kubernetes.io/hostname"
	// highPriorityClass carries the preemption shape's measured pods' priority (see
	// highPriorityPod).
	highPriorityClass = "kbench-high"
	// csipvs: upstream's pv-csi.yaml driver and SchedulingCSIPVs' nodeAllocatable key.
	csiDriver      = "ebs.csi.aws.com"
	csiAllocatable = v1.ResourceName("attachable-volumes-csi-" + csiDriver)
)

func die(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "kbench: "+format+"\n", a...)
	os.Exit(1)
}

func client(kubeconfig string) *kubernetes.Clientset {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		die("kubeconfig: %v", err)
	}
	cfg.QPS, cfg.Burst = 5000, 5000 // the same limits as every scheduler measured
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		die("client: %v", err)
	}
	return cs
}

// parallel runs f(i) for i in [0, n) on w goroutines; returns the first error.
func parallel(n, w int, f func(i int) error) error {
	var next atomic.Int64
	var firstErr atomic.Value
	var wg sync.WaitGroup
	for k := 0; k < w; k++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n || firstErr.Load() != nil {
					return
				}
				if err := f(i); err != nil {
					firstErr.CompareAndSwap(nil, err)
				}
			}
		}()
	}
	wg.Wait()
	if e := firstErr.Load(); e != nil {
		return e.(error)
	}
	return nil
}

// ------------------------------------------------------------------ nodes

func cmdNodes(args []string) {
	fs := flag.NewFlagSet("nodes", flag.ExitOnError)
	kc := fs.String("kubeconfig", "", "")
	from := fs.Int("from", 1, "first index")
	to := fs.Int("to", 1, "one past the last index")
	workers := fs.Int("workers", 48, "")
	zoneList := fs.String("zones", "zone-a,zone-b,zone-c", "values of topology.kubernetes.io/zone, dealt "+
		"round robin (node i gets value i mod count, as upstream's labelNodePrepareStrategy deals them); "+
		"empty: no zone label")
	memory := fs.String("memory", "16Gi", "memory capacity (= allocatable) of every node")
	csiLimit := fs.Int("csi-limit", 0, "if > 0: allocatable "+string(csiAllocatable)+" and a CSINode whose driver "+
		csiDriver+" allows this many volumes (scheduler_perf's SchedulingCSIPVs nodes)")
	fs.Parse(args)
	cs := client(*kc)
	ctx := context.Background()
	var zones []string
	if *zoneList != "" {
		zones = strings.Split(*zoneList, ",")
	}
	q := func(s string) resource.Quantity { return resource.MustParse(s) }
	alloc := v1.ResourceList{v1.ResourceCPU: q("4"), v1.ResourceMemory: q(*memory), v1.ResourcePods: q("110"),
		v1.ResourceEphemeralStorage: q("100Gi")}
	if *csiLimit > 0 {
		alloc[csiAllocatable] = *resource.NewQuantity(int64(*csiLimit), resource.DecimalSI)
	}
	t0 := time.Now()
	err := parallel(*to-*from, *workers, func(k int) error {
		i := *from + k
		name := fmt.Sprintf("bench-node-%05d", i)
		labels := map[string]string{
			"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
			"type": "bench"}
		if len(zones) > 0 {
			labels[zoneKey] = zones[i%len(zones)]
		}
		n := &v1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
			Status: v1.NodeStatus{Capacity: alloc, Allocatable: alloc,
				NodeInfo: v1.NodeSystemInfo{Architecture: "amd64", OperatingSystem: "linux", KubeletVersion: "v1.37.2"},
				Conditions: []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue, Reason: "KubeletReady",
					LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()}}},
		}
		created, err := cs.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{})
		if err != nil {
			return fmt.Errorf("create %s: %w", name, err)
		}
		// Admission puts node.kubernetes.io/not-ready on new nodes; no node-lifecycle
		// controller runs to lift it (no kubelets), so lift it here.
		if len(created.Spec.Taints) > 0 {
			_, err = cs.CoreV1().Nodes().Patch(ctx, name, types.MergePatchType,
				[]byte(`{"spec":{"taints":null}}`), metav1.PatchOptions{})
			if err != nil {
				return fmt.Errorf("untaint %s: %w", name, err)
			}
		}
		// Status as created may have been reset by the create strategy: make sure it is Ready.
		if len(created.Status.Conditions) == 0 || created.Status.Allocatable.Cpu().IsZero() {
			created.Status = n.Status
			if _, err = cs.CoreV1().Nodes().UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
				// refetch and retry once (the patch above bumped resourceVersion)
				cur, gerr := cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
				if gerr != nil {
					return gerr
				}
				cur.Status = n.Status
				if _, err = cs.CoreV1().Nodes().UpdateStatus(ctx, cur, metav1.UpdateOptions{}); err != nil {
					return fmt.Errorf("status %s: %w", name, err)
				}
			}
		}
		if *csiLimit > 0 {
			return createCSINode(ctx, cs, name, int32(*csiLimit))
		}
		return nil
	})
	if err != nil {
		die("%v", err)
	}
	fmt.Fprintf(os.Stderr, "kbench: %d node(s) in %.1fs\n", *to-*from, time.Since(t0).Seconds())
}

// createCSINode: runners.go's NodeAllocatableStrategy.createCSINode for SchedulingCSIPVs'
// csiNodeAllocatable (one driver, ebs.csi.aws.com, count N; no migrated plugins).
func createCSINode(ctx context.Context, cs *kubernetes.Clientset, node string, count int32) error {
	_, err := cs.StorageV1().CSINodes().Create(ctx, &storagev1.CSINode{
		ObjectMeta: metav1.ObjectMeta{Name: node, Annotations: map[string]string{v1.MigratedPluginsAnnotationKey: ""}},
		Spec: storagev1.CSINodeSpec{Drivers: []storagev1.CSINodeDriver{{Name: csiDriver, NodeID: node,
			Allocatable: &storagev1.VolumeNodeResources{Count: &count}}}},
	}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create CSINode %s: %w", node, err)
	}
	return nil
}

// ------------------------------------------------------------------ run

type result struct {
	Scheduler     string             `json:"scheduler"`
	Pods          int                `json:"pods"`
	Bound         int                `json:"bound"`
	Nodes         int                `json:"nodes"`
	CreateSeconds float64            `json:"create_seconds"` // first create call to last create return
	WallSeconds   float64            `json:"wall_seconds"`   // first create call to last bind observed
	Throughput    float64            `json:"throughput"`     // bound / wall
	P50, P90, P99 float64            `json:"-"`
	Latency       map[string]float64 `json:"latency_ms"`
	PerNode       map[string]int     `json:"per_node"`
	NodesPerGroup float64            `json:"nodes_per_group"` // mean distinct nodes per app group
	GroupsOnOne   float64            `json:"groups_on_one_node"`
	// basic shape: the placement of each app group, in group order: {node: pods of the group
	// there}. bench/report.py reads the groups' concentration from it.
	GroupNodes    []map[string]int `json:"group_nodes,omitempty"`
	StartUnixNano int64            `json:"start_unix_nano"`
	EndUnixNano   int64            `json:"end_unix_nano"`
	TimedOut      bool             `json:"timed_out"`
	Shape         string           `json:"shape"`
	Namespace     string           `json:"namespace"`
	// spread and antiaffinity: whether the placement honours the shape's constraint, read
	// back from the API server once every pod is bound (see checkShape).
	Check   string         `json:"check,omitempty"`
	CheckOK *bool          `json:"check_ok,omitempty"`
	PerZone map[string]int `json:"per_zone,omitempty"`
	// preemption: the init (low-priority) pods present when the measured run started and
	// those left when it ended (timed out or not); the difference is the victims the
	// scheduler deleted.
	InitBefore *int `json:"init_pods_before,omitempty"`
	InitAfter  *int `json:"init_pods_remaining,omitempty"`
	Victims    *int `json:"victims,omitempty"`
	// preemption: victims deleted but still stored (deletionTimestamp set) at the end.
	Terminating int `json:"init_pods_terminating,omitempty"`
}

func podSpec(name, app, sched, run string) *v1.Pod {
	q := resource.MustParse
	f := false
	zero := int64(0)
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": app, runLabel: run}},
		Spec: v1.PodSpec{
			SchedulerName:                 sched,
			TerminationGracePeriodSeconds: &zero,
			AutomountServiceAccountToken:  &f,
			// scheduler_perf's pod-default.yaml
			Containers: []v1.Container{{Name: "pause", Image: "pause:3.10",
				Resources: v1.ResourceRequirements{
					Requests: v1.ResourceList{v1.ResourceCPU: q("100m"), v1.ResourceMemory: q("500Mi")},
					Limits:   v1.ResourceList{v1.ResourceCPU: q("100m"), v1.ResourceMemory: q("500Mi")}}}},
		},
	}
}

// ------------------------------------------------------------------ shapes
//
// basic is the SchedulingBasic-like shape above (podSpec). spread, antiaffinity and
// preemption are upstream scheduler_perf's TopologySpreading, SchedulingPodAntiAffinity and
// PreemptionBasic (test/integration/scheduler_perf/{topology_spreading,affinity,
// default_preemption}/performance-config.yaml of k8s.io/kubernetes v1.37.2): their init pods
// (created first, scheduled by the scheduler under test, not measured: `kbench run --init`)
// and their measured pods, each in the namespace upstream puts them in, from upstream's
// templates (templates/pod-default.yaml, pod-with-topology-spreading.yaml,
// pod-with-pod-anti-affinity.yaml, pod-low-priority.yaml,
// default_preemption/templates/pod-high-priority.yaml).

type shape struct {
	initNS, measureNS string
	// decorate adds the template's labels and constraints to upstreamPod's pod-default.yaml.
	initPod, measurePod func(*v1.Pod)
	// csipvs, intreepvs: every pod (init and measured) gets its own pre-bound PV and PVC
	// (pvFromTemplate), created before the pods.
	pv func(name string) *v1.PersistentVolume
}

var shapes = map[string]shape{
	// createPods ops without a namespace get namespace-<opIndex>: the init pods are op 1,
	// the measured pods op 2. Init pods are plain pod-default.yaml (no labels).
	"spread": {initNS: "namespace-1", measureNS: "namespace-2",
		initPod: func(*v1.Pod) {}, measurePod: spreadPod},
	// Both ops use the test case's defaultPodTemplatePath, pod-with-pod-anti-affinity.yaml.
	"antiaffinity": {initNS: "sched-0", measureNS: "sched-1",
		initPod: antiAffinityPod, measurePod: antiAffinityPod},
	// PreemptionBasic: createPods ops 1 (low priority) and 2 (high priority), as spread.
	"preemption": {initNS: "namespace-1", measureNS: "namespace-2",
		initPod: lowPriorityPod, measurePod: highPriorityPod},
	// batching/HostPortConflict: one createPods op (op 1), no init pods.
	"hostport": {initNS: "namespace-1", measureNS: "namespace-1",
		initPod: hostPortPod, measurePod: hostPortPod},
	// volumes/SchedulingCSIPVs and SchedulingInTreePVs: createPods ops 1 and 2 with
	// pod-default.yaml, each pod with a pre-bound PV (pv-csi.yaml, pv-aws.yaml) and PVC (pvc.yaml).
	"csipvs": {initNS: "namespace-1", measureNS: "namespace-2",
		initPod: func(*v1.Pod) {}, measurePod: func(*v1.Pod) {}, pv: csiPV},
	"intreepvs": {initNS: "namespace-1", measureNS: "namespace-2",
		initPod: func(*v1.Pod) {}, measurePod: func(*v1.Pod) {}, pv: awsPV},
}

// pvTemplate: what templates/pv-csi.yaml and pv-aws.yaml share (ReadOnlyMany, 1Gi, Retain).
func pvTemplate(name string, src v1.PersistentVolumeSource) *v1.PersistentVolume {
	return &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1.PersistentVolumeSpec{
			AccessModes:                   []v1.PersistentVolumeAccessMode{v1.ReadOnlyMany},
			Capacity:                      v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")},
			PersistentVolumeReclaimPolicy: v1.PersistentVolumeReclaimRetain,
			PersistentVolumeSource:        src,
		},
	}
}

// csiPV: templates/pv-csi.yaml; the volume handle is the PV's name, as runners.go sets it.
func csiPV(name string) *v1.PersistentVolume {
	return pvTemplate(name, v1.PersistentVolumeSource{CSI: &v1.CSIPersistentVolumeSource{Driver: csiDriver,
		VolumeHandle: name}})
}

// awsPV: templates/pv-aws.yaml; executor.go's volume factory sets the volume ID to vol-<index>,
// which is the PV's name before runners.go prefixes the namespace.
func awsPV(name string) *v1.PersistentVolume {
	id := name[strings.LastIndex(name, "vol-"):]
	return pvTemplate(name, v1.PersistentVolumeSource{AWSElasticBlockStore: &v1.AWSElasticBlockStoreVolumeSource{
		VolumeID: id}})
}

// claimNames: runners.go's CreatePodWithPersistentVolume names pod i's claim pvc-<i> and its PV
// <namespace>-vol-<i>.
func claimNames(ns string, i int) (pvc, pv string) {
	return fmt.Sprintf("pvc-%d", i), fmt.Sprintf("%s-vol-%d", ns, i)
}

// createBoundPair creates pod i's claim and volume bound to each other, as runners.go's
// CreatePodWithPersistentVolume with bindVolume: the claim (pvc.yaml: ReadOnlyMany 1Gi,
// pv.kubernetes.io/bind-completed) names the volume, the volume's claimRef names the claim,
// and both statuses are then set to Bound (create resets them). The claimRef also carries the
// claim's UID, as the PV controller would write it. hack/bench.sh runs these shapes without
// the PV controller, as scheduler_perf does: it would rebind or mark Lost what it did not bind.
func createBoundPair(ctx context.Context, cs *kubernetes.Clientset, sh shape, ns string, i int) error {
	pvcName, pvName := claimNames(ns, i)
	pvc, err := cs.CoreV1().PersistentVolumeClaims(ns).Create(ctx, &v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: pvcName, Namespace: ns,
			Annotations: map[string]string{"pv.kubernetes.io/bind-completed": "true"}},
		Spec: v1.PersistentVolumeClaimSpec{
			AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadOnlyMany},
			Resources: v1.VolumeResourceRequirements{
				Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")}},
			VolumeName: pvName,
		},
	}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("create PVC %s/%s: %w", ns, pvcName, err)
	}
	pvc.Status.Phase = v1.ClaimBound
	if _, err = cs.CoreV1().PersistentVolumeClaims(ns).UpdateStatus(ctx, pvc, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("PVC %s/%s status: %w", ns, pvcName, err)
	}
	pv := sh.pv(pvName)
	pv.Spec.ClaimRef = &v1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: ns,
		Name: pvcName, UID: pvc.UID}
	if pv, err = cs.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create PV %s: %w", pvName, err)
	}
	pv.Status.Phase = v1.VolumeBound
	if _, err = cs.CoreV1().PersistentVolumes().UpdateStatus(ctx, pv, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("PV %s status: %w", pvName, err)
	}
	return nil
}

// withClaim gives pod i the volume "vol" on its claim pvc-<i>, as runners.go does.
func withClaim(p *v1.Pod, i int) {
	pvc, _ := claimNames(p.Namespace, i)
	p.Spec.Volumes = []v1.Volume{{Name: "vol", VolumeSource: v1.VolumeSource{
		PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: pvc}}}}
}

// hostPortPod: templates/pod-hostport-80.yaml (pause 3.10.1, 100m / 100Mi, container and
// host port 80): once a pod is on a node, the next one no longer fits there.
func hostPortPod(p *v1.Pod) {
	p.Spec.Containers[0].Image = "registry.k8s.io/pause:3.10.1"
	p.Spec.Containers[0].Ports = []v1.ContainerPort{{ContainerPort: 80, HostPort: 80}}
	rl := v1.ResourceList{v1.ResourceCPU: resource.MustParse("100m"), v1.ResourceMemory: resource.MustParse("100Mi")}
	p.Spec.Containers[0].Resources = v1.ResourceRequirements{Requests: rl}
}

// upstreamPod is scheduler_perf's templates/pod-default.yaml (plus the run label and the
// scheduler name); unlike podSpec (basic, unchanged) it has upstream's image and port.
func upstreamPod(name, ns, sched, run string) *v1.Pod {
	p := podSpec(name, "", sched, run)
	delete(p.Labels, "app")
	p.Namespace = ns
	c := &p.Spec.Containers[0]
	c.Image = "registry.k8s.io/pause:3.10.2"
	c.Ports = []v1.ContainerPort{{ContainerPort: 80}}
	return p
}

// spreadPod: templates/pod-with-topology-spreading.yaml.
func spreadPod(p *v1.Pod) {
	p.Labels["color"] = "blue"
	p.Spec.TopologySpreadConstraints = []v1.TopologySpreadConstraint{{
		MaxSkew: 5, TopologyKey: zoneKey, WhenUnsatisfiable: v1.DoNotSchedule,
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"color": "blue"}}}}
}

// antiAffinityPod: templates/pod-with-pod-anti-affinity.yaml.
func antiAffinityPod(p *v1.Pod) {
	p.Labels["color"] = "green"
	p.Spec.Affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{{
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"color": "green"}},
			TopologyKey:   hostnameKey,
			Namespaces:    []string{"sched-1", "sched-0"}}}}}
}

// setRequests sets the pod's only container's requests and limits (equal, as upstream's
// templates have them).
func setRequests(p *v1.Pod, cpu, memory string) {
	rl := v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu), v1.ResourceMemory: resource.MustParse(memory)}
	p.Spec.Containers[0].Resources = v1.ResourceRequirements{Requests: rl, Limits: rl.DeepCopy()}
}

// lowPriorityPod: templates/pod-low-priority.yaml (pod-default.yaml with 900m CPU, pause
// 3.10.1). No priority and no priorityClassName, as upstream: the Priority admission plugin
// gives it 0 (no global default PriorityClass exists here). Four fill a 4-CPU node (3.6 CPU).
func lowPriorityPod(p *v1.Pod) {
	setRequests(p, "900m", "500Mi")
	p.Spec.Containers[0].Image = "registry.k8s.io/pause:3.10.1"
}

// highPriorityPod: default_preemption/templates/pod-high-priority.yaml: 3970m CPU, no port,
// priority 9999999. Upstream writes spec.priority; this API server runs the Priority admission
// plugin (on by default; hack/cluster.sh passes no --enable-admission-plugins), which refuses
// a spec.priority that differs from what the pod's PriorityClass (none: 0) gives. So the pod
// names the PriorityClass kbench-high (value 9999999, PreemptLowerPriority; ensurePriorityClass)
// and admission fills in the same priority and preemptionPolicy. It fits a node only once all
// four low-priority pods there are gone (400m free + 3 x 900m < 3970m): four victims per pod.
func highPriorityPod(p *v1.Pod) {
	setRequests(p, "3970m", "500Mi")
	p.Spec.Containers[0].Ports = nil
	p.Spec.PriorityClassName = highPriorityClass
}

// ensurePriorityClass creates the PriorityClass the preemption shape's measured pods name.
func ensurePriorityClass(ctx context.Context, cs *kubernetes.Clientset) {
	policy := v1.PreemptLowerPriority
	_, err := cs.SchedulingV1().PriorityClasses().Create(ctx, &schedulingv1.PriorityClass{
		ObjectMeta:       metav1.ObjectMeta{Name: highPriorityClass},
		Value:            9999999,
		PreemptionPolicy: &policy,
		Description:      "kbench preemption shape: upstream PreemptionBasic's pod-high-priority.yaml",
	}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		die("create priorityclass %s: %v", highPriorityClass, err)
	}
}

// countPods counts the pods in ns: those not being deleted, and those being deleted (a
// grace period 0 pod goes at once: none should linger).
func countPods(ctx context.Context, cs *kubernetes.Clientset, ns string) (live, terminating int) {
	pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		die("list pods in %s: %v", ns, err)
	}
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil {
			live++
		} else {
			terminating++
		}
	}
	return live, terminating
}

// ensureNamespace creates ns and its default ServiceAccount (the ServiceAccount admission
// plugin refuses pods until it exists; the controller-manager would make it, a moment later).
func ensureNamespace(ctx context.Context, cs *kubernetes.Clientset, ns string) {
	_, err := cs.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}},
		metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		die("create namespace %s: %v", ns, err)
	}
	_, err = cs.CoreV1().ServiceAccounts(ns).Create(ctx,
		&v1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		die("create service account %s/default: %v", ns, err)
	}
}

// checkShape reads the placement back and says whether it honours the shape's constraint:
// spread, the measured pods' skew across the zones that nodes carry (at most maxSkew 5; the
// constraint counts the pods of the incoming pod's namespace only, i.e. the measured ones);
// antiaffinity, at most one `color: green` pod (init or measured) per node; preemption, every
// measured (high-priority) pod bound, at most one per node, and no node's bound pods
// requesting more CPU than it has (4).
func checkShape(ctx context.Context, cs *kubernetes.Clientset, name string, sh shape, nodes []v1.Node, r *result) {
	ok := true
	switch name {
	case "spread":
		zoneOf := map[string]string{}
		r.PerZone = map[string]int{}
		for _, n := range nodes {
			if z, has := n.Labels[zoneKey]; has {
				zoneOf[n.Name] = z
				r.PerZone[z] += 0
			}
		}
		pods, err := cs.CoreV1().Pods(sh.measureNS).List(ctx, metav1.ListOptions{LabelSelector: "color=blue"})
		if err != nil {
			die("list pods: %v", err)
		}
		outside := 0
		for _, p := range pods.Items {
			if p.Spec.NodeName == "" {
				continue
			}
			if z, has := zoneOf[p.Spec.NodeName]; has {
				r.PerZone[z]++
			} else {
				outside++
			}
		}
		lo, hi := -1, 0
		for _, c := range r.PerZone {
			if lo < 0 || c < lo {
				lo = c
			}
			if c > hi {
				hi = c
			}
		}
		ok = lo >= 0 && hi-lo <= 5 && outside == 0
		r.Check = fmt.Sprintf("measured pods per zone %v: skew %d (maxSkew 5)", sortedMap(r.PerZone), hi-lo)
		if outside > 0 {
			r.Check += fmt.Sprintf(", %d on nodes without a zone", outside)
		}
	case "antiaffinity":
		per := map[string]int{}
		total := 0
		for _, ns := range []string{sh.initNS, sh.measureNS} {
			pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "color=green"})
			if err != nil {
				die("list pods: %v", err)
			}
			for _, p := range pods.Items {
				if p.Spec.NodeName != "" {
					per[p.Spec.NodeName]++
					total++
				}
			}
		}
		shared := 0
		for _, c := range per {
			if c > 1 {
				shared++
			}
		}
		ok = shared == 0
		r.Check = fmt.Sprintf("%d bound color=green pods (init and measured) on %d nodes: %d nodes hold more than one",
			total, len(per), shared)
	case "hostport":
		pods, err := cs.CoreV1().Pods(sh.measureNS).List(ctx, metav1.ListOptions{})
		if err != nil {
			die("list pods: %v", err)
		}
		per := map[string]int{}
		for _, p := range pods.Items {
			if p.Spec.NodeName != "" {
				per[p.Spec.NodeName]++
			}
		}
		shared := 0
		for _, c := range per {
			if c > 1 {
				shared++
			}
		}
		ok = shared == 0
		r.Check = fmt.Sprintf("%d pods with host port 80 on %d nodes: %d nodes hold more than one",
			len(pods.Items), len(per), shared)
	case "csipvs", "intreepvs":
		ok = checkClaims(ctx, cs, sh, nodes, r)
	case "preemption":
		alloc := map[string]int64{} // node → allocatable CPU, millicores
		for _, n := range nodes {
			alloc[n.Name] = n.Status.Allocatable.Cpu().MilliValue()
		}
		pods, err := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
		if err != nil {
			die("list pods: %v", err)
		}
		used := map[string]int64{}
		high := map[string]int{}
		measured, unbound := 0, 0
		for _, p := range pods.Items {
			isHigh := p.Namespace == sh.measureNS
			if isHigh {
				measured++
			}
			if p.Spec.NodeName == "" {
				if isHigh {
					unbound++
				}
				continue
			}
			for _, c := range p.Spec.Containers {
				used[p.Spec.NodeName] += c.Resources.Requests.Cpu().MilliValue()
			}
			if isHigh {
				high[p.Spec.NodeName]++
			}
		}
		shared, over := 0, 0
		for _, c := range high {
			if c > 1 {
				shared++
			}
		}
		for n, m := range used {
			if a, known := alloc[n]; !known || m > a {
				over++
			}
		}
		ok = unbound == 0 && shared == 0 && over == 0
		r.Check = fmt.Sprintf("%d/%d high-priority pods bound on %d nodes: %d nodes hold more than one, "+
			"%d nodes' bound pods request more CPU than the node has", measured-unbound, measured, len(high),
			shared, over)
	}
	r.CheckOK = &ok
}

// checkClaims: every measured pod bound with its claim, every claim (init and measured) still
// Bound to its own PV and that PV's claimRef naming it, and (csipvs) no node holding more
// volumes of the driver than its CSINode allows.
func checkClaims(ctx context.Context, cs *kubernetes.Clientset, sh shape, nodes []v1.Node, r *result) bool {
	limit := map[string]int64{}
	for _, n := range nodes {
		if q, has := n.Status.Allocatable[csiAllocatable]; has {
			limit[n.Name] = q.Value()
		}
	}
	pvs, err := cs.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{})
	if err != nil {
		die("list PVs: %v", err)
	}
	pvByName := map[string]*v1.PersistentVolume{}
	for i := range pvs.Items {
		pvByName[pvs.Items[i].Name] = &pvs.Items[i]
	}
	claims, wrong, unbound, over := 0, 0, 0, 0
	perNode := map[string]int64{}
	for _, ns := range []string{sh.initNS, sh.measureNS} {
		pvcs, err := cs.CoreV1().PersistentVolumeClaims(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			die("list PVCs: %v", err)
		}
		for _, c := range pvcs.Items {
			claims++
			pv := pvByName[c.Spec.VolumeName]
			own := ns + "-vol-" + strings.TrimPrefix(c.Name, "pvc-")
			if c.Status.Phase != v1.ClaimBound || c.Spec.VolumeName != own || pv == nil ||
				pv.Status.Phase != v1.VolumeBound || pv.Spec.ClaimRef == nil || pv.Spec.ClaimRef.UID != c.UID {
				wrong++
			}
		}
		pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			die("list pods: %v", err)
		}
		for _, p := range pods.Items {
			if p.Spec.NodeName == "" {
				if ns == sh.measureNS {
					unbound++
				}
				continue
			}
			if len(p.Spec.Volumes) != 1 || p.Spec.Volumes[0].PersistentVolumeClaim == nil {
				wrong++
			}
			perNode[p.Spec.NodeName]++
		}
	}
	most := int64(0)
	for n, c := range perNode {
		most = max(most, c)
		if l, has := limit[n]; has && c > l {
			over++
		}
	}
	r.Check = fmt.Sprintf("%d claims (init and measured): %d not Bound to their own PV; %d measured pods unbound; "+
		"at most %d volumes on a node, %d nodes over their CSINode limit", claims, wrong, unbound, most, over)
	return wrong == 0 && unbound == 0 && over == 0
}

func sortedMap(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s:%d", k, m[k])
	}
	return "{" + strings.Join(parts, " ") + "}"
}

func pct(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(p*float64(len(sorted))+0.5) - 1
	if i < 0 {
		i = 0
	}
	if i >= len(sorted) {
		i = len(sorted) - 1
	}
	return sorted[i]
}

func cmdRun(args []string) {
	fs := flag.NewFlagSet("run", flag.ExitOnError)
	kc := fs.String("kubeconfig", "", "")
	ns := fs.String("namespace", "default", "")
	pods := fs.Int("pods", 100, "")
	group := fs.Int("group", 10, "pods per app label")
	sched := fs.String("scheduler", "default-scheduler", "")
	workers := fs.Int("workers", 32, "parallel create calls")
	timeout := fs.Duration("timeout", 10*time.Minute, "")
	out := fs.String("out", "", "JSON result file")
	runID := fs.String("run", "r", "run id (label value)")
	shapeName := fs.String("shape", "basic", "basic | spread | antiaffinity | preemption | hostport | csipvs | "+
		"intreepvs (see shapes)")
	initPhase := fs.Bool("init", false, "spread, antiaffinity, preemption, csipvs, intreepvs: create the shape's init pods "+
		"(upstream's unmeasured createPods op) instead of the measured ones")
	fs.Parse(args)
	cs := client(*kc)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sh, shaped := shapes[*shapeName]
	if !shaped && *shapeName != "basic" {
		die("unknown shape %q (basic, spread, antiaffinity, preemption, hostport, csipvs, intreepvs)", *shapeName)
	}
	if *initPhase && !shaped {
		die("--init needs a --shape other than basic")
	}
	preempt := *shapeName == "preemption" && !*initPhase
	if preempt {
		ensurePriorityClass(ctx, cs)
	}
	makePod := func(i int, name string) *v1.Pod {
		return podSpec(name, fmt.Sprintf("%s-g%04d", *runID, i / *group), *sched, *runID)
	}
	if shaped {
		*ns = sh.measureNS
		decorate := sh.measurePod
		if *initPhase {
			*ns, decorate = sh.initNS, sh.initPod
		}
		ensureNamespace(ctx, cs, *ns)
		makePod = func(i int, name string) *v1.Pod {
			p := upstreamPod(name, *ns, *sched, *runID)
			decorate(p)
			if sh.pv != nil {
				withClaim(p, i)
			}
			return p
		}
	}
	if sh.pv != nil { // the claims exist before their pods, as upstream creates them
		t0 := time.Now()
		if err := parallel(*pods, *workers, func(i int) error { return createBoundPair(ctx, cs, sh, *ns, i) }); err != nil {
			die("%v", err)
		}
		fmt.Fprintf(os.Stderr, "kbench: %d bound PV/PVC pairs in %.1fs (not measured)\n", *pods,
			time.Since(t0).Seconds())
	}

	names := make([]string, *pods)
	idx := make(map[string]int, *pods)
	for i := range names {
		names[i] = fmt.Sprintf("%s-%05d", *runID, i)
		idx[names[i]] = i
	}
	created := make([]time.Time, *pods)
	boundAt := make([]time.Time, *pods)
	boundOn := make([]string, *pods)
	var mu sync.Mutex
	nbound := 0
	done := make(chan struct{})
	observe := func(obj any) {
		p, ok := obj.(*v1.Pod)
		if !ok || p.Spec.NodeName == "" {
			return
		}
		now := time.Now()
		i, ok := idx[p.Name]
		if !ok {
			return
		}
		mu.Lock()
		if boundAt[i].IsZero() {
			boundAt[i], boundOn[i] = now, p.Spec.NodeName
			nbound++
			if nbound == *pods {
				close(done)
			}
		}
		mu.Unlock()
	}
	fac := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(*ns),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = runLabel + "=" + *runID }))
	inf := fac.Core().V1().Pods().Informer()
	inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    observe,
		UpdateFunc: func(_, n any) { observe(n) },
	})
	fac.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		die("pod informer did not sync")
	}
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{ResourceVersion: "0"})
	if err != nil {
		die("list nodes: %v", err)
	}

	initBefore := 0
	if preempt {
		initBefore, _ = countPods(ctx, cs, sh.initNS)
	}

	start := time.Now()
	err = parallel(*pods, *workers, func(i int) error {
		p := makePod(i, names[i])
		t := time.Now()
		mu.Lock()
		created[i] = t
		mu.Unlock()
		_, err := cs.CoreV1().Pods(*ns).Create(ctx, p, metav1.CreateOptions{})
		return err
	})
	createdAll := time.Now()
	if err != nil {
		die("create pods: %v", err)
	}
	fmt.Fprintf(os.Stderr, "kbench: created %d pods in %.1fs\n", *pods, createdAll.Sub(start).Seconds())
	timedOut := false
	tick := time.NewTicker(5 * time.Second)
	defer tick.Stop()
wait:
	for {
		select {
		case <-done:
			break wait
		case <-tick.C:
			mu.Lock()
			fmt.Fprintf(os.Stderr, "kbench: %d/%d bound after %.0fs\n", nbound, *pods, time.Since(start).Seconds())
			mu.Unlock()
		case <-time.After(time.Until(start.Add(*timeout))):
			timedOut = true
			break wait
		}
	}
	mu.Lock()
	defer mu.Unlock()
	var last time.Time
	lat := []float64{}
	per := map[string]int{}
	groups := map[int]map[string]int{}
	for i := range names {
		if boundAt[i].IsZero() {
			continue
		}
		if boundAt[i].After(last) {
			last = boundAt[i]
		}
		lat = append(lat, float64(boundAt[i].Sub(created[i]).Microseconds())/1000)
		per[boundOn[i]]++
		if shaped { // no app groups
			continue
		}
		g := i / *group
		if groups[g] == nil {
			groups[g] = map[string]int{}
		}
		groups[g][boundOn[i]]++
	}
	sort.Float64s(lat)
	r := result{Scheduler: *sched, Pods: *pods, Bound: len(lat), Nodes: len(nodes.Items),
		CreateSeconds: createdAll.Sub(start).Seconds(), PerNode: per, TimedOut: timedOut,
		StartUnixNano: start.UnixNano(), EndUnixNano: last.UnixNano(), Shape: *shapeName, Namespace: *ns}
	if !last.IsZero() {
		r.WallSeconds = last.Sub(start).Seconds()
		r.Throughput = float64(len(lat)) / r.WallSeconds
	}
	r.Latency = map[string]float64{"p50": pct(lat, .50), "p90": pct(lat, .90), "p99": pct(lat, .99),
		"max": pct(lat, 1)}
	one, sum := 0, 0
	for _, g := range groups {
		sum += len(g)
		if len(g) == 1 {
			one++
		}
	}
	if len(groups) > 0 {
		r.NodesPerGroup = float64(sum) / float64(len(groups))
		r.GroupsOnOne = float64(one) / float64(len(groups))
		for g := 0; g <= (*pods-1) / *group; g++ {
			if groups[g] != nil { // a group none of whose pods was bound (timed out) is left out
				r.GroupNodes = append(r.GroupNodes, groups[g])
			}
		}
	}
	if preempt { // also after a timeout: a scheduler that does not preempt deletes none
		after, terminating := countPods(ctx, cs, sh.initNS)
		victims := initBefore - after
		r.InitBefore, r.InitAfter, r.Victims, r.Terminating = &initBefore, &after, &victims, terminating
		fmt.Fprintf(os.Stderr, "kbench: preemption: %d of %d low-priority init pods remain: %d victims deleted "+
			"(%d of them still terminating)\n", after, initBefore, victims, terminating)
	}
	if shaped && !*initPhase && !timedOut {
		checkShape(ctx, cs, *shapeName, sh, nodes.Items, &r)
		fmt.Fprintf(os.Stderr, "kbench: %s check: %s (ok: %v)\n", *shapeName, r.Check, *r.CheckOK)
	}
	b, _ := json.MarshalIndent(r, "", " ")
	if *out != "" {
		if err := os.WriteFile(*out, b, 0o644); err != nil {
			die("%v", err)
		}
	} else {
		fmt.Println(string(b))
	}
	if timedOut {
		fmt.Fprintf(os.Stderr, "kbench: TIMEOUT: %d of %d pods bound\n", len(lat), *pods)
		os.Exit(3)
	}
}

// ------------------------------------------------------------------ bind

func cmdBind(args []string) {
	fs := flag.NewFlagSet("bind", flag.ExitOnError)
	kc := fs.String("kubeconfig", "", "")
	sched := fs.String("scheduler", "bench-binder", "")
	workers := fs.Int("workers", 64, "bindings in flight (as the shim's --bind-workers)")
	ready := fs.String("ready-file", "", "touched once the informers have synced")
	withEvents := fs.Bool("events", false, "also write each pod's Scheduled event, through client-go's events "+
		"broadcaster as kube-scheduler does (run f)")
	fs.Parse(args)
	cs := client(*kc)
	ctx := context.Background()
	var recorder events.EventRecorder
	if *withEvents {
		b := events.NewBroadcaster(&events.EventSinkImpl{Interface: cs.EventsV1()})
		if err := b.StartRecordingToSinkWithContext(ctx); err != nil {
			die("events: %v", err)
		}
		recorder = b.NewRecorder(scheme.Scheme, *sched)
	}

	var nodeNames []string
	var nmu sync.RWMutex
	nfac := informers.NewSharedInformerFactory(cs, 0)
	ninf := nfac.Core().V1().Nodes().Informer()
	rebuild := func() {
		var ns []string
		for _, o := range ninf.GetStore().List() {
			ns = append(ns, o.(*v1.Node).Name)
		}
		sort.Strings(ns)
		nmu.Lock()
		nodeNames = ns
		nmu.Unlock()
	}
	ninf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(any) {}, DeleteFunc: func(any) {},
	})

	queue := make(chan *v1.Pod, 1<<16)
	pfac := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithTweakListOptions(
		func(o *metav1.ListOptions) {
			o.FieldSelector = fields.AndSelectors(fields.OneTermEqualSelector("spec.schedulerName", *sched),
				fields.OneTermEqualSelector("spec.nodeName", "")).String()
		}))
	pinf := pfac.Core().V1().Pods().Informer()
	pinf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: func(o any) { queue <- o.(*v1.Pod) }})
	nfac.Start(ctx.Done())
	cache.WaitForCacheSync(ctx.Done(), ninf.HasSynced)
	rebuild()
	go func() { // nodes rarely change here; refresh the list now and then
		for range time.Tick(2 * time.Second) {
			rebuild()
		}
	}()
	var rr atomic.Uint64
	var bound, failed atomic.Int64
	for w := 0; w < *workers; w++ {
		go func() {
			for p := range queue {
				nmu.RLock()
				n := nodeNames[int(rr.Add(1)-1)%len(nodeNames)]
				nmu.RUnlock()
				err := cs.CoreV1().Pods(p.Namespace).Bind(ctx, &v1.Binding{
					ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace, UID: p.UID},
					Target:     v1.ObjectReference{Kind: "Node", Name: n}}, metav1.CreateOptions{})
				if err != nil {
					failed.Add(1)
					if !strings.Contains(err.Error(), "already") {
						fmt.Fprintf(os.Stderr, "kbench bind %s/%s: %v\n", p.Namespace, p.Name, err)
					}
				} else {
					bound.Add(1)
					if recorder != nil {
						recorder.Eventf(p, nil, v1.EventTypeNormal, "Scheduled", "Binding",
							"Successfully assigned %v/%v to %v", p.Namespace, p.Name, n)
					}
				}
			}
		}()
	}
	pfac.Start(ctx.Done())
	cache.WaitForCacheSync(ctx.Done(), pinf.HasSynced)
	if *ready != "" {
		os.WriteFile(*ready, []byte("ok\n"), 0o644)
	}
	fmt.Fprintf(os.Stderr, "kbench bind: ready, %d nodes, scheduler %s\n", len(nodeNames), *sched)
	for range time.Tick(10 * time.Second) {
		fmt.Fprintf(os.Stderr, "kbench bind: %d bound, %d failed\n", bound.Load(), failed.Load())
	}
}

func main() {
	if len(os.Args) < 2 {
		die("usage: kbench nodes|run|bind [flags]")
	}
	switch os.Args[1] {
	case "nodes":
		cmdNodes(os.Args[2:])
	case "run":
		cmdRun(os.Args[2:])
	case "bind":
		cmdBind(os.Args[2:])
	default:
		die("unknown command %q", os.Args[1])
	}
}
