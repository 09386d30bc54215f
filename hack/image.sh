#!/usr/bin/env bash
# Builds the Dockerfile's image with podman, setting the engine up first when
# needed (hack/lib/container.sh: podman, runc, Debian 12 base images made
# with debootstrap; no image registry is needed).
#
#   hack/image.sh [IMAGE]                  build IMAGE (default kscore:dev)
#   hack/image.sh [IMAGE] --push REF [--tls-verify=false]
#                                          build, then push IMAGE to REF
#                                          (e.g. <registry>/kscore:<tag>)
#
# Layers are reused between builds, and the C++ compiler cache survives them.
# The last stdout line is the image's ID.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=hack/lib/container.sh
source "$root/hack/lib/container.sh"

image=kscore:dev
push=""
push_flags=()
while [ $# -gt 0 ]; do
  case "$1" in
    --push) push="${2:?--push needs an image reference}"; shift 2 ;;
    --tls-verify=*) push_flags+=("$1"); shift ;;
    -h | --help) sed -n '2,12p' "$0"; exit 0 ;;
    -*) echo "image.sh: unknown flag '$1'" >&2; exit 2 ;;
    *) image="$1"; shift ;;
  esac
done

kscore_container_engine
# --format docker: the OCI format drops the Dockerfile's SHELL line, and the
# build stage's RUN lines need bash. --network host: apt-get reaches Debian
# the way the machine does.
# The machine's compiler cache, when it has one: a later image build then
# recompiles only what changed since the last one (70 of 100 compiles hit
# after four commits). The host's own build/ objects do not hit from inside
# the build stage.
cache_flags=()
if command -v ccache >/dev/null; then
  host_cache="$(ccache -k cache_dir)"
  mkdir -p "$host_cache"
  cache_flags=(--volume "$host_cache:/ccache-host" --build-arg KSCORE_CCACHE_DIR=/ccache-host)
fi
kscore_podman build --format docker --network host --layers "${cache_flags[@]}" \
  -t "$image" "$root" >&2
if [ -n "$push" ]; then
  kscore_podman push "${push_flags[@]}" "$image" "$push" >&2
fi
kscore_podman image inspect --format '{{.Id}}' "$image"
