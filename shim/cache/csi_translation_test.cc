// CSI migration's translations, as csi-translation-lib v0.37.2 makes them.
#include "shim/cache/csi_translation.h"

#include <string>

#include "gtest/gtest.h"
#include "shim/objects/storage.h"

namespace kscore::cache::csi_translation {
namespace {

using Labels = google::protobuf::Map<std::string, std::string>;

pb::InTreeVolume Source(const std::string& plugin, const std::string& id) {
  pb::InTreeVolume v;
  v.set_name("vol");
  v.set_plugin(plugin);
  v.set_id(id);
  return v;
}

// The handle TranslatePv makes, or "error".
std::string PvHandle(const pb::InTreeVolume& v, const Labels& labels = {}) {
  absl::StatusOr<Translated> t = TranslatePv(v, labels);
  return t.ok() ? t->handle : "error";
}

TEST(CsiTranslationTest, PluginsAndTheirDrivers) {
  EXPECT_EQ(MigratedDriver(objects::kPluginAwsEbs), "ebs.csi.aws.com");
  EXPECT_EQ(MigratedDriver(objects::kPluginGcePd), "pd.csi.storage.gke.io");
  EXPECT_EQ(MigratedDriver(objects::kPluginAzureDisk), "disk.csi.azure.com");
  EXPECT_EQ(MigratedDriver(objects::kPluginCinder), "cinder.csi.openstack.org");
  EXPECT_EQ(MigratedDriver(objects::kPluginPortworx), "pxd.portworx.com");
  // Known to the library, but isCSIMigrationOn never turns them on.
  EXPECT_EQ(MigratedDriver(objects::kPluginAzureFile), "");
  EXPECT_EQ(MigratedDriver(objects::kPluginVsphere), "");
  EXPECT_TRUE(Migratable(objects::kPluginAzureFile));
  EXPECT_TRUE(Migratable(objects::kPluginVsphere));
  EXPECT_TRUE(Migratable(objects::kPluginCinder));
  EXPECT_FALSE(Migratable("kubernetes.io/rbd"));
  EXPECT_FALSE(Migratable("ebs.csi.aws.com"));
}

// The EBS volume ID, or the error's words.
std::string Ebs(const std::string& id) {
  absl::StatusOr<std::string> v = EbsVolumeId(id);
  return v.ok() ? *v : "error: " + std::string(v.status().message());
}

TEST(CsiTranslationTest, EbsVolumeIdsLoseTheirUrl) {
  EXPECT_EQ(Ebs("vol-123"), "vol-123");
  EXPECT_EQ(Ebs("anything/at all"), "anything/at all");  // as is
  EXPECT_EQ(Ebs(""), "");
  EXPECT_EQ(Ebs("aws://us-east-1a/vol-123"), "vol-123");
  EXPECT_EQ(Ebs("aws:///vol-123"), "vol-123");
  EXPECT_EQ(Ebs("aws://us-east-1a//vol-123//"), "vol-123");
  EXPECT_EQ(Ebs("aws://zone/vol-%41b"), "vol-Ab");
  EXPECT_EQ(Ebs("aws://zone/vol-1?x=/y#frag"), "vol-1");
  EXPECT_EQ(Ebs("aws://user@zone:443/vol-1"), "vol-1");
  EXPECT_EQ(Ebs("aws://zone/vol-"), "vol-");
}

TEST(CsiTranslationTest, EbsVolumeIdErrorsAreUpstreams) {
  const auto error = [](const std::string& id) {
    absl::StatusOr<std::string> v = EbsVolumeId(id);
    EXPECT_FALSE(v.ok()) << id;
    return std::string(v.status().message());
  };
  EXPECT_EQ(error("aws://zone/bad-1"),
            "Invalid format for AWS volume (aws://zone/bad-1)");
  EXPECT_EQ(error("aws://zone/vol-1/extra"),
            "Invalid format for AWS volume (aws://zone/vol-1/extra)");
  EXPECT_EQ(error("aws://vol-1"),
            "Invalid format for AWS volume (aws://vol-1)");
  EXPECT_EQ(error("aws://zone:x/vol-1"),
            "Invalid disk name (aws://zone:x/vol-1): parse "
            "\"aws://zone:x/vol-1\": invalid port \":x\" after host");
  EXPECT_EQ(error("aws://zone/vol-%zz"),
            "Invalid disk name (aws://zone/vol-%zz): parse "
            "\"aws://zone/vol-%zz\": invalid URL escape \"%zz\"");
}

TEST(CsiTranslationTest, GcePdHandleReadsTheZoneLabels) {
  const pb::InTreeVolume pd = Source(objects::kPluginGcePd, "disk-1");
  EXPECT_EQ(PvHandle(pd),
            "projects/UNSPECIFIED/zones/UNSPECIFIED/disks/disk-1");
  Labels labels;
  labels["topology.kubernetes.io/zone"] = "us-east1-b";
  EXPECT_EQ(PvHandle(pd, labels),
            "projects/UNSPECIFIED/zones/us-east1-b/disks/disk-1");
  // The beta label wins, unless empty.
  labels["failure-domain.beta.kubernetes.io/zone"] = "zone-a";
  EXPECT_EQ(PvHandle(pd, labels),
            "projects/UNSPECIFIED/zones/zone-a/disks/disk-1");
  labels["failure-domain.beta.kubernetes.io/zone"] = "";
  EXPECT_EQ(PvHandle(pd, labels),
            "projects/UNSPECIFIED/zones/us-east1-b/disks/disk-1");
  // Several zones make a regional disk, of their one region.
  labels["topology.kubernetes.io/zone"] = "us-east1-b__us-east1-c";
  EXPECT_EQ(PvHandle(pd, labels),
            "projects/UNSPECIFIED/regions/us-east1/disks/disk-1");
  labels["topology.kubernetes.io/zone"] = "us-east1-b__us-west1-a";
  EXPECT_EQ(PvHandle(pd, labels), "error");
  labels["topology.kubernetes.io/zone"] = "zone-a__zone-b";
  EXPECT_EQ(PvHandle(pd, labels), "error");
  labels["topology.kubernetes.io/zone"] = "us-east1-b__";
  EXPECT_EQ(PvHandle(pd, labels), "error");
  // Inline, the labels are nobody's.
  absl::StatusOr<Translated> t = TranslateInline(pd);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->driver, "pd.csi.storage.gke.io");
  EXPECT_EQ(t->handle, "projects/UNSPECIFIED/zones/UNSPECIFIED/disks/disk-1");
}

TEST(CsiTranslationTest, AzureDiskMustBeManaged) {
  pb::InTreeVolume disk = Source(objects::kPluginAzureDisk, "/subs/d");
  EXPECT_EQ(PvHandle(disk), "/subs/d");
  disk.set_azure_kind("managed");
  EXPECT_EQ(PvHandle(disk), "/subs/d");
  disk.set_azure_kind("Shared");
  EXPECT_EQ(PvHandle(disk), "error");
  absl::StatusOr<Translated> t = TranslateInline(disk);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().message(),
            "kind(Shared) is not supported in csi migration");
}

TEST(CsiTranslationTest, VolumeIdsAreTheHandles) {
  for (const char* plugin :
       {objects::kPluginCinder, objects::kPluginPortworx}) {
    EXPECT_EQ(PvHandle(Source(plugin, "v-1")), "v-1");
    absl::StatusOr<Translated> t = TranslateInline(Source(plugin, ""));
    ASSERT_TRUE(t.ok());
    EXPECT_EQ(t->handle, "");
  }
  absl::StatusOr<Translated> aws =
      TranslateInline(Source(objects::kPluginAwsEbs, "aws://z/vol-9"));
  ASSERT_TRUE(aws.ok());
  EXPECT_EQ(aws->driver, "ebs.csi.aws.com");
  EXPECT_EQ(aws->handle, "vol-9");
  absl::StatusOr<Translated> bad =
      TranslateInline(Source(objects::kPluginAwsEbs, "aws://z/x"));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "failed to translate Kubernetes ID to EBS Volume ID Invalid "
            "format for AWS volume (aws://z/x)");
  EXPECT_FALSE(TranslatePv(Source(objects::kPluginAzureFile, ""), {}).ok());
}

}  // namespace
}  // namespace kscore::cache::csi_translation
