#ifndef KSCORE_COMMON_PROGRAM_H_
#define KSCORE_COMMON_PROGRAM_H_

#include "common/flags.h"

namespace kscore::common {

// What both programs do first: the usage text, kube-style flags parsed by
// Abseil (including -v, defined here), logging set up at that verbosity,
// and Abseil's Mutex deadlock detection off. Returns the arguments as
// parsed, for FlagGiven.
KubeStyleArgs StartProgram(int argc, char** argv, const char* name,
                           const char* usage);

}  // namespace kscore::common

#endif  // KSCORE_COMMON_PROGRAM_H_
