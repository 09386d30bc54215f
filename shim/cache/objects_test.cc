#include "shim/cache/objects.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scorer/framework/pod_resources.h"
#include "scorer/framework/scalar_resources.h"

namespace kscore::cache {
namespace {

using ::testing::HasSubstr;

TEST(PodFromJsonTest, ReadsWhatPluginsNeed) {
  nlohmann::json j = nlohmann::json::parse(R"({
    "metadata": {"namespace": "ns", "name": "web-1", "uid": "u1", "resourceVersion": "7",
                 "labels": {"app": "web"}, "creationTimestamp": "2026-12-02T10:00:00Z"},
    "spec": {
      "schedulerName": "concentrate-scheduler",
      "priority": 5,
      "nodeSelector": {"disk": "ssd"},
      "affinity": {"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
          {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a", "b"]}]}]},
        "preferredDuringSchedulingIgnoredDuringExecution": [
          {"weight": 3, "preference": {"matchExpressions": [{"key": "x", "operator": "Exists"}]}}]}},
      "tolerations": [{"key": "k", "operator": "Equal", "value": "v", "effect": "NoSchedule"}],
      "initContainers": [{"name": "i", "resources": {"requests": {"cpu": "2"}}}],
      "containers": [
        {"name": "a", "resources": {"requests": {"cpu": "500m", "memory": "1Gi",
                                                 "example.com/gpu": "1"}},
         "ports": [{"containerPort": 80, "hostPort": 8080}]},
        {"name": "b", "resources": {"requests": {"cpu": "250m"}}}],
      "overhead": {"cpu": "100m"}
    },
    "status": {"phase": "Pending", "conditions": [
      {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": "0/3"}]}
  })");
  absl::StatusOr<PodInfo> p = PodFromJson(j);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->key, "ns/web-1");
  EXPECT_EQ(p->uid, "u1");
  EXPECT_EQ(p->scheduler_name, "concentrate-scheduler");
  EXPECT_EQ(p->priority, 5);
  EXPECT_EQ(p->unschedulable_message, "0/3");
  EXPECT_TRUE(p->node_name.empty());
  EXPECT_EQ(p->pod.labels().at("app"), "web");
  EXPECT_EQ(p->pod.node_selector().at("disk"), "ssd");
  ASSERT_TRUE(p->pod.node_affinity().has_required());
  EXPECT_EQ(
      p->pod.node_affinity().required(0).match_expressions(0).values_size(), 2);
  EXPECT_EQ(p->pod.node_affinity().preferred(0).weight(), 3);
  EXPECT_EQ(p->pod.tolerations(0).effect(), "NoSchedule");
  // max(init 2000m, 500m + 250m) + 100m overhead
  EXPECT_EQ(p->requests.milli_cpu(), 2100);
  EXPECT_EQ(p->requests.memory(), int64_t{1} << 30);
  EXPECT_EQ(framework::ScalarValue(p->requests, "example.com/gpu"), 1);
  ASSERT_EQ(p->host_ports.size(), 1u);
  EXPECT_EQ(p->host_ports[0].port(), 8080);
  EXPECT_EQ(p->host_ports[0].protocol(), "TCP");
  EXPECT_EQ(p->pod.volume_claims_size(), 0);
  EXPECT_EQ(p->pod.topology_spread_constraints_size(), 0);
}

TEST(PodFromJsonTest, DefaultsAndFlags) {
  absl::StatusOr<PodInfo> p = PodFromJson(nlohmann::json::parse(R"({
    "metadata": {"namespace": "ns", "name": "p", "deletionTimestamp": "2026-12-02T10:00:00Z"},
    "spec": {"nodeName": "n1", "schedulingGates": [{"name": "g"}], "containers": [{"name": "c"}]},
    "status": {"phase": "Succeeded"}})"));
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->scheduler_name, "default-scheduler");
  EXPECT_EQ(p->node_name, "n1");
  EXPECT_TRUE(p->deleting);
  EXPECT_TRUE(p->gated);
  EXPECT_TRUE(p->terminated());
  // No requests: the non-zero defaults apply for scoring.
  EXPECT_EQ(p->requests.milli_cpu(), 0);
  EXPECT_EQ(p->non_zero.milli_cpu(), 100);
}

TEST(PodFromJsonTest, PodLevelRequestsReplaceTheContainers) {
  absl::StatusOr<PodInfo> p = PodFromJson(nlohmann::json::parse(R"({
    "metadata": {"namespace": "ns", "name": "p"},
    "spec": {"resources": {"requests": {"cpu": "3"}},
             "containers": [{"name": "c", "resources": {"requests": {"cpu": "100m"}}}],
             "overhead": {"cpu": "50m"}}})"));
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->pod.pod_level_requests().milli_cpu(), 3000);
  EXPECT_EQ(p->requests.milli_cpu(), 3050);
  EXPECT_EQ(p->non_zero.milli_cpu(), 3050);
  // No memory request anywhere: the default, for scoring only.
  EXPECT_FALSE(p->requests.has_memory());
  EXPECT_EQ(p->non_zero.memory(), framework::kDefaultMemoryRequest);
}

TEST(PodFromJsonTest, ExplicitZeroRequestStaysZero) {
  absl::StatusOr<PodInfo> p = PodFromJson(nlohmann::json::parse(R"({
    "metadata": {"namespace": "ns", "name": "p"},
    "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "0"}}}]}})"));
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_TRUE(p->pod.containers(0).requests().has_milli_cpu());
  EXPECT_EQ(p->non_zero.milli_cpu(), 0);
  EXPECT_EQ(p->non_zero.memory(), framework::kDefaultMemoryRequest);
}

// A pod resized in place holds the larger of its spec and what the kubelet
// allocated until the resize is done; an infeasible resize leaves the spec
// out.
TEST(PodFromJsonTest, ResizeUnderWayCountsTheLarger) {
  absl::StatusOr<PodInfo> down = PodFromJson(nlohmann::json::parse(R"({
    "metadata": {"namespace": "ns", "name": "p"},
    "spec": {"nodeName": "n1",
             "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]},
    "status": {"phase": "Running", "containerStatuses": [
      {"name": "c", "allocatedResources": {"cpu": "3"},
       "resources": {"requests": {"cpu": "3"}}}]}})"));
  ASSERT_TRUE(down.ok()) << down.status();
  EXPECT_EQ(down->requests.milli_cpu(), 3000);
  EXPECT_EQ(down->non_zero.milli_cpu(), 3000);

  absl::StatusOr<PodInfo> infeasible = PodFromJson(nlohmann::json::parse(R"({
    "metadata": {"namespace": "ns", "name": "p"},
    "spec": {"nodeName": "n1",
             "containers": [{"name": "c", "resources": {"requests": {"cpu": "3"}}}]},
    "status": {"phase": "Running",
      "conditions": [{"type": "PodResizePending", "status": "True", "reason": "Infeasible"}],
      "containerStatuses": [{"name": "c", "allocatedResources": {"cpu": "1"}}]}})"));
  ASSERT_TRUE(infeasible.ok()) << infeasible.status();
  EXPECT_EQ(infeasible->requests.milli_cpu(), 1000);
}

TEST(PodFromJsonTest, BadStatusQuantityNamesTheField) {
  absl::StatusOr<PodInfo> p = PodFromJson(nlohmann::json::parse(R"({
    "metadata": {"namespace": "ns", "name": "p"},
    "spec": {"containers": [{"name": "c"}]},
    "status": {"containerStatuses": [{"name": "c", "allocatedResources": {"cpu": "x"}}]}})"));
  ASSERT_FALSE(p.ok());
  EXPECT_THAT(std::string(p.status().message()),
              HasSubstr("status.containerStatuses[0].allocatedResources.cpu"));
}

// The scorer decides what these mean (its gates refuse what it cannot
// honour yet); the shim only carries them.
TEST(PodFromJsonTest, CarriesAffinitySpreadAndClaims) {
  absl::StatusOr<PodInfo> p = PodFromJson(nlohmann::json::parse(R"({
    "metadata": {"namespace": "ns", "name": "p"},
    "spec": {"affinity": {
      "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
        [{"topologyKey": "kubernetes.io/hostname"}]},
      "podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution":
        [{"weight": 7, "podAffinityTerm": {"topologyKey": "zone"}}]}},
     "topologySpreadConstraints": [{"maxSkew": 2, "topologyKey": "zone",
       "whenUnsatisfiable": "ScheduleAnyway"}],
     "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "c1"}},
                 {"name": "scratch", "ephemeral": {}}, {"name": "cm", "configMap": {}}],
     "resourceClaims": [{"name": "gpu"}],
     "containers": [{"name": "c"}]}})"));
  ASSERT_TRUE(p.ok());
  ASSERT_EQ(p->pod.pod_anti_affinity().required_size(), 1);
  EXPECT_EQ(p->pod.pod_anti_affinity().required(0).topology_key(),
            "kubernetes.io/hostname");
  ASSERT_EQ(p->pod.pod_affinity().preferred_size(), 1);
  EXPECT_EQ(p->pod.pod_affinity().preferred(0).weight(), 7);
  EXPECT_EQ(p->pod.pod_affinity().preferred(0).term().topology_key(), "zone");
  ASSERT_EQ(p->pod.topology_spread_constraints_size(), 1);
  EXPECT_EQ(p->pod.topology_spread_constraints(0).max_skew(), 2);
  EXPECT_EQ(p->pod.topology_spread_constraints(0).when_unsatisfiable(),
            "ScheduleAnyway");
  ASSERT_EQ(p->pod.volume_claims_size(), 2);  // not the configMap
  EXPECT_EQ(p->pod.volume_claims(0).claim_name(), "c1");
  EXPECT_TRUE(p->pod.volume_claims(1).ephemeral());
  ASSERT_EQ(p->pod.resource_claims_size(), 1);
  EXPECT_EQ(p->pod.resource_claims(0), "gpu");
}

TEST(PodFromJsonTest, BadQuantityNamesTheField) {
  absl::StatusOr<PodInfo> p = PodFromJson(nlohmann::json::parse(R"({
    "metadata": {"namespace": "ns", "name": "p"},
    "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "lots"}}}]}})"));
  ASSERT_FALSE(p.ok());
  EXPECT_THAT(std::string(p.status().message()),
              HasSubstr("spec.containers[0].resources.requests.cpu: invalid "
                        "quantity \"lots\""));
}

TEST(NodeFromJsonTest, ReadsNode) {
  absl::StatusOr<NodeInfo> info = NodeFromJson(nlohmann::json::parse(R"({
    "metadata": {"name": "n1", "uid": "u9", "resourceVersion": "8",
                 "labels": {"kubernetes.io/hostname": "n1"}},
    "spec": {"unschedulable": true, "taints": [{"key": "k", "value": "v", "effect": "NoSchedule"}]},
    "status": {"allocatable": {"cpu": "4", "memory": "16Gi", "pods": "110",
                               "ephemeral-storage": "100Gi", "example.com/gpu": "2"}}})"));
  ASSERT_TRUE(info.ok()) << info.status();
  const pb::Node* n = &info->node;
  EXPECT_EQ(n->name(), "n1");
  EXPECT_TRUE(n->unschedulable());
  EXPECT_EQ(n->taints(0).key(), "k");
  EXPECT_EQ(n->allocatable().milli_cpu(), 4000);
  EXPECT_EQ(n->allocatable().memory(), int64_t{16} << 30);
  EXPECT_EQ(n->allocatable().pods(), 110);
  EXPECT_EQ(framework::ScalarValue(n->allocatable(), "example.com/gpu"), 2);
  EXPECT_EQ(info->uid, "u9");
  EXPECT_EQ(info->resource_version, "8");
}

}  // namespace
}  // namespace kscore::cache
