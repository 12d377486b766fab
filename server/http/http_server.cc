#include "server/http/http_server.h"

#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <regex>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "core/base/constant_time.h"
#include "core/base/logging.h"
#include "server/http/connection_watch.h"
#include "server/http/error_body.h"

namespace tandem {
namespace {

// "host:port" -> (host, port); an empty host is every interface.
// Pending connections the kernel queues before accept() (capped by
// net.core.somaxconn): a burst of streams from a load balancer or a load
// generator arrives within microseconds.
constexpr int kListenBacklog = 1024;

absl::Status ParseListen(const std::string& listen, std::string* host, int* port) {
  const size_t colon = listen.rfind(':');
  if (colon == std::string::npos ||
      !absl::SimpleAtoi(listen.substr(colon + 1), port) || *port < 0 || *port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("HTTP address \"", listen, "\": expected host:port"));
  }
  *host = colon == 0 ? "0.0.0.0" : listen.substr(0, colon);
  return absl::OkStatus();
}

// The reason phrase of the error statuses the server sends.
const char* Reason(int status) {
  switch (status) {
    case 400: return "bad request";
    case 404: return "not found";
    case 405: return "method not allowed";
    case 411: return "length required";
    case 413: return "payload too large";
    case 415: return "unsupported media type";
    case 414: return "URI too long";
    case 431: return "request header fields too large";
    case 503: return "service unavailable";
    default: return status >= 500 ? "server error" : "error";
  }
}

// httplib binds with SO_REUSEPORT, so a second server on a busy port would
// bind too and silently share its connections: first try the address with a
// plain socket (SO_REUSEADDR only), which fails while anyone listens there.
absl::Status CheckPortFree(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  if (::getaddrinfo(host.c_str(), service.c_str(), &hints, &found) != 0 || found == nullptr) {
    return absl::UnavailableError(absl::StrCat("cannot resolve HTTP host \"", host, "\""));
  }
  int error = 0;
  const int fd = ::socket(found->ai_family, found->ai_socktype, found->ai_protocol);
  if (fd >= 0) {
    int yes = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    if (::bind(fd, found->ai_addr, found->ai_addrlen) != 0) error = errno;
    ::close(fd);
  }
  ::freeaddrinfo(found);
  if (error == 0) return absl::OkStatus();
  return absl::UnavailableError(
      absl::StrCat("cannot listen on HTTP address ", host, ":", port, ": ", std::strerror(error)));
}

}  // namespace

// The methods each route answers: exact paths, and pattern routes
// ("/v1/models/(.+)", regular expressions as httplib matches them) compiled
// once, when added.
struct RouteMethods {
  std::map<std::string, std::set<std::string>> by_path;  // path or pattern -> methods
  std::vector<std::pair<std::regex, const std::set<std::string>*>> patterns;

  void Add(const std::string& path, const std::string& method) {
    auto [it, added] = by_path.try_emplace(path);
    if (added && path.find('(') != std::string::npos) patterns.emplace_back(std::regex(path), &it->second);
    it->second.insert(method);
  }
  // The methods routed at `path`; null when no route is.
  const std::set<std::string>* For(const std::string& path) const {
    if (auto it = by_path.find(path); it != by_path.end()) return &it->second;
    for (const auto& [pattern, methods] : patterns) {
      if (std::regex_match(path, pattern)) return methods;
    }
    return nullptr;
  }
};

namespace {

// A body over max_body_bytes is read and dropped before its 413; one this
// many times over it is refused before it is read.
constexpr uint64_t kFarOverFactor = 16;

bool IsApiPath(const HttpServerOptions& options, const std::string& path) {
  return !options.api_prefix.empty() && absl::StartsWith(path, options.api_prefix);
}

// An error response: a JSON error object on the API's paths, text elsewhere.
void SetError(const HttpServerOptions& options, const httplib::Request& request,
              httplib::Response& response, int status, const std::string& message,
              const char* type = nullptr, const char* code = nullptr) {
  response.status = status;
  if (!IsApiPath(options, request.path)) {
    response.set_content(message + "\n", "text/plain");
    return;
  }
  const char* kind = type != nullptr ? type
                     : status >= 500 ? "server_error"
                                     : "invalid_request_error";
  response.set_content(ErrorBody(message, kind, "", code != nullptr ? code : ""),
                       "application/json");
}

// The origin a CORS response may name, or "" when the request's is not allowed.
std::string AllowedOrigin(const HttpServerOptions& options, const httplib::Request& request) {
  if (options.cors_origins.empty() || !IsApiPath(options, request.path)) return "";
  const std::string origin = request.get_header_value("Origin");
  if (origin.empty()) return "";
  if (options.cors_origins.count("*") > 0) return "*";
  return options.cors_origins.count(origin) > 0 ? origin : "";
}

// Whether httplib reads a body for the request's method (it reads none for
// GET, HEAD or OPTIONS, whatever the headers say): httplib's
// detail::expect_content, which Debian's split build does not export.
bool ReadsBody(const httplib::Request& request) {
  const std::string& m = request.method;
  return m == "POST" || m == "PUT" || m == "PATCH" || m == "DELETE" || m == "PRI";
}

// Whether the request carries a body (a chunked one, or a Content-Length
// other than 0).
bool HasBody(const httplib::Request& request) {
  const std::string length = request.get_header_value("Content-Length");
  return request.has_header("Transfer-Encoding") || (!length.empty() && length != "0");
}

// Whether bytes of the request may still be unread when it is answered
// before routing: its body, or, for a method httplib reads one for, one of
// unstated length.
bool BodyMayBeUnread(const httplib::Request& request) {
  return HasBody(request) || (ReadsBody(request) && !request.has_header("Content-Length"));
}

// 401 without the API key, 405 for a known path (its routes answer
// `methods`; null: none) asked with another method: true when it refused
// (the response is set).
bool Refuse(const HttpServerOptions& options, const std::set<std::string>* methods,
            const httplib::Request& request, httplib::Response& response) {
  if (!options.api_key.empty() && options.open_paths.count(request.path) == 0 &&
      !ConstantTimeEquals(request.get_header_value("Authorization"), "Bearer " + options.api_key)) {
    response.set_header("WWW-Authenticate", "Bearer");
    SetError(options, request, response, 401,
             "this server needs the header \"Authorization: Bearer <api key>\"",
             "authentication_error", "invalid_api_key");
    return true;
  }
  if (methods == nullptr || methods->count(request.method) > 0) return false;
  response.set_header("Allow", absl::StrJoin(*methods, ", "));
  SetError(options, request, response, 405, "method not allowed");
  return true;
}

// The pre-routing hook's decisions, made before the body is read (see the
// HttpServer constructor).
httplib::Server::HandlerResponse PreRoute(const HttpServerOptions& options,
                                          const RouteMethods& allowed,
                                          const httplib::Request& request,
                                          httplib::Response& response) {
  constexpr auto kHandled = httplib::Server::HandlerResponse::Handled;
  size_t header_bytes = 0;
  for (const auto& [key, value] : request.headers) header_bytes += key.size() + value.size() + 4;
  if (header_bytes > options.max_header_bytes || request.headers.size() > options.max_headers) {
    SetError(options, request, response, 431, "request header fields too large");
    return kHandled;
  }
  if (request.has_header("Transfer-Encoding")) {
    SetError(options, request, response, 411,
             "send the request body with a Content-Length (not chunked)");
    return kHandled;
  }
  const std::string encoding = request.get_header_value("Content-Encoding");
  if (!encoding.empty() && !absl::EqualsIgnoreCase(encoding, "identity")) {
    SetError(options, request, response, 415,
             absl::StrCat("request bodies are not decoded; got Content-Encoding: ", encoding));
    return kHandled;
  }
  const bool body = HasBody(request);
  if (body && !ReadsBody(request)) {
    // httplib reads no body for these: it would be read as the next request.
    SetError(options, request, response, 400,
             absl::StrCat("a ", request.method, " request has no body"));
    return kHandled;
  }
  // httplib reads a Content-Length with strtoull ("abc" is 0, "-1" is
  // 2^64 - 1, bytes it would skip) and takes the first of several.
  const std::string length = request.get_header_value("Content-Length");
  uint64_t bytes = 0;
  if (request.get_header_value_count("Content-Length") > 1 ||
      (!length.empty() && length.find_first_not_of("0123456789") != std::string::npos)) {
    SetError(options, request, response, 400, "the Content-Length is not one decimal number");
    return kHandled;
  }
  // A body over the limit is read and dropped by httplib, then refused
  // (413), so that the client, still sending, reads the answer; one far over
  // it is refused at once and its connection closed (a client may then see
  // the connection reset instead of the 413).
  if (!length.empty() &&
      (!absl::SimpleAtoi(length, &bytes) || bytes / kFarOverFactor > options.max_body_bytes)) {
    SetError(options, request, response, 413,
             absl::StrCat("the body is ", length, " bytes; the limit is ", options.max_body_bytes));
    return kHandled;
  }
  const std::set<std::string>* methods = allowed.For(request.path);
  const std::string origin = AllowedOrigin(options, request);
  if (request.method == "OPTIONS" && !origin.empty() && methods != nullptr) {
    // A CORS preflight: no API key (browsers never send one here).
    response.status = 204;
    response.set_header("Access-Control-Allow-Origin", origin);
    response.set_header("Vary", "Origin");
    response.set_header("Access-Control-Allow-Methods", absl::StrJoin(*methods, ", "));
    const std::string headers = request.get_header_value("Access-Control-Request-Headers");
    response.set_header("Access-Control-Allow-Headers",
                        headers.empty() ? "Authorization, Content-Type" : headers);
    response.set_header("Access-Control-Max-Age", "600");
    return kHandled;
  }
  // With a body (of a bounded length now), 401 and 405 wait until httplib
  // has read it (routes and the error handler refuse then), so that it is
  // not left on the connection.
  if (!body && Refuse(options, methods, request, response)) return kHandled;
  if (ReadsBody(request) && length.empty()) {
    // httplib would read until the client closes, without limit.
    SetError(options, request, response, 411, "send the request body with a Content-Length");
    return kHandled;
  }
  return httplib::Server::HandlerResponse::Unhandled;
}

// Sends `response`'s body, then closes the connection: httplib keeps a
// connection open after any response it wrote in full, but ends it when a
// content provider fails, so the body is handed to one that writes it all,
// then fails. (A HEAD response has no body, so no provider runs: the
// server's logger ends those connections.)
void CloseAfter(httplib::Response& response) {
  response.set_header("Connection", "close");
  if (response.body.empty()) return;  // (set_content_provider needs a length)
  auto body = std::make_shared<std::string>(std::move(response.body));
  response.body.clear();
  const std::string type = response.get_header_value("Content-Type");
  response.headers.erase("Content-Type");  // set_content_provider adds it
  response.set_content_provider(
      body->size(), type, [body](size_t offset, size_t length, httplib::DataSink& sink) {
        sink.write(body->data() + offset, length);
        return false;
      });
}

time_t WholeSeconds(absl::Duration d) { return static_cast<time_t>(absl::ToInt64Seconds(d)); }
time_t Micros(absl::Duration d) {
  return static_cast<time_t>(absl::ToInt64Microseconds(d) % 1000000);
}

}  // namespace

HttpServer::HttpServer(const HttpServerOptions& options)
    : options_(options),
      server_(options.tls_cert_file.empty()
                  ? std::make_unique<httplib::Server>()
                  : std::make_unique<httplib::SSLServer>(options.tls_cert_file.c_str(),
                                                         options.tls_key_file.c_str())),
      allowed_(std::make_shared<RouteMethods>()) {
  const int threads = options_.threads;
  server_->new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  server_->set_read_timeout(WholeSeconds(options_.read_timeout), Micros(options_.read_timeout));
  server_->set_write_timeout(WholeSeconds(options_.write_timeout),
                             Micros(options_.write_timeout));
  server_->set_keep_alive_timeout(WholeSeconds(options_.keep_alive_timeout));
  server_->set_payload_max_length(options_.max_body_bytes);
  server_->set_tcp_nodelay(true);  // streamed tokens leave at once

  // Before any route, and before the body is read: 431 for a header block
  // over the limits (the library sets none); 411 and 415 for a body whose
  // size the headers do not bound (the library checks max_body_bytes against
  // Content-Length only, and would read a chunked or unstated-length body
  // or inflate a gzip one without limit); 400 for a malformed Content-Length
  // or a body on a method httplib reads none for; 413 for a Content-Length
  // over the limit; CORS preflights; 401 and 405 (httplib would say 404)
  // when there is no body. A request answered here with a body leaves it
  // unread: its connection is closed, or the body would be read as the
  // next request.
  server_->set_pre_routing_handler([allowed = allowed_, options = options_](
                                       const httplib::Request& request,
                                       httplib::Response& response) {
    const auto handled = PreRoute(options, *allowed, request, response);
    if (handled == httplib::Server::HandlerResponse::Handled &&
        (BodyMayBeUnread(request) || response.status == 431)) {
      CloseAfter(response);
    }
    return handled;
  });
  // Runs once a response is written: ends the connection of a HEAD request
  // answered before its body was read (CloseAfter's provider never runs for
  // a HEAD response), so that the body is not read as the next request.
  server_->set_logger([](const httplib::Request& request, const httplib::Response& response) {
    if (request.method == "HEAD" && HasBody(request) &&
        response.get_header_value("Connection") == "close") {
      ConnectionWatch(request).ShutDown();
    }
  });
  // Errors without a body of their own get one. A request with a body that
  // found no route is refused now (401, 405) if the hook would have.
  server_->set_error_handler(httplib::Server::HandlerWithResponse(
      [allowed = allowed_, options = options_](const httplib::Request& request,
                                               httplib::Response& response) {
    if (response.status == 404 && Refuse(options, allowed->For(request.path), request, response)) {
      return httplib::Server::HandlerResponse::Handled;
    }
    if (response.body.empty() && !response.content_provider_) {
      SetError(options, request, response, response.status, Reason(response.status));
    }
    return httplib::Server::HandlerResponse::Handled;
  }));
  server_->set_post_routing_handler([options = options_](const httplib::Request& request,
                                                         httplib::Response& response) {
    // (Every response passes here, those answered before routing too.)
    if (options.cors_origins.empty() || !IsApiPath(options, request.path)) return;
    // "*": every API answer names it, with an Origin or without, so none
    // varies with it. Listed origins: every API answer depends on the
    // request's Origin (allowed, another, or none), so a shared cache must
    // key on it.
    const bool any = options.cors_origins.count("*") > 0;
    const std::string origin = any ? "*" : AllowedOrigin(options, request);
    if (!origin.empty() && !response.has_header("Access-Control-Allow-Origin")) {
      response.set_header("Access-Control-Allow-Origin", origin);
    }
    if (!any && !response.has_header("Vary")) response.set_header("Vary", "Origin");
  });
}

absl::StatusOr<std::unique_ptr<HttpServer>> HttpServer::Bind(const HttpServerOptions& options) {
  std::string host;
  int port = 0;
  absl::Status parsed = ParseListen(options.listen, &host, &port);
  if (!parsed.ok()) return parsed;
  if (options.threads < 1) return absl::InvalidArgumentError("HTTP threads must be >= 1");
  if (options.tls_cert_file.empty() != options.tls_key_file.empty()) {
    return absl::InvalidArgumentError("HTTPS needs both a certificate and a key file");
  }
  std::unique_ptr<HttpServer> server(new HttpServer(options));
  if (!server->server_->is_valid()) {
    return absl::InvalidArgumentError(absl::StrCat("cannot use the TLS certificate ",
                                                   options.tls_cert_file, " with the key ",
                                                   options.tls_key_file));
  }
  if (port != 0) {
    absl::Status free = CheckPortFree(host, port);
    if (!free.ok()) return free;
  }
  // httplib (Debian builds it as a shared library) listens with a backlog of
  // 5: a burst of 64 clients connecting at once overflowed it, and the
  // dropped handshakes came back a second later (SYN retransmission) or
  // failed. Remember the listening socket and widen its queue after the bind.
  // SO_REUSEADDR beside httplib's SO_REUSEPORT: the connections it accepts
  // inherit it, so once closed (TIME_WAIT, a minute) they do not fail the
  // next server's CheckPortFree on this port.
  auto listening = std::make_shared<int>(-1);
  server->server_->set_socket_options([listening](socket_t sock) {
    httplib::default_socket_options(sock);
    int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    *listening = sock;
  });
  if (port == 0) {
    server->port_ = server->server_->bind_to_any_port(host);
  } else if (server->server_->bind_to_port(host, port)) {
    server->port_ = port;
  }
  if (server->port_ <= 0) {
    return absl::UnavailableError(absl::StrCat("cannot listen on HTTP address ", options.listen,
                                               " (in use, not local, or unresolvable)"));
  }
  if (*listening >= 0 && ::listen(*listening, kListenBacklog) != 0) {
    LogWarning("HTTP: cannot widen the listen backlog to ", kListenBacklog, ": ",
               std::strerror(errno));
  }
  return server;
}

void HttpServer::Allow(const std::string& path, const std::string& method) {
  allowed_->Add(path, method);
  if (method == "GET") allowed_->Add(path, "HEAD");
}

httplib::Server::Handler HttpServer::Guarded(httplib::Server::Handler handler) const {
  // The API key of a request with a body is checked here, once it is read
  // (one without was checked before routing).
  return [handler = std::move(handler), allowed = allowed_, options = options_](
             const httplib::Request& request, httplib::Response& response) {
    if (HasBody(request) && Refuse(options, allowed->For(request.path), request, response)) return;
    handler(request, response);
  };
}

void HttpServer::Get(const std::string& path, httplib::Server::Handler handler) {
  Allow(path, "GET");
  server_->Get(path, Guarded(std::move(handler)));
}

void HttpServer::Post(const std::string& path, httplib::Server::Handler handler) {
  Allow(path, "POST");
  server_->Post(path, Guarded(std::move(handler)));
}

void HttpServer::Start() {
  std::promise<void> done;
  stopped_ = done.get_future();
  httplib::Server* server = server_.get();
  thread_ = std::thread([server, done = std::move(done)]() mutable {
    server->listen_after_bind();
    done.set_value();
  });
  // stop() does nothing until the loop runs: wait for it (a few ms).
  for (int i = 0; i < 1000 && !server_->is_running(); ++i) absl::SleepFor(absl::Milliseconds(1));
}

HttpServer::~HttpServer() {
  server_->stop();
  if (!thread_.joinable()) return;
  if (stopped_.wait_for(absl::ToChronoSeconds(options_.shutdown_timeout)) ==
      std::future_status::ready) {
    thread_.join();
    return;
  }
  // A client is still holding a connection (e.g. trickling a request): do
  // not wait for it. The thread and the server it uses are left to the
  // process's exit.
  LogWarning("HTTP: connections still open after ",
             absl::FormatDuration(options_.shutdown_timeout), "; not waiting for them");
  thread_.detach();
  (void)server_.release();
}

}  // namespace tandem
