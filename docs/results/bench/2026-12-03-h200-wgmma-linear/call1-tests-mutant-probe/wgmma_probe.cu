// Probe: one CTA, D[64 x N] = A[64 x K] * B[N x K]^T through wgmma from the
// no-swizzle layout of wgmma.cuh; both orders of the descriptor's offsets.
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <vector>
#include <cuda_bf16.h>
#include "core/model/cuda/wgmma.cuh"
using namespace tandem::kernel;

template <int kN>
__global__ void Probe(const __nv_bfloat16* a, const __nv_bfloat16* b, float* d_out, int K, int swap) {
  extern __shared__ uint4 smem[];
  uint4* sa = smem;                 // [K/8][64]
  uint4* sb = smem + (K / 8) * 64;  // [K/8][kN]
  const int t = threadIdx.x;
  for (int i = t; i < 64 * K / 8; i += 128) {
    const int r = i / (K / 8), c = i % (K / 8);
    sa[c * 64 + r] = *reinterpret_cast<const uint4*>(a + r * K + c * 8);
  }
  for (int i = t; i < kN * K / 8; i += 128) {
    const int r = i / (K / 8), c = i % (K / 8);
    sb[c * kN + r] = *reinterpret_cast<const uint4*>(b + r * K + c * 8);
  }
  FenceProxyAsync();
  __syncthreads();
  float d[kN / 2];
#pragma unroll
  for (int i = 0; i < kN / 2; ++i) d[i] = 0.0f;
  WgmmaFence();
  for (int s = 0; s < K / 16; ++s) {
    const uint32_t la = 64 * 16, lb = kN * 16;
    const uint64_t da = swap ? MatrixDescriptor(sa + s * 2 * 64, 128, la) : MatrixDescriptor(sa + s * 2 * 64, la, 128);
    const uint64_t db = swap ? MatrixDescriptor(sb + s * 2 * kN, 128, lb) : MatrixDescriptor(sb + s * 2 * kN, lb, 128);
    Wgmma<__nv_bfloat16, kN>::Run(d, da, db, s > 0 ? 1 : 0);
  }
  WgmmaCommit();
  WgmmaWait<0>();
  FenceAccumulators(d);
  const int w = t / 32, l = t % 32;
#pragma unroll
  for (int i = 0; i < kN / 8; ++i) {
    const int row = 16 * w + l / 4, col = 8 * i + 2 * (l % 4);
    d_out[row * kN + col] = d[4 * i];
    d_out[row * kN + col + 1] = d[4 * i + 1];
    d_out[(row + 8) * kN + col] = d[4 * i + 2];
    d_out[(row + 8) * kN + col + 1] = d[4 * i + 3];
  }
}

template <int kN>
void Run(int K) {
  std::vector<__nv_bfloat16> ha(64 * K), hb(kN * K);
  std::vector<float> fa(64 * K), fb(kN * K);
  srand(kN * 1000 + K);
  for (int i = 0; i < 64 * K; ++i) { ha[i] = __float2bfloat16((rand() % 17 - 8) / 8.0f); fa[i] = __bfloat162float(ha[i]); }
  for (int i = 0; i < kN * K; ++i) { hb[i] = __float2bfloat16((rand() % 17 - 8) / 8.0f); fb[i] = __bfloat162float(hb[i]); }
  __nv_bfloat16 *da, *db; float* dd;
  cudaMalloc(&da, ha.size() * 2); cudaMalloc(&db, hb.size() * 2); cudaMalloc(&dd, 64 * kN * 4);
  cudaMemcpy(da, ha.data(), ha.size() * 2, cudaMemcpyHostToDevice);
  cudaMemcpy(db, hb.data(), hb.size() * 2, cudaMemcpyHostToDevice);
  const int smem = (64 + kN) * K * 2;
  cudaFuncSetAttribute(Probe<kN>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  for (int swap = 0; swap < 2; ++swap) {
    cudaMemset(dd, 0, 64 * kN * 4);
    Probe<kN><<<1, 128, smem>>>(da, db, dd, K, swap);
    cudaError_t e = cudaDeviceSynchronize();
    std::vector<float> hd(64 * kN);
    cudaMemcpy(hd.data(), dd, hd.size() * 4, cudaMemcpyDeviceToHost);
    double worst = 0; int bad = 0;
    for (int r = 0; r < 64; ++r) for (int c = 0; c < kN; ++c) {
      double ref = 0; for (int k = 0; k < K; ++k) ref += (double)fa[r * K + k] * fb[c * K + k];
      double err = std::fabs(ref - hd[r * kN + c]);
      if (err > worst) worst = err;
      if (err > 1e-3) ++bad;
    }
    std::printf("N %3d K %4d swap %d: %s, max error %.4g, %d of %d wrong\n", kN, K, swap,
                cudaGetErrorString(e), worst, bad, 64 * kN);
  }
  cudaFree(da); cudaFree(db); cudaFree(dd);
}

int main() {
  Run<24>(128); Run<48>(384); Run<72>(384); Run<96>(128); Run<144>(384); Run<192>(384);
  return 0;
}
