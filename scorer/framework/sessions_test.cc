#include "scorer/framework/sessions.h"

#include <algorithm>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scorer/framework/profile_set.h"
#include "scorer/plugins/registry.h"
#include "scorer/testing/wrappers.h"

namespace kscore::framework {
namespace {

using ::kscore::testing::MakeNode;
using ::kscore::testing::MakePod;
using ::testing::HasSubstr;

// The seed's profile (examples/config/concentrate.yaml): every default
// plugin and Concentrate.
constexpr char kConcentrate[] = R"(
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: concentrate-scheduler
  plugins:
    score:
      enabled:
      - name: Concentrate
        weight: 10
  pluginConfig:
  - name: Concentrate
    args:
      labelKey: app
)";

std::unique_ptr<ProfileSet> Profiles() {
  absl::StatusOr<std::unique_ptr<ProfileSet>> set =
      ParseProfileSet(kConcentrate, plugins::DefaultRegistry());
  EXPECT_TRUE(set.ok()) << set.status();
  return *std::move(set);
}

// A node of the random cluster: 4 to 16 CPUs, some pods of the group on it,
// now and then a taint the pod does not tolerate or a soft one.
pb::Node RandomNode(int i, std::mt19937_64& rng) {
  auto pick = [&rng](int lo, int hi) {
    return std::uniform_int_distribution<int>(lo, hi)(rng);
  };
  const int64_t cpu = 1000 * pick(4, 16);
  const int64_t mem = int64_t{1} << (31 + pick(0, 3));
  const int64_t used = 100 * pick(0, 8);
  auto node = MakeNode()
                  .Name(absl::StrCat("node-", i))
                  .Capacity(cpu, mem, 110)
                  .Requested(used * 10, used << 22);
  if (pick(0, 19) == 0) node.Taint("dedicated", "x", "NoSchedule");
  if (pick(0, 9) == 0) node.Taint("soft", "y", "PreferNoSchedule");
  pb::Node n = node.Obj();
  n.set_pod_count(pick(0, 20));
  if (const int c = pick(-6, 4); c > 0) {
    pb::LabelCount* lc = n.add_label_counts();
    lc->set_key("app");
    lc->set_value("web");
    lc->set_count(c);
  }
  return n;
}

// Places one more pod of the group on `n` (what the shim's cache does when
// the previous pod is assumed there), or churns it (another pod leaves).
void Change(pb::Node& n, const pb::Pod& pod, std::mt19937_64& rng) {
  const bool leave = std::uniform_int_distribution<int>(0, 3)(rng) == 0;
  const int64_t sign = leave ? -1 : 1;
  const pb::Resources& r = pod.containers(0).requests();
  pb::Resources* req = n.mutable_requested();
  req->set_milli_cpu(
      std::max<int64_t>(0, req->milli_cpu() + sign * r.milli_cpu()));
  req->set_memory(std::max<int64_t>(0, req->memory() + sign * r.memory()));
  *n.mutable_non_zero_requested() = *req;
  n.set_pod_count(std::max(0, n.pod_count() + static_cast<int32_t>(sign)));
  if (leave) return;
  if (n.label_counts_size() == 0) {
    pb::LabelCount* lc = n.add_label_counts();
    lc->set_key("app");
    lc->set_value("web");
  }
  n.mutable_label_counts(0)->set_count(n.label_counts(0).count() + 1);
}

struct Full {
  int64_t best = 0;
  std::set<int> nodes;  // with `best`
  int feasible = 0;
};

Full Evaluate(const Profile& profile, const pb::Pod& pod,
              const std::vector<pb::Node>& cluster, NodeVerdicts* out) {
  std::vector<const pb::Node*> nodes;
  for (const pb::Node& n : cluster) nodes.push_back(&n);
  CycleState state;
  EXPECT_TRUE(
      profile
          .BindCluster(state, pod, pb::ClusterData::default_instance(), nodes)
          .ok());
  absl::StatusOr<NodeVerdicts> ev =
      profile.Evaluate(state, pod, nodes, EvaluateMode::kFull);
  EXPECT_TRUE(ev.ok()) << ev.status();
  Full f;
  f.feasible = static_cast<int>(ev->feasible.size());
  if (!ev->feasible.empty()) {
    f.best =
        *std::max_element(ev->scores.total.begin(), ev->scores.total.end());
    for (size_t j = 0; j < ev->feasible.size(); ++j)
      if (ev->scores.total[j] == f.best) f.nodes.insert(ev->feasible[j]);
  }
  if (out != nullptr) *out = *std::move(ev);
  return f;
}

// The session a replica keeps of a whole cycle over `cluster` whose
// verdicts are `ev`: its raw scores, with PreScore's state.
Session Kept(const Profile& profile, const pb::Pod& pod,
             const std::vector<pb::Node>& cluster, const NodeVerdicts& ev) {
  std::vector<const pb::Node*> all;
  for (const pb::Node& n : cluster) all.push_back(&n);
  CycleState kept;
  EXPECT_TRUE(
      profile.BindCluster(kept, pod, pb::ClusterData::default_instance(), all)
          .ok());
  EXPECT_TRUE(profile.Evaluate(kept, pod, all, EvaluateMode::kFull).ok());
  return SessionFrom(profile, SessionKey(profile, pod, {}),
                     FamilyKey(profile, pod, {}), ev.scores, kept);
}

// Random sequences of pods of one template, each placed on its best node,
// with churn besides: after every placement, the session's update of the
// changed nodes decides what a whole cycle over every node decides (the
// best total, the same tied nodes, as many feasible).
TEST(SessionTest, UpdatesDecideAsWholeCycles) {
  std::unique_ptr<ProfileSet> set = Profiles();
  const Profile& profile = *set->profiles.at("concentrate-scheduler");
  ASSERT_TRUE(profile.batches());
  std::mt19937_64 rng(7);
  int compared = 0;
  for (int round = 0; round < 20; ++round) {
    const int n_nodes = std::uniform_int_distribution<int>(5, 80)(rng);
    std::vector<pb::Node> cluster;
    for (int i = 0; i < n_nodes; ++i) cluster.push_back(RandomNode(i, rng));
    pb::Pod pod = MakePod()
                      .Name("p-0")
                      .Label("app", "web")
                      .Req(100 * std::uniform_int_distribution<int>(1, 20)(rng),
                           int64_t{500} << 20)
                      .Obj();
    NodeVerdicts ev;
    Full full = Evaluate(profile, pod, cluster, &ev);
    if (full.feasible == 0) continue;
    Session s = Kept(profile, pod, cluster, ev);
    std::vector<int> slot_of(cluster.size(), -1), node_of;
    for (size_t j = 0; j < ev.feasible.size(); ++j) {
      slot_of[static_cast<size_t>(ev.feasible[j])] = static_cast<int>(j);
      node_of.push_back(ev.feasible[j]);
    }
    for (int step = 1; step < 30 && full.feasible > 0; ++step) {
      // The pod goes to one of its best nodes; a few others churn.
      std::vector<int> best(full.nodes.begin(), full.nodes.end());
      std::set<int> changed = {best[rng() % best.size()]};
      for (int k = std::uniform_int_distribution<int>(0, 2)(rng); k > 0; --k)
        changed.insert(static_cast<int>(rng() % cluster.size()));
      pod.set_name(absl::StrCat("p-", step));
      std::vector<const pb::Node*> nodes;
      std::vector<int32_t> slots;
      for (int i : changed) {
        Change(cluster[static_cast<size_t>(i)], pod, rng);
        nodes.push_back(&cluster[static_cast<size_t>(i)]);
        if (slot_of[static_cast<size_t>(i)] < 0) {
          slot_of[static_cast<size_t>(i)] = static_cast<int>(node_of.size());
          node_of.push_back(i);
        }
        slots.push_back(slot_of[static_cast<size_t>(i)]);
      }
      CycleState state;
      ASSERT_TRUE(profile
                      .BindCluster(state, pod,
                                   pb::ClusterData::default_instance(), nodes)
                      .ok());
      absl::StatusOr<NodeVerdicts> part =
          profile.Evaluate(state, pod, nodes, EvaluateMode::kRawScores);
      ASSERT_TRUE(part.ok()) << part.status();
      absl::StatusOr<std::optional<SessionBest>> got =
          ApplyUpdate(s, *part, slots, pod, nullptr);
      ASSERT_TRUE(got.ok()) << got.status();
      ASSERT_TRUE(got->has_value());
      full = Evaluate(profile, pod, cluster, nullptr);
      ASSERT_EQ((*got)->feasible, full.feasible) << "round " << round;
      if (full.feasible == 0) break;
      EXPECT_EQ((*got)->total, full.best)
          << "round " << round << " step " << step;
      std::set<int> tied;
      for (int32_t slot : (*got)->slots)
        tied.insert(node_of[static_cast<size_t>(slot)]);
      EXPECT_EQ(tied, full.nodes) << "round " << round << " step " << step;
      ++compared;
    }
  }
  EXPECT_GT(compared, 200);
}

TEST(SessionTest, RefusesSlotsThatDoNotFit) {
  std::unique_ptr<ProfileSet> set = Profiles();
  const Profile& profile = *set->profiles.at("concentrate-scheduler");
  Session s;
  s.profile = &profile;
  s.feasible.assign(3, true);
  NodeVerdicts ev;
  ev.filter.resize(2);
  const pb::Pod pod = MakePod().Obj();
  for (const std::vector<int32_t>& slots :
       std::vector<std::vector<int32_t>>{{0}, {0, 5}, {1, 1}, {-1, 0}}) {
    absl::StatusOr<std::optional<SessionBest>> got =
        ApplyUpdate(s, ev, slots, pod, nullptr);
    EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(got.status().message(), HasSubstr("update.slots"));
  }
  // A new slot (3) may be followed by the one after it (4).
  EXPECT_TRUE(
      ApplyUpdate(s, ev, std::vector<int32_t>{3, 4}, pod, nullptr).ok());
  EXPECT_EQ(s.slots(), 5u);
}

// With a window, only its slots that fit are normalised and ranked; the
// others keep their raw scores. A window naming a slot the session lacks,
// or one twice, is refused.
TEST(SessionTest, NormalisesOverTheWindowOnly) {
  std::unique_ptr<ProfileSet> set = Profiles();
  const Profile& profile = *set->profiles.at("concentrate-scheduler");
  const pb::Pod pod = MakePod().Label("app", "web").Obj();
  std::vector<pb::Node> cluster;
  std::mt19937_64 rng(3);
  for (int i = 0; i < 6; ++i) cluster.push_back(RandomNode(i, rng));
  for (pb::Node& n : cluster) {
    n.clear_taints();
    n.clear_label_counts();
  }
  // Node 4 has the most pods of the app; node 1 the next most.
  for (auto [i, count] : {std::pair{4, 5}, std::pair{1, 2}}) {
    pb::LabelCount* lc = cluster[static_cast<size_t>(i)].add_label_counts();
    lc->set_key("app");
    lc->set_value("web");
    lc->set_count(count);
  }
  NodeVerdicts ev;
  Evaluate(profile, pod, cluster, &ev);
  ASSERT_EQ(ev.feasible.size(), cluster.size());
  Session s = Kept(profile, pod, cluster, ev);
  const NodeVerdicts none;
  absl::StatusOr<std::optional<SessionBest>> whole =
      ApplyUpdate(s, none, {}, pod, nullptr);
  ASSERT_TRUE(whole.ok() && whole->has_value());
  EXPECT_EQ((*whole)->slots, std::vector<int32_t>{4});
  EXPECT_EQ((*whole)->feasible, 6);
  const std::vector<int32_t> window = {0, 1, 2};
  absl::StatusOr<std::optional<SessionBest>> part =
      ApplyUpdate(s, none, {}, pod, nullptr, window);
  ASSERT_TRUE(part.ok() && part->has_value()) << part.status();
  EXPECT_EQ((*part)->slots, std::vector<int32_t>{1});
  EXPECT_EQ((*part)->feasible, 3);
  for (const std::vector<int32_t>& bad :
       std::vector<std::vector<int32_t>>{{0, 6}, {1, 1}, {-1}}) {
    absl::StatusOr<std::optional<SessionBest>> got =
        ApplyUpdate(s, none, {}, pod, nullptr, bad);
    EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(got.status().message(), HasSubstr("update.window"));
  }
}

// A family is a template but for its label values: another value keeps it,
// another request or another label key does not.
TEST(SessionTest, FamilyKeyLeavesOutLabelValuesOnly) {
  std::unique_ptr<ProfileSet> set = Profiles();
  const Profile& profile = *set->profiles.at("concentrate-scheduler");
  const pb::Pod web = MakePod().Label("app", "web").Req(100, 1 << 20).Obj();
  const pb::Pod db = MakePod().Label("app", "db").Req(100, 1 << 20).Obj();
  const pb::Pod big = MakePod().Label("app", "web").Req(200, 1 << 20).Obj();
  const pb::Pod other = MakePod().Label("tier", "web").Req(100, 1 << 20).Obj();
  EXPECT_NE(SessionKey(profile, web, {}), SessionKey(profile, db, {}));
  EXPECT_EQ(FamilyKey(profile, web, {}), FamilyKey(profile, db, {}));
  EXPECT_NE(FamilyKey(profile, web, {}), FamilyKey(profile, big, {}));
  EXPECT_NE(FamilyKey(profile, web, {}), FamilyKey(profile, other, {}));
}

// Cluster data that differs only in how large a total is keeps the
// session; a total that becomes zero, or any other field, does not.
TEST(SessionTest, KeyReadsTotalsOnlyAsZeroOrNot) {
  std::unique_ptr<ProfileSet> set = Profiles();
  const Profile& profile = *set->profiles.at("concentrate-scheduler");
  const pb::Pod pod = MakePod().Label("app", "web").Req(100, 1 << 20).Obj();
  auto cluster = [](int64_t answer, int64_t term, int32_t min) {
    pb::ClusterData c;
    c.set_node_count(10);
    pb::QueryAnswer* a = c.add_answers();
    a->set_total(answer);
    a->set_min_count(min);
    pb::ExistingTerm* e = c.add_existing_terms();
    e->set_kind(pb::TERM_KIND_REQUIRED_ANTI_AFFINITY);
    e->mutable_term()->set_topology_key("kubernetes.io/hostname");
    e->set_total(term);
    return c;
  };
  const std::string key = SessionKey(profile, pod, cluster(3, 2, 0));
  EXPECT_EQ(key, SessionKey(profile, pod, cluster(7, 1, 0)));
  EXPECT_NE(key, SessionKey(profile, pod, cluster(0, 2, 0)));
  EXPECT_NE(key, SessionKey(profile, pod, cluster(3, 0, 0)));
  EXPECT_NE(key, SessionKey(profile, pod, cluster(3, 2, 1)));
  EXPECT_EQ(FamilyKey(profile, pod, cluster(3, 2, 0)),
            FamilyKey(profile, pod, cluster(9, 9, 0)));
}

TEST(SessionTest, StoreEvictsTheLeastRecentlyUsedAndChecksGenerations) {
  SessionStore store(2, size_t{1} << 20);
  for (uint64_t id = 1; id <= 3; ++id) store.Put(id, Session{});
  EXPECT_EQ(store.size(), 2u);
  EXPECT_EQ(store.Take(1, 0), nullptr);  // evicted
  EXPECT_EQ(store.Take(2, 1), nullptr);  // wrong generation: gone too
  EXPECT_EQ(store.Take(2, 0), nullptr);
  std::unique_ptr<Session> s = store.Take(3, 0);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(store.Take(3, 0), nullptr);  // taken while it is updated
  s->generation = 1;
  store.Put(3, std::move(*s));
  EXPECT_NE(store.Take(3, 1), nullptr);

  SessionStore small(10, 1000);  // bytes bound
  Session big;
  big.raw.assign(1, std::vector<int64_t>(200, 0));
  big.feasible.assign(200, true);
  small.Put(1, big);
  EXPECT_EQ(small.size(), 0u);  // 1600 bytes of scores: never kept
  EXPECT_LE(small.bytes(), 1000u);
}

}  // namespace
}  // namespace kscore::framework
