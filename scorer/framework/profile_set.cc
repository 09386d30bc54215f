#include "scorer/framework/profile_set.h"

#include <cstdint>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"

namespace kscore::framework {
namespace {

// FNV-1a, 64 bits: the same in every process and build (absl::Hash is
// seeded per process).
uint64_t Fnv1a(absl::string_view s) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

// What decides placement, written out in a fixed order: each profile's
// plugins per point with weights, the gates of plugins not run, the data
// the shim sends, and the plugins' args as written.
std::string Canonical(const ProfileSet& set) {
  std::string out;
  for (const auto& [name, profile] : set.profiles) {
    absl::StrAppend(&out, "profile ", name, "\n percentage ",
                    profile->percentage_of_nodes_to_score(), "\n labels ",
                    static_cast<int>(profile->node_labels()), "\n counts ",
                    absl::StrJoin(profile->label_count_keys(), ","),
                    "\n gates ", absl::StrJoin(profile->GateNames(), ","),
                    "\n");
    for (const Profile::PluginInfo& p : profile->Describe()) {
      absl::StrAppend(&out, " plugin ", p.name, " ", p.weight, " ",
                      absl::StrJoin(p.extension_points, ","), "\n");
    }
  }
  for (const model::ProfileConfig& pc : set.config.profiles) {
    for (const model::PluginConfigEntry& e : pc.plugin_config) {
      if (!e.args.IsDefined()) continue;
      YAML::Emitter y;
      y << e.args;
      absl::StrAppend(&out, "args ", pc.scheduler_name, " ", e.name, " ",
                      y.c_str(), "\n");
    }
  }
  return out;
}

}  // namespace

absl::StatusOr<std::unique_ptr<ProfileSet>> BuildProfileSet(
    model::SchedulerConfig config, const Registry& registry) {
  auto set = std::make_unique<ProfileSet>();
  set->config = std::move(config);
  for (const model::ProfileConfig& pc : set->config.profiles) {
    KSCORE_ASSIGN_OR_RETURN(
        std::unique_ptr<Profile> p,
        Profile::Create(pc, set->config, registry, &set->warnings));
    set->profiles[pc.scheduler_name] = std::move(p);
  }
  set->config_hash = absl::StrFormat("%016x", Fnv1a(Canonical(*set)));
  return set;
}

absl::StatusOr<std::unique_ptr<ProfileSet>> ParseProfileSet(
    absl::string_view yaml, const Registry& registry) {
  KSCORE_ASSIGN_OR_RETURN(model::SchedulerConfig cfg,
                          model::ParseSchedulerConfig(yaml));
  return BuildProfileSet(std::move(cfg), registry);
}

absl::StatusOr<std::unique_ptr<ProfileSet>> LoadProfileSet(
    const std::string& path, const Registry& registry) {
  KSCORE_ASSIGN_OR_RETURN(model::SchedulerConfig cfg,
                          model::LoadSchedulerConfig(path));
  absl::StatusOr<std::unique_ptr<ProfileSet>> set =
      BuildProfileSet(std::move(cfg), registry);
  if (!set.ok()) {
    return absl::Status(set.status().code(),
                        absl::StrCat(path, ": ", set.status().message()));
  }
  return set;
}

}  // namespace kscore::framework
