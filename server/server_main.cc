// tandem-server: serves a language model over gRPC.
#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <thread>
#include <memory>
#include <string>

#include <google/protobuf/stubs/logging.h>
#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "core/base/cuda_queues.h"
#include "core/base/host_allocator.h"
#include "core/base/program_usage.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "core/engine/engine.h"
#include "core/base/logging.h"
#include "core/base/read_file.h"
#include "core/base/status_macros.h"
#include "core/model/model_loader.h"
#include "core/model/model_options.h"
#include "core/model/torch_runtime.h"
#include "server/generation_service.h"
#include "server/http/http_server.h"
#include "server/http/metrics_routes.h"
#include "server/openai/openai_backend.h"
#include "server/openai/openai_routes.h"
#include "server/server_metrics.h"

ABSL_FLAG(std::string, listen, "0.0.0.0:50051",
          "host:port for gRPC (port 0 picks a free port; the log says which)");
ABSL_FLAG(std::string, metrics_listen, "0.0.0.0:9400",
          "host:port of the HTTP port: the OpenAI-compatible API (/v1/...), the chat page (/), "
          "/metrics, /healthz and /readyz; empty disables it");
ABSL_FLAG(int32_t, http_threads, 0,
          "HTTP connections served at once (each holds a thread while open; more wait). 0: "
          "one for every request the engine can hold (--max_slots, 64 when 0, plus "
          "--max_queue) and 64 more for probes, scrapes and idle keep-alive connections, up "
          "to 4096");
ABSL_FLAG(absl::Duration, http_timeout, absl::Seconds(5),
          "HTTP read and write timeout per operation (idle keep-alive connections close "
          "after at most 2 s)");
ABSL_FLAG(std::string, model, "",
          "Hugging Face checkpoint directory (config.json, whose model_type names the "
          "family, model.safetensors and the tokenizer's files). Empty: the embedded "
          "default model, random weights with a real tokenizer");
ABSL_FLAG(uint64_t, seed, 20241129, "seed of the embedded model's random weights");
ABSL_FLAG(int32_t, max_slots, 0,
          "KV slots = sequences generated at once (0: 8 on the CPU, 64 on a GPU)");
ABSL_FLAG(int32_t, max_context, 0,
          "positions per KV slot, prompt plus completion (0: the model's n_positions)");
ABSL_FLAG(int32_t, delivery_threads, 2,
          "threads that hand each step's tokens to the streams (gRPC and HTTP), so the engine "
          "thread only stages them and the GPU is not kept waiting (0: the engine thread does)");
ABSL_FLAG(int32_t, grpc_write_threads, 4,
          "threads that start Generate streams' writes, so the delivery threads hand tokens "
          "over instead of writing to every client's connection (0: the thread that delivers the "
          "tokens writes)");
ABSL_FLAG(int32_t, max_queue, 256,
          "requests waiting for a KV slot before new ones get RESOURCE_EXHAUSTED");
ABSL_FLAG(std::vector<std::string>, cors_allow_origins, {},
          "browser origins allowed to call the OpenAI API (/v1/...) from another origin, "
          "comma-separated (e.g. https://chat.example.com), or * for any; empty: CORS off");
ABSL_FLAG(int32_t, max_prefill_tokens, 8192,
          "prompt tokens prefilled in one engine step (one packed forward) while no "
          "stream is decoding; on CUDA, prefill shapes up to this are prepared at start-up");
ABSL_FLAG(int32_t, prefill_tokens_while_decoding, 2048,
          "the most prompt tokens per step while streams decode: longer prompts and "
          "bursts are split into chunks that share steps with the decode rows");
ABSL_FLAG(double, prefill_stall_ratio, 0.25,
          "while streams decode, a step that also prefills may take about (1 + this) times "
          "a decode-only step (the chunk size adapts to the measured costs), bounding "
          "running streams' gaps between tokens");
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
          "they are cut off (requests not yet started end at once, UNAVAILABLE; a "
          "second signal ends the grace period)");
ABSL_FLAG(uint64_t, max_prompt_bytes, 0,
          "largest prompt text (and Tokenize text) in bytes, refused before tokenizing "
          "(0: the context length times the longest token's bytes, which no prompt that "
          "fits the context can exceed)");
ABSL_FLAG(int32_t, max_request_bytes, 4 << 20,
          "largest gRPC message the server receives (RESOURCE_EXHAUSTED above it)");
ABSL_FLAG(std::string, api_key_file, "",
          "file holding an API key: gRPC calls need the metadata 'authorization: Bearer "
          "KEY' (UNAUTHENTICATED otherwise) and HTTP requests the header (401); the "
          "gRPC health and reflection services and /healthz, /readyz stay open");
ABSL_FLAG(bool, metrics_need_key, false,
          "with --api_key_file, /metrics needs the key too (default: open to scrapers)");
ABSL_FLAG(std::string, tls_cert, "",
          "PEM certificate chain: serve gRPC and HTTP over TLS (with --tls_key)");
ABSL_FLAG(std::string, tls_key, "", "PEM private key of --tls_cert");

namespace tandem {
namespace {

// With port 0, `listen` gets the port the server actually bound.
std::string BoundAddress(const std::string& listen, int port) {
  const size_t colon = listen.rfind(':');
  return absl::StrCat(colon == std::string::npos ? listen : listen.substr(0, colon),
                      ":", port);
}

// --http_threads, or its default: a thread for each request the engine can
// hold, running or waiting, so that a full queue is answered (429) and
// /healthz still is, plus room for probes, scrapes and kept-alive connections.
int HttpThreads() {
  const int32_t threads = absl::GetFlag(FLAGS_http_threads);
  if (threads > 0) return threads;
  // The device is not known yet: the larger default.
  const int64_t slots =
      absl::GetFlag(FLAGS_max_slots) > 0 ? absl::GetFlag(FLAGS_max_slots) : kDefaultGpuSlots;
  return static_cast<int>(std::min<int64_t>(slots + absl::GetFlag(FLAGS_max_queue) + 64, 4096));
}

// The HTTP port, started before the model loads: /healthz answers while it
// loads (and /readyz says 503), and its threads exist before CUDA reserves
// address space. Null when --metrics_listen is empty.
absl::StatusOr<std::unique_ptr<HttpServer>> StartHttp(const ServerMetrics& metrics,
                                                      std::shared_ptr<std::atomic<bool>> ready,
                                                      std::shared_ptr<OpenAiBackend> openai,
                                                      const std::string& api_key) {
  HttpServerOptions options;
  options.listen = absl::GetFlag(FLAGS_metrics_listen);
  if (options.listen.empty()) return nullptr;
  options.threads = HttpThreads();
  options.read_timeout = options.write_timeout = absl::GetFlag(FLAGS_http_timeout);
  // Idle keep-alive connections hold a pool thread, also at shutdown, where
  // the server waits for them: keep them short (scrapes come every 15 s).
  options.keep_alive_timeout = std::min(options.read_timeout, absl::Seconds(2));
  options.shutdown_timeout = options.keep_alive_timeout + absl::Seconds(1);
  options.tls_cert_file = absl::GetFlag(FLAGS_tls_cert);
  options.tls_key_file = absl::GetFlag(FLAGS_tls_key);
  options.api_key = api_key;
  // "/" and "/chat.js": the chat page (its calls need the key).
  options.open_paths = {"/healthz", "/readyz", "/", "/chat.js"};
  options.api_prefix = "/v1/";
  for (const std::string& origin : absl::GetFlag(FLAGS_cors_allow_origins)) {
    if (!origin.empty()) options.cors_origins.insert(origin);
  }
  if (!absl::GetFlag(FLAGS_metrics_need_key)) options.open_paths.insert("/metrics");
  absl::StatusOr<std::unique_ptr<HttpServer>> http = HttpServer::Bind(options);
  if (!http.ok()) return http.status();
  AddMetricsRoutes(metrics.registry(), std::move(ready), http->get());
  AddOpenAiRoutes(std::move(openai), http->get());
  (*http)->Start();
  LogInfo(options.tls_cert_file.empty() ? "HTTP" : "HTTPS",
          " /metrics, /healthz, /readyz, the OpenAI API (/v1/models, /v1/completions, "
          "/v1/chat/completions) and the chat page (/) on ",
          BoundAddress(options.listen, (*http)->port()), " (", options.threads, " threads",
          api_key.empty() ? "" : ", API key required", ")");
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
  options.max_prefill_tokens = absl::GetFlag(FLAGS_max_prefill_tokens);
  return LoadModel(options);
}

// Builds and starts the gRPC server (service, health, reflection); null when
// the address cannot be bound. `port` gets the bound port.
std::unique_ptr<grpc::Server> StartGrpc(GenerationService* service,
                                        std::shared_ptr<grpc::ServerCredentials> credentials,
                                        int* port) {
  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  builder.AddListeningPort(absl::GetFlag(FLAGS_listen), std::move(credentials), port);
  builder.SetMaxReceiveMessageSize(absl::GetFlag(FLAGS_max_request_bytes));
  builder.RegisterService(service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || *port == 0) return nullptr;
  return server;
}

// What the server needs from files named by flags, read before anything
// starts: the API key and the TLS credentials.
struct Secrets {
  std::string api_key;
  std::shared_ptr<grpc::ServerCredentials> grpc_credentials;
};

absl::StatusOr<Secrets> ReadSecrets() {
  Secrets secrets;
  if (const std::string file = absl::GetFlag(FLAGS_api_key_file); !file.empty()) {
    ASSIGN_OR_RETURN(secrets.api_key, ReadFlagFile(file, "api_key_file"));
    if (secrets.api_key.empty()) return absl::InvalidArgumentError("--api_key_file is empty");
  }
  const std::string cert = absl::GetFlag(FLAGS_tls_cert), key = absl::GetFlag(FLAGS_tls_key);
  if (cert.empty() != key.empty()) {
    return absl::InvalidArgumentError("--tls_cert and --tls_key go together");
  }
  if (cert.empty()) {
    if (!secrets.api_key.empty()) {
      LogWarning("an API key without --tls_cert/--tls_key travels in cleartext");
    }
    secrets.grpc_credentials = grpc::InsecureServerCredentials();
    return secrets;
  }
  grpc::SslServerCredentialsOptions ssl;
  grpc::SslServerCredentialsOptions::PemKeyCertPair pair;
  ASSIGN_OR_RETURN(pair.cert_chain, ReadFlagFile(cert, "tls_cert"));
  ASSIGN_OR_RETURN(pair.private_key, ReadFlagFile(key, "tls_key"));
  ssl.pem_key_cert_pairs.push_back(pair);
  secrets.grpc_credentials = grpc::SslServerCredentials(ssl);
  return secrets;
}

// The longest prompt text worth tokenizing: a text longer than the context
// times the longest token cannot fit the context.
size_t MaxPromptBytes(const Tokenizer& tokenizer, int32_t max_context) {
  if (const uint64_t flag = absl::GetFlag(FLAGS_max_prompt_bytes); flag > 0) return flag;
  size_t longest = 1;
  for (int32_t id = 0; id < tokenizer.vocab_size(); ++id) {
    longest = std::max(longest, tokenizer.TokenBytes(id).size());
  }
  return longest * static_cast<size_t>(max_context);
}

// Waits for SIGTERM/SIGINT, then drains: readiness off first, requests not
// started end at once, running ones get the grace period, a second signal
// ends it. Returns when the engine has stopped.
void AwaitSignalsAndDrain(const sigset_t& signals, Engine* engine,
                          grpc::HealthCheckServiceInterface* health, std::atomic<bool>* ready) {
  int signal_number = 0;
  sigwait(&signals, &signal_number);
  const absl::Duration grace = absl::GetFlag(FLAGS_shutdown_grace);
  LogInfo("received ", signal_number == SIGTERM ? "SIGTERM" : "SIGINT",
          ": not ready, refusing new requests, ending those not started; running streams "
          "get up to ", absl::FormatDuration(grace), " (a second signal ends them now)");
  health->SetServingStatus(false);
  *ready = false;
  std::atomic<int> cut_off{-1};
  std::thread drain([&] { cut_off = engine->Shutdown(grace); });
  const timespec poll{0, 100'000'000};
  while (cut_off.load() < 0) {
    if (sigtimedwait(&signals, nullptr, &poll) > 0) {
      LogInfo("second signal: ending the running streams now");
      engine->CutShort();
    }
  }
  drain.join();
  if (cut_off > 0) LogInfo("cut off ", cut_off.load(), " unfinished requests");
}

// cuda_queues: CUDA_DEVICE_MAX_CONNECTIONS as UseOneCudaHardwareQueue left it.
int Serve(const std::string& cuda_queues) {
  // Signals are taken by sigwait below; every thread inherits this mask.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  LogInfo("tandem-server starting: LibTorch ", TorchVersion(),
          CudaAvailable()
              ? absl::StrCat(", CUDA available (CUDA_DEVICE_MAX_CONNECTIONS=", cuda_queues, ")")
              : ", no CUDA device");
  // Protobuf's own complaints (e.g. invalid UTF-8 in a request) can be
  // caused at will by clients: at most one line a second.
  google::protobuf::SetLogHandler([](google::protobuf::LogLevel, const char*, int,
                                     const std::string& message) {
    LogRateLimited(LogLevel::kWarning, "protobuf", absl::StrCat("protobuf: ", message));
  });
  const int32_t max_queue = absl::GetFlag(FLAGS_max_queue);
  for (const auto& [name, value] :
       {std::pair<const char*, int32_t>{"max_queue", max_queue},
        {"max_prefill_tokens", absl::GetFlag(FLAGS_max_prefill_tokens)},
        {"prefill_tokens_while_decoding", absl::GetFlag(FLAGS_prefill_tokens_while_decoding)}}) {
    if (value < 1) {
      LogError("--", name, " must be >= 1");
      return 1;
    }
  }
  for (const auto& [name, value] :
       {std::pair<const char*, int32_t>{"grpc_write_threads",
                                        absl::GetFlag(FLAGS_grpc_write_threads)},
        {"delivery_threads", absl::GetFlag(FLAGS_delivery_threads)},
        {"http_threads", absl::GetFlag(FLAGS_http_threads)}}) {
    if (value < 0) {
      LogError("--", name, " must be >= 0");
      return 1;
    }
  }
  if (max_queue > 1000000) {  // (room to add slots to it in an int)
    LogError("--max_queue must be <= 1000000");
    return 1;
  }
  if (!(absl::GetFlag(FLAGS_prefill_stall_ratio) > 0)) {
    LogError("--prefill_stall_ratio must be > 0");
    return 1;
  }
  absl::StatusOr<Secrets> secrets = ReadSecrets();
  if (!secrets.ok()) {
    LogError(secrets.status().ToString());
    return 1;
  }
  ServerMetrics metrics({TANDEM_VERSION, TorchVersion(), CudaAvailable() ? "yes" : "no"});
  auto ready = std::make_shared<std::atomic<bool>>(false);
  auto openai = std::make_shared<OpenAiBackend>();
  absl::StatusOr<std::unique_ptr<HttpServer>> http =
      StartHttp(metrics, ready, openai, secrets->api_key);
  if (!http.ok()) {
    LogError("cannot serve HTTP: ", http.status().ToString());
    return 1;
  }
  absl::StatusOr<LoadedModel> loaded = LoadServedModel();
  if (!loaded.ok()) {
    LogError("cannot load the model: ", loaded.status().ToString());
    return 1;
  }
  // Shared with the OpenAI routes, whose handlers may outlive this function.
  const std::shared_ptr<const Tokenizer> tokenizer = std::move(loaded->tokenizer);
  const std::shared_ptr<const ChatTemplate> chat_template = std::move(loaded->chat_template);
  const ModelDescription& model = loaded->runner->description();
  metrics.OnModelLoaded(model.device, model.name, model.dtype, model.num_slots);
  EngineOptions engine_options;
  engine_options.max_queue = max_queue;
  engine_options.max_prefill_tokens_per_step = absl::GetFlag(FLAGS_max_prefill_tokens);
  engine_options.prefill_tokens_while_decoding =
      absl::GetFlag(FLAGS_prefill_tokens_while_decoding);
  engine_options.prefill_stall_ratio = absl::GetFlag(FLAGS_prefill_stall_ratio);
  engine_options.pipeline = absl::GetFlag(FLAGS_pipeline);
  engine_options.delivery_threads = absl::GetFlag(FLAGS_delivery_threads);
  ServiceOptions service_options;
  service_options.max_queue = max_queue;
  service_options.limits.max_prompt_bytes = MaxPromptBytes(*tokenizer, model.max_context);
  service_options.api_key = secrets->api_key;
  service_options.write_threads = absl::GetFlag(FLAGS_grpc_write_threads);
  Engine engine(engine_options, std::move(loaded->runner), tokenizer.get(), &metrics);
  LogInfo("engine: ", engine.model().runner, ", ",
          engine.pipelined() ? "double-buffered pipeline" : "synchronous steps",
          "; prompts up to ", service_options.limits.max_prompt_bytes, " bytes");
  GenerationService service(&engine, tokenizer.get(), chat_template.get(), &metrics,
                            service_options);
  OpenAiContext openai_context;
  openai_context.tokenizer = tokenizer;
  openai_context.chat_template = chat_template;
  openai_context.model_name = model.name;
  openai_context.max_prompt_bytes = service_options.limits.max_prompt_bytes;
  openai->Attach(&engine, openai_context, [&metrics] { metrics.OnRejected(); });
  // On every return from here: the HTTP handlers let go of the engine and
  // the metrics, then the HTTP server stops (waiting a while for its
  // connections), before the engine, the service and the metrics, declared
  // after it, are destroyed.
  auto stop_http = [&http, &openai] {
    openai->Detach();
    http->reset();
  };
  int port = 0;
  std::unique_ptr<grpc::Server> server = StartGrpc(&service, secrets->grpc_credentials, &port);
  if (server == nullptr) {
    LogError("cannot listen on ", absl::GetFlag(FLAGS_listen), " (address in use or invalid?)");
    stop_http();
    return 1;
  }
  grpc::HealthCheckServiceInterface* health = server->GetHealthCheckService();
  health->SetServingStatus(true);
  *ready = true;
  LogInfo("gRPC listening on ", BoundAddress(absl::GetFlag(FLAGS_listen), port),
          absl::GetFlag(FLAGS_tls_cert).empty() ? "" : " (TLS)",
          " (service tandem.v1.Generation, health, reflection); queue ", max_queue,
          secrets->api_key.empty() ? "" : "; API key required");
  AwaitSignalsAndDrain(signals, &engine, health, ready.get());
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(5));
  stop_http();
  LogInfo("stopped");
  return 0;
}

}  // namespace
}  // namespace tandem

int main(int argc, char** argv) {
  tandem::SetProgramUsage(
      "Serves a language model over gRPC (tandem.v1.Generation).\n"
      "Usage: tandem-server [--model=DIR] [--listen=HOST:PORT] [flags]");
  absl::ParseCommandLine(argc, argv);
  const std::string queues = tandem::UseOneCudaHardwareQueue();  // before any CUDA call
  tandem::KeepFreedHostMemory();  // before any tensor
  return tandem::Serve(queues);
}
