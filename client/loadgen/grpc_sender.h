// Runs one Generate stream for the load generator and times its tokens.
#ifndef TANDEM_CLIENT_LOADGEN_GRPC_SENDER_H_
#define TANDEM_CLIENT_LOADGEN_GRPC_SENDER_H_

#include <string>

#include "absl/time/time.h"
#include "client/loadgen/request_record.h"
#include "tandem/v1/generation.grpc.pb.h"

namespace tandem {

// How a stream's messages are read, which sets what the client adds to the
// gaps it measures.
enum class GrpcReads {
  // gRPC's callback API: each message's arrival is stamped in the reactor's
  // OnReadDone, on gRPC's own threads, as the transport delivers it.
  kCallback,
  // The synchronous API: the calling thread blocks in ClientReader::Read, so a
  // message is stamped once that thread has been woken and scheduled.
  kBlocking,
};

struct GrpcCallOptions {
  GrpcReads reads = GrpcReads::kBlocking;
  std::string api_key;  // non-empty: the metadata "authorization: Bearer KEY"
  absl::Duration timeout = absl::InfiniteDuration();  // the call's deadline, from its start
};

// Sends `request` on `stub` and records its tokens' arrival times; blocks
// until the stream ends. `run_start` anchors RequestRecord::start.
// Threading: any thread; calls may run concurrently on one stub.
RequestRecord SendGenerate(v1::Generation::Stub& stub, const v1::GenerateRequest& request,
                           absl::Time run_start, const GrpcCallOptions& options);

}  // namespace tandem

#endif  // TANDEM_CLIENT_LOADGEN_GRPC_SENDER_H_
