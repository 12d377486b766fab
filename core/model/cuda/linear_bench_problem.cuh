// One problem of tandem-linear-bench (linear_bench.cu; the cuBLASLt survey,
// linear_survey.cu): a projection of GPT-2 small's shapes at some row count
// over 12 layers' weights, launched through cuBLASLt's candidate algorithms
// and through Tandem's kernels; and the bench's shapes, row counts and timing.
// Host code; one CUDA stream, the caller's thread.
#ifndef TANDEM_CORE_MODEL_CUDA_LINEAR_BENCH_PROBLEM_CUH_
#define TANDEM_CORE_MODEL_CUDA_LINEAR_BENCH_PROBLEM_CUH_

#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "core/model/cuda/bench_support.cuh"
#include "core/model/cuda/decode_kernels.h"

namespace tandem::bench {

using bf16 = __nv_bfloat16;

constexpr int kLayers = 12, kReplays = 50, kCandidates = 32;
constexpr size_t kWorkspace = size_t{32} << 20;

struct Shape {
  const char* name;
  int K, N;
  bool gelu;
  bool bias = true;
};
constexpr Shape kShapes[] = {
    {"qkv", 768, 2304, false}, {"out", 768, 768, false}, {"fc", 768, 3072, true},
    {"proj", 3072, 768, false}};
// The LM head (GPT-2's vocabulary padded to a multiple of 128, no bias), only
// when LINEAR_BENCH_SHAPES names it.
constexpr Shape kHead = {"head", 768, 50304, false, false};

// The shapes LINEAR_BENCH_SHAPES names (comma-separated), default kShapes.
inline std::vector<Shape> Shapes() {
  const char* text = std::getenv("LINEAR_BENCH_SHAPES");
  std::vector<Shape> all(std::begin(kShapes), std::end(kShapes));
  if (text == nullptr || *text == '\0') return all;
  all.push_back(kHead);
  std::vector<Shape> picked;
  std::stringstream list(text);
  for (std::string item; std::getline(list, item, ',');) {
    const auto shape = std::find_if(all.begin(), all.end(),
                                    [&](const Shape& s) { return item == s.name; });
    if (shape == all.end()) {
      std::fprintf(stderr, "LINEAR_BENCH_SHAPES: no shape named '%s' (qkv, out, fc, proj, head)\n",
                   item.c_str());
      std::exit(2);
    }
    picked.push_back(*shape);
  }
  return picked;
}

inline void CheckLt(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS) {
    std::fprintf(stderr, "%s: cuBLAS status %d\n", what, static_cast<int>(s));
    std::exit(1);
  }
}

// Microseconds per launch of `body` (kLayers launches), as a replayed graph.
inline double TimeLayers(cudaStream_t stream, const std::function<void()>& body) {
  return tandem::bench::GraphMicroseconds(stream, body, kReplays) / kLayers;
}

// LINEAR_BENCH_ROWS as numbers, or the default row counts.
inline std::vector<int> RowCounts() {
  const char* text = std::getenv("LINEAR_BENCH_ROWS");
  if (text == nullptr || *text == '\0') return {16, 32, 64, 128, 256};
  std::vector<int> rows;
  std::stringstream list(text);
  for (std::string item; std::getline(list, item, ',');) rows.push_back(std::atoi(item.c_str()));
  return rows;
}

// One problem: out [M, N] = act(x [M, K] w_l[N, K]^T + b_l) for 12 layers l,
// in cuBLASLt's column-major terms D (N x M) = op_T(A = w, K x N) * B (x, K x M).
class LinearBenchProblem {
 public:
  LinearBenchProblem(cublasLtHandle_t lt, const Shape& shape, int rows, uint32_t seed)
      : lt_(lt), shape_(shape), rows_(rows) {
    for (int l = 0; l < kLayers; ++l) {
      weights_.push_back(AllocBf16(static_cast<size_t>(shape.N) * shape.K, seed + l, 0.05f));
      biases_.push_back(AllocBf16(shape.N, seed + 100 + l, 1.0f));
    }
    x_ = AllocBf16(static_cast<size_t>(rows) * shape.K, seed + 200, 1.0f);
    norm_weight_ = AllocBf16(shape.K, seed + 300, 1.0f);
    norm_bias_ = AllocBf16(shape.K, seed + 400, 0.2f);
    out_ = AllocBf16(static_cast<size_t>(rows) * shape.N, 0, 0.0f);
    Check(cudaMalloc(&workspace_, kWorkspace), "workspace");
    CheckLt(cublasLtMatmulDescCreate(&op_, CUBLAS_COMPUTE_32F, CUDA_R_32F), "desc");
    const cublasOperation_t transpose = CUBLAS_OP_T, none = CUBLAS_OP_N;
    CheckLt(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_TRANSA, &transpose,
                                           sizeof(transpose)),
            "transa");
    CheckLt(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_TRANSB, &none, sizeof(none)),
            "transb");
    const cublasLtEpilogue_t epilogue = !shape.bias ? CUBLASLT_EPILOGUE_DEFAULT
                                        : shape.gelu ? CUBLASLT_EPILOGUE_GELU_BIAS
                                                     : CUBLASLT_EPILOGUE_BIAS;
    CheckLt(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue,
                                           sizeof(epilogue)),
            "epilogue");
    SetBias(0);
    CheckLt(cublasLtMatrixLayoutCreate(&a_, CUDA_R_16BF, shape.K, shape.N, shape.K), "A");
    CheckLt(cublasLtMatrixLayoutCreate(&b_, CUDA_R_16BF, shape.K, rows, shape.K), "B");
    CheckLt(cublasLtMatrixLayoutCreate(&d_, CUDA_R_16BF, shape.N, rows, shape.N), "D");
    cublasLtMatmulPreference_t preference;
    CheckLt(cublasLtMatmulPreferenceCreate(&preference), "preference");
    CheckLt(cublasLtMatmulPreferenceSetAttribute(preference,
                                                 CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                 &kWorkspace, sizeof(kWorkspace)),
            "workspace size");
    results_.resize(kCandidates);
    int returned = 0;
    // No algorithm for the problem (NOT_SUPPORTED) leaves none to time.
    if (cublasLtMatmulAlgoGetHeuristic(lt_, op_, a_, b_, d_, d_, preference, kCandidates,
                                       results_.data(), &returned) != CUBLAS_STATUS_SUCCESS) {
      returned = 0;
    }
    results_.resize(returned);
    cublasLtMatmulPreferenceDestroy(preference);
  }

  ~LinearBenchProblem() {
    for (bf16* w : weights_) cudaFree(w);
    for (bf16* b : biases_) cudaFree(b);
    cudaFree(x_);
    cudaFree(norm_weight_);
    cudaFree(norm_bias_);
    cudaFree(out_);
    cudaFree(workspace_);
    cublasLtMatrixLayoutDestroy(a_);
    cublasLtMatrixLayoutDestroy(b_);
    cublasLtMatrixLayoutDestroy(d_);
    cublasLtMatmulDescDestroy(op_);
  }
  LinearBenchProblem(const LinearBenchProblem&) = delete;
  LinearBenchProblem& operator=(const LinearBenchProblem&) = delete;

  int candidates() const { return static_cast<int>(results_.size()); }

  // Appends to the candidates every algorithm id cuBLASLt has for these
  // types, at each tile it offers with the first stage count
  // cublasLtMatmulAlgoCheck accepts (or its defaults where it lists none).
  void AppendEveryAlgorithm() {
    constexpr int kMaxIds = 256;
    int ids[kMaxIds], id_count = 0;
    CheckLt(cublasLtMatmulAlgoGetIds(lt_, CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_16BF,
                                     CUDA_R_16BF, CUDA_R_16BF, CUDA_R_16BF, kMaxIds, ids,
                                     &id_count),
            "algorithm ids");
    for (int k = 0; k < id_count; ++k) {
      cublasLtMatmulAlgo_t algo;
      if (cublasLtMatmulAlgoInit(lt_, CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_16BF, CUDA_R_16BF,
                                 CUDA_R_16BF, CUDA_R_16BF, ids[k], &algo) !=
          CUBLAS_STATUS_SUCCESS) {
        continue;
      }
      const std::vector<uint32_t> tiles = Capabilities(algo, CUBLASLT_ALGO_CAP_TILE_IDS);
      const std::vector<uint32_t> stages = Capabilities(algo, CUBLASLT_ALGO_CAP_STAGES_IDS);
      for (size_t t = 0; t < std::max<size_t>(tiles.size(), 1); ++t) {
        if (!tiles.empty()) {
          cublasLtMatmulAlgoConfigSetAttribute(&algo, CUBLASLT_ALGO_CONFIG_TILE_ID, &tiles[t],
                                               sizeof(tiles[t]));
        }
        for (size_t g = 0; g < std::max<size_t>(stages.size(), 1); ++g) {
          if (!stages.empty()) {
            cublasLtMatmulAlgoConfigSetAttribute(&algo, CUBLASLT_ALGO_CONFIG_STAGES_ID,
                                                 &stages[g], sizeof(stages[g]));
          }
          cublasLtMatmulHeuristicResult_t result{};
          if (cublasLtMatmulAlgoCheck(lt_, op_, a_, b_, d_, d_, &algo, &result) ==
                  CUBLAS_STATUS_SUCCESS &&
              result.workspaceSize <= kWorkspace) {
            result.algo = algo;
            results_.push_back(result);
            break;  // this tile's first stage count that runs
          }
        }
      }
    }
  }

  // Launches candidate i on layer l.
  void Run(int i, int l, cudaStream_t stream) {
    SetBias(l);
    const float alpha = 1.0f, beta = 0.0f;
    CheckLt(cublasLtMatmul(lt_, op_, &alpha, weights_[l], a_, x_, b_, &beta, out_, d_, out_, d_,
                           &results_[i].algo, workspace_, kWorkspace, stream),
            "matmul");
  }

  void RunSkinny(int l, cudaStream_t stream) {
    Check(tandem::LaunchSkinnyLinear(tandem::KernelDType::kBFloat16, shape_.gelu, x_,
                                     weights_[l], biases_[l], out_, rows_, shape_.K, shape_.N,
                                     stream),
          "skinny linear");
  }

  // The wgmma kernel, its grid within the GPU: the tile shape it picks, or
  // wgmma_config_ when that is set (>= 0). False where that config does not
  // fit the problem.
  bool RunWgmma(int l, cudaStream_t stream) {
    if (wgmma_config_ >= 0 &&
        !tandem::WgmmaLinearConfigFits(wgmma_config_, rows_, shape_.K, shape_.N)) {
      return false;
    }
    const cudaError_t e = tandem::LaunchWgmmaLinear(
        tandem::KernelDType::kBFloat16, shape_.gelu, x_, weights_[l], biases_[l], out_, rows_,
        shape_.K, shape_.N, /*max_blocks=*/0, stream, wgmma_config_);
    Check(e, "wgmma linear");
    return true;
  }
  void RunWgmmaChecked(int l, cudaStream_t stream) { RunWgmma(l, stream); }
  int wgmma_config_ = -1;

  void RunCluster(int l, cudaStream_t stream) { LaunchCluster(l, false, stream); }
  // With the LayerNorm before the projection folded in.
  void RunClusterNorm(int l, cudaStream_t stream) { LaunchCluster(l, true, stream); }

  std::vector<float> Output() const { return ToHost(out_, static_cast<size_t>(rows_) * shape_.N); }

  // "id/tile/splitK/stages" of candidate i (cuBLASLt's algorithm config).
  void Describe(int i, char* text, size_t size) const {
    int id = -1, tile = -1, split = -1, stages = -1;
    const cublasLtMatmulAlgo_t& algo = results_[i].algo;
    cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_ID, &id, sizeof(id), nullptr);
    cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile, sizeof(tile),
                                         nullptr);
    cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &split,
                                         sizeof(split), nullptr);
    cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_STAGES_ID, &stages,
                                         sizeof(stages), nullptr);
    std::snprintf(text, size, "%d/%d/%d/%d", id, tile, split, stages);
  }

 private:
  void LaunchCluster(int l, bool norm, cudaStream_t stream) {
    Check(tandem::LaunchClusterLinear(tandem::KernelDType::kBFloat16,
                                      shape_.gelu ? tandem::LinearEpilogue::kBiasGelu
                                                  : tandem::LinearEpilogue::kBias,
                                      x_, norm ? norm_weight_ : nullptr,
                                      norm ? norm_bias_ : nullptr, 1e-5f, weights_[l],
                                      biases_[l], out_, rows_, shape_.K, shape_.N, stream),
          "cluster linear");
  }

  // The uint32_t list capability `what` of `algo` (empty where it has none).
  static std::vector<uint32_t> Capabilities(const cublasLtMatmulAlgo_t& algo,
                                            cublasLtMatmulAlgoCapAttributes_t what) {
    size_t bytes = 0;
    if (cublasLtMatmulAlgoCapGetAttribute(&algo, what, nullptr, 0, &bytes) !=
            CUBLAS_STATUS_SUCCESS ||
        bytes == 0) {
      return {};
    }
    std::vector<uint32_t> values(bytes / sizeof(uint32_t));
    cublasLtMatmulAlgoCapGetAttribute(&algo, what, values.data(), bytes, &bytes);
    return values;
  }

  void SetBias(int l) {
    if (!shape_.bias) return;
    CheckLt(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &biases_[l],
                                           sizeof(biases_[l])),
            "bias");
  }

  cublasLtHandle_t lt_;
  Shape shape_;
  int rows_;
  std::vector<bf16*> weights_, biases_;
  bf16* x_;
  bf16* norm_weight_;
  bf16* norm_bias_;
  bf16* out_;
  void* workspace_;
  cublasLtMatmulDesc_t op_;
  cublasLtMatrixLayout_t a_, b_, d_;
  std::vector<cublasLtMatmulHeuristicResult_t> results_;
};

}  // namespace tandem::bench

#endif  // TANDEM_CORE_MODEL_CUDA_LINEAR_BENCH_PROBLEM_CUH_
