#!/usr/bin/env bash
# Builds the libFuzzer targets of fuzz/ with clang, ASan and UBSan (into
# build-fuzz/) and runs each for SECONDS (default 300), KSCORE_FUZZ_JOBS
# (default 1) at a time.
#   hack/fuzz.sh [SECONDS [TARGET...]]
# Seeds come from fuzz/corpus/<target>/ and fuzz/regressions/<target>/; what
# a run finds is kept in build-fuzz/corpus/<target>/ for the next run. A
# crash leaves its input in build-fuzz/crashes/<target>/: fix it, then add
# the input to fuzz/regressions/<target>/ and a test (docs/fuzzing.md).
# Exits non-zero if any target crashed.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=hack/lib/deps.sh
source "$root/hack/lib/deps.sh"

seconds="${1:-300}"
shift || true
build="${KSCORE_FUZZ_BUILD_DIR:-$root/build-fuzz}"

kscore_install_deps
mapfile -t all < <(find "$root/fuzz/corpus" -mindepth 1 -maxdepth 1 -type d \
  -printf '%f\n' | sort)
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then targets=("${all[@]}"); fi

start=$(date +%s)
# shellcheck disable=SC2046  # one word per target
KSCORE_FUZZ_BUILD_DIR="$build" kscore_build_fuzz "$root" $(printf 'fuzz_%s ' "${targets[@]}")
echo "fuzz: build took $(($(date +%s) - start)) s" >&2

export ASAN_OPTIONS="${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
jobs="${KSCORE_FUZZ_JOBS:-1}"  # targets run at once (each is one process)
# One target: its run, then its summary line in $build/summary-<target>;
# exits non-zero if it crashed.
fuzz_one() {
  local t="$1" corpus="$build/corpus/$1" crashes="$build/crashes/$1" dict status
  mkdir -p "$corpus" "$crashes"
  local args=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048
    -print_final_stats=1 -artifact_prefix="$crashes/")
  case "$t" in
    *_json) dict=json ;;
    *_proto | watch_frame) dict=proto ;;
    *) dict="$t" ;;
  esac
  if [ -f "$root/fuzz/dict/$dict.dict" ]; then args+=(-dict="$root/fuzz/dict/$dict.dict"); fi
  local seeds=("$root/fuzz/corpus/$t")
  if [ -d "$root/fuzz/regressions/$t" ]; then seeds+=("$root/fuzz/regressions/$t"); fi
  local log="$build/fuzz-$t.log"
  echo "=== fuzz_$t for ${seconds} s (log: $log)" >&2
  if "$build/bin/fuzz_$t" "${args[@]}" "$corpus" "${seeds[@]}" >"$log" 2>&1; then
    status=ok
  else
    status=CRASH
    grep -E "^(==[0-9]+==ERROR|SUMMARY|fuzz invariant broken|.*runtime error)" "$log" \
      | head -5 >&2 || true
    ls -1 "$crashes" >&2 || true
  fi
  # libFuzzer's last status line: "#N DONE cov: C ft: F corp: ... exec/s: E".
  local line runs eps cov
  line="$(grep -E '^#[0-9]+[[:space:]]+(DONE|INITED|NEW|REDUCE|pulse)' "$log" | tail -1 || true)"
  runs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1 || true)"
  eps="$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1 || true)"
  cov="$(grep -oE 'cov: [0-9]+' <<<"$line" | tail -1 || true)"
  printf '%-17s %-5s runs %-9s exec/s %-6s %s\n' "$t" "$status" \
    "${runs:-?}" "${eps:-?}" "${cov:-cov: ?}" >"$build/summary-$t"
  [ "$status" = ok ]
}

failed=()
pids=()
for t in "${targets[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || true; done
  fuzz_one "$t" &
  pids+=("$!")
done
for i in "${!targets[@]}"; do
  wait "${pids[$i]}" || failed+=("${targets[$i]}")
done
summary=()
for t in "${targets[@]}"; do summary+=("$(cat "$build/summary-$t")"); done

echo "=== fuzz summary (${seconds} s each)" >&2
printf '%s\n' "${summary[@]}"
if [ ${#failed[@]} -gt 0 ]; then
  echo "crashed: ${failed[*]} (inputs in $build/crashes/)" >&2
  exit 1
fi
