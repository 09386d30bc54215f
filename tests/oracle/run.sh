#!/usr/bin/env bash
# The differential oracle: kube-scheduler's own plugins (reference/cmd/oracle,
# in process) and kscore (build/bin/oracle_driver: the shim's cache and
# request building, the scorer's service) answer the same generated clusters;
# every filter verdict and score must agree.
#
#   tests/oracle/run.sh [--cases N] [--seed S]
# Defaults: 2000 cases, a fresh seed (printed, so a failure can be re-run).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cases=2000
seed="$(date +%s)"
while [ $# -gt 0 ]; do
  case "$1" in
    --cases) cases="$2"; shift 2 ;;
    --seed) seed="$2"; shift 2 ;;
    *) echo "usage: $0 [--cases N] [--seed S]" >&2; exit 2 ;;
  esac
done
driver="$root/build/bin/oracle_driver"
[ -x "$driver" ] || { echo "missing $driver: build first" >&2; exit 1; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
echo "oracle: $cases cases, seed $seed"
(cd "$root/reference" && go build -o "$work/oracle" ./cmd/oracle)
"$work/oracle" gen --seed "$seed" --cases "$cases" --out "$work/cases.jsonl"
"$driver" --cases "$work/cases.jsonl" --out "$work/got.jsonl"
"$work/oracle" compare --cases "$work/cases.jsonl" --got "$work/got.jsonl"
