package main

import (
	"fmt"
	"k8s.io/apimachinery/pkg/api/resource"
	"slices"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// volumeLimits adds what NodeVolumeLimits reads to a volumes case: CSINodes
// with driver limits, volumes of the existing pods (claims bound to CSI
// volumes, claims a class would provision, ephemeral ones, shared with the
// pod's own claims or missing), VolumeAttachments, and sometimes
// preventPodSchedulingIfMissing on a CSIDriver. Limits are small, so the
// counts decide. In-tree volumes CSI migration counts come from
// vol_migration_gen.go.
func (g *volGen) volumeLimits() {
	r := g.r
	// At most one driver says true: with two missing on a node, upstream
	// names whichever its map gives first.
	prevent := false
	for _, d := range g.in.CSIDrivers {
		if chance(r, 0.3) {
			d.Spec.PreventPodSchedulingIfMissing = ptr.To(!prevent && chance(r, 0.8))
			prevent = prevent || *d.Spec.PreventPodSchedulingIfMissing
		}
	}
	for _, n := range g.in.Nodes {
		if chance(r, 0.75) {
			g.csiNode(n.Name)
		}
	}
	for _, p := range g.in.Pods {
		if p.Spec.NodeName != "" && chance(r, 0.35) {
			for i := range 1 + r.IntN(2) {
				g.existingVolume(p, i)
			}
		}
	}
	for _, n := range g.in.Nodes {
		for range pick(r, []int{0, 0, 1, 2}) {
			g.attachment(n.Name)
		}
	}
	g.migrationInline()
	// A claim volume mounted inline as CSI is not counted upstream; the pod
	// sometimes has one.
	if chance(r, 0.2) {
		g.in.Pod.Spec.Volumes = append(g.in.Pod.Spec.Volumes, v1.Volume{
			Name: "inline", VolumeSource: v1.VolumeSource{CSI: &v1.CSIVolumeSource{Driver: csiDriver}},
		})
	}
}

func (g *volGen) csiNode(node string) {
	r := g.r
	cn := &storagev1.CSINode{
		TypeMeta:   metav1.TypeMeta{APIVersion: "storage.k8s.io/v1", Kind: "CSINode"},
		ObjectMeta: metav1.ObjectMeta{Name: node, UID: g.uid("csinode")},
	}
	for _, d := range []string{csiDriver, otherCSIDriver} {
		if !chance(r, 0.7) {
			continue
		}
		driver := storagev1.CSINodeDriver{Name: d, NodeID: node}
		if chance(r, 0.8) {
			driver.Allocatable = &storagev1.VolumeNodeResources{Count: ptr.To(int32(r.IntN(5)))}
		}
		cn.Spec.Drivers = append(cn.Spec.Drivers, driver)
	}
	g.migratedCSINodeDrivers(cn)
	if len(cn.Spec.Drivers) >= 2 && chance(r, 0.5) {
		slices.Reverse(cn.Spec.Drivers)
	}
	g.in.CSINodes = append(g.in.CSINodes, cn)
}

// csiPV is a CSI volume bound to claim, of no class the pod's claims use.
func (g *volGen) csiPV(driver, claimNS, claimName string) *v1.PersistentVolume {
	pv := &v1.PersistentVolume{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "PersistentVolume"},
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("pv-used-%02d", len(g.in.PersistentVolumes)+1), UID: g.uid("pv")},
		Spec: v1.PersistentVolumeSpec{
			Capacity:                      v1.ResourceList{v1.ResourceStorage: gib(1)},
			AccessModes:                   []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			PersistentVolumeReclaimPolicy: v1.PersistentVolumeReclaimRetain,
			StorageClassName:              "used",
			ClaimRef:                      &v1.ObjectReference{Kind: "PersistentVolumeClaim", Namespace: claimNS, Name: claimName},
		},
		Status: v1.PersistentVolumeStatus{Phase: v1.VolumeBound},
	}
	if chance(g.r, 0.1) {
		pv.Spec.HostPath = &v1.HostPathVolumeSource{Path: "/data/" + pv.Name} // not CSI
	} else {
		pv.Spec.CSI = &v1.CSIPersistentVolumeSource{Driver: driver, VolumeHandle: "h-" + string(pv.UID)}
	}
	g.in.PersistentVolumes = append(g.in.PersistentVolumes, pv)
	return pv
}

// existingVolume gives an existing pod its i-th claim volume.
func (g *volGen) existingVolume(p *v1.Pod, i int) {
	r := g.r
	vol := v1.Volume{Name: fmt.Sprintf("ev-%d", i)}
	name := fmt.Sprintf("%s-claim-%d", p.Name, i)
	claim := &v1.PersistentVolumeClaim{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "PersistentVolumeClaim"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: p.Namespace, UID: g.uid("pvc")},
		Spec: v1.PersistentVolumeClaimSpec{
			AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			Resources:   v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: gib(1)}},
		},
		Status: v1.PersistentVolumeClaimStatus{Phase: v1.ClaimBound},
	}
	switch x := r.Float64(); {
	case x < 0.2 && p.Namespace == g.in.Pod.Namespace:
		// One of the pod's own claims: counted once on that node.
		for _, v := range g.in.Pod.Spec.Volumes {
			if v.PersistentVolumeClaim != nil {
				vol.PersistentVolumeClaim = &v1.PersistentVolumeClaimVolumeSource{ClaimName: v.PersistentVolumeClaim.ClaimName}
				p.Spec.Volumes = append(p.Spec.Volumes, vol)
				return
			}
		}
		fallthrough
	case x < 0.6:
		pv := g.csiPV(pick(r, []string{csiDriver, csiDriver, otherCSIDriver}), p.Namespace, name)
		g.migratePlaced(pv)
		claim.Spec.VolumeName = pv.Name
		claim.Spec.StorageClassName = ptr.To("used")
	case x < 0.7:
		claim.Spec.VolumeName = "pv-gone" // counted by its class
		claim.Spec.StorageClassName = ptr.To(g.anyClass())
	case x < 0.8:
		claim.Status.Phase = v1.ClaimPending // counted by its class
		claim.Spec.StorageClassName = ptr.To(pick(r, []string{g.anyClass(), "gone", ""}))
	case x < 0.9:
		name = "missing-" + name // not counted
	default:
		name = p.Name + "-" + vol.Name
		claim.Name = name
		// A template the API server accepts (access modes, a storage request).
		vol.Ephemeral = &v1.EphemeralVolumeSource{VolumeClaimTemplate: &v1.PersistentVolumeClaimTemplate{
			Spec: v1.PersistentVolumeClaimSpec{
				AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
				Resources: v1.VolumeResourceRequirements{Requests: v1.ResourceList{
					v1.ResourceStorage: resource.MustParse("1Gi")}},
			},
		}}
		pv := g.csiPV(csiDriver, p.Namespace, name)
		claim.Spec.VolumeName = pv.Name
		claim.OwnerReferences = []metav1.OwnerReference{{
			APIVersion: "v1", Kind: "Pod", Name: p.Name, UID: p.UID, Controller: ptr.To(true),
		}}
	}
	if vol.Ephemeral == nil {
		vol.PersistentVolumeClaim = &v1.PersistentVolumeClaimVolumeSource{ClaimName: name}
	}
	p.Spec.Volumes = append(p.Spec.Volumes, vol)
	if claim.Name == name {
		g.in.PersistentVolumeClaims = append(g.in.PersistentVolumeClaims, claim)
	}
}

// attachment: a VolumeAttachment on node, of a volume a pod there may use,
// one of no pod, a missing one, or an inline source (not counted).
func (g *volGen) attachment(node string) {
	r := g.r
	va := &storagev1.VolumeAttachment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "storage.k8s.io/v1", Kind: "VolumeAttachment"},
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("va-%02d", len(g.in.VolumeAttachments)+1), UID: g.uid("va")},
		Spec:       storagev1.VolumeAttachmentSpec{Attacher: pick(r, []string{csiDriver, csiDriver, otherCSIDriver}), NodeName: node},
	}
	var csiPVs []*v1.PersistentVolume
	for _, pv := range g.in.PersistentVolumes {
		if pv.Spec.CSI != nil {
			csiPVs = append(csiPVs, pv)
		}
	}
	switch x := r.Float64(); {
	case x < 0.45 && len(csiPVs) > 0:
		pv := pick(r, csiPVs)
		va.Spec.Source.PersistentVolumeName = ptr.To(pv.Name)
		if chance(r, 0.8) {
			va.Spec.Attacher = pv.Spec.CSI.Driver
		}
	case x < 0.8:
		pv := g.csiPV(va.Spec.Attacher, "elsewhere", "attached-"+va.Name)
		va.Spec.Source.PersistentVolumeName = ptr.To(pv.Name)
	case x < 0.9:
		va.Spec.Source.PersistentVolumeName = ptr.To("pv-gone")
	default:
		// As the API server accepts an inline source: a CSI one with access
		// modes.
		va.Spec.Source.InlineVolumeSpec = &v1.PersistentVolumeSpec{
			AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			PersistentVolumeSource: v1.PersistentVolumeSource{CSI: &v1.CSIPersistentVolumeSource{
				Driver: va.Spec.Attacher, VolumeHandle: "inline-" + va.Name,
			}},
		}
	}
	g.in.VolumeAttachments = append(g.in.VolumeAttachments, va)
}
