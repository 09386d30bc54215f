#include "shim/scheduler/explain.h"

#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kscore::scheduler {
namespace {

using ::testing::ElementsAre;

std::shared_ptr<Explanation> Decision(const std::string& name,
                                      const std::string& node) {
  auto e = std::make_shared<Explanation>();
  e->namespace_ = "default";
  e->name = name;
  e->node = node;
  return e;
}

TEST(DecisionLogTest, KeepsTheLatestPerPodAndDropsTheOldest) {
  DecisionLog log(2);
  log.Add(Decision("a", ""));
  log.Add(Decision("b", "n1"));
  log.Add(Decision("a", "n2"));  // a's second attempt replaces its first
  EXPECT_EQ(log.size(), 2u);
  ASSERT_NE(log.Find("default", "a"), nullptr);
  EXPECT_EQ(log.Find("default", "a")->node, "n2");
  log.Add(Decision("c", "n3"));  // b is the oldest now
  EXPECT_EQ(log.size(), 2u);
  EXPECT_EQ(log.Find("default", "b"), nullptr);
  EXPECT_NE(log.Find("default", "a"), nullptr);
  EXPECT_NE(log.Find("default", "c"), nullptr);
  EXPECT_EQ(log.Find("other", "c"), nullptr);

  DecisionLog none(0);
  none.Add(Decision("a", ""));
  EXPECT_EQ(none.size(), 0u);
}

Explanation Scheduled() {
  Explanation e;
  e.namespace_ = "default";
  e.name = "web-1";
  e.profile = "concentrate-scheduler";
  e.node = "n2";
  e.all_nodes = 3;
  e.evaluated = 3;
  e.feasible = 2;
  e.plugins = {"Concentrate", "NodeResourcesFit"};
  e.weights = {10, 1};
  e.top = {{"n2", 1050, {3, 10}, {100, 50}}, {"n3", 30, {0, 40}, {0, 30}}};
  e.reasons = {{"Insufficient cpu", 1}};
  e.rejections = {{"n1", "NodeResourcesFit", "Insufficient cpu"}};
  e.filter_plugins = {"NodeUnschedulable", "NodeResourcesFit",
                      "TaintToleration"};
  return e;
}

TEST(ExplanationJsonTest, WeightedScoresSumToTheTotal) {
  nlohmann::json j = ExplanationJson(Scheduled());
  EXPECT_EQ(j["result"], "Scheduled");
  EXPECT_EQ(j["node"], "n2");
  EXPECT_EQ(j["nodes"]["feasible"], 2);
  ASSERT_EQ(j["top"].size(), 2u);
  for (const nlohmann::json& n : j["top"]) {
    int64_t sum = 0;
    for (const nlohmann::json& s : n["scores"])
      sum += s["weighted"].get<int64_t>();
    EXPECT_EQ(sum, n["total"].get<int64_t>()) << n.dump();
  }
  EXPECT_EQ(j["top"][0]["scores"][0], (nlohmann::json{{"plugin", "Concentrate"},
                                                      {"raw", 3},
                                                      {"normalized", 100},
                                                      {"weighted", 1000}}));
  EXPECT_EQ(j["filterReasons"],
            (nlohmann::json::array(
                {{{"reason", "Insufficient cpu"}, {"nodes", 1}}})));
}

// kube-scheduler-simulator's shapes: node -> plugin -> string.
TEST(SimulatorAnnotationsTest, SimulatorShapes) {
  nlohmann::json a = SimulatorAnnotations(Scheduled());
  EXPECT_EQ(a["kube-scheduler-simulator.sigs.k8s.io/selected-node"], "n2");
  nlohmann::json filter = nlohmann::json::parse(
      a["kube-scheduler-simulator.sigs.k8s.io/filter-result"]
          .get<std::string>());
  EXPECT_EQ(filter["n2"], (nlohmann::json{{"NodeUnschedulable", "passed"},
                                          {"NodeResourcesFit", "passed"},
                                          {"TaintToleration", "passed"}}));
  // The plugins before the rejecting one passed; the later ones never ran.
  EXPECT_EQ(filter["n1"],
            (nlohmann::json{{"NodeUnschedulable", "passed"},
                            {"NodeResourcesFit", "Insufficient cpu"}}));
  nlohmann::json score = nlohmann::json::parse(
      a["kube-scheduler-simulator.sigs.k8s.io/score-result"]
          .get<std::string>());
  EXPECT_EQ(score["n2"],
            (nlohmann::json{{"Concentrate", "3"}, {"NodeResourcesFit", "10"}}));
  EXPECT_FALSE(score.contains("n1"));
  nlohmann::json final_score = nlohmann::json::parse(
      a["kube-scheduler-simulator.sigs.k8s.io/finalscore-result"]
          .get<std::string>());
  EXPECT_EQ(final_score["n2"], (nlohmann::json{{"Concentrate", "1000"},
                                               {"NodeResourcesFit", "50"}}));
  EXPECT_FALSE(a.contains("kscore.io/record-scores-truncated"));
}

TEST(SimulatorAnnotationsTest, StaysUnderTheBudgetAndSaysSo) {
  Explanation e = Scheduled();
  for (int i = 0; i < 1000; ++i) {
    e.top.push_back({absl::StrCat("node-", i), 0, {0, 0}, {0, 0}});
  }
  nlohmann::json a = SimulatorAnnotations(e, 10000);
  size_t bytes = 0;
  for (const auto& [k, v] : a.items()) bytes += v.get<std::string>().size();
  EXPECT_LT(bytes, 11000u);
  EXPECT_THAT(a["kscore.io/record-scores-truncated"].get<std::string>(),
              ::testing::StartsWith("recorded "));
  nlohmann::json filter = nlohmann::json::parse(
      a["kube-scheduler-simulator.sigs.k8s.io/filter-result"]
          .get<std::string>());
  EXPECT_TRUE(filter.contains("n2"));  // the best nodes go first
}

TEST(TrimmedTest, KeepsTheBestNodesAndNoRejections) {
  Explanation t = Trimmed(Scheduled(), 1);
  ASSERT_EQ(t.top.size(), 1u);
  EXPECT_EQ(t.top[0].node, "n2");
  EXPECT_TRUE(t.rejections.empty());
  EXPECT_THAT(t.plugins, ElementsAre("Concentrate", "NodeResourcesFit"));
  EXPECT_EQ(t.node, "n2");
}

}  // namespace
}  // namespace kscore::scheduler
