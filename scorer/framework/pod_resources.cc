#include "scorer/framework/pod_resources.h"

#include <algorithm>
#include <string>

#include "scorer/framework/scalar_resources.h"

namespace kscore::framework {
namespace {

void Add(pb::Resources& dst, const pb::Resources& src) {
  dst.set_milli_cpu(dst.milli_cpu() + src.milli_cpu());
  dst.set_memory(dst.memory() + src.memory());
  dst.set_ephemeral_storage(dst.ephemeral_storage() + src.ephemeral_storage());
  for (const pb::ScalarResource& s : src.scalar()) {
    AddToScalar(&dst, s.name(), s.value());
  }
}

void Max(pb::Resources& dst, const pb::Resources& src) {
  dst.set_milli_cpu(std::max(dst.milli_cpu(), src.milli_cpu()));
  dst.set_memory(std::max(dst.memory(), src.memory()));
  dst.set_ephemeral_storage(
      std::max(dst.ephemeral_storage(), src.ephemeral_storage()));
  for (const pb::ScalarResource& s : src.scalar()) {
    pb::ScalarResource* d = MutableScalar(&dst, s.name());
    d->set_value(std::max(d->value(), s.value()));
  }
}

// One container's requests, with the non-zero defaults applied if asked.
pb::Resources ContainerRequests(const pb::Container& c, bool non_zero) {
  pb::Resources r = c.requests();
  r.set_pods(0);
  if (non_zero) {
    if (r.milli_cpu() == 0) r.set_milli_cpu(kDefaultMilliCpuRequest);
    if (r.memory() == 0) r.set_memory(kDefaultMemoryRequest);
  }
  return r;
}

pb::Resources Aggregate(const pb::Pod& pod, bool non_zero) {
  pb::Resources result;
  for (const pb::Container& c : pod.containers()) {
    Add(result, ContainerRequests(c, non_zero));
  }
  // Sidecars keep running once started: an init container runs next to every
  // sidecar declared before it, and the sidecars also run with the regular
  // containers.
  pb::Resources sidecars;
  pb::Resources init_peak;
  for (const pb::Container& c : pod.init_containers()) {
    pb::Resources r = ContainerRequests(c, non_zero);
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
  pb::Resources overhead = pod.overhead();
  overhead.set_pods(0);
  Add(result, overhead);
  return result;
}

}  // namespace

pb::Resources PodRequests(const pb::Pod& pod) {
  return Aggregate(pod, /*non_zero=*/false);
}

pb::Resources PodNonZeroRequests(const pb::Pod& pod) {
  return Aggregate(pod, /*non_zero=*/true);
}

}  // namespace kscore::framework
