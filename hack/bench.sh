#!/usr/bin/env bash
# Side-by-side scheduling benchmark: kscore (shim + scorers) against the reference
# kube-scheduler, on the local control plane (hack/cluster.sh), in the style of upstream
# scheduler_perf's SchedulingBasic: N nodes first, then M pods in groups of 10 sharing an
# `app` label (requests 100m / 500Mi each), measured until every pod is bound.
#
# Usage:
#   hack/bench.sh [--shape S] [--nodes N] [--pods M] [--init I] [--scorers K]
#                 [--runs a,b,c,d,e[,f][,b100,c100,d100]]
#                 [--repeat R] [--no-micro]
#   hack/bench.sh --sweep [--scorers K]     N in 100, 1000, 5000 with M = 2N; writes a PNG
# --repeat R runs the whole list R times, interleaved, and reports medians (default 2; 1 for
# --sweep).
#
# --shape picks the workload (default basic):
#   basic         the SchedulingBasic-like shape above
#   spread        upstream scheduler_perf's TopologySpreading: nodes labelled
#                 topology.kubernetes.io/zone moon-1/moon-2/moon-3 round robin (4 CPU, 32Gi,
#                 110 pods: templates/node-default.yaml); I init pods (pod-default.yaml, in
#                 namespace-1), then the M measured pods (label color: blue, a
#                 topologySpreadConstraint maxSkew 5 over the zone, DoNotSchedule, selecting
#                 color: blue; namespace-2). Upstream's 5000Nodes: 5000 init, 2000 measured.
#   antiaffinity  upstream's SchedulingPodAntiAffinity: nodes without a zone label; I init
#                 pods (namespace sched-0) then the M measured pods (sched-1), all labelled
#                 color: green with required podAntiAffinity against color: green over
#                 kubernetes.io/hostname in both namespaces: one such pod per node, so I + M
#                 must not exceed N. Upstream's 5000Nodes: 1000 init, 1000 measured.
#   preemption    upstream's PreemptionBasic: nodes without a zone label; I init pods
#                 (pod-low-priority.yaml: 900m / 500Mi, no priority class, so priority 0;
#                 namespace-1) fill the nodes, four to a node (3.6 of 4 CPU), then the M measured
#                 pods (pod-high-priority.yaml: 3970m / 500Mi, priority 9999999 through the
#                 PriorityClass kbench-high, PreemptLowerPriority; namespace-2) each fit a node
#                 only once the scheduler has preempted all four pods there, so I <= 4N and
#                 M <= N. Measured until every high-priority pod is bound (the victims, grace
#                 period 0 and no kubelet, go at once). Upstream's 1000Nodes: 4000 init, 1000
#                 measured; defaults here I = 4N, M = N. The table counts the victims.
#   hostport      upstream's batching/HostPortConflict: nodes without a zone label, then M pods
#                 (pod-hostport-80.yaml: 100m / 100Mi, host port 80; namespace-1), so each pod
#                 leaves its node infeasible for the next, M <= N (default M = N). Both sides
#                 run upstream's scheduler-config-no-topology.yaml (PodTopologySpread without
#                 default constraints), with which kube-scheduler's opportunistic batching signs
#                 these pods; no init pods.
#   csipvs        upstream's volumes/SchedulingCSIPVs: nodes without a zone label whose
#                 allocatable has attachable-volumes-csi-ebs.csi.aws.com 39 and whose CSINode
#                 allows 39 volumes of ebs.csi.aws.com; I init pods (namespace-1) then the M
#                 measured pods (namespace-2), pod-default.yaml each with its own claim
#                 (pvc.yaml: ReadOnlyMany 1Gi) pre-bound to its own PV (pv-csi.yaml: CSI driver
#                 ebs.csi.aws.com), as runners.go's CreatePodWithPersistentVolume makes them.
#                 The PV/PVC pairs are created before each batch of pods and are not timed
#                 (upstream creates them inside the op, so its figure includes them). Upstream's
#                 5000Nodes: 5000 init, 1000 measured; defaults here I = N, M = 1000. The
#                 measured run checks that every claim is still Bound to its own PV and that no
#                 node exceeds its CSINode limit.
#   intreepvs     upstream's SchedulingInTreePVs: the same with pv-aws.yaml (in-tree
#                 awsElasticBlockStore) and plain nodes (no CSINode, no attach limit).
# For all of these, the init pods are created and scheduled first by the scheduler under test (as
# upstream's unmeasured createPods op), then the control plane settles, then the M measured
# pods are timed; --init I defaults to upstream's ratio to the node count (spread I = N,
# antiaffinity I = N/5, preemption I = 4N, csipvs and intreepvs I = N), --nodes and --pods
# are taken as given (defaults 1000/2000; preemption M = N; csipvs and intreepvs M = 1000). The profile is kube-scheduler's stock default one on both
# sides: (a) as always, (c)/(d) the shim and scorers with a profile named kscore-default and
# nothing else in it; (b) (Concentrate on kube-scheduler) is skipped, and for preemption (e)
# and (f) too (a trivial binder cannot preempt). The measured run reads the placement back
# and the table says whether the constraint held. A scheduler that does not get every
# measured pod bound within 120 s + M/10 s is reported TIMED OUT in the table (pods bound so
# far, their latencies; for preemption the victims so far). Example:
#   hack/bench.sh --shape spread --nodes 5000 --pods 2000 --runs a,c --repeat 1
#   hack/bench.sh --shape preemption --nodes 1000 --runs a,c --repeat 1
#   hack/bench.sh --shape csipvs --nodes 5000 --runs a,c,e --repeat 1
#
# Runs (one after the other, each on a fresh control plane with the same N nodes, so that
# no run pays for the previous one's leftovers: deleted pods, events, a grown etcd):
#   a  reference kube-scheduler, stock default profile (schedulerName default-scheduler)
#   b  reference kube-scheduler, the seed's Concentrate profile (examples/config/concentrate.yaml)
#   c  shim + 1 scorer, same profile
#   d  shim + K scorers (default 3)
#   e  floor: bench/binder's trivial binder (round robin, no filtering, no scoring)
#   f  (only when asked for) the floor plus the Scheduled event per pod that kube-scheduler
#      and the shim write, through client-go's events broadcaster: what this API server takes
#      from a scheduler that writes what kube-scheduler writes
#   b100, c100, d100  (only when asked for; basic shape) b, c and d with the Concentrate
#      profile plus `percentageOfNodesToScore: 100`: every feasible node is scored for every
#      pod. Without it both schedulers stop filtering once they have found an adaptive share of
#      the nodes feasible (50 - N/125 percent, at least 5% and 100 nodes), from a start that
#      rotates from pod to pod: at 5000 nodes Concentrate sees 500 of them per pod, often
#      not those already running the pod's group, and packs each app group weakly. Here scoring
#      cost, not the API server, limits the scheduler. Example:
#        hack/bench.sh --nodes 5000 --pods 10000 --runs b,c,d,b100,c100,d100 --repeat 1
#      The table adds a section comparing every Concentrate run with (b): pods/s, p99, CPU
#      per pod and how concentrated each app group of 10 ended up.
# Every scheduler gets clientConnection qps 5000 / burst 5000 and the same admin kubeconfig
# (system:masters: API Priority and Fairness exempt, so no max-in-flight throttling either).
# The cluster runs without kwok (KSCORE_NO_KWOK=1): no kubelets, no pod status writes, no
# node heartbeats, as in scheduler_perf. The cluster's own default-scheduler (stock client
# limits) is stopped; run (a) starts a kube-scheduler with the stock profile instead.
#
# Output: a Markdown table on stdout, last line `throughput ratio shim/kube-scheduler: X`
# (c over a); under bench/results/ the table (<tag>.md), the raw JSON as one <tag>.tar.xz and
# (sweep) a PNG.
# Environment: KSCORE_BENCH_DIR (work dir, default /tmp/kscore-bench),
# KSCORE_BENCH_MICRO_REPS (micro-benchmark repetitions, default 5), KSCORE_BENCH_BUILD=0
# (do not run ninja), KSCORE_BENCH_PERF=cd (perf record the scheduler processes of runs c
# and d into the raw dir; KSCORE_BENCH_PERF_GRAPH=dwarf unwinds stacks from DWARF, since
# the packaged libraries keep no frame pointers), KSCORE_BENCH_PPROF=ce (a Go CPU profile of the API server, 20 s or
# KSCORE_BENCH_PPROF_SECONDS,
# from the start of runs c and e, into the raw dir; read with: go tool pprof -top RAW/LETTER-N.apiserver.pprof),
# KSCORE_BENCH_KEEP=1 (leave the last run's cluster up on exit, with its pods, for inspection),
# KSCORE_BENCH_SHIM_FLAGS (extra shim flags for runs c and d, e.g. "--bind-workers 16").
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "${ROOT}"

NODES=1000 PODS="" SCORERS=3 RUNS=a,b,c,d,e SWEEP=0 MICRO=1 REPEAT="" SHAPE=basic INIT=""
while (($#)); do
  case "$1" in
    --shape) SHAPE="$2"; shift 2 ;;
    --init) INIT="$2"; shift 2 ;;
    --nodes) NODES="$2"; shift 2 ;;
    --pods) PODS="$2"; shift 2 ;;
    --scorers) SCORERS="$2"; shift 2 ;;
    --runs) RUNS="$2"; shift 2 ;;
    --sweep) SWEEP=1; shift ;;
    --repeat) REPEAT="$2"; shift 2 ;;
    --no-micro) MICRO=0; shift ;;
    -h|--help) awk 'NR > 1 && /^#/ {sub(/^# ?/, ""); print; next} NR > 1 {exit}' "$0"; exit 0 ;;
    *) echo "bench: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done

log() { echo "bench: $(date +%T) $*" >&2; }
# Two repetitions of every run by default (the table shows medians); one for the sweep.
[[ -n "${REPEAT}" ]] || REPEAT=$( ((SWEEP)) && echo 1 || echo 2)
[[ "${REPEAT}" =~ ^[1-9]$ ]] || { echo "bench: --repeat takes 1..9, not '${REPEAT}'" >&2; exit 2; }
die() { echo "bench: ERROR: $*" >&2; exit 1; }
# Workload shape (see the header): node labels, init pods, profile.
NODE_FLAGS=()
case "${SHAPE}" in
  basic) [[ -z "${INIT}" ]] || die "--init is for --shape spread|antiaffinity|preemption|csipvs|intreepvs" ;;
  spread) NODE_FLAGS=(--zones moon-1,moon-2,moon-3 --memory 32Gi); : "${INIT:=${NODES}}" ;;
  antiaffinity) NODE_FLAGS=(--zones "" --memory 32Gi); : "${INIT:=$((NODES / 5))}"; : "${PODS:=2000}"
    ((INIT + PODS <= NODES)) || die "antiaffinity places one pod per node: --init ${INIT} + --pods ${PODS} exceeds --nodes ${NODES}" ;;
  preemption) NODE_FLAGS=(--zones "" --memory 32Gi); : "${INIT:=$((4 * NODES))}"; : "${PODS:=${NODES}}"
    ((INIT <= 4 * NODES)) || die "preemption: four 900m init pods fill a 4-CPU node: --init ${INIT} exceeds 4 x --nodes ${NODES}"
    ((PODS <= NODES)) || die "preemption: one 3970m high-priority pod per 4-CPU node: --pods ${PODS} exceeds --nodes ${NODES}" ;;
  hostport) NODE_FLAGS=(--zones "" --memory 32Gi); : "${PODS:=${NODES}}"
    [[ -z "${INIT}" ]] || die "--init is for --shape spread|antiaffinity|preemption|csipvs|intreepvs"
    ((PODS <= NODES)) || die "hostport: one pod with host port 80 per node: --pods ${PODS} exceeds --nodes ${NODES}" ;;
  csipvs|intreepvs) NODE_FLAGS=(--zones "" --memory 32Gi)
    [[ "${SHAPE}" == csipvs ]] && NODE_FLAGS+=(--csi-limit 39)
    # kbench writes each PV/PVC pair bound, as runners.go does; scheduler_perf runs no PV
    # controller, and this cluster's would rebind or mark Lost pairs it did not bind itself.
    export KSCORE_CONTROLLERS_OFF=persistentvolume-binder-controller
    : "${INIT:=${NODES}}"; : "${PODS:=1000}" ;;
  *) die "--shape takes basic, spread, antiaffinity, preemption, hostport, csipvs or intreepvs, not '${SHAPE}'" ;;
esac
: "${PODS:=2000}"
[[ "${PODS}" =~ ^[1-9][0-9]*$ ]] || die "--pods takes a count, not '${PODS}'"
INIT="${INIT:-0}"
[[ "${INIT}" =~ ^[0-9]+$ ]] || die "--init takes a count, not '${INIT}'"
((SWEEP == 0)) || [[ "${SHAPE}" == basic ]] || die "--sweep runs the basic shape only"
IFS=, read -r -a RUNLIST <<<"${RUNS}"
for r in "${RUNLIST[@]}"; do
  [[ "${r}" =~ ^([a-f]|[bcd]100)$ ]] || die "--runs takes a..f, b100, c100, d100 (comma-separated), not '${r}'"
done

WORK="${KSCORE_BENCH_DIR:-/tmp/kscore-bench}"
RESULTS="${ROOT}/bench/results"
export KSCORE_CLUSTER_DIR="${WORK}/cluster"
export KSCORE_NO_KWOK=1
[[ -z "${KSCORE_BENCH_PPROF:-}" ]] || export KSCORE_APISERVER_PROFILING=true
mkdir -p "${WORK}" "${RESULTS}"
STAMP="$(date +%Y%m%d-%H%M%S)"
RAW="${WORK}/raw-${STAMP}"
mkdir -p "${RAW}"
TCK="$(getconf CLK_TCK)"

# ------------------------------------------------------------------ build
log "building (ninja -C build, bench/binder)"
if pgrep -x ninja >/dev/null; then
  log "another ninja is running in this machine; not building (using build/bin as it is)"
elif [[ "${KSCORE_BENCH_BUILD:-1}" == 1 ]] && command -v ninja >/dev/null && [[ -f build/build.ninja ]]; then
  # shellcheck disable=SC2046
  ninja -C build scorer shim $(ninja -C build -t targets all 2>/dev/null | grep -o '^[a-z_]*_bench:' | tr -d : | sort -u) >&2 ||
    log "WARNING: ninja failed (someone else's edit?); using the binaries already in build/bin"
fi
# Snapshot the binaries: other people rebuild build/bin while a long run goes on.
mkdir -p "${WORK}/bin"
for b in scorer shim; do
  if [[ -x "build/bin/${b}" ]]; then cp "build/bin/${b}" "${WORK}/bin/${b}"
  elif [[ -x "${WORK}/bin/${b}" ]]; then log "WARNING: build/bin/${b} missing; using the previous snapshot ${WORK}/bin/${b}"
  else log "WARNING: build/bin/${b} is missing: runs c and d will fail (ninja -C build)"; fi
done
for b in build/bin/*_bench; do [[ -x "${b}" ]] && cp "${b}" "${WORK}/bin/"; done
SCORER_BIN="${WORK}/bin/scorer" SHIM_BIN="${WORK}/bin/shim"
(cd bench/binder && go build -o "${WORK}/kbench" .) || die "building bench/binder failed"
KBENCH="${WORK}/kbench"
BIN="$(hack/cluster.sh bin | tail -n1)"

# ------------------------------------------------------------------ processes
declare -A PIDS=()
start() {  # start NAME CMD... (log in RAW/NAME.log)
  local name="$1"; shift
  "$@" >"${RAW}/${name}.log" 2>&1 &
  PIDS[$name]=$!
}
stop() {  # stop NAME...
  local n pid
  for n in "$@"; do
    pid="${PIDS[$n]:-}"
    [[ -n "${pid}" ]] || continue
    kill -TERM "${pid}" 2>/dev/null || true
  done
  for n in "$@"; do
    pid="${PIDS[$n]:-}"
    [[ -n "${pid}" ]] || continue
    for _ in $(seq 1 100); do kill -0 "${pid}" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "${pid}" 2>/dev/null || true
    wait "${pid}" 2>/dev/null || true
    unset "PIDS[$n]"
  done
}
CLUSTER_UP=0
cleanup() {
  local rc=$?
  # shellcheck disable=SC2046
  stop $(printf '%s ' "${!PIDS[@]}")
  if ((CLUSTER_UP)) && [[ "${KSCORE_BENCH_KEEP:-0}" != 1 ]]; then hack/cluster.sh down >/dev/null 2>&1 || true; fi
  exit "${rc}"
}
trap cleanup EXIT
# free_port: a free port on 127.0.0.1, never one this run was given before.
free_port() { python3 "${ROOT}/hack/lib/free_port.py" "${WORK}/used-ports"; }
wait_until() {  # wait_until SECONDS CMD...
  local deadline=$((SECONDS + $1)); shift
  until "$@" >/dev/null 2>&1; do
    ((SECONDS < deadline)) || return 1
    sleep 0.2
  done
}
cpu_ticks() { awk '{sub(/^.*\) /, ""); print $12 + $13}' "/proc/$1/stat" 2>/dev/null || echo 0; }
# Every run starts from a quiet control plane: the fresh cluster's own start-up work
# (bootstrap objects, node creation, controllers' first syncs) must not be billed to the
# scheduler. Waits until the API server and etcd together use under 15% of a core over 2 s,
# or hold steady (within 3 points of the 2 s before) under 30%: with 5000 nodes the
# controllers' periodic node sync alone keeps them near 17% on a slow hour, the same for
# every run, and waiting for 15% then only burnt the 60 s limit before each run.
settle() {
  local i a0 a1 busy prev=1000
  for ((i = 0; i < 30; i++)); do
    a0=$(($(cpu_ticks "${APISERVER_PID}") + $(cpu_ticks "${ETCD_PID}")))
    sleep 2
    a1=$(($(cpu_ticks "${APISERVER_PID}") + $(cpu_ticks "${ETCD_PID}")))
    busy=$(((a1 - a0) * 100 / (2 * TCK)))
    ((busy < 15)) && return 0
    ((busy < 30 && busy - prev <= 3 && prev - busy <= 3)) && { log "control plane steady at ${busy}% of a core"; return 0; }
    prev=${busy}
  done
  log "WARNING: the control plane is still busy (${busy}% of a core) after 60 s; measuring anyway"
}
hwm_kb() { awk '/^VmHWM/ {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }

# ------------------------------------------------------------------ cluster
cluster_up() {  # cluster_up N — cluster with N nodes (kscore-node-1 + bench-node-2..N)
  hack/cluster.sh down >/dev/null 2>&1 || true
  log "starting the local control plane (no kwok)"
  local try
  for try in 1 2 3; do  # cluster.sh picks free ports then binds: a busy machine can race it
    if KC="$(hack/cluster.sh up --nodes 1 2>"${RAW}/cluster-up.log" | tail -n1)" && [[ -f "${KC}" ]]; then break; fi
    tail -n 3 "${RAW}/cluster-up.log" >&2
    ((try < 3)) || die "hack/cluster.sh up failed 3 times (${RAW}/cluster-up.log)"
    log "cluster up failed; retrying"
    hack/cluster.sh down >/dev/null 2>&1 || true
  done
  CLUSTER_UP=1
  # The cluster's default-scheduler runs with stock client limits (qps 50); run (a) needs
  # one with the same limits as the others. Stop it (it is ours: started just above).
  local pidf="${KSCORE_CLUSTER_DIR}/pids/kube-scheduler.pid"
  if [[ -f "${pidf}" ]]; then
    local p; p="$(cat "${pidf}")"
    [[ "$(readlink "/proc/${p}/exe" 2>/dev/null)" == "$(readlink -f "${BIN}/kube-scheduler")" ]] && kill -TERM "${p}" 2>/dev/null || true
  fi
  APISERVER_PID="$(cat "${KSCORE_CLUSTER_DIR}/pids/kube-apiserver.pid")"
  ETCD_PID="$(cat "${KSCORE_CLUSTER_DIR}/pids/etcd.pid")"
  HAVE_NODES=1
  if [[ "${SHAPE}" != basic ]]; then
    # Every node from kbench with the shape's labels and capacity: kscore-node-1 (zone-a,
    # 16Gi) would be a fourth zone of one node, and the skew is counted per zone.
    "${BIN}/kubectl" --kubeconfig "${KC}" delete node kscore-node-1 >/dev/null
    HAVE_NODES=0
  fi
  add_nodes "$1"
}
add_nodes() {  # add_nodes N — grow the cluster to N nodes
  ((HAVE_NODES < $1)) || return 0
  log "creating nodes $((HAVE_NODES + 1))..$1"
  "${KBENCH}" nodes --kubeconfig "${KC}" --from $((HAVE_NODES + 1)) --to $(($1 + 1)) "${NODE_FLAGS[@]}"
  HAVE_NODES=$1
  local n
  n="$("${BIN}/kubectl" --kubeconfig "${KC}" get nodes --no-headers | grep -c ' Ready ')"
  [[ "${n}" -eq "$1" ]] || die "expected $1 Ready nodes, found ${n}"
}

# ------------------------------------------------------------------ configs
write_configs() {
  local cc="clientConnection:
  kubeconfig: ${KC}
  qps: 5000
  burst: 5000
leaderElection:
  leaderElect: false"
  cat >"${WORK}/default.yaml" <<EOF
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
${cc}
profiles:
- schedulerName: default-scheduler
EOF
  { cat examples/config/concentrate.yaml; echo "${cc}"; } >"${WORK}/concentrate.yaml"
  # b100, c100, d100: the same profile, every feasible node scored.
  { cat "${WORK}/concentrate.yaml"; echo "percentageOfNodesToScore: 100"; } >"${WORK}/concentrate-all.yaml"
  # spread / antiaffinity: kube-scheduler's stock default profile under another name, for
  # the shim and the scorers (runs c, d).
  cat >"${WORK}/kscore-default.yaml" <<EOF
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
${cc}
profiles:
- schedulerName: kscore-default
EOF
  # hostport: upstream batching's scheduler-config-no-topology.yaml (no default spreading, so
  # kube-scheduler's opportunistic batching signs the pods), on both sides.
  if [[ "${SHAPE}" == hostport ]]; then
    local f nt="  pluginConfig:
  - name: PodTopologySpread
    args:
      defaultingType: List
      defaultConstraints: []"
    for f in default kscore-default; do echo "${nt}" >>"${WORK}/${f}.yaml"; done
  fi
}

# ------------------------------------------------------------------ one run
# run_one LETTER N M [TAG] → RAW/LETTER-N[TAG].json (kbench result + process figures)
run_one() {
  local r="$1" n="$2" m="$3" t="${4:-}" sched procs=() metrics="" port addrs=() i
  # b100, c100, d100: run b, c or d with every feasible node scored.
  local conc="${WORK}/concentrate.yaml"
  [[ "${r}" == *100 ]] && conc="${WORK}/concentrate-all.yaml"
  case "${r}" in
    a|b|b100)
      sched=default-scheduler; local cfg="${WORK}/default.yaml"
      [[ "${r}" == b* ]] && { sched=concentrate-scheduler; cfg="${conc}"; }
      port="$(free_port)"
      start "ks-${r}" "${BIN}/kube-scheduler" --config "${cfg}" --bind-address 127.0.0.1 --secure-port "${port}" --v=1
      procs=("ks-${r}")
      wait_until 60 curl -fsk "https://127.0.0.1:${port}/readyz" || die "kube-scheduler (${r}) not ready; ${RAW}/ks-${r}.log"
      ;;
    c|d|c100|d100)
      sched=concentrate-scheduler; local cfg="${conc}"
      [[ "${SHAPE}" != basic ]] && { sched=kscore-default; cfg="${WORK}/kscore-default.yaml"; }
      local k=1; [[ "${r}" == d* ]] && k="${SCORERS}"
      for i in $(seq 1 "${k}"); do
        port="$(free_port)"
        start "scorer-${r}${i}" "${SCORER_BIN}" --config "${cfg}" --listen "127.0.0.1:${port}"
        procs+=("scorer-${r}${i}"); addrs+=("127.0.0.1:${port}")
        wait_until 30 bash -c "exec 3<>/dev/tcp/127.0.0.1/${port}" || die "scorer did not listen; ${RAW}/scorer-${r}${i}.log"
      done
      port="$(free_port)"; metrics="http://127.0.0.1:${port}/metrics"
      start "shim-${r}" "${SHIM_BIN}" --config "${cfg}" --kubeconfig "${KC}" \
        --scorer "$(IFS=,; echo "${addrs[*]}")" --leader-elect=false --secure-port 0 --insecure-serving-address "127.0.0.1:${port}" \
        ${KSCORE_BENCH_SHIM_FLAGS:-}
      procs+=("shim-${r}")
      wait_until 60 curl -fs "http://127.0.0.1:${port}/readyz" || die "shim (${r}) not ready; ${RAW}/shim-${r}.log"
      ;;
    e|f)
      sched=bench-binder
      rm -f "${WORK}/binder.ready"
      local ev=(); [[ "${r}" == f ]] && ev=(--events)
      start "binder" "${KBENCH}" bind --kubeconfig "${KC}" --scheduler "${sched}" --ready-file "${WORK}/binder.ready" \
        "${ev[@]}"
      procs=("binder")
      wait_until 60 test -f "${WORK}/binder.ready" || die "binder not ready; ${RAW}/binder.log"
      ;;
    *) die "unknown run '${r}'" ;;
  esac
  sleep 2  # let start-up work (initial lists, cache fill) finish outside the measurement
  if ((INIT > 0)); then
    # The shape's init pods, scheduled by the scheduler under test, not measured; the
    # control plane settles again before the measured pods.
    log "run ${r}: ${INIT} ${SHAPE} init pods (not measured), scheduler ${sched}"
    "${KBENCH}" run --kubeconfig "${KC}" --shape "${SHAPE}" --init --pods "${INIT}" --scheduler "${sched}" \
      --run "${r}-init" --timeout "$((120 + INIT / 10))s" --out "${RAW}/${r}-${n}${t}.init.kbench.json" \
      2>"${RAW}/${r}-${n}${t}.init.kbench.log" || {
      tail -n 3 "${RAW}/${r}-${n}${t}.init.kbench.log" >&2
      stop "${procs[@]}"
      log "run ${r}: init pods not all bound (${RAW}/${r}-${n}${t}.init.kbench.log)"
      return 1
    }
  fi
  settle
  local p c0=0 c1=0 a0 a1 e0 e1 hwm=0
  for p in "${procs[@]}"; do c0=$((c0 + $(cpu_ticks "${PIDS[$p]}"))); done
  a0="$(cpu_ticks "${APISERVER_PID}")"; e0="$(cpu_ticks "${ETCD_PID}")"
  local load; load="$(cut -d' ' -f1-3 /proc/loadavg)"
  log "run ${r}: ${m} ${SHAPE} pods on ${n} nodes, scheduler ${sched} (load ${load})"
  local rc=0 perf_pid=""
  if [[ "${KSCORE_BENCH_PERF:-}" == *"${r}"* ]] && command -v perf >/dev/null; then
    # Optional CPU profile of this run's scheduler processes (software clock: this VM
    # has no hardware counters). Read with: perf report -i RAW/LETTER-N.perf.data
    local pl=""; for p in "${procs[@]}"; do pl+="${pl:+,}${PIDS[$p]}"; done
    local graph=(-g)
    [[ "${KSCORE_BENCH_PERF_GRAPH:-}" == dwarf ]] && graph=(-F 199 --call-graph dwarf,16384)
    perf record -F 499 "${graph[@]}" -e cpu-clock -p "${pl}" -o "${RAW}/${r}-${n}${t}.perf.data" >"${RAW}/${r}-${n}${t}.perf.log" 2>&1 &
    perf_pid=$!
  fi
  local pprof_pid=""
  if [[ "${KSCORE_BENCH_PPROF:-}" == *"${r}"* ]]; then
    "${BIN}/kubectl" --kubeconfig="${KC}" get --raw "/debug/pprof/profile?seconds=${KSCORE_BENCH_PPROF_SECONDS:-20}" \
      >"${RAW}/${r}-${n}${t}.apiserver.pprof" 2>"${RAW}/${r}-${n}${t}.pprof.log" &
    pprof_pid=$!
  fi
  "${KBENCH}" run --kubeconfig "${KC}" --shape "${SHAPE}" --pods "${m}" --scheduler "${sched}" --run "${r}" \
    --timeout "$((120 + m / 10))s" --out "${RAW}/${r}-${n}${t}.kbench.json" 2> >(tee "${RAW}/${r}-${n}${t}.kbench.log" >&2) || rc=$?
  if [[ -n "${pprof_pid}" ]]; then wait "${pprof_pid}" || log "API server profile failed: ${RAW}/${r}-${n}${t}.pprof.log"; fi
  if [[ -n "${perf_pid}" ]]; then kill -INT "${perf_pid}" 2>/dev/null || true; wait "${perf_pid}" 2>/dev/null || true; fi
  local split=""
  for p in "${procs[@]}"; do
    c1=$((c1 + $(cpu_ticks "${PIDS[$p]}")))
    hwm=$((hwm + $(hwm_kb "${PIDS[$p]}")))
    split+="${split:+, }\"${p}\": $(hwm_kb "${PIDS[$p]}")"
  done
  a1="$(cpu_ticks "${APISERVER_PID}")"; e1="$(cpu_ticks "${ETCD_PID}")"
  local req=0 resp=0
  if [[ -n "${metrics}" ]]; then
    curl -fs "${metrics}" >"${RAW}/${r}-${n}${t}.metrics" || true
    req="$(awk '/^kscore_scorer\{.*counter="request_bytes"/ {print $NF}' "${RAW}/${r}-${n}${t}.metrics" | head -1)"
    resp="$(awk '/^kscore_scorer\{.*counter="response_bytes"/ {print $NF}' "${RAW}/${r}-${n}${t}.metrics" | head -1)"
  fi
  stop "${procs[@]}"
  python3 - "${RAW}/${r}-${n}${t}.kbench.json" "${RAW}/${r}-${n}${t}.json" <<EOF
import json, sys
d = json.load(open(sys.argv[1]))
d.update(run="${r}", nodes_requested=${n}, sched_cpu_s=(${c1} - ${c0}) / ${TCK},
         apiserver_cpu_s=(${a1} - ${a0}) / ${TCK}, etcd_cpu_s=(${e1} - ${e0}) / ${TCK},
         sched_hwm_mib=${hwm} / 1024, wire_bytes=float("${req:-0}" or 0) + float("${resp:-0}" or 0),
         processes=${#procs[@]}, hwm_kib_by_process={${split}}, load_before="${load}", load_after="$(cut -d' ' -f1-3 /proc/loadavg)")
d["wire_bytes_per_pod"] = d["wire_bytes"] / max(d["bound"], 1)
d["init_pods"] = ${INIT}
try:
    i = json.load(open("${RAW}/${r}-${n}${t}.init.kbench.json"))
    d["init"] = {k: i[k] for k in ("pods", "bound", "wall_seconds", "throughput", "namespace")}
except FileNotFoundError:
    pass
json.dump(d, open(sys.argv[2], "w"), indent=1)
EOF
  # No clean-up: the next run gets a fresh control plane.
  return "${rc}"
}

# ------------------------------------------------------------------ micro-benchmarks
micro() {
  local reps="${KSCORE_BENCH_MICRO_REPS:-5}" b out="${RAW}/micro.json"
  local files=()
  for b in "${WORK}"/bin/*_bench; do
    [[ -x "${b}" ]] || continue
    log "micro-benchmarks: ${b} (${reps} repetitions, medians)"
    "${b}" --benchmark_repetitions="${reps}" --benchmark_report_aggregates_only=true \
      --benchmark_out="${RAW}/$(basename "${b}").json" --benchmark_out_format=json >/dev/null
    files+=("${RAW}/$(basename "${b}").json")
  done
  python3 bench/report.py micro "${files[@]}" >"${RAW}/micro.md"
  : "${out}"
}

# ------------------------------------------------------------------ main
main() {
  IFS=, read -r -a RUNLIST <<<"${RUNS}"
  results=()
  host_info="commit $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- scorer shim proto 2>/dev/null || echo " + uncommitted changes in scorer/shim"), $(nproc) CPUs, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -r)"
  # What else was running (CPU over one second, second frame of top).
  others="$(top -b -n 2 -d 1 -w 200 | awk '/^top -/ {f++} f == 2' | sed -n '7,13p' | awk '$9 > 3.0' | cut -c1-160 || true)"
  local sizes=("${NODES}") rep tag n m
  ((SWEEP)) && sizes=(100 1000 5000)
  for n in "${sizes[@]}"; do
    m=$( ((SWEEP)) && echo $((2 * n)) || echo "${PODS}")
    # Repetitions interleaved (a..e, a..e, ...), so a slow minute of this shared machine
    # does not fall on one scheduler only; the table shows medians.
    for ((rep = 1; rep <= REPEAT; rep++)); do
      tag=""; ((REPEAT > 1)) && tag="-rep${rep}"
      for r in "${RUNLIST[@]}"; do
        if [[ "${r}" == b* || "${r}" == *100 ]] && [[ "${SHAPE}" != basic ]]; then
          log "skipping run ${r}: the Concentrate profile has no place in the ${SHAPE} shape (stock default profile on both sides)"
          continue
        fi
        if [[ "${r}" == [ef] && "${SHAPE}" == preemption ]]; then
          log "skipping run ${r}: the floor's trivial binder cannot preempt, so it has no figure for the preemption shape"
          continue
        fi
        cluster_up "${n}"; write_configs
        run_one "${r}" "${n}" "${m}" "${tag}" || log "run ${r}${tag} at ${n} nodes failed (see ${RAW})"
        results+=("${RAW}/${r}-${n}${tag}.json")
      done
    done
  done
  if [[ "${KSCORE_BENCH_KEEP:-0}" == 1 ]]; then
    log "KSCORE_BENCH_KEEP=1: the last run's cluster stays up (KSCORE_CLUSTER_DIR=${KSCORE_CLUSTER_DIR} hack/cluster.sh down)"
  else
    hack/cluster.sh down >/dev/null 2>&1 || true
    CLUSTER_UP=0
  fi
  ((MICRO)) && micro

  existing=()
  for f in "${results[@]}"; do [[ -f "${f}" ]] && existing+=("${f}"); done
  tag="$( ((SWEEP)) && echo sweep || echo "n${NODES}-p${PODS}")-${STAMP}"
  [[ "${SHAPE}" == basic ]] || tag="${SHAPE}-${tag}"
  python3 bench/report.py table --shape "${SHAPE}" --init-pods "${INIT}" --scorers "${SCORERS}" --host "${host_info}" \
    --others "${others}" --micro "${RAW}/micro.md" --png "${RESULTS}/${tag}.png" \
    "${existing[@]}" >"${RAW}/table.md"
  cp "${RAW}/table.md" "${RESULTS}/${tag}.md"
  # The raw JSON (not kbench's own) as one archive beside the table, <tag>.tar.xz holding
  # <tag>/ (xz preset 9; Python's lzma, so no xz binary is needed): bench/results/README.md.
  python3 - "${RAW}" "${tag}" "${RESULTS}/${tag}.tar.xz" <<'EOF'
import glob, os, sys, tarfile
raw, tag, out = sys.argv[1:]
with tarfile.open(out, "w:xz", preset=9) as t:
    for f in sorted(glob.glob(os.path.join(raw, "*.json"))):
        if not f.endswith(".kbench.json"):
            t.add(f, arcname=os.path.join(tag, os.path.basename(f)))
EOF
  cat "${RAW}/table.md"
}

# On one line so that bash never reads past it (safe to edit this file while it runs).
main; exit $?
