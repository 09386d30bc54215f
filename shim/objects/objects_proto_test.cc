// The protobuf decoders against the JSON ones: the same object in the two
// encodings must give the same PodInfo / NodeInfo, field for field.
#include <limits>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "kscore/k8s/k8s_subset.pb.h"
#include "model/scalar_resources.h"
#include "shim/objects/objects.h"
#include "shim/objects/storage.h"
#include "shim/objects/testing/expect_same_pod.h"

namespace kscore::objects {
namespace {

namespace k8s = ::kscore::k8s;
using google::protobuf::util::MessageDifferencer;
using ::testing::HasSubstr;

// The value of `key` in a map, or "<none>": a missing key fails the
// comparison instead of aborting the test binary (Map::at would).
std::string ValueOf(const google::protobuf::Map<std::string, std::string>& m,
                    const std::string& key) {
  auto it = m.find(key);
  return it == m.end() ? "<none>" : it->second;
}

// One object written in both encodings: JSON as the API server sends it,
// protobuf as the text format of k8s_subset.proto's message.
struct Case {
  std::string name;
  std::string json;
  std::string proto_text;
};

template <typename Message>
std::string Bytes(const std::string& text) {
  Message m;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &m)) << text;
  return m.SerializeAsString();
}

const std::vector<Case>& PodCases() {
  static const auto* cases = new std::vector<Case>{
      {"everything the plugins read",
       R"({"metadata": {"namespace": "ns", "name": "web-1", "uid": "u1",
            "resourceVersion": "7", "labels": {"app": "web", "tier": "x"},
            "creationTimestamp": "2026-12-02T10:00:00Z"},
          "spec": {"schedulerName": "concentrate-scheduler", "priority": 5,
            "nodeSelector": {"disk": "ssd"},
            "affinity": {"nodeAffinity": {
              "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a", "b"]}],
                 "matchFields": [{"key": "metadata.name", "operator": "NotIn", "values": ["n9"]}]},
                {"matchExpressions": [{"key": "gpu", "operator": "Exists"}]}]},
              "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 3, "preference": {"matchExpressions": [{"key": "x", "operator": "Exists"}]}}]}},
            "tolerations": [{"key": "k", "operator": "Equal", "value": "v", "effect": "NoSchedule"},
                            {"operator": "Exists"}],
            "initContainers": [
              {"name": "sidecar", "restartPolicy": "Always",
               "ports": [{"containerPort": 9000, "hostPort": 9000, "protocol": "UDP", "hostIP": "127.0.0.1"}],
               "resources": {"requests": {"cpu": "50m", "memory": "64Mi"}}},
              {"name": "init", "ports": [{"hostPort": 7000}],
               "resources": {"requests": {"cpu": "2"}}}],
            "containers": [
              {"name": "a", "ports": [{"containerPort": 80, "hostPort": 8080}, {"containerPort": 81}],
               "resources": {"requests": {"cpu": "500m", "memory": "1Gi", "ephemeral-storage": "1Gi",
                 "example.com/gpu": "1", "hugepages-2Mi": "4Mi", "storage": "5Gi",
                 "acme.io/fpga": "2"}}},
              {"name": "b", "resources": {"requests": {"cpu": "250m"}}}],
            "overhead": {"cpu": "100m", "memory": "10Mi"},
            "preemptionPolicy": "PreemptLowerPriority"},
          "status": {"phase": "Pending", "nominatedNodeName": "n4",
            "startTime": "2026-12-02T10:01:00Z", "conditions": [
            {"type": "Ready", "status": "False", "message": "not this one"},
            {"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"},
            {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": "0/3"}]}})",
       R"pb(metadata {
              namespace: "ns"
              name: "web-1"
              uid: "u1"
              resource_version: "7"
              labels { key: "app" value: "web" }
              labels { key: "tier" value: "x" }
              creation_timestamp { seconds: 1796205600 }
            }
            spec {
              scheduler_name: "concentrate-scheduler"
              priority: 5
              node_selector { key: "disk" value: "ssd" }
              affinity {
                node_affinity {
                  required_during_scheduling_ignored_during_execution {
                    node_selector_terms {
                      match_expressions {
                        key: "zone"
                        operator: "In"
                        values: "a"
                        values: "b"
                      }
                      match_fields {
                        key: "metadata.name"
                        operator: "NotIn"
                        values: "n9"
                      }
                    }
                    node_selector_terms {
                      match_expressions { key: "gpu" operator: "Exists" }
                    }
                  }
                  preferred_during_scheduling_ignored_during_execution {
                    weight: 3
                    preference {
                      match_expressions { key: "x" operator: "Exists" }
                    }
                  }
                }
              }
              tolerations {
                key: "k"
                operator: "Equal"
                value: "v"
                effect: "NoSchedule"
              }
              tolerations { operator: "Exists" }
              init_containers {
                name: "sidecar"
                restart_policy: "Always"
                ports { host_port: 9000 protocol: "UDP" host_ip: "127.0.0.1" }
                resources {
                  requests {
                    key: "cpu"
                    value { string: "50m" }
                  }
                  requests {
                    key: "memory"
                    value { string: "64Mi" }
                  }
                }
              }
              init_containers {
                name: "init"
                ports { host_port: 7000 }
                resources {
                  requests {
                    key: "cpu"
                    value { string: "2" }
                  }
                }
              }
              containers {
                name: "a"
                ports { host_port: 8080 }
                ports {}
                resources {
                  requests {
                    key: "cpu"
                    value { string: "500m" }
                  }
                  requests {
                    key: "memory"
                    value { string: "1Gi" }
                  }
                  requests {
                    key: "ephemeral-storage"
                    value { string: "1Gi" }
                  }
                  requests {
                    key: "example.com/gpu"
                    value { string: "1" }
                  }
                  requests {
                    key: "hugepages-2Mi"
                    value { string: "4Mi" }
                  }
                  requests {
                    key: "storage"
                    value { string: "5Gi" }
                  }
                  requests {
                    key: "acme.io/fpga"
                    value { string: "2" }
                  }
                }
              }
              containers {
                name: "b"
                resources {
                  requests {
                    key: "cpu"
                    value { string: "250m" }
                  }
                }
              }
              overhead {
                key: "cpu"
                value { string: "100m" }
              }
              overhead {
                key: "memory"
                value { string: "10Mi" }
              }
              preemption_policy: "PreemptLowerPriority"
            }
            status {
              phase: "Pending"
              nominated_node_name: "n4"
              start_time { seconds: 1796205660 }
              conditions {
                type: "Ready"
                status: "False"
                message: "not this one"
              }
              conditions {
                type: "DisruptionTarget"
                status: "True"
                reason: "PreemptionByScheduler"
              }
              conditions { type: "PodScheduled" status: "False" message: "0/3" }
            })pb"},
      {"defaults and flags",
       R"({"metadata": {"namespace": "ns", "name": "p",
                        "deletionTimestamp": "2026-12-02T10:00:00Z"},
           "spec": {"nodeName": "n1", "schedulingGates": [{"name": "g"}],
                    "containers": [{"name": "c"}]},
           "status": {"phase": "Succeeded"}})",
       R"pb(metadata {
              namespace: "ns"
              name: "p"
              deletion_timestamp { seconds: 1 }
            }
            spec {
              node_name: "n1"
              scheduling_gates { name: "g" }
              containers { name: "c" }
            }
            status { phase: "Succeeded" })pb"},
      {"pod-level requests, explicit zeros and a resize under way",
       R"({"metadata": {"namespace": "ns", "name": "r"},
           "spec": {"nodeName": "n1",
             "resources": {"requests": {"cpu": "2", "memory": "1Gi"}},
             "initContainers": [{"name": "side", "restartPolicy": "Always",
                                 "resources": {"requests": {"cpu": "0"}}}],
             "containers": [
               {"name": "a", "resources": {"requests": {"cpu": "1", "memory": "0"}}},
               {"name": "b"}]},
           "status": {"phase": "Running",
             "conditions": [
               {"type": "PodResizePending", "status": "True", "reason": "Infeasible"},
               {"type": "PodResizePending", "status": "True", "reason": "Deferred"}],
             "containerStatuses": [
               {"name": "b", "allocatedResources": {"cpu": "500m"}},
               {"name": "a", "allocatedResources": {"cpu": "3", "memory": "0"},
                "resources": {"requests": {"cpu": "3"}}}],
             "initContainerStatuses": [{"name": "side", "allocatedResources": {"cpu": "0"},
                                        "resources": {}}],
             "allocatedResources": {"cpu": "2500m"},
             "resources": {"requests": {"cpu": "2500m", "memory": "1Gi"}}}})",
       R"pb(metadata { namespace: "ns" name: "r" }
            spec {
              node_name: "n1"
              resources {
                requests {
                  key: "cpu"
                  value { string: "2" }
                }
                requests {
                  key: "memory"
                  value { string: "1Gi" }
                }
              }
              init_containers {
                name: "side"
                restart_policy: "Always"
                resources {
                  requests {
                    key: "cpu"
                    value { string: "0" }
                  }
                }
              }
              containers {
                name: "a"
                resources {
                  requests {
                    key: "cpu"
                    value { string: "1" }
                  }
                  requests {
                    key: "memory"
                    value { string: "0" }
                  }
                }
              }
              containers { name: "b" }
            }
            status {
              phase: "Running"
              conditions {
                type: "PodResizePending"
                status: "True"
                reason: "Infeasible"
              }
              conditions {
                type: "PodResizePending"
                status: "True"
                reason: "Deferred"
              }
              container_statuses {
                name: "b"
                allocated_resources {
                  key: "cpu"
                  value { string: "500m" }
                }
              }
              container_statuses {
                name: "a"
                allocated_resources {
                  key: "cpu"
                  value { string: "3" }
                }
                allocated_resources {
                  key: "memory"
                  value { string: "0" }
                }
                resources {
                  requests {
                    key: "cpu"
                    value { string: "3" }
                  }
                }
              }
              init_container_statuses {
                name: "side"
                allocated_resources {
                  key: "cpu"
                  value { string: "0" }
                }
                resources {}
              }
              allocated_resources {
                key: "cpu"
                value { string: "2500m" }
              }
              resources {
                requests {
                  key: "cpu"
                  value { string: "2500m" }
                }
                requests {
                  key: "memory"
                  value { string: "1Gi" }
                }
              }
            })pb"},
      {"inter-pod affinity",
       R"({"metadata": {"namespace": "ns", "name": "p"}, "spec": {"affinity": {
             "podAffinity": {
               "requiredDuringSchedulingIgnoredDuringExecution": [{"topologyKey": "zone",
                 "labelSelector": {"matchExpressions": [
                   {"key": "tier", "operator": "In", "values": ["a", "b"]},
                   {"key": "x", "operator": "Exists"}]},
                 "namespaces": ["ns", "other"],
                 "namespaceSelector": {"matchLabels": {"team": "t"}}}],
               "preferredDuringSchedulingIgnoredDuringExecution": [
                 {"weight": 7, "podAffinityTerm": {"topologyKey": "rack",
                   "labelSelector": {}, "namespaceSelector": {}}}]},
             "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
               {"topologyKey": "kubernetes.io/hostname",
                "labelSelector": {"matchLabels": {"app": "web"}}}, {}]}}}})",
       R"pb(metadata { namespace: "ns" name: "p" }
            spec {
              affinity {
                pod_affinity {
                  required_during_scheduling_ignored_during_execution {
                    topology_key: "zone"
                    label_selector {
                      match_expressions {
                        key: "tier"
                        operator: "In"
                        values: "a"
                        values: "b"
                      }
                      match_expressions { key: "x" operator: "Exists" }
                    }
                    namespaces: "ns"
                    namespaces: "other"
                    namespace_selector {
                      match_labels { key: "team" value: "t" }
                    }
                  }
                  preferred_during_scheduling_ignored_during_execution {
                    weight: 7
                    pod_affinity_term {
                      topology_key: "rack"
                      label_selector {}
                      namespace_selector {}
                    }
                  }
                }
                pod_anti_affinity {
                  required_during_scheduling_ignored_during_execution {
                    topology_key: "kubernetes.io/hostname"
                    label_selector { match_labels { key: "app" value: "web" } }
                  }
                  required_during_scheduling_ignored_during_execution {}
                }
              }
            })pb"},
      {"topology spread",
       R"({"metadata": {"namespace": "ns", "name": "p"}, "spec": {"topologySpreadConstraints": [
             {"maxSkew": 2, "topologyKey": "zone", "whenUnsatisfiable": "ScheduleAnyway",
              "labelSelector": {"matchLabels": {"app": "web"},
                "matchExpressions": [{"key": "v", "operator": "NotIn", "values": ["1"]}]},
              "minDomains": 3, "nodeAffinityPolicy": "Ignore", "nodeTaintsPolicy": "Honor",
              "matchLabelKeys": ["pod-template-hash", "rev"]},
             {"maxSkew": 1, "topologyKey": "kubernetes.io/hostname",
              "whenUnsatisfiable": "DoNotSchedule", "labelSelector": {}}]}})",
       R"pb(metadata { namespace: "ns" name: "p" }
            spec {
              topology_spread_constraints {
                max_skew: 2
                topology_key: "zone"
                when_unsatisfiable: "ScheduleAnyway"
                label_selector {
                  match_labels { key: "app" value: "web" }
                  match_expressions { key: "v" operator: "NotIn" values: "1" }
                }
                min_domains: 3
                node_affinity_policy: "Ignore"
                node_taints_policy: "Honor"
                match_label_keys: "pod-template-hash"
                match_label_keys: "rev"
              }
              topology_spread_constraints {
                max_skew: 1
                topology_key: "kubernetes.io/hostname"
                when_unsatisfiable: "DoNotSchedule"
                label_selector {}
              }
            })pb"},
      {"claimed volumes and resource claims",
       R"({"metadata": {"namespace": "ns", "name": "p"}, "spec": {"volumes": [
             {"name": "tmp", "emptyDir": {}},
             {"name": "d", "persistentVolumeClaim": {"claimName": "c"}},
             {"name": "e", "ephemeral": {}},
             {"name": "g", "gcePersistentDisk": {"pdName": "pd", "readOnly": true}},
             {"name": "a", "awsElasticBlockStore": {"volumeID": "vol"}},
             {"name": "i", "iscsi": {"iqn": "iqn.x", "readOnly": false}},
             {"name": "r", "rbd": {"monitors": ["m1", "m2"], "image": "img",
                                   "pool": "rbd", "readOnly": true}}],
             "resourceClaims": [{"name": "gpu"}, {"name": "nic"}]}})",
       R"pb(metadata { namespace: "ns" name: "p" }
            spec {
              volumes { name: "tmp" }
              volumes {
                name: "d"
                volume_source { persistent_volume_claim { claim_name: "c" } }
              }
              volumes {
                name: "e"
                volume_source { ephemeral: "" }
              }
              volumes {
                name: "g"
                volume_source {
                  gce_persistent_disk { pd_name: "pd" read_only: true }
                }
              }
              volumes {
                name: "a"
                volume_source { aws_elastic_block_store { volume_id: "vol" } }
              }
              volumes {
                name: "i"
                volume_source { iscsi { iqn: "iqn.x" read_only: false } }
              }
              volumes {
                name: "r"
                volume_source {
                  rbd {
                    monitors: "m1"
                    monitors: "m2"
                    image: "img"
                    pool: "rbd"
                    read_only: true
                  }
                }
              }
              resource_claims { name: "gpu" }
              resource_claims { name: "nic" }
            })pb"},
      {"what NodeDeclaredFeatures infers features from",
       R"({"metadata": {"namespace": "ns", "name": "feat"},
          "spec": {"hostNetwork": true, "hostUsers": false,
            "initContainers": [{"name": "i",
              "restartPolicyRules": [{"action": "RestartAllContainers",
                                      "exitCodes": {"operator": "In", "values": [42]}}]}],
            "containers": [{"name": "c", "volumeMounts": [
              {"name": "a", "mountPath": "/a"},
              {"name": "b", "mountPath": "/b", "bindMountOptions": ["nosuid"]}]}]}})",
       R"pb(metadata { namespace: "ns" name: "feat" }
            spec {
              host_network: true
              host_users: false
              init_containers {
                name: "i"
                restart_policy_rules { action: "RestartAllContainers" }
              }
              containers {
                name: "c"
                volume_mounts {}
                volume_mounts { bind_mount_options: "nosuid" }
              }
            })pb"},
      {"images and the controller",
       R"({"metadata": {"namespace": "ns", "name": "img", "ownerReferences": [
             {"apiVersion": "v1", "kind": "ConfigMap", "name": "cm", "uid": "u0",
              "controller": false},
             {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-7d4",
              "uid": "u1", "controller": true},
             {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "db",
              "uid": "u2", "controller": true}]},
           "spec": {
             "initContainers": [{"name": "i", "image": "busybox:1.36"}],
             "containers": [{"name": "a", "image": "nginx"}, {"name": "b"}],
             "volumes": [{"name": "tmp", "emptyDir": {}},
                         {"name": "model", "image": {"reference": "models/llm:v1"}}]}})",
       R"pb(metadata {
              namespace: "ns"
              name: "img"
              owner_references {
                api_version: "v1"
                kind: "ConfigMap"
                name: "cm"
                uid: "u0"
                controller: false
              }
              owner_references {
                api_version: "apps/v1"
                kind: "ReplicaSet"
                name: "web-7d4"
                uid: "u1"
                controller: true
              }
              owner_references {
                api_version: "apps/v1"
                kind: "StatefulSet"
                name: "db"
                uid: "u2"
                controller: true
              }
            }
            spec {
              init_containers { name: "i" image: "busybox:1.36" }
              containers { name: "a" image: "nginx" }
              containers { name: "b" }
              volumes { name: "tmp" }
              volumes {
                name: "model"
                volume_source { image { reference: "models/llm:v1" } }
              }
            })pb"},
  };
  return *cases;
}

TEST(PodFromProtoTest, SameAsFromJson) {
  for (const Case& c : PodCases()) {
    SCOPED_TRACE(c.name);
    absl::StatusOr<PodInfo> j = PodFromJson(nlohmann::json::parse(c.json));
    absl::StatusOr<PodInfo> p = PodFromProto(Bytes<k8s::Pod>(c.proto_text));
    ASSERT_TRUE(j.ok()) << j.status();
    ASSERT_TRUE(p.ok()) << p.status();
    ExpectSamePod(*j, *p);
  }
}

// The cases compare something: the fixtures really carry what they name.
TEST(PodFromProtoTest, CasesAreNotEmpty) {
  absl::StatusOr<PodInfo> rich =
      PodFromProto(Bytes<k8s::Pod>(PodCases()[0].proto_text));
  ASSERT_TRUE(rich.ok()) << rich.status();
  EXPECT_EQ(rich->pod.node_affinity().required_size(), 2);
  EXPECT_EQ(rich->pod.tolerations_size(), 2);
  // 8080 and the sidecar's 9000; not the init container's 7000.
  EXPECT_EQ(rich->host_ports.size(), 2u);
  EXPECT_EQ(model::ScalarValue(rich->requests, "acme.io/fpga"), 2);
  EXPECT_EQ(rich->unschedulable_message, "0/3");
  EXPECT_EQ(rich->nominated_node_name, "n4");
  EXPECT_TRUE(rich->start_time.has_value());
  EXPECT_TRUE(rich->preempted_by_scheduler);
  EXPECT_EQ(rich->pod.preemption_policy(), "PreemptLowerPriority");
  EXPECT_GT(rich->created, absl::UnixEpoch());
  auto decode = [](size_t i) {
    absl::StatusOr<PodInfo> p =
        PodFromProto(Bytes<k8s::Pod>(PodCases()[i].proto_text));
    EXPECT_TRUE(p.ok()) << p.status();
    return p.ok() ? p->pod : pb::Pod();
  };
  const pb::Pod affinity = decode(3);
  ASSERT_EQ(affinity.pod_affinity().required_size(), 1);
  ASSERT_EQ(affinity.pod_affinity().preferred_size(), 1);
  const pb::PodAffinityTerm& required = affinity.pod_affinity().required(0);
  EXPECT_EQ(required.topology_key(), "zone");
  ASSERT_EQ(required.label_selector().match_expressions_size(), 2);
  EXPECT_EQ(required.namespaces_size(), 2);
  EXPECT_EQ(ValueOf(required.namespace_selector().match_labels(), "team"), "t");
  EXPECT_EQ(affinity.pod_affinity().preferred(0).weight(), 7);
  const pb::PodAffinityTerm& preferred =
      affinity.pod_affinity().preferred(0).term();
  EXPECT_EQ(preferred.topology_key(), "rack");
  EXPECT_TRUE(preferred.has_label_selector());  // empty, not unset
  EXPECT_TRUE(preferred.has_namespace_selector());
  ASSERT_EQ(affinity.pod_anti_affinity().required_size(), 2);
  EXPECT_EQ(ValueOf(affinity.pod_anti_affinity()
                        .required(0)
                        .label_selector()
                        .match_labels(),
                    "app"),
            "web");
  EXPECT_FALSE(affinity.pod_anti_affinity().required(1).has_label_selector());
  EXPECT_FALSE(
      affinity.pod_anti_affinity().required(1).has_namespace_selector());
  const pb::Pod spread = decode(4);
  ASSERT_EQ(spread.topology_spread_constraints_size(), 2);
  const pb::TopologySpreadConstraint& full =
      spread.topology_spread_constraints(0);
  EXPECT_EQ(full.max_skew(), 2);
  ASSERT_EQ(full.label_selector().match_expressions_size(), 1);
  EXPECT_THAT(full.label_selector().match_expressions(0).values(),
              ::testing::ElementsAre("1"));
  EXPECT_EQ(full.min_domains(), 3);
  EXPECT_EQ(full.node_affinity_policy(), "Ignore");
  EXPECT_EQ(full.node_taints_policy(), "Honor");
  EXPECT_EQ(full.match_label_keys_size(), 2);
  const pb::TopologySpreadConstraint& bare =
      spread.topology_spread_constraints(1);
  EXPECT_EQ(bare.when_unsatisfiable(), "DoNotSchedule");
  EXPECT_TRUE(bare.has_label_selector());
  EXPECT_FALSE(bare.has_min_domains());
  EXPECT_EQ(bare.node_affinity_policy(), "");
  const pb::Pod claims = decode(5);
  ASSERT_EQ(claims.volume_claims_size(), 2);  // not the emptyDir
  EXPECT_EQ(claims.volume_claims(0).claim_name(), "c");
  EXPECT_TRUE(claims.volume_claims(1).ephemeral());
  EXPECT_EQ(claims.resource_claims_size(), 2);
  // The in-tree disks, in spec order.
  ASSERT_EQ(claims.inline_disks_size(), 4);
  EXPECT_EQ(claims.inline_disks(0).kind(), pb::DISK_KIND_GCE_PD);
  EXPECT_EQ(claims.inline_disks(0).id(), "pd");
  EXPECT_TRUE(claims.inline_disks(0).read_only());
  EXPECT_EQ(claims.inline_disks(1).kind(), pb::DISK_KIND_AWS_EBS);
  EXPECT_EQ(claims.inline_disks(1).id(), "vol");
  EXPECT_EQ(claims.inline_disks(2).kind(), pb::DISK_KIND_ISCSI);
  EXPECT_EQ(claims.inline_disks(2).id(), "iqn.x");
  EXPECT_FALSE(claims.inline_disks(2).read_only());
  const pb::InlineDisk& rbd = claims.inline_disks(3);
  EXPECT_EQ(rbd.kind(), pb::DISK_KIND_RBD);
  EXPECT_EQ(rbd.id(), "img");
  EXPECT_EQ(rbd.pool(), "rbd");
  EXPECT_THAT(rbd.monitors(), ::testing::ElementsAre("m1", "m2"));
  EXPECT_TRUE(rbd.read_only());
  absl::StatusOr<PodInfo> resized =
      PodFromProto(Bytes<k8s::Pod>(PodCases()[2].proto_text));
  ASSERT_TRUE(resized.ok()) << resized.status();
  EXPECT_EQ(resized->pod.pod_level_requests().milli_cpu(), 2000);
  EXPECT_TRUE(resized->pod.containers(0).requests().has_memory());
  EXPECT_TRUE(resized->pod.init_containers(0).requests().has_milli_cpu());
  const model::PodResourceStatus& st = resized->resource_status;
  ASSERT_EQ(st.containers.size(), 2u);
  EXPECT_EQ(st.containers[0].allocated->milli_cpu(), 3000);  // a, by name
  EXPECT_EQ(st.containers[0].actuated->milli_cpu(), 3000);
  EXPECT_EQ(st.containers[1].allocated->milli_cpu(), 500);  // b
  EXPECT_FALSE(st.containers[1].actuated.has_value());
  ASSERT_EQ(st.init_containers.size(), 1u);
  EXPECT_TRUE(st.init_containers[0].allocated->has_milli_cpu());
  EXPECT_FALSE(st.init_containers[0].actuated.has_value());  // empty list
  EXPECT_EQ(st.allocated->milli_cpu(), 2500);
  EXPECT_TRUE(st.has_resources);
  EXPECT_EQ(st.actuated->memory(), int64_t{1} << 30);
  EXPECT_TRUE(st.resize_infeasible);  // the first condition counts
  const pb::Pod features = decode(6);
  EXPECT_TRUE(features.host_network());
  ASSERT_TRUE(features.has_host_users());
  EXPECT_FALSE(features.host_users());
  EXPECT_THAT(features.init_containers(0).restart_rule_actions(),
              ::testing::ElementsAre("RestartAllContainers"));
  EXPECT_TRUE(features.containers(0).bind_mount_options());
  EXPECT_FALSE(decode(0).has_host_users());
  absl::StatusOr<PodInfo> images =
      PodFromProto(Bytes<k8s::Pod>(PodCases()[7].proto_text));
  ASSERT_TRUE(images.ok()) << images.status();
  EXPECT_THAT(
      images->pod.images(),
      ::testing::ElementsAre("busybox:1.36", "nginx", "", "models/llm:v1"));
  EXPECT_EQ(images->pod.image_volumes(), 1);
  EXPECT_EQ(images->controller_kind, "ReplicaSet");
  EXPECT_EQ(images->controller_name, "web-7d4");
}

// A pod with an in-tree volume of each plugin CSI migration knows, between
// claims.
const Case& InTreeCase() {
  static const Case* c = new Case{
      "in-tree volumes CSI migration knows",
      R"({"metadata": {"namespace": "ns", "name": "it"}, "spec": {"volumes": [
             {"name": "a", "awsElasticBlockStore": {"volumeID": "aws://z/vol-1"}},
             {"name": "c", "persistentVolumeClaim": {"claimName": "c"}},
             {"name": "d", "azureDisk": {"diskName": "d", "diskURI": "/s/d",
                                         "kind": "Managed"}},
             {"name": "d2", "azureDisk": {"diskURI": "https://b/d"}},
             {"name": "ci", "cinder": {"volumeID": "cv"}},
             {"name": "e", "ephemeral": {}},
             {"name": "px", "portworxVolume": {"volumeID": "pv"}},
             {"name": "f", "azureFile": {"secretName": "s", "shareName": "x"}},
             {"name": "v", "vsphereVolume": {"volumePath": "[ds] p"}},
             {"name": "g", "gcePersistentDisk": {"pdName": "pd"}}]}})",
      R"pb(metadata { namespace: "ns" name: "it" }
           spec {
             volumes {
               name: "a"
               volume_source {
                 aws_elastic_block_store { volume_id: "aws://z/vol-1" }
               }
             }
             volumes {
               name: "c"
               volume_source { persistent_volume_claim { claim_name: "c" } }
             }
             volumes {
               name: "d"
               volume_source { azure_disk { disk_uri: "/s/d" kind: "Managed" } }
             }
             volumes {
               name: "d2"
               volume_source { azure_disk { disk_uri: "https://b/d" } }
             }
             volumes {
               name: "ci"
               volume_source { cinder { volume_id: "cv" } }
             }
             volumes {
               name: "e"
               volume_source { ephemeral: "" }
             }
             volumes {
               name: "px"
               volume_source { portworx_volume { volume_id: "pv" } }
             }
             volumes {
               name: "f"
               volume_source { azure_file: "" }
             }
             volumes {
               name: "v"
               volume_source { vsphere_volume: "" }
             }
             volumes {
               name: "g"
               volume_source { gce_persistent_disk { pd_name: "pd" } }
             }
           })pb"};
  return *c;
}

// The in-tree volumes NodeVolumeLimits counts through CSI migration, in
// spec order, each with the claims before it; as from JSON.
TEST(PodFromProtoTest, InTreeVolumes) {
  absl::StatusOr<PodInfo> p =
      PodFromProto(Bytes<k8s::Pod>(InTreeCase().proto_text));
  ASSERT_TRUE(p.ok()) << p.status();
  absl::StatusOr<PodInfo> j =
      PodFromJson(nlohmann::json::parse(InTreeCase().json));
  ASSERT_TRUE(j.ok()) << j.status();
  ExpectSamePod(*j, *p);
  const auto& v = p->pod.in_tree_volumes();
  ASSERT_EQ(v.size(), 8);
  const auto expect = [&v](int i, const char* name, const char* plugin,
                           const char* id, int claims_before) {
    SCOPED_TRACE(name);
    EXPECT_EQ(v[i].name(), name);
    EXPECT_EQ(v[i].plugin(), plugin);
    EXPECT_EQ(v[i].id(), id);
    EXPECT_EQ(v[i].claims_before(), claims_before);
  };
  expect(0, "a", kPluginAwsEbs, "aws://z/vol-1", 0);
  expect(1, "d", kPluginAzureDisk, "/s/d", 1);
  EXPECT_EQ(v[1].azure_kind(), "Managed");
  expect(2, "d2", kPluginAzureDisk, "https://b/d", 1);
  EXPECT_FALSE(v[2].has_azure_kind());
  expect(3, "ci", kPluginCinder, "cv", 1);
  expect(4, "px", kPluginPortworx, "pv", 2);
  expect(5, "f", kPluginAzureFile, "", 2);
  expect(6, "v", kPluginVsphere, "", 2);
  expect(7, "g", kPluginGcePd, "pd", 2);
  EXPECT_EQ(p->pod.volume_claims_size(), 2);
}

TEST(PodFromProtoTest, ErrorsNameTheField) {
  absl::StatusOr<PodInfo> p = PodFromProto(Bytes<k8s::Pod>(R"pb(
    metadata { namespace: "ns" name: "p" }
    spec {
      containers {}
      containers {
        resources {
          requests {
            key: "cpu"
            value { string: "lots" }
          }
        }
      }
    })pb"));
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->invalid,
            "spec.containers[1].resources.requests.cpu: invalid quantity "
            "\"lots\"");
  EXPECT_FALSE(PodFromProto("\xff\xff\xff").ok());
  EXPECT_FALSE(PodFromProto(Bytes<k8s::Pod>("spec {}")).ok());  // no name
}

// Bad and negative quantities, and ones beyond int64, as the JSON decoder
// reads them.
TEST(PodFromProtoTest, QuantitiesAsFromJson) {
  absl::StatusOr<PodInfo> j = PodFromJson(nlohmann::json::parse(R"({
    "metadata": {"namespace": "ns", "name": "p"},
    "spec": {"containers": [{"name": "c", "resources": {"requests":
      {"cpu": "-1", "memory": "100Ei", "example.com/gpu": "x"}}}]}})"));
  absl::StatusOr<PodInfo> p = PodFromProto(Bytes<k8s::Pod>(R"pb(
    metadata { namespace: "ns" name: "p" }
    spec {
      containers {
        name: "c"
        resources {
          requests {
            key: "memory"
            value { string: "100Ei" }
          }
          requests {
            key: "example.com/gpu"
            value { string: "x" }
          }
          requests {
            key: "cpu"
            value { string: "-1" }
          }
        }
      }
    })pb"));
  ASSERT_TRUE(j.ok()) << j.status();
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->invalid,
            "spec.containers[0].resources.requests.cpu: must not be negative, "
            "got \"-1\"");
  EXPECT_EQ(p->pod.containers(0).requests().memory(),
            std::numeric_limits<int64_t>::max());
  ExpectSamePod(*j, *p);
}

// Found by fuzz_pod_proto (fuzz/regressions/pod_proto/
// host-port-out-of-range): a host port beyond 65535 is left out and the pod
// noted invalid, as the JSON decoder does.
TEST(PodFromProtoTest, HostPortsBeyond65535AsFromJson) {
  absl::StatusOr<PodInfo> j = PodFromJson(nlohmann::json::parse(R"({
    "metadata": {"namespace": "ns", "name": "p"},
    "spec": {"containers": [{"name": "c", "ports": [
      {"containerPort": 80, "hostPort": 1034256}]}]}})"));
  absl::StatusOr<PodInfo> p = PodFromProto(Bytes<k8s::Pod>(R"pb(
    metadata { namespace: "ns" name: "p" }
    spec {
      containers {
        name: "c"
        ports { host_port: 1034256 }
      }
    })pb"));
  ASSERT_TRUE(j.ok()) << j.status();
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->invalid,
            "spec.containers[0].ports[0].hostPort: must be a port in "
            "1..65535, got 1034256");
  EXPECT_TRUE(p->host_ports.empty());
  ExpectSamePod(*j, *p);
}

TEST(NodeFromProtoTest, SameAsFromJson) {
  const std::vector<Case> cases = {
      {"everything the plugins read",
       R"({"metadata": {"name": "n1", "uid": "u9", "resourceVersion": "8",
                        "labels": {"zone": "a", "disk": "ssd"}},
           "spec": {"unschedulable": true, "taints": [
             {"key": "k", "value": "v", "effect": "NoSchedule"},
             {"key": "only-key", "effect": "PreferNoSchedule"}]},
           "status": {"allocatable": {"cpu": "3500m", "memory": "15Gi", "pods": "110",
             "ephemeral-storage": "100Gi", "example.com/gpu": "2", "acme.io/fpga": "1",
             "hugepages-1Gi": "2Gi"},
             "declaredFeatures": ["RestartAllContainersOnContainerExits", "VolumeBindMountOptions"],
             "images": [
               {"names": ["docker.io/library/nginx@sha256:aa", "docker.io/library/nginx:1.27"],
                "sizeBytes": 70000000},
               {"names": ["registry.k8s.io/pause:3.9"], "sizeBytes": 300000}]}})",
       R"pb(metadata {
              name: "n1"
              uid: "u9"
              resource_version: "8"
              labels { key: "zone" value: "a" }
              labels { key: "disk" value: "ssd" }
            }
            spec {
              unschedulable: true
              taints { key: "k" value: "v" effect: "NoSchedule" }
              taints { key: "only-key" effect: "PreferNoSchedule" }
            }
            status {
              allocatable {
                key: "cpu"
                value { string: "3500m" }
              }
              allocatable {
                key: "memory"
                value { string: "15Gi" }
              }
              allocatable {
                key: "pods"
                value { string: "110" }
              }
              allocatable {
                key: "ephemeral-storage"
                value { string: "100Gi" }
              }
              allocatable {
                key: "example.com/gpu"
                value { string: "2" }
              }
              allocatable {
                key: "acme.io/fpga"
                value { string: "1" }
              }
              allocatable {
                key: "hugepages-1Gi"
                value { string: "2Gi" }
              }
              declared_features: "RestartAllContainersOnContainerExits"
              declared_features: "VolumeBindMountOptions"
              images {
                names: "docker.io/library/nginx@sha256:aa"
                names: "docker.io/library/nginx:1.27"
                size_bytes: 70000000
              }
              images { names: "registry.k8s.io/pause:3.9" size_bytes: 300000 }
            })pb"},
      {"bare", R"({"metadata": {"name": "n2"}})",
       R"pb(metadata { name: "n2" })pb"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    absl::StatusOr<NodeInfo> j = NodeFromJson(nlohmann::json::parse(c.json));
    absl::StatusOr<NodeInfo> p = NodeFromProto(Bytes<k8s::Node>(c.proto_text));
    ASSERT_TRUE(j.ok()) << j.status();
    ASSERT_TRUE(p.ok()) << p.status();
    EXPECT_EQ(j->uid, p->uid);
    EXPECT_EQ(j->resource_version, p->resource_version);
    EXPECT_TRUE(MessageDifferencer::Equals(j->node, p->node))
        << "JSON: " << j->node.DebugString()
        << "\nprotobuf: " << p->node.DebugString();
    ASSERT_EQ(j->images.size(), p->images.size());
    for (size_t i = 0; i < j->images.size(); ++i) {
      EXPECT_EQ(j->images[i].names, p->images[i].names);
      EXPECT_EQ(j->images[i].size_bytes, p->images[i].size_bytes);
    }
    EXPECT_EQ(j->images_digest, p->images_digest);
  }
  absl::StatusOr<NodeInfo> rich =
      NodeFromProto(Bytes<k8s::Node>(cases[0].proto_text));
  ASSERT_TRUE(rich.ok());
  EXPECT_EQ(rich->node.taints_size(), 2);
  EXPECT_EQ(rich->node.allocatable().scalar_size(), 3);
  EXPECT_EQ(rich->node.allocatable().milli_cpu(), 3500);
  EXPECT_EQ(rich->node.declared_features_size(), 2);
  ASSERT_EQ(rich->images.size(), 2u);
  EXPECT_EQ(rich->images[0].names.size(), 2u);
  EXPECT_EQ(rich->images[1].size_bytes, 300000);
  EXPECT_NE(rich->images_digest, 0u);
}

TEST(NamespaceFromProtoTest, SameAsFromJson) {
  const Case c = {
      "labels",
      R"({"metadata": {"name": "team-a", "uid": "u1", "resourceVersion": "9",
           "labels": {"kubernetes.io/metadata.name": "team-a", "team": "a"}}})",
      R"pb(metadata {
             name: "team-a"
             uid: "u1"
             resource_version: "9"
             labels { key: "kubernetes.io/metadata.name" value: "team-a" }
             labels { key: "team" value: "a" }
           })pb"};
  absl::StatusOr<NamespaceInfo> j =
      NamespaceFromJson(nlohmann::json::parse(c.json));
  absl::StatusOr<NamespaceInfo> p =
      NamespaceFromProto(Bytes<k8s::Namespace>(c.proto_text));
  ASSERT_TRUE(j.ok()) << j.status();
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(j->name, p->name);
  EXPECT_EQ(j->uid, p->uid);
  EXPECT_EQ(j->resource_version, p->resource_version);
  EXPECT_EQ(p->labels.size(), 2u);
  EXPECT_EQ(j->labels.size(), p->labels.size());
  for (const auto& [k, v] : j->labels) {
    EXPECT_EQ(ValueOf(p->labels, k), v) << k;
  }
  EXPECT_FALSE(NamespaceFromProto(Bytes<k8s::Namespace>("metadata {}")).ok());
  EXPECT_FALSE(NamespaceFromProto("\xff\xff\xff").ok());
}

// Services and ReplicationControllers share one message shape (a map
// selector), ReplicaSets and StatefulSets another (a LabelSelector).
TEST(WorkloadFromProtoTest, SameAsFromJson) {
  struct WorkloadCase {
    WorkloadKind kind;
    Case c;
    bool has_selector;
  };
  const std::vector<WorkloadCase> cases = {
      {WorkloadKind::kService,
       {"service",
        R"({"metadata": {"namespace": "ns", "name": "web", "uid": "u1",
             "resourceVersion": "4"},
            "spec": {"selector": {"app": "web", "tier": "front"}}})",
        R"pb(metadata {
               namespace: "ns"
               name: "web"
               uid: "u1"
               resource_version: "4"
             }
             spec {
               selector { key: "app" value: "web" }
               selector { key: "tier" value: "front" }
             })pb"},
       true},
      {WorkloadKind::kService,
       {"service without selector",
        R"({"metadata": {"namespace": "ns", "name": "ext"},
            "spec": {"type": "ExternalName"}})",
        R"pb(metadata { namespace: "ns" name: "ext" }
             spec {})pb"},
       false},
      {WorkloadKind::kReplicationController,
       {"replication controller",
        R"({"metadata": {"namespace": "ns", "name": "rc"},
            "spec": {"selector": {"app": "old"}}})",
        R"pb(metadata { namespace: "ns" name: "rc" }
             spec { selector { key: "app" value: "old" } })pb"},
       true},
      {WorkloadKind::kReplicaSet,
       {"replica set",
        R"({"metadata": {"namespace": "ns", "name": "web-7d4", "uid": "u2"},
            "spec": {"selector": {"matchLabels": {"app": "web"},
              "matchExpressions": [{"key": "pod-template-hash", "operator": "In",
                                    "values": ["7d4"]}]}}})",
        R"pb(metadata { namespace: "ns" name: "web-7d4" uid: "u2" }
             spec {
               selector {
                 match_labels { key: "app" value: "web" }
                 match_expressions {
                   key: "pod-template-hash"
                   operator: "In"
                   values: "7d4"
                 }
               }
             })pb"},
       true},
      {WorkloadKind::kStatefulSet,
       {"stateful set with an empty selector",
        R"({"metadata": {"namespace": "ns", "name": "db"},
            "spec": {"selector": {}}})",
        R"pb(metadata { namespace: "ns" name: "db" }
             spec { selector {} })pb"},
       true},
      {WorkloadKind::kStatefulSet,
       {"stateful set without selector",
        R"({"metadata": {"namespace": "ns", "name": "db"}, "spec": {}})",
        R"pb(metadata { namespace: "ns" name: "db" }
             spec {})pb"},
       false},
  };
  for (const WorkloadCase& wc : cases) {
    SCOPED_TRACE(wc.c.name);
    const bool map_kind = wc.kind == WorkloadKind::kService ||
                          wc.kind == WorkloadKind::kReplicationController;
    absl::StatusOr<WorkloadInfo> j =
        WorkloadFromJson(wc.kind, nlohmann::json::parse(wc.c.json));
    absl::StatusOr<WorkloadInfo> p = WorkloadFromProto(
        wc.kind, map_kind ? Bytes<k8s::MapSelectorObject>(wc.c.proto_text)
                          : Bytes<k8s::LabelSelectorObject>(wc.c.proto_text));
    ASSERT_TRUE(j.ok()) << j.status();
    ASSERT_TRUE(p.ok()) << p.status();
    EXPECT_EQ(j->kind, wc.kind);
    EXPECT_EQ(p->kind, wc.kind);
    EXPECT_EQ(j->namespace_, p->namespace_);
    EXPECT_EQ(j->name, p->name);
    EXPECT_EQ(j->uid, p->uid);
    EXPECT_EQ(j->resource_version, p->resource_version);
    EXPECT_EQ(j->has_selector, wc.has_selector);
    EXPECT_EQ(p->has_selector, wc.has_selector);
    EXPECT_TRUE(MessageDifferencer::Equals(j->selector, p->selector))
        << "JSON: " << j->selector.DebugString()
        << "\nprotobuf: " << p->selector.DebugString();
  }
  absl::StatusOr<WorkloadInfo> nameless = WorkloadFromProto(
      WorkloadKind::kReplicaSet,
      Bytes<k8s::LabelSelectorObject>(R"pb(metadata { namespace: "ns" })pb"));
  ASSERT_FALSE(nameless.ok());
  EXPECT_THAT(std::string(nameless.status().message()),
              HasSubstr("ReplicaSet without metadata.name"));
}

TEST(PdbFromProtoTest, SameAsFromJson) {
  struct PdbCase {
    Case c;
    bool has_selector;
  };
  const std::vector<PdbCase> cases = {
      {{"matchLabels, matchExpressions and the status",
        R"({"metadata": {"namespace": "ns", "name": "web", "uid": "u1",
             "resourceVersion": "12"},
            "spec": {"minAvailable": "50%",
              "selector": {"matchLabels": {"app": "web", "tier": "front"},
                "matchExpressions": [{"key": "track", "operator": "NotIn",
                                      "values": ["canary", "beta"]},
                                     {"key": "gpu", "operator": "Exists"}]}},
            "status": {"observedGeneration": 3, "disruptionsAllowed": 2,
              "currentHealthy": 4, "desiredHealthy": 2, "expectedPods": 4,
              "disruptedPods": {"web-1": "2026-12-05T07:00:00Z",
                                "web-3": "2026-12-05T07:00:02Z"}}})",
        R"pb(metadata {
               namespace: "ns"
               name: "web"
               uid: "u1"
               resource_version: "12"
             }
             spec {
               selector {
                 match_labels { key: "app" value: "web" }
                 match_labels { key: "tier" value: "front" }
                 match_expressions {
                   key: "track"
                   operator: "NotIn"
                   values: "canary"
                   values: "beta"
                 }
                 match_expressions { key: "gpu" operator: "Exists" }
               }
             }
             status {
               disrupted_pods {
                 key: "web-1"
                 value { seconds: 1796454000 }
               }
               disrupted_pods {
                 key: "web-3"
                 value { seconds: 1796454002 }
               }
               disruptions_allowed: 2
             })pb"},
       true},
      {{"empty selector",
        R"({"metadata": {"namespace": "ns", "name": "all"},
            "spec": {"maxUnavailable": 1, "selector": {}},
            "status": {"disruptionsAllowed": 1}})",
        R"pb(metadata { namespace: "ns" name: "all" }
             spec { selector {} }
             status { disruptions_allowed: 1 })pb"},
       true},
      {{"missing selector",
        R"({"metadata": {"namespace": "ns", "name": "none"},
            "spec": {"maxUnavailable": 1}})",
        R"pb(metadata { namespace: "ns" name: "none" }
             spec {})pb"},
       false},
  };
  for (const PdbCase& pc : cases) {
    SCOPED_TRACE(pc.c.name);
    absl::StatusOr<PdbInfo> j = PdbFromJson(nlohmann::json::parse(pc.c.json));
    absl::StatusOr<PdbInfo> p =
        PdbFromProto(Bytes<k8s::PodDisruptionBudget>(pc.c.proto_text));
    ASSERT_TRUE(j.ok()) << j.status();
    ASSERT_TRUE(p.ok()) << p.status();
    EXPECT_EQ(j->namespace_, p->namespace_);
    EXPECT_EQ(j->name, p->name);
    EXPECT_EQ(j->uid, p->uid);
    EXPECT_EQ(j->resource_version, p->resource_version);
    EXPECT_EQ(j->has_selector, pc.has_selector);
    EXPECT_EQ(p->has_selector, pc.has_selector);
    EXPECT_TRUE(MessageDifferencer::Equals(j->selector, p->selector))
        << "JSON: " << j->selector.DebugString()
        << "\nprotobuf: " << p->selector.DebugString();
    EXPECT_EQ(j->disruptions_allowed, p->disruptions_allowed);
    EXPECT_EQ(j->disrupted_pods, p->disrupted_pods);
  }
  // The first case read what it says, not only the same in both.
  absl::StatusOr<PdbInfo> p =
      PdbFromProto(Bytes<k8s::PodDisruptionBudget>(cases[0].c.proto_text));
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->selector.match_labels().size(), 2u);
  EXPECT_EQ(p->selector.match_expressions_size(), 2);
  EXPECT_EQ(p->disruptions_allowed, 2);
  EXPECT_THAT(p->disrupted_pods,
              ::testing::UnorderedElementsAre("web-1", "web-3"));

  absl::StatusOr<PdbInfo> nameless = PdbFromProto(
      Bytes<k8s::PodDisruptionBudget>(R"pb(metadata { namespace: "ns" })pb"));
  ASSERT_FALSE(nameless.ok());
  EXPECT_THAT(std::string(nameless.status().message()),
              HasSubstr("PodDisruptionBudget without metadata.name"));
  EXPECT_FALSE(PdbFromProto("\xff\xff\xff").ok());
}

// The subset's field numbers are upstream's (k8s.io/api policy/v1
// generated.proto): bytes written by hand, with fields the shim does not
// read (spec.minAvailable, status.currentHealthy) in between.
TEST(PdbFromProtoTest, FieldNumbersAreUpstreams) {
  // Letters stand alone: "\x01b" would be one escape.
  constexpr char kWire[] =
      // metadata = 1 {name = 1: "b"}
      "\x0a\x03\x0a\x01"
      "b"
      // spec = 2 {minAvailable = 1 {type: 0, intVal: 1}, selector = 2
      // {matchLabels = 1 {a: x}}}
      "\x12\x10\x0a\x04\x08\x00\x10\x01\x12\x08\x0a\x06\x0a\x01"
      "a"
      "\x12\x01"
      "x"
      // status = 3 {disruptedPods = 2 {p: {seconds: 5}},
      // disruptionsAllowed = 3: 2, currentHealthy = 4: 3}
      "\x1a\x0d\x12\x07\x0a\x01"
      "p"
      "\x12\x02\x08\x05\x18\x02\x20\x03";
  absl::StatusOr<PdbInfo> p =
      PdbFromProto(absl::string_view(kWire, sizeof(kWire) - 1));
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->name, "b");
  EXPECT_TRUE(p->has_selector);
  EXPECT_EQ(ValueOf(p->selector.match_labels(), "a"), "x");
  EXPECT_EQ(p->disruptions_allowed, 2);
  EXPECT_THAT(p->disrupted_pods, ::testing::ElementsAre("p"));
}

}  // namespace
}  // namespace kscore::objects
