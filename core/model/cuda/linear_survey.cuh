// LINEAR_BENCH_SURVEY (gpu-session.sh linearsurvey) in tandem-linear-bench:
// tandem-linear-bench asks instead which
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
#ifndef TANDEM_CORE_MODEL_CUDA_LINEAR_SURVEY_CUH_
#define TANDEM_CORE_MODEL_CUDA_LINEAR_SURVEY_CUH_

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <cstdio>

namespace tandem::bench {

// Prints the survey's table; appends JSON lines to `json` (may be null).
void RunLinearSurvey(cublasLtHandle_t lt, cudaStream_t stream, FILE* json);

}  // namespace tandem::bench

#endif  // TANDEM_CORE_MODEL_CUDA_LINEAR_SURVEY_CUH_
