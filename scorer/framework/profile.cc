#include "scorer/framework/profile.h"

#include <algorithm>
#include <array>
#include <chrono>

#include "absl/container/btree_set.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "common/status_macros.h"
#include "model/plugin_args/in_tree.h"
#include "model/plugin_points.h"
#include "model/saturating.h"

namespace kscore::framework {
namespace {

// PreFilter plugins that returned Skip: their Filter does not run this cycle.
// Kept in CycleState so a Filter call on another replica honours it.
constexpr absl::string_view kSkipFilterKey = "kscore.SkipFilter";
constexpr absl::string_view kPreFilterResultKey = "kscore.PreFilterResult";

// The merged PreFilterResult: the plugins that narrowed the nodes and the
// nodes all of them allow. Encoded as "A,B" then "\n<node>" per node (node
// names hold neither commas nor newlines).
struct PreFilterNodes {
  std::vector<std::string> plugins;  // sorted
  absl::flat_hash_set<std::string> names;
  std::string Encode() const {
    std::string out = absl::StrJoin(plugins, ",");
    for (const std::string& n : names) absl::StrAppend(&out, "\n", n);
    return out;
  }
  static absl::StatusOr<PreFilterNodes> Decode(absl::string_view bytes) {
    PreFilterNodes r;
    std::vector<absl::string_view> parts = absl::StrSplit(bytes, '\n');
    for (absl::string_view p : absl::StrSplit(parts[0], ',', absl::SkipEmpty()))
      r.plugins.emplace_back(p);
    if (r.plugins.empty()) {
      return absl::InvalidArgumentError("no plugin named");
    }
    for (size_t i = 1; i < parts.size(); ++i) r.names.emplace(parts[i]);
    return r;
  }
  // kube-scheduler's status for the nodes left out.
  std::string Reason() const {
    return absl::StrCat("node(s) didn't satisfy plugin(s) [",
                        absl::StrJoin(plugins, " "), "]");
  }
};

struct SkipSet {
  std::vector<std::string> names;
  std::string Encode() const { return absl::StrJoin(names, ","); }
  static absl::StatusOr<SkipSet> Decode(absl::string_view bytes) {
    SkipSet s;
    for (absl::string_view n : absl::StrSplit(bytes, ',', absl::SkipEmpty())) {
      s.names.emplace_back(n);
    }
    return s;
  }
  bool Has(absl::string_view n) const {
    return std::find(names.begin(), names.end(), n) != names.end();
  }
};

template <typename T>
bool Implements(const Plugin* p) {
  return dynamic_cast<const T*>(p) != nullptr;
}

bool ImplementsPoint(const Plugin* p, model::ExtensionPoint point) {
  switch (point) {
    case model::ExtensionPoint::kPreFilter:
      return Implements<PreFilterPlugin>(p);
    case model::ExtensionPoint::kFilter:
      return Implements<FilterPlugin>(p);
    case model::ExtensionPoint::kPreScore:
      return Implements<PreScorePlugin>(p);
    case model::ExtensionPoint::kScore:
      return Implements<ScorePlugin>(p);
    case model::ExtensionPoint::kPostFilter:
      return Implements<PostFilterPlugin>(p);
    default:
      return false;
  }
}

// Args of a plugin the scorer does not run: checked as the shim checks them
// at start (model/plugin_args).
using model::CheckArgsOfPluginNotRun;

absl::Status PluginError(const PluginStatus& s, absl::string_view plugin) {
  return absl::InvalidArgumentError(absl::StrCat(
      "plugin \"", plugin,
      "\": ", s.reasons.empty() ? "error" : absl::StrJoin(s.reasons, "; ")));
}

// Narrows `result` to the nodes `p`'s PreFilterResult allows; the status
// when none is left.
std::optional<PluginStatus> MergePreFilterNodes(
    const PreFilterPlugin& p, const CycleState& state, const pb::Pod& pod,
    std::optional<PreFilterNodes>& result) {
  std::optional<std::vector<std::string>> names =
      p.PreFilterNodeNames(state, pod);
  if (!names.has_value()) return std::nullopt;
  absl::flat_hash_set<std::string> allowed(names->begin(), names->end());
  if (!result.has_value()) {
    result.emplace();
    result->names = std::move(allowed);
  } else {
    absl::erase_if(result->names, [&allowed](const std::string& n) {
      return !allowed.contains(n);
    });
  }
  result->plugins.emplace_back(p.Name());
  std::sort(result->plugins.begin(), result->plugins.end());
  if (!result->names.empty()) return std::nullopt;
  // As kube-scheduler: no node is left that every plugin allows. The status
  // names no plugin (upstream's names none either): the plugins are in the
  // reason.
  PluginStatus s = PluginStatus::UnschedulableAndUnresolvable(
      result->plugins.size() == 1
          ? absl::StrCat("node(s) didn't satisfy plugin ", result->plugins[0])
          : absl::StrCat("node(s) didn't satisfy plugin(s) [",
                         absl::StrJoin(result->plugins, " "),
                         "] simultaneously"));
  return s;
}

// The outcome of a point for the metrics: an absl error is the plugin's
// Error, as kube-scheduler's framework turns it into one.
Code CodeOf(const absl::Status& s) {
  return s.ok() ? Code::kSuccess : Code::kError;
}
template <typename T>
Code CodeOf(const absl::StatusOr<T>& r) {
  return CodeOf(r.status());
}
Code CodeOf(const absl::StatusOr<PluginStatus>& r) {
  return r.ok() ? r->code : Code::kError;
}
Code CodeOf(const absl::StatusOr<PostFilterResult>& r) {
  return r.ok() ? r->status.code : Code::kError;
}

// Runs `run` and, with an observer, tells it how long the point took. A
// monotonic clock: wall-clock steps must not make negative durations.
template <typename Run>
auto Timed(ExtensionPointObserver* observer, model::ExtensionPoint point,
           const std::string& profile, Run&& run) {
  if (observer == nullptr) return run();
  const auto start = std::chrono::steady_clock::now();
  auto result = run();
  observer->OnExtensionPoint(
      point, CodeOf(result), profile,
      absl::FromChrono(std::chrono::steady_clock::now() - start));
  return result;
}

void Warn(std::vector<std::string>* warnings, std::string w) {
  if (warnings != nullptr) warnings->push_back(std::move(w));
}

// Whether `set` disables `name` itself ("*" is not looked at).
bool DisablesByName(const model::PluginSet& set, absl::string_view name) {
  return std::any_of(
      set.disabled.begin(), set.disabled.end(),
      [name](const model::PluginRef& d) { return d.name == name; });
}

// Each point's plugin set merged with kube-scheduler's defaults: only
// multiPoint has defaults.
class MergedPluginSets {
 public:
  explicit MergedPluginSets(const model::ProfileConfig& config) {
    for (int i = 0; i < static_cast<int>(model::ExtensionPoint::kCount); ++i) {
      sets_[i] = model::MergePluginSet(
          i == static_cast<int>(model::ExtensionPoint::kMultiPoint)
              ? model::DefaultMultiPointPlugins()
              : std::vector<model::PluginRef>{},
          config.plugins[i]);
    }
  }
  const model::PluginSet& At(model::ExtensionPoint point) const {
    return sets_[static_cast<int>(point)];
  }
  const model::PluginSet& multi_point() const {
    return At(model::ExtensionPoint::kMultiPoint);
  }

 private:
  model::PluginSet sets_[static_cast<int>(model::ExtensionPoint::kCount)];
};

// Every plugin named anywhere, instantiated once with its pluginConfig args
// (upstream's pluginsMap), owned here until the profile takes them.
class PluginInstances {
 public:
  PluginInstances(const model::ProfileConfig& config, const Registry& registry,
                  std::vector<std::string>* warnings)
      : config_(config), registry_(registry), warnings_(warnings) {
    for (const model::PluginConfigEntry& e : config.plugin_config) {
      args_by_name_[e.name] = &e;
    }
  }

  // The plugin `ref` names, made on first use; nullptr when the registry
  // has no code for it.
  absl::StatusOr<Plugin*> Instantiate(const model::PluginRef& ref) {
    if (auto it = instances_.find(ref.name); it != instances_.end()) {
      return it->second;
    }
    const PluginFactory* factory = registry_.Find(ref.name);
    if (factory == nullptr) return nullptr;
    model::YamlField args(YAML::Node(YAML::NodeType::Undefined),
                          absl::StrCat(config_.path, ".pluginConfig[?].args"));
    if (auto it = args_by_name_.find(ref.name); it != args_by_name_.end()) {
      args = model::YamlField(it->second->args, it->second->path);
    }
    KSCORE_ASSIGN_OR_RETURN(std::unique_ptr<Plugin> p, (*factory)(args));
    Plugin* raw = p.get();
    owned_.push_back(std::move(p));
    instances_[ref.name] = raw;
    return raw;
  }

  // Resolves a plugin name: nullptr for kube-scheduler plugins kscore does
  // not run (noted once), an error naming the field for unknown ones.
  absl::StatusOr<Plugin*> Resolve(const model::PluginRef& ref) {
    absl::StatusOr<Plugin*> p = Instantiate(ref);
    if (!p.ok() || *p != nullptr) return p;
    if (registry_.Find(ref.name) == nullptr && !registry_.IsKnown(ref.name)) {
      return absl::InvalidArgumentError(
          absl::StrCat(ref.path, ".name: unknown plugin \"", ref.name, "\""));
    }
    if (ref.path != "default plugins" && warned_.insert(ref.name).second) {
      Warn(warnings_,
           absl::StrCat(config_.path, ": plugin ", ref.name,
                        " is not run by kscore (not supported yet, or done by "
                        "the shim); ignored"));
    }
    return nullptr;
  }

  // The plugins made, in the order they were made.
  std::vector<std::unique_ptr<Plugin>> TakeOwned() { return std::move(owned_); }

 private:
  const model::ProfileConfig& config_;
  const Registry& registry_;
  std::vector<std::string>* warnings_;
  absl::flat_hash_map<std::string, const model::PluginConfigEntry*>
      args_by_name_;
  absl::flat_hash_map<std::string, Plugin*> instances_;
  absl::flat_hash_set<std::string> warned_;
  std::vector<std::unique_ptr<Plugin>> owned_;
};

// Every pluginConfig entry is validated, even for a plugin the profile does
// not enable, so a typo never waits for the day it is enabled.
absl::Status ValidatePluginConfig(const model::ProfileConfig& config,
                                  const Registry& registry,
                                  PluginInstances& instances) {
  for (const model::PluginConfigEntry& e : config.plugin_config) {
    if (registry.Find(e.name) == nullptr) {
      if (!registry.IsKnown(e.name)) {
        return absl::InvalidArgumentError(absl::StrCat(
            e.path.substr(0, e.path.size() - absl::string_view(".args").size()),
            ".name: unknown plugin \"", e.name, "\""));
      }
      KSCORE_RETURN_IF_ERROR(
          CheckArgsOfPluginNotRun(e, registry.DefaultArgs(e.name)));
      continue;
    }
    KSCORE_RETURN_IF_ERROR(
        instances.Instantiate(model::PluginRef{e.name, {}, e.path}).status());
  }
  return absl::OkStatus();
}

// One point the scorer does not run: only the plugin whose job the shim
// does is accepted. Disabling that plugin changes nothing (the shim does the
// job all the same), which a warning says.
absl::Status CheckPointNotRun(const model::PointNotRun& np,
                              const MergedPluginSets& merged,
                              const Registry& registry,
                              const std::string& profile_path,
                              std::vector<std::string>* warnings) {
  const model::PluginSet& set = merged.At(np.point);
  bool shim_plugin_enabled = false;
  for (const model::PluginRef& ref : set.enabled) {
    KSCORE_RETURN_IF_ERROR(model::CheckEnabledAtPointNotRun(
        np, ref, registry.Find(ref.name) != nullptr));
    shim_plugin_enabled = shim_plugin_enabled || ref.name == np.done_by_shim;
  }
  if (np.done_by_shim.empty() || shim_plugin_enabled) return absl::OkStatus();
  const bool disabled_here = std::any_of(
      set.disabled.begin(), set.disabled.end(), [&](const model::PluginRef& d) {
        return d.name == "*" || d.name == np.done_by_shim;
      });
  const model::PluginSet& multi = merged.multi_point();
  const bool from_multi = std::any_of(
      multi.enabled.begin(), multi.enabled.end(),
      [&](const model::PluginRef& r) { return r.name == np.done_by_shim; });
  if (disabled_here || !from_multi) {
    Warn(warnings,
         absl::StrCat(
             profile_path, ".plugins.", model::ExtensionPointName(np.point),
             ": ", np.done_by_shim,
             " is not enabled, but kscore works as if it were: ", np.why));
  }
  return absl::OkStatus();
}

using Gates = std::vector<std::pair<std::string, PodGate>>;

// A known plugin without code, enabled where it would filter: its gate
// refuses the pods that need it.
void NoteGate(const Registry& registry, const std::string& name,
              model::ExtensionPoint point, Gates& gates) {
  if (point != model::ExtensionPoint::kPreFilter &&
      point != model::ExtensionPoint::kFilter)
    return;
  const PodGate* gate = registry.Gate(name);
  if (gate == nullptr) return;
  for (const auto& [n, _] : gates) {
    if (n == name) return;
  }
  gates.emplace_back(name, *gate);
}

// The plugins a point enables by name, in the order named.
struct EnabledAtPoint {
  std::vector<std::string> names;
  absl::flat_hash_map<std::string, Plugin*> plugins;
};

absl::StatusOr<EnabledAtPoint> EnabledPlugins(model::ExtensionPoint point,
                                              const model::PluginSet& set,
                                              PluginInstances& instances,
                                              const Registry& registry,
                                              Gates& gates) {
  EnabledAtPoint out;
  for (const model::PluginRef& ref : set.enabled) {
    KSCORE_ASSIGN_OR_RETURN(Plugin * p, instances.Resolve(ref));
    if (p == nullptr) {
      NoteGate(registry, ref.name, point, gates);
      continue;
    }
    if (!ImplementsPoint(p, point)) {
      return model::PluginDoesNotExtend(ref, point);
    }
    if (out.plugins.contains(ref.name))
      return model::PluginAlreadyRegistered(ref, point);
    out.plugins[ref.name] = p;
    out.names.push_back(ref.name);
  }
  return out;
}

// The multiPoint plugins a point gets: those it does not name itself
// (`plugins`), and the names of those it does (`overridden`).
struct FromMultiPoint {
  std::vector<Plugin*> plugins;
  absl::flat_hash_set<std::string> overridden;
};

absl::StatusOr<FromMultiPoint> MultiPointPlugins(
    model::ExtensionPoint point, const model::PluginSet& set,
    const model::PluginSet& multi, const EnabledAtPoint& enabled,
    PluginInstances& instances, const Registry& registry, Gates& gates) {
  FromMultiPoint out;
  absl::flat_hash_set<std::string> disabled;
  for (const model::PluginRef& d : set.disabled) disabled.insert(d.name);
  if (disabled.contains("*")) return out;
  absl::flat_hash_set<std::string> seen;
  for (const model::PluginRef& ref : multi.enabled) {
    KSCORE_ASSIGN_OR_RETURN(Plugin * p, instances.Resolve(ref));
    if (disabled.contains(ref.name)) continue;
    if (p == nullptr) {
      if (!enabled.plugins.contains(ref.name)) {
        NoteGate(registry, ref.name, point, gates);
      }
      continue;
    }
    if (!ImplementsPoint(p, point)) continue;
    if (enabled.plugins.contains(ref.name)) {
      out.overridden.insert(ref.name);
      continue;
    }
    if (!seen.insert(ref.name).second)
      return model::PluginAlreadyRegistered(ref, point);
    out.plugins.push_back(p);
  }
  return out;
}

// kube-scheduler's expandMultiPointPlugins for one point: the point's own
// plugins that override a multiPoint one, then multiPoint's, then the rest
// of the point's own.
absl::StatusOr<std::vector<Plugin*>> ExpandPoint(model::ExtensionPoint point,
                                                 const MergedPluginSets& merged,
                                                 PluginInstances& instances,
                                                 const Registry& registry,
                                                 Gates& gates) {
  const model::PluginSet& set = merged.At(point);
  KSCORE_ASSIGN_OR_RETURN(
      EnabledAtPoint enabled,
      EnabledPlugins(point, set, instances, registry, gates));
  KSCORE_ASSIGN_OR_RETURN(
      FromMultiPoint multi,
      MultiPointPlugins(point, set, merged.multi_point(), enabled, instances,
                        registry, gates));
  std::vector<Plugin*> overrides, rest;
  for (const std::string& n : enabled.names) {
    (multi.overridden.contains(n) ? overrides : rest)
        .push_back(enabled.plugins[n]);
  }
  std::vector<Plugin*> out = std::move(overrides);
  out.insert(out.end(), multi.plugins.begin(), multi.plugins.end());
  out.insert(out.end(), rest.begin(), rest.end());
  return out;
}

using ScoreWeights = absl::flat_hash_map<std::string, int32_t>;

// kube-scheduler's getValidScoreWeights: a score plugin's weight where it is
// first enabled, the Score point before multiPoint; 0 or unset means 1.
absl::StatusOr<ScoreWeights> GetValidScoreWeights(
    const MergedPluginSets& merged, PluginInstances& instances) {
  ScoreWeights weights;
  auto note = [&](const std::vector<model::PluginRef>& refs) -> absl::Status {
    for (const model::PluginRef& ref : refs) {
      KSCORE_ASSIGN_OR_RETURN(Plugin * p, instances.Resolve(ref));
      if (p == nullptr || !Implements<ScorePlugin>(p) ||
          weights.contains(ref.name)) {
        continue;
      }
      weights[ref.name] = ref.weight.value_or(0) == 0 ? 1 : *ref.weight;
    }
    return absl::OkStatus();
  };
  KSCORE_RETURN_IF_ERROR(
      note(merged.At(model::ExtensionPoint::kScore).enabled));
  KSCORE_RETURN_IF_ERROR(note(merged.multi_point().enabled));
  return weights;
}

// Adds to `to` each plugin of `from` that implements `to_point`, unless it
// is there already or `to_set` disables it by name.
void AddCompanions(const std::vector<Plugin*>& from, std::vector<Plugin*>& to,
                   model::ExtensionPoint to_point,
                   const model::PluginSet& to_set) {
  for (Plugin* p : from) {
    if (!ImplementsPoint(p, to_point)) continue;
    if (std::find(to.begin(), to.end(), p) != to.end()) continue;
    if (!DisablesByName(to_set, p->Name())) to.push_back(p);
  }
}

}  // namespace

// The plugins run at each point the scorer runs, in run order: upstream's
// per-extension-point lists of frameworkImpl.
struct PointPlugins {
  std::vector<Plugin*> pre_filter;
  std::vector<Plugin*> filter;
  std::vector<Plugin*> pre_score;
  std::vector<Plugin*> score;
  std::vector<Plugin*> post_filter;  // run only by Preempt calls

  std::vector<Plugin*>& At(model::ExtensionPoint point) {
    switch (point) {
      case model::ExtensionPoint::kPreFilter:
        return pre_filter;
      case model::ExtensionPoint::kFilter:
        return filter;
      case model::ExtensionPoint::kPreScore:
        return pre_score;
      case model::ExtensionPoint::kScore:
        return score;
      default:
        return post_filter;
    }
  }
  // Every list, in run order.
  std::array<const std::vector<Plugin*>*, 5> All() const {
    return {&pre_filter, &filter, &pre_score, &score, &post_filter};
  }
};

namespace {

// kube-scheduler's expandMultiPointPlugins, for the points the scorer runs.
absl::StatusOr<PointPlugins> ExpandMultiPointPlugins(
    const MergedPluginSets& merged, PluginInstances& instances,
    const Registry& registry, Gates& gates) {
  PointPlugins out;
  for (model::ExtensionPoint point : model::RunPoints()) {
    KSCORE_ASSIGN_OR_RETURN(
        out.At(point), ExpandPoint(point, merged, instances, registry, gates));
  }
  return out;
}

// Companion points: a plugin that filters gets its PreFilter and one that
// scores gets its PreScore, unless explicitly disabled there, so its state
// is in CycleState when Filter/Score read it (kube-scheduler would run Score
// without PreScore when a plugin is only enabled at score). Before that,
// plugins whose args make them filter join Filter wherever they are enabled.
void AddCompanionPoints(const MergedPluginSets& merged, PointPlugins& lists) {
  const model::PluginSet& filter_set =
      merged.At(model::ExtensionPoint::kFilter);
  for (const std::vector<Plugin*>* list :
       {&lists.pre_filter, &lists.pre_score, &lists.score}) {
    for (Plugin* p : *list) {
      if (!p->FiltersWheneverEnabled() || !Implements<FilterPlugin>(p))
        continue;
      if (std::find(lists.filter.begin(), lists.filter.end(), p) !=
          lists.filter.end())
        continue;
      if (!DisablesByName(filter_set, p->Name())) lists.filter.push_back(p);
    }
  }
  AddCompanions(lists.filter, lists.pre_filter,
                model::ExtensionPoint::kPreFilter,
                merged.At(model::ExtensionPoint::kPreFilter));
  AddCompanions(lists.score, lists.pre_score, model::ExtensionPoint::kPreScore,
                merged.At(model::ExtensionPoint::kPreScore));
}

template <typename T>
std::vector<const T*> As(const std::vector<Plugin*>& list) {
  std::vector<const T*> out;
  out.reserve(list.size());
  for (Plugin* p : list) out.push_back(dynamic_cast<const T*>(p));
  return out;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Profile>> Profile::Create(
    const model::ProfileConfig& config, const model::SchedulerConfig& global,
    const Registry& registry, std::vector<std::string>* warnings) {
  std::unique_ptr<Profile> prof(new Profile());
  prof->scheduler_name_ = config.scheduler_name;
  prof->percentage_ = config.percentage_of_nodes_to_score.value_or(
      global.percentage_of_nodes_to_score);
  const MergedPluginSets merged(config);
  PluginInstances instances(config, registry, warnings);
  KSCORE_RETURN_IF_ERROR(ValidatePluginConfig(config, registry, instances));
  for (const model::PointNotRun& np : model::PointsNotRun()) {
    KSCORE_RETURN_IF_ERROR(
        CheckPointNotRun(np, merged, registry, config.path, warnings));
  }
  KSCORE_ASSIGN_OR_RETURN(
      PointPlugins plugins,
      ExpandMultiPointPlugins(merged, instances, registry, prof->gates_));
  KSCORE_ASSIGN_OR_RETURN(ScoreWeights weights,
                          GetValidScoreWeights(merged, instances));
  AddCompanionPoints(merged, plugins);
  prof->owned_ = instances.TakeOwned();
  prof->pre_filter_ = As<PreFilterPlugin>(plugins.pre_filter);
  prof->filter_ = As<FilterPlugin>(plugins.filter);
  prof->pre_score_ = As<PreScorePlugin>(plugins.pre_score);
  prof->score_ = As<ScorePlugin>(plugins.score);
  for (const Plugin* p : plugins.score) {
    prof->score_weights_.push_back(weights[std::string(p->Name())]);
  }
  prof->post_filter_ = As<PostFilterPlugin>(plugins.post_filter);
  for (Plugin* p : plugins.filter) {
    if (const auto* d = dynamic_cast<const VolumeDecisionPlugin*>(p)) {
      prof->volume_deciders_.push_back(d);
    }
  }
  prof->FillPlanners(plugins);
  prof->FillEventToPluginMap(plugins);
  prof->FillLabelCountKeys(plugins);
  return prof;
}

int64_t Profile::volume_bind_timeout_seconds() const {
  int64_t t = 0;
  for (const VolumeDecisionPlugin* d : volume_deciders_)
    t = std::max(t, d->BindTimeoutSeconds());
  return t;
}

void Profile::FillPlanners(const PointPlugins& plugins) {
  for (const std::vector<Plugin*>* list : plugins.All()) {
    for (const Plugin* p : *list) {
      node_labels_ = std::max(node_labels_, p->NodeLabels());
      if (std::find(planners_.begin(), planners_.end(), p) != planners_.end()) {
        continue;
      }
      planners_.push_back(p);
      plans_ = plans_ || p->Plans();
      batches_ = batches_ && p->Batchable();
      for (pb::PodData d : p->PodDataNeeded()) {
        if (std::find(pod_data_.begin(), pod_data_.end(), d) ==
            pod_data_.end()) {
          pod_data_.push_back(d);
        }
      }
    }
  }
  std::sort(pod_data_.begin(), pod_data_.end());
}

// kube-scheduler's fillEventToPluginMap: the hinted registrations of the
// plugins that can reject a pod (PreFilter and Filter).
void Profile::FillEventToPluginMap(const PointPlugins& plugins) {
  for (const std::vector<Plugin*>* list :
       {&plugins.pre_filter, &plugins.filter}) {
    for (const Plugin* p : *list) {
      Hinter& h = hinters_[p->Name()];
      if (h.plugin != nullptr) continue;
      h.plugin = p;
      for (pb::ClusterEvent& e : p->EventsToRegister()) {
        if (e.hinted()) h.hinted.push_back(std::move(e));
      }
    }
  }
}

void Profile::FillLabelCountKeys(const PointPlugins& plugins) {
  for (const Plugin* p : plugins.score) {
    for (std::string& key : p->LabelCountKeys()) {
      if (std::find(label_count_keys_.begin(), label_count_keys_.end(), key) ==
          label_count_keys_.end()) {
        label_count_keys_.push_back(std::move(key));
      }
    }
  }
}

bool Profile::NeedsNodeLabels(const pb::Pod& pod) const {
  switch (node_labels_) {
    case NodeLabelUse::kNever:
      return false;
    case NodeLabelUse::kAlways:
      return true;
    case NodeLabelUse::kWhenPodSelects:
      return !pod.node_selector().empty() ||
             pod.node_affinity().has_required() ||
             pod.node_affinity().required_size() > 0 ||
             pod.node_affinity().preferred_size() > 0;
  }
  return true;
}

std::vector<Profile::PluginInfo> Profile::Describe() const {
  std::vector<PluginInfo> out;
  auto entry = [&](const Plugin* p) -> PluginInfo& {
    for (PluginInfo& i : out) {
      if (i.name == p->Name()) return i;
    }
    out.push_back(PluginInfo{std::string(p->Name()), 0, {}, {}});
    return out.back();
  };
  auto rejects = [&](const Plugin* p, const char* point) {
    PluginInfo& info = entry(p);
    if (info.extension_points.empty()) info.events = p->EventsToRegister();
    info.extension_points.push_back(point);
  };
  for (const auto* p : pre_filter_) rejects(p, "PreFilter");
  for (const auto* p : filter_) rejects(p, "Filter");
  for (const auto* p : pre_score_)
    entry(p).extension_points.push_back("PreScore");
  for (size_t i = 0; i < score_.size(); ++i) {
    PluginInfo& info = entry(score_[i]);
    info.extension_points.push_back("Score");
    info.weight = score_weights_[i];
  }
  // The shim calls Preempt for a profile that has one.
  for (const auto* p : post_filter_)
    entry(p).extension_points.push_back("PostFilter");
  return out;
}

absl::StatusOr<bool> Profile::QueueingHint(
    const pb::Pod& pod, absl::Span<const std::string> plugins,
    const model::EventObjects& e) const {
  if (plugins.empty()) {
    return absl::InvalidArgumentError(
        "plugins is empty: name the plugins that rejected the pod");
  }
  for (const std::string& name : plugins) {
    auto it = hinters_.find(name);
    if (it == hinters_.end()) return true;
    const Hinter& h = it->second;
    const bool hinted = std::any_of(
        h.hinted.begin(), h.hinted.end(), [&e](const pb::ClusterEvent& r) {
          return model::MatchClusterEvents(r, e.event);
        });
    if (!hinted || h.plugin->Hint(pod, e) == model::QueueingHint::kQueue) {
      return true;
    }
  }
  return false;
}

std::vector<std::string> Profile::GateNames() const {
  std::vector<std::string> out;
  for (const auto& [name, _] : gates_) out.push_back(name);
  return out;
}

absl::StatusOr<PluginStatus> Profile::PreFilterUntimed(
    CycleState& state, const pb::Pod& pod,
    std::vector<std::string>* unschedulable_plugins) const {
  for (const auto& [name, gate] : gates_) {
    if (std::string why = gate(pod); !why.empty()) {
      PluginStatus s = PluginStatus::UnschedulableAndUnresolvable(why);
      s.plugin = name;
      if (unschedulable_plugins != nullptr) {
        unschedulable_plugins->assign(1, s.plugin);
      }
      return s;
    }
  }
  SkipSet skip;
  std::optional<PreFilterNodes> result;
  for (const PreFilterPlugin* p : pre_filter_) {
    PluginStatus s = p->PreFilter(state, pod);
    if (s.code == Code::kError) return PluginError(s, p->Name());
    if (s.code == Code::kSkip) {
      skip.names.emplace_back(p->Name());
      continue;
    }
    if (!s.ok()) {
      s.plugin = std::string(p->Name());
      if (unschedulable_plugins != nullptr) {
        unschedulable_plugins->assign(1, s.plugin);
      }
      return s;
    }
    if (std::optional<PluginStatus> none =
            MergePreFilterNodes(*p, state, pod, result)) {
      if (unschedulable_plugins != nullptr) {
        *unschedulable_plugins = result->plugins;  // the pod's rejectors
      }
      return *none;
    }
  }
  state.Write(kSkipFilterKey, std::move(skip));
  if (result.has_value()) {
    if (unschedulable_plugins != nullptr) {
      *unschedulable_plugins = result->plugins;
    }
    state.Write(kPreFilterResultKey, *std::move(result));
  }
  return PluginStatus::Success();
}

absl::StatusOr<std::vector<PluginStatus>> Profile::FilterUntimed(
    const CycleState& state, const pb::Pod& pod,
    absl::Span<const pb::Node* const> nodes) const {
  // Filters whose PreFilter skipped them are left out for the whole batch.
  std::vector<const FilterPlugin*> active;
  active.reserve(filter_.size());
  if (!pre_filter_.empty()) {
    absl::StatusOr<const SkipSet*> skip = state.Read<SkipSet>(kSkipFilterKey);
    if (!skip.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(skip.status().message(),
                       " (run PreFilter first and pass its cycle_state)"));
    }
    for (const FilterPlugin* f : filter_) {
      if (!(*skip)->Has(f->Name())) active.push_back(f);
    }
  } else {
    active = filter_;
  }
  // Nodes outside the PreFilterResult are not filtered: kube-scheduler
  // reports them all alike, whatever other filters would say.
  const PreFilterNodes* allowed = nullptr;
  if (absl::StatusOr<const PreFilterNodes*> r =
          state.Read<PreFilterNodes>(kPreFilterResultKey);
      r.ok()) {
    allowed = *r;
  } else if (!absl::IsNotFound(r.status())) {
    return r.status();
  }
  std::vector<PluginStatus> out(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (allowed != nullptr && !allowed->names.contains(nodes[i]->name())) {
      out[i] = PluginStatus::UnschedulableAndUnresolvable(allowed->Reason());
      continue;
    }
    for (const FilterPlugin* f : active) {
      PluginStatus s = f->Filter(state, pod, *nodes[i]);
      if (s.ok()) continue;
      if (s.code == Code::kError) return PluginError(s, f->Name());
      s.plugin = std::string(f->Name());
      out[i] = std::move(s);
      break;
    }
  }
  return out;
}

absl::StatusOr<std::vector<std::string>> Profile::PreScoreUntimed(
    CycleState& state, const pb::Pod& pod,
    absl::Span<const pb::Node* const> nodes) const {
  std::vector<std::string> skipped;
  for (const PreScorePlugin* p : pre_score_) {
    PluginStatus s = p->PreScore(state, pod, nodes);
    if (s.code == Code::kSkip) {
      skipped.emplace_back(p->Name());
    } else if (!s.ok()) {
      return PluginError(s, p->Name());
    }
  }
  return skipped;
}

absl::StatusOr<ScoreTable> Profile::ScoreUntimed(
    const CycleState& state, const pb::Pod& pod,
    absl::Span<const pb::Node* const> nodes,
    absl::Span<const std::string> skipped) const {
  ScoreTable t;
  t.nodes.reserve(nodes.size());
  for (const pb::Node* n : nodes) t.nodes.emplace_back(n->name());
  for (size_t i = 0; i < score_.size(); ++i) {
    const ScorePlugin* p = score_[i];
    if (std::find(skipped.begin(), skipped.end(), p->Name()) != skipped.end()) {
      continue;
    }
    t.plugins.push_back(p);
    t.weights.push_back(score_weights_[i]);
    std::vector<int64_t>& raw = t.raw.emplace_back(nodes.size(), 0);
    PluginStatus s = p->Score(state, pod, nodes, absl::MakeSpan(raw));
    if (!s.ok()) return PluginError(s, p->Name());
  }
  return t;
}

absl::Status Profile::NormalizeScoreUntimed(const CycleState& state,
                                            const pb::Pod& pod,
                                            ScoreTable& t) const {
  // Every node gets a total, with no plugin too (then 0).
  size_t n = t.raw.empty() ? t.nodes.size() : t.raw.front().size();
  t.normalized = t.raw;
  t.total.assign(n, 0);
  for (size_t k = 0; k < t.plugins.size(); ++k) {
    const ScorePlugin* p = t.plugins[k];
    std::vector<int64_t>& scores = t.normalized[k];
    PluginStatus s =
        p->NormalizeScoreByNode(state, pod, t.nodes, absl::MakeSpan(scores));
    if (!s.ok()) return PluginError(s, p->Name());
    for (size_t i = 0; i < n; ++i) {
      if (scores[i] > kMaxNodeScore || scores[i] < kMinNodeScore) {
        return absl::InternalError(absl::StrCat(
            "plugin \"", p->Name(), "\" returns an invalid score ", scores[i],
            ", it should in the range of [", kMinNodeScore, ", ", kMaxNodeScore,
            "] after normalizing"));
      }
      // Saturating: kube-scheduler's weights are int32 and the total an
      // int64 that must not wrap around to a low total.
      t.total[i] =
          model::SatAdd(t.total[i], model::SatMul(scores[i], t.weights[k]));
    }
  }
  return absl::OkStatus();
}

namespace {
pb::PlanResponse BuildPlan(absl::Span<const Plugin* const> planners,
                           const pb::Pod& pod,
                           absl::flat_hash_map<std::string, int>* bases) {
  pb::PlanResponse plan;
  for (const Plugin* p : planners) {
    const int before = plan.queries_size();
    p->AddToPlan(pod, plan);
    if (bases != nullptr && plan.queries_size() > before) {
      (*bases)[std::string(p->Name())] = before;
    }
  }
  // Each kind once, in enum order.
  std::vector<int> kinds(plan.existing_terms().begin(),
                         plan.existing_terms().end());
  std::sort(kinds.begin(), kinds.end());
  kinds.erase(std::unique(kinds.begin(), kinds.end()), kinds.end());
  plan.clear_existing_terms();
  for (int k : kinds) plan.add_existing_terms(static_cast<pb::TermKind>(k));
  return plan;
}
}  // namespace

pb::PlanResponse Profile::Plan(const pb::Pod& pod) const {
  if (!plans_) return {};
  return BuildPlan(planners_, pod, nullptr);
}

absl::Status Profile::CheckPlanSize(const pb::Pod& pod, int64_t max_bytes,
                                    absl::string_view limit) const {
  if (!plans_) return absl::OkStatus();
  int64_t total = 0;
  Plugin::PlanSize largest;
  for (const Plugin* p : planners_) {
    const Plugin::PlanSize size = p->PlanBytes(pod);
    total = model::SatAdd(total, size.bytes);
    if (size.bytes > largest.bytes) largest = size;
  }
  if (total <= max_bytes) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      largest.field, ": the pod's plan would take about ", total,
      " bytes, more than the limit of ", max_bytes, " (", limit,
      "); a plan grows with the square of some fields (each of n topology "
      "spread constraints lists the n keys, each of n required affinity "
      "terms carries the n selectors)"));
}

absl::Status Profile::BindCluster(
    CycleState& state, const pb::Pod& pod, const pb::ClusterData& cluster,
    absl::Span<const pb::Node* const> nodes) const {
  absl::flat_hash_map<std::string, int> bases;
  const int queries =
      plans_ ? BuildPlan(planners_, pod, &bases).queries_size() : 0;
  if (cluster.answers_size() != queries) {
    return absl::InvalidArgumentError(
        absl::StrCat("cluster.answers has ", cluster.answers_size(),
                     " entries, the pod's plan has ", queries,
                     " queries (ask Plan with the same pod and profile)"));
  }
  const int terms = cluster.existing_terms_size();
  for (size_t i = 0; i < nodes.size(); ++i) {
    const pb::Node& n = *nodes[i];
    if (n.query_counts_size() != queries &&
        !(n.query_counts_size() == 0 && queries == 0)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "nodes[", i, "].query_counts has ", n.query_counts_size(),
          " entries, the pod's plan has ", queries, " queries"));
    }
    for (int j = 0; j < n.term_counts_size(); ++j) {
      const int t = n.term_counts(j).term();
      if (t < 0 || t >= terms) {
        return absl::InvalidArgumentError(
            absl::StrCat("nodes[", i, "].term_counts[", j, "].term: ", t,
                         " is not an index into cluster.existing_terms (",
                         terms, " entries)"));
      }
    }
  }
  state.BindCluster(&cluster, std::move(bases));
  return absl::OkStatus();
}

const ScorePlugin* Profile::FindScorePlugin(absl::string_view name) const {
  for (const ScorePlugin* p : score_) {
    if (p->Name() == name) return p;
  }
  return nullptr;
}

int32_t Profile::WeightOf(absl::string_view name) const {
  for (size_t i = 0; i < score_.size(); ++i) {
    if (score_[i]->Name() == name) return score_weights_[i];
  }
  return 0;
}

absl::StatusOr<PluginStatus> Profile::RunPreFilter(
    CycleState& state, const pb::Pod& pod, ExtensionPointObserver* observer,
    std::vector<std::string>* unschedulable_plugins) const {
  return Timed(
      observer, model::ExtensionPoint::kPreFilter, scheduler_name_,
      [&] { return PreFilterUntimed(state, pod, unschedulable_plugins); });
}

absl::StatusOr<std::vector<PluginStatus>> Profile::RunFilter(
    const CycleState& state, const pb::Pod& pod,
    absl::Span<const pb::Node* const> nodes,
    ExtensionPointObserver* observer) const {
  // As kube-scheduler, which times Filter only when a filter plugin runs.
  if (filter_.empty()) observer = nullptr;
  return Timed(observer, model::ExtensionPoint::kFilter, scheduler_name_,
               [&] { return FilterUntimed(state, pod, nodes); });
}

absl::StatusOr<std::vector<std::string>> Profile::RunPreScore(
    CycleState& state, const pb::Pod& pod,
    absl::Span<const pb::Node* const> nodes,
    ExtensionPointObserver* observer) const {
  return Timed(observer, model::ExtensionPoint::kPreScore, scheduler_name_,
               [&] { return PreScoreUntimed(state, pod, nodes); });
}

absl::StatusOr<ScoreTable> Profile::RunScore(
    const CycleState& state, const pb::Pod& pod,
    absl::Span<const pb::Node* const> nodes,
    absl::Span<const std::string> skipped,
    ExtensionPointObserver* observer) const {
  return Timed(observer, model::ExtensionPoint::kScore, scheduler_name_,
               [&] { return ScoreUntimed(state, pod, nodes, skipped); });
}

absl::Status Profile::RunNormalizeScore(
    const CycleState& state, const pb::Pod& pod, ScoreTable& table,
    ExtensionPointObserver* observer) const {
  return Timed(observer, model::ExtensionPoint::kScore, scheduler_name_,
               [&] { return NormalizeScoreUntimed(state, pod, table); });
}

absl::StatusOr<NodeVerdicts> Profile::Evaluate(
    CycleState& state, const pb::Pod& pod,
    absl::Span<const pb::Node* const> nodes, EvaluateMode mode,
    ExtensionPointObserver* observer) const {
  NodeVerdicts ev;
  KSCORE_ASSIGN_OR_RETURN(
      ev.pre_filter,
      RunPreFilter(state, pod, observer, &ev.unschedulable_plugins));
  if (!ev.pre_filter.ok()) return ev;
  absl::btree_set<std::string> rejectors(ev.unschedulable_plugins.begin(),
                                         ev.unschedulable_plugins.end());

  KSCORE_ASSIGN_OR_RETURN(ev.filter, RunFilter(state, pod, nodes, observer));
  const std::string* last = nullptr;  // rejections come in runs
  for (const PluginStatus& s : ev.filter) {
    if (s.ok() || s.plugin.empty() || (last != nullptr && *last == s.plugin))
      continue;
    last = &s.plugin;
    rejectors.insert(s.plugin);
  }
  ev.unschedulable_plugins.assign(rejectors.begin(), rejectors.end());
  std::vector<const pb::Node*> feasible;
  feasible.reserve(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (ev.filter[i].ok()) {
      ev.feasible.push_back(static_cast<int>(i));
      feasible.push_back(nodes[i]);
    }
  }
  if (feasible.empty() || mode == EvaluateMode::kFilterOnly) return ev;

  KSCORE_ASSIGN_OR_RETURN(ev.skipped,
                          RunPreScore(state, pod, feasible, observer));
  // One Score observation for the raw scores and their normalising, as
  // kube-scheduler's RunScorePlugins.
  KSCORE_RETURN_IF_ERROR(
      Timed(observer, model::ExtensionPoint::kScore, scheduler_name_, [&] {
        KSCORE_ASSIGN_OR_RETURN(ev.scores,
                                ScoreUntimed(state, pod, feasible, ev.skipped));
        if (mode != EvaluateMode::kFull) return absl::OkStatus();
        return NormalizeScoreUntimed(state, pod, ev.scores);
      }));
  return ev;
}

absl::StatusOr<std::vector<pb::NodeVolumes>> Profile::DecideVolumes(
    const CycleState& state, const pb::Pod& pod,
    absl::Span<const pb::Node* const> nodes) const {
  std::vector<pb::NodeVolumes> out;
  if (volume_deciders_.empty()) return out;
  // As Filter: a plugin whose PreFilter skipped it settled nothing.
  const SkipSet* skip = nullptr;
  if (absl::StatusOr<const SkipSet*> r = state.Read<SkipSet>(kSkipFilterKey);
      r.ok()) {
    skip = *r;
  } else if (!absl::IsNotFound(r.status())) {
    return r.status();
  }
  for (const pb::Node* node : nodes) {
    pb::NodeVolumes v;
    for (const VolumeDecisionPlugin* d : volume_deciders_) {
      if (skip != nullptr && skip->Has(d->Name())) continue;
      PluginStatus s = d->DecideVolumes(state, pod, *node, v);
      if (!s.ok()) return PluginError(s, d->Name());
    }
    if (v.claims().empty()) continue;
    v.set_node_name(node->name());
    out.push_back(std::move(v));
  }
  return out;
}

absl::StatusOr<PostFilterResult> Profile::RunPostFilter(
    const pb::PreemptRequest& req, absl::Time now,
    ExtensionPointObserver* observer) const {
  if (post_filter_.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "profile \"", scheduler_name_,
        "\" runs no PostFilter plugin (DefaultPreemption is disabled): "
        "ask ListProfiles which profiles preempt"));
  }
  KSCORE_RETURN_IF_ERROR(ValidatePreemptRequest(req));
  std::vector<const pb::Node*> nodes;
  nodes.reserve(req.nodes_size());
  for (const pb::PreemptionNode& n : req.nodes()) nodes.push_back(&n.node());
  CycleState state;
  if (absl::Status s = BindCluster(state, req.pod(), req.cluster(), nodes);
      !s.ok()) {
    return s;
  }
  KSCORE_ASSIGN_OR_RETURN(PluginStatus pre,
                          PreFilterUntimed(state, req.pod(), nullptr));
  PreemptionInput in;
  in.request = &req;
  in.profile = this;
  in.state = &state;
  in.pre_filter = std::move(pre);
  in.query_bases = state.query_bases();
  in.now = now;
  return Timed(observer, model::ExtensionPoint::kPostFilter, scheduler_name_,
               [&]() -> absl::StatusOr<PostFilterResult> {
                 // As upstream: the first success wins; a failure other
                 // than Unschedulable ends the run; Unschedulable ones
                 // add their messages and the first names the plugin.
                 PostFilterResult out;
                 out.status.code = Code::kUnschedulable;
                 for (const PostFilterPlugin* p : post_filter_) {
                   KSCORE_ASSIGN_OR_RETURN(PostFilterResult r,
                                           p->PostFilter(in));
                   if (r.status.ok()) {
                     r.status.plugin.clear();
                     return r;
                   }
                   if (r.status.code != Code::kUnschedulable) {
                     r.status.plugin = std::string(p->Name());
                     r.chosen = -1;
                     return r;
                   }
                   out.status.reasons.insert(out.status.reasons.end(),
                                             r.status.reasons.begin(),
                                             r.status.reasons.end());
                   if (out.status.plugin.empty()) {
                     out.status.plugin = std::string(p->Name());
                   }
                 }
                 return out;
               });
}

}  // namespace kscore::framework
