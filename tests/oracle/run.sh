#!/usr/bin/env bash
# The differential oracle: kube-scheduler's own plugins (reference/cmd/oracle,
# in process) and kscore (build/bin/oracle_driver: the shim's cache and
# request building, the scorer's service) answer the same generated clusters;
# every filter verdict and score must agree. Then the preemption cases:
# upstream's DefaultPreemption (PostFilter) and the scorer's Preempt must
# pick the same node and victims, or fail with the same message.
#
#   tests/oracle/run.sh [--cases N] [--preempt-cases N] [--seed S]
# Defaults: 2000 cases of each kind (0 skips a kind), a fresh seed (printed,
# so a failure can be re-run). Both kinds carry storage objects: the filter
# and score cases gen --volumes' (claims, volumes, classes, CSI drivers and
# capacities, CSINodes and VolumeAttachments, over the same clusters), the
# preemption cases gen-preempt --volumes' (volume limits, ReadWriteOncePod
# claims and in-tree disks that decide the victims, in about half of
# them). Fails when either kind has a mismatch.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cases=2000
preempt_cases=2000
seed="$(date +%s)"
while [ $# -gt 0 ]; do
  case "$1" in
    --cases) cases="$2"; shift 2 ;;
    --preempt-cases) preempt_cases="$2"; shift 2 ;;
    --seed) seed="$2"; shift 2 ;;
    *) echo "usage: $0 [--cases N] [--preempt-cases N] [--seed S]" >&2; exit 2 ;;
  esac
done
driver="$root/build/bin/oracle_driver"
[ -x "$driver" ] || { echo "missing $driver: build first" >&2; exit 1; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
(cd "$root/reference" && go build -o "$work/oracle" ./cmd/oracle)
status=0
if [ "$cases" -gt 0 ]; then
  echo "oracle: $cases cases, seed $seed"
  "$work/oracle" gen --volumes --seed "$seed" --cases "$cases" --out "$work/cases.jsonl"
  "$driver" --cases "$work/cases.jsonl" --out "$work/got.jsonl"
  "$work/oracle" compare --cases "$work/cases.jsonl" --got "$work/got.jsonl" || status=1
fi
if [ "$preempt_cases" -gt 0 ]; then
  echo "oracle: $preempt_cases preemption cases, seed $seed"
  "$work/oracle" gen-preempt --volumes --seed "$seed" --cases "$preempt_cases" --out "$work/preempt.jsonl"
  "$driver" --preempt --cases "$work/preempt.jsonl" --out "$work/preempt_got.jsonl"
  "$work/oracle" compare-preempt --cases "$work/preempt.jsonl" --got "$work/preempt_got.jsonl" || status=1
fi
exit "$status"
