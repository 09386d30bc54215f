#!/usr/bin/env bash
# End-to-end: preemption (DefaultPreemption) on a real local control plane,
# 3 kwok nodes of 4 CPUs. Low-priority pods fill the nodes (placed with
# spec.nodeName, a finalizer holding each one while it terminates):
#   node-1: n1 (priority 300, 3500m)   node-2: n2 (100)   node-3: n3 (200)
# 1. high-1 (priority 1000, 3000m) preempts exactly n2 (the lowest highest
#    victim priority): n2 gets DisruptionTarget and a Preempted event, high-1
#    is nominated to node-2 and bound there once n2 is gone; mid (priority
#    500, preemptionPolicy Never, 1500m), created while n2 terminates, does
#    not take the room nominated for high-1.
# 2. A PodDisruptionBudget protects n3: high-2 preempts n1 on node-1 (no
#    violation) rather than n3 (lower priority, but protected).
# 3. never (priority 1000, preemptionPolicy Never) stays Pending with
#    upstream's PostFilter message.
# 4. A pod nominated to node-2 keeps its room from mid once high-1 goes.
# Finally: every pod bound at most once, no node's requests above 4 CPUs.
# Needs build/bin/{scorer,shim}.
set -euo pipefail
E2E_NAME=preempt
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$ROOT"

cluster_up --nodes 3
SCORER_PORT="$(free_port)"
SCORER="127.0.0.1:${SCORER_PORT}"
cat >"$WORK/config.yaml" <<YAML
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: kscore
YAML
scorer_up scorer "$WORK/config.yaml" "$SCORER_PORT"
SHIM_METRICS="127.0.0.1:$(free_port)"
shim_up shim "$WORK/config.yaml" --leader-elect=false --insecure-serving-address "$SHIM_METRICS"

k apply -f - >/dev/null <<YAML
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: p100}
value: 100
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: p200}
value: 200
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: p300}
value: 300
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: p500-never}
value: 500
preemptionPolicy: Never
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: p1000}
value: 1000
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: p1000-never}
value: 1000
preemptionPolicy: Never
YAML

pod() {  # pod NAME CLASS CPU [NODE]: a pause pod; on NODE directly, else scheduled by kscore
  local placement="schedulerName: kscore"
  [[ -n "${4:-}" ]] && placement="nodeName: $4"
  k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata:
  name: $1
  labels: {app: $1, e2e: preempt}
  finalizers: [kscore.e2e/hold]
spec:
  $placement
  priorityClassName: $2
  terminationGracePeriodSeconds: 0
  containers:
  - name: pause
    image: pause:3.9
    resources: {requests: {cpu: $3}}
YAML
}
node_of() { k get pod "$1" -o jsonpath='{.spec.nodeName}' 2>/dev/null; }
nominated() { k get pod "$1" -o jsonpath='{.status.nominatedNodeName}' 2>/dev/null; }
is_node() { [[ "$(node_of "$1")" == "$2" ]]; }
is_nominated() { [[ "$(nominated "$1")" == "$2" ]]; }
terminating() { [[ -n "$(k get pod "$1" -o jsonpath='{.metadata.deletionTimestamp}' 2>/dev/null)" ]]; }
alive() { k get pod "$1" >/dev/null 2>&1 && ! terminating "$1"; }
release() { k patch pod "$1" --type=json -p '[{"op":"remove","path":"/metadata/finalizers"}]' >/dev/null 2>&1 || true; }
gone() { ! k get pod "$1" >/dev/null 2>&1; }
disruption() {  # the DisruptionTarget condition: status/reason/message
  k get pod "$1" -o jsonpath='{range .status.conditions[?(@.type=="DisruptionTarget")]}{.status}/{.reason}/{.message}{end}'
}
running() { [[ "$(k get pod "$1" -o jsonpath='{.status.phase}' 2>/dev/null)" == Running ]]; }

pod n1 p300 3500m kscore-node-1
pod n2 p100 3500m kscore-node-2
pod n3 p200 3500m kscore-node-3
for p in n1 n2 n3; do poll "$TIMEOUT" running "$p" || fail "$p did not start"; done

# 1. high-1 preempts n2.
pod high-1 p1000 3000m
check "high-1 is nominated to kscore-node-2" poll "$TIMEOUT" is_nominated high-1 kscore-node-2
check "n2 is being deleted" poll "$TIMEOUT" terminating n2
check "n2 has DisruptionTarget: True/PreemptionByScheduler" bash -c \
  "[ \"\$1\" = 'True/PreemptionByScheduler/kscore: preempting to accommodate a higher priority pod' ]" _ "$(disruption n2)"
uid="$(k get pod high-1 -o jsonpath='{.metadata.uid}')"
has_event() {  # has_event POD REASON TEXT
  events_for "$1" "$2" | grep -qF "$3"
}
check "n2's event: Preempted by pod <high-1's uid> on node kscore-node-2" \
  poll "$TIMEOUT" has_event n2 Preempted "Preempted by pod $uid on node kscore-node-2"
check "high-1's FailedScheduling carries upstream's PostFilter message" \
  poll "$TIMEOUT" has_event high-1 FailedScheduling \
  "preemption: found a potential placement for pod on node kscore-node-2, preempting 1 victims"
check "n1 is not touched" alive n1
check "n3 is not touched" alive n3
check "high-1 is not bound while n2 terminates" test -z "$(node_of high-1)"
# mid arrives while n2 terminates: once n2 is gone, node-2 has room for
# high-1 or mid, not both; the nomination keeps it for high-1.
pod mid p500-never 1500m
release n2
check "n2 is gone" poll "$TIMEOUT" gone n2
check "high-1 is bound to its nominated node" poll "$TIMEOUT" is_node high-1 kscore-node-2
mid_waits() { [[ -z "$(node_of mid)" ]] && events_for mid FailedScheduling | grep -q .; }
check "mid did not take the room nominated for high-1" poll "$TIMEOUT" mid_waits

# 2. A PDB protects n3; high-2 preempts n1 instead.
k apply -f - >/dev/null <<YAML
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: n3}
spec:
  maxUnavailable: 0
  selector: {matchLabels: {app: n3}}
YAML
pdb_observed() { [[ "$(k get pdb n3 -o jsonpath='{.status.observedGeneration}/{.status.disruptionsAllowed}')" == 1/0 ]]; }
check "the PDB's status says 0 disruptions allowed" poll "$TIMEOUT" pdb_observed
pod high-2 p1000 3000m
check "high-2 is nominated to kscore-node-1, not node-3 (PDB)" poll "$TIMEOUT" is_nominated high-2 kscore-node-1
check "n1 is being deleted" poll "$TIMEOUT" terminating n1
check "n3 (protected) is spared" alive n3
release n1
check "high-2 is bound to kscore-node-1" poll "$TIMEOUT" is_node high-2 kscore-node-1

# 3. preemptionPolicy: Never.
pod never p1000-never 3000m
check "never stays Pending: 'preemption: not eligible due to preemptionPolicy=Never.'" \
  poll "$TIMEOUT" has_event never FailedScheduling 'preemption: not eligible due to preemptionPolicy=Never.' 
check "never is not nominated and nothing was preempted for it" bash -c \
  "[ -z \"\$1\" ] && [ -z \"\$2\" ]" _ "$(nominated never)" "$(node_of never)"
check "n3 still runs" alive n3

# 4. A nomination holds its room: a pod nominated to kscore-node-2 (by a
# scheduler of its own, so kscore does not place it) counts there for
# lower-priority pods. high-1 goes; mid (1500m) would fit on node-2 but
# for the nominated pod's 3000m, so it stays Pending while retried.
release never
k delete pod never --wait=false >/dev/null
check "never is gone (it would take node-2's room before mid)" poll "$TIMEOUT" gone never
k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata:
  name: reserved
  labels: {app: reserved, e2e: preempt}
spec:
  schedulerName: elsewhere
  priorityClassName: p1000
  terminationGracePeriodSeconds: 0
  containers:
  - name: pause
    image: pause:3.9
    resources: {requests: {cpu: 3000m}}
YAML
k patch pod reserved --subresource=status --type=merge \
  -p '{"status":{"nominatedNodeName":"kscore-node-2"}}' >/dev/null
unschedulable_attempts() {
  curl -sf "http://$SHIM_METRICS/metrics" |
    awk '/^scheduler_schedule_attempts_total\{.*result="unschedulable"/ {s += $2} END {printf "%.0f\n", s}'
}
before="$(unschedulable_attempts)"
release high-1
k delete pod high-1 --wait=false >/dev/null
retried() { (( $(unschedulable_attempts) > before )) && gone high-1; }
check "mid is tried again once high-1 is gone" poll "$TIMEOUT" retried
check "mid stays Pending: node-2's room is nominated to a 3000m pod" test -z "$(node_of mid)"
k delete pod reserved --wait=false >/dev/null
check "once the nomination goes, mid is bound to kscore-node-2" poll "$TIMEOUT" is_node mid kscore-node-2

# The ledger: each pod bound at most once, no node above its 4 CPUs.
scheduled_twice="$(k get events.events.k8s.io --field-selector reason=Scheduled -o jsonpath='{range .items[*]}{.regarding.name}{"\n"}{end}' | sort | uniq -d | wc -l)"
check "no pod has two Scheduled events" test "$scheduled_twice" -eq 0
overcommitted="$(k get pods -o json | python3 -c '
import json, sys, collections
used = collections.Counter()
for p in json.load(sys.stdin)["items"]:
    n = p["spec"].get("nodeName")
    if not n: continue
    for c in p["spec"]["containers"]:
        cpu = c.get("resources", {}).get("requests", {}).get("cpu", "0")
        used[n] += int(cpu[:-1]) if cpu.endswith("m") else int(float(cpu) * 1000)
print(" ".join(f"{n}={m}m" for n, m in used.items() if m > 4000))')"
check "no node's cpu requests above 4000m (${overcommitted:-none})" test -z "$overcommitted"
for p in n1 n2 n3 high-2 mid; do release "$p"; done
finish
