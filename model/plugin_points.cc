#include "model/plugin_points.h"

#include <algorithm>
#include <map>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "model/plugin_args/in_tree.h"

namespace kscore::model {
namespace {

constexpr ExtensionPoint kRunPoints[] = {
    ExtensionPoint::kPreFilter, ExtensionPoint::kFilter,
    ExtensionPoint::kPreScore, ExtensionPoint::kScore,
    ExtensionPoint::kPostFilter};

constexpr PointNotRun kPointsNotRun[] = {
    {ExtensionPoint::kPreEnqueue, "SchedulingGates",
     "the shim holds back pods with schedulingGates (SchedulingGates) and "
     "runs no other PreEnqueue plugin"},
    {ExtensionPoint::kQueueSort, "PrioritySort",
     "the shim's queue sorts pods by priority, then age (PrioritySort)"},
    {ExtensionPoint::kReserve, "", "kscore runs no Reserve plugin"},
    {ExtensionPoint::kPermit, "", "kscore runs no Permit plugin"},
    {ExtensionPoint::kPreBind, "", "kscore runs no PreBind plugin"},
    {ExtensionPoint::kBind, "DefaultBinder",
     "the shim binds through pods/binding (DefaultBinder)"},
    {ExtensionPoint::kPostBind, "", "kscore runs no PostBind plugin"},
    {ExtensionPoint::kPlacementGenerate, "",
     "kscore does not schedule pod groups"},
    {ExtensionPoint::kPlacementScore, "",
     "kscore does not schedule pod groups"},
    {ExtensionPoint::kPodGroupPostFilter, "",
     "kscore does not schedule pod groups"},
};

using Points = std::vector<ExtensionPoint>;

// The points each in-tree plugin the scorer runs extends (the interfaces of
// its class under scorer/plugins; framework_test checks the two agree).
const std::map<std::string, Points, std::less<>>& InTreePoints() {
  using P = ExtensionPoint;
  const Points kAllFour = {P::kPreFilter, P::kFilter, P::kPreScore, P::kScore};
  static const auto* const kPoints =
      new std::map<std::string, Points, std::less<>>{
          {"Concentrate", {P::kFilter, P::kPreScore, P::kScore}},
          {"DefaultPreemption", {P::kPostFilter}},
          {"ImageLocality", {P::kScore}},
          {"InterPodAffinity", kAllFour},
          {"NodeAffinity", kAllFour},
          {"NodeDeclaredFeatures", {P::kPreFilter, P::kFilter}},
          {"NodeName", {P::kPreFilter, P::kFilter}},
          {"NodePorts", {P::kPreFilter, P::kFilter}},
          {"NodeResourcesBalancedAllocation", {P::kPreScore, P::kScore}},
          {"NodeResourcesFit", kAllFour},
          {"NodeUnschedulable", {P::kFilter}},
          {"NodeVolumeLimits", {P::kPreFilter, P::kFilter}},
          {"PodTopologySpread", kAllFour},
          {"TaintToleration", {P::kFilter, P::kPreScore, P::kScore}},
          {"VolumeBinding", kAllFour},
          {"VolumeRestrictions", {P::kPreFilter, P::kFilter}},
          {"VolumeZone", {P::kPreFilter, P::kFilter}},
      };
  return *kPoints;
}

const PointNotRun* FindPointNotRun(ExtensionPoint p) {
  for (const PointNotRun& np : kPointsNotRun) {
    if (np.point == p) return &np;
  }
  return nullptr;
}

// One run point's set: in-tree plugins only, as other names are the
// scorer's to know.
absl::Status CheckAtRunPoint(ExtensionPoint point, const PluginSet& set) {
  absl::flat_hash_set<std::string> seen;
  for (const PluginRef& ref : set.enabled) {
    if (!IsInTreePluginRun(ref.name)) continue;
    if (!InTreePluginExtends(ref.name, point)) {
      return PluginDoesNotExtend(ref, point);
    }
    if (!seen.insert(ref.name).second) {
      return PluginAlreadyRegistered(ref, point);
    }
  }
  return absl::OkStatus();
}

absl::Status CheckProfilePoints(const ProfileConfig& profile) {
  for (int i = 0; i < static_cast<int>(ExtensionPoint::kCount); ++i) {
    const auto point = static_cast<ExtensionPoint>(i);
    if (point == ExtensionPoint::kMultiPoint) continue;
    if (const PointNotRun* np = FindPointNotRun(point); np != nullptr) {
      for (const PluginRef& ref : profile.at(point).enabled) {
        KSCORE_RETURN_IF_ERROR(
            CheckEnabledAtPointNotRun(*np, ref, IsInTreePluginRun(ref.name)));
      }
      continue;
    }
    KSCORE_RETURN_IF_ERROR(CheckAtRunPoint(point, profile.at(point)));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Span<const ExtensionPoint> RunPoints() { return kRunPoints; }

absl::Span<const PointNotRun> PointsNotRun() { return kPointsNotRun; }

std::string PluginTypeName(ExtensionPoint p) {
  std::string name(ExtensionPointName(p));
  name[0] = absl::ascii_toupper(name[0]);
  return absl::StrCat(name, "Plugin");
}

bool InTreePluginExtends(absl::string_view name, ExtensionPoint point) {
  auto it = InTreePoints().find(name);
  return it != InTreePoints().end() &&
         std::find(it->second.begin(), it->second.end(), point) !=
             it->second.end();
}

absl::Status PluginDoesNotExtend(const PluginRef& ref, ExtensionPoint point) {
  return absl::InvalidArgumentError(
      absl::StrCat(ref.path, ".name: plugin \"", ref.name,
                   "\" does not extend ", ExtensionPointName(point)));
}

absl::Status PluginAlreadyRegistered(const PluginRef& ref,
                                     ExtensionPoint point) {
  return absl::InvalidArgumentError(
      absl::StrCat(ref.path, ".name: plugin \"", ref.name,
                   "\" already registered as ", ExtensionPointName(point)));
}

absl::Status CheckEnabledAtPointNotRun(const PointNotRun& np,
                                       const PluginRef& ref, bool has_code) {
  if (ref.name == np.done_by_shim) return absl::OkStatus();
  if (has_code) {
    return absl::InvalidArgumentError(absl::StrCat(
        ref.path, ".name: plugin \"", ref.name, "\" does not extend ",
        ExtensionPointName(np.point), " (", np.why, ")"));
  }
  return absl::InvalidArgumentError(
      absl::StrCat(ref.path, ".name: ", PluginTypeName(np.point), " \"",
                   ref.name, "\" does not exist (", np.why, ")"));
}

absl::Status CheckEnabledPoints(const SchedulerConfig& config) {
  for (const ProfileConfig& profile : config.profiles) {
    KSCORE_RETURN_IF_ERROR(CheckProfilePoints(profile));
  }
  return absl::OkStatus();
}

}  // namespace kscore::model
