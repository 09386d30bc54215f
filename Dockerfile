# syntax=docker/dockerfile:1
# One image, both programs: /usr/local/bin/scorer (the default entrypoint) and
# /usr/local/bin/shim. deploy/ runs each by setting `command`.
#
#   docker build -t kscore:dev .
#   podman build --format docker -t kscore:dev .   (docker format: keeps SHELL)
#
# hack/image.sh builds it with podman on a machine with no image registry in
# reach, and tests/e2e/image.sh runs what it builds.
#
# The build stage uses the same package list and build function as hack/
# (hack/lib/deps.sh: kscore_install_deps, kscore_build), so the image builds
# what `hack/test.sh` tests.

FROM debian:12 AS build
SHELL ["/bin/bash", "-o", "pipefail", "-c"]
WORKDIR /src
# The dependency layer only changes when the package list does. Only the
# compilers and libraries: the linters and test tools stay out.
COPY hack/lib/deps.sh hack/lib/deps.sh
RUN source hack/lib/deps.sh && kscore_install_deps build \
 && apt-get install -y -qq --no-install-recommends ccache >/dev/null \
 && rm -rf /var/lib/apt/lists/*
COPY . .
# Only the two programs. The compiler cache outlives the build (a cache
# mount, or the host's cache when hack/image.sh passes it as a volume and
# names it in KSCORE_CCACHE_DIR), so a build recompiles only what the cache
# lacks; the build tree goes, so the layer holds just the two stripped
# binaries.
ARG KSCORE_CCACHE_DIR=/root/.cache/ccache
RUN --mount=type=cache,target=/root/.cache/ccache \
    rm -rf build && source hack/lib/deps.sh \
 && CCACHE_DIR="$KSCORE_CCACHE_DIR" KSCORE_NINJA_TARGETS="scorer shim" kscore_build /src \
 && mkdir -p /out \
 && strip --strip-unneeded -o /out/scorer build/bin/scorer \
 && strip --strip-unneeded -o /out/shim build/bin/shim \
 && rm -rf build

FROM debian:12-slim AS runtime
# Only the shared libraries the two binaries load (their DT_NEEDED entries,
# mapped to Debian 12 packages; apt brings in the rest of the closure).
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      libabsl20220623 \
      libcurl4 \
      libfmt9 \
      libgrpc++1.51 \
      libgrpc29 \
      libjemalloc2 \
      libprometheus-cpp-core1.0 \
      libprometheus-cpp-pull1.0 \
      libprotobuf32 \
      libssl3 \
      libspdlog1.10 \
      libstdc++6 \
      libyaml-cpp0.7 \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --system --gid 65532 kscore \
 && useradd --system --uid 65532 --gid 65532 --no-create-home --home-dir /nonexistent \
      --shell /usr/sbin/nologin kscore
COPY --from=build /out/scorer /out/shim /usr/local/bin/
COPY examples/config/concentrate.yaml /etc/kscore/config.yaml
# Numeric, so runAsNonRoot can check it.
USER 65532:65532
# scorer: gRPC 50051, /metrics 9090. shim: HTTPS /healthz /readyz /metrics 10259.
EXPOSE 50051 9090 10259
ENTRYPOINT ["/usr/local/bin/scorer"]
CMD ["--config=/etc/kscore/config.yaml"]
