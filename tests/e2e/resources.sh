#!/usr/bin/env bash
# End-to-end: what a pod holds on a node, as kube-scheduler counts it, on a
# real local control plane (hack/cluster.sh) with one node of 4 CPUs:
#   - pod-level requests (spec.resources) replace the containers' sum, for
#     the incoming pod and for the pods already on the node;
#   - a pod being resized in place holds the larger of its spec and what its
#     status reports as allocated, until the resize is done.
# Each probe that must stay Pending has a twin under the reference
# kube-scheduler (default-scheduler), which must agree. Needs
# build/bin/{scorer,shim}.
set -euo pipefail
E2E_NAME=resources
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$ROOT"

cluster_up --nodes 1
NODE=kscore-node-1
SCORER_PORT="$(free_port)"
SCORER="127.0.0.1:${SCORER_PORT}"
cat >"$WORK/config.yaml" <<YAML
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: concentrate-scheduler
YAML
scorer_up scorer "$WORK/config.yaml" "$SCORER_PORT"
shim_up shim "$WORK/config.yaml" --leader-elect=false

# pod NAME SCHEDULER CONTAINER_CPU [POD_LEVEL_CPU]: a pause pod requesting
# CONTAINER_CPU, with pod-level requests of POD_LEVEL_CPU if given.
pod() {
  local pod_level=""
  [[ -n "${4:-}" ]] && pod_level="
  resources: {requests: {cpu: \"$4\"}}"
  k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: $1, labels: {app: $1}}
spec:
  schedulerName: $2
  terminationGracePeriodSeconds: 0${pod_level}
  containers:
  - name: pause
    image: pause:3.9
    resources: {requests: {cpu: "$3"}}
YAML
}
node_of() { k get pod "$1" -o jsonpath='{.spec.nodeName}'; }
bound() { [[ -n "$(node_of "$1")" ]]; }
running() { [[ "$(k get pod "$1" -o jsonpath='{.status.phase}')" == Running ]]; }
rejected() {  # rejected POD TEXT: a FailedScheduling event of POD has TEXT
  events_for "$1" FailedScheduling | grep -qF "$2"
}
# held POD TEXT WHAT: POD (kscore) and POD-ref (the reference scheduler) both
# stay Pending with TEXT in a FailedScheduling event.
held() {
  local pod="$1" text="$2" what="$3"
  if poll "$TIMEOUT" rejected "$pod" "$text" && ! bound "$pod"; then
    pass "$what: $pod stays Pending ($text)"
  else
    fail "$what: $pod on '$(node_of "$pod")', events: $(events_for "$pod" FailedScheduling | tail -1)"
  fi
  check "$what: the reference kube-scheduler keeps its twin Pending too" \
    poll "$TIMEOUT" rejected "$pod-ref" "$text"
}
gone() {
  k delete pod "$@" --wait=false >/dev/null 2>&1 || true
  local p
  for p in "$@"; do
    poll "$TIMEOUT" bash -c "! \"$BIN/kubectl\" --kubeconfig=$KUBECONFIG_FILE get pod $p >/dev/null 2>&1" ||
      fail "pod $p was not deleted"
  done
}
insufficient="0/1 nodes are available: 1 Insufficient cpu."

# ------------------------------------------------------------ pod-level requests
# The incoming pod: 100m in its container, 5 CPUs at the pod level.
pod pl-huge concentrate-scheduler 100m 5
pod pl-huge-ref default-scheduler 100m 5
held pl-huge "$insufficient" "pod-level requests of the incoming pod count"

# A pod on the node: 100m in its container, 3 CPUs at the pod level. A 1500m
# pod no longer fits beside it.
pod pl-on-node concentrate-scheduler 100m 3
check "pod-level requests: a pod asking 3 CPUs at the pod level is bound" \
  poll "$TIMEOUT" bound pl-on-node
pod pl-probe concentrate-scheduler 1500m
pod pl-probe-ref default-scheduler 1500m
held pl-probe "$insufficient" "pod-level requests of a pod on the node count"
gone pl-huge pl-huge-ref pl-on-node pl-probe pl-probe-ref

# ------------------------------------------------------------ in-place resize
# A 3-CPU pod is resized down to 1 CPU. While the kubelet has not actuated it
# (its status still reports 3 CPUs allocated and in use), the pod holds 3
# CPUs: a 2-CPU pod does not fit.
pod resized concentrate-scheduler 3
check "resize: a 3-CPU pod is bound and Running" poll "$TIMEOUT" running resized
# status_cpu CPU: the container's resources as a kubelet reports them (the
# API server accepts a resize only once they are reported).
status_cpu() {
  k patch pod resized --subresource status --type json -p "[
    {\"op\": \"add\", \"path\": \"/status/containerStatuses/0/allocatedResources\", \"value\": {\"cpu\": \"$1\"}},
    {\"op\": \"add\", \"path\": \"/status/containerStatuses/0/resources\", \"value\": {\"requests\": {\"cpu\": \"$1\"}}}]" >/dev/null
}
status_cpu 3
if k patch pod resized --subresource resize \
  -p '{"spec":{"containers":[{"name":"pause","resources":{"requests":{"cpu":"1"}}}]}}' >/dev/null; then
  pass "resize: the pod's spec is resized to 1 CPU (pods/resize)"
else
  fail "resize: kubectl patch --subresource resize failed"
fi
check "resize: spec 1 CPU, status 3 CPUs allocated" bash -c "
  [ \"\$(\"$BIN/kubectl\" --kubeconfig=$KUBECONFIG_FILE get pod resized -o jsonpath='{.spec.containers[0].resources.requests.cpu}/{.status.containerStatuses[0].allocatedResources.cpu}')\" = 1/3 ]"
pod rs-probe concentrate-scheduler 2
pod rs-probe-ref default-scheduler 2
held rs-probe "$insufficient" "resize under way: the pod holds what its status reports"
gone rs-probe rs-probe-ref

# The kubelet is done: the status reports 1 CPU, and a 2-CPU pod fits.
status_cpu 1
pod rs-after concentrate-scheduler 2
check "resize done: a 2-CPU pod fits beside the resized pod" \
  poll "$TIMEOUT" bound rs-after
gone resized rs-after

finish
