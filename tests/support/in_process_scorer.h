#ifndef KSCORE_TESTS_SUPPORT_IN_PROCESS_SCORER_H_
#define KSCORE_TESTS_SUPPORT_IN_PROCESS_SCORER_H_

// For the shim's tests: the real scorer (every default plugin, the real
// service) on a loopback port of the test process, so a shim test talks to
// it over gRPC as the shim does in production, without including the
// scorer's headers.

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "kscore/scorer/v1/scorer.pb.h"

namespace kscore::testing {

class InProcessScorer {
 public:
  // Serves every profile of `config_yaml` (a KubeSchedulerConfiguration)
  // on `listen` (a free loopback port by default).
  static absl::StatusOr<std::unique_ptr<InProcessScorer>> Start(
      absl::string_view config_yaml, absl::string_view listen = "127.0.0.1:0");
  ~InProcessScorer();
  InProcessScorer(const InProcessScorer&) = delete;
  InProcessScorer& operator=(const InProcessScorer&) = delete;

  // "127.0.0.1:PORT": the target for a scorer client.
  const std::string& target() const { return target_; }

 private:
  struct Parts;
  explicit InProcessScorer(std::unique_ptr<Parts> parts, std::string target);
  std::unique_ptr<Parts> parts_;
  std::string target_;
};

// The cluster events each PreFilter and Filter plugin of `profile` registers
// (the scorer's PluginInfo.events), for the profiles of `config_yaml`.
absl::StatusOr<std::map<std::string, std::vector<scorer::v1::ClusterEvent>>>
PluginEventsOf(absl::string_view config_yaml, absl::string_view profile);

}  // namespace kscore::testing

#endif  // KSCORE_TESTS_SUPPORT_IN_PROCESS_SCORER_H_
