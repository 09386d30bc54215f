#!/usr/bin/env bash
# Slow clients do not starve the shim's secure port: 1000 TLS connections
# from loopback that send their header a byte a second (tests/e2e/slowloris.py,
# 20 s, spread over 20 source addresses so the per-address limit admits them)
# while /healthz is probed every 0.5 s. Checked against a real control plane
# with the real shim and scorer: every probe answers within 1 s, pods are
# bound during the attack, the shim's RSS stays bounded, and afterwards it
# holds no connection on the port (ss). The shim runs throughout, with its
# open-file limit raised to the hard limit. Prints the figures
# (docs/faults.md).
# Needs build/bin/{scorer,shim}, curl and python3.
set -euo pipefail
E2E_NAME=slowloris
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$ROOT"

CONNS="${KSCORE_SLOWLORIS_CONNS:-1000}"
HOLD=20
RSS_GROWTH_MAX_KIB=$((128 * 1024))  # ~75 KB per idle TLS connection, with room

cat >"$WORK/config.yaml" <<YAML
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: kscore-slowloris
YAML
cluster_up --nodes 2
SCORER_PORT="$(free_port)"
SCORER="127.0.0.1:${SCORER_PORT}"
scorer_up scorer "$WORK/config.yaml" "$SCORER_PORT"
PORT="$(free_port)"
start shim "$KBIN/shim" --config "$WORK/config.yaml" --kubeconfig "$KUBECONFIG_FILE" \
  --scorer "$SCORER" --leader-elect=false --bind-address 127.0.0.1 --secure-port "$PORT" -v 2
PID="${PIDS[shim]}"
healthy() { curl -skf --max-time 2 "https://127.0.0.1:${PORT}/healthz" >/dev/null; }
ready() { curl -skf --max-time 2 "https://127.0.0.1:${PORT}/readyz" >/dev/null; }
check "the shim is ready before the attack" poll "$TIMEOUT" ready

sockets() { { find "/proc/${PID}/fd" -lname 'socket:*' 2>/dev/null || true; } | wc -l; }
# The shim's connections on the secure port (its own sockets, not TIME-WAIT).
conns() { ss -Htanp "( sport = :${PORT} )" | grep -v '^LISTEN' | grep -c "pid=${PID}," || true; }
rss() { awk '/^VmRSS:/ {print $2}' "/proc/${PID}/status" 2>/dev/null || echo 0; }
# The shim runs; if not, the end of its log says why.
alive() {
  kill -0 "$PID" 2>/dev/null && return 0
  tail -n 20 "${WORK}/shim.log" | sed 's/^/  shim.log: /'
  return 1
}
# Its open-file limit (soft), which it raises to the hard one at start.
open_files() { awk '/^Max open files/ {print $4}' "/proc/${PID}/limits"; }
check "the shim raised its open-file limit to the hard limit ($(open_files))" \
  test "$(open_files)" = "$(ulimit -Hn)"
sockets_before="$(sockets)"
rss_before="$(rss)"

python3 tests/e2e/slowloris.py --port "$PORT" --count "$CONNS" --hold "$HOLD" \
  --pid "$PID" >"$WORK/attack.json" 2>"$WORK/attack.err" &
ATTACK=$!
held() { (($(conns) >= CONNS * 9 / 10)); }
check "the attack holds ${CONNS} connections open" poll 15 held
sockets_during="$(sockets)"
conns_during="$(conns)"

deployment during 4 kscore-slowloris
bound_during_attack() { all_bound during 4 && kill -0 "$ATTACK" 2>/dev/null; }
check "4 pods are bound while the attack goes on" poll 12 bound_during_attack
check "the shim runs during the attack" alive
rss_during="$(rss)"
wait "$ATTACK" || true
info "attack: $(cat "$WORK/attack.json")"
reported() {
  [[ -s "$WORK/attack.json" ]] && return 0
  sed 's/^/  slowloris.py: /' "$WORK/attack.err"
  return 1
}
check "the attacker reported its figures" reported
# One figure of the attacker's report (0 when it has none).
field() {
  python3 -c "import json,sys; print(json.load(open(sys.argv[1])).get(sys.argv[2], 0))" \
    "$WORK/attack.json" "$1" 2>/dev/null || echo 0
}

probes="$(field probes)"
probe_max_ms="$(field probe_max_ms)"
check "every probe answered 200 during the attack (${probes} probes)" \
  test "$(field probes_failed)" -eq 0 -a "$probes" -ge $((HOLD * 3 / 2))
check "the slowest probe took under 1 s (${probe_max_ms} ms)" \
  python3 -c "import sys; sys.exit(0 if float('${probe_max_ms}') < 1000 else 1)"
rss_max="$(field rss_max_kib)"
check "RSS grew by less than $((RSS_GROWTH_MAX_KIB / 1024)) MiB (${rss_before} -> max ${rss_max} KiB)" \
  test $((rss_max - rss_before)) -lt "$RSS_GROWTH_MAX_KIB"
released() { (($(conns) == 0)); }
check "the attack's connections are released afterwards" poll 10 released
check "/healthz still answers" healthy
check "the shim still runs" alive

echo "figures: connections on the port ${conns_during} during, $(conns) after;" \
  "sockets ${sockets_before} before, ${sockets_during} during, $(sockets) after;" \
  "probes ${probes}, max ${probe_max_ms} ms;" \
  "RSS KiB before ${rss_before}, during ${rss_during}, max $(field rss_max_kib), after $(rss);" \
  "attacker opened $(field opened), held max $(field held_max), refused $(field refused)," \
  "dropped by the server $(field dropped_by_server)"
finish
