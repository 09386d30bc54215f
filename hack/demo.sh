#!/usr/bin/env bash
# The main job, from a fresh machine: installs what is missing, builds, starts
# a local control plane with 3 nodes, runs the seed's scenario (the `spread`
# Deployment, 6 replicas) under the default scheduler and under kscore's
# concentrate-scheduler (scorer + shim), prints the placements side by side,
# then tears everything down.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=hack/lib/deps.sh
source "$root/hack/lib/deps.sh"
kscore_install_deps
echo "building (first time: several minutes)..." >&2
kscore_build "$root"

E2E_NAME=demo
# shellcheck source=tests/e2e/lib.sh
source "$root/tests/e2e/lib.sh"
cd "$ROOT"
echo "starting the local control plane (first time: builds Kubernetes from source, ~15-20 min)..." >&2
cluster_up --nodes 3

config=examples/config/concentrate.yaml
port="$(free_port)"
start scorer build/bin/scorer --config "$config" --listen "127.0.0.1:$port"
poll 20 bash -c "exec 3<>/dev/tcp/127.0.0.1/$port" || { log_of scorer; exit 1; }
start shim build/bin/shim --config "$config" --kubeconfig "$KUBECONFIG_FILE" \
  --scorer "127.0.0.1:$port" --leader-elect=false --bind-address 127.0.0.1 --secure-port "$(free_port)"

declare -A placed
run_scenario() {  # run_scenario SCHEDULER
  deployment spread 6 "$1"
  if ! poll 120 all_bound spread 6; then
    echo "the 6 pods were not all bound under $1:" >&2
    k get pods -l app=spread -o wide >&2
    exit 1
  fi
  local node count
  while read -r node count; do placed["$1/$node"]=$count; done < <(
    k get pods -l app=spread -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' |
      grep . | sort | uniq -c | awk '{print $2, $1}')
  k delete deployment spread --wait=false >/dev/null
  poll 120 bash -c "[ \"\$(\"$BIN/kubectl\" --kubeconfig=$KUBECONFIG_FILE get pods -l app=spread --no-headers 2>/dev/null | wc -l)\" -eq 0 ]"
}
echo "applying the seed's spread Deployment under default-scheduler, then concentrate-scheduler..." >&2
run_scenario default-scheduler
run_scenario concentrate-scheduler

echo
echo "Pods per node for the seed's 'spread' Deployment (6 replicas of pause, app=spread):"
printf '%-16s %-20s %-s\n' NODE default-scheduler "concentrate-scheduler (kscore)"
for node in $(k get nodes -o jsonpath='{.items[*].metadata.name}'); do
  printf '%-16s %-20s %-s\n' "$node" "${placed[default-scheduler/$node]:-0}" \
    "${placed[concentrate-scheduler/$node]:-0}"
done
