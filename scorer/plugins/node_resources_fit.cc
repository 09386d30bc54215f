#include "scorer/plugins/node_resources_fit.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "model/pod_resources.h"
#include "model/saturating.h"
#include "model/scalar_resources.h"
#include "model/validation.h"
#include "scorer/framework/shape_score.h"

namespace kscore::plugins {

using framework::CycleState;
using framework::PluginStatus;
using model::YamlField;
namespace pb = framework::pb;

// ------------------------------------------------------------------ shared

namespace {

using model::kMaxCustomPriorityScore;

constexpr absl::string_view kNativePrefix = "kubernetes.io/";

bool IsNativeResource(absl::string_view name) {
  return !absl::StrContains(name, "/") ||
         absl::StrContains(name, kNativePrefix);
}

}  // namespace

bool IsExtendedResourceName(absl::string_view name) {
  if (IsNativeResource(name) || absl::StartsWith(name, "requests.")) {
    return false;
  }
  return model::CheckLabelKey(absl::StrCat("requests.", name)).empty();
}

bool IsScalarResourceName(absl::string_view name) {
  return IsExtendedResourceName(name) || absl::StartsWith(name, "hugepages-") ||
         absl::StrContains(name, kNativePrefix) ||
         absl::StartsWith(name, "attachable-volumes-");
}

ScoredResource::ScoredResource(ResourceSpec spec)
    : spec_(std::move(spec)),
      kind_(spec_.name == "cpu"                 ? Kind::kCpu
            : spec_.name == "memory"            ? Kind::kMemory
            : spec_.name == "ephemeral-storage" ? Kind::kEphemeralStorage
                                                : Kind::kOther),
      scalar_(IsScalarResourceName(spec_.name)) {}

int64_t ScoredResource::PodRequest(const pb::Resources& pod) const {
  switch (kind_) {
    case Kind::kCpu:
      return pod.milli_cpu();
    case Kind::kMemory:
      return pod.memory();
    case Kind::kEphemeralStorage:
      return pod.ephemeral_storage();
    case Kind::kOther:
      break;
  }
  return model::ScalarValue(pod, spec_.name);
}

std::pair<int64_t, int64_t> ScoredResource::NodeAmounts(
    const pb::Node& node, bool use_requested) const {
  const pb::Resources& alloc = node.allocatable();
  const pb::Resources& used =
      use_requested ? node.requested() : node.non_zero_requested();
  switch (kind_) {
    case Kind::kCpu:
      return {alloc.milli_cpu(), used.milli_cpu()};
    case Kind::kMemory:
      return {alloc.memory(), used.memory()};
    case Kind::kEphemeralStorage:
      return {alloc.ephemeral_storage(), node.requested().ephemeral_storage()};
    case Kind::kOther:
      break;
  }
  const int64_t a = model::ScalarValue(alloc, spec_.name);
  if (a == 0) return {0, 0};
  return {a, model::ScalarValue(node.requested(), spec_.name)};
}

std::string EncodeRequests(absl::Span<const int64_t> requests) {
  return absl::StrJoin(requests, ",");
}

absl::StatusOr<std::vector<int64_t>> DecodeRequests(absl::string_view bytes) {
  std::vector<int64_t> out;
  if (bytes.empty()) return out;
  for (size_t start = 0;;) {
    size_t end = bytes.find(',', start);
    std::string part(bytes.substr(start, end - start));
    int64_t v = 0;
    if (!absl::SimpleAtoi(part, &v)) {
      return absl::InvalidArgumentError(
          absl::StrCat("not an integer: \"", part, "\""));
    }
    // State travels through the client: refused like a negative request.
    if (v < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("a request must not be negative, got ", v));
    }
    out.push_back(v);
    if (end == absl::string_view::npos) break;
    start = end + 1;
  }
  return out;
}

void NodeAllocatableRequest(absl::Span<const ScoredResource> resources,
                            absl::Span<const int64_t> pod_requests,
                            const pb::Node& node, bool use_requested,
                            absl::Span<int64_t> requested,
                            absl::Span<int64_t> allocated,
                            absl::Span<int64_t> allocatable) {
  for (size_t i = 0; i < resources.size(); ++i) {
    requested[i] = allocated[i] = allocatable[i] = 0;
    // An extended resource the pod does not ask for takes no part.
    if (pod_requests[i] == 0 && resources[i].scalar()) continue;
    auto [alloc, used] = resources[i].NodeAmounts(node, use_requested);
    if (alloc == 0) continue;
    allocatable[i] = alloc;
    allocated[i] = used;
    requested[i] = model::SatAdd(used, pod_requests[i]);
  }
}

// ------------------------------------------------------------------ plugin

std::string NodeResourcesFit::PreFilterState::Encode() const {
  pb::Resources r;
  // Zero is left unset: the state carries amounts, not presence.
  if (milli_cpu != 0) r.set_milli_cpu(milli_cpu);
  if (memory != 0) r.set_memory(memory);
  r.set_ephemeral_storage(ephemeral_storage);
  for (const auto& [name, v] : scalar) {
    pb::ScalarResource* e = r.add_scalar();  // names unique: from a map
    e->set_name(name);
    e->set_value(v);
  }
  return r.SerializeAsString();
}

absl::StatusOr<NodeResourcesFit::PreFilterState>
NodeResourcesFit::PreFilterState::Decode(absl::string_view bytes) {
  pb::Resources r;
  if (!r.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return absl::InvalidArgumentError("not a serialized Resources");
  }
  PreFilterState s;
  s.milli_cpu = r.milli_cpu();
  s.memory = r.memory();
  s.ephemeral_storage = r.ephemeral_storage();
  bool negative = s.milli_cpu < 0 || s.memory < 0 || s.ephemeral_storage < 0;
  for (const pb::ScalarResource& e : r.scalar()) {
    negative = negative || e.value() < 0;
    s.scalar.emplace_back(e.name(), e.value());
  }
  if (negative) {
    return absl::InvalidArgumentError("a request must not be negative");
  }
  std::sort(s.scalar.begin(), s.scalar.end());
  return s;
}

std::string NodeResourcesFit::PreScoreState::Encode() const {
  return EncodeRequests(requests);
}

absl::StatusOr<NodeResourcesFit::PreScoreState>
NodeResourcesFit::PreScoreState::Decode(absl::string_view bytes) {
  KSCORE_ASSIGN_OR_RETURN(std::vector<int64_t> r, DecodeRequests(bytes));
  return PreScoreState{std::move(r)};
}

NodeResourcesFit::NodeResourcesFit(Args args) : args_(std::move(args)) {
  for (const ResourceSpec& r : args_.resources) resources_.emplace_back(r);
  // Shape scores scale from [0, 10] to [0, kMaxNodeScore].
  for (ShapePoint p : args_.shape) {
    p.score *= model::kMaxNodeScore / kMaxCustomPriorityScore;
    shape_.push_back(p);
  }
}

bool NodeResourcesFit::Ignored(absl::string_view resource) const {
  if (!IsExtendedResourceName(resource)) return false;
  const auto& names = args_.ignored_resources;
  if (std::find(names.begin(), names.end(), resource) != names.end()) {
    return true;
  }
  // Extended resource names always hold a '/' (see IsExtendedResourceName).
  absl::string_view group = resource.substr(0, resource.find('/'));
  const auto& groups = args_.ignored_resource_groups;
  return std::find(groups.begin(), groups.end(), group) != groups.end();
}

NodeResourcesFit::PreFilterState NodeResourcesFit::ComputePreFilterState(
    const pb::Pod& pod) const {
  pb::Resources r = model::PodRequests(pod);
  PreFilterState s;
  s.milli_cpu = r.milli_cpu();
  s.memory = r.memory();
  s.ephemeral_storage = r.ephemeral_storage();
  for (const pb::ScalarResource& e : r.scalar()) {
    if (e.value() != 0 && !Ignored(e.name())) {
      s.scalar.emplace_back(e.name(), e.value());
    }
  }
  std::sort(s.scalar.begin(), s.scalar.end());
  return s;
}

PluginStatus NodeResourcesFit::PreFilter(CycleState& state,
                                         const pb::Pod& pod) const {
  state.Write(kPreFilterStateKey, ComputePreFilterState(pod));
  return PluginStatus::Success();
}

PluginStatus NodeResourcesFit::Filter(const CycleState& state,
                                      const pb::Pod& /*pod*/,
                                      const pb::Node& node) const {
  absl::StatusOr<const PreFilterState*> read =
      state.Read<PreFilterState>(kPreFilterStateKey);
  if (!read.ok()) {
    return PluginStatus::Error(std::string(read.status().message()));
  }
  const PreFilterState& want = **read;
  const pb::Resources& alloc = node.allocatable();
  const pb::Resources& used = node.requested();

  const bool too_many_pods = int64_t{node.pod_count()} + 1 > alloc.pods();
  // What is left on the node; saturating, so that no difference wraps.
  auto free = [](int64_t allocatable, int64_t requested) {
    return model::SatSub(allocatable, requested);
  };
  const bool cpu = want.milli_cpu > 0 &&
                   want.milli_cpu > free(alloc.milli_cpu(), used.milli_cpu());
  const bool memory =
      want.memory > 0 && want.memory > free(alloc.memory(), used.memory());
  const bool ephemeral =
      want.ephemeral_storage > 0 &&
      want.ephemeral_storage >
          free(alloc.ephemeral_storage(), used.ephemeral_storage());
  bool scalar = false;
  for (const auto& [name, q] : want.scalar) {
    if (q >
        free(model::ScalarValue(alloc, name), model::ScalarValue(used, name))) {
      scalar = true;
      break;
    }
  }
  if (!too_many_pods && !cpu && !memory && !ephemeral && !scalar) {
    return PluginStatus::Success();
  }

  // Rejected: list every shortage. It is unresolvable (preemption cannot
  // help) when the request exceeds what the node has at all.
  PluginStatus status{framework::Code::kUnschedulable, {}, {}};
  bool unresolvable = false;
  if (too_many_pods) status.reasons.emplace_back(kReasonTooManyPods);
  if (cpu) {
    status.reasons.emplace_back(kReasonCpu);
    unresolvable |= want.milli_cpu > alloc.milli_cpu();
  }
  if (memory) {
    status.reasons.emplace_back(kReasonMemory);
    unresolvable |= want.memory > alloc.memory();
  }
  if (ephemeral) {
    status.reasons.emplace_back(kReasonEphemeralStorage);
    unresolvable |= want.ephemeral_storage > alloc.ephemeral_storage();
  }
  for (const auto& [name, q] : want.scalar) {
    const int64_t capacity = model::ScalarValue(alloc, name);
    if (q > free(capacity, model::ScalarValue(used, name))) {
      status.reasons.push_back(absl::StrCat(kReasonInsufficientPrefix, name));
      unresolvable |= q > capacity;
    }
  }
  if (unresolvable) {
    status.code = framework::Code::kUnschedulableAndUnresolvable;
  }
  return status;
}

namespace {

// Upstream's haveAnyRequestedResourcesIncreased: more pod room, or more of a
// resource the pod requests. Reads all of the pod's requests, ignored
// resources included, as upstream does.
bool RequestedResourcesIncreased(const pb::Pod& pod, const pb::Node& before,
                                 const pb::Node& after) {
  const pb::Resources& was = before.allocatable();
  const pb::Resources& now = after.allocatable();
  if (now.pods() > was.pods()) return true;
  const pb::Resources want = model::PodRequests(pod);
  if ((want.milli_cpu() > 0 && now.milli_cpu() > was.milli_cpu()) ||
      (want.memory() > 0 && now.memory() > was.memory()) ||
      (want.ephemeral_storage() > 0 &&
       now.ephemeral_storage() > was.ephemeral_storage())) {
    return true;
  }
  for (const pb::ScalarResource& r : want.scalar()) {
    if (r.value() != 0 &&
        model::ScalarValue(now, r.name()) > model::ScalarValue(was, r.name())) {
      return true;
    }
  }
  return false;
}

}  // namespace

bool NodeResourcesFit::FitsEmptyNode(const pb::Pod& pod,
                                     const pb::Node& node) const {
  // Filter reads only the allocatable, requested and pod_count of a node:
  // the node as the event has it, without the aggregates of its pods.
  pb::Node empty;
  empty.set_name(node.name());
  *empty.mutable_allocatable() = node.allocatable();
  CycleState state;
  if (!PreFilter(state, pod).ok()) return false;
  return Filter(state, pod, empty).ok();
}

model::QueueingHint NodeResourcesFit::Hint(const pb::Pod& pod,
                                           const model::EventObjects& e) const {
  using model::QueueingHint;
  const uint32_t action = e.event.action_type();
  switch (e.event.resource()) {
    case pb::EVENT_RESOURCE_ASSIGNED_POD:
      if (action != model::action::kDelete || e.old_pod == nullptr) {
        return QueueingHint::kQueue;
      }
      // A pod that never reached a node freed nothing.
      return e.old_pod->node_name().empty() ? QueueingHint::kQueueSkip
                                            : QueueingHint::kQueue;
    case pb::EVENT_RESOURCE_NODE:
      if (e.new_node == nullptr) return QueueingHint::kQueue;
      // Upstream's isFit also checks ignoredResources, which its Filter
      // does not: a node short of only those skips the pod there, though
      // Filter would pass it. This follows Filter and queues it.
      if (!FitsEmptyNode(pod, *e.new_node)) return QueueingHint::kQueueSkip;
      if (e.old_node == nullptr) return QueueingHint::kQueue;
      return RequestedResourcesIncreased(pod, *e.old_node, *e.new_node)
                 ? QueueingHint::kQueue
                 : QueueingHint::kQueueSkip;
    default:
      return QueueingHint::kQueue;
  }
}

PluginStatus NodeResourcesFit::PreScore(
    CycleState& state, const pb::Pod& pod,
    absl::Span<const pb::Node* const> /*nodes*/) const {
  pb::Resources r = model::PodNonZeroRequests(pod);
  PreScoreState s;
  for (const ScoredResource& res : resources_) {
    s.requests.push_back(res.PodRequest(r));
  }
  state.Write(kPreScoreStateKey, std::move(s));
  return PluginStatus::Success();
}

namespace {

// The products below are taken in 128 bits (MulDiv): a capacity past
// 2^63 / 100 would overflow them in int64.
int64_t LeastRequestedScore(int64_t requested, int64_t capacity) {
  if (capacity == 0 || requested > capacity) return 0;
  return model::MulDiv(capacity - requested, model::kMaxNodeScore, capacity);
}

int64_t MostRequestedScore(int64_t requested, int64_t capacity) {
  if (capacity == 0) return 0;
  // Pods without requests count with defaults, so this can overshoot.
  requested = std::min(requested, capacity);
  return model::MulDiv(requested, model::kMaxNodeScore, capacity);
}

}  // namespace

int64_t NodeResourcesFit::ScoreNode(
    absl::Span<const int64_t> requested,
    absl::Span<const int64_t> allocatable) const {
  int64_t node_score = 0;
  int64_t weight_sum = 0;
  for (size_t i = 0; i < requested.size(); ++i) {
    if (allocatable[i] == 0) continue;
    const int64_t weight = args_.resources[i].weight;
    int64_t score = 0;
    switch (args_.strategy) {
      case Strategy::kLeastAllocated:
        score = LeastRequestedScore(requested[i], allocatable[i]);
        break;
      case Strategy::kMostAllocated:
        score = MostRequestedScore(requested[i], allocatable[i]);
        break;
      case Strategy::kRequestedToCapacityRatio:
        score = framework::BrokenLinear(
            shape_, requested[i] > allocatable[i]
                        ? 100
                        : model::MulDiv(requested[i], 100, allocatable[i]));
        // Resources scoring zero do not count in the average.
        if (score <= 0) continue;
        break;
    }
    node_score = model::SatAdd(node_score, model::SatMul(score, weight));
    weight_sum = model::SatAdd(weight_sum, weight);
  }
  if (weight_sum == 0) return 0;
  if (args_.strategy == Strategy::kRequestedToCapacityRatio) {
    return static_cast<int64_t>(std::round(static_cast<double>(node_score) /
                                           static_cast<double>(weight_sum)));
  }
  return node_score / weight_sum;
}

PluginStatus NodeResourcesFit::Score(const CycleState& state,
                                     const pb::Pod& pod,
                                     absl::Span<const pb::Node* const> nodes,
                                     absl::Span<int64_t> scores) const {
  bool computed = false;
  absl::StatusOr<std::vector<int64_t>> pod_requests =
      ScoreRequests<PreScoreState>(
          state, kPreScoreStateKey, resources_.size(),
          [&] {
            pb::Resources r = model::PodNonZeroRequests(pod);
            std::vector<int64_t> out;
            for (const ScoredResource& res : resources_) {
              out.push_back(res.PodRequest(r));
            }
            return out;
          },
          &computed);
  if (!pod_requests.ok()) {
    return PluginStatus::Error(std::string(pod_requests.status().message()));
  }
  const size_t n = resources_.size();
  std::vector<int64_t> buf(3 * n);
  absl::Span<int64_t> requested(buf.data(), n);
  absl::Span<int64_t> allocated(buf.data() + n, n);
  absl::Span<int64_t> allocatable(buf.data() + 2 * n, n);
  for (size_t i = 0; i < nodes.size(); ++i) {
    NodeAllocatableRequest(resources_, *pod_requests, *nodes[i],
                           /*use_requested=*/false, requested, allocated,
                           allocatable);
    scores[i] = ScoreNode(requested, allocatable);
  }
  return PluginStatus::Success();
}

// ------------------------------------------------------------------ args

absl::StatusOr<NodeResourcesFit::Args> NodeResourcesFit::ParseArgs(
    const model::YamlField& args) {
  return model::DecodeNodeResourcesFitArgs(args);
}

absl::StatusOr<std::unique_ptr<framework::Plugin>> NodeResourcesFit::New(
    const YamlField& args) {
  KSCORE_ASSIGN_OR_RETURN(Args a, ParseArgs(args));
  return std::make_unique<NodeResourcesFit>(std::move(a));
}

}  // namespace kscore::plugins
