#ifndef KSCORE_SHIM_CACHE_CSI_TRANSLATION_H_
#define KSCORE_SHIM_CACHE_CSI_TRANSLATION_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/map.h"
#include "kscore/scorer/v1/scorer.pb.h"

// CSI migration as NodeVolumeLimits (upstream's CSILimits) sees it, from
// k8s.io/csi-translation-lib v0.37.2: which in-tree plugins it knows, the
// CSI driver each migrates to, and the volume handle it makes of an
// in-tree PersistentVolume or inline volume. Only the driver and handle
// are made (upstream's unique name of a volume is driver/handle); upstream
// counts them only on nodes with a CSINode (isCSIMigrationOn), which is
// the caller's to know.
namespace kscore::cache::csi_translation {

namespace pb = ::kscore::scorer::v1;

// IsMigratableIntreePluginByName: aws-ebs, gce-pd, azure-disk, cinder,
// portworx-volume, azure-file and vsphere-volume (objects::kPlugin*).
bool Migratable(absl::string_view plugin);

// The CSI driver (GetCSINameFromInTreeName) of the plugins whose migration
// isCSIMigrationOn turns on: aws-ebs, gce-pd, azure-disk, cinder and
// portworx-volume; "" for azure-file, vsphere-volume and anything else.
absl::string_view MigratedDriver(absl::string_view plugin);

struct Translated {
  std::string driver;
  std::string handle;
};

// TranslateInTreePVToCSI's spec.csi for a PersistentVolume of a plugin
// MigratedDriver knows, with its metadata.labels (a GCE PD's handle names
// its zone or region); an error where upstream's fails (an AWS volume ID
// it cannot read, a GCE PD in zones of several regions, an Azure disk of
// another kind than Managed).
absl::StatusOr<Translated> TranslatePv(
    const pb::InTreeVolume& source,
    const google::protobuf::Map<std::string, std::string>& labels);

// TranslateInTreeInlineVolumeToCSI's for an inline volume of a plugin
// MigratedDriver knows; an error with upstream's words where it fails.
absl::StatusOr<Translated> TranslateInline(const pb::InTreeVolume& volume);

// KubernetesVolumeIDToEBSVolumeID: "vol-..." from "aws://<zone>/vol-..."
// (any other ID as it is), with upstream's error words.
absl::StatusOr<std::string> EbsVolumeId(absl::string_view id);

}  // namespace kscore::cache::csi_translation

#endif  // KSCORE_SHIM_CACHE_CSI_TRANSLATION_H_
