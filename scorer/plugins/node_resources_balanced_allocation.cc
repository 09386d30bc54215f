#include "scorer/plugins/node_resources_balanced_allocation.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "model/pod_resources.h"

namespace kscore::plugins {

using framework::CycleState;
using framework::PluginStatus;
using model::YamlField;
namespace pb = framework::pb;

std::string NodeResourcesBalancedAllocation::State::Encode() const {
  return EncodeRequests(requests);
}

absl::StatusOr<NodeResourcesBalancedAllocation::State>
NodeResourcesBalancedAllocation::State::Decode(absl::string_view bytes) {
  KSCORE_ASSIGN_OR_RETURN(std::vector<int64_t> r, DecodeRequests(bytes));
  return State{std::move(r)};
}

NodeResourcesBalancedAllocation::NodeResourcesBalancedAllocation(Args args)
    : args_(std::move(args)) {
  for (const ResourceSpec& r : args_.resources) resources_.emplace_back(r);
}

std::vector<int64_t> NodeResourcesBalancedAllocation::PodRequests(
    const pb::Pod& pod) const {
  pb::Resources r = model::PodRequests(pod);
  std::vector<int64_t> out;
  out.reserve(resources_.size());
  for (const ScoredResource& res : resources_) out.push_back(res.PodRequest(r));
  return out;
}

namespace {

bool BestEffort(absl::Span<const int64_t> requests) {
  return std::all_of(requests.begin(), requests.end(),
                     [](int64_t r) { return r == 0; });
}

// (1 - standard deviation of the usage fractions) * 100. Fractions are capped
// at 1; resources the node lacks are left out.
int64_t BalancedResourceScore(absl::Span<const int64_t> requested,
                              absl::Span<const int64_t> allocatable) {
  double total = 0;
  double first = 0, second = 0;
  int count = 0;
  for (size_t i = 0; i < requested.size(); ++i) {
    if (allocatable[i] == 0) continue;
    double f = std::min(1.0, static_cast<double>(requested[i]) /
                                 static_cast<double>(allocatable[i]));
    total += f;
    if (count == 0) first = f;
    if (count == 1) second = f;
    ++count;
  }
  double std_dev = 0;
  if (count == 2) {
    // The common cpu + memory case.
    std_dev = std::abs((first - second) / 2);
  } else if (count > 2) {
    const double mean = total / count;
    double sum = 0;
    for (size_t i = 0; i < requested.size(); ++i) {
      if (allocatable[i] == 0) continue;
      double f = std::min(1.0, static_cast<double>(requested[i]) /
                                   static_cast<double>(allocatable[i]));
      sum += (f - mean) * (f - mean);
    }
    std_dev = std::sqrt(sum / count);
  }
  return static_cast<int64_t>((1 - std_dev) *
                              static_cast<double>(model::kMaxNodeScore));
}

}  // namespace

PluginStatus NodeResourcesBalancedAllocation::PreScore(
    CycleState& state, const pb::Pod& pod,
    absl::Span<const pb::Node* const> /*nodes*/) const {
  State s{PodRequests(pod)};
  if (BestEffort(s.requests)) return PluginStatus::Skip();
  state.Write(kStateKey, std::move(s));
  return PluginStatus::Success();
}

PluginStatus NodeResourcesBalancedAllocation::Score(
    const CycleState& state, const pb::Pod& pod,
    absl::Span<const pb::Node* const> nodes, absl::Span<int64_t> scores) const {
  bool computed = false;
  absl::StatusOr<std::vector<int64_t>> pod_requests = ScoreRequests<State>(
      state, kStateKey, resources_.size(), [&] { return PodRequests(pod); },
      &computed);
  if (!pod_requests.ok()) {
    return PluginStatus::Error(std::string(pod_requests.status().message()));
  }
  // PreScore skips best-effort pods; without it, score them all 0 here.
  if (computed && BestEffort(*pod_requests)) {
    std::fill(scores.begin(), scores.end(), 0);
    return PluginStatus::Success();
  }
  const size_t n = resources_.size();
  std::vector<int64_t> buf(3 * n);
  absl::Span<int64_t> requested(buf.data(), n);
  absl::Span<int64_t> allocated(buf.data() + n, n);
  absl::Span<int64_t> allocatable(buf.data() + 2 * n, n);
  constexpr int64_t kHalf = model::kMaxNodeScore / 2;
  for (size_t i = 0; i < nodes.size(); ++i) {
    NodeAllocatableRequest(resources_, *pod_requests, *nodes[i],
                           /*use_requested=*/true, requested, allocated,
                           allocatable);
    // Both in [50, 100]: score the change in balance the pod brings, mapped
    // back onto [50, 100] (75 when it changes nothing).
    const int64_t with_pod = BalancedResourceScore(requested, allocatable);
    const int64_t without_pod = BalancedResourceScore(allocated, allocatable);
    scores[i] = kHalf + (kHalf + with_pod - without_pod) / 2;
  }
  return PluginStatus::Success();
}

absl::StatusOr<NodeResourcesBalancedAllocation::Args>
NodeResourcesBalancedAllocation::ParseArgs(const model::YamlField& args) {
  return model::DecodeNodeResourcesBalancedAllocationArgs(args);
}

absl::StatusOr<std::unique_ptr<framework::Plugin>>
NodeResourcesBalancedAllocation::New(const YamlField& args) {
  KSCORE_ASSIGN_OR_RETURN(Args a, ParseArgs(args));
  return std::make_unique<NodeResourcesBalancedAllocation>(std::move(a));
}

}  // namespace kscore::plugins
