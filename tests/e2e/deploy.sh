#!/usr/bin/env bash
# deploy/ on a real local control plane (hack/cluster.sh): the manifests pass
# a server-side dry run and apply; the RBAC grants the shim exactly the calls
# it makes and the scorer nothing; the real shim binary, configured the
# in-cluster way (service-account token + CA, no kubeconfig) with the
# ConfigMap's config and leader election on, schedules the seed scenario; and
# three scorers behind one comma-separated target survive the one holding
# the Deployment's batching session being SIGKILLed mid-run: another takes
# over and no pod is lost. The shim's HTTPS
# port works with deploy/'s RBAC alone: its probes' paths are open, and a
# token bound to kscore-metrics-reader reads /metrics (the shim's own
# ServiceAccount reviews the token and the access).
# Each check prints PASS/FAIL; every wait polls with a deadline.
set -euo pipefail
E2E_NAME=deploy
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$ROOT"

cluster_up --nodes 3
NS=kscore-system
SHIM_SA=kscore-shim
SCORER_SA=kscore-scorer
LEASE=concentrate-scheduler
APISERVER_URL="$(sed -n 's/^APISERVER_URL=//p' "${STATE}/env")"
CA_FILE="$(sed -n 's/^CA_FILE=//p' "${STATE}/env")"

# ------------------------------------------------------------ manifests
# A server-side dry run does not persist the Namespace, so every namespaced
# object would be NotFound on a fresh cluster: create the Namespace first.
k apply -f deploy/base/namespace.yaml >/dev/null
if out="$(k apply --dry-run=server -k deploy/ 2>&1)"; then
  pass "kubectl apply --dry-run=server -k deploy/ ($(grep -c 'server dry run' <<<"$out") objects)"
else
  fail "kubectl apply --dry-run=server -k deploy/: $out"
fi
if out="$(k apply -k deploy/ 2>&1)"; then
  pass "kubectl apply -k deploy/"
else
  fail "kubectl apply -k deploy/: $out"
fi
replicas() { k -n "$NS" get deployment "$1" -o jsonpath='{.status.replicas}'; }
# kwok fakes the pods Running: this proves the pod templates pass admission.
check "the controllers create the pods: 3 scorer, 2 shim" \
  poll "$TIMEOUT" bash -c "[ \"\$(\"$BIN/kubectl\" --kubeconfig=$KUBECONFIG_FILE -n $NS get pods -l app.kubernetes.io/component=scorer --no-headers | wc -l)\" -eq 3 ] &&
    [ \"\$(\"$BIN/kubectl\" --kubeconfig=$KUBECONFIG_FILE -n $NS get pods -l app.kubernetes.io/component=shim --no-headers | wc -l)\" -eq 2 ]"
info "scorer replicas $(replicas scorer), shim replicas $(replicas shim)"

# ------------------------------------------------------------ RBAC
can() {  # can SA VERB RESOURCE [flags]: kubectl auth can-i as that ServiceAccount
  local sa="$1"; shift
  [[ "$(k auth can-i "$@" --as="system:serviceaccount:${NS}:${sa}" 2>/dev/null)" == yes ]]
}
shim_may=(
  "get pods -A" "list pods -A" "watch pods -A"
  "get nodes" "list nodes" "watch nodes"
  "list namespaces" "watch namespaces"
  "list services -A" "watch services -A"
  "list replicationcontrollers -A" "watch replicationcontrollers -A"
  "list replicasets.apps -A" "watch replicasets.apps -A"
  "list statefulsets.apps -A" "watch statefulsets.apps -A"
  "get poddisruptionbudgets.policy -A" "list poddisruptionbudgets.policy -A"
  "watch poddisruptionbudgets.policy -A"
  "create pods --subresource=binding -n default"
  "patch pods --subresource=status -n default" "delete pods -n default"
  "create events.events.k8s.io -n default" "patch events.events.k8s.io -n default"
  "create leases.coordination.k8s.io -n $NS"
  "get leases.coordination.k8s.io/$LEASE -n $NS"
  "update leases.coordination.k8s.io/$LEASE -n $NS"
  "create tokenreviews.authentication.k8s.io"
  "create subjectaccessreviews.authorization.k8s.io"
)
shim_may_not=(
  "get secrets -n $NS" "get secrets -A" "update nodes" "patch nodes"
  "create pods -n default" "update pods -n default" "create events -n default"
  "get leases.coordination.k8s.io/kube-scheduler -n kube-system"
  "update leases.coordination.k8s.io/other -n $NS" "delete leases.coordination.k8s.io/$LEASE -n $NS"
  "get configmaps -n $NS"
  "update namespaces" "delete namespaces" "create services -n default" "update services -n default"
  "update replicasets.apps -n default" "update statefulsets.apps -n default"
  "update poddisruptionbudgets.policy -n default" "delete poddisruptionbudgets.policy -n default"
  "list deployments.apps -A" "list endpoints -A"
)
scorer_may_not=(
  "list pods -A" "get pods -n default" "list nodes" "create pods --subresource=binding -n default"
  "create events.events.k8s.io -n default" "get leases.coordination.k8s.io/$LEASE -n $NS"
  "get configmaps -n $NS" "get secrets -n $NS" "list poddisruptionbudgets.policy -A"
)
bad=()
# shellcheck disable=SC2086  # each entry is several words on purpose
for a in "${shim_may[@]}"; do can "$SHIM_SA" $a || bad+=("shim cannot: $a"); done
check "RBAC: the shim may do all ${#shim_may[@]} things it does" test "${#bad[@]}" -eq 0
bad2=()
# shellcheck disable=SC2086
for a in "${shim_may_not[@]}"; do ! can "$SHIM_SA" $a || bad2+=("shim can: $a"); done
check "RBAC: the shim may not do ${#shim_may_not[@]} things it does not (get secrets, update nodes, write services, ...)" \
  test "${#bad2[@]}" -eq 0
bad3=()
# shellcheck disable=SC2086
for a in "${scorer_may_not[@]}"; do ! can "$SCORER_SA" $a || bad3+=("scorer can: $a"); done
check "RBAC: the scorer may do nothing (${#scorer_may_not[@]} checks, e.g. list pods)" test "${#bad3[@]}" -eq 0
for b in "${bad[@]}" "${bad2[@]}" "${bad3[@]}"; do info "$b"; done
# The scraping role: a ServiceAccount may get /metrics once bound to it.
k -n "$NS" create serviceaccount prometheus >/dev/null
check "RBAC: a scraper may not get /metrics before it is bound" \
  bash -c "! '$BIN/kubectl' --kubeconfig='$KUBECONFIG_FILE' auth can-i get /metrics --as=system:serviceaccount:$NS:prometheus >/dev/null 2>&1"
k create clusterrolebinding prometheus-kscore-metrics --clusterrole=kscore-metrics-reader \
  --serviceaccount="$NS:prometheus" >/dev/null
check "RBAC: bound to kscore-metrics-reader it may get /metrics, not /configz" \
  bash -c "'$BIN/kubectl' --kubeconfig='$KUBECONFIG_FILE' auth can-i get /metrics --as=system:serviceaccount:$NS:prometheus >/dev/null &&
    ! '$BIN/kubectl' --kubeconfig='$KUBECONFIG_FILE' auth can-i get /configz --as=system:serviceaccount:$NS:prometheus >/dev/null 2>&1"
probe() {  # probe KIND: scheme port path of the shim's probe
  k -n "$NS" get deployment shim -o jsonpath="{.spec.template.spec.containers[0].${1}Probe.httpGet.scheme} {.spec.template.spec.containers[0].ports[?(@.name==\"https\")].containerPort} {.spec.template.spec.containers[0].${1}Probe.httpGet.path}"
}
check "the shim's liveness probe is HTTPS on 10259 /healthz" test "$(probe liveness)" = "HTTPS 10259 /healthz"
check "the shim's readiness probe is HTTPS on 10259 /readyz" test "$(probe readiness)" = "HTTPS 10259 /readyz"
check "the scorer's pods get no API token (automountServiceAccountToken: false)" \
  test "$(k -n "$NS" get pods -l app.kubernetes.io/component=scorer -o jsonpath='{range .items[*]}{.spec.volumes[*].projected}{end}')" = ""

# ------------------------------------------------------------ the shim, in-cluster style
# What a pod of deploy/base/shim.yaml gets: the ConfigMap's config file, a token of
# the deploy/ ServiceAccount and the cluster CA, KUBERNETES_SERVICE_HOST/PORT.
cm="$(k -n "$NS" get configmap -o name | grep '/kscore-config-' | head -n1)"
k -n "$NS" get "$cm" -o jsonpath='{.data.config\.yaml}' >"$WORK/config.yaml"
check "the ConfigMap's config is deploy/base/scheduler-config.yaml" cmp -s "$WORK/config.yaml" deploy/base/scheduler-config.yaml
mkdir -p "$WORK/sa"
k -n "$NS" create token "$SHIM_SA" --duration=1h >"$WORK/sa/token"
cp "$CA_FILE" "$WORK/sa/ca.crt"
api_port="${APISERVER_URL##*:}"
in_cluster=(env KSCORE_SERVICEACCOUNT_DIR="$WORK/sa" KUBERNETES_SERVICE_HOST=127.0.0.1
            KUBERNETES_SERVICE_PORT="$api_port")

scorer_up() {  # scorer_up NAME PORT METRICS_PORT
  start "$1" build/bin/scorer --config "$WORK/config.yaml" --listen "127.0.0.1:$2" \
    --metrics-bind-address "127.0.0.1:$3"
  poll 20 bash -c "exec 3<>/dev/tcp/127.0.0.1/$2" || fail "$1 did not listen"
}
shim_up() {  # shim_up NAME SCORER_TARGET [SECURE_PORT]: no --kubeconfig, no --leader-elect flag
  start "$1" "${in_cluster[@]}" build/bin/shim --config "$WORK/config.yaml" \
    --scorer "$2" --bind-address 127.0.0.1 --secure-port "${3:-$(free_port)}" -v 4
}
holder() { k -n "$NS" get lease "$LEASE" -o jsonpath='{.spec.holderIdentity}' 2>/dev/null; }
delete_app() {
  k delete deployment "$1" --wait=false >/dev/null 2>&1 || true
  poll "$TIMEOUT" bash -c "[ \"\$(\"$BIN/kubectl\" --kubeconfig=$KUBECONFIG_FILE get pods -l app=$1 --no-headers 2>/dev/null | wc -l)\" -eq 0 ]" || true
}
scheduled_events() {  # names of pods with a Scheduled event, one line per event
  k get events.events.k8s.io -n default --field-selector reason=Scheduled \
    -o jsonpath='{range .items[*]}{.reportingController} {.regarding.name}{"\n"}{end}' |
    awk -v app="$1-" '$1 == "concentrate-scheduler" && index($2, app) == 1 {print $2}'
}

s0_port="$(free_port)"
scorer_up s0 "$s0_port" "$(free_port)"
https_port="$(free_port)"
shim_up shim "127.0.0.1:${s0_port}" "$https_port"
check "in-cluster shim: leader of Lease $NS/$LEASE (leader election on, from the config)" \
  poll "$TIMEOUT" bash -c "grep -q 'became leader of Lease $NS/$LEASE' '$WORK/shim.log'"
https_code() {  # https_code PATH [TOKEN]
  local auth=()
  [[ -n "${2:-}" ]] && auth=(-H "Authorization: Bearer $2")
  curl -sk -o "$WORK/body" -w '%{http_code}' --max-time 10 "${auth[@]}" "https://127.0.0.1:${https_port}$1"
}
scrape_token="$(k -n "$NS" create token prometheus --duration=1h)"
check "in-cluster shim: HTTPS /readyz answers the probe without a token" test "$(https_code /readyz)" = 200
check "in-cluster shim: /metrics without a token is 403 (system:anonymous, reviewed with deploy/'s RBAC)" test "$(https_code /metrics)" = 403
check "in-cluster shim: /metrics with the bound scraper's token is 200, reviewed with deploy/'s RBAC" \
  test "$(https_code /metrics "$scrape_token")" = 200
check "  and holds the shim's metrics" grep -q '^scheduler_pending_pods' "$WORK/body"
info "Lease holder: $(holder)"
deployment spread 6 concentrate-scheduler
if poll "$TIMEOUT" all_bound spread 6 && [[ "$(wc -w <<<"$(per_node spread)")" -eq 1 ]]; then
  pass "in-cluster shim: the seed's 6 replicas all on one node: $(per_node spread)"
else
  fail "in-cluster shim: seed scenario placement: '$(per_node spread)'"
fi
check "in-cluster shim: a Scheduled event for each of the 6 pods" \
  poll "$TIMEOUT" bash -c "[ \"\$(\"$BIN/kubectl\" --kubeconfig=$KUBECONFIG_FILE get events.events.k8s.io --field-selector reason=Scheduled -o jsonpath='{range .items[*]}{.regarding.name}{\"\\n\"}{end}' | grep -c '^spread-')\" -eq 6 ]"
# An unschedulable pod exercises the rest: FailedScheduling + PodScheduled=False.
k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: nowhere, labels: {app: nowhere}}
spec:
  schedulerName: concentrate-scheduler
  nodeSelector: {kscore.example/none: "true"}
  containers: [{name: pause, image: pause:3.9}]
YAML
check "in-cluster shim: an unschedulable pod gets PodScheduled=False/Unschedulable (pods/status patch)" \
  poll "$TIMEOUT" bash -c "[ \"\$(\"$BIN/kubectl\" --kubeconfig=$KUBECONFIG_FILE get pod nowhere -o jsonpath='{.status.conditions[?(@.type==\"PodScheduled\")].status}/{.status.conditions[?(@.type==\"PodScheduled\")].reason}')\" = False/Unschedulable ]"
check "in-cluster shim: no API call was forbidden" bash -c "! grep -Eiq 'HTTP 403|forbidden' '$WORK/shim.log'"
grep -Ei 'HTTP 403|forbidden' "$WORK/shim.log" | head -n 3 | cut -c1-300 | sed 's/^/  .. /' || true
k delete pod nowhere --wait=false >/dev/null
delete_app spread
stop shim   # TERM: hands the Lease over
stop s0

# ------------------------------------------------------------ three scorers, one killed
declare -A GRPC_PORT METRICS_PORT
targets=()
for s in s1 s2 s3; do
  GRPC_PORT[$s]="$(free_port)"
  METRICS_PORT[$s]="$(free_port)"
  scorer_up "$s" "${GRPC_PORT[$s]}" "${METRICS_PORT[$s]}"
  targets+=("127.0.0.1:${GRPC_PORT[$s]}")
done
evaluate_ok() {  # kscore_scorer_calls_total{method="Evaluate",code="OK"} of scorer $1
  curl -fsS --max-time 2 "http://127.0.0.1:${METRICS_PORT[$1]}/metrics" |
    awk '/^kscore_scorer_calls_total\{/ && /method="Evaluate"/ && /code="OK"/ {n = $2} END {printf "%d\n", n}'
}
check "every scorer serves /metrics, Evaluate OK calls at 0" \
  bash -c "for p in ${METRICS_PORT[*]}; do curl -fsS http://127.0.0.1:\$p/metrics | grep '^kscore_scorer_calls_total{' | grep 'method=\"Evaluate\"' | grep -q 'code=\"OK\".* 0$' || exit 1; done"
target="$(IFS=,; echo "${targets[*]}")"
shim_up shim2 "$target"
check "second in-cluster shim leads (the first handed the Lease over)" \
  poll "$TIMEOUT" bash -c "grep -q 'became leader' '$WORK/shim2.log'"

deployment many 200 concentrate-scheduler
poll 120 bash -c "[ \"\$(\"$BIN/kubectl\" --kubeconfig=$KUBECONFIG_FILE get pods -l app=many -o jsonpath='{range .items[*]}{.spec.nodeName}{\"\\n\"}{end}' | grep -c .)\" -ge 20 ]" || true
declare -A AT_KILL
for s in s1 s2 s3; do AT_KILL[$s]="$(evaluate_ok "$s")"; done
bound_at_kill="$(bound_count many)"
# The Deployment's pods are one template: after the first, each pod's cycle
# is a batched update on the replica that keeps the template's session
# (docs/design.md), so that replica answers most calls. It is the one killed.
busy=s1
for s in s2 s3; do ((AT_KILL[$s] > AT_KILL[$busy])) && busy=$s; done
stop "$busy" KILL
info "SIGKILLed scorer $busy (the session's) with $bound_at_kill of 200 pods bound; Evaluate OK calls so far: s1=${AT_KILL[s1]} s2=${AT_KILL[s2]} s3=${AT_KILL[s3]}"
check "the shim's calls reached the scorers before the kill ($busy most)" \
  test "${AT_KILL[$busy]}" -gt 0
check "the kill came mid-run ($bound_at_kill of 200 bound)" test "$bound_at_kill" -gt 0 -a "$bound_at_kill" -lt 200
check "after the kill all 200 pods are bound" poll 180 all_bound many 200
info "placement: $(per_node many)"
declare -A AFTER
grew=0
for s in s1 s2 s3; do
  [[ "$s" == "$busy" ]] && continue
  AFTER[$s]="$(evaluate_ok "$s")"
  ((AFTER[$s] > AT_KILL[$s])) && grew=$((grew + 1))
done
info "Evaluate OK calls at the end: $(for s in "${!AFTER[@]}"; do printf '%s=%s ' "$s" "${AFTER[$s]}"; done)"
check "a surviving scorer took the session over and answered after the kill ($grew of 2)" \
  test "$grew" -ge 1
poll "$TIMEOUT" bash -c "[ \"\$(\"$BIN/kubectl\" --kubeconfig=$KUBECONFIG_FILE get events.events.k8s.io --field-selector reason=Scheduled -o jsonpath='{range .items[*]}{.regarding.name}{\"\\n\"}{end}' | grep -c '^many-')\" -ge 200 ]" || true
events="$(scheduled_events many)"
twice="$(sort <<<"$events" | uniq -d | grep -c . || true)"
info "Scheduled events from concentrate-scheduler for the 200 pods: $(grep -c . <<<"$events" || true)"
check "no pod was scheduled twice (at most one Scheduled event each)" test "$twice" -eq 0
check "the shim logged no forbidden call" bash -c "! grep -Eiq 'HTTP 403|forbidden' '$WORK/shim2.log'"
delete_app many

finish
