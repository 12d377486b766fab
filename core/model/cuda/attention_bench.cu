// Microbenchmark of the decode attention kernel's launch shapes at GPT-2
// small's attention (12 heads of 64, bf16): for batches of 64, 128 and 256
// rows and contexts of 164, 320 and 1,000 positions, the shape
// DecodeAttentionShapeFor picks against 256- and 128-thread blocks with the
// context in one or two blocks. Each case runs as a CUDA graph over 12 layers
// of distinct caches (up to 9.7 GB, so no layer's K/V stays in L2), 20
// replays; prints a table (µs per launch, K/V bytes read per second) and JSON
// lines, and checks every shape's output against the default's.
//
//   tandem-attention-bench [out.jsonl]    (bash scripts/gpu-session.sh attnbench)
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "core/model/cuda/bench_support.cuh"
#include "core/model/cuda/decode_kernels.h"

namespace {

using tandem::bench::AllocBf16;
using tandem::bench::Check;

using tandem::DecodeAttentionShape;
using bf16 = __nv_bfloat16;

constexpr int kLayers = 12, kHeads = 12, kHeadDim = 64, kMaxBatch = 256, kMaxContext = 1025;
constexpr int kReplays = 20;

std::string Name(const DecodeAttentionShape& s) {
  return "block " + std::to_string(s.threads) + " split " + std::to_string(s.splits);
}

float ToFloat(uint16_t bits) {
  const uint32_t word = static_cast<uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &word, sizeof(f));
  return f;
}

}  // namespace

int main(int argc, char** argv) {
  std::FILE* json = argc > 1 ? std::fopen(argv[1], "a") : nullptr;
  const size_t cache = size_t{kMaxBatch} * kHeads * kMaxContext * kHeadDim;
  std::vector<bf16*> keys, values, qkvs;
  for (int l = 0; l < kLayers; ++l) {
    keys.push_back(AllocBf16(cache, 11 + l));
    values.push_back(AllocBf16(cache, 101 + l));
    qkvs.push_back(AllocBf16(size_t{kMaxBatch} * 3 * kHeads * kHeadDim, 1001 + l));
  }
  bf16* out;
  Check(cudaMalloc(&out, size_t{kMaxBatch} * kHeads * kHeadDim * sizeof(bf16)), "cudaMalloc");
  int64_t *slots, *positions;
  Check(cudaMalloc(&slots, kMaxBatch * sizeof(int64_t)), "cudaMalloc");
  Check(cudaMalloc(&positions, kMaxBatch * sizeof(int64_t)), "cudaMalloc");
  std::vector<int64_t> host_slots(kMaxBatch);
  for (int b = 0; b < kMaxBatch; ++b) host_slots[b] = b;
  Check(cudaMemcpy(slots, host_slots.data(), kMaxBatch * sizeof(int64_t), cudaMemcpyHostToDevice),
        "cudaMemcpy");
  cudaStream_t stream;
  Check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
  cudaEvent_t start, stop;
  Check(cudaEventCreate(&start), "cudaEventCreate");
  Check(cudaEventCreate(&stop), "cudaEventCreate");
  const float scale = 0.125f;
  std::printf("%6s %6s  %-22s %9s %8s %10s\n", "batch", "ctx", "shape", "us", "TB/s", "max diff");
  for (int batch : {64, 128, 256}) {
    for (int context : {164, 320, 1000}) {
      std::vector<int64_t> host_positions(kMaxBatch, context - 1);
      Check(cudaMemcpy(positions, host_positions.data(), kMaxBatch * sizeof(int64_t),
                       cudaMemcpyHostToDevice),
            "cudaMemcpy");
      std::vector<DecodeAttentionShape> shapes = {tandem::DecodeAttentionShapeFor(batch, kHeads)};
      for (int splits : {1, 2}) {
        for (int threads : {256, 128}) shapes.push_back({splits, threads});
      }
      std::vector<uint16_t> reference, got(static_cast<size_t>(batch) * kHeads * kHeadDim);
      for (size_t i = 0; i < shapes.size(); ++i) {
        const DecodeAttentionShape& shape = shapes[i];
        auto launch = [&](int l) {
          Check(tandem::LaunchDecodeAttentionShaped(
                    shape, tandem::KernelDType::kBFloat16, qkvs[l], keys[l], values[l], slots,
                    positions, /*positions_by_slot=*/false, out, batch, kHeads, kHeads,
                    kHeadDim, kMaxContext, scale, stream),
                "attention");
        };
        launch(0);
        Check(cudaStreamSynchronize(stream), "attention");
        Check(cudaMemcpy(got.data(), out, got.size() * sizeof(uint16_t), cudaMemcpyDeviceToHost),
              "cudaMemcpy");
        if (i == 0) reference = got;
        float diff = 0.0f;
        for (size_t k = 0; k < got.size(); ++k) {
          diff = std::fmax(diff, std::fabs(ToFloat(got[k]) - ToFloat(reference[k])));
        }
        cudaGraph_t graph;
        cudaGraphExec_t exec;
        Check(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal), "capture");
        for (int l = 0; l < kLayers; ++l) launch(l);
        Check(cudaStreamEndCapture(stream, &graph), "capture");
        Check(cudaGraphInstantiate(&exec, graph, 0), "instantiate");
        Check(cudaGraphLaunch(exec, stream), "replay");  // warm-up
        Check(cudaEventRecord(start, stream), "record");
        for (int r = 0; r < kReplays; ++r) Check(cudaGraphLaunch(exec, stream), "replay");
        Check(cudaEventRecord(stop, stream), "record");
        Check(cudaEventSynchronize(stop), "sync");
        float ms = 0;
        Check(cudaEventElapsedTime(&ms, start, stop), "elapsed");
        const double us = 1e3 * ms / (kReplays * kLayers);
        const double bytes = 2.0 * batch * kHeads * context * kHeadDim * sizeof(bf16);
        const std::string name = (i == 0 ? "default: " : "") + Name(shape);
        std::printf("%6d %6d  %-22s %9.2f %8.2f %10.2e\n", batch, context, name.c_str(), us,
                    bytes / us / 1e6, diff);
        if (json != nullptr) {
          std::fprintf(json,
                       "{\"batch\": %d, \"context\": %d, \"shape\": \"%s\", \"us\": %.3f, "
                       "\"tb_per_s\": %.3f, \"max_diff\": %.3e}\n",
                       batch, context, name.c_str(), us, bytes / us / 1e6, diff);
        }
        Check(cudaGraphExecDestroy(exec), "destroy");
        Check(cudaGraphDestroy(graph), "destroy");
      }
    }
  }
  if (json != nullptr) std::fclose(json);
  return 0;
}
