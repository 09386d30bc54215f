package main

import (
	"context"
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ktypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// The preemption profile of gen-preempt --volumes: the volume plugins on.
const preemptVolumeProfile = `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: kscore-default
  percentageOfNodesToScore: 100
  plugins:
    multiPoint:
      disabled:
      - name: DynamicResources
`

func preemptVolumeInput(nodes ...*v1.Node) *PreemptInput {
	in := emptyPreemptInput()
	in.Profile = preemptVolumeProfile
	in.Nodes = nodes
	emptyStorage(&in.Input)
	return in
}

// boundCSIClaim adds claim name (namespace default) bound to volume
// pv-<name> of csi.example.com, with access mode mode.
func boundCSIClaim(in *PreemptInput, name string, mode v1.PersistentVolumeAccessMode) {
	pv := volume("pv-"+name, "", "1Gi", nil)
	pv.Spec.AccessModes = []v1.PersistentVolumeAccessMode{mode}
	pv.Spec.CSI = &v1.CSIPersistentVolumeSource{Driver: csiDriver, VolumeHandle: "h-" + name}
	pv.Spec.ClaimRef = &v1.ObjectReference{Namespace: "default", Name: name, UID: ktypes.UID("uid-" + name)}
	pv.Status.Phase = v1.VolumeBound
	c := claim(name, "", "1Gi")
	c.Spec.AccessModes = []v1.PersistentVolumeAccessMode{mode}
	c.Spec.VolumeName = pv.Name
	c.Annotations = map[string]string{annBindCompleted: "yes"}
	c.Status.Phase = v1.ClaimBound
	in.PersistentVolumes = append(in.PersistentVolumes, pv)
	in.PersistentVolumeClaims = append(in.PersistentVolumeClaims, c)
}

func csiLimit(node string, count int32) *storagev1.CSINode {
	return &storagev1.CSINode{ObjectMeta: metav1.ObjectMeta{Name: node}, Spec: storagev1.CSINodeSpec{Drivers: []storagev1.CSINodeDriver{{
		Name: csiDriver, NodeID: node, Allocatable: &storagev1.VolumeNodeResources{Count: ptr.To(count)},
	}}}}
}

// n1 (4 cpu, room for the pod) allows 3 volumes of csi.example.com and
// runs a (priority 10, volume A), b (20, B) and h (1000, H); the pod
// (500) brings P: 4 volumes, NodeVolumeLimits rejects n1. Evicting a and
// b frees two; reprieving b (the more important) first keeps it, then a
// would make 4 again: the victim is a. With a VolumeAttachment of A on n1,
// evicting a frees nothing: b is the victim and a stays. With the limit 1,
// even evicting both leaves H and P (and with the attachment A): no
// candidate.
func TestPreemptVolumeLimits(t *testing.T) {
	in := preemptVolumeInput(zoneNode("n1", "zone-a"))
	for _, name := range []string{"ca", "cb", "ch", "cp"} {
		boundCSIClaim(in, name, v1.ReadWriteOnce)
	}
	in.Pods = []*v1.Pod{
		victim("a", "n1", 10, 1, "500m").PVC("ca").Obj(),
		victim("b", "n1", 20, 2, "500m").PVC("cb").Obj(),
		victim("h", "n1", 1000, 3, "500m").PVC("ch").Obj(),
	}
	in.Pod = preemptor(500, "1").PVC("cp").Obj()
	in.CSINodes = []*storagev1.CSINode{csiLimit("n1", 3)}
	check := func(what string, victims []string) {
		t.Helper()
		got := evaluatePreemptT(t, in)
		if f := got.Nodes[0].Filter; f.Plugin != "NodeVolumeLimits" || f.Code != "Unschedulable" {
			t.Errorf("%s: n1's Filter %+v, want NodeVolumeLimits' Unschedulable", what, f)
		}
		if !slices.Equal(got.Victims, victims) {
			t.Errorf("%s: victims %v (%s), want %v", what, got.Victims, got.PostFilter.Message, victims)
		}
	}
	check("limit 3", []string{"default/a"})
	in.VolumeAttachments = []*storagev1.VolumeAttachment{{
		ObjectMeta: metav1.ObjectMeta{Name: "va-a"},
		Spec: storagev1.VolumeAttachmentSpec{Attacher: csiDriver, NodeName: "n1",
			Source: storagev1.VolumeAttachmentSource{PersistentVolumeName: ptr.To("pv-ca")}},
	}}
	check("limit 3, A attached", []string{"default/b"})
	in.CSINodes = []*storagev1.CSINode{csiLimit("n1", 1)}
	check("limit 1", []string{})
}

// The pod's ReadWriteOncePod claim is in use by x on n1: every node is
// Unschedulable, and only evicting x helps, on n1. When x has a higher
// priority than the pod, nothing does.
func TestPreemptReadWriteOncePod(t *testing.T) {
	in := preemptVolumeInput(zoneNode("n1", "zone-a"), zoneNode("n2", "zone-a"))
	boundCSIClaim(in, "exclusive", v1.ReadWriteOncePod)
	in.Pods = []*v1.Pod{
		victim("x", "n1", 10, 1, "500m").PVC("exclusive").Obj(),
		victim("y", "n2", 10, 2, "500m").Obj(),
	}
	in.Pod = preemptor(500, "1").PVC("exclusive").Obj()
	got := evaluatePreemptT(t, in)
	for _, n := range got.Nodes {
		if n.Filter.Plugin != "VolumeRestrictions" || !strings.Contains(strings.Join(n.Filter.Reasons, ""), "ReadWriteOncePod") {
			t.Errorf("%s: %+v, want VolumeRestrictions' ReadWriteOncePod conflict", n.Name, n.Filter)
		}
	}
	if got.NominatedNode != "n1" || !slices.Equal(got.Victims, []string{"default/x"}) || len(got.Candidates) != 1 {
		t.Errorf("nominated %q, victims %v, candidates %s; want n1 and x only", got.NominatedNode, got.Victims, js(got.Candidates))
	}
	in.Pods[0].Spec.Priority = ptr.To[int32](1000)
	if got := evaluatePreemptT(t, in); got.PostFilter.Code != "Unschedulable" || len(got.Candidates) != 0 {
		t.Errorf("x of higher priority: %s, candidates %s; want no candidate", js(got.PostFilter), js(got.Candidates))
	}
}

// gen-preempt --volumes turns the volume plugins on in every case, gives
// about half the cases storage objects, and among 300 cases some
// nominations need victims for each reason it makes; without --volumes
// the cases have none of it.
func TestPreemptVolumesGenerated(t *testing.T) {
	stats := newPreemptStats()
	for i := range 300 {
		seed := caseSeed(5, i)
		if in := generatePreempt(seed, false); in.PersistentVolumes != nil || in.CSINodes != nil ||
			!strings.Contains(in.Profile, "- name: NodeVolumeLimits") {
			t.Fatalf("seed %d without --volumes has storage objects or NodeVolumeLimits on", seed)
		}
		c, err := makePreemptCase(context.Background(), seed, i, true)
		if err != nil {
			t.Fatal(err)
		}
		if c.Input.PersistentVolumes == nil || strings.Contains(c.Input.Profile, "Volume") {
			t.Fatalf("seed %d with --volumes: nil storage lists or a volume plugin off:\n%s", seed, c.Input.Profile)
		}
		stats.add(c)
	}
	if stats.withVolumes < 100 || stats.withVolumes > 200 {
		t.Errorf("%d of 300 cases have volumes, want about half", stats.withVolumes)
	}
	for _, k := range []string{"NodeVolumeLimits", "VolumeRestrictions (ReadWriteOncePod)", "VolumeRestrictions (disk)"} {
		if stats.potential.cases[k] == 0 || stats.candidates.cases[k] == 0 {
			t.Errorf("no potential node or no candidate rejected by %s", k)
		}
	}
	if stats.nominated["NodeVolumeLimits"] == 0 {
		t.Error("no nomination of a node that only its volume count blocked")
	}
	for _, k := range []string{"a user of the pod's ReadWriteOncePod claim", "a pod with claim volumes", "a holder of the pod's in-tree disk"} {
		if stats.victims[k] == 0 {
			t.Errorf("no nomination evicts %s", k)
		}
	}
}
