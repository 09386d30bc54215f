#!/usr/bin/env bash
# Installs the Debian packages the C++ build needs, only when one is missing.
# Sourced by hack/test.sh, hack/demo.sh and the Dockerfile's build stage.

# What compiles the programs (the Dockerfile's build stage needs only these)...
KSCORE_BUILD_PACKAGES=(
  build-essential cmake ninja-build pkg-config
  protobuf-compiler protobuf-compiler-grpc libprotobuf-dev libgrpc++-dev
  libabsl-dev libyaml-cpp-dev libspdlog-dev libfmt-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libcurl4-openssl-dev nlohmann-json3-dev prometheus-cpp-dev libjemalloc-dev
  libcpp-httplib-dev libssl-dev libboost-dev
)
# ...and what the tests and checks also use.
KSCORE_DEB_PACKAGES=(
  "${KSCORE_BUILD_PACKAGES[@]}"
  clang-format clang-tidy openssl python3 curl ca-certificates
  ccache  # every tree's objects by content: worktrees and the image's build share them
  clang libclang-rt-14-dev  # hack/fuzz.sh: clang and its libFuzzer, ASan, UBSan
)

kscore_install_deps() {  # kscore_install_deps [build]: "build" for the compilers and libraries only
  local missing=()
  local p
  local -a wanted=("${KSCORE_DEB_PACKAGES[@]}")
  if [ "${1:-}" = build ]; then wanted=("${KSCORE_BUILD_PACKAGES[@]}"); fi
  for p in "${wanted[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" \
      || missing+=("$p")
  done
  if [ ${#missing[@]} -eq 0 ]; then
    return 0
  fi
  echo "installing Debian packages: ${missing[*]}" >&2
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  $sudo apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >&2
}

# Sets the array named ARRAY to CMake's arguments that put ccache in front of
# the compilers, when the machine has it (it makes rebuilds of other checkouts
# cheap), else to nothing.
# shellcheck disable=SC2034  # a nameref: it sets the caller's array
kscore_ccache_args() {  # kscore_ccache_args ARRAY
  local -n _kscore_ccache_out="$1"
  _kscore_ccache_out=()
  if command -v ccache >/dev/null; then
    _kscore_ccache_out=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
  fi
}

# Configures and builds into build/ (binaries in build/bin/). Warnings are
# errors by default, in hack/demo.sh as in CI, so both build one tree with the
# same flags and a later run reuses what an earlier one built.
kscore_build() {  # kscore_build ROOT [BUILD_DIR [CMAKE_ARGS...]]
  local root="$1"
  local dir="${2:-$root/build}"
  shift $(($# < 2 ? $# : 2))
  local werror="${KSCORE_WERROR:-ON}"
  local launcher=()
  kscore_ccache_args launcher
  # Paths relative to the checkout and no build directory in the hash: the
  # same sources compile to the same objects in any checkout, and in the
  # image's build stage (/src), which reuses this machine's cache.
  local ccache_env=(CCACHE_BASEDIR="${CCACHE_BASEDIR:-$root}" CCACHE_NOHASHDIR=1)
  cmake -G Ninja -S "$root" -B "$dir" -DKSCORE_WERROR="$werror" "${launcher[@]}" "$@" >&2
  # shellcheck disable=SC2086  # a list of targets
  env "${ccache_env[@]}" ninja -C "$dir" ${KSCORE_NINJA_TARGETS:-} >&2
}

# The one sanitizer tree of the default run (build-fuzz/): clang with
# ASan+UBSan and libFuzzer's coverage. It holds the libFuzzer targets and the
# scorer side's test binaries, so both compile every library once. clang's
# warnings differ from GCC's, which the ordinary build holds to -Werror: this
# tree reports them without failing.
kscore_build_fuzz() {  # kscore_build_fuzz ROOT TARGET...
  local root="$1"; shift
  KSCORE_NINJA_TARGETS="$*" KSCORE_WERROR=OFF kscore_build "$root" \
    "${KSCORE_FUZZ_BUILD_DIR:-$root/build-fuzz}" -DCMAKE_CXX_COMPILER=clang++ \
    -DKSCORE_FUZZ=ON -DKSCORE_SANITIZE=address,undefined
}
