#!/usr/bin/env bash
# Local Kubernetes control plane from real components, on loopback:
# etcd + kube-apiserver (TLS, RBAC) + kube-controller-manager + kwok (keeps kubelet-less
# Node objects Ready and their pods Running) + the reference kube-scheduler (reference/,
# Concentrate linked in, stock default profile) as default-scheduler.
#
# Usage:
#   hack/cluster.sh up [--nodes N]     start (building binaries if missing); last stdout
#                                      line is the admin kubeconfig path
#   hack/cluster.sh down               stop exactly what up started; remove the state dir
#   hack/cluster.sh status             say whether it runs, print the env file
#   hack/cluster.sh bin                print the folder holding the binaries (builds if missing)
#   hack/cluster.sh build              build the binaries only (prints the folder)
#   hack/cluster.sh scheduler --config FILE --name NAME
#                                      start another reference kube-scheduler with FILE (a
#                                      KubeSchedulerConfiguration), in the background,
#                                      leader election off; stopped by down
#   hack/cluster.sh kubectl ARGS...    kubectl from the build, against this cluster
#
# State (pid files, certificates, kubeconfigs, logs, etcd data) lives in
# ${KSCORE_CLUSTER_DIR:-/tmp/kscore-cluster}; <state>/env holds shell assignments
# (KUBECONFIG=..., APISERVER_URL=..., ...). Progress messages go to stderr.
# KSCORE_NO_KWOK=1 runs without kwok: node-lifecycle controller off, nodes created Ready,
# bound pods stay Pending (nothing runs them).
# Some functions only run through trap or wait_for "$@":
# shellcheck disable=SC2317
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
STATE="${KSCORE_CLUSTER_DIR:-/tmp/kscore-cluster}"
BUILD="${ROOT}/hack/tools/build.sh"
UP_TIMEOUT="${KSCORE_UP_TIMEOUT:-120}"   # seconds for each readiness wait

log() { echo "cluster: $*" >&2; }
die() { echo "cluster: ERROR: $*" >&2; exit 1; }

need() {
  local t
  for t in "$@"; do
    command -v "${t}" >/dev/null 2>&1 || die "required tool '${t}' not found in PATH ($(why "${t}"))"
  done
}
why() {
  case "$1" in
    openssl) echo "makes the cluster CA and certificates; apt-get install -y openssl" ;;
    curl) echo "probes component health endpoints; apt-get install -y curl" ;;
    go) echo "builds the control-plane binaries; install Go >= 1.26" ;;
    setsid) echo "detaches components from the caller's session; util-linux" ;;
    *) echo "install it" ;;
  esac
}

# ---------------------------------------------------------------- processes

pid_alive() { [[ -n "${1:-}" ]] && kill -0 "$1" 2>/dev/null; }

# running_pids prints "name pid" for every pid file whose process still runs.
running_pids() {
  local f pid
  [[ -d "${STATE}/pids" ]] || return 0
  for f in "${STATE}"/pids/*.pid; do
    [[ -e "${f}" ]] || continue
    pid="$(cat "${f}" 2>/dev/null || true)"
    if pid_alive "${pid}"; then echo "$(basename "${f}" .pid) ${pid}"; fi
  done
}

# start NAME BINARY ARGS... — runs BINARY in its own session, output to logs/NAME.log,
# pid to pids/NAME.pid (written by the process itself before exec, so it is exact).
start() {
  local name="$1"; shift
  local pidf="${STATE}/pids/${name}.pid" logf="${STATE}/logs/${name}.log"
  rm -f "${pidf}"
  # shellcheck disable=SC2016  # $$ and $@ belong to the inner shell
  setsid bash -c 'echo $$ >"$0"; exec "$@"' "${pidf}" "$@" </dev/null >"${logf}" 2>&1 &
  local i
  for i in $(seq 1 100); do
    [[ -s "${pidf}" ]] && return 0
    sleep 0.05
  done
  die "${name} did not start (see ${logf})"
}

# stop NAME... — TERM each, wait up to 15 s for all, then KILL the rest. Only recorded
# pids are touched, and only while they still run the binary recorded next to them.
stop() {
  local name pidf pid exe want i pids=() names=()
  for name in "$@"; do
    pidf="${STATE}/pids/${name}.pid"
    [[ -f "${pidf}" ]] || continue
    pid="$(cat "${pidf}" 2>/dev/null || true)"
    if pid_alive "${pid}"; then
      want="$(cat "${STATE}/pids/${name}.exe" 2>/dev/null || true)"
      exe="$(readlink "/proc/${pid}/exe" 2>/dev/null || true)"
      exe="${exe% (deleted)}"
      if [[ -n "${want}" && -n "${exe}" && "${exe}" != "${want}" ]]; then
        log "not stopping pid ${pid} (${name}): it now runs ${exe}, not ${want}"
      else
        kill -TERM "${pid}" 2>/dev/null || true
        pids+=("${pid}"); names+=("${name}")
      fi
    fi
  done
  for i in $(seq 1 150); do
    local alive=0
    for pid in "${pids[@]}"; do pid_alive "${pid}" && alive=1; done
    ((alive)) || break
    sleep 0.1
  done
  for i in "${!pids[@]}"; do
    if pid_alive "${pids[i]}"; then
      log "${names[i]} (pid ${pids[i]}) ignored TERM for 15s; killing"
      kill -KILL "${pids[i]}" 2>/dev/null || true
    fi
  done
  for name in "$@"; do rm -f "${STATE}/pids/${name}.pid"; done
}

# record_exe NAME BINARY — remembers which binary NAME's pid must be running.
record_exe() { readlink -f "$2" >"${STATE}/pids/$1.exe"; }

# wait_for DESCRIPTION LOGNAME COMMAND... — polls COMMAND until it succeeds or the
# deadline passes; on failure shows the component's log tail.
wait_for() {
  local what="$1" logname="$2"; shift 2
  local deadline=$((SECONDS + UP_TIMEOUT))
  until "$@" >/dev/null 2>&1; do
    if [[ -n "${logname}" ]]; then
      local pid
      pid="$(cat "${STATE}/pids/${logname}.pid" 2>/dev/null || true)"
      if ! pid_alive "${pid}"; then
        tail -n 25 "${STATE}/logs/${logname}.log" >&2 || true
        die "${logname} exited while waiting for ${what} (log: ${STATE}/logs/${logname}.log)"
      fi
    fi
    if ((SECONDS >= deadline)); then
      [[ -n "${logname}" ]] && tail -n 25 "${STATE}/logs/${logname}.log" >&2
      die "timed out after ${UP_TIMEOUT}s waiting for ${what}${logname:+ (log: ${STATE}/logs/${logname}.log)}"
    fi
    sleep 0.2
  done
}

free_port() {
  # Never the same port twice in one run (the kernel can hand one out again).
  python3 "${ROOT}/hack/lib/free_port.py" "${STATE}/used-ports" 2>/dev/null && return 0
  # Fallback without python3: a random high port nobody answers on.
  local p
  while :; do
    p=$((20000 + RANDOM % 40000))
    (echo >"/dev/tcp/127.0.0.1/${p}") 2>/dev/null || { echo "${p}"; return 0; }
  done
}

# ---------------------------------------------------------------- PKI

# cert NAME CN [O] [SAN] — key + certificate signed by the cluster CA.
cert() {
  local name="$1" cn="$2" org="${3:-}" san="${4:-}" pki="${STATE}/pki"
  local subj="/CN=${cn}"
  [[ -n "${org}" ]] && subj="/O=${org}${subj}"
  openssl ecparam -name prime256v1 -genkey -noout -out "${pki}/${name}.key" 2>/dev/null
  openssl req -new -key "${pki}/${name}.key" -subj "${subj}" -out "${pki}/${name}.csr" 2>/dev/null
  {
    echo "basicConstraints=critical,CA:FALSE"
    echo "keyUsage=critical,digitalSignature,keyEncipherment"
    if [[ -n "${san}" ]]; then
      echo "extendedKeyUsage=serverAuth,clientAuth"
      echo "subjectAltName=${san}"
    else
      echo "extendedKeyUsage=clientAuth"
    fi
  } >"${pki}/${name}.ext"
  openssl x509 -req -in "${pki}/${name}.csr" -CA "${pki}/ca.crt" -CAkey "${pki}/ca.key" -CAcreateserial \
    -days 365 -sha256 -extfile "${pki}/${name}.ext" -out "${pki}/${name}.crt" 2>/dev/null
  rm -f "${pki}/${name}.csr" "${pki}/${name}.ext"
}

make_pki() {
  local pki="${STATE}/pki"
  mkdir -p "${pki}"
  openssl ecparam -name prime256v1 -genkey -noout -out "${pki}/ca.key" 2>/dev/null
  openssl req -x509 -new -key "${pki}/ca.key" -subj "/CN=kscore-local-ca" -days 365 -sha256 \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign,digitalSignature" \
    -out "${pki}/ca.crt" 2>/dev/null
  cert apiserver kube-apiserver "" \
    "IP:127.0.0.1,DNS:localhost,IP:10.0.0.1,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local"
  cert admin kscore-admin system:masters
  cert controller-manager system:kube-controller-manager
  cert scheduler system:kube-scheduler
  cert kwok kscore-kwok system:masters
  # Service-account token signing key pair.
  openssl genrsa -out "${pki}/sa.key" 2048 2>/dev/null
  openssl rsa -in "${pki}/sa.key" -pubout -out "${pki}/sa.pub" 2>/dev/null
  chmod 600 "${pki}"/*.key
}

b64() { base64 -w0 <"$1"; }

# kubeconfig NAME USER — kubeconfig with embedded CA, client cert and key.
kubeconfig() {
  local name="$1" user="$2" pki="${STATE}/pki"
  cat >"${STATE}/${name}.kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: kscore
  cluster:
    server: ${APISERVER_URL}
    certificate-authority-data: $(b64 "${pki}/ca.crt")
users:
- name: ${user}
  user:
    client-certificate-data: $(b64 "${pki}/${name}.crt")
    client-key-data: $(b64 "${pki}/${name}.key")
contexts:
- name: kscore
  context:
    cluster: kscore
    user: ${user}
    namespace: default
current-context: kscore
EOF
  chmod 600 "${STATE}/${name}.kubeconfig"
}

# ---------------------------------------------------------------- commands

bin_dir() {
  local dir
  dir="$("${BUILD}" all)" || die "building the control-plane binaries failed (see the messages above)"
  dir="$(tail -n1 <<<"${dir}")"
  local b
  for b in etcd kube-apiserver kube-controller-manager kubectl kube-scheduler grpcurl; do
    [[ -x "${dir}/${b}" ]] || die "binary ${b} missing in ${dir} after the build"
  done
  echo "${dir}"
}

cmd_build() { need go sha256sum; bin_dir; }

cmd_bin() {
  local dir
  dir="$("${BUILD}" bindir)"
  if [[ -f "${dir}/.complete" ]]; then echo "${dir}"; else cmd_build; fi
}

cleanup_on_failure() {
  local rc=$?
  if ((rc != 0)); then
    log "up failed; stopping what was started (state kept for inspection: ${STATE}/logs)"
    stop_all
    rm -rf "${STATE}/pids" "${STATE}/etcd-data"
  fi
}

stop_all() {
  local n
  # Extra schedulers first, then the control plane from the top down.
  local extra=()
  for n in "${STATE}"/pids/scheduler-*.pid; do
    [[ -e "${n}" ]] && extra+=("$(basename "${n}" .pid)")
  done
  stop "${extra[@]}" kube-scheduler kwok kube-controller-manager
  stop kube-apiserver
  stop etcd
}

cmd_up() {
  local nodes=3
  while (($#)); do
    case "$1" in
      --nodes) [[ $# -ge 2 ]] || die "--nodes needs a number"; nodes="$2"; shift 2 ;;
      --nodes=*) nodes="${1#--nodes=}"; shift ;;
      *) die "up: unknown argument '$1' (usage: up [--nodes N])" ;;
    esac
  done
  [[ "${nodes}" =~ ^[1-9][0-9]*$ ]] || die "--nodes wants a positive integer, got '${nodes}'"
  need openssl curl setsid base64

  if [[ -n "$(running_pids)" ]]; then
    log "a cluster is already running from ${STATE}:"
    running_pids | sed 's/^/cluster:   /' >&2
    die "run 'hack/cluster.sh down' first (or set KSCORE_CLUSTER_DIR to use another state dir)"
  fi
  if [[ -e "${STATE}" ]]; then
    log "removing stale state ${STATE} (no component of it runs)"
    rm -rf "${STATE}"
  fi

  local t0=${SECONDS}
  local bin
  bin="$(cmd_bin)"
  export PATH="${bin}:${PATH}"
  log "binaries: ${bin}"

  mkdir -p "${STATE}/pids" "${STATE}/logs" "${STATE}/etcd-data"
  chmod 700 "${STATE}" "${STATE}/etcd-data"
  trap cleanup_on_failure EXIT

  local etcd_port etcd_peer api_port kcm_port sched_port kwok_port
  etcd_port="$(free_port)"; etcd_peer="$(free_port)"; api_port="$(free_port)"
  kcm_port="$(free_port)"; sched_port="$(free_port)"; kwok_port="$(free_port)"
  APISERVER_URL="https://127.0.0.1:${api_port}"
  local etcd_url="http://127.0.0.1:${etcd_port}"

  make_pki
  kubeconfig admin kscore-admin
  kubeconfig controller-manager system:kube-controller-manager
  kubeconfig scheduler system:kube-scheduler
  kubeconfig kwok kscore-kwok
  local pki="${STATE}/pki" kc="${STATE}/admin.kubeconfig"

  log "starting etcd on ${etcd_url}"
  record_exe etcd "${bin}/etcd"
  start etcd "${bin}/etcd" --name=kscore --data-dir="${STATE}/etcd-data" \
    --listen-client-urls="${etcd_url}" --advertise-client-urls="${etcd_url}" \
    --listen-peer-urls="http://127.0.0.1:${etcd_peer}" --initial-advertise-peer-urls="http://127.0.0.1:${etcd_peer}" \
    --initial-cluster="kscore=http://127.0.0.1:${etcd_peer}" --listen-metrics-urls="" \
    --unsafe-no-fsync=true --quota-backend-bytes=$((2 * 1024 * 1024 * 1024)) --log-level=warn
  wait_for "etcd health" etcd curl -fsS "${etcd_url}/health"

  log "starting kube-apiserver on ${APISERVER_URL}"
  record_exe kube-apiserver "${bin}/kube-apiserver"
  start kube-apiserver "${bin}/kube-apiserver" \
    --etcd-servers="${etcd_url}" \
    --bind-address=127.0.0.1 --advertise-address=127.0.0.1 --secure-port="${api_port}" \
    --tls-cert-file="${pki}/apiserver.crt" --tls-private-key-file="${pki}/apiserver.key" \
    --client-ca-file="${pki}/ca.crt" \
    --service-account-key-file="${pki}/sa.pub" --service-account-signing-key-file="${pki}/sa.key" \
    --service-account-issuer=https://kubernetes.default.svc.cluster.local \
    --service-cluster-ip-range=10.0.0.0/24 \
    --authorization-mode=Node,RBAC --allow-privileged=true \
    --endpoint-reconciler-type=none --profiling="${KSCORE_APISERVER_PROFILING:-false}" --v=1
  wait_for "kube-apiserver /readyz" kube-apiserver kubectl --kubeconfig="${kc}" get --raw /readyz

  log "starting kube-controller-manager, kwok and kube-scheduler"
  local controllers="*"
  if [[ "${KSCORE_NO_KWOK:-0}" == 1 || ! -x "${bin}/kwok" || ! -f "${bin}/kwok-stages.yaml" ]]; then
    controllers="*,-node-lifecycle-controller"
  fi
  # KSCORE_CONTROLLERS_OFF: more controllers to leave off (comma separated), e.g.
  # hack/bench.sh's volume shapes turn off persistentvolume-binder-controller, as scheduler_perf
  # runs without it.
  local off offs="${KSCORE_CONTROLLERS_OFF:-}"
  for off in ${offs//,/ }; do controllers+=",-${off}"; done
  record_exe kube-controller-manager "${bin}/kube-controller-manager"
  start kube-controller-manager "${bin}/kube-controller-manager" \
    --kubeconfig="${STATE}/controller-manager.kubeconfig" \
    --authentication-kubeconfig="${STATE}/controller-manager.kubeconfig" \
    --authorization-kubeconfig="${STATE}/controller-manager.kubeconfig" \
    --bind-address=127.0.0.1 --secure-port="${kcm_port}" \
    --controllers="${controllers}" \
    --service-account-private-key-file="${pki}/sa.key" --root-ca-file="${pki}/ca.crt" \
    --use-service-account-credentials=true \
    --cluster-signing-cert-file="${pki}/ca.crt" --cluster-signing-key-file="${pki}/ca.key" \
    --leader-elect=false --profiling=false --v=1

  if [[ "${controllers}" == "*" ]]; then
    record_exe kwok "${bin}/kwok"
    start kwok "${bin}/kwok" --config="${bin}/kwok-stages.yaml" --kubeconfig="${STATE}/kwok.kubeconfig" \
      --manage-all-nodes=true --server-address="127.0.0.1:${kwok_port}" --node-ip=127.0.0.1
  else
    log "kwok not available: node-lifecycle controller off, nodes marked Ready by this script, pods stay Pending once bound"
  fi

  record_exe kube-scheduler "${bin}/kube-scheduler"
  start kube-scheduler "${bin}/kube-scheduler" \
    --kubeconfig="${STATE}/scheduler.kubeconfig" \
    --bind-address=127.0.0.1 --secure-port="${sched_port}" \
    --leader-elect=false --profiling=false --v=1

  log "creating ${nodes} node(s)"
  create_nodes "${nodes}" "${kc}"
  if [[ "${controllers}" != "*" ]]; then
    # The NodeTaint admission plugin puts node.kubernetes.io/not-ready on new nodes; the
    # node-lifecycle controller would lift it once Ready, but it is off here.
    kubectl --kubeconfig="${kc}" taint nodes --all node.kubernetes.io/not-ready:NoSchedule- >/dev/null
  fi

  wait_for "kube-controller-manager /healthz" kube-controller-manager curl -fsSk "https://127.0.0.1:${kcm_port}/healthz"
  wait_for "kube-scheduler /healthz" kube-scheduler curl -fsSk "https://127.0.0.1:${sched_port}/healthz"
  wait_for "${nodes} Ready untainted node(s)" "" nodes_ready "${kc}" "${nodes}"
  wait_for "service account default/default" kube-controller-manager \
    kubectl --kubeconfig="${kc}" -n default get serviceaccount default

  cat >"${STATE}/env" <<EOF
KSCORE_CLUSTER_DIR=${STATE}
KSCORE_BIN=${bin}
KUBECONFIG=${kc}
APISERVER_URL=${APISERVER_URL}
CA_FILE=${pki}/ca.crt
ETCD_URL=${etcd_url}
SCHEDULER_KUBECONFIG=${STATE}/scheduler.kubeconfig
KUBE_SCHEDULER_HEALTHZ=https://127.0.0.1:${sched_port}/healthz
KWOK=$([[ "${controllers}" == "*" ]] && echo true || echo false)
NODES=${nodes}
EOF
  trap - EXIT
  log "up in $((SECONDS - t0))s; env: ${STATE}/env"
  echo "${kc}"
}

create_nodes() {
  local n="$1" kc="$2" i zones=(zone-a zone-b zone-c) manifest=""
  for i in $(seq 1 "${n}"); do
    manifest+="
---
apiVersion: v1
kind: Node
metadata:
  name: kscore-node-${i}
  labels:
    kubernetes.io/hostname: kscore-node-${i}
    kubernetes.io/os: linux
    kubernetes.io/arch: amd64
    topology.kubernetes.io/zone: ${zones[$(((i - 1) % 3))]}
    type: kwok
  annotations:
    kwok.x-k8s.io/node: fake
    node.alpha.kubernetes.io/ttl: \"0\"
spec: {}
status:
  capacity: {cpu: \"4\", memory: 16Gi, pods: \"110\", ephemeral-storage: 100Gi}
  allocatable: {cpu: \"4\", memory: 16Gi, pods: \"110\", ephemeral-storage: 100Gi}
  nodeInfo:
    architecture: amd64
    operatingSystem: linux
    kubeletVersion: v1.37.2
  conditions:
  - type: Ready
    status: \"True\"
    reason: KubeletReady
    message: kubelet-less node managed by hack/cluster.sh
"
  done
  kubectl --kubeconfig="${kc}" create -f - >/dev/null <<<"${manifest}"
}

# nodes_ready KUBECONFIG N — exactly N nodes, all Ready=True, none with taints.
nodes_ready() {
  local out
  out="$(kubectl --kubeconfig="$1" get nodes -o \
    jsonpath='{range .items[*]}{.metadata.name} {.status.conditions[?(@.type=="Ready")].status} {.spec.taints}{"\n"}{end}')"
  [[ "$(grep -c . <<<"${out}")" -eq "$2" ]] || return 1
  ! grep -qv '^[^ ]* True $' <<<"${out}"
}

cmd_down() {
  if [[ ! -e "${STATE}" ]]; then
    log "nothing to stop (${STATE} does not exist)"
    return 0
  fi
  local running
  running="$(running_pids | awk '{print $1}' | tr '\n' ' ')"
  [[ -n "${running}" ]] && log "stopping: ${running}"
  stop_all
  local left
  left="$(running_pids)"
  [[ -z "${left}" ]] || die "still running after down: ${left}"
  rm -rf "${STATE}"
  log "down; removed ${STATE}"
}

cmd_status() {
  local r
  r="$(running_pids)"
  if [[ -z "${r}" ]]; then
    echo "not running (state dir ${STATE})"
    return 1
  fi
  echo "running from ${STATE}:"
  local line
  while IFS= read -r line; do echo "  ${line}"; done <<<"${r}"
  [[ -f "${STATE}/env" ]] && cat "${STATE}/env"
  return 0
}

cmd_scheduler() {
  local config="" name="" extra=()
  while (($#)); do
    case "$1" in
      --config) [[ $# -ge 2 ]] || die "--config needs a file"; config="$2"; shift 2 ;;
      --config=*) config="${1#--config=}"; shift ;;
      --name) [[ $# -ge 2 ]] || die "--name needs a value"; name="$2"; shift 2 ;;
      --name=*) name="${1#--name=}"; shift ;;
      --) shift; extra=("$@"); break ;;
      *) die "scheduler: unknown argument '$1' (usage: scheduler --config FILE --name NAME [-- EXTRA FLAGS])" ;;
    esac
  done
  [[ -n "${config}" && -n "${name}" ]] || die "usage: hack/cluster.sh scheduler --config FILE --name NAME [-- EXTRA FLAGS]"
  [[ "${name}" =~ ^[a-z0-9][a-z0-9-]*$ ]] || die "--name '${name}' must be lowercase letters, digits and '-'"
  [[ -f "${config}" ]] || die "config file '${config}' not found"
  [[ -f "${STATE}/env" ]] || die "no running cluster (${STATE}/env missing); run 'hack/cluster.sh up' first"
  local pidf="${STATE}/pids/scheduler-${name}.pid"
  if pid_alive "$(cat "${pidf}" 2>/dev/null || true)"; then
    die "a scheduler named '${name}' already runs (pid $(cat "${pidf}"))"
  fi
  # With --config, kube-scheduler ignores --kubeconfig: the client connection has to be
  # in the file. Write a copy with clientConnection.kubeconfig added.
  if grep -qE '^clientConnection:' "${config}"; then
    die "${config} sets clientConnection itself; remove it (this command points the scheduler at the local cluster)"
  fi
  grep -qE '^kind: *KubeSchedulerConfiguration' "${config}" || die "${config} is not a KubeSchedulerConfiguration"
  local bin cfg port
  bin="$(sed -n 's/^KSCORE_BIN=//p' "${STATE}/env")"
  cfg="${STATE}/scheduler-${name}.yaml"
  {
    cat "${config}"
    echo
    echo "# added by hack/cluster.sh scheduler"
    echo "clientConnection:"
    echo "  kubeconfig: ${STATE}/scheduler.kubeconfig"
  } >"${cfg}"
  port="$(free_port)"
  record_exe "scheduler-${name}" "${bin}/kube-scheduler"
  start "scheduler-${name}" "${bin}/kube-scheduler" --config="${cfg}" \
    --bind-address=127.0.0.1 --secure-port="${port}" --leader-elect=false --v=1 "${extra[@]}"
  wait_for "scheduler ${name} /healthz" "scheduler-${name}" curl -fsSk "https://127.0.0.1:${port}/healthz"
  echo "SCHEDULER_${name//-/_}_HEALTHZ=https://127.0.0.1:${port}/healthz" >>"${STATE}/env"
  log "scheduler ${name} runs (pid $(cat "${pidf}"), log ${STATE}/logs/scheduler-${name}.log)"
}

cmd_kubectl() {
  [[ -f "${STATE}/env" ]] || die "no running cluster (${STATE}/env missing)"
  local bin
  bin="$(sed -n 's/^KSCORE_BIN=//p' "${STATE}/env")"
  exec "${bin}/kubectl" --kubeconfig="${STATE}/admin.kubeconfig" "$@"
}

main() {
  local cmd="${1:-}"
  [[ $# -gt 0 ]] && shift
  case "${cmd}" in
    up) cmd_up "$@" ;;
    down) cmd_down ;;
    status) cmd_status ;;
    bin) cmd_bin ;;
    build) cmd_build ;;
    scheduler) cmd_scheduler "$@" ;;
    kubectl) cmd_kubectl "$@" ;;
    ""|-h|--help|help) sed -n '2,25p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' ;;
    *) die "unknown command '${cmd}' (up|down|status|bin|build|scheduler|kubectl)" ;;
  esac
}

# On one line so that bash never reads past it (safe to edit this file while it runs).
main "$@"; exit $?
