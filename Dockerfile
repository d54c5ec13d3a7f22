# The capsim container image: the `capsim` command, its catalog, validation data and examples.
# `capsim sweep` names this image (capsim:VERSION) in the Indexed Job it writes:
#   docker build -t capsim:0.1.0 --build-arg CAPSIM_GIT_COMMIT=$(git rev-parse --short=12 HEAD) .
# Debian packages only, on Debian bookworm, as ./setup.sh builds it. Not built in CI (no
# container runtime there); tests/ship/dockerfile_test.sh checks its package lists instead.

FROM debian:bookworm AS build
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      build-essential cmake ninja-build pkg-config \
      libboost-graph-dev libeigen3-dev libsimgrid-dev libyaml-cpp-dev libsqlite3-dev \
      libcli11-dev libfmt-dev nlohmann-json3-dev libpugixml-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
ARG CAPSIM_GIT_COMMIT=unknown
# The command line only: no Qt (reports are .md, .csv or .json in the image), tests or benchmarks.
RUN cmake -S . -B /build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=/usr \
      -DCAPSIM_BUILD_GUI=OFF -DCAPSIM_BUILD_TESTS=OFF -DCAPSIM_BUILD_BENCH=OFF \
      -DCAPSIM_GIT_COMMIT="${CAPSIM_GIT_COMMIT}" \
 && cmake --build /build --target capsim \
 && DESTDIR=/install cmake --install /build --component capsim --strip

FROM debian:bookworm
# Exactly setup.sh's runtime_packages.
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      libsimgrid3.32 libyaml-cpp0.7 libsqlite3-0 libfmt9 libpugixml1v5 \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /install/ /
# The user by number: the kubelet refuses runAsNonRoot for an image whose USER is a name (it
# cannot tell whether that is root), and capsim's pods name the same ids (runAsUser/runAsGroup,
# scenarios/include/capsim/scenarios/pod_security.hpp).
RUN groupadd --gid 10001 capsim \
 && useradd --create-home --uid 10001 --gid 10001 capsim
USER 10001:10001
WORKDIR /home/capsim
# The data is found beside the executable (/usr/bin/capsim -> /usr/share/capsim).
RUN capsim --version && capsim size /usr/share/capsim/examples/lora-7b-one-node.yaml > /dev/null
CMD ["capsim", "--help"]
