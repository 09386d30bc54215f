#!/usr/bin/env bash
# End-to-end: mutual TLS between shim and scorer, on the real binaries.
# A CA signs the scorer's serving certificate and a client certificate; a
# second CA signs an impostor's. The scorer runs with --tls-cert-file,
# --tls-private-key-file and --client-ca-file. grpcurl with the client
# certificate is served; without a certificate, with the impostor's, or in
# plaintext it is refused. Then the shim, given --scorer-ca-file,
# --scorer-cert-file and --scorer-key-file, schedules pods on a real local
# control plane through that scorer, and a shim without a client
# certificate schedules nothing. Needs build/bin/{scorer,shim} and openssl.
set -euo pipefail
E2E_NAME=mtls
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$ROOT"

pki="$WORK/pki"
mkdir -p "$pki"
ca() {  # ca NAME: a self-signed CA
  openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj "/CN=$1" \
    -keyout "$pki/$1.key" -out "$pki/$1.crt" 2>/dev/null
}
leaf() {  # leaf NAME CA EXT: a certificate NAME signed by CA, extensions EXT
  openssl req -newkey rsa:2048 -nodes -subj "/CN=$1" \
    -keyout "$pki/$1.key" -out "$pki/$1.csr" 2>/dev/null
  printf '%s\n' "$3" >"$pki/$1.ext"
  openssl x509 -req -in "$pki/$1.csr" -CA "$pki/$2.crt" -CAkey "$pki/$2.key" \
    -CAcreateserial -days 1 -extfile "$pki/$1.ext" -out "$pki/$1.crt" 2>/dev/null
}
ca kscore-ca
ca impostor-ca
leaf scorer kscore-ca "subjectAltName=DNS:scorer.kscore-system.svc,IP:127.0.0.1
extendedKeyUsage=serverAuth"
leaf shim kscore-ca "extendedKeyUsage=clientAuth"
leaf impostor impostor-ca "extendedKeyUsage=clientAuth"

cat >"$WORK/config.yaml" <<YAML
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: kscore
YAML

# Flags that do not go together are refused before anything is served.
out="$("$KBIN/scorer" --config "$WORK/config.yaml" --listen 127.0.0.1:0 \
  --client-ca-file "$pki/kscore-ca.crt" 2>&1)" && rc=0 || rc=$?
check "scorer refuses --client-ca-file without a certificate (exit 2)" \
  bash -c "[ $rc -eq 2 ] && grep -q -- '--client-ca-file needs --tls-cert-file' <<<'$out'"
out="$("$KBIN/scorer" --config "$WORK/config.yaml" --listen 127.0.0.1:0 \
  --tls-cert-file "$pki/scorer.crt" --tls-private-key-file "$WORK/none.key" 2>&1)" && rc=0 || rc=$?
check "scorer names the unreadable key file (exit 2)" \
  bash -c "[ $rc -eq 2 ] && grep -q -- '--tls-private-key-file: cannot read $WORK/none.key' <<<'$out'"

SCORER_PORT="$(free_port)"
SCORER="127.0.0.1:${SCORER_PORT}"
scorer_up scorer "$WORK/config.yaml" "$SCORER_PORT" "$KBIN/scorer" \
  --tls-cert-file "$pki/scorer.crt" --tls-private-key-file "$pki/scorer.key" \
  --client-ca-file "$pki/kscore-ca.crt"
check "scorer says it serves mutual TLS" grep -q "mutual TLS" "$WORK/scorer.log"

cluster_up --nodes 3
grpcurl="$BIN/grpcurl"
overlay="$(k kustomize deploy/overlays/mtls 2>&1)" || true
check "deploy/overlays/mtls renders the scorer's and the shim's TLS flags" bash -c \
  "grep -q -- '--client-ca-file=/etc/kscore/tls/ca.crt' <<<\"\$1\" && grep -q -- '--scorer-cert-file=/etc/kscore/tls/tls.crt' <<<\"\$1\"" _ "$overlay"
health() {  # health GRPCURL-FLAGS...: the health check's answer
  "$grpcurl" -max-time 5 "$@" -d '{}' "$SCORER" grpc.health.v1.Health/Check 2>&1
}
serving() { health "$@" | grep -q '"SERVING"'; }
refused() { ! health "$@" | grep -q '"SERVING"'; }
with_cert=(-cacert "$pki/kscore-ca.crt" -cert "$pki/shim.crt" -key "$pki/shim.key")
check "grpcurl with the client certificate: SERVING" serving "${with_cert[@]}"
check "grpcurl checking the certificate's DNS name: SERVING" \
  serving -authority scorer.kscore-system.svc "${with_cert[@]}"
check "grpcurl without a client certificate: refused" refused -cacert "$pki/kscore-ca.crt"
check "grpcurl with a certificate of another CA: refused" \
  refused -cacert "$pki/kscore-ca.crt" -cert "$pki/impostor.crt" -key "$pki/impostor.key"
check "grpcurl in plaintext: refused" refused -plaintext

# A shim without a client certificate: the scorer refuses it, nothing binds.
shim_up nocert "$WORK/config.yaml" --leader-elect=false \
  --scorer-ca-file "$pki/kscore-ca.crt"
deployment refused 2 kscore
nocert_refused() { grep -q "ListProfiles\|UNAVAILABLE\|handshake" "$WORK/nocert.log"; }
check "a shim without a client certificate is refused by the scorer" poll "$TIMEOUT" nocert_refused
check "its pods stay Pending" test "$(bound_count refused)" = 0
stop nocert

shim_up shim "$WORK/config.yaml" --leader-elect=false \
  --scorer-ca-file "$pki/kscore-ca.crt" --scorer-cert-file "$pki/shim.crt" \
  --scorer-key-file "$pki/shim.key" --scorer-tls-server-name scorer.kscore-system.svc
deployment web 4 kscore
check "the shim with its client certificate binds every pod" poll "$TIMEOUT" all_bound web 4
check "and the pods the refused shim left Pending" poll "$TIMEOUT" all_bound refused 2

finish
