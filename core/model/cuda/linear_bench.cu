// Microbenchmark of the batched decode step's projections at GPT-2 small's
// shapes (bf16): what the step runs above 32 rows (cuBLASLt with the bias or
// bias + GELU epilogue and its first heuristic choice, which is what
// at::addmm / at::_addmm_activation ask for, though with PyTorch's own
// workspace limit, so its choice can differ: the step's Nsight Compute
// profile names the kernel it runs) against every other algorithm
// cuBLASLt's heuristic offers for the same problem (up to kCandidates: tile,
// split-K, stages, cluster), and against the skinny tensor-core kernel
// (LaunchSkinnyLinear, up to 64 rows) and the cluster kernel
// (LaunchClusterLinear, up to 64 rows; the same epilogue without the
// LayerNorm, and for Q/K/V and fc also with it, as the step runs it: its
// output is not compared, the GPU test checks it), and the warp-group kernel
// (LaunchWgmmaLinear: its tile shape after the table's column; with
// LINEAR_BENCH_WGMMA_ALL=1 each tile shape that fits, one line each). The question it first
// answered: would choosing cuBLASLt's algorithm by timing at start-up (as the
// engine could, once per batch bucket) make the N=64 / N=256 steps'
// projections faster? (No: docs/results/bench/2026-12-02-h200-attention-direct/.)
//
// Each case is a CUDA graph of 12 launches on 12 layers' distinct weights
// (GPT-2 small's 12 layers: 28 MB for Q/K/V alone, so the weights come from
// HBM, not L2, as in the step), replayed 50 times: µs per projection. A
// candidate counts only if its output matches the first choice's (max
// |difference| / max |value| <= 2e-2: bf16 outputs, different summation
// orders). Prints a table and appends JSON lines.
//
//   tandem-linear-bench [out.jsonl]    (bash scripts/gpu-session.sh linearbench)
//
// LINEAR_BENCH_ROWS=16,64 picks the row counts (default 16,32,64,128,256),
// LINEAR_BENCH_SHAPES=qkv,head the shapes (default the four projections;
// "head" is the LM head, 768 -> 50,304 without bias);
// LINEAR_BENCH_ONCE=1 launches each kernel once and times nothing (for
// Nsight Compute: gpu-session.sh linearncu).
//
// LINEAR_BENCH_SURVEY=1: the cuBLASLt survey instead (linear_survey.cuh).
#include <cublasLt.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/model/cuda/bench_support.cuh"
#include "core/model/cuda/decode_kernels.h"
#include "core/model/cuda/linear_bench_problem.cuh"
#include "core/model/cuda/linear_survey.cuh"

using tandem::bench::Check;
using tandem::bench::CheckLt;
using tandem::bench::kLayers;
using tandem::bench::LinearBenchProblem;
using tandem::bench::MaxRelDiff;
using tandem::bench::RowCounts;
using tandem::bench::RunLinearSurvey;
using tandem::bench::Shape;
using tandem::bench::Shapes;
using tandem::bench::TimeLayers;

int main(int argc, char** argv) {
  FILE* json = argc > 1 ? std::fopen(argv[1], "a") : nullptr;
  const bool once = std::getenv("LINEAR_BENCH_ONCE") != nullptr;
  cudaStream_t stream;
  Check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream");
  cublasLtHandle_t lt;
  CheckLt(cublasLtCreate(&lt), "cublasLtCreate");
  if (std::getenv("LINEAR_BENCH_SURVEY") != nullptr) {
    RunLinearSurvey(lt, stream, json);
    if (json != nullptr) std::fclose(json);
    return 0;
  }
  std::printf("%-5s %5s %11s %11s %9s %-16s %11s %11s %11s %11s %-9s %6s\n", "shape", "rows",
              "first us", "best us", "best of", "id/tile/sk/stg", "skinny us", "cluster us",
              "cl+norm us", "wgmma us", "cols/spl", "algos");
  uint32_t seed = 1;
  const std::vector<Shape> shapes = Shapes();
  for (int rows : RowCounts()) {
    for (const Shape& shape : shapes) {
      LinearBenchProblem p(lt, shape, rows, seed += 1000);
      if (p.candidates() == 0) {
        std::printf("%-5s %5d  no cuBLASLt algorithm\n", shape.name, rows);
        continue;
      }
      auto time_candidate = [&](int i) {
        if (once) return static_cast<double>(NAN);
        return TimeLayers(stream, [&] {
          for (int l = 0; l < kLayers; ++l) p.Run(i, l, stream);
        });
      };
      p.Run(0, 0, stream);
      Check(cudaStreamSynchronize(stream), "first");
      const std::vector<float> reference = p.Output();
      const double first = time_candidate(0);
      double best = first;
      int best_i = 0, valid = 1;
      for (int i = 1; !once && i < p.candidates(); ++i) {
        p.Run(i, 0, stream);
        Check(cudaStreamSynchronize(stream), "candidate");
        if (MaxRelDiff(reference, p.Output()) > 2e-2) continue;
        ++valid;
        const double us = time_candidate(i);
        if (us < best) best = us, best_i = i;
      }
      // A kernel of ours, timed where it supports the shape and its output matches.
      auto time_ours = [&](bool supported, const char* name,
                           void (LinearBenchProblem::*run)(int, cudaStream_t), bool compare = true) {
        if (!supported) return static_cast<double>(NAN);
        (p.*run)(0, stream);
        Check(cudaStreamSynchronize(stream), name);
        if (once) return static_cast<double>(NAN);
        if (compare && MaxRelDiff(reference, p.Output()) > 2e-2) {
          std::printf("%-5s %5d  the %s kernel's output differs\n", shape.name, rows, name);
          return static_cast<double>(NAN);
        }
        return TimeLayers(stream, [&] {
          for (int l = 0; l < kLayers; ++l) (p.*run)(l, stream);
        });
      };
      // Our kernels always add a bias: not timed on the head (none).
      const double skinny = time_ours(
          shape.bias &&
              tandem::SkinnyLinearSupports(tandem::KernelDType::kBFloat16, rows, shape.K, shape.N),
          "skinny", &LinearBenchProblem::RunSkinny);
      const double cluster = time_ours(
          shape.bias && tandem::ClusterLinearSupports(tandem::KernelDType::kBFloat16,
                                                      tandem::LinearEpilogue::kBias, rows,
                                                      shape.K, shape.N),
          "cluster", &LinearBenchProblem::RunCluster);
      // The step folds the LayerNorm into the Q/K/V and fc projections (K = C).
      const double cluster_norm =
          time_ours(shape.bias && shape.K == 768 && std::string(shape.name) != "out" &&
                        tandem::ClusterLinearSupports(tandem::KernelDType::kBFloat16,
                                                      tandem::LinearEpilogue::kBias, rows,
                                                      shape.K, shape.N),
                    "cluster+norm", &LinearBenchProblem::RunClusterNorm, /*compare=*/false);
      const bool wgmma_fits = shape.bias && tandem::WgmmaLinearSupports(
                                                 tandem::KernelDType::kBFloat16, rows, shape.K,
                                                 shape.N, /*max_blocks=*/0);
      const double wgmma = time_ours(wgmma_fits, "wgmma", &LinearBenchProblem::RunWgmmaChecked);
      char wgmma_tile[32] = "-";
      if (wgmma_fits) {
        const tandem::WgmmaLinearConfig c = tandem::WgmmaLinearConfigAt(
            tandem::WgmmaLinearConfigFor(rows, shape.K, shape.N, /*max_blocks=*/0));
        std::snprintf(wgmma_tile, sizeof(wgmma_tile), "%d/%d", c.columns, c.splits);
      }
      char config[64];
      p.Describe(best_i, config, sizeof(config));
      std::printf("%-5s %5d %11.2f %11.2f %9d %-16s %11.2f %11.2f %11.2f %11.2f %-9s %6d\n",
                  shape.name, rows, first, best, best_i, config, skinny, cluster, cluster_norm,
                  wgmma, wgmma_tile, valid);
      // LINEAR_BENCH_WGMMA_ALL: every tile shape of the wgmma kernel that fits.
      const char* all = std::getenv("LINEAR_BENCH_WGMMA_ALL");
      for (int c = 0; shape.bias && all != nullptr && *all == '1' && !once &&
                      c < tandem::WgmmaLinearConfigCount();
           ++c) {
        p.wgmma_config_ = c;
        if (!p.RunWgmma(0, stream)) continue;
        const double us = time_ours(true, "wgmma config", &LinearBenchProblem::RunWgmmaChecked);
        const tandem::WgmmaLinearConfig t = tandem::WgmmaLinearConfigAt(c);
        std::printf("  wgmma %-5s %5d  %3d cols x %d splits: %8.2f us\n", shape.name, rows,
                    t.columns, t.splits, us);
        if (json != nullptr) {
          std::fprintf(json,
                       "{\"bench\":\"linear_wgmma\",\"shape\":\"%s\",\"rows\":%d,"
                       "\"columns\":%d,\"splits\":%d,\"us\":%.3f}\n",
                       shape.name, rows, t.columns, t.splits, std::isnan(us) ? -1.0 : us);
        }
      }
      p.wgmma_config_ = -1;
      if (json != nullptr && !once) {
        std::fprintf(json,
                     "{\"bench\":\"linear\",\"shape\":\"%s\",\"rows\":%d,\"K\":%d,\"N\":%d,"
                     "\"first_us\":%.3f,\"best_us\":%.3f,\"best_index\":%d,\"best_config\":\"%s\","
                     "\"skinny_us\":%.3f,\"cluster_us\":%.3f,\"cluster_norm_us\":%.3f,"
                     "\"wgmma_us\":%.3f,\"wgmma_tile\":\"%s\",\"valid_algorithms\":%d}\n",
                     shape.name, rows, shape.K, shape.N, first, best, best_i, config,
                     std::isnan(skinny) ? -1.0 : skinny, std::isnan(cluster) ? -1.0 : cluster,
                     std::isnan(cluster_norm) ? -1.0 : cluster_norm,
                     std::isnan(wgmma) ? -1.0 : wgmma, wgmma_tile, valid);
      }
    }
  }
  if (json != nullptr) std::fclose(json);
  return 0;
}
