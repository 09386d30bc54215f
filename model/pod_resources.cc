#include "model/pod_resources.h"

#include <algorithm>
#include <string>

#include "absl/strings/match.h"
#include "model/saturating.h"
#include "model/scalar_resources.h"

namespace kscore::model {
namespace {

// Sums saturate: requests near the int64 limit add up to "too much", never
// wrap into a small or negative request that fits anywhere.
void Add(pb::Resources& dst, const pb::Resources& src) {
  if (src.has_milli_cpu()) {
    dst.set_milli_cpu(SatAdd(dst.milli_cpu(), src.milli_cpu()));
  }
  if (src.has_memory()) dst.set_memory(SatAdd(dst.memory(), src.memory()));
  dst.set_ephemeral_storage(
      SatAdd(dst.ephemeral_storage(), src.ephemeral_storage()));
  for (const pb::ScalarResource& s : src.scalar()) {
    pb::ScalarResource* d = MutableScalar(&dst, s.name());
    d->set_value(SatAdd(d->value(), s.value()));
  }
}

// Per resource, the larger of dst and src; a resource only src has is
// copied (maxResourceList).
void Max(pb::Resources& dst, const pb::Resources& src) {
  if (src.has_milli_cpu() &&
      (!dst.has_milli_cpu() || src.milli_cpu() > dst.milli_cpu())) {
    dst.set_milli_cpu(src.milli_cpu());
  }
  if (src.has_memory() && (!dst.has_memory() || src.memory() > dst.memory())) {
    dst.set_memory(src.memory());
  }
  dst.set_ephemeral_storage(
      std::max(dst.ephemeral_storage(), src.ephemeral_storage()));
  for (const pb::ScalarResource& s : src.scalar()) {
    pb::ScalarResource* d = MutableScalar(&dst, s.name());
    d->set_value(std::max(d->value(), s.value()));
  }
}

// Which missing container requests get the non-zero defaults.
struct NonMissing {
  bool cpu = false;
  bool memory = false;
};

// Where a container's requests are read from: its spec, or what its status
// reports as allocated or actuated (upstream's containerSpecRequests,
// containerAllocatedRequests, containerActuatedRequests).
enum class Source { kSpec, kAllocated, kActuated };

// One container's list from source; nullptr for a nil list.
const pb::Resources* ContainerList(Source source, const pb::Container& c,
                                   const PodResourceStatus::Container* st,
                                   bool infeasible) {
  if (source == Source::kSpec) return &c.requests();
  if (st != nullptr) {
    if (source == Source::kActuated && st->actuated.has_value()) {
      return &*st->actuated;
    }
    if (st->allocated.has_value()) return &*st->allocated;
  }
  return infeasible ? nullptr : &c.requests();
}

// One container's requests with the non-zero defaults where asked and the
// request is missing (applyNonMissing); an explicit zero stays zero.
pb::Resources ContainerRequests(const pb::Resources* list, NonMissing fill) {
  pb::Resources r;
  if (list != nullptr) r = *list;
  r.clear_pods();
  if (fill.cpu && !r.has_milli_cpu()) r.set_milli_cpu(kDefaultMilliCpuRequest);
  if (fill.memory && !r.has_memory()) r.set_memory(kDefaultMemoryRequest);
  return r;
}

const PodResourceStatus::Container* StatusAt(
    const std::vector<PodResourceStatus::Container>* list, int i) {
  if (list == nullptr || static_cast<size_t>(i) >= list->size()) {
    return nullptr;
  }
  return &(*list)[static_cast<size_t>(i)];
}

// The containers' requests from source (aggregateContainerResourcesByFn).
pb::Resources Aggregate(const pb::Pod& pod, const PodResourceStatus* status,
                        Source source, NonMissing fill) {
  const bool infeasible = status != nullptr && status->resize_infeasible;
  pb::Resources result;
  for (int i = 0; i < pod.containers_size(); ++i) {
    const PodResourceStatus::Container* st =
        StatusAt(status ? &status->containers : nullptr, i);
    Add(result,
        ContainerRequests(
            ContainerList(source, pod.containers(i), st, infeasible), fill));
  }
  // Sidecars keep running once started: an init container runs next to every
  // sidecar declared before it, and the sidecars also run with the regular
  // containers.
  pb::Resources sidecars;
  pb::Resources init_peak;
  for (int i = 0; i < pod.init_containers_size(); ++i) {
    const pb::Container& c = pod.init_containers(i);
    const PodResourceStatus::Container* st =
        StatusAt(status ? &status->init_containers : nullptr, i);
    pb::Resources r =
        ContainerRequests(ContainerList(source, c, st, infeasible), fill);
    if (c.restart_policy() == "Always") {
      Add(result, r);
      Add(sidecars, r);
      Max(init_peak, sidecars);
    } else {
      Add(r, sidecars);
      Max(init_peak, r);
    }
  }
  Max(result, init_peak);
  return result;
}

// The containers' part (AggregateContainerRequests). With a status, a pod
// being resized holds the larger of its spec and what the kubelet allocated
// or actuated; the spec not at all when the resize is infeasible. Pod-level
// status lists, when the kubelet reports them, already sum the containers.
pb::Resources ContainerPart(const pb::Pod& pod, const PodResourceStatus* status,
                            NonMissing fill) {
  if (status == nullptr) return Aggregate(pod, nullptr, Source::kSpec, fill);
  pb::Resources allocated;
  pb::Resources actuated;
  if (status->allocated.has_value() && status->has_resources &&
      status->actuated.has_value()) {
    allocated = *status->allocated;
    actuated = *status->actuated;
  } else {
    allocated = Aggregate(pod, status, Source::kAllocated, fill);
    actuated = Aggregate(pod, status, Source::kActuated, fill);
  }
  pb::Resources result;
  if (!status->resize_infeasible) {
    result = Aggregate(pod, status, Source::kSpec, fill);
  }
  Max(result, actuated);
  Max(result, allocated);
  return result;
}

bool IsPodLevelResource(absl::string_view name) {
  return absl::StartsWith(name, "hugepages-");
}

// resource.IsPodLevelRequestsSet: the pod-level requests name cpu, memory or
// hugepages.
bool PodLevelRequestsSet(const pb::Pod& pod) {
  if (!pod.has_pod_level_requests()) return false;
  const pb::Resources& r = pod.pod_level_requests();
  if (r.has_milli_cpu() || r.has_memory()) return true;
  return std::any_of(
      r.scalar().begin(), r.scalar().end(),
      [](const pb::ScalarResource& s) { return IsPodLevelResource(s.name()); });
}

pb::Resources Requests(const pb::Pod& pod, const PodResourceStatus* status,
                       NonMissing fill, bool pod_level = true) {
  pb::Resources result = ContainerPart(pod, status, fill);
  if (pod_level && PodLevelRequestsSet(pod)) {
    // The pod-level amounts replace the containers' sum. During a resize
    // they are the larger of spec and status, as for containers.
    pb::Resources effective = pod.pod_level_requests();
    if (status != nullptr && status->has_resources) {
      effective.Clear();
      if (!status->resize_infeasible) effective = pod.pod_level_requests();
      if (status->actuated.has_value()) Max(effective, *status->actuated);
      if (status->allocated.has_value()) Max(effective, *status->allocated);
    }
    if (effective.has_milli_cpu()) result.set_milli_cpu(effective.milli_cpu());
    if (effective.has_memory()) result.set_memory(effective.memory());
    for (const pb::ScalarResource& s : effective.scalar()) {
      if (IsPodLevelResource(s.name())) {
        MutableScalar(&result, s.name())->set_value(s.value());
      }
    }
  }
  pb::Resources overhead = pod.overhead();
  overhead.clear_pods();
  Add(result, overhead);
  result.clear_pods();
  return result;
}

}  // namespace

pb::Resources PodRequests(const pb::Pod& pod) {
  return Requests(pod, nullptr, NonMissing{});
}

pb::Resources PodNonZeroRequests(const pb::Pod& pod) {
  NonMissing fill;
  fill.cpu = true;
  fill.memory = true;
  return Requests(pod, nullptr, fill, /*pod_level=*/false);
}

AssignedPodResources AssignedPodRequests(const pb::Pod& pod,
                                         const PodResourceStatus& status) {
  AssignedPodResources out;
  out.requests = Requests(pod, &status, NonMissing{});
  // Without pod-level requests every container gets the defaults where it
  // misses a request. With them, only a resource that neither the pod level
  // nor any container (nor the overhead) names gets them
  // (getNonMissingContainerRequests).
  NonMissing fill;
  fill.cpu = true;
  fill.memory = true;
  if (PodLevelRequestsSet(pod)) {
    fill.cpu = !out.requests.has_milli_cpu();
    fill.memory = !out.requests.has_memory();
  }
  out.non_zero =
      fill.cpu || fill.memory ? Requests(pod, &status, fill) : out.requests;
  return out;
}

}  // namespace kscore::model
