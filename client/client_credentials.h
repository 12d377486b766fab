// What the command-line client and the load generator share to reach a
// server: the API key and TLS trust from their flags' files, and status
// codes by name.
#ifndef TANDEM_CLIENT_CLIENT_CREDENTIALS_H_
#define TANDEM_CLIENT_CLIENT_CREDENTIALS_H_

#include <memory>
#include <string>

#include <grpcpp/grpcpp.h>

#include "absl/status/statusor.h"

namespace tandem {

// The API key in `path` (--api_key_file), surrounding whitespace removed;
// InvalidArgument naming the flag when the file cannot be read or is empty.
absl::StatusOr<std::string> ReadApiKey(const std::string& path);

// Sends `key` with the call as "authorization: Bearer KEY" (nothing when
// empty).
void AddApiKey(const std::string& key, grpc::ClientContext* context);

// Plaintext when `tls_ca_path` is empty, else TLS trusting the PEM
// certificates in that file (--tls_ca); InvalidArgument when it cannot be
// read or holds no PEM certificate.
absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> ChannelCredentialsFor(
    const std::string& tls_ca_path);

// "UNAUTHENTICATED: this server needs ...".
std::string DescribeStatus(const grpc::Status& status);

}  // namespace tandem

#endif  // TANDEM_CLIENT_CLIENT_CREDENTIALS_H_
