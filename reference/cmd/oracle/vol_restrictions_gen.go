package main

import (
	"fmt"
	"math/rand/v2"

	v1 "k8s.io/api/core/v1"
)

// addRestrictions gives a volumes case what VolumeRestrictions reads, after
// addVolumes and from the same stream: ReadWriteOncePod claims of the pod
// that pods already placed use too, and in-tree GCE PD, AWS EBS, iSCSI and
// RBD volumes on the incoming pod and on pods already placed, drawn from a
// small pool so that they meet.
func addRestrictions(r *rand.Rand, in *Input) {
	if chance(r, 0.5) {
		shareClaims(r, in)
	}
	if chance(r, 0.45) {
		for i := range 1 + r.IntN(2) {
			in.Pod.Spec.Volumes = append(in.Pod.Spec.Volumes, inlineDisk(r, fmt.Sprintf("disk-%d", i)))
		}
	}
	if len(in.Pods) == 0 || !chance(r, 0.6) {
		return
	}
	for range 1 + r.IntN(6) {
		p := pick(r, in.Pods)
		p.Spec.Volumes = append(p.Spec.Volumes, inlineDisk(r, fmt.Sprintf("disk-%d", len(p.Spec.Volumes))))
	}
}

// shareClaims makes some of the pod's claims ReadWriteOncePod and names
// them, or the pod's other claims, in pods already placed (sometimes of
// another namespace, where the name is another claim).
func shareClaims(r *rand.Rand, in *Input) {
	var names []string
	for _, c := range in.PersistentVolumeClaims {
		if c.Namespace != in.Pod.Namespace || len(c.OwnerReferences) > 0 {
			continue
		}
		if chance(r, 0.5) {
			c.Spec.AccessModes = []v1.PersistentVolumeAccessMode{v1.ReadWriteOncePod}
		}
		names = append(names, c.Name)
	}
	if len(names) == 0 || len(in.Pods) == 0 {
		return
	}
	for range 1 + r.IntN(3) {
		p := pick(r, in.Pods)
		if p.Namespace != in.Pod.Namespace && !chance(r, 0.3) {
			continue
		}
		p.Spec.Volumes = append(p.Spec.Volumes, v1.Volume{
			Name: fmt.Sprintf("claim-%d", len(p.Spec.Volumes)),
			VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{
				ClaimName: pick(r, names),
			}},
		})
	}
}

// inlineDisk draws an in-tree volume from a pool of two disks per kind.
func inlineDisk(r *rand.Rand, name string) v1.Volume {
	ro := chance(r, 0.4)
	id := r.IntN(2)
	v := v1.Volume{Name: name}
	switch r.IntN(4) {
	case 0:
		v.GCEPersistentDisk = &v1.GCEPersistentDiskVolumeSource{PDName: fmt.Sprintf("pd-%d", id), ReadOnly: ro}
	case 1:
		v.AWSElasticBlockStore = &v1.AWSElasticBlockStoreVolumeSource{VolumeID: fmt.Sprintf("vol-%d", id), ReadOnly: ro}
	case 2:
		v.ISCSI = &v1.ISCSIVolumeSource{TargetPortal: "10.0.0.1:3260", IQN: fmt.Sprintf("iqn.2001-04.com.example:disk-%d", id), ReadOnly: ro}
	default:
		monitors := []string{"m1", "m2", "m3"}
		r.Shuffle(len(monitors), func(i, j int) { monitors[i], monitors[j] = monitors[j], monitors[i] })
		v.RBD = &v1.RBDVolumeSource{
			CephMonitors: monitors[:1+r.IntN(2)], RBDImage: fmt.Sprintf("image-%d", id),
			RBDPool: pick(r, []string{"rbd", "rbd", "other", ""}), ReadOnly: ro,
		}
	}
	return v
}
