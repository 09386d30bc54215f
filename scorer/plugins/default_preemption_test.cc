#include "scorer/plugins/default_preemption.h"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "model/config.h"
#include "scorer/framework/profile_set.h"
#include "scorer/plugins/registry.h"
#include "scorer/testing/profile_peer.h"
#include "scorer/testing/wrappers.h"

namespace kscore::plugins {
namespace {

namespace pb = framework::pb;
using framework::Candidate;
using framework::Code;
using framework::PostFilterResult;
using ::kscore::testing::MakeNode;
using ::kscore::testing::MakePod;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr int64_t kSecond = 1'000'000'000;
const absl::Time kNow = absl::FromUnixSeconds(1'000'000);

// ------------------------------------------------------------------ args

absl::StatusOr<DefaultPreemption::Args> Parse(const std::string& yaml) {
  return DefaultPreemption::ParseArgs(
      model::YamlField(YAML::Load(yaml), "args"));
}

TEST(DefaultPreemptionArgsTest, DefaultsAsUpstream) {
  absl::StatusOr<DefaultPreemption::Args> a =
      DefaultPreemption::ParseArgs(model::YamlField(YAML::Node(), "args"));
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->min_candidate_nodes_percentage, 10);
  EXPECT_EQ(a->min_candidate_nodes_absolute, 100);
  a = Parse(
      "{kind: DefaultPreemptionArgs, minCandidateNodesPercentage: 0, "
      "minCandidateNodesAbsolute: 3}");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->min_candidate_nodes_percentage, 0);
  EXPECT_EQ(a->min_candidate_nodes_absolute, 3);
}

TEST(DefaultPreemptionArgsTest, ValidatedInUpstreamsWords) {
  struct Case {
    std::string yaml;
    std::string error;
  } cases[] = {
      {"{minCandidateNodesPercentage: 101}",
       "args.minCandidateNodesPercentage: Invalid value: 101: not in valid "
       "range [0, 100]"},
      {"{minCandidateNodesPercentage: -1}",
       "args.minCandidateNodesPercentage: Invalid value: -1: not in valid "
       "range [0, 100]"},
      {"{minCandidateNodesAbsolute: -1}",
       "args.minCandidateNodesAbsolute: Invalid value: -1: not in valid "
       "range [0, inf)"},
      {"{minCandidateNodesPercentage: 0, minCandidateNodesAbsolute: 0}",
       "args.minCandidateNodesPercentage: Invalid value: 0: cannot be zero at "
       "the same time as minCandidateNodesAbsolute"},
      {"{minCandidateNodes: 1}", "minCandidateNodes"},
      {"{kind: InterPodAffinityArgs}", "expected DefaultPreemptionArgs"},
      {"{minCandidateNodesAbsolute: ten}", "minCandidateNodesAbsolute"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<DefaultPreemption::Args> a = Parse(c.yaml);
    ASSERT_FALSE(a.ok()) << c.yaml;
    EXPECT_EQ(a.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(a.status().message()), HasSubstr(c.error))
        << c.yaml;
  }
}

TEST(DefaultPreemptionTest, NumCandidatesAsCalculateNumCandidates) {
  DefaultPreemption defaults;
  EXPECT_EQ(defaults.NumCandidates(5), 5);       // at least 100, at most all
  EXPECT_EQ(defaults.NumCandidates(5000), 500);  // 10%
  DefaultPreemption few({.min_candidate_nodes_percentage = 20,
                         .min_candidate_nodes_absolute = 1});
  EXPECT_EQ(few.NumCandidates(12), 2);
  EXPECT_EQ(few.NumCandidates(4), 1);
  EXPECT_EQ(few.NumCandidates(0), 0);
}

// ------------------------------------------------------------ building blocks

pb::VictimPod Victim(std::string name, int32_t priority, int64_t milli_cpu,
                     std::optional<int64_t> start_seconds = std::nullopt) {
  pb::VictimPod v;
  v.set_namespace_("default");
  v.set_name(std::move(name));
  v.set_priority(priority);
  if (milli_cpu != 0) {
    v.mutable_requests()->set_milli_cpu(milli_cpu);
    v.mutable_non_zero_requests()->set_milli_cpu(milli_cpu);
  }
  if (start_seconds.has_value()) {
    v.set_start_time_unix_nanos(*start_seconds * kSecond);
  }
  return v;
}

pb::VictimPod Labelled(pb::VictimPod v, const std::string& k,
                       const std::string& value) {
  (*v.mutable_labels())[k] = value;
  return v;
}

pb::DisruptionBudget Budget(const std::string& app, int32_t allowed) {
  pb::DisruptionBudget b;
  b.set_namespace_("default");
  b.set_name(absl::StrCat(app, "-pdb"));
  (*b.mutable_selector()->mutable_match_labels())["app"] = app;
  b.set_disruptions_allowed(allowed);
  return b;
}

// A node of `cpu` millicores whose pods (the victims plus `other_cpu` of
// pods that stay) use it all unless `free` says otherwise.
pb::PreemptionNode Node(const std::string& name, int64_t cpu,
                        std::vector<pb::VictimPod> victims,
                        int64_t other_cpu = 0) {
  pb::PreemptionNode n;
  int64_t used = other_cpu;
  for (const pb::VictimPod& v : victims) used += v.requests().milli_cpu();
  *n.mutable_node() = MakeNode()
                          .Name(name)
                          .Capacity(cpu, int64_t{16} << 30, 110)
                          .Requested(used, 0)
                          .PodCount(static_cast<int32_t>(victims.size()))
                          .Obj();
  for (pb::VictimPod& v : victims) *n.add_pods() = std::move(v);
  return n;
}

class PreemptTest : public ::testing::Test {
 protected:
  void Load(const std::string& profile_yaml = "") {
    absl::StatusOr<model::SchedulerConfig> cfg = model::ParseSchedulerConfig(
        "apiVersion: kubescheduler.config.k8s.io/v1\n"
        "kind: KubeSchedulerConfiguration\n" +
        profile_yaml);
    ASSERT_TRUE(cfg.ok()) << cfg.status();
    absl::StatusOr<std::unique_ptr<framework::ProfileSet>> set =
        framework::BuildProfileSet(*std::move(cfg), DefaultRegistry());
    ASSERT_TRUE(set.ok()) << set.status();
    set_ = *std::move(set);
    profile_ = set_->profiles.begin()->second.get();
  }
  void SetUp() override { Load(); }

  // A request for a pod of priority 100 asking for `cpu` millicores.
  pb::PreemptRequest Request(int64_t cpu, std::vector<pb::PreemptionNode> nodes,
                             int32_t num_nodes = -1) {
    pb::PreemptRequest req;
    req.set_profile(profile_->scheduler_name());
    *req.mutable_pod() = MakePod().Name("p").Req(cpu, 0).Obj();
    req.mutable_pod()->set_priority(100);
    for (pb::PreemptionNode& n : nodes) *req.add_nodes() = std::move(n);
    req.set_num_potential_nodes(req.nodes_size());
    req.set_num_nodes(num_nodes < 0 ? req.nodes_size() : num_nodes);
    return req;
  }

  absl::StatusOr<PostFilterResult> Run(const pb::PreemptRequest& req) {
    return profile_->RunPostFilter(req, kNow);
  }

  // The chosen node's name and its victims' names.
  static std::pair<std::string, std::vector<std::string>> Chosen(
      const pb::PreemptRequest& req, const PostFilterResult& r) {
    if (r.chosen < 0) return {};
    const Candidate& c = r.candidates[r.chosen];
    std::vector<std::string> names;
    for (int v : c.victims) names.push_back(req.nodes(c.node).pods(v).name());
    return {req.nodes(c.node).node().name(), names};
  }

  std::unique_ptr<framework::ProfileSet> set_;
  const framework::Profile* profile_ = nullptr;
};

// ------------------------------------------------------------------ the plugin

TEST_F(PreemptTest, DefaultProfileRunsItAtPostFilter) {
  EXPECT_THAT(framework::ProfilePeer::PluginNames(
                  *profile_, model::ExtensionPoint::kPostFilter),
              ElementsAre("DefaultPreemption"));
  bool found = false;
  for (const auto& info : profile_->Describe()) {
    if (info.name != "DefaultPreemption") continue;
    found = true;
    EXPECT_THAT(info.extension_points, ElementsAre("PostFilter"));
    EXPECT_THAT(info.events, IsEmpty());
  }
  EXPECT_TRUE(found);
}

// Remove every lower-priority pod, then add back the most important first
// while the pod still fits: the fewest, least important victims.
TEST_F(PreemptTest, ReprievesMostImportantFirst) {
  pb::PreemptRequest req = Request(
      2000, {Node("n1", 4000,
                  {Victim("low", 1, 1000, 10), Victim("high", 5, 1000, 20),
                   Victim("mid", 3, 2000, 30)})});
  absl::StatusOr<PostFilterResult> r = Run(req);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->status.code, Code::kSuccess);
  EXPECT_THAT(r->status.reasons,
              ElementsAre("preemption: found a potential placement for pod "
                          "on node n1, preempting 1 victims"));
  EXPECT_EQ(Chosen(req, *r),
            (std::pair<std::string, std::vector<std::string>>{"n1", {"mid"}}));
  const Candidate& c = r->candidates[0];
  EXPECT_EQ(c.highest_priority, 3);
  EXPECT_EQ(c.sum_priorities, 3 + (int64_t{1} << 31));
  EXPECT_EQ(c.earliest_start_of_highest_unix_nanos, 30 * kSecond);
  EXPECT_EQ(c.pdb_violations, 0);
}

// Equal priorities: the pod that started earlier is more important, and one
// without a start time started "now".
TEST_F(PreemptTest, EqualPrioritiesReprieveTheOlderFirst) {
  pb::PreemptRequest req = Request(
      1000, {Node("n1", 2000,
                  {Victim("new", 1, 1000, 50), Victim("old", 1, 1000, 10)})});
  absl::StatusOr<PostFilterResult> r = Run(req);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Chosen(req, *r).second, std::vector<std::string>{"new"});

  req = Request(
      1000, {Node("n1", 2000,
                  {Victim("unstarted", 1, 1000), Victim("old", 1, 1000, 10)})});
  r = Run(req);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Chosen(req, *r).second, std::vector<std::string>{"unstarted"});
  EXPECT_EQ(r->candidates[0].earliest_start_of_highest_unix_nanos,
            absl::ToUnixNanos(kNow));
}

// Pods whose eviction would violate a budget are added back first, so other
// pods go instead when that is enough; victims that do violate one count.
TEST_F(PreemptTest, BudgetsAreSparedFirstAndCounted) {
  pb::PreemptRequest req = Request(
      1000, {Node("n1", 2000,
                  {Labelled(Victim("guarded", 1, 1000, 10), "app", "db"),
                   Labelled(Victim("free", 5, 1000, 20), "app", "web")})});
  *req.add_pdbs() = Budget("db", 0);
  absl::StatusOr<PostFilterResult> r = Run(req);
  ASSERT_TRUE(r.ok()) << r.status();
  // Without the budget "guarded" (priority 1) would go; with it, "free".
  EXPECT_EQ(Chosen(req, *r).second, std::vector<std::string>{"free"});
  EXPECT_EQ(r->candidates[0].pdb_violations, 0);

  // Both must go: the guarded one violates.
  req = Request(2000,
                {Node("n1", 2000,
                      {Labelled(Victim("guarded", 1, 1000, 10), "app", "db"),
                       Labelled(Victim("free", 5, 1000, 20), "app", "web")})});
  *req.add_pdbs() = Budget("db", 0);
  r = Run(req);
  ASSERT_TRUE(r.ok()) << r.status();
  // Most important first again after the two passes.
  EXPECT_EQ(Chosen(req, *r).second,
            (std::vector<std::string>{"free", "guarded"}));
  EXPECT_EQ(r->candidates[0].pdb_violations, 1);
}

TEST(DefaultPreemptionBudgetTest, ViolatesBudgetsAsUpstream) {
  pb::VictimPod a = Labelled(Victim("a", 1, 0), "app", "db");
  pb::VictimPod b = Labelled(Victim("b", 1, 0), "app", "db");
  pb::VictimPod c = Labelled(Victim("c", 1, 0), "app", "db");
  pb::VictimPod other_ns = Labelled(Victim("d", 1, 0), "app", "db");
  other_ns.set_namespace_("other");
  pb::VictimPod unlabelled = Victim("e", 1, 0);
  std::vector<const pb::VictimPod*> pods = {&a, &b, &c, &other_ns, &unlabelled};
  // One disruption allowed: the first matching pod spends it.
  google::protobuf::RepeatedPtrField<pb::DisruptionBudget> pdbs;
  *pdbs.Add() = Budget("db", 1);
  EXPECT_THAT(DefaultPreemption::ViolatesBudgets(pods, pdbs),
              ElementsAre(false, true, true, false, false));
  // A pod the disruption controller already counts spends nothing.
  pdbs[0].add_disrupted_pods("a");
  EXPECT_THAT(DefaultPreemption::ViolatesBudgets(pods, pdbs),
              ElementsAre(false, false, true, false, false));
  // No selector, or an empty one, selects no pod.
  pdbs[0].clear_selector();
  EXPECT_THAT(DefaultPreemption::ViolatesBudgets(pods, pdbs),
              ElementsAre(false, false, false, false, false));
  pdbs[0].mutable_selector();
  EXPECT_THAT(DefaultPreemption::ViolatesBudgets(pods, pdbs),
              ElementsAre(false, false, false, false, false));
}

// ------------------------------------------------------------- the search

// No candidate: upstream's FitError over the dry run, every node not sent
// counted as one where preemption does not help.
TEST_F(PreemptTest, NoCandidateIsAFitErrorOverTheDryRun) {
  pb::PreemptRequest req =
      Request(3000,
              {Node("small", 2000, {Victim("v", 1, 1000)}, 1000),
               Node("nothing-lower", 4000, {}, 4000)},
              /*num_nodes=*/5);
  absl::StatusOr<PostFilterResult> r = Run(req);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->status.code, Code::kUnschedulable);
  EXPECT_EQ(r->status.plugin, "DefaultPreemption");
  EXPECT_THAT(r->status.reasons,
              ElementsAre("preemption: 0/5 nodes are available: 1 "
                          "Insufficient cpu, 1 No preemption victims found "
                          "for incoming pod, 3 Preemption is not helpful for "
                          "scheduling."));
  EXPECT_EQ(r->chosen, -1);
  EXPECT_THAT(r->candidates, IsEmpty());

  // No potential node at all.
  req = Request(1000, {}, /*num_nodes=*/2);
  r = Run(req);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(r->status.reasons,
              ElementsAre("preemption: 0/2 nodes are available: 2 Preemption "
                          "is not helpful for scheduling."));
}

TEST_F(PreemptTest, NotEligible) {
  pb::PreemptRequest req =
      Request(1000, {Node("n1", 1000, {Victim("v", 1, 1000)})});
  req.mutable_pod()->set_preemption_policy("Never");
  absl::StatusOr<PostFilterResult> r = Run(req);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->status.code, Code::kUnschedulable);
  EXPECT_THAT(r->status.reasons, ElementsAre("preemption: not eligible due to "
                                             "preemptionPolicy=Never."));

  req.mutable_pod()->set_preemption_policy("PreemptLowerPriority");
  req.set_nominated_node_name("n1");
  pb::VictimPod* leaving = req.add_nominated_node_pods();
  *leaving = Victim("leaving", 1, 1000);
  r = Run(req);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->status.code, Code::kSuccess);  // not terminating yet
  leaving->set_terminating(true);
  r = Run(req);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(r->status.reasons,
              ElementsAre("preemption: not eligible due to a terminating pod "
                          "on the nominated node."));
}

// pickOneNodeForPreemption's criteria, in order; ties go to the first.
TEST(PickOneNodeTest, CriteriaInUpstreamsOrder) {
  auto cand = [](int node, int32_t pdb, int32_t high, int64_t sum, int victims,
                 int64_t start) {
    Candidate c;
    c.node = node;
    c.pdb_violations = pdb;
    c.highest_priority = high;
    c.sum_priorities = sum;
    c.victims.assign(victims, 0);
    c.earliest_start_of_highest_unix_nanos = start;
    return c;
  };
  using framework::PickOneNodeForPreemption;
  EXPECT_EQ(PickOneNodeForPreemption({}), -1);
  EXPECT_EQ(PickOneNodeForPreemption(
                {cand(0, 1, 0, 0, 1, 0), cand(1, 0, 9, 9, 9, 0)}),
            1);  // fewer PDB violations first
  EXPECT_EQ(PickOneNodeForPreemption(
                {cand(0, 0, 5, 1, 1, 0), cand(1, 0, 3, 9, 9, 0)}),
            1);  // then the lower highest priority
  EXPECT_EQ(PickOneNodeForPreemption(
                {cand(0, 0, 3, 9, 1, 0), cand(1, 0, 3, 8, 9, 0)}),
            1);  // then the lower sum
  EXPECT_EQ(PickOneNodeForPreemption(
                {cand(0, 0, 3, 8, 2, 0), cand(1, 0, 3, 8, 1, 0)}),
            1);  // then fewer victims
  EXPECT_EQ(PickOneNodeForPreemption(
                {cand(0, 0, 3, 8, 1, 5), cand(1, 0, 3, 8, 1, 7)}),
            1);  // then the later start
  EXPECT_EQ(PickOneNodeForPreemption(
                {cand(0, 0, 3, 8, 1, 7), cand(1, 0, 3, 8, 1, 7)}),
            0);  // then the first
}

TEST_F(PreemptTest, PicksAcrossNodes) {
  pb::PreemptRequest req =
      Request(1000, {Node("higher", 1000, {Victim("a", 50, 1000, 1)}),
                     Node("lower", 1000, {Victim("b", 10, 1000, 1)}),
                     Node("two-lower", 2000,
                          {Victim("c", 5, 1000, 1), Victim("d", 5, 1000, 2)})});
  absl::StatusOr<PostFilterResult> r = Run(req);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->candidates.size(), 3u);
  // two-lower frees 1000m with one victim (d, the younger), priority 5.
  EXPECT_EQ(Chosen(req, *r), (std::pair<std::string, std::vector<std::string>>{
                                 "two-lower", {"d"}}));
  EXPECT_THAT(r->status.reasons,
              ElementsAre("preemption: found a potential placement for pod "
                          "on node two-lower, preempting 1 victims"));
}

// With few candidates wanted, the search stops once it has them and one of
// them violates no budget; each list keeps at most that many.
TEST_F(PreemptTest, StopsEarlyAsDryRunPreemption) {
  Load(R"(profiles:
- pluginConfig:
  - name: DefaultPreemption
    args: {minCandidateNodesPercentage: 0, minCandidateNodesAbsolute: 1}
)");
  auto guarded = [](const std::string& node, int32_t priority) {
    return Node(
        node, 1000,
        {Labelled(Victim(node + "-v", priority, 1000, 1), "app", "db")});
  };
  pb::PreemptRequest req =
      Request(1000, {guarded("v1", 1), guarded("v2", 2),
                     Node("free", 1000, {Victim("f", 50, 1000, 1)}),
                     Node("better", 1000, {Victim("g", 1, 1000, 1)})});
  *req.add_pdbs() = Budget("db", 0);
  absl::StatusOr<PostFilterResult> r = Run(req);
  ASSERT_TRUE(r.ok()) << r.status();
  // v1 is kept (one violating candidate at most), v2 dropped, "free" stops
  // the search before "better".
  ASSERT_EQ(r->candidates.size(), 2u);
  EXPECT_EQ(r->candidates[0].node, 0);
  EXPECT_EQ(r->candidates[1].node, 2);
  EXPECT_EQ(Chosen(req, *r).first, "free");
  EXPECT_FALSE(r->partial);

  // Potential nodes left out: an answer that stopped is whole, one that
  // passed every node sent without stopping is partial; with every node
  // sent it is whole again.
  req.set_num_nodes(req.nodes_size() + 3);
  req.set_num_potential_nodes(req.nodes_size() + 3);
  r = Run(req);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->partial);
  req.mutable_nodes()->DeleteSubrange(2, 2);  // v1, v2: no stop
  r = Run(req);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->partial);
  req.set_num_potential_nodes(req.nodes_size());
  r = Run(req);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->partial);
}

// A victim's host port is freed with it.
TEST_F(PreemptTest, HostPortsAreFreedWithTheirPods) {
  pb::PreemptionNode n = Node("n1", 4000, {Victim("holder", 1, 100, 1)});
  pb::HostPort* used = n.mutable_node()->add_used_ports();
  used->set_port(8080);
  used->set_protocol("TCP");
  pb::HostPort* port = n.mutable_pods(0)->add_ports();
  port->set_port(8080);
  port->set_protocol("TCP");
  pb::PreemptRequest req = Request(100, {n});
  pb::ContainerPort* want =
      req.mutable_pod()->mutable_containers(0)->add_ports();
  want->set_host_port(8080);
  absl::StatusOr<PostFilterResult> r = Run(req);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Chosen(req, *r).second, std::vector<std::string>{"holder"});
}

// NodeVolumeLimits: a node at its CSI limit is a candidate once the pods
// using a volume there are all removed, unless a VolumeAttachment still
// names the volume.
TEST_F(PreemptTest, AttachSlotsAreFreedWithTheirPods) {
  const auto request = [this](bool attached) {
    pb::PreemptionNode n =
        Node("n1", 4000,
             {Victim("holder", 1, 100, 1), Victim("bystander", 2, 100, 1)});
    pb::CsiDriverUse* d = n.mutable_node()->add_csi_drivers();
    d->set_name("csi.example.com");
    d->set_limit(1);
    d->set_attached(1);
    pb::CandidateCsiVolume* v = n.add_csi_volumes();
    v->set_driver("csi.example.com");
    v->set_pods(1);
    if (attached) v->set_attacher("csi.example.com");
    n.mutable_pods(0)->add_csi_volumes(0);
    pb::PreemptRequest req = Request(100, {n});
    pb::Pod* pod = req.mutable_pod();
    pod->set_namespace_("default");
    pod->add_volume_claims()->set_claim_name("data");
    pb::ClaimState* c = pod->mutable_volumes()->add_claims();
    c->set_name("data");
    c->set_found(true);
    c->set_phase("Bound");
    c->set_volume_name("pv-data");
    c->set_bind_completed(true);
    pod->mutable_volumes()->add_volumes()->set_name("pv-data");
    pod->mutable_volumes()->add_attachable()->set_driver("csi.example.com");
    return req;
  };
  pb::PreemptRequest req = request(false);
  absl::StatusOr<PostFilterResult> r = Run(req);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Chosen(req, *r).second, std::vector<std::string>{"holder"});

  req = request(true);
  r = Run(req);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->chosen, -1);
  EXPECT_THAT(r->status.reasons,
              ElementsAre(::testing::HasSubstr("max volume count")));
}

pb::PodAffinityTerm WebOnHostname() {
  pb::PodAffinityTerm t;
  t.set_topology_key("kubernetes.io/hostname");
  pb::LabelSelectorRequirement* r =
      t.mutable_label_selector()->add_match_expressions();
  r->set_key("app");
  r->set_operator_("In");
  r->add_values("web");
  return t;
}

// A request for `incoming` on one node "n1" (hostname label, room for any
// pod) whose only lower-priority pod is `victim`.
pb::PreemptRequest OneNode(const framework::Profile& profile, pb::Pod incoming,
                           pb::VictimPod victim) {
  pb::PreemptRequest req;
  req.set_profile(profile.scheduler_name());
  incoming.set_priority(100);
  *req.mutable_pod() = std::move(incoming);
  pb::PreemptionNode* n = req.add_nodes();
  *n->mutable_node() = MakeNode()
                           .Name("n1")
                           .Label("kubernetes.io/hostname", "n1")
                           .PodCount(1)
                           .Obj();
  *n->add_pods() = std::move(victim);
  req.set_num_nodes(1);
  req.set_num_potential_nodes(1);
  return req;
}

// A lower-priority pod matching the incoming pod's required anti-affinity
// (counted in the plan's query on its node) is a victim: removing it lowers
// the count in the node's domain and the cluster's total.
TEST_F(PreemptTest, PlanQueriesFollowTheRemovedPods) {
  pb::Pod incoming = MakePod().Name("p").Obj();
  *incoming.mutable_pod_anti_affinity()->add_required() = WebOnHostname();
  ASSERT_EQ(profile_->Plan(incoming).queries_size(), 1);
  pb::PreemptRequest req = OneNode(
      *profile_, incoming, Labelled(Victim("web-0", 1, 0, 1), "app", "web"));
  // The shim's answer: one matching pod, on n1.
  req.mutable_cluster()->add_answers()->set_total(1);
  req.mutable_nodes(0)->mutable_node()->add_query_counts(1);

  // Without saying the victim is counted, the node never fits.
  absl::StatusOr<PostFilterResult> r = Run(req);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(r->status.reasons,
              ElementsAre("preemption: 0/1 nodes are available: 1 node(s) "
                          "didn't match pod anti-affinity rules."));

  pb::VictimPod* v = req.mutable_nodes(0)->mutable_pods(0);
  v->add_matched_queries(0);
  r = Run(req);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Chosen(req, *r).second, std::vector<std::string>{"web-0"});

  // More pods counted than the node's count is bad input.
  v->add_matched_queries(0);
  r = Run(req);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(r.status().message()),
              HasSubstr("nodes[0].pods[0].matched_queries[1]"));
}

// An existing pod's required anti-affinity term that matches the incoming
// pod goes away with the pod carrying it (term_counts, existing total).
TEST_F(PreemptTest, ExistingTermsFollowTheRemovedPods) {
  pb::Pod incoming = MakePod().Name("p").Label("app", "web").Obj();
  ASSERT_EQ(profile_->Plan(incoming).queries_size(), 0);
  pb::PreemptRequest req =
      OneNode(*profile_, incoming, Victim("loner", 1, 0, 1));
  pb::ExistingTerm* e = req.mutable_cluster()->add_existing_terms();
  e->set_kind(pb::TERM_KIND_REQUIRED_ANTI_AFFINITY);
  *e->mutable_term() = WebOnHostname();
  e->set_namespace_("default");
  e->set_total(1);
  pb::TermCount* tc = req.mutable_nodes(0)->mutable_node()->add_term_counts();
  tc->set_term(0);
  tc->set_count(1);

  absl::StatusOr<PostFilterResult> r = Run(req);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(r->status.reasons,
              ElementsAre(HasSubstr("existing pods anti-affinity rules")));

  pb::VictimPod* v = req.mutable_nodes(0)->mutable_pods(0);
  v->add_terms(0);
  r = Run(req);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Chosen(req, *r).second, std::vector<std::string>{"loner"});

  v->set_terms(0, 7);
  r = Run(req);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(std::string(r.status().message()),
              HasSubstr("nodes[0].pods[0].terms[0]: 7 is not an index"));
}

TEST_F(PreemptTest, BadRequestsNameTheField) {
  struct Case {
    std::string what;
    std::function<void(pb::PreemptRequest&)> edit;
    std::string error;
  } cases[] = {
      {"equal priority",
       [](pb::PreemptRequest& r) {
         r.mutable_nodes(0)->mutable_pods(0)->set_priority(100);
       },
       "nodes[0].pods[0].priority: 100 is not lower than the pod's (100)"},
      {"query index",
       [](pb::PreemptRequest& r) {
         r.mutable_nodes(0)->mutable_pods(0)->add_matched_queries(0);
       },
       "nodes[0].pods[0].matched_queries[0]: 0 is not an index"},
      {"negative request",
       [](pb::PreemptRequest& r) {
         r.mutable_nodes(0)->mutable_pods(0)->mutable_requests()->set_memory(
             -1);
       },
       "nodes[0].pods[0].requests.memory: -1 is negative"},
      {"budget", [](pb::PreemptRequest& r) { *r.add_pdbs() = Budget("x", -1); },
       "pdbs[0].disruptions_allowed: -1 is negative"},
      {"potential nodes",
       [](pb::PreemptRequest& r) { r.set_num_potential_nodes(0); },
       "num_potential_nodes: 0 is less than the 1 nodes sent"},
      {"all nodes", [](pb::PreemptRequest& r) { r.set_num_nodes(-1); },
       "num_nodes: -1 is negative"},
      {"pod name",
       [](pb::PreemptRequest& r) {
         r.mutable_nodes(0)->mutable_pods(0)->clear_name();
       },
       "nodes[0].pods[0].name is required"},
  };
  for (const Case& c : cases) {
    pb::PreemptRequest req =
        Request(1000, {Node("n1", 1000, {Victim("v", 1, 1000)})});
    c.edit(req);
    absl::StatusOr<PostFilterResult> r = Run(req);
    ASSERT_FALSE(r.ok()) << c.what;
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << c.what;
    EXPECT_THAT(std::string(r.status().message()), HasSubstr(c.error))
        << c.what;
  }
}

TEST_F(PreemptTest, ProfileWithoutPostFilterRefuses) {
  Load(R"(profiles:
- plugins:
    multiPoint:
      disabled:
      - name: DefaultPreemption
)");
  EXPECT_THAT(framework::ProfilePeer::PluginNames(
                  *profile_, model::ExtensionPoint::kPostFilter),
              IsEmpty());
  absl::StatusOr<PostFilterResult> r =
      Run(Request(1000, {Node("n1", 1000, {Victim("v", 1, 1000)})}));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(r.status().message()),
              HasSubstr("runs no PostFilter plugin"));
}

}  // namespace
}  // namespace kscore::plugins
