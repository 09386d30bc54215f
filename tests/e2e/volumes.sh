#!/usr/bin/env bash
# End-to-end: pods with PersistentVolumeClaims on a real local control plane
# (hack/cluster.sh, three kwok nodes: pods only need to be bound), with the
# kube-controller-manager's PersistentVolume binder completing the bindings
# the schedulers choose. Each scenario runs once per side, on the same kind of
# objects: "default" under default-scheduler (the reference kube-scheduler,
# which passes today) and "kscore" under the kscore profile's scheduler name
# (the shim and the scorer, which pass once kscore's volume support lands).
# Each side has a namespace of its own (vol-default, vol-kscore) and, for the
# cluster-scoped PersistentVolumes, names and a label of its own.
#   wffc_local          StorageClass local-wffc (no provisioner,
#                       WaitForFirstConsumer), one local PV pinned to each
#                       node, a StatefulSet of 3 with volumeClaimTemplates:
#                       every PVC Bound, each pod on its PV's node.
#   immediate_unbound   an Immediate StorageClass with no provisioner and no
#                       PV: the pod stays Pending with upstream's "pod has
#                       unbound immediate PersistentVolumeClaims".
#   missing_claim       a claim that does not exist: the pod stays Pending
#                       with upstream's 'persistentvolumeclaim "absent" not
#                       found'.
# A scenario is a function scenario_NAME SIDE, listed in SCENARIOS; to add
# one (zonal PVs, a ReadWriteOncePod conflict, a CSINode limit, the shim
# killed between Reserve and bind), write the function and list it.
#   KSCORE_VOLUMES_SIDES      sides to run, "default kscore" by default
#   KSCORE_VOLUMES_SCENARIOS  scenarios to run, all by default
#   KSCORE_E2E_TIMEOUT        seconds for each wait (60)
# The kscore side needs build/bin/{scorer,shim} (or KSCORE_BIN_DIR); the
# default side alone needs neither.
set -euo pipefail
E2E_NAME=volumes
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$ROOT"

SIDES="${KSCORE_VOLUMES_SIDES:-default kscore}"
SCENARIOS="${KSCORE_VOLUMES_SCENARIOS:-wffc_local immediate_unbound missing_claim}"
KSCORE_SCHEDULER=kscore  # the kscore profile's schedulerName
for side in $SIDES; do
  case "$side" in
    default | kscore) ;;
    *) echo "KSCORE_VOLUMES_SIDES: unknown side '$side' (default, kscore)" >&2; exit 2 ;;
  esac
done

scheduler_of() {  # scheduler_of SIDE: the schedulerName the side's pods ask for
  case "$1" in
    default) echo default-scheduler ;;
    kscore) echo "$KSCORE_SCHEDULER" ;;
  esac
}
ns_of() { echo "vol-$1"; }

# ------------------------------------------------------------ helpers
pod_field() {  # pod_field NS POD JSONPATH
  k -n "$1" get pod "$2" -o "jsonpath=$3" 2>/dev/null
}
node_of() { pod_field "$1" "$2" '{.spec.nodeName}'; }
# scheduled_condition NS POD: the PodScheduled condition, "status/reason/message".
scheduled_condition() {
  pod_field "$1" "$2" '{range .status.conditions[?(@.type=="PodScheduled")]}{.status}/{.reason}/{.message}{end}'
}
ns_events() {  # ns_events NS POD REASON: notes of POD's events with REASON
  k -n "$1" get events.events.k8s.io --field-selector "regarding.name=$2,reason=$3" \
    -o jsonpath='{range .items[*]}{.note}{"\n"}{end}' 2>/dev/null
}
# why NS POD: one line on where POD stands, for failure messages.
why() {
  local node
  node="$(node_of "$1" "$2")"
  if [[ -n "$node" ]]; then
    echo "$1/$2 is bound to $node"
  else
    echo "$1/$2 is unbound; PodScheduled: '$(scheduled_condition "$1" "$2")'; last FailedScheduling: '$(ns_events "$1" "$2" FailedScheduling | tail -n1)'"
  fi
}
pvc_field() {  # pvc_field NS PVC JSONPATH
  k -n "$1" get pvc "$2" -o "jsonpath=$3" 2>/dev/null
}
pvc_state() {  # pvc_state NS PVC: "PHASE volume=PV", or "absent"
  k -n "$1" get pvc "$2" -o 'jsonpath={.status.phase} volume={.spec.volumeName}' 2>/dev/null || echo absent
}
# pv_host PV: the kubernetes.io/hostname its node affinity pins it to.
pv_host() {
  k get pv "$1" -o jsonpath='{.spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[?(@.key=="kubernetes.io/hostname")].values[0]}' 2>/dev/null
}
# unschedulable_with NS POD TEXT: POD is unbound, its PodScheduled condition
# is False/Unschedulable with TEXT, and a FailedScheduling event carries TEXT.
unschedulable_with() {
  [[ -z "$(node_of "$1" "$2")" ]] || return 1
  local cond
  cond="$(scheduled_condition "$1" "$2")"
  [[ "$cond" == False/Unschedulable/* && "$cond" == *"$3"* ]] || return 1
  ns_events "$1" "$2" FailedScheduling | grep -qF -- "$3"
}
# Pods a scenario expects to stay Pending, "NS/POD": looked at again at the
# end, after the later scenarios gave the schedulers time to retry them.
EXPECT_PENDING=()

# pending_pod SIDE NAME CLAIM: a pause pod of SIDE's scheduler using CLAIM.
pending_pod() {
  local ns
  ns="$(ns_of "$1")"
  k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: $2, namespace: $ns, labels: {app: $2}}
spec:
  schedulerName: $(scheduler_of "$1")
  terminationGracePeriodSeconds: 0
  containers:
  - name: pause
    image: pause:3.9
    volumeMounts: [{name: data, mountPath: /data}]
  volumes:
  - name: data
    persistentVolumeClaim: {claimName: $3}
YAML
}
# expect_pending SIDE POD TEXT: POD stays Pending, its condition and a
# FailedScheduling event carrying TEXT (upstream's words).
expect_pending() {
  local ns
  ns="$(ns_of "$1")"
  if poll "$TIMEOUT" unschedulable_with "$ns" "$2" "$3"; then
    pass "[$1] $ns/$2 is Pending, PodScheduled False/Unschedulable and FailedScheduling with '$3'"
    EXPECT_PENDING+=("$ns/$2/$3")  # NS/POD/TEXT
  else
    fail "[$1] $ns/$2: no PodScheduled condition and FailedScheduling event with '$3' within ${TIMEOUT}s: $(why "$ns" "$2")"
  fi
}

# ------------------------------------------------------------ shared objects
storage_classes() {
  k apply -f - >/dev/null <<YAML
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: local-wffc}
provisioner: kubernetes.io/no-provisioner
volumeBindingMode: WaitForFirstConsumer
reclaimPolicy: Retain
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: immediate-none}
provisioner: kubernetes.io/no-provisioner
volumeBindingMode: Immediate
reclaimPolicy: Retain
YAML
}

# ------------------------------------------------------------ scenarios
# Each scenario_NAME SIDE creates its objects in SIDE's namespace (and
# cluster-scoped ones named after SIDE), waits with deadlines and reports
# with pass/fail, each message naming the objects.

# wffc_local: 3 local PVs, one per node, and a StatefulSet of 3 whose
# claims (class local-wffc, WaitForFirstConsumer) select this side's PVs.
# The scheduler picks a node with a free PV and writes the PV's claimRef;
# the PV binder binds the claim; the pod is bound to that PV's node.
scenario_wffc_local() {
  local side="$1" ns sched i
  ns="$(ns_of "$side")"
  sched="$(scheduler_of "$side")"
  for i in 1 2 3; do
    k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: PersistentVolume
metadata:
  name: $side-local-$i
  labels: {kscore-e2e/side: $side}
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteOnce]
  persistentVolumeReclaimPolicy: Retain
  storageClassName: local-wffc
  local: {path: /mnt/kscore-e2e/$side-$i}
  nodeAffinity:
    required:
      nodeSelectorTerms:
      - matchExpressions:
        - {key: kubernetes.io/hostname, operator: In, values: [kscore-node-$i]}
YAML
  done
  k -n "$ns" apply -f - >/dev/null <<YAML
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: local}
spec:
  serviceName: local
  replicas: 3
  podManagementPolicy: Parallel
  selector: {matchLabels: {app: local}}
  template:
    metadata: {labels: {app: local}}
    spec:
      schedulerName: $sched
      terminationGracePeriodSeconds: 0
      containers:
      - name: pause
        image: pause:3.9
        volumeMounts: [{name: data, mountPath: /data}]
  volumeClaimTemplates:
  - metadata: {name: data}
    spec:
      accessModes: [ReadWriteOnce]
      storageClassName: local-wffc
      resources: {requests: {storage: 1Gi}}
      selector: {matchLabels: {kscore-e2e/side: $side}}
YAML
  if ! poll "$TIMEOUT" wffc_settled "$ns"; then
    fail "[$side] statefulset $ns/local: not every pod bound and claim Bound within ${TIMEOUT}s"
    for i in 0 1 2; do
      info "$(why "$ns" "local-$i"); claim $ns/data-local-$i: $(pvc_state "$ns" "data-local-$i")"
    done
    return 0
  fi
  pass "[$side] statefulset $ns/local: 3 pods bound, claims data-local-{0,1,2} Bound"
  local pv node host claim_ref pvc_uid nodes=""
  for i in 0 1 2; do
    pv="$(pvc_field "$ns" "data-local-$i" '{.spec.volumeName}')"
    node="$(node_of "$ns" "local-$i")"
    host="$(pv_host "$pv")"
    claim_ref="$(k get pv "$pv" -o jsonpath='{.spec.claimRef.namespace}/{.spec.claimRef.name}/{.spec.claimRef.uid}/{.status.phase}')"
    pvc_uid="$(pvc_field "$ns" "data-local-$i" '{.metadata.uid}')"
    if [[ "$pv" == "$side"-local-? && "$node" == "$host" && "$claim_ref" == "$ns/data-local-$i/$pvc_uid/Bound" ]]; then
      pass "[$side] pod $ns/local-$i on $node, the node of PV $pv (Bound to $ns/data-local-$i)"
    else
      fail "[$side] pod $ns/local-$i on '$node'; claim $ns/data-local-$i has PV '$pv' (pinned to '$host', claimRef+phase '$claim_ref', want $ns/data-local-$i/$pvc_uid/Bound)"
    fi
    nodes+="$node "
  done
  nodes="${nodes% }"
  check "[$side] statefulset $ns/local: one pod per node ($nodes)" \
    test "$(tr ' ' '\n' <<<"$nodes" | grep . | sort -u | wc -l)" -eq 3
}

# wffc_settled NS: the pods local-{0,1,2} bound, their claims Bound.
wffc_settled() {
  local i
  for i in 0 1 2; do
    [[ -n "$(node_of "$1" "local-$i")" ]] || return 1
    [[ "$(pvc_field "$1" "data-local-$i" '{.status.phase}')" == Bound ]] || return 1
  done
}

# immediate_unbound: a claim of an Immediate class that nothing can bind
# (no PV, no provisioner); kube-scheduler's VolumeBinding PreFilter rejects
# the pod as UnschedulableAndUnresolvable.
scenario_immediate_unbound() {
  local side="$1" ns
  ns="$(ns_of "$side")"
  k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: unbound, namespace: $ns}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: immediate-none
  resources: {requests: {storage: 1Gi}}
YAML
  pending_pod "$side" immediate unbound
  expect_pending "$side" immediate "pod has unbound immediate PersistentVolumeClaims"
  check "[$side] claim $ns/unbound is still Pending (nothing could bind it)" \
    test "$(pvc_field "$ns" unbound '{.status.phase}')" = Pending
}

# missing_claim: a pod whose claim does not exist.
scenario_missing_claim() {
  local side="$1"
  pending_pod "$side" missing absent
  expect_pending "$side" missing 'persistentvolumeclaim "absent" not found'
}

for s in $SCENARIOS; do
  [[ "$(type -t "scenario_$s")" == function ]] || {
    echo "KSCORE_VOLUMES_SCENARIOS: unknown scenario '$s'" >&2
    exit 2
  }
done

# ------------------------------------------------------------ the cluster
t_up=$SECONDS
cluster_up --nodes 3
info "control plane up in $((SECONDS - t_up)) s"

# The PV binder (kube-controller-manager's persistentvolume-binder-controller)
# completes every binding the schedulers choose; without it the claims of
# wffc_local would never turn Bound.
kcm_log="${STATE}/logs/kube-controller-manager.log"
pv_binder_started() { grep -q '"Starting persistent volume controller"' "$kcm_log"; }
if poll "$TIMEOUT" pv_binder_started; then
  pass "kube-controller-manager runs the PersistentVolume binder (persistentvolume-binder-controller)"
else
  fail "kube-controller-manager did not start persistentvolume-binder-controller within ${TIMEOUT}s (controllers: $(tr '\0' ' ' <"/proc/$(cluster_pid kube-controller-manager)/cmdline" | grep -o -- '--controllers=[^ ]*'); log $kcm_log)"
  finish
  exit 1
fi

if [[ " $SIDES " == *" kscore "* ]]; then
  SCORER_PORT="$(free_port)"
  SCORER="127.0.0.1:${SCORER_PORT}"
  cat >"$WORK/config.yaml" <<YAML
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: $KSCORE_SCHEDULER
YAML
  scorer_up scorer "$WORK/config.yaml" "$SCORER_PORT"
  shim_up shim "$WORK/config.yaml" --leader-elect=false
fi
storage_classes
for side in $SIDES; do
  k create namespace "$(ns_of "$side")" >/dev/null
done
# Pods need the namespace's default ServiceAccount (ServiceAccount admission).
sa_ready() { k -n "$1" get serviceaccount default; }
for side in $SIDES; do
  poll "$TIMEOUT" sa_ready "$(ns_of "$side")" || fail "no serviceaccount $(ns_of "$side")/default within ${TIMEOUT}s"
done

# ------------------------------------------------------------ run
OUTCOMES=()
timed() {  # timed NAME SIDE COMMAND...: runs COMMAND, prints and records its outcome and time
  local name="$1" side="$2" t0=$SECONDS failed_before=$failed outcome=PASS
  shift 2
  local label="$side"
  [[ "$side" == all ]] || label="$side: schedulerName $(scheduler_of "$side")"
  echo "--- $name [$label]"
  "$@"
  ((failed == failed_before)) || outcome=FAIL
  OUTCOMES+=("$(printf '%-4s %-20s %-8s %4d s' "$outcome" "$name" "$side" $((SECONDS - t0)))")
  echo "--- $name [$side]: $outcome in $((SECONDS - t0)) s"
}
for s in $SCENARIOS; do
  for side in $SIDES; do timed "$s" "$side" "scenario_$s" "$side"; done
done

# The pods expected Pending are still unbound, and still say why, after the
# later scenarios gave the schedulers time to retry them.
still_pending() {
  local entry ns rest pod text
  for entry in "${EXPECT_PENDING[@]}"; do
    ns="${entry%%/*}" rest="${entry#*/}"
    pod="${rest%%/*}" text="${rest#*/}"
    check "$ns/$pod is still Pending with '$text'" unschedulable_with "$ns" "$pod" "$text"
  done
}
((${#EXPECT_PENDING[@]} == 0)) || timed still_pending all still_pending

echo "--- outcomes (scenario, side, seconds)"
printf '%s\n' "${OUTCOMES[@]}"
finish
