#include "shim/cache/cluster_index.h"

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <set>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
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

// A query's node side is worked out once per node version: a node status
// update (labels and taints as they were) keeps it; a label or taint
// change, or a node coming or going, makes the next cycle work it out anew.
TEST_F(ClusterIndexTest, NodeSideIsKeptUntilLabelsOrTaintsChange) {
  Add(Pod("ns", "w1", {{"app", "web"}}, "a1"));
  Add(Pod("ns", "w2", {{"app", "web"}}, "b1"));
  pb::PlanResponse plan;
  pb::PodQuery q = ByZone("ns");
  q.mutable_nodes()->set_pod_taints(true);
  *plan.add_queries() = q;
  ClusterIndex::Prepared p = index_.Prepare(incoming_, plan);
  EXPECT_EQ(index_.eligibility_builds(), 1);
  EXPECT_EQ(p.cluster.answers(0).domains(), 3);
  pb::Node beat = Node("a1", "a");  // same labels, another status
  beat.mutable_allocatable()->set_milli_cpu(1000);
  index_.UpsertNode(beat, {{{"nginx:latest"}, 500}});
  p = index_.Prepare(incoming_, plan);
  EXPECT_EQ(index_.eligibility_builds(), 1);
  EXPECT_EQ(p.cluster.answers(0).total(), 2);
  EXPECT_THAT(Counts(index_, p, "a2"), ElementsAre(1));

  index_.UpsertNode(Node("a1", "b"), {});  // a1 moves to zone b
  p = index_.Prepare(incoming_, plan);
  EXPECT_EQ(index_.eligibility_builds(), 2);
  EXPECT_THAT(Counts(index_, p, "a2"), ElementsAre(0));
  EXPECT_THAT(Counts(index_, p, "b1"), ElementsAre(2));
  EXPECT_EQ(p.cluster.answers(0).min_count(), 0);  // a and c without pods

  pb::Node tainted = Node("b1", "b");
  pb::Taint* t = tainted.add_taints();
  t->set_key("dedicated");
  t->set_effect("NoSchedule");
  index_.UpsertNode(tainted, {});
  p = index_.Prepare(incoming_, plan);
  EXPECT_EQ(index_.eligibility_builds(), 3);
  EXPECT_EQ(p.cluster.answers(0).total(), 1);  // w2's node not counted
  index_.UpsertNode(tainted, {});              // the same taint again
  p = index_.Prepare(incoming_, plan);
  EXPECT_EQ(index_.eligibility_builds(), 3);

  // Answers prepared before a node changed read the node as it is now.
  index_.UpsertNode(Node("c1", "b"), {});
  EXPECT_THAT(Counts(index_, p, "c1"), ElementsAre(1));
  index_.RemoveNode("a2");
  p = index_.Prepare(incoming_, plan);
  EXPECT_EQ(index_.eligibility_builds(), 4);
  EXPECT_EQ(p.cluster.answers(0).domains(), 1);  // b: a1 and c1
  index_.UpsertNode(Node("d1", "d"), {});
  p = index_.Prepare(incoming_, plan);
  EXPECT_EQ(index_.eligibility_builds(), 5);
  EXPECT_EQ(p.cluster.answers(0).domains(), 2);
}

// Through the Cache: candidates carry their part of the answers.
// Whether a pod on a node changes only that node's parts: each key the
// plan's queries and the existing terms read has a value of its own per
// node (the hostname), or none (the node's own pods); else which other
// nodes' parts it changes (DomainPeers).
TEST_F(ClusterIndexTest, DomainsPerNodeAndTheirPeers) {
  pb::PlanResponse plan;
  pb::PodQuery host = ByZone("ns");
  host.set_topology_key(kHost);
  *plan.add_queries() = host;
  pb::PodQuery own = ByZone("ns");
  own.clear_topology_key();
  *plan.add_queries() = own;
  plan.add_existing_terms(pb::TERM_KIND_REQUIRED_ANTI_AFFINITY);
  EXPECT_TRUE(index_.Prepare(incoming_, plan).domains_per_node);

  // A term over the zone, which a1 and a2 share.
  objects::PodInfo anti = Pod("ns", "guard", {{"app", "db"}}, "b1");
  pb::PodAffinityTerm* t = anti.pod.mutable_pod_anti_affinity()->add_required();
  t->set_topology_key(kZone);
  *t->mutable_label_selector() = Selects("app", "web");
  const ClusterIndex::PodRef ref = Add(anti);
  ClusterIndex::Prepared zoned = index_.Prepare(incoming_, plan);
  EXPECT_FALSE(zoned.domains_per_node);
  // A pod on a1 changes the counts of zone a: a1's and a2's.
  std::vector<std::string> peers;
  ASSERT_TRUE(index_.DomainPeers(zoned, {"a1", "none"}, &peers));
  std::sort(peers.begin(), peers.end());
  EXPECT_THAT(peers, ElementsAre("a1", "a2"));
  // With a query over the zone too: each node of the changed zones once
  // after the changed nodes themselves.
  *plan.add_queries() = ByZone("ns");
  ClusterIndex::Prepared twice = index_.Prepare(incoming_, plan);
  plan.mutable_queries()->RemoveLast();
  const std::vector<std::string> changed = {"a2", "b1", "a1"};
  peers = changed;
  ASSERT_TRUE(index_.DomainPeers(twice, changed, &peers));
  std::sort(peers.begin() + 3, peers.end());
  EXPECT_THAT(peers, ElementsAre("a2", "b1", "a1", "a1", "a2", "b1"));
  index_.UpsertNode(Node("d1", "d"), {});  // another node version
  EXPECT_FALSE(index_.DomainPeers(zoned, {"a1"}, &peers));
  index_.RemoveNode("d1");
  index_.RemovePod(ref);
  EXPECT_TRUE(index_.Prepare(incoming_, plan).domains_per_node);

  *plan.add_queries() = ByZone("ns");
  EXPECT_FALSE(index_.Prepare(incoming_, plan).domains_per_node);
  plan.mutable_queries()->RemoveLast();
  pb::Node twin = Node("c1", "c");  // c1 takes a1's hostname
  (*twin.mutable_labels())[kHost] = "a1";
  index_.UpsertNode(twin, {});
  EXPECT_FALSE(index_.Prepare(incoming_, plan).domains_per_node);
}

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

// ---------------------------------------------------------------------------
// The answers worked out from the objects alone, pod by pod and node by
// node, against which random clusters check the index.

std::string Deterministic(const google::protobuf::MessageLite& m) {
  std::string out;
  google::protobuf::io::StringOutputStream stream(&out);
  google::protobuf::io::CodedOutputStream coded(&stream);
  coded.SetSerializationDeterministic(true);
  m.SerializeToCodedStream(&coded);
  coded.Trim();
  return out;
}

struct World {
  std::map<std::string, pb::Node> nodes;
  struct Placed {
    objects::PodInfo pod;
    ClusterIndex::PodRef ref;
  };
  std::map<std::string, Placed> pods;  // by key
  std::map<std::string, model::LabelMap> namespaces;
};

// Per query or term: its topology key and counts by domain (or by node).
using KeyedCounts = std::pair<std::string, std::map<std::string, int64_t>>;
struct Reference {
  pb::ClusterData cluster;
  std::vector<KeyedCounts> queries;
  std::vector<KeyedCounts> terms;
};

const std::string* LabelOf(const pb::Node& n, const std::string& key) {
  auto it = n.labels().find(key);
  return it == n.labels().end() ? nullptr : &it->second;
}

bool NodeCounts(const pb::PodQuery& q, const pb::Pod& incoming,
                const pb::Node& n) {
  if (!q.topology_key().empty() && !LabelOf(n, q.topology_key())) return false;
  for (const std::string& k : q.nodes().required_keys()) {
    if (!LabelOf(n, k)) return false;
  }
  if (q.nodes().pod_node_affinity() &&
      !model::MatchesRequiredNodeAffinity(incoming, n)) {
    return false;
  }
  return !q.nodes().pod_taints() ||
         model::ToleratesNoScheduleTaints(incoming, n);
}

bool PodMatches(const World& w, const pb::PodQuery& q,
                const objects::PodInfo& p) {
  if (q.all_of().empty()) return false;
  for (const pb::PodMatcher& m : q.all_of()) {
    if (!m.has_selector()) return false;
    bool in_ns = std::find(m.namespaces().begin(), m.namespaces().end(),
                           p.namespace_) != m.namespaces().end();
    if (!in_ns && m.has_namespace_selector()) {
      auto ns = w.namespaces.find(p.namespace_);
      in_ns = model::LabelSelectorMatches(
          m.namespace_selector(),
          ns == w.namespaces.end() ? model::LabelMap() : ns->second);
    }
    if (!in_ns || !model::LabelSelectorMatches(m.selector(), p.pod.labels())) {
      return false;
    }
  }
  return true;
}

void ReferenceQuery(const World& w, const pb::Pod& incoming,
                    const pb::PodQuery& q, Reference& out) {
  auto& [key, counts] = out.queries.emplace_back();
  key = q.topology_key();
  pb::QueryAnswer* answer = out.cluster.add_answers();
  int64_t total = 0;
  for (const auto& [_, placed] : w.pods) {
    const objects::PodInfo& p = placed.pod;
    if (p.terminated() || (p.deleting && !q.include_terminating())) continue;
    auto n = w.nodes.find(p.node_name);
    if (n == w.nodes.end() || !PodMatches(w, q, p)) continue;
    if (key.empty()) {
      ++counts[p.node_name];
    } else if (NodeCounts(q, incoming, n->second)) {
      ++counts[*LabelOf(n->second, key)];
    } else {
      continue;
    }
    ++total;
  }
  answer->set_total(total);
  if (!q.want_domains() || key.empty()) return;
  std::set<std::string> domains;
  for (const auto& [_, n] : w.nodes) {
    if (NodeCounts(q, incoming, n)) domains.insert(*LabelOf(n, key));
  }
  int64_t min = domains.empty() ? 0 : std::numeric_limits<int64_t>::max();
  for (const std::string& d : domains) {
    auto c = counts.find(d);
    min = std::min<int64_t>(min, c == counts.end() ? 0 : c->second);
  }
  answer->set_domains(static_cast<int32_t>(domains.size()));
  answer->set_min_count(min);
}

void ReferenceTerms(const World& w, const pb::PlanResponse& plan,
                    Reference& out) {
  const std::set<int> kinds(plan.existing_terms().begin(),
                            plan.existing_terms().end());
  // By identity: the term, and its pods per node.
  std::map<std::string, std::pair<pb::ExistingTerm, std::map<std::string, int>>>
      terms;
  auto add = [&](const objects::PodInfo& p, pb::TermKind kind,
                 const pb::PodAffinityTerm& t, int32_t weight) {
    if (!kinds.count(kind)) return;
    pb::ExistingTerm e;
    e.set_kind(kind);
    *e.mutable_term() = t;
    e.set_weight(weight);
    e.set_namespace_(p.pod.namespace_());
    auto& [term, nodes] = terms[Deterministic(e)];
    term = e;
    ++nodes[p.node_name];
  };
  for (const auto& [_, placed] : w.pods) {
    const objects::PodInfo& p = placed.pod;
    if (p.terminated()) continue;
    for (const auto& t : p.pod.pod_affinity().required()) {
      add(p, pb::TERM_KIND_REQUIRED_AFFINITY, t, 0);
    }
    for (const auto& t : p.pod.pod_anti_affinity().required()) {
      add(p, pb::TERM_KIND_REQUIRED_ANTI_AFFINITY, t, 0);
    }
    for (const auto& t : p.pod.pod_affinity().preferred()) {
      add(p, pb::TERM_KIND_PREFERRED_AFFINITY, t.term(), t.weight());
    }
  }
  for (const auto& [_, entry] : terms) {
    auto& [key, by_domain] = out.terms.emplace_back();
    key = entry.first.term().topology_key();
    int64_t total = 0;
    for (const auto& [node, count] : entry.second) {
      auto n = w.nodes.find(node);
      const std::string* v =
          n == w.nodes.end() ? nullptr : LabelOf(n->second, key);
      if (v == nullptr) continue;
      by_domain[*v] += count;
      total += count;
    }
    pb::ExistingTerm* e = out.cluster.add_existing_terms();
    *e = entry.first;
    e->set_total(total);
  }
}

Reference ReferenceOf(const World& w, const pb::Pod& incoming,
                      const pb::PlanResponse& plan) {
  Reference out;
  out.cluster.set_node_count(static_cast<int32_t>(w.nodes.size()));
  for (const pb::PodQuery& q : plan.queries()) {
    ReferenceQuery(w, incoming, q, out);
  }
  ReferenceTerms(w, plan, out);
  return out;
}

// NodeParts' query_counts and term_counts for `node`, from the reference
// and the nodes as they are now.
pb::Node ReferenceParts(const World& w, const Reference& r,
                        const std::string& node) {
  pb::Node out;
  auto n = w.nodes.find(node);
  auto count_in = [&](const KeyedCounts& kc, const std::string& domain) {
    auto c = kc.second.find(domain);
    return c == kc.second.end() ? int64_t{0} : c->second;
  };
  for (const KeyedCounts& q : r.queries) {
    // Per node: the node's own count, even when it has gone since.
    const std::string* v = q.first.empty()      ? &node
                           : n == w.nodes.end() ? nullptr
                                                : LabelOf(n->second, q.first);
    out.add_query_counts(v == nullptr ? 0 : count_in(q, *v));
  }
  if (n == w.nodes.end()) return out;
  for (size_t i = 0; i < r.terms.size(); ++i) {
    const std::string* v = LabelOf(n->second, r.terms[i].first);
    if (v == nullptr || count_in(r.terms[i], *v) <= 0) continue;
    pb::TermCount* tc = out.add_term_counts();
    tc->set_term(static_cast<int32_t>(i));
    tc->set_count(count_in(r.terms[i], *v));
  }
  return out;
}

// Random clusters, pods and plans, from a small vocabulary so that nodes
// share domains, pods share signatures and terms, and plans repeat.
class RandomCluster {
 public:
  explicit RandomCluster(uint32_t seed) : rng_(seed) {}

  bool Coin(double p) { return std::bernoulli_distribution(p)(rng_); }
  int Uniform(int lo, int hi) {
    return std::uniform_int_distribution<int>(lo, hi)(rng_);
  }
  template <typename T>
  const T& Pick(const std::vector<T>& from) {
    return from[Uniform(0, static_cast<int>(from.size()) - 1)];
  }
  std::string NodeName(int of) { return absl::StrCat("n", Uniform(0, of - 1)); }

  pb::Node RandomNode(const std::string& name) {
    pb::Node n = Node(name, Coin(0.8) ? Pick<std::string>({"z0", "z1", "z2"})
                                      : std::string());
    if (Coin(0.1)) n.mutable_labels()->erase(kHost);
    if (Coin(0.5))
      (*n.mutable_labels())["disk"] = Pick<std::string>({"ssd", "hdd"});
    if (Coin(0.3)) {
      pb::Taint* t = n.add_taints();
      t->set_key("dedicated");
      t->set_value(Pick<std::string>({"x", "y"}));
      t->set_effect(
          Pick<std::string>({"NoSchedule", "NoExecute", "PreferNoSchedule"}));
    }
    return n;
  }

  objects::PodInfo RandomPod(int i) {
    std::map<std::string, std::string> labels = {
        {"app", Pick<std::string>({"web", "db"})}};
    if (Coin(0.3)) labels["tier"] = "1";
    objects::PodInfo p = Pod(Pick<std::string>({"ns", "other"}),
                             absl::StrCat("p", i), labels, NodeName(12));
    p.deleting = Coin(0.1);
    if (Coin(0.1)) p.phase = "Succeeded";
    if (Coin(0.3)) {
      pb::PodAffinityTerm* t =
          p.pod.mutable_pod_anti_affinity()->add_required();
      t->set_topology_key(Pick<std::string>({kZone, kHost, "disk"}));
      *t->mutable_label_selector() = Selects("app", "web");
    }
    if (Coin(0.2)) {
      pb::WeightedPodAffinityTerm* w =
          p.pod.mutable_pod_affinity()->add_preferred();
      w->set_weight(Pick<int>({1, 5}));
      w->mutable_term()->set_topology_key(kZone);
      *w->mutable_term()->mutable_label_selector() = Selects("app", "db");
    }
    return p;
  }

  pb::Pod RandomIncoming() {
    pb::Pod p;
    p.set_namespace_("ns");
    if (Coin(0.3)) (*p.mutable_node_selector())["disk"] = "ssd";
    if (Coin(0.3)) {
      pb::NodeSelectorRequirement* r =
          p.mutable_node_affinity()->add_required()->add_match_expressions();
      r->set_key(kZone);
      r->set_operator_("In");
      r->add_values("z0");
      r->add_values("z1");
    } else if (Coin(0.1)) {
      p.mutable_node_affinity()->set_has_required(true);  // matches nothing
    }
    if (Coin(0.4)) {
      pb::Toleration* t = p.add_tolerations();
      if (Coin(0.5)) {
        t->set_key("dedicated");
        t->set_value("x");
        t->set_effect("NoSchedule");
      } else {
        t->set_operator_("Exists");
      }
    }
    return p;
  }

  pb::PodQuery RandomQuery() {
    pb::PodQuery q;
    for (int i = Coin(0.2) ? 2 : 1; i > 0; --i) {
      pb::PodMatcher* m = q.add_all_of();
      m->add_namespaces("ns");
      if (Coin(0.3)) m->add_namespaces("other");
      if (Coin(0.15)) *m->mutable_namespace_selector() = Selects("team", "x");
      if (Coin(0.1)) {
        m->mutable_selector();  // every pod
      } else if (Coin(0.95)) {
        *m->mutable_selector() = Selects(Pick<std::string>({"app", "tier"}),
                                         Pick<std::string>({"web", "db", "1"}));
      }
    }
    q.set_include_terminating(Coin(0.3));
    q.set_topology_key(Pick<std::string>({"", kZone, kZone, kHost, "disk"}));
    if (!q.topology_key().empty() && Coin(0.5)) {
      q.mutable_nodes()->add_required_keys(q.topology_key());
    }
    if (Coin(0.2)) q.mutable_nodes()->add_required_keys("disk");
    q.mutable_nodes()->set_pod_node_affinity(Coin(0.5));
    q.mutable_nodes()->set_pod_taints(Coin(0.5));
    q.set_want_domains(Coin(0.6));
    return q;
  }

  pb::PlanResponse RandomPlan() {
    pb::PlanResponse plan;
    for (int i = Uniform(1, 3); i > 0; --i) {
      *plan.add_queries() = RandomQuery();
    }
    if (Coin(0.5))
      plan.add_existing_terms(pb::TERM_KIND_REQUIRED_ANTI_AFFINITY);
    if (Coin(0.3)) plan.add_existing_terms(pb::TERM_KIND_PREFERRED_AFFINITY);
    return plan;
  }

 private:
  std::mt19937 rng_;
};

constexpr int kPodChange = 1;

// One random change to the cluster, made to both the index and the world;
// kPodChange when a pod came or went.
int RandomChange(RandomCluster& r, ClusterIndex& index, World& w, int step) {
  const std::string name = r.NodeName(10);
  auto node = w.nodes.find(name);
  switch (r.Uniform(0, 7)) {
    case 0:  // a node comes, or its labels and taints change
    case 1:
      w.nodes[name] = r.RandomNode(name);
      index.UpsertNode(w.nodes[name], {});
      break;
    case 2:  // a status update: labels and taints as they were
      if (node == w.nodes.end()) break;
      node->second.mutable_allocatable()->set_milli_cpu(step);
      index.UpsertNode(node->second, {});
      break;
    case 3:
      w.nodes.erase(name);
      index.RemoveNode(name);
      break;
    case 4:
    case 5: {
      objects::PodInfo p = r.RandomPod(step);
      ClusterIndex::PodRef ref = index.AddPod(p, p.node_name);
      const std::string key = p.key;
      w.pods[key] = {std::move(p), std::move(ref)};
      return kPodChange;
    }
    case 6:
      if (w.pods.empty()) break;
      index.RemovePod(w.pods.begin()->second.ref);
      w.pods.erase(w.pods.begin());
      return kPodChange;
    default: {
      model::LabelMap l;
      if (r.Coin(0.5)) l["team"] = "x";
      w.namespaces[r.Pick<std::string>({"ns", "other"})] = l;
      for (const auto& [ns, labels] : w.namespaces) {
        index.UpsertNamespace(ns, labels);
      }
    }
  }
  return 0;
}

void ExpectParts(const ClusterIndex& index, const World& w,
                 const ClusterIndex::Prepared& p, const Reference& ref) {
  for (int i = 0; i < 12; ++i) {  // the nodes, and names of no node
    const std::string node = absl::StrCat("n", i);
    pb::Node got;
    index.NodeParts(p, node, &got);
    const pb::Node want = ReferenceParts(w, ref, node);
    ASSERT_EQ(Deterministic(got), Deterministic(want))
        << node << "\ngot:  " << got.ShortDebugString()
        << "\nwant: " << want.ShortDebugString();
  }
}

using PreparedAndReference = std::pair<ClusterIndex::Prepared, Reference>;

// Prepares `plan` for `pod` and checks it against the reference; keeps both
// in `last`.
void ExpectPrepared(const ClusterIndex& index, const World& w,
                    const pb::Pod& pod, const pb::PlanResponse& plan,
                    std::optional<PreparedAndReference>& last) {
  ClusterIndex::Prepared got = index.Prepare(pod, plan);
  Reference want = ReferenceOf(w, pod, plan);
  ASSERT_EQ(Deterministic(got.cluster), Deterministic(want.cluster))
      << "plan: " << plan.ShortDebugString()
      << "\npod: " << pod.ShortDebugString()
      << "\ngot:  " << got.cluster.ShortDebugString()
      << "\nwant: " << want.cluster.ShortDebugString();
  ExpectParts(index, w, got, want);
  last.emplace(std::move(got), std::move(want));
}

// The index's answers (node sides kept across cycles, and worked out anew
// after node changes) are the reference's, byte for byte; so are the
// per-node parts, also from answers prepared before the last change.
TEST(ClusterIndexRandomTest, AnswersAreThoseWorkedOutFromScratch) {
  int64_t builds = 0, rebuilt = 0, repeated = 0, kept_after_pods = 0;
  for (uint32_t seed = 1; seed <= 30; ++seed) {
    SCOPED_TRACE(absl::StrCat("seed ", seed));
    RandomCluster r(seed);
    ClusterIndex index;
    World w;
    std::vector<pb::PlanResponse> plans;
    std::vector<pb::Pod> incoming;
    for (int i = 0; i < 4; ++i) {
      plans.push_back(r.RandomPlan());
      incoming.push_back(r.RandomIncoming());
    }
    std::optional<PreparedAndReference> last;
    for (int step = 0; step < 200; ++step) {
      SCOPED_TRACE(absl::StrCat("step ", step));
      const int kind = RandomChange(r, index, w, step);
      if (last.has_value() && r.Coin(0.3)) {
        ExpectParts(index, w, last->first, last->second);
      }
      if (!r.Coin(0.6)) continue;
      const pb::PlanResponse& plan = r.Pick(plans);
      const pb::Pod& pod = r.Pick(incoming);
      int64_t before = index.eligibility_builds();
      const int64_t tallies = index.tally_builds();
      ExpectPrepared(index, w, pod, plan, last);
      if (HasFatalFailure()) return;
      rebuilt += index.eligibility_builds() > before ? 1 : 0;
      // Counts kept across a pod that came or went: added to, not redone.
      if (kind == kPodChange && index.tally_builds() == tallies &&
          (plan.queries_size() > 0 || plan.existing_terms_size() > 0)) {
        ++kept_after_pods;
      }
      if (!r.Coin(0.5)) continue;
      // The same cycle again with nothing changed: every node side kept.
      before = index.eligibility_builds();
      ExpectPrepared(index, w, pod, plan, last);
      if (HasFatalFailure()) return;
      ASSERT_EQ(index.eligibility_builds(), before);
      ++repeated;
    }
    builds += index.eligibility_builds();
  }
  EXPECT_GT(builds, 1000);
  EXPECT_GT(rebuilt, 1000);
  EXPECT_GT(repeated, 1000);
  EXPECT_GT(kept_after_pods, 150);
}

}  // namespace
}  // namespace kscore::cache
