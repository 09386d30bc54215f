package main

import (
	"fmt"
	"math/rand/v2"
	"slices"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	storagehelpers "k8s.io/component-helpers/storage/volume"
	"k8s.io/utils/ptr"
)

// The zones of the preemption generator's nodes.
var preemptZones = []string{"zone-a", "zone-b"}

// preemptVols adds storage objects to a case of gen-preempt --volumes, so
// that the volume plugins decide which victims preemption needs:
//
//   - NodeVolumeLimits: the pod's claims bound to CSI volumes (new on the
//     nodes); on "light" nodes, filled below the pod's cpu and memory,
//     running pods whose claims are bound to CSI volumes (some shared by two
//     pods), VolumeAttachments of some of those volumes or of others, and a
//     CSINode whose limit for a driver of the pod's is below what the node
//     would then count, so that only the volume count blocks the node and
//     preemption must free the right volumes (which a pod of higher
//     priority or an attachment may still hold);
//   - VolumeRestrictions: a ReadWriteOncePod claim of the pod that a running
//     pod uses too (of lower or higher priority, sometimes in another
//     namespace, where upstream's RemovePod counts it all the same), and an
//     in-tree disk of the pod that running pods hold read-write;
//   - VolumeBinding and VolumeZone: a claim provisioned on the node, volumes
//     pinned to a zone or labelled with one.
//
// Its random stream is the case's second one; vol_gen.go's and
// vol_limits_gen.go's helpers draw from it too.
type preemptVols struct {
	r  *rand.Rand
	g  *preemptGenerator
	in *PreemptInput
	vg *volGen
	// csi: how many claims bound to CSI volumes the pod gets (light nodes
	// only when there is one).
	csi   int
	light map[string]bool
}

// newPreemptVols gives the case the storage lists ([] when empty) and, in
// about half the cases, the generator of its storage objects (nil in the
// others, whose pods have no volumes).
func newPreemptVols(r *rand.Rand, g *preemptGenerator) *preemptVols {
	in := g.in
	in.StorageClasses = []*storagev1.StorageClass{}
	in.CSIDrivers = []*storagev1.CSIDriver{}
	in.CSIStorageCapacities = []*storagev1.CSIStorageCapacity{}
	in.PersistentVolumes = []*v1.PersistentVolume{}
	in.PersistentVolumeClaims = []*v1.PersistentVolumeClaim{}
	in.CSINodes = []*storagev1.CSINode{}
	in.VolumeAttachments = []*storagev1.VolumeAttachment{}
	if !chance(r, 0.5) {
		return nil
	}
	return &preemptVols{
		r: r, g: g, in: in, csi: pick(r, []int{0, 1, 1, 1, 2, 2, 3}), light: map[string]bool{},
		vg: &volGen{
			r: r, in: &in.Input, zones: preemptZones, ns: in.Pod.Namespace,
			classes: map[string]classKind{}, sizes: map[string][]int64{}, claimRefs: map[string]bool{},
		},
	}
}

// lightNode says whether node n is to be filled lightly (its volumes
// block it): about half the nodes of a case whose pod has CSI volumes.
func (v *preemptVols) lightNode(n *v1.Node) bool {
	if v == nil || v.csi == 0 || !chance(v.r, 0.55) {
		return false
	}
	v.light[n.Name] = true
	return true
}

// finish adds the storage objects once the nodes and pods are made; the
// CSINodes last, as their limits depend on what the nodes count.
func (v *preemptVols) finish() {
	if v == nil {
		return
	}
	v.classesAndDrivers()
	v.podClaims()
	for _, n := range v.in.Nodes {
		v.nodeVolumes(n)
	}
	v.exclusiveUsers()
	v.disks()
	for _, n := range v.in.Nodes {
		if v.light[n.Name] {
			v.lightCSINode(n)
		} else if chance(v.r, 0.8) {
			v.vg.csiNode(n.Name)
		}
	}
}

// classesAndDrivers: class fast (WaitForFirstConsumer, provisioned by
// csi.example.com), sometimes standard (Immediate), and both CSI drivers
// (attach required, no capacity tracking; rarely one that prevents
// scheduling where a node lacks it).
func (v *preemptVols) classesAndDrivers() {
	r := v.r
	wffc := storagev1.VolumeBindingWaitForFirstConsumer
	add := func(name string, mode storagev1.VolumeBindingMode) {
		v.in.StorageClasses = append(v.in.StorageClasses, &storagev1.StorageClass{
			TypeMeta:          metav1.TypeMeta{APIVersion: "storage.k8s.io/v1", Kind: "StorageClass"},
			ObjectMeta:        metav1.ObjectMeta{Name: name, UID: v.vg.uid("sc")},
			Provisioner:       csiDriver,
			VolumeBindingMode: &mode,
			ReclaimPolicy:     ptr.To(v1.PersistentVolumeReclaimDelete),
		})
	}
	add("fast", wffc)
	if chance(r, 0.5) {
		add("standard", storagev1.VolumeBindingImmediate)
	}
	for _, name := range []string{csiDriver, otherCSIDriver} {
		d := &storagev1.CSIDriver{
			TypeMeta:   metav1.TypeMeta{APIVersion: "storage.k8s.io/v1", Kind: "CSIDriver"},
			ObjectMeta: metav1.ObjectMeta{Name: name, UID: v.vg.uid("csidriver")},
			Spec: storagev1.CSIDriverSpec{
				AttachRequired: ptr.To(true), PodInfoOnMount: ptr.To(false), StorageCapacity: ptr.To(false),
			},
		}
		if name == otherCSIDriver && chance(r, 0.1) {
			d.Spec.PreventPodSchedulingIfMissing = ptr.To(true)
		}
		v.in.CSIDrivers = append(v.in.CSIDrivers, d)
	}
}

// boundClaim is a claim in ns bound to a new volume of driver (a CSI one,
// or in 1 case of 10 a hostPath one, which NodeVolumeLimits does not
// count), with one access mode.
func (v *preemptVols) boundClaim(ns, name, driver string, mode v1.PersistentVolumeAccessMode) *v1.PersistentVolumeClaim {
	c := &v1.PersistentVolumeClaim{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "PersistentVolumeClaim"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, UID: v.vg.uid("pvc"),
			Annotations: map[string]string{annBindCompleted: "yes"}},
		Spec: v1.PersistentVolumeClaimSpec{
			AccessModes:      []v1.PersistentVolumeAccessMode{mode},
			Resources:        v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: gib(1)}},
			StorageClassName: ptr.To("used"),
		},
	}
	pv := v.vg.csiPV(driver, ns, name)
	pv.Spec.AccessModes = []v1.PersistentVolumeAccessMode{mode}
	pv.Spec.ClaimRef.UID = c.UID
	c.Spec.VolumeName = pv.Name
	c.Status = v1.PersistentVolumeClaimStatus{Phase: v1.ClaimBound, AccessModes: pv.Spec.AccessModes, Capacity: pv.Spec.Capacity}
	v.in.PersistentVolumeClaims = append(v.in.PersistentVolumeClaims, c)
	return c
}

func claimVolume(name, claim string) v1.Volume {
	return v1.Volume{Name: name, VolumeSource: v1.VolumeSource{
		PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: claim},
	}}
}

// podClaims gives the pod its claims: csi of them bound to CSI volumes
// (the first of csi.example.com, sometimes a claim of class fast to be
// provisioned instead; the others of either driver), some pinned to a
// zone or labelled with one; and in about 40% of the cases a
// ReadWriteOncePod claim, "exclusive".
func (v *preemptVols) podClaims() {
	r := v.r
	pod := v.in.Pod
	for i := range v.csi {
		name := fmt.Sprintf("data-%d", i)
		pod.Spec.Volumes = append(pod.Spec.Volumes, claimVolume(name, name))
		if i == 0 && chance(r, 0.15) {
			v.in.PersistentVolumeClaims = append(v.in.PersistentVolumeClaims, &v1.PersistentVolumeClaim{
				TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "PersistentVolumeClaim"},
				ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: pod.Namespace, UID: v.vg.uid("pvc")},
				Spec: v1.PersistentVolumeClaimSpec{
					AccessModes:      []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
					Resources:        v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: gib(1)}},
					StorageClassName: ptr.To("fast"),
				},
				Status: v1.PersistentVolumeClaimStatus{Phase: v1.ClaimPending},
			})
			continue
		}
		driver := csiDriver
		if i > 0 && chance(r, 0.3) {
			driver = otherCSIDriver
		}
		c := v.boundClaim(pod.Namespace, name, driver, v1.ReadWriteOnce)
		v.zonal(v.pvNamed(c.Spec.VolumeName))
	}
	if chance(r, 0.4) {
		pod.Spec.Volumes = append(pod.Spec.Volumes, claimVolume("exclusive", "exclusive"))
		v.boundClaim(pod.Namespace, "exclusive", pick(r, []string{csiDriver, otherCSIDriver}), v1.ReadWriteOncePod)
	}
}

// zonal pins about 15% of the pod's volumes to one zone (VolumeBinding
// rejects the other zone's nodes) and labels about 10% with one
// (VolumeZone does).
func (v *preemptVols) zonal(pv *v1.PersistentVolume) {
	r := v.r
	if chance(r, 0.15) {
		pv.Spec.NodeAffinity = &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
			MatchExpressions: []v1.NodeSelectorRequirement{{Key: labelZone, Operator: v1.NodeSelectorOpIn, Values: []string{pick(r, preemptZones)}}},
		}}}}
	}
	if chance(r, 0.1) {
		pv.Labels = map[string]string{labelZone: pick(r, preemptZones)}
	}
}

func (v *preemptVols) podsOn(node string) []*v1.Pod {
	var out []*v1.Pod
	for _, p := range v.in.Pods {
		if p.Spec.NodeName == node {
			out = append(out, p)
		}
	}
	return out
}

// nodeVolumes gives the node's pods claim volumes (most pods on light
// nodes, about a third elsewhere, where some are vol_limits_gen.go's
// existingVolume) and the node 0–2 VolumeAttachments.
func (v *preemptVols) nodeVolumes(n *v1.Node) {
	r := v.r
	light := v.light[n.Name]
	var claims []*v1.PersistentVolumeClaim // this node's, to share
	share := 0.3
	if light {
		share = 0.75
	}
	for _, p := range v.podsOn(n.Name) {
		if !chance(r, share) {
			continue
		}
		for range 1 + r.IntN(2) {
			if !light && chance(r, 0.3) {
				v.vg.existingVolume(p, len(p.Spec.Volumes))
				continue
			}
			claims = v.csiVolume(p, claims)
		}
	}
	for range pick(r, []int{0, 0, 1, 1, 2}) {
		v.attachment(n, claims, light)
	}
}

// csiVolume gives p a claim volume: mostly a new claim bound to a CSI
// volume, sometimes another pod's claim on the node (counted once), one of
// class fast not bound yet (counted by its class), or a missing one (not
// counted).
func (v *preemptVols) csiVolume(p *v1.Pod, claims []*v1.PersistentVolumeClaim) []*v1.PersistentVolumeClaim {
	r := v.r
	vol := fmt.Sprintf("cv-%d", len(p.Spec.Volumes))
	var shared []string
	for _, c := range claims {
		if c.Namespace == p.Namespace && !slices.ContainsFunc(p.Spec.Volumes, func(x v1.Volume) bool {
			return x.PersistentVolumeClaim != nil && x.PersistentVolumeClaim.ClaimName == c.Name
		}) {
			shared = append(shared, c.Name)
		}
	}
	name := fmt.Sprintf("%s-%s", p.Name, vol)
	switch x := r.Float64(); {
	case x < 0.25 && len(shared) > 0:
		name = pick(r, shared)
	case x < 0.88:
		claims = append(claims, v.boundClaim(p.Namespace, name, pick(r, []string{csiDriver, csiDriver, csiDriver, otherCSIDriver}), v1.ReadWriteOnce))
	case x < 0.95:
		v.in.PersistentVolumeClaims = append(v.in.PersistentVolumeClaims, &v1.PersistentVolumeClaim{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "PersistentVolumeClaim"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: p.Namespace, UID: v.vg.uid("pvc")},
			Spec: v1.PersistentVolumeClaimSpec{
				AccessModes:      []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
				Resources:        v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: gib(1)}},
				StorageClassName: ptr.To("fast"),
			},
			Status: v1.PersistentVolumeClaimStatus{Phase: v1.ClaimPending},
		})
	default:
		name = "missing-" + name
	}
	p.Spec.Volumes = append(p.Spec.Volumes, claimVolume(vol, name))
	return claims
}

// attachment is a VolumeAttachment on node n (attached or not yet, which
// upstream does not read): of a volume a pod there uses, which then stays
// counted when that pod goes; elsewhere sometimes of one of the pod's own
// volumes (then not new there); of a volume of no pod; or of a missing
// volume (not counted).
func (v *preemptVols) attachment(n *v1.Node, claims []*v1.PersistentVolumeClaim, light bool) {
	r := v.r
	va := &storagev1.VolumeAttachment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "storage.k8s.io/v1", Kind: "VolumeAttachment"},
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("va-%02d", len(v.in.VolumeAttachments)+1), UID: v.vg.uid("va")},
		Spec:       storagev1.VolumeAttachmentSpec{Attacher: csiDriver, NodeName: n.Name},
		Status:     storagev1.VolumeAttachmentStatus{Attached: chance(r, 0.7)},
	}
	var own []*v1.PersistentVolumeClaim
	for _, c := range v.in.PersistentVolumeClaims {
		if c.Namespace == v.in.Pod.Namespace && c.Spec.VolumeName != "" && slices.ContainsFunc(v.in.Pod.Spec.Volumes, func(x v1.Volume) bool {
			return x.PersistentVolumeClaim != nil && x.PersistentVolumeClaim.ClaimName == c.Name
		}) {
			own = append(own, c)
		}
	}
	var pv *v1.PersistentVolume
	switch x := r.Float64(); {
	case x < 0.5 && len(claims) > 0:
		pv = v.pvNamed(pick(r, claims).Spec.VolumeName)
	case x < 0.6 && !light && len(own) > 0:
		pv = v.pvNamed(pick(r, own).Spec.VolumeName)
	case x < 0.92:
		pv = v.vg.csiPV(pick(r, []string{csiDriver, csiDriver, otherCSIDriver}), "elsewhere", "attached-"+va.Name)
	default:
		va.Spec.Source.PersistentVolumeName = ptr.To("pv-gone")
	}
	if pv != nil {
		va.Spec.Source.PersistentVolumeName = ptr.To(pv.Name)
		if pv.Spec.CSI != nil {
			va.Spec.Attacher = pv.Spec.CSI.Driver
		}
	}
	v.in.VolumeAttachments = append(v.in.VolumeAttachments, va)
}

// exclusiveUsers: the pod's ReadWriteOncePod claim is used by a running
// pod of its namespace (85%; upstream counts it once, and preemption frees
// it only by evicting that pod), and sometimes by one of the other
// namespace, whose claim of that name is another (upstream's PreFilter
// does not count it, its RemovePod does).
func (v *preemptVols) exclusiveUsers() {
	r := v.r
	if !slices.ContainsFunc(v.in.Pod.Spec.Volumes, func(x v1.Volume) bool { return x.Name == "exclusive" }) {
		return
	}
	var same, other []*v1.Pod
	for _, p := range v.in.Pods {
		if p.Namespace == v.in.Pod.Namespace {
			same = append(same, p)
		} else {
			other = append(other, p)
		}
	}
	use := func(p *v1.Pod) {
		p.Spec.Volumes = append(p.Spec.Volumes, claimVolume(fmt.Sprintf("rwop-%d", len(p.Spec.Volumes)), "exclusive"))
	}
	if len(same) > 0 && chance(r, 0.85) {
		use(pick(r, same))
	}
	if len(other) > 0 && chance(r, 0.3) {
		use(pick(r, other))
	}
}

// disks: in about 35% of the cases the pod gets an in-tree disk (GCE PD,
// AWS EBS, iSCSI or RBD, vol_restrictions_gen.go's inlineDisk) that 1–2
// running pods hold read-write, and 0–2 running pods get disks of the
// pool, which may conflict or not.
func (v *preemptVols) disks() {
	r := v.r
	if len(v.in.Pods) == 0 || !chance(r, 0.35) {
		return
	}
	d := inlineDisk(r, "disk-0")
	v.in.Pod.Spec.Volumes = append(v.in.Pod.Spec.Volumes, d)
	for range 1 + r.IntN(2) {
		p := pick(r, v.in.Pods)
		held := *d.DeepCopy()
		held.Name = fmt.Sprintf("disk-%d", len(p.Spec.Volumes))
		switch {
		case held.GCEPersistentDisk != nil:
			held.GCEPersistentDisk.ReadOnly = false
		case held.AWSElasticBlockStore != nil:
			held.AWSElasticBlockStore.ReadOnly = false
		case held.ISCSI != nil:
			held.ISCSI.ReadOnly = false
		case held.RBD != nil:
			held.RBD.ReadOnly = false
		}
		p.Spec.Volumes = append(p.Spec.Volumes, held)
	}
	for range r.IntN(3) {
		p := pick(r, v.in.Pods)
		p.Spec.Volumes = append(p.Spec.Volumes, inlineDisk(r, fmt.Sprintf("disk-%d", len(p.Spec.Volumes))))
	}
}

// lightCSINode gives a light node its CSINode: for a driver of which the
// pod would bring a new volume there, a limit below the volumes the node
// would then count (mostly by one, so that freeing one volume is enough;
// sometimes by two or three), and the other driver with a random limit or
// none. A light node where the pod brings no new volume gets a pod that
// takes its cpu instead.
func (v *preemptVols) lightCSINode(n *v1.Node) {
	r := v.r
	attached := v.counted(n.Name)
	perDriver := func(m map[string]string) map[string]int32 {
		out := map[string]int32{}
		for _, d := range m {
			out[d]++
		}
		return out
	}
	onNode := perDriver(attached)
	fresh := map[string]string{}
	for id, d := range v.podVolumes() {
		if _, ok := attached[id]; !ok {
			fresh[id] = d
		}
	}
	added := perDriver(fresh)
	var blocking []string
	for _, d := range []string{csiDriver, otherCSIDriver} {
		if added[d] > 0 {
			blocking = append(blocking, d)
		}
	}
	if len(blocking) == 0 {
		v.g.hog(n)
		v.vg.csiNode(n.Name)
		return
	}
	x := pick(r, blocking)
	cn := &storagev1.CSINode{
		TypeMeta:   metav1.TypeMeta{APIVersion: "storage.k8s.io/v1", Kind: "CSINode"},
		ObjectMeta: metav1.ObjectMeta{Name: n.Name, UID: v.vg.uid("csinode")},
	}
	for _, d := range []string{csiDriver, otherCSIDriver} {
		driver := storagev1.CSINodeDriver{Name: d, NodeID: n.Name}
		switch {
		case d == x:
			limit := max(0, onNode[d]+added[d]-1-pick(r, []int32{0, 0, 0, 0, 1, 2}))
			driver.Allocatable = &storagev1.VolumeNodeResources{Count: ptr.To(limit)}
		case chance(r, 0.4):
			continue
		case chance(r, 0.7):
			driver.Allocatable = &storagev1.VolumeNodeResources{Count: ptr.To(int32(r.IntN(5)))}
		}
		cn.Spec.Drivers = append(cn.Spec.Drivers, driver)
	}
	if len(cn.Spec.Drivers) == 2 && chance(r, 0.5) {
		slices.Reverse(cn.Spec.Drivers)
	}
	v.in.CSINodes = append(v.in.CSINodes, cn)
}

// counted is what upstream's NodeVolumeLimits counts on node for the
// generated objects (volume unique name -> driver): the CSI volumes of its
// pods' claims (a claim without volume, or whose volume is missing, by its
// class's provisioner, one per claim) and of its VolumeAttachments.
// In-tree volumes count under their CSI drivers, of which no CSINode
// lists a limit, so they are left out.
func (v *preemptVols) counted(node string) map[string]string {
	out := map[string]string{}
	for _, p := range v.podsOn(node) {
		v.countPod(p, out)
	}
	for _, va := range v.in.VolumeAttachments {
		if va.Spec.NodeName != node || va.Spec.Attacher == "" || va.Spec.Source.PersistentVolumeName == nil {
			continue
		}
		if pv := v.pvNamed(*va.Spec.Source.PersistentVolumeName); pv != nil && pv.Spec.CSI != nil {
			out[va.Spec.Attacher+"/"+pv.Spec.CSI.VolumeHandle] = va.Spec.Attacher
		}
	}
	return out
}

// podVolumes: the pod's volumes as counted does.
func (v *preemptVols) podVolumes() map[string]string {
	out := map[string]string{}
	v.countPod(v.in.Pod, out)
	return out
}

func (v *preemptVols) countPod(p *v1.Pod, out map[string]string) {
	for _, vol := range p.Spec.Volumes {
		var c *v1.PersistentVolumeClaim
		switch {
		case vol.PersistentVolumeClaim != nil:
			c = v.claimNamed(p.Namespace, vol.PersistentVolumeClaim.ClaimName)
		case vol.Ephemeral != nil:
			c = v.claimNamed(p.Namespace, p.Name+"-"+vol.Name)
		}
		if c == nil {
			continue
		}
		if pv := v.pvNamed(c.Spec.VolumeName); pv != nil {
			if pv.Spec.CSI != nil {
				out[pv.Spec.CSI.Driver+"/"+pv.Spec.CSI.VolumeHandle] = pv.Spec.CSI.Driver
			}
			continue
		}
		class := storagehelpers.GetPersistentVolumeClaimClass(c)
		i := slices.IndexFunc(v.in.StorageClasses, func(sc *storagev1.StorageClass) bool { return sc.Name == class })
		if class != "" && i >= 0 {
			d := v.in.StorageClasses[i].Provisioner
			out[d+"/class:"+c.Namespace+"/"+c.Name] = d
		}
	}
}

func (v *preemptVols) claimNamed(ns, name string) *v1.PersistentVolumeClaim {
	i := slices.IndexFunc(v.in.PersistentVolumeClaims, func(c *v1.PersistentVolumeClaim) bool {
		return c.Namespace == ns && c.Name == name
	})
	if i < 0 {
		return nil
	}
	return v.in.PersistentVolumeClaims[i]
}

func (v *preemptVols) pvNamed(name string) *v1.PersistentVolume {
	i := slices.IndexFunc(v.in.PersistentVolumes, func(pv *v1.PersistentVolume) bool { return pv.Name == name })
	if i < 0 || name == "" {
		return nil
	}
	return v.in.PersistentVolumes[i]
}
