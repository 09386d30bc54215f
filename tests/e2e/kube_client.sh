#!/usr/bin/env bash
# Integration tests of the shim's Kubernetes client (shim/kube/) against a real API server.
#
#   tests/e2e/kube_client.sh [GTEST FLAGS...]
#
# With KSCORE_TEST_KUBECONFIG set, uses that cluster. Otherwise uses the cluster already
# running in KSCORE_CLUSTER_DIR (default /tmp/kscore-cluster; left running), or brings one
# up with `hack/cluster.sh up --nodes 1` and tears it down on exit. Expects a configured
# build/ (hack/test.sh builds first); (re)builds only kube_integration_test.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
CLUSTER="${ROOT}/hack/cluster.sh"
BUILD="${KSCORE_BUILD_DIR:-${ROOT}/build}"
STATE="${KSCORE_CLUSTER_DIR:-/tmp/kscore-cluster}"
export KSCORE_CLUSTER_DIR="${STATE}"

log() { echo "kube_client: $*" >&2; }

[[ -f "${BUILD}/build.ninja" ]] || { log "no ${BUILD}/build.ninja: configure and build first (hack/test.sh does)"; exit 1; }
ninja -C "${BUILD}" kube_integration_test >&2 || { log "building kube_integration_test failed"; exit 1; }

started=0
teardown() {
  local rc=$?
  if ((started)); then
    log "tearing down the cluster in ${STATE}"
    "${CLUSTER}" down >&2 || true
  fi
  exit "${rc}"
}
trap teardown EXIT

if [[ -z "${KSCORE_TEST_KUBECONFIG:-}" ]]; then
  if "${CLUSTER}" status >/dev/null 2>&1; then
    KSCORE_TEST_KUBECONFIG="$(sed -n 's/^KUBECONFIG=//p' "${STATE}/env")"
    log "using the cluster already running in ${STATE}"
  else
    started=1
    out="$("${CLUSTER}" up --nodes 1)" || { log "hack/cluster.sh up failed"; exit 1; }
    KSCORE_TEST_KUBECONFIG="$(tail -n1 <<<"${out}")"
  fi
fi
[[ -f "${KSCORE_TEST_KUBECONFIG}" ]] || { log "kubeconfig '${KSCORE_TEST_KUBECONFIG}' does not exist"; exit 1; }
export KSCORE_TEST_KUBECONFIG
log "kubeconfig ${KSCORE_TEST_KUBECONFIG}"

"${BUILD}/bin/kube_integration_test" "$@"
