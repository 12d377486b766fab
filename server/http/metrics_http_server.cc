#include "server/http/metrics_http_server.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <string>
#include <system_error>
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

using Clock = std::chrono::steady_clock;

constexpr char kMetricsContentType[] =
    "text/plain; version=0.0.4; charset=utf-8";
constexpr char kPlainContentType[] = "text/plain; charset=utf-8";

// How long a client may take to send its request head, and how long the
// server keeps trying to write a response to a client that does not read.
constexpr std::chrono::milliseconds kRequestTimeout(5000);
constexpr std::chrono::milliseconds kResponseTimeout(5000);
// After responding, the server waits this long for the client to close, so
// that unread request bytes do not turn the close into a reset that could
// discard the response on the client's side.
constexpr std::chrono::milliseconds kLingerTimeout(1000);
constexpr size_t kLingerMaxBytes = 64 * 1024;
// Largest request head (request line and headers, with the blank line).
constexpr size_t kMaxRequestHead = 8 * 1024;
constexpr int kListenBacklog = 64;

std::string ErrnoText(int error) { return std::strerror(error); }

// Closes `fd` if it is open and marks it closed.
void CloseFd(int& fd) {
  if (fd >= 0) close(fd);
  fd = -1;
}

// A parsed "host:port" listen address.
struct ListenAddress {
  std::string host;  // Empty for all interfaces.
  int port = 0;
};

absl::StatusOr<ListenAddress> ParseListenAddress(absl::string_view listen) {
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
  if (absl::StrContains(host, ':') || absl::StrContains(host, '[') ||
      absl::StrContains(host, ']')) {
    return absl::InvalidArgumentError(
        absl::StrCat("metrics listen address \"", listen,
                     "\": IPv6 is not supported; use an IPv4 address or a "
                     "host name"));
  }
  for (char c : host) {
    if (!(absl::ascii_isalnum(c) || c == '.' || c == '-')) {
      return absl::InvalidArgumentError(absl::StrCat(
          "metrics listen address \"", listen, "\" has an invalid host"));
    }
  }
  return ListenAddress{std::string(host), port};
}

// Resolves `address` to an IPv4 socket address. Errors are Unavailable, with
// messages that lack the "cannot start ... on <listen>: " prefix.
absl::StatusOr<sockaddr_in> Resolve(const ListenAddress& address) {
  sockaddr_in result;
  std::memset(&result, 0, sizeof(result));
  result.sin_family = AF_INET;
  result.sin_port = htons(static_cast<std::uint16_t>(address.port));
  if (address.host.empty()) {
    result.sin_addr.s_addr = htonl(INADDR_ANY);
    return result;
  }
  if (inet_pton(AF_INET, address.host.c_str(), &result.sin_addr) == 1) {
    return result;
  }
  addrinfo hints;
  std::memset(&hints, 0, sizeof(hints));
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const int error =
      getaddrinfo(address.host.c_str(), nullptr, &hints, &found);
  if (error != 0 || found == nullptr) {
    const std::string reason =
        error == EAI_SYSTEM ? ErrnoText(errno) : gai_strerror(error);
    if (found != nullptr) freeaddrinfo(found);
    return absl::UnavailableError(
        absl::StrCat("cannot resolve \"", address.host, "\": ", reason));
  }
  result.sin_addr =
      reinterpret_cast<const sockaddr_in*>(found->ai_addr)->sin_addr;
  freeaddrinfo(found);
  return result;
}

// Milliseconds left until `deadline`, for poll(); 0 once it has passed.
int MillisecondsUntil(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - Clock::now());
  if (left.count() <= 0) return 0;
  // Round up so that poll() does not return just before the deadline.
  return static_cast<int>(std::min<long long>(left.count() + 1, 1 << 30));
}

enum class WaitResult { kReady, kStop, kTimeout, kError };

// Waits until `fd` has `events` (POLLIN or POLLOUT), the wake-up eventfd
// becomes readable, or `deadline` passes.
WaitResult Wait(int fd, short events, int wake_fd, Clock::time_point deadline) {
  while (true) {
    pollfd fds[2];
    fds[0] = {wake_fd, POLLIN, 0};
    fds[1] = {fd, events, 0};
    const int n = poll(fds, 2, MillisecondsUntil(deadline));
    if (n < 0) {
      if (errno == EINTR) continue;
      return WaitResult::kError;
    }
    if (fds[0].revents != 0) return WaitResult::kStop;
    // POLLHUP / POLLERR count as ready: the following recv or send reports
    // what happened.
    if (fds[1].revents != 0) return WaitResult::kReady;
    if (Clock::now() >= deadline) return WaitResult::kTimeout;
  }
}

// Writes all of `data` to the non-blocking socket `fd`; false if the peer
// went away, the deadline passed or the server is stopping. MSG_NOSIGNAL:
// a closed peer yields EPIPE instead of SIGPIPE.
bool SendAll(int fd, absl::string_view data, int wake_fd,
             Clock::time_point deadline) {
  while (!data.empty()) {
    const ssize_t n = send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n > 0) {
      data.remove_prefix(static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (Wait(fd, POLLOUT, wake_fd, deadline) != WaitResult::kReady) {
        return false;
      }
      continue;
    }
    return false;
  }
  return true;
}

// Half-closes `fd` and reads (and drops) what the client still sends until
// it closes, kLingerTimeout passes or the server stops.
void Linger(int fd, int wake_fd) {
  shutdown(fd, SHUT_WR);
  const Clock::time_point deadline = Clock::now() + kLingerTimeout;
  size_t drained = 0;
  char buffer[4096];
  while (drained < kLingerMaxBytes) {
    const ssize_t n = recv(fd, buffer, sizeof(buffer), 0);
    if (n > 0) {
      drained += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (Wait(fd, POLLIN, wake_fd, deadline) != WaitResult::kReady) return;
      continue;
    }
    return;  // EOF or error.
  }
}

std::string BuildResponse(int status, absl::string_view reason,
                          absl::string_view content_type,
                          absl::string_view body, bool allow_get_header,
                          bool include_body) {
  std::string response = absl::StrCat(
      "HTTP/1.1 ", status, " ", reason, "\r\nContent-Type: ", content_type,
      "\r\nContent-Length: ", body.size(),
      "\r\nCache-Control: no-store\r\nConnection: close\r\n");
  if (allow_get_header) response.append("Allow: GET\r\n");
  response.append("\r\n");
  if (include_body) response.append(body.data(), body.size());
  return response;
}

bool IsTokenChar(char c) {
  return absl::ascii_isalnum(c) || std::strchr("!#$%&'*+-.^_`|~", c) != nullptr;
}

// Parses "METHOD SP PATH SP HTTP/1.x"; false if malformed. `path` loses its
// query string.
bool ParseRequestLine(absl::string_view line, absl::string_view* method,
                      absl::string_view* path) {
  const size_t first_space = line.find(' ');
  if (first_space == absl::string_view::npos) return false;
  const size_t second_space = line.find(' ', first_space + 1);
  if (second_space == absl::string_view::npos) return false;
  *method = line.substr(0, first_space);
  absl::string_view target =
      line.substr(first_space + 1, second_space - first_space - 1);
  const absl::string_view version = line.substr(second_space + 1);

  if (method->empty() ||
      !std::all_of(method->begin(), method->end(), IsTokenChar)) {
    return false;
  }
  if (target.empty() || target[0] != '/' ||
      std::any_of(target.begin(), target.end(), [](char c) {
        const unsigned char u = static_cast<unsigned char>(c);
        return u <= 0x20 || u == 0x7f;
      })) {
    return false;
  }
  if (version.size() != 8 || !absl::StartsWith(version, "HTTP/1.") ||
      !absl::ascii_isdigit(version[7])) {
    return false;
  }
  *path = target.substr(0, target.find_first_of("?#"));
  return true;
}

}  // namespace

MetricsHttpServer::MetricsHttpServer(const metrics::Registry* registry,
                                     std::function<bool()> is_ready)
    : registry_(registry), is_ready_(std::move(is_ready)) {}

MetricsHttpServer::~MetricsHttpServer() {
  if (thread_.joinable()) {
    // The eventfd stays readable from now on, so every poll() on the server
    // thread -- in the accept loop or in a connection -- returns at once.
    const std::uint64_t one = 1;
    while (write(wake_fd_, &one, sizeof(one)) < 0 && errno == EINTR) {
    }
    thread_.join();
  }
  CloseFd(listen_fd_);
  CloseFd(wake_fd_);
}

absl::StatusOr<std::unique_ptr<MetricsHttpServer>> MetricsHttpServer::Start(
    const std::string& listen, const metrics::Registry* registry,
    std::function<bool()> is_ready) {
  if (registry == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("metrics HTTP server on ", listen, ": registry is null"));
  }
  absl::StatusOr<ListenAddress> parsed = ParseListenAddress(listen);
  if (!parsed.ok()) return parsed.status();
  const std::string prefix =
      absl::StrCat("cannot start metrics HTTP server on ", listen, ": ");
  absl::StatusOr<sockaddr_in> address = Resolve(*parsed);
  if (!address.ok()) {
    return absl::UnavailableError(
        absl::StrCat(prefix, address.status().message()));
  }

  // Private constructor, hence no make_unique. From here on the destructor
  // closes whatever was opened.
  std::unique_ptr<MetricsHttpServer> server(
      new MetricsHttpServer(registry, std::move(is_ready)));
  server->listen_fd_ =
      socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (server->listen_fd_ < 0) {
    return absl::UnavailableError(
        absl::StrCat(prefix, "socket: ", ErrnoText(errno)));
  }
  const int on = 1;
  if (setsockopt(server->listen_fd_, SOL_SOCKET, SO_REUSEADDR, &on,
                 sizeof(on)) != 0) {
    return absl::UnavailableError(
        absl::StrCat(prefix, "SO_REUSEADDR: ", ErrnoText(errno)));
  }
  if (bind(server->listen_fd_, reinterpret_cast<const sockaddr*>(&*address),
           sizeof(*address)) != 0) {
    return absl::UnavailableError(
        absl::StrCat(prefix, "bind: ", ErrnoText(errno)));
  }
  if (::listen(server->listen_fd_, kListenBacklog) != 0) {
    return absl::UnavailableError(
        absl::StrCat(prefix, "listen: ", ErrnoText(errno)));
  }
  sockaddr_in bound;
  socklen_t bound_size = sizeof(bound);
  if (getsockname(server->listen_fd_, reinterpret_cast<sockaddr*>(&bound),
                  &bound_size) != 0) {
    return absl::InternalError(
        absl::StrCat(prefix, "getsockname: ", ErrnoText(errno)));
  }
  server->port_ = ntohs(bound.sin_port);
  server->wake_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (server->wake_fd_ < 0) {
    return absl::InternalError(
        absl::StrCat(prefix, "eventfd: ", ErrnoText(errno)));
  }
  try {
    const MetricsHttpServer* self = server.get();
    server->thread_ = std::thread([self] { self->Run(); });
  } catch (const std::system_error& error) {
    return absl::InternalError(
        absl::StrCat(prefix, "cannot create thread: ", error.what()));
  }
  return server;
}

void MetricsHttpServer::Run() const {
  while (true) {
    pollfd fds[2];
    fds[0] = {wake_fd_, POLLIN, 0};
    fds[1] = {listen_fd_, POLLIN, 0};
    const int n = poll(fds, 2, -1);
    if (n < 0) {
      if (errno == EINTR) continue;
      return;  // Cannot happen with valid descriptors.
    }
    if (fds[0].revents != 0) return;
    if (fds[1].revents == 0) continue;
    const int fd = accept4(listen_fd_, nullptr, nullptr,
                           SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd >= 0) {
      ServeConnection(fd);
      continue;
    }
    if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
        errno == ENOMEM) {
      // The pending connection stays queued; back off instead of spinning.
      pollfd wake = {wake_fd_, POLLIN, 0};
      if (poll(&wake, 1, 100) > 0) return;
    }
    // Other errors (EAGAIN, ECONNABORTED, ...) concern one connection only.
  }
}

void MetricsHttpServer::ServeConnection(int fd) const {
  const Clock::time_point request_deadline = Clock::now() + kRequestTimeout;
  std::string head;
  size_t head_end = std::string::npos;  // Offset of "\r\n\r\n".
  bool too_large = false;
  char buffer[4096];
  while (true) {
    const ssize_t n = recv(fd, buffer, sizeof(buffer), 0);
    if (n > 0) {
      const size_t search_from = head.size() < 3 ? 0 : head.size() - 3;
      head.append(buffer, static_cast<size_t>(n));
      head_end = head.find("\r\n\r\n", search_from);
      if (head_end != std::string::npos) {
        too_large = head_end + 4 > kMaxRequestHead;
        break;
      }
      if (head.size() >= kMaxRequestHead) {
        too_large = true;
        break;
      }
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      // Timeout, stop or poll error: drop the connection without answering.
      if (Wait(fd, POLLIN, wake_fd_, request_deadline) != WaitResult::kReady) {
        close(fd);
        return;
      }
      continue;
    }
    // EOF before a complete request head, or a connection error.
    close(fd);
    return;
  }

  std::string response;
  const size_t line_end = head.find("\r\n");
  if (too_large) {
    // 431 if the request line itself fit, else 400 (it is no valid request).
    response =
        line_end != std::string::npos && line_end < kMaxRequestHead
            ? BuildResponse(431, "Request Header Fields Too Large",
                            kPlainContentType,
                            "request header fields too large\n", false, true)
            : BuildResponse(400, "Bad Request", kPlainContentType,
                            "bad request\n", false, true);
  } else {
    absl::string_view method;
    absl::string_view path;
    if (ParseRequestLine(absl::string_view(head).substr(0, line_end), &method,
                         &path)) {
      response = Respond(method, path);
    } else {
      response = BuildResponse(400, "Bad Request", kPlainContentType,
                               "bad request\n", false, true);
    }
  }
  if (SendAll(fd, response, wake_fd_, Clock::now() + kResponseTimeout)) {
    Linger(fd, wake_fd_);
  }
  close(fd);
}

std::string MetricsHttpServer::Respond(absl::string_view method,
                                       absl::string_view path) const {
  // A response to HEAD has the headers of the full response but no body.
  const bool include_body = method != "HEAD";
  const bool known_path =
      path == "/metrics" || path == "/healthz" || path == "/readyz";
  if (!known_path) {
    return BuildResponse(404, "Not Found", kPlainContentType, "not found\n",
                         false, include_body);
  }
  if (method != "GET") {
    return BuildResponse(405, "Method Not Allowed", kPlainContentType,
                         "method not allowed\n", true, include_body);
  }
  if (path == "/metrics") {
    const std::string body =
        metrics::TextSerializer().Serialize(registry_->Collect());
    return BuildResponse(200, "OK", kMetricsContentType, body, false, true);
  }
  if (path == "/healthz") {
    return BuildResponse(200, "OK", kPlainContentType, "ok", false, true);
  }
  // /readyz
  if (!is_ready_ || is_ready_()) {
    return BuildResponse(200, "OK", kPlainContentType, "ready", false, true);
  }
  return BuildResponse(503, "Service Unavailable", kPlainContentType,
                       "not ready", false, true);
}

}  // namespace tandem
