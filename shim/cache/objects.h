#ifndef KSCORE_SHIM_CACHE_OBJECTS_H_
#define KSCORE_SHIM_CACHE_OBJECTS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "kscore/scorer/v1/scorer.pb.h"
#include "nlohmann/json.hpp"

namespace kscore::cache {

namespace pb = ::kscore::scorer::v1;

// What the shim keeps of a Pod: the compact pb::Pod the scorer reads, plus
// what the queue and the cache need. Built once per informer event.
struct PodInfo {
  std::string key;  // namespace/name
  std::string namespace_;
  std::string name;
  std::string uid;
  std::string resource_version;
  std::string scheduler_name;
  std::string node_name;  // spec.nodeName: set once bound (or assumed)
  std::string phase;
  bool deleting = false;  // metadata.deletionTimestamp set
  bool gated = false;     // spec.schedulingGates not empty
  int32_t priority = 0;
  absl::Time created;
  // The message of a PodScheduled=False condition, if any: the shim patches
  // the condition only when its message changes.
  std::string unschedulable_message;

  pb::Pod pod;
  pb::Resources requests;  // effective requests (PodRequests)
  pb::Resources non_zero;  // with non-zero defaults, for scoring
  std::vector<pb::HostPort> host_ports;

  bool terminated() const { return phase == "Succeeded" || phase == "Failed"; }
};

// A Pod from its JSON, or from its Kubernetes protobuf encoding (the
// object's bytes without envelope, as a list or watch event carries it): the
// same PodInfo for the same object either way.
absl::StatusOr<PodInfo> PodFromJson(const nlohmann::json& obj);
absl::StatusOr<PodInfo> PodFromProto(absl::string_view raw);

// What the shim keeps of a Node: name, labels, taints, unschedulable and
// allocatable (all the plugins read of it), and the identity its informer
// diffs on.
struct NodeInfo {
  std::string uid;
  std::string resource_version;
  pb::Node node;
};

// From either encoding, as for pods.
absl::StatusOr<NodeInfo> NodeFromJson(const nlohmann::json& obj);
absl::StatusOr<NodeInfo> NodeFromProto(absl::string_view raw);

// RFC 3339 time as the API server writes it ("2026-12-02T11:36:57Z").
absl::Time ParseTime(const std::string& s);

}  // namespace kscore::cache

#endif  // KSCORE_SHIM_CACHE_OBJECTS_H_
