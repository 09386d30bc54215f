#include "scorer/framework/preemption.h"

#include <optional>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "model/scalar_resources.h"
#include "scorer/testing/wrappers.h"

namespace kscore::framework {
namespace {

using ::kscore::testing::MakeNode;
using ::testing::ElementsAre;

pb::HostPort Port(int32_t port, std::string protocol, std::string ip = "") {
  pb::HostPort p;
  p.set_port(port);
  p.set_protocol(std::move(protocol));
  p.set_host_ip(std::move(ip));
  return p;
}

// n1 holds two pods counted in query 0 (its domain counts 3, the least
// domain of the cluster 2) and one carrying existing term 0.
pb::PreemptRequest Request() {
  pb::PreemptRequest req;
  req.mutable_pod()->set_priority(100);
  req.set_num_nodes(1);
  req.set_num_potential_nodes(1);
  pb::ClusterData* cluster = req.mutable_cluster();
  pb::QueryAnswer* a = cluster->add_answers();
  a->set_total(7);
  a->set_domains(3);
  a->set_min_count(2);
  pb::ExistingTerm* e = cluster->add_existing_terms();
  e->set_kind(pb::TERM_KIND_REQUIRED_ANTI_AFFINITY);
  e->set_total(4);

  pb::PreemptionNode* n = req.add_nodes();
  *n->mutable_node() = MakeNode()
                           .Name("n1")
                           .Requested(3000, 3 << 20)
                           .ScalarRequested("example.com/gpu", 1)
                           .PodCount(3)
                           .UsedPort(8080)
                           .UsedPort(9090, "UDP")
                           .Obj();
  n->mutable_node()->add_query_counts(3);
  pb::TermCount* tc = n->mutable_node()->add_term_counts();
  tc->set_term(0);
  tc->set_count(2);

  pb::VictimPod* a1 = n->add_pods();
  a1->set_name("a1");
  a1->mutable_requests()->set_milli_cpu(1000);
  a1->mutable_requests()->set_memory(1 << 20);
  model::MutableScalar(a1->mutable_requests(), "example.com/gpu")->set_value(1);
  *a1->add_ports() = Port(8080, "");  // TCP, every address: as the node's
  a1->add_matched_queries(0);
  pb::VictimPod* a2 = n->add_pods();
  a2->set_name("a2");
  a2->mutable_requests()->set_milli_cpu(5000);  // more than the node has
  a2->add_matched_queries(0);
  pb::VictimPod* t = n->add_pods();
  t->set_name("t");
  t->add_terms(0);
  return req;
}

TEST(DryRunNodeTest, RemovingSubtractsWhatThePodAddsAndAddingRestoresIt) {
  const pb::PreemptRequest req = Request();
  ASSERT_TRUE(ValidatePreemptRequest(req).ok()) << ValidatePreemptRequest(req);
  PreemptionInput in;
  in.request = &req;
  std::optional<pb::ClusterData> cluster = req.cluster();
  {
    DryRunNode node(in, 0, &*cluster);
    node.Remove(0);
    const pb::Node& n = node.node();
    EXPECT_EQ(n.requested().milli_cpu(), 2000);
    EXPECT_EQ(n.requested().memory(), 2 << 20);
    EXPECT_EQ(model::ScalarValue(n.requested(), "example.com/gpu"), 0);
    EXPECT_TRUE(n.requested().scalar().empty());
    EXPECT_EQ(n.pod_count(), 2);
    ASSERT_EQ(n.used_ports_size(), 1);
    EXPECT_EQ(n.used_ports(0).port(), 9090);
    EXPECT_THAT(n.query_counts(), ElementsAre(2));
    EXPECT_EQ(cluster->answers(0).total(), 6);
    EXPECT_EQ(cluster->answers(0).min_count(), 2);

    // Saturates at zero; the domain now has fewer than the least other.
    node.Remove(1);
    EXPECT_FALSE(n.requested().has_milli_cpu());
    EXPECT_THAT(n.query_counts(), ElementsAre(1));
    EXPECT_EQ(cluster->answers(0).total(), 5);
    EXPECT_EQ(cluster->answers(0).min_count(), 1);

    node.Remove(2);
    EXPECT_EQ(n.term_counts(0).count(), 1);
    EXPECT_EQ(cluster->existing_terms(0).total(), 3);
    EXPECT_EQ(n.pod_count(), 0);

    node.Add(0);
    EXPECT_EQ(n.requested().milli_cpu(), 1000);
    EXPECT_EQ(model::ScalarValue(n.requested(), "example.com/gpu"), 1);
    EXPECT_EQ(n.used_ports_size(), 2);
    EXPECT_THAT(n.query_counts(), ElementsAre(2));
    EXPECT_EQ(cluster->answers(0).min_count(), 2);
    EXPECT_TRUE(node.removed(1));
    EXPECT_FALSE(node.removed(0));
  }
  // The next node starts from the request's cluster data again.
  EXPECT_EQ(cluster->answers(0).total(), 7);
  EXPECT_EQ(cluster->answers(0).min_count(), 2);
  EXPECT_EQ(cluster->existing_terms(0).total(), 4);
}

TEST(ValidatePreemptRequestTest, CountsMustCoverThePods) {
  pb::PreemptRequest req = Request();
  req.mutable_nodes(0)->mutable_node()->mutable_term_counts(0)->set_count(0);
  absl::Status s = ValidatePreemptRequest(req);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()),
              ::testing::HasSubstr("nodes[0].pods[2].terms[0]: the pods sent "
                                   "carry term 0 1 times, more than "
                                   "nodes[0].node.term_counts (0)"));

  req = Request();
  req.mutable_cluster()->mutable_answers(0)->set_total(1);
  s = ValidatePreemptRequest(req);
  EXPECT_THAT(std::string(s.message()),
              ::testing::HasSubstr("nodes[0].pods[1].matched_queries[0]"));
}

// n1's CSINode takes 3 volumes of csi.example.com, 3 counted: v0 used by
// victims a and b, v1 by victim a and a pod of higher priority, v2 by victim
// b with a VolumeAttachment naming it; v0 is the preemptor's own volume 0.
pb::PreemptRequest CsiRequest() {
  pb::PreemptRequest req;
  req.mutable_pod()->set_priority(100);
  req.mutable_pod()->mutable_volumes()->add_attachable()->set_driver(
      "csi.example.com");
  req.set_num_nodes(1);
  req.set_num_potential_nodes(1);
  pb::PreemptionNode* n = req.add_nodes();
  *n->mutable_node() = MakeNode().Name("n1").PodCount(3).Obj();
  pb::CsiDriverUse* d = n->mutable_node()->add_csi_drivers();
  d->set_name("csi.example.com");
  d->set_limit(3);
  d->set_attached(3);
  n->mutable_node()->add_volumes_in_use(0);
  const auto volume = [n](int32_t pods) {
    pb::CandidateCsiVolume* v = n->add_csi_volumes();
    v->set_driver("csi.example.com");
    v->set_pods(pods);
    return v;
  };
  volume(2)->set_preemptor_volume(0);
  volume(2);
  volume(1)->set_attacher("csi.example.com");
  pb::VictimPod* a = n->add_pods();
  a->set_name("a");
  a->add_csi_volumes(0);
  a->add_csi_volumes(1);
  pb::VictimPod* b = n->add_pods();
  b->set_name("b");
  b->add_csi_volumes(0);
  b->add_csi_volumes(2);
  return req;
}

TEST(DryRunNodeTest, CsiVolumeStopsCountingWhenAllItsPodsAreRemoved) {
  const pb::PreemptRequest req = CsiRequest();
  ASSERT_TRUE(ValidatePreemptRequest(req).ok()) << ValidatePreemptRequest(req);
  PreemptionInput in;
  in.request = &req;
  DryRunNode node(in, 0, nullptr);
  const pb::Node& n = node.node();
  // v0 still has b, v1 its pod of higher priority.
  node.Remove(0);
  EXPECT_EQ(n.csi_drivers(0).attached(), 3);
  EXPECT_THAT(n.volumes_in_use(), ElementsAre(0));
  // v0 is free (and no longer in use for the preemptor); v2 moves under
  // its attacher, which is the same driver here.
  node.Remove(1);
  EXPECT_EQ(n.csi_drivers(0).attached(), 2);
  EXPECT_TRUE(n.volumes_in_use().empty());
  node.Add(0);
  EXPECT_EQ(n.csi_drivers(0).attached(), 3);
  EXPECT_THAT(n.volumes_in_use(), ElementsAre(0));
  node.Add(1);
  EXPECT_EQ(n.csi_drivers(0).attached(), 3);
}

TEST(ValidatePreemptRequestTest, CsiVolumesMustBeIndicesAndCoverTheirPods) {
  pb::PreemptRequest req = CsiRequest();
  req.mutable_nodes(0)->mutable_pods(1)->add_csi_volumes(3);
  absl::Status s = ValidatePreemptRequest(req);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()),
              ::testing::HasSubstr("nodes[0].pods[1].csi_volumes: 3 is not "
                                   "an index into nodes[0].csi_volumes"));
  req = CsiRequest();
  req.mutable_nodes(0)->mutable_csi_volumes(0)->set_pods(1);
  s = ValidatePreemptRequest(req);
  EXPECT_THAT(std::string(s.message()),
              ::testing::HasSubstr("nodes[0].csi_volumes[0].pods: 1 is fewer "
                                   "than the 2 pods using it"));
  req = CsiRequest();
  req.mutable_nodes(0)->mutable_csi_volumes(1)->set_preemptor_volume(1);
  s = ValidatePreemptRequest(req);
  EXPECT_THAT(std::string(s.message()),
              ::testing::HasSubstr("csi_volumes[1].preemptor_volume: 1 is "
                                   "not an index into pod.volumes.attachable"));
}

}  // namespace
}  // namespace kscore::framework
