#ifndef KSCORE_COMMON_LOGGING_H_
#define KSCORE_COMMON_LOGGING_H_

#include <string>

namespace kscore::common {

// Logs go to stderr. Verbosity follows kube-scheduler's -v: 0-1 show
// warnings, errors and start-up; 2-3 info; 4-5 debug (one line per call);
// 6+ trace.
void SetUpLogging(const std::string& program, int verbosity);

}  // namespace kscore::common

#endif  // KSCORE_COMMON_LOGGING_H_
