#include "scorer/plugins/volume_zone.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scorer/testing/wrappers.h"
#include "yaml-cpp/yaml.h"

namespace kscore::plugins {
namespace {

using ::kscore::testing::MakeNode;
using ::kscore::testing::MakePod;
using ::testing::ElementsAre;
namespace pb = framework::pb;
using framework::Code;

constexpr char kZone[] = "topology.kubernetes.io/zone";
constexpr char kRegion[] = "topology.kubernetes.io/region";
constexpr char kBetaZone[] = "failure-domain.beta.kubernetes.io/zone";
constexpr char kBetaRegion[] = "failure-domain.beta.kubernetes.io/region";

// A pod and what the shim holds about its claims, built claim by claim.
class VolumePod {
 public:
  VolumePod() : pod_(MakePod().Name("p").Obj()) {}
  // A persistentVolumeClaim volume bound to `volume` (unbound when empty).
  VolumePod& Bound(const std::string& claim, const std::string& volume) {
    return Claim(claim, /*found=*/true, volume, std::nullopt);
  }
  VolumePod& Unbound(const std::string& claim,
                     std::optional<std::string> class_name) {
    return Claim(claim, /*found=*/true, "", std::move(class_name));
  }
  VolumePod& Missing(const std::string& claim) {
    return Claim(claim, /*found=*/false, "", std::nullopt);
  }
  VolumePod& Ephemeral(const std::string& volume) {
    pb::VolumeClaim* c = pod_.add_volume_claims();
    c->set_volume(volume);
    c->set_ephemeral(true);
    pod_.mutable_volumes()->add_claims()->set_name("p-" + volume);
    return *this;
  }
  VolumePod& Volume(const std::string& name,
                    std::vector<std::pair<std::string, std::string>> labels) {
    pb::PersistentVolume* pv = pod_.mutable_volumes()->add_volumes();
    pv->set_name(name);
    for (auto& [k, v] : labels) (*pv->mutable_labels())[k] = v;
    return *this;
  }
  VolumePod& Class(const std::string& name, const std::string& mode) {
    pb::StorageClass* sc = pod_.mutable_volumes()->add_classes();
    sc->set_name(name);
    sc->set_volume_binding_mode(mode);
    return *this;
  }
  pb::Pod Obj() const { return pod_; }

 private:
  VolumePod& Claim(const std::string& claim, bool found,
                   const std::string& volume,
                   std::optional<std::string> class_name) {
    pb::VolumeClaim* c = pod_.add_volume_claims();
    c->set_volume("vol-" + std::to_string(pod_.volume_claims_size()));
    c->set_claim_name(claim);
    pb::ClaimState* s = pod_.mutable_volumes()->add_claims();
    s->set_name(claim);
    s->set_found(found);
    s->set_volume_name(volume);
    if (class_name.has_value()) s->set_storage_class_name(*class_name);
    return *this;
  }

  pb::Pod pod_;
};

struct Outcome {
  Code code;
  std::string reason;  // "" when none
};

Outcome PreFilter(const pb::Pod& pod) {
  VolumeZone pl;
  framework::CycleState state;
  framework::PluginStatus s = pl.PreFilter(state, pod);
  return {s.code, s.reasons.empty() ? "" : s.reasons[0]};
}

// Upstream's getPVbyPod, claim by claim, in upstream's words.
TEST(VolumeZoneTest, PreFilter) {
  struct Case {
    std::string name;
    pb::Pod pod;
    Code code;
    std::string reason;
  };
  const Code kUU = Code::kUnschedulableAndUnresolvable;
  std::vector<Case> cases = {
      {"no claims", VolumePod().Obj(), Code::kSkip, ""},
      {"ephemeral volumes are not read, even without their claim",
       VolumePod().Ephemeral("scratch").Obj(), Code::kSkip, ""},
      {"claim without a name", VolumePod().Bound("", "pv").Obj(), kUU,
       "PersistentVolumeClaim had no name"},
      {"claim not found", VolumePod().Missing("data").Obj(), kUU,
       "persistentvolumeclaim \"data\" not found"},
      {"unbound claim without class", VolumePod().Unbound("data", {}).Obj(),
       kUU, "PersistentVolumeClaim had no pv name and storageClass name"},
      {"unbound claim with an empty class",
       VolumePod().Unbound("data", "").Obj(), kUU,
       "PersistentVolumeClaim had no pv name and storageClass name"},
      {"unbound claim of a missing class",
       VolumePod().Unbound("data", "fast").Obj(), kUU,
       "storageclass.storage.k8s.io \"fast\" not found"},
      {"unbound claim of a class without binding mode",
       VolumePod().Unbound("data", "legacy").Class("legacy", "").Obj(), kUU,
       "VolumeBindingMode not set for StorageClass \"legacy\""},
      {"unbound claim of an Immediate class",
       VolumePod().Unbound("data", "std").Class("std", "Immediate").Obj(), kUU,
       "PersistentVolume had no name"},
      {"unbound claim of a WaitForFirstConsumer class is skipped",
       VolumePod()
           .Unbound("data", "fast")
           .Class("fast", "WaitForFirstConsumer")
           .Obj(),
       Code::kSkip, ""},
      {"a skipped claim does not hide the next one",
       VolumePod()
           .Unbound("data", "fast")
           .Class("fast", "WaitForFirstConsumer")
           .Missing("logs")
           .Obj(),
       kUU, "persistentvolumeclaim \"logs\" not found"},
      {"the first failing claim speaks",
       VolumePod().Missing("a").Unbound("b", {}).Obj(), kUU,
       "persistentvolumeclaim \"a\" not found"},
      {"bound volume not found", VolumePod().Bound("data", "pv-1").Obj(), kUU,
       "persistentvolume \"pv-1\" not found"},
      {"bound volume without topology labels",
       VolumePod().Bound("data", "pv-1").Volume("pv-1", {{"tier", "a"}}).Obj(),
       Code::kSkip, ""},
      {"a malformed zone list is ignored",
       VolumePod().Bound("data", "pv-1").Volume("pv-1", {{kZone, "a__"}}).Obj(),
       Code::kSkip, ""},
      {"bound volume with a zone",
       VolumePod().Bound("data", "pv-1").Volume("pv-1", {{kZone, "a"}}).Obj(),
       Code::kSuccess, ""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Outcome got = PreFilter(c.pod);
    EXPECT_EQ(got.code, c.code);
    EXPECT_EQ(got.reason, c.reason);
  }
}

TEST(VolumeZoneTest, PreFilterErrorsWhenVolumesDoNotMatchClaims) {
  pb::Pod pod = VolumePod().Bound("data", "pv-1").Obj();
  pod.mutable_volumes()->clear_claims();
  Outcome got = PreFilter(pod);
  EXPECT_EQ(got.code, Code::kError);
  EXPECT_EQ(got.reason,
            "pod.volumes.claims has 0 entries, pod.volume_claims 1");
}

TEST(VolumeZoneTest, PreFilterStateHoldsEveryTopologyLabelAsASet) {
  pb::Pod pod = VolumePod()
                    .Bound("data", "pv-1")
                    .Bound("logs", "pv-2")
                    .Volume("pv-1", {{kRegion, "r1"}, {kZone, "b__a__b"}})
                    .Volume("pv-2", {{kBetaZone, " c "}, {kBetaRegion, "r1"}})
                    .Obj();
  VolumeZone pl;
  framework::CycleState state;
  ASSERT_TRUE(pl.PreFilter(state, pod).ok());
  // Decoded from the bytes, as another replica would.
  framework::CycleState copy(state.bytes());
  auto s =
      copy.Read<VolumeZone::PreFilterState>(VolumeZone::kPreFilterStateKey);
  ASSERT_TRUE(s.ok()) << s.status();
  std::vector<std::pair<std::string, std::vector<std::string>>> got;
  for (const VolumeZone::Topology& t : (*s)->topologies) {
    got.emplace_back(t.key, t.values);
  }
  using P = std::pair<std::string, std::vector<std::string>>;
  // Per volume, in upstream's key order: beta zone, beta region, zone,
  // region.
  EXPECT_THAT(got, ElementsAre(P{kZone, {"a", "b"}}, P{kRegion, {"r1"}},
                               P{kBetaZone, {"c"}}, P{kBetaRegion, {"r1"}}));
}

// PreFilter, then Filter on the node: true when the pod fits. A rejection
// must be upstream's ErrReasonConflict, UnschedulableAndUnresolvable.
bool Fits(const pb::Pod& pod, const pb::Node& node) {
  VolumeZone pl;
  framework::CycleState state;
  framework::PluginStatus pre = pl.PreFilter(state, pod);
  EXPECT_TRUE(pre.ok()) << (pre.reasons.empty() ? "" : pre.reasons[0]);
  framework::PluginStatus s = pl.Filter(state, pod, node);
  if (s.ok()) return true;
  EXPECT_EQ(s.code, Code::kUnschedulableAndUnresolvable);
  EXPECT_THAT(s.reasons, ElementsAre("node(s) had no available volume zone"));
  return false;
}

pb::Pod OnVolume(std::vector<std::pair<std::string, std::string>> labels) {
  return VolumePod()
      .Bound("data", "pv-1")
      .Volume("pv-1", std::move(labels))
      .Obj();
}

TEST(VolumeZoneTest, Filter) {
  struct Case {
    std::string name;
    pb::Pod pod;
    pb::Node node;
    bool fits;
  };
  std::vector<Case> cases = {
      {"same zone", OnVolume({{kZone, "a"}}),
       MakeNode().Label(kZone, "a").Obj(), true},
      {"other zone", OnVolume({{kZone, "a"}}),
       MakeNode().Label(kZone, "b").Obj(), false},
      {"one of a multi-zone volume's zones", OnVolume({{kZone, "a__b"}}),
       MakeNode().Label(kZone, "b").Obj(), true},
      {"none of a multi-zone volume's zones", OnVolume({{kZone, "a__b"}}),
       MakeNode().Label(kZone, "c").Obj(), false},
      {"the whole multi-zone value is no zone", OnVolume({{kZone, "a__b"}}),
       MakeNode().Label(kZone, "a__b").Obj(), false},
      {"zones are trimmed", OnVolume({{kZone, " a __ b"}}),
       MakeNode().Label(kZone, "b").Obj(), true},
      {"a node without topology labels takes any volume",
       OnVolume({{kZone, "a"}}), MakeNode().Label("zone", "b").Obj(), true},
      {"a node with a region but no zone", OnVolume({{kZone, "a"}}),
       MakeNode().Label(kRegion, "r1").Obj(), false},
      {"zone and region both match", OnVolume({{kZone, "a"}, {kRegion, "r1"}}),
       MakeNode().Label(kZone, "a").Label(kRegion, "r1").Obj(), true},
      {"region differs", OnVolume({{kZone, "a"}, {kRegion, "r1"}}),
       MakeNode().Label(kZone, "a").Label(kRegion, "r2").Obj(), false},
      {"a beta volume label matches the node's GA label",
       OnVolume({{kBetaZone, "a"}, {kBetaRegion, "r1"}}),
       MakeNode().Label(kZone, "a").Label(kRegion, "r1").Obj(), true},
      {"the node's beta label is read first, with no fallback to GA",
       OnVolume({{kBetaZone, "a"}}),
       MakeNode().Label(kBetaZone, "b").Label(kZone, "a").Obj(), false},
      {"a GA volume label does not read the node's beta label",
       OnVolume({{kZone, "a"}}), MakeNode().Label(kBetaZone, "a").Obj(), false},
      {"more labels on the node are fine", OnVolume({{kZone, "a"}}),
       MakeNode().Label(kZone, "a").Label(kRegion, "r1").Obj(), true},
      {"every volume must match",
       VolumePod()
           .Bound("data", "pv-1")
           .Bound("logs", "pv-2")
           .Volume("pv-1", {{kZone, "a"}})
           .Volume("pv-2", {{kZone, "b"}})
           .Obj(),
       MakeNode().Label(kZone, "a").Obj(), false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(Fits(c.pod, c.node), c.fits);
  }
}

// A bare Filter (no PreFilter state) works the volumes out itself, and
// reports what PreFilter would.
TEST(VolumeZoneTest, FilterWithoutPreFilterState) {
  VolumeZone pl;
  const framework::CycleState state;
  pb::Pod pod = OnVolume({{kZone, "a"}});
  EXPECT_TRUE(pl.Filter(state, pod, MakeNode().Label(kZone, "a").Obj()).ok());
  EXPECT_EQ(pl.Filter(state, pod, MakeNode().Label(kZone, "b").Obj()).code,
            Code::kUnschedulableAndUnresolvable);
  framework::PluginStatus missing =
      pl.Filter(state, VolumePod().Missing("data").Obj(), MakeNode().Obj());
  EXPECT_THAT(missing.reasons,
              ElementsAre("persistentvolumeclaim \"data\" not found"));
  EXPECT_TRUE(pl.Filter(state, MakePod().Obj(), MakeNode().Obj()).ok());
}

// The node labels Filter reads come with the request only when the plan
// asks: for a pod with a volume that has topology labels.
TEST(VolumeZoneTest, PlanAsksForNodeLabelsWhenAVolumeHasTopology) {
  VolumeZone pl;
  EXPECT_TRUE(pl.Plans());
  EXPECT_THAT(pl.PodDataNeeded(), ElementsAre(pb::POD_DATA_VOLUMES));
  auto node_labels = [&pl](const pb::Pod& pod) {
    pb::PlanResponse plan;
    pl.AddToPlan(pod, plan);
    EXPECT_LE(static_cast<int64_t>(plan.ByteSizeLong()),
              pl.PlanBytes(pod).bytes);
    return plan.node_labels();
  };
  EXPECT_TRUE(node_labels(OnVolume({{kBetaRegion, "r1"}})));
  EXPECT_FALSE(node_labels(OnVolume({{"tier", "a"}})));
  EXPECT_FALSE(node_labels(VolumePod().Missing("data").Obj()));
  EXPECT_FALSE(node_labels(MakePod().Obj()));
}

// Upstream's registrations; its hints need storage objects that
// model::EventObjects does not carry, so none is hinted.
TEST(VolumeZoneTest, EventsToRegisterAsUpstreamUnhinted) {
  namespace action = model::action;
  std::vector<std::pair<pb::EventResource, uint32_t>> got;
  for (const pb::ClusterEvent& e : VolumeZone().EventsToRegister()) {
    EXPECT_FALSE(e.hinted());
    got.emplace_back(e.resource(), e.action_type());
  }
  using E = std::pair<pb::EventResource, uint32_t>;
  const uint32_t add_or_update = action::kAdd | action::kUpdate;
  EXPECT_THAT(
      got,
      ElementsAre(
          E{pb::EVENT_RESOURCE_STORAGE_CLASS, action::kAdd},
          E{pb::EVENT_RESOURCE_NODE, action::kAdd | action::kUpdateNodeLabel},
          E{pb::EVENT_RESOURCE_PERSISTENT_VOLUME_CLAIM, add_or_update},
          E{pb::EVENT_RESOURCE_PERSISTENT_VOLUME, add_or_update}));
}

TEST(VolumeZoneTest, TakesNoArgs) {
  YAML::Node args = YAML::Load("{foo: 1}");
  EXPECT_FALSE(VolumeZone::New(model::YamlField(args, "args")).ok());
  EXPECT_TRUE(VolumeZone::New(model::YamlField(YAML::Node(), "args")).ok());
}

}  // namespace
}  // namespace kscore::plugins
