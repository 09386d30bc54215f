#!/usr/bin/env bash
# The Dockerfile's image, built and run with podman (hack/image.sh sets the
# engine up: podman, runc, Debian 12 base images made with debootstrap):
#   - the build succeeds (layers reused between runs); the image's user is
#     65532 and it stays under 160 MiB;
#   - the scorer container, on the host network with a read-only root
#     filesystem, answers grpc.health.v1 and an Evaluate (grpcurl);
#   - the shim container, configured the way deploy/ runs it in a pod
#     (service-account token and CA at the in-cluster path, KUBERNETES_SERVICE_*
#     env, the ConfigMap's config, read-only root filesystem with no tmpfs, uid
#     65532, no capabilities), leads, serves /healthz and /readyz, and schedules
#     the seed scenario: 6 replicas on 3 equal nodes, all on one node;
#   - the image goes to a registry on loopback (Debian's distribution registry,
#     docker-registry): the registry lists the tag, pulling it back gives the
#     same image, and deploy/ with a kustomize images: override points at it.
# Each check prints PASS/FAIL; every wait polls with a deadline.
set -euo pipefail
E2E_NAME=image
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$ROOT"
# shellcheck source=hack/lib/container.sh
source hack/lib/container.sh

# Containers and local tags this run made go with it.
CONTAINERS=()
TAGS=()
containers_down() {
  local c t
  for c in "${CONTAINERS[@]}"; do kscore_podman rm -f -t 0 "$c" >/dev/null 2>&1 || true; done
  for t in "${TAGS[@]}"; do kscore_podman untag "$IMAGE" "$t" >/dev/null 2>&1 || true; done
}
# set +e: under errexit the (exit) that hands rc to cleanup would end the trap.
trap 'rc=$?; set +e; containers_down; (exit "$rc"); cleanup' EXIT

# ------------------------------------------------------------ build
t0=$SECONDS
if ! IMAGE="$(hack/image.sh kscore:dev 2>"$WORK/build.log" | tail -n 1)" || [[ -z "$IMAGE" ]]; then
  fail "hack/image.sh did not build the image:"
  tail -n 30 "$WORK/build.log" | sed 's/^/  | /'
  finish; exit 1
fi
pass "hack/image.sh built kscore:dev in $((SECONDS - t0))s ($(grep -c -- '--> Using cache' "$WORK/build.log" || true) cached steps), image ${IMAGE:0:12}"
ins() { kscore_podman image inspect --format "$1" "$IMAGE"; }
size="$(ins '{{.Size}}')"
# 115 MiB today: Debian 12 slim (78 MB), the runtime libraries, two stripped
# binaries. Apt's caches left in a layer made it 201 MiB.
check "the image is under 160 MiB: $((size / 1024 / 1024)) MiB ($size bytes)" \
  test "$size" -lt $((160 * 1024 * 1024))
user="$(ins '{{.Config.User}}')"
check "the image's user is numeric and non-root, 65532:65532, as runAsNonRoot needs (got '$user')" \
  test "$user" = 65532:65532
entrypoint="$(ins '{{join .Config.Entrypoint " "}}')"
check "the image's entrypoint is the scorer (got '$entrypoint')" test "$entrypoint" = /usr/local/bin/scorer

uid_of() {  # uid_of CONTAINER: the real uid of the container's main process, read from /proc
  local pid
  pid="$(kscore_podman inspect --format '{{.State.Pid}}' "$1")"
  awk '/^Uid:/ {print $2}' "/proc/$pid/status"
}
running() { [[ "$(kscore_podman inspect --format '{{.State.Running}}' "$1" 2>/dev/null)" == true ]]; }
# The restrictions of deploy/'s pod templates: uid 65532, read-only root
# filesystem (and no tmpfs on /tmp, /run: a pod gets none), no capabilities.
as_in_pod=(--network host --user 65532:65532 --read-only --read-only-tmpfs=false
           --cap-drop all --security-opt no-new-privileges)

# ------------------------------------------------------------ scorer
grpc_port="$(free_port)"
metrics_port="$(free_port)"
scorer="kscore-e2e-scorer-$$"
CONTAINERS+=("$scorer")
kscore_podman run -d --name "$scorer" "${as_in_pod[@]}" "$IMAGE" \
  --config=/etc/kscore/config.yaml --listen="127.0.0.1:$grpc_port" \
  --metrics-bind-address="127.0.0.1:$metrics_port" >/dev/null
GRPCURL="$(hack/cluster.sh bin | tail -n 1)/grpcurl"
g() { "$GRPCURL" -plaintext "$@"; }
serving() { g -d '{}' "127.0.0.1:$grpc_port" grpc.health.v1.Health/Check | grep -q '"SERVING"'; }
if poll 30 serving; then
  pass "scorer container: grpc.health.v1 Check says SERVING on 127.0.0.1:$grpc_port"
else
  fail "scorer container did not serve health; its log:"
  kscore_podman logs "$scorer" 2>&1 | tail -n 20 | sed 's/^/  | /'
fi
check "scorer container: the process runs as uid 65532" test "$(uid_of "$scorer")" = 65532
eval_out="$(g -d @ "127.0.0.1:$grpc_port" kscore.scorer.v1.Scorer/Evaluate <examples/grpcurl/evaluate.json 2>&1 || true)"
evaluate_ok() {
  EVAL_OUT="$eval_out" python3 -c '
import json, os
d = json.loads(os.environ["EVAL_OUT"])
best = max(d["scores"], key=lambda s: int(s["total"]))
assert best["node_name"] == "node-2", d'
}
check "scorer container: Evaluate (examples/grpcurl/evaluate.json) ranks node-2 first" evaluate_ok
check "scorer container: /metrics counts the Evaluate call" \
  bash -c "curl -fsS http://127.0.0.1:$metrics_port/metrics | grep '^kscore_scorer_calls_total{' | grep 'method=\"Evaluate\"' | grep -q 'code=\"OK\".* 1$'"

# ------------------------------------------------------------ shim, as in a pod
cluster_up --nodes 3
NS=kscore-system
APISERVER_URL="$(sed -n 's/^APISERVER_URL=//p' "${STATE}/env")"
CA_FILE="$(sed -n 's/^CA_FILE=//p' "${STATE}/env")"
k apply -f deploy/base/namespace.yaml -f deploy/base/rbac.yaml >/dev/null
# What the kubelet mounts: the token, the CA and the namespace, readable by
# the pod's user; the ConfigMap's config.
sa="$WORK/serviceaccount"
mkdir -p "$sa" "$WORK/config"
k -n "$NS" create token kscore-shim --duration=1h >"$sa/token"
cp "$CA_FILE" "$sa/ca.crt"
echo -n "$NS" >"$sa/namespace"
cp deploy/base/scheduler-config.yaml "$WORK/config/config.yaml"
chmod 0755 "$sa" "$WORK/config"
chmod 0644 "$sa"/* "$WORK/config/config.yaml"
health_port="$(free_port)"
shim="kscore-e2e-shim-$$"
CONTAINERS+=("$shim")
kscore_podman run -d --name "$shim" "${as_in_pod[@]}" \
  -v "$sa:/var/run/secrets/kubernetes.io/serviceaccount:ro" \
  -v "$WORK/config:/etc/kscore:ro" \
  -e KUBERNETES_SERVICE_HOST=127.0.0.1 -e KUBERNETES_SERVICE_PORT="${APISERVER_URL##*:}" \
  --entrypoint /usr/local/bin/shim "$IMAGE" \
  --config=/etc/kscore/config.yaml --scorer="127.0.0.1:$grpc_port" \
  --bind-address=127.0.0.1 --secure-port="$health_port" --leader-elect=true -v=2 >/dev/null
shim_log() { kscore_podman logs "$shim" 2>&1; }
if poll "$TIMEOUT" bash -c "curl -kfsS https://127.0.0.1:$health_port/readyz"; then
  pass "shim container: HTTPS /healthz $(curl -ks -o /dev/null -w '%{http_code}' "https://127.0.0.1:$health_port/healthz"), /readyz 200 (informers synced)"
else
  fail "shim container: /readyz not 200 within ${TIMEOUT}s (running: $(running "$shim" && echo yes || echo no)); its log:"
  shim_log | tail -n 6 | cut -c1-300 | sed 's/^/  | /'
fi
check "shim container: the process runs as uid 65532" test "$(uid_of "$shim" 2>/dev/null)" = 65532
leads() { shim_log | grep -q "became leader of Lease $NS/concentrate-scheduler"; }
check "shim container: leader of Lease $NS/concentrate-scheduler" poll "$TIMEOUT" leads
deployment spread 6 concentrate-scheduler
if poll "$TIMEOUT" all_bound spread 6 && [[ "$(wc -w <<<"$(per_node spread)")" -eq 1 ]]; then
  pass "shim container: the seed's 6 replicas all on one node: $(per_node spread)"
else
  fail "shim container: seed scenario placement: '$(per_node spread)' ($(bound_count spread) of 6 bound)"
  shim_log | tail -n 6 | cut -c1-300 | sed 's/^/  | /'
fi
none_forbidden() { ! shim_log | grep -Eiq 'HTTP 403|forbidden'; }
check "shim container: no API call was forbidden" none_forbidden
check "shim container: still running" running "$shim"

# ------------------------------------------------------------ registry
reg_port="$(free_port)"
mkdir -p "$WORK/registry/data"
cat >"$WORK/registry/config.yml" <<YAML
version: 0.1
log: {level: warn}
storage:
  filesystem: {rootdirectory: $WORK/registry/data}
http:
  addr: 127.0.0.1:$reg_port
YAML
start registry "$(kscore_registry_bin)" serve "$WORK/registry/config.yml"
REG="127.0.0.1:$reg_port"
if poll 20 curl -fsS "http://$REG/v2/"; then
  pass "docker-registry (Debian's distribution registry) answers on $REG"
else
  fail "docker-registry did not answer on $REG:"; log_of registry | tail -n 10 | sed 's/^/  | /'
fi
# The documented way: hack/image.sh --push (a cached build, then podman push).
if hack/image.sh kscore:dev --push "$REG/kscore:dev" --tls-verify=false >"$WORK/push.log" 2>&1 &&
  [[ "$(tail -n 1 "$WORK/push.log")" == "$IMAGE" ]]; then
  pass "hack/image.sh --push $REG/kscore:dev --tls-verify=false (podman push)"
else
  fail "podman push to $REG:"; tail -n 10 "$WORK/push.log" | sed 's/^/  | /'
fi
tags="$(curl -fsS "http://$REG/v2/kscore/tags/list" || true)"
check "the registry lists the tag: $tags" \
  bash -c "python3 -c 'import json,sys; d=json.loads(sys.argv[1]); assert d[\"name\"] == \"kscore\" and \"dev\" in d[\"tags\"], d' '$tags'"
TAGS+=("$REG/kscore:dev")
kscore_podman pull -q --tls-verify=false "$REG/kscore:dev" >"$WORK/pull.log" 2>&1 || true
check "pulling $REG/kscore:dev back gives the image that was built" \
  test "$(kscore_podman image inspect --format '{{.Id}}' "$REG/kscore:dev" 2>/dev/null)" = "$IMAGE"
# deploy/ pointed at the registry the way docs/deploy.md says.
mkdir -p "$WORK/overlay"
cat >"$WORK/overlay/kustomization.yaml" <<YAML
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
- $(python3 -c 'import os,sys; print(os.path.relpath(sys.argv[1], sys.argv[2]))' "$ROOT/deploy" "$WORK/overlay")
images:
- {name: kscore, newName: $REG/kscore, newTag: dev}
YAML
images="$(k kustomize "$WORK/overlay" 2>&1 | sed -n 's/^ *image: //p' | sort -u | tr '\n' ' ')"
check "deploy/ with an images: override runs both programs from $REG/kscore:dev (got: ${images})" \
  test "$images" = "$REG/kscore:dev "

finish
