#ifndef KSCORE_MODEL_WIRE_NUMBERS_H_
#define KSCORE_MODEL_WIRE_NUMBERS_H_

// Checks of the numbers a request brings, run once per request before any
// plugin: quantities, counts, sizes and weights that must not be negative,
// ports that must be ports. Plugins then never see a negative request
// (which could fit a pod anywhere, or push a score out of [0, 100] and
// turn NormalizeScore into INTERNAL). Each error is InvalidArgument naming
// the field: "nodes[3].allocatable.milli_cpu: must not be negative, got -5".
// A linear pass over the fields; paths are built only for an error.

#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "kscore/scorer/v1/scorer.pb.h"
#include "model/score_range.h"

namespace kscore::model {

namespace pb = ::kscore::scorer::v1;

// A pod's resource lists (each container's requests and host ports, the
// init containers', overhead, pod-level requests; the scalar entries'
// names too: set and unique), its preferred terms' weights, its spread
// constraints' maxSkew (at least 1) and minDomains, and image_volumes.
// `path` names the pod ("pod", "queries[2].pod").
absl::Status CheckPodNumbers(const pb::Pod& pod, absl::string_view path);

// A node's allocatable and requested aggregates (scalar names too), pod
// count, used host ports, label, query and term counts and image sizes.
// The node is `field[index]` ("nodes[3]"), or `field` alone when index < 0
// ("new_node").
absl::Status CheckNodeNumbers(const pb::Node& node, absl::string_view field,
                              int index = -1);

// A preemption victim's requests (amounts, scalar names) and host ports.
// The victim is `field` ("nodes[2].pods[5]").
absl::Status CheckVictimNumbers(const pb::VictimPod& pod,
                                absl::string_view field);

// The cluster data's answers (totals, domains, least counts), existing
// terms' weights and totals, and node count.
absl::Status CheckClusterNumbers(const pb::ClusterData& cluster);

// The error CheckRawScore returns.
absl::Status RawScoreOutOfRange(int64_t score, ScoreRange range,
                                absl::string_view plugin,
                                absl::string_view path);

// A raw score handed to NormalizeScore for `plugin`, which must lie in
// `range` (the plugin's ScorePlugin::RawScoreRange, asked once per plugin).
// `path` names it ("raw[7]", "scores[2].raw[0]") and is called only for an
// error: this runs for every node of every plugin.
template <typename PathFn>
absl::Status CheckRawScore(int64_t score, ScoreRange range,
                           absl::string_view plugin, PathFn path) {
  if (score >= range.min && score <= range.max) return absl::OkStatus();
  return RawScoreOutOfRange(score, range, plugin, path());
}

}  // namespace kscore::model

#endif  // KSCORE_MODEL_WIRE_NUMBERS_H_
