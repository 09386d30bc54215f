#!/usr/bin/env bash
# End-to-end: what node churn costs while many pods cannot be scheduled, on
# a real local control plane (hack/cluster.sh, 3 nodes of 4 CPUs).
# KSCORE_REQUEUE_PODS pods (default 1000) ask for 8 CPUs, so NodeResourcesFit
# rejects them everywhere. Then the nodes churn: relabelled, tainted and
# untainted, cordoned and uncordoned, 4-CPU nodes added and deleted. None of
# that can make an 8-CPU pod fit, so kube-scheduler's queueing hints keep
# every pod waiting: the run checks that kscore makes no scheduling attempt
# for it either, and prints the scorer calls it cost (Evaluate and
# QueueingHint). Then a 16-CPU node is added: the pods are tried again and
# two are bound, so none was forgotten.
# KSCORE_REQUEUE_BIN (default build/bin) picks the shim and scorer binaries,
# to measure another build with the same script. Needs build/bin/{scorer,shim}.
set -euo pipefail
E2E_NAME=requeue
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$ROOT"

PODS="${KSCORE_REQUEUE_PODS:-1000}"
ROUNDS="${KSCORE_REQUEUE_ROUNDS:-5}"
BIN_DIR="${KSCORE_REQUEUE_BIN:-build/bin}"
cluster_up --nodes 3
SCORER_PORT="$(free_port)"
SCORER="127.0.0.1:${SCORER_PORT}"
METRICS="127.0.0.1:$(free_port)"
cat >"$WORK/config.yaml" <<YAML
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: kscore
YAML
scorer_up scorer "$WORK/config.yaml" "$SCORER_PORT" "$BIN_DIR/scorer"
start shim "$BIN_DIR/shim" --config "$WORK/config.yaml" \
  --kubeconfig "$KUBECONFIG_FILE" --scorer "$SCORER" \
  --bind-address 127.0.0.1 --secure-port "$(free_port)" --insecure-serving-address "$METRICS" --leader-elect=false -v 2

metric() {  # metric SERIES: its value (0 when absent)
  local v
  v="$(curl -sf "http://$METRICS/metrics" | grep -F "$1 " | awk '{print $2}' | head -1)"
  printf '%.0f\n' "${v:-0}"
}
attempts() {  # every scheduling attempt so far, whatever its result
  curl -sf "http://$METRICS/metrics" |
    awk '/^scheduler_schedule_attempts_total\{/ {s += $2} END {printf "%.0f\n", s}'
}
calls() { metric 'kscore_scorer{counter="calls"}'; }
hint_calls() { metric 'kscore_scorer{counter="hint_calls"}'; }
waiting() { metric 'scheduler_pending_pods{queue="unschedulable"}'; }
# Every pod waits for an event and none is being tried.
settled() {
  [[ "$(waiting)" -eq "$1" &&
    "$(metric 'scheduler_pending_pods{queue="active"}')" -eq 0 &&
    "$(metric 'scheduler_pending_pods{queue="backoff"}')" -eq 0 ]]
}
poll 30 curl -sf "http://$METRICS/healthz" >/dev/null || fail "shim did not serve"

# ------------------------------------------------------------ the waiting pods
manifest="$WORK/pods.yaml"
: >"$manifest"
for i in $(seq 1 "$PODS"); do
  cat >>"$manifest" <<YAML
---
apiVersion: v1
kind: Pod
metadata: {name: big-$i, labels: {app: big}}
spec:
  schedulerName: kscore
  terminationGracePeriodSeconds: 0
  containers:
  - {name: pause, image: pause:3.9, resources: {requests: {cpu: "8"}}}
YAML
done
t0=$SECONDS
k create -f "$manifest" >/dev/null
if poll 300 settled "$PODS"; then
  pass "$PODS pods of 8 CPUs wait as unschedulable ($((SECONDS - t0))s)"
else
  fail "pods did not settle: $(waiting) unschedulable"
fi
k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: marker}
spec:
  schedulerName: kscore
  nodeSelector: {churn: done}
  containers:
  - {name: pause, image: pause:3.9, resources: {requests: {cpu: 100m}}}
YAML
poll 60 settled "$((PODS + 1))" || fail "the marker did not wait"
check "NodeResourcesFit is named as what rejected them" \
  bash -c "curl -sf http://$METRICS/metrics | grep -qF 'scheduler_unschedulable_pods{plugin=\"NodeResourcesFit\",profile=\"kscore\"} $PODS'"

# ------------------------------------------------------------ node churn
unschedulable_attempts() {
  curl -sf "http://$METRICS/metrics" |
    awk '/^scheduler_schedule_attempts_total\{.*result="unschedulable"/ {s += $2} END {printf "%.0f\n", s}'
}
a0="$(unschedulable_attempts)" c0="$(calls)" h0="$(hint_calls)"
node() {  # node NAME CPU: a kubelet-less node, as hack/cluster.sh makes them
  k create -f - >/dev/null <<YAML
apiVersion: v1
kind: Node
metadata:
  name: $1
  labels: {kubernetes.io/hostname: $1, topology.kubernetes.io/zone: zone-a, type: kwok}
  annotations: {kwok.x-k8s.io/node: fake}
status:
  capacity: {cpu: "$2", memory: 16Gi, pods: "110"}
  allocatable: {cpu: "$2", memory: 16Gi, pods: "110"}
YAML
}
events=0
for r in $(seq 1 "$ROUNDS"); do
  k label node kscore-node-1 "churn=r$r" --overwrite >/dev/null
  k taint node kscore-node-2 "churn=r$r:NoSchedule" >/dev/null
  k taint node kscore-node-2 churn:NoSchedule- >/dev/null
  k cordon kscore-node-3 >/dev/null
  k uncordon kscore-node-3 >/dev/null
  node "churn-$r" 4
  k delete node "churn-$r" >/dev/null
  events=$((events + 7))
done
# The marker waits for the last change: once it is bound, the shim has seen
# every change before it (one node informer, in order).
k label node kscore-node-1 churn=done --overwrite >/dev/null
if poll 120 bash -c "[[ -n \$(\"$BIN/kubectl\" --kubeconfig=$KUBECONFIG_FILE get pod marker -o jsonpath='{.spec.nodeName}') ]]"; then
  pass "the marker is bound once its label comes: the churn has been seen"
else
  fail "the marker was not bound"
fi
poll 120 settled "$PODS" || fail "pods did not settle after the churn"
a1="$(unschedulable_attempts)" c1="$(calls)" h1="$(hint_calls)"
info "churn: $events node changes in $ROUNDS rounds with $PODS pods waiting:" \
  "$((a1 - a0)) failed scheduling attempts, $((c1 - c0 - (h1 - h0))) Evaluate/Plan" \
  "calls (the marker's included), $((h1 - h0)) QueueingHint calls"
if [[ $((a1 - a0)) -eq 0 ]]; then
  pass "no pod was tried again for changes that cannot make it fit"
else
  fail "$((a1 - a0)) failed attempts for changes that cannot make a pod fit"
fi

# ------------------------------------------------------------ room at last
b0="$(attempts)"
node big-node 16
if poll 120 bash -c "[[ \$(\"$BIN/kubectl\" --kubeconfig=$KUBECONFIG_FILE get pods -l app=big --field-selector spec.nodeName=big-node --no-headers 2>/dev/null | wc -l) -eq 2 ]]"; then
  pass "a 16-CPU node brings the pods back: 2 bound on it"
else
  fail "no pod was bound on the 16-CPU node"
fi
poll 120 settled "$((PODS - 2))" || fail "the rest did not settle again"
b1="$(attempts)"
info "the 16-CPU node: $((b1 - b0)) scheduling attempts"
check "every waiting pod was tried again (>= $PODS attempts)" \
  test "$((b1 - b0))" -ge "$PODS"
finish
