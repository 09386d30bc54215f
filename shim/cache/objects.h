#ifndef KSCORE_SHIM_CACHE_OBJECTS_H_
#define KSCORE_SHIM_CACHE_OBJECTS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
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

absl::StatusOr<PodInfo> PodFromJson(const nlohmann::json& obj);

// Name, labels, taints, unschedulable and allocatable of a Node.
absl::StatusOr<pb::Node> NodeFromJson(const nlohmann::json& obj);

// RFC 3339 time as the API server writes it ("2026-12-02T11:36:57Z").
absl::Time ParseTime(const std::string& s);

}  // namespace kscore::cache

#endif  // KSCORE_SHIM_CACHE_OBJECTS_H_
