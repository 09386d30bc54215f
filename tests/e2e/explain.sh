#!/usr/bin/env bash
# End-to-end tests of "why here, why pending" (docs/explain.md): the shim's
# /debug/kscore/ endpoints read through the kubectl plugin kubectl-kscore,
# directly (--shim-url) and through the API server's pod proxy with the
# deploy/ Role, on a real local control plane with the real scorer and shim;
# and --record-scores' annotations.
set -euo pipefail
E2E_NAME=explain
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$ROOT"

cluster_up --nodes 3
SCORER_PORT="$(free_port)"
SCORER="127.0.0.1:${SCORER_PORT}"
SHIM_PORT="$(free_port)"
SHIM_URL="https://127.0.0.1:${SHIM_PORT}"
# As deploy/: the API server's pod proxy carries no user credentials, so
# the debug paths skip the shim's own authorization (RBAC on pods/proxy is
# the gate).
ALLOW_PATHS="/healthz,/readyz,/livez,/debug/kscore/explain,/debug/kscore/what-if"

cat >"$WORK/config.yaml" <<'YAML'
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
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

# The plugin on PATH, as a user installs it; kubectl finds kubectl-kscore.
mkdir -p "$WORK/path"
ln -s "$ROOT/shim/kubectl-kscore" "$WORK/path/kubectl-kscore"
export PATH="$WORK/path:$BIN:$PATH"
export KUBECONFIG="$KUBECONFIG_FILE"
ks() { kubectl kscore "$@" --insecure-skip-tls-verify; }

pod() {  # pod NAME APP [CPU]: a pause pod for concentrate-scheduler
  k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: $1, labels: {app: $2}}
spec:
  schedulerName: concentrate-scheduler
  terminationGracePeriodSeconds: 0
  containers:
  - name: pause
    image: pause:3.9
    resources: {requests: {cpu: ${3:-100m}}}
YAML
}
node_of() { k get pod "$1" -o jsonpath='{.spec.nodeName}'; }
bound() { [[ -n "$(node_of "$1")" ]]; }
json_field() {  # json_field FILE PYTHON-EXPR (d is the document)
  python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"
}

scorer_up scorer "$WORK/config.yaml" "$SCORER_PORT"
shim_up shim "$WORK/config.yaml" --leader-elect=false \
  --bind-address 0.0.0.0 --secure-port "$SHIM_PORT" \
  --authorization-always-allow-paths "$ALLOW_PATHS"
poll 30 curl -skf "$SHIM_URL/readyz" || fail "the shim never got ready"

# ------------------------------------------------------------ why here
# Two web pods first, so Concentrate has an opinion about the third.
pod web-1 web
pod web-2 web
poll "$TIMEOUT" bound web-1 && poll "$TIMEOUT" bound web-2 || fail "web-1/web-2 not bound"
pod web-3 web
if poll "$TIMEOUT" bound web-3; then
  node="$(node_of web-3)"
  out="$(ks explain pod web-3 --shim-url "$SHIM_URL" 2>&1)" || true
  echo "$out" | sed 's/^/    /'
  if grep -q "^Result: scheduled on ${node};" <<<"$out" &&
     grep -Eq "^Concentrate +10 " <<<"$out" && grep -q "^TOTAL" <<<"$out"; then
    pass "kubectl kscore explain pod web-3 names its node ${node} and a score table"
  else
    fail "explain web-3 (bound to ${node}): $out"
  fi
  ks explain pod web-3 --shim-url "$SHIM_URL" -o json >"$WORK/web-3.json"
  # Each shown node's normalized x weight sum to its total, the chosen node
  # first; its total is the one the shim logged when it decided (-v=4).
  sums="$(json_field "$WORK/web-3.json" \
    "all(sum(s['weighted'] for s in t['scores']) == t['total'] for t in d['top']) and len(d['top']) == 3 and d['top'][0]['node'] == d['node']")"
  logged="$(grep -o "pod default/web-3 -> node ${node} .* top: .*" "$WORK/shim.log" |
    grep -o "${node} total=[0-9-]*" | head -n1 | cut -d= -f2)"
  total="$(json_field "$WORK/web-3.json" "d['top'][0]['total']")"
  if [[ "$sums" == True && -n "$logged" && "$logged" == "$total" ]]; then
    pass "the weighted scores sum to each node's total; ${node}'s total ${total} is the one the shim decided with"
  else
    fail "totals: sums=$sums logged=$logged json=$total ($(cat "$WORK/web-3.json"))"
  fi
  replicas="$(json_field "$WORK/web-3.json" "','.join(d['scorerReplicas'])")"
  check "the scorer replica that answered is named ($replicas)" \
    grep -q ":${SCORER_PORT}\$" <<<"$replicas"
else
  fail "web-3 was not bound"
fi

# ------------------------------------------------------------ why pending
pod big web 1000
if poll "$TIMEOUT" bash -c "[[ -n \"\$(\"$BIN/kubectl\" --kubeconfig=$KUBECONFIG_FILE get events.events.k8s.io --field-selector regarding.name=big,reason=FailedScheduling -o name)\" ]]"; then
  event="$(events_for big FailedScheduling | head -n1)"
  ks explain pod big --shim-url "$SHIM_URL" -o json >"$WORK/big.json"
  out="$(ks explain pod big --shim-url "$SHIM_URL" 2>&1)" || true
  echo "$out" | sed 's/^/    /'
  # The histogram is what the event's message sums up: "0/3 nodes are
  # available: 3 Insufficient cpu. preemption: ..." lists "N reason" parts.
  parts="$(json_field "$WORK/big.json" \
    "'; '.join(f\"{r['nodes']} {r['reason']}\" for r in d['filterReasons'])")"
  message="$(json_field "$WORK/big.json" "d['message']")"
  if [[ "$message" == "$event" ]] && grep -qF "3 Insufficient cpu" <<<"$event" &&
     [[ "$parts" == "3 Insufficient cpu" ]] &&
     grep -Eq "^3 +Insufficient cpu" <<<"$out" && grep -q "^Result: pending (Unschedulable)" <<<"$out"; then
    pass "explain pod big: pending, the reasons (${parts}) and the FailedScheduling message match"
  else
    fail "explain big: event '$event', message '$message', parts '$parts': $out"
  fi
else
  fail "no FailedScheduling event for pod big"
fi

if out="$(ks explain pod nobody --shim-url "$SHIM_URL" 2>&1)"; then
  fail "explain of an unknown pod succeeded: $out"
else
  check "explain of a pod the shim never saw says so" grep -q "no decision kept for pod default/nobody" <<<"$out"
fi

# ------------------------------------------------------------ what-if
cat >"$WORK/what-if.yaml" <<'YAML'
apiVersion: v1
kind: Pod
metadata: {name: dry-1, labels: {app: web}}
spec:
  schedulerName: concentrate-scheduler
  containers:
  - name: pause
    image: pause:3.9
    resources: {requests: {cpu: 100m}}
YAML
binds_before="$(grep -c 'bound pod' "$WORK/shim.log" || true)"
out="$(ks what-if -f "$WORK/what-if.yaml" --shim-url "$SHIM_URL" 2>&1)" || true
echo "$out" | sed 's/^/    /'
# Concentrate (weight 10) packs web pods: the what-if goes where web-1..3 are.
web_node="$(node_of web-3)"
if grep -q "^Result: would go to ${web_node};" <<<"$out" && grep -q "what-if" <<<"$out"; then
  pass "what-if -f pod.yaml: would go to ${web_node}, with the web pods"
else
  fail "what-if: $out"
fi
binds_after="$(grep -c 'bound pod' "$WORK/shim.log" || true)"
if ! k get pod dry-1 >/dev/null 2>&1 && [[ "$binds_after" == "$binds_before" ]] &&
   [[ -z "$(k get events.events.k8s.io --field-selector regarding.name=dry-1 -o name)" ]]; then
  pass "what-if bound nothing: no pod dry-1, no binding, no event"
else
  fail "what-if left traces: binds ${binds_before} -> ${binds_after}, pod: $(k get pod dry-1 -o name 2>&1)"
fi
if out="$(ks what-if -f "$WORK/what-if.yaml" --scheduler-name default-scheduler --shim-url "$SHIM_URL" 2>&1)"; then
  fail "what-if for a profile the shim does not serve succeeded: $out"
else
  check "what-if for another scheduler names spec.schedulerName" \
    grep -qF 'spec.schedulerName: "default-scheduler" is not a profile of this scheduler' <<<"$out"
fi

# ------------------------------------------------------------ through the API server
# As on a cluster: the plugin finds the leading shim by its Lease and asks it
# through the API server's pod proxy, as a user bound to deploy/'s Role. The
# shim runs on this host, so its "pod" is an object whose IP is this host's.
HOST_IP="$(hostname -I 2>/dev/null | awk '{print $1}')"
if [[ -n "$HOST_IP" ]]; then
  k create namespace kscore-system >/dev/null
  k apply -f deploy/base/explain-rbac.yaml >/dev/null
  k -n kscore-system apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: shim-e2e}
spec:
  nodeName: not-a-node
  containers: [{name: shim, image: kscore}]
---
apiVersion: coordination.k8s.io/v1
kind: Lease
metadata: {name: concentrate-scheduler}
spec: {holderIdentity: shim-e2e_0123456789abcdef}
YAML
  k -n kscore-system patch pod shim-e2e --subresource=status --type=merge \
    -p "{\"status\":{\"podIP\":\"${HOST_IP}\",\"podIPs\":[{\"ip\":\"${HOST_IP}\"}],\"phase\":\"Running\"}}" >/dev/null
  printf '#!/bin/sh\nexec %s --as=alice "$@"\n' "$BIN/kubectl" >"$WORK/kubectl-as-alice"
  chmod +x "$WORK/kubectl-as-alice"
  if out="$(ks explain pod web-3 --kubectl "$WORK/kubectl-as-alice" --shim-port "$SHIM_PORT" 2>&1)"; then
    fail "alice read the shim without a RoleBinding: $out"
  else
    check "without the Role the API server refuses alice" grep -qi "forbidden" <<<"$out"
  fi
  k -n kscore-system create rolebinding kscore-explain-alice --role=kscore-explain --user=alice >/dev/null
  out="$(poll 10 ks explain pod web-3 --kubectl "$WORK/kubectl-as-alice" --shim-port "$SHIM_PORT";
    ks explain pod web-3 --kubectl "$WORK/kubectl-as-alice" --shim-port "$SHIM_PORT" 2>&1)" || true
  check "explain through the API server's pod proxy, with deploy/'s Role" \
    grep -q "^Result: scheduled on $(node_of web-3);" <<<"$out"
  out="$(ks what-if -f "$WORK/what-if.yaml" --kubectl "$WORK/kubectl-as-alice" --shim-port "$SHIM_PORT" 2>&1)" || true
  check "what-if through the API server's pod proxy (POST)" \
    grep -q "^Result: would go to ${web_node};" <<<"$out"
else
  info "no non-loopback address: the API server proxy checks are skipped"
fi

# ------------------------------------------------------------ --record-scores
# (kubectl apply's last-applied-configuration is the only annotation.)
if k get pod web-3 -o jsonpath='{.metadata.annotations}' | grep -q 'kube-scheduler-simulator'; then
  fail "without --record-scores web-3 got simulator annotations"
else
  pass "without --record-scores no simulator annotation is written"
fi
stop shim
REC_PORT="$(free_port)"
shim_up shim-rec "$WORK/config.yaml" --leader-elect=false \
  --bind-address 127.0.0.1 --secure-port "$REC_PORT" --record-scores
pod web-4 web
ann() { k get pod web-4 -o jsonpath="{.metadata.annotations.kube-scheduler-simulator\.sigs\.k8s\.io/$1}"; }
if poll "$TIMEOUT" bound web-4 && poll "$TIMEOUT" bash -c "[[ -n \"\$(\"$BIN/kubectl\" --kubeconfig=$KUBECONFIG_FILE get pod web-4 -o jsonpath='{.metadata.annotations.kube-scheduler-simulator\\.sigs\\.k8s\\.io/selected-node}')\" ]]"; then
  node="$(node_of web-4)"
  ann filter-result >"$WORK/filter.json"
  ann score-result >"$WORK/score.json"
  ann finalscore-result >"$WORK/final.json"
  selected="$(ann selected-node)"
  ok="$(python3 - "$WORK" "$node" <<'PY'
import json, sys
w, node = sys.argv[1], sys.argv[2]
f = json.load(open(f"{w}/filter.json"))
s = json.load(open(f"{w}/score.json"))
fs = json.load(open(f"{w}/final.json"))
good = (len(f) == 3 and all(v == "passed" for v in f[node].values())
        and "NodeResourcesFit" in f[node]
        and set(s) == set(fs) and node in s
        and s[node]["Concentrate"].isdigit()
        and int(fs[node]["Concentrate"]) % 10 == 0
        and all(isinstance(v, str) for n in fs.values() for v in n.values()))
print("yes" if good else "no")
PY
)"
  if [[ "$selected" == "$node" && "$ok" == yes ]]; then
    pass "--record-scores: simulator annotations on web-4 parse, select ${node}, $(json_field "$WORK/score.json" "len(d)") nodes scored"
  else
    fail "annotations of web-4 (on ${node}): selected=$selected filter=$(cat "$WORK/filter.json") score=$(cat "$WORK/score.json") final=$(cat "$WORK/final.json")"
  fi
else
  fail "web-4 got no annotations: $(k get pod web-4 -o yaml | head -30)"
fi
# Without the debug paths in --authorization-always-allow-paths they are
# guarded as /metrics: no token is system:anonymous, whom RBAC refuses.
if out="$(ks explain pod web-4 --shim-url "https://127.0.0.1:${REC_PORT}" 2>&1)"; then
  fail "explain without a token read a shim that does not allow its paths: $out"
else
  check "a shim that does not always-allow /debug/kscore/ refuses anonymous (403)" \
    bash -c 'grep -q "system:anonymous" <<<"$1" && grep -q "cannot get path" <<<"$1"' _ "$out"
  echo "$out" | head -3 | sed 's/^/    /'
fi

finish
