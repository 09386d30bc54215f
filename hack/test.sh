#!/usr/bin/env bash
# Every test: installs what is missing, builds, runs the unit and gRPC tests
# (ctest), then the end-to-end tests on real local control planes. Each
# stage's time is in the summary.
#   hack/test.sh            everything (CI)
#   hack/test.sh --unit     only the build, the layout checks and ctest
#   hack/test.sh --sanitize ASan+UBSan build (build-asan/): ctest and the
#                           shim's end-to-end test; TSan build (build-tsan/):
#                           the shim's unit tests, its Kubernetes client
#                           against a real API server and the shim's
#                           end-to-end test. Cold, about 70 CPU-minutes for
#                           ASan plus about 11 for protobuf, Abseil and gRPC
#                           rebuilt with TSan (hack/lib/tsan.sh, cached):
#                           not in the default run.
# The default run builds three trees, each once: build/ (GCC, -Werror),
# build-fuzz/ (clang, ASan+UBSan: the scorer side's tests and the libFuzzer
# targets; KSCORE_TEST_ASAN=0 skips it) and the Go programs (Kubernetes from
# the module proxy, cached by version; reference/ and the oracle), the Go
# ones in the background while C++ compiles. Stages after ctest:
# clang-format, the reference's go test, the oracle, each fuzz target for
# KSCORE_FUZZ_SECONDS (10) s, then the end-to-end tests,
# KSCORE_E2E_JOBS (2) at a time but for those that time a recovery or a
# latency (KSCORE_E2E_ALONE).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=hack/lib/deps.sh
source "$root/hack/lib/deps.sh"
# shellcheck source=hack/lib/stages.sh
source "$root/hack/lib/stages.sh"

only_unit=false
sanitize=false
case "${1:-}" in
  --unit) only_unit=true ;;
  --sanitize) sanitize=true ;;
  "") ;;
  *) echo "usage: $0 [--unit | --sanitize]" >&2; exit 2 ;;
esac

# A sanitizer's finding fails the test that made it.
export ASAN_OPTIONS="${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
export TSAN_OPTIONS="${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1:suppressions=$root/hack/tsan.supp}"

run "install missing Debian packages" kscore_install_deps
if $sanitize; then
  sanitize_run "$root"
  print_summary
  exit
fi

# The Go programs build while C++ compiles: their module downloads wait on
# the network, not on the cores.
go_log="$(mktemp /tmp/kscore-go-prebuild-XXXXXX.log)"
go_pid=""
if ! $only_unit; then
  go_prebuild "$root" >"$go_log" 2>&1 &
  go_pid=$!
fi
run "build (build/, GCC)" kscore_build "$root"

# shim/ and scorer/ are peers over model/: neither includes the other, and
# the shim binary holds no framework or plugin code.
# shellcheck source=hack/lib/layout.sh
source "$root/hack/lib/layout.sh"
run "layout: shim and scorer include neither other" kscore_check_includes "$root"
run "layout: the shim links no framework or plugin" \
  kscore_check_shim_symbols "$root/build/bin/shim"
run "ctest (unit + gRPC)" ctest --test-dir "$root/build" --output-on-failure -j2 --timeout 300
run "clang-format" "$root/hack/format.sh" --check
if $only_unit; then
  print_summary
  exit
fi

# The scorer takes requests from the network: its libraries, service and the
# real binary under gRPC calls, with ASan+UBSan, in the fuzz targets' tree.
asan_tests=(common_test model_test framework_test plugins_test scorer_server_test)
if [ "${KSCORE_TEST_ASAN:-1}" != 0 ]; then
  run "build build-fuzz/ (clang, ASan+UBSan)" \
    kscore_build_fuzz "$root" scorer "${asan_tests[@]}" fuzzers
  for t in "${asan_tests[@]}"; do
    run "$t under ASan+UBSan" "$root/build-fuzz/bin/$t"
  done
fi
run "Go programs built (background since the start)" go_prebuild_wait "$go_pid" "$go_log"
run "reference go test" bash -c "cd '$root/reference' && go test ./... -count=1"
run "oracle (kube-scheduler's plugins vs kscore)" "$root/tests/oracle/run.sh"
if [ "${KSCORE_TEST_ASAN:-1}" != 0 ]; then
  run "fuzz (each target ${KSCORE_FUZZ_SECONDS:-10} s, two at a time)" \
    env KSCORE_FUZZ_JOBS="${KSCORE_FUZZ_JOBS:-2}" "$root/hack/fuzz.sh" \
    "${KSCORE_FUZZ_SECONDS:-10}"
fi
run_e2e "$root" "${KSCORE_E2E_JOBS:-2}"
print_summary
