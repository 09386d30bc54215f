#include "shim/scheduler/profiles.h"

#include <deque>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kscore::scheduler {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

pb::ListProfilesResponse Answer(const std::string& hash,
                                std::vector<std::string> names) {
  pb::ListProfilesResponse r;
  r.set_config_hash(hash);
  for (const std::string& n : names) {
    pb::Profile* p = r.add_profiles();
    p->set_scheduler_name(n);
    p->add_label_count_keys("app");
    p->set_percentage_of_nodes_to_score(40);
    p->set_node_labels(pb::NODE_LABELS_WHEN_POD_SELECTS);
  }
  return r;
}

// Answers ListProfiles from a script, one entry per call; counts calls.
struct ScriptedScorer {
  std::deque<absl::StatusOr<pb::ListProfilesResponse>> script;
  int calls = 0;
  Profiles::ListFn Fn() {
    return [this]() -> absl::StatusOr<pb::ListProfilesResponse> {
      ++calls;
      if (script.empty()) return absl::UnavailableError("script ended");
      auto r = script.front();
      script.pop_front();
      return r;
    };
  }
};

struct Fixture {
  ScriptedScorer scorer;
  absl::Time now = absl::UnixEpoch();
  std::vector<std::string> checks;
  Profiles profiles;
  explicit Fixture(std::vector<std::string> served)
      : profiles(
            Profiles::Options{
                std::move(served), 2, absl::Seconds(2), [this] { return now; },
                [this](const std::string& r) { checks.push_back(r); }},
            scorer.Fn()) {}
};

TEST(ProfilesTest, AgreeingReplicasGiveTheFactsOfServedProfiles) {
  Fixture f({"concentrate-scheduler"});
  f.scorer.script = {Answer("h1", {"concentrate-scheduler", "other"}),
                     Answer("h1", {"concentrate-scheduler", "other"})};
  auto info = f.profiles.Lookup("concentrate-scheduler");
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ((*info)->config_hash, "h1");
  EXPECT_THAT((*info)->label_count_keys, ElementsAre("app"));
  EXPECT_EQ((*info)->percentage_of_nodes_to_score, 40);
  pb::Pod plain, selecting;
  (*selecting.mutable_node_selector())["zone"] = "a";
  EXPECT_FALSE((*info)->NeedsNodeLabels(plain));
  EXPECT_TRUE((*info)->NeedsNodeLabels(selecting));
  EXPECT_EQ(f.scorer.calls, 2);  // both probes
  // Learnt once: later lookups ask nobody.
  ASSERT_TRUE(f.profiles.Lookup("concentrate-scheduler").ok());
  EXPECT_EQ(f.scorer.calls, 2);
  EXPECT_THAT(f.checks, ElementsAre(""));
  EXPECT_TRUE(f.profiles.Serves("concentrate-scheduler"));
  EXPECT_FALSE(f.profiles.Serves("other"));
}

// A profile preempts when one of its plugins runs at PostFilter.
TEST(ProfilesTest, PostFilterPluginsMakeAProfilePreempt) {
  Fixture f({"a", "b"});
  pb::ListProfilesResponse r = Answer("h1", {"a", "b"});
  pb::PluginInfo* fit = r.mutable_profiles(0)->add_plugins();
  fit->set_name("NodeResourcesFit");
  fit->add_extension_points("Filter");
  *r.mutable_profiles(1)->add_plugins() = *fit;
  pb::PluginInfo* preemption = r.mutable_profiles(1)->add_plugins();
  preemption->set_name("DefaultPreemption");
  preemption->add_extension_points("PostFilter");
  f.scorer.script = {r, r};
  auto a = f.profiles.Lookup("a");
  auto b = f.profiles.Lookup("b");
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_FALSE((*a)->post_filter);
  EXPECT_TRUE((*b)->post_filter);
}

TEST(ProfilesTest, RefusesWhatItCannotTrust) {
  struct Case {
    std::string name;
    std::vector<absl::StatusOr<pb::ListProfilesResponse>> script;
    std::string want;
    absl::StatusCode code = absl::StatusCode::kFailedPrecondition;
  } cases[] = {
      {"replicas disagree",
       {Answer("h1", {"s"}), Answer("h2", {"s"})},
       "scorer replicas disagree on their configuration: hashes h1 (1 of 2 "
       "answers), h2 (1 of 2 answers)"},
      {"profile missing",
       {Answer("h1", {"a", "b"}), Answer("h1", {"a", "b"})},
       "profile \"s\" is not served by the scorer (its configuration has "
       "schedulerNames [a, b])"},
      // Unavailable: the pods wait for the scorer to answer again.
      {"scorer down",
       {absl::UnavailableError("connection refused")},
       "scorer unavailable: connection refused",
       absl::StatusCode::kUnavailable},
      {"scorer too slow",
       {absl::DeadlineExceededError("deadline exceeded")},
       "scorer unavailable: deadline exceeded"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Fixture f({"s"});
    f.scorer.script.assign(c.script.begin(), c.script.end());
    auto info = f.profiles.Lookup("s");
    ASSERT_FALSE(info.ok());
    EXPECT_EQ(info.status().code(), c.code);
    EXPECT_THAT(std::string(info.status().message()), HasSubstr(c.want));
  }
}

// Refused because the scorer did not answer: once it answers again
// (ScorerAnswered), the next Lookup asks at once, not after `recheck`.
// Other refusals keep their recheck period.
TEST(ProfilesTest, AScorerThatAnswersAgainIsAskedAtOnce) {
  Fixture f({"s"});
  f.scorer.script = {absl::UnavailableError("connection refused")};
  ASSERT_EQ(f.profiles.Lookup("s").status().code(),
            absl::StatusCode::kUnavailable);
  EXPECT_EQ(f.scorer.calls, 1);
  f.profiles.ScorerAnswered();
  f.scorer.script = {Answer("h1", {"s"}), Answer("h1", {"s"})};
  EXPECT_TRUE(f.profiles.Lookup("s").ok());
  EXPECT_EQ(f.scorer.calls, 3);

  Fixture g({"s"});
  g.scorer.script = {Answer("h1", {"s"}), Answer("h2", {"s"})};
  ASSERT_FALSE(g.profiles.Lookup("s").ok());
  g.profiles.ScorerAnswered();
  ASSERT_FALSE(g.profiles.Lookup("s").ok());
  EXPECT_EQ(g.scorer.calls, 2);  // not asked again within `recheck`
}

TEST(ProfilesTest, RechecksWhileRefusedAndAfterInvalidate) {
  Fixture f({"s"});
  f.scorer.script = {Answer("h1", {"s"}), Answer("h2", {"s"})};
  ASSERT_FALSE(f.profiles.Lookup("s").ok());
  EXPECT_EQ(f.scorer.calls, 2);
  // Within the recheck period nobody is asked again.
  f.now += absl::Seconds(1);
  ASSERT_FALSE(f.profiles.Lookup("s").ok());
  EXPECT_EQ(f.scorer.calls, 2);
  // The rollout finished: every replica has h2.
  f.now += absl::Seconds(1);
  f.scorer.script = {Answer("h2", {"s"}), Answer("h2", {"s"})};
  auto info = f.profiles.Lookup("s");
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ((*info)->config_hash, "h2");
  EXPECT_EQ(f.scorer.calls, 4);
  EXPECT_EQ(f.checks.size(), 2u);
  EXPECT_EQ(f.checks.back(), "");
  // A call refused for its hash: ask again at the next lookup, at once.
  f.profiles.Invalidate("configuration hash mismatch");
  f.scorer.script = {Answer("h3", {"s"}), Answer("h3", {"s"})};
  info = f.profiles.Lookup("s");
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ((*info)->config_hash, "h3");
  EXPECT_EQ(f.scorer.calls, 6);
}

}  // namespace
}  // namespace kscore::scheduler
