#!/usr/bin/env bash
# Builds the local control plane's binaries from the Go module proxy and caches them
# by version outside the checkout:
#
#   ${XDG_CACHE_HOME:-$HOME/.cache}/kscore/tools/<key>/      etcd kube-apiserver kube-controller-manager
#                                                          kubectl grpcurl kwok
#   ${XDG_CACHE_HOME:-$HOME/.cache}/kscore/reference/<key>/  kube-scheduler (reference/ build)
#   ${XDG_CACHE_HOME:-$HOME/.cache}/kscore/bin/<key>-<key>/  all of the above, hard-linked
#
# Each <key> is a hash of what determines the binaries (go.mod/go.sum of the wrapper
# modules, the pins and ldflags below, the Go version; for the reference build also its
# sources), so a changed pin rebuilds and nothing else does. The cache is never assumed
# to exist: anything missing is built.
#
# Usage: hack/tools/build.sh [all|tools|reference|bindir]
#   all (default)  build what is missing, print the bin folder on stdout (last line)
#   tools          build only the tool binaries, print their folder
#   reference      build only the reference kube-scheduler, print its folder
#   bindir         print the bin folder without building (may not exist)
# Progress goes to stderr; full build output to <cache>/kscore/logs/build-*.log.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
TOOLS_DIR="${ROOT}/hack/tools"
REF_DIR="${ROOT}/reference"
CACHE_ROOT="${XDG_CACHE_HOME:-${HOME}/.cache}/kscore"

# Pins. The go.mod files hold the module versions; these are the version stamps.
KUBE_VERSION="v1.37.2"
KUBE_MAJOR="1"
KUBE_MINOR="37"

log() { echo "build: $*" >&2; }
die() { echo "build: ERROR: $*" >&2; exit 1; }

command -v go >/dev/null 2>&1 || die "go not found in PATH (need Go >= 1.26 to build k8s.io/kubernetes ${KUBE_VERSION})"
command -v sha256sum >/dev/null 2>&1 || die "sha256sum not found (coreutils)"

export GOFLAGS="${GOFLAGS:--buildvcs=false}"
case " ${GOFLAGS} " in *-buildvcs=*) ;; *) GOFLAGS="${GOFLAGS} -buildvcs=false" ;; esac
export CGO_ENABLED="${CGO_ENABLED:-0}"

kube_ldflags() {
  local pkg flags="-s -w"
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    flags+=" -X ${pkg}.gitVersion=${KUBE_VERSION}"
    flags+=" -X ${pkg}.gitMajor=${KUBE_MAJOR}"
    flags+=" -X ${pkg}.gitMinor=${KUBE_MINOR}"
    flags+=" -X ${pkg}.gitTreeState=clean"
    flags+=" -X ${pkg}.buildDate=1970-01-01T00:00:00Z"
  done
  echo "${flags}"
}

go_version() { go env GOVERSION; }

tools_key() {
  {
    echo "pins ${KUBE_VERSION} ${KUBE_MAJOR} ${KUBE_MINOR} $(go_version) ${CGO_ENABLED}"
    kube_ldflags
    local d
    for d in k8s etcd grpcurl kwok; do
      echo "== ${d}"
      cat "${TOOLS_DIR}/${d}/go.mod" "${TOOLS_DIR}/${d}/go.sum"
    done
  } | sha256sum | cut -c1-16
}

reference_key() {
  {
    echo "pins ${KUBE_VERSION} $(go_version) ${CGO_ENABLED}"
    kube_ldflags
    (cd "${REF_DIR}" && find . -type f \( -name '*.go' ! -name '*_test.go' -o -name go.mod -o -name go.sum \) \
      -print | LC_ALL=C sort | while read -r f; do echo "== ${f}"; cat "${f}"; done)
  } | sha256sum | cut -c1-16
}

# build_into <module dir> <out dir> <ldflags> <pkg>... — go build into <out dir>.
build_into() {
  local mod="$1" out="$2" ldflags="$3"; shift 3
  (cd "${mod}" && go build -trimpath -ldflags "${ldflags}" -o "${out}/" "$@")
}

with_lock() {
  mkdir -p "${CACHE_ROOT}"
  exec 9>"${CACHE_ROOT}/build.lock"
  if command -v flock >/dev/null 2>&1; then
    flock 9
  fi
}

ensure_tools() {
  local key dir tmp logf
  key="$(tools_key)"
  dir="${CACHE_ROOT}/tools/${key}"
  if [[ -f "${dir}/.complete" ]]; then
    ensure_kwok_stages "${dir}"
    echo "${dir}"; return 0
  fi
  mkdir -p "${CACHE_ROOT}/tools" "${CACHE_ROOT}/logs"
  tmp="$(mktemp -d "${CACHE_ROOT}/tools/.tmp-${key}-XXXXXX")"
  chmod 755 "${tmp}"
  logf="${CACHE_ROOT}/logs/build-tools-${key}.log"
  : >"${logf}"
  log "building control-plane tools (key ${key}); log: ${logf}"
  local t0=${SECONDS}
  log "  kube-apiserver, kube-controller-manager, kubectl (k8s.io/kubernetes ${KUBE_VERSION}) ..."
  if ! build_into "${TOOLS_DIR}/k8s" "${tmp}" "$(kube_ldflags)" \
      k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
      k8s.io/kubernetes/cmd/kubectl >>"${logf}" 2>&1; then
    tail -n 30 "${logf}" >&2
    rm -rf "${tmp}"
    die "building kube-apiserver/kube-controller-manager/kubectl failed (see ${logf})"
  fi
  log "  etcd (go.etcd.io/etcd/server/v3) ..."
  if ! (cd "${TOOLS_DIR}/etcd" && go build -trimpath -ldflags "-s -w" -o "${tmp}/etcd" go.etcd.io/etcd/server/v3) \
      >>"${logf}" 2>&1; then
    tail -n 30 "${logf}" >&2
    rm -rf "${tmp}"
    die "building etcd failed (see ${logf})"
  fi
  log "  grpcurl ..."
  if ! build_into "${TOOLS_DIR}/grpcurl" "${tmp}" "-s -w -X main.version=v1.9.4" \
      github.com/fullstorydev/grpcurl/cmd/grpcurl >>"${logf}" 2>&1; then
    tail -n 30 "${logf}" >&2
    rm -rf "${tmp}"
    die "building grpcurl failed (see ${logf})"
  fi
  log "  kwok (optional) ..."
  if ! build_into "${TOOLS_DIR}/kwok" "${tmp}" "-s -w" \
      sigs.k8s.io/kwok/cmd/kwok >>"${logf}" 2>&1; then
    log "  WARNING: kwok did not build (see ${logf}); cluster.sh falls back to plain Node objects"
    touch "${tmp}/.kwok-failed"
  fi
  touch "${tmp}/.complete"
  rm -rf "${dir}"
  mv "${tmp}" "${dir}"
  log "tools built in $((SECONDS - t0))s"
  ensure_kwok_stages "${dir}"
  echo "${dir}"
}

# kwok needs Stage objects (what to do with nodes and pods). Its own "fast" stages
# (nodes become Ready with a lease heartbeat, pods become Running, deletions finish)
# are taken from the kwok module and put next to the binary as kwok-stages.yaml.
ensure_kwok_stages() {
  local dir="$1" src f
  [[ -f "${dir}/kwok" && ! -f "${dir}/kwok-stages.yaml" ]] || return 0
  src="$(cd "${TOOLS_DIR}/kwok" && go list -m -f '{{.Dir}}' sigs.k8s.io/kwok)" ||
    die "cannot locate the sigs.k8s.io/kwok module sources for its stages"
  {
    for f in node/fast/node-initialize.yaml node/heartbeat-with-lease/node-heartbeat-with-lease.yaml \
        pod/fast/pod-ready.yaml pod/fast/pod-complete.yaml pod/fast/pod-delete.yaml; do
      [[ -f "${src}/kustomize/stage/${f}" ]] || die "kwok stage ${f} missing in ${src}"
      echo "---"
      cat "${src}/kustomize/stage/${f}"
    done
  } >"${dir}/.kwok-stages.yaml.tmp"
  mv "${dir}/.kwok-stages.yaml.tmp" "${dir}/kwok-stages.yaml"
}

ensure_reference() {
  local key dir tmp logf
  [[ -f "${REF_DIR}/go.mod" ]] || die "reference module missing: ${REF_DIR}/go.mod"
  check_pins_in_sync
  key="$(reference_key)"
  dir="${CACHE_ROOT}/reference/${key}"
  if [[ -f "${dir}/.complete" ]]; then
    echo "${dir}"; return 0
  fi
  mkdir -p "${CACHE_ROOT}/reference" "${CACHE_ROOT}/logs"
  tmp="$(mktemp -d "${CACHE_ROOT}/reference/.tmp-${key}-XXXXXX")"
  chmod 755 "${tmp}"
  logf="${CACHE_ROOT}/logs/build-reference-${key}.log"
  : >"${logf}"
  log "building reference kube-scheduler (key ${key}); log: ${logf}"
  local t0=${SECONDS}
  if ! (cd "${REF_DIR}" && go build -trimpath -ldflags "$(kube_ldflags)" -o "${tmp}/kube-scheduler" ./cmd/scheduler) \
      >>"${logf}" 2>&1; then
    tail -n 30 "${logf}" >&2
    rm -rf "${tmp}"
    die "building the reference kube-scheduler failed (see ${logf})"
  fi
  touch "${tmp}/.complete"
  rm -rf "${dir}"
  mv "${tmp}" "${dir}"
  log "reference kube-scheduler built in $((SECONDS - t0))s"
  echo "${dir}"
}

# The reference module and the tools module must build against the same Kubernetes:
# same k8s.io/kubernetes requirement, same staging pins.
check_pins_in_sync() {
  local a="${TOOLS_DIR}/k8s/go.mod" b="${REF_DIR}/go.mod"
  pins() { grep -E '^(require )?[[:space:]]*k8s\.io/kubernetes v|=> k8s\.io/' "$1" | sed -E 's/^require //; s/^[[:space:]]+//; s/ \/\/ indirect$//' | LC_ALL=C sort; }
  if ! diff <(pins "${a}") <(pins "${b}") >/dev/null; then
    diff <(pins "${a}") <(pins "${b}") >&2 || true
    die "Kubernetes pins differ between ${a} and ${b} (lines above: < tools, > reference); make them equal"
  fi
}

bin_dir_for() { echo "${CACHE_ROOT}/bin/$1-$2"; }

ensure_bin() {
  local tdir rdir bdir tmp f
  tdir="$(ensure_tools)"
  rdir="$(ensure_reference)"
  bdir="$(bin_dir_for "$(basename "${tdir}")" "$(basename "${rdir}")")"
  if [[ -f "${bdir}/.complete" && ( ! -f "${tdir}/kwok-stages.yaml" || -f "${bdir}/kwok-stages.yaml" ) ]]; then
    echo "${bdir}"; return 0
  fi
  mkdir -p "${CACHE_ROOT}/bin"
  tmp="$(mktemp -d "${CACHE_ROOT}/bin/.tmp-XXXXXX")"
  chmod 755 "${tmp}"
  for f in etcd kube-apiserver kube-controller-manager kubectl grpcurl kwok kwok-stages.yaml; do
    [[ -f "${tdir}/${f}" ]] || continue
    ln -f "${tdir}/${f}" "${tmp}/${f}" 2>/dev/null || cp -p "${tdir}/${f}" "${tmp}/${f}"
  done
  ln -f "${rdir}/kube-scheduler" "${tmp}/kube-scheduler" 2>/dev/null || cp -p "${rdir}/kube-scheduler" "${tmp}/kube-scheduler"
  touch "${tmp}/.complete"
  rm -rf "${bdir}"
  mv "${tmp}" "${bdir}"
  echo "${bdir}"
}

main() {
  local cmd="${1:-all}"
  case "${cmd}" in
    all) with_lock; ensure_bin ;;
    tools) with_lock; ensure_tools ;;
    reference) with_lock; ensure_reference ;;
    bindir)
      bin_dir_for "$(tools_key)" "$(reference_key)" ;;
    -h|--help|help) sed -n '2,20p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' ;;
    *) die "unknown command '${cmd}' (want all|tools|reference|bindir)" ;;
  esac
}

# On one line so that bash never reads past it (safe to edit this file while it runs).
main "$@"; exit $?
