#include "shim/queue/pod_events.h"

#include <cstdint>
#include <optional>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "google/protobuf/util/message_differencer.h"
#include "model/cluster_event.h"

namespace kscore::queue {
namespace {

namespace pb = ::kscore::scorer::v1;
namespace action = ::kscore::model::action;

// Every resource a pod requests, by name (present ones only).
absl::flat_hash_map<std::string, int64_t> Requested(const pb::Resources& r) {
  absl::flat_hash_map<std::string, int64_t> out;
  if (r.has_milli_cpu()) out["cpu"] = r.milli_cpu();
  if (r.has_memory()) out["memory"] = r.memory();
  if (r.ephemeral_storage() != 0) {
    out["ephemeral-storage"] = r.ephemeral_storage();
  }
  for (const pb::ScalarResource& s : r.scalar()) out[s.name()] = s.value();
  return out;
}

// Upstream's extractPodScaleDown (a request lowered or dropped) and
// extractPodScaleUp (one raised or added).
bool ScaledDown(const absl::flat_hash_map<std::string, int64_t>& before,
                const absl::flat_hash_map<std::string, int64_t>& after) {
  for (const auto& [name, old] : before) {
    auto it = after.find(name);
    if (it == after.end() || it->second < old) return true;
  }
  return false;
}

}  // namespace

std::vector<pb::ClusterEvent> PodUpdateEvents(const objects::PodInfo& before,
                                              const objects::PodInfo& after,
                                              pb::EventResource resource) {
  using google::protobuf::util::MessageDifferencer;
  std::vector<pb::ClusterEvent> events;
  auto add = [&](uint32_t a) {
    events.push_back(model::MakeEvent(resource, a));
  };
  bool labels = before.pod.labels_size() != after.pod.labels_size();
  for (const auto& [key, value] : before.pod.labels()) {
    if (labels) break;
    auto it = after.pod.labels().find(key);
    labels = it == after.pod.labels().end() || it->second != value;
  }
  if (labels) add(action::kUpdatePodLabel);
  const auto old_requests = Requested(before.requests);
  const auto new_requests = Requested(after.requests);
  if (ScaledDown(old_requests, new_requests)) add(action::kUpdatePodScaleDown);
  if (ScaledDown(new_requests, old_requests)) add(action::kUpdatePodScaleUp);
  // Tolerations can only be added (API validation): any change adds one.
  bool tolerations =
      before.pod.tolerations_size() != after.pod.tolerations_size();
  for (int i = 0; !tolerations && i < before.pod.tolerations_size(); ++i) {
    tolerations = !MessageDifferencer::Equals(before.pod.tolerations(i),
                                              after.pod.tolerations(i));
  }
  if (tolerations) add(action::kUpdatePodToleration);
  if (events.empty()) add(action::kUpdate);
  return events;
}

}  // namespace kscore::queue
