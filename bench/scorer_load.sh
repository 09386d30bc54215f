#!/usr/bin/env bash
# Load on the scorer: one scorer binary on loopback, driven by bench/scorer_load
# (many concurrent Evaluate calls with the shim's own requests), then the size
# limits checked. No control plane: the scorer alone is measured.
#
# Usage:
#   bench/scorer_load.sh [--concurrency 64] [--duration 60] [--rounds 2]
#                        [--min-nodes 100] [--max-nodes 500] [--client-threads 1]
#                        [--max-requests 2000000] [--no-save]
# Each round keeps --concurrency calls in flight for --duration seconds (at most
# --max-requests calls); the scorer's VmRSS is read before and after each round.
# Requests: a pool of 48, pods of three kinds (scheduler_perf's basic pod under
# the Concentrate profile and under the stock profile, and the spread/anti-affinity
# pod under the stock profile), each with --min-nodes..--max-nodes candidates of a
# 5000-node cache, built by the shim's code (Plan, RequestHead, AppendCandidates).
# Then a request one node over the scorer's --max-request-bytes (default 64 MiB)
# must be refused RESOURCE_EXHAUSTED and a batch one node over --max-batch-nodes
# (default 5000) INVALID_ARGUMENT, quickly, the scorer's RSS not jumping.
#
# Results (unless --no-save): bench/results/scorer-load-c<C>-<time>.md (the summary)
# and .tar.xz (the JSON, the generator's output and the scorer's log), as
# bench/results/README.md describes. Binaries from build/bin (built here), or
# KSCORE_BIN_DIR. Exits non-zero if a call failed or a limit did not hold.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "${ROOT}"

CONCURRENCY=64 DURATION=60 ROUNDS=2 MIN_NODES=100 MAX_NODES=500 THREADS=1
MAX_REQUESTS=2000000 SAVE=1
MAX_REQUEST_BYTES=$((64 << 20)) MAX_BATCH=5000
while (($#)); do
  case "$1" in
    --concurrency) CONCURRENCY="$2"; shift 2 ;;
    --duration) DURATION="$2"; shift 2 ;;
    --rounds) ROUNDS="$2"; shift 2 ;;
    --min-nodes) MIN_NODES="$2"; shift 2 ;;
    --max-nodes) MAX_NODES="$2"; shift 2 ;;
    --client-threads) THREADS="$2"; shift 2 ;;
    --max-requests) MAX_REQUESTS="$2"; shift 2 ;;
    --no-save) SAVE=0; shift ;;
    *) echo "usage: $0 [--concurrency N] [--duration S] [--rounds R] [--min-nodes N] [--max-nodes N] [--client-threads T] [--max-requests N] [--no-save]" >&2; exit 2 ;;
  esac
done

log() { echo "[scorer_load $(date +%H:%M:%S)] $*" >&2; }
if [[ -n "${KSCORE_BIN_DIR:-}" ]]; then
  BIN="${KSCORE_BIN_DIR}"
else
  # shellcheck source=hack/lib/deps.sh
  source hack/lib/deps.sh
  KSCORE_NINJA_TARGETS="scorer scorer_load" kscore_build "${ROOT}"
  BIN="${ROOT}/build/bin"
fi

STAMP="$(date +%Y%m%d-%H%M%S)"
TAG="scorer-load-c${CONCURRENCY}-${STAMP}"
WORK="$(mktemp -d)"
RAW="${WORK}/${TAG}"
mkdir -p "${RAW}"
SCORER_PID=""
cleanup() {
  local rc=$?
  if [[ -n "${SCORER_PID}" ]]; then kill -TERM "${SCORER_PID}" 2>/dev/null || true; wait "${SCORER_PID}" 2>/dev/null || true; fi
  rm -rf "${WORK}"
  exit "${rc}"
}
trap cleanup EXIT

# Both profiles the requests use: the seed's Concentrate one and kube-scheduler's
# stock one under another name.
{
  cat examples/config/concentrate.yaml
  echo "- schedulerName: kscore-default"
} >"${WORK}/config.yaml"

for try in 1 2 3; do  # a port picked free can be taken before the scorer binds it
  PORT="$(python3 hack/lib/free_port.py "${WORK}/used-ports")"
  "${BIN}/scorer" --config "${WORK}/config.yaml" --listen "127.0.0.1:${PORT}" \
    --metrics-bind-address 0 --max-request-bytes "${MAX_REQUEST_BYTES}" \
    --max-batch-nodes "${MAX_BATCH}" >"${RAW}/scorer.log" 2>&1 &
  SCORER_PID=$!
  deadline=$((SECONDS + 30))
  until grep -q "scorer serving" "${RAW}/scorer.log"; do
    kill -0 "${SCORER_PID}" 2>/dev/null || break
    ((SECONDS < deadline)) || { log "scorer not serving after 30 s"; exit 1; }
    sleep 0.1
  done
  grep -q "scorer serving" "${RAW}/scorer.log" && break
  wait "${SCORER_PID}" || true; SCORER_PID=""
  ((try < 3)) || { cat "${RAW}/scorer.log" >&2; exit 1; }
done

host_info="commit $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- scorer shim bench proto 2>/dev/null || echo " + uncommitted changes"), $(nproc) CPUs, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -r)"
load_before="$(cut -d' ' -f1-3 /proc/loadavg)"
log "scorer pid ${SCORER_PID} on 127.0.0.1:${PORT}; ${ROUNDS} round(s) of ${DURATION} s at concurrency ${CONCURRENCY} (load ${load_before})"
rc=0
"${BIN}/scorer_load" --target "127.0.0.1:${PORT}" --scorer-pid "${SCORER_PID}" \
  --concurrency "${CONCURRENCY}" --client-threads "${THREADS}" --duration-seconds "${DURATION}" \
  --rounds "${ROUNDS}" --max-requests "${MAX_REQUESTS}" --min-nodes "${MIN_NODES}" \
  --max-nodes "${MAX_NODES}" --max-request-bytes "${MAX_REQUEST_BYTES}" \
  --max-batch-nodes "${MAX_BATCH}" --out "${RAW}/load.json" 2>&1 | tee "${RAW}/load.txt" || rc=$?
load_after="$(cut -d' ' -f1-3 /proc/loadavg)"
# What else was running (CPU over one second, second frame of top).
others="$(top -b -n 2 -d 1 -w 200 | awk '/^top -/ {f++} f == 2' | sed -n '7,13p' | awk '$9 > 3.0' | cut -c1-120 || true)"
kill -TERM "${SCORER_PID}" 2>/dev/null || true
wait "${SCORER_PID}" 2>/dev/null || true
SCORER_PID=""
[[ -f "${RAW}/load.json" ]] || { log "no results (${RAW}/load.txt)"; exit 1; }

python3 - "${RAW}/load.json" "${host_info}" "${load_before}" "${load_after}" "${others}" >"${RAW}/summary.md" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
host, lb, la, others = sys.argv[2:6]
mib = lambda k: k / 1024
print(f"# Load on the scorer: {d['concurrency']} calls in flight, {len(d['rounds'])} x {d['duration_seconds']} s\n")
print(f"{host}; load average {lb} before, {la} after. The 2 cores are shared with other "
      "work (below): read the figures with that in mind. Client and scorer run on the same "
      "machine; the client's CPU is in the table.\n")
print(f"Requests: {d['pool']} built by the shim's code from a {d['cluster_nodes']}-node cache, "
      f"{d['min_nodes']}..{d['max_nodes']} candidates each (mean {d['pool_mean_nodes']:.0f} nodes, "
      f"{d['pool_mean_bytes']:.0f} bytes), sent in turn; {d['client_threads']} client thread(s).\n")
print("| round | calls | calls/s | nodes/s | p50 ms | p90 ms | p99 ms | max ms | errors | scorer CPU s | scorer CPU µs/node | client CPU s | scorer RSS after MiB |")
print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
print(f"| before | | | | | | | | | | | | {mib(d['scorer_rss_kib_before']):.1f} |")
for r in d["rounds"]:
    print(f"| {r['round']} | {r['calls']} | {r['requests_per_s']:.0f} | {r['nodes_per_s']:.0f} | "
          f"{r['p50_ms']:.1f} | {r['p90_ms']:.1f} | {r['p99_ms']:.1f} | {r['max_ms']:.1f} | "
          f"{r['errors'] + r['incomplete']} | {r['scorer_cpu_s']:.1f} | "
          f"{1e6 * r['scorer_cpu_s'] / max(1, r['nodes_per_s'] * r['seconds']):.2f} | {r['client_cpu_s']:.1f} | "
          f"{mib(r['scorer_rss_kib_after']):.1f} |")
rs = [r["scorer_rss_kib_after"] for r in d["rounds"]]
if len(rs) >= 2 and rs[0]:
    print(f"\nRSS after the last round is {100 * (rs[-1] - rs[0]) / rs[0]:+.1f}% against RSS after the first.")
cpu = sum(r["scorer_cpu_s"] for r in d["rounds"]); wall = sum(r["seconds"] for r in d["rounds"])
print(f"The scorer had {cpu:.1f} CPU seconds in {wall:.0f} s ({100 * cpu / wall:.0f}% of one core): "
      "on a machine this busy the calls/s follow its share of the CPU; the CPU per node does not.")
print("\n| size limit | request | answers | p50 ms | max ms | scorer RSS MiB before → max seen → after |")
print("|---|---:|---|---:|---:|---|")
for l in d["limits"]:
    ans = "; ".join(f"{n} x {k}" for k, n in l["answers"].items())
    print(f"| {l['check']} | {l['request_bytes'] / 1048576:.1f} MiB, {l['request_nodes']} nodes | {ans} | "
          f"{l['p50_ms']:.1f} | {l['max_ms']:.1f} | {mib(l['scorer_rss_kib_before']):.1f} → "
          f"{mib(l['scorer_rss_kib_max_seen']):.1f} → {mib(l['scorer_rss_kib_after']):.1f} |")
print(f"\nScorer RSS at the end: {mib(d['scorer_rss_kib_end']):.1f} MiB, peak (VmHWM) {mib(d['scorer_hwm_kib_end']):.1f} MiB. "
      f"Overall: {'PASS' if d['ok'] else 'FAIL'}.")
if others.strip():
    print("\nBusiest other processes (top, one second):\n\n```\n" + others + "\n```")
EOF
cat "${RAW}/summary.md"
if ((SAVE)); then
  RESULTS="${ROOT}/bench/results"
  cp "${RAW}/summary.md" "${RESULTS}/${TAG}.md"
  # The raw data as one archive holding <tag>/ (Python's lzma: no xz binary needed).
  python3 - "${RAW}" "${TAG}" "${RESULTS}/${TAG}.tar.xz" <<'EOF'
import os, sys, tarfile
raw, tag, out = sys.argv[1:]
with tarfile.open(out, "w:xz", preset=9) as t:
    for f in sorted(os.listdir(raw)):
        t.add(os.path.join(raw, f), arcname=os.path.join(tag, f))
EOF
  log "results: bench/results/${TAG}.md and .tar.xz"
fi
exit "${rc}"
