#include "shim/cache/cluster_index.h"

#include <map>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "shim/cache/cache.h"
#include "shim/cache/testing/candidates.h"
#include "shim/objects/objects.h"

namespace kscore::cache {
namespace {

using ::testing::ElementsAre;

constexpr char kZone[] = "topology.kubernetes.io/zone";
constexpr char kHost[] = "kubernetes.io/hostname";

objects::PodInfo Pod(const std::string& ns, const std::string& name,
                     std::map<std::string, std::string> labels,
                     const std::string& node) {
  objects::PodInfo p;
  p.namespace_ = ns;
  p.name = name;
  p.key = ns + "/" + name;
  p.node_name = node;
  p.phase = "Running";
  p.pod.set_namespace_(ns);
  p.pod.set_name(name);
  for (const auto& [k, v] : labels) (*p.pod.mutable_labels())[k] = v;
  return p;
}

pb::Node Node(const std::string& name, const std::string& zone) {
  pb::Node n;
  n.set_name(name);
  (*n.mutable_labels())[kHost] = name;
  if (!zone.empty()) (*n.mutable_labels())[kZone] = zone;
  return n;
}

pb::LabelSelector Selects(const std::string& k, const std::string& v) {
  pb::LabelSelector s;
  (*s.mutable_match_labels())[k] = v;
  return s;
}

// The spread-style query: pods of `ns` with app=web, by zone.
pb::PodQuery ByZone(const std::string& ns) {
  pb::PodQuery q;
  pb::PodMatcher* m = q.add_all_of();
  m->add_namespaces(ns);
  *m->mutable_selector() = Selects("app", "web");
  q.set_topology_key(kZone);
  q.mutable_nodes()->add_required_keys(kZone);
  q.set_want_domains(true);
  return q;
}

std::vector<int64_t> Counts(const ClusterIndex& index,
                            const ClusterIndex::Prepared& p,
                            const std::string& node) {
  pb::Node out;
  index.NodeParts(p, node, &out);
  return {out.query_counts().begin(), out.query_counts().end()};
}

class ClusterIndexTest : public ::testing::Test {
 protected:
  void SetUp() override {
    index_.UpsertNode(Node("a1", "a"), {});
    index_.UpsertNode(Node("a2", "a"), {});
    index_.UpsertNode(Node("b1", "b"), {});
    index_.UpsertNode(Node("c1", "c"), {});
    index_.UpsertNode(Node("none", ""), {});  // no zone label
  }
  ClusterIndex::PodRef Add(const objects::PodInfo& p) {
    return index_.AddPod(p, p.node_name);
  }
  ClusterIndex index_;
  pb::Pod incoming_;
};

TEST_F(ClusterIndexTest, CountsMatchingPodsPerDomainWithDomainsAndMinimum) {
  Add(Pod("ns", "w1", {{"app", "web"}}, "a1"));
  Add(Pod("ns", "w2", {{"app", "web"}}, "a2"));
  Add(Pod("ns", "w3", {{"app", "web"}}, "b1"));
  Add(Pod("ns", "w4", {{"app", "web"}}, "none"));   // node not counted
  Add(Pod("other", "w5", {{"app", "web"}}, "c1"));  // other namespace
  Add(Pod("ns", "d1", {{"app", "db"}}, "c1"));      // other labels
  pb::PlanResponse plan;
  *plan.add_queries() = ByZone("ns");
  ClusterIndex::Prepared p = index_.Prepare(incoming_, plan);
  ASSERT_EQ(p.cluster.answers_size(), 1);
  EXPECT_EQ(p.cluster.answers(0).total(), 3);
  EXPECT_EQ(p.cluster.answers(0).domains(), 3);  // a, b, c (c with none)
  EXPECT_EQ(p.cluster.answers(0).min_count(), 0);
  EXPECT_THAT(Counts(index_, p, "a1"), ElementsAre(2));
  EXPECT_THAT(Counts(index_, p, "a2"), ElementsAre(2));
  EXPECT_THAT(Counts(index_, p, "b1"), ElementsAre(1));
  EXPECT_THAT(Counts(index_, p, "c1"), ElementsAre(0));
  EXPECT_THAT(Counts(index_, p, "none"), ElementsAre(0));
}

TEST_F(ClusterIndexTest, PodsBeingDeletedCountOnlyWhenAsked) {
  objects::PodInfo going = Pod("ns", "w1", {{"app", "web"}}, "a1");
  going.deleting = true;
  Add(going);
  Add(Pod("ns", "w2", {{"app", "web"}}, "b1"));
  objects::PodInfo done = Pod("ns", "w3", {{"app", "web"}}, "c1");
  done.phase = "Failed";  // terminated: never counts
  Add(done);
  pb::PlanResponse plan;
  *plan.add_queries() = ByZone("ns");
  pb::PodQuery all = ByZone("ns");
  all.set_include_terminating(true);
  *plan.add_queries() = all;
  ClusterIndex::Prepared p = index_.Prepare(incoming_, plan);
  EXPECT_EQ(p.cluster.answers(0).total(), 1);
  EXPECT_EQ(p.cluster.answers(1).total(), 2);
  EXPECT_THAT(Counts(index_, p, "a1"), ElementsAre(0, 1));
  EXPECT_THAT(Counts(index_, p, "c1"), ElementsAre(0, 0));
  EXPECT_EQ(p.cluster.answers(0).min_count(), 0);
}

TEST_F(ClusterIndexTest, NodeFilterHonoursThePodsNodeAffinityAndTaints) {
  Add(Pod("ns", "w1", {{"app", "web"}}, "a1"));
  Add(Pod("ns", "w2", {{"app", "web"}}, "b1"));
  Add(Pod("ns", "w3", {{"app", "web"}}, "b1"));
  pb::Node tainted = Node("c1", "c");
  pb::Taint* t = tainted.add_taints();
  t->set_key("dedicated");
  t->set_effect("NoSchedule");
  index_.UpsertNode(tainted, {});
  Add(Pod("ns", "w4", {{"app", "web"}}, "c1"));
  // The pod only goes to zone a or c.
  pb::NodeSelectorRequirement* r = incoming_.mutable_node_affinity()
                                       ->add_required()
                                       ->add_match_expressions();
  r->set_key(kZone);
  r->set_operator_("In");
  r->add_values("a");
  r->add_values("c");
  pb::PlanResponse plan;
  pb::PodQuery q = ByZone("ns");
  q.mutable_nodes()->set_pod_node_affinity(true);
  *plan.add_queries() = q;
  q.mutable_nodes()->set_pod_taints(true);
  *plan.add_queries() = q;
  ClusterIndex::Prepared p = index_.Prepare(incoming_, plan);
  EXPECT_EQ(p.cluster.answers(0).total(), 2);    // a1 and c1
  EXPECT_EQ(p.cluster.answers(0).domains(), 2);  // a, c
  EXPECT_EQ(p.cluster.answers(0).min_count(), 1);
  EXPECT_EQ(p.cluster.answers(1).total(), 1);  // c1's taint not tolerated
  EXPECT_EQ(p.cluster.answers(1).domains(), 1);
  // A candidate outside the counted nodes still reads its domain's count
  // (0: its domain is not counted).
  EXPECT_THAT(Counts(index_, p, "b1"), ElementsAre(0, 0));
  EXPECT_THAT(Counts(index_, p, "c1"), ElementsAre(1, 0));
}

TEST_F(ClusterIndexTest, EmptyTopologyKeyCountsEachNodesOwnPods) {
  Add(Pod("ns", "w1", {{"app", "web"}}, "a1"));
  Add(Pod("ns", "w2", {{"app", "web"}}, "a1"));
  Add(Pod("ns", "w3", {{"app", "web"}}, "none"));
  pb::PlanResponse plan;
  pb::PodQuery q = ByZone("ns");
  q.set_topology_key("");
  q.set_want_domains(false);
  *plan.add_queries() = q;
  ClusterIndex::Prepared p = index_.Prepare(incoming_, plan);
  EXPECT_EQ(p.cluster.answers(0).total(), 3);
  EXPECT_THAT(Counts(index_, p, "a1"), ElementsAre(2));
  EXPECT_THAT(Counts(index_, p, "a2"), ElementsAre(0));
  EXPECT_THAT(Counts(index_, p, "none"), ElementsAre(1));
}

TEST_F(ClusterIndexTest, MatchersAreAndedAndNamespaceSelectorsReadLabels) {
  model::LabelMap team;
  team["team"] = "x";
  index_.UpsertNamespace("blue", team);
  Add(Pod("blue", "p1", {{"app", "web"}, {"tier", "1"}}, "a1"));
  Add(Pod("green", "p2", {{"app", "web"}, {"tier", "1"}}, "b1"));
  Add(Pod("blue", "p3", {{"app", "web"}}, "c1"));
  pb::PlanResponse plan;
  pb::PodQuery q;
  pb::PodMatcher* m1 = q.add_all_of();
  *m1->mutable_namespace_selector() = Selects("team", "x");
  *m1->mutable_selector() = Selects("app", "web");
  pb::PodMatcher* m2 = q.add_all_of();
  m2->mutable_namespace_selector();  // empty: every namespace
  *m2->mutable_selector() = Selects("tier", "1");
  q.set_topology_key(kHost);
  *plan.add_queries() = q;
  pb::PodQuery nothing = q;
  nothing.mutable_all_of(1)->clear_selector();  // unset selects no pod
  *plan.add_queries() = nothing;
  ClusterIndex::Prepared p = index_.Prepare(incoming_, plan);
  EXPECT_EQ(p.cluster.answers(0).total(), 1);  // only p1
  EXPECT_THAT(Counts(index_, p, "a1"), ElementsAre(1, 0));
  EXPECT_EQ(p.cluster.answers(1).total(), 0);
}

TEST_F(ClusterIndexTest, ExistingTermsAreDistinctWithCountsPerDomain) {
  objects::PodInfo anti = Pod("ns", "guard", {{"app", "db"}}, "a1");
  pb::PodAffinityTerm* t = anti.pod.mutable_pod_anti_affinity()->add_required();
  t->set_topology_key(kZone);
  *t->mutable_label_selector() = Selects("app", "web");
  objects::PodInfo twin = anti;  // the same term: one entry, two pods
  twin.name = "guard2";
  twin.key = "ns/guard2";
  twin.node_name = "b1";
  objects::PodInfo host = Pod("ns", "h", {}, "c1");
  pb::WeightedPodAffinityTerm* w =
      host.pod.mutable_pod_affinity()->add_preferred();
  w->set_weight(7);
  w->mutable_term()->set_topology_key(kHost);
  const ClusterIndex::PodRef ref = Add(anti);
  Add(twin);
  Add(host);
  pb::PlanResponse plan;
  plan.add_existing_terms(pb::TERM_KIND_REQUIRED_ANTI_AFFINITY);
  ClusterIndex::Prepared p = index_.Prepare(incoming_, plan);
  ASSERT_EQ(p.cluster.existing_terms_size(), 1);  // the preferred one not asked
  EXPECT_EQ(p.cluster.existing_terms(0).total(), 2);
  EXPECT_EQ(p.cluster.existing_terms(0).namespace_(), "ns");
  EXPECT_EQ(p.cluster.existing_terms(0).kind(),
            pb::TERM_KIND_REQUIRED_ANTI_AFFINITY);
  pb::Node a2;
  index_.NodeParts(p, "a2", &a2);  // zone a holds one of them
  ASSERT_EQ(a2.term_counts_size(), 1);
  EXPECT_EQ(a2.term_counts(0).count(), 1);
  pb::Node c1;
  index_.NodeParts(p, "c1", &c1);
  EXPECT_EQ(c1.term_counts_size(), 0);

  plan.add_existing_terms(pb::TERM_KIND_PREFERRED_AFFINITY);
  p = index_.Prepare(incoming_, plan);
  ASSERT_EQ(p.cluster.existing_terms_size(), 2);
  index_.RemovePod(ref);
  p = index_.Prepare(incoming_, plan);
  int anti_total = 0;
  for (const pb::ExistingTerm& e : p.cluster.existing_terms()) {
    if (e.kind() == pb::TERM_KIND_REQUIRED_ANTI_AFFINITY) {
      anti_total += e.total();
    }
  }
  EXPECT_EQ(anti_total, 1);
}

// A pod's own part of the answers (a preemption victim's): the queries
// whose count on its node includes it, and the prepared terms it carries
// there, once per occurrence.
TEST_F(ClusterIndexTest, PodPartsAreWhatOnePodAddsToItsNode) {
  pb::PlanResponse plan;
  *plan.add_queries() = ByZone("ns");  // 0: web pods, by zone
  pb::PodQuery all = ByZone("ns");     // 1: the same, deleting pods too
  all.set_include_terminating(true);
  *plan.add_queries() = all;
  pb::PodQuery own;  // 2: each node's own pods, any labels
  pb::PodMatcher* m = own.add_all_of();
  m->add_namespaces("ns");
  m->mutable_selector();
  *plan.add_queries() = own;
  plan.add_existing_terms(pb::TERM_KIND_REQUIRED_ANTI_AFFINITY);

  objects::PodInfo web = Pod("ns", "w1", {{"app", "web"}}, "a1");
  pb::PodAffinityTerm* t = web.pod.mutable_pod_anti_affinity()->add_required();
  t->set_topology_key(kZone);
  *t->mutable_label_selector() = Selects("app", "web");
  *web.pod.mutable_pod_anti_affinity()->add_required() = *t;  // twice
  objects::PodInfo going = Pod("ns", "w2", {{"app", "web"}}, "b1");
  going.deleting = true;
  objects::PodInfo zoneless = web;  // on a node without the zone label
  zoneless.name = "w3";
  zoneless.key = "ns/w3";
  zoneless.node_name = "none";
  objects::PodInfo db = Pod("ns", "d1", {{"app", "db"}}, "a1");
  objects::PodInfo done = Pod("ns", "w4", {{"app", "web"}}, "a1");
  done.phase = "Succeeded";
  const ClusterIndex::PodRef refs[] = {Add(web), Add(going), Add(zoneless),
                                       Add(db), Add(done)};
  ClusterIndex::Prepared p = index_.Prepare(incoming_, plan);
  ASSERT_EQ(p.cluster.existing_terms_size(), 1);
  auto parts = [&](const ClusterIndex::PodRef& ref) {
    pb::VictimPod v;
    index_.PodParts(incoming_, plan, p, ref, &v);
    return v;
  };
  EXPECT_THAT(parts(refs[0]).matched_queries(), ElementsAre(0, 1, 2));
  EXPECT_THAT(parts(refs[0]).terms(), ElementsAre(0, 0));
  EXPECT_THAT(parts(refs[1]).matched_queries(), ElementsAre(1));
  EXPECT_THAT(parts(refs[2]).matched_queries(), ElementsAre(2));
  EXPECT_THAT(parts(refs[2]).terms(), ElementsAre());  // no zone, no count
  EXPECT_THAT(parts(refs[3]).matched_queries(), ElementsAre(2));
  EXPECT_THAT(parts(refs[4]).matched_queries(), ElementsAre());
  // What the parts say adds up to what the nodes are told.
  EXPECT_THAT(Counts(index_, p, "a1"), ElementsAre(1, 1, 2));
  pb::Node a1;
  index_.NodeParts(p, "a1", &a1);
  ASSERT_EQ(a1.term_counts_size(), 1);
  EXPECT_EQ(a1.term_counts(0).count(), 2);
}

TEST_F(ClusterIndexTest, RemovedPodsAndNodesStopCounting) {
  const ClusterIndex::PodRef r1 = Add(Pod("ns", "w1", {{"app", "web"}}, "a1"));
  Add(Pod("ns", "w2", {{"app", "web"}}, "b1"));
  index_.RemovePod(r1);
  index_.RemoveNode("b1");
  pb::PlanResponse plan;
  *plan.add_queries() = ByZone("ns");
  ClusterIndex::Prepared p = index_.Prepare(incoming_, plan);
  EXPECT_EQ(p.cluster.answers(0).total(), 0);
  EXPECT_EQ(p.cluster.answers(0).domains(), 2);  // a and c remain
  EXPECT_EQ(index_.node_count(), 4u);
}

TEST_F(ClusterIndexTest, ImagesOfThePodWithTheirSpread) {
  index_.UpsertNode(
      Node("a1", "a"),
      {{{"nginx:latest", "docker.io/nginx"}, 500}, {{"redis:7"}, 100}});
  index_.UpsertNode(Node("a2", "a"), {{{"nginx:latest"}, 500}});
  incoming_.add_images("nginx");  // normalised to nginx:latest
  incoming_.add_images("busybox:1");
  ClusterIndex::Prepared p = index_.Prepare(incoming_, pb::PlanResponse());
  EXPECT_EQ(p.cluster.node_count(), 5);
  pb::Node a1;
  index_.NodeParts(p, "a1", &a1);
  ASSERT_EQ(a1.images_size(), 1);
  EXPECT_EQ(a1.images(0).name(), "nginx:latest");
  EXPECT_EQ(a1.images(0).size_bytes(), 500);
  EXPECT_EQ(a1.images(0).num_nodes(), 2);
  index_.UpsertNode(Node("a2", "a"), {});  // the image is gone from a2
  p = index_.Prepare(incoming_, pb::PlanResponse());
  a1.Clear();
  index_.NodeParts(p, "a1", &a1);
  EXPECT_EQ(a1.images(0).num_nodes(), 1);
}

TEST_F(ClusterIndexTest, WorkloadSelectorsAreTheMatchingServicesAndController) {
  index_.UpsertWorkload(objects::WorkloadKind::kService, "ns", "web",
                        /*has_selector=*/true, Selects("app", "web"));
  index_.UpsertWorkload(objects::WorkloadKind::kService, "ns", "db", true,
                        Selects("app", "db"));
  index_.UpsertWorkload(objects::WorkloadKind::kService, "other", "web", true,
                        Selects("app", "web"));
  index_.UpsertWorkload(objects::WorkloadKind::kReplicaSet, "ns", "web-123",
                        true, Selects("pod-template-hash", "123"));
  objects::PodInfo pod = Pod("ns", "w1", {{"app", "web"}}, "");
  pod.controller_api_version = "apps/v1";
  pod.controller_kind = "ReplicaSet";
  pod.controller_name = "web-123";
  pb::WorkloadSelectors s = index_.WorkloadSelectorsFor(pod);
  ASSERT_EQ(s.services_size(), 1);
  EXPECT_EQ(s.services(0).match_labels().at("app"), "web");
  EXPECT_EQ(s.controller_kind(), "ReplicaSet");
  EXPECT_EQ(s.controller().match_labels().at("pod-template-hash"), "123");
  pod.controller_api_version = "extensions/v1beta1";  // not apps/v1
  EXPECT_FALSE(index_.WorkloadSelectorsFor(pod).has_controller());
  index_.RemoveWorkload(objects::WorkloadKind::kService, "ns", "web");
  pod.controller_api_version = "apps/v1";
  EXPECT_EQ(index_.WorkloadSelectorsFor(pod).services_size(), 0);
}

// Through the Cache: candidates carry their part of the answers.
TEST(CacheClusterTest, CandidatesCarryQueryCounts) {
  Cache c;
  c.UpsertNode(Node("a1", "a"));
  c.UpsertNode(Node("b1", "b"));
  c.UpsertAssignedPod(Pod("ns", "w1", {{"app", "web"}}, "a1"));
  objects::PodInfo incoming = Pod("ns", "new", {{"app", "web"}}, "");
  pb::PlanResponse plan;
  *plan.add_queries() = ByZone("ns");
  std::shared_ptr<const ClusterIndex::Prepared> p =
      c.Prepare(incoming.pod, plan);
  google::protobuf::RepeatedPtrField<pb::Node> out;
  testing::FillCandidates(c, incoming, {}, 0, 10, &out, true, p.get());
  std::map<std::string, std::vector<int64_t>> got;
  for (const pb::Node& n : out) {
    got[n.name()] = {n.query_counts().begin(), n.query_counts().end()};
  }
  EXPECT_THAT(got["a1"], ElementsAre(1));
  EXPECT_THAT(got["b1"], ElementsAre(0));
  c.RemovePod("ns/w1");
  p = c.Prepare(incoming.pod, plan);
  EXPECT_EQ(p->cluster.answers(0).total(), 0);
}

}  // namespace
}  // namespace kscore::cache
