#include "shim/scheduler/profiles.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "spdlog/spdlog.h"

namespace kscore::scheduler {

bool ProfileInfo::NeedsNodeLabels(const pb::Pod& pod) const {
  switch (node_labels) {
    case pb::NODE_LABELS_NEVER:
      return false;
    case pb::NODE_LABELS_WHEN_POD_SELECTS:
      return !pod.node_selector().empty() || pod.has_node_affinity();
    default:
      return true;
  }
}

Profiles::Profiles(Options options, ListFn list)
    : options_(std::move(options)), list_(std::move(list)) {}

bool Profiles::Serves(absl::string_view name) const {
  return std::find(options_.served.begin(), options_.served.end(), name) !=
         options_.served.end();
}

absl::StatusOr<std::shared_ptr<const ProfileInfo>> Profiles::Lookup(
    absl::string_view name) {
  absl::MutexLock lock(&mu_);
  if (!checked_ ||
      (!refusal_.empty() && options_.now() - last_check_ >= options_.recheck)) {
    CheckLocked();
  }
  if (!refusal_.empty()) {
    return unreachable_ ? absl::UnavailableError(refusal_)
                        : absl::FailedPreconditionError(refusal_);
  }
  auto it = known_.find(name);
  if (it == known_.end()) {
    return absl::FailedPreconditionError(
        absl::StrCat("profile \"", name,
                     "\" is not served by the scorer (its configuration has "
                     "schedulerNames [",
                     serving_, "])"));
  }
  return it->second;
}

void Profiles::Invalidate(const std::string& why) {
  absl::MutexLock lock(&mu_);
  if (!checked_) return;
  spdlog::warn("asking the scorer for its profiles again: {}", why);
  checked_ = false;
}

void Profiles::ScorerAnswered() {
  absl::MutexLock lock(&mu_);
  // Refused only because the scorer did not answer: the next Lookup asks
  // again at once, not after `recheck`.
  if (unreachable_) checked_ = false;
}

void Profiles::CheckLocked() {
  checked_ = true;
  last_check_ = options_.now();
  std::vector<pb::ListProfilesResponse> answers;
  std::string refusal;
  bool unreachable = false;
  for (int i = 0; i < std::max(1, options_.probes); ++i) {
    absl::StatusOr<pb::ListProfilesResponse> r = list_();
    if (!r.ok()) {
      refusal = absl::StrCat("scorer unavailable: ", r.status().message());
      unreachable = absl::IsUnavailable(r.status());
      break;
    }
    answers.push_back(*std::move(r));
  }
  if (refusal.empty()) refusal = Adopt(answers);
  if (refusal.empty() && answers.front().config_hash() != adopted_hash_) {
    spdlog::info("scorer configuration {} adopted (was {}); it serves [{}]",
                 answers.front().config_hash(),
                 adopted_hash_.empty() ? "none" : adopted_hash_, serving_);
    adopted_hash_ = answers.front().config_hash();
  } else if (!refusal.empty() && refusal != refusal_) {
    spdlog::error("not scheduling: {}", refusal);
  }
  refusal_ = std::move(refusal);
  unreachable_ = unreachable;
  if (options_.on_check) options_.on_check(refusal_);
}

std::string Profiles::Adopt(
    const std::vector<pb::ListProfilesResponse>& answers) {
  std::map<std::string, int> hashes;
  for (const pb::ListProfilesResponse& a : answers) ++hashes[a.config_hash()];
  if (hashes.size() > 1) {
    std::vector<std::string> seen;
    for (const auto& [h, n] : hashes) {
      seen.push_back(absl::StrCat(h.empty() ? "(none)" : h, " (", n, " of ",
                                  answers.size(), " answers)"));
    }
    return absl::StrCat(
        "scorer replicas disagree on their configuration: hashes ",
        absl::StrJoin(seen, ", "),
        "; pods wait until every replica runs the same configuration");
  }
  known_.clear();
  std::vector<std::string> names;
  for (const pb::Profile& p : answers.front().profiles()) {
    names.push_back(p.scheduler_name());
    if (!Serves(p.scheduler_name())) continue;
    auto info = std::make_shared<ProfileInfo>();
    info->scheduler_name = p.scheduler_name();
    info->label_count_keys.assign(p.label_count_keys().begin(),
                                  p.label_count_keys().end());
    info->percentage_of_nodes_to_score = p.percentage_of_nodes_to_score();
    info->node_labels = p.node_labels();
    for (int d : p.pod_data()) {
      info->pod_data.push_back(static_cast<pb::PodData>(d));
    }
    info->plans = p.plans();
    info->batches = p.batches();
    info->volume_bind_timeout = absl::Seconds(p.volume_bind_timeout_seconds());
    info->content_keys = answers.front().content_keys();
    auto events = std::make_shared<queue::PluginEvents>();
    for (const pb::PluginInfo& plugin : p.plugins()) {
      const auto& points = plugin.extension_points();
      if (std::find(points.begin(), points.end(), "PostFilter") !=
          points.end()) {
        info->post_filter = true;
      }
      if (std::find(points.begin(), points.end(), "Filter") != points.end()) {
        info->filter_plugins.push_back(plugin.name());
      }
      if (plugin.events().empty() &&
          std::find(plugin.extension_points().begin(),
                    plugin.extension_points().end(),
                    "Filter") == plugin.extension_points().end() &&
          std::find(plugin.extension_points().begin(),
                    plugin.extension_points().end(),
                    "PreFilter") == plugin.extension_points().end()) {
        continue;  // rejects nothing
      }
      (*events)[plugin.name()].assign(plugin.events().begin(),
                                      plugin.events().end());
    }
    info->plugin_events = std::move(events);
    info->config_hash = answers.front().config_hash();
    known_[p.scheduler_name()] = std::move(info);
  }
  serving_ = absl::StrJoin(names, ", ");
  for (const std::string& s : options_.served) {
    if (!known_.contains(s)) {
      spdlog::error(
          "profile \"{}\" is not served by the scorer (it serves [{}]); its "
          "pods stay pending",
          s, serving_);
    }
  }
  return "";
}

}  // namespace kscore::scheduler
