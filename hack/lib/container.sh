#!/usr/bin/env bash
# A container engine for building and running the Dockerfile's image on a
# Debian 12 machine with no image registry in reach. Sourced by
# tests/e2e/image.sh and hack/image.sh.
#
#   kscore_container_engine   installs podman, runc and debootstrap when missing
#                             and makes the debian:12 / debian:12-slim base images
#                             (idempotent; progress on stderr)
#   kscore_podman ARGS...     podman with the project's containers.conf
#   kscore_registry_bin       prints the path of Debian's distribution registry
#                             (docker-registry), unpacked into the cache
#
# What makes podman work here, and why:
#   - runc, not crun: crun fails on cgroups in hybrid (v1 + v2) mode;
#   - default_ulimits = []: podman raises RLIMIT_NOFILE by default, which a
#     sandbox may forbid;
#   - the base images come from Debian's own packages (debootstrap), imported
#     with `podman import` as localhost/debian:12 and localhost/debian:12-slim,
#     which `FROM debian:12` finds without reaching any image registry.
# The project's containers.conf lives in the cache and is passed through
# CONTAINERS_CONF, so the machine's /etc/containers is left as it is. The
# debootstrap output is kept in the cache too: re-importing it takes seconds,
# making it takes minutes. Nothing depends on the cache existing.

KSCORE_CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/kscore"
KSCORE_CONTAINERS_CONF="${KSCORE_CACHE}/containers/containers.conf"

_kscore_root() {  # runs a command as root (sudo when not root)
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

kscore_podman() {
  _kscore_root env CONTAINERS_CONF="${KSCORE_CONTAINERS_CONF}" podman "$@"
}

_kscore_apt_install() {  # installs the named Debian packages that are missing
  local missing=() p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
      missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "installing Debian packages: ${missing[*]}" >&2
  _kscore_root apt-get update -qq >&2
  _kscore_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
    --no-install-recommends "${missing[@]}" >&2
}

# The machine's Debian 12 package source: debootstrap fetches from it and the
# images' apt-get uses the same sources.
_kscore_debian_mirror() {
  local f
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -e "$f" ] || continue
    awk 'BEGIN { RS = ""; FS = "\n" }
      /(^|\n)Suites:[^\n]*bookworm( |\n|$)/ && /(^|\n)Types:[^\n]*deb( |\n|$)/ {
        for (i = 1; i <= NF; i++) if ($i ~ /^URIs:/) { split($i, u, " "); print u[2]; exit }
      }' "$f"
  done | head -n1 | grep . && return 0
  awk '$1 == "deb" && $3 == "bookworm" { print $2; exit }' /etc/apt/sources.list 2>/dev/null | grep .
}

_kscore_write_containers_conf() {
  mkdir -p "$(dirname "${KSCORE_CONTAINERS_CONF}")"
  cat >"${KSCORE_CONTAINERS_CONF}.tmp" <<'CONF'
# kscore's podman settings (hack/lib/container.sh writes this file).
[containers]
# The sandbox may forbid raising RLIMIT_NOFILE, which podman does by default.
default_ulimits = []
[engine]
# crun fails on cgroups in hybrid mode.
runtime = "runc"
# No journald in a sandbox.
events_logger = "file"
CONF
  mv "${KSCORE_CONTAINERS_CONF}.tmp" "${KSCORE_CONTAINERS_CONF}"
}

# What Debian's own container images add to a debootstrap root filesystem:
# the machine's apt sources (with updates and security), and apt that keeps
# neither the downloaded packages nor its binary caches in an image layer.
_kscore_base_rootfs() {
  local root="$1"
  if [ -e /etc/apt/sources.list.d/debian.sources ]; then
    cp /etc/apt/sources.list.d/debian.sources "$root/etc/apt/sources.list.d/"
    rm -f "$root/etc/apt/sources.list"
  fi
  cat >"$root/etc/apt/apt.conf.d/kscore-clean" <<'APT'
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
Acquire::Languages "none";
APT
  rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin \
    "$root"/var/cache/apt/archives/*.deb "$root"/var/log/*
}

# Trims a root filesystem the way Debian's -slim images are trimmed: no
# documentation (copyright files stay), man pages or translations, now or
# after later apt-get installs.
_kscore_slim_rootfs() {
  local root="$1"
  mkdir -p "$root/etc/dpkg/dpkg.cfg.d"
  cat >"$root/etc/dpkg/dpkg.cfg.d/kscore-slim" <<'CFG'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/groff/*
path-exclude /usr/share/info/*
path-exclude /usr/share/lintian/*
path-exclude /usr/share/linda/*
path-exclude /usr/share/locale/*
CFG
  find "$root/usr/share/doc" -mindepth 1 -not -name copyright -not -type d -delete
  find "$root/usr/share/doc" -mindepth 1 -type d -empty -delete
  rm -rf "$root"/usr/share/{man,groff,info,lintian,linda,locale}/*
}

# Makes localhost/debian:12 and localhost/debian:12-slim unless they exist and
# were made by this recipe (their label kscore.base is its hash). The
# debootstrap output, the slow part, is cached (less its package lists).
_kscore_base_images() {
  local recipe
  recipe="$({ declare -f _kscore_base_rootfs _kscore_slim_rootfs
    cat /etc/apt/sources.list.d/debian.sources 2>/dev/null || true; } | sha256sum | cut -c1-12)"
  local t fresh=true
  for t in 12 12-slim; do
    [ "$(kscore_podman image inspect --format '{{index .Config.Labels "kscore.base"}}' \
      "localhost/debian:$t" 2>/dev/null)" = "$recipe" ] || fresh=false
  done
  $fresh && return 0
  local dir="${KSCORE_CACHE}/images"
  local raw="$dir/debian-12-minbase.tar"
  mkdir -p "$dir"
  if [ ! -s "$raw" ]; then
    local mirror
    mirror="$(_kscore_debian_mirror)" || {
      echo "container: no Debian 12 (bookworm) source in /etc/apt: debootstrap needs one" >&2
      return 1
    }
    local tmp
    tmp="$(mktemp -d "${dir}/rootfs.XXXXXX")"
    echo "container: debootstrap bookworm (minbase) from the machine's Debian source" >&2
    if ! _kscore_root debootstrap --variant=minbase bookworm "$tmp/rootfs" "$mirror" \
      >"$tmp/debootstrap.log" 2>&1; then
      tail -n 5 "$tmp/debootstrap.log" >&2
      _kscore_root rm -rf "$tmp"
      return 1
    fi
    # Package lists and downloads are stale by the next use: not worth keeping.
    _kscore_root rm -rf "$tmp"/rootfs/var/lib/apt/lists/* "$tmp"/rootfs/var/cache/apt/archives/*.deb
    _kscore_root tar -C "$tmp/rootfs" --numeric-owner -cf "$raw.tmp" .
    _kscore_root rm -rf "$tmp"
    mv "$raw.tmp" "$raw"
  fi
  # shellcheck disable=SC2016  # the positional parameters belong to the inner shell
  local script='set -e
    tar -C "$1" --numeric-owner -xf "$2"
    _kscore_base_rootfs "$1"
    if [ "$3" = 12-slim ]; then _kscore_slim_rootfs "$1"; fi
    tar -C "$1" --numeric-owner -c .'
  for t in 12 12-slim; do
    local tmp status
    tmp="$(mktemp -d "${dir}/rootfs.XXXXXX")"
    _kscore_root bash -c "$(declare -f _kscore_base_rootfs _kscore_slim_rootfs); $script" \
      _ "$tmp" "$raw" "$t" |
      kscore_podman import -q --change "LABEL kscore.base=$recipe" \
        --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
        --change 'CMD ["bash"]' - "localhost/debian:$t" >/dev/null
    status="${PIPESTATUS[0]}${PIPESTATUS[1]}"
    _kscore_root rm -rf "$tmp"
    [ "$status" = 00 ] || { echo "container: making localhost/debian:$t failed" >&2; return 1; }
  done
}

kscore_container_engine() {
  _kscore_apt_install podman runc debootstrap || return 1
  mkdir -p "${KSCORE_CACHE}"
  # One set-up at a time: two would debootstrap into the same cache.
  (
    flock 9
    _kscore_write_containers_conf &&
      _kscore_base_images &&
      kscore_podman run --rm --network host localhost/debian:12-slim true
  ) 9>"${KSCORE_CACHE}/container.lock"
}

# Debian's distribution registry, unpacked from its package into the cache
# rather than installed: installing it would start a system service on :5000.
kscore_registry_bin() {
  if command -v docker-registry >/dev/null 2>&1; then
    command -v docker-registry
    return 0
  fi
  local dir="${KSCORE_CACHE}/tools/docker-registry"
  if [ ! -x "$dir/usr/bin/docker-registry" ]; then
    local tmp
    tmp="$(mktemp -d)"
    (cd "$tmp" && apt-get download docker-registry >/dev/null 2>&1) ||
      { _kscore_root apt-get update -qq >&2 && (cd "$tmp" && apt-get download docker-registry >&2); } ||
      { rm -rf "$tmp"; echo "container: apt-get download docker-registry failed" >&2; return 1; }
    mkdir -p "$dir"
    dpkg-deb -x "$tmp"/docker-registry_*.deb "$dir"
    rm -rf "$tmp"
  fi
  echo "$dir/usr/bin/docker-registry"
}
