// tandem-linear-bench's LINEAR_BENCH_SURVEY=1 (see linear_survey.cuh).
#include "core/model/cuda/linear_survey.cuh"

#include <cuda.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "core/model/cuda/bench_support.cuh"
#include "core/model/cuda/linear_bench_problem.cuh"

namespace tandem::bench {
namespace {

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

}  // namespace

// LINEAR_BENCH_SURVEY: every algorithm of every problem, with the edges
// stream capture gives its launches (see linear_survey.cuh).
void RunLinearSurvey(cublasLtHandle_t lt, cudaStream_t stream, FILE* json) {
  std::printf("%-5s %5s %5s %-18s %9s %9s  %s\n", "shape", "rows", "cand", "id/tile/sk/stg",
              "us", "pdl/edge", "kernel");
  uint32_t seed = 7;
  const std::vector<Shape> shapes = Shapes();
  for (int rows : RowCounts()) {
    for (const Shape& shape : shapes) {
      LinearBenchProblem p(lt, shape, rows, seed += 1000);
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

}  // namespace tandem::bench
