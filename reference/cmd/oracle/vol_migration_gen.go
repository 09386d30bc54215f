package main

import (
	"fmt"
	"math/rand/v2"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// CSI migration: NodeVolumeLimits counts in-tree volumes of five plugins
// under the CSI driver csi-translation-lib translates them to, on nodes
// with a CSINode. In the cases that have it (volGen.migration), the
// generator makes in-tree PersistentVolumes (the incoming pod's and the
// placed pods'), a class with an in-tree provisioner, in-tree inline
// volumes on the incoming pod and on placed pods, CSI volumes of the
// translated drivers with the handles translation makes (so that the same
// disk meets under both), and CSINodes listing the translated drivers with
// small limits. Disks come from small pools (AWS and GCE PD ones are
// VolumeRestrictions' inlineDisk's), so they meet.

const (
	ebsDriver       = "ebs.csi.aws.com"
	pdDriver        = "pd.csi.storage.gke.io"
	azureDiskDriver = "disk.csi.azure.com"
	cinderDriver    = "cinder.csi.openstack.org"
	portworxDriver  = "pxd.portworx.com"
)

var (
	migratedDrivers = []string{ebsDriver, pdDriver, azureDiskDriver, cinderDriver, portworxDriver}
	// The five plugins upstream counts through migration, and two it
	// knows but never counts.
	inTreeProvisioners = []string{
		"kubernetes.io/aws-ebs", "kubernetes.io/gce-pd", "kubernetes.io/azure-disk", "kubernetes.io/cinder",
		"kubernetes.io/portworx-volume", "kubernetes.io/azure-file", "kubernetes.io/vsphere-volume",
	}
)

// migrationSetup decides whether the case has in-tree volumes and gives
// some of those cases a CSIDriver of a translated driver (which
// volumeLimits may make required on nodes).
func (g *volGen) migrationSetup() {
	r := g.r
	g.migration = chance(r, 0.6)
	if !g.migration || !chance(r, 0.35) {
		return
	}
	g.in.CSIDrivers = append(g.in.CSIDrivers, &storagev1.CSIDriver{
		TypeMeta:   metav1.TypeMeta{APIVersion: "storage.k8s.io/v1", Kind: "CSIDriver"},
		ObjectMeta: metav1.ObjectMeta{Name: pick(r, migratedDrivers), UID: g.uid("csidriver")},
		Spec:       storagev1.CSIDriverSpec{AttachRequired: ptr.To(true), PodInfoOnMount: ptr.To(false)},
	})
}

// awsVolumeID is one of two EBS disks, bare or as an aws:// URL, or
// (bad) an ID the translation refuses: not vol-..., a path past the ID, a
// URL url.Parse refuses.
func awsVolumeID(r *rand.Rand, bad bool) string {
	id := fmt.Sprintf("vol-%d", r.IntN(2))
	if bad {
		return pick(r, []string{
			"aws://zone-a/bad-0", "aws://zone-a/" + id + "/extra", "aws://" + id,
			"aws://zone-a:x/" + id, "aws://zone-a/vol-%zz",
		})
	}
	return pick(r, []string{id, id, "aws://zone-a/" + id, "aws:///" + id, "aws://zone-b/" + id + "/", "aws://zone-a/vol-%3" + id[4:]})
}

// azureDisk is one of two disks: managed, or (bad) a blob disk, whose
// kind the translation refuses. The kind is always set, as the API
// server's defaulting (Shared) would.
func azureDisk(r *rand.Rand, bad bool) *v1.AzureDiskVolumeSource {
	id := r.IntN(2)
	d := &v1.AzureDiskVolumeSource{
		DiskName:    fmt.Sprintf("d%d", id),
		DataDiskURI: fmt.Sprintf("/subscriptions/s/resourceGroups/g/providers/Microsoft.Compute/disks/d%d", id),
		Kind:        ptr.To(v1.AzureManagedDisk),
	}
	if bad {
		d.DataDiskURI = fmt.Sprintf("https://acct.blob.core.windows.net/vhds/d%d.vhd", id)
		d.Kind = ptr.To(pick(r, []v1.AzureDataDiskKind{v1.AzureSharedBlobDisk, v1.AzureDedicatedBlobDisk}))
	}
	return d
}

// inTreePVSource replaces pv's source with one of the five plugins
// upstream counts; sometimes one whose translation fails (not counted).
func (g *volGen) inTreePVSource(pv *v1.PersistentVolume, labels bool) {
	r := g.r
	pv.Spec.CSI, pv.Spec.HostPath = nil, nil
	bad := chance(r, 0.1)
	switch r.IntN(5) {
	case 0:
		pv.Spec.AWSElasticBlockStore = &v1.AWSElasticBlockStoreVolumeSource{VolumeID: awsVolumeID(r, bad)}
	case 1:
		pv.Spec.GCEPersistentDisk = &v1.GCEPersistentDiskVolumeSource{PDName: fmt.Sprintf("pd-%d", r.IntN(2))}
		if labels {
			gceZoneLabels(r, pv)
		}
	case 2:
		pv.Spec.AzureDisk = azureDisk(r, bad)
	case 3:
		pv.Spec.Cinder = &v1.CinderPersistentVolumeSource{VolumeID: fmt.Sprintf("cinder-%d", r.IntN(2))}
	default:
		pv.Spec.PortworxVolume = &v1.PortworxVolumeSource{VolumeID: fmt.Sprintf("px-%d", r.IntN(2))}
	}
}

// gceZoneLabels: the zone labels a GCE PD's handle reads (not VolumeZone:
// only placed pods' volumes get these). None (zone UNSPECIFIED), a zone
// (GA or beta, the beta one empty sometimes), zones of one region
// (regional), or zones the translation refuses.
func gceZoneLabels(r *rand.Rand, pv *v1.PersistentVolume) {
	if pv.Labels == nil {
		pv.Labels = map[string]string{}
	}
	switch r.IntN(6) {
	case 0:
	case 1:
		pv.Labels[labelZone] = "zone-a"
	case 2:
		pv.Labels[v1.LabelFailureDomainBetaZone] = "zone-b"
		if chance(r, 0.5) {
			pv.Labels[labelZone] = "zone-a"
		}
	case 3:
		pv.Labels[labelZone] = "us-east1-b__us-east1-c"
	case 4:
		pv.Labels[labelZone] = pick(r, []string{"us-east1-b__us-west1-a", "zone-a__zone-b"})
	default:
		pv.Labels[v1.LabelFailureDomainBetaZone] = ""
		pv.Labels[labelZone] = "zone-a"
	}
}

// migratedCSISource makes pv a CSI volume of a translated driver with a
// handle translation makes of one of the pools' disks.
func migratedCSISource(r *rand.Rand, pv *v1.PersistentVolume) {
	id := r.IntN(2)
	var driver, handle string
	switch r.IntN(5) {
	case 0:
		driver, handle = ebsDriver, fmt.Sprintf("vol-%d", id)
	case 1:
		driver = pdDriver
		where := pick(r, []string{"zones/UNSPECIFIED", "zones/UNSPECIFIED", "zones/zone-a", "regions/us-east1"})
		handle = fmt.Sprintf("projects/UNSPECIFIED/%s/disks/pd-%d", where, id)
	case 2:
		driver = azureDiskDriver
		handle = fmt.Sprintf("/subscriptions/s/resourceGroups/g/providers/Microsoft.Compute/disks/d%d", id)
	case 3:
		driver, handle = cinderDriver, fmt.Sprintf("cinder-%d", id)
	default:
		driver, handle = portworxDriver, fmt.Sprintf("px-%d", id)
	}
	pv.Spec.HostPath = nil
	pv.Spec.CSI = &v1.CSIPersistentVolumeSource{Driver: driver, VolumeHandle: handle}
}

// migratePlaced gives a placed pod's volume an in-tree source, or a CSI
// one of a translated driver, or leaves it.
func (g *volGen) migratePlaced(pv *v1.PersistentVolume) {
	if !g.migration {
		return
	}
	switch x := g.r.Float64(); {
	case x < 0.35:
		g.inTreePVSource(pv, true)
	case x < 0.55:
		migratedCSISource(g.r, pv)
	}
}

// inTreeInline is an in-tree inline volume of a plugin CSI migration
// knows: mostly the five upstream counts, sometimes azureFile or
// vsphereVolume (never counted, but the pod is not skipped); bad, one the
// translation refuses where the plugin has such.
func inTreeInline(r *rand.Rand, name string, bad bool) v1.Volume {
	v := v1.Volume{Name: name}
	id := r.IntN(2)
	switch r.IntN(12) {
	case 0, 1, 2:
		v.AWSElasticBlockStore = &v1.AWSElasticBlockStoreVolumeSource{VolumeID: awsVolumeID(r, bad), ReadOnly: chance(r, 0.3)}
	case 3, 4:
		v.GCEPersistentDisk = &v1.GCEPersistentDiskVolumeSource{PDName: fmt.Sprintf("pd-%d", id), ReadOnly: chance(r, 0.3)}
	case 5, 6:
		v.AzureDisk = azureDisk(r, bad)
	case 7, 8:
		v.Cinder = &v1.CinderVolumeSource{VolumeID: fmt.Sprintf("cinder-%d", id)}
	case 9:
		v.PortworxVolume = &v1.PortworxVolumeSource{VolumeID: fmt.Sprintf("px-%d", id)}
	case 10:
		v.AzureFile = &v1.AzureFileVolumeSource{SecretName: "azure-secret", ShareName: fmt.Sprintf("share-%d", id)}
	default:
		v.VsphereVolume = &v1.VsphereVirtualDiskVolumeSource{VolumePath: fmt.Sprintf("[datastore] disk-%d.vmdk", id)}
	}
	return v
}

// migrationInline gives the incoming pod (sometimes) and some placed pods
// in-tree inline volumes; a translation that fails is an error on every
// node with a CSINode (the incoming pod's) or where the pod's volumes are
// read (a placed pod's), so placed pods rarely get one.
func (g *volGen) migrationInline() {
	r := g.r
	if !g.migration {
		return
	}
	if chance(r, 0.4) {
		for i := range 1 + r.IntN(2) {
			g.in.Pod.Spec.Volumes = append(g.in.Pod.Spec.Volumes, inTreeInline(r, fmt.Sprintf("it-%d", i), chance(r, 0.08)))
		}
	}
	for _, p := range g.in.Pods {
		if p.Spec.NodeName != "" && chance(r, 0.25) {
			p.Spec.Volumes = append(p.Spec.Volumes, inTreeInline(r, fmt.Sprintf("it-%d", len(p.Spec.Volumes)), chance(r, 0.02)))
		}
	}
}

// migratedCSINodeDrivers: some of the translated drivers on a CSINode,
// mostly with a small limit.
func (g *volGen) migratedCSINodeDrivers(cn *storagev1.CSINode) {
	if !g.migration {
		return
	}
	for _, d := range migratedDrivers {
		if !chance(g.r, 0.35) {
			continue
		}
		driver := storagev1.CSINodeDriver{Name: d, NodeID: cn.Name}
		if chance(g.r, 0.85) {
			driver.Allocatable = &storagev1.VolumeNodeResources{Count: ptr.To(int32(g.r.IntN(4)))}
		}
		cn.Spec.Drivers = append(cn.Spec.Drivers, driver)
	}
}
