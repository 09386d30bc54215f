#!/usr/bin/env bash
# End-to-end tests of the shim and the scorer (real binaries) on a real local
# control plane (hack/cluster.sh). Each check prints PASS/FAIL; every wait
# polls with a deadline. Needs build/bin/{scorer,shim} (or KSCORE_BIN_DIR).
set -euo pipefail
E2E_NAME=shim
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$ROOT"

cluster_up --nodes 3
N1=kscore-node-1 N2=kscore-node-2 N3=kscore-node-3
SCORER_PORT="$(free_port)"
SCORER="127.0.0.1:${SCORER_PORT}"

config() {  # config FILE [rejectEverything] [extra top-level yaml]
  cat >"$1" <<YAML
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
${3:-}
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
      rejectEverything: ${2:-false}
YAML
}
config "$WORK/on.yaml"
config "$WORK/reject.yaml" true
# slow.yaml also reads pods and nodes in JSON (the others in protobuf, the
# default), so both encodings schedule pods here.
config "$WORK/slow.yaml" false "clientConnection: {qps: 20, burst: 5, contentType: application/json}"
config "$WORK/yaml_content.yaml" false "clientConnection: {contentType: application/yaml}"

# A pod for another scheduler: must never be touched.
k run foreign --image=pause:3.9 --overrides='{"spec":{"schedulerName":"someone-else"}}' >/dev/null

# ------------------------------------------------------------ invalid config
# refused WANT_RC PATTERN WHAT CMD...: CMD exits WANT_RC ("nonzero": any
# failure) and its output names PATTERN.
refused() {
  local want="$1" pattern="$2" what="$3" out rc
  shift 3
  set +e
  out="$("$@" 2>&1)"
  rc=$?
  set -e
  if [[ $rc -ne 0 && ($want == nonzero || $rc -eq $want) ]] && grep -qF "$pattern" <<<"$out"; then
    pass "$what (exit $rc)"
  else
    fail "$what: exit $rc, output: $out"
  fi
}
refused nonzero 'profiles[0].pluginConfig[0].args.labelKey: invalid label key "a b"' \
  "scorer exits on an invalid config, naming the field" \
  "$KBIN/scorer" --config tests/testdata/config/bad/bad_label_key.yaml --listen 127.0.0.1:0
# Plugins and their args are the scorer's to validate (the shim links no
# plugin); the shim refuses what it decodes itself.
refused nonzero 'percentageOfNodeToScore: unknown field "percentageOfNodeToScore"' \
  "shim exits on an invalid config, naming the field" \
  "$KBIN/shim" --config tests/testdata/config/bad/unknown_top_field.yaml --scorer 127.0.0.1:1 --kubeconfig "$KUBECONFIG_FILE"
refused 1 'clientConnection.contentType: "application/yaml" is not supported' \
  "shim exits 1 on an unsupported clientConnection.contentType, naming it" \
  "$KBIN/shim" --config "$WORK/yaml_content.yaml" --scorer 127.0.0.1:1 --kubeconfig "$KUBECONFIG_FILE"

# ------------------------------------------------------------ seed scenario
scorer_up scorer "$WORK/on.yaml" "$SCORER_PORT"
shim_up shim "$WORK/on.yaml" --leader-elect=false
deployment spread 6 default-scheduler
if poll "$TIMEOUT" all_bound spread 6; then
  dist="$(per_node spread)"
  if [[ "$(wc -w <<<"$dist")" -eq 3 ]] && ! grep -Eq '=([4-9]|[1-9][0-9])' <<<"$dist"; then
    pass "default-scheduler spreads the seed's 6 replicas: $dist"
  else
    fail "default-scheduler did not spread: $dist"
  fi
else
  fail "default-scheduler did not bind 6 pods: $(per_node spread)"
fi
delete_app spread
# concentrated APP WHAT: a deployment of 6 under concentrate-scheduler is bound, all on one node.
concentrated() {
  deployment "$1" 6 concentrate-scheduler
  if poll "$TIMEOUT" all_bound "$1" 6 && [[ "$(wc -w <<<"$(per_node "$1")")" -eq 1 ]]; then
    pass "$2 puts all 6 replicas on one node: $(per_node "$1")"
  else
    fail "$2 placement: $(per_node "$1")"
  fi
  delete_app "$1"
}
concentrated spread "concentrate-scheduler"

# ------------------------------------------------------------ rejectEverything
stop shim; stop scorer
scorer_up scorer "$WORK/reject.yaml" "$SCORER_PORT"
shim_up shim "$WORK/reject.yaml" --leader-elect=false
deployment held 3 concentrate-scheduler
check "rejectEverything: FailedScheduling names Concentrate" \
  poll "$TIMEOUT" pending_with held "0/3 nodes are available: 3 node(s) were rejected by Concentrate (rejectEverything)."
held_pod="$(first_pod held)"
check "rejectEverything: PodScheduled=False, reason Unschedulable" \
  poll "$TIMEOUT" bash -c "[ \"\$(\"$BIN/kubectl\" --kubeconfig=$KUBECONFIG_FILE get pod $held_pod -o jsonpath='{.status.conditions[?(@.type==\"PodScheduled\")].status}/{.status.conditions[?(@.type==\"PodScheduled\")].reason}')\" = False/Unschedulable ]"
check "rejectEverything: no pod bound" test "$(bound_count held)" -eq 0
# actions_are REASON APP ACTION: the REASON events of APP's pods exist and all have ACTION.
actions_are() {
  [[ "$(k get events.events.k8s.io --field-selector "reason=$1" \
    -o jsonpath='{range .items[*]}{.regarding.name} {.action}{"\n"}{end}' |
    grep "^$2-" | cut -d' ' -f2 | sort -u | xargs)" == "$3" ]]
}
check "FailedScheduling events carry kube-scheduler's action Scheduling" \
  poll "$TIMEOUT" actions_are FailedScheduling held Scheduling
uids_before="$(k get pods -l app=held -o jsonpath='{.items[*].metadata.uid}' | tr ' ' '\n' | sort)"
stop shim; stop scorer
scorer_up scorer "$WORK/on.yaml" "$SCORER_PORT"
shim_up shim "$WORK/on.yaml" --leader-elect=false
check "after restart with rejectEverything off, the same 3 pods are scheduled" poll "$TIMEOUT" all_bound held 3
uids_after="$(k get pods -l app=held -o jsonpath='{.items[*].metadata.uid}' | tr ' ' '\n' | sort)"
check "none lost: the bound pods are the ones that were pending" test "$uids_before" = "$uids_after"
delete_app held

# ------------------------------------------------------------ batches
# One node per scorer call: every cycle takes 3 calls (raw scores only) and one
# NormalizeScore over all of them; the filters below run this way too.
stop shim
shim_up shim "$WORK/on.yaml" --leader-elect=false --scorer_batch_size=1
concentrated batched "in batches of one node, concentrate-scheduler"

# ------------------------------------------------------------ core filters
k cordon "$N1" >/dev/null
k taint node "$N2" dedicated=infra:NoSchedule >/dev/null
deployment big 4 concentrate-scheduler 1500m
poll "$TIMEOUT" bash -c "[ \"\$(\"$BIN/kubectl\" --kubeconfig=$KUBECONFIG_FILE get pods -l app=big -o jsonpath='{range .items[*]}{.spec.nodeName}{\"\\n\"}{end}' | grep -c .)\" -ge 2 ]" || true
if [[ "$(per_node big)" == "${N3}=2 " ]]; then
  pass "filters: 2 of 4 pods (1500m each) fit, only on the untainted, uncordoned node"
else
  fail "filters: placement of 4 x 1500m pods: '$(per_node big)'"
fi
check "filters: the rest stay Pending with kube-scheduler's reasons" \
  poll "$TIMEOUT" pending_with big "0/3 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint(s), 1 node(s) were unschedulable."
# A taint lifted from a node may make a pod that TaintToleration rejected
# fit (its queueing hint), so the pending pods are tried again; as
# client-go's recorder, repeats of one pod's FailedScheduling fold into an
# event series instead of a new Event each attempt.
held_pod="$(k get pods -l app=big --field-selector spec.nodeName= -o jsonpath='{.items[0].metadata.name}')"
series_of() {  # poke a node, then: a FailedScheduling event of pod $1 has series.count >= 2
  k taint node "$N3" kscore-poke=x:NoSchedule --overwrite >/dev/null
  k taint node "$N3" kscore-poke:NoSchedule- >/dev/null
  local c
  c="$(k get events.events.k8s.io --field-selector "regarding.name=$1,reason=FailedScheduling" \
    -o jsonpath='{range .items[*]}{.series.count}{"\n"}{end}' | sort -n | tail -1)"
  [[ "${c:-0}" -ge 2 ]]
}
check "events: repeated FailedScheduling of $held_pod fold into a series (count >= 2)" \
  poll "$TIMEOUT" series_of "$held_pod"
attempts="$(grep -c "unable to schedule pod default/$held_pod" "$WORK/shim.log")"
objects="$(k get events.events.k8s.io --field-selector "regarding.name=$held_pod,reason=FailedScheduling" --no-headers | wc -l)"
check "events: $attempts attempts of $held_pod made $objects FailedScheduling Event objects" \
  test "$objects" -lt "$attempts"
k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: pinned, labels: {app: pinned}}
spec:
  schedulerName: concentrate-scheduler
  nodeSelector: {kubernetes.io/hostname: ${N2}}
  tolerations: [{key: dedicated, operator: Equal, value: infra, effect: NoSchedule}]
  containers: [{name: pause, image: pause:3.9}]
YAML
check "filters: a nodeSelector is honoured (tolerating pod lands on $N2)" \
  poll "$TIMEOUT" bash -c "[ \"\$(\"$BIN/kubectl\" --kubeconfig=$KUBECONFIG_FILE get pod pinned -o jsonpath='{.spec.nodeName}')\" = $N2 ]"
# A DaemonSet-style pod pinned by metadata.name to the cordoned node: the
# other nodes are outside NodeAffinity's PreFilterResult and are reported as
# kube-scheduler reports them, whatever their taints. Its twin under the
# reference kube-scheduler must get the same message.
for sched in concentrate-scheduler default-scheduler; do
  k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: ds-${sched}, labels: {app: ds-${sched}}}
spec:
  schedulerName: ${sched}
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
        - matchFields: [{key: metadata.name, operator: In, values: [${N1}]}]
  containers: [{name: pause, image: pause:3.9}]
YAML
done
want_ds="0/3 nodes are available: 1 node(s) were unschedulable, 2 node(s) didn't satisfy plugin(s) [NodeAffinity]."
check "prefilter result: the reference kube-scheduler says '$want_ds'" \
  poll "$TIMEOUT" pending_with ds-default-scheduler "$want_ds"
check "prefilter result: kscore says the same for the pinned pod" \
  poll "$TIMEOUT" pending_with ds-concentrate-scheduler "$want_ds"
info "kscore: $(events_for ds-concentrate-scheduler FailedScheduling | tail -1)"
k delete pod ds-concentrate-scheduler ds-default-scheduler --wait=false >/dev/null
k delete pod pinned --wait=false >/dev/null
delete_app big
k uncordon "$N1" >/dev/null
k taint node "$N2" dedicated=infra:NoSchedule- >/dev/null

# ------------------------------------------------------------ scorer down
stop scorer
deployment waiting 3 concentrate-scheduler
check "scorer down: pods stay Pending with a FailedScheduling event saying so" \
  poll "$TIMEOUT" pending_with waiting "scorer unavailable"
check "scorer down: nothing bound" test "$(bound_count waiting)" -eq 0
scorer_up scorer "$WORK/on.yaml" "$SCORER_PORT"
check "scorer back: the pods are scheduled" poll "$TIMEOUT" all_bound waiting 3
delete_app waiting

# ------------------------------------------------------------ kill the shim mid-run
stop shim
shim_up shim "$WORK/slow.yaml" --leader-elect=false
deployment fifty 50 concentrate-scheduler
poll "$TIMEOUT" bash -c "[ \"\$(\"$BIN/kubectl\" --kubeconfig=$KUBECONFIG_FILE get pods -l app=fifty -o jsonpath='{range .items[*]}{.spec.nodeName}{\"\\n\"}{end}' | grep -c .)\" -ge 5 ]" || true
bound_at_kill="$(bound_count fifty)"
stop shim KILL
info "killed the shim with SIGKILL after $bound_at_kill of 50 pods were bound"
check "the shim was killed mid-run" test "$bound_at_kill" -lt 50
shim_up shim2 "$WORK/slow.yaml" --leader-elect=false
check "after restart all 50 pods are bound" poll 120 all_bound fifty 50
twice="$(k get events.events.k8s.io --field-selector reason=Scheduled -o jsonpath='{range .items[*]}{.regarding.name}{"\n"}{end}' | grep '^fifty-' | sort | uniq -d | wc -l)"
check "no pod was scheduled twice (at most one Scheduled event each)" test "$twice" -eq 0
check "Scheduled events carry kube-scheduler's action Binding" poll "$TIMEOUT" actions_are Scheduled fifty Binding
delete_app fifty
stop shim2

# ------------------------------------------------------------ leader election
le_flags=(--leader-elect=true --leader-elect-lease-duration=4s --leader-elect-renew-deadline=3s
          --leader-elect-retry-period=500ms --leader-elect-resource-namespace=default)
shim_up a "$WORK/on.yaml" "${le_flags[@]}"
shim_up b "$WORK/on.yaml" "${le_flags[@]}"
leaders() { grep -l "became leader" "$WORK/a.log" "$WORK/b.log" 2>/dev/null | wc -l; }
check "leader election: one of two shims leads" poll "$TIMEOUT" bash -c "[ \$(grep -l 'became leader' $WORK/a.log $WORK/b.log | wc -l) -eq 1 ]"
sleep_check_start=$SECONDS
deployment le 3 concentrate-scheduler
poll "$TIMEOUT" all_bound le 3 || true
if grep -q "became leader" "$WORK/a.log"; then leader=a follower=b; else leader=b follower=a; fi
check "leader election: only the leader ($leader) binds" bash -c "grep -q 'bound pod default/le-' $WORK/$leader.log && ! grep -q 'bound pod' $WORK/$follower.log"
stop "$leader" KILL
killed_at=$SECONDS
if poll 10 grep -q "became leader" "$WORK/$follower.log"; then
  took=$((SECONDS - killed_at))
  check "leader election: $follower took over ${took}s after the leader was killed (lease 4s)" test "$took" -le 5
else
  fail "leader election: $follower did not take over"
fi
k scale deployment le --replicas=6 >/dev/null
check "leader election: the new leader schedules" poll "$TIMEOUT" all_bound le 6
: "$sleep_check_start"
delete_app le

# ------------------------------------------------------------ other schedulers
check "a pod for another scheduler is never touched (unbound, no events, no condition)" bash -c "
  [ -z \"\$(\"$BIN/kubectl\" --kubeconfig=$KUBECONFIG_FILE get pod foreign -o jsonpath='{.spec.nodeName}{.status.conditions}')\" ] &&
  [ -z \"\$(\"$BIN/kubectl\" --kubeconfig=$KUBECONFIG_FILE get events.events.k8s.io --field-selector regarding.name=foreign -o name)\" ]"

finish
