// tandem-server: serves a language model over gRPC.
#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <memory>
#include <string>

#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "core/engine/engine.h"
#include "core/base/logging.h"
#include "core/model/model_loader.h"
#include "core/model/model_options.h"
#include "core/model/torch_runtime.h"
#include "server/generation_service.h"
#include "server/http/metrics_http_server.h"
#include "server/server_metrics.h"

ABSL_FLAG(std::string, listen, "0.0.0.0:50051",
          "host:port for gRPC (port 0 picks a free port; the log says which)");
ABSL_FLAG(std::string, metrics_listen, "0.0.0.0:9400",
          "host:port for HTTP /metrics, /healthz and /readyz; empty disables it");
ABSL_FLAG(std::string, model, "",
          "Hugging Face checkpoint directory (config.json, whose model_type names the "
          "family, model.safetensors and the tokenizer's files). Empty: the embedded "
          "default model, random weights with a real tokenizer");
ABSL_FLAG(uint64_t, seed, 20241129, "seed of the embedded model's random weights");
ABSL_FLAG(int32_t, max_slots, 0,
          "KV slots = sequences generated at once (0: 8 on the CPU, 64 on a GPU)");
ABSL_FLAG(int32_t, max_context, 0,
          "positions per KV slot, prompt plus completion (0: the model's n_positions)");
ABSL_FLAG(int32_t, max_queue, 256,
          "requests waiting for a KV slot before new ones get RESOURCE_EXHAUSTED");
ABSL_FLAG(int32_t, max_prefill_tokens, 2048,
          "prompt tokens prefilled per engine step (bounds the stall a burst of "
          "long prompts causes to running streams)");
ABSL_FLAG(tandem::DType, dtype, tandem::DType::kAuto,
          "float32, float16 or bfloat16 (auto: float32 on the CPU, bfloat16 on a GPU)");
ABSL_FLAG(tandem::DeviceSpec, device, tandem::DeviceSpec(),
          "cpu, cuda or cuda:N (auto: cuda when present)");
ABSL_FLAG(tandem::Pipeline, pipeline, tandem::Pipeline::kDoubleBuffered,
          "double_buffered: launch step i+1 before reading step i's tokens (CUDA); "
          "sync: wait for every step before launching the next");
ABSL_FLAG(bool, cuda_graphs, true, "CUDA: replay each decode step as one captured graph");
ABSL_FLAG(tandem::KvCacheMode, kv_cache, tandem::KvCacheMode::kStatic,
          "static: KV slots allocated once; dynamic: the naive baseline, a cache grown by "
          "concatenation every step, eager and synchronous (for comparisons)");
ABSL_FLAG(absl::Duration, shutdown_grace, absl::Seconds(30),
          "on SIGTERM/SIGINT, how long running streams may take to finish before "
          "they are cut off");

namespace tandem {
namespace {

// With port 0, `listen` gets the port the server actually bound.
std::string BoundAddress(const std::string& listen, int port) {
  const size_t colon = listen.rfind(':');
  return absl::StrCat(colon == std::string::npos ? listen : listen.substr(0, colon),
                      ":", port);
}

int Serve() {
  // Signals are taken by sigwait below; every thread inherits this mask.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  LogInfo("tandem-server starting: LibTorch ", TorchVersion(),
          CudaAvailable() ? ", CUDA available" : ", no CUDA device");
  // The HTTP endpoint starts first: /healthz answers while the model loads
  // (and /readyz says 503), and its threads exist before CUDA reserves
  // address space.
  ServerMetrics metrics({TANDEM_VERSION, TorchVersion(), CudaAvailable() ? "yes" : "no"});
  std::atomic<bool> ready{false};
  std::unique_ptr<MetricsHttpServer> http;
  if (const std::string metrics_listen = absl::GetFlag(FLAGS_metrics_listen);
      !metrics_listen.empty()) {
    absl::StatusOr<std::unique_ptr<MetricsHttpServer>> started = MetricsHttpServer::Start(
        metrics_listen, &metrics.registry(), [&ready] { return ready.load(); });
    if (!started.ok()) {
      LogError("cannot serve metrics: ", started.status().ToString());
      return 1;
    }
    http = *std::move(started);
    LogInfo("HTTP /metrics, /healthz, /readyz on ", BoundAddress(metrics_listen, http->port()));
  }
  ModelOptions model_options;
  model_options.model_dir = absl::GetFlag(FLAGS_model);
  model_options.embedded_seed = absl::GetFlag(FLAGS_seed);
  model_options.max_slots = absl::GetFlag(FLAGS_max_slots);
  model_options.max_context = absl::GetFlag(FLAGS_max_context);
  model_options.dtype = absl::GetFlag(FLAGS_dtype);
  model_options.device = absl::GetFlag(FLAGS_device);
  model_options.cuda_graphs = absl::GetFlag(FLAGS_cuda_graphs);
  model_options.kv_cache = absl::GetFlag(FLAGS_kv_cache);
  absl::StatusOr<LoadedModel> loaded = LoadModel(model_options);
  if (!loaded.ok()) {
    LogError("cannot load the model: ", loaded.status().ToString());
    return 1;
  }
  const int32_t max_queue = absl::GetFlag(FLAGS_max_queue);
  if (max_queue < 1) {
    LogError("--max_queue must be >= 1");
    return 1;
  }
  const ModelDescription& model = loaded->runner->description();
  metrics.OnModelLoaded(model.device, model.name, model.dtype, model.num_slots);
  EngineOptions engine_options;
  engine_options.max_queue = max_queue;
  engine_options.max_prefill_tokens_per_step = absl::GetFlag(FLAGS_max_prefill_tokens);
  engine_options.pipeline = absl::GetFlag(FLAGS_pipeline);
  Engine engine(engine_options, std::move(loaded->runner), loaded->tokenizer.get(),
                &metrics);
  LogInfo("engine: ", model.runner, ", ",
          engine.pipelined() ? "double-buffered pipeline" : "synchronous steps");
  GenerationService service(&engine, loaded->tokenizer.get(), &metrics, max_queue);

  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  int port = 0;
  const std::string listen = absl::GetFlag(FLAGS_listen);
  builder.AddListeningPort(listen, grpc::InsecureServerCredentials(), &port);
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || port == 0) {
    LogError("cannot listen on ", listen, " (address in use or invalid?)");
    return 1;
  }
  grpc::HealthCheckServiceInterface* health = server->GetHealthCheckService();
  health->SetServingStatus(true);
  ready = true;
  LogInfo("gRPC listening on ", BoundAddress(listen, port), " (service tandem.v1.Generation, ",
          "health, reflection); queue ", max_queue);

  int signal_number = 0;
  sigwait(&signals, &signal_number);
  const absl::Duration grace = absl::GetFlag(FLAGS_shutdown_grace);
  LogInfo("received ", signal_number == SIGTERM ? "SIGTERM" : "SIGINT",
          ": no longer accepting requests; running streams get up to ",
          absl::FormatDuration(grace), " to finish");
  health->SetServingStatus(false);
  ready = false;
  const int cut_off = engine.Shutdown(grace);
  if (cut_off > 0) LogInfo("cut off ", cut_off, " unfinished requests");
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(5));
  LogInfo("stopped");
  return 0;
}

}  // namespace
}  // namespace tandem

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "Serves a language model over gRPC (tandem.v1.Generation).\n"
      "Usage: tandem-server [--model=DIR] [--listen=HOST:PORT] [flags]");
  absl::ParseCommandLine(argc, argv);
  return tandem::Serve();
}
