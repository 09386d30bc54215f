#ifndef KSCORE_COMMON_PROGRAM_H_
#define KSCORE_COMMON_PROGRAM_H_

#include <cstdint>

#include "common/flags.h"

namespace kscore::common {

// What both programs do first: the usage text, kube-style flags parsed by
// Abseil (including -v, defined here), logging set up at that verbosity,
// Abseil's Mutex deadlock detection off, and the open-file limit raised.
// Returns the arguments as parsed, for FlagGiven.
KubeStyleArgs StartProgram(int argc, char** argv, const char* name,
                           const char* usage);

// Raises the soft open-file limit (RLIMIT_NOFILE) to the hard one, as Go's
// runtime does for kube-scheduler: a server holding many connections
// should not run out at a shell's default of 1024. Returns the soft limit
// in force afterwards (unchanged when raising fails).
uint64_t RaiseOpenFileLimit();

}  // namespace kscore::common

#endif  // KSCORE_COMMON_PROGRAM_H_
