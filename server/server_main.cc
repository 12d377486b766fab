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
#include "server/http/http_server.h"
#include "server/http/metrics_routes.h"
#include "server/server_metrics.h"

ABSL_FLAG(std::string, listen, "0.0.0.0:50051",
          "host:port for gRPC (port 0 picks a free port; the log says which)");
ABSL_FLAG(std::string, metrics_listen, "0.0.0.0:9400",
          "host:port of the HTTP port (/metrics, /healthz, /readyz); empty disables it");
ABSL_FLAG(int32_t, http_threads, 64,
          "HTTP connections served at once (each holds a thread while open; more wait)");
ABSL_FLAG(absl::Duration, http_timeout, absl::Seconds(5),
          "HTTP read and write timeout per operation, and the keep-alive idle timeout");
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

// The HTTP port, started before the model loads: /healthz answers while it
// loads (and /readyz says 503), and its threads exist before CUDA reserves
// address space. Null when --metrics_listen is empty.
absl::StatusOr<std::unique_ptr<HttpServer>> StartHttp(const ServerMetrics& metrics,
                                                      std::shared_ptr<std::atomic<bool>> ready) {
  HttpServerOptions options;
  options.listen = absl::GetFlag(FLAGS_metrics_listen);
  if (options.listen.empty()) return nullptr;
  options.threads = absl::GetFlag(FLAGS_http_threads);
  options.read_timeout = options.write_timeout = options.keep_alive_timeout =
      absl::GetFlag(FLAGS_http_timeout);
  absl::StatusOr<std::unique_ptr<HttpServer>> http = HttpServer::Bind(options);
  if (!http.ok()) return http.status();
  AddMetricsRoutes(metrics.registry(), std::move(ready), http->get());
  (*http)->Start();
  LogInfo("HTTP /metrics, /healthz, /readyz on ", BoundAddress(options.listen, (*http)->port()),
          " (", options.threads, " threads)");
  return http;
}

absl::StatusOr<LoadedModel> LoadServedModel() {
  ModelOptions options;
  options.model_dir = absl::GetFlag(FLAGS_model);
  options.embedded_seed = absl::GetFlag(FLAGS_seed);
  options.max_slots = absl::GetFlag(FLAGS_max_slots);
  options.max_context = absl::GetFlag(FLAGS_max_context);
  options.dtype = absl::GetFlag(FLAGS_dtype);
  options.device = absl::GetFlag(FLAGS_device);
  options.cuda_graphs = absl::GetFlag(FLAGS_cuda_graphs);
  options.kv_cache = absl::GetFlag(FLAGS_kv_cache);
  return LoadModel(options);
}

// Builds and starts the gRPC server (service, health, reflection); null when
// the address cannot be bound. `port` gets the bound port.
std::unique_ptr<grpc::Server> StartGrpc(GenerationService* service, int* port) {
  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  builder.AddListeningPort(absl::GetFlag(FLAGS_listen), grpc::InsecureServerCredentials(), port);
  builder.RegisterService(service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || *port == 0) return nullptr;
  return server;
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
  const int32_t max_queue = absl::GetFlag(FLAGS_max_queue);
  if (max_queue < 1) {
    LogError("--max_queue must be >= 1");
    return 1;
  }
  ServerMetrics metrics({TANDEM_VERSION, TorchVersion(), CudaAvailable() ? "yes" : "no"});
  auto ready = std::make_shared<std::atomic<bool>>(false);
  absl::StatusOr<std::unique_ptr<HttpServer>> http = StartHttp(metrics, ready);
  if (!http.ok()) {
    LogError("cannot serve HTTP: ", http.status().ToString());
    return 1;
  }
  absl::StatusOr<LoadedModel> loaded = LoadServedModel();
  if (!loaded.ok()) {
    LogError("cannot load the model: ", loaded.status().ToString());
    return 1;
  }
  const ModelDescription& model = loaded->runner->description();
  metrics.OnModelLoaded(model.device, model.name, model.dtype, model.num_slots);
  EngineOptions engine_options;
  engine_options.max_queue = max_queue;
  engine_options.max_prefill_tokens_per_step = absl::GetFlag(FLAGS_max_prefill_tokens);
  engine_options.pipeline = absl::GetFlag(FLAGS_pipeline);
  Engine engine(engine_options, std::move(loaded->runner), loaded->tokenizer.get(), &metrics);
  LogInfo("engine: ", engine.model().runner, ", ",
          engine.pipelined() ? "double-buffered pipeline" : "synchronous steps");
  GenerationService service(&engine, loaded->tokenizer.get(), &metrics, max_queue);
  int port = 0;
  std::unique_ptr<grpc::Server> server = StartGrpc(&service, &port);
  if (server == nullptr) {
    LogError("cannot listen on ", absl::GetFlag(FLAGS_listen), " (address in use or invalid?)");
    return 1;
  }
  grpc::HealthCheckServiceInterface* health = server->GetHealthCheckService();
  health->SetServingStatus(true);
  *ready = true;
  LogInfo("gRPC listening on ", BoundAddress(absl::GetFlag(FLAGS_listen), port),
          " (service tandem.v1.Generation, health, reflection); queue ", max_queue);

  int signal_number = 0;
  sigwait(&signals, &signal_number);
  const absl::Duration grace = absl::GetFlag(FLAGS_shutdown_grace);
  LogInfo("received ", signal_number == SIGTERM ? "SIGTERM" : "SIGINT",
          ": no longer accepting requests; running streams get up to ",
          absl::FormatDuration(grace), " to finish");
  health->SetServingStatus(false);
  *ready = false;
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
