// The floor of a chain of kernels: what a decode step of K kernels costs when
// the kernels do no work. A CUDA graph of K kernels in one stream, each of
// which does only the programmatic-launch handshake (AllowNextKernel, then
// WaitForPreviousKernel, as every kernel of the step does) and one store per
// block, at several grid shapes; launched with programmatic dependent launch
// (LaunchOverlapped, the step's kernels) and plainly (a full dependency, as
// into cuBLAS's GEMMs). Optionally each block first spins for a fixed time
// after its wait (the step's kernels do their work there), so the handoff
// between two kernels shows as (per-kernel time - spin). Per shape: µs per
// kernel from graphs of 1 and K kernels ((T(K) - T(1)) / (K - 1)), 200
// replays each. Prints a table and JSON lines.
//
//   tandem-chain-bench [out.jsonl]    (bash scripts/gpu-session.sh chainbench)
#include <cuda_runtime.h>

#include <cstdio>
#include <string>
#include <vector>

#include "core/model/cuda/bench_support.cuh"
#include "core/model/cuda/kernel_math.cuh"

namespace {

using tandem::bench::Check;

constexpr int kKernels = 65;  // GPT-2 small's one-row decode step
constexpr int kReplays = 200;

// The handshake, `spin_ns` of busy waiting after the wait (0: none), and
// block b's store of `step` to sink[b].
__global__ void Link(int* sink, int step, long long spin_ns) {
  tandem::kernel::AllowNextKernel();
  tandem::kernel::WaitForPreviousKernel();
  if (spin_ns > 0) {
    long long start = 0, now = 0;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do {
      asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    } while (now - start < spin_ns);
  }
  if (threadIdx.x == 0) sink[blockIdx.x] = step;
}

struct Shape {
  int blocks, threads;
};

// µs per replay of a graph of `kernels` Link launches.
double ChainMicroseconds(cudaStream_t stream, int* sink, Shape shape, bool overlap,
                         long long spin_ns, int kernels) {
  return tandem::bench::GraphMicroseconds(
      stream,
      [&] {
        for (int k = 0; k < kernels; ++k) {
          Check(tandem::kernel::Launch(overlap, Link, dim3(shape.blocks), dim3(shape.threads),
                                       0, stream, sink, k, spin_ns),
                "Link");
        }
      },
      kReplays);
}

}  // namespace

int main(int argc, char** argv) {
  FILE* json = argc > 1 ? std::fopen(argv[1], "a") : nullptr;
  cudaStream_t stream;
  Check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream");
  int* sink;
  Check(cudaMalloc(&sink, 4096 * sizeof(int)), "cudaMalloc");
  const int sms = tandem::kernel::MultiprocessorCount();
  // One warp; a cluster-kernel-like grid; a block per multiprocessor; a
  // full wave of 512-thread blocks (4 per multiprocessor); the attention
  // kernel's grid at N=64 (768 blocks of 128 threads).
  const std::vector<Shape> shapes = {{1, 32}, {8, 128}, {sms, 256}, {4 * sms, 512}, {768, 128}};
  std::printf("%-8s %-8s %-10s %-8s %12s %12s %14s\n", "blocks", "threads", "launch",
              "spin ns", "1 kernel us", "65 kernels us", "us per kernel");
  for (const Shape& shape : shapes) {
    for (bool overlap : {true, false}) {
      for (long long spin_ns : {0LL, 2000LL}) {
        const double one = ChainMicroseconds(stream, sink, shape, overlap, spin_ns, 1);
        const double chain = ChainMicroseconds(stream, sink, shape, overlap, spin_ns, kKernels);
        const double per_kernel = (chain - one) / (kKernels - 1);
        const char* launch = overlap ? "pdl" : "plain";
        std::printf("%-8d %-8d %-10s %-8lld %12.2f %12.2f %14.3f\n", shape.blocks,
                    shape.threads, launch, spin_ns, one, chain, per_kernel);
        if (json != nullptr) {
          std::fprintf(json,
                       "{\"bench\":\"chain\",\"blocks\":%d,\"threads\":%d,\"launch\":\"%s\","
                       "\"spin_ns\":%lld,\"one_kernel_us\":%.3f,\"kernels\":%d,"
                       "\"chain_us\":%.3f,\"us_per_kernel\":%.4f}\n",
                       shape.blocks, shape.threads, launch, spin_ns, one, kKernels, chain,
                       per_kernel);
        }
      }
    }
  }
  if (json != nullptr) std::fclose(json);
  return 0;
}
