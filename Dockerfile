# CPU image of tandem-server on Debian 12 (the GPU image, built against CUDA
# LibTorch, is not written yet). Not built in CI: this workplace has no Docker
# engine.
#   docker build -t tandem . && docker run -p 50051:50051 -p 9400:9400 tandem
FROM debian:12 AS build
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates git nodejs npm make
WORKDIR /src
COPY . .
RUN ./scripts/install-deps.sh \
 && cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DTANDEM_BUILD_TESTS=OFF \
 && cmake --build build -j"$(nproc)" --target tandem-server tandem-cli

FROM debian:12-slim
RUN apt-get update && apt-get install -y --no-install-recommends \
      libtorch1.13 libgrpc++1.51 libprotobuf32 libre2-9 libprometheus-cpp-core1.0 \
      libcpp-httplib0.11 libopenblas0-openmp ca-certificates \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /src/build/bin/tandem-server /src/build/bin/tandem-cli /usr/local/bin/
RUN useradd --system --uid 10001 --no-create-home tandem
USER 10001
EXPOSE 50051 9400
# Healthy once the model is loaded and the gRPC service answers.
HEALTHCHECK --interval=10s --timeout=5s --start-period=300s \
  CMD ["/usr/local/bin/tandem-cli", "info", "--server=127.0.0.1:50051", "--timeout=3s"]
ENTRYPOINT ["/usr/local/bin/tandem-server"]
CMD ["--listen=0.0.0.0:50051", "--metrics_listen=0.0.0.0:9400"]
