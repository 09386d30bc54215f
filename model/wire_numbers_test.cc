#include "model/wire_numbers.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "model/saturating.h"
#include "scorer/testing/wrappers.h"

namespace kscore::model {
namespace {

using ::kscore::testing::MakeNode;
using ::kscore::testing::MakePod;

// The message of an InvalidArgument, or why it is not one.
std::string Error(const absl::Status& s) {
  if (s.ok()) return "OK";
  if (!absl::IsInvalidArgument(s)) return s.ToString();
  return std::string(s.message());
}

TEST(WireNumbersTest, PreemptionVictimsAreChecked) {
  pb::VictimPod v;
  v.mutable_requests()->set_milli_cpu(500);
  v.add_ports()->set_port(8080);
  EXPECT_EQ(Error(CheckVictimNumbers(v, "nodes[1].pods[2]")), "OK");
  v.mutable_non_zero_requests()->set_memory(-1);
  EXPECT_EQ(Error(CheckVictimNumbers(v, "nodes[1].pods[2]")),
            "nodes[1].pods[2].non_zero_requests.memory: must not be negative, "
            "got -1");
  v.mutable_non_zero_requests()->set_memory(0);
  v.add_ports()->set_port(70000);
  EXPECT_EQ(Error(CheckVictimNumbers(v, "nodes[1].pods[2]")),
            "nodes[1].pods[2].ports[1].port: must be a port in 0..65535, got "
            "70000");
}

TEST(WireNumbersTest, AWellFormedPodAndNodePass) {
  pb::Pod pod = MakePod()
                    .Req(500, 1 << 20)
                    .InitReq(100, 0, "Always")
                    .ScalarReq("example.com/gpu", 1)
                    .HostPort(8080)
                    .Overhead(10, 0)
                    .Obj();
  EXPECT_TRUE(CheckPodNumbers(pod, "pod").ok());
  pb::Node node = MakeNode()
                      .Capacity(4000, 1 << 30, 110)
                      .Requested(1000, 1 << 20)
                      .ScalarCapacity("example.com/gpu", 2)
                      .UsedPort(8080)
                      .LabelCount("app", "web", 3)
                      .Obj();
  EXPECT_TRUE(CheckNodeNumbers(node, "nodes", 0).ok());
  EXPECT_TRUE(CheckClusterNumbers(pb::ClusterData()).ok());
}

TEST(WireNumbersTest, NegativeQuantitiesOfThePodNameTheField) {
  EXPECT_EQ(Error(CheckPodNumbers(MakePod().Req(-5, 0).Obj(), "pod")),
            "pod.containers[0].requests.milli_cpu: must not be negative, got "
            "-5");
  pb::Pod pod = MakePod().Req(1, 1).Req(1, 1).Obj();
  pod.mutable_containers(1)->mutable_requests()->set_memory(-1);
  EXPECT_EQ(Error(CheckPodNumbers(pod, "queries[2].pod")),
            "queries[2].pod.containers[1].requests.memory: must not be "
            "negative, got -1");
  pod = MakePod().InitReq(1, 1).Obj();
  pod.mutable_init_containers(0)->mutable_requests()->set_ephemeral_storage(-7);
  EXPECT_EQ(Error(CheckPodNumbers(pod, "pod")),
            "pod.init_containers[0].requests.ephemeral_storage: must not be "
            "negative, got -7");
  EXPECT_EQ(Error(CheckPodNumbers(MakePod().Overhead(-1, 0).Obj(), "pod")),
            "pod.overhead.milli_cpu: must not be negative, got -1");
  pod = MakePod().Obj();
  pod.mutable_pod_level_requests()->set_memory(-3);
  EXPECT_EQ(Error(CheckPodNumbers(pod, "pod")),
            "pod.pod_level_requests.memory: must not be negative, got -3");
  EXPECT_EQ(
      Error(CheckPodNumbers(MakePod().ScalarReq("example.com/gpu", -2).Obj(),
                            "pod")),
      "pod.containers[0].requests.scalar[0].value: must not be negative, got "
      "-2 (\"example.com/gpu\")");
}

TEST(WireNumbersTest, ScalarNamesAreCheckedInTheSamePass) {
  pb::Pod pod = MakePod().ScalarReq("example.com/gpu", 1).Obj();
  pod.mutable_containers(0)->mutable_requests()->add_scalar();
  EXPECT_EQ(Error(CheckPodNumbers(pod, "pod")),
            "pod.containers[0].requests.scalar[1].name is required");
}

// VolumeBinding's sizes: bytes, never negative.
TEST(WireNumbersTest, VolumeSizesOfThePod) {
  pb::Pod pod = MakePod().Obj();
  pb::PodVolumes* v = pod.mutable_volumes();
  v->add_claims()->set_storage_request(10);
  v->add_claims()->set_storage_request(-1);
  EXPECT_EQ(Error(CheckPodNumbers(pod, "pod")),
            "pod.volumes.claims[1].storage_request: must not be negative, got "
            "-1");
  v->mutable_claims(1)->clear_storage_request();
  v->add_volumes()->set_capacity(-2);
  EXPECT_EQ(Error(CheckPodNumbers(pod, "pod")),
            "pod.volumes.volumes[0].capacity: must not be negative, got -2");
  v->mutable_volumes(0)->set_capacity(0);
  v->add_capacities()->set_capacity(-3);
  EXPECT_EQ(Error(CheckPodNumbers(pod, "pod")),
            "pod.volumes.capacities[0].capacity: must not be negative, got -3");
  v->mutable_capacities(0)->set_limit(-4);
  EXPECT_EQ(Error(CheckPodNumbers(pod, "pod")),
            "pod.volumes.capacities[0].limit: must not be negative, got -4");
  v->mutable_capacities(0)->clear_limit();
  v->mutable_capacities(0)->clear_capacity();
  EXPECT_TRUE(CheckPodNumbers(pod, "pod").ok());
}

TEST(WireNumbersTest, PortsWeightsAndSpreadOfThePod) {
  EXPECT_EQ(Error(CheckPodNumbers(MakePod().HostPort(70000).Obj(), "pod")),
            "pod.containers[0].ports[0].host_port: must be a port in "
            "0..65535, got 70000");
  EXPECT_EQ(Error(CheckPodNumbers(MakePod().InitHostPort(-1).Obj(), "pod")),
            "pod.init_containers[0].ports[0].host_port: must be a port in "
            "0..65535, got -1");
  pb::Pod pod = MakePod().Obj();
  pod.mutable_node_affinity()->add_preferred()->set_weight(-4);
  EXPECT_EQ(Error(CheckPodNumbers(pod, "pod")),
            "pod.node_affinity.preferred[0].weight: must not be negative, got "
            "-4");
  pod = MakePod().Obj();
  pod.mutable_pod_affinity()->add_preferred()->set_weight(1);
  pod.mutable_pod_anti_affinity()->add_preferred()->set_weight(1);
  pod.mutable_pod_anti_affinity()->add_preferred()->set_weight(-1);
  EXPECT_EQ(Error(CheckPodNumbers(pod, "pod")),
            "pod.pod_anti_affinity.preferred[1].weight: must not be negative, "
            "got -1");
  pod = MakePod().Obj();
  pod.add_topology_spread_constraints()->set_max_skew(1);
  pod.add_topology_spread_constraints()->set_max_skew(0);
  EXPECT_EQ(Error(CheckPodNumbers(pod, "pod")),
            "pod.topology_spread_constraints[1].max_skew: must be at least 1, "
            "got 0");
  pod.mutable_topology_spread_constraints(1)->set_max_skew(2);
  pod.mutable_topology_spread_constraints(1)->set_min_domains(-1);
  EXPECT_EQ(Error(CheckPodNumbers(pod, "pod")),
            "pod.topology_spread_constraints[1].min_domains: must be at least "
            "1 when set, got -1");
  pod = MakePod().Obj();
  pod.add_images("a");
  pod.set_image_volumes(2);
  EXPECT_EQ(Error(CheckPodNumbers(pod, "pod")),
            "pod.image_volumes: must be in 0..1 (the number of images), got 2");
}

TEST(WireNumbersTest, NegativeNumbersOfANodeNameTheField) {
  EXPECT_EQ(
      Error(CheckNodeNumbers(MakeNode().Capacity(-5, 1, 1).Obj(), "nodes", 3)),
      "nodes[3].allocatable.milli_cpu: must not be negative, got -5");
  EXPECT_EQ(Error(CheckNodeNumbers(MakeNode().Capacity(1, 1, -110).Obj(),
                                   "new_node")),
            "new_node.allocatable.pods: must not be negative, got -110");
  EXPECT_EQ(
      Error(CheckNodeNumbers(MakeNode().Requested(0, -9).Obj(), "nodes", 0)),
      "nodes[0].requested.memory: must not be negative, got -9");
  EXPECT_EQ(Error(CheckNodeNumbers(MakeNode().NonZeroRequested(-1, 0).Obj(),
                                   "nodes", 0)),
            "nodes[0].non_zero_requested.milli_cpu: must not be negative, got "
            "-1");
  EXPECT_EQ(
      Error(CheckNodeNumbers(
          MakeNode().ScalarCapacity("example.com/gpu", -2).Obj(), "nodes", 1)),
      "nodes[1].allocatable.scalar[0].value: must not be negative, got "
      "-2 (\"example.com/gpu\")");
  EXPECT_EQ(Error(CheckNodeNumbers(MakeNode().PodCount(-1).Obj(), "nodes", 0)),
            "nodes[0].pod_count: must not be negative, got -1");
  EXPECT_EQ(
      Error(CheckNodeNumbers(MakeNode().UsedPort(65536).Obj(), "nodes", 0)),
      "nodes[0].used_ports[0].port: must be a port in 0..65535, got "
      "65536");
  EXPECT_EQ(Error(CheckNodeNumbers(
                MakeNode().LabelCount("app", "web", -3).Obj(), "nodes", 2)),
            "nodes[2].label_counts[0].count: must not be negative, got -3");
  pb::Node node = MakeNode().Obj();
  node.add_query_counts(1);
  node.add_query_counts(-1);
  EXPECT_EQ(Error(CheckNodeNumbers(node, "nodes", 0)),
            "nodes[0].query_counts[1]: must not be negative, got -1");
  node = MakeNode().Obj();
  node.add_term_counts()->set_count(-2);
  EXPECT_EQ(Error(CheckNodeNumbers(node, "nodes", 0)),
            "nodes[0].term_counts[0].count: must not be negative, got -2");
  node = MakeNode().Obj();
  node.add_images()->set_size_bytes(-100);
  EXPECT_EQ(Error(CheckNodeNumbers(node, "nodes", 0)),
            "nodes[0].images[0].size_bytes: must not be negative, got -100");
  node.mutable_images(0)->set_size_bytes(100);
  node.mutable_images(0)->set_num_nodes(-1);
  EXPECT_EQ(Error(CheckNodeNumbers(node, "nodes", 0)),
            "nodes[0].images[0].num_nodes: must not be negative, got -1");
}

TEST(WireNumbersTest, NegativeNumbersOfTheClusterNameTheField) {
  pb::ClusterData c;
  c.add_answers()->set_total(3);
  c.add_answers()->set_min_count(-1);
  EXPECT_EQ(Error(CheckClusterNumbers(c)),
            "cluster.answers[1].min_count: must not be negative, got -1");
  c.mutable_answers(1)->set_min_count(0);
  c.mutable_answers(1)->set_domains(-2);
  EXPECT_EQ(Error(CheckClusterNumbers(c)),
            "cluster.answers[1].domains: must not be negative, got -2");
  c.mutable_answers(1)->set_domains(2);
  c.add_existing_terms()->set_weight(-5);
  EXPECT_EQ(Error(CheckClusterNumbers(c)),
            "cluster.existing_terms[0].weight: must not be negative, got -5");
  c.mutable_existing_terms(0)->set_weight(5);
  c.mutable_existing_terms(0)->set_total(-1);
  EXPECT_EQ(Error(CheckClusterNumbers(c)),
            "cluster.existing_terms[0].total: must not be negative, got -1");
  c.mutable_existing_terms(0)->set_total(1);
  c.set_node_count(-1);
  EXPECT_EQ(Error(CheckClusterNumbers(c)),
            "cluster.node_count: must not be negative, got -1");
  c.set_node_count(4);
  EXPECT_TRUE(CheckClusterNumbers(c).ok());
}

TEST(WireNumbersTest, RawScoresMustLieInThePluginsRange) {
  auto path = [] { return std::string("raw[7]"); };
  EXPECT_TRUE(CheckRawScore(5, ScoreRange{}, "Concentrate", path).ok());
  EXPECT_EQ(Error(CheckRawScore(-5, ScoreRange{}, "Concentrate", path)),
            "raw[7]: must not be negative, got -5 (a raw score of "
            "Concentrate)");
  EXPECT_EQ(
      Error(CheckRawScore(250, ScoreRange{0, 100}, "NodeResourcesFit", path)),
      "raw[7]: must be in [0, 100], got 250 (a raw score of "
      "NodeResourcesFit)");
  EXPECT_TRUE(CheckRawScore(-5, ScoreRange{kInt64Min, kInt64Max},
                            "InterPodAffinity", path)
                  .ok());
}

}  // namespace
}  // namespace kscore::model
