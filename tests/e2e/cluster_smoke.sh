#!/usr/bin/env bash
# Smoke test of the local control plane (hack/cluster.sh) and the reference scheduler.
#
#   tests/e2e/cluster_smoke.sh
#
# Brings a cluster up in its own state dir (KSCORE_CLUSTER_DIR, default
# /tmp/kscore-smoke-cluster), or, with KSCORE_SMOKE_REUSE=1, uses the one already running
# in KSCORE_CLUSTER_DIR (default /tmp/kscore-cluster) and leaves it running.
# Checks, each printed as PASS/FAIL:
#   1. nodes: exactly 3 nodes, all Ready, none tainted
#   2. default-scheduler spreads the seed's `spread` Deployment (6 x pause, app=spread):
#      all 6 bound (and Running when kwok runs), every node gets at least 1 and none
#      more than 3 (2/2/2 is reported when it happens, not required)
#   3. a second reference kube-scheduler starts with examples/config/concentrate.yaml
#   4. a 6-replica Deployment with schedulerName concentrate-scheduler lands all 6 pods
#      on one node
#   5. down stops every process up started (each recorded pid is gone) and removes the
#      state dir (skipped with KSCORE_SMOKE_REUSE=1)
# Exit status is non-zero when any check fails. Every wait polls with a deadline.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
CLUSTER="${ROOT}/hack/cluster.sh"
REUSE="${KSCORE_SMOKE_REUSE:-0}"
if [[ "${REUSE}" == 1 ]]; then
  export KSCORE_CLUSTER_DIR="${KSCORE_CLUSTER_DIR:-/tmp/kscore-cluster}"
else
  export KSCORE_CLUSTER_DIR="${KSCORE_CLUSTER_DIR:-/tmp/kscore-smoke-cluster}"
fi
STATE="${KSCORE_CLUSTER_DIR}"
TIMEOUT="${KSCORE_SMOKE_TIMEOUT:-90}"   # seconds per wait
NS="kscore-smoke"

passed=0
failed=0
pass() { echo "PASS: $*"; passed=$((passed + 1)); }
fail() { echo "FAIL: $*"; failed=$((failed + 1)); }
info() { echo "  .. $*"; }

# poll SECONDS COMMAND... — true as soon as COMMAND succeeds, false at the deadline.
poll() {
  local deadline=$((SECONDS + $1)); shift
  until "$@" >/dev/null 2>&1; do
    ((SECONDS < deadline)) || return 1
    sleep 0.5
  done
}

finish() {
  echo "cluster_smoke: ${passed} passed, ${failed} failed"
  ((failed == 0))
}

pids_started=""
teardown_on_exit() {
  local rc=$?
  if [[ "${REUSE}" != 1 && -d "${STATE}/pids" && "${torn_down:-0}" != 1 ]]; then
    "${CLUSTER}" down >/dev/null 2>&1 || true
  fi
  exit "${rc}"
}
trap teardown_on_exit EXIT

# --------------------------------------------------------------------- up
if [[ "${REUSE}" == 1 ]]; then
  "${CLUSTER}" status >/dev/null || { fail "no running cluster in ${STATE} (KSCORE_SMOKE_REUSE=1)"; finish; exit 1; }
  KUBECONFIG_FILE="$(sed -n 's/^KUBECONFIG=//p' "${STATE}/env")"
else
  t0=${SECONDS}
  if ! out="$("${CLUSTER}" up)"; then
    fail "hack/cluster.sh up failed"
    finish; exit 1
  fi
  KUBECONFIG_FILE="$(tail -n1 <<<"${out}")"
  info "up took $((SECONDS - t0))s; kubeconfig ${KUBECONFIG_FILE}"
fi
[[ -f "${KUBECONFIG_FILE}" ]] || { fail "kubeconfig '${KUBECONFIG_FILE}' printed by up does not exist"; finish; exit 1; }
BIN="$(sed -n 's/^KSCORE_BIN=//p' "${STATE}/env")"
KWOK="$(sed -n 's/^KWOK=//p' "${STATE}/env")"
k() { "${BIN}/kubectl" --kubeconfig="${KUBECONFIG_FILE}" "$@"; }
info "$(k version 2>/dev/null | tr '\n' ' ')"
pids_started="$(cat "${STATE}"/pids/*.pid 2>/dev/null | tr '\n' ' ')"

# placement LABEL — "count node" lines for the pods of app=LABEL that are bound.
placement() {
  k -n "${NS}" get pods -l "app=$1" -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' |
    grep . | sort | uniq -c | sort -rn
}
# all_bound LABEL N — N pods of app=LABEL exist, all bound (and Running with kwok).
all_bound() {
  local want="${2}" out
  out="$(k -n "${NS}" get pods -l "app=$1" -o jsonpath='{range .items[*]}{.spec.nodeName} {.status.phase}{"\n"}{end}')"
  [[ "$(grep -c . <<<"${out}")" -eq "${want}" ]] || return 1
  if [[ "${KWOK}" == true ]]; then
    [[ "$(grep -c '^[^ ][^ ]* Running$' <<<"${out}")" -eq "${want}" ]]
  else
    [[ "$(grep -c '^[^ ][^ ]* ' <<<"${out}")" -eq "${want}" ]]
  fi
}
deployment() { # NAME [SCHEDULER]
  cat <<EOF
apiVersion: apps/v1
kind: Deployment
metadata:
  name: $1
  namespace: ${NS}
spec:
  replicas: 6
  selector:
    matchLabels: {app: $1}
  template:
    metadata:
      labels: {app: $1}
    spec:
      ${2:+schedulerName: $2}
      terminationGracePeriodSeconds: 0
      containers:
      - name: pause
        image: pause:3.9
EOF
}
diagnose() { # LABEL
  k -n "${NS}" get pods -l "app=$1" -o wide 2>&1 | sed 's/^/  | /'
  k -n "${NS}" get events --sort-by=.lastTimestamp 2>&1 | tail -n 10 | sed 's/^/  | /'
}

# --------------------------------------------------------------------- 1. nodes
nodes_ok() {
  local out
  out="$(k get nodes -o jsonpath='{range .items[*]}{.metadata.name} {.status.conditions[?(@.type=="Ready")].status} {.spec.taints}{"\n"}{end}')"
  [[ "$(grep -c . <<<"${out}")" -eq 3 ]] && ! grep -qv '^[^ ]* True $' <<<"${out}"
}
if poll "${TIMEOUT}" nodes_ok; then
  pass "3 nodes Ready, no taints ($(k get nodes -o jsonpath='{.items[*].metadata.name}'))"
else
  fail "want 3 Ready untainted nodes; got:"
  k get nodes -o wide 2>&1 | sed 's/^/  | /'
fi

k create namespace "${NS}" >/dev/null 2>&1 || true
poll "${TIMEOUT}" k -n "${NS}" get serviceaccount default || info "service account ${NS}/default did not appear"

# --------------------------------------------------------------------- 2. spread
deployment spread | k apply -f - >/dev/null
if poll "${TIMEOUT}" all_bound spread 6; then
  counts="$(placement spread)"
  max="$(awk 'NR==1{print $1}' <<<"${counts}")"
  used="$(grep -c . <<<"${counts}")"
  summary="$(awk '{printf "%s%s=%s", (NR>1?", ":""), $2, $1}' <<<"${counts}")"
  if [[ "${used}" -eq 3 && "${max}" -le 3 ]]; then
    even=""; [[ "${max}" -eq 2 ]] && even=" (even 2/2/2)"
    pass "default-scheduler spread 6 pods over 3 nodes, max ${max} per node${even}: ${summary}"
  else
    fail "default-scheduler: want all 3 nodes used and <= 3 per node; got ${summary}"
  fi
else
  fail "spread: 6 pods not all bound$([[ "${KWOK}" == true ]] && echo "/Running") within ${TIMEOUT}s"
  diagnose spread
fi

# --------------------------------------------------------------------- 3. concentrate scheduler
if "${CLUSTER}" scheduler --config "${ROOT}/examples/config/concentrate.yaml" --name concentrate >/dev/null; then
  pass "reference kube-scheduler started with examples/config/concentrate.yaml (pid $(cat "${STATE}/pids/scheduler-concentrate.pid"))"
  pids_started="$(cat "${STATE}"/pids/*.pid 2>/dev/null | tr '\n' ' ')"
else
  fail "could not start the concentrate scheduler (log: ${STATE}/logs/scheduler-concentrate.log)"
fi

# --------------------------------------------------------------------- 4. concentrate
deployment concentrate concentrate-scheduler | k apply -f - >/dev/null
if poll "${TIMEOUT}" all_bound concentrate 6; then
  counts="$(placement concentrate)"
  summary="$(awk '{printf "%s%s=%s", (NR>1?", ":""), $2, $1}' <<<"${counts}")"
  if [[ "$(grep -c . <<<"${counts}")" -eq 1 && "$(awk '{print $1}' <<<"${counts}")" -eq 6 ]]; then
    pass "concentrate-scheduler put all 6 pods on one node: ${summary}"
  else
    fail "concentrate-scheduler: want 6 pods on one node; got ${summary}"
  fi
  by="$(k -n "${NS}" get events --field-selector reason=Scheduled -o jsonpath='{range .items[*]}{.reportingComponent}{"\n"}{end}' | sort | uniq -c | awk "{printf \"%s%s x%s\", (NR>1?\", \":\"\"), \$2, \$1}")"
  info "Scheduled events by reporting controller: ${by}"
else
  fail "concentrate: 6 pods not all bound within ${TIMEOUT}s"
  diagnose concentrate
fi

# --------------------------------------------------------------------- 5. down
if [[ "${REUSE}" == 1 ]]; then
  k delete namespace "${NS}" --wait=false >/dev/null 2>&1 || true
  info "KSCORE_SMOKE_REUSE=1: cluster left running; down check skipped"
else
  "${CLUSTER}" down 2>/dev/null || true
  torn_down=1
  left=""
  for p in ${pids_started}; do
    kill -0 "${p}" 2>/dev/null && left+=" ${p}($(tr '\0' ' ' <"/proc/${p}/cmdline" | cut -c1-60))"
  done
  if [[ -z "${left}" && ! -e "${STATE}" ]]; then
    pass "down stopped all $(wc -w <<<"${pids_started}") processes up started (${pids_started% }) and removed ${STATE}"
  else
    fail "after down: still running:${left:- none}; state dir $([[ -e "${STATE}" ]] && echo exists || echo removed)"
  fi
fi

finish
