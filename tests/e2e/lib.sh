#!/usr/bin/env bash
# Shared helpers for the end-to-end tests: a local cluster of their own,
# PASS/FAIL bookkeeping, polling with deadlines, and starting the real scorer
# and shim binaries. Source it after setting E2E_NAME.
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
CLUSTER="${ROOT}/hack/cluster.sh"
export KSCORE_CLUSTER_DIR="${KSCORE_CLUSTER_DIR:-/tmp/kscore-e2e-${E2E_NAME}}"
STATE="${KSCORE_CLUSTER_DIR}"
WORK="$(mktemp -d "/tmp/kscore-${E2E_NAME}-XXXXXX")"
TIMEOUT="${KSCORE_E2E_TIMEOUT:-60}"
passed=0
failed=0
pass() { echo "PASS: $*"; passed=$((passed + 1)); }
fail() { echo "FAIL: $*"; failed=$((failed + 1)); }
info() { echo "  .. $*"; }
check() {  # check NAME COMMAND...
  local name="$1"; shift
  if "$@"; then pass "$name"; else fail "$name"; fi
}
finish() {
  echo "${E2E_NAME}: ${passed} passed, ${failed} failed"
  ((failed == 0))
}

# poll SECONDS COMMAND...: true as soon as COMMAND succeeds, false at the deadline.
poll() {
  local deadline=$((SECONDS + $1)); shift
  until "$@" >/dev/null 2>&1; do
    ((SECONDS < deadline)) || return 1
    sleep 0.25
  done
}

# free_port: a free port on 127.0.0.1, never one this run was given before.
free_port() { python3 "${ROOT}/hack/lib/free_port.py" "${WORK}/used-ports"; }

declare -A PIDS=()
# start NAME COMMAND...: runs in the background, log in $WORK/NAME.log.
start() {
  local name="$1"; shift
  "$@" >"${WORK}/${name}.log" 2>&1 &
  PIDS[$name]=$!
}
stop() {  # stop NAME [SIGNAL]
  local pid="${PIDS[$1]:-}"
  [[ -n "$pid" ]] || return 0
  kill "-${2:-TERM}" "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  unset "PIDS[$1]"
}
log_of() { cat "${WORK}/$1.log"; }

cleanup() {
  local rc=$?
  local n
  for n in "${!PIDS[@]}"; do stop "$n" KILL; done
  if [[ "${E2E_KEEP:-0}" != 1 ]]; then
    "${CLUSTER}" down >/dev/null 2>&1 || true
    # A failed run keeps its logs (a flake can be read afterwards).
    if ((rc == 0)); then rm -rf "${WORK}"; else echo "logs kept: ${WORK}"; fi
  else
    echo "kept: cluster ${STATE}, logs ${WORK}"
  fi
  exit "$rc"
}
trap cleanup EXIT

cluster_up() {
  local out
  out="$("${CLUSTER}" up "$@")" || { fail "hack/cluster.sh up failed"; finish; exit 1; }
  KUBECONFIG_FILE="$(tail -n1 <<<"${out}")"
  BIN="$(sed -n 's/^KSCORE_BIN=//p' "${STATE}/env")"
}
k() { "${BIN}/kubectl" --kubeconfig="${KUBECONFIG_FILE}" "$@"; }

# A Deployment of pause pods: deployment NAME REPLICAS SCHEDULER [CPU_REQUEST]
deployment() {
  local cpu="${4:-}"
  local resources=""
  [[ -n "$cpu" ]] && resources="
        resources: {requests: {cpu: ${cpu}}}"
  k apply -f - >/dev/null <<YAML
apiVersion: apps/v1
kind: Deployment
metadata: {name: $1}
spec:
  replicas: $2
  selector: {matchLabels: {app: $1}}
  template:
    metadata: {labels: {app: $1}}
    spec:
      schedulerName: $3
      terminationGracePeriodSeconds: 0
      containers:
      - name: pause
        image: pause:3.9${resources}
YAML
}
# Pods of app=$1 per node, "node count" lines, the way the seed counts them.
per_node() {
  k get pods -l "app=$1" -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' | grep . | sort | uniq -c | awk '{print $2"="$1}' | tr '\n' ' '
}
bound_count() {
  k get pods -l "app=$1" -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' | grep -c . || true
}
pod_count() { k get pods -l "app=$1" --no-headers 2>/dev/null | wc -l; }
all_bound() { [[ "$(pod_count "$1")" -eq "$2" && "$(bound_count "$1")" -eq "$2" ]]; }

# The binaries under test: build/bin, or KSCORE_BIN_DIR (a sanitizer build).
KBIN="${KSCORE_BIN_DIR:-build/bin}"
scorer_up() {  # scorer_up NAME CONFIG PORT [BINARY [FLAGS...]]: the real scorer on 127.0.0.1:PORT
  local name="$1" cfg="$2" port="$3" binary="${4:-$KBIN/scorer}"
  shift $(($# < 4 ? $# : 4))
  start "$name" "$binary" --config "$cfg" --listen "127.0.0.1:$port" \
    --metrics-bind-address "127.0.0.1:$(free_port)" "$@"
  poll 20 bash -c "exec 3<>/dev/tcp/127.0.0.1/$port" || fail "$name did not listen"
}
shim_up() {  # shim_up NAME CONFIG [flags...]: the real shim, calling $SCORER
  local name="$1" cfg="$2"; shift 2
  start "$name" "$KBIN/shim" --config "$cfg" --kubeconfig "$KUBECONFIG_FILE" \
    --scorer "$SCORER" --bind-address 127.0.0.1 --secure-port "$(free_port)" -v 4 "$@"
}
events_for() {  # notes of events with reason $2 about pod $1
  k get events.events.k8s.io --field-selector "regarding.name=$1,reason=$2" \
    -o jsonpath='{range .items[*]}{.note}{"\n"}{end}'
}
first_pod() { k get pods -l "app=$1" -o jsonpath='{.items[0].metadata.name}'; }
pending_with() {  # pending_with APP TEXT: a pod of APP has a FailedScheduling event with TEXT
  local p
  for p in $(k get pods -l "app=$1" -o jsonpath='{.items[*].metadata.name}'); do
    events_for "$p" FailedScheduling | grep -qF "$2" && return 0
  done
  return 1
}
delete_app() {
  k delete deployment "$1" --wait=false >/dev/null 2>&1 || true
  poll "$TIMEOUT" bash -c "[ \"\$(\"$BIN/kubectl\" --kubeconfig=$KUBECONFIG_FILE get pods -l app=$1 --no-headers 2>/dev/null | wc -l)\" -eq 0 ]" || true
}

# ------------------------------------------------------------ control-plane faults
# The components hack/cluster.sh started (etcd, kube-apiserver, ...) can be
# stopped, stalled and started again with the command line they ran with:
# their pid files are in $STATE/pids, their command lines in /proc.
cluster_pid() { cat "${STATE}/pids/$1.pid"; }
# cluster_kill NAME SIGNAL: remembers NAME's command line, signals it and
# waits until it is gone.
cluster_kill() {
  local pid
  pid="$(cluster_pid "$1")"
  tr '\0' '\n' <"/proc/${pid}/cmdline" >"${WORK}/$1.cmdline"
  kill "-$2" "${pid}"
  poll 30 bash -c "! kill -0 ${pid}"
}
# cluster_start_again NAME [FLAGS...]: NAME again, with the command line
# cluster_kill saw (and FLAGS after it), in its own session, logging to
# its log; hack/cluster.sh down stops it.
cluster_start_again() {
  local name="$1" cmd
  shift
  mapfile -t cmd <"${WORK}/${name}.cmdline"
  # shellcheck disable=SC2016  # $$ and $@ belong to the inner shell
  setsid bash -c 'echo $$ >"$0"; exec "$@"' "${STATE}/pids/${name}.pid" "${cmd[@]}" "$@" \
    </dev/null >>"${STATE}/logs/${name}.log" 2>&1 &
  disown $!  # killed by a later cluster_kill: no "Killed" notice from this shell
}
apiserver_ready() { k get --raw /readyz >/dev/null 2>&1; }
