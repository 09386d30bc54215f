#include "shim/cache/csi_translation.h"

#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "shim/cache/go_url.h"
#include "shim/objects/storage.h"

namespace kscore::cache::csi_translation {
namespace {

constexpr char kAwsEbsDriver[] = "ebs.csi.aws.com";
constexpr char kGcePdDriver[] = "pd.csi.storage.gke.io";
constexpr char kAzureDiskDriver[] = "disk.csi.azure.com";
constexpr char kCinderDriver[] = "cinder.csi.openstack.org";
constexpr char kPortworxDriver[] = "pxd.portworx.com";

// The zone labels a GCE PD's handle reads, beta first.
constexpr char kBetaZoneLabel[] = "failure-domain.beta.kubernetes.io/zone";
constexpr char kZoneLabel[] = "topology.kubernetes.io/zone";
constexpr char kUnspecified[] = "UNSPECIFIED";

std::string GceHandle(absl::string_view where, absl::string_view location,
                      absl::string_view pd_name) {
  return absl::StrCat("projects/", kUnspecified, "/", where, "/", location,
                      "/disks/", pd_name);
}

// gceGetRegionFromZones: every zone is <locale>-<region>-<zone>, all of
// one region.
absl::StatusOr<std::string> GceRegion(const std::vector<std::string>& zones) {
  std::set<std::string> regions;
  for (const std::string& zone : zones) {
    const std::vector<absl::string_view> parts = absl::StrSplit(zone, '-');
    if (parts.size() != 3) {
      return absl::InvalidArgumentError(absl::StrCat(
          "zone in unexpected format, expected: {locale}-{region}-{zone}, "
          "got: ",
          zone));
    }
    regions.insert(absl::StrCat(parts[0], "-", parts[1]));
  }
  if (regions.size() != 1) {
    return absl::InvalidArgumentError(
        "multiple or no regions gotten from zones");
  }
  return *regions.begin();
}

// The GCE PD translator's volume ID of a PersistentVolume.
absl::StatusOr<std::string> GcePvHandle(
    const std::string& pd_name,
    const google::protobuf::Map<std::string, std::string>& labels) {
  std::string zones_label;
  if (auto it = labels.find(std::string(kBetaZoneLabel)); it != labels.end())
    zones_label = it->second;
  if (zones_label.empty()) {
    if (auto it = labels.find(std::string(kZoneLabel)); it != labels.end())
      zones_label = it->second;
  }
  const std::vector<std::string> zones = absl::StrSplit(zones_label, "__");
  if (zones.size() == 1 && !zones[0].empty())
    return GceHandle("zones", zones[0], pd_name);
  if (zones.size() > 1) {
    absl::StatusOr<std::string> region = GceRegion(zones);
    if (!region.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "failed to get region from zones: ", region.status().message()));
    }
    return GceHandle("regions", *region, pd_name);
  }
  return GceHandle("zones", kUnspecified, pd_name);
}

// The Azure disk translator's check: a kind, when set, is Managed (in any
// case: strings.EqualFold, which for this word is ASCII's).
absl::Status AzureKind(const pb::InTreeVolume& v) {
  if (!v.has_azure_kind() || absl::EqualsIgnoreCase(v.azure_kind(), "Managed"))
    return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "kind(", v.azure_kind(), ") is not supported in csi migration"));
}

absl::StatusOr<std::string> EbsHandle(const std::string& id) {
  absl::StatusOr<std::string> handle = EbsVolumeId(id);
  if (!handle.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("failed to translate Kubernetes ID to EBS Volume ID ",
                     handle.status().message()));
  }
  return handle;
}

}  // namespace

bool Migratable(absl::string_view plugin) {
  return !MigratedDriver(plugin).empty() ||
         plugin == objects::kPluginAzureFile ||
         plugin == objects::kPluginVsphere;
}

absl::string_view MigratedDriver(absl::string_view plugin) {
  if (plugin == objects::kPluginAwsEbs) return kAwsEbsDriver;
  if (plugin == objects::kPluginGcePd) return kGcePdDriver;
  if (plugin == objects::kPluginAzureDisk) return kAzureDiskDriver;
  if (plugin == objects::kPluginCinder) return kCinderDriver;
  if (plugin == objects::kPluginPortworx) return kPortworxDriver;
  return "";
}

absl::StatusOr<std::string> EbsVolumeId(absl::string_view id) {
  if (!absl::StartsWith(id, "aws://")) return std::string(id);
  absl::StatusOr<std::string> path = go_url::ParsePath(id);
  if (!path.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Invalid disk name (", id, "): ", path.status().message()));
  }
  // strings.Trim(path, "/"), then ^vol-[^/]*$.
  absl::string_view aws_id = *path;
  while (absl::ConsumePrefix(&aws_id, "/")) {
  }
  while (absl::ConsumeSuffix(&aws_id, "/")) {
  }
  if (!absl::StartsWith(aws_id, "vol-") ||
      aws_id.find('/') != absl::string_view::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("Invalid format for AWS volume (", id, ")"));
  }
  return std::string(aws_id);
}

absl::StatusOr<Translated> TranslatePv(
    const pb::InTreeVolume& source,
    const google::protobuf::Map<std::string, std::string>& labels) {
  const absl::string_view driver = MigratedDriver(source.plugin());
  if (driver.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("no CSI migration for ", source.plugin()));
  }
  Translated t{std::string(driver), source.id()};
  if (source.plugin() == objects::kPluginAwsEbs) {
    absl::StatusOr<std::string> handle = EbsHandle(source.id());
    if (!handle.ok()) return handle.status();
    t.handle = *std::move(handle);
  } else if (source.plugin() == objects::kPluginGcePd) {
    absl::StatusOr<std::string> handle = GcePvHandle(source.id(), labels);
    if (!handle.ok()) return handle.status();
    t.handle = *std::move(handle);
  } else if (source.plugin() == objects::kPluginAzureDisk) {
    if (absl::Status s = AzureKind(source); !s.ok()) return s;
  }
  return t;
}

absl::StatusOr<Translated> TranslateInline(const pb::InTreeVolume& volume) {
  const absl::string_view driver = MigratedDriver(volume.plugin());
  if (driver.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("no CSI migration for ", volume.plugin()));
  }
  Translated t{std::string(driver), volume.id()};
  if (volume.plugin() == objects::kPluginAwsEbs) {
    absl::StatusOr<std::string> handle = EbsHandle(volume.id());
    if (!handle.ok()) return handle.status();
    t.handle = *std::move(handle);
  } else if (volume.plugin() == objects::kPluginGcePd) {
    t.handle = GceHandle("zones", kUnspecified, volume.id());
  } else if (volume.plugin() == objects::kPluginAzureDisk) {
    if (absl::Status s = AzureKind(volume); !s.ok()) return s;
  }
  return t;
}

}  // namespace kscore::cache::csi_translation
