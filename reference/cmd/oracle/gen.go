package main

import (
	"fmt"
	"math/rand/v2"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	resourcehelper "k8s.io/component-helpers/resource"
	"k8s.io/utils/ptr"
)

const (
	labelHostname = v1.LabelHostname
	labelZone     = v1.LabelTopologyZone
	labelRegion   = v1.LabelTopologyRegion
	labelDisk     = "disktype"
	labelCPUGen   = "cpu-generation"
	labelApp      = "app"
	labelTier     = "tier"
	labelVersion  = "version"
	labelHash     = appsv1.DefaultDeploymentUniqueLabelKey // pod-template-hash

	extendedResource = "example.com/gpu"
	schedulerName    = "kscore-default"
	mb               = 1024 * 1024
)

var (
	diskTypes = []string{"ssd", "hdd"}
	appNames  = []string{"web", "api", "db", "cache", "worker", "batch", "frontend", "queue", "search", "ml"}
	tiers     = []string{"frontend", "backend", "data"}
	taintKeys = []string{"dedicated", "gpu", "maintenance", "special"}
	taintVals = []string{"", "a", "b", "true"}
	effects   = []v1.TaintEffect{v1.TaintEffectNoSchedule, v1.TaintEffectNoSchedule, v1.TaintEffectNoExecute, v1.TaintEffectPreferNoSchedule, v1.TaintEffectPreferNoSchedule}
	// The features the v1.37 registry can require of a node at scheduling.
	declaredFeatures = []string{"RestartAllContainersOnContainerExits", "UserNamespacesHostNetworkSupport", "VolumeBindMountOptions"}
	// Deletion timestamps are fixed, so the same seed gives the same bytes.
	deletedAt = metav1.Unix(1767225600, 0)
)

// An image as nodes list it (status.images names, size) and as pods name it
// (ImageLocality adds ":latest" to a name without tag or digest).
type image struct {
	names []string
	size  int64
	ref   string
}

var images = []image{
	{[]string{"docker.io/library/nginx:1.27", "nginx:1.27"}, 72 * mb, "nginx:1.27"},
	{[]string{"busybox:latest"}, 4 * mb, "busybox"},
	{[]string{"redis:7.2"}, 45 * mb, "redis:7.2"},
	{[]string{"postgres:16"}, 430 * mb, "postgres:16"},
	{[]string{"registry.k8s.io/pause:3.10"}, 736 * 1024, "registry.k8s.io/pause:3.10"},
	{[]string{"example.com/ml/serving:2.1"}, 1800 * mb, "example.com/ml/serving:2.1"},
	{[]string{"example.com/app@sha256:4c1e997385b8fb4ad4d1d3c7e5a7d7b2"}, 250 * mb, "example.com/app@sha256:4c1e997385b8fb4ad4d1d3c7e5a7d7b2"},
	{[]string{"localhost:5000/tools:latest"}, 120 * mb, "localhost:5000/tools"},
	{[]string{"eclipse-temurin:21", "docker.io/library/eclipse-temurin:21"}, 600 * mb, "eclipse-temurin:21"},
	{[]string{"python:3.12"}, 1010 * mb, "python:3.12"},
}

func chance(r *rand.Rand, p float64) bool { return r.Float64() < p }

func pick[T any](r *rand.Rand, xs []T) T { return xs[r.IntN(len(xs))] }

// caseSeed derives case i's seed from the run's seed (SplitMix64), kept
// below 2^53 so that any JSON reader holds it exactly.
func caseSeed(seed uint64, i int) uint64 {
	z := seed + uint64(i+1)*0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	z ^= z >> 31
	return z & (1<<53 - 1)
}

// group is a set of pods made alike: a Deployment's ReplicaSet, a
// StatefulSet, a ReplicationController, or pods without owner.
type group struct {
	app    string
	ns     string
	labels map[string]string // the labels every pod of the group has
	owner  *metav1.OwnerReference
	spec   v1.PodSpec
	hot    []*v1.Node // the nodes its pods go to
}

type generator struct {
	r         *rand.Rand
	in        *Input
	zones     []string
	groups    []*group
	uids      int
	gpuNodes  bool
	imageRate float64
	podNames  map[string]bool // namespace/name of the pods made so far
}

// generate makes case seed's input; the same seed makes the same input.
// With volumes, the case is the one without plus VolumeBinding in the
// profile and, most of the time, storage objects and the pod's claims
// (addVolumes, from a random stream of its own).
func generate(seed uint64, volumes bool) *Input {
	g := &generator{
		r:        rand.New(rand.NewPCG(seed, 0x6f7261636c65)),
		podNames: map[string]bool{},
		in: &Input{
			Nodes: []*v1.Node{}, Pods: []*v1.Pod{}, Namespaces: []*v1.Namespace{},
			Services: []*v1.Service{}, ReplicaSets: []*appsv1.ReplicaSet{},
			StatefulSets: []*appsv1.StatefulSet{}, ReplicationControllers: []*v1.ReplicationController{},
		},
	}
	r := g.r
	var vr *rand.Rand
	if volumes {
		vr = rand.New(rand.NewPCG(seed, 0x766f6c756d6573))
	}
	g.in.Profile = genProfile(r, vr)
	g.namespaces()
	for i := range 1 + r.IntN(4) {
		g.zones = append(g.zones, fmt.Sprintf("zone-%c", 'a'+i))
	}
	g.imageRate = 0.15 + 0.5*r.Float64()
	n := 2 + r.IntN(29)
	for i := range n {
		g.in.Nodes = append(g.in.Nodes, g.node(i))
	}
	// Up to 80 pods, fewer more often.
	budget := int(81 * r.Float64() * (0.3 + 0.7*r.Float64()))
	names := slices.Clone(appNames)
	r.Shuffle(len(names), func(i, j int) { names[i], names[j] = names[j], names[i] })
	for _, app := range names[:r.IntN(7)] {
		grp := g.group(app)
		size := min(budget, r.IntN(21))
		budget -= size
		for i := range size {
			g.in.Pods = append(g.in.Pods, g.existing(grp, i))
		}
	}
	// Pods that belong to no group, on any node.
	for range min(budget, r.IntN(4)) {
		grp := g.group(fmt.Sprintf("solo-%d", g.uids))
		g.in.Pods = append(g.in.Pods, g.existing(grp, 0))
	}
	g.in.Pod = g.incoming(names[len(names)-1])
	if volumes {
		addVolumes(vr, g.in, g.zones)
		addRestrictions(vr, g.in)
	}
	return g.in
}

func (g *generator) uid(kind string) types.UID {
	g.uids++
	return types.UID(fmt.Sprintf("%s-%04d-%08x", kind, g.uids, g.r.Uint32()))
}

func (g *generator) namespaces() {
	all := []struct{ name, team, env string }{
		{"default", "", ""}, {"team-a", "a", "prod"}, {"team-b", "b", "dev"},
	}
	for _, ns := range all[:1+g.r.IntN(3)] {
		labels := map[string]string{v1.LabelMetadataName: ns.name}
		if ns.team != "" {
			labels["team"] = ns.team
			labels["env"] = ns.env
		}
		g.in.Namespaces = append(g.in.Namespaces, &v1.Namespace{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
			ObjectMeta: metav1.ObjectMeta{Name: ns.name, UID: g.uid("ns"), Labels: labels},
			Status:     v1.NamespaceStatus{Phase: v1.NamespaceActive},
		})
	}
}

func (g *generator) node(i int) *v1.Node {
	r := g.r
	name := fmt.Sprintf("n%d", i+1)
	labels := map[string]string{labelHostname: name, v1.LabelOSStable: "linux"}
	if chance(r, 0.05) {
		labels[labelHostname] = "host-" + name
	}
	if chance(r, 0.9) {
		z := r.IntN(len(g.zones))
		labels[labelZone] = g.zones[z]
		if chance(r, 0.85) {
			labels[labelRegion] = fmt.Sprintf("region-%d", 1+z%2)
		}
	}
	if chance(r, 0.7) {
		labels[labelDisk] = pick(r, diskTypes)
	}
	if chance(r, 0.5) {
		labels[labelCPUGen] = fmt.Sprint(1 + r.IntN(5))
	}
	cores := pick(r, []int64{1, 2, 4, 4, 8, 8, 16, 32})
	memGi := pick(r, []int64{2, 4, 8, 16, 16, 32, 64})
	capacity := v1.ResourceList{
		v1.ResourceCPU:    *resource.NewMilliQuantity(cores*1000, resource.DecimalSI),
		v1.ResourceMemory: *resource.NewQuantity(memGi<<30, resource.BinarySI),
		v1.ResourcePods:   *resource.NewQuantity(pick(r, []int64{110, 110, 110, 32, 16, 8, 3}), resource.DecimalSI),
	}
	if chance(r, 0.9) {
		capacity[v1.ResourceEphemeralStorage] = *resource.NewQuantity(pick(r, []int64{20, 50, 100})<<30, resource.BinarySI)
	}
	if chance(r, 0.2) {
		g.gpuNodes = true
		labels["gpu"] = "true"
		capacity[extendedResource] = *resource.NewQuantity(pick(r, []int64{1, 2, 4}), resource.DecimalSI)
	}
	allocatable := capacity.DeepCopy()
	if chance(r, 0.6) {
		allocatable[v1.ResourceCPU] = *resource.NewMilliQuantity(cores*1000-pick(r, []int64{100, 250}), resource.DecimalSI)
		allocatable[v1.ResourceMemory] = *resource.NewQuantity(memGi<<30-pick(r, []int64{256, 512})*mb, resource.BinarySI)
	}
	n := &v1.Node{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Node"},
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: g.uid("node"), Labels: labels},
		Status: v1.NodeStatus{
			Capacity: capacity, Allocatable: allocatable,
			Images: []v1.ContainerImage{},
		},
	}
	if chance(r, 0.08) {
		n.Spec.Unschedulable = true
		if chance(r, 0.7) {
			n.Spec.Taints = append(n.Spec.Taints, v1.Taint{Key: v1.TaintNodeUnschedulable, Effect: v1.TaintEffectNoSchedule})
		}
	}
	for range pick(r, []int{0, 0, 0, 0, 0, 0, 0, 1, 1, 2}) {
		t := v1.Taint{Key: pick(r, taintKeys), Value: pick(r, taintVals), Effect: pick(r, effects)}
		if !slices.ContainsFunc(n.Spec.Taints, func(o v1.Taint) bool { return o.MatchTaint(&t) }) {
			n.Spec.Taints = append(n.Spec.Taints, t)
		}
	}
	for _, i := range r.Perm(len(images)) {
		if chance(r, g.imageRate) {
			n.Status.Images = append(n.Status.Images, v1.ContainerImage{Names: images[i].names, SizeBytes: images[i].size})
		}
	}
	if chance(r, 0.5) {
		for _, f := range declaredFeatures {
			if chance(r, 0.6) {
				n.Status.DeclaredFeatures = append(n.Status.DeclaredFeatures, f)
			}
		}
	}
	return n
}

func (g *generator) nsNames() []string {
	out := make([]string, len(g.in.Namespaces))
	for i, ns := range g.in.Namespaces {
		out[i] = ns.Name
	}
	return out
}

// group makes a workload: its labels, its owner (which the input holds,
// with its selector), a Service selecting it sometimes, and the spec its
// pods share.
func (g *generator) group(app string) *group {
	r := g.r
	grp := &group{app: app, ns: pick(r, g.nsNames()), labels: map[string]string{labelApp: app}}
	if chance(r, 0.5) {
		grp.labels[labelTier] = pick(r, tiers)
	}
	meta := func(name string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: name, Namespace: grp.ns, UID: g.uid("ctl"), Labels: map[string]string{labelApp: app}}
	}
	template := func() v1.PodTemplateSpec {
		return v1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: grp.labels}}
	}
	switch x := r.Float64(); {
	case x < 0.45:
		hash := fmt.Sprintf("%x", r.Uint32()&0xfffffff)
		grp.labels[labelHash] = hash
		rs := &appsv1.ReplicaSet{
			TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "ReplicaSet"},
			ObjectMeta: meta(app + "-" + hash),
			Spec: appsv1.ReplicaSetSpec{
				Replicas: ptr.To[int32](3),
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{labelApp: app, labelHash: hash}},
				Template: template(),
			},
		}
		grp.owner = ownerRef("apps/v1", "ReplicaSet", rs.ObjectMeta)
		if chance(r, 0.95) {
			g.in.ReplicaSets = append(g.in.ReplicaSets, rs)
		}
	case x < 0.6:
		ss := &appsv1.StatefulSet{
			TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "StatefulSet"},
			ObjectMeta: meta(app),
			Spec: appsv1.StatefulSetSpec{
				Replicas:    ptr.To[int32](3),
				Selector:    &metav1.LabelSelector{MatchLabels: map[string]string{labelApp: app}},
				Template:    template(),
				ServiceName: app,
			},
		}
		if chance(r, 0.3) {
			ss.Spec.Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: labelApp, Operator: metav1.LabelSelectorOpIn, Values: []string{app}},
			}}
		}
		grp.owner = ownerRef("apps/v1", "StatefulSet", ss.ObjectMeta)
		g.in.StatefulSets = append(g.in.StatefulSets, ss)
	case x < 0.7:
		rc := &v1.ReplicationController{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ReplicationController"},
			ObjectMeta: meta(app),
			Spec: v1.ReplicationControllerSpec{
				Replicas: ptr.To[int32](3),
				Selector: map[string]string{labelApp: app},
			},
		}
		rc.Spec.Template = ptr.To(template())
		grp.owner = ownerRef("v1", "ReplicationController", rc.ObjectMeta)
		g.in.ReplicationControllers = append(g.in.ReplicationControllers, rc)
	}
	if chance(r, 0.4) {
		selector := map[string]string{labelApp: app}
		if t, ok := grp.labels[labelTier]; ok && chance(r, 0.3) {
			selector[labelTier] = t
		}
		g.in.Services = append(g.in.Services, &v1.Service{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
			ObjectMeta: metav1.ObjectMeta{Name: app, Namespace: grp.ns, UID: g.uid("svc")},
			Spec:       v1.ServiceSpec{Selector: selector, Ports: []v1.ServicePort{{Port: 80}}},
		})
	}
	if chance(r, 0.05) {
		// A Service selecting no pod, and one with no selector.
		g.in.Services = append(g.in.Services, &v1.Service{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
			ObjectMeta: metav1.ObjectMeta{Name: app + "-ghost", Namespace: grp.ns, UID: g.uid("svc")},
			Spec:       v1.ServiceSpec{Selector: map[string]string{labelApp: app + "-ghost"}},
		}, &v1.Service{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
			ObjectMeta: metav1.ObjectMeta{Name: app + "-external", Namespace: grp.ns, UID: g.uid("svc")},
			Spec:       v1.ServiceSpec{Type: v1.ServiceTypeExternalName, ExternalName: "example.com"},
		})
	}
	grp.hot = g.in.Nodes
	if chance(r, 0.5) {
		hot := slices.Clone(g.in.Nodes)
		r.Shuffle(len(hot), func(i, j int) { hot[i], hot[j] = hot[j], hot[i] })
		grp.hot = hot[:1+r.IntN(len(hot))]
	}
	g.groups = append(g.groups, grp)
	grp.spec = g.podSpec(grp, 1)
	return grp
}

func ownerRef(apiVersion, kind string, meta metav1.ObjectMeta) *metav1.OwnerReference {
	return &metav1.OwnerReference{
		APIVersion: apiVersion, Kind: kind, Name: meta.Name, UID: meta.UID,
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
	}
}

// podLabels are a new pod's labels: its group's, and a version sometimes.
func (g *generator) podLabels(grp *group) map[string]string {
	labels := make(map[string]string, len(grp.labels)+1)
	for k, v := range grp.labels {
		labels[k] = v
	}
	if chance(g.r, 0.3) {
		labels[labelVersion] = pick(g.r, []string{"v1", "v2"})
	}
	return labels
}

func (g *generator) podMeta(grp *group, name string, labels map[string]string) metav1.ObjectMeta {
	m := metav1.ObjectMeta{Name: name, Namespace: grp.ns, UID: g.uid("pod"), Labels: labels}
	if grp.owner != nil {
		m.OwnerReferences = []metav1.OwnerReference{*grp.owner}
	}
	return m
}

// existing is the i-th running pod of grp, on one of the group's nodes.
func (g *generator) existing(grp *group, i int) *v1.Pod {
	r := g.r
	name := fmt.Sprintf("%s-%d", grp.app, i)
	if grp.owner != nil && grp.owner.Kind != "StatefulSet" {
		// Drawn again on a clash: the API server keeps a namespace's pod
		// names unique, and the shim's cache keys pods by them.
		for {
			name = fmt.Sprintf("%s-%05x", grp.owner.Name, r.Uint32()&0xfffff)
			if !g.podNames[grp.ns+"/"+name] {
				break
			}
		}
	}
	g.podNames[grp.ns+"/"+name] = true
	labels := g.podLabels(grp)
	p := &v1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: g.podMeta(grp, name, labels),
		Spec:       *grp.spec.DeepCopy(),
		Status:     v1.PodStatus{Phase: v1.PodRunning},
	}
	if chance(r, 0.2) {
		// Not every replica is alike: a rollout in progress.
		p.Spec = g.podSpec(grp, 1)
	}
	g.mergeMatchLabelKeys(p)
	p.Spec.NodeName = pick(r, grp.hot).Name
	if chance(r, 0.08) {
		p.DeletionTimestamp = &deletedAt
		p.DeletionGracePeriodSeconds = ptr.To[int64](30)
	}
	return p
}

// incoming is the pod to place: another replica of a group more often
// than not, else a pod of a new group named app.
func (g *generator) incoming(app string) *v1.Pod {
	r := g.r
	var grp *group
	if len(g.groups) > 0 && chance(r, 0.6) {
		grp = pick(r, g.groups)
	} else {
		grp = g.group(app)
	}
	labels := g.podLabels(grp)
	if _, ok := labels[labelHash]; ok && chance(r, 0.2) {
		// A new ReplicaSet of a rollout: another hash, same app.
		labels[labelHash] = fmt.Sprintf("%x", r.Uint32()&0xfffffff)
	}
	p := &v1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: g.podMeta(grp, "incoming", labels),
		Spec:       *grp.spec.DeepCopy(),
		Status:     v1.PodStatus{Phase: v1.PodPending},
	}
	if chance(r, 0.5) {
		p.Spec = g.podSpec(grp, 1.5)
	}
	p.Spec.SchedulerName = schedulerName
	switch x := r.Float64(); {
	case x < 0.04:
		p.Spec.NodeName = pick(r, g.in.Nodes).Name
	case x < 0.05:
		p.Spec.NodeName = "gone"
	}
	// What NodeDeclaredFeatures infers from a spec.
	if chance(r, 0.06) {
		c := &p.Spec.Containers[0]
		c.RestartPolicy = ptr.To(v1.ContainerRestartPolicyNever)
		c.RestartPolicyRules = []v1.ContainerRestartRule{{
			Action:    v1.ContainerRestartRuleActionRestartAllContainers,
			ExitCodes: &v1.ContainerRestartRuleOnExitCodes{Operator: v1.ContainerRestartRuleOnExitCodesOpIn, Values: []int32{42}},
		}}
	}
	if chance(r, 0.04) {
		p.Spec.HostNetwork = true
		p.Spec.HostUsers = ptr.To(false)
		for i := range p.Spec.Containers {
			for j := range p.Spec.Containers[i].Ports {
				port := &p.Spec.Containers[i].Ports[j]
				port.HostPort = port.ContainerPort
			}
		}
		dedupeHostPorts(&p.Spec)
	}
	if chance(r, 0.04) {
		p.Spec.Volumes = append(p.Spec.Volumes, v1.Volume{Name: "scratch", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}})
		c := &p.Spec.Containers[0]
		c.VolumeMounts = append(c.VolumeMounts, v1.VolumeMount{Name: "scratch", MountPath: "/scratch", BindMountOptions: []string{"noexec"}})
	}
	g.mergeMatchLabelKeys(p)
	return p
}

// podSpec draws a spec for grp's pods; boost > 1 makes the scheduling
// constraints likelier (the incoming pod).
func (g *generator) podSpec(grp *group, boost float64) v1.PodSpec {
	r := g.r
	spec := v1.PodSpec{SchedulerName: "default-scheduler"}
	for i := range pick(r, []int{1, 1, 1, 2}) {
		spec.Containers = append(spec.Containers, g.container(fmt.Sprintf("c%d", i)))
	}
	if chance(r, 0.15) {
		spec.InitContainers = append(spec.InitContainers, g.container("init"))
	}
	if chance(r, 0.1) {
		c := g.container("sidecar")
		c.RestartPolicy = ptr.To(v1.ContainerRestartPolicyAlways)
		spec.InitContainers = append(spec.InitContainers, c)
	}
	dedupeHostPorts(&spec)
	if chance(r, 0.05) {
		spec.Overhead = v1.ResourceList{v1.ResourceCPU: resource.MustParse("100m"), v1.ResourceMemory: resource.MustParse("64Mi")}
	}
	if chance(r, 0.05) {
		// Pod-level requests, at least what the containers request (the
		// API server checks), with some room.
		containers := resourcehelper.AggregateContainerRequests(&v1.Pod{Spec: spec}, resourcehelper.PodResourcesOptions{})
		cpu, mem := resource.MustParse(pick(r, []string{"0", "500m"})), resource.MustParse(pick(r, []string{"0", "512Mi"}))
		cpu.Add(containers[v1.ResourceCPU])
		mem.Add(containers[v1.ResourceMemory])
		spec.Resources = &v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: cpu, v1.ResourceMemory: mem}}
	}
	if chance(r, 0.1*boost) {
		spec.NodeSelector = map[string]string{}
		if chance(r, 0.5) {
			spec.NodeSelector[labelDisk] = pick(r, diskTypes)
		} else {
			spec.NodeSelector[labelZone] = pick(r, g.zones)
		}
	}
	if chance(r, 0.35*boost) {
		spec.Tolerations = g.tolerations()
	}
	affinity := &v1.Affinity{}
	if chance(r, 0.2*boost) {
		affinity.NodeAffinity = g.nodeAffinity()
	}
	if chance(r, 0.35*boost) {
		affinity.PodAffinity = &v1.PodAffinity{}
		if chance(r, 0.3) {
			affinity.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution = g.terms(grp, 1+r.IntN(2))
		}
		if chance(r, 0.7) {
			affinity.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution = g.weightedTerms(grp)
		}
	}
	if chance(r, 0.35*boost) {
		affinity.PodAntiAffinity = &v1.PodAntiAffinity{}
		if chance(r, 0.5) {
			affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution = g.terms(grp, 1+r.IntN(2))
		}
		if chance(r, 0.6) {
			affinity.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution = g.weightedTerms(grp)
		}
	}
	if affinity.NodeAffinity != nil || affinity.PodAffinity != nil || affinity.PodAntiAffinity != nil {
		spec.Affinity = affinity
	}
	if chance(r, 0.3*boost) {
		spec.TopologySpreadConstraints = g.spreadConstraints(grp)
	}
	return spec
}

// dedupeHostPorts drops the host ports a pod asks for twice (same port
// and protocol), which the API server rejects.
func dedupeHostPorts(spec *v1.PodSpec) {
	type key struct {
		port     int32
		protocol v1.Protocol
	}
	seen := map[key]bool{}
	for _, cs := range [][]v1.Container{spec.InitContainers, spec.Containers} {
		for i := range cs {
			ports := cs[i].Ports[:0]
			for _, p := range cs[i].Ports {
				k := key{p.HostPort, p.Protocol}
				if p.HostPort != 0 && seen[k] {
					continue
				}
				seen[k] = true
				ports = append(ports, p)
			}
			if len(ports) == 0 {
				ports = nil
			}
			cs[i].Ports = ports
		}
	}
}

func quantity(r *rand.Rand, options []string) (resource.Quantity, bool) {
	s := pick(r, options)
	if s == "" {
		return resource.Quantity{}, false
	}
	return resource.MustParse(s), true
}

func (g *generator) container(name string) v1.Container {
	r := g.r
	c := v1.Container{Name: name, ImagePullPolicy: v1.PullIfNotPresent}
	if chance(r, 0.9) {
		c.Image = pick(r, images).ref
	} else {
		c.Image = pick(r, []string{"example.com/missing:1", "nginx"})
	}
	if !chance(r, 0.12) {
		c.Resources.Requests = v1.ResourceList{}
		if q, ok := quantity(r, []string{"", "50m", "100m", "100m", "250m", "500m", "500m", "1", "1500m", "2"}); ok {
			c.Resources.Requests[v1.ResourceCPU] = q
		}
		if q, ok := quantity(r, []string{"", "64Mi", "128Mi", "256Mi", "512Mi", "512Mi", "1Gi", "2Gi", "4Gi"}); ok {
			c.Resources.Requests[v1.ResourceMemory] = q
		}
		if chance(r, 0.05) {
			c.Resources.Requests[v1.ResourceEphemeralStorage] = resource.MustParse(pick(r, []string{"1Gi", "10Gi", "40Gi"}))
		}
		if g.gpuNodes && chance(r, 0.05) || chance(r, 0.005) {
			q := resource.MustParse(pick(r, []string{"1", "2"}))
			c.Resources.Requests[extendedResource] = q
			c.Resources.Limits = v1.ResourceList{extendedResource: q}
		}
		if chance(r, 0.2) {
			// Limits alone set no request; the API server copies them.
			if q, ok := c.Resources.Requests[v1.ResourceCPU]; ok {
				if c.Resources.Limits == nil {
					c.Resources.Limits = v1.ResourceList{}
				}
				c.Resources.Limits[v1.ResourceCPU] = q
			}
		}
	}
	if chance(r, 0.3) {
		c.Ports = append(c.Ports, v1.ContainerPort{Name: "http", ContainerPort: 8080, Protocol: v1.ProtocolTCP})
	}
	if chance(r, 0.12) {
		port := v1.ContainerPort{
			ContainerPort: pick(r, []int32{80, 443, 9100, 53}),
			Protocol:      pick(r, []v1.Protocol{v1.ProtocolTCP, v1.ProtocolTCP, v1.ProtocolUDP}),
		}
		port.HostPort = port.ContainerPort
		if chance(r, 0.2) {
			port.HostIP = pick(r, []string{"127.0.0.1", "0.0.0.0", "10.0.0.1"})
		}
		c.Ports = append(c.Ports, port)
	}
	return c
}

func (g *generator) tolerations() []v1.Toleration {
	r := g.r
	var out []v1.Toleration
	for range 1 + r.IntN(3) {
		var t v1.Toleration
		switch x := r.Float64(); {
		case x < 0.04:
			t = v1.Toleration{Operator: v1.TolerationOpExists}
		case x < 0.12:
			t = v1.Toleration{Key: v1.TaintNodeUnschedulable, Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoSchedule}
		default:
			t = v1.Toleration{Key: pick(r, taintKeys)}
			if chance(r, 0.5) {
				t.Operator = v1.TolerationOpExists
			} else {
				t.Operator = v1.TolerationOpEqual
				t.Value = pick(r, taintVals)
			}
			if chance(r, 0.7) {
				t.Effect = pick(r, effects)
			}
			if t.Effect == v1.TaintEffectNoExecute && chance(r, 0.5) {
				t.TolerationSeconds = ptr.To[int64](300)
			}
		}
		out = append(out, t)
	}
	return out
}

func (g *generator) nodeRequirement() v1.NodeSelectorRequirement {
	r := g.r
	switch r.IntN(9) {
	case 0, 1:
		zones := slices.Clone(g.zones)
		r.Shuffle(len(zones), func(i, j int) { zones[i], zones[j] = zones[j], zones[i] })
		return v1.NodeSelectorRequirement{Key: labelZone, Operator: v1.NodeSelectorOpIn, Values: zones[:1+r.IntN(len(zones))]}
	case 2:
		return v1.NodeSelectorRequirement{Key: labelDisk, Operator: v1.NodeSelectorOpNotIn, Values: []string{pick(r, diskTypes)}}
	case 3:
		return v1.NodeSelectorRequirement{Key: labelCPUGen, Operator: v1.NodeSelectorOpGt, Values: []string{fmt.Sprint(1 + r.IntN(4))}}
	case 4:
		return v1.NodeSelectorRequirement{Key: labelCPUGen, Operator: v1.NodeSelectorOpLt, Values: []string{fmt.Sprint(2 + r.IntN(4))}}
	case 5:
		return v1.NodeSelectorRequirement{Key: "gpu", Operator: pick(r, []v1.NodeSelectorOperator{v1.NodeSelectorOpExists, v1.NodeSelectorOpDoesNotExist})}
	case 6:
		return v1.NodeSelectorRequirement{Key: labelDisk, Operator: v1.NodeSelectorOpDoesNotExist}
	default:
		return v1.NodeSelectorRequirement{Key: labelDisk, Operator: v1.NodeSelectorOpIn, Values: []string{pick(r, diskTypes)}}
	}
}

func (g *generator) nodeSelectorTerm() v1.NodeSelectorTerm {
	var t v1.NodeSelectorTerm
	for range pick(g.r, []int{1, 1, 1, 2}) {
		t.MatchExpressions = append(t.MatchExpressions, g.nodeRequirement())
	}
	return t
}

// byName is a term on metadata.name, the terms NodeAffinity's PreFilter
// narrows the nodes by. A node field selector takes one value per In or
// NotIn (the API server rejects more, and upstream's Filter matches no
// node with more).
func (g *generator) byName() v1.NodeSelectorTerm {
	r := g.r
	name := func() string {
		if chance(r, 0.1) {
			return "gone"
		}
		return pick(r, g.in.Nodes).Name
	}
	req := func(op v1.NodeSelectorOperator) v1.NodeSelectorRequirement {
		return v1.NodeSelectorRequirement{Key: metav1.ObjectNameField, Operator: op, Values: []string{name()}}
	}
	t := v1.NodeSelectorTerm{MatchFields: []v1.NodeSelectorRequirement{req(v1.NodeSelectorOpIn)}}
	switch x := r.Float64(); {
	case x < 0.1:
		t.MatchFields[0].Operator = v1.NodeSelectorOpNotIn
	case x < 0.2:
		// ANDed with another name: this term allows no node, unless
		// both are the same.
		t.MatchFields = append(t.MatchFields, req(v1.NodeSelectorOpIn))
	}
	if chance(r, 0.3) {
		t.MatchExpressions = append(t.MatchExpressions, g.nodeRequirement())
	}
	return t
}

func (g *generator) nodeAffinity() *v1.NodeAffinity {
	r := g.r
	a := &v1.NodeAffinity{}
	if chance(r, 0.5) {
		sel := &v1.NodeSelector{}
		byName := chance(r, 0.2)
		for range pick(r, []int{1, 1, 2, 3}) {
			if byName && !chance(r, 0.1) {
				sel.NodeSelectorTerms = append(sel.NodeSelectorTerms, g.byName())
			} else {
				sel.NodeSelectorTerms = append(sel.NodeSelectorTerms, g.nodeSelectorTerm())
			}
		}
		a.RequiredDuringSchedulingIgnoredDuringExecution = sel
	}
	if a.RequiredDuringSchedulingIgnoredDuringExecution == nil || chance(r, 0.5) {
		for range 1 + r.IntN(3) {
			t := v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{g.nodeRequirement()}}
			a.PreferredDuringSchedulingIgnoredDuringExecution = append(a.PreferredDuringSchedulingIgnoredDuringExecution,
				v1.PreferredSchedulingTerm{Weight: 1 + r.Int32N(100), Preference: t})
		}
	}
	return a
}

// selector picks pods: mostly a group's, sometimes everything, nothing or
// pods no group has.
func (g *generator) selector(target *group) *metav1.LabelSelector {
	r := g.r
	other := pick(r, appNames)
	switch x := r.Float64(); {
	case x < 0.45:
		return &metav1.LabelSelector{MatchLabels: map[string]string{labelApp: target.app}}
	case x < 0.6:
		return &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: labelApp, Operator: metav1.LabelSelectorOpIn, Values: []string{target.app, other}},
		}}
	case x < 0.68:
		return &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: labelApp, Operator: metav1.LabelSelectorOpNotIn, Values: []string{target.app}},
		}}
	case x < 0.74:
		return &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: labelTier, Operator: metav1.LabelSelectorOpExists},
		}}
	case x < 0.78:
		return &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: labelTier, Operator: metav1.LabelSelectorOpDoesNotExist},
		}}
	case x < 0.85:
		return &metav1.LabelSelector{
			MatchLabels: map[string]string{labelApp: target.app},
			MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: labelTier, Operator: metav1.LabelSelectorOpIn, Values: []string{pick(r, tiers)}},
			},
		}
	case x < 0.9:
		return &metav1.LabelSelector{}
	case x < 0.93:
		return nil
	default:
		return &metav1.LabelSelector{MatchLabels: map[string]string{labelApp: "nobody"}}
	}
}

func (g *generator) target(self *group) *group {
	if chance(g.r, 0.5) {
		return self
	}
	return pick(g.r, g.groups)
}

func (g *generator) topologyKey() string {
	r := g.r
	switch x := r.Float64(); {
	case x < 0.48:
		return labelHostname
	case x < 0.88:
		return labelZone
	case x < 0.97:
		return labelRegion
	default:
		return "rack"
	}
}

func (g *generator) term(self *group) v1.PodAffinityTerm {
	r := g.r
	t := v1.PodAffinityTerm{LabelSelector: g.selector(g.target(self)), TopologyKey: g.topologyKey()}
	switch x := r.Float64(); {
	case x < 0.12:
		names := g.nsNames()
		r.Shuffle(len(names), func(i, j int) { names[i], names[j] = names[j], names[i] })
		t.Namespaces = names[:1+r.IntN(len(names))]
	case x < 0.2:
		t.NamespaceSelector = &metav1.LabelSelector{}
	case x < 0.27:
		t.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"team": pick(r, []string{"a", "b"})}}
	case x < 0.3:
		t.Namespaces = []string{self.ns}
		t.NamespaceSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "env", Operator: metav1.LabelSelectorOpIn, Values: []string{"prod"}},
		}}
	}
	if t.LabelSelector != nil && chance(r, 0.1) {
		// Merged into the selector per pod, as the API server does.
		if chance(r, 0.5) {
			t.MatchLabelKeys = []string{labelVersion}
		} else {
			t.MismatchLabelKeys = []string{labelVersion}
		}
	}
	return t
}

func (g *generator) terms(self *group, n int) []v1.PodAffinityTerm {
	var out []v1.PodAffinityTerm
	for range n {
		out = append(out, g.term(self))
	}
	return out
}

func (g *generator) weightedTerms(self *group) []v1.WeightedPodAffinityTerm {
	var out []v1.WeightedPodAffinityTerm
	for range 1 + g.r.IntN(2) {
		out = append(out, v1.WeightedPodAffinityTerm{Weight: 1 + g.r.Int32N(100), PodAffinityTerm: g.term(self)})
	}
	return out
}

func (g *generator) spreadConstraints(self *group) []v1.TopologySpreadConstraint {
	r := g.r
	var out []v1.TopologySpreadConstraint
	seen := map[string]bool{}
	for range pick(r, []int{1, 1, 2}) {
		c := v1.TopologySpreadConstraint{
			MaxSkew:           pick(r, []int32{1, 1, 1, 2, 3}),
			TopologyKey:       g.topologyKey(),
			WhenUnsatisfiable: pick(r, []v1.UnsatisfiableConstraintAction{v1.DoNotSchedule, v1.DoNotSchedule, v1.ScheduleAnyway}),
			LabelSelector:     g.selector(self),
		}
		if chance(r, 0.2) {
			c.LabelSelector = g.selector(pick(r, g.groups))
		}
		if seen[c.TopologyKey+string(c.WhenUnsatisfiable)] {
			continue
		}
		seen[c.TopologyKey+string(c.WhenUnsatisfiable)] = true
		if c.WhenUnsatisfiable == v1.DoNotSchedule && chance(r, 0.2) {
			c.MinDomains = ptr.To(1 + r.Int32N(5))
		}
		if chance(r, 0.25) {
			c.NodeAffinityPolicy = ptr.To(pick(r, []v1.NodeInclusionPolicy{v1.NodeInclusionPolicyHonor, v1.NodeInclusionPolicyIgnore}))
		}
		if chance(r, 0.25) {
			c.NodeTaintsPolicy = ptr.To(pick(r, []v1.NodeInclusionPolicy{v1.NodeInclusionPolicyHonor, v1.NodeInclusionPolicyIgnore}))
		}
		if c.LabelSelector != nil && chance(r, 0.2) {
			c.MatchLabelKeys = []string{pick(r, []string{labelHash, labelVersion})}
		}
		out = append(out, c)
	}
	return out
}

// mergeMatchLabelKeys does to a new pod what the API server does: the
// affinity terms' matchLabelKeys and mismatchLabelKeys become requirements
// of the term's selector, with the pod's own values. Spread constraints'
// matchLabelKeys are merged too, but not always: pods created before
// MatchLabelKeysInPodTopologySpreadSelectorMerge have them unmerged, and
// the scheduler merges those itself.
func (g *generator) mergeMatchLabelKeys(p *v1.Pod) {
	merge := func(sel *metav1.LabelSelector, keys []string, op metav1.LabelSelectorOperator) {
		for _, k := range keys {
			if v, ok := p.Labels[k]; ok {
				sel.MatchExpressions = append(sel.MatchExpressions, metav1.LabelSelectorRequirement{Key: k, Operator: op, Values: []string{v}})
			}
		}
	}
	term := func(t *v1.PodAffinityTerm) {
		if t.LabelSelector != nil {
			merge(t.LabelSelector, t.MatchLabelKeys, metav1.LabelSelectorOpIn)
			merge(t.LabelSelector, t.MismatchLabelKeys, metav1.LabelSelectorOpNotIn)
		}
	}
	terms := func(req []v1.PodAffinityTerm, pref []v1.WeightedPodAffinityTerm) {
		for i := range req {
			term(&req[i])
		}
		for i := range pref {
			term(&pref[i].PodAffinityTerm)
		}
	}
	if a := p.Spec.Affinity; a != nil {
		if a.PodAffinity != nil {
			terms(a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution, a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution)
		}
		if a.PodAntiAffinity != nil {
			terms(a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution, a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution)
		}
	}
	for i := range p.Spec.TopologySpreadConstraints {
		c := &p.Spec.TopologySpreadConstraints[i]
		if c.LabelSelector != nil && len(c.MatchLabelKeys) > 0 && chance(g.r, 0.7) {
			merge(c.LabelSelector, c.MatchLabelKeys, metav1.LabelSelectorOpIn)
		}
	}
}
