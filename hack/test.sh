#!/usr/bin/env bash
# Every test: installs what is missing, builds, runs the unit and gRPC tests
# (ctest), then the end-to-end tests on a real local control plane.
#   hack/test.sh            everything
#   hack/test.sh --unit     only the build and ctest
#   hack/test.sh --sanitize ASan+UBSan build (build-asan/): ctest and the
#                           shim's end-to-end test; TSan build (build-tsan/):
#                           the shim's unit tests, its Kubernetes client
#                           against a real API server and the shim's
#                           end-to-end test. Cold, about 70 CPU-minutes for
#                           ASan (an ASan compile costs 2.8x a plain one)
#                           plus about 11 for protobuf, Abseil and gRPC
#                           rebuilt with TSan (hack/lib/tsan.sh, cached):
#                           not in the default run.
# The default run (CI) also builds the scorer side with ASan+UBSan (the
# scorer binary and its tests: about 21 CPU-minutes cold) and runs those
# tests there; KSCORE_TEST_ASAN=0 skips that stage.
# Stages after ctest: clang-format, the reference's go test, the oracle, each
# fuzz target for KSCORE_FUZZ_SECONDS (10) s, then the end-to-end tests.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=hack/lib/deps.sh
source "$root/hack/lib/deps.sh"

only_unit=false
sanitize=false
case "${1:-}" in
  --unit) only_unit=true ;;
  --sanitize) sanitize=true ;;
  "") ;;
  *) echo "usage: $0 [--unit | --sanitize]" >&2; exit 2 ;;
esac

kscore_install_deps
if $sanitize; then
  # No build/ needed: the end-to-end test runs the sanitizer build's binaries.
  kscore_build "$root" "$root/build-asan" -DKSCORE_SANITIZE=address,undefined
  # shellcheck source=hack/lib/tsan.sh
  source "$root/hack/lib/tsan.sh"
  tsan_prefix="$(kscore_tsan_prefix)"
  tsan_tests=(shim_test kube_unit_test)
  tsan_bins=("${tsan_tests[@]}" kube_integration_test shim scorer)
  KSCORE_NINJA_TARGETS="${tsan_bins[*]}" kscore_build "$root" "$root/build-tsan" \
    -DKSCORE_SANITIZE=thread -DKSCORE_TSAN_LIBDIR="$tsan_prefix/lib"
else
  kscore_build "$root"
fi

failed=0
summary=()
# A sanitizer's finding fails the test that made it.
export ASAN_OPTIONS="${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
export TSAN_OPTIONS="${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1:suppressions=$root/hack/tsan.supp}"
run() {
  local name="$1"; shift
  echo "=== $name" >&2
  if "$@"; then
    summary+=("PASS $name")
  else
    summary+=("FAIL $name")
    failed=$((failed + 1))
  fi
}

if $sanitize; then
  run "ctest under ASan+UBSan" ctest --test-dir "$root/build-asan" \
    --output-on-failure -j2 --timeout 600
  run "shim.sh under ASan+UBSan" env KSCORE_BIN_DIR="$root/build-asan/bin" \
    bash "$root/tests/e2e/shim.sh"
  # The TSan binaries must load the instrumented libraries, or TSan would
  # report the uninstrumented ones' hand-offs (or protobuf would crash).
  for t in "${tsan_bins[@]}"; do
    run "$t loads the TSan libraries" kscore_tsan_check "$tsan_prefix" "$root/build-tsan/bin/$t"
  done
  for t in "${tsan_tests[@]}"; do
    run "$t under TSan" "$root/build-tsan/bin/$t"
  done
  run "kube_client.sh under TSan" env KSCORE_BUILD_DIR="$root/build-tsan" \
    bash "$root/tests/e2e/kube_client.sh"
  run "shim.sh under TSan" env KSCORE_BIN_DIR="$root/build-tsan/bin" \
    bash "$root/tests/e2e/shim.sh"
  echo "=== summary" >&2
  printf '%s\n' "${summary[@]}"
  echo "$(( ${#summary[@]} - failed )) passed, $failed failed"
  [ "$failed" -eq 0 ]
  exit
fi

# shim/ and scorer/ are peers over model/: neither includes the other, and
# the shim binary holds no framework or plugin code.
# shellcheck source=hack/lib/layout.sh
source "$root/hack/lib/layout.sh"
run "layout: shim and scorer include neither other" kscore_check_includes "$root"
run "layout: the shim links no framework or plugin" \
  kscore_check_shim_symbols "$root/build/bin/shim"
run "ctest (unit + gRPC)" ctest --test-dir "$root/build" --output-on-failure -j2 --timeout 300
if ! $only_unit && [ "${KSCORE_TEST_ASAN:-1}" != 0 ]; then
  # The scorer takes requests from the network: its framework, plugins,
  # service and the real binary under gRPC calls, with ASan+UBSan. The test
  # binaries run directly (ctest would list the targets not built here).
  asan_tests=(common_test framework_test plugins_test scorer_server_test)
  run "build the scorer side with ASan+UBSan" env \
    KSCORE_NINJA_TARGETS="scorer ${asan_tests[*]}" \
    bash -c 'source "$1/hack/lib/deps.sh" && kscore_build "$1" "$1/build-asan" \
      -DKSCORE_SANITIZE=address,undefined' _ "$root"
  for t in "${asan_tests[@]}"; do
    run "$t under ASan+UBSan" "$root/build-asan/bin/$t"
  done
fi
run "clang-format" "$root/hack/format.sh" --check
run "reference go test" bash -c "cd '$root/reference' && go test ./... -count=1"
run "oracle (kube-scheduler's plugins vs kscore)" "$root/tests/oracle/run.sh"
# Every libFuzzer target for a short while (clang, ASan+UBSan; build-fuzz/).
run "fuzz (each target ${KSCORE_FUZZ_SECONDS:-10} s)" "$root/hack/fuzz.sh" \
  "${KSCORE_FUZZ_SECONDS:-10}"

if ! $only_unit; then
  for t in "$root"/tests/e2e/*.sh; do
    [ -e "$t" ] || continue
    [ "$(basename "$t")" = lib.sh ] && continue  # helpers, sourced by the tests
    run "$(basename "$t")" bash "$t"
  done
fi

echo "=== summary" >&2
printf '%s\n' "${summary[@]}"
passed=$(( ${#summary[@]} - failed ))
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
