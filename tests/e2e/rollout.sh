#!/usr/bin/env bash
# A placement rule ships by rolling the scorer alone: on a real local control
# plane, one shim binary, started once, follows a scorer that gains a plugin
# it has never heard of (build/bin/scorer_testplugin's PreferNodeLabel), and
# refuses to schedule while scorer replicas disagree on their configuration
# or lack one of its profiles. Every wait polls with a deadline.
set -euo pipefail
E2E_NAME=rollout
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$ROOT"

cluster_up --nodes 3
N3=kscore-node-3
k label node "$N3" kscore.test/preferred=yes >/dev/null

header='apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration'
# The scorer's configuration before the rollout: kube-scheduler's defaults.
cat >"$WORK/plain.yaml" <<YAML
$header
profiles:
- schedulerName: rule-scheduler
YAML
# After: the same profile with a new rule, which reads node labels.
cat >"$WORK/rule.yaml" <<YAML
$header
profiles:
- schedulerName: rule-scheduler
  plugins:
    score:
      enabled: [{name: PreferNodeLabel, weight: 50}]
  pluginConfig:
  - name: PreferNodeLabel
    args: {labelKey: kscore.test/preferred, labelValue: "yes"}
YAML
# The shim's own file names its profiles; one of them no scorer serves.
cat >"$WORK/shim.yaml" <<YAML
$header
profiles:
- schedulerName: rule-scheduler
- schedulerName: ghost-scheduler
YAML

P1="$(free_port)" P2="$(free_port)"
SCORER="127.0.0.1:${P1}"
METRICS="127.0.0.1:$(free_port)"
on_n3() { [[ "$(per_node "$1")" == "${N3}=$2 " ]]; }

# ------------------------------------------------------------ before
scorer_up scorer "$WORK/plain.yaml" "$P1"
start shim build/bin/shim --config "$WORK/shim.yaml" --kubeconfig "$KUBECONFIG_FILE" \
  --scorer "$SCORER" --bind-address 127.0.0.1 --secure-port "$(free_port)" --insecure-serving-address "$METRICS" --leader-elect=false -v 4
deployment before 6 rule-scheduler
check "before the rollout: 6 replicas bound by the default plugins" poll "$TIMEOUT" all_bound before 6
check "before the rollout: not all on the labelled node ($(per_node before))" bash -c "! [[ '$(per_node before)' == '${N3}=6 ' ]]"
# kube-scheduler's metric names, labels and buckets on the shim's /metrics.
# grep reads the whole answer (no -q): an early exit would make curl fail
# on a closed pipe, and pipefail the check.
metrics_have() { curl -sf "http://$METRICS/metrics" | grep -F "$1" >/dev/null; }
check "metrics: pod_scheduling_attempts counts the 6 bound pods" \
  poll "$TIMEOUT" metrics_have 'scheduler_pod_scheduling_attempts_count 6'
check "metrics: the SLI duration is labelled by attempts" \
  poll "$TIMEOUT" metrics_have 'scheduler_pod_scheduling_sli_duration_seconds_count{attempts="1"}'
check "metrics: the attempt duration has upstream's 15 buckets (last 16.384)" \
  poll "$TIMEOUT" metrics_have 'scheduler_scheduling_attempt_duration_seconds_bucket{profile="rule-scheduler",result="scheduled",le="16.384"}'
check "metrics: queue_incoming_pods_total counts the 6 new pods entering activeQ" \
  poll "$TIMEOUT" metrics_have 'scheduler_queue_incoming_pods_total{event="UnscheduledPodAdd",queue="active"} 6'
check "metrics: each of the 6 bindings is timed as the Bind extension point" \
  poll "$TIMEOUT" metrics_have 'scheduler_framework_extension_point_duration_seconds_count{extension_point="Bind",profile="rule-scheduler",status="Success"} 6'
# /configz as kube-scheduler serves it: the defaulted v1 configuration.
configz_has() { curl -sfi "http://$METRICS/configz" | grep -F "$1" >/dev/null; }
check "configz: JSON, as component-base/configz serves it" \
  configz_has 'Content-Type: application/json'
check "configz: the shim's profiles under componentconfig" \
  configz_has '{"componentconfig":{"kind":"KubeSchedulerConfiguration","apiVersion":"kubescheduler.config.k8s.io/v1"'
check "configz: the ghost profile, defaulted" \
  configz_has '"schedulerName":"ghost-scheduler","plugins":{'
check "configz: defaulted fields (podMaxBackoffSeconds 10, NodeResourcesFit args)" \
  bash -c "curl -sf http://$METRICS/configz | grep -F '\"podMaxBackoffSeconds\":10' | grep -qF '\"kind\":\"NodeResourcesFitArgs\"'"
k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: gated, labels: {app: gated}}
spec:
  schedulerName: rule-scheduler
  schedulingGates: [{name: kscore.test/wait}]
  containers: [{name: pause, image: pause:3.9}]
YAML
check "metrics: a gated pod counts in scheduler_pending_pods{queue=\"gated\"}" \
  poll "$TIMEOUT" metrics_have 'scheduler_pending_pods{queue="gated"} 1'
k delete pod gated --wait=false >/dev/null
k run ghost --image=pause:3.9 --labels=app=ghost \
  --overrides='{"spec":{"schedulerName":"ghost-scheduler"}}' >/dev/null
check "ghost-scheduler pod: FailedScheduling names the missing profile" \
  poll "$TIMEOUT" pending_with ghost 'profile "ghost-scheduler" is not served by the scorer (its configuration has schedulerNames [rule-scheduler])'
check "metrics: the failed attempt sends the pod back with event ScheduleAttemptFailure" \
  poll "$TIMEOUT" metrics_have 'scheduler_queue_incoming_pods_total{event="ScheduleAttemptFailure",queue='
check "ghost-scheduler pod: not bound" test "$(bound_count ghost)" -eq 0
delete_app before

# ------------------------------------------------------------ roll the scorer alone
stop scorer
scorer_up scorer "$WORK/rule.yaml" "$P1" build/bin/scorer_testplugin
deployment after 6 rule-scheduler
check "after rolling only the scorer, the new rule places all 6 replicas on $N3" \
  poll "$TIMEOUT" on_n3 after 6
check "the shim (same process) adopted the new configuration" \
  bash -c "[ \$(grep -c 'scorer configuration .* adopted' '$WORK/shim.log') -ge 2 ]"
delete_app after

# ------------------------------------------------------------ replicas disagree
stop shim
scorer_up old "$WORK/plain.yaml" "$P2"
SCORER="127.0.0.1:${P1},127.0.0.1:${P2}"
start shim2 build/bin/shim --config "$WORK/shim.yaml" --kubeconfig "$KUBECONFIG_FILE" \
  --scorer "$SCORER" --bind-address 127.0.0.1 --secure-port "$(free_port)" --insecure-serving-address "$METRICS" --leader-elect=false -v 4
deployment skew 3 rule-scheduler
check "replicas disagree: the pods' FailedScheduling says so" \
  poll "$TIMEOUT" pending_with skew "scorer replicas disagree on their configuration"
check "replicas disagree: the shim logs it" grep -q "not scheduling: scorer replicas disagree" "$WORK/shim2.log"
check "replicas disagree: kscore_scorer{counter=\"refused\"} is 1" \
  poll "$TIMEOUT" bash -c "curl -sf 'http://$METRICS/metrics' | grep -q '^kscore_scorer{counter=\"refused\"} 1'"
check "replicas disagree: no pod bound" test "$(bound_count skew)" -eq 0
stop old
check "the skewed replica gone: the pods are placed by the remaining one's rule" \
  poll "$TIMEOUT" on_n3 skew 3
check "kscore_scorer{counter=\"refused\"} is back to 0" \
  bash -c "curl -sf 'http://$METRICS/metrics' | grep -q '^kscore_scorer{counter=\"refused\"} 0'"
delete_app skew

finish
