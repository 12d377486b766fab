#include "client/client_credentials.h"

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/base/read_file.h"
#include "core/base/status_macros.h"

namespace tandem {

absl::StatusOr<std::string> ReadApiKey(const std::string& path) {
  ASSIGN_OR_RETURN(std::string key, ReadFlagFile(path, "api_key_file"));
  if (key.empty()) return absl::InvalidArgumentError(absl::StrCat("--api_key_file: ", path, " is empty"));
  return key;
}

void AddApiKey(const std::string& key, grpc::ClientContext* context) {
  if (!key.empty()) context->AddMetadata("authorization", "Bearer " + key);
}

absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> ChannelCredentialsFor(
    const std::string& tls_ca_path) {
  if (tls_ca_path.empty()) return grpc::InsecureChannelCredentials();
  absl::StatusOr<std::string> pem = ReadFile(tls_ca_path);
  if (!pem.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("--tls_ca: ", pem.status().message()));
  }
  if (!absl::StrContains(*pem, "-----BEGIN CERTIFICATE-----")) {
    return absl::InvalidArgumentError(
        absl::StrCat("--tls_ca: ", tls_ca_path, " holds no PEM certificate"));
  }
  grpc::SslCredentialsOptions ssl;
  ssl.pem_root_certs = *std::move(pem);
  return grpc::SslCredentials(ssl);
}

std::string DescribeStatus(const grpc::Status& status) {
  return absl::StrCat(absl::StatusCodeToString(static_cast<absl::StatusCode>(status.error_code())),
                      ": ", status.error_message());
}

}  // namespace tandem
