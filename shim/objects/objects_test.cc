#include "shim/objects/objects.h"

#include <limits>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "model/pod_resources.h"
#include "model/scalar_resources.h"

namespace kscore::objects {
namespace {

using ::testing::HasSubstr;

// The value of `key` in a map, or "<none>": a missing key fails the
// comparison instead of aborting the test binary (Map::at would).
std::string ValueOf(const google::protobuf::Map<std::string, std::string>& m,
                    const std::string& key) {
  auto it = m.find(key);
  return it == m.end() ? "<none>" : it->second;
}

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
  EXPECT_EQ(model::ScalarValue(p->requests, "example.com/gpu"), 1);
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

// What preemption reads: where the pod is nominated, since when it runs,
// its policy, and whether a scheduler preempted it (the first
// DisruptionTarget condition decides, as upstream's
// PodTerminatingByPreemption reads it).
TEST(PodFromJsonTest, ReadsWhatPreemptionNeeds) {
  absl::StatusOr<PodInfo> p = PodFromJson(nlohmann::json::parse(R"({
    "metadata": {"namespace": "ns", "name": "p",
                 "deletionTimestamp": "2026-12-02T10:05:00Z"},
    "spec": {"preemptionPolicy": "Never", "containers": [{"name": "c"}]},
    "status": {"phase": "Running", "nominatedNodeName": "n2",
               "startTime": "2026-12-02T10:00:00Z",
               "conditions": [
      {"type": "DisruptionTarget", "status": "True",
       "reason": "PreemptionByScheduler", "message": "x"},
      {"type": "DisruptionTarget", "status": "False"}]}})"));
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->nominated_node_name, "n2");
  ASSERT_TRUE(p->start_time.has_value());
  EXPECT_EQ(*p->start_time, ParseTime("2026-12-02T10:00:00Z"));
  EXPECT_EQ(p->pod.preemption_policy(), "Never");
  EXPECT_TRUE(p->preempted_by_scheduler);
  EXPECT_TRUE(p->terminating_by_preemption());

  absl::StatusOr<PodInfo> other = PodFromJson(nlohmann::json::parse(R"({
    "metadata": {"namespace": "ns", "name": "q"},
    "spec": {"containers": [{"name": "c"}]},
    "status": {"conditions": [
      {"type": "DisruptionTarget", "status": "True",
       "reason": "EvictionByEvictionAPI"},
      {"type": "DisruptionTarget", "status": "True",
       "reason": "PreemptionByScheduler"}]}})"));
  ASSERT_TRUE(other.ok()) << other.status();
  EXPECT_FALSE(other->preempted_by_scheduler);  // the first one decides
  EXPECT_FALSE(other->start_time.has_value());
  EXPECT_EQ(other->nominated_node_name, "");
  EXPECT_EQ(other->pod.preemption_policy(), "");
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
  EXPECT_EQ(p->non_zero.memory(), model::kDefaultMemoryRequest);
}

TEST(PodFromJsonTest, ExplicitZeroRequestStaysZero) {
  absl::StatusOr<PodInfo> p = PodFromJson(nlohmann::json::parse(R"({
    "metadata": {"namespace": "ns", "name": "p"},
    "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "0"}}}]}})"));
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_TRUE(p->pod.containers(0).requests().has_milli_cpu());
  EXPECT_EQ(p->non_zero.milli_cpu(), 0);
  EXPECT_EQ(p->non_zero.memory(), model::kDefaultMemoryRequest);
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
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_THAT(p->invalid,
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

// Unset selects no pod, empty selects every pod: the difference survives.
TEST(PodFromJsonTest, AffinityTermsKeepSelectorsAndNamespaces) {
  absl::StatusOr<PodInfo> p = PodFromJson(nlohmann::json::parse(R"({
    "metadata": {"namespace": "ns", "name": "p"},
    "spec": {"affinity": {
      "podAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [
          {"topologyKey": "zone",
           "labelSelector": {"matchLabels": {"app": "web"},
             "matchExpressions": [{"key": "tier", "operator": "In", "values": ["a", "b"]},
                                  {"key": "x", "operator": "DoesNotExist"}]},
           "namespaces": ["ns", "other"],
           "namespaceSelector": {"matchLabels": {"team": "t"}}}],
        "preferredDuringSchedulingIgnoredDuringExecution": [
          {"weight": 7, "podAffinityTerm": {"topologyKey": "rack",
            "labelSelector": {}, "namespaceSelector": {}}}]},
      "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"topologyKey": "kubernetes.io/hostname", "labelSelector": null}]}},
     "containers": [{"name": "c"}]}})"));
  ASSERT_TRUE(p.ok()) << p.status();
  ASSERT_EQ(p->pod.pod_affinity().required_size(), 1);
  ASSERT_EQ(p->pod.pod_affinity().preferred_size(), 1);
  ASSERT_EQ(p->pod.pod_anti_affinity().required_size(), 1);
  const pb::PodAffinityTerm& req = p->pod.pod_affinity().required(0);
  ASSERT_TRUE(req.has_label_selector());
  EXPECT_EQ(ValueOf(req.label_selector().match_labels(), "app"), "web");
  ASSERT_EQ(req.label_selector().match_expressions_size(), 2);
  EXPECT_EQ(req.label_selector().match_expressions(0).key(), "tier");
  EXPECT_EQ(req.label_selector().match_expressions(0).operator_(), "In");
  EXPECT_THAT(req.label_selector().match_expressions(0).values(),
              ::testing::ElementsAre("a", "b"));
  EXPECT_EQ(req.label_selector().match_expressions(1).operator_(),
            "DoesNotExist");
  EXPECT_THAT(req.namespaces(), ::testing::ElementsAre("ns", "other"));
  ASSERT_TRUE(req.has_namespace_selector());
  EXPECT_EQ(ValueOf(req.namespace_selector().match_labels(), "team"), "t");
  const pb::PodAffinityTerm& pref = p->pod.pod_affinity().preferred(0).term();
  EXPECT_EQ(pref.topology_key(), "rack");
  EXPECT_TRUE(pref.has_label_selector());  // empty: every pod
  EXPECT_EQ(pref.label_selector().ByteSizeLong(), 0u);
  EXPECT_TRUE(pref.has_namespace_selector());  // empty: every namespace
  const pb::PodAffinityTerm& anti = p->pod.pod_anti_affinity().required(0);
  EXPECT_FALSE(anti.has_label_selector());  // unset: no pod
  EXPECT_FALSE(anti.has_namespace_selector());
  EXPECT_EQ(anti.namespaces_size(), 0);
}

TEST(PodFromJsonTest, SpreadConstraintsCarryEveryField) {
  absl::StatusOr<PodInfo> p = PodFromJson(nlohmann::json::parse(R"({
    "metadata": {"namespace": "ns", "name": "p"},
    "spec": {"topologySpreadConstraints": [
      {"maxSkew": 2, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
       "labelSelector": {"matchExpressions": [{"key": "app", "operator": "Exists"}]},
       "minDomains": 3, "nodeAffinityPolicy": "Ignore", "nodeTaintsPolicy": "Honor",
       "matchLabelKeys": ["pod-template-hash", "rev"]},
      {"maxSkew": 1, "topologyKey": "kubernetes.io/hostname",
       "whenUnsatisfiable": "ScheduleAnyway"}],
     "containers": [{"name": "c"}]}})"));
  ASSERT_TRUE(p.ok()) << p.status();
  ASSERT_EQ(p->pod.topology_spread_constraints_size(), 2);
  const pb::TopologySpreadConstraint& full =
      p->pod.topology_spread_constraints(0);
  EXPECT_EQ(full.max_skew(), 2);
  EXPECT_EQ(full.topology_key(), "zone");
  EXPECT_EQ(full.when_unsatisfiable(), "DoNotSchedule");
  ASSERT_TRUE(full.has_label_selector());
  ASSERT_EQ(full.label_selector().match_expressions_size(), 1);
  EXPECT_EQ(full.label_selector().match_expressions(0).key(), "app");
  ASSERT_TRUE(full.has_min_domains());
  EXPECT_EQ(full.min_domains(), 3);
  EXPECT_EQ(full.node_affinity_policy(), "Ignore");
  EXPECT_EQ(full.node_taints_policy(), "Honor");
  EXPECT_THAT(full.match_label_keys(),
              ::testing::ElementsAre("pod-template-hash", "rev"));
  const pb::TopologySpreadConstraint& bare =
      p->pod.topology_spread_constraints(1);
  EXPECT_FALSE(bare.has_label_selector());
  EXPECT_FALSE(bare.has_min_domains());
  EXPECT_EQ(bare.node_affinity_policy(), "");  // unset: the default
  EXPECT_EQ(bare.node_taints_policy(), "");
  EXPECT_EQ(bare.match_label_keys_size(), 0);
}

TEST(PodFromJsonTest, ImagesAreInitContainersThenContainersThenVolumes) {
  absl::StatusOr<PodInfo> p = PodFromJson(nlohmann::json::parse(R"({
    "metadata": {"namespace": "ns", "name": "p"},
    "spec": {
      "containers": [{"name": "a", "image": "nginx"},
                     {"name": "b", "image": "registry.k8s.io/pause:3.9"}],
      "initContainers": [{"name": "i", "image": "busybox:1.36"}],
      "volumes": [{"name": "tmp", "emptyDir": {}},
                  {"name": "model", "image": {"reference": "models/llm:v1",
                                              "pullPolicy": "IfNotPresent"}}]}})"));
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_THAT(
      p->pod.images(),
      ::testing::ElementsAre("busybox:1.36", "nginx",
                             "registry.k8s.io/pause:3.9", "models/llm:v1"));
  EXPECT_EQ(p->pod.image_volumes(), 1);
}

// metav1.GetControllerOf: the first owner reference with controller: true.
TEST(PodFromJsonTest, ControllerIsTheFirstControllingOwner) {
  absl::StatusOr<PodInfo> p = PodFromJson(nlohmann::json::parse(R"({
    "metadata": {"namespace": "ns", "name": "p", "ownerReferences": [
      {"apiVersion": "v1", "kind": "Node", "name": "n1", "uid": "u0"},
      {"apiVersion": "v1", "kind": "ConfigMap", "name": "cm", "uid": "u1", "controller": false},
      {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-7d4", "uid": "u2",
       "controller": true, "blockOwnerDeletion": true},
      {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "db", "uid": "u3",
       "controller": true}]},
    "spec": {"containers": [{"name": "c"}]}})"));
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->controller_api_version, "apps/v1");
  EXPECT_EQ(p->controller_kind, "ReplicaSet");
  EXPECT_EQ(p->controller_name, "web-7d4");
  EXPECT_EQ(p->controller_uid, "u2");

  absl::StatusOr<PodInfo> orphan = PodFromJson(nlohmann::json::parse(R"({
    "metadata": {"namespace": "ns", "name": "p", "ownerReferences": [
      {"apiVersion": "v1", "kind": "Node", "name": "n1", "uid": "u0"}]},
    "spec": {"containers": [{"name": "c"}]}})"));
  ASSERT_TRUE(orphan.ok()) << orphan.status();
  EXPECT_EQ(orphan->controller_kind, "");
  EXPECT_EQ(orphan->controller_name, "");
}

// A pod with a bad quantity is kept, with the first error in `invalid` and
// the entry left out, so that the shim can tell its owner why it stays
// pending (or count what it holds on its node, if bound).
TEST(PodFromJsonTest, BadQuantityNamesTheField) {
  absl::StatusOr<PodInfo> p = PodFromJson(nlohmann::json::parse(R"({
    "metadata": {"namespace": "ns", "name": "p"},
    "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "lots", "memory": "1Gi"}}}]}})"));
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->invalid,
            "spec.containers[0].resources.requests.cpu: invalid quantity "
            "\"lots\"");
  EXPECT_FALSE(p->pod.containers(0).requests().has_milli_cpu());
  EXPECT_EQ(p->requests.memory(), int64_t{1} << 30);
}

TEST(PodFromJsonTest, NegativeQuantitiesAreInvalid) {
  absl::StatusOr<PodInfo> p = PodFromJson(nlohmann::json::parse(R"({
    "metadata": {"namespace": "ns", "name": "p"},
    "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}],
             "initContainers": [{"name": "i", "resources": {"requests": {"memory": "-1Mi"}}}],
             "overhead": {"cpu": "-100m"}}})"));
  ASSERT_TRUE(p.ok()) << p.status();
  // The first in decoding order.
  EXPECT_EQ(p->invalid,
            "spec.initContainers[0].resources.requests.memory: must not be "
            "negative, got \"-1Mi\"");
  EXPECT_FALSE(p->pod.init_containers(0).requests().has_memory());
  EXPECT_FALSE(p->pod.overhead().has_milli_cpu());
  EXPECT_EQ(p->requests.milli_cpu(), 1000);
  EXPECT_TRUE(PodFromJson(nlohmann::json::parse(R"({
    "metadata": {"namespace": "ns", "name": "p"},
    "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}})"))
                  ->invalid.empty());
}

// Found by fuzz_pod_proto / fuzz_pod_json (inputs in fuzz/regressions/): a
// host port beyond 65535 was kept (and in JSON cut to 32 bits: 2^32 + 80
// claimed port 80), and a bound pod's ports count on its node, which the
// scorer then refused whole. It is left out and the pod noted invalid.
TEST(PodFromJsonTest, HostPortsBeyond65535AreInvalid) {
  absl::StatusOr<PodInfo> p = PodFromJson(nlohmann::json::parse(R"({
    "metadata": {"namespace": "ns", "name": "p"},
    "spec": {"containers": [{"name": "c", "ports": [
      {"containerPort": 80, "hostPort": 8080},
      {"containerPort": 80, "hostPort": 4294967376}]}]}})"));
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->invalid,
            "spec.containers[0].ports[1].hostPort: must be a port in "
            "1..65535, got 4294967376");
  ASSERT_EQ(p->host_ports.size(), 1u);
  EXPECT_EQ(p->host_ports[0].port(), 8080);
}

// What the API server validates and the decoder passes through: a pod the
// scorer would refuse (here maxSkew 0, found by fuzz_pod_json) is noted
// invalid with the scorer's reason rather than sent.
TEST(PodFromJsonTest, PodsTheScorerWouldRefuseAreInvalid) {
  absl::StatusOr<PodInfo> p = PodFromJson(nlohmann::json::parse(R"({
    "metadata": {"namespace": "ns", "name": "p"},
    "spec": {"containers": [{"name": "c"}],
             "topologySpreadConstraints": [{"maxSkew": 0, "topologyKey": "zone",
                                            "whenUnsatisfiable": "DoNotSchedule"}]}})"));
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->invalid,
            "pod.topology_spread_constraints[0].max_skew: must be at least 1, "
            "got 0");
}

// Beyond int64 a quantity saturates; two of them add up to the limit, not
// to a small or negative request.
TEST(PodFromJsonTest, HugeQuantitiesSaturate) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  absl::StatusOr<PodInfo> p = PodFromJson(nlohmann::json::parse(R"({
    "metadata": {"namespace": "ns", "name": "p"},
    "spec": {"containers": [
      {"name": "a", "resources": {"requests": {"cpu": "9223372036854775807", "memory": "100Ei"}}},
      {"name": "b", "resources": {"requests": {"cpu": "9223372036854775807", "memory": "8Ei"}}}]}})"));
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_TRUE(p->invalid.empty()) << p->invalid;
  EXPECT_EQ(p->pod.containers(0).requests().milli_cpu(), kMax);
  EXPECT_EQ(p->pod.containers(0).requests().memory(), kMax);
  EXPECT_EQ(p->requests.milli_cpu(), kMax);
  EXPECT_EQ(p->requests.memory(), kMax);
  EXPECT_EQ(p->non_zero.milli_cpu(), kMax);
}

TEST(NodeFromJsonTest, BadOrNegativeAllocatableIsAnError) {
  absl::StatusOr<NodeInfo> info = NodeFromJson(nlohmann::json::parse(R"({
    "metadata": {"name": "n1"},
    "status": {"allocatable": {"cpu": "4", "memory": "-16Gi"}}})"));
  ASSERT_FALSE(info.ok());
  EXPECT_EQ(info.status().message(),
            "status.allocatable.memory: must not be negative, got \"-16Gi\"");
  info = NodeFromJson(nlohmann::json::parse(R"({
    "metadata": {"name": "n1"},
    "status": {"allocatable": {"cpu": "4", "pods": "1e30"}}})"));
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->node.allocatable().pods(),
            std::numeric_limits<int64_t>::max());
}

// The scorer refuses negative image sizes; the shim reads one as unknown.
TEST(NodeFromJsonTest, NegativeImageSizeIsZero) {
  absl::StatusOr<NodeInfo> info = NodeFromJson(nlohmann::json::parse(R"({
    "metadata": {"name": "n1"},
    "status": {"images": [{"names": ["a:1"], "sizeBytes": -5}]}})"));
  ASSERT_TRUE(info.ok()) << info.status();
  ASSERT_EQ(info->images.size(), 1u);
  EXPECT_EQ(info->images[0].size_bytes, 0);
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
  EXPECT_EQ(model::ScalarValue(n->allocatable(), "example.com/gpu"), 2);
  EXPECT_EQ(info->uid, "u9");
  EXPECT_EQ(info->resource_version, "8");
}

TEST(NodeFromJsonTest, ReadsImagesAndTheirDigest) {
  auto node = [](const char* images) {
    absl::StatusOr<NodeInfo> info = NodeFromJson(nlohmann::json::parse(
        absl::StrCat(R"({"metadata": {"name": "n1"}, "status": {"images": )",
                     images, "}}")));
    EXPECT_TRUE(info.ok()) << info.status();
    return info.ok() ? *info : NodeInfo();
  };
  const NodeInfo n = node(R"([
    {"names": ["docker.io/library/nginx@sha256:aa", "docker.io/library/nginx:1.27"],
     "sizeBytes": 70000000},
    {"names": ["registry.k8s.io/pause:3.9"], "sizeBytes": 300000}])");
  ASSERT_EQ(n.images.size(), 2u);
  EXPECT_THAT(n.images[0].names,
              ::testing::ElementsAre("docker.io/library/nginx@sha256:aa",
                                     "docker.io/library/nginx:1.27"));
  EXPECT_EQ(n.images[0].size_bytes, 70000000);
  EXPECT_EQ(n.images[1].size_bytes, 300000);
  EXPECT_NE(n.images_digest, 0u);
  EXPECT_EQ(n.images_digest, ImagesDigest(n.images));
  EXPECT_EQ(node("[]").images_digest, 0u);
  // A different size or name is a different digest.
  EXPECT_NE(node(R"([{"names": ["a:1"], "sizeBytes": 1}])").images_digest,
            node(R"([{"names": ["a:1"], "sizeBytes": 2}])").images_digest);
  EXPECT_NE(node(R"([{"names": ["a:1"], "sizeBytes": 1}])").images_digest,
            node(R"([{"names": ["a:2"], "sizeBytes": 1}])").images_digest);
}

TEST(NamespaceFromJsonTest, ReadsNameAndLabels) {
  absl::StatusOr<NamespaceInfo> ns =
      NamespaceFromJson(nlohmann::json::parse(R"({
    "metadata": {"name": "team-a", "uid": "u1", "resourceVersion": "9",
                 "labels": {"kubernetes.io/metadata.name": "team-a", "team": "a"}},
    "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}})"));
  ASSERT_TRUE(ns.ok()) << ns.status();
  EXPECT_EQ(ns->name, "team-a");
  EXPECT_EQ(ns->uid, "u1");
  EXPECT_EQ(ns->resource_version, "9");
  ASSERT_EQ(ns->labels.size(), 2u);
  EXPECT_EQ(ValueOf(ns->labels, "team"), "a");
  absl::StatusOr<NamespaceInfo> bad =
      NamespaceFromJson(nlohmann::json::parse(R"({"metadata": {}})"));
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(std::string(bad.status().message()),
              HasSubstr("namespace without metadata.name"));
}

TEST(WorkloadFromJsonTest, MapSelectorsBecomeMatchLabels) {
  for (WorkloadKind kind :
       {WorkloadKind::kService, WorkloadKind::kReplicationController}) {
    SCOPED_TRACE(WorkloadKindName(kind));
    absl::StatusOr<WorkloadInfo> w =
        WorkloadFromJson(kind, nlohmann::json::parse(R"({
          "metadata": {"namespace": "ns", "name": "web", "uid": "u1", "resourceVersion": "4"},
          "spec": {"selector": {"app": "web", "tier": "front"}, "replicas": 2}})"));
    ASSERT_TRUE(w.ok()) << w.status();
    EXPECT_EQ(w->kind, kind);
    EXPECT_EQ(w->namespace_, "ns");
    EXPECT_EQ(w->name, "web");
    EXPECT_EQ(w->uid, "u1");
    EXPECT_EQ(w->resource_version, "4");
    EXPECT_TRUE(w->has_selector);
    EXPECT_EQ(w->selector.match_labels().size(), 2u);
    EXPECT_EQ(ValueOf(w->selector.match_labels(), "tier"), "front");
    EXPECT_EQ(w->selector.match_expressions_size(), 0);
    // No selector, or an empty one, selects no pod.
    for (const char* spec : {R"({"type": "ExternalName"})",
                             R"({"selector": {}})", R"({"selector": null})"}) {
      absl::StatusOr<WorkloadInfo> none = WorkloadFromJson(
          kind,
          nlohmann::json::parse(absl::StrCat(
              R"({"metadata": {"namespace": "ns", "name": "x"}, "spec": )",
              spec, "}")));
      ASSERT_TRUE(none.ok()) << none.status();
      EXPECT_FALSE(none->has_selector) << spec;
    }
  }
}

TEST(WorkloadFromJsonTest, LabelSelectorsAsWritten) {
  for (WorkloadKind kind :
       {WorkloadKind::kReplicaSet, WorkloadKind::kStatefulSet}) {
    SCOPED_TRACE(WorkloadKindName(kind));
    absl::StatusOr<WorkloadInfo> w =
        WorkloadFromJson(kind, nlohmann::json::parse(R"({
          "metadata": {"namespace": "ns", "name": "web-7d4"},
          "spec": {"selector": {"matchLabels": {"app": "web"},
            "matchExpressions": [{"key": "pod-template-hash", "operator": "In",
                                  "values": ["7d4"]}]}}})"));
    ASSERT_TRUE(w.ok()) << w.status();
    EXPECT_EQ(w->kind, kind);
    EXPECT_TRUE(w->has_selector);
    EXPECT_EQ(ValueOf(w->selector.match_labels(), "app"), "web");
    ASSERT_EQ(w->selector.match_expressions_size(), 1);
    EXPECT_THAT(w->selector.match_expressions(0).values(),
                ::testing::ElementsAre("7d4"));
    // An empty selector is one (it selects every pod); none is none.
    absl::StatusOr<WorkloadInfo> empty = WorkloadFromJson(
        kind, nlohmann::json::parse(
                  R"({"metadata": {"namespace": "ns", "name": "e"},
                      "spec": {"selector": {}}})"));
    ASSERT_TRUE(empty.ok()) << empty.status();
    EXPECT_TRUE(empty->has_selector);
    absl::StatusOr<WorkloadInfo> none = WorkloadFromJson(
        kind,
        nlohmann::json::parse(
            R"({"metadata": {"namespace": "ns", "name": "n"}, "spec": {}})"));
    ASSERT_TRUE(none.ok()) << none.status();
    EXPECT_FALSE(none->has_selector);
  }
}

TEST(WorkloadFromJsonTest, NamelessIsAnErrorNamingTheKind) {
  absl::StatusOr<WorkloadInfo> w = WorkloadFromJson(
      WorkloadKind::kStatefulSet,
      nlohmann::json::parse(R"({"metadata": {"namespace": "ns"}})"));
  ASSERT_FALSE(w.ok());
  EXPECT_THAT(std::string(w.status().message()),
              HasSubstr("StatefulSet without metadata.name"));
}

TEST(PdbFromJsonTest, ReadsSelectorAndStatus) {
  absl::StatusOr<PdbInfo> p = PdbFromJson(nlohmann::json::parse(R"({
    "apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
    "metadata": {"namespace": "ns", "name": "web", "uid": "u1",
                 "resourceVersion": "12", "generation": 2},
    "spec": {"minAvailable": 2,
      "selector": {"matchLabels": {"app": "web"},
        "matchExpressions": [{"key": "tier", "operator": "In",
                              "values": ["front", "edge"]},
                             {"key": "canary", "operator": "DoesNotExist"}]}},
    "status": {"observedGeneration": 2, "disruptionsAllowed": 1,
      "currentHealthy": 3, "desiredHealthy": 2, "expectedPods": 3,
      "disruptedPods": {"web-1": "2026-12-05T07:00:00Z",
                        "web-2": "2026-12-05T07:00:01Z"}}})"));
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->namespace_, "ns");
  EXPECT_EQ(p->name, "web");
  EXPECT_EQ(p->uid, "u1");
  EXPECT_EQ(p->resource_version, "12");
  EXPECT_TRUE(p->has_selector);
  EXPECT_EQ(p->selector.match_labels().size(), 1u);
  EXPECT_EQ(ValueOf(p->selector.match_labels(), "app"), "web");
  ASSERT_EQ(p->selector.match_expressions_size(), 2);
  EXPECT_EQ(p->selector.match_expressions(0).key(), "tier");
  EXPECT_EQ(p->selector.match_expressions(0).operator_(), "In");
  EXPECT_THAT(p->selector.match_expressions(0).values(),
              ::testing::ElementsAre("front", "edge"));
  EXPECT_EQ(p->selector.match_expressions(1).operator_(), "DoesNotExist");
  EXPECT_EQ(p->disruptions_allowed, 1);
  EXPECT_THAT(p->disrupted_pods,
              ::testing::UnorderedElementsAre("web-1", "web-2"));
}

TEST(PdbFromJsonTest, EmptySelectorIsOneMissingIsNone) {
  auto pdb = [](const char* spec) {
    absl::StatusOr<PdbInfo> p = PdbFromJson(nlohmann::json::parse(absl::StrCat(
        R"({"metadata": {"namespace": "ns", "name": "b"}, "spec": )", spec,
        "}")));
    EXPECT_TRUE(p.ok()) << p.status();
    return p.ok() ? *p : PdbInfo{};
  };
  PdbInfo empty = pdb(R"({"maxUnavailable": 1, "selector": {}})");
  EXPECT_TRUE(empty.has_selector);
  EXPECT_EQ(empty.selector.match_labels().size(), 0u);
  EXPECT_EQ(empty.selector.match_expressions_size(), 0);
  for (const char* spec :
       {R"({"maxUnavailable": 1})", R"({"selector": null})", R"({})"}) {
    PdbInfo none = pdb(spec);
    EXPECT_FALSE(none.has_selector) << spec;
    // No status yet: nothing allowed, nothing disrupted.
    EXPECT_EQ(none.disruptions_allowed, 0) << spec;
    EXPECT_TRUE(none.disrupted_pods.empty()) << spec;
  }
}

TEST(PdbFromJsonTest, NamelessIsAnError) {
  absl::StatusOr<PdbInfo> p = PdbFromJson(
      nlohmann::json::parse(R"({"metadata": {"namespace": "ns"}})"));
  ASSERT_FALSE(p.ok());
  EXPECT_THAT(std::string(p.status().message()),
              HasSubstr("PodDisruptionBudget without metadata.name"));
}

}  // namespace
}  // namespace kscore::objects
