// libFuzzer's entry point for one target of targets.cc, named at build time
// (KSCORE_FUZZ_TARGET): each fuzz_<name> binary is this file and the
// target's name.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "absl/strings/string_view.h"
#include "fuzz/targets.h"

namespace {

const kscore::fuzz::Target& Target() {
  static const kscore::fuzz::Target* const target = [] {
    const kscore::fuzz::Target* t =
        kscore::fuzz::FindTarget(KSCORE_FUZZ_TARGET);
    if (t == nullptr) {
      std::fprintf(stderr, "no fuzz target %s\n", KSCORE_FUZZ_TARGET);
      std::abort();
    }
    return t;
  }();
  return *target;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Target().run(absl::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
