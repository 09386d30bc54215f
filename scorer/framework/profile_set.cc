#include "scorer/framework/profile_set.h"

#include "absl/strings/str_cat.h"

namespace kscore::framework {

absl::StatusOr<std::unique_ptr<ProfileSet>> BuildProfileSet(
    SchedulerConfig config, const Registry& registry) {
  auto set = std::make_unique<ProfileSet>();
  set->config = std::move(config);
  for (const ProfileConfig& pc : set->config.profiles) {
    absl::StatusOr<std::unique_ptr<Profile>> p =
        Profile::Create(pc, set->config, registry, &set->warnings);
    if (!p.ok()) return p.status();
    set->profiles[pc.scheduler_name] = *std::move(p);
  }
  return set;
}

absl::StatusOr<std::unique_ptr<ProfileSet>> LoadProfileSet(
    const std::string& path, const Registry& registry) {
  absl::StatusOr<SchedulerConfig> cfg = LoadSchedulerConfig(path);
  if (!cfg.ok()) return cfg.status();
  absl::StatusOr<std::unique_ptr<ProfileSet>> set =
      BuildProfileSet(*std::move(cfg), registry);
  if (!set.ok()) {
    return absl::Status(set.status().code(),
                        absl::StrCat(path, ": ", set.status().message()));
  }
  return set;
}

}  // namespace kscore::framework
