#include "scorer/plugins/volume_binding.h"

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scorer/testing/wrappers.h"
#include "yaml-cpp/yaml.h"

namespace kscore::plugins {
namespace {

using framework::Code;
using framework::CycleState;
using framework::PluginStatus;
using ::kscore::testing::MakeNode;
using ::kscore::testing::Req;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
namespace pb = framework::pb;

constexpr absl::string_view kWait = "WaitForFirstConsumer";
constexpr absl::string_view kNodeConflict = VolumeBinding::kReasonNodeConflict;
constexpr absl::string_view kBindConflict = VolumeBinding::kReasonBindConflict;
constexpr absl::string_view kNoSpace = VolumeBinding::kReasonNotEnoughSpace;
constexpr absl::string_view kNoPV = VolumeBinding::kReasonPVNotExist;

// A found, pending claim, as the shim reports it.
class ClaimWrapper {
 public:
  explicit ClaimWrapper(std::string name) {
    c_.set_name(std::move(name));
    c_.set_found(true);
    c_.set_phase("Pending");
  }
  ClaimWrapper& Missing() {
    pb::ClaimState c;
    c.set_name(c_.name());
    c_ = c;
    return *this;
  }
  ClaimWrapper& Bound(std::string pv) {
    c_.set_volume_name(std::move(pv));
    c_.set_bind_completed(true);
    c_.set_phase("Bound");
    return *this;
  }
  ClaimWrapper& VolumeName(std::string pv) {  // prebound, not completed
    c_.set_volume_name(std::move(pv));
    return *this;
  }
  ClaimWrapper& Phase(std::string p) {
    c_.set_phase(std::move(p));
    return *this;
  }
  ClaimWrapper& Uid(std::string uid) {
    c_.set_uid(std::move(uid));
    return *this;
  }
  ClaimWrapper& Deleting() {
    c_.set_deleting(true);
    return *this;
  }
  ClaimWrapper& Owned() {
    c_.set_owned_by_pod(true);
    return *this;
  }
  ClaimWrapper& Class(std::string c) {
    c_.set_storage_class_name(std::move(c));
    return *this;
  }
  ClaimWrapper& Request(int64_t bytes) {
    c_.set_storage_request(bytes);
    return *this;
  }
  ClaimWrapper& Mode(std::string m) {
    c_.add_access_modes(std::move(m));
    return *this;
  }
  ClaimWrapper& VolumeMode(std::string m) {
    c_.set_volume_mode(std::move(m));
    return *this;
  }
  ClaimWrapper& Selector(const std::string& k, const std::string& v) {
    (*c_.mutable_selector()->mutable_match_labels())[k] = v;
    return *this;
  }
  ClaimWrapper& BadSelector() {
    auto* r = c_.mutable_selector()->add_match_expressions();
    r->set_key("a b");
    r->set_operator_("Exists");
    return *this;
  }
  ClaimWrapper& SelectedNode(std::string n) {
    c_.set_selected_node(std::move(n));
    return *this;
  }
  ClaimWrapper& VAC(std::string v) {
    c_.set_volume_attributes_class_name(std::move(v));
    return *this;
  }
  pb::ClaimState Obj() const { return c_; }

 private:
  pb::ClaimState c_;
};
ClaimWrapper Claim(std::string name) { return ClaimWrapper(std::move(name)); }

// An available volume with no claimRef.
class PVWrapper {
 public:
  PVWrapper(std::string name, std::string cls, int64_t capacity) {
    v_.set_name(std::move(name));
    v_.set_storage_class_name(std::move(cls));
    v_.set_capacity(capacity);
    v_.set_phase("Available");
  }
  PVWrapper& Mode(std::string m) {
    v_.add_access_modes(std::move(m));
    return *this;
  }
  PVWrapper& VolumeMode(std::string m) {
    v_.set_volume_mode(std::move(m));
    return *this;
  }
  PVWrapper& Label(const std::string& k, const std::string& v) {
    (*v_.mutable_labels())[k] = v;
    return *this;
  }
  // One required term (ORed with the others).
  PVWrapper& Term(std::vector<pb::NodeSelectorRequirement> reqs,
                  std::vector<pb::NodeSelectorRequirement> fields = {}) {
    v_.set_has_node_affinity(true);
    pb::NodeSelectorTerm* t = v_.add_node_affinity();
    for (auto& r : reqs) *t->add_match_expressions() = std::move(r);
    for (auto& r : fields) *t->add_match_fields() = std::move(r);
    return *this;
  }
  PVWrapper& NoTerms() {
    v_.set_has_node_affinity(true);
    return *this;
  }
  PVWrapper& ClaimRef(std::string name, std::string ns = "ns",
                      std::string uid = "") {
    v_.set_has_claim_ref(true);
    v_.set_claim_namespace(std::move(ns));
    v_.set_claim_name(std::move(name));
    v_.set_claim_uid(std::move(uid));
    return *this;
  }
  PVWrapper& Phase(std::string p) {
    v_.set_phase(std::move(p));
    return *this;
  }
  PVWrapper& VAC(std::string v) {
    v_.set_volume_attributes_class_name(std::move(v));
    return *this;
  }
  pb::PersistentVolume Obj() const { return v_; }

 private:
  pb::PersistentVolume v_;
};
PVWrapper PV(std::string name, std::string cls = "wait", int64_t cap = 100) {
  return PVWrapper(std::move(name), std::move(cls), cap);
}

pb::StorageClass Class(std::string name, absl::string_view mode = kWait,
                       std::string provisioner = "csi.example.com",
                       bool tracked = false) {
  pb::StorageClass c;
  c.set_name(std::move(name));
  c.set_volume_binding_mode(std::string(mode));
  c.set_provisioner(std::move(provisioner));
  c.set_capacity_tracked(tracked);
  return c;
}

pb::StorageCapacity Capacity(std::string cls, std::optional<int64_t> limit,
                             std::optional<int64_t> capacity,
                             std::optional<std::string> zone = "a") {
  pb::StorageCapacity c;
  c.set_name("ns/cap-" + cls);
  c.set_storage_class_name(std::move(cls));
  if (limit.has_value()) c.set_limit(*limit);
  if (capacity.has_value()) c.set_capacity(*capacity);
  if (zone.has_value()) {
    (*c.mutable_node_topology()->mutable_match_labels())["zone"] = *zone;
  }
  return c;
}

// Pod ns/p with claims and what the shim knows about them.
class PodWrapper {
 public:
  PodWrapper() {
    pod_.set_namespace_("ns");
    pod_.set_name("p");
  }
  PodWrapper& With(const ClaimWrapper& c, bool ephemeral = false) {
    pb::VolumeClaim* v = pod_.add_volume_claims();
    v->set_volume("vol" + std::to_string(pod_.volume_claims_size()));
    if (!ephemeral) v->set_claim_name(c.Obj().name());
    v->set_ephemeral(ephemeral);
    *pod_.mutable_volumes()->add_claims() = c.Obj();
    return *this;
  }
  PodWrapper& With(const PVWrapper& v) {
    *pod_.mutable_volumes()->add_volumes() = v.Obj();
    return *this;
  }
  PodWrapper& With(pb::StorageClass c) {
    *pod_.mutable_volumes()->add_classes() = std::move(c);
    return *this;
  }
  PodWrapper& With(pb::StorageCapacity c) {
    *pod_.mutable_volumes()->add_capacities() = std::move(c);
    return *this;
  }
  pb::Pod Obj() const { return pod_; }

 private:
  pb::Pod pod_;
};
PodWrapper Pod() { return PodWrapper(); }

const pb::Node& NodeA() {
  static const pb::Node n =
      MakeNode().Name("n1").Label("zone", "a").Label("disk", "ssd").Obj();
  return n;
}

// PreFilter, then Filter on `node` when PreFilter succeeded.
PluginStatus FilterPod(const pb::Pod& pod, const pb::Node& node = NodeA(),
                       const VolumeBinding& pl = VolumeBinding()) {
  CycleState state;
  PluginStatus pre = pl.PreFilter(state, pod);
  if (!pre.ok()) return pre;
  return pl.Filter(state, pod, node);
}

std::string Why(const PluginStatus& s) {
  return absl::StrCat(framework::CodeName(s.code), ": ",
                      absl::StrJoin(s.reasons, "; "));
}

// Which volume each claim gets on the node ("" provisioned), by claim.
std::vector<std::pair<int, std::string>> Decide(
    const pb::Pod& pod, const pb::Node& node = NodeA()) {
  VolumeBinding pl;
  CycleState state;
  EXPECT_TRUE(pl.PreFilter(state, pod).ok());
  pb::NodeVolumes out;
  PluginStatus s = pl.DecideVolumes(state, pod, node, out);
  EXPECT_TRUE(s.ok()) << Why(s);
  std::vector<std::pair<int, std::string>> r;
  for (const pb::ClaimDecision& d : out.claims()) {
    r.emplace_back(d.claim(), d.volume());
  }
  return r;
}

using Decisions = std::vector<std::pair<int, std::string>>;

// podHasPVCs and GetPodVolumeClaims, in upstream's words.
TEST(VolumeBindingTest, PreFilter) {
  struct Case {
    std::string name;
    pb::Pod pod;
    Code code;
    std::string reason;
  };
  const Code kUU = Code::kUnschedulableAndUnresolvable;
  const std::vector<Case> cases = {
      {"no claims", Pod().Obj(), Code::kSkip, ""},
      {"claim not found", Pod().With(Claim("c").Missing()).Obj(), kUU,
       "persistentvolumeclaim \"c\" not found"},
      {"ephemeral claim not created yet",
       Pod().With(Claim("p-vol1").Missing(), true).Obj(), kUU,
       "waiting for ephemeral volume controller to create the "
       "persistentvolumeclaim \"p-vol1\""},
      {"lost", Pod().With(Claim("c").Phase("Lost").VolumeName("pv")).Obj(), kUU,
       "persistentvolumeclaim \"c\" bound to non-existent persistentvolume "
       "\"pv\""},
      {"being deleted", Pod().With(Claim("c").Deleting()).Obj(), kUU,
       "persistentvolumeclaim \"c\" is being deleted"},
      {"ephemeral claim of another pod",
       Pod().With(Claim("p-vol1").Class("wait"), true).Obj(), kUU,
       "PVC ns/p-vol1 was not created for pod ns/p (pod is not owner)"},
      {"the first bad claim speaks",
       Pod().With(Claim("a").Deleting()).With(Claim("b").Missing()).Obj(), kUU,
       "persistentvolumeclaim \"a\" is being deleted"},
      {"unbound, immediate class",
       Pod()
           .With(Claim("c").Class("fast"))
           .With(Class("fast", "Immediate"))
           .Obj(),
       kUU, "pod has unbound immediate PersistentVolumeClaims"},
      {"unbound, no class", Pod().With(Claim("c")).Obj(), kUU,
       "pod has unbound immediate PersistentVolumeClaims"},
      {"unbound, class not found", Pod().With(Claim("c").Class("gone")).Obj(),
       kUU, "pod has unbound immediate PersistentVolumeClaims"},
      {"prebound, delayed class: immediate",
       Pod()
           .With(Claim("c").Class("wait").VolumeName("pv"))
           .With(Class("wait"))
           .Obj(),
       kUU, "pod has unbound immediate PersistentVolumeClaims"},
      {"class without volumeBindingMode",
       Pod().With(Claim("c").Class("odd")).With(Class("odd", "")).Obj(),
       Code::kError, "VolumeBindingMode not set for StorageClass \"odd\""},
      {"the class error wins over an earlier immediate claim",
       Pod()
           .With(Claim("a"))
           .With(Claim("b").Class("odd"))
           .With(Class("odd", ""))
           .Obj(),
       Code::kError, "VolumeBindingMode not set for StorageClass \"odd\""},
      {"bound", Pod().With(Claim("c").Bound("pv")).Obj(), Code::kSuccess, ""},
      {"bound needs bind-completed",
       Pod().With(Claim("c").VolumeName("pv")).Obj(), kUU,
       "pod has unbound immediate PersistentVolumeClaims"},
      {"delayed",
       Pod().With(Claim("c").Class("wait")).With(Class("wait")).Obj(),
       Code::kSuccess, ""},
      {"ephemeral, owned, delayed",
       Pod()
           .With(Claim("p-vol1").Class("wait").Owned(), true)
           .With(Class("wait"))
           .Obj(),
       Code::kSuccess, ""},
  };
  for (const Case& c : cases) {
    CycleState state;
    PluginStatus s = VolumeBinding().PreFilter(state, c.pod);
    EXPECT_EQ(s.code, c.code) << c.name << ": " << Why(s);
    if (c.reason.empty()) {
      EXPECT_THAT(s.reasons, ::testing::IsEmpty()) << c.name;
    } else {
      EXPECT_THAT(s.reasons, ElementsAre(c.reason)) << c.name;
    }
  }
}

TEST(VolumeBindingTest, PreFilterRefusesClaimsWithoutTheirState) {
  pb::Pod pod = Pod().With(Claim("c").Bound("pv")).Obj();
  pod.mutable_volumes()->clear_claims();
  CycleState state;
  PluginStatus s = VolumeBinding().PreFilter(state, pod);
  EXPECT_EQ(s.code, Code::kError);
  EXPECT_THAT(Why(s), HasSubstr("pod.volumes.claims has 0 entries for 1"));
}

// checkBoundClaims: the bound claims' volumes must exist and reach the node
// (CheckNodeAffinity against the node's labels alone).
TEST(VolumeBindingTest, FilterBoundClaims) {
  struct Case {
    std::string name;
    pb::Pod pod;
    std::vector<absl::string_view> reasons;
  };
  auto bound = [](PVWrapper pv) {
    return Pod().With(Claim("c").Bound("pv")).With(pv);
  };
  const std::vector<Case> cases = {
      {"no affinity", bound(PV("pv")).Obj(), {}},
      {"volume missing", Pod().With(Claim("c").Bound("pv")).Obj(), {kNoPV}},
      {"affinity matches",
       bound(PV("pv").Term({Req("zone", "In", {"a"})})).Obj(),
       {}},
      {"affinity does not match",
       bound(PV("pv").Term({Req("zone", "In", {"b"})})).Obj(),
       {kNodeConflict}},
      {"terms are ORed",
       bound(PV("pv")
                 .Term({Req("zone", "In", {"b"})})
                 .Term({Req("disk", "Exists")}))
           .Obj(),
       {}},
      {"required with no term matches nothing",
       bound(PV("pv").NoTerms()).Obj(),
       {kNodeConflict}},
      {"malformed term matches nothing",
       bound(PV("pv").Term({Req("bad key", "DoesNotExist")})).Obj(),
       {kNodeConflict}},
      {"field terms are ignored (labels only)",
       bound(PV("pv").Term({}, {Req("metadata.name", "In", {"other"})})).Obj(),
       {}},
      {"the first failing claim decides",
       Pod()
           .With(Claim("a").Bound("pva"))
           .With(Claim("b").Bound("missing"))
           .With(PV("pva").Term({Req("zone", "In", {"b"})}))
           .Obj(),
       {kNodeConflict}},
      {"a missing volume stops the check",
       Pod()
           .With(Claim("a").Bound("missing"))
           .With(Claim("b").Bound("pvb"))
           .With(PV("pvb").Term({Req("zone", "In", {"b"})}))
           .Obj(),
       {kNoPV}},
  };
  for (const Case& c : cases) {
    PluginStatus s = FilterPod(c.pod);
    if (c.reasons.empty()) {
      EXPECT_TRUE(s.ok()) << c.name << ": " << Why(s);
      continue;
    }
    EXPECT_EQ(s.code, Code::kUnschedulableAndUnresolvable) << c.name;
    EXPECT_THAT(s.reasons, ::testing::ElementsAreArray(c.reasons)) << c.name;
  }
}

struct MatchCase {
  std::string name;
  ClaimWrapper claim;
  std::vector<PVWrapper> pvs;
  std::string want;  // the volume, "" provisioned
};

std::vector<MatchCase> MatchCases() {
  auto claim = [] { return Claim("c").Class("wait").Request(50); };
  return {
      {"smallest that fits",
       claim(),
       {PV("big", "wait", 200), PV("small", "wait", 40), PV("fit", "wait", 60)},
       "fit"},
      {"equal sizes: the first listed",
       claim(),
       {PV("x", "wait", 60), PV("y", "wait", 60)},
       "x"},
      {"another class", claim(), {PV("pv", "other", 60)}, ""},
      {"too small", claim(), {PV("pv", "wait", 49)}, ""},
      {"exactly the request", claim(), {PV("pv", "wait", 50)}, "pv"},
      {"access modes: all of the claim's",
       claim().Mode("RWO").Mode("ROX"),
       {PV("one", "wait", 60).Mode("RWO"),
        PV("both", "wait", 90).Mode("ROX").Mode("RWO")},
       "both"},
      {"volume mode: unset is Filesystem",
       claim().VolumeMode("Filesystem"),
       {PV("block", "wait", 60).VolumeMode("Block"), PV("fs", "wait", 70)},
       "fs"},
      {"volume attributes class must be equal",
       claim().VAC("gold"),
       {PV("none", "wait", 60), PV("gold", "wait", 70).VAC("gold")},
       "gold"},
      {"a volume with a class the claim lacks",
       claim(),
       {PV("gold", "wait", 60).VAC("gold")},
       ""},
      {"selector",
       claim().Selector("tier", "fast"),
       {PV("slow", "wait", 60).Label("tier", "slow"),
        PV("fast", "wait", 70).Label("tier", "fast")},
       "fast"},
      {"node affinity",
       claim(),
       {PV("b", "wait", 60).Term({Req("zone", "In", {"b"})}),
        PV("a", "wait", 70).Term({Req("zone", "In", {"a"})})},
       "a"},
      {"only Available volumes",
       claim(),
       {PV("released", "wait", 60).Phase("Released"), PV("ok", "wait", 70)},
       "ok"},
      {"claimRef to another claim",
       claim(),
       {PV("taken", "wait", 60).ClaimRef("other"), PV("ok", "wait", 70)},
       "ok"},
      {"claimRef in another namespace",
       claim(),
       {PV("taken", "wait", 60).ClaimRef("c", "other"), PV("ok", "wait", 70)},
       "ok"},
      {"claimRef to another incarnation of the claim",
       claim().Uid("u2"),
       {PV("old", "wait", 60).ClaimRef("c", "ns", "u1"), PV("ok", "wait", 70)},
       "ok"},
      {"claimRef with this claim's uid wins",
       claim().Uid("u2"),
       {PV("small", "wait", 60),
        PV("mine", "wait", 90).ClaimRef("c", "ns", "u2")},
       "mine"},
      {"pre-bound to this claim wins",
       claim(),
       {PV("small", "wait", 60),
        PV("mine", "wait", 90).ClaimRef("c").Phase("Bound")},
       "mine"},
      {"pre-bound ignores selector and modes",
       claim().Selector("tier", "fast").Mode("RWX"),
       {PV("mine", "wait", 90).ClaimRef("c")},
       "mine"},
      {"pre-bound but not reaching the node: no match",
       claim(),
       {PV("mine", "wait", 90).ClaimRef("c").Term({Req("zone", "In", {"b"})}),
        PV("other", "wait", 95)},
       ""},
  };
}

// FindMatchingVolume: which available volume a delayed claim takes.
TEST(VolumeBindingTest, FindMatchingVolume) {
  for (const MatchCase& c : MatchCases()) {
    PodWrapper pod;
    pod.With(c.claim).With(Class("wait"));
    for (const PVWrapper& pv : c.pvs) pod.With(pv);
    Decisions want = {{0, c.want}};
    EXPECT_EQ(Decide(pod.Obj()), want) << c.name;
  }
}

TEST(VolumeBindingTest, FindMatchingVolumeMalformedSelectorIsAnError) {
  pb::Pod pod = Pod()
                    .With(Claim("c").Class("wait").BadSelector())
                    .With(Class("wait"))
                    .With(PV("pv"))
                    .Obj();
  PluginStatus s = FilterPod(pod);
  EXPECT_EQ(s.code, Code::kError);
  EXPECT_THAT(Why(s), HasSubstr("error creating internal label selector for "
                                "claim: ns/c: "));
}

// findMatchingVolumes: claims by increasing request, each volume once; the
// sort is stable.
TEST(VolumeBindingTest, FindMatchingVolumesBySize) {
  pb::Pod pod = Pod()
                    .With(Claim("big").Class("wait").Request(10))
                    .With(Claim("small").Class("wait").Request(5))
                    .With(Class("wait"))
                    .With(PV("pv10", "wait", 10))
                    .With(PV("pv20", "wait", 20))
                    .Obj();
  EXPECT_EQ(Decide(pod), (Decisions{{0, "pv20"}, {1, "pv10"}}));
  pod = Pod()
            .With(Claim("first").Class("wait").Request(10))
            .With(Claim("second").Class("wait").Request(10))
            .With(Class("wait"))
            .With(PV("pv10", "wait", 10))
            .With(PV("pv20", "wait", 20))
            .Obj();
  EXPECT_EQ(Decide(pod), (Decisions{{0, "pv10"}, {1, "pv20"}}));
  // One volume for two claims: the second is provisioned.
  pod = Pod()
            .With(Claim("a").Class("wait").Request(10))
            .With(Claim("b").Class("wait").Request(10))
            .With(Class("wait"))
            .With(PV("pv10", "wait", 10))
            .Obj();
  EXPECT_EQ(Decide(pod), (Decisions{{0, "pv10"}, {1, ""}}));
}

// The selected-node annotation: provisioned there, nowhere else.
TEST(VolumeBindingTest, SelectedNode) {
  pb::Pod pod = Pod()
                    .With(Claim("c").Class("wait").SelectedNode("n1"))
                    .With(Class("wait"))
                    .With(PV("pv"))
                    .Obj();
  EXPECT_EQ(Decide(pod), (Decisions{{0, ""}}));
  const pb::Node n2 = MakeNode().Name("n2").Label("zone", "a").Obj();
  PluginStatus s = FilterPod(pod, n2);
  EXPECT_EQ(s.code, Code::kUnschedulableAndUnresolvable);
  EXPECT_THAT(s.reasons, ElementsAre(kBindConflict));
  // With a bound claim's volume elsewhere too: both reasons, in order.
  pod = Pod()
            .With(Claim("b").Bound("pvb"))
            .With(Claim("c").Class("wait").SelectedNode("n1"))
            .With(Class("wait"))
            .With(PV("pvb").Term({Req("zone", "In", {"b"})}))
            .Obj();
  s = FilterPod(pod, n2);
  EXPECT_THAT(s.reasons, ElementsAre(kNodeConflict, kBindConflict));
}

// checkVolumeProvisions and hasEnoughCapacity.
TEST(VolumeBindingTest, Provisioning) {
  struct Case {
    std::string name;
    pb::StorageClass cls;
    std::vector<pb::StorageCapacity> capacities;
    std::vector<absl::string_view> reasons;
    int64_t request = 50;
  };
  auto topo =
      [](std::vector<std::pair<std::string, std::vector<std::string>>> terms) {
        pb::StorageClass c = Class("wait");
        for (auto& [key, values] : terms) {
          auto* r = c.add_allowed_topologies()->add_match_label_expressions();
          r->set_key(key);
          for (auto& v : values) r->add_values(v);
        }
        return c;
      };
  const pb::StorageClass tracked =
      Class("wait", kWait, "csi.example.com", /*tracked=*/true);
  const std::vector<Case> cases = {
      {"provisioner", Class("wait"), {}, {}},
      {"no provisioner", Class("wait", kWait, ""), {}, {kBindConflict}},
      {"kubernetes.io/no-provisioner",
       Class("wait", kWait, "kubernetes.io/no-provisioner"),
       {},
       {kBindConflict}},
      {"allowed topology matches", topo({{"zone", {"b", "a"}}}), {}, {}},
      {"allowed topology does not match",
       topo({{"zone", {"b"}}}),
       {},
       {kBindConflict}},
      {"allowed topology: a malformed requirement matches nothing",
       topo({{"zone", {}}}),
       {},
       {kBindConflict}},
      {"capacity not tracked: no check",
       Class("wait"),
       {Capacity("wait", 1, 1)},
       {}},
      {"tracked, enough", tracked, {Capacity("wait", 50, 100)}, {}},
      {"tracked, not enough", tracked, {Capacity("wait", 49, 100)}, {kNoSpace}},
      {"tracked, no capacity object", tracked, {}, {kNoSpace}},
      {"tracked, another class's capacity",
       tracked,
       {Capacity("other", 100, 100)},
       {kNoSpace}},
      {"tracked, capacity elsewhere",
       tracked,
       {Capacity("wait", 100, 100, "b")},
       {kNoSpace}},
      {"tracked, capacity with no topology",
       tracked,
       {Capacity("wait", 100, 100, std::nullopt)},
       {kNoSpace}},
      {"tracked, capacity with no limit",
       tracked,
       {Capacity("wait", std::nullopt, std::nullopt)},
       {kNoSpace}},
      {"tracked, the first that fits",
       tracked,
       {Capacity("wait", 10, 10), Capacity("wait", 60, 60)},
       {}},
      {"tracked, no request: no check", tracked, {}, {}, -1},
  };
  for (const Case& c : cases) {
    ClaimWrapper claim = Claim("c").Class("wait");
    if (c.request >= 0) claim.Request(c.request);
    PodWrapper pod;
    pod.With(claim).With(c.cls);
    for (const pb::StorageCapacity& cap : c.capacities) pod.With(cap);
    PluginStatus s = FilterPod(pod.Obj());
    if (c.reasons.empty()) {
      EXPECT_TRUE(s.ok()) << c.name << ": " << Why(s);
      continue;
    }
    EXPECT_EQ(s.code, Code::kUnschedulableAndUnresolvable) << c.name;
    EXPECT_THAT(s.reasons, ::testing::ElementsAreArray(c.reasons)) << c.name;
  }
}

// The errors of checkVolumeProvisions, for claims PreFilter would not have
// delayed (a state from elsewhere).
TEST(VolumeBindingTest, ProvisioningErrors) {
  VolumeBinding pl;
  CycleState state;
  state.Write(VolumeBinding::kStateKey, VolumeBinding::State{"d"});
  PluginStatus s = pl.Filter(state, Pod().With(Claim("c")).Obj(), NodeA());
  EXPECT_EQ(s.code, Code::kError);
  EXPECT_THAT(s.reasons, ElementsAre("no class for claim \"ns/c\""));
  s = pl.Filter(state, Pod().With(Claim("c").Class("gone")).Obj(), NodeA());
  EXPECT_EQ(s.code, Code::kError);
  EXPECT_THAT(s.reasons, ElementsAre("failed to find storage class \"gone\""));
  // A state that does not fit the pod.
  s = pl.Filter(state, Pod().Obj(), NodeA());
  EXPECT_EQ(s.code, Code::kError);
  EXPECT_THAT(Why(s), HasSubstr("has 1 claims, the pod 0"));
}

struct ScoreCase {
  std::string name;
  pb::Pod pod;
  int64_t want;
};

std::vector<ScoreCase> ScoreCases() {
  const pb::StorageClass tracked =
      Class("wait", kWait, "csi.example.com", /*tracked=*/true);
  return {
      {"no claims", Pod().Obj(), 0},
      {"bound only", Pod().With(Claim("c").Bound("pv")).With(PV("pv")).Obj(),
       0},
      {"static binding, half used",
       Pod()
           .With(Claim("c").Class("wait").Request(50))
           .With(Class("wait"))
           .With(PV("pv", "wait", 100))
           .Obj(),
       50},
      {"static bindings of one class add up",
       Pod()
           .With(Claim("a").Class("wait").Request(30))
           .With(Claim("b").Class("wait").Request(30))
           .With(Class("wait"))
           .With(PV("pv1", "wait", 40))
           .With(PV("pv2", "wait", 60))
           .Obj(),
       40},  // 60 of 100
      {"two classes averaged",
       Pod()
           .With(Claim("a").Class("wait").Request(25))
           .With(Claim("b").Class("slow").Request(10))
           .With(Class("wait"))
           .With(Class("slow"))
           .With(PV("pv1", "wait", 100))
           .With(PV("pv2", "slow", 10))
           .Obj(),
       38},  // (75 + 0) / 2 = 37.5 rounds up
      {"provisioned against the node's capacity",
       Pod()
           .With(Claim("a").Class("wait").Request(50))
           .With(Claim("b").Class("wait").Request(50))
           .With(tracked)
           .With(Capacity("wait", 100, 400))
           .Obj(),
       75},  // 100 of 400, the capacity counted once
      {"static bindings win over provisions",
       Pod()
           .With(Claim("a").Class("wait").Request(50))
           .With(Claim("b").Class("wait").Request(80))
           .With(tracked)
           .With(PV("pv", "wait", 100))
           .With(Capacity("wait", 100, 1000))
           .Obj(),
       50},
      {"provisioned without tracked capacity",
       Pod()
           .With(Claim("a").Class("wait").Request(50))
           .With(Class("wait"))
           .Obj(),
       0},
      {"capacity without its capacity field",
       Pod()
           .With(Claim("a").Class("wait").Request(50))
           .With(tracked)
           .With(Capacity("wait", 100, std::nullopt))
           .Obj(),
       0},  // utilization 100
  };
}

// Score as scorer.go with the default shape (0 -> 100, 100 -> 0 once
// scaled): static bindings by their volume's class, else provisioned claims
// against their capacity; classes averaged and rounded.
TEST(VolumeBindingTest, Score) {
  VolumeBinding pl;
  for (const ScoreCase& c : ScoreCases()) {
    CycleState state;
    PluginStatus pre = pl.PreFilter(state, c.pod);
    ASSERT_TRUE(pre.ok() || pre.code == Code::kSkip) << c.name << Why(pre);
    const pb::Node* nodes[] = {&NodeA()};
    PluginStatus ps = pl.PreScore(state, c.pod, nodes);
    EXPECT_TRUE(ps.ok()) << c.name << ": PreScore never skips";
    std::vector<int64_t> scores(1, -1);
    ASSERT_TRUE(pl.Score(state, c.pod, nodes, absl::MakeSpan(scores)).ok());
    EXPECT_EQ(scores[0], c.want) << c.name;
  }
}

TEST(VolumeBindingTest, ScoreWithTheArgsShape) {
  absl::StatusOr<VolumeBinding::Args> args = VolumeBinding::ParseArgs(
      model::YamlField(YAML::Load("{shape: [{utilization: 0, score: 0}, "
                                  "{utilization: 80, score: 10}]}"),
                       "args"));
  ASSERT_TRUE(args.ok()) << args.status();
  VolumeBinding pl(*args);
  pb::Pod pod = Pod()
                    .With(Claim("c").Class("wait").Request(40))
                    .With(Class("wait"))
                    .With(PV("pv", "wait", 100))
                    .Obj();
  CycleState state;
  ASSERT_TRUE(pl.PreFilter(state, pod).ok());
  const pb::Node* nodes[] = {&NodeA()};
  std::vector<int64_t> scores(1);
  ASSERT_TRUE(pl.Score(state, pod, nodes, absl::MakeSpan(scores)).ok());
  EXPECT_EQ(scores[0], 50);  // 40% on 0 -> 0, 80 -> 100
  EXPECT_EQ(pl.args().bind_timeout_seconds, 600);
}

// A pod without claims needs no state (PreFilter skipped); one with claims
// needs PreFilter's.
TEST(VolumeBindingTest, ScoreNeedsPreFilterState) {
  VolumeBinding pl;
  CycleState state;
  const pb::Node* nodes[] = {&NodeA()};
  EXPECT_EQ(pl.PreFilter(state, Pod().Obj()).code, Code::kSkip);
  EXPECT_TRUE(state.bytes().empty());
  EXPECT_TRUE(pl.PreScore(state, Pod().Obj(), nodes).ok());
  const pb::Pod pod = Pod().With(Claim("c").Bound("pv")).Obj();
  PluginStatus s = pl.PreScore(state, pod, nodes);
  EXPECT_EQ(s.code, Code::kError);
  EXPECT_THAT(Why(s), HasSubstr("cycle_state has no key \"VolumeBinding\""));
}

// What Reserve would assume: delayed claims only, by claim index.
TEST(VolumeBindingTest, DecideVolumes) {
  pb::Pod pod = Pod()
                    .With(Claim("bound").Bound("pvb"))
                    .With(Claim("prov").Class("wait").Request(500))
                    .With(Claim("static").Class("wait").Request(5))
                    .With(Class("wait"))
                    .With(PV("pvb", "other"))
                    .With(PV("pv", "wait", 10))
                    .Obj();
  EXPECT_EQ(Decide(pod), (Decisions{{1, ""}, {2, "pv"}}));
  EXPECT_EQ(Decide(Pod().With(Claim("c").Bound("pv")).With(PV("pv")).Obj()),
            Decisions{});
  // A node that does not fit is refused: only feasible nodes are asked.
  VolumeBinding pl;
  CycleState state;
  pod = Pod()
            .With(Claim("c").Class("wait").SelectedNode("n2"))
            .With(Class("wait"))
            .Obj();
  ASSERT_TRUE(pl.PreFilter(state, pod).ok());
  pb::NodeVolumes out;
  EXPECT_EQ(pl.DecideVolumes(state, pod, NodeA(), out).code, Code::kError);
}

TEST(VolumeBindingTest, PlanAndRegistrations) {
  VolumeBinding pl;
  EXPECT_THAT(pl.PodDataNeeded(), ElementsAre(pb::POD_DATA_VOLUMES));
  EXPECT_TRUE(pl.Plans());
  EXPECT_TRUE(pl.Batchable());
  pb::PlanResponse plan;
  pl.AddToPlan(Pod().Obj(), plan);
  EXPECT_FALSE(plan.node_labels());
  EXPECT_EQ(pl.PlanBytes(Pod().Obj()).bytes, 0);
  const pb::Pod pod = Pod().With(Claim("c").Bound("pv")).Obj();
  pl.AddToPlan(pod, plan);
  EXPECT_TRUE(plan.node_labels());
  EXPECT_GE(pl.PlanBytes(pod).bytes, static_cast<int64_t>(plan.ByteSizeLong()));
  std::vector<pb::ClusterEvent> events = pl.EventsToRegister();
  std::map<int, uint32_t> by_resource;
  for (const pb::ClusterEvent& e : events) {
    EXPECT_FALSE(e.hinted());
    by_resource[e.resource()] = e.action_type();
  }
  const uint32_t add_update = model::action::kAdd | model::action::kUpdate;
  EXPECT_EQ(by_resource,
            (std::map<int, uint32_t>{
                {pb::EVENT_RESOURCE_NODE,
                 model::action::kAdd | model::action::kUpdateNodeLabel},
                {pb::EVENT_RESOURCE_PERSISTENT_VOLUME, add_update},
                {pb::EVENT_RESOURCE_PERSISTENT_VOLUME_CLAIM, add_update},
                {pb::EVENT_RESOURCE_STORAGE_CLASS, add_update},
                {pb::EVENT_RESOURCE_CSI_NODE, add_update},
                {pb::EVENT_RESOURCE_CSI_DRIVER, model::action::kUpdate},
                {pb::EVENT_RESOURCE_CSI_STORAGE_CAPACITY, add_update}}));
}

}  // namespace
}  // namespace kscore::plugins
