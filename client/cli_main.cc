// tandem-cli: talks to tandem-server (generate, tokenize, detokenize, info)
// and writes random checkpoints of any supported family (make-model).
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/base/program_usage.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "client/client_credentials.h"
#include "core/model/random_checkpoint.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "tandem/v1/generation.grpc.pb.h"

ABSL_FLAG(std::string, server, "localhost:50051", "tandem-server address (host:port)");
ABSL_FLAG(absl::Duration, timeout, absl::ZeroDuration(),
          "deadline of the call (0: none)");
ABSL_FLAG(std::string, tls_ca, "",
          "PEM file of the CA (or self-signed certificate) to trust: connect over TLS");
ABSL_FLAG(std::string, api_key_file, "",
          "file with the server's API key, sent as 'authorization: Bearer KEY'");
// generate
ABSL_FLAG(int32_t, max_tokens, 64, "tokens to generate at most (0: until the context is full)");
ABSL_FLAG(double, temperature, 0.0, "0 = greedy; > 0 samples");
ABSL_FLAG(int32_t, top_k, 0, "sample among the k most likely tokens (0: all)");
ABSL_FLAG(double, top_p, 1.0, "nucleus sampling mass in (0, 1]");
ABSL_FLAG(double, min_p, 0.0, "drop tokens below min_p x the top probability");
ABSL_FLAG(std::string, seed, "", "seed of the request's random stream (empty: random)");
ABSL_FLAG(std::vector<std::string>, stop, {}, "stop strings, comma-separated");
ABSL_FLAG(std::vector<std::string>, stop_token_ids, {}, "stop token ids, comma-separated");
ABSL_FLAG(bool, ignore_eos, false, "keep generating past the model's end-of-sequence tokens");
ABSL_FLAG(bool, ids, false, "the prompt is comma-separated token ids, not text");
ABSL_FLAG(bool, logprobs, false, "print each token's id and log-probability");
ABSL_FLAG(std::string, request_id, "", "request id echoed by the server");
// make-model
ABSL_FLAG(std::string, out, "", "make-model: output directory");
ABSL_FLAG(std::string, arch, "",
          "make-model: the architecture (config.json's model_type; empty: the default)");
ABSL_FLAG(std::string, size, "", "make-model: a size of that architecture (empty: its default)");
ABSL_FLAG(int32_t, layers, 0, "make-model: override the number of layers");
ABSL_FLAG(int32_t, hidden, 0, "make-model: override the hidden size");
ABSL_FLAG(int32_t, heads, 0, "make-model: override the number of attention heads");
ABSL_FLAG(int32_t, context, 0, "make-model: override the maximum positions");
ABSL_FLAG(int32_t, vocab_size, 0, "make-model: override the vocabulary size (tests)");
ABSL_FLAG(tandem::DType, dtype, tandem::DType::kFloat32,
          "make-model: how the weights are stored: float32, float16 or bfloat16");
ABSL_FLAG(uint64_t, weights_seed, 20241129, "make-model: seed of the random weights");
ABSL_FLAG(std::string, tokenizer, "",
          "make-model, architectures without a compiled-in tokenizer: directory with the real "
          "tokenizer.json and tokenizer_config.json to copy (empty: the copy "
          "scripts/install-deps.sh fetched into third_party/)");
ABSL_FLAG(int64_t, max_shard_mb, 0,
          "make-model: write the weights as shards of at most this many MiB with "
          "model.safetensors.index.json (0: one model.safetensors)");

namespace tandem {
namespace {

using v1::Generation;

// Exits 2 with the error of a flag's file that cannot be used.
template <typename T>
T ValueOrExit(absl::StatusOr<T> value) {
  if (!value.ok()) {
    std::cerr << "error: " << value.status().message() << "\n";
    std::exit(2);
  }
  return *std::move(value);
}

// A channel to --server, over TLS with --tls_ca.
std::shared_ptr<grpc::Channel> OpenChannel() {
  return grpc::CreateChannel(absl::GetFlag(FLAGS_server),
                             ValueOrExit(ChannelCredentialsFor(absl::GetFlag(FLAGS_tls_ca))));
}

std::unique_ptr<Generation::Stub> Connect() { return Generation::NewStub(OpenChannel()); }

// The call's deadline, and the API key when one is given.
void SetDeadline(grpc::ClientContext* context) {
  if (const std::string file = absl::GetFlag(FLAGS_api_key_file); !file.empty()) {
    static const std::string key = ValueOrExit(ReadApiKey(file));
    AddApiKey(key, context);
  }
  const absl::Duration timeout = absl::GetFlag(FLAGS_timeout);
  if (timeout > absl::ZeroDuration()) {
    context->set_deadline(absl::ToChronoTime(absl::Now() + timeout));
  }
}

int Fail(const grpc::Status& status) {
  std::cerr << "error: " << DescribeStatus(status) << "\n";
  return 1;
}

// The server's gRPC health service (open without the API key): prints the
// status; exits 0 when it is SERVING, 1 otherwise (starting, draining, or
// not answering).
int Health() {
  grpc::health::v1::HealthCheckRequest request;
  request.set_service("");  // the whole server: the status the server sets
  grpc::health::v1::HealthCheckResponse response;
  grpc::ClientContext context;
  SetDeadline(&context);
  const grpc::Status status =
      grpc::health::v1::Health::NewStub(OpenChannel())->Check(&context, request, &response);
  if (!status.ok()) return Fail(status);
  std::cout << grpc::health::v1::HealthCheckResponse::ServingStatus_Name(response.status())
            << "\n";
  return response.status() == grpc::health::v1::HealthCheckResponse::SERVING ? 0 : 1;
}

bool ParseInts(const std::vector<std::string>& parts, google::protobuf::RepeatedField<int32_t>* out) {
  for (const std::string& part : parts) {
    int32_t value;
    if (!absl::SimpleAtoi(part, &value)) {
      std::cerr << "error: \"" << part << "\" is not an integer token id\n";
      return false;
    }
    out->Add(value);
  }
  return true;
}

int Generate(const std::string& prompt) {
  v1::GenerateRequest request;
  request.set_request_id(absl::GetFlag(FLAGS_request_id));
  if (absl::GetFlag(FLAGS_ids)) {
    if (!ParseInts(absl::StrSplit(prompt, ',', absl::SkipWhitespace()),
                   request.mutable_prompt_token_ids())) {
      return 2;
    }
  } else {
    request.set_prompt(prompt);
  }
  v1::SamplingParams* sampling = request.mutable_sampling();
  sampling->set_temperature(static_cast<float>(absl::GetFlag(FLAGS_temperature)));
  sampling->set_top_k(absl::GetFlag(FLAGS_top_k));
  sampling->set_top_p(static_cast<float>(absl::GetFlag(FLAGS_top_p)));
  sampling->set_min_p(static_cast<float>(absl::GetFlag(FLAGS_min_p)));
  if (const std::string seed = absl::GetFlag(FLAGS_seed); !seed.empty()) {
    uint64_t value;
    if (!absl::SimpleAtoi(seed, &value)) {
      std::cerr << "error: --seed=" << seed << " is not an unsigned integer\n";
      return 2;
    }
    sampling->set_seed(value);
  }
  v1::StoppingCriteria* stopping = request.mutable_stopping();
  stopping->set_max_tokens(absl::GetFlag(FLAGS_max_tokens));
  for (const std::string& stop : absl::GetFlag(FLAGS_stop)) stopping->add_stop(stop);
  if (!ParseInts(absl::GetFlag(FLAGS_stop_token_ids), stopping->mutable_stop_token_ids())) {
    return 2;
  }
  stopping->set_ignore_eos(absl::GetFlag(FLAGS_ignore_eos));
  request.set_return_logprobs(absl::GetFlag(FLAGS_logprobs));

  auto stub = Connect();
  grpc::ClientContext context;
  SetDeadline(&context);
  std::unique_ptr<grpc::ClientReader<v1::GenerateResponse>> reader =
      stub->Generate(&context, request);
  v1::GenerateResponse response;
  v1::GenerateResponse last;
  while (reader->Read(&response)) {
    std::fputs(response.text().c_str(), stdout);
    std::fflush(stdout);
    if (absl::GetFlag(FLAGS_logprobs)) {
      for (int i = 0; i < response.token_ids_size(); ++i) {
        std::fprintf(stderr, "[%d %.4f]", response.token_ids(i),
                     i < response.logprobs_size() ? response.logprobs(i) : 0.0f);
      }
    }
    if (response.finish_reason() != v1::FINISH_REASON_UNSPECIFIED) last = response;
  }
  const grpc::Status status = reader->Finish();
  std::fputs("\n", stdout);
  std::fflush(stdout);
  if (!status.ok()) return Fail(status);
  std::fprintf(stderr,
               "[%s: %s, %d prompt + %d completion tokens, queue %.3f s, first "
               "token %.3f s, total %.3f s]\n",
               last.request_id().c_str(),
               v1::FinishReason_Name(last.finish_reason()).c_str(),
               last.usage().prompt_tokens(), last.usage().completion_tokens(),
               last.timings().queue_seconds(),
               last.timings().time_to_first_token_seconds(),
               last.timings().total_seconds());
  return 0;
}

int Tokenize(const std::string& text) {
  v1::TokenizeRequest request;
  request.set_text(text);
  v1::TokenizeResponse response;
  grpc::ClientContext context;
  SetDeadline(&context);
  const grpc::Status status = Connect()->Tokenize(&context, request, &response);
  if (!status.ok()) return Fail(status);
  std::cout << absl::StrJoin(response.token_ids(), " ") << "\n";
  return 0;
}

int Detokenize(const std::string& ids) {
  v1::DetokenizeRequest request;
  if (!ParseInts(absl::StrSplit(ids, absl::ByAnyChar(", "), absl::SkipWhitespace()),
                 request.mutable_token_ids())) {
    return 2;
  }
  v1::DetokenizeResponse response;
  grpc::ClientContext context;
  SetDeadline(&context);
  const grpc::Status status = Connect()->Detokenize(&context, request, &response);
  if (!status.ok()) return Fail(status);
  std::cout << response.text() << "\n";
  return 0;
}

int Info() {
  v1::ModelInfo info;
  grpc::ClientContext context;
  SetDeadline(&context);
  const grpc::Status status =
      Connect()->GetModelInfo(&context, v1::GetModelInfoRequest(), &info);
  if (!status.ok()) return Fail(status);
  std::cout << info.DebugString();
  return 0;
}

int MakeModel() {
  const std::string out = absl::GetFlag(FLAGS_out);
  if (out.empty()) {
    std::cerr << "error: make-model needs --out=DIR\n";
    return 2;
  }
  for (const auto& [flag, value] :
       {std::pair{"layers", absl::GetFlag(FLAGS_layers)}, {"hidden", absl::GetFlag(FLAGS_hidden)},
        {"heads", absl::GetFlag(FLAGS_heads)}, {"context", absl::GetFlag(FLAGS_context)},
        {"vocab_size", absl::GetFlag(FLAGS_vocab_size)}}) {
    if (value < 0) {
      std::cerr << "error: --" << flag << " must be 0 (the size's own) or more, not " << value
                << "\n";
      return 2;
    }
  }
  const int64_t shard_mb = absl::GetFlag(FLAGS_max_shard_mb);
  if (shard_mb < 0 || shard_mb > (int64_t{1} << 20)) {
    std::cerr << "error: --max_shard_mb must be 0 (one file) to 1048576 MiB, not " << shard_mb
              << "\n";
    return 2;
  }
  RandomCheckpointOptions options;
  options.architecture = absl::GetFlag(FLAGS_arch);
  options.preset = absl::GetFlag(FLAGS_size);
  options.overrides.num_layers = absl::GetFlag(FLAGS_layers);
  options.overrides.hidden_size = absl::GetFlag(FLAGS_hidden);
  options.overrides.num_heads = absl::GetFlag(FLAGS_heads);
  options.overrides.max_positions = absl::GetFlag(FLAGS_context);
  options.overrides.vocab_size = absl::GetFlag(FLAGS_vocab_size);
  options.seed = absl::GetFlag(FLAGS_weights_seed);
  options.dtype = absl::GetFlag(FLAGS_dtype);
  options.tokenizer_dir = absl::GetFlag(FLAGS_tokenizer);
  options.max_shard_bytes = shard_mb << 20;
  const absl::Status written = WriteRandomCheckpoint(out, options);
  if (!written.ok()) {
    std::cerr << "error: " << written.message() << "\n";
    return 1;
  }
  std::cout << "wrote " << out << " (" << ResolvedPreset(options) << " with random weights)\n";
  return 0;
}

}  // namespace
}  // namespace tandem

int main(int argc, char** argv) {
  tandem::SetProgramUsage(absl::StrCat(
      "Tandem's command-line client.\n"
      "  tandem-cli generate \"PROMPT\" [--max_tokens=N --temperature=T --seed=S --stop=a,b ...]\n"
      "  tandem-cli tokenize \"TEXT\"\n"
      "  tandem-cli detokenize \"ID ID ...\"\n"
      "  tandem-cli info\n"
      "  tandem-cli health      exits 0 when the server is SERVING\n"
      "  tandem-cli make-model --out=DIR [--arch=A --size=S --dtype=T]\n"
      "All commands but make-model talk to --server. Architectures and sizes:\n  ",
      absl::StrJoin(tandem::DescribeArchitectures(), "\n  ")));
  std::vector<char*> args = absl::ParseCommandLine(argc, argv);
  const std::string command = args.size() > 1 ? args[1] : "";
  const std::string operand = args.size() > 2 ? args[2] : "";
  if (command == "make-model" && args.size() == 2) return tandem::MakeModel();
  if (command == "info" && args.size() == 2) return tandem::Info();
  if (command == "health" && args.size() == 2) return tandem::Health();
  if (args.size() == 3) {
    if (command == "generate") return tandem::Generate(operand);
    if (command == "tokenize") return tandem::Tokenize(operand);
    if (command == "detokenize") return tandem::Detokenize(operand);
  }
  std::cerr << absl::ProgramUsageMessage() << "\n";
  return 2;
}
