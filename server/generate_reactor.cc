#include "server/generate_reactor.h"

#include <atomic>
#include <chrono>

#include "absl/strings/str_cat.h"
#include "server/raw_messages.h"
#include "server/request_conversion.h"

namespace tandem {
namespace {

absl::Time DeadlineOf(const grpc::CallbackServerContext& context) {
  const auto deadline = context.deadline();
  if (deadline >= std::chrono::system_clock::time_point::max() - std::chrono::hours(24 * 365)) {
    return absl::InfiniteFuture();
  }
  return absl::FromChrono(deadline);
}

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
class GenerateReactor::Stream : public TokenSink,
                                public std::enable_shared_from_this<GenerateReactor::Stream> {
 public:
  // `dispatcher` null: writes start on the thread that queues them.
  Stream(GenerateReactor* reactor, std::string request_id, WriteDispatcher* dispatcher)
      : reactor_(reactor),
        request_id_(std::move(request_id)),
        dispatcher_(dispatcher),
        shard_(next_shard_.fetch_add(1)) {}

  void OnChunk(GenerationChunk chunk) override {
    v1::GenerateResponse response;
    response.set_text(std::move(chunk.text));
    response.mutable_token_ids()->Add(chunk.token_ids.begin(), chunk.token_ids.end());
    response.mutable_logprobs()->Add(chunk.logprobs.begin(), chunk.logprobs.end());
    bool post = false;
    {
      absl::MutexLock lock(&mu_);
      post = Enqueue(std::move(response));
    }
    if (post) PostWrite();
  }

  void OnFinish(const GenerationSummary& summary) override {
    bool post = false;
    {
      absl::MutexLock lock(&mu_);
      post = Finished(summary);
    }
    if (post) PostWrite();
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
  // OnFinish under mu_; returns Enqueue's answer for the summary.
  bool Finished(const GenerationSummary& summary) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    bool post = false;
    if (summary.reason == FinishReason::kCancelled) {
      final_status_ = grpc::Status(grpc::StatusCode::CANCELLED, "cancelled");
    } else if (summary.reason == FinishReason::kDeadline) {
      final_status_ = grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED, "deadline exceeded");
    } else if (!summary.error.ok()) {
      // kError, or kShutdown before the request started (UNAVAILABLE: the
      // client may retry elsewhere).
      final_status_ = ToGrpcStatus(summary.error);
    } else {
      v1::GenerateResponse last;
      FillSummary(summary, &last);
      post = Enqueue(std::move(last));
    }
    engine_done_ = true;
    MaybeFinish();
    return post;
  }

  // Queues `response`, or merges it into the last queued one. Returns true
  // when the caller must PostWrite() (after releasing mu_: a dispatcher that
  // is shutting down runs the task inline, and the task takes mu_).
  bool Enqueue(v1::GenerateResponse response) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (reactor_ == nullptr || broken_ || finish_called_) return false;
    if (!pending_.empty()) {
      Merge(std::move(response), &pending_.back());
    } else {
      pending_.push_back(std::move(response));
    }
    if (write_in_flight_ || write_scheduled_) return false;  // WriteDone or the task takes it
    if (dispatcher_ == nullptr) {
      StartNextWrite();
      return false;
    }
    write_scheduled_ = true;
    return true;
  }

  void PostWrite() ABSL_LOCKS_EXCLUDED(mu_) {
    dispatcher_->Post(shard_, [self = shared_from_this()] { self->StartScheduledWrite(); });
  }

  // On a dispatcher thread: starts the write Enqueue scheduled, unless the
  // call ended meanwhile.
  void StartScheduledWrite() {
    absl::MutexLock lock(&mu_);
    write_scheduled_ = false;
    if (reactor_ != nullptr && !broken_ && !write_in_flight_ && !pending_.empty()) {
      StartNextWrite();
      return;
    }
    MaybeFinish();
  }

  void StartNextWrite() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    v1::GenerateResponse next = std::move(pending_.front());
    pending_.pop_front();
    next.set_request_id(request_id_);
    (void)SerializeResponse(next, &in_flight_);
    write_in_flight_ = true;
    reactor_->StartWrite(&in_flight_);
  }

  void MaybeFinish() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (reactor_ == nullptr || finish_called_ || write_in_flight_ || write_scheduled_) return;
    if (!engine_done_ || !pending_.empty()) return;
    finish_called_ = true;
    reactor_->Finish(final_status_);
  }

  absl::Mutex mu_;
  GenerateReactor* reactor_ ABSL_GUARDED_BY(mu_);  // null after OnDone
  const std::string request_id_;
  WriteDispatcher* const dispatcher_;  // not owned; null: write inline
  const size_t shard_;                 // the dispatcher thread of this call's writes
  static inline std::atomic<size_t> next_shard_{0};
  std::deque<v1::GenerateResponse> pending_ ABSL_GUARDED_BY(mu_);
  grpc::ByteBuffer in_flight_ ABSL_GUARDED_BY(mu_);  // serialized GenerateResponse
  bool write_in_flight_ ABSL_GUARDED_BY(mu_) = false;
  bool write_scheduled_ ABSL_GUARDED_BY(mu_) = false;  // a dispatcher task will start it
  bool engine_done_ ABSL_GUARDED_BY(mu_) = false;
  bool broken_ ABSL_GUARDED_BY(mu_) = false;
  bool finish_called_ ABSL_GUARDED_BY(mu_) = false;
  grpc::Status final_status_ ABSL_GUARDED_BY(mu_) = grpc::Status::OK;
};

GenerateReactor::GenerateReactor(Engine* engine, const Tokenizer* tokenizer,
                                 const ChatTemplate* chat_template, ServerMetrics* metrics, const WireLimits& limits,
                                 const grpc::Status& authorized, const grpc::ByteBuffer* raw,
                                 grpc::CallbackServerContext* context,
                                 WriteDispatcher* dispatcher)
    : engine_(engine), metrics_(metrics), deadline_(DeadlineOf(*context)) {
  if (!raw->Valid()) {
    // No request message arrived: the call ended first (its deadline, or
    // the client gave up). gRPC still runs raw handlers for such calls.
    stream_ = std::make_shared<Stream>(this, NewRequestId(), dispatcher);
    const FinishReason reason = ExpiredReason();
    Refuse(reason == FinishReason::kDeadline
               ? grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED, "deadline exceeded")
               : grpc::Status(grpc::StatusCode::CANCELLED, "cancelled before the request arrived"),
           reason);
    return;
  }
  v1::GenerateRequest request;
  grpc::Status parsed = authorized.ok() ? ParseRequest(*raw, &request) : authorized;
  if (parsed.ok() && request.request_id().size() > limits.max_request_id_bytes) {
    parsed = ToGrpcStatus(CheckSize("request_id", request.request_id().size(),
                                    limits.max_request_id_bytes));
  }
  std::string id = !parsed.ok() || request.request_id().empty() ? NewRequestId()
                                                                : request.request_id();
  stream_ = std::make_shared<Stream>(this, id, dispatcher);
  if (!parsed.ok()) {
    Refuse(std::move(parsed), FinishReason::kError);
    return;
  }
  if (absl::Now() >= deadline_) {
    Refuse(grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED, "deadline exceeded"),
           FinishReason::kDeadline);
    return;
  }
  absl::StatusOr<GenerationRequest> converted = ToGenerationRequest(request, *tokenizer, *chat_template, limits);
  if (!converted.ok()) {
    Refuse(ToGrpcStatus(converted.status()), FinishReason::kError);
    return;
  }
  converted->request_id = std::move(id);
  converted->sink = stream_;
  converted->deadline = deadline_;
  absl::StatusOr<uint64_t> submitted = engine_->Submit(*std::move(converted));
  if (!submitted.ok()) {
    Refuse(ToGrpcStatus(submitted.status()), FinishReason::kError);
    return;
  }
  engine_id_ = *submitted;
  submitted_ = true;
}

void GenerateReactor::Refuse(grpc::Status status, FinishReason reason) {
  if (metrics_ != nullptr) metrics_->OnEndedBeforeStart(reason);
  stream_->FinishNow(std::move(status));
}

void GenerateReactor::OnWriteDone(bool ok) {
  // A failed write comes with OnCancel, which tells the engine why.
  if (!ok && submitted_) engine_->Cancel(engine_id_, ExpiredReason());
  stream_->WriteDone(ok);
}

FinishReason GenerateReactor::ExpiredReason() const {
  return absl::Now() + absl::Milliseconds(50) >= deadline_ ? FinishReason::kDeadline
                                                           : FinishReason::kCancelled;
}

void GenerateReactor::OnCancel() {
  // A client cancellation or an expired deadline: either way the slot is
  // freed at the engine's next step, and the engine counts which it was.
  // gRPC's deadline timer and absl::Now() can disagree by a few
  // milliseconds, so a cancellation that close to the deadline is the
  // deadline's.
  const bool expired = ExpiredReason() == FinishReason::kDeadline;
  if (submitted_ && !stream_->engine_done()) engine_->Cancel(engine_id_, ExpiredReason());
  stream_->FinishNow(expired ? grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED, "deadline exceeded")
                             : grpc::Status(grpc::StatusCode::CANCELLED, "cancelled"));
}

void GenerateReactor::OnDone() {
  stream_->Detach();
  delete this;
}

}  // namespace tandem
