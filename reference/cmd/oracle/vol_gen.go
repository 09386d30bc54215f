package main

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

const (
	csiDriver         = "csi.example.com"
	otherCSIDriver    = "other.csi.example.com"
	noProvisioner     = "kubernetes.io/no-provisioner"
	annBindCompleted  = "pv.kubernetes.io/bind-completed"
	annSelectedNode   = "volume.kubernetes.io/selected-node"
	capacityNamespace = "kube-system"
	gi                = int64(1) << 30
	labelPVTier       = "storage-tier"
)

var (
	// Sizes in Gi. PVs of one class get distinct sizes: upstream binds a
	// claim to the smallest volume that fits, and among volumes of equal
	// size to whichever its index lists first, which is map order.
	pvSizes    = []int64{1, 2, 5, 10, 20, 50, 100, 200}
	claimSizes = []int64{1, 1, 2, 3, 5, 8, 10, 20, 50, 100, 300}
	capSizes   = []int64{1, 4, 10, 20, 50, 100, 500}
	// Access mode sets of claims and volumes.
	accessModeSets = [][]v1.PersistentVolumeAccessMode{
		{v1.ReadWriteOnce}, {v1.ReadWriteOnce}, {v1.ReadWriteOnce}, {v1.ReadWriteOnce, v1.ReadOnlyMany},
		{v1.ReadWriteMany}, {v1.ReadOnlyMany}, {v1.ReadWriteOncePod},
	}
)

// classKind is what a StorageClass of the generator is for.
type classKind int

const (
	classWFFC      classKind = iota // WaitForFirstConsumer, CSI provisioner
	classLocal                      // WaitForFirstConsumer, no provisioner: static PVs only
	classImmediate                  // Immediate
	classUnset                      // volumeBindingMode left to the API server's default (Immediate)
	classOther                      // WaitForFirstConsumer, the other CSI driver
	classTopo                       // WaitForFirstConsumer, allowedTopologies always
	classInTree                     // WaitForFirstConsumer, an in-tree provisioner (CSI migration)
)

type volGen struct {
	r       *rand.Rand
	in      *Input
	zones   []string
	ns      string
	classes map[string]classKind
	delayed []string // the classes that delay binding
	sizes   map[string][]int64
	// claimRefs: the claims (namespace/name) some PV names already, so
	// that no two PVs are prebound to the same claim (upstream takes the
	// first it lists).
	claimRefs map[string]bool
	uids      int
	// The case has in-tree volumes CSI migration counts
	// (vol_migration_gen.go).
	migration bool
}

func (g *volGen) uid(kind string) types.UID {
	g.uids++
	return types.UID(fmt.Sprintf("%s-%04d-%08x", kind, g.uids, g.r.Uint32()))
}

func gib(n int64) resource.Quantity { return *resource.NewQuantity(n*gi, resource.BinarySI) }

// addVolumes adds to a case the storage objects VolumeBinding reads and
// gives the pod claims: about 15% of the cases get none (the pod has no
// claim and VolumeBinding skips), 10% get objects but no claim for the pod,
// the rest 1-3 claim volumes.
func addVolumes(r *rand.Rand, in *Input, zones []string) {
	in.StorageClasses = []*storagev1.StorageClass{}
	in.CSIDrivers = []*storagev1.CSIDriver{}
	in.CSIStorageCapacities = []*storagev1.CSIStorageCapacity{}
	in.PersistentVolumes = []*v1.PersistentVolume{}
	in.PersistentVolumeClaims = []*v1.PersistentVolumeClaim{}
	in.CSINodes = []*storagev1.CSINode{}
	in.VolumeAttachments = []*storagev1.VolumeAttachment{}
	x := r.Float64()
	if x < 0.15 {
		return
	}
	g := &volGen{
		r: r, in: in, zones: zones, ns: in.Pod.Namespace,
		classes: map[string]classKind{}, sizes: map[string][]int64{}, claimRefs: map[string]bool{},
	}
	g.migrationSetup()
	g.betaNodeLabels()
	g.storageClasses()
	g.drivers()
	g.capacities()
	defer g.volumeLimits()
	if x < 0.25 {
		for range r.IntN(4) {
			g.pv(g.anyClass())
		}
		return
	}
	for i := range pick(r, []int{1, 1, 1, 2, 2, 3}) {
		g.podVolume(i)
	}
	// Volumes of no particular claim.
	for range r.IntN(4) {
		pv := g.pv(g.anyClass())
		if pv != nil && chance(r, 0.4) {
			g.claimRef(pv, &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{
				Namespace: pick(r, []string{g.ns, "elsewhere"}), Name: fmt.Sprintf("other-%d", r.IntN(3)),
			}}, false)
		}
	}
}

func (g *volGen) storageClasses() {
	r := g.r
	type tmpl struct {
		name string
		kind classKind
		p    float64
	}
	tmpls := []tmpl{
		{"fast", classWFFC, 0.85}, {"local", classLocal, 0.6}, {"standard", classImmediate, 0.5},
		{"legacy", classUnset, 0.1}, {"other", classOther, 0.35}, {"zonal", classTopo, 0.4},
	}
	if g.migration {
		tmpls = append(tmpls, tmpl{"intree", classInTree, 0.5})
	}
	for _, t := range tmpls {
		if !chance(r, t.p) {
			continue
		}
		sc := &storagev1.StorageClass{
			TypeMeta:    metav1.TypeMeta{APIVersion: "storage.k8s.io/v1", Kind: "StorageClass"},
			ObjectMeta:  metav1.ObjectMeta{Name: t.name, UID: g.uid("sc")},
			Provisioner: csiDriver,
		}
		wffc := storagev1.VolumeBindingWaitForFirstConsumer
		switch t.kind {
		case classWFFC, classTopo:
			sc.VolumeBindingMode = &wffc
		case classLocal:
			sc.VolumeBindingMode = &wffc
			sc.Provisioner = noProvisioner
		case classImmediate:
			sc.VolumeBindingMode = ptr.To(storagev1.VolumeBindingImmediate)
		case classUnset:
			// As the API server defaults it: a class without a mode is never
			// stored (upstream's PreFilter error for one cannot happen).
			sc.VolumeBindingMode = ptr.To(storagev1.VolumeBindingImmediate)
		case classOther:
			sc.VolumeBindingMode = &wffc
			sc.Provisioner = otherCSIDriver
		case classInTree:
			sc.VolumeBindingMode = &wffc
			sc.Provisioner = pick(r, inTreeProvisioners)
		}
		if t.kind == classTopo || t.kind == classWFFC && chance(r, 0.25) || t.kind == classImmediate && chance(r, 0.2) {
			sc.AllowedTopologies = g.allowedTopologies()
		}
		if t.kind != classUnset {
			sc.ReclaimPolicy = ptr.To(pick(r, []v1.PersistentVolumeReclaimPolicy{v1.PersistentVolumeReclaimDelete, v1.PersistentVolumeReclaimRetain}))
		}
		g.in.StorageClasses = append(g.in.StorageClasses, sc)
		g.classes[t.name] = t.kind
		if sc.VolumeBindingMode != nil && *sc.VolumeBindingMode == wffc {
			g.delayed = append(g.delayed, t.name)
		}
		g.sizes[t.name] = slices.Clone(pvSizes)
	}
	g.sizes[""] = slices.Clone(pvSizes)
	g.sizes["gone"] = slices.Clone(pvSizes)
}

// allowedTopologies: zones (one term, or one per zone), or some nodes'
// hostnames.
func (g *volGen) allowedTopologies() []v1.TopologySelectorTerm {
	r := g.r
	if chance(r, 0.7) {
		zones := slices.Clone(g.zones)
		r.Shuffle(len(zones), func(i, j int) { zones[i], zones[j] = zones[j], zones[i] })
		zones = zones[:1+r.IntN(len(zones))]
		if chance(r, 0.3) {
			var out []v1.TopologySelectorTerm
			for _, z := range zones {
				out = append(out, v1.TopologySelectorTerm{MatchLabelExpressions: []v1.TopologySelectorLabelRequirement{{Key: labelZone, Values: []string{z}}}})
			}
			return out
		}
		return []v1.TopologySelectorTerm{{MatchLabelExpressions: []v1.TopologySelectorLabelRequirement{{Key: labelZone, Values: zones}}}}
	}
	var hosts []string
	for _, n := range g.in.Nodes {
		if chance(r, 0.4) {
			hosts = append(hosts, n.Labels[labelHostname])
		}
	}
	if len(hosts) == 0 {
		hosts = []string{pick(r, g.in.Nodes).Labels[labelHostname]}
	}
	return []v1.TopologySelectorTerm{{MatchLabelExpressions: []v1.TopologySelectorLabelRequirement{{Key: labelHostname, Values: hosts}}}}
}

func (g *volGen) drivers() {
	r := g.r
	add := func(name string, capacity *bool) {
		g.in.CSIDrivers = append(g.in.CSIDrivers, &storagev1.CSIDriver{
			TypeMeta:   metav1.TypeMeta{APIVersion: "storage.k8s.io/v1", Kind: "CSIDriver"},
			ObjectMeta: metav1.ObjectMeta{Name: name, UID: g.uid("csidriver")},
			Spec: storagev1.CSIDriverSpec{
				AttachRequired:  ptr.To(true),
				PodInfoOnMount:  ptr.To(false),
				StorageCapacity: capacity,
			},
		})
	}
	if chance(r, 0.85) {
		add(csiDriver, pick(r, []*bool{ptr.To(true), ptr.To(true), ptr.To(true), ptr.To(false), nil}))
	}
	if chance(r, 0.5) {
		add(otherCSIDriver, pick(r, []*bool{ptr.To(true), ptr.To(false)}))
	}
}

// capacities: for each class with a CSI provisioner, mostly, the
// CSIStorageCapacity objects of its driver. Those of one class reach
// disjoint sets of nodes (by zone, by hostname, or one for all): upstream
// takes the first sufficient one it lists, in map order, and Score reads
// its capacity. Some reach no node (no nodeTopology) or fit no claim
// (neither capacity nor maximumVolumeSize). maximumVolumeSize never comes
// without capacity: upstream's Score would dereference the nil capacity.
func (g *volGen) capacities() {
	r := g.r
	n := 0
	add := func(class string, topology *metav1.LabelSelector, limitless bool) {
		n++
		c := &storagev1.CSIStorageCapacity{
			TypeMeta:         metav1.TypeMeta{APIVersion: "storage.k8s.io/v1", Kind: "CSIStorageCapacity"},
			ObjectMeta:       metav1.ObjectMeta{Name: fmt.Sprintf("csisc-%02d", n), Namespace: capacityNamespace, UID: g.uid("csisc")},
			StorageClassName: class,
			NodeTopology:     topology,
		}
		if !limitless {
			total := pick(r, capSizes)
			c.Capacity = ptr.To(gib(total))
			if chance(r, 0.3) {
				c.MaximumVolumeSize = ptr.To(gib(max(1, total/int64(1+r.IntN(4)))))
			}
		}
		g.in.CSIStorageCapacities = append(g.in.CSIStorageCapacities, c)
	}
	for _, sc := range g.in.StorageClasses {
		if sc.Provisioner == noProvisioner || !chance(r, 0.85) {
			continue
		}
		switch x := r.Float64(); {
		case x < 0.45:
			for _, z := range g.zones {
				if chance(r, 0.8) {
					add(sc.Name, &metav1.LabelSelector{MatchLabels: map[string]string{labelZone: z}}, false)
				}
			}
		case x < 0.8:
			for _, node := range g.in.Nodes {
				if chance(r, 0.6) {
					add(sc.Name, &metav1.LabelSelector{MatchLabels: map[string]string{labelHostname: node.Labels[labelHostname]}}, false)
				}
			}
		case x < 0.9:
			add(sc.Name, &metav1.LabelSelector{}, false)
		default:
			add(sc.Name, &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: labelZone, Operator: metav1.LabelSelectorOpIn, Values: g.zones[:1+r.IntN(len(g.zones))]},
			}}, false)
		}
		if chance(r, 0.1) {
			add(sc.Name, nil, false)
		}
		if chance(r, 0.05) {
			add(sc.Name, &metav1.LabelSelector{}, true)
		}
	}
	if chance(r, 0.1) {
		add("gone", &metav1.LabelSelector{}, false)
	}
}

// anyClass is a class name for a volume or claim: mostly one of the
// case's classes, sometimes none or one that does not exist.
func (g *volGen) anyClass() string {
	r := g.r
	if len(g.in.StorageClasses) == 0 || chance(g.r, 0.1) {
		return pick(r, []string{"", "", "gone"})
	}
	return pick(r, g.in.StorageClasses).Name
}

// delayedClass is a class that delays binding, when the case has one.
func (g *volGen) delayedClass() string {
	if len(g.delayed) == 0 || chance(g.r, 0.03) {
		return g.anyClass()
	}
	return pick(g.r, g.delayed)
}

// pvNodeAffinity pins a volume to a node's hostname (sometimes one no node
// has) or to zones, or leaves it unpinned (nil).
func (g *volGen) pvNodeAffinity() *v1.VolumeNodeAffinity {
	r := g.r
	req := v1.NodeSelectorRequirement{Operator: v1.NodeSelectorOpIn}
	switch x := r.Float64(); {
	case x < 0.45:
		req.Key = labelHostname
		req.Values = []string{pick(r, g.in.Nodes).Labels[labelHostname]}
		if chance(r, 0.05) {
			req.Values = []string{"gone"}
		}
	case x < 0.75:
		req.Key = labelZone
		zones := slices.Clone(g.zones)
		r.Shuffle(len(zones), func(i, j int) { zones[i], zones[j] = zones[j], zones[i] })
		req.Values = zones[:1+r.IntN(min(2, len(zones)))]
	default:
		return nil
	}
	return &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{
		NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchExpressions: []v1.NodeSelectorRequirement{req}}},
	}}
}

// pv adds a volume of class with a size of the class not taken yet, at
// least minGi when it can; nil when the class has no size left.
func (g *volGen) pvSized(class string, minGi int64) *v1.PersistentVolume {
	r := g.r
	sizes := g.sizes[class]
	if len(sizes) == 0 {
		return nil
	}
	var fit []int
	for i, s := range sizes {
		if s >= minGi {
			fit = append(fit, i)
		}
	}
	i := r.IntN(len(sizes))
	if len(fit) > 0 && chance(r, 0.85) {
		i = pick(r, fit)
	}
	size := sizes[i]
	g.sizes[class] = slices.Delete(sizes, i, i+1)
	pv := &v1.PersistentVolume{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "PersistentVolume"},
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("pv-%02d", len(g.in.PersistentVolumes)+1), UID: g.uid("pv")},
		Spec: v1.PersistentVolumeSpec{
			Capacity:                      v1.ResourceList{v1.ResourceStorage: gib(size)},
			AccessModes:                   slices.Clone(pick(r, accessModeSets)),
			PersistentVolumeReclaimPolicy: v1.PersistentVolumeReclaimRetain,
			StorageClassName:              class,
			NodeAffinity:                  g.pvNodeAffinity(),
		},
		Status: v1.PersistentVolumeStatus{Phase: pick(r, []v1.PersistentVolumePhase{
			v1.VolumeAvailable, v1.VolumeAvailable, v1.VolumeAvailable, v1.VolumeAvailable, v1.VolumeAvailable,
			v1.VolumeAvailable, v1.VolumeReleased, v1.VolumeBound, v1.VolumePending,
		})},
	}
	if chance(r, 0.25) {
		pv.Spec.VolumeMode = ptr.To(pick(r, []v1.PersistentVolumeMode{v1.PersistentVolumeFilesystem, v1.PersistentVolumeBlock}))
	}
	if chance(r, 0.5) {
		pv.Labels = map[string]string{labelPVTier: pick(r, []string{"gold", "silver"})}
	}
	if g.classes[class] == classLocal && pv.Spec.NodeAffinity != nil {
		pv.Spec.Local = &v1.LocalVolumeSource{Path: "/mnt/disks/" + pv.Name}
	} else if g.migration && chance(r, 0.15) {
		g.inTreePVSource(pv, false) // VolumeZone reads its labels: pvTopology's
	} else {
		pv.Spec.CSI = &v1.CSIPersistentVolumeSource{Driver: csiDriver, VolumeHandle: string(pv.UID)}
	}
	if chance(r, 0.05) {
		pv.DeletionTimestamp = &deletedAt
		pv.DeletionGracePeriodSeconds = ptr.To[int64](0)
		pv.Finalizers = []string{"kubernetes.io/pv-protection"}
	}
	g.pvTopology(pv)
	g.in.PersistentVolumes = append(g.in.PersistentVolumes, pv)
	return pv
}

// betaNodeLabels gives some nodes the beta zone and region labels
// VolumeZone reads first: mostly copies of their GA labels, sometimes
// another zone (upstream then does not fall back to the GA label).
func (g *volGen) betaNodeLabels() {
	r := g.r
	for _, n := range g.in.Nodes {
		if !chance(r, 0.3) {
			continue
		}
		zone, hasZone := n.Labels[labelZone]
		if chance(r, 0.15) || !hasZone {
			zone = pick(r, g.zones)
		}
		n.Labels[v1.LabelFailureDomainBetaZone] = zone
		if region, ok := n.Labels[labelRegion]; ok && chance(r, 0.8) {
			n.Labels[v1.LabelFailureDomainBetaRegion] = region
		}
	}
}

// zoneRegion is the region of g.zones[i], as the generator's nodes have it.
func zoneRegion(i int) string { return fmt.Sprintf("region-%d", 1+i%2) }

// pvTopology gives about 60% of the volumes the zone and region labels
// VolumeZone reads: GA or beta keys, one zone or several ("zone-a__zone-b",
// volumehelpers.LabelZonesToSet), mostly the zones the volume's node
// affinity names, and their regions.
func (g *volGen) pvTopology(pv *v1.PersistentVolume) {
	r := g.r
	if !chance(r, 0.6) {
		return
	}
	idx := r.Perm(len(g.zones))[:1+r.IntN(min(3, len(g.zones)))]
	if na := pv.Spec.NodeAffinity; na != nil && chance(r, 0.7) {
		req := na.Required.NodeSelectorTerms[0].MatchExpressions[0]
		if req.Key == labelZone {
			idx = idx[:0]
			for _, z := range req.Values {
				idx = append(idx, slices.Index(g.zones, z))
			}
		}
	}
	var zones, regions []string
	for _, i := range idx {
		zones = append(zones, g.zones[i])
		if !slices.Contains(regions, zoneRegion(i)) {
			regions = append(regions, zoneRegion(i))
		}
	}
	if pv.Labels == nil {
		pv.Labels = map[string]string{}
	}
	key := func(ga, beta string) string {
		if chance(r, 0.3) {
			return beta
		}
		return ga
	}
	if chance(r, 0.85) {
		pv.Labels[key(labelZone, v1.LabelFailureDomainBetaZone)] = strings.Join(zones, "__")
	}
	if chance(r, 0.5) {
		pv.Labels[key(labelRegion, v1.LabelFailureDomainBetaRegion)] = strings.Join(regions, "__")
	}
}

func (g *volGen) pv(class string) *v1.PersistentVolume {
	return g.pvSized(class, 0)
}

// claimRef points pv at claim, with its uid (withUID), with none, or
// rarely with another; false when a volume names the claim already.
func (g *volGen) claimRef(pv *v1.PersistentVolume, claim *v1.PersistentVolumeClaim, withUID bool) bool {
	key := claim.Namespace + "/" + claim.Name
	if g.claimRefs[key] {
		return false
	}
	g.claimRefs[key] = true
	ref := &v1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: claim.Namespace, Name: claim.Name}
	if withUID {
		ref.UID = claim.UID
		if chance(g.r, 0.1) {
			ref.UID = "pvc-recreated"
		}
	}
	pv.Spec.ClaimRef = ref
	return true
}

// claimState is what the generator makes of one of the pod's claims.
type claimState int

const (
	claimBound claimState = iota
	claimDelayed
	claimImmediate
	claimUnset
	claimLost
	claimDeleting
	claimMissing
)

func (g *volGen) state() claimState {
	r := g.r
	switch x := r.Float64(); {
	case x < 0.3:
		return claimBound
	case x < 0.82:
		return claimDelayed
	case x < 0.89:
		return claimImmediate
	case x < 0.91:
		return claimUnset
	case x < 0.94:
		return claimLost
	case x < 0.97:
		return claimDeleting
	default:
		return claimMissing
	}
}

// podVolume gives the pod its i-th claim volume: a persistentVolumeClaim
// (80%) or a generic ephemeral volume, its claim in some state and the
// volumes that make it bind, or not, somewhere.
func (g *volGen) podVolume(i int) {
	r := g.r
	pod := g.in.Pod
	vol := v1.Volume{Name: fmt.Sprintf("vol-%d", i)}
	ephemeral := chance(r, 0.2)
	name := fmt.Sprintf("data-%d", i)
	if ephemeral {
		name = pod.Name + "-" + vol.Name
	}
	st := g.state()
	claim := &v1.PersistentVolumeClaim{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "PersistentVolumeClaim"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: g.ns, UID: g.uid("pvc")},
		Spec: v1.PersistentVolumeClaimSpec{
			AccessModes: slices.Clone(pick(r, accessModeSets)),
			Resources:   v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: gib(pick(r, claimSizes))}},
		},
		Status: v1.PersistentVolumeClaimStatus{Phase: v1.ClaimPending},
	}
	if chance(r, 0.15) {
		claim.Spec.VolumeMode = ptr.To(pick(r, []v1.PersistentVolumeMode{v1.PersistentVolumeFilesystem, v1.PersistentVolumeBlock, v1.PersistentVolumeBlock}))
	}
	var class string
	switch st {
	case claimImmediate:
		class = pick(r, []string{"standard", "standard", "", "gone"})
		if _, ok := g.classes["standard"]; !ok && class == "standard" {
			class = ""
		}
	case claimUnset:
		class = "legacy"
		if _, ok := g.classes[class]; !ok {
			class = g.delayedClass()
		}
	case claimBound:
		class = g.anyClass()
	default:
		class = g.delayedClass()
	}
	setClass := func(c *v1.PersistentVolumeClaim) {
		switch {
		case class == "" && chance(r, 0.5):
			// No class at all (the API server would give it the default
			// class, of which the generator makes none).
		case chance(r, 0.05):
			// The beta annotation, which upstream reads first, always
			// with the same spec.storageClassName: VolumeBinding's Score
			// dereferences spec.storageClassName of a claim it provisions
			// with a CSIStorageCapacity, and panics when it is nil.
			c.Annotations = map[string]string{v1.BetaStorageClassAnnotation: class}
			c.Spec.StorageClassName = ptr.To(class)
		default:
			c.Spec.StorageClassName = ptr.To(class)
		}
	}
	setClass(claim)
	if chance(r, 0.15) {
		if chance(r, 0.6) {
			claim.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{labelPVTier: "gold"}}
		} else {
			claim.Spec.Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: labelPVTier, Operator: metav1.LabelSelectorOpIn, Values: []string{"gold", "silver"}},
			}}
		}
	}
	request := claim.Spec.Resources.Requests.Storage().Value() / gi

	switch st {
	case claimBound:
		claim.Status.Phase = v1.ClaimBound
		claim.Annotations = withAnn(claim.Annotations, annBindCompleted, "yes")
		if chance(r, 0.1) {
			// Named but not bound yet: upstream counts it as an unbound
			// immediate claim.
			delete(claim.Annotations, annBindCompleted)
			claim.Status.Phase = v1.ClaimPending
		}
		if chance(r, 0.1) {
			claim.Spec.VolumeName = fmt.Sprintf("pv-gone-%d", i)
			break
		}
		pv := g.pvSized(class, request)
		if pv == nil {
			claim.Spec.VolumeName = fmt.Sprintf("pv-gone-%d", i)
			break
		}
		claim.Spec.VolumeName = pv.Name
		pv.Status.Phase = v1.VolumeBound
		g.claimRef(pv, claim, true)
		claim.Status.Capacity = pv.Spec.Capacity
		claim.Status.AccessModes = pv.Spec.AccessModes
	case claimLost:
		claim.Status.Phase = v1.ClaimLost
		claim.Spec.VolumeName = fmt.Sprintf("pv-lost-%d", i)
		claim.Annotations = withAnn(claim.Annotations, annBindCompleted, "yes")
	case claimDeleting:
		claim.DeletionTimestamp = &deletedAt
		claim.DeletionGracePeriodSeconds = ptr.To[int64](0)
		claim.Finalizers = []string{"kubernetes.io/pvc-protection"}
	case claimDelayed:
		if chance(r, 0.12) {
			node := "gone"
			if chance(r, 0.9) {
				node = pick(r, g.in.Nodes).Name
			}
			claim.Annotations = withAnn(claim.Annotations, annSelectedNode, node)
		}
		// Volumes the claim may take: mostly of its class, big enough.
		if chance(r, 0.65) {
			for range 1 + r.IntN(3) {
				pv := g.pvSized(class, request)
				if pv == nil {
					break
				}
				if chance(r, 0.5) {
					pv.Spec.AccessModes = slices.Clone(claim.Spec.AccessModes)
				}
				if chance(r, 0.1) {
					g.claimRef(pv, claim, chance(r, 0.5)) // prebound by an admin
				}
			}
		}
	}

	if ephemeral {
		tmpl := &v1.PersistentVolumeClaimTemplate{Spec: *claim.Spec.DeepCopy()}
		tmpl.Spec.VolumeName = ""
		vol.Ephemeral = &v1.EphemeralVolumeSource{VolumeClaimTemplate: tmpl}
		if chance(r, 0.9) {
			claim.OwnerReferences = []metav1.OwnerReference{{
				APIVersion: "v1", Kind: "Pod", Name: pod.Name, UID: pod.UID,
				Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
			}}
		} else if chance(r, 0.5) {
			claim.OwnerReferences = []metav1.OwnerReference{{
				APIVersion: "v1", Kind: "Pod", Name: pod.Name, UID: "pod-earlier",
				Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
			}}
		}
	} else {
		vol.PersistentVolumeClaim = &v1.PersistentVolumeClaimVolumeSource{ClaimName: name, ReadOnly: chance(r, 0.1)}
	}
	pod.Spec.Volumes = append(pod.Spec.Volumes, vol)
	if st != claimMissing && !(ephemeral && chance(r, 0.05)) {
		g.in.PersistentVolumeClaims = append(g.in.PersistentVolumeClaims, claim)
	}
}

func withAnn(m map[string]string, k, v string) map[string]string {
	if m == nil {
		m = map[string]string{}
	}
	m[k] = v
	return m
}
