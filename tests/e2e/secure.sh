#!/usr/bin/env bash
# The shim serves as kube-scheduler does, checked against a real local control
# plane (hack/cluster.sh): HTTPS on --secure-port with a self-signed
# certificate for localhost when none is given (the given one otherwise);
# /healthz /readyz /livez open to anyone; /metrics and /configz only for a
# bearer token the API server authenticates (TokenReview) and authorizes
# (SubjectAccessReview): 401 with a bad token, 403 without one (anonymous,
# as kube-scheduler) or for a ServiceAccount without the RBAC rule, 200 once deploy/'s
# kscore-metrics-reader ClusterRole is bound to it; a dozen scrapes cost no
# review (answers cached 10 s); --authentication-kubeconfig and
# --authorization-kubeconfig name the credentials the reviews are posted with.
# Needs build/bin/{scorer,shim}, curl and openssl.
set -euo pipefail
E2E_NAME=secure
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$ROOT"

# ------------------------------------------------------------ flags (no cluster)
cat >"$WORK/config.yaml" <<YAML
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: kscore-secure
YAML
flag_error() {  # flag_error WANT FLAGS...: exit 2 and WANT on stderr
  local want="$1" rc=0 out
  shift
  out="$("$KBIN/shim" --config "$WORK/config.yaml" --scorer 127.0.0.1:1 "$@" 2>&1)" || rc=$?
  [[ "$rc" -eq 2 ]] && grep -qF -- "$want" <<<"$out"
}
check "--bind-address host:port (the old form) is refused, pointing at --secure-port" \
  flag_error 'the port is --secure-port' --bind-address 0.0.0.0:10259
check "a certificate without its key is refused" \
  flag_error '--tls-cert-file and --tls-private-key-file go together' --tls-cert-file /etc/hostname

cluster_up --nodes 1
SCORER_PORT="$(free_port)"
SCORER="127.0.0.1:${SCORER_PORT}"
scorer_up scorer "$WORK/config.yaml" "$SCORER_PORT"
PORT="$(free_port)"
URL="https://127.0.0.1:${PORT}"
start shim "$KBIN/shim" --config "$WORK/config.yaml" --kubeconfig "$KUBECONFIG_FILE" \
  --scorer "$SCORER" --leader-elect=false --bind-address 127.0.0.1 --secure-port "$PORT" -v 4

# code PATH [TOKEN]: the HTTP status of GET PATH over HTTPS (certificate not checked).
code() {
  local auth=()
  [[ -n "${2:-}" ]] && auth=(-H "Authorization: Bearer $2")
  curl -sk -o "$WORK/body" -w '%{http_code}' --max-time 10 "${auth[@]}" "${URL}$1"
}
is() { [[ "$(code "$2" "${3:-}")" == "$1" ]]; }  # is CODE PATH [TOKEN]
body_has() { grep -qF -- "$1" "$WORK/body"; }

# ------------------------------------------------------------ HTTPS, self-signed
check "HTTPS /healthz answers 200 without a token" poll "$TIMEOUT" is 200 /healthz
check "HTTPS /readyz answers 200 without a token (informers synced)" poll "$TIMEOUT" is 200 /readyz
check "HTTPS /livez answers 200 without a token" is 200 /livez
check "plain HTTP is not served on the secure port" \
  bash -c "! curl -sf --max-time 5 http://127.0.0.1:${PORT}/healthz"
subject() {  # the subject of the certificate presented on port $1
  openssl s_client -connect "127.0.0.1:$1" -servername localhost </dev/null 2>/dev/null |
    openssl x509 -noout -subject -nameopt RFC2253 2>/dev/null
}
sub="$(subject "$PORT")"
info "presented: ${sub}"
check "without --tls-cert-file the certificate is self-signed for localhost (CN=localhost@<time>)" \
  grep -qE '^subject=CN=localhost@[0-9]+$' <<<"$sub"
check "a client that checks certificates refuses the self-signed one" \
  bash -c "! curl -sf --max-time 5 '${URL}/healthz'"

# ------------------------------------------------------------ authentication
check "/metrics without a token: 403 (system:anonymous, as kube-scheduler)" is 403 /metrics
check "  with the API server's Forbidden Status body" \
  body_has 'forbidden: User \"system:anonymous\" cannot get path \"/metrics\"'
check "/configz without a token: 403" is 403 /configz
check "/metrics with an invalid token: 401" is 401 /metrics not-a-token
check "  with the API server's Unauthorized Status body" body_has '"reason":"Unauthorized","code":401'
check "/metrics with a Basic credential: anonymous, 403" \
  bash -c "[ \"\$(curl -sk -o /dev/null -w '%{http_code}' -u user:pass '${URL}/metrics')\" = 403 ]"

# ------------------------------------------------------------ authorization
k create serviceaccount scraper >/dev/null
TOKEN="$(k create token scraper --duration=1h)"
check "/metrics with a ServiceAccount token lacking the RBAC rule: 403" is 403 /metrics "$TOKEN"
check "  in the API server's words" \
  body_has 'forbidden: User \"system:serviceaccount:default:scraper\" cannot get path \"/metrics\"'
check "  with reason Forbidden" body_has '"reason":"Forbidden"'
k apply -f deploy/base/metrics-reader.yaml >/dev/null
k create clusterrolebinding scraper-kscore-metrics --clusterrole=kscore-metrics-reader \
  --serviceaccount=default:scraper >/dev/null
t0=$SECONDS
# The 403 above is cached for 10 s, as kube-scheduler caches a denial.
check "after binding deploy/'s kscore-metrics-reader: 200" poll 30 is 200 /metrics "$TOKEN"
info "allowed $((SECONDS - t0)) s after the binding (a denial is cached 10 s)"
check "  with the shim's metrics" body_has 'scheduler_pending_pods{queue="active"}'
check "/configz stays 403 for that token (the role grants /metrics only)" is 403 /configz "$TOKEN"
reviews() {  # reviews authn|authz: the shim's count of reviews answered 201, read by a scrape
  code /metrics "$TOKEN" >/dev/null
  awk -v m="apiserver_delegated_$1_request_total{code=\"201\"}" '$1 == m {printf "%d\n", $2}' "$WORK/body"
}
n0="$(reviews authn)" z0="$(reviews authz)"
for _ in $(seq 10); do code /metrics "$TOKEN" >/dev/null; done
n1="$(reviews authn)" z1="$(reviews authz)"
info "12 scrapes: $((n1 - n0)) TokenReviews, $((z1 - z0)) SubjectAccessReviews (total so far: $n1, $z1)"
check "12 scrapes in a row cost at most one TokenReview and one SubjectAccessReview (cached 10 s)" \
  test "$((n1 - n0))" -le 1 -a "$((z1 - z0))" -le 1 -a "$n1" -ge 1
k delete clusterrolebinding scraper-kscore-metrics >/dev/null
check "after unbinding: 403 again (an allow is cached 10 s)" poll 30 is 403 /metrics "$TOKEN"
check "the shim logged no failed review" bash -c "! grep -q 'Review failed' '$WORK/shim.log'"
stop shim

# ------------------------------------------------------------ review credentials
# --authentication-kubeconfig / --authorization-kubeconfig: the scraper's own
# credentials may create neither review, so the reviews fail: 401 when the
# TokenReview does, 500 (apiserver's InternalError) when the
# SubjectAccessReview does.
APISERVER_URL="$(sed -n 's/^APISERVER_URL=//p' "${STATE}/env")"
CA_FILE="$(sed -n 's/^CA_FILE=//p' "${STATE}/env")"
weak="$WORK/scraper.kubeconfig"
"$BIN/kubectl" --kubeconfig="$weak" config set-cluster c --server="$APISERVER_URL" \
  --certificate-authority="$CA_FILE" --embed-certs >/dev/null
"$BIN/kubectl" --kubeconfig="$weak" config set-credentials scraper --token="$TOKEN" >/dev/null
"$BIN/kubectl" --kubeconfig="$weak" config set-context c --cluster=c --user=scraper >/dev/null
"$BIN/kubectl" --kubeconfig="$weak" config use-context c >/dev/null
for which in authentication authorization; do
  PORT="$(free_port)" URL="https://127.0.0.1:${PORT}"
  start "shim-$which" "$KBIN/shim" --config "$WORK/config.yaml" --kubeconfig "$KUBECONFIG_FILE" \
    --scorer "$SCORER" --leader-elect=false --bind-address 127.0.0.1 --secure-port "$PORT" \
    "--$which-kubeconfig" "$weak"
  poll "$TIMEOUT" is 200 /healthz || fail "shim-$which did not serve"
  if [[ "$which" == authentication ]]; then
    check "--authentication-kubeconfig is used: its user may not review tokens, so a valid token gets 401" \
      is 401 /metrics "$TOKEN"
    check "  and the shim logs the refused TokenReview" grep -q 'TokenReview failed: HTTP 403' "$WORK/shim-$which.log"
  else
    check "--authorization-kubeconfig is used: its user may not review access, so a valid token gets 500" \
      is 500 /metrics "$TOKEN"
    check "  and the shim logs the refused SubjectAccessReview" \
      grep -q 'SubjectAccessReview failed: HTTP 403' "$WORK/shim-$which.log"
  fi
  stop "shim-$which"
done

# ------------------------------------------------------------ a given certificate
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=kscore-test \
  -addext subjectAltName=IP:127.0.0.1 -keyout "$WORK/tls.key" -out "$WORK/tls.crt" 2>/dev/null
PORT2="$(free_port)"
start shim2 "$KBIN/shim" --config "$WORK/config.yaml" --kubeconfig "$KUBECONFIG_FILE" \
  --scorer "$SCORER" --leader-elect=false --bind-address 127.0.0.1 --secure-port "$PORT2" \
  --tls-cert-file "$WORK/tls.crt" --tls-private-key-file "$WORK/tls.key"
check "with --tls-cert-file: /healthz verifies against that certificate" \
  poll "$TIMEOUT" curl -sf --max-time 5 --cacert "$WORK/tls.crt" "https://127.0.0.1:${PORT2}/healthz"
sub2="$(subject "$PORT2")"
info "presented: ${sub2}"
check "  and it is the one presented (CN=kscore-test)" test "$sub2" = "subject=CN=kscore-test"
check "  /metrics still needs a token: anonymous gets 403" \
  bash -c "[ \"\$(curl -s -o /dev/null -w '%{http_code}' --cacert '$WORK/tls.crt' 'https://127.0.0.1:${PORT2}/metrics')\" = 403 ]"
stop shim2

finish
