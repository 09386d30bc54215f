#!/usr/bin/env bash
# The README's grpcurl commands against the real scorer binary: list,
# describe, health, PreScore -> Score with the CycleState, Evaluate, and an
# error status. Needs build/bin/scorer and grpcurl (hack/cluster.sh bin).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
bin="$(hack/cluster.sh bin | tail -n 1)"
grpcurl="$bin/grpcurl"
port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
addr="127.0.0.1:$port"
log="$(mktemp)"
build/bin/scorer --config examples/config/concentrate.yaml --listen "$addr" 2>"$log" &
scorer_pid=$!
trap 'kill "$scorer_pid" 2>/dev/null || true; wait "$scorer_pid" 2>/dev/null || true; rm -f "$log"' EXIT

passed=0 failed=0
check() {  # check NAME COMMAND... : PASS when the command succeeds
  local name="$1"; shift
  if "$@"; then echo "PASS: $name"; passed=$((passed + 1)); else echo "FAIL: $name"; failed=$((failed + 1)); fi
}
g() { "$grpcurl" -plaintext "$@"; }

deadline=$((SECONDS + 20))
until g "$addr" list >/dev/null 2>&1; do
  if [ $SECONDS -ge $deadline ] || ! kill -0 "$scorer_pid" 2>/dev/null; then
    echo "scorer did not come up:"; cat "$log"; exit 1
  fi
  sleep 0.1
done

check "list shows the scorer, health and reflection" \
  bash -c "[ \"\$($grpcurl -plaintext $addr list | sort | tr '\n' ' ')\" = 'grpc.health.v1.Health grpc.reflection.v1alpha.ServerReflection kscore.scorer.v1.Scorer ' ]"
check "describe shows the fused Evaluate call" \
  bash -c "$grpcurl -plaintext $addr describe kscore.scorer.v1.Scorer | grep -q 'rpc Evaluate'"
check "health check says SERVING" \
  bash -c "$grpcurl -plaintext -d '{}' $addr grpc.health.v1.Health/Check | grep -q '\"SERVING\"'"

# PreScore, then Score with the CycleState PreScore returned.
state="$(g -d @ "$addr" kscore.scorer.v1.Scorer/PreScore < examples/grpcurl/prescore.json)"
check "PreScore writes Concentrate's label value (\"web\") to CycleState" \
  bash -c "echo '$state' | python3 -c 'import json,sys; assert json.load(sys.stdin)[\"cycle_state\"][\"PreScoreConcentrate\"] == \"d2Vi\"'"
score="$(g -d @ "$addr" kscore.scorer.v1.Scorer/Score < examples/grpcurl/score.json)"
check "Score counts matching pods per node (1, 3, 0)" \
  bash -c "echo '$score' | python3 -c '
import json,sys
d=json.load(sys.stdin); k=d[\"plugins\"].index(\"Concentrate\")
assert [s[\"raw\"][k] for s in d[\"scores\"]] == [\"1\",\"3\",\"0\"], d'"
eval_out="$(g -d @ "$addr" kscore.scorer.v1.Scorer/Evaluate < examples/grpcurl/evaluate.json)"
check "Evaluate ranks node-2 (most matching pods) first" \
  bash -c "echo '$eval_out' | python3 -c '
import json,sys
d=json.load(sys.stdin); best=max(d[\"scores\"], key=lambda s: int(s[\"total\"]))
assert best[\"node_name\"] == \"node-2\", d'"
totals_out="$(g -d @ "$addr" kscore.scorer.v1.Scorer/Evaluate < examples/grpcurl/evaluate_totals.json)"
check "Evaluate with DETAIL_TOTALS gives the same totals, without names" \
  bash -c "echo '$eval_out' | python3 -c '
import json,sys
full=json.load(sys.stdin); d=json.loads(sys.argv[1])
assert \"scores\" not in d and \"filter\" not in d, d
assert d[\"totals\"] == [s[\"total\"] for s in full[\"scores\"]], (d, full)
assert len(d[\"raw\"]) == len(d[\"totals\"]) * len(d[\"plugins\"]), d' '$totals_out'"
# Volumes: the claim takes the smallest volume that fits, and only node-1's
# does; volume_decisions names it for Reserve.
vol_out="$(g -d @ "$addr" kscore.scorer.v1.Scorer/Evaluate < examples/grpcurl/evaluate_volumes.json)"
check "Evaluate with a WaitForFirstConsumer claim binds it to node-1's volume" \
  python3 -c '
import json,sys
d=json.loads(sys.argv[1])
assert d["filter"][0] == {} and d["filter"][1]["plugin"] == "VolumeBinding", d
assert d["node_volumes"] == [{"node_name": "node-1", "claims": [{"volume": "local-node-1"}]}], d' "$vol_out"
# Topology spread: Plan says what to count, Evaluate reads the counts.
plan_out="$(g -d @ "$addr" kscore.scorer.v1.Scorer/Plan < examples/grpcurl/plan_spread.json)"
check "Plan asks for the web pods per zone, with the domains" \
  bash -c "echo '$plan_out' | python3 -c '
import json,sys
q=json.load(sys.stdin)[\"queries\"]
assert len(q) == 1 and q[0][\"topology_key\"] == \"topology.kubernetes.io/zone\" and q[0][\"want_domains\"], q
assert q[0][\"all_of\"][0][\"selector\"][\"match_labels\"] == {\"app\": \"web\"}, q'"
spread_out="$(g -d @ "$addr" kscore.scorer.v1.Scorer/Evaluate < examples/grpcurl/evaluate_spread.json)"
spread_ok() {  # the reasons quote "didn't": read the answer from the environment
  SPREAD_OUT="$spread_out" python3 -c '
import json, os
d = json.loads(os.environ["SPREAD_OUT"])
f = d["filter"]
for i in (0, 1):
    assert f[i]["plugin"] == "PodTopologySpread", f
    assert f[i]["reasons"] == ["node(s) didn\x27t match pod topology spread constraints"], f
assert f[2] == {}, f
assert [s["node_name"] for s in d["scores"]] == ["node-3"], d'
}
check "Evaluate with per-zone counts 2/1/0 keeps only node-3 (maxSkew 1)" spread_ok
# Queueing hints: a node added; does it help pods its rejectors turned away?
hint_out="$(g -d @ "$addr" kscore.scorer.v1.Scorer/QueueingHint < examples/grpcurl/queueing_hint.json)"
check "QueueingHint queues the pod that fits node-4, not the one its taint keeps off" \
  bash -c "echo '$hint_out' | python3 -c '
import json,sys
d=json.load(sys.stdin)
assert d[\"queue\"] == [True, False], d'"
# Preemption: node-1's batch pods or node-2's web pod, which a PDB protects.
preempt_out="$(g -d @ "$addr" kscore.scorer.v1.Scorer/Preempt < examples/grpcurl/preempt.json)"
check "Preempt picks node-1 and only batch-1 (the PDB spares node-2's web-1)" \
  bash -c "echo '$preempt_out' | python3 -c '
import json,sys
d=json.load(sys.stdin)
c=d[\"candidates\"][d.get(\"chosen\", 0)]
assert c.get(\"node\", 0) == 0 and c[\"victims\"] == [0], d
assert d[\"message\"] == \"preemption: found a potential placement for pod on node node-1, preempting 1 victims\", d'"
check "an unknown profile is NotFound" \
  bash -c "$grpcurl -plaintext -d '{\"profile\":\"nope\",\"pod\":{\"name\":\"x\"}}' $addr kscore.scorer.v1.Scorer/Evaluate 2>&1 | grep -q 'Code: NotFound'"

echo "grpcurl: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
