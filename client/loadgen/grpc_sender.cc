#include "client/loadgen/grpc_sender.h"

#include <memory>
#include <string>

#include <grpcpp/grpcpp.h>

#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "client/client_credentials.h"

namespace tandem {
namespace {

// Reads one stream through gRPC's callback API. The reactor's callbacks run
// on gRPC's threads, one at a time for this call; Await blocks the caller
// until OnDone. `record` is written only by the callbacks until then.
class StreamReader : public grpc::ClientReadReactor<v1::GenerateResponse> {
 public:
  StreamReader(absl::Time start, RequestRecord* record) : start_(start), record_(record) {}

  grpc::ClientContext& context() { return context_; }

  void Start(v1::Generation::Stub& stub, const v1::GenerateRequest& request) {
    stub.async()->Generate(&context_, &request, this);
    StartRead(&response_);
    StartCall();
  }

  void OnReadDone(bool ok) override {
    if (!ok) return;  // the stream ended: OnDone follows
    const double t = absl::ToDoubleSeconds(absl::Now() - start_);
    for (int i = 0; i < response_.token_ids_size(); ++i) record_->token_times.push_back(t);
    StartRead(&response_);
  }

  void OnDone(const grpc::Status& status) override {
    const double end = absl::ToDoubleSeconds(absl::Now() - start_);
    absl::MutexLock lock(&mu_);
    record_->end = end;
    status_ = status;
    done_ = true;
  }

  grpc::Status Await() {
    absl::MutexLock lock(&mu_);
    mu_.Await(absl::Condition(&done_));
    return status_;
  }

 private:
  const absl::Time start_;
  RequestRecord* const record_;
  grpc::ClientContext context_;
  v1::GenerateResponse response_;
  absl::Mutex mu_;
  bool done_ ABSL_GUARDED_BY(mu_) = false;
  grpc::Status status_ ABSL_GUARDED_BY(mu_);
};

}  // namespace

RequestRecord SendGenerate(v1::Generation::Stub& stub, const v1::GenerateRequest& request,
                           absl::Time run_start, const GrpcCallOptions& options) {
  const auto prepare = [&](grpc::ClientContext& context, absl::Time start) {
    AddApiKey(options.api_key, &context);
    if (options.timeout != absl::InfiniteDuration()) {
      context.set_deadline(absl::ToChronoTime(start + options.timeout));
    }
  };
  RequestRecord r;
  r.prompt_tokens = request.prompt_token_ids_size();
  const absl::Time start = absl::Now();
  r.start = absl::ToDoubleSeconds(start - run_start);
  r.start_unix = absl::ToDoubleSeconds(start - absl::UnixEpoch());
  grpc::Status status;
  if (options.reads == GrpcReads::kCallback) {
    StreamReader reader(start, &r);
    prepare(reader.context(), start);
    reader.Start(stub, request);
    status = reader.Await();
  } else {
    grpc::ClientContext context;
    prepare(context, start);
    std::unique_ptr<grpc::ClientReader<v1::GenerateResponse>> reader =
        stub.Generate(&context, request);
    v1::GenerateResponse response;
    while (reader->Read(&response)) {
      const double t = absl::ToDoubleSeconds(absl::Now() - start);
      for (int i = 0; i < response.token_ids_size(); ++i) r.token_times.push_back(t);
    }
    status = reader->Finish();
    r.end = absl::ToDoubleSeconds(absl::Now() - start);
  }
  r.ok = status.ok();
  if (!r.ok) r.error = DescribeStatus(status);
  return r;
}

}  // namespace tandem
