#!/usr/bin/env bash
# Every test: installs what is missing, builds, runs the unit and gRPC tests
# (ctest), then the end-to-end tests on a real local control plane.
#   hack/test.sh            everything
#   hack/test.sh --unit     only the build and ctest
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=hack/lib/deps.sh
source "$root/hack/lib/deps.sh"

only_unit=false
if [ "${1:-}" = "--unit" ]; then only_unit=true; fi

kscore_install_deps
kscore_build "$root"

failed=0
summary=()
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

run "ctest (unit + gRPC)" ctest --test-dir "$root/build" --output-on-failure -j2 --timeout 300
run "clang-format" "$root/hack/format.sh" --check
run "reference go test" bash -c "cd '$root/reference' && go test ./... -count=1"
run "oracle (kube-scheduler's plugins vs kscore)" "$root/tests/oracle/run.sh"

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
