#include "common/program.h"

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/synchronization/mutex.h"
#include "common/logging.h"

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
  return args;
}

}  // namespace kscore::common
