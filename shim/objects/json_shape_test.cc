// Every JSON decoder refuses a field of the wrong type, naming it, and reads
// null as absent.
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "shim/objects/objects.h"

namespace kscore::objects {
namespace {

using Decode = std::function<absl::Status(const nlohmann::json&)>;

template <typename T>
absl::Status StatusOf(const absl::StatusOr<T>& v) {
  return v.status();
}

const Decode kPod = [](const nlohmann::json& j) {
  return StatusOf(PodFromJson(j));
};
const Decode kNode = [](const nlohmann::json& j) {
  return StatusOf(NodeFromJson(j));
};
const Decode kNamespace = [](const nlohmann::json& j) {
  return StatusOf(NamespaceFromJson(j));
};
const Decode kService = [](const nlohmann::json& j) {
  return StatusOf(WorkloadFromJson(WorkloadKind::kService, j));
};
const Decode kReplicaSet = [](const nlohmann::json& j) {
  return StatusOf(WorkloadFromJson(WorkloadKind::kReplicaSet, j));
};
const Decode kPdb = [](const nlohmann::json& j) {
  return StatusOf(PdbFromJson(j));
};

struct WrongTypeCase {
  const char* name;
  const Decode* decode;
  const char* json;
  const char* error;  // the whole message
};

TEST(JsonShapeTest, WrongTypeIsAnErrorNamingTheField) {
  const WrongTypeCase cases[] = {
      {"containers a string", &kPod,
       R"({"metadata": {"name": "p"}, "spec": {"containers": "nope"}})",
       "spec.containers: expected an array"},
      {"container not an object", &kPod,
       R"({"metadata": {"name": "p"}, "spec": {"containers": [{}, 7]}})",
       "spec.containers[1]: expected an object"},
      {"host port a string", &kPod,
       R"({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c",
           "ports": [{"containerPort": 80}, {"hostPort": "80"}]}]}})",
       "spec.containers[0].ports[1].hostPort: expected an integer (64 bits)"},
      {"priority beyond int32", &kPod,
       R"({"metadata": {"name": "p"}, "spec": {"priority": 4294967296}})",
       "spec.priority: expected an integer (32 bits)"},
      {"label value a number", &kPod,
       R"({"metadata": {"name": "p", "labels": {"app": 1}}})",
       "metadata.labels: expected an object of strings"},
      {"spec an array", &kPod, R"({"metadata": {"name": "p"}, "spec": []})",
       "spec: expected an object"},
      {"affinity term values", &kPod,
       R"({"metadata": {"name": "p"}, "spec": {"affinity": {"nodeAffinity": {
           "requiredDuringSchedulingIgnoredDuringExecution": {
             "nodeSelectorTerms": [{"matchExpressions": [
               {"key": "k", "operator": "In", "values": "v"}]}]}}}}})",
       "spec.affinity.nodeAffinity."
       "requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]."
       "matchExpressions[0].values: expected an array of strings"},
      {"condition message", &kPod,
       R"({"metadata": {"name": "p"}, "status": {"conditions": [
           {"type": "PodScheduled", "message": false}]}})",
       "status.conditions[0].message: expected a string"},
      {"node unschedulable", &kNode,
       R"({"metadata": {"name": "n"}, "spec": {"unschedulable": "yes"}})",
       "spec.unschedulable: expected a boolean"},
      {"node image names", &kNode,
       R"({"metadata": {"name": "n"}, "status": {"images": [
           {"names": "x", "sizeBytes": 1}]}})",
       "status.images[0].names: expected an array of strings"},
      {"namespace metadata", &kNamespace, R"({"metadata": ["ns"]})",
       "metadata: expected an object"},
      {"service selector", &kService,
       R"({"metadata": {"name": "s"},
           "spec": {"selector": {"matchLabels": {"app": "web"}}}})",
       "spec.selector: expected an object of strings"},
      {"replica set selector", &kReplicaSet,
       R"({"metadata": {"name": "r"}, "spec": {"selector": {"matchLabels": 1}}})",
       "spec.selector.matchLabels: expected an object of strings"},
      {"pdb allowed", &kPdb,
       R"({"metadata": {"name": "b"}, "status": {"disruptionsAllowed": "1"}})",
       "status.disruptionsAllowed: expected an integer (32 bits)"},
  };
  for (const WrongTypeCase& c : cases) {
    const absl::Status s = (*c.decode)(nlohmann::json::parse(c.json));
    EXPECT_TRUE(absl::IsInvalidArgument(s)) << c.name << ": " << s;
    EXPECT_EQ(s.message(), c.error) << c.name;
  }
}

TEST(JsonShapeTest, NullIsAbsent) {
  absl::StatusOr<PodInfo> p = PodFromJson(nlohmann::json::parse(R"({
    "metadata": {"namespace": "ns", "name": "p", "creationTimestamp": null,
                 "labels": null},
    "spec": {"containers": null, "affinity": null, "priority": null},
    "status": null})"));
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->pod.containers_size(), 0);
  EXPECT_EQ(p->priority, 0);
}

// What a real API server wrote (fuzz/corpus, recorded by
// fuzz/record_seeds.sh) has every type the decoders expect.
TEST(JsonShapeTest, RecordedObjectsPass) {
  const std::filesystem::path corpus =
      std::filesystem::path(KSCORE_SOURCE_DIR) / "fuzz" / "corpus";
  const std::pair<const char*, const Decode*> recorded[] = {
      {"pod_json/rec-pods-0", &kPod},
      {"pod_json/rec-pods-1", &kPod},
      {"pod_json/rec-pods-2", &kPod},
      {"pod_json/rec-pods-3", &kPod},
      {"node_json/rec-nodes-0", &kNode},
      {"node_json/rec-nodes-1", &kNode},
      {"object_json/rec-namespace", &kNamespace},
      {"object_json/rec-services-0", &kService},
      {"object_json/rec-replicasets-0", &kReplicaSet},
      {"object_json/rec-pdbs-0", &kPdb},
  };
  for (const auto& [file, decode] : recorded) {
    std::ifstream in(corpus / file);
    ASSERT_TRUE(in) << file;
    std::stringstream text;
    text << in.rdbuf();
    const absl::Status s = (*decode)(nlohmann::json::parse(text.str()));
    EXPECT_TRUE(s.ok()) << file << ": " << s;
  }
}

}  // namespace
}  // namespace kscore::objects
