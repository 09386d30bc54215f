#ifndef KSCORE_FUZZ_TARGETS_H_
#define KSCORE_FUZZ_TARGETS_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace kscore::fuzz {

// One fuzz target: the code that reads untrusted bytes, called on any bytes
// whatever. Decoders may refuse an input; crashing on one, or breaking an
// invariant the target checks, is the bug (the target aborts then).
struct Target {
  const char* name;  // fuzz/corpus/<name>/, fuzz/regressions/<name>/
  void (*run)(absl::string_view data);
};

// Every target, by name. libFuzzer's binaries (fuzz_main.cc) and the
// regression test (fuzz_regression_test.cc) call the same functions.
const std::vector<Target>& Targets();
const Target* FindTarget(absl::string_view name);

}  // namespace kscore::fuzz

#endif  // KSCORE_FUZZ_TARGETS_H_
