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

ARG DEBIAN_RELEASE=bookworm

FROM debian:${DEBIAN_RELEASE} AS build
COPY scripts/install-deps.sh /src/scripts/install-deps.sh
RUN /src/scripts/install-deps.sh && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN cmake -S . -B build -G Ninja -DDRACO_WERROR=ON -DCMAKE_BUILD_TYPE=Release \
      -DBUILD_TESTING=OFF -DDRACO_BUILD_BENCHMARKS=OFF \
 && cmake --build build --target draco \
 && bin=$(find build -type f -name draco -perm -u+x | head -n 1) \
 && test -n "$bin" \
 && install -D -m 0755 "$bin" /out/draco \
 && strip --strip-unneeded /out/draco

FROM debian:${DEBIAN_RELEASE}-slim AS runtime
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

COPY --from=build /out/draco /usr/local/bin/draco

ARG VERSION=0.1.0
ARG REVISION=unknown
ARG CREATED=unknown
LABEL org.opencontainers.image.title="draco" \
      org.opencontainers.image.description="Kubernetes Dynamic Resource Allocation claim controller" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.created="${CREATED}" \
      org.opencontainers.image.base.name="debian:${DEBIAN_RELEASE}-slim"

# draco writes nothing to its root filesystem (logs go to stderr); /tmp is the only scratch path,
# an emptyDir in the Helm chart, so the container runs with readOnlyRootFilesystem: true.
ENV TMPDIR=/tmp
USER 65532:65532
WORKDIR /
EXPOSE 8080 8081
ENTRYPOINT ["/usr/local/bin/draco"]
CMD ["run"]
