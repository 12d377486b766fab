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
// LINEAR_BENCH_SURVEY=1 (gpu-session.sh linearsurvey) asks instead which
// cuBLASLt algorithms cuBLAS launches with programmatic dependent launch: for
// every algorithm id cuBLASLt has for the problem, each tile it offers (the
// first stage count cublasLtMatmulAlgoCheck accepts), it times the 12-layer
// graph and reads the captured graph's edges into the GEMM kernel (a
// programmatic edge: cuBLAS launched it with programmatic stream
// serialization, so the kernel waits for its predecessor itself and could
// start before the step's previous kernel ends; the heuristic's nvjet GEMMs
// get full edges, docs/results/bench/2026-12-02-h200-cublas-edges/). One line
// per candidate, then per problem the first choice, the fastest, and the
// fastest launched with programmatic edges.
#include <cublasLt.h>
#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "core/model/cuda/bench_support.cuh"
#include "core/model/cuda/decode_kernels.h"

namespace {

using bf16 = __nv_bfloat16;
using tandem::bench::AllocBf16;
using tandem::bench::Check;
using tandem::bench::MaxRelDiff;
using tandem::bench::ToHost;

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
std::vector<Shape> Shapes() {
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

void CheckLt(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS) {
    std::fprintf(stderr, "%s: cuBLAS status %d\n", what, static_cast<int>(s));
    std::exit(1);
  }
}

// Microseconds per launch of `body` (kLayers launches), as a replayed graph.
double TimeLayers(cudaStream_t stream, const std::function<void()>& body) {
  return tandem::bench::GraphMicroseconds(stream, body, kReplays) / kLayers;
}

// A driver API function by name (the bench links only the runtime).
template <typename F>
F DriverEntry(const char* symbol) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found{};
  if (cudaGetDriverEntryPointByVersion(symbol, &fn, 12030, cudaEnableDefault, &found) !=
          cudaSuccess ||
      found != cudaDriverEntryPointSuccess) {
    return nullptr;
  }
  return reinterpret_cast<F>(fn);
}

// The kernel a graph node launches, by name ("?" where the driver cannot say).
std::string KernelName(cudaGraphNode_t node) {
  using GetParams = CUresult (*)(CUgraphNode, CUDA_KERNEL_NODE_PARAMS_v2*);
  using FuncName = CUresult (*)(const char**, CUfunction);
  using KernelGetName = CUresult (*)(const char**, CUkernel);
  static const auto get_params = DriverEntry<GetParams>("cuGraphKernelNodeGetParams");
  static const auto func_name = DriverEntry<FuncName>("cuFuncGetName");
  static const auto kernel_name = DriverEntry<KernelGetName>("cuKernelGetName");
  CUDA_KERNEL_NODE_PARAMS_v2 params{};
  if (get_params == nullptr || get_params(node, &params) != CUDA_SUCCESS) return "?";
  const char* name = nullptr;
  if (params.func != nullptr && func_name != nullptr) func_name(&name, params.func);
  if (name == nullptr && params.kern != nullptr && kernel_name != nullptr) {
    kernel_name(&name, params.kern);
  }
  return name != nullptr ? name : "?";
}

// What stream capture of `body` records about its first kernel's launches:
// that kernel's name, how many kernel -> it edges the graph has, and how
// many of them are programmatic.
struct LaunchEdges {
  std::string kernel;
  int edges = 0, programmatic = 0;
};

LaunchEdges CapturedEdges(cudaStream_t stream, const std::function<void()>& body) {
  cudaGraph_t graph;
  Check(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal), "capture");
  body();
  Check(cudaStreamEndCapture(stream, &graph), "end capture");
  size_t count = 0;
  Check(cudaGraphGetNodes(graph, nullptr, &count), "nodes");
  std::vector<cudaGraphNode_t> nodes(count);
  Check(cudaGraphGetNodes(graph, nodes.data(), &count), "nodes");
  LaunchEdges out;
  for (cudaGraphNode_t node : nodes) {
    cudaGraphNodeType type{};
    Check(cudaGraphNodeGetType(node, &type), "node type");
    if (type != cudaGraphNodeTypeKernel) continue;
    size_t parents = 0;
    Check(cudaGraphNodeGetDependencies(node, nullptr, nullptr, &parents), "dependencies");
    if (parents == 0) out.kernel = KernelName(node);  // the first launch
  }
  Check(cudaGraphGetEdges(graph, nullptr, nullptr, nullptr, &count), "edges");
  std::vector<cudaGraphNode_t> from(count), to(count);
  std::vector<cudaGraphEdgeData> data(count);
  Check(cudaGraphGetEdges(graph, from.data(), to.data(), data.data(), &count), "edges");
  for (size_t i = 0; i < count; ++i) {
    cudaGraphNodeType from_type{}, to_type{};
    Check(cudaGraphNodeGetType(from[i], &from_type), "node type");
    Check(cudaGraphNodeGetType(to[i], &to_type), "node type");
    if (from_type != cudaGraphNodeTypeKernel || to_type != cudaGraphNodeTypeKernel ||
        KernelName(to[i]) != out.kernel) {
      continue;
    }
    ++out.edges;
    if (data[i].type == cudaGraphDependencyTypeProgrammatic) ++out.programmatic;
  }
  cudaGraphDestroy(graph);
  return out;
}

// One problem: out [M, N] = act(x [M, K] w_l[N, K]^T + b_l) for 12 layers l,
// in cuBLASLt's column-major terms D (N x M) = op_T(A = w, K x N) * B (x, K x M).
class Problem {
 public:
  Problem(cublasLtHandle_t lt, const Shape& shape, int rows, uint32_t seed)
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

  ~Problem() {
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
  Problem(const Problem&) = delete;
  Problem& operator=(const Problem&) = delete;

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

}  // namespace

// LINEAR_BENCH_ROWS as numbers, or the default row counts.
std::vector<int> RowCounts() {
  const char* text = std::getenv("LINEAR_BENCH_ROWS");
  if (text == nullptr || *text == '\0') return {16, 32, 64, 128, 256};
  std::vector<int> rows;
  std::stringstream list(text);
  for (std::string item; std::getline(list, item, ',');) rows.push_back(std::atoi(item.c_str()));
  return rows;
}

// LINEAR_BENCH_SURVEY: every algorithm of every problem, with the edges
// stream capture gives its launches (see the top of the file).
void Survey(cublasLtHandle_t lt, cudaStream_t stream, FILE* json) {
  std::printf("%-5s %5s %5s %-18s %9s %9s  %s\n", "shape", "rows", "cand", "id/tile/sk/stg",
              "us", "pdl/edge", "kernel");
  uint32_t seed = 7;
  const std::vector<Shape> shapes = Shapes();
  for (int rows : RowCounts()) {
    for (const Shape& shape : shapes) {
      Problem p(lt, shape, rows, seed += 1000);
      if (p.candidates() == 0) continue;  // the heuristic's first choice is the reference
      p.AppendEveryAlgorithm();
      p.Run(0, 0, stream);
      Check(cudaStreamSynchronize(stream), "first");
      const std::vector<float> reference = p.Output();
      struct Best {
        double us = INFINITY;
        int index = -1;
        std::string kernel;
      } first, fastest, fastest_pdl;
      int valid = 0, pdl = 0;
      for (int i = 0; i < p.candidates(); ++i) {
        p.Run(i, 0, stream);
        if (cudaStreamSynchronize(stream) != cudaSuccess) {
          std::fprintf(stderr, "candidate %d failed: %s\n", i,
                       cudaGetErrorString(cudaGetLastError()));
          std::exit(1);
        }
        if (MaxRelDiff(reference, p.Output()) > 2e-2) continue;
        ++valid;
        auto body = [&] {
          for (int l = 0; l < kLayers; ++l) p.Run(i, l, stream);
        };
        const double us = TimeLayers(stream, body);
        const LaunchEdges edges = CapturedEdges(stream, body);
        const bool programmatic = edges.edges > 0 && edges.programmatic == edges.edges;
        pdl += programmatic;
        char config[64];
        p.Describe(i, config, sizeof(config));
        std::printf("%-5s %5d %5d %-18s %9.2f %4d/%-4d  %.90s\n", shape.name, rows, i, config,
                    us, edges.programmatic, edges.edges, edges.kernel.c_str());
        const Best candidate{us, i, edges.kernel};
        if (i == 0) first = candidate;
        if (us < fastest.us) fastest = candidate;
        if (programmatic && us < fastest_pdl.us) fastest_pdl = candidate;
      }
      std::printf("## %s %d rows: %d valid (%d launched programmatically); first %.2f us, "
                  "fastest %.2f us (%d, %.60s), fastest programmatic %.2f us (%d, %.60s)\n",
                  shape.name, rows, valid, pdl, first.us, fastest.us, fastest.index,
                  fastest.kernel.c_str(), fastest_pdl.us, fastest_pdl.index,
                  fastest_pdl.kernel.c_str());
      if (json != nullptr) {
        std::fprintf(json,
                     "{\"bench\":\"linear_survey\",\"shape\":\"%s\",\"rows\":%d,"
                     "\"valid\":%d,\"programmatic\":%d,\"first_us\":%.3f,"
                     "\"fastest_us\":%.3f,\"fastest_kernel\":\"%s\","
                     "\"fastest_programmatic_us\":%.3f,\"fastest_programmatic_kernel\":\"%s\"}\n",
                     shape.name, rows, valid, pdl, first.us, fastest.us, fastest.kernel.c_str(),
                     std::isinf(fastest_pdl.us) ? -1.0 : fastest_pdl.us,
                     fastest_pdl.kernel.c_str());
      }
    }
  }
}

int main(int argc, char** argv) {
  FILE* json = argc > 1 ? std::fopen(argv[1], "a") : nullptr;
  const bool once = std::getenv("LINEAR_BENCH_ONCE") != nullptr;
  cudaStream_t stream;
  Check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream");
  cublasLtHandle_t lt;
  CheckLt(cublasLtCreate(&lt), "cublasLtCreate");
  if (std::getenv("LINEAR_BENCH_SURVEY") != nullptr) {
    Survey(lt, stream, json);
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
      Problem p(lt, shape, rows, seed += 1000);
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
                           void (Problem::*run)(int, cudaStream_t), bool compare = true) {
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
          "skinny", &Problem::RunSkinny);
      const double cluster = time_ours(
          shape.bias && tandem::ClusterLinearSupports(tandem::KernelDType::kBFloat16,
                                                      tandem::LinearEpilogue::kBias, rows,
                                                      shape.K, shape.N),
          "cluster", &Problem::RunCluster);
      // The step folds the LayerNorm into the Q/K/V and fc projections (K = C).
      const double cluster_norm =
          time_ours(shape.bias && shape.K == 768 && std::string(shape.name) != "out" &&
                        tandem::ClusterLinearSupports(tandem::KernelDType::kBFloat16,
                                                      tandem::LinearEpilogue::kBias, rows,
                                                      shape.K, shape.N),
                    "cluster+norm", &Problem::RunClusterNorm, /*compare=*/false);
      const bool wgmma_fits = shape.bias && tandem::WgmmaLinearSupports(
                                                 tandem::KernelDType::kBFloat16, rows, shape.K,
                                                 shape.N, /*max_blocks=*/0);
      const double wgmma = time_ours(wgmma_fits, "wgmma", &Problem::RunWgmmaChecked);
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
        const double us = time_ours(true, "wgmma config", &Problem::RunWgmmaChecked);
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
