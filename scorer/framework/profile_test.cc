#include "scorer/framework/profile.h"

#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scorer/framework/profile_set.h"
#include "scorer/plugins/registry.h"
#include "scorer/testing/profile_peer.h"
#include "scorer/testing/wrappers.h"

namespace kscore::framework {
namespace {

using ::kscore::testing::MakeNode;
using ::kscore::testing::MakePod;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr char kHeader[] =
    "apiVersion: kubescheduler.config.k8s.io/v1\n"
    "kind: KubeSchedulerConfiguration\n";

absl::StatusOr<std::unique_ptr<ProfileSet>> Build(
    const std::string& body,
    const Registry& registry = plugins::DefaultRegistry()) {
  absl::StatusOr<model::SchedulerConfig> cfg =
      model::ParseSchedulerConfig(kHeader + body);
  if (!cfg.ok()) return cfg.status();
  return BuildProfileSet(*std::move(cfg), registry);
}

const Profile& Only(const ProfileSet& set) {
  return *set.profiles.begin()->second;
}

std::vector<std::pair<std::string, int32_t>> Weights(const Profile& p) {
  std::vector<std::pair<std::string, int32_t>> out;
  for (const std::string& n :
       ProfilePeer::PluginNames(p, model::ExtensionPoint::kScore)) {
    out.emplace_back(n, p.WeightOf(n));
  }
  return out;
}

using W = std::pair<std::string, int32_t>;

TEST(ProfileTest, DefaultProfileHasKubeSchedulersPluginsAndWeights) {
  auto set = Build("");
  ASSERT_TRUE(set.ok()) << set.status();
  const Profile& p = Only(**set);
  EXPECT_EQ(p.scheduler_name(), "default-scheduler");
  EXPECT_THAT(ProfilePeer::PluginNames(p, model::ExtensionPoint::kFilter),
              ElementsAre("NodeName", "NodeUnschedulable", "TaintToleration",
                          "NodeAffinity", "NodePorts", "NodeResourcesFit",
                          "VolumeRestrictions", "NodeVolumeLimits",
                          "VolumeBinding", "VolumeZone", "PodTopologySpread",
                          "InterPodAffinity", "NodeDeclaredFeatures"));
  EXPECT_THAT(Weights(p),
              ElementsAre(W{"TaintToleration", 3}, W{"NodeAffinity", 2},
                          W{"NodeResourcesFit", 1}, W{"VolumeBinding", 1},
                          W{"PodTopologySpread", 2}, W{"InterPodAffinity", 2},
                          W{"NodeResourcesBalancedAllocation", 1},
                          W{"ImageLocality", 1}));
  // InterPodAffinity reads the labels of the pod's namespace;
  // PodTopologySpread's default constraints select the pod's Services and
  // controller; ImageLocality reads the images; the volume plugins the
  // claims.
  EXPECT_THAT(p.pod_data(),
              ElementsAre(pb::POD_DATA_NAMESPACE_LABELS,
                          pb::POD_DATA_WORKLOAD_SELECTORS, pb::POD_DATA_IMAGES,
                          pb::POD_DATA_VOLUMES));
  EXPECT_TRUE(p.plans());
}

TEST(ProfileTest, Stage1AddsConcentrateAfterDefaultsWithItsPreScore) {
  auto set = Build(R"(
profiles:
- schedulerName: concentrate-scheduler
  plugins:
    score:
      enabled:
      - name: Concentrate
        weight: 10
  pluginConfig:
  - name: Concentrate
    args: {labelKey: app}
)");
  ASSERT_TRUE(set.ok()) << set.status();
  const Profile& p = Only(**set);
  EXPECT_THAT(Weights(p),
              ElementsAre(W{"TaintToleration", 3}, W{"NodeAffinity", 2},
                          W{"NodeResourcesFit", 1}, W{"VolumeBinding", 1},
                          W{"PodTopologySpread", 2}, W{"InterPodAffinity", 2},
                          W{"NodeResourcesBalancedAllocation", 1},
                          W{"ImageLocality", 1}, W{"Concentrate", 10}));
  EXPECT_THAT(ProfilePeer::PluginNames(p, model::ExtensionPoint::kPreScore),
              ::testing::Contains("Concentrate"));
  // Enabled at score only: it does not filter.
  EXPECT_THAT(ProfilePeer::PluginNames(p, model::ExtensionPoint::kFilter),
              ::testing::Not(::testing::Contains("Concentrate")));
  EXPECT_THAT(p.label_count_keys(), ElementsAre("app"));
}

TEST(ProfileTest, ExplicitScoreEntryOverridesDefaultWeightAndComesFirst) {
  auto set = Build(R"(
profiles:
- plugins:
    score:
      enabled:
      - name: NodeResourcesFit
        weight: 5
)");
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_THAT(Weights(Only(**set)),
              ElementsAre(W{"NodeResourcesFit", 5}, W{"TaintToleration", 3},
                          W{"NodeAffinity", 2}, W{"VolumeBinding", 1},
                          W{"PodTopologySpread", 2}, W{"InterPodAffinity", 2},
                          W{"NodeResourcesBalancedAllocation", 1},
                          W{"ImageLocality", 1}));
}

TEST(ProfileTest, ZeroOrMissingWeightMeansOne) {
  auto set = Build(R"(
profiles:
- plugins:
    score:
      enabled:
      - name: Concentrate
        weight: 0
)");
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_EQ(Only(**set).WeightOf("Concentrate"), 1);
}

TEST(ProfileTest, MultiPointEnablesEveryPointItImplements) {
  auto set = Build(R"(
profiles:
- plugins:
    multiPoint:
      enabled:
      - name: Concentrate
        weight: 7
)");
  ASSERT_TRUE(set.ok()) << set.status();
  const Profile& p = Only(**set);
  EXPECT_THAT(ProfilePeer::PluginNames(p, model::ExtensionPoint::kFilter),
              ::testing::Contains("Concentrate"));
  EXPECT_THAT(ProfilePeer::PluginNames(p, model::ExtensionPoint::kPreScore),
              ::testing::Contains("Concentrate"));
  EXPECT_EQ(p.WeightOf("Concentrate"), 7);
}

TEST(ProfileTest, ScoreWeightWinsOverMultiPointWeight) {
  auto set = Build(R"(
profiles:
- plugins:
    multiPoint:
      enabled:
      - name: Concentrate
        weight: 7
    score:
      enabled:
      - name: Concentrate
        weight: 2
)");
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_EQ(Only(**set).WeightOf("Concentrate"), 2);
}

TEST(ProfileTest, DisableAllAtScoreKeepsOnlyExplicitOnes) {
  auto set = Build(R"(
profiles:
- plugins:
    score:
      disabled:
      - name: "*"
      enabled:
      - name: Concentrate
        weight: 10
)");
  ASSERT_TRUE(set.ok()) << set.status();
  const Profile& p = Only(**set);
  EXPECT_THAT(Weights(p), ElementsAre(W{"Concentrate", 10}));
  // Filters are untouched.
  EXPECT_THAT(ProfilePeer::PluginNames(p, model::ExtensionPoint::kFilter),
              ::testing::Contains("NodeResourcesFit"));
}

TEST(ProfileTest, DisabledAtMultiPointIsGoneEverywhere) {
  auto set = Build(R"(
profiles:
- plugins:
    multiPoint:
      disabled:
      - name: NodeResourcesFit
)");
  ASSERT_TRUE(set.ok()) << set.status();
  const Profile& p = Only(**set);
  EXPECT_THAT(ProfilePeer::PluginNames(p, model::ExtensionPoint::kFilter),
              ::testing::Not(::testing::Contains("NodeResourcesFit")));
  EXPECT_EQ(p.WeightOf("NodeResourcesFit"), 0);
}

TEST(ProfileTest, DisabledAtScoreStillFilters) {
  auto set = Build(R"(
profiles:
- plugins:
    score:
      disabled:
      - name: TaintToleration
)");
  ASSERT_TRUE(set.ok()) << set.status();
  const Profile& p = Only(**set);
  EXPECT_THAT(ProfilePeer::PluginNames(p, model::ExtensionPoint::kFilter),
              ::testing::Contains("TaintToleration"));
  EXPECT_THAT(ProfilePeer::PluginNames(p, model::ExtensionPoint::kScore),
              ::testing::Not(::testing::Contains("TaintToleration")));
}

TEST(ProfileTest, UnimplementedDefaultPluginNamedExplicitlyIsAWarning) {
  auto set = Build(R"(
profiles:
- plugins:
    score:
      enabled:
      - name: DynamicResources
        weight: 2
)");
  ASSERT_TRUE(set.ok()) << set.status();
  ASSERT_EQ((*set)->warnings.size(), 1u);
  EXPECT_THAT((*set)->warnings[0], HasSubstr("DynamicResources"));
}

// kube-scheduler's default plugins at the points the scorer does not run:
// the shim does PrioritySort's, SchedulingGates' and DefaultBinder's jobs,
// so naming them there loads; disabling what kscore does not run loads too;
// and pluginConfig that restates kube-scheduler's defaulted args (as a dump
// of its effective configuration does) is accepted for plugins not run.
TEST(ProfileTest, UpstreamDefaultsAtPointsNotRunLoad) {
  auto set = Build(R"(
profiles:
- schedulerName: upstream-like
  plugins:
    preEnqueue:
      enabled:
      - name: SchedulingGates
    queueSort:
      enabled:
      - name: PrioritySort
    bind:
      enabled:
      - name: DefaultBinder
    postFilter:
      disabled:
      - name: DefaultPreemption
    reserve:
      disabled:
      - name: "*"
    placementGenerate: {}
    multiPoint:
      disabled:
      - name: DefaultPreemption
  pluginConfig:
  - name: DefaultPreemption
    args:
      apiVersion: kubescheduler.config.k8s.io/v1
      kind: DefaultPreemptionArgs
      minCandidateNodesAbsolute: 100
      minCandidateNodesPercentage: 10
  - name: InterPodAffinity
    args: {hardPodAffinityWeight: 1, ignorePreferredTermsOfExistingPods: false}
  - name: PodTopologySpread
    args: {defaultingType: System}
  - name: VolumeBinding
    args:
      bindTimeoutSeconds: 600
      shape:
      - utilization: 0
        score: 10
      - utilization: 100
        score: 0
  - name: DynamicResources
    args: {filterTimeout: 10s}
  - name: DefaultBinder
    args: {kind: DefaultBinderArgs}
)");
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_THAT((*set)->warnings, ::testing::IsEmpty());
}

// DefaultPreemption runs at postFilter, as in kube-scheduler's defaults
// (multiPoint) or named there, with its args; ListProfiles says so, and
// disabling it at postFilter leaves a profile that does not preempt.
TEST(ProfileTest, DefaultPreemptionRunsAtPostFilter) {
  auto set = Build(R"(
profiles:
- schedulerName: a
- schedulerName: b
  plugins:
    multiPoint:
      disabled:
      - name: DefaultPreemption
    postFilter:
      enabled:
      - name: DefaultPreemption
  pluginConfig:
  - name: DefaultPreemption
    args: {minCandidateNodesPercentage: 50, minCandidateNodesAbsolute: 0}
- schedulerName: c
  plugins:
    postFilter:
      disabled:
      - name: "*"
)");
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_THAT((*set)->warnings, ::testing::IsEmpty());
  for (const char* name : {"a", "b"}) {
    const Profile& p = *(*set)->Find(name);
    EXPECT_TRUE(p.post_filters()) << name;
    EXPECT_THAT(ProfilePeer::PluginNames(p, model::ExtensionPoint::kPostFilter),
                ElementsAre("DefaultPreemption"));
    bool listed = false;
    for (const Profile::PluginInfo& info : p.Describe()) {
      if (info.name != "DefaultPreemption") continue;
      listed = true;
      EXPECT_THAT(info.extension_points, ElementsAre("PostFilter"));
    }
    EXPECT_TRUE(listed) << name;
  }
  EXPECT_FALSE((*set)->Find("c")->post_filters());
}

// Disabling a plugin whose job the shim does changes nothing, and says so.
TEST(ProfileTest, DisablingWhatTheShimDoesIsAWarning) {
  auto set = Build(R"(
profiles:
- plugins:
    queueSort:
      disabled:
      - name: PrioritySort
    multiPoint:
      disabled:
      - name: DefaultBinder
)");
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_THAT(
      (*set)->warnings,
      ElementsAre(HasSubstr("profiles[0].plugins.queueSort: PrioritySort is "
                            "not enabled, but kscore works as if it were"),
                  HasSubstr("profiles[0].plugins.bind: DefaultBinder is not "
                            "enabled, but kscore works as if it were")));
}

// Args that differ from kube-scheduler's defaults, for a plugin the scorer
// does not run, would never take effect: refused, naming the field.
TEST(ProfileTest, ArgsOfPluginsNotRunAreRefusedUnlessDefaults) {
  auto set = Build(R"(
profiles:
- pluginConfig:
  - name: DynamicResources
    args:
      filterTimeout: 5s
      bindingTimeout: 10m0s
)");
  ASSERT_FALSE(set.ok());
  EXPECT_THAT(std::string(set.status().message()),
              HasSubstr("profiles[0].pluginConfig[0].args.filterTimeout: "
                        "Invalid value: 5s: kscore does not run plugin "
                        "\"DynamicResources\""));
  set = Build(R"(
profiles:
- pluginConfig:
  - name: InterPodAffinity
    args: {kind: PodTopologySpreadArgs}
)");
  ASSERT_FALSE(set.ok());
  EXPECT_THAT(std::string(set.status().message()),
              HasSubstr("profiles[0].pluginConfig[0].args.kind: expected "
                        "InterPodAffinityArgs, got \"PodTopologySpreadArgs\""));
}

TEST(ProfileTest, DuplicateEnabledPluginIsAnError) {
  auto set = Build(R"(
profiles:
- plugins:
    score:
      enabled:
      - name: Concentrate
      - name: Concentrate
)");
  ASSERT_FALSE(set.ok());
  EXPECT_THAT(std::string(set.status().message()),
              HasSubstr("profiles[0].plugins.score.enabled[1].name: plugin "
                        "\"Concentrate\" already registered as score"));
}

TEST(ProfileTest, PluginConfigForUnknownPluginIsAnError) {
  auto set = Build(R"(
profiles:
- pluginConfig:
  - name: Concentrat
    args: {labelKey: app}
)");
  ASSERT_FALSE(set.ok());
  EXPECT_THAT(
      std::string(set.status().message()),
      HasSubstr(
          "profiles[0].pluginConfig[0].name: unknown plugin \"Concentrat\""));
}

// A score plugin that returns whatever it was built with, to test the
// framework's range check.
class FixedScore : public ScorePlugin {
 public:
  explicit FixedScore(int64_t v) : v_(v) {}
  absl::string_view Name() const override { return "FixedScore"; }
  PluginStatus Score(const CycleState&, const pb::Pod&,
                     absl::Span<const pb::Node* const>,
                     absl::Span<int64_t> scores) const override {
    for (int64_t& s : scores) s = v_;
    return PluginStatus::Success();
  }

 private:
  int64_t v_;
};

TEST(ProfileTest, NormalizedScoreOutOfRangeIsAnErrorNamingThePlugin) {
  Registry r = plugins::DefaultRegistry();
  r.Register(
      "FixedScore",
      [](const model::YamlField&) -> absl::StatusOr<std::unique_ptr<Plugin>> {
        return std::make_unique<FixedScore>(101);
      });
  auto set = Build(R"(
profiles:
- plugins:
    score:
      enabled:
      - name: FixedScore
)",
                   r);
  ASSERT_TRUE(set.ok()) << set.status();
  pb::Pod pod = MakePod().Obj();
  pb::Node node = MakeNode().Name("n").Obj();
  const pb::Node* nodes[] = {&node};
  CycleState state;
  absl::StatusOr<NodeVerdicts> ev =
      Only(**set).Evaluate(state, pod, nodes, true);
  ASSERT_FALSE(ev.ok());
  EXPECT_THAT(
      std::string(ev.status().message()),
      HasSubstr("plugin \"FixedScore\" returns an invalid score 101, it "
                "should in the range of [0, 100] after normalizing"));
}

// A score plugin whose normalisation picks the node named "b".
class FavoursB : public ScorePlugin {
 public:
  absl::string_view Name() const override { return "FavoursB"; }
  PluginStatus Score(const CycleState&, const pb::Pod&,
                     absl::Span<const pb::Node* const>,
                     absl::Span<int64_t> scores) const override {
    for (int64_t& s : scores) s = 0;
    return PluginStatus::Success();
  }
  PluginStatus NormalizeScoreByNode(const CycleState&, const pb::Pod&,
                                    absl::Span<const absl::string_view> nodes,
                                    absl::Span<int64_t> scores) const override {
    if (nodes.empty()) return PluginStatus::Error("no node names");
    for (size_t i = 0; i < scores.size(); ++i) {
      scores[i] = nodes[i] == "b" ? kMaxNodeScore : 0;
    }
    return PluginStatus::Success();
  }
};

TEST(ProfileTest, NormalizeScoreSeesTheNodeNames) {
  Registry r = plugins::DefaultRegistry();
  r.Register(
      "FavoursB",
      [](const model::YamlField&) -> absl::StatusOr<std::unique_ptr<Plugin>> {
        return std::make_unique<FavoursB>();
      });
  auto set = Build(R"(
profiles:
- plugins:
    score:
      disabled:
      - name: "*"
      enabled:
      - name: FavoursB
)",
                   r);
  ASSERT_TRUE(set.ok()) << set.status();
  pb::Pod pod = MakePod().Obj();
  std::vector<pb::Node> nodes = {MakeNode().Name("a").Obj(),
                                 MakeNode().Name("b").Obj(),
                                 MakeNode().Name("c").Obj()};
  std::vector<const pb::Node*> ptrs = {&nodes[0], &nodes[1], &nodes[2]};
  CycleState state;
  absl::StatusOr<NodeVerdicts> ev =
      Only(**set).Evaluate(state, pod, ptrs, true);
  ASSERT_TRUE(ev.ok()) << ev.status();
  EXPECT_THAT(ev->scores.normalized[0], ElementsAre(0, 100, 0));
  // Raw scores normalised without their names (a NormalizeScore request
  // with compact raw scores): the plugin is told so.
  ScoreTable table = ev->scores;
  table.nodes.clear();
  absl::Status s = Only(**set).RunNormalizeScore(state, pod, table);
  EXPECT_THAT(std::string(s.message()), HasSubstr("no node names"));
}

TEST(ProfileTest, EvaluateAppliesWeights) {
  auto set = Build(R"(
profiles:
- plugins:
    score:
      disabled:
      - name: "*"
      enabled:
      - name: Concentrate
        weight: 10
)");
  ASSERT_TRUE(set.ok()) << set.status();
  pb::Pod pod = MakePod().Label("app", "web").Obj();
  std::vector<pb::Node> nodes = {
      MakeNode().Name("a").LabelCount("app", "web", 1).Obj(),
      MakeNode().Name("b").LabelCount("app", "web", 4).Obj()};
  std::vector<const pb::Node*> ptrs = {&nodes[0], &nodes[1]};
  CycleState state;
  absl::StatusOr<NodeVerdicts> ev =
      Only(**set).Evaluate(state, pod, ptrs, true);
  ASSERT_TRUE(ev.ok()) << ev.status();
  EXPECT_THAT(ev->feasible, ElementsAre(0, 1));
  EXPECT_THAT(ev->scores.total, ElementsAre(250, 1000));
  // PreScore's state is in CycleState for a later call.
  EXPECT_TRUE(state.bytes().contains("PreScoreConcentrate"));
}

// With Concentrate's PreScore disabled, its Score reads the pod's own label
// (as the Go reference does) and the cycle succeeds.
TEST(ProfileTest, ConcentrateScoresWithItsPreScoreDisabled) {
  auto set = Build(R"(
profiles:
- plugins:
    preScore:
      disabled:
      - name: Concentrate
    score:
      disabled:
      - name: "*"
      enabled:
      - name: Concentrate
        weight: 10
)");
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_THAT(
      ProfilePeer::PluginNames(Only(**set), model::ExtensionPoint::kPreScore),
      ::testing::Not(::testing::Contains("Concentrate")));
  pb::Pod pod = MakePod().Label("app", "web").Obj();
  std::vector<pb::Node> nodes = {
      MakeNode().Name("a").LabelCount("app", "web", 1).Obj(),
      MakeNode().Name("b").LabelCount("app", "web", 4).Obj()};
  std::vector<const pb::Node*> ptrs = {&nodes[0], &nodes[1]};
  CycleState state;
  absl::StatusOr<NodeVerdicts> ev =
      Only(**set).Evaluate(state, pod, ptrs, true);
  ASSERT_TRUE(ev.ok()) << ev.status();
  EXPECT_THAT(ev->scores.total, ElementsAre(250, 1000));
  EXPECT_FALSE(state.bytes().contains("PreScoreConcentrate"));
}

// NodeDeclaredFeatures is in the default profile (GA in v1.37): a pod that
// needs a node feature lands only on nodes that declare it.
TEST(ProfileTest, DefaultProfileChecksNodeDeclaredFeatures) {
  auto set = Build("");
  ASSERT_TRUE(set.ok()) << set.status();
  pb::Pod pod = MakePod().Obj();
  pod.add_containers()->add_restart_rule_actions("RestartAllContainers");
  std::vector<pb::Node> nodes = {MakeNode().Name("old").Obj(),
                                 MakeNode().Name("new").Obj()};
  nodes[1].add_declared_features("RestartAllContainersOnContainerExits");
  std::vector<const pb::Node*> ptrs = {&nodes[0], &nodes[1]};
  CycleState state;
  absl::StatusOr<NodeVerdicts> ev =
      Only(**set).Evaluate(state, pod, ptrs, true);
  ASSERT_TRUE(ev.ok()) << ev.status();
  EXPECT_THAT(ev->feasible, ElementsAre(1));
  EXPECT_EQ(ev->filter[0].plugin, "NodeDeclaredFeatures");
  EXPECT_THAT(ev->filter[0].reasons,
              ElementsAre("node(s) didn't match Pod's required features"));
}

TEST(ProfileTest, RejectEverythingViaMultiPointRejectsAllNodes) {
  auto set = Build(R"(
profiles:
- schedulerName: c
  plugins:
    multiPoint:
      enabled:
      - name: Concentrate
  pluginConfig:
  - name: Concentrate
    args: {rejectEverything: true}
)");
  ASSERT_TRUE(set.ok()) << set.status();
  pb::Pod pod = MakePod().Obj();
  std::vector<pb::Node> nodes = {MakeNode().Name("a").Obj(),
                                 MakeNode().Name("b").Obj()};
  std::vector<const pb::Node*> ptrs = {&nodes[0], &nodes[1]};
  CycleState state;
  absl::StatusOr<NodeVerdicts> ev =
      Only(**set).Evaluate(state, pod, ptrs, true);
  ASSERT_TRUE(ev.ok()) << ev.status();
  EXPECT_TRUE(ev->feasible.empty());
  for (const PluginStatus& s : ev->filter) {
    EXPECT_EQ(s.plugin, "Concentrate");
    EXPECT_EQ(s.code, Code::kUnschedulable);
  }
}

TEST(ProfileTest, RejectEverythingFiltersEvenWhenEnabledAtScoreOnly) {
  auto set = Build(R"(
profiles:
- schedulerName: concentrate-scheduler
  plugins:
    score:
      enabled:
      - name: Concentrate
        weight: 10
  pluginConfig:
  - name: Concentrate
    args: {labelKey: app, rejectEverything: true}
)");
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_THAT(
      ProfilePeer::PluginNames(Only(**set), model::ExtensionPoint::kFilter),
      ::testing::Contains("Concentrate"));
}

TEST(ProfileTest, NodeLabelsAreSentOnlyWhenAPluginReadsThem) {
  auto defaults = Build("");
  ASSERT_TRUE(defaults.ok());
  // PodTopologySpread reads the topology keys of every node.
  EXPECT_EQ(Only(**defaults).node_labels(), NodeLabelUse::kAlways);

  auto no_spread = Build(R"(
profiles:
- plugins:
    multiPoint:
      disabled:
      - name: PodTopologySpread
)");
  ASSERT_TRUE(no_spread.ok());
  const Profile& p = Only(**no_spread);
  EXPECT_EQ(p.node_labels(), NodeLabelUse::kWhenPodSelects);  // NodeAffinity
  EXPECT_FALSE(p.NeedsNodeLabels(MakePod().Obj()));
  EXPECT_TRUE(p.NeedsNodeLabels(MakePod().NodeSelector("disk", "ssd").Obj()));
  pb::Pod with_affinity = MakePod().Obj();
  with_affinity.mutable_node_affinity()->add_preferred()->set_weight(1);
  EXPECT_TRUE(p.NeedsNodeLabels(with_affinity));

  auto without = Build(R"(
profiles:
- plugins:
    multiPoint:
      disabled:
      - name: NodeAffinity
      - name: PodTopologySpread
)");
  ASSERT_TRUE(without.ok());
  EXPECT_EQ(Only(**without).node_labels(), NodeLabelUse::kNever);
  EXPECT_FALSE(
      Only(**without).NeedsNodeLabels(MakePod().NodeSelector("a", "b").Obj()));

  auto added = Build(R"(
profiles:
- plugins:
    multiPoint:
      disabled:
      - name: PodTopologySpread
  pluginConfig:
  - name: NodeAffinity
    args:
      addedAffinity:
        requiredDuringSchedulingIgnoredDuringExecution:
          nodeSelectorTerms:
          - matchExpressions:
            - {key: zone, operator: In, values: [a]}
)");
  ASSERT_TRUE(added.ok()) << added.status();
  EXPECT_EQ(Only(**added).node_labels(), NodeLabelUse::kAlways);
  EXPECT_TRUE(Only(**added).NeedsNodeLabels(MakePod().Obj()));
}

// The hash changes with anything that decides placement and only then.
TEST(ProfileSetTest, ConfigHashFollowsTheEffectiveConfiguration) {
  auto hash = [](const std::string& body) {
    auto set = Build(body);
    EXPECT_TRUE(set.ok()) << set.status();
    return set.ok() ? (*set)->config_hash : std::string();
  };
  const std::string base = R"(
profiles:
- schedulerName: s
  plugins:
    score:
      enabled: [{name: Concentrate, weight: 10}]
  pluginConfig:
  - name: Concentrate
    args: {labelKey: app}
)";
  std::string h = hash(base);
  EXPECT_EQ(h.size(), 16u);
  EXPECT_EQ(hash(base), h);
  // Leader election is the shim's business, not placement.
  EXPECT_EQ(hash("leaderElection: {leaderElect: false}\n" + base), h);
  auto changed = [&](const std::string& from, const std::string& to) {
    std::string b = base;
    b.replace(b.find(from), from.size(), to);
    return hash(b);
  };
  EXPECT_NE(changed("weight: 10", "weight: 5"), h);
  EXPECT_NE(
      changed("{labelKey: app}", "{labelKey: app, rejectEverything: true}"), h);
  EXPECT_NE(changed("schedulerName: s", "schedulerName: t"), h);
  // Args that show nowhere else.
  EXPECT_NE(changed("    args: {labelKey: app}\n",
                    "    args: {labelKey: app}\n  - name: NodeResourcesFit\n"
                    "    args: {scoringStrategy: {type: MostAllocated}}\n"),
            h);
  EXPECT_NE(changed("  plugins:\n",
                    "  plugins:\n    multiPoint:\n      disabled: [{name: "
                    "InterPodAffinity}]\n"),
            h);
}

// Plugins kscore does not run yet refuse, in PreFilter and in their own
// name, the pods that need them, unless the profile disables them.
TEST(ProfileTest, GatesOfPluginsNotRunRefuseThePodsThatNeedThem) {
  pb::Pod anti = MakePod().Name("p").Obj();
  anti.mutable_pod_anti_affinity()->add_required()->set_topology_key("zone");
  pb::Pod preferred = MakePod().Name("p").Obj();
  preferred.mutable_pod_affinity()->add_preferred()->set_weight(1);
  pb::Pod pvc = MakePod().Name("p").Obj();
  pvc.add_volume_claims()->set_claim_name("c");
  // Bound to a volume without zone labels, which VolumeZone admits.
  pb::ClaimState* claim = pvc.mutable_volumes()->add_claims();
  claim->set_name("c");
  claim->set_found(true);
  claim->set_volume_name("pv");
  claim->set_bind_completed(true);
  pvc.mutable_volumes()->add_volumes()->set_name("pv");
  pb::Pod dra = MakePod().Name("p").Obj();
  dra.add_resource_claims("gpu");
  struct Case {
    std::string name;
    std::string config;
    pb::Pod pod;
    std::string plugin;  // "" means admitted
    std::string reason;
  } cases[] = {
      {"anti-affinity is InterPodAffinity's, which runs", "", anti, "", ""},
      {"preferred affinity is not refused", "", preferred, "", ""},
      {"claims are VolumeBinding's, which runs", "", pvc, "", ""},
      {"DRA", "", dra, "DynamicResources",
       "pod uses resourceClaims (DRA), which kscore does not support yet"},
      {"disabled at multiPoint", R"(
profiles:
- plugins:
    multiPoint:
      disabled: [{name: DynamicResources}]
)",
       dra, "", ""},
      {"disabled at preFilter and filter", R"(
profiles:
- plugins:
    preFilter:
      disabled: [{name: DynamicResources}]
    filter:
      disabled: [{name: DynamicResources}]
)",
       dra, "", ""},
      {"disabled at filter, still at preFilter", R"(
profiles:
- plugins:
    filter:
      disabled: [{name: DynamicResources}]
)",
       dra, "DynamicResources",
       "pod uses resourceClaims (DRA), which kscore does not support yet"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto set = Build(c.config);
    ASSERT_TRUE(set.ok()) << set.status();
    CycleState state;
    absl::StatusOr<PluginStatus> s = Only(**set).RunPreFilter(state, c.pod);
    ASSERT_TRUE(s.ok()) << s.status();
    if (c.plugin.empty()) {
      EXPECT_TRUE(s->ok()) << s->plugin;
      continue;
    }
    EXPECT_EQ(s->code, Code::kUnschedulableAndUnresolvable);
    EXPECT_EQ(s->plugin, c.plugin);
    EXPECT_THAT(s->reasons, ElementsAre(c.reason));
  }
}

// DecideVolumes asks the VolumeDecisionPlugins at Filter (VolumeBinding)
// about feasible nodes: a node with claims to bind gets an entry, a pod
// whose claims are all bound, or that has none (PreFilter skipped the
// plugin), gets none; a profile without VolumeBinding at Filter decides
// nothing.
// The PreBind wait the profile announces: VolumeBinding's bindTimeoutSeconds
// (600 by default), 0 when nothing decides volumes.
TEST(ProfileTest, AnnouncesVolumeBindingsBindTimeout) {
  auto timeout = [](absl::string_view config) -> int64_t {
    auto set = Build(std::string(config));
    EXPECT_TRUE(set.ok()) << set.status();
    return set.ok() ? Only(**set).volume_bind_timeout_seconds() : -1;
  };
  EXPECT_EQ(timeout(""), 600);
  EXPECT_EQ(timeout(R"(
profiles:
- pluginConfig:
  - name: VolumeBinding
    args: {bindTimeoutSeconds: 30}
)"),
            30);
  EXPECT_EQ(timeout(R"(
profiles:
- plugins:
    filter:
      disabled: [{name: VolumeBinding}]
)"),
            0);
}

TEST(ProfileTest, DecideVolumesAsksTheVolumeDecisionPlugins) {
  pb::Pod pod = MakePod().Name("p").Obj();
  pod.add_volume_claims()->set_claim_name("c");
  pb::ClaimState* claim = pod.mutable_volumes()->add_claims();
  claim->set_name("c");
  claim->set_found(true);
  claim->set_storage_class_name("local");
  pb::StorageClass* cls = pod.mutable_volumes()->add_classes();
  cls->set_name("local");
  cls->set_provisioner("csi.example.com");
  cls->set_volume_binding_mode("WaitForFirstConsumer");
  pb::Node n1 = MakeNode().Name("n1").Obj();
  pb::Node n2 = MakeNode().Name("n2").Obj();
  const pb::Node* nodes[] = {&n1, &n2};
  auto decide = [&nodes](absl::string_view config, const pb::Pod& p) {
    auto set = Build(std::string(config));
    EXPECT_TRUE(set.ok()) << set.status();
    CycleState state;
    EXPECT_TRUE(Only(**set).RunPreFilter(state, p).ok());
    absl::StatusOr<std::vector<pb::NodeVolumes>> v =
        Only(**set).DecideVolumes(state, p, nodes);
    EXPECT_TRUE(v.ok()) << v.status();
    std::vector<std::string> out;
    for (const pb::NodeVolumes& n : *v) {
      std::string node = absl::StrCat(n.node_name(), ":");
      for (const pb::ClaimDecision& d : n.claims()) {
        absl::StrAppend(&node, " ", d.claim(), "=", d.volume());
      }
      out.push_back(node);
    }
    return out;
  };
  EXPECT_THAT(decide("", pod), ElementsAre("n1: 0=", "n2: 0="));
  EXPECT_THAT(decide(R"(
profiles:
- plugins:
    filter:
      disabled: [{name: VolumeBinding}]
)",
                     pod),
              ::testing::IsEmpty());
  EXPECT_THAT(decide("", MakePod().Name("p").Obj()), ::testing::IsEmpty());
  claim->set_volume_name("pv");
  claim->set_bind_completed(true);
  EXPECT_THAT(decide("", pod), ::testing::IsEmpty());
}

TEST(ProfileTest, FilterWithoutPreFilterStateIsInvalidArgument) {
  auto set = Build("");
  ASSERT_TRUE(set.ok());
  pb::Pod pod = MakePod().Obj();
  pb::Node node = MakeNode().Name("n").Obj();
  const pb::Node* nodes[] = {&node};
  CycleState state;
  auto r = Only(**set).RunFilter(state, pod, nodes);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(r.status().message()),
              HasSubstr("run PreFilter first"));
}

// A PreFilterResult (NodeAffinity's metadata.name terms, as DaemonSet pods
// use; NodeName's spec.nodeName) leaves the other nodes unfiltered: they
// are reported as kube-scheduler reports them, not with another filter's
// reason, even in a later batch that only carries the state.
TEST(ProfileTest, NodesOutsideThePreFilterResultAreReportedAsUpstream) {
  auto set = Build("profiles:\n- schedulerName: default-scheduler\n");
  ASSERT_TRUE(set.ok()) << set.status();
  const pb::Pod pod =
      MakePod()
          .RequiredTerm(
              {}, {::kscore::testing::Req("metadata.name", "In", {"pinned"})})
          .Obj();
  std::vector<pb::Node> nodes = {
      MakeNode().Name("tainted").Taint("k", "v", "NoSchedule").Obj(),
      MakeNode().Name("pinned").Obj(),
      MakeNode().Name("cordoned").Unschedulable().Obj()};
  std::vector<const pb::Node*> ptrs = {&nodes[0], &nodes[1], &nodes[2]};
  CycleState state;
  absl::StatusOr<NodeVerdicts> ev =
      Only(**set).Evaluate(state, pod, ptrs, true);
  ASSERT_TRUE(ev.ok()) << ev.status();
  EXPECT_THAT(ev->feasible, ElementsAre(1));
  for (int i : {0, 2}) {
    EXPECT_EQ(ev->filter[i].code, Code::kUnschedulableAndUnresolvable);
    EXPECT_EQ(ev->filter[i].reasons,
              std::vector<std::string>{
                  "node(s) didn't satisfy plugin(s) [NodeAffinity]"});
  }
  // A later batch decodes the result from the carried state.
  CycleState later(state.bytes());
  std::vector<const pb::Node*> second = {&nodes[0]};
  absl::StatusOr<std::vector<PluginStatus>> f =
      Only(**set).RunFilter(later, pod, second);
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ((*f)[0].reasons,
            std::vector<std::string>{
                "node(s) didn't satisfy plugin(s) [NodeAffinity]"});
  // kube-scheduler's UnschedulablePlugins: the PreFilter result's plugin;
  // the taint and the cordon were never asked.
  EXPECT_THAT(ev->unschedulable_plugins, ElementsAre("NodeAffinity"));
}

// Diagnosis.UnschedulablePlugins: every Filter plugin that rejected a node,
// once, sorted; or the plugin whose PreFilter rejected the pod.
TEST(ProfileTest, EvaluateNamesThePluginsThatRejected) {
  auto set = Build("profiles:\n- schedulerName: default-scheduler\n");
  ASSERT_TRUE(set.ok()) << set.status();
  std::vector<pb::Node> nodes = {
      MakeNode().Name("t1").Taint("k", "v", "NoSchedule").Obj(),
      MakeNode().Name("ok").Obj(), MakeNode().Name("c").Unschedulable().Obj(),
      MakeNode().Name("t2").Taint("k", "v", "NoSchedule").Obj()};
  std::vector<const pb::Node*> ptrs = {&nodes[0], &nodes[1], &nodes[2],
                                       &nodes[3]};
  CycleState state;
  absl::StatusOr<NodeVerdicts> ev =
      Only(**set).Evaluate(state, MakePod().Obj(), ptrs, true);
  ASSERT_TRUE(ev.ok()) << ev.status();
  EXPECT_THAT(ev->unschedulable_plugins,
              ElementsAre("NodeUnschedulable", "TaintToleration"));

  const pb::Pod pinned =
      MakePod()
          .NodeName("a")
          .RequiredTerm({},
                        {::kscore::testing::Req("metadata.name", "In", {"b"})})
          .Obj();
  CycleState disjoint;
  ev = Only(**set).Evaluate(disjoint, pinned, ptrs, true);
  ASSERT_TRUE(ev.ok()) << ev.status();
  EXPECT_FALSE(ev->pre_filter.ok());
  EXPECT_THAT(ev->unschedulable_plugins,
              ElementsAre("NodeAffinity", "NodeName"));
}

// What a rejecting plugin registers reaches ListProfiles: upstream's
// EventsToRegister, each marked hinted where the plugin's Hint refines it;
// a plugin that says nothing registers every event.
TEST(ProfileTest, DescribeCarriesEachRejectingPluginsEvents) {
  auto set = Build(R"(
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint:
      enabled:
      - name: Concentrate
  pluginConfig:
  - name: Concentrate
    args:
      rejectEverything: true
)");
  ASSERT_TRUE(set.ok()) << set.status();
  using Event = std::tuple<pb::EventResource, uint32_t, bool>;
  std::map<std::string, std::vector<Event>> got;
  for (const Profile::PluginInfo& info : Only(**set).Describe()) {
    for (const pb::ClusterEvent& e : info.events) {
      got[info.name].emplace_back(e.resource(), e.action_type(), e.hinted());
    }
  }
  constexpr bool kHinted = true;
  constexpr bool kUnhinted = false;
  EXPECT_THAT(
      got["NodeResourcesFit"],
      ElementsAre(
          Event{pb::EVENT_RESOURCE_ASSIGNED_POD, model::action::kDelete,
                kHinted},
          Event{pb::EVENT_RESOURCE_NODE,
                model::action::kAdd | model::action::kUpdateNodeAllocatable,
                kHinted},
          Event{pb::EVENT_RESOURCE_ASSIGNED_POD,
                model::action::kUpdatePodScaleDown, kUnhinted},
          Event{pb::EVENT_RESOURCE_TARGET_POD,
                model::action::kUpdatePodScaleDown, kUnhinted}));
  EXPECT_THAT(
      got["TaintToleration"],
      ElementsAre(
          Event{pb::EVENT_RESOURCE_NODE,
                model::action::kAdd | model::action::kUpdateNodeTaint, kHinted},
          Event{pb::EVENT_RESOURCE_TARGET_POD,
                model::action::kUpdatePodToleration, kUnhinted}));
  EXPECT_THAT(
      got["NodeUnschedulable"],
      ElementsAre(
          Event{pb::EVENT_RESOURCE_NODE,
                model::action::kAdd | model::action::kUpdateNodeTaint, kHinted},
          Event{pb::EVENT_RESOURCE_TARGET_POD,
                model::action::kUpdatePodToleration, kUnhinted}));
  EXPECT_THAT(
      got["NodeAffinity"],
      ElementsAre(Event{pb::EVENT_RESOURCE_NODE,
                        model::action::kAdd | model::action::kUpdateNodeLabel,
                        kHinted}));
  EXPECT_THAT(got["NodePorts"],
              ElementsAre(Event{pb::EVENT_RESOURCE_ASSIGNED_POD,
                                model::action::kDelete, kHinted},
                          Event{pb::EVENT_RESOURCE_NODE, model::action::kAdd,
                                kUnhinted}));
  EXPECT_THAT(got["NodeName"],
              ElementsAre(Event{pb::EVENT_RESOURCE_NODE, model::action::kAdd,
                                kUnhinted}));
  for (const char* unhinted :
       {"InterPodAffinity", "PodTopologySpread", "NodeDeclaredFeatures"}) {
    SCOPED_TRACE(unhinted);
    ASSERT_FALSE(got[unhinted].empty());
    for (const Event& e : got[unhinted]) EXPECT_FALSE(std::get<2>(e));
  }
  EXPECT_THAT(got["Concentrate"],
              ElementsAre(Event{pb::EVENT_RESOURCE_WILDCARD,
                                model::action::kAll, kUnhinted}));
  EXPECT_FALSE(got.contains("ImageLocality"));  // scores only
}

// spec.nodeName and required affinity naming different nodes leave no node:
// PreFilter fails in both plugins' names, as kube-scheduler's does.
TEST(ProfileTest, DisjointPreFilterResultsFailPreFilter) {
  auto set = Build("profiles:\n- schedulerName: default-scheduler\n");
  ASSERT_TRUE(set.ok()) << set.status();
  const pb::Pod pod =
      MakePod()
          .NodeName("a")
          .RequiredTerm({},
                        {::kscore::testing::Req("metadata.name", "In", {"b"})})
          .Obj();
  CycleState state;
  absl::StatusOr<PluginStatus> s = Only(**set).RunPreFilter(state, pod);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->code, Code::kUnschedulableAndUnresolvable);
  EXPECT_EQ(s->reasons,
            std::vector<std::string>{"node(s) didn't satisfy plugin(s) "
                                     "[NodeAffinity NodeName] simultaneously"});
  EXPECT_EQ(s->plugin, "");
}

// Records what Evaluate tells the metrics: "Point/Status/profile" per
// observation, and that no duration is negative.
class RecordingObserver : public ExtensionPointObserver {
 public:
  void OnExtensionPoint(model::ExtensionPoint point, Code code,
                        const std::string& profile,
                        absl::Duration took) override {
    seen.push_back(absl::StrCat(model::ExtensionPointName(point), "/",
                                CodeName(code), "/", profile));
    EXPECT_GE(took, absl::ZeroDuration());
  }
  std::vector<std::string> seen;
};

TEST(ProfileTest, EvaluateTellsTheObserverEachPointOnce) {
  auto set = Build(R"(
profiles:
- schedulerName: concentrate-scheduler
  plugins:
    score:
      enabled:
      - name: Concentrate
        weight: 10
)");
  ASSERT_TRUE(set.ok()) << set.status();
  pb::Pod pod = MakePod().Name("p").Label("app", "web").Obj();
  std::vector<pb::Node> nodes = {MakeNode().Name("a").Obj(),
                                 MakeNode().Name("b").Obj()};
  std::vector<const pb::Node*> ptrs = {&nodes[0], &nodes[1]};
  RecordingObserver obs;
  CycleState state;
  ASSERT_TRUE(
      Only(**set).Evaluate(state, pod, ptrs, EvaluateMode::kFull, &obs).ok());
  // Filter once for the batch, not per node; Score covers normalising.
  EXPECT_THAT(obs.seen, ElementsAre("preFilter/Success/concentrate-scheduler",
                                    "filter/Success/concentrate-scheduler",
                                    "preScore/Success/concentrate-scheduler",
                                    "score/Success/concentrate-scheduler"));

  obs.seen.clear();
  CycleState filter_only;
  ASSERT_TRUE(
      Only(**set)
          .Evaluate(filter_only, pod, ptrs, EvaluateMode::kFilterOnly, &obs)
          .ok());
  EXPECT_THAT(obs.seen, ElementsAre("preFilter/Success/concentrate-scheduler",
                                    "filter/Success/concentrate-scheduler"));
}

TEST(ProfileTest, ObserverHearsUnschedulableAndErrorStatuses) {
  // PreFilter's own verdict is its status.
  auto set = Build("profiles:\n- schedulerName: default-scheduler\n");
  ASSERT_TRUE(set.ok()) << set.status();
  const pb::Pod pod =
      MakePod()
          .NodeName("a")
          .RequiredTerm({},
                        {::kscore::testing::Req("metadata.name", "In", {"b"})})
          .Obj();
  RecordingObserver obs;
  CycleState state;
  ASSERT_TRUE(Only(**set).RunPreFilter(state, pod, &obs).ok());
  EXPECT_THAT(obs.seen, ElementsAre("preFilter/UnschedulableAndUnresolvable/"
                                    "default-scheduler"));

  // Nodes rejected by a filter leave Filter a Success, as upstream's; with
  // no feasible node neither PreScore nor Score runs.
  auto reject = Build(R"(
profiles:
- schedulerName: c
  plugins:
    multiPoint:
      enabled:
      - name: Concentrate
  pluginConfig:
  - name: Concentrate
    args: {rejectEverything: true}
)");
  ASSERT_TRUE(reject.ok()) << reject.status();
  pb::Node node = MakeNode().Name("a").Obj();
  const pb::Node* nodes[] = {&node};
  obs.seen.clear();
  CycleState rejected;
  ASSERT_TRUE(
      Only(**reject)
          .Evaluate(rejected, MakePod().Obj(), nodes, EvaluateMode::kFull, &obs)
          .ok());
  EXPECT_THAT(obs.seen, ElementsAre("preFilter/Success/c", "filter/Success/c"));

  // A plugin's error is the point's Error.
  Registry r = plugins::DefaultRegistry();
  r.Register(
      "FixedScore",
      [](const model::YamlField&) -> absl::StatusOr<std::unique_ptr<Plugin>> {
        return std::make_unique<FixedScore>(101);
      });
  auto bad = Build(R"(
profiles:
- schedulerName: bad
  plugins:
    score:
      enabled:
      - name: FixedScore
)",
                   r);
  ASSERT_TRUE(bad.ok()) << bad.status();
  obs.seen.clear();
  CycleState errs;
  EXPECT_FALSE(
      Only(**bad)
          .Evaluate(errs, MakePod().Obj(), nodes, EvaluateMode::kFull, &obs)
          .ok());
  EXPECT_THAT(obs.seen,
              ElementsAre("preFilter/Success/bad", "filter/Success/bad",
                          "preScore/Success/bad", "score/Error/bad"));
}

}  // namespace
}  // namespace kscore::framework

namespace kscore::framework {
namespace {

// upstream's MatchClusterEvents, including its rule that an event of several
// bits needs a registration covering its highest one.
TEST(ClusterEventTest, MatchesAndLabelsAsUpstream) {
  const pb::ClusterEvent node_label =
      model::MakeEvent(pb::EVENT_RESOURCE_NODE,
                       model::action::kAdd | model::action::kUpdateNodeLabel);
  EXPECT_TRUE(model::MatchClusterEvents(
      node_label,
      model::MakeEvent(pb::EVENT_RESOURCE_NODE, model::action::kAdd)));
  EXPECT_TRUE(model::MatchClusterEvents(
      node_label, model::MakeEvent(pb::EVENT_RESOURCE_NODE,
                                   model::action::kUpdateNodeLabel)));
  EXPECT_FALSE(model::MatchClusterEvents(
      node_label, model::MakeEvent(pb::EVENT_RESOURCE_NODE,
                                   model::action::kUpdateNodeTaint)));
  EXPECT_FALSE(model::MatchClusterEvents(
      node_label,
      model::MakeEvent(pb::EVENT_RESOURCE_NODE, model::action::kUpdate)));
  EXPECT_FALSE(model::MatchClusterEvents(
      node_label,
      model::MakeEvent(pb::EVENT_RESOURCE_ASSIGNED_POD, model::action::kAdd)));
  EXPECT_TRUE(model::MatchClusterEvents(
      model::MakeEvent(pb::EVENT_RESOURCE_POD, model::action::kDelete),
      model::MakeEvent(pb::EVENT_RESOURCE_ASSIGNED_POD,
                       model::action::kDelete)));
  EXPECT_TRUE(model::MatchClusterEvents(
      model::MakeEvent(pb::EVENT_RESOURCE_WILDCARD, model::action::kAll),
      model::MakeEvent(pb::EVENT_RESOURCE_TARGET_POD,
                       model::action::kUpdatePodLabel)));
  EXPECT_EQ(model::EventLabel(
                model::MakeEvent(pb::EVENT_RESOURCE_NODE, model::action::kAdd)),
            "NodeAdd");
  EXPECT_EQ(model::EventLabel(model::MakeEvent(pb::EVENT_RESOURCE_ASSIGNED_POD,
                                               model::action::kDelete)),
            "AssignedPodDelete");
  EXPECT_EQ(model::EventLabel(model::MakeEvent(pb::EVENT_RESOURCE_NODE,
                                               model::action::kUpdate)),
            "NodeUpdate");
}

// A Filter plugin whose hint always says QueueSkip and counts its calls:
// hinted for a node added, unhinted for a node deleted.
class SkipHint : public FilterPlugin {
 public:
  explicit SkipHint(int* calls) : calls_(calls) {}
  absl::string_view Name() const override { return "SkipHint"; }
  std::vector<pb::ClusterEvent> EventsToRegister() const override {
    return {
        model::MakeEvent(pb::EVENT_RESOURCE_NODE, model::action::kAdd, true),
        model::MakeEvent(pb::EVENT_RESOURCE_NODE, model::action::kDelete)};
  }
  model::QueueingHint Hint(const pb::Pod&,
                           const model::EventObjects&) const override {
    ++*calls_;
    return model::QueueingHint::kQueueSkip;
  }
  PluginStatus Filter(const CycleState&, const pb::Pod&,
                      const pb::Node&) const override {
    return PluginStatus::Success();
  }

 private:
  int* calls_;
};

model::EventObjects NodeAdded(const pb::Node* node) {
  return ::kscore::testing::NodeEvent(model::action::kAdd, nullptr, node);
}

// Queue when any rejecting plugin's hint says so; unknown plugins and
// events no hinted registration matches queue without asking.
TEST(ProfileTest, QueueingHintQueuesWhenAnyPluginSays) {
  int calls = 0;
  Registry r = plugins::DefaultRegistry();
  r.Register("SkipHint",
             [&calls](const model::YamlField&)
                 -> absl::StatusOr<std::unique_ptr<Plugin>> {
               return std::make_unique<SkipHint>(&calls);
             });
  auto set = Build(R"(
profiles:
- plugins:
    filter:
      enabled:
      - name: SkipHint
)",
                   r);
  ASSERT_TRUE(set.ok()) << set.status();
  const Profile& p = Only(**set);
  const pb::Pod pod = MakePod().Obj();
  // Untolerated taint (TaintToleration: QueueSkip) on a schedulable node
  // (NodeUnschedulable: Queue).
  const pb::Node added = MakeNode().Taint("k", "v", "NoSchedule").Obj();
  const model::EventObjects add = NodeAdded(&added);
  struct Case {
    std::string name;
    std::vector<std::string> plugins;
    model::EventObjects event;
    bool want;
    int calls;  // SkipHint's Hint calls
  };
  std::vector<Case> cases = {
      {"one says QueueSkip", {"TaintToleration"}, add, false, 0},
      {"one says Queue", {"NodeUnschedulable"}, add, true, 0},
      {"any Queue wins",
       {"TaintToleration", "NodeUnschedulable"},
       add,
       true,
       0},
      {"all QueueSkip", {"TaintToleration", "SkipHint"}, add, false, 1},
      {"unknown plugin queues",
       {"TaintToleration", "NoSuchPlugin"},
       add,
       true,
       0},
      {"a score-only plugin is unknown here", {"ImageLocality"}, add, true, 0},
      {"an unhinted registration queues without asking",
       {"SkipHint"},
       ::kscore::testing::NodeEvent(model::action::kDelete, &added, nullptr),
       true,
       0},
      {"an event nothing registers queues without asking",
       {"SkipHint"},
       ::kscore::testing::NodeEvent(model::action::kUpdateNodeLabel, &added,
                                    &added),
       true,
       0},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    calls = 0;
    absl::StatusOr<bool> got = p.QueueingHint(pod, c.plugins, c.event);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(*got, c.want);
    EXPECT_EQ(calls, c.calls);
  }
  absl::StatusOr<bool> none = p.QueueingHint(pod, {}, add);
  EXPECT_EQ(none.status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace kscore::framework
