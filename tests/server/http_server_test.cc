// The HTTP front door on a real loopback socket: the metrics and probe
// routes, and what it answers to bad requests, slow clients and overload.
#include "server/http/http_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <prometheus/counter.h>
#include <nlohmann/json.hpp>
#include <prometheus/registry.h>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "server/http/connection_watch.h"
#include "server/http/metrics_routes.h"
#include "server/server_metrics.h"

namespace tandem {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

// A connected TCP socket to 127.0.0.1:port; closes on destruction.
class RawClient {
 public:
  explicit RawClient(int port) : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  }
  ~RawClient() { ::close(fd_); }
  bool connected() const { return connected_; }
  void Send(const std::string& bytes) { (void)::send(fd_, bytes.data(), bytes.size(), 0); }
  // Everything until the server closes the connection (or 10 s pass).
  std::string ReadAll() { return ReadFor(10); }
  // Everything until the server closes the connection or sends nothing for
  // `quiet_seconds`.
  std::string ReadFor(int quiet_seconds) {
    timeval timeout{quiet_seconds, 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
    std::string out;
    char buffer[4096];
    ssize_t n;
    while ((n = ::recv(fd_, buffer, sizeof(buffer), 0)) > 0) out.append(buffer, n);
    return out;
  }

 private:
  int fd_;
  bool connected_ = false;
};

class HttpServerTest : public ::testing::Test {
 protected:
  // Binds, adds the metrics routes and `routes`' own, then starts.
  void Start(HttpServerOptions options = {},
             const std::function<void(HttpServer&)>& routes = nullptr) {
    options.listen = "127.0.0.1:0";
    auto server = HttpServer::Bind(options);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    AddMetricsRoutes(metrics_.registry(), ready_, server_.get());
    if (routes) routes(*server_);
    server_->Start();
  }
  // One request on a fresh connection; the whole response.
  std::string Request(const std::string& request) {
    RawClient client(server_->port());
    EXPECT_TRUE(client.connected());
    client.Send(request);
    return client.ReadAll();
  }
  std::string Get(const std::string& path) {
    return Request("GET " + path + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  }

  ServerMetrics metrics_{{"test", "none", "no"}};
  std::shared_ptr<std::atomic<bool>> ready_ = std::make_shared<std::atomic<bool>>(false);
  std::unique_ptr<HttpServer> server_;
};

TEST_F(HttpServerTest, ServesMetricsAndProbes) {
  Start();
  metrics_.OnRejected();
  const std::string metrics = Get("/metrics");
  EXPECT_THAT(metrics, StartsWith("HTTP/1.1 200"));
  EXPECT_THAT(metrics, HasSubstr("Content-Type: text/plain; version=0.0.4; charset=utf-8"));
  EXPECT_THAT(metrics, HasSubstr("\ntandem_requests_total{finish_reason=\"rejected\"} 1\n"));
  EXPECT_THAT(metrics, HasSubstr("# TYPE tandem_step_duration_seconds histogram"));
  EXPECT_THAT(Get("/healthz"), StartsWith("HTTP/1.1 200"));
  EXPECT_THAT(Get("/readyz"), StartsWith("HTTP/1.1 503"));
  *ready_ = true;
  EXPECT_THAT(Get("/readyz"), StartsWith("HTTP/1.1 200"));
  EXPECT_THAT(Get("/metrics?name=x"), StartsWith("HTTP/1.1 200"));  // a query is ignored
}

TEST_F(HttpServerTest, UnknownPathsAre404AndOtherMethods405) {
  Start();
  EXPECT_THAT(Get("/nope"), StartsWith("HTTP/1.1 404"));
  const std::string post =
      Request("POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
  EXPECT_THAT(post, StartsWith("HTTP/1.1 405"));
  EXPECT_THAT(post, HasSubstr("Allow: GET, HEAD"));
  EXPECT_THAT(Request("DELETE /readyz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"),
              StartsWith("HTTP/1.1 405"));
}

TEST_F(HttpServerTest, MalformedAndOversizedRequestsGetErrorsAndTheServerGoesOn) {
  HttpServerOptions options;  // errors keep the connection open until these
  options.read_timeout = options.keep_alive_timeout = absl::Seconds(1);
  options.max_body_bytes = 16;
  Start(options);
  EXPECT_THAT(Request("this is not http\r\n\r\n"), StartsWith("HTTP/1.1 400"));
  // A 64 KiB header line (the library's limit is 8 KiB a line).
  const std::string huge(64 * 1024, 'a');
  EXPECT_THAT(Request("GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: " + huge + "\r\n\r\n"),
              StartsWith("HTTP/1.1 400"));
  // 40 KiB of header lines, and 500 tiny ones: over the block limits.
  std::string many, lots;
  for (int i = 0; i < 1000; ++i) many += "X-Header-" + std::to_string(i) + ": 0123456789abcdef0123\r\n";
  for (int i = 0; i < 500; ++i) lots += "X-" + std::to_string(i) + ": v\r\n";
  EXPECT_THAT(Request("GET /metrics HTTP/1.1\r\nHost: x\r\n" + many + "\r\n"),
              StartsWith("HTTP/1.1 431"));
  EXPECT_THAT(Request("GET /healthz HTTP/1.1\r\nHost: x\r\n" + lots + "\r\n"),
              StartsWith("HTTP/1.1 431"));
  EXPECT_THAT(Request("GET /" + std::string(20000, 'a') + " HTTP/1.1\r\nHost: x\r\n\r\n"),
              StartsWith("HTTP/1.1 414"));
  // A body over the limit is refused.
  EXPECT_THAT(Request("POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n"
                      "Connection: close\r\n\r\n" + std::string(1000, 'x')),
              StartsWith("HTTP/1.1 4"));
  EXPECT_THAT(Get("/healthz"), StartsWith("HTTP/1.1 200"));
}

// A body whose size the header does not state (chunked) or that would grow
// when decoded (gzip, br) could exceed max_body_bytes unchecked: refused
// before it is read, and the connection closed (its bytes are unread).
TEST_F(HttpServerTest, BodiesOfUnstatedOrEncodedSizeAreRefusedUnread) {
  HttpServerOptions options;
  options.api_prefix = "/v1/";
  Start(options);
  const std::string chunked = Request(
      "POST /v1/completions HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
      "5\r\nhello\r\n");  // no last chunk: a server that read on would wait
  EXPECT_THAT(chunked, StartsWith("HTTP/1.1 411"));
  EXPECT_THAT(chunked, HasSubstr("Connection: close"));
  EXPECT_THAT(chunked, HasSubstr("\"type\":\"invalid_request_error\""));
  const std::string gzip = Request(
      "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Encoding: gzip\r\n"
      "Content-Length: 4\r\n\r\nabcd");
  EXPECT_THAT(gzip, StartsWith("HTTP/1.1 415"));
  EXPECT_THAT(gzip, HasSubstr("Connection: close"));
  // The error quotes the header, in JSON a client can parse: quotes escaped,
  // invalid UTF-8 replaced (C escapes such as \' or \303 are not JSON).
  const std::string odd = Request(
      "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Encoding: x'y\"\xc3\xa9\xff\r\n"
      "Content-Length: 4\r\n\r\nabcd");
  EXPECT_THAT(odd, StartsWith("HTTP/1.1 415"));
  const nlohmann::json error = nlohmann::json::parse(odd.substr(odd.find("\r\n\r\n") + 4), nullptr,
                                                     /*allow_exceptions=*/false);
  ASSERT_FALSE(error.is_discarded()) << odd;
  EXPECT_THAT(error["error"]["message"].get<std::string>(),
              HasSubstr("x'y\"\xc3\xa9\xef\xbf\xbd"));  // U+FFFD for the stray byte
  EXPECT_THAT(Request("POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Encoding: identity\r\n"
                      "Content-Length: 0\r\nConnection: close\r\n\r\n"),
              StartsWith("HTTP/1.1 405"));  // identity is no encoding
  // A POST with no length at all would be read until the client closes.
  const std::string unstated =
      Request("POST /v1/completions HTTP/1.1\r\nHost: x\r\n\r\n{\"prompt\": \"x\"");
  EXPECT_THAT(unstated, StartsWith("HTTP/1.1 411"));
  EXPECT_THAT(unstated, HasSubstr("Connection: close"));
  // Lengths httplib's strtoull would misread, and one over the limit (refused
  // at once, not read and skipped: here it is never sent).
  for (const std::string length : {"abc", "-1", "12, 12"}) {
    EXPECT_THAT(Request("POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: " + length +
                        "\r\n\r\n"),
                StartsWith("HTTP/1.1 400")) << length;
  }
  EXPECT_THAT(Request("POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n"
                      "Content-Length: 1\r\n\r\nxx"),
              StartsWith("HTTP/1.1 400"));
  const absl::Time start = absl::Now();
  const std::string huge = Request(
      "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 10000000000\r\n\r\n");
  EXPECT_THAT(huge, StartsWith("HTTP/1.1 413"));
  EXPECT_EQ(huge.find("Content-Type", huge.find("Content-Type") + 1), std::string::npos) << huge;
  EXPECT_LT(absl::Now() - start, absl::Seconds(1));
  EXPECT_THAT(Get("/healthz"), StartsWith("HTTP/1.1 200"));
}

TEST_F(HttpServerTest, APatternRouteAnswersCorsPreflightsAndRefusesOtherMethods) {
  HttpServerOptions options;
  options.api_prefix = "/v1/";
  options.api_key = "sesame";
  options.cors_origins = {"https://app.example"};
  Start(options, [](HttpServer& server) {
    server.Get(R"(/v1/items/(.+))", [](const httplib::Request&, httplib::Response& response) {
      response.set_content("{}", "application/json");
    });
  });
  // The preflight needs no key (browsers never send one), as on exact paths.
  const std::string preflight = Request(
      "OPTIONS /v1/items/abc HTTP/1.1\r\nHost: x\r\nOrigin: https://app.example\r\n"
      "Access-Control-Request-Method: GET\r\nConnection: close\r\n\r\n");
  EXPECT_THAT(preflight, StartsWith("HTTP/1.1 204"));
  EXPECT_THAT(preflight, HasSubstr("Access-Control-Allow-Origin: https://app.example"));
  EXPECT_THAT(preflight, HasSubstr("Access-Control-Allow-Methods: GET, HEAD"));
  EXPECT_THAT(Request("DELETE /v1/items/abc HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer sesame\r\n"
                      "Connection: close\r\n\r\n"),
              AllOf(StartsWith("HTTP/1.1 405"), HasSubstr("Allow: GET, HEAD")));
  EXPECT_THAT(Request("GET /v1/items/abc HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer sesame\r\n"
                      "Connection: close\r\n\r\n"),
              AllOf(StartsWith("HTTP/1.1 200"), HasSubstr("Vary: Origin")));
  // With origins listed, every API answer varies with the Origin, a 401 for
  // another origin included (it names none).
  const std::string other = Request(
      "GET /v1/items/abc HTTP/1.1\r\nHost: x\r\nOrigin: https://other.example\r\n"
      "Connection: close\r\n\r\n");
  EXPECT_THAT(other, AllOf(StartsWith("HTTP/1.1 401"), HasSubstr("Vary: Origin"),
                           Not(HasSubstr("Access-Control-Allow-Origin"))));
}

// With "*" every API answer, with an Origin or without, names "*" and so
// does not vary with the Origin (one without it, cached, would be served to a
// browser that then blocks it); other paths name none.
TEST_F(HttpServerTest, AnyOriginIsNamedOnEveryApiAnswer) {
  HttpServerOptions options;
  options.api_prefix = "/v1/";
  options.api_key = "sesame";
  options.cors_origins = {"*"};
  options.open_paths = {"/healthz"};
  Start(options, [](HttpServer& server) {
    server.Get("/v1/models", [](const httplib::Request&, httplib::Response& response) {
      response.set_content("{}", "application/json");
    });
    server.Get("/healthz", [](const httplib::Request&, httplib::Response& response) {
      response.set_content("ok", "text/plain");
    });
  });
  for (const char* origin : {"", "Origin: https://app.example\r\n"}) {
    for (const char* key : {"", "Authorization: Bearer sesame\r\n"}) {
      const std::string answer =
          Request(absl::StrCat("GET /v1/models HTTP/1.1\r\nHost: x\r\n", origin, key,
                               "Connection: close\r\n\r\n"));
      EXPECT_THAT(answer, AllOf(HasSubstr("Access-Control-Allow-Origin: *"), Not(HasSubstr("Vary"))))
          << origin << key;
      EXPECT_THAT(answer, StartsWith(*key == '\0' ? "HTTP/1.1 401" : "HTTP/1.1 200"));
    }
  }
  EXPECT_THAT(Request("GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"),
              AllOf(StartsWith("HTTP/1.1 200"), Not(HasSubstr("Access-Control-Allow-Origin"))));
}

// A request refused for its key or method (401, 405) must not leave its
// body on a kept-alive connection, where it would be read as the next
// request: here the body is itself a request, which must not be answered.
TEST_F(HttpServerTest, ARefusedRequestsBodyIsNotReadAsTheNextRequest) {
  HttpServerOptions options;
  options.api_key = "secret";
  options.open_paths = {"/healthz", "/metrics"};
  Start(options);
  const std::string inner = "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n";
  for (const std::string path : {"/v1/completions", "/metrics", "/readyz"}) {  // 401, 405, 401
    RawClient client(server_->port());
    // The body comes after a pause, as a large one would: not in the read
    // that took the headers (whose buffer goes with the request).
    client.Send("POST " + path + " HTTP/1.1\r\nHost: x\r\nContent-Length: " +
                std::to_string(inner.size()) + "\r\n\r\n");
    absl::SleepFor(absl::Milliseconds(100));
    client.Send(inner);
    const std::string first = client.ReadFor(1);
    EXPECT_THAT(first, StartsWith(path == "/metrics" ? "HTTP/1.1 405" : "HTTP/1.1 401")) << path;
    EXPECT_EQ(first.find("HTTP/1.1", 1), std::string::npos) << first;
    // The connection goes on with the next request, not the body.
    client.Send("GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    const std::string rest = client.ReadAll();
    EXPECT_THAT(rest, StartsWith("HTTP/1.1 200")) << path;
    EXPECT_EQ(rest.find("HTTP/1.1", 1), std::string::npos) << rest;
    EXPECT_THAT(rest, Not(HasSubstr("# TYPE"))) << rest;
  }
  // A GET's or HEAD's body is never read by httplib: refused, and the
  // connection closed before the body is taken for a request.
  for (const std::string method : {"GET", "HEAD"}) {
    RawClient client(server_->port());
    client.Send(method + " /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: " +
                std::to_string(inner.size()) + "\r\n\r\n");
    absl::SleepFor(absl::Milliseconds(100));
    client.Send(inner);
    const std::string all = client.ReadAll();
    EXPECT_THAT(all, StartsWith("HTTP/1.1 400")) << method;
    EXPECT_THAT(all, HasSubstr("Connection: close")) << method;
    EXPECT_EQ(all.find("HTTP/1.1", 1), std::string::npos) << all;
  }
}

TEST_F(HttpServerTest, SlowAndIdleClientsDoNotBlockAScrape) {
  HttpServerOptions options;
  options.threads = 16;
  options.read_timeout = absl::Seconds(2);
  Start(options);
  // Eight idle connections and six that trickle a request line.
  std::vector<std::unique_ptr<RawClient>> slow;
  for (int i = 0; i < 14; ++i) {
    slow.push_back(std::make_unique<RawClient>(server_->port()));
    if (i >= 8) slow.back()->Send("GET /metr");
  }
  const absl::Time start = absl::Now();
  EXPECT_THAT(Get("/metrics"), StartsWith("HTTP/1.1 200"));
  EXPECT_LT(absl::Now() - start, absl::Seconds(1));
  // The idle ones are closed by the server after its timeouts (well before
  // the client's own 10 s receive timeout).
  const absl::Time idle_start = absl::Now();
  EXPECT_EQ(slow.front()->ReadAll(), "");
  EXPECT_LT(absl::Now() - idle_start, absl::Seconds(8));
}

// A handler that waits before it answers learns whether its client left:
// one that stays is never reported, one that closes is within the wait.
TEST(ConnectionWatchTest, AHandlerSeesItsClientLeaveAndNotOneThatStays) {
  HttpServerOptions options;
  options.listen = "127.0.0.1:0";
  auto server = HttpServer::Bind(options);
  ASSERT_TRUE(server.ok()) << server.status();
  struct Seen {
    bool found = false;
    bool open_at_first = false;
    bool closed = false;
  };
  absl::Mutex mu;
  std::vector<Seen> seen;
  (*server)->Get("/wait", [&](const httplib::Request& request, httplib::Response& response) {
    const ConnectionWatch watch(request);
    Seen s;
    s.found = watch.found();
    s.open_at_first = !watch.PeerClosed();
    const absl::Time until = absl::Now() + absl::Seconds(request.has_param("long") ? 5 : 0.5);
    while (!watch.PeerClosed() && absl::Now() < until) absl::SleepFor(absl::Milliseconds(10));
    s.closed = watch.PeerClosed();
    absl::MutexLock lock(&mu);
    seen.push_back(s);
    response.set_content("done", "text/plain");
  });
  (*server)->Start();
  {
    RawClient stays((*server)->port());
    stays.Send("GET /wait HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    EXPECT_THAT(stays.ReadAll(), StartsWith("HTTP/1.1 200"));
  }
  const absl::Time start = absl::Now();
  {
    RawClient leaves((*server)->port());
    leaves.Send("GET /wait?long=1 HTTP/1.1\r\nHost: x\r\n\r\n");
    absl::SleepFor(absl::Milliseconds(200));
  }  // closed here
  auto both = [&seen]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) { return seen.size() == 2; };
  absl::MutexLock lock(&mu);
  ASSERT_TRUE(mu.AwaitWithTimeout(absl::Condition(&both), absl::Seconds(10)));
  EXPECT_LT(absl::Now() - start, absl::Seconds(2));  // not the 5 s wait
  for (const Seen& s : seen) {
    EXPECT_TRUE(s.found);
    EXPECT_TRUE(s.open_at_first);
  }
  EXPECT_FALSE(seen[0].closed);
  EXPECT_TRUE(seen[1].closed);
  // A request that came through no socket names none.
  EXPECT_FALSE(ConnectionWatch(httplib::Request()).found());
}

TEST(HttpServerBindTest, BadAndBusyAddressesAreErrors) {
  HttpServerOptions options;
  options.listen = "127.0.0.1";
  EXPECT_EQ(HttpServer::Bind(options).status().code(), absl::StatusCode::kInvalidArgument);
  options.listen = "127.0.0.1:70000";
  EXPECT_EQ(HttpServer::Bind(options).status().code(), absl::StatusCode::kInvalidArgument);
  options.listen = "127.0.0.1:0";
  auto first = HttpServer::Bind(options);
  ASSERT_TRUE(first.ok());
  options.listen = "127.0.0.1:" + std::to_string((*first)->port());
  auto second = HttpServer::Bind(options);
  EXPECT_EQ(second.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(second.status().message()), HasSubstr(options.listen));
}

// A server restarted on its port binds it at once, though the connections
// the previous one closed still hold the port (TIME_WAIT on the server's
// side, for a minute): the check for a live listener must not count them.
TEST(HttpServerBindTest, ARestartedServerBindsThePortItsClosedConnectionsHold) {
  HttpServerOptions options;
  options.listen = "127.0.0.1:0";
  int port = 0;
  {
    auto server = HttpServer::Bind(options);
    ASSERT_TRUE(server.ok()) << server.status();
    (*server)->Get("/x", [](const httplib::Request&, httplib::Response& response) {
      response.set_content("ok", "text/plain");
    });
    (*server)->Start();
    port = (*server)->port();
    RawClient client(port);
    ASSERT_TRUE(client.connected());
    client.Send("GET /x HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    EXPECT_THAT(client.ReadAll(), StartsWith("HTTP/1.1 200"));  // the server closed first
  }
  options.listen = "127.0.0.1:" + std::to_string(port);
  auto again = HttpServer::Bind(options);
  EXPECT_TRUE(again.ok()) << again.status();
}

// A burst of clients connecting before the server accepts any: every
// handshake completes in the kernel's queue. With httplib's own backlog of 5
// only ~6 did, and the rest waited a second for a SYN retransmission (seen
// as 1 s first tokens when 64 chat streams opened at once).
TEST(HttpServerBindTest, ABurstOfConnectionsIsQueuedBeforeAccept) {
  HttpServerOptions options;
  options.listen = "127.0.0.1:0";
  auto server = HttpServer::Bind(options);  // bound and listening, not accepting
  ASSERT_TRUE(server.ok()) << server.status();
  constexpr int kClients = 64;
  std::vector<pollfd> fds;
  for (int i = 0; i < kClients; ++i) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    ASSERT_GE(fd, 0);
    ::fcntl(fd, F_SETFL, O_NONBLOCK);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>((*server)->port()));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    (void)::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
    fds.push_back({fd, POLLOUT, 0});
  }
  int connected = 0;
  const absl::Time deadline = absl::Now() + absl::Milliseconds(500);
  while (connected < kClients && absl::Now() < deadline) {
    connected = 0;
    ::poll(fds.data(), fds.size(), 50);
    for (const pollfd& p : fds) {
      int error = -1;
      socklen_t length = sizeof(error);
      ::getsockopt(p.fd, SOL_SOCKET, SO_ERROR, &error, &length);
      if ((p.revents & POLLOUT) && error == 0) ++connected;
    }
  }
  for (const pollfd& p : fds) ::close(p.fd);
  EXPECT_EQ(connected, kClients);
}

}  // namespace
}  // namespace tandem
