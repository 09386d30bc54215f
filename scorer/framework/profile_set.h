#ifndef KSCORE_SCORER_FRAMEWORK_PROFILE_SET_H_
#define KSCORE_SCORER_FRAMEWORK_PROFILE_SET_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "model/config.h"
#include "scorer/framework/profile.h"
#include "scorer/framework/registry.h"

namespace kscore::framework {

// Every profile of a configuration, keyed by schedulerName.
struct ProfileSet {
  model::SchedulerConfig config;
  std::map<std::string, std::unique_ptr<Profile>> profiles;
  std::vector<std::string> warnings;
  // Of the effective configuration (what decides placement), 16 hex digits:
  // replicas with the same hash place pods alike.
  std::string config_hash;

  const Profile* Find(absl::string_view name) const {
    auto it = profiles.find(std::string(name));
    return it == profiles.end() ? nullptr : it->second.get();
  }
};

absl::StatusOr<std::unique_ptr<ProfileSet>> BuildProfileSet(
    model::SchedulerConfig config, const Registry& registry);

// The same from the configuration's YAML text (tools, tests, benchmarks).
absl::StatusOr<std::unique_ptr<ProfileSet>> ParseProfileSet(
    absl::string_view yaml, const Registry& registry);

// Reads, validates and builds a configuration file in one go: what both
// programs do at start-up. Errors name the file and the field.
absl::StatusOr<std::unique_ptr<ProfileSet>> LoadProfileSet(
    const std::string& path, const Registry& registry);

}  // namespace kscore::framework

#endif  // KSCORE_SCORER_FRAMEWORK_PROFILE_SET_H_
