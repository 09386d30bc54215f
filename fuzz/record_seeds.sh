#!/usr/bin/env bash
# Records the seed corpora of the Kubernetes decoders from a real API server
# (hack/cluster.sh, in a state directory of its own, torn down on exit):
# pods, nodes and the other watched kinds as the server sends them in
# protobuf and JSON, protobuf watch frames (ADDED, BOOKMARK, ERROR) and JSON
# watch lines; and the scorer requests of examples/grpcurl/ and
# fuzz/requests/ in binary.
#   fuzz/record_seeds.sh [BUILD_DIR]   (default build/; builds fuzz_seed_tool)
# Rewrites fuzz/corpus/{pod,node,object}_{proto,json}/rec-*,
# fuzz/corpus/watch_frame/rec-* and fuzz/corpus/scorer_*/ex-*.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$root/build}"
corpus="$root/fuzz/corpus"
ninja -C "$build" fuzz_seed_tool >&2
tool="$build/bin/fuzz_seed_tool"

# The scorer requests.
declare -A kinds=([evaluate]=Evaluate [evaluate_spread]=Evaluate
  [evaluate_totals]=Evaluate [preempt]=Preempt)
mkdir -p "$corpus/scorer_evaluate" "$corpus/scorer_preempt" "$corpus/scorer_normalize"
for ex in "${!kinds[@]}"; do
  t="scorer_$(tr '[:upper:]' '[:lower:]' <<<"${kinds[$ex]}")"
  "$tool" request "${kinds[$ex]}" "$root/examples/grpcurl/$ex.json" "$corpus/$t/ex-$ex"
done
for ex in normalize_scores normalize_raw; do
  "$tool" request NormalizeScore "$root/fuzz/requests/$ex.json" "$corpus/scorer_normalize/$ex"
done

export KSCORE_CLUSTER_DIR
KSCORE_CLUSTER_DIR="$(mktemp -d /tmp/kscore-seeds-XXXXXX)"
work="$KSCORE_CLUSTER_DIR/rec"
trap '"$root/hack/cluster.sh" down >&2 || true' EXIT
"$root/hack/cluster.sh" up --nodes 2 >/dev/null
# shellcheck disable=SC1091  # written by cluster.sh up
source "$KSCORE_CLUSTER_DIR/env"
mkdir -p "$work"
k() { "$root/hack/cluster.sh" kubectl "$@"; }

k apply -f - >&2 <<'EOF'
apiVersion: v1
kind: Namespace
metadata: {name: seeds, labels: {team: a}}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: seeds}
spec: {selector: {app: web}, ports: [{port: 80}]}
---
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: web, namespace: seeds}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: c
        image: registry.example/web:1
        resources: {requests: {cpu: 100m, memory: 64Mi, example.com/gpu: "0"}, limits: {example.com/gpu: "0"}}
        ports: [{containerPort: 8080, hostPort: 8080}]
      tolerations: [{key: dedicated, operator: Equal, value: web, effect: NoSchedule}]
      topologySpreadConstraints:
      - {maxSkew: 1, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: ScheduleAnyway,
         labelSelector: {matchLabels: {app: web}}}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db, namespace: seeds}
spec:
  serviceName: db
  replicas: 1
  selector: {matchExpressions: [{key: app, operator: In, values: [db]}]}
  template:
    metadata: {labels: {app: db}}
    spec:
      priorityClassName: system-cluster-critical
      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms:
            - matchExpressions: [{key: kubernetes.io/os, operator: In, values: [linux]}]
        podAntiAffinity:
          preferredDuringSchedulingIgnoredDuringExecution:
          - weight: 50
            podAffinityTerm:
              topologyKey: kubernetes.io/hostname
              labelSelector: {matchLabels: {app: db}}
      initContainers:
      - {name: init, image: busybox, resources: {requests: {cpu: 1500m, memory: 1Gi}}}
      - {name: sidecar, image: busybox, restartPolicy: Always,
         resources: {requests: {cpu: "0.25", ephemeral-storage: 1G}}}
      containers:
      - {name: c, image: busybox, resources: {requests: {cpu: "1", memory: 2e9},
                                              limits: {cpu: "2", memory: 4Gi}}}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web, namespace: seeds}
spec: {minAvailable: 1, selector: {matchLabels: {app: web}}}
---
apiVersion: v1
kind: ReplicationController
metadata: {name: rc, namespace: seeds}
spec:
  replicas: 0
  selector: {app: rc}
  template:
    metadata: {labels: {app: rc}}
    spec: {containers: [{name: c, image: busybox}]}
---
apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata: {name: seeds}
handler: seeds
overhead: {podFixed: {cpu: 10m}}
---
apiVersion: v1
kind: Pod
metadata: {name: gated, namespace: seeds, labels: {app: gated}}
spec:
  schedulerName: kscore
  schedulingGates: [{name: example.com/wait}]
  runtimeClassName: seeds
  containers: [{name: c, image: busybox, resources: {requests: {hugepages-2Mi: 4Mi, memory: 4Mi}, limits: {hugepages-2Mi: 4Mi, memory: 4Mi}}}]
EOF
# Bound and running (kwok) or pending: either is a seed.
sleep_until() { local i; for i in $(seq 1 60); do "$@" && return 0; sleep 1; done; return 0; }
sleep_until bash -c "[ \"\$(\"$root/hack/cluster.sh\" kubectl -n seeds get pods --no-headers | grep -c Running)\" -ge 3 ]"

curl_pb() {  # curl_pb PATH ACCEPT OUT
  curl -sS --fail-with-body --cacert "$KSCORE_CLUSTER_DIR/pki/ca.crt" \
    --cert "$KSCORE_CLUSTER_DIR/pki/admin.crt" --key "$KSCORE_CLUSTER_DIR/pki/admin.key" \
    -H "Accept: $2" "$APISERVER_URL$1" -o "$3"
}
pbs="application/vnd.kubernetes.protobuf"
json_items() {  # json_items LIST OUT_PREFIX: each item, kind and apiVersion added back
  python3 - "$1" "$2" <<'PY'
import json, sys
lst = json.load(open(sys.argv[1]))
kind = lst.get("kind", "").removesuffix("List")
for i, item in enumerate(lst.get("items", [])):
    item.setdefault("kind", kind)
    item.setdefault("apiVersion", lst.get("apiVersion", "v1"))
    with open(f"{sys.argv[2]}-{i}", "w") as f:
        json.dump(item, f, separators=(",", ":"))
PY
}

for t in pod_proto node_proto object_proto pod_json node_json object_json watch_frame; do
  mkdir -p "$corpus/$t"
  rm -f "$corpus/$t"/rec-*
done
record() {  # record PATH PROTO_TARGET JSON_TARGET NAME
  curl_pb "$1" "$pbs" "$work/$4.pb"
  "$tool" items "$work/$4.pb" "$corpus/$2/rec-$4" >&2
  curl_pb "$1" application/json "$work/$4.json"
  json_items "$work/$4.json" "$corpus/$3/rec-$4"
}
record /api/v1/namespaces/seeds/pods pod_proto pod_json pods
record /api/v1/nodes node_proto node_json nodes
record /api/v1/namespaces/seeds/services object_proto object_json services
record /apis/apps/v1/namespaces/seeds/replicasets object_proto object_json replicasets
record /apis/apps/v1/namespaces/seeds/statefulsets object_proto object_json statefulsets
record /api/v1/namespaces/seeds/replicationcontrollers object_proto object_json rcs
record /apis/policy/v1/namespaces/seeds/poddisruptionbudgets object_proto object_json pdbs
curl_pb /api/v1/namespaces/seeds "$pbs" "$work/namespace.pb"
"$tool" object "$work/namespace.pb" "$corpus/object_proto/rec-namespace"
curl_pb /api/v1/namespaces/seeds application/json "$corpus/object_json/rec-namespace"
# The list envelope itself (the reflector's DecodeList) and watch frames:
# ADDED from resourceVersion 0, then a BOOKMARK; and from resourceVersion 1:
# every change since (MODIFIED, DELETED).
cp "$work/pods.pb" "$corpus/watch_frame/rec-list-pods"
curl_pb "/api/v1/namespaces/seeds/pods?watch=true&allowWatchBookmarks=true&timeoutSeconds=2&resourceVersion=0" \
  "$pbs;stream=watch" "$work/watch.pb" || true
"$tool" frames "$work/watch.pb" "$corpus/watch_frame/rec-watch" >&2
curl_pb "/api/v1/namespaces/seeds/pods?watch=true&timeoutSeconds=2&resourceVersion=1" \
  "$pbs;stream=watch" "$work/since.pb" || true
"$tool" frames "$work/since.pb" "$corpus/watch_frame/rec-since" >&2
curl_pb "/api/v1/namespaces/seeds/services?watch=true&timeoutSeconds=2&resourceVersion=0" \
  application/json "$work/watch.json" || true
head -1 "$work/watch.json" >"$corpus/object_json/rec-watch-added"

# What a fresh server does not send on request: an ERROR watch event (410
# Gone) in both encodings, its Status wrapped in an envelope as the server
# does.
enc() { protoc --proto_path="$root/shim/kube" --encode="kscore.k8s.$1" k8s_subset.proto; }
escape() { python3 -c 'import sys; print("".join("\\%03o" % b for b in sys.stdin.buffer.read()))'; }
status="$(printf 'status: "Failure" message: "too old resource version: 1 (283)" reason: "Expired" code: 410' \
  | enc Status | escape)"
unknown="$(printf 'type_meta {api_version: "v1" kind: "Status"} raw: "%s"' "$status" | enc Unknown | escape)"
printf 'type: "ERROR" object {raw: "\\153\\070\\163\\000%s"}' "$unknown" | enc WatchEvent \
  >"$corpus/watch_frame/rec-error-gone"
printf '%s\n' '{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old resource version: 1 (283)","reason":"Expired","code":410}}' \
  >"$corpus/object_json/rec-watch-gone"
du -sh "$corpus" >&2
