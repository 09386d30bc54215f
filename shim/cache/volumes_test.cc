#include "shim/cache/volumes.h"

#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "shim/objects/storage.h"

namespace kscore::cache {
namespace {

using nlohmann::json;

std::shared_ptr<const objects::ClaimInfo> Claim(const json& j) {
  absl::StatusOr<objects::ClaimInfo> c = objects::ClaimFromJson(j);
  EXPECT_TRUE(c.ok()) << c.status();
  return std::make_shared<objects::ClaimInfo>(*c);
}

std::shared_ptr<const objects::VolumeInfo> Volume(const json& j) {
  absl::StatusOr<objects::VolumeInfo> v = objects::VolumeFromJson(j);
  EXPECT_TRUE(v.ok()) << v.status();
  return std::make_shared<objects::VolumeInfo>(*v);
}

json ClaimJson(const std::string& name, const std::string& rv,
               const std::string& cls = "local") {
  return {{"metadata",
           {{"namespace", "ns"},
            {"name", name},
            {"uid", "u-" + name},
            {"resourceVersion", rv}}},
          {"spec",
           {{"storageClassName", cls},
            {"accessModes", {"ReadWriteOnce"}},
            {"resources", {{"requests", {{"storage", "1Gi"}}}}}}},
          {"status", {{"phase", "Pending"}}}};
}

json VolumeJson(const std::string& name, const std::string& rv,
                const std::string& cls = "local") {
  return {{"metadata", {{"name", name}, {"resourceVersion", rv}}},
          {"spec",
           {{"storageClassName", cls},
            {"capacity", {{"storage", "2Gi"}}},
            {"accessModes", {"ReadWriteOnce"}},
            {"nodeAffinity",
             {{"required",
               {{"nodeSelectorTerms",
                 {{{"matchExpressions",
                    {{{"key", "kubernetes.io/hostname"},
                      {"operator", "In"},
                      {"values", {"n1"}}}}}}}}}}}}}},
          {"status", {{"phase", "Available"}}}};
}

pb::Pod PodWithClaims(std::initializer_list<std::string> claims) {
  pb::Pod pod;
  pod.set_namespace_("ns");
  pod.set_name("p");
  pod.set_uid("pod-uid");
  for (const std::string& c : claims) {
    pb::VolumeClaim* vc = pod.add_volume_claims();
    vc->set_volume("v-" + c);
    vc->set_claim_name(c);
  }
  return pod;
}

class VolumesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    objects::StorageClassInfo sc;
    sc.sc.set_name("local");
    sc.sc.set_provisioner("kubernetes.io/no-provisioner");
    sc.sc.set_volume_binding_mode("WaitForFirstConsumer");
    v_.UpsertClass(std::make_shared<objects::StorageClassInfo>(sc));
  }
  Volumes v_;
};

TEST(StorageDecodeTest, ClaimAndVolumeFields) {
  json c = ClaimJson("c", "5");
  c["metadata"]["annotations"] = {{"volume.kubernetes.io/selected-node", "n1"},
                                  {"pv.kubernetes.io/bind-completed", "yes"}};
  c["metadata"]["ownerReferences"] = {{{"uid", "o"}, {"controller", true}}};
  std::shared_ptr<const objects::ClaimInfo> claim = Claim(c);
  EXPECT_EQ(claim->state.storage_request(), int64_t{1} << 30);
  EXPECT_EQ(claim->state.selected_node(), "n1");
  EXPECT_TRUE(claim->state.bind_completed());
  EXPECT_EQ(claim->controller_uid, "o");
  EXPECT_EQ(claim->state.storage_class_name(), "local");
  std::shared_ptr<const objects::VolumeInfo> v = Volume(VolumeJson("pv", "1"));
  EXPECT_EQ(v->pv.capacity(), int64_t{2} << 30);
  EXPECT_TRUE(v->pv.has_node_affinity());
  ASSERT_EQ(v->pv.node_affinity_size(), 1);
  EXPECT_EQ(v->pv.node_affinity(0).match_expressions(0).values(0), "n1");
  EXPECT_EQ(v->pv.phase(), "Available");
}

TEST(StorageDecodeTest, InTreeSourcesCsiMigrationCounts) {
  json v = VolumeJson("pv", "1");
  EXPECT_FALSE(Volume(v)->in_tree.has_value());
  EXPECT_FALSE(Volume(v)->has_csi);
  v["spec"]["azureDisk"] = {
      {"diskName", "d"}, {"diskURI", "/s/d"}, {"kind", "Shared"}};
  std::shared_ptr<const objects::VolumeInfo> azure = Volume(v);
  ASSERT_TRUE(azure->in_tree.has_value());
  EXPECT_EQ(azure->in_tree->plugin(), objects::kPluginAzureDisk);
  EXPECT_EQ(azure->in_tree->id(), "/s/d");
  EXPECT_EQ(azure->in_tree->azure_kind(), "Shared");
  v["spec"].erase("azureDisk");
  v["spec"]["gcePersistentDisk"] = {{"pdName", "pd"}};
  std::shared_ptr<const objects::VolumeInfo> gce = Volume(v);
  EXPECT_EQ(gce->in_tree->plugin(), objects::kPluginGcePd);
  EXPECT_EQ(gce->in_tree->id(), "pd");
  EXPECT_FALSE(gce->in_tree->has_azure_kind());
  v["spec"].erase("gcePersistentDisk");
  for (const char* field :
       {"awsElasticBlockStore", "cinder", "portworxVolume"}) {
    v["spec"][field] = {{"volumeID", "id"}};
    std::shared_ptr<const objects::VolumeInfo> x = Volume(v);
    ASSERT_TRUE(x->in_tree.has_value()) << field;
    EXPECT_EQ(x->in_tree->id(), "id");
    v["spec"].erase(field);
  }
  // A CSI source, even an empty one, is what upstream reads first.
  v["spec"]["csi"] = json::object();
  EXPECT_TRUE(Volume(v)->has_csi);
  // Only in-tree sources of plugins whose migration upstream turns on.
  v["spec"].erase("csi");
  v["spec"]["azureFile"] = {{"shareName", "s"}};
  EXPECT_FALSE(Volume(v)->in_tree.has_value());
  v["spec"]["cinder"] = {{"volumeID", 3}};
  EXPECT_FALSE(objects::VolumeFromJson(v).ok());
}

TEST(StorageDecodeTest, BadQuantityNamesTheField) {
  json c = ClaimJson("c", "5");
  c["spec"]["resources"]["requests"]["storage"] = "lots";
  absl::StatusOr<objects::ClaimInfo> claim = objects::ClaimFromJson(c);
  ASSERT_FALSE(claim.ok());
  EXPECT_NE(claim.status().message().find("spec.resources.requests.storage"),
            std::string::npos)
      << claim.status();
  c["spec"]["resources"]["requests"]["storage"] = 3;
  EXPECT_FALSE(objects::ClaimFromJson(c).ok());
}

TEST(StorageDecodeTest, BetaAnnotationNamesTheClass) {
  json v = VolumeJson("pv", "1", "spec-class");
  v["metadata"]["annotations"] = {
      {"volume.beta.kubernetes.io/storage-class", "beta"}};
  EXPECT_EQ(Volume(v)->pv.storage_class_name(), "beta");
}

TEST_F(VolumesTest, SendsClaimsAndTheirCandidateVolumes) {
  v_.UpsertClaim(Claim(ClaimJson("a", "1")));
  v_.UpsertVolume(Volume(VolumeJson("pv1", "1")));
  json taken = VolumeJson("pv2", "1");
  taken["spec"]["claimRef"] = {{"namespace", "ns"}, {"name", "other"}};
  v_.UpsertVolume(Volume(taken));
  json deleting = VolumeJson("pv3", "1");
  deleting["metadata"]["deletionTimestamp"] = "2026-12-06T00:00:00Z";
  v_.UpsertVolume(Volume(deleting));
  v_.UpsertVolume(Volume(VolumeJson("pv4", "1", "elsewhere")));
  pb::PodVolumes got = v_.For(PodWithClaims({"a", "missing"}));
  ASSERT_EQ(got.claims_size(), 2);
  EXPECT_TRUE(got.claims(0).found());
  EXPECT_FALSE(got.claims(1).found());
  EXPECT_EQ(got.claims(1).name(), "missing");
  ASSERT_EQ(got.volumes_size(), 1);  // not taken, deleting or elsewhere
  EXPECT_EQ(got.volumes(0).name(), "pv1");
  ASSERT_EQ(got.classes_size(), 1);
  EXPECT_FALSE(got.classes(0).capacity_tracked());
}

TEST_F(VolumesTest, EphemeralClaimIsThePodsWhenItControlsIt) {
  json c = ClaimJson("p-scratch", "1");
  c["metadata"]["ownerReferences"] = {
      {{"uid", "pod-uid"}, {"controller", true}}};
  v_.UpsertClaim(Claim(c));
  pb::Pod pod = PodWithClaims({});
  pb::VolumeClaim* vc = pod.add_volume_claims();
  vc->set_volume("scratch");
  vc->set_ephemeral(true);
  pb::PodVolumes got = v_.For(pod);
  ASSERT_EQ(got.claims_size(), 1);
  EXPECT_EQ(got.claims(0).name(), "p-scratch");
  EXPECT_TRUE(got.claims(0).owned_by_pod());
  pod.set_uid("another");
  EXPECT_FALSE(v_.For(pod).claims(0).owned_by_pod());
}

TEST_F(VolumesTest, TrackedCapacityTravelsWithItsClass) {
  objects::StorageClassInfo sc;
  sc.sc.set_name("csi");
  sc.sc.set_provisioner("csi.example.com");
  sc.sc.set_volume_binding_mode("WaitForFirstConsumer");
  v_.UpsertClass(std::make_shared<objects::StorageClassInfo>(sc));
  v_.UpsertClaim(Claim(ClaimJson("a", "1", "csi")));
  objects::CapacityInfo cap;
  cap.namespace_ = "kube-system";
  cap.name = "c1";
  cap.capacity.set_storage_class_name("csi");
  v_.UpsertCapacity(std::make_shared<objects::CapacityInfo>(cap));
  pb::PodVolumes got = v_.For(PodWithClaims({"a"}));
  EXPECT_EQ(got.capacities_size(), 0);  // no CSIDriver says it tracks
  objects::CsiDriverInfo d;
  d.name = "csi.example.com";
  d.storage_capacity = true;
  v_.UpsertDriver(std::make_shared<objects::CsiDriverInfo>(d));
  got = v_.For(PodWithClaims({"a"}));
  ASSERT_EQ(got.classes_size(), 1);
  EXPECT_TRUE(got.classes(0).capacity_tracked());
  EXPECT_EQ(got.capacities_size(), 1);
}

TEST_F(VolumesTest, AVolumeIsPromisedToOneClaimAtATime) {
  v_.UpsertClaim(Claim(ClaimJson("a", "1")));
  v_.UpsertClaim(Claim(ClaimJson("b", "1")));
  v_.UpsertVolume(Volume(VolumeJson("pv1", "1")));
  pb::NodeVolumes d;
  d.set_node_name("n1");
  pb::ClaimDecision* cd = d.add_claims();
  cd->set_claim(0);
  cd->set_volume("pv1");
  absl::StatusOr<Volumes::Reservation> ra = v_.Assume(PodWithClaims({"a"}), d);
  ASSERT_TRUE(ra.ok()) << ra.status();
  ASSERT_EQ(ra->bindings.size(), 1u);
  EXPECT_TRUE(ra->bindings[0].write);
  // b's pod no longer sees it, and cannot have it.
  EXPECT_EQ(v_.For(PodWithClaims({"b"})).volumes_size(), 0);
  absl::StatusOr<Volumes::Reservation> rb = v_.Assume(PodWithClaims({"b"}), d);
  EXPECT_TRUE(absl::IsFailedPrecondition(rb.status())) << rb.status();
  // Forgotten, it is free again.
  v_.Forget(*ra);
  EXPECT_EQ(v_.For(PodWithClaims({"b"})).volumes_size(), 1);
  EXPECT_TRUE(v_.Assume(PodWithClaims({"b"}), d).ok());
}

TEST_F(VolumesTest, BoundWaitsForThePvControllerThenSaysDone) {
  v_.UpsertClaim(Claim(ClaimJson("a", "1")));
  v_.UpsertVolume(Volume(VolumeJson("pv1", "1")));
  pb::NodeVolumes d;
  d.set_node_name("n1");
  pb::ClaimDecision* cd = d.add_claims();
  cd->set_claim(0);
  cd->set_volume("pv1");
  absl::StatusOr<Volumes::Reservation> r = v_.Assume(PodWithClaims({"a"}), d);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(v_.Bound(*r).value_or(true), false);  // nothing written yet
  json pv = VolumeJson("pv1", "2");               // our claimRef is in
  pv["spec"]["claimRef"] = {{"namespace", "ns"}, {"name", "a"}, {"uid", "u-a"}};
  v_.UpsertVolume(Volume(pv));
  EXPECT_EQ(v_.Bound(*r).value_or(true), false);  // the claim is not bound
  json c = ClaimJson("a", "2");
  c["spec"]["volumeName"] = "pv1";
  c["metadata"]["annotations"] = {{"pv.kubernetes.io/bind-completed", "yes"}};
  v_.UpsertClaim(Claim(c));
  EXPECT_EQ(v_.Bound(*r).value_or(false), true);
  // A claimRef reset by someone else fails the binding.
  v_.UpsertVolume(Volume(VolumeJson("pv1", "3")));
  absl::StatusOr<bool> reset = v_.Bound(*r);
  ASSERT_FALSE(reset.ok());
  EXPECT_NE(reset.status().message().find("ClaimRef got reset for pv \"pv1\""),
            std::string::npos);
}

TEST_F(VolumesTest, ProvisioningFailsWhenTheSelectedNodeChanges) {
  v_.UpsertClaim(Claim(ClaimJson("a", "1")));
  pb::NodeVolumes d;
  d.set_node_name("n1");
  d.add_claims()->set_claim(0);  // provision
  absl::StatusOr<Volumes::Reservation> r = v_.Assume(PodWithClaims({"a"}), d);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(v_.For(PodWithClaims({"a"})).claims(0).selected_node(), "n1");
  json c = ClaimJson("a", "2");
  c["metadata"]["annotations"] = {{"volume.kubernetes.io/selected-node", "n2"}};
  v_.UpsertClaim(Claim(c));
  absl::StatusOr<bool> b = v_.Bound(*r);
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().message(), "provisioning failed for PVC \"a\"");
}

}  // namespace
}  // namespace kscore::cache
