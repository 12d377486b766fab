// Microbenchmark of the decode attention kernel's launch shapes at GPT-2
// small's attention (12 heads of 64, bf16): for batches of 64, 128 and 256
// rows and contexts of 164, 320 and 1,000 positions, the shape
// DecodeAttentionShapeFor picks against 256- and 128-thread blocks with the
// context in one or two blocks. Each case runs as a CUDA graph over 12 layers
// of distinct caches (up to 9.7 GB, so no layer's K/V stays in L2), 20
// replays; prints a table (µs per launch, K/V bytes read per second) and JSON
// lines, and checks every shape's output against the default's. Two more
// rows per case give the read ceiling of the access pattern: the same slices
// read with no math, and the same number of bytes read contiguously.
//
//   tandem-attention-bench [out.jsonl]    (bash scripts/gpu-session.sh attnbench)
//
// Slots are rows and positions are read by slot, as the decode step reads them.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <utility>
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

float ToFloat(uint16_t bits) {
  const uint32_t word = static_cast<uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &word, sizeof(f));
  return f;
}

// The read ceiling of attention's access pattern: block (h, b) reads the
// first `length` positions of slot b's head h in K and V (the bytes the
// attention kernel reads, 16 at a time, four loads in flight per thread) and
// does no math; one word per block keeps the loads.
__global__ void ReadSlicesKernel(const uint4* __restrict__ keys, const uint4* __restrict__ values,
                                 int heads, int max_context, int length, uint32_t* sink) {
  constexpr int kPerRow = kHeadDim * sizeof(bf16) / sizeof(uint4);
  const size_t head = (static_cast<size_t>(blockIdx.y) * heads + blockIdx.x) * max_context;
  const uint4* k = keys + head * kPerRow;
  const uint4* v = values + head * kPerRow;
  const int n = length * kPerRow;
  uint32_t acc = 0;
  for (int i = threadIdx.x; i < n; i += 4 * blockDim.x) {
    uint4 a[4], c[4];
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const int at = min(i + j * static_cast<int>(blockDim.x), n - 1);
      a[j] = __ldg(k + at);
      c[j] = __ldg(v + at);
    }
#pragma unroll
    for (int j = 0; j < 4; ++j) acc ^= a[j].x ^ a[j].y ^ a[j].z ^ a[j].w ^ c[j].x ^ c[j].w;
  }
  if (acc == 0x9e3779b9u) sink[blockIdx.y * gridDim.x + blockIdx.x] = acc;
}

// The same number of bytes read from one contiguous region per tensor.
__global__ void ReadContiguousKernel(const uint4* __restrict__ keys,
                                     const uint4* __restrict__ values, size_t n, uint32_t* sink) {
  uint32_t acc = 0;
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
       i += size_t{gridDim.x} * blockDim.x) {
    const uint4 a = __ldg(keys + i), c = __ldg(values + i);
    acc ^= a.x ^ a.y ^ a.z ^ a.w ^ c.x ^ c.w;
  }
  if (acc == 0x9e3779b9u) sink[blockIdx.x] = acc;
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
  const float scale = 0.125f;
  uint32_t* sink;
  Check(cudaMalloc(&sink, size_t{kMaxBatch} * kHeads * sizeof(uint32_t)), "cudaMalloc");
  // µs per launch of `launch(l)` for l = 0 .. kLayers - 1, captured as one
  // CUDA graph and replayed kReplays times after warm-up replays.
  auto TimeLayers = [&](const std::function<void(int)>& launch) {
    return tandem::bench::GraphMicroseconds(
               stream, [&] { for (int l = 0; l < kLayers; ++l) launch(l); }, kReplays) /
           kLayers;
  };
  // A table row and a JSON line; TB/s counts the K/V bytes attention reads.
  auto report = [&](int batch, int context, const std::string& name, double us, float diff) {
    const double bytes = 2.0 * batch * kHeads * context * kHeadDim * sizeof(bf16);
    std::printf("%6d %6d  %-22s %9.2f %8.2f %10.2e\n", batch, context, name.c_str(), us,
                bytes / us / 1e6, diff);
    if (json != nullptr) {
      std::fprintf(json,
                   "{\"batch\": %d, \"context\": %d, \"shape\": \"%s\", \"us\": %.3f, "
                   "\"tb_per_s\": %.3f, \"max_diff\": %.3e}\n",
                   batch, context, name.c_str(), us, bytes / us / 1e6, diff);
    }
  };
  std::printf("%6s %6s  %-22s %9s %8s %10s\n", "batch", "ctx", "shape", "us", "TB/s", "max diff");
  // ATTENTION_BENCH_CASES="256x164,64x164" runs only those (batch x context) cases.
  const char* only = std::getenv("ATTENTION_BENCH_CASES");
  for (int batch : {64, 128, 256}) {
    for (int context : {164, 320, 1000}) {
      const std::string name = std::to_string(batch) + "x" + std::to_string(context);
      if (only != nullptr && ("," + std::string(only) + ",").find("," + name + ",") ==
                                 std::string::npos) {
        continue;
      }
      std::vector<int64_t> host_positions(kMaxBatch, context - 1);
      Check(cudaMemcpy(positions, host_positions.data(), kMaxBatch * sizeof(int64_t),
                       cudaMemcpyHostToDevice),
            "cudaMemcpy");
      std::vector<DecodeAttentionShape> shapes = {
          tandem::DecodeAttentionShapeFor(batch, kHeads, kMaxContext)};
      for (int splits : {1, 2}) {
        for (int threads : {256, 128}) shapes.push_back({splits, threads});
      }
      for (int threads : {256, 128}) shapes.push_back({1, threads, /*preload=*/true});
      const std::pair<int, int> depths[] = {{4, 3}, {6, 2}, {3, 4}};
      for (const auto& [ahead, blocks] : depths) {
        for (int threads : {256, 128}) shapes.push_back({1, threads, false, ahead, blocks});
      }
      std::vector<uint16_t> reference, got(static_cast<size_t>(batch) * kHeads * kHeadDim);
      for (size_t i = 0; i < shapes.size(); ++i) {
        const DecodeAttentionShape& shape = shapes[i];
        auto launch = [&](int l) {
          Check(tandem::LaunchDecodeAttentionShaped(
                    shape, tandem::KernelDType::kBFloat16, qkvs[l], keys[l], values[l], slots,
                    positions, /*positions_by_slot=*/true, out, batch, kHeads, kHeads,
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
        const std::string name = tandem::DecodeAttentionShapeName(shape);
        report(batch, context, (i == 0 ? "default: " : "") + name, TimeLayers(launch), diff);
      }
      // What the same bytes cost to read without attention's math: in the
      // same slices, and from one contiguous region.
      auto k16 = [&](int l) { return reinterpret_cast<const uint4*>(keys[l]); };
      auto v16 = [&](int l) { return reinterpret_cast<const uint4*>(values[l]); };
      const double slices_us = TimeLayers([&](int l) {
        ReadSlicesKernel<<<dim3(kHeads, batch), 256, 0, stream>>>(k16(l), v16(l), kHeads,
                                                                  kMaxContext, context, sink);
        Check(cudaGetLastError(), "read slices");
      });
      report(batch, context, "read slices only", slices_us, 0.0f);
      const size_t contiguous = static_cast<size_t>(batch) * kHeads * context * kHeadDim *
                                sizeof(bf16) / sizeof(uint4);
      const double contiguous_us = TimeLayers([&](int l) {
        ReadContiguousKernel<<<4 * 132, 512, 0, stream>>>(k16(l), v16(l), contiguous, sink);
        Check(cudaGetLastError(), "read contiguous");
      });
      report(batch, context, "read contiguous", contiguous_us, 0.0f);
    }
  }
  if (json != nullptr) std::fclose(json);
  return 0;
}
