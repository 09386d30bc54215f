// InterPodAffinity's plans answered by the shim's ClusterIndex. The plugin
// tests (scorer/plugins/inter_pod_affinity_test.cc) answer plans with the
// brute-force IpaCluster of scorer/testing/ipa_cluster.h; here random
// clusters check that the index answers alike: the same query counts, the
// same existing terms (in its own order) with the same per-node counts, and
// so the same verdicts and raw scores. And the cases of
// tests/testdata/parity/interpodaffinity.json, whose answers
// reference/pkg/parity checks against kube-scheduler's own plugin, run
// through the shim's decoding and cache and the scorer's plugin.
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "scorer/framework/cycle_state.h"
#include "scorer/plugins/inter_pod_affinity.h"
#include "scorer/testing/ipa_cluster.h"
#include "shim/cache/cache.h"
#include "shim/cache/cluster_index.h"
#include "shim/cache/testing/candidates.h"
#include "shim/objects/objects.h"

namespace kscore {
namespace {

namespace pb = framework::pb;
using framework::CycleState;
using framework::PluginStatus;
using plugins::InterPodAffinity;
using testing::AffinityPod;
using testing::IpaCluster;

constexpr char kHostname[] = "kubernetes.io/hostname";

struct Placed {
  pb::Pod pod;
  std::string node;
  bool deleting = false;
};

using Namespaces = std::map<std::string, std::map<std::string, std::string>>;

// One cluster, answered either way: nodes with their counts (labels only
// when the plan asks for them, as the shim sends them) and the cluster data.
struct Answered {
  pb::ClusterData cluster;
  std::vector<pb::Node> nodes;
};

Answered FromIndex(const std::vector<pb::Node>& nodes,
                   const std::vector<Placed>& pods, const Namespaces& nss,
                   const pb::Pod& pod, const pb::PlanResponse& plan) {
  cache::ClusterIndex index;
  for (const pb::Node& n : nodes) index.UpsertNode(n, {});
  for (const auto& [name, labels] : nss) {
    model::LabelMap m;
    for (const auto& [k, v] : labels) m[k] = v;
    index.UpsertNamespace(name, m);
  }
  for (size_t i = 0; i < pods.size(); ++i) {
    const Placed& p = pods[i];
    objects::PodInfo info;
    info.namespace_ = p.pod.namespace_();
    info.name = "p" + std::to_string(i);
    info.key = info.namespace_ + "/" + info.name;
    info.node_name = p.node;
    info.phase = "Running";
    info.deleting = p.deleting;
    info.pod = p.pod;
    index.AddPod(info, p.node);
  }
  const cache::ClusterIndex::Prepared prepared = index.Prepare(pod, plan);
  Answered out;
  out.cluster = prepared.cluster;
  for (const pb::Node& n : nodes) {
    pb::Node& node = out.nodes.emplace_back();
    node.set_name(n.name());
    if (plan.node_labels()) *node.mutable_labels() = n.labels();
    index.NodeParts(prepared, n.name(), &node);
  }
  return out;
}

Answered FromFixture(const std::vector<pb::Node>& nodes,
                     const std::vector<Placed>& pods, const Namespaces& nss,
                     const pb::Pod& pod, const pb::PlanResponse& plan) {
  IpaCluster c;
  for (const pb::Node& n : nodes) {
    c.Node(n.name(), {n.labels().begin(), n.labels().end()});
  }
  for (const auto& [name, labels] : nss) c.Namespace(name, labels);
  for (const Placed& p : pods) c.Place(p.pod, p.node, p.deleting);
  auto [data, answered] = c.Answer(pod, plan);
  return {std::move(data), std::move(answered)};
}

// What the plugin makes of one answer: PreFilter, Filter per node, PreScore
// and the raw scores, as one comparable string per step.
std::vector<std::string> Outcome(const InterPodAffinity& plugin,
                                 const pb::Pod& pod,
                                 const pb::PlanResponse& plan,
                                 const Answered& a) {
  CycleState state;
  absl::flat_hash_map<std::string, int> bases;
  if (plan.queries_size() > 0) bases[std::string(InterPodAffinity::kName)] = 0;
  state.BindCluster(&a.cluster, std::move(bases));
  auto str = [](const PluginStatus& s) {
    std::string out = std::to_string(static_cast<int>(s.code));
    for (const std::string& r : s.reasons) out += " " + r;
    return out;
  };
  std::vector<std::string> out;
  PluginStatus pre = plugin.PreFilter(state, pod);
  out.push_back("PreFilter " + str(pre));
  if (pre.ok()) {
    for (const pb::Node& n : a.nodes) {
      out.push_back(n.name() + " " + str(plugin.Filter(state, pod, n)));
    }
  }
  std::vector<const pb::Node*> ptrs;
  for (const pb::Node& n : a.nodes) ptrs.push_back(&n);
  PluginStatus pre_score = plugin.PreScore(state, pod, ptrs);
  out.push_back("PreScore " + str(pre_score));
  if (pre_score.ok()) {
    std::vector<int64_t> raw(ptrs.size());
    out.push_back("Score " +
                  str(plugin.Score(state, pod, ptrs, absl::MakeSpan(raw))));
    for (size_t i = 0; i < raw.size(); ++i) {
      out.push_back(a.nodes[i].name() + " " + std::to_string(raw[i]));
    }
  }
  return out;
}

// Existing terms by their content, with total and per-node counts: the
// index orders them its own way.
std::map<std::string, std::pair<int64_t, std::vector<std::string>>> Terms(
    const Answered& a) {
  std::map<std::string, std::pair<int64_t, std::vector<std::string>>> out;
  for (int t = 0; t < a.cluster.existing_terms_size(); ++t) {
    pb::ExistingTerm e = a.cluster.existing_terms(t);
    const int64_t total = e.total();
    e.clear_total();
    std::vector<std::string> counts;
    for (const pb::Node& n : a.nodes) {
      for (const pb::TermCount& tc : n.term_counts()) {
        if (tc.term() == t) {
          counts.push_back(n.name() + "=" + std::to_string(tc.count()));
        }
      }
    }
    out[e.ShortDebugString()] = {total, counts};
  }
  return out;
}

class Random {
 public:
  explicit Random(uint32_t seed) : rng_(seed) {}
  uint32_t operator()(uint32_t n) { return rng_() % n; }
  template <typename T>
  const T& Pick(const std::vector<T>& v) {
    return v[rng_() % v.size()];
  }

  pb::LabelSelector Selector() {
    pb::LabelSelector s;
    switch ((*this)(5)) {
      case 0:
        break;  // empty: everything
      case 1:
        (*s.mutable_match_labels())["app"] = Pick<std::string>({"a", "b"});
        break;
      case 2:
        *s.add_match_expressions() = testing::LabelReq("tier", "Exists");
        break;
      case 3:
        *s.add_match_expressions() = testing::LabelReq("app", "NotIn", {"b"});
        break;
      default:
        *s.add_match_expressions() = testing::LabelReq("app", "In", {"a", "c"});
    }
    return s;
  }

  pb::PodAffinityTerm Term() {
    pb::PodAffinityTerm t;
    t.set_topology_key(Pick<std::string>(
        {"zone", "zone", "region", kHostname, "missing", ""}));
    if ((*this)(10) != 0) *t.mutable_label_selector() = Selector();
    if ((*this)(4) == 0) t.add_namespaces(Pick(namespaces_));
    switch ((*this)(6)) {
      case 0:
        t.mutable_namespace_selector();  // empty: every namespace
        break;
      case 1:
        *t.mutable_namespace_selector()->add_match_expressions() =
            testing::LabelReq("team", "In", {"x"});
        break;
      default:
        break;
    }
    return t;
  }

  // A pod with random labels and terms (`terms` of each kind at most).
  pb::Pod Pod(int terms) {
    AffinityPod p(Pick(namespaces_));
    if ((*this)(4) != 0) p.Label("app", Pick<std::string>({"a", "b", "c"}));
    if ((*this)(2) == 0) p.Label("tier", "1");
    for (int k = (*this)(terms + 1); k > 0; --k) p.Affinity(Term());
    for (int k = (*this)(terms + 1); k > 0; --k) p.Anti(Term());
    for (int k = (*this)(terms + 1); k > 0; --k) {
      p.Preferred(1 + static_cast<int32_t>((*this)(100)), Term());
    }
    for (int k = (*this)(terms + 1); k > 0; --k) {
      p.PreferredAnti(1 + static_cast<int32_t>((*this)(100)), Term());
    }
    return p.Obj();
  }

 private:
  std::mt19937 rng_;
  // "gone" has no Namespace object: no labels.
  std::vector<std::string> namespaces_ = {"default", "team-x", "team-y",
                                          "gone"};
};

TEST(InterPodAffinityParityTest, IpaClusterAnswersAsTheClusterIndex) {
  Random r(20261205);
  const Namespaces nss = {{"default", {}},
                          {"team-x", {{"team", "x"}}},
                          {"team-y", {{"team", "y"}}}};
  int compared_counts = 0, compared_terms = 0, filtered = 0, scored = 0;
  for (int round = 0; round < 400; ++round) {
    SCOPED_TRACE(round);
    std::vector<pb::Node> nodes;
    const int n = 1 + static_cast<int>(r(6));
    for (int i = 0; i < n; ++i) {
      pb::Node& node = nodes.emplace_back();
      node.set_name("n" + std::to_string(i));
      auto& labels = *node.mutable_labels();
      if (r(5) != 0) labels[kHostname] = node.name();
      if (r(4) != 0) labels["zone"] = "z" + std::to_string(r(3));
      if (r(3) != 0) labels["region"] = "r" + std::to_string(r(2));
    }
    std::vector<Placed> pods;
    const int m = static_cast<int>(r(10));
    for (int i = 0; i < m; ++i) {
      Placed& p = pods.emplace_back();
      p.pod = r(3) == 0 ? r.Pod(1) : r.Pod(0);
      p.node = r(12) == 0 ? "gone" : nodes[r(nodes.size())].name();
      p.deleting = r(6) == 0;
    }
    pb::Pod pod = r.Pod(2);
    InterPodAffinity::Args args;
    args.hard_pod_affinity_weight = static_cast<int32_t>(r(3)) * 5;
    args.ignore_preferred_terms_of_existing_pods = r(3) == 0;
    const InterPodAffinity plugin(args);
    // The pod as the shim sends it, with its namespace's labels.
    if (auto it = nss.find(pod.namespace_()); it != nss.end()) {
      for (const auto& [k, v] : it->second) {
        (*pod.mutable_namespace_labels())[k] = v;
      }
    }
    pb::PlanResponse plan;
    plugin.AddToPlan(pod, plan);

    const Answered want = FromFixture(nodes, pods, nss, pod, plan);
    const Answered got = FromIndex(nodes, pods, nss, pod, plan);
    ASSERT_EQ(got.cluster.answers_size(), want.cluster.answers_size());
    for (int q = 0; q < plan.queries_size(); ++q) {
      SCOPED_TRACE(plan.queries(q).ShortDebugString());
      EXPECT_EQ(got.cluster.answers(q).total(),
                want.cluster.answers(q).total());
      for (size_t i = 0; i < nodes.size(); ++i) {
        EXPECT_EQ(got.nodes[i].query_counts(q), want.nodes[i].query_counts(q))
            << nodes[i].ShortDebugString();
        ++compared_counts;
      }
    }
    const auto got_terms = Terms(got);
    EXPECT_EQ(got_terms, Terms(want));
    compared_terms += static_cast<int>(got_terms.size());
    const std::vector<std::string> outcome = Outcome(plugin, pod, plan, got);
    EXPECT_EQ(outcome, Outcome(plugin, pod, plan, want));
    for (const std::string& line : outcome) {
      if (line.find("didn't") != std::string::npos) ++filtered;
      if (line.rfind("Score 0", 0) == 0) ++scored;
    }
  }
  // The rounds exercise what they compare.
  EXPECT_GT(compared_counts, 1000);
  EXPECT_GT(compared_terms, 300);
  EXPECT_GT(filtered, 100);
  EXPECT_GT(scored, 50);
}

nlohmann::json IpaFixture() {
  const std::string path = std::string(KSCORE_SOURCE_DIR) +
                           "/tests/testdata/parity/interpodaffinity.json";
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << "cannot read " << path;
  std::stringstream s;
  s << in.rdbuf();
  return nlohmann::json::parse(s.str());
}

// A status as the fixture writes it (Go's Code names).
std::string FixtureStatus(const PluginStatus& s) {
  if (s.ok()) return "";
  std::string out;
  switch (s.code) {
    case framework::Code::kError:
      out = "Error";
      break;
    case framework::Code::kUnschedulable:
      out = "Unschedulable";
      break;
    case framework::Code::kUnschedulableAndUnresolvable:
      out = "UnschedulableAndUnresolvable";
      break;
    case framework::Code::kSkip:
      out = "Skip";
      break;
    default:
      out = "Success";
  }
  for (size_t i = 0; i < s.reasons.size(); ++i) {
    out += (i == 0 ? ": " : ", ") + s.reasons[i];
  }
  return out;
}

objects::PodInfo DecodePod(nlohmann::json j) {
  if (!j["metadata"].contains("namespace"))
    j["metadata"]["namespace"] = "default";
  j["metadata"]["uid"] = "uid-" + j["metadata"]["name"].get<std::string>();
  absl::StatusOr<objects::PodInfo> p = objects::PodFromJson(j);
  EXPECT_TRUE(p.ok()) << p.status();
  return p.ok() ? *p : objects::PodInfo();
}

// Every case as the shim and the scorer run it: nodes, namespaces and pods
// decoded from their JSON into the cache, the plugin's plan answered by it,
// the nodes as the shim sends them, then the plugin's points on all nodes.
TEST(InterPodAffinityParityTest, FixtureCasesAnswerAsKubeScheduler) {
  const nlohmann::json fixture = IpaFixture();
  ASSERT_FALSE(fixture["cases"].empty());
  for (const nlohmann::json& c : fixture["cases"]) {
    const std::string name = c["name"].get<std::string>();
    SCOPED_TRACE(name);
    cache::Cache cache;
    std::vector<std::string> names;
    for (const nlohmann::json& n : fixture["nodes"]) {
      absl::StatusOr<objects::NodeInfo> info = objects::NodeFromJson(n);
      ASSERT_TRUE(info.ok()) << info.status();
      cache.UpsertNode(info->node);
      names.push_back(info->node.name());
    }
    for (const nlohmann::json& n : fixture["namespaces"]) {
      absl::StatusOr<objects::NamespaceInfo> ns = objects::NamespaceFromJson(n);
      ASSERT_TRUE(ns.ok()) << ns.status();
      cache.UpsertNamespace(ns->name, ns->labels);
    }
    for (const nlohmann::json& p : c["pods"])
      cache.UpsertAssignedPod(DecodePod(p));

    InterPodAffinity::Args args;
    if (c.contains("args")) {
      args.hard_pod_affinity_weight =
          c["args"].value("hardPodAffinityWeight", 1);
      args.ignore_preferred_terms_of_existing_pods =
          c["args"].value("ignorePreferredTermsOfExistingPods", false);
    }
    const InterPodAffinity plugin(args);
    const objects::PodInfo incoming = DecodePod(c["pod"]);
    const pb::Pod pod = cache.PodFor(incoming, plugin.PodDataNeeded());
    pb::PlanResponse plan;
    plugin.AddToPlan(pod, plan);
    const std::shared_ptr<const cache::ClusterIndex::Prepared> prepared =
        cache.Prepare(pod, plan);
    google::protobuf::RepeatedPtrField<pb::Node> candidates;
    testing::FillCandidates(cache, incoming, {}, 0, names.size(), &candidates,
                            plan.node_labels(), prepared.get());
    // In the fixture's node order.
    std::vector<const pb::Node*> nodes;
    for (const std::string& n : names) {
      for (const pb::Node& cand : candidates) {
        if (cand.name() == n) nodes.push_back(&cand);
      }
    }
    ASSERT_EQ(nodes.size(), names.size());

    CycleState state;
    absl::flat_hash_map<std::string, int> bases;
    if (plan.queries_size() > 0) {
      bases[std::string(InterPodAffinity::kName)] = 0;
    }
    state.BindCluster(&prepared->cluster, std::move(bases));
    nlohmann::json got = nlohmann::json::object();
    const PluginStatus pre = plugin.PreFilter(state, pod);
    got["preFilter"] = FixtureStatus(pre);
    if (pre.ok()) {
      got["filter"] = nlohmann::json::array();
      for (const pb::Node* n : nodes) {
        got["filter"].push_back(FixtureStatus(plugin.Filter(state, pod, *n)));
      }
    }
    const PluginStatus pre_score = plugin.PreScore(state, pod, nodes);
    got["preScore"] = FixtureStatus(pre_score);
    if (pre_score.ok()) {
      std::vector<int64_t> scores(nodes.size());
      ASSERT_TRUE(plugin.Score(state, pod, nodes, absl::MakeSpan(scores)).ok());
      got["raw"] = scores;
      ASSERT_TRUE(
          plugin.NormalizeScore(state, pod, absl::MakeSpan(scores)).ok());
      got["scores"] = scores;
    }
    EXPECT_EQ(got, c["want"]) << "kscore answers " << got.dump();
  }
}

}  // namespace
}  // namespace kscore
