package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	ktypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	"k8s.io/kubernetes/pkg/apis/core"
	corevalidation "k8s.io/kubernetes/pkg/apis/core/validation"
	"k8s.io/kubernetes/pkg/apis/storage"
	_ "k8s.io/kubernetes/pkg/apis/storage/install"
	storagevalidation "k8s.io/kubernetes/pkg/apis/storage/validation"
	st "k8s.io/kubernetes/pkg/scheduler/testing"
	"k8s.io/utils/ptr"
)

// The stock profile with VolumeBinding and VolumeZone on, as gen --volumes
// makes it when it varies nothing.
const volumeProfile = `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: kscore-default
  percentageOfNodesToScore: 100
  plugins:
    multiPoint:
      disabled:
      - name: VolumeRestrictions
      - name: NodeVolumeLimits
      - name: DynamicResources
      - name: DefaultPreemption
`

func volumeInput(nodes ...*v1.Node) *Input {
	in := emptyInput()
	in.Profile = volumeProfile
	in.Nodes = nodes
	emptyStorage(in)
	return in
}

// emptyStorage gives a case every storage list, empty: a volumes case.
func emptyStorage(in *Input) {
	in.StorageClasses = []*storagev1.StorageClass{}
	in.CSIDrivers = []*storagev1.CSIDriver{}
	in.CSIStorageCapacities = []*storagev1.CSIStorageCapacity{}
	in.PersistentVolumes = []*v1.PersistentVolume{}
	in.PersistentVolumeClaims = []*v1.PersistentVolumeClaim{}
	in.CSINodes = []*storagev1.CSINode{}
	in.VolumeAttachments = []*storagev1.VolumeAttachment{}
}

func class(name, provisioner string, mode storagev1.VolumeBindingMode) *storagev1.StorageClass {
	return &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Provisioner: provisioner, VolumeBindingMode: &mode}
}

func volume(name, class, size string, pinned map[string]string) *v1.PersistentVolume {
	pv := &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1.PersistentVolumeSpec{
			Capacity:         v1.ResourceList{v1.ResourceStorage: resource.MustParse(size)},
			AccessModes:      []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			StorageClassName: class,
		},
		Status: v1.PersistentVolumeStatus{Phase: v1.VolumeAvailable},
	}
	for k, val := range pinned {
		pv.Spec.NodeAffinity = &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
			MatchExpressions: []v1.NodeSelectorRequirement{{Key: k, Operator: v1.NodeSelectorOpIn, Values: []string{val}}},
		}}}}
	}
	return pv
}

func claim(name, class, size string) *v1.PersistentVolumeClaim {
	return &v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: ktypes.UID("uid-" + name)},
		Spec: v1.PersistentVolumeClaimSpec{
			StorageClassName: ptr.To(class),
			AccessModes:      []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			Resources:        v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse(size)}},
		},
		Status: v1.PersistentVolumeClaimStatus{Phase: v1.ClaimPending},
	}
}

func claimPod(claims ...string) *v1.Pod {
	p := st.MakePod().Name("incoming").Namespace("default").UID("incoming").
		Container("registry.k8s.io/pause:3.10").Req(map[v1.ResourceName]string{"cpu": "1", "memory": "1Gi"})
	for _, c := range claims {
		p = p.PVC(c)
	}
	return p.Obj()
}

func evaluateT(t *testing.T, in *Input) *Want {
	t.Helper()
	// As the cases file holds it.
	raw, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	decoded := &Input{}
	if err := json.Unmarshal(raw, decoded); err != nil {
		t.Fatal(err)
	}
	want, err := evaluate(context.Background(), decoded)
	if err != nil {
		t.Fatalf("evaluate: %v", err)
	}
	return want
}

// A claim bound to a volume pinned to n1's hostname: n2 fails VolumeBinding
// with the node affinity conflict, n1 passes with nothing to bind.
func TestBoundVolumeNodeAffinity(t *testing.T) {
	in := volumeInput(zoneNode("n1", "zone-a"), zoneNode("n2", "zone-a"))
	in.StorageClasses = append(in.StorageClasses, class("fast", csiDriver, storagev1.VolumeBindingWaitForFirstConsumer))
	pv := volume("pv-1", "fast", "10Gi", map[string]string{labelHostname: "n1"})
	pv.Spec.ClaimRef = &v1.ObjectReference{Namespace: "default", Name: "data", UID: "uid-data"}
	pv.Status.Phase = v1.VolumeBound
	c := claim("data", "fast", "5Gi")
	c.Spec.VolumeName = "pv-1"
	c.Annotations = map[string]string{annBindCompleted: "yes"}
	c.Status.Phase = v1.ClaimBound
	in.PersistentVolumes = append(in.PersistentVolumes, pv)
	in.PersistentVolumeClaims = append(in.PersistentVolumeClaims, c)
	in.Pod = claimPod("data")

	w := evaluateT(t, in)
	if w.PreFilter.Code != "Success" {
		t.Fatalf("preFilter: %+v", w.PreFilter)
	}
	if f := w.Nodes[0].Filter; f.Code != "Success" || len(w.Nodes[0].VolumeDecisions) != 0 {
		t.Errorf("n1: %+v, decisions %+v; want Success and nothing to bind", f, w.Nodes[0].VolumeDecisions)
	}
	wantN2 := Status{Code: "UnschedulableAndUnresolvable", Plugin: "VolumeBinding",
		Reasons: []string{"node(s) didn't match PersistentVolume's node affinity"}}
	if f := w.Nodes[1].Filter; f.Code != wantN2.Code || f.Plugin != wantN2.Plugin || !equalStrings(f.Reasons, wantN2.Reasons) {
		t.Errorf("n2: %+v, want %+v", f, wantN2)
	}
	if _, ok := w.Weights["VolumeBinding"]; !ok {
		t.Errorf("weights %v lack VolumeBinding", w.Weights)
	}
	if s, ok := w.Nodes[0].Scores["VolumeBinding"]; !ok || s.Raw != 0 {
		t.Errorf("n1's VolumeBinding score %+v (present %v), want 0: nothing to provision or bind", s, ok)
	}
}

// A claim bound to an unpinned volume labelled with the beta zone key and
// two zones: VolumeZone passes nodes in either zone (n1 by the GA label,
// n4 by the beta one), and a node without zone labels (n3); it rejects n2,
// in another zone, and n5, whose beta label (read first) differs from its
// GA one. A claim naming a volume that does not exist fails its PreFilter.
func TestVolumeZone(t *testing.T) {
	betaZone := func(n *v1.Node, zone string) *v1.Node {
		n.Labels[v1.LabelFailureDomainBetaZone] = zone
		return n
	}
	in := volumeInput(zoneNode("n1", "zone-a"), zoneNode("n2", "zone-c"),
		st.MakeNode().Name("n3").Label(labelHostname, "n3").Capacity(capacity).Obj(),
		betaZone(zoneNode("n4", "zone-c"), "zone-b"), betaZone(zoneNode("n5", "zone-a"), "zone-c"))
	in.StorageClasses = append(in.StorageClasses, class("fast", csiDriver, storagev1.VolumeBindingWaitForFirstConsumer))
	pv := volume("pv-1", "fast", "10Gi", nil)
	pv.Labels = map[string]string{v1.LabelFailureDomainBetaZone: "zone-a__zone-b"}
	pv.Spec.ClaimRef = &v1.ObjectReference{Namespace: "default", Name: "data", UID: "uid-data"}
	pv.Status.Phase = v1.VolumeBound
	c := claim("data", "fast", "5Gi")
	c.Spec.VolumeName = "pv-1"
	c.Annotations = map[string]string{annBindCompleted: "yes"}
	c.Status.Phase = v1.ClaimBound
	in.PersistentVolumes = append(in.PersistentVolumes, pv)
	in.PersistentVolumeClaims = append(in.PersistentVolumeClaims, c)
	in.Pod = claimPod("data")

	w := evaluateT(t, in)
	if w.PreFilter.Code != "Success" {
		t.Fatalf("preFilter: %+v", w.PreFilter)
	}
	conflict := Status{Code: "UnschedulableAndUnresolvable", Plugin: "VolumeZone",
		Reasons: []string{"node(s) had no available volume zone"}}
	for i, want := range []Status{{Code: "Success"}, conflict, {Code: "Success"}, {Code: "Success"}, conflict} {
		if f := w.Nodes[i].Filter; f.Code != want.Code || f.Plugin != want.Plugin || !equalStrings(f.Reasons, want.Reasons) {
			t.Errorf("%s: %+v, want %+v", w.Nodes[i].Name, f, want)
		}
	}

	c.Spec.VolumeName = "pv-gone"
	w = evaluateT(t, in)
	want := Status{Code: "UnschedulableAndUnresolvable", Plugin: "VolumeZone",
		Reasons: []string{`persistentvolume "pv-gone" not found`}}
	if f := w.PreFilter; f.Code != want.Code || f.Plugin != want.Plugin || !equalStrings(f.Reasons, want.Reasons) {
		t.Errorf("claim of a missing volume: preFilter %+v, want %+v", f, want)
	}
}

func equalStrings(a, b []string) bool {
	return strings.Join(a, "\x00") == strings.Join(b, "\x00")
}

// An unbound claim of an Immediate class fails PreFilter.
func TestUnboundImmediateClaim(t *testing.T) {
	in := volumeInput(zoneNode("n1", "zone-a"))
	in.StorageClasses = append(in.StorageClasses, class("standard", csiDriver, storagev1.VolumeBindingImmediate))
	in.PersistentVolumeClaims = append(in.PersistentVolumeClaims, claim("data", "standard", "5Gi"))
	in.Pod = claimPod("data")
	w := evaluateT(t, in)
	want := Status{Code: "UnschedulableAndUnresolvable", Plugin: "VolumeBinding",
		Reasons: []string{"pod has unbound immediate PersistentVolumeClaims"}}
	if w.PreFilter.Code != want.Code || w.PreFilter.Plugin != want.Plugin || !equalStrings(w.PreFilter.Reasons, want.Reasons) {
		t.Errorf("preFilter %+v, want %+v", w.PreFilter, want)
	}
	if len(w.Nodes) != 0 {
		t.Errorf("nodes %+v, want none", w.Nodes)
	}
}

// A WaitForFirstConsumer claim of a class without provisioner, and one
// static volume that fits, pinned to n2: only n2 is feasible, where the
// claim binds to that volume. A smaller volume (too small) and a bigger
// one on n3 of another access mode do not count.
func TestDelayedClaimStaticVolume(t *testing.T) {
	in := volumeInput(zoneNode("n1", "zone-a"), zoneNode("n2", "zone-a"), zoneNode("n3", "zone-b"))
	in.StorageClasses = append(in.StorageClasses, class("local", noProvisioner, storagev1.VolumeBindingWaitForFirstConsumer))
	small := volume("pv-small", "local", "1Gi", map[string]string{labelHostname: "n1"})
	fit := volume("pv-fit", "local", "10Gi", map[string]string{labelHostname: "n2"})
	rwx := volume("pv-rwx", "local", "20Gi", map[string]string{labelHostname: "n3"})
	rwx.Spec.AccessModes = []v1.PersistentVolumeAccessMode{v1.ReadWriteMany}
	in.PersistentVolumes = append(in.PersistentVolumes, small, fit, rwx)
	in.PersistentVolumeClaims = append(in.PersistentVolumeClaims, claim("data", "local", "5Gi"))
	in.Pod = claimPod("data")

	w := evaluateT(t, in)
	noPV := Status{Code: "UnschedulableAndUnresolvable", Plugin: "VolumeBinding",
		Reasons: []string{"node(s) didn't find available persistent volumes to bind"}}
	for _, i := range []int{0, 2} {
		if f := w.Nodes[i].Filter; f.Code != noPV.Code || f.Plugin != noPV.Plugin || !equalStrings(f.Reasons, noPV.Reasons) {
			t.Errorf("%s: %+v, want %+v", w.Nodes[i].Name, f, noPV)
		}
	}
	n2 := w.Nodes[1]
	if n2.Filter.Code != "Success" {
		t.Fatalf("n2: %+v, want Success", n2.Filter)
	}
	if want := []VolumeDecision{{Claim: "data", Volume: "pv-fit"}}; len(n2.VolumeDecisions) != 1 || n2.VolumeDecisions[0] != want[0] {
		t.Errorf("n2's decisions %+v, want %+v", n2.VolumeDecisions, want)
	}
	// A static binding of 5Gi on 10Gi: the default shape (0 -> 10,
	// 100 -> 0) at 50% utilization, times 10.
	if s := n2.Scores["VolumeBinding"]; s.Raw != 50 {
		t.Errorf("n2's VolumeBinding score %+v, want raw 50", s)
	}
}

// Provisioning with tracked capacity: a 20Gi claim of a CSI class whose
// driver tracks capacity; zone-a has 100Gi, zone-b 10Gi, zone-c nothing
// published. Only zone-a's node is feasible, and it is provisioned there.
func TestDelayedClaimProvisioned(t *testing.T) {
	in := volumeInput(zoneNode("n1", "zone-a"), zoneNode("n2", "zone-b"), zoneNode("n3", "zone-c"))
	in.StorageClasses = append(in.StorageClasses, class("fast", csiDriver, storagev1.VolumeBindingWaitForFirstConsumer))
	in.CSIDrivers = append(in.CSIDrivers, &storagev1.CSIDriver{ObjectMeta: metav1.ObjectMeta{Name: csiDriver},
		Spec: storagev1.CSIDriverSpec{StorageCapacity: ptr.To(true)}})
	for i, zc := range [][2]string{{"zone-a", "100Gi"}, {"zone-b", "10Gi"}} {
		in.CSIStorageCapacities = append(in.CSIStorageCapacities, &storagev1.CSIStorageCapacity{
			ObjectMeta:       metav1.ObjectMeta{Name: "cap-" + string(rune('a'+i)), Namespace: capacityNamespace},
			StorageClassName: "fast",
			NodeTopology:     &metav1.LabelSelector{MatchLabels: map[string]string{labelZone: zc[0]}},
			Capacity:         ptr.To(resource.MustParse(zc[1])),
		})
	}
	in.PersistentVolumeClaims = append(in.PersistentVolumeClaims, claim("data", "fast", "20Gi"))
	in.Pod = claimPod("data")

	w := evaluateT(t, in)
	if f := w.Nodes[0].Filter; f.Code != "Success" {
		t.Fatalf("n1: %+v", f)
	}
	if d := w.Nodes[0].VolumeDecisions; len(d) != 1 || d[0] != (VolumeDecision{Claim: "data"}) {
		t.Errorf("n1's decisions %+v, want data provisioned", d)
	}
	// 20Gi of 100Gi: 20% utilization on the default shape, 8 of 10.
	if s := w.Nodes[0].Scores["VolumeBinding"]; s.Raw != 80 {
		t.Errorf("n1's VolumeBinding score %+v, want raw 80", s)
	}
	for _, i := range []int{1, 2} {
		f := w.Nodes[i].Filter
		if f.Plugin != "VolumeBinding" || !equalStrings(f.Reasons, []string{"node(s) did not have enough free storage"}) {
			t.Errorf("%s: %+v, want VolumeBinding's not enough free storage", w.Nodes[i].Name, f)
		}
	}
}

// gen --volumes makes every kind of object the README lists, and every
// case without --volumes stays free of them.
func TestVolumesGenerated(t *testing.T) {
	seen := map[string]int{}
	see := func(what string, ok bool) {
		if ok {
			seen[what]++
		}
	}
	for i := range 300 {
		seed := caseSeed(11, i)
		if in := generate(seed, false); in.StorageClasses != nil || in.PersistentVolumes != nil ||
			in.PersistentVolumeClaims != nil || in.CSIDrivers != nil || in.CSIStorageCapacities != nil {
			t.Fatalf("seed %d without --volumes has storage objects", seed)
		}
		in := generate(seed, true)
		if in.StorageClasses == nil || in.PersistentVolumes == nil || in.PersistentVolumeClaims == nil ||
			in.CSIDrivers == nil || in.CSIStorageCapacities == nil {
			t.Fatalf("seed %d with --volumes has a nil list", seed)
		}
		see("profile: VolumeBinding on", !strings.Contains(in.Profile, "- name: VolumeBinding\n      -"))
		see("profile: VolumeZone on", !strings.Contains(in.Profile, "- name: VolumeZone"))
		for _, n := range in.Nodes {
			beta, ok := n.Labels[v1.LabelFailureDomainBetaZone]
			see("node beta zone", ok)
			see("node beta zone unlike its zone", ok && beta != n.Labels[labelZone])
		}
		for _, sc := range in.StorageClasses {
			mode := "unset"
			if sc.VolumeBindingMode != nil {
				mode = string(*sc.VolumeBindingMode)
			}
			see("class mode "+mode, true)
			see("class provisioner "+sc.Provisioner, true)
			see("class allowedTopologies", len(sc.AllowedTopologies) > 0)
		}
		for _, d := range in.CSIDrivers {
			see("driver storageCapacity true", ptr.Deref(d.Spec.StorageCapacity, false))
			see("driver storageCapacity false/unset", !ptr.Deref(d.Spec.StorageCapacity, false))
		}
		for _, c := range in.CSIStorageCapacities {
			see("capacity nodeTopology", c.NodeTopology != nil)
			see("capacity no nodeTopology", c.NodeTopology == nil)
			see("capacity maximumVolumeSize", c.MaximumVolumeSize != nil)
		}
		for _, pv := range in.PersistentVolumes {
			see("pv phase "+string(pv.Status.Phase), true)
			see("pv claimRef", pv.Spec.ClaimRef != nil)
			see("pv no claimRef", pv.Spec.ClaimRef == nil)
			see("pv deleting", pv.DeletionTimestamp != nil)
			see("pv volumeMode Block", ptr.Deref(pv.Spec.VolumeMode, "") == v1.PersistentVolumeBlock)
			see("pv labels", len(pv.Labels) > 0)
			for _, k := range topologyLabels {
				see("pv label "+k, pv.Labels[k] != "")
				see("pv multi-zone "+k, strings.Contains(pv.Labels[k], "__"))
			}
			if pv.Spec.NodeAffinity != nil {
				see("pv pinned by "+pv.Spec.NodeAffinity.Required.NodeSelectorTerms[0].MatchExpressions[0].Key, true)
			}
			see("pv awsElasticBlockStore", pv.Spec.AWSElasticBlockStore != nil)
			see("pv gcePersistentDisk", pv.Spec.GCEPersistentDisk != nil)
			see("pv azureDisk", pv.Spec.AzureDisk != nil)
			see("pv cinder", pv.Spec.Cinder != nil)
			see("pv portworxVolume", pv.Spec.PortworxVolume != nil)
			see("pv csi "+ebsDriver, pv.Spec.CSI != nil && pv.Spec.CSI.Driver == ebsDriver)
		}
		for _, cn := range in.CSINodes {
			for _, d := range cn.Spec.Drivers {
				see("csinode driver "+d.Name, true)
			}
		}
		for _, p := range append(slices.Clone(in.Pods), in.Pod) {
			for _, v := range p.Spec.Volumes {
				see("inline azureDisk", v.AzureDisk != nil)
				see("inline cinder", v.Cinder != nil)
				see("inline portworxVolume", v.PortworxVolume != nil)
				see("inline azureFile", v.AzureFile != nil)
				see("inline vsphereVolume", v.VsphereVolume != nil)
			}
		}
		for _, c := range in.PersistentVolumeClaims {
			see("pvc phase "+string(c.Status.Phase), true)
			see("pvc bound", c.Spec.VolumeName != "" && metav1.HasAnnotation(c.ObjectMeta, annBindCompleted))
			see("pvc selected-node", metav1.HasAnnotation(c.ObjectMeta, annSelectedNode))
			see("pvc selector", c.Spec.Selector != nil)
			see("pvc deleting", c.DeletionTimestamp != nil)
			see("pvc owned by the pod", len(c.OwnerReferences) > 0 && c.OwnerReferences[0].UID == in.Pod.UID)
		}
		names := map[string]bool{}
		for _, c := range in.PersistentVolumeClaims {
			names[c.Name] = true
		}
		for _, v := range in.Pod.Spec.Volumes {
			see("pod pvc volume", v.PersistentVolumeClaim != nil)
			see("pod ephemeral volume", v.Ephemeral != nil)
			if v.PersistentVolumeClaim != nil {
				see("pod claim missing", !names[v.PersistentVolumeClaim.ClaimName])
			}
		}
	}
	for _, what := range []string{
		"profile: VolumeBinding on", "profile: VolumeZone on", "node beta zone", "node beta zone unlike its zone",
		"pv label " + labelZone, "pv label " + labelRegion, "pv label " + v1.LabelFailureDomainBetaZone,
		"pv label " + v1.LabelFailureDomainBetaRegion, "pv multi-zone " + labelZone,
		"pv multi-zone " + v1.LabelFailureDomainBetaZone, "pv multi-zone " + labelRegion,
		"class mode Immediate", "class mode WaitForFirstConsumer",
		"class provisioner " + noProvisioner, "class provisioner " + csiDriver, "class allowedTopologies",
		"driver storageCapacity true", "driver storageCapacity false/unset",
		"capacity nodeTopology", "capacity no nodeTopology", "capacity maximumVolumeSize",
		"pv phase Available", "pv phase Bound", "pv phase Released", "pv claimRef", "pv no claimRef", "pv deleting",
		"pv volumeMode Block", "pv labels", "pv pinned by " + labelHostname, "pv pinned by " + labelZone,
		"pvc phase Pending", "pvc phase Bound", "pvc phase Lost", "pvc bound", "pvc selected-node", "pvc selector",
		"pvc deleting", "pvc owned by the pod", "pod pvc volume", "pod ephemeral volume", "pod claim missing",
		"pv awsElasticBlockStore", "pv gcePersistentDisk", "pv azureDisk", "pv cinder", "pv portworxVolume",
		"pv csi " + ebsDriver, "csinode driver " + ebsDriver, "csinode driver " + pdDriver,
		"class provisioner kubernetes.io/aws-ebs", "class provisioner kubernetes.io/azure-file",
		"inline azureDisk", "inline cinder", "inline portworxVolume", "inline azureFile", "inline vsphereVolume",
	} {
		if seen[what] == 0 {
			t.Errorf("300 cases have no %s", what)
		}
	}
}

func validate[T runtime.Object, I runtime.Object](t *testing.T, obj T, internal I, check func(I) []string) {
	t.Helper()
	obj = obj.DeepCopyObject().(T)
	legacyscheme.Scheme.Default(obj)
	if err := legacyscheme.Scheme.Convert(obj, internal, nil); err != nil {
		t.Fatal(err)
	}
	for _, e := range check(internal) {
		t.Error(e)
	}
}

// The storage objects are ones the API server accepts, after its
// defaulting (which gives the class of unset volumeBindingMode Immediate:
// the oracle keeps it unset, a class stored before the field existed).
// TestGeneratedObjectsAreValid checks the pods, with their volumes;
// TestGeneratedPreemptObjectsAreValid the preemption cases' objects.
func TestGeneratedVolumeObjectsAreValid(t *testing.T) {
	for i := range 150 {
		validateStorage(t, generate(caseSeed(3, i), true))
	}
}

// validateStorage checks a case's storage objects as the API server would.
func validateStorage(t *testing.T, in *Input) {
	t.Helper()
	errs := func(what string, list field.ErrorList) []string {
		if len(list) > 0 {
			return []string{what + ": " + list.ToAggregate().Error()}
		}
		return nil
	}
	for _, o := range in.StorageClasses {
		validate(t, o, &storage.StorageClass{}, func(x *storage.StorageClass) []string {
			return errs("class "+x.Name, storagevalidation.ValidateStorageClass(x))
		})
	}
	for _, o := range in.CSIDrivers {
		validate(t, o, &storage.CSIDriver{}, func(x *storage.CSIDriver) []string {
			return errs("driver "+x.Name, storagevalidation.ValidateCSIDriver(x))
		})
	}
	for _, o := range in.CSIStorageCapacities {
		validate(t, o, &storage.CSIStorageCapacity{}, func(x *storage.CSIStorageCapacity) []string {
			return errs("capacity "+x.Name, storagevalidation.ValidateCSIStorageCapacity(x, storagevalidation.CSIStorageCapacityValidateOptions{}))
		})
	}
	for _, o := range in.PersistentVolumes {
		validate(t, o, &core.PersistentVolume{}, func(x *core.PersistentVolume) []string {
			return errs("pv "+x.Name, corevalidation.ValidatePersistentVolume(x, corevalidation.ValidationOptionsForPersistentVolume(x, nil)))
		})
	}
	for _, o := range in.PersistentVolumeClaims {
		validate(t, o, &core.PersistentVolumeClaim{}, func(x *core.PersistentVolumeClaim) []string {
			return errs("pvc "+x.Name, corevalidation.ValidatePersistentVolumeClaim(x, corevalidation.ValidationOptionsForPersistentVolumeClaim(x, nil)))
		})
	}
	for _, o := range in.CSINodes {
		validate(t, o, &storage.CSINode{}, func(x *storage.CSINode) []string {
			return errs("csinode "+x.Name, storagevalidation.ValidateCSINode(x))
		})
	}
	for _, o := range in.VolumeAttachments {
		validate(t, o, &storage.VolumeAttachment{}, func(x *storage.VolumeAttachment) []string {
			return errs("attachment "+x.Name, storagevalidation.ValidateVolumeAttachment(x))
		})
	}
}

// Volume cases are as deterministic as the others, and compare checks
// VolumeBinding's decisions.
func TestVolumeCasesCompare(t *testing.T) {
	genVolumes := func() []byte {
		var b bytes.Buffer
		h := newHistogram()
		if err := gen(context.Background(), &b, 9, 40, h); err != nil {
			t.Fatal(err)
		}
		if h.total != 40 {
			t.Errorf("histogram of %d cases, want 40", h.total)
		}
		return b.Bytes()
	}
	first := genVolumes()
	if !bytes.Equal(first, genVolumes()) {
		t.Fatal("two runs of seed 9 with volumes differ")
	}
	dir := t.TempDir()
	cases := filepath.Join(dir, "cases.jsonl")
	if err := os.WriteFile(cases, first, 0o644); err != nil {
		t.Fatal(err)
	}
	var answers bytes.Buffer
	changed := false
	for _, line := range bytes.Split(bytes.TrimSpace(first), []byte("\n")) {
		var c Case
		if err := json.Unmarshal(line, &c); err != nil {
			t.Fatal(err)
		}
		for i := range c.Want.Nodes {
			if d := c.Want.Nodes[i].VolumeDecisions; len(d) > 0 && !changed {
				d[0].Volume += "-other"
				changed = true
			}
		}
		out, _ := json.Marshal(map[string]any{"index": c.Index, "want": c.Want})
		answers.Write(append(out, '\n'))
	}
	if !changed {
		t.Fatal("no node of 40 cases has a volume decision")
	}
	got := filepath.Join(dir, "got.jsonl")
	if err := os.WriteFile(got, answers.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	err := compareCmd([]string{"--cases", cases, "--got", got}, &out)
	if !errors.Is(err, errMismatch) || !strings.Contains(out.String(), ".volumeDecisions: want [") ||
		!strings.HasSuffix(out.String(), "oracle: 40 cases, 39 matched\n") {
		t.Errorf("a changed decision: %v\n%s", err, out.String())
	}
}
