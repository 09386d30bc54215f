#ifndef KSCORE_MODEL_PLUGIN_POINTS_H_
#define KSCORE_MODEL_PLUGIN_POINTS_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "model/config.h"

namespace kscore::model {

// Where plugins run in kscore, and where the in-tree ones may be enabled:
// shared by the scorer's Profile::Create and the shim's start-up check, so
// both refuse the same configurations with the same words.

// The extension points the scorer runs (PostFilter only in Preempt calls).
absl::Span<const ExtensionPoint> RunPoints();

// An extension point the scorer does not run. At three of them the shim does
// the job of kube-scheduler's default plugin, which is accepted there; any
// other name enabled at any of them is refused, as kube-scheduler refuses a
// plugin it does not have ("X" does not exist), rather than configured and
// never run.
struct PointNotRun {
  ExtensionPoint point;
  absl::string_view done_by_shim;  // the one plugin accepted, or ""
  absl::string_view why;           // why nothing else is
};
absl::Span<const PointNotRun> PointsNotRun();

// kube-scheduler's name for a point's plugin type: "QueueSortPlugin".
std::string PluginTypeName(ExtensionPoint p);

// Whether in-tree plugin `name` (model::IsInTreePluginRun) extends `point`
// in kscore's scorer; false for any other name or point.
bool InTreePluginExtends(absl::string_view name, ExtensionPoint point);

// The errors for a plugin enabled at `point` that does not extend it, and
// for one named twice there (kube-scheduler's words).
absl::Status PluginDoesNotExtend(const PluginRef& ref, ExtensionPoint point);
absl::Status PluginAlreadyRegistered(const PluginRef& ref,
                                     ExtensionPoint point);

// The error for `ref`, enabled at `np`'s point where the scorer runs nothing
// but the shim's plugin; OK for that plugin. `has_code` says whether the
// scorer has code for the name ("does not extend" rather than "does not
// exist").
absl::Status CheckEnabledAtPointNotRun(const PointNotRun& np,
                                       const PluginRef& ref, bool has_code);

// Every plugin a profile enables by name at a single point, checked as the
// scorer checks it where the outcome does not depend on its build: at points
// the scorer does not run, any name but the shim's plugin; at the others, an
// in-tree plugin that does not extend the point or is named twice. A name
// that is not in-tree is left to the scorer, whose build may have it.
absl::Status CheckEnabledPoints(const SchedulerConfig& config);

}  // namespace kscore::model

#endif  // KSCORE_MODEL_PLUGIN_POINTS_H_
