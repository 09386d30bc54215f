#include "shim/objects/manifest.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kscore::objects {
namespace {

TEST(PodFromManifestTest, GetsWhatTheApiServerFillsIn) {
  absl::StatusOr<PodInfo> p = PodFromManifest(
      R"({"kind": "Pod", "metadata": {"generateName": "web-"},
          "spec": {"containers": [{"name": "c",
            "resources": {"requests": {"cpu": "100m"}}}]}})");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->key, "default/web-what-if");
  EXPECT_EQ(p->uid, "what-if");
  EXPECT_EQ(p->scheduler_name, "default-scheduler");
  ASSERT_EQ(p->pod.containers_size(), 1);
  EXPECT_EQ(p->requests.milli_cpu(), 100);
}

TEST(PodFromManifestTest, KeepsWhatTheManifestSays) {
  absl::StatusOr<PodInfo> p = PodFromManifest(
      R"({"metadata": {"namespace": "ns", "name": "p", "uid": "u"},
          "spec": {"schedulerName": "other"}})");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->key, "ns/p");
  EXPECT_EQ(p->uid, "u");
  EXPECT_EQ(p->scheduler_name, "other");
}

}  // namespace
}  // namespace kscore::objects
