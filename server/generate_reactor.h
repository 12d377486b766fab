// One server-streaming Generate call.
#ifndef TANDEM_SERVER_GENERATE_REACTOR_H_
#define TANDEM_SERVER_GENERATE_REACTOR_H_

#include <cstdint>
#include <deque>
#include <memory>

#include <grpcpp/grpcpp.h>

#include "absl/synchronization/mutex.h"
#include "core/engine/engine.h"
#include "core/text/tokenizer.h"
#include "core/engine/token_sink.h"
#include "server/server_metrics.h"
#include "tandem/v1/generation.grpc.pb.h"

namespace tandem {

// Callback-API reactor: at most one write in flight, later chunks wait in a
// small queue where consecutive chunks are merged, so a slow client costs
// memory proportional to its backlog of text, never a blocked engine.
//
// Lifetime: gRPC owns the reactor and it deletes itself in OnDone(). The
// engine owns the Stream (its TokenSink) through a shared_ptr; after OnDone
// the Stream drops whatever the engine still sends.
// Threading: the Stream's methods run on the engine thread, the reactor's
// On* methods on gRPC threads; both sides meet under Stream::mu_.
class GenerateReactor : public grpc::ServerWriteReactor<v1::GenerateResponse> {
 public:
  // Validates and submits the request; finishes at once on error.
  // `deadline` is the call's deadline (absl::InfiniteFuture() for none).
  // `metrics` may be null; it counts requests refused before queueing.
  GenerateReactor(Engine* engine, const Tokenizer* tokenizer,
                  ServerMetrics* metrics, const v1::GenerateRequest* request,
                  absl::Time deadline);

  void OnWriteDone(bool ok) override;
  void OnCancel() override;
  void OnDone() override;

 private:
  class Stream;

  Engine* engine_;
  std::shared_ptr<Stream> stream_;
  uint64_t engine_id_ = 0;
  bool submitted_ = false;
};

}  // namespace tandem

#endif  // TANDEM_SERVER_GENERATE_REACTOR_H_
