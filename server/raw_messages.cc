#include "server/raw_messages.h"

#include <string>
#include <vector>

#include <grpcpp/support/slice.h>

#include "absl/strings/str_cat.h"
#include "core/base/logging.h"

namespace tandem {

grpc::Status ParseRequest(const grpc::ByteBuffer& raw, google::protobuf::Message* request) {
  std::vector<grpc::Slice> slices;
  std::string bytes;
  if (raw.Dump(&slices).ok()) {
    for (const grpc::Slice& slice : slices) {
      bytes.append(reinterpret_cast<const char*>(slice.begin()), slice.size());
    }
  }
  if (request->ParseFromString(bytes)) return grpc::Status::OK;
  const std::string type = request->GetDescriptor()->full_name();
  LogRateLimited(LogLevel::kWarning, "unparsable request",
                 absl::StrCat("refused an unparsable ", type, " (", bytes.size(), " bytes)"));
  return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                      absl::StrCat("the request is not a valid ", type,
                                   ": a string field (e.g. prompt, text, request_id, stop) "
                                   "holds invalid UTF-8, or the message is malformed"));
}

grpc::Status SerializeResponse(const google::protobuf::Message& response, grpc::ByteBuffer* raw) {
  std::string bytes;
  if (!response.SerializeToString(&bytes)) {
    return grpc::Status(grpc::StatusCode::INTERNAL, "cannot serialize the response");
  }
  grpc::Slice slice(bytes);
  *raw = grpc::ByteBuffer(&slice, 1);
  return grpc::Status::OK;
}

}  // namespace tandem
