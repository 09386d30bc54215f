#!/usr/bin/env bash
# End-to-end: topology spread and inter-pod (anti-)affinity under a
# stock-profile scheduler name (kscore-default: kube-scheduler's default
# plugins and weights), on a real local control plane (hack/cluster.sh) with
# six nodes, two per zone (zone-a, zone-b, zone-c):
#   - 9 replicas with a zone spread constraint (maxSkew 1) land 3/3/3;
#   - required hostname anti-affinity puts one replica per node and leaves
#     the rest Pending with kube-scheduler's wording (its twin under
#     default-scheduler agrees);
#   - a pod without terms is kept off the node whose existing pod's
#     anti-affinity rejects it;
#   - a Deployment with no constraints is spread by the system defaults as
#     default-scheduler spreads the same Deployment on the same cluster (per
#     zone; per node ties fall at random).
# Needs build/bin/{scorer,shim}.
set -euo pipefail
E2E_NAME=spread
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$ROOT"

cluster_up --nodes 6
SCORER_PORT="$(free_port)"
SCORER="127.0.0.1:${SCORER_PORT}"
cat >"$WORK/config.yaml" <<YAML
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: kscore-default
YAML
scorer_up scorer "$WORK/config.yaml" "$SCORER_PORT"
shim_up shim "$WORK/config.yaml" --leader-elect=false

# workload NAME REPLICAS SCHEDULER [POD_SPEC_YAML]: a Deployment of pause
# pods labelled app=NAME, with extra pod spec fields (indented 6 spaces).
workload() {
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
        image: pause:3.9
${4:-}
YAML
}
zone_of_node() { k get node "$1" -o jsonpath='{.metadata.labels.topology\.kubernetes\.io/zone}'; }
# per_zone APP: "zone-a=N zone-b=N zone-c=N" for the bound pods of APP.
per_zone() {
  local n
  for n in $(k get pods -l "app=$1" -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' | grep .); do
    zone_of_node "$n"; echo
  done | grep . | sort | uniq -c | awk '{print $2"="$1}' | tr '\n' ' ' | sed 's/ $//'
}
# counts APP: the sorted pods-per-node counts of APP over all six nodes
# (zeros included), e.g. "2 2 2 2 2 2".
counts() {
  local i line
  for i in 1 2 3 4 5 6; do
    line="$(per_node "$1" | tr ' ' '\n' | grep "^kscore-node-$i=" || true)"
    echo "${line#*=}" | sed 's/^$/0/'
  done | sort -n | tr '\n' ' ' | sed 's/ $//'
}
pending_count() { k get pods -l "app=$1" --field-selector=status.phase=Pending -o jsonpath='{range .items[*]}{.spec.nodeName}{"|"}{end}' | tr '|' '\n' | grep -c '^$' || true; }

# ------------------------------------------------------------ zone spread
workload zspread 9 kscore-default "      topologySpreadConstraints:
      - maxSkew: 1
        topologyKey: topology.kubernetes.io/zone
        whenUnsatisfiable: DoNotSchedule
        labelSelector: {matchLabels: {app: zspread}}"
if poll "$TIMEOUT" all_bound zspread 9; then
  got="$(per_zone zspread)"
  if [[ "$got" == "zone-a=3 zone-b=3 zone-c=3" ]]; then
    pass "zone spread maxSkew 1: 9 replicas land 3/3/3 ($got)"
  else
    fail "zone spread maxSkew 1: 9 replicas land $got, want 3/3/3"
  fi
else
  fail "zone spread: only $(bound_count zspread)/9 bound"
fi
delete_app zspread

# ------------------------------------------------------------ anti-affinity
anti() {  # anti APP SCHEDULER: 8 replicas, at most one per node
  workload "$1" 8 "$2" "      affinity:
        podAntiAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
          - topologyKey: kubernetes.io/hostname
            labelSelector: {matchLabels: {app: $1}}"
}
anti_wording="0/6 nodes are available: 6 node(s) didn't match pod anti-affinity rules."
anti anti kscore-default
six_bound_two_pending() {
  [[ "$(bound_count "$1")" -eq 6 && "$(pod_count "$1")" -eq 8 ]] &&
    pending_with "$1" "$anti_wording"
}
if poll "$TIMEOUT" six_bound_two_pending anti; then
  got="$(counts anti)"
  if [[ "$got" == "1 1 1 1 1 1" ]]; then
    pass "hostname anti-affinity: one replica per node ($got), 2 Pending with \"$anti_wording\""
  else
    fail "hostname anti-affinity: per node counts $got"
  fi
else
  fail "hostname anti-affinity: $(bound_count anti) bound of $(pod_count anti); events: $(events_for "$(k get pods -l app=anti --field-selector=status.phase=Pending -o jsonpath='{.items[0].metadata.name}')" FailedScheduling | tail -1)"
fi
# Still Pending later: the pods are retried, never dropped or misplaced.
check "hostname anti-affinity: the two extra replicas stay unbound" \
  bash -c "[ \"\$(\"$BIN/kubectl\" --kubeconfig=$KUBECONFIG_FILE get pods -l app=anti -o jsonpath='{range .items[*]}{.spec.nodeName}{\"\\n\"}{end}' | grep -c .)\" -eq 6 ]"
delete_app anti
anti anti-ref default-scheduler
check "hostname anti-affinity: default-scheduler's twin is Pending with the same words" \
  poll "$TIMEOUT" six_bound_two_pending anti-ref
delete_app anti-ref

# ------------------------------------------------------------ existing pods' anti-affinity
# guard runs on kscore-node-1 and forbids pods labelled role=intruder on its
# node. intruder carries no terms and asks for kscore-node-1 or -2 by node
# affinity: it must go to kscore-node-2.
k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: guard, labels: {app: guard}}
spec:
  schedulerName: kscore-default
  terminationGracePeriodSeconds: 0
  nodeSelector: {kubernetes.io/hostname: kscore-node-1}
  affinity:
    podAntiAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - topologyKey: kubernetes.io/hostname
        labelSelector: {matchLabels: {role: intruder}}
  containers: [{name: pause, image: "pause:3.9"}]
YAML
node_of() { k get pod "$1" -o jsonpath='{.spec.nodeName}'; }
on_node() { [[ "$(node_of "$1")" == "$2" ]]; }
check "existing anti-affinity: guard is bound to kscore-node-1" poll "$TIMEOUT" on_node guard kscore-node-1
intruder() {  # intruder NAME SCHEDULER NODES...: a pod without terms, role=intruder
  local name="$1" sched="$2"; shift 2
  local values
  values="$(printf '"%s",' "$@")"
  k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: $name, labels: {app: $name, role: intruder}}
spec:
  schedulerName: $sched
  terminationGracePeriodSeconds: 0
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
        - matchExpressions:
          - {key: kubernetes.io/hostname, operator: In, values: [${values%,}]}
  containers: [{name: pause, image: "pause:3.9"}]
YAML
}
intruder intruder kscore-default kscore-node-1 kscore-node-2
check "existing anti-affinity: a pod without terms goes to kscore-node-2, not next to guard" \
  poll "$TIMEOUT" on_node intruder kscore-node-2
existing_wording="0/6 nodes are available: 1 node(s) didn't satisfy existing pods anti-affinity rules, 5 node(s) didn't match Pod's node affinity/selector."
intruder intruder-1 kscore-default kscore-node-1
intruder intruder-1-ref default-scheduler kscore-node-1
rejected() { events_for "$1" FailedScheduling | grep -qF "$2"; }
if poll "$TIMEOUT" rejected intruder-1 "$existing_wording" && [[ -z "$(node_of intruder-1)" ]]; then
  pass "existing anti-affinity: a pod that may only go to guard's node stays Pending (\"$existing_wording\")"
else
  fail "existing anti-affinity: intruder-1 on '$(node_of intruder-1)', events: $(events_for intruder-1 FailedScheduling | tail -1)"
fi
check "existing anti-affinity: default-scheduler's twin is Pending with the same words" \
  poll "$TIMEOUT" rejected intruder-1-ref "$existing_wording"
k delete pod guard intruder intruder-1 intruder-1-ref --wait=false >/dev/null 2>&1 || true
poll "$TIMEOUT" bash -c "[ -z \"\$(\"$BIN/kubectl\" --kubeconfig=$KUBECONFIG_FILE get pods -o name 2>/dev/null)\" ]" ||
  fail "pods of the anti-affinity probes were not deleted"

# ------------------------------------------------------------ system default spreading
# A ReplicaSet-owned Deployment without constraints: kube-scheduler's
# system defaults (hostname maxSkew 3, zone maxSkew 5, both ScheduleAnyway)
# spread it. Both schedulers place the same Deployment on the same cluster,
# one after the other. A 2-CPU filler pod on the first node of each zone
# makes the resource scores pull the other way, so spreading shows in the
# result. Zones stay symmetric, so the per-zone counts must agree exactly;
# per node, equal totals are broken at random (as kube-scheduler's
# selectHost does), so the node counts are printed, not compared: the
# oracle (tests/oracle) compares every score exactly.
for i in 1 2 3; do
  k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: filler-$i, labels: {app: filler}}
spec:
  nodeName: kscore-node-$i
  terminationGracePeriodSeconds: 0
  containers:
  - {name: pause, image: "pause:3.9", resources: {requests: {cpu: "2"}}}
YAML
done
workload sys 12 kscore-default
poll "$TIMEOUT" all_bound sys 12 || fail "system defaults: only $(bound_count sys)/12 bound by kscore-default"
kscore_nodes="$(counts sys)"
kscore_zones="$(per_zone sys)"
delete_app sys
workload sys-ref 12 default-scheduler
poll "$TIMEOUT" all_bound sys-ref 12 || fail "system defaults: only $(bound_count sys-ref)/12 bound by default-scheduler"
ref_nodes="$(counts sys-ref)"
ref_zones="$(per_zone sys-ref)"
delete_app sys-ref
if [[ "$kscore_zones" == "$ref_zones" ]]; then
  pass "system defaults: per zone, kscore-default spreads 12 replicas as default-scheduler ($kscore_zones; per node kscore [$kscore_nodes], default-scheduler [$ref_nodes])"
else
  fail "system defaults: kscore-default zones [$kscore_zones] nodes [$kscore_nodes], default-scheduler zones [$ref_zones] nodes [$ref_nodes]"
fi
# The defaults were applied: the shim's decisions (-v 4) show the pods'
# PodTopologySpread raw scores, counted over the ReplicaSet's pods.
spread_scored() { [[ "$(log_of shim | grep -- "pod default/sys-" | grep -c "PodTopologySpread=[1-9]")" -gt 0 ]]; }
check "system defaults: kscore scored the replicas by PodTopologySpread (the ReplicaSet's selector)" spread_scored

finish
