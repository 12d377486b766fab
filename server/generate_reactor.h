// One server-streaming Generate call.
#ifndef TANDEM_SERVER_GENERATE_REACTOR_H_
#define TANDEM_SERVER_GENERATE_REACTOR_H_

#include <cstdint>
#include <deque>
#include <memory>

#include <grpcpp/grpcpp.h>

#include "absl/synchronization/mutex.h"
#include "core/engine/engine.h"
#include "core/text/chat_template.h"
#include "core/text/tokenizer.h"
#include "core/engine/token_sink.h"
#include "server/request_conversion.h"
#include "server/server_metrics.h"
#include "server/write_dispatcher.h"
#include "tandem/v1/generation.grpc.pb.h"

namespace tandem {

// Callback-API reactor: at most one write in flight, later chunks wait in a
// small queue where consecutive chunks are merged, so a slow client costs
// memory proportional to its backlog of text, never a blocked engine.
//
// Lifetime: gRPC owns the reactor and it deletes itself in OnDone(). The
// engine owns the Stream (its TokenSink) through a shared_ptr; after OnDone
// the Stream drops whatever the engine still sends.
// Threading: the Stream's TokenSink methods run on one engine delivery
// thread (or the engine thread, with --delivery_threads=0), the reactor's
// On* methods on gRPC threads; both sides meet under Stream::mu_. A write
// the engine queues while none is in flight is started by a
// WriteDispatcher thread (when given one), so the delivering thread never
// writes to a socket; writes queued meanwhile start from OnWriteDone.
//
// Every call is counted once in tandem_requests_total: by the engine when it
// was submitted, here otherwise (refused: "rejected"; its deadline already
// passed: "deadline"). A call cancelled after its deadline passed finishes
// in the engine as "deadline", not "cancelled".
class GenerateReactor : public grpc::ServerWriteReactor<grpc::ByteBuffer> {
 public:
  // Parses, checks, validates and submits the request; finishes at once on
  // error, or when `authorized` is not OK. `metrics` may be null;
  // `dispatcher` too (writes then start on the thread that delivers the
  // tokens); it must
  // outlive the call.
  GenerateReactor(Engine* engine, const Tokenizer* tokenizer,
                  const ChatTemplate* chat_template, ServerMetrics* metrics,
                  const WireLimits& limits, const grpc::Status& authorized,
                  const grpc::ByteBuffer* request, grpc::CallbackServerContext* context,
                  WriteDispatcher* dispatcher = nullptr);

  void OnWriteDone(bool ok) override;
  void OnCancel() override;
  void OnDone() override;

 private:
  class Stream;

  // Why the call is being cancelled: kDeadline when its deadline has passed
  // (within gRPC's and our clocks' disagreement), else kCancelled.
  FinishReason ExpiredReason() const;
  // Finishes before submission with `status`, counted as `reason`
  // (kDeadline, kCancelled; anything else counts as "rejected").
  void Refuse(grpc::Status status, FinishReason reason);

  Engine* engine_;
  ServerMetrics* metrics_;
  absl::Time deadline_;  // absl::InfiniteFuture() for none
  std::shared_ptr<Stream> stream_;
  uint64_t engine_id_ = 0;
  bool submitted_ = false;
};

}  // namespace tandem

#endif  // TANDEM_SERVER_GENERATE_REACTOR_H_
