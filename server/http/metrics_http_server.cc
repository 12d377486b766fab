#include "server/http/metrics_http_server.h"

#include <arpa/inet.h>
#include <civetweb.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "server/metrics/text_serializer.h"

namespace tandem {
namespace {

constexpr char kMetricsContentType[] =
    "text/plain; version=0.0.4; charset=utf-8";
constexpr char kPlainContentType[] = "text/plain; charset=utf-8";
// civetweb feature bit for IPv6 support (see mg_check_feature()).
constexpr unsigned kCivetwebFeatureIpv6 = 8;

// Collects civetweb's log messages while Start() runs on this thread; civetweb
// reports the real bind error (e.g. "Address already in use") only there.
thread_local std::string* start_log = nullptr;

int LogMessage(const mg_connection* /*connection*/, const char* message) {
  if (start_log != nullptr && message != nullptr) {
    if (!start_log->empty()) start_log->append("; ");
    start_log->append(message);
  }
  return 1;  // Handled: keeps civetweb from printing anything itself.
}

// civetweb keeps process-wide state; initialize it once and never tear it
// down (other servers may still be running).
void InitCivetwebOnce() {
  static std::once_flag once;
  std::call_once(once, [] { mg_init_library(0); });
}

// Splits "host:port" and converts it to civetweb's listening_ports syntax.
// civetweb gives meaning to suffixes like "s" (TLS), "r" (redirect) and ","
// (several ports), so only plain addresses get through.
absl::StatusOr<std::string> ToListeningPorts(absl::string_view listen) {
  const size_t colon = listen.rfind(':');
  if (colon == absl::string_view::npos) {
    return absl::InvalidArgumentError(absl::StrCat(
        "metrics listen address \"", listen, "\" is not host:port"));
  }
  const absl::string_view host = listen.substr(0, colon);
  const absl::string_view port_text = listen.substr(colon + 1);
  int port = 0;
  const bool port_is_digits =
      !port_text.empty() && port_text.size() <= 5 &&
      std::all_of(port_text.begin(), port_text.end(),
                  [](char c) { return absl::ascii_isdigit(c); });
  if (!port_is_digits || !absl::SimpleAtoi(port_text, &port) || port > 65535) {
    return absl::InvalidArgumentError(absl::StrCat(
        "metrics listen address \"", listen, "\" has an invalid port"));
  }
  if (absl::StartsWith(host, "[") &&
      mg_check_feature(kCivetwebFeatureIpv6) == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("metrics listen address \"", listen,
                     "\": this civetweb build does not support IPv6"));
  }
  for (char c : host) {
    if (!(absl::ascii_isalnum(c) || c == '.' || c == '-' || c == ':' ||
          c == '[' || c == ']')) {
      return absl::InvalidArgumentError(absl::StrCat(
          "metrics listen address \"", listen, "\" has an invalid host"));
    }
  }
  if (host.empty()) return std::string(port_text);
  return std::string(listen);
}

// The IPv4 address (network byte order) to connect to in order to reach a
// server bound to `host`: loopback for wildcard binds, else `host` resolved.
std::uint32_t WakeAddress(absl::string_view host) {
  const std::uint32_t loopback = htonl(INADDR_LOOPBACK);
  if (host.empty() || host == "0.0.0.0") return loopback;
  addrinfo hints;
  std::memset(&hints, 0, sizeof(hints));
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* result = nullptr;
  const std::string host_string(host);
  if (getaddrinfo(host_string.c_str(), nullptr, &hints, &result) != 0 ||
      result == nullptr) {
    return loopback;
  }
  const std::uint32_t address =
      reinterpret_cast<const sockaddr_in*>(result->ai_addr)->sin_addr.s_addr;
  freeaddrinfo(result);
  return address == htonl(INADDR_ANY) ? loopback : address;
}

void SendResponse(mg_connection* connection, int status, const char* reason,
                  const char* content_type, absl::string_view body,
                  bool allow_get_header) {
  std::string head = absl::StrCat(
      "HTTP/1.1 ", status, " ", reason, "\r\nContent-Type: ", content_type,
      "\r\nContent-Length: ", body.size(),
      "\r\nCache-Control: no-store\r\nConnection: close\r\n");
  if (allow_get_header) head.append("Allow: GET\r\n");
  head.append("\r\n");
  mg_write(connection, head.data(), head.size());
  if (!body.empty()) mg_write(connection, body.data(), body.size());
}

}  // namespace

MetricsHttpServer::MetricsHttpServer(const metrics::Registry* registry,
                                     std::function<bool()> is_ready)
    : registry_(registry), is_ready_(std::move(is_ready)) {}

MetricsHttpServer::~MetricsHttpServer() {
  if (context_ == nullptr) return;
  // mg_stop() sets a stop flag and joins civetweb's threads, but the accept
  // loop only checks the flag after poll() returns, i.e. up to 2 s later.
  // Poking the listener meanwhile makes shutdown take milliseconds.
  std::atomic<bool> stopped{false};
  std::thread waker([this, &stopped] {
    while (!stopped.load()) {
      PokeListener();
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  });
  mg_stop(context_);
  stopped.store(true);
  waker.join();
}

void MetricsHttpServer::PokeListener() const {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return;
  timeval timeout{0, 200 * 1000};
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout));
  sockaddr_in address;
  std::memset(&address, 0, sizeof(address));
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<std::uint16_t>(port_));
  address.sin_addr.s_addr = wake_address_;
  // The outcome does not matter: an accepted connection wakes the loop, a
  // refused one means the listener is already closed.
  connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof(address));
  close(fd);
}

absl::StatusOr<std::unique_ptr<MetricsHttpServer>> MetricsHttpServer::Start(
    const std::string& listen, const metrics::Registry* registry,
    std::function<bool()> is_ready) {
  if (registry == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("metrics HTTP server on ", listen, ": registry is null"));
  }
  absl::StatusOr<std::string> listening_ports = ToListeningPorts(listen);
  if (!listening_ports.ok()) return listening_ports.status();

  InitCivetwebOnce();
  // Private constructor, hence no make_unique.
  std::unique_ptr<MetricsHttpServer> server(
      new MetricsHttpServer(registry, std::move(is_ready)));

  // clang-format off
  const char* options[] = {
      "listening_ports", listening_ports->c_str(),
      "num_threads", "4",
      "request_timeout_ms", "10000",
      "enable_keep_alive", "no",
      nullptr,
  };
  // clang-format on
  mg_callbacks callbacks;
  std::memset(&callbacks, 0, sizeof(callbacks));
  // begin_request sees every request before civetweb's own routing, and is
  // installed before the port opens, so no request can slip past it.
  callbacks.begin_request = &MetricsHttpServer::HandleRequest;
  callbacks.log_message = &LogMessage;

  mg_init_data init;
  std::memset(&init, 0, sizeof(init));
  init.callbacks = &callbacks;
  init.user_data = server.get();
  init.configuration_options = options;

  char error_text[256] = {0};
  unsigned error_code = 0;
  mg_error_data error;
  std::memset(&error, 0, sizeof(error));
  error.code = &error_code;
  error.text = error_text;
  error.text_buffer_size = sizeof(error_text);

  std::string log;
  start_log = &log;
  server->context_ = mg_start2(&init, &error);
  start_log = nullptr;
  if (server->context_ == nullptr) {
    // The log has the specific cause; error_text only a summary.
    const std::string reason = !log.empty() ? log
                               : error_text[0] != '\0'
                                   ? std::string(error_text)
                                   : std::string("unknown civetweb error");
    return absl::UnavailableError(absl::StrCat(
        "cannot start metrics HTTP server on ", listen, ": ", reason));
  }

  mg_server_port ports[4];
  std::memset(ports, 0, sizeof(ports));
  const int num_ports = mg_get_server_ports(server->context_, 4, ports);
  if (num_ports < 1 || ports[0].port <= 0) {
    // The destructor stops the context.
    return absl::InternalError(absl::StrCat("metrics HTTP server on ", listen,
                                            ": cannot determine bound port"));
  }
  server->port_ = ports[0].port;
  server->wake_address_ =
      WakeAddress(absl::string_view(listen).substr(0, listen.rfind(':')));
  return server;
}

int MetricsHttpServer::HandleRequest(mg_connection* connection) {
  const mg_request_info* info = mg_get_request_info(connection);
  const auto* server = static_cast<const MetricsHttpServer*>(info->user_data);
  return server->Handle(connection);
}

int MetricsHttpServer::Handle(mg_connection* connection) const {
  const mg_request_info* info = mg_get_request_info(connection);
  const absl::string_view method =
      info->request_method != nullptr ? info->request_method : "";
  const absl::string_view path =
      info->local_uri != nullptr ? info->local_uri : "";

  const bool known_path =
      path == "/metrics" || path == "/healthz" || path == "/readyz";
  if (!known_path) {
    SendResponse(connection, 404, "Not Found", kPlainContentType, "not found\n",
                 false);
    return 404;
  }
  if (method != "GET") {
    SendResponse(connection, 405, "Method Not Allowed", kPlainContentType,
                 "method not allowed\n", true);
    return 405;
  }
  if (path == "/metrics") {
    const std::string body =
        metrics::TextSerializer().Serialize(registry_->Collect());
    SendResponse(connection, 200, "OK", kMetricsContentType, body, false);
    return 200;
  }
  if (path == "/healthz") {
    SendResponse(connection, 200, "OK", kPlainContentType, "ok", false);
    return 200;
  }
  // /readyz
  if (!is_ready_ || is_ready_()) {
    SendResponse(connection, 200, "OK", kPlainContentType, "ready", false);
    return 200;
  }
  SendResponse(connection, 503, "Service Unavailable", kPlainContentType,
               "not ready", false);
  return 503;
}

}  // namespace tandem
