#!/usr/bin/env bash
# hack/test.sh's stages: each one timed, its result and time in the summary.

failed=0
summary=()
run_started=$SECONDS

record() {  # record PASS|FAIL NAME SECONDS
  summary+=("$(printf '%s %-56s %5d s' "$1" "$2" "$3")")
  [ "$1" = PASS ] || failed=$((failed + 1))
}

run() {  # run NAME COMMAND...
  local name="$1" t0=$SECONDS; shift
  echo "=== $name" >&2
  if "$@"; then record PASS "$name" $((SECONDS - t0))
  else record FAIL "$name" $((SECONDS - t0)); fi
}

print_summary() {
  echo "=== summary" >&2
  printf '%s\n' "${summary[@]}"
  local total=$((SECONDS - run_started))
  echo "$(( ${#summary[@]} - failed )) passed, $failed failed in $((total / 60)) min $((total % 60)) s"
  [ "$failed" -eq 0 ]
}

# Kubernetes' binaries (hack/cluster.sh, cached by version), the reference
# and its tests, and the oracle: compiled once, so the later stages only run.
go_prebuild() {  # go_prebuild ROOT
  local root="$1"
  "$root/hack/cluster.sh" bin
  (cd "$root/reference" && go build ./... && go test -count=1 -run '^$' ./... >/dev/null)
}
go_prebuild_wait() {  # go_prebuild_wait PID LOG
  local rc=0
  [ -n "$1" ] || return 0
  wait "$1" || rc=$?
  [ "$rc" -eq 0 ] || cat "$2" >&2
  return "$rc"
}

# The end-to-end scripts, JOBS at a time (each has a control plane of its
# own); the ones that time a recovery or a latency run alone afterwards.
KSCORE_E2E_ALONE="${KSCORE_E2E_ALONE:-faults.sh slowloris.sh}"
# The longest scripts start first, so the lanes end together: image.sh
# (the image's build) takes as long as most of the others put together.
KSCORE_E2E_FIRST="${KSCORE_E2E_FIRST:-image.sh deploy.sh secure.sh shim.sh}"
run_e2e() {  # run_e2e ROOT JOBS
  local root="$1" jobs="$2" t name logs
  logs="$(mktemp -d /tmp/kscore-e2e-logs-XXXXXX)"
  local -a lane=() alone=() rest=()
  for name in $KSCORE_E2E_FIRST; do
    [ -f "$root/tests/e2e/$name" ] && lane+=("$root/tests/e2e/$name")
  done
  for t in "$root"/tests/e2e/*.sh; do
    name="$(basename "$t")"
    [ "$name" = lib.sh ] && continue  # helpers, sourced by the tests
    [[ " $KSCORE_E2E_FIRST " == *" $name "* ]] && continue
    if [[ " $KSCORE_E2E_ALONE " == *" $name "* ]]; then alone+=("$t"); else rest+=("$t"); fi
  done
  lane+=("${rest[@]}")
  e2e_side_by_side "$logs" "$jobs" "${lane[@]}"
  for t in "${alone[@]}"; do run "$(basename "$t")" bash "$t"; done
}

# Runs the scripts JOBS at a time, each into its own log, printed whole when
# it ends so the output stays readable.
e2e_side_by_side() {  # e2e_side_by_side LOGDIR JOBS SCRIPT...
  local logs="$1" jobs="$2"; shift 2
  local t
  for t in "$@"; do
    while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do e2e_reap "$logs"; done
    bash "$t" >"$logs/$(basename "$t").log" 2>&1 &
    echo "$! $(basename "$t") $SECONDS" >>"$logs/running"
  done
  while [ -n "$(jobs -rp)" ]; do e2e_reap "$logs"; done
  e2e_reap "$logs"
}
e2e_reap() {  # e2e_reap LOGDIR: records every finished script
  local logs="$1" pid name t0 rc
  wait -n 2>/dev/null || true
  [ -f "$logs/running" ] || return 0
  local -a keep=()
  while read -r pid name t0; do
    if kill -0 "$pid" 2>/dev/null; then keep+=("$pid $name $t0"); continue; fi
    rc=0
    wait "$pid" 2>/dev/null || rc=$?
    echo "=== $name" >&2
    cat "$logs/$name.log" >&2
    if [ "$rc" -eq 0 ]; then record PASS "$name" $((SECONDS - t0))
    else record FAIL "$name" $((SECONDS - t0)); fi
  done <"$logs/running"
  printf '%s\n' "${keep[@]}" >"$logs/running"
  [ ${#keep[@]} -gt 0 ] || rm -f "$logs/running"
}

# hack/test.sh --sanitize: ASan+UBSan and TSan trees of the whole project.
sanitize_run() {  # sanitize_run ROOT
  local root="$1" tsan_prefix t
  run "build build-asan/" kscore_build "$root" "$root/build-asan" \
    -DKSCORE_SANITIZE=address,undefined
  # shellcheck source=hack/lib/tsan.sh
  source "$root/hack/lib/tsan.sh"
  tsan_prefix="$(kscore_tsan_prefix)"
  local -a tsan_tests=(shim_test kube_unit_test)
  local -a tsan_bins=("${tsan_tests[@]}" kube_integration_test shim scorer)
  run "build build-tsan/" env KSCORE_NINJA_TARGETS="${tsan_bins[*]}" bash -c \
    'source "$1/hack/lib/deps.sh" && kscore_build "$1" "$1/build-tsan" \
       -DKSCORE_SANITIZE=thread -DKSCORE_TSAN_LIBDIR="$2"' _ "$root" "$tsan_prefix/lib"
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
}
