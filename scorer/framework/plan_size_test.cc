// Profile::CheckPlanSize and the plugins' Plugin::PlanBytes: a plan is
// refused before it is built when it would pass the bound, and the
// estimate is never below the plan's real size.
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scorer/framework/profile.h"
#include "scorer/framework/profile_set.h"
#include "scorer/plugins/registry.h"
#include "scorer/testing/wrappers.h"

namespace kscore::framework {
namespace {

using ::kscore::testing::MakePod;
using ::testing::HasSubstr;

constexpr int64_t kLimit = int64_t{4} << 20;

std::unique_ptr<ProfileSet> DefaultProfiles() {
  absl::StatusOr<model::SchedulerConfig> cfg = model::ParseSchedulerConfig(
      "apiVersion: kubescheduler.config.k8s.io/v1\n"
      "kind: KubeSchedulerConfiguration\n");
  EXPECT_TRUE(cfg.ok()) << cfg.status();
  auto set = BuildProfileSet(*std::move(cfg), plugins::DefaultRegistry());
  EXPECT_TRUE(set.ok()) << set.status();
  return *std::move(set);
}

pb::LabelSelector Selects(const std::string& app) {
  pb::LabelSelector s;
  (*s.mutable_match_labels())["app"] = app;
  return s;
}

// `n` spread constraints, each on its own key, of the given kind.
pb::Pod Spread(int n, const std::string& when = "DoNotSchedule") {
  pb::Pod pod = MakePod().Name("p").Namespace("ns").Label("app", "web").Obj();
  for (int i = 0; i < n; ++i) {
    pb::TopologySpreadConstraint* c = pod.add_topology_spread_constraints();
    c->set_max_skew(1);
    c->set_topology_key(absl::StrCat("example.com/key-", i));
    c->set_when_unsatisfiable(when);
    *c->mutable_label_selector() = Selects("web");
    c->add_match_label_keys("app");
  }
  return pod;
}

// `n` required affinity terms (and as many anti-affinity and preferred).
pb::Pod Affinity(int n) {
  pb::Pod pod = MakePod().Name("p").Namespace("ns").Label("app", "web").Obj();
  for (int i = 0; i < n; ++i) {
    pb::PodAffinityTerm t;
    t.set_topology_key(absl::StrCat("example.com/key-", i));
    *t.mutable_label_selector() = Selects(absl::StrCat("app-", i));
    *pod.mutable_pod_affinity()->add_required() = t;
    *pod.mutable_pod_anti_affinity()->add_required() = t;
    pb::WeightedPodAffinityTerm* w =
        pod.mutable_pod_affinity()->add_preferred();
    w->set_weight(1);
    *w->mutable_term() = t;
  }
  return pod;
}

pb::Pod DefaultSpread() {
  pb::Pod pod = MakePod().Name("p").Namespace("ns").Label("app", "web").Obj();
  *pod.mutable_workload_selectors()->add_services() = Selects("web");
  pod.mutable_workload_selectors()->set_controller_kind("ReplicaSet");
  *pod.mutable_workload_selectors()->mutable_controller() = Selects("web");
  return pod;
}

TEST(PlanSizeTest, EstimateIsAtLeastThePlansSize) {
  auto set = DefaultProfiles();
  const Profile& profile = *set->profiles.begin()->second;
  struct Case {
    std::string name;
    pb::Pod pod;
  };
  const Case cases[] = {
      {"no constraint", MakePod().Name("p").Obj()},
      {"one hard constraint", Spread(1)},
      {"30 hard constraints", Spread(30)},
      {"30 soft constraints", Spread(30, "ScheduleAnyway")},
      {"system defaults", DefaultSpread()},
      {"one affinity term of each kind", Affinity(1)},
      {"30 affinity terms of each kind", Affinity(30)},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const int64_t actual =
        static_cast<int64_t>(profile.Plan(c.pod).ByteSizeLong());
    // The check passes exactly at the estimate: just under it, it refuses
    // a plan no larger than the estimate.
    int64_t estimate = 0;
    for (int64_t bound = 1; bound <= kLimit; bound *= 2) {
      if (profile.CheckPlanSize(c.pod, bound, "--max-plan-bytes").ok()) {
        estimate = bound;
        break;
      }
    }
    ASSERT_GT(estimate, 0);
    EXPECT_GE(estimate, actual);
    // And not wildly above it: a pod is refused for its plan, not for a
    // guess.
    EXPECT_LE(estimate, 8 * actual + 4096) << "plan of " << actual;
  }
}

TEST(PlanSizeTest, QuadraticPlansAreRefusedNamingTheFieldAndTheLimit) {
  auto set = DefaultProfiles();
  const Profile& profile = *set->profiles.begin()->second;
  struct Case {
    std::string name;
    pb::Pod pod;
    std::string field;
  };
  const Case cases[] = {
      // 3000 constraints on 3000 keys: 9 million keys in the plan (~250
      // MB), from a pod of ~200 KB.
      {"hard spread constraints", Spread(3000),
       "pod.topology_spread_constraints"},
      {"soft spread constraints", Spread(3000, "ScheduleAnyway"),
       "pod.topology_spread_constraints"},
      {"required affinity terms", Affinity(2000), "pod.pod_affinity.required"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_LT(c.pod.ByteSizeLong(), 512u << 10);
    absl::Status s = profile.CheckPlanSize(c.pod, kLimit, "--max-plan-bytes");
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
    EXPECT_THAT(s.message(), HasSubstr(c.field));
    EXPECT_THAT(s.message(), HasSubstr("--max-plan-bytes"));
    EXPECT_THAT(s.message(), HasSubstr(absl::StrCat("limit of ", kLimit)));
  }
  // A pod as real ones are passes.
  EXPECT_TRUE(
      profile.CheckPlanSize(Spread(4), kLimit, "--max-plan-bytes").ok());
  EXPECT_TRUE(
      profile.CheckPlanSize(Affinity(4), kLimit, "--max-plan-bytes").ok());
}

// matchLabelKeys copies the pod's own value into each constraint: many
// constraints naming one long label would copy it each time.
TEST(PlanSizeTest, MatchLabelKeysCopiesCount) {
  auto set = DefaultProfiles();
  const Profile& profile = *set->profiles.begin()->second;
  pb::Pod pod = Spread(0);
  (*pod.mutable_labels())["big"] = std::string(64 << 10, 'v');
  for (int i = 0; i < 100; ++i) {
    pb::TopologySpreadConstraint* c = pod.add_topology_spread_constraints();
    c->set_max_skew(1);
    c->set_topology_key("zone");
    c->set_when_unsatisfiable(i % 2 == 0 ? "DoNotSchedule" : "ScheduleAnyway");
    *c->mutable_label_selector() = Selects("web");
    c->add_match_label_keys("big");
  }
  absl::Status s = profile.CheckPlanSize(pod, kLimit, "--max-plan-bytes");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(s.message(), HasSubstr("pod.topology_spread_constraints"));
}

}  // namespace
}  // namespace kscore::framework
