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
#   zonal_pv            five PVs pre-bound (claimRef) to claims the PV binder
#                       binds before any pod asks for them, each PV labelled
#                       topology.kubernetes.io/zone (one of the nodes'
#                       zone-a/b/c, or "zone-a__zone-b") and without node
#                       affinity, a pod on each: every pod on a node of its
#                       PV's zone(s) (VolumeZone).
#   shim_killed_mid_bind  kscore only (the default side says SKIP): the PV
#                       binder off (kube-controller-manager restarted without
#                       persistentvolume-binder-controller), six local PVs
#                       (two per node), three pods with a claim each; once
#                       kscore wrote a claimRef for every claim (its PreBind
#                       then waits), the shim is SIGKILLed and started again,
#                       then the controller manager with the binder: every
#                       pod bound on its PV's node, every claim Bound to the
#                       PV the killed shim chose, no PV named by two claims
#                       nor claim by two PVs.
# A scenario is a function scenario_NAME SIDE, listed in SCENARIOS; to add
# one (a ReadWriteOncePod conflict, a CSINode limit), write the function and
# list it.
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
SCENARIOS="${KSCORE_VOLUMES_SCENARIOS:-wffc_local immediate_unbound missing_claim zonal_pv rwop csi_limit shim_killed_mid_bind}"
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
  local cond notes
  cond="$(scheduled_condition "$1" "$2")"
  [[ "$cond" == False/Unschedulable/* && "$cond" == *"$3"* ]] || return 1
  # Not a pipe into grep -q: grep leaves at the first match, kubectl then
  # dies of SIGPIPE writing the next note, and pipefail fails the pipe.
  notes="$(ns_events "$1" "$2" FailedScheduling)"
  grep -qF -- "$3" <<<"$notes"
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

# zonal_pv: PVs pre-bound to their claims (claimRef; the PV binder then
# binds each pair: the claim's volumeName and
# pv.kubernetes.io/bind-completed, the claimRef's uid, as the bound pairs
# upstream's scheduler_perf makes), each PV in a zone by its
# topology.kubernetes.io/zone label only (no node affinity: VolumeBinding
# lets every node pass), and a pod on each claim: VolumeZone keeps each pod
# on a node of its PV's zone(s). The nodes are hack/cluster.sh's, labelled
# zone-a, zone-b, zone-c; five pods, so that a pass is not luck.
ZONAL_ZONES=(zone-c zone-a zone-b zone-c zone-a__zone-b)
scenario_zonal_pv() {
  local side="$1" ns i z node_zones
  ns="$(ns_of "$side")"
  node_zones="$(k get nodes -o jsonpath='{range .items[*]}{.metadata.name}={.metadata.labels.topology\.kubernetes\.io/zone}{"\n"}{end}')"
  for z in zone-a zone-b zone-c; do
    grep -q "=$z\$" <<<"$node_zones" || {
      fail "[$side] zonal_pv: no node in $z (nodes: $(tr '\n' ' ' <<<"$node_zones"))"
      return 0
    }
  done
  for i in "${!ZONAL_ZONES[@]}"; do
    k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: PersistentVolume
metadata:
  name: $side-zonal-$i
  labels: {kscore-e2e/zonal: $side, topology.kubernetes.io/zone: ${ZONAL_ZONES[i]}}
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteOnce]
  persistentVolumeReclaimPolicy: Retain
  storageClassName: ""
  hostPath: {path: /mnt/kscore-e2e/$side-zonal-$i}
  claimRef: {namespace: $ns, name: zonal-$i}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: zonal-$i, namespace: $ns}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: ""
  resources: {requests: {storage: 1Gi}}
YAML
  done
  if ! poll "$TIMEOUT" claims_bound "$ns" zonal "${#ZONAL_ZONES[@]}"; then
    fail "[$side] claims $ns/zonal-*: not all Bound to their PVs within ${TIMEOUT}s"
    for i in "${!ZONAL_ZONES[@]}"; do info "claim $ns/zonal-$i: $(pvc_state "$ns" "zonal-$i")"; done
    return 0
  fi
  pass "[$side] claims $ns/zonal-{0..$((${#ZONAL_ZONES[@]} - 1))} Bound to their pre-bound PVs $side-zonal-*"
  for i in "${!ZONAL_ZONES[@]}"; do pending_pod "$side" "zonal-$i" "zonal-$i"; done
  if ! poll "$TIMEOUT" pods_bound "$ns" zonal "${#ZONAL_ZONES[@]}"; then
    fail "[$side] pods $ns/zonal-*: not all bound within ${TIMEOUT}s"
    for i in "${!ZONAL_ZONES[@]}"; do info "$(why "$ns" "zonal-$i")"; done
    return 0
  fi
  local node zone pv_zones
  for i in "${!ZONAL_ZONES[@]}"; do
    node="$(node_of "$ns" "zonal-$i")"
    zone="$(k get node "$node" -o jsonpath='{.metadata.labels.topology\.kubernetes\.io/zone}')"
    pv_zones="$(k get pv "$side-zonal-$i" -o jsonpath='{.metadata.labels.topology\.kubernetes\.io/zone}')"
    if [[ -n "$zone" && "__${pv_zones}__" == *"__${zone}__"* ]]; then
      pass "[$side] pod $ns/zonal-$i on $node ($zone), in the zone(s) '$pv_zones' of PV $side-zonal-$i"
    else
      fail "[$side] pod $ns/zonal-$i on $node (zone '$zone'), outside the zone(s) '$pv_zones' of PV $side-zonal-$i"
    fi
  done
}

# claims_bound NS PREFIX N: claims PREFIX-0..N-1 are Bound.
claims_bound() {
  local i
  for ((i = 0; i < $3; i++)); do
    [[ "$(pvc_field "$1" "$2-$i" '{.status.phase}')" == Bound ]] || return 1
  done
}
# pods_bound NS PREFIX N: pods PREFIX-0..N-1 are bound to nodes.
pods_bound() {
  local i
  for ((i = 0; i < $3; i++)); do
    [[ -n "$(node_of "$1" "$2-$i")" ]] || return 1
  done
}

# ----------------------------------------------------------- ReadWriteOncePod
# A ReadWriteOncePod claim (pre-bound PV/PVC pair): the first pod using it is
# placed, a second stays Pending with VolumeRestrictions' words.
scenario_rwop() {
  local side="$1" ns
  ns="$(ns_of "$side")"
  k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: PersistentVolume
metadata: {name: $side-rwop-0}
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteOncePod]
  persistentVolumeReclaimPolicy: Retain
  storageClassName: ""
  hostPath: {path: /mnt/kscore-e2e/$side-rwop-0}
  claimRef: {namespace: $ns, name: rwop-0}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: rwop-0, namespace: $ns}
spec:
  accessModes: [ReadWriteOncePod]
  storageClassName: ""
  resources: {requests: {storage: 1Gi}}
YAML
  if ! poll "$TIMEOUT" claims_bound "$ns" rwop 1; then
    fail "[$side] claim $ns/rwop-0: not Bound within ${TIMEOUT}s: $(pvc_state "$ns" rwop-0)"
    return 0
  fi
  pending_pod "$side" rwop-0 rwop-0
  if ! poll "$TIMEOUT" pods_bound "$ns" rwop 1; then
    fail "[$side] $ns/rwop-0 (the claim's first user) not bound within ${TIMEOUT}s: $(why "$ns" rwop-0)"
    return 0
  fi
  pass "[$side] $ns/rwop-0, the ReadWriteOncePod claim's first user, is bound"
  pending_pod "$side" rwop-second rwop-0
  expect_pending "$side" rwop-second \
    "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode already in-use by another pod"
}

# ------------------------------------------------------------- CSINode limit
# Every node's CSINode allows no volume of the e2e driver but the last
# node's, which allows two (one per side: both sides' pods share the nodes):
# a pod whose pre-bound claim is such a volume goes to the last node
# (NodeVolumeLimits skips the nodes at their limit).
CSI_DRIVER=e2e.csi.kscore.example
csinodes() {  # one CSINode per node: limit 0, the last node 2
  local nodes n last limit
  nodes="$(k get nodes -o jsonpath='{range .items[*]}{.metadata.name}{"\n"}{end}' | sort)"
  last="$(tail -n1 <<<"$nodes")"
  for n in $nodes; do
    limit=0
    [[ "$n" == "$last" ]] && limit=2
    k apply -f - >/dev/null <<YAML
apiVersion: storage.k8s.io/v1
kind: CSINode
metadata: {name: $n}
spec:
  drivers:
  - name: $CSI_DRIVER
    nodeID: $n
    allocatable: {count: $limit}
YAML
  done
  echo "$last"
}
scenario_csi_limit() {
  local side="$1" ns last node
  ns="$(ns_of "$side")"
  last="$(csinodes)"
  k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: PersistentVolume
metadata: {name: $side-csi-0}
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteOnce]
  persistentVolumeReclaimPolicy: Retain
  storageClassName: ""
  csi: {driver: $CSI_DRIVER, volumeHandle: $side-csi-0}
  claimRef: {namespace: $ns, name: csi-0}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: csi-0, namespace: $ns}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: ""
  resources: {requests: {storage: 1Gi}}
YAML
  if ! poll "$TIMEOUT" claims_bound "$ns" csi 1; then
    fail "[$side] claim $ns/csi-0: not Bound within ${TIMEOUT}s: $(pvc_state "$ns" csi-0)"
    return 0
  fi
  pending_pod "$side" csi-0 csi-0
  if ! poll "$TIMEOUT" pods_bound "$ns" csi 1; then
    fail "[$side] $ns/csi-0 not bound within ${TIMEOUT}s: $(why "$ns" csi-0)"
    return 0
  fi
  node="$(node_of "$ns" csi-0)"
  if [[ "$node" == "$last" ]]; then
    pass "[$side] $ns/csi-0 on $node, the only node whose CSINode allows a volume of $CSI_DRIVER"
  else
    fail "[$side] $ns/csi-0 on $node, a node whose CSINode allows no volume of $CSI_DRIVER (want $last)"
  fi
}

# ------------------------------------------------------------ the PV binder
# kube-controller-manager (hack/cluster.sh's) stopped and started again with
# another --controllers: kcm_restart CONTROLLERS. The command line it first
# ran with is kept, so that kcm_restart '*' gives back the cluster's own.
kcm_port() { sed -n 's/^--secure-port=//p' "$WORK/kcm-first.cmdline"; }
kcm_healthy() { curl -fsSk "https://127.0.0.1:$(kcm_port)/healthz"; }
kcm_controllers() {
  tr '\0' '\n' <"/proc/$(cluster_pid kube-controller-manager)/cmdline" | sed -n 's/^--controllers=//p'
}
pv_binder_starts() { grep -c '"Starting persistent volume controller"' "$kcm_log" || true; }
pv_binder_offs() { grep -c '"Warning: controller is disabled" controller="persistentvolume-binder-controller"' "$kcm_log" || true; }
kcm_restart() {
  local starts offs
  starts="$(pv_binder_starts)" offs="$(pv_binder_offs)"
  cluster_kill kube-controller-manager TERM || return 1
  [[ -f "$WORK/kcm-first.cmdline" ]] || cp "$WORK/kube-controller-manager.cmdline" "$WORK/kcm-first.cmdline"
  sed "s/^--controllers=.*/--controllers=$1/" "$WORK/kcm-first.cmdline" >"$WORK/kube-controller-manager.cmdline"
  cluster_start_again kube-controller-manager
  poll "$TIMEOUT" kcm_healthy || return 1
  [[ "$(kcm_controllers)" == "$1" ]] || return 1
  # Until its log says the binder is off, or started (once more than before).
  if [[ "$1" == *-persistentvolume-binder-controller* ]]; then
    poll "$TIMEOUT" test_gt pv_binder_offs "$offs"
  else
    poll "$TIMEOUT" test_gt pv_binder_starts "$starts"
  fi
}
test_gt() { (($("$1") > $2)); }  # test_gt COMMAND N: COMMAND prints more than N

# shim_killed_mid_bind: kscore's PreBind waits for the PV binder, which is
# off; the shim is SIGKILLed while it waits, after it wrote the claimRefs,
# and started again before the binder is back. The restarted shim must take
# the claimRefs the killed one wrote as the claims' volumes (upstream's
# FindMatchingVolume: a volume pre-bound to the claim wins, on its node
# only), not book a second volume: each node has two free PVs, so a
# scheduler that ignored them could.
MID_PODS=3
scenario_shim_killed_mid_bind() {
  local side="$1"
  if [[ "$side" != kscore ]]; then
    skip "[$side] shim_killed_mid_bind: kscore only (it SIGKILLs kscore's shim in PreBind; default-scheduler is not restarted)"
    return 0
  fi
  # The PVs first: the binder makes them Available (a volume of no phase
  # is no candidate for a claim).
  mid_pvs "$side"
  if ! poll "$TIMEOUT" mid_available; then
    fail "[$side] PVs $side-mid-*: not all Available within ${TIMEOUT}s ($(mid_phases | tr '\n' ' '))"
    return 0
  fi
  if ! kcm_restart '*,-persistentvolume-binder-controller'; then
    fail "[$side] kube-controller-manager did not come back without persistentvolume-binder-controller within ${TIMEOUT}s (controllers: '$(kcm_controllers)'; log $kcm_log)"
    kcm_restore "$side"
    return 0
  fi
  pass "[$side] kube-controller-manager runs without the PV binder (--controllers=$(kcm_controllers); its log: persistentvolume-binder-controller disabled)"
  mid_bind_run "$side"
  kcm_restore "$side"
  mid_bind_settle "$side"
}
# kcm_restore SIDE: the controller manager with its own controllers again.
kcm_restore() {
  if kcm_restart '*'; then
    pass "[$1] kube-controller-manager runs again with --controllers=* and its PV binder started"
  else
    fail "[$1] kube-controller-manager did not come back with the PV binder within ${TIMEOUT}s (controllers: '$(kcm_controllers)'; log $kcm_log)"
  fi
}

# mid_claims: "PV=NS/CLAIM" for each of this scenario's PVs naming a claim.
mid_claims() {
  k get pv -l kscore-e2e/mid-bind -o jsonpath='{range .items[*]}{.metadata.name}={.spec.claimRef.namespace}/{.spec.claimRef.name}{"\n"}{end}' |
    grep -v '=/$' | sort
}
mid_claimed() {  # mid_claimed NS: a PV names each claim mid-*
  local claims i
  claims="$(mid_claims)"
  for ((i = 0; i < MID_PODS; i++)); do
    grep -q "=$1/mid-$i\$" <<<"$claims" || return 1
  done
}
pods_unbound() {  # pods_unbound NS PREFIX N: no pod PREFIX-0..N-1 is bound
  local i
  for ((i = 0; i < $3; i++)); do
    [[ -z "$(node_of "$1" "$2-$i")" ]] || return 1
  done
}
# restarted_chose NS: the restarted shim's log has a node for each pod.
restarted_chose() {
  local i
  for ((i = 0; i < MID_PODS; i++)); do
    grep -q "pod $1/mid-$i -> node " "$WORK/shim.log" || return 1
  done
}

mid_phases() {
  k get pv -l kscore-e2e/mid-bind -o jsonpath='{range .items[*]}{.metadata.name}={.status.phase}{"\n"}{end}'
}
mid_available() { (($(mid_phases | grep -c '=Available$') == 6)); }
mid_pvs() {  # mid_pvs SIDE: two local PVs pinned to each node
  local side="$1" n j
  for n in 1 2 3; do
    for j in a b; do
      k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: PersistentVolume
metadata:
  name: $side-mid-$n$j
  labels: {kscore-e2e/mid-bind: $side}
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteOnce]
  persistentVolumeReclaimPolicy: Retain
  storageClassName: local-wffc
  local: {path: /mnt/kscore-e2e/$side-mid-$n$j}
  nodeAffinity:
    required:
      nodeSelectorTerms:
      - matchExpressions:
        - {key: kubernetes.io/hostname, operator: In, values: [kscore-node-$n]}
YAML
    done
  done
}

mid_bind_run() {
  local side="$1" ns i
  ns="$(ns_of "$side")"
  for ((i = 0; i < MID_PODS; i++)); do
    k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: mid-$i, namespace: $ns}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: local-wffc
  resources: {requests: {storage: 1Gi}}
  selector: {matchLabels: {kscore-e2e/mid-bind: $side}}
YAML
    pending_pod "$side" "mid-$i" "mid-$i"
  done
  if ! poll "$TIMEOUT" mid_claimed "$ns"; then
    fail "[$side] kscore wrote no claimRef for each of $ns/mid-{0..$((MID_PODS - 1))} within ${TIMEOUT}s (PV=claim: $(mid_claims | tr '\n' ' '))"
    for ((i = 0; i < MID_PODS; i++)); do info "$(why "$ns" "mid-$i")"; done
    return 0
  fi
  MID_BEFORE="$(mid_claims)"
  pass "[$side] kscore wrote a claimRef for each claim, PreBind waits: $(tr '\n' ' ' <<<"$MID_BEFORE")"
  check "[$side] each claim is named by one PV only" test "$(grep -c . <<<"$MID_BEFORE")" -eq "$MID_PODS"
  check "[$side] pods $ns/mid-* are unbound while the PV binder is off" pods_unbound "$ns" mid "$MID_PODS"

  local pid="${PIDS[shim]}"
  stop shim KILL
  cp "$WORK/shim.log" "$WORK/shim-killed.log"
  check "[$side] shim (pid $pid) SIGKILLed in PreBind; pods still unbound" pods_unbound "$ns" mid "$MID_PODS"
  shim_up shim "$WORK/config.yaml" --leader-elect=false
  # Still without the binder: the restarted shim places the pods again
  # over the claimRefs the killed one wrote.
  if ! poll "$TIMEOUT" restarted_chose "$ns"; then
    fail "[$side] the restarted shim chose no node for each of $ns/mid-* within ${TIMEOUT}s (log $WORK/shim.log)"
    return 0
  fi
  local pv node want
  for ((i = 0; i < MID_PODS; i++)); do
    node="$(grep -o "pod $ns/mid-$i -> node [^ ]*" "$WORK/shim.log" | tail -n1)"
    node="${node##* }"
    pv="$(grep "=$ns/mid-$i\$" <<<"$MID_BEFORE" | cut -d= -f1)"
    want="$(pv_host "$pv")"
    check "[$side] the restarted shim chose $node for $ns/mid-$i, the node of PV $pv the killed shim claimed ($want)" \
      test "$node" = "$want"
  done
  check "[$side] before the binder is back, the PVs name the same claims as before the kill" \
    test "$(mid_claims)" = "$MID_BEFORE"
}

mid_bind_settle() {
  local side="$1" ns i
  ns="$(ns_of "$side")"
  [[ -n "${MID_BEFORE:-}" ]] || return 0
  if ! poll "$TIMEOUT" mid_settled "$ns"; then
    fail "[$side] pods $ns/mid-*: not every pod bound and claim Bound within ${TIMEOUT}s of the binder's return"
    for ((i = 0; i < MID_PODS; i++)); do
      info "$(why "$ns" "mid-$i"); claim $ns/mid-$i: $(pvc_state "$ns" "mid-$i")"
    done
    info "PV=claim: $(mid_claims | tr '\n' ' ')"
    return 0
  fi
  pass "[$side] pods $ns/mid-{0..$((MID_PODS - 1))} bound, claims Bound"
  local pv node host claim_ref pvc_uid first
  for ((i = 0; i < MID_PODS; i++)); do
    pv="$(pvc_field "$ns" "mid-$i" '{.spec.volumeName}')"
    node="$(node_of "$ns" "mid-$i")"
    host="$(pv_host "$pv")"
    claim_ref="$(k get pv "$pv" -o jsonpath='{.spec.claimRef.namespace}/{.spec.claimRef.name}/{.spec.claimRef.uid}/{.status.phase}')"
    pvc_uid="$(pvc_field "$ns" "mid-$i" '{.metadata.uid}')"
    first="$(grep "=$ns/mid-$i\$" <<<"$MID_BEFORE" | cut -d= -f1)"
    if [[ "$pv" == "$first" && "$node" == "$host" && "$claim_ref" == "$ns/mid-$i/$pvc_uid/Bound" ]]; then
      pass "[$side] pod $ns/mid-$i on $node, the node of PV $pv (Bound to $ns/mid-$i, the PV the killed shim claimed)"
    else
      fail "[$side] pod $ns/mid-$i on '$node'; claim $ns/mid-$i has PV '$pv' (pinned to '$host', claimRef+phase '$claim_ref', want $ns/mid-$i/$pvc_uid/Bound; the killed shim claimed '$first')"
    fi
  done
  # Every PV's claimRef, and every claim's volume: none named twice.
  local refs vols
  refs="$(k get pv -o jsonpath='{range .items[*]}{.spec.claimRef.namespace}/{.spec.claimRef.name}{"\n"}{end}' | grep -v '^/$' | sort || true)"
  check "[$side] no two PVs name the same claim (claimRefs: $(grep -c . <<<"$refs"), repeated: '$(uniq -d <<<"$refs" | tr '\n' ' ')')" \
    test -z "$(uniq -d <<<"$refs")"
  vols="$(k get pvc -A -o jsonpath='{range .items[*]}{.spec.volumeName}{"\n"}{end}' | grep . | sort || true)"
  check "[$side] no PV is the volume of two claims (claims with a volume: $(grep -c . <<<"$vols"), repeated: '$(uniq -d <<<"$vols" | tr '\n' ' ')')" \
    test -z "$(uniq -d <<<"$vols")"
  local free
  free="$(k get pv -l kscore-e2e/mid-bind -o jsonpath='{range .items[*]}{.metadata.name}={.spec.claimRef.name}/{.status.phase}{"\n"}{end}' | grep -c '=/Available$' || true)"
  check "[$side] the other $((6 - MID_PODS)) PVs of the scenario are Available, naming no claim ($free are)" \
    test "$free" -eq $((6 - MID_PODS))
}
# mid_settled NS: the pods mid-* bound, their claims Bound.
mid_settled() { pods_bound "$1" mid "$MID_PODS" && claims_bound "$1" mid "$MID_PODS"; }

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
SKIPPED=0
skip() { echo "SKIP: $*"; SKIPPED=1; }  # a scenario that does not apply to a side
timed() {  # timed NAME SIDE COMMAND...: runs COMMAND, prints and records its outcome and time
  local name="$1" side="$2" t0=$SECONDS failed_before=$failed outcome=PASS
  shift 2
  local label="$side"
  [[ "$side" == all ]] || label="$side: schedulerName $(scheduler_of "$side")"
  echo "--- $name [$label]"
  SKIPPED=0
  "$@"
  ((SKIPPED == 0)) || outcome=SKIP
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
    if unschedulable_with "$ns" "$pod" "$text"; then
      pass "$ns/$pod is still Pending with '$text'"
    else
      fail "$ns/$pod is no longer Pending with '$text': $(why "$ns" "$pod"); FailedScheduling notes: '$(ns_events "$ns" "$pod" FailedScheduling | sort | uniq -c | tr '\n' ' ')'"
    fi
  done
}
((${#EXPECT_PENDING[@]} == 0)) || timed still_pending all still_pending

echo "--- outcomes (scenario, side, seconds)"
printf '%s\n' "${OUTCOMES[@]}"
finish
