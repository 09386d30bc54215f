#!/usr/bin/env bash
# The fault suite: a few hundred pods go through kscore (the real shim and
# scorer binaries, a real etcd + kube-apiserver, kwok nodes) while something
# around it fails. After each case a ledger of every pod (fault_ledger.py)
# checks that each was bound once (one binding, at most one Scheduled
# event), none is left Pending that fits, no node's requests are above its
# allocatable, and that the last pod was bound within
# KSCORE_FAULT_RECOVERY_S (5 s) of the fault's end.
#
#   1 scorer   every scorer replica killed for 30 s, then started again
#   2 apikill  the API server SIGKILLed, restarted with the same flags 5 s later
#   3 apistop  the API server stalled (SIGSTOP) for 20 s, then SIGCONT
#   4 compact  etcd compacted while the shim's connections are cut: its
#              watches get 410 Gone and relist (API server without watch cache)
#   5 leader   two shims with leader election, the pods created once both
#              run, the leader SIGKILLed while it binds
#   6 restart  the only shim SIGKILLed and started again
#   7 nodes    pods deleted while their bindings wait for the rate limiter,
#              the two empty nodes deleted and cordoned, more pods created
#
# KSCORE_FAULT_CASES picks cases ("1 5"); results go to stdout as a table.
set -euo pipefail
E2E_NAME=faults
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$ROOT"

CASES="${KSCORE_FAULT_CASES:-1 2 3 5 6 7 4}"
PODS="${KSCORE_FAULT_PODS:-200}"
LIMIT="${KSCORE_FAULT_RECOVERY_S:-5}"
SETTLE=90  # seconds for the pods to settle after a fault, at most
LEDGER="${ROOT}/tests/e2e/fault_ledger.py"
t_start=$SECONDS

# 8 nodes of 4 CPUs: 40 pods of 100m each, so Concentrate (all pods of an
# app on one node while it has room) fills node after node to the brim, and
# a pod placed twice or a capacity counted wrong shows as an overcommit.
cluster_up --nodes 8
ETCD_URL="$(sed -n 's/^ETCD_URL=//p' "${STATE}/env")"
APISERVER_URL="$(sed -n 's/^APISERVER_URL=//p' "${STATE}/env")"

config() {  # config FILE QPS BURST
  cat >"$1" <<YAML
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection: {qps: $2, burst: $3}
profiles:
- schedulerName: concentrate-scheduler
  plugins:
    score:
      enabled:
      - name: Concentrate
        weight: 10
  pluginConfig:
  - name: Concentrate
    args:
      labelKey: app
YAML
}
# Above the default 50 qps: what is measured is the fault, not the
# client-side rate limit (bindings and events share it).
config "$WORK/fast.yaml" 500 1000
# Case 7: bindings wait for the rate limiter, so pods placed and not yet
# bound are there to delete.
config "$WORK/slow.yaml" 30 10
# Case 5: the leader is killed while it binds, the follower binds the rest.
config "$WORK/medium.yaml" 100 20

now() { date +%s.%N; }
pods_yaml() {  # pods_yaml NS FROM TO [PREFIX [CPU]]: pods PREFIX-FROM..PREFIX-TO (p-) of app NS asking CPU (100m)
  local i
  echo "apiVersion: v1"
  echo "kind: List"
  echo "items:"
  for ((i = $2; i <= $3; i++)); do
    cat <<YAML
- apiVersion: v1
  kind: Pod
  metadata: {name: ${4:-p}-$(printf %03d "$i"), namespace: $1, labels: {app: $1}}
  spec:
    schedulerName: concentrate-scheduler
    terminationGracePeriodSeconds: 0
    containers:
    - {name: pause, image: "pause:3.9", resources: {requests: {cpu: ${5:-100m}}}}
YAML
  done
}
create_pods() {  # create_pods NS FROM TO [PREFIX [CPU]] (retried while the API server is away)
  pods_yaml "$@" >"$WORK/pods-$1-$2-${4:-p}.yaml"
  poll 60 k apply --request-timeout=10s -f "$WORK/pods-$1-$2-${4:-p}.yaml"
}
# Pods of NS the shims say they bound (successful bindings in LOGS).
bound_in_logs() {  # bound_in_logs NS LOG...
  local ns="$1"
  shift
  cat "$@" 2>/dev/null | grep -o "bound pod $ns/[^ ]*" | sort -u | wc -l
}
# until_bound N NS LOG...: until the shims logged N bindings of NS (polled
# every 50 ms: the shim binds hundreds of pods a second); false after 60 s.
until_bound() {
  local n="$1" ns="$2" deadline=$((SECONDS + 60))
  shift 2
  until (($(cat "$@" 2>/dev/null | grep -c "bound pod $ns/" || true) >= n)); do
    ((SECONDS < deadline)) || return 1
    sleep 0.05
  done
}
# snapshot DIR NS: what the ledger reads.
snapshot() {
  mkdir -p "$1"
  k get pods -A -o json >"$1/pods.json" &&
    k get nodes -o json >"$1/nodes.json" &&
    k get events.events.k8s.io -n "$2" -o json >"$1/events.json"
}
# settled NS DIR: no pending pod of NS fits a node (for cases 1-6: all
# bound) in a snapshot taken into DIR, which the ledger then reads.
# Not while a node is not Ready or tainted so by the node lifecycle
# controller (after the API server came back, heartbeats may lag): then no
# pending pod fits because no node counts, and the check says nothing.
# Cordoned nodes (case 7's) do not hold it back.
nodes_reachable() {
  k get nodes -o json | python3 -c '
import json, sys
lifecycle = ("node.kubernetes.io/unreachable", "node.kubernetes.io/not-ready")
nodes = json.load(sys.stdin)["items"]
bad = [n["metadata"]["name"] for n in nodes
       if any(t.get("key") in lifecycle for t in n["spec"].get("taints", []))
       or not any(c["type"] == "Ready" and c["status"] == "True"
                  for c in n["status"].get("conditions", []))]
sys.exit(1 if bad else 0)'
}
settled() {
  nodes_reachable && snapshot "$2" "$1" &&
    python3 "$LEDGER" --case settle --ns "$1" --dir "$2" \
      --fault-end 0 --limit 1e9 | grep -q "^PASS: .*no pending pod fits"
}
shim_at() {  # shim_at NAME CONFIG KUBECONFIG [flags...]
  local name="$1" cfg="$2" kc="$3"
  shift 3
  start "$name" "$KBIN/shim" --config "$cfg" --kubeconfig "$kc" \
    --scorer "$SCORER" --bind-address 127.0.0.1 --secure-port "$(free_port)" -v 4 "$@"
}

RESULTS="$WORK/results.tsv"
: >"$RESULTS"
# ledger CASE NS FAULT_END [ledger flags...] -- LOG...: settles, checks, records.
ledger() {
  local name="$1" ns="$2" end="$3" flags=() out
  shift 3
  while [[ $# -gt 0 && "$1" != -- ]]; do flags+=("$1"); shift; done
  shift
  poll "$SETTLE" settled "$ns" "$WORK/ledger-$name" || info "$name: pods not settled after ${SETTLE}s"
  [[ -s "$WORK/ledger-$name/events.json" ]] || { fail "$name: no snapshot"; return; }
  out="$(python3 "$LEDGER" --case "$name" --ns "$ns" --dir "$WORK/ledger-$name" \
    --fault-end "$end" --limit "$LIMIT" "${flags[@]}" "$@")"
  grep -E '^(PASS|FAIL):' <<<"$out" || true
  passed=$((passed + $(grep -c '^PASS:' <<<"$out" || true)))
  failed=$((failed + $(grep -c '^FAIL:' <<<"$out" || true)))
  grep '^RESULT' <<<"$out" | cut -f2- >>"$RESULTS" || true
}
# case_end NS NAME...: stops the case's processes, deletes its pods.
case_end() {
  local ns="$1" n
  shift
  for n in "$@"; do stop "$n"; done
  info "case $ns done at ${SECONDS}s"
  k delete pods --all -n "$ns" --grace-period=0 --force --wait=false >/dev/null 2>&1 || true
  poll 60 bash -c "[ -z \"\$(\"$BIN/kubectl\" --kubeconfig=$KUBECONFIG_FILE get pods -n $ns -o name 2>/dev/null)\" ]" ||
    info "pods of $ns still there"
}
# nodes_schedulable: every node Ready, none tainted or cordoned. After the
# API server was killed or restarted, kwok's heartbeats may have lagged
# behind the node lifecycle controller, which then taints the nodes
# unreachable: a case starting then would find no node.
nodes_schedulable() {
  k get nodes -o json | python3 -c '
import json, sys
nodes = json.load(sys.stdin)["items"]
bad = [n["metadata"]["name"] for n in nodes
       if n["spec"].get("unschedulable") or n["spec"].get("taints")
       or not any(c["type"] == "Ready" and c["status"] == "True"
                  for c in n["status"].get("conditions", []))]
sys.exit(1 if bad or not nodes else 0)'
}
begin() {  # begin NUMBER NAME: a namespace and a scorer of its own
  NS="f$1-$2"
  info "case $1 ($2) from ${SECONDS}s"
  poll 60 nodes_schedulable || info "nodes not all Ready and untainted: $(k get nodes --no-headers | awk '{print $1"="$2}' | tr '\n' ' ')"
  k create namespace "$NS" >/dev/null
  SCORER_PORT="$(free_port)"
  SCORER="127.0.0.1:${SCORER_PORT}"
  scorer_up "sc$1" "$WORK/fast.yaml" "$SCORER_PORT"
}
third=$((PODS / 3))
quarter=$((PODS / 4))

# ------------------------------------------------------------ 1: scorer down 30 s
case_scorer() {
  begin 1 scorer
  local p2 logs end before during
  p2="$(free_port)"
  scorer_up sc1b "$WORK/fast.yaml" "$p2"
  SCORER="127.0.0.1:${SCORER_PORT},127.0.0.1:${p2}"
  create_pods "$NS" 1 $((PODS - third))
  shim_at sh1 "$WORK/fast.yaml" "$KUBECONFIG_FILE" --leader-elect=false
  logs=("$WORK/sh1.log")
  until_bound "$quarter" "$NS" "${logs[@]}" || fail "scorer: the shim did not start binding"
  stop sc1 KILL
  stop sc1b KILL
  local down=$SECONDS
  before="$(bound_in_logs "$NS" "${logs[@]}")"
  info "both scorer replicas killed after $before pods were bound"
  create_pods "$NS" $((PODS - third + 1)) "$PODS"
  check "scorer: while it is down pods fail with 'scorer unavailable'" \
    poll 20 grep -q "scorer unavailable" "$WORK/sh1.log"
  during="$(bound_in_logs "$NS" "${logs[@]}")"
  # The outage lasts 30 s: this wait is the fault itself.
  sleep $((30 - (SECONDS - down)))
  during="$(($(bound_in_logs "$NS" "${logs[@]}") - during))"
  check "scorer: nothing bound while every replica was down ($during)" test "$during" -eq 0
  # The fault ends when the replicas are started again (both at once).
  end="$(now)"
  mv "$WORK/sc1.log" "$WORK/sc1-before.log"
  mv "$WORK/sc1b.log" "$WORK/sc1b-before.log"
  start sc1 "$KBIN/scorer" --config "$WORK/fast.yaml" --listen "127.0.0.1:$SCORER_PORT" \
    --metrics-bind-address "127.0.0.1:$(free_port)"
  start sc1b "$KBIN/scorer" --config "$WORK/fast.yaml" --listen "127.0.0.1:$p2" \
    --metrics-bind-address "127.0.0.1:$(free_port)"
  ledger 1-scorer "$NS" "$end" --all-bound -- "${logs[@]}"
  # Where the time went: the scorer's start-up, the shim reaching it (its
  # reconnect backoff), the parked pods' cycles and bindings.
  local serving reached
  serving="$(python3 "$LEDGER" --first-after "$end" "serving profiles" "$WORK/sc1.log" "$WORK/sc1b.log")"
  reached="$(python3 "$LEDGER" --first-after "$end" "scorer reachable again" "$WORK/sh1.log")"
  info "after the restart: first replica serving +$(python3 -c "print(f'{${serving:-0} - $end:.2f}')")s," \
    "the shim reached it +$(python3 -c "print(f'{${reached:-0} - $end:.2f}')")s"
  case_end "$NS" sh1 sc1 sc1b
}

# ------------------------------------------------------------ 2: API server killed
case_apikill() {
  begin 2 apikill
  local end
  create_pods "$NS" 1 "$PODS"
  shim_at sh2 "$WORK/fast.yaml" "$KUBECONFIG_FILE" --leader-elect=false
  until_bound "$quarter" "$NS" "$WORK/sh2.log" || fail "apikill: the shim did not start binding"
  cluster_kill kube-apiserver KILL
  info "API server killed after $(bound_in_logs "$NS" "$WORK/sh2.log") pods were bound"
  # Down for 5 s: this wait is the fault itself.
  sleep 5
  cluster_start_again kube-apiserver
  # The fault ends when the new API server first answers (its start-up is
  # not the shim's to shorten).
  local deadline=$((SECONDS + 60))
  until curl -sk -o /dev/null --max-time 1 "$APISERVER_URL/livez"; do
    ((SECONDS < deadline)) || break
    sleep 0.05
  done
  end="$(now)"
  check "apikill: the API server is back" poll 60 apiserver_ready
  check "apikill: the shim saw it go and come back" \
    poll 10 grep -q "API server reachable again" "$WORK/sh2.log"
  ledger 2-apikill "$NS" "$end" --all-bound -- "$WORK/sh2.log"
  case_end "$NS" sh2 sc2
}

# ------------------------------------------------------------ 3: API server stalled
case_apistop() {
  begin 3 apistop
  local end pid
  create_pods "$NS" 1 $((PODS - 20))
  shim_at sh3 "$WORK/fast.yaml" "$KUBECONFIG_FILE" --leader-elect=false
  until_bound "$quarter" "$NS" "$WORK/sh3.log" || fail "apistop: the shim did not start binding"
  pid="$(cluster_pid kube-apiserver)"
  kill -STOP "$pid"
  info "API server stopped after $(bound_in_logs "$NS" "$WORK/sh3.log") pods were bound"
  # Stalled for 20 s: this wait is the fault itself.
  sleep 20
  kill -CONT "$pid"
  end="$(now)"
  # Pods created after the stall (q-*) are seen through the resumed watch;
  # recovery is timed for the pods that were there during it.
  create_pods "$NS" 1 20 q
  check "apistop: the shim still runs" kill -0 "${PIDS[sh3]}"
  ledger 3-apistop "$NS" "$end" --all-bound --recovery-skip q- -- "$WORK/sh3.log"
  case_end "$NS" sh3 sc3
}

# ------------------------------------------------------------ 4: etcd compacted
case_compact() {
  # The API server serves watches from etcd here: with its watch cache (the
  # default) a client only sees the cache's own window, never a compaction.
  info "restarting the API server with --watch-cache=false"
  cluster_kill kube-apiserver KILL
  cluster_start_again kube-apiserver --watch-cache=false
  poll 60 apiserver_ready || fail "compact: the API server did not come back"
  begin 4 compact
  local end proxy_port kc rev
  proxy_port="$(free_port)"
  start proxy4 python3 "$ROOT/tests/e2e/tcp_cut.py" "$proxy_port" "${APISERVER_URL#https://}"
  kc="$WORK/proxy.kubeconfig"
  sed "s#server: ${APISERVER_URL}#server: https://127.0.0.1:${proxy_port}#" "$KUBECONFIG_FILE" >"$kc"
  poll 10 bash -c "exec 3<>/dev/tcp/127.0.0.1/$proxy_port" || fail "compact: proxy not listening"
  create_pods "$NS" 1 $((PODS - third))
  shim_at sh4 "$WORK/fast.yaml" "$kc" --leader-elect=false
  until_bound "$quarter" "$NS" "$WORK/sh4.log" || fail "compact: the shim did not start binding"
  # Cut the shim off, let the cluster move on (more pods), compact etcd at
  # its newest revision, then let the shim reconnect: every watch resumes
  # from a revision that is gone.
  kill -USR1 "${PIDS[proxy4]}"
  create_pods "$NS" $((PODS - third + 1)) "$PODS"
  rev="$(curl -fsS -X POST "$ETCD_URL/v3/kv/range" -d '{"key":"AA=="}' |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["header"]["revision"])')"
  curl -fsS -X POST "$ETCD_URL/v3/kv/compaction" -d "{\"revision\":\"$rev\",\"physical\":true}" >/dev/null ||
    fail "compact: etcd compaction at $rev failed"
  info "etcd compacted at revision $rev"
  kill -USR2 "${PIDS[proxy4]}"
  end="$(now)"
  check "compact: the shim's watches got 410 Gone and relisted" \
    poll 20 grep -qE "informer /api/v1/pods: .*(410|too old|compacted)" "$WORK/sh4.log"
  ledger 4-compact "$NS" "$end" --all-bound -- "$WORK/sh4.log"
  case_end "$NS" sh4 sc4 proxy4
}

# ------------------------------------------------------------ 5: leader killed
case_leader() {
  begin 5 leader
  local le=(--leader-elect=true --leader-elect-lease-duration=4s --leader-elect-renew-deadline=3s
    --leader-elect-retry-period=500ms "--leader-elect-resource-namespace=$NS")
  local end leader follower killed took
  shim_at sh5a "$WORK/medium.yaml" "$KUBECONFIG_FILE" "${le[@]}"
  shim_at sh5b "$WORK/medium.yaml" "$KUBECONFIG_FILE" "${le[@]}"
  # The pods come once both shims run and one leads: were both to
  # schedule, both would see every pod at once.
  poll 30 grep -q "waiting to become leader" "$WORK/sh5a.log" || fail "leader: sh5a did not start"
  poll 30 grep -q "waiting to become leader" "$WORK/sh5b.log" || fail "leader: sh5b did not start"
  poll 30 grep -q "caches synced" "$WORK/sh5a.log" "$WORK/sh5b.log" || fail "leader: no shim leads"
  # Created in the background: the leader is killed while pods still come.
  create_pods "$NS" 1 "$PODS" &
  local creating=$!
  until_bound "$quarter" "$NS" "$WORK/sh5a.log" "$WORK/sh5b.log" ||
    fail "leader: no shim started binding"
  if grep -q "became leader" "$WORK/sh5a.log"; then leader=sh5a follower=sh5b; else leader=sh5b follower=sh5a; fi
  stop "$leader" KILL
  killed=$SECONDS
  killed_at="$(now)"
  info "leader $leader killed after $(bound_in_logs "$NS" "$WORK/sh5a.log" "$WORK/sh5b.log") pods were bound"
  if poll 15 grep -q "became leader" "$WORK/$follower.log"; then
    # The follower's own time stamp. It sees the lease expire 4 s after it
    # last saw it renewed (at most one retry, 0.5 s x 1.2 jitter, after the
    # kill), and tries every retry period: 4 + 2 x 0.6 s at most.
    end="$(python3 "$LEDGER" --first-after "$killed_at" "became leader" "$WORK/$follower.log")"
    took="$(python3 -c "print(f'{$end - $killed_at:.1f}')")"
    check "leader: $follower took over ${took}s after the leader was killed (lease 4s + 2 retries of 0.6s)" \
      python3 -c "import sys; sys.exit(0 if $end - $killed_at <= 5.2 else 1)"
  else
    fail "leader: $follower did not take over in $((SECONDS - killed))s"
    end="$(now)"
  fi
  wait "$creating" || fail "leader: pods not created"
  ledger 5-leader "$NS" "$end" --all-bound --one-attempt -- "$WORK/sh5a.log" "$WORK/sh5b.log"
  case_end "$NS" sh5a sh5b sc5
}

# ------------------------------------------------------------ 6: shim restarted
case_restart() {
  begin 6 restart
  local end assumed
  create_pods "$NS" 1 "$PODS"
  shim_at sh6a "$WORK/fast.yaml" "$KUBECONFIG_FILE" --leader-elect=false
  until_bound "$quarter" "$NS" "$WORK/sh6a.log" || fail "restart: the shim did not start binding"
  stop sh6a KILL
  shim_at sh6b "$WORK/fast.yaml" "$KUBECONFIG_FILE" --leader-elect=false
  end="$(now)"
  # Pods the first shim placed (assumed) but did not see bound.
  assumed="$(grep -o "pod $NS/[^ ]* -> node" "$WORK/sh6a.log" | cut -d' ' -f2 | sort -u |
    comm -23 - <(grep -o "bound pod $NS/[^ ]*" "$WORK/sh6a.log" | cut -d' ' -f3 | sort -u) | wc -l)"
  info "shim killed after $(bound_in_logs "$NS" "$WORK/sh6a.log") pods were bound; $assumed assumed, not seen bound"
  ledger 6-restart "$NS" "$end" --all-bound -- "$WORK/sh6a.log" "$WORK/sh6b.log"
  case_end "$NS" sh6b sc6
}

# ------------------------------------------------------------ 7: nodes and pods go
case_nodes() {
  begin 7 nodes
  # Pods of 200m: 20 fill a node. The first wave fills six nodes and is
  # placed at once; its bindings wait for the rate limiter (slow.yaml).
  local wave=120 end gone cordoned t_gone t_cordon victims placed nodes404 left
  create_pods "$NS" 1 "$wave" p 200m
  shim_at sh7 "$WORK/slow.yaml" "$KUBECONFIG_FILE" --leader-elect=false
  # Once the whole wave is placed, its last 20 pods wait longest for their
  # bindings: deleted now, their bindings are sent after (404), and their
  # room must come free.
  local deadline=$((SECONDS + 60))
  until (($(grep -c "pod $NS/[^ ]* -> node" "$WORK/sh7.log" || true) >= wave)); do
    ((SECONDS < deadline)) || { fail "nodes: the shim did not place the first wave"; break; }
    sleep 0.05
  done
  victims="$(grep -o "pod $NS/[^ ]* -> node" "$WORK/sh7.log" | cut -d' ' -f2 | tail -20 |
    sort | comm -23 - <(grep -o "bound pod $NS/[^ ]*" "$WORK/sh7.log" | cut -d' ' -f3 | sort -u) |
    cut -d/ -f2)"
  # shellcheck disable=SC2086  # one pod name a word
  [[ -n "$victims" ]] && k delete pod -n "$NS" $victims --grace-period=0 --force --wait=false >/dev/null 2>&1
  # The two nodes no pod went to (the emptiest, so the most attractive to
  # the next pods): one deleted, one cordoned.
  placed="$(grep -o "pod $NS/[^ ]* -> node [^ ]*" "$WORK/sh7.log" | awk '{print $NF}' | sort -u)"
  local empty
  mapfile -t empty < <(k get nodes -o name | cut -d/ -f2 | sort | comm -23 - <(echo "$placed"))
  ((${#empty[@]} >= 2)) || { fail "nodes: no two nodes left empty (placed on: $(tr "\n" " " <<<"$placed"))"; return; }
  gone="${empty[0]}" cordoned="${empty[1]}"
  k delete node "$gone" --wait=false >/dev/null
  t_gone="$(now)"
  k cordon "$cordoned" >/dev/null
  t_cordon="$(now)"
  end="$(now)"
  info "deleted $(wc -w <<<"$victims") pods placed and not bound, node $gone; cordoned $cordoned"
  # A second wave: 20 of its pods fit where the deleted pods were; the
  # other 40 fit only on the deleted or the cordoned node, so stay pending.
  create_pods "$NS" $((wave + 1)) $((wave + 60)) p 200m
  ledger 7-nodes "$NS" "$end" --some-pending \
    --no-bind-after "$gone=$(python3 -c "print($t_gone + 1)")" \
    --no-bind-after "$cordoned=$(python3 -c "print($t_cordon + 1)")" -- "$WORK/sh7.log"
  nodes404="$(grep -oE "binding $NS/p-[0-9]+ to [^ ]*: HTTP 404" "$WORK/sh7.log" | cut -d' ' -f2 | cut -d/ -f2 | sort -u)"
  check "nodes: bindings of deleted pods were sent after the deletion (HTTP 404: $(comm -12 <(echo "$victims") <(echo "$nodes404") | wc -l) of $(wc -w <<<"$victims"))" \
    test -n "$(comm -12 <(echo "$victims") <(echo "$nodes404"))"
  # shellcheck disable=SC2086
  left="$(k get pods -n "$NS" $victims --ignore-not-found -o name 2>/dev/null | wc -l)"
  check "nodes: the deleted pods are gone ($left left)" test "$left" -eq 0
  case_end "$NS" sh7 sc7
  k uncordon "$cordoned" >/dev/null
}

for c in $CASES; do
  case "$c" in
    1) case_scorer ;;
    2) case_apikill ;;
    3) case_apistop ;;
    4) case_compact ;;
    5) case_leader ;;
    6) case_restart ;;
    7) case_nodes ;;
    *) fail "unknown case $c" ;;
  esac
done

echo
echo "case      pods  bound  recovery_s  bound_once  no_overcommit  on_gone_node  binds_refused"
sort -t$'\t' -k1,1 "$RESULTS" | awk -F'\t' '{printf "%-9s %4s  %5s  %10s  %10s  %13s  %12s  %13s\n", $1, $2, $3, $4, $5, $6, $7, $8}'
info "fault suite took $((SECONDS - t_start))s"
finish
