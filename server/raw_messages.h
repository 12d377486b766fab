// Requests and responses of the raw (ByteBuffer) methods, parsed and
// serialized here so that a bad request gets a proper status.
#ifndef TANDEM_SERVER_RAW_MESSAGES_H_
#define TANDEM_SERVER_RAW_MESSAGES_H_

#include <google/protobuf/message.h>
#include <grpcpp/support/byte_buffer.h>
#include <grpcpp/support/status.h>

namespace tandem {

// INVALID_ARGUMENT naming the message type when `raw` does not parse (a
// malformed message, or a string field that is not valid UTF-8); such
// failures are logged at most once a second.
grpc::Status ParseRequest(const grpc::ByteBuffer& raw, google::protobuf::Message* request);
// INTERNAL if `response` cannot be serialized (it always can).
grpc::Status SerializeResponse(const google::protobuf::Message& response, grpc::ByteBuffer* raw);

}  // namespace tandem

#endif  // TANDEM_SERVER_RAW_MESSAGES_H_
