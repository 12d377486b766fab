#include "server/generate_reactor.h"

#include <atomic>

#include "absl/strings/str_cat.h"
#include "server/request_conversion.h"

namespace tandem {
namespace {

std::string NewRequestId() {
  static std::atomic<uint64_t> counter{0};
  return absl::StrCat("req-", counter.fetch_add(1) + 1);
}

// Appends `next` to `into` (text, ids, logprobs, and the summary fields).
void Merge(v1::GenerateResponse next, v1::GenerateResponse* into) {
  into->mutable_text()->append(next.text());
  into->mutable_token_ids()->MergeFrom(next.token_ids());
  into->mutable_logprobs()->MergeFrom(next.logprobs());
  if (next.finish_reason() != v1::FINISH_REASON_UNSPECIFIED || next.has_usage()) {
    into->set_finish_reason(next.finish_reason());
    into->set_stop_sequence(next.stop_sequence());
    *into->mutable_usage() = next.usage();
    *into->mutable_timings() = next.timings();
  }
}

}  // namespace

// The engine-facing half of a call. Owned jointly by the reactor and the
// engine; every member is guarded by mu_.
class GenerateReactor::Stream : public TokenSink {
 public:
  Stream(GenerateReactor* reactor, std::string request_id)
      : reactor_(reactor), request_id_(std::move(request_id)) {}

  void OnChunk(GenerationChunk chunk) override {
    v1::GenerateResponse response;
    response.set_text(std::move(chunk.text));
    response.mutable_token_ids()->Add(chunk.token_ids.begin(), chunk.token_ids.end());
    response.mutable_logprobs()->Add(chunk.logprobs.begin(), chunk.logprobs.end());
    absl::MutexLock lock(&mu_);
    Enqueue(std::move(response));
  }

  void OnFinish(const GenerationSummary& summary) override {
    absl::MutexLock lock(&mu_);
    if (summary.reason == FinishReason::kCancelled) {
      final_status_ = grpc::Status(grpc::StatusCode::CANCELLED, "cancelled");
    } else if (summary.reason == FinishReason::kError) {
      final_status_ = ToGrpcStatus(summary.error);
    } else {
      v1::GenerateResponse last;
      FillSummary(summary, &last);
      Enqueue(std::move(last));
    }
    engine_done_ = true;
    MaybeFinish();
  }

  void WriteDone(bool ok) {
    absl::MutexLock lock(&mu_);
    write_in_flight_ = false;
    if (!ok) {
      // The client is gone; nothing more can be written.
      pending_.clear();
      broken_ = true;
    } else if (!pending_.empty()) {
      StartNextWrite();
      return;
    }
    MaybeFinish();
  }

  // Finishes the call now (validation error, or the client cancelled).
  void FinishNow(grpc::Status status) {
    absl::MutexLock lock(&mu_);
    pending_.clear();
    broken_ = true;
    final_status_ = std::move(status);
    engine_done_ = true;
    MaybeFinish();
  }

  void Detach() {
    absl::MutexLock lock(&mu_);
    reactor_ = nullptr;
  }

  bool engine_done() {
    absl::MutexLock lock(&mu_);
    return engine_done_;
  }

 private:
  void Enqueue(v1::GenerateResponse response) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (reactor_ == nullptr || broken_ || finish_called_) return;
    if (!pending_.empty()) {
      Merge(std::move(response), &pending_.back());
    } else {
      pending_.push_back(std::move(response));
    }
    if (!write_in_flight_) StartNextWrite();
  }

  void StartNextWrite() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    in_flight_ = std::move(pending_.front());
    pending_.pop_front();
    in_flight_.set_request_id(request_id_);
    write_in_flight_ = true;
    reactor_->StartWrite(&in_flight_);
  }

  void MaybeFinish() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (reactor_ == nullptr || finish_called_ || write_in_flight_) return;
    if (!engine_done_ || !pending_.empty()) return;
    finish_called_ = true;
    reactor_->Finish(final_status_);
  }

  absl::Mutex mu_;
  GenerateReactor* reactor_ ABSL_GUARDED_BY(mu_);  // null after OnDone
  const std::string request_id_;
  std::deque<v1::GenerateResponse> pending_ ABSL_GUARDED_BY(mu_);
  v1::GenerateResponse in_flight_ ABSL_GUARDED_BY(mu_);
  bool write_in_flight_ ABSL_GUARDED_BY(mu_) = false;
  bool engine_done_ ABSL_GUARDED_BY(mu_) = false;
  bool broken_ ABSL_GUARDED_BY(mu_) = false;
  bool finish_called_ ABSL_GUARDED_BY(mu_) = false;
  grpc::Status final_status_ ABSL_GUARDED_BY(mu_) = grpc::Status::OK;
};

GenerateReactor::GenerateReactor(Engine* engine, const Tokenizer* tokenizer,
                                 ServerMetrics* metrics,
                                 const v1::GenerateRequest* request,
                                 absl::Time deadline)
    : engine_(engine) {
  std::string id = request->request_id().empty() ? NewRequestId() : request->request_id();
  stream_ = std::make_shared<Stream>(this, id);
  absl::StatusOr<GenerationRequest> converted =
      ToGenerationRequest(*request, *tokenizer);
  if (!converted.ok()) {
    if (metrics != nullptr) metrics->OnRejected();
    stream_->FinishNow(ToGrpcStatus(converted.status()));
    return;
  }
  converted->request_id = std::move(id);
  converted->sink = stream_;
  converted->deadline = deadline;
  absl::StatusOr<uint64_t> submitted = engine_->Submit(*std::move(converted));
  if (!submitted.ok()) {
    if (metrics != nullptr) metrics->OnRejected();
    stream_->FinishNow(ToGrpcStatus(submitted.status()));
    return;
  }
  engine_id_ = *submitted;
  submitted_ = true;
}

void GenerateReactor::OnWriteDone(bool ok) {
  if (!ok && submitted_) engine_->Cancel(engine_id_);
  stream_->WriteDone(ok);
}

void GenerateReactor::OnCancel() {
  // Covers both a client cancellation and an expired deadline: either way the
  // slot is freed at the engine's next step.
  if (submitted_ && !stream_->engine_done()) engine_->Cancel(engine_id_);
  stream_->FinishNow(grpc::Status(grpc::StatusCode::CANCELLED, "cancelled"));
}

void GenerateReactor::OnDone() {
  stream_->Detach();
  delete this;
}

}  // namespace tandem
