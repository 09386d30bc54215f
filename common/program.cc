#include "common/program.h"

#include <sys/resource.h>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/synchronization/mutex.h"
#include "common/logging.h"
#include "spdlog/spdlog.h"

ABSL_FLAG(int, v, 0,
          "Log verbosity, as kube-scheduler's -v (2: info, 4: debug and the "
          "shim's per-pod decisions, 6: trace)");

namespace kscore::common {

KubeStyleArgs StartProgram(int argc, char** argv, const char* name,
                           const char* usage) {
  absl::SetProgramUsageMessage(usage);
  // Debian builds Abseil with Mutex deadlock detection on: a lock-order
  // graph updated on every Lock, about 1% of a scoring call. Our locks
  // are tested in CI builds; production does not pay for the check.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  KubeStyleArgs args(argc, argv);
  absl::ParseCommandLine(args.argc(), args.argv.data());
  SetUpLogging(name, absl::GetFlag(FLAGS_v));
  const uint64_t open_files = RaiseOpenFileLimit();
  spdlog::debug("open-file limit {}", open_files);
  return args;
}

uint64_t RaiseOpenFileLimit() {
  rlimit nofile{};
  if (getrlimit(RLIMIT_NOFILE, &nofile) != 0) return 0;
  if (nofile.rlim_cur < nofile.rlim_max) {
    rlimit raised = nofile;
    raised.rlim_cur = nofile.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &raised) == 0) nofile = raised;
  }
  return nofile.rlim_cur;
}

}  // namespace kscore::common
