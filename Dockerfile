# syntax=docker/dockerfile:1
# draco controller image.
#
#   docker build -t draco:dev --build-arg VERSION=0.1.0 --build-arg REVISION=$(git rev-parse HEAD) .
#
# Stage "build" builds draco exactly as the README does (scripts/install-deps.sh, then CMake with
# Ninja), in Release mode and only the draco target. Stage "runtime" is Debian bookworm-slim plus
# exactly the shared libraries draco loads; e2e/tests/dockerfile_runtime_libs_test.sh checks
# RUNTIME_PACKAGES against `ldd` of a built draco and runs draco from a throw-away root holding
# only the base system and these packages, as UID 65532 on a read-only root.
#
# The runtime stage takes /out/draco from stage "binary", the stage DRACO_BINARY_STAGE names:
# "build" (the default: compiled from source, as above) or "prebuilt": a draco built beforehand
# on a Debian 12 host (the runtime base's ABI), stripped, taken from the build context at
# DRACO_BINARY (default .draco-image/draco); nothing is compiled:
#
#   mkdir -p .draco-image && strip --strip-unneeded -o .draco-image/draco build/controller/draco
#   docker build -t draco:dev --build-arg DRACO_BINARY_STAGE=prebuilt --build-arg REVISION=... .
#
# Only the stage named is built. buildah 1.28 resolves a stage named by an ARG only when the value
# is given: with buildah, pass --build-arg DRACO_BINARY_STAGE=build (or prebuilt) explicitly.
# BASE_IMAGE (default debian) is the repository of both bases, ${BASE_IMAGE}:${DEBIAN_RELEASE} and
# ${BASE_IMAGE}:${DEBIAN_RELEASE}-slim. e2e/cluster/images/draco-image.sh builds this file with
# buildah (no Docker engine, no registry) on bases debootstrap made (base-image.sh,
# BASE_IMAGE=localhost/debian) and writes an OCI archive for containerd.

ARG DEBIAN_RELEASE=bookworm
ARG BASE_IMAGE=debian
ARG DRACO_BINARY_STAGE=build

FROM ${BASE_IMAGE}:${DEBIAN_RELEASE} AS build
COPY scripts/install-deps.sh /src/scripts/install-deps.sh
# DRACO_DEPS_GO=0: no Go (the control plane and the oracles are test tools; draco is C++ only).
RUN DRACO_DEPS_GO=0 /src/scripts/install-deps.sh && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
# The source revision for `draco --version`, draco_build_info and the User-Agent (the context has
# no .git).
ARG REVISION=unknown
RUN cmake -S . -B build -G Ninja -DDRACO_WERROR=ON -DCMAKE_BUILD_TYPE=Release \
      -DBUILD_TESTING=OFF -DDRACO_BUILD_BENCHMARKS=OFF -DDRACO_REVISION="${REVISION}" \
 && cmake --build build --target draco \
 && bin=$(find build -type f -name draco -perm -u+x | head -n 1) \
 && test -n "$bin" \
 && install -D -m 0755 "$bin" /out/draco \
 && strip --strip-unneeded /out/draco

FROM scratch AS prebuilt
ARG DRACO_BINARY=.draco-image/draco
COPY ${DRACO_BINARY} /out/draco

FROM ${DRACO_BINARY_STAGE} AS binary

FROM ${BASE_IMAGE}:${DEBIAN_RELEASE}-slim AS runtime
# One Debian package per shared library draco loads that the slim base image lacks (libc6,
# libstdc++6, libgcc-s1 and zlib1g are already there). Keep in step with the binary: the
# dockerfile_runtime_libs test fails on a missing or an unused package.
ARG RUNTIME_PACKAGES="\
    libbrotli1 \
    libcivetweb1 \
    libcpprest2.10 \
    libfmt9 \
    libprometheus-cpp-core1.0 \
    libre2-9 \
    libspdlog1.10 \
    libssl3 \
    libyaml-cpp0.7"
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends ${RUNTIME_PACKAGES} \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb /var/cache/debconf/*-old \
      /var/log/apt /var/log/dpkg.log \
 && groupadd --system --gid 65532 nonroot \
 && useradd --system --uid 65532 --gid 65532 --no-create-home --home-dir /nonexistent \
      --shell /usr/sbin/nologin nonroot

COPY --from=binary /out/draco /usr/local/bin/draco

ARG BASE_IMAGE
ARG DEBIAN_RELEASE
ARG VERSION=0.1.0
ARG REVISION=unknown
ARG CREATED=unknown
LABEL org.opencontainers.image.title="draco" \
      org.opencontainers.image.description="Kubernetes Dynamic Resource Allocation claim controller" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.created="${CREATED}" \
      org.opencontainers.image.base.name="${BASE_IMAGE}:${DEBIAN_RELEASE}-slim"

# draco writes nothing to its root filesystem (logs go to stderr); /tmp is the only scratch path,
# an emptyDir in the Helm chart, so the container runs with readOnlyRootFilesystem: true.
ENV TMPDIR=/tmp
USER 65532:65532
WORKDIR /
EXPOSE 8080 8081
ENTRYPOINT ["/usr/local/bin/draco"]
CMD ["run"]
