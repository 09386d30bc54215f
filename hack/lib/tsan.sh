#!/usr/bin/env bash
# ThreadSanitizer needs every library that synchronises our threads built with
# it: Abseil (absl::Mutex), protobuf (its map layout changes under
# __SANITIZE_THREAD__) and gRPC (its own threads hand our buffers around).
# Debian ships them uninstrumented, so kscore_tsan_prefix rebuilds the three
# from Debian's own source packages, at exactly the installed versions and with
# Debian's patches, as shared libraries with the same sonames. A TSan build of
# ours compiles against the installed headers and links with an RPATH to
# <prefix>/lib (CMake's KSCORE_TSAN_LIBDIR), which swaps the instrumented
# libraries in for the binary and for the libraries it loads. (Not
# LD_LIBRARY_PATH: protoc and the like would load them too, and crash.)
#
# The result is cached by version in ${XDG_CACHE_HOME:-~/.cache}/kscore/tsan/;
# a cold build takes about 6 minutes on 2 cores (gRPC is most of it).
# Sourced by hack/test.sh after hack/lib/deps.sh, whose packages it needs
# (dpkg-dev comes with build-essential) and whose kscore_ccache_args it calls.

# The recipe's version: bump it when the flags or the library set change.
KSCORE_TSAN_RECIPE=1
KSCORE_TSAN_PACKAGES=(libabsl-dev libprotobuf-dev libgrpc++-dev)
# The libraries a TSan run must load from the prefix (checked by
# kscore_tsan_check): one of each rebuilt package.
KSCORE_TSAN_SONAMES=(libabsl_synchronization.so.20220623 libprotobuf.so.32 libgrpc.so.29
  libgrpc++.so.1.51 libgpr.so.29)

# Prints the prefix, building it first when the cache lacks it. Logs to stderr.
kscore_tsan_prefix() {
  local cache="${XDG_CACHE_HOME:-$HOME/.cache}/kscore/tsan"
  local sources
  sources="$(dpkg-query -W -f='${source:Package}=${source:Version}\n' \
    "${KSCORE_TSAN_PACKAGES[@]}")" || return 1
  local key
  key="$({ echo "recipe $KSCORE_TSAN_RECIPE"; echo "$sources"; gcc -dumpfullversion; } \
    | sha256sum | cut -c1-16)"
  local prefix="$cache/$key"
  if [ -f "$prefix/complete" ]; then
    echo "$prefix"
    return 0
  fi
  echo "tsan: building instrumented libraries for: $(tr '\n' ' ' <<<"$sources")" >&2
  # A fixed work directory: ccache keys debug builds by their directory, so a
  # retry after a failure compiles only what it did not reach.
  local work="$prefix.work"
  if ! (_kscore_tsan_build "$work" "$prefix.partial" "$sources"); then
    echo "tsan: building the instrumented libraries failed (work dir $work kept)" >&2
    return 1
  fi
  rm -rf "$prefix"
  mv "$prefix.partial" "$prefix"
  rm -rf "$work"
  touch "$prefix/complete"
  echo "$prefix"
}

# Succeeds when every one of KSCORE_TSAN_SONAMES that BINARY links is loaded
# from the prefix (not the uninstrumented system copy), and BINARY links at
# least one of them.
kscore_tsan_check() {  # kscore_tsan_check PREFIX BINARY
  local prefix="$1" binary="$2" libs so line found=0 bad=0
  libs="$(ldd "$binary")" || return 1
  for so in "${KSCORE_TSAN_SONAMES[@]}"; do
    line="$(grep "^[[:space:]]*$so => " <<<"$libs")" || continue
    found=1
    if [[ "$line" != *"=> $prefix/lib/"* ]]; then
      echo "tsan: $binary loads an uninstrumented library:$line" >&2
      bad=1
    fi
  done
  if [ "$found" -eq 0 ]; then
    echo "tsan: $binary links none of ${KSCORE_TSAN_SONAMES[*]}" >&2
    bad=1
  fi
  return "$bad"
}

_kscore_tsan_build() {  # WORK PREFIX SOURCES; runs in a subshell
  set -euo pipefail
  local work="$1" prefix="$2" sources="$3"
  rm -rf "$prefix" "$work/src" "$work/dl" "$work/apt"
  mkdir -p "$prefix/lib" "$work/apt/sources.d" "$work/apt/lists/partial" "$work/dl" "$work/src"
  # apt fetches and verifies the source packages from the machine's own Debian
  # mirrors: their deb entries, turned into deb-src in a private apt state
  # (other vendors' repositories are left out: they may publish no sources).
  local f
  for f in /etc/apt/sources.list.d/*.sources; do
    grep -q debian-archive-keyring "$f" 2>/dev/null || continue
    sed 's/^Types:.*\bdeb\b.*/Types: deb-src/' "$f" >"$work/apt/sources.d/$(basename "$f")"
  done
  if [ -f /etc/apt/sources.list ]; then
    sed -n 's|^deb \(.*/debian[-a-z]*/\{0,1\} .*\)|deb-src \1|p' /etc/apt/sources.list \
      >"$work/apt/sources.d/main.list"
  fi
  local apt=(apt-get -q -o APT::Sandbox::User=root -o Dir::Etc::SourceList=/dev/null
    -o "Dir::Etc::SourceParts=$work/apt/sources.d" -o "Dir::State::Lists=$work/apt/lists")
  "${apt[@]}" update >&2
  local src
  for src in $sources; do
    (cd "$work/dl" && "${apt[@]}" source --download-only "$src" >&2)
    local version="${src#*=}"
    dpkg-source -x "$work/dl/${src%%=*}_${version#*:}.dsc" "$work/src/${src%%=*}" >&2
  done

  local flags="-O1 -g1 -fsanitize=thread -fno-omit-frame-pointer"
  local launcher=()
  kscore_ccache_args launcher
  local common=(-G Ninja -DCMAKE_BUILD_TYPE=None -DCMAKE_C_FLAGS="$flags"
    -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_SHARED_LINKER_FLAGS=-fsanitize=thread "${launcher[@]}")
  # The options Debian's rules use for each, shared libraries only.
  cmake -S "$work/src/abseil" -B "$work/b/abseil" "${common[@]}" \
    -DCMAKE_CXX_STANDARD=17 -DBUILD_SHARED_LIBS=ON -DBUILD_TESTING=OFF >&2
  ninja -C "$work/b/abseil" >&2
  cmake -S "$work/src/protobuf" -B "$work/b/protobuf" "${common[@]}" \
    -Dprotobuf_BUILD_SHARED_LIBS=ON -Dprotobuf_BUILD_TESTS=OFF \
    -Dprotobuf_BUILD_PROTOC_BINARIES=OFF -Dprotobuf_WITH_ZLIB=ON >&2
  ninja -C "$work/b/protobuf" libprotobuf >&2
  # gRPC's CMake wants libprotoc's path even with code generation off.
  local protoc_lib="" candidate
  for candidate in /usr/lib/*/libprotoc.so.* /usr/lib/libprotoc.so.*; do
    if [ -f "$candidate" ]; then protoc_lib="$candidate"; break; fi
  done
  cmake -S "$work/src/grpc" -B "$work/b/grpc" "${common[@]}" \
    -DBUILD_SHARED_LIBS=ON -DgRPC_BUILD_TESTS=OFF -DgRPC_BUILD_CODEGEN=OFF \
    -DgRPC_BUILD_CSHARP_EXT=OFF -DgRPC_BACKWARDS_COMPATIBILITY_MODE=OFF \
    -DgRPC_ABSL_PROVIDER=package -DgRPC_CARES_PROVIDER=package \
    -DgRPC_PROTOBUF_PROVIDER=package -DgRPC_RE2_PROVIDER=package \
    -DgRPC_SSL_PROVIDER=package -DgRPC_ZLIB_PROVIDER=package \
    -DProtobuf_PROTOC_LIBRARY="$protoc_lib" >&2
  ninja -C "$work/b/grpc" grpc++ >&2
  # Only the runtime libraries: the headers are the installed ones.
  find "$work/b" -name 'lib*.so.*' \( -type f -o -type l \) -exec cp -a {} "$prefix/lib/" \;
}
