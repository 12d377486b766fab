// Tests for MetricsHttpServer, using a minimal raw-socket HTTP client.

#include "server/http/metrics_http_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "gtest/gtest.h"
#include "server/metrics/builder.h"
#include "server/metrics/registry.h"
#include "server/metrics/text_serializer.h"

namespace tandem {
namespace {

struct HttpResponse {
  int status = 0;
  std::map<std::string, std::string> headers;  // Lower-case names.
  std::string body;
};

using Clock = std::chrono::steady_clock;

// Connects to 127.0.0.1:`port` with `timeout_s` send and receive timeouts;
// returns the fd or -1.
int Connect(int port, int timeout_s = 5) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  timeval timeout{timeout_s, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// Sends `request` verbatim and reads the response until EOF.
absl::StatusOr<HttpResponse> FetchRaw(int port, absl::string_view request,
                                      int timeout_s = 5) {
  const int fd = Connect(port, timeout_s);
  if (fd < 0) return absl::UnavailableError(absl::StrCat("connect: ", errno));
  size_t sent = 0;
  while (sent < request.size()) {
    const ssize_t n =
        send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) {
      close(fd);
      return absl::UnavailableError("send failed");
    }
    sent += n;
  }
  std::string raw;
  char buffer[4096];
  while (true) {
    const ssize_t n = recv(fd, buffer, sizeof(buffer), 0);
    if (n < 0) {
      close(fd);
      return absl::DeadlineExceededError("recv failed or timed out");
    }
    if (n == 0) break;
    raw.append(buffer, n);
  }
  close(fd);

  const size_t header_end = raw.find("\r\n\r\n");
  if (header_end == std::string::npos) {
    return absl::DataLossError(absl::StrCat("no header end in: ", raw));
  }
  HttpResponse response;
  response.body = raw.substr(header_end + 4);
  std::vector<absl::string_view> lines =
      absl::StrSplit(absl::string_view(raw).substr(0, header_end), "\r\n");
  // "HTTP/1.1 200 OK"
  std::vector<absl::string_view> status_line =
      absl::StrSplit(lines[0], absl::MaxSplits(' ', 2));
  if (status_line.size() < 2 ||
      !absl::SimpleAtoi(status_line[1], &response.status)) {
    return absl::DataLossError(absl::StrCat("bad status line: ", lines[0]));
  }
  for (size_t i = 1; i < lines.size(); ++i) {
    const size_t colon = lines[i].find(':');
    if (colon == absl::string_view::npos) continue;
    response.headers[absl::AsciiStrToLower(lines[i].substr(0, colon))] =
        std::string(absl::StripAsciiWhitespace(lines[i].substr(colon + 1)));
  }
  return response;
}

// Sends one HTTP/1.1 request with "Connection: close" and reads the response
// until EOF.
absl::StatusOr<HttpResponse> Fetch(int port, absl::string_view method,
                                   absl::string_view path, int timeout_s = 5) {
  return FetchRaw(
      port,
      absl::StrCat(method, " ", path,
                   " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
                   "Content-Length: 0\r\n\r\n"),
      timeout_s);
}

class MetricsHttpServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    metrics::Family<metrics::Counter>* requests =
        *metrics::BuildCounter()
             .Name("tandem_requests_total")
             .Help("Requests served.")
             .Register(registry_);
    requests->Add({{"code", "OK"}}).Increment(7);
    metrics::Family<metrics::Histogram>* latency =
        *metrics::BuildHistogram()
             .Name("tandem_latency_seconds")
             .Help("Latency with \"quotes\" and \\ backslash.")
             .Buckets({0.1, 1})
             .Register(registry_);
    latency->Add({{"model", "a\"b"}}).Observe(0.5);

    absl::StatusOr<std::unique_ptr<MetricsHttpServer>> server =
        MetricsHttpServer::Start("127.0.0.1:0", &registry_,
                                 [this] { return ready_.load(); });
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
  }

  metrics::Registry registry_;
  std::atomic<bool> ready_{true};
  std::unique_ptr<MetricsHttpServer> server_;
};

TEST_F(MetricsHttpServerTest, PicksAPort) {
  EXPECT_GT(server_->port(), 0);
  EXPECT_LT(server_->port(), 65536);
}

TEST_F(MetricsHttpServerTest, ServesMetrics) {
  absl::StatusOr<HttpResponse> response =
      Fetch(server_->port(), "GET", "/metrics");
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->status, 200);
  EXPECT_EQ(response->headers["content-type"],
            "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_EQ(response->body,
            metrics::TextSerializer().Serialize(registry_.Collect()));
  EXPECT_TRUE(absl::StrContains(response->body,
                                "tandem_requests_total{code=\"OK\"} 7\n"));
  EXPECT_EQ(response->headers["content-length"],
            std::to_string(response->body.size()));

  // A query string does not change the route.
  absl::StatusOr<HttpResponse> with_query =
      Fetch(server_->port(), "GET", "/metrics?name[]=x");
  ASSERT_TRUE(with_query.ok()) << with_query.status();
  EXPECT_EQ(with_query->status, 200);
}

TEST_F(MetricsHttpServerTest, Healthz) {
  absl::StatusOr<HttpResponse> response =
      Fetch(server_->port(), "GET", "/healthz");
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->status, 200);
  EXPECT_EQ(response->body, "ok");
}

TEST_F(MetricsHttpServerTest, ReadyzFollowsIsReady) {
  absl::StatusOr<HttpResponse> response =
      Fetch(server_->port(), "GET", "/readyz");
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->status, 200);
  EXPECT_EQ(response->body, "ready");

  ready_.store(false);
  response = Fetch(server_->port(), "GET", "/readyz");
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->status, 503);
  EXPECT_EQ(response->body, "not ready");

  ready_.store(true);
  response = Fetch(server_->port(), "GET", "/readyz");
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->status, 200);
}

TEST_F(MetricsHttpServerTest, UnknownPathIs404) {
  for (const char* path :
       {"/", "/metrics/", "/metricsx", "/nope", "/healthz/x"}) {
    absl::StatusOr<HttpResponse> response = Fetch(server_->port(), "GET", path);
    ASSERT_TRUE(response.ok()) << response.status();
    EXPECT_EQ(response->status, 404) << path;
  }
}

TEST_F(MetricsHttpServerTest, NonGetIs405) {
  for (const char* method : {"POST", "PUT", "DELETE", "HEAD"}) {
    absl::StatusOr<HttpResponse> response =
        Fetch(server_->port(), method, "/metrics");
    ASSERT_TRUE(response.ok()) << method << ": " << response.status();
    EXPECT_EQ(response->status, 405) << method;
    EXPECT_EQ(response->headers["allow"], "GET") << method;
  }
}

TEST_F(MetricsHttpServerTest, HeadGetsHeadersOnly) {
  absl::StatusOr<HttpResponse> response =
      Fetch(server_->port(), "HEAD", "/metrics");
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->status, 405);
  EXPECT_EQ(response->headers["allow"], "GET");
  EXPECT_EQ(response->headers["connection"], "close");
  EXPECT_EQ(response->body, "");
}

TEST_F(MetricsHttpServerTest, MalformedRequestLineIs400) {
  for (const char* request :
       {"garbage\r\n\r\n", "GET /metrics\r\n\r\n",
        "GET  /metrics HTTP/1.1\r\n\r\n", "GET /metrics HTTP/2.0\r\n\r\n",
        "GET metrics HTTP/1.1\r\n\r\n", "GET /metrics HTTP/1.1 x\r\n\r\n",
        "G(T /metrics HTTP/1.1\r\n\r\n", "\r\n\r\n"}) {
    absl::StatusOr<HttpResponse> response = FetchRaw(server_->port(), request);
    ASSERT_TRUE(response.ok()) << absl::CEscape(request) << ": "
                               << response.status();
    EXPECT_EQ(response->status, 400) << absl::CEscape(request);
    EXPECT_EQ(response->headers["connection"], "close");
  }
  // HTTP/1.0 and bare request lines with no headers are fine.
  absl::StatusOr<HttpResponse> response =
      FetchRaw(server_->port(), "GET /healthz HTTP/1.0\r\n\r\n");
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->status, 200);
  EXPECT_EQ(response->body, "ok");
}

TEST_F(MetricsHttpServerTest, OversizedRequestIsRejected) {
  // Headers over 8 KiB: 431.
  absl::StatusOr<HttpResponse> response = FetchRaw(
      server_->port(), absl::StrCat("GET /metrics HTTP/1.1\r\nX-Big: ",
                                    std::string(9000, 'a'), "\r\n\r\n"));
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->status, 431);
  // A request line over 8 KiB: 400.
  response = FetchRaw(server_->port(),
                      absl::StrCat("GET /", std::string(9000, 'a'),
                                   " HTTP/1.1\r\n\r\n"));
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->status, 400);
  // The server still works.
  response = Fetch(server_->port(), "GET", "/healthz");
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->status, 200);
}

TEST_F(MetricsHttpServerTest, IdleClientDoesNotBlockTheNextOne) {
  // Connects and sends nothing. The server serves one connection at a time
  // and gives this one up after its 5 s request timeout.
  const int idle = Connect(server_->port());
  ASSERT_GE(idle, 0);
  const Clock::time_point start = Clock::now();
  absl::StatusOr<HttpResponse> response =
      Fetch(server_->port(), "GET", "/metrics", /*timeout_s=*/15);
  const auto elapsed = Clock::now() - start;
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->status, 200);
  EXPECT_EQ(response->body,
            metrics::TextSerializer().Serialize(registry_.Collect()));
  EXPECT_LT(elapsed, std::chrono::seconds(7));
  // The idle connection was closed without a response.
  char byte;
  EXPECT_EQ(recv(idle, &byte, 1, 0), 0);
  close(idle);
}

TEST_F(MetricsHttpServerTest, ClientThatStopsMidRequestIsDropped) {
  const int partial = Connect(server_->port());
  ASSERT_GE(partial, 0);
  const std::string start = "GET /metrics HTTP/1.1\r\nHost: x";
  ASSERT_EQ(send(partial, start.data(), start.size(), MSG_NOSIGNAL),
            static_cast<ssize_t>(start.size()));
  close(partial);  // EOF before the end of the head: no answer, no wait.
  const Clock::time_point begin = Clock::now();
  absl::StatusOr<HttpResponse> response =
      Fetch(server_->port(), "GET", "/healthz");
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->status, 200);
  EXPECT_LT(Clock::now() - begin, std::chrono::seconds(2));
}

TEST_F(MetricsHttpServerTest, DestructorIsPromptWithIdleClient) {
  const int idle = Connect(server_->port());
  ASSERT_GE(idle, 0);
  // Let the server thread accept it and wait for its request.
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const Clock::time_point start = Clock::now();
  server_.reset();
  const auto elapsed = Clock::now() - start;
  EXPECT_LT(elapsed, std::chrono::milliseconds(500))
      << std::chrono::duration_cast<std::chrono::milliseconds>(elapsed).count()
      << " ms";
  char byte;
  EXPECT_EQ(recv(idle, &byte, 1, 0), 0);  // Closed, not left hanging.
  close(idle);
}

TEST_F(MetricsHttpServerTest, StopsInDestructor) {
  const int port = server_->port();
  server_.reset();
  const int fd = Connect(port);
  EXPECT_LT(fd, 0);
  if (fd >= 0) close(fd);
}

TEST_F(MetricsHttpServerTest, BusyAddressIsAnError) {
  const std::string address = absl::StrCat("127.0.0.1:", server_->port());
  absl::StatusOr<std::unique_ptr<MetricsHttpServer>> second =
      MetricsHttpServer::Start(address, &registry_, nullptr);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_TRUE(absl::StrContains(second.status().message(), address))
      << second.status();
  EXPECT_TRUE(
      absl::StrContains(second.status().message(), std::strerror(EADDRINUSE)))
      << second.status();
}

TEST(MetricsHttpServerStartTest, PortBoundByAnotherSocketIsAnError) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = 0;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(listen(fd, 1), 0);
  socklen_t len = sizeof(addr);
  ASSERT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  const std::string address = absl::StrCat("127.0.0.1:", ntohs(addr.sin_port));

  metrics::Registry registry;
  absl::StatusOr<std::unique_ptr<MetricsHttpServer>> server =
      MetricsHttpServer::Start(address, &registry, nullptr);
  close(fd);
  ASSERT_FALSE(server.ok());
  EXPECT_EQ(server.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_TRUE(absl::StrContains(server.status().message(), address))
      << server.status();
  EXPECT_TRUE(
      absl::StrContains(server.status().message(), std::strerror(EADDRINUSE)))
      << server.status();
}

TEST(MetricsHttpServerStartTest, MalformedAddressesAreErrors) {
  metrics::Registry registry;
  for (const char* address :
       {"", "nonsense", "127.0.0.1", "127.0.0.1:", "127.0.0.1:http",
        "127.0.0.1:65536", "127.0.0.1:-1", "127.0.0.1:80s", "127.0.0.1:80r",
        "127.0.0.1:80,127.0.0.1:81", "a b:80"}) {
    absl::StatusOr<std::unique_ptr<MetricsHttpServer>> server =
        MetricsHttpServer::Start(address, &registry, nullptr);
    ASSERT_FALSE(server.ok()) << address;
    EXPECT_EQ(server.status().code(), absl::StatusCode::kInvalidArgument)
        << address << ": " << server.status();
    EXPECT_TRUE(absl::StrContains(server.status().message(), address))
        << server.status();
  }
  // An address that parses but is not local to this machine.
  absl::StatusOr<std::unique_ptr<MetricsHttpServer>> server =
      MetricsHttpServer::Start("203.0.113.1:0", &registry, nullptr);
  ASSERT_FALSE(server.ok());
  EXPECT_TRUE(absl::StrContains(server.status().message(), "203.0.113.1:0"))
      << server.status();
}

TEST(MetricsHttpServerStartTest, Ipv6IsRejected) {
  metrics::Registry registry;
  for (const char* address : {"[::1]:0", "[::]:9090", "::1:0"}) {
    absl::StatusOr<std::unique_ptr<MetricsHttpServer>> server =
        MetricsHttpServer::Start(address, &registry, nullptr);
    ASSERT_FALSE(server.ok()) << address;
    EXPECT_EQ(server.status().code(), absl::StatusCode::kInvalidArgument)
        << server.status();
    EXPECT_TRUE(absl::StrContains(server.status().message(), address))
        << server.status();
    EXPECT_TRUE(absl::StrContains(server.status().message(), "IPv6"))
        << server.status();
  }
}

TEST(MetricsHttpServerStartTest, HostForms) {
  metrics::Registry registry;
  for (const char* address : {"localhost:0", ":0", "0.0.0.0:0"}) {
    absl::StatusOr<std::unique_ptr<MetricsHttpServer>> server =
        MetricsHttpServer::Start(address, &registry, nullptr);
    ASSERT_TRUE(server.ok()) << address << ": " << server.status();
    absl::StatusOr<HttpResponse> response =
        Fetch((*server)->port(), "GET", "/healthz");
    ASSERT_TRUE(response.ok()) << address << ": " << response.status();
    EXPECT_EQ(response->status, 200) << address;
  }
}

TEST(MetricsHttpServerStartTest, NullRegistryIsAnError) {
  absl::StatusOr<std::unique_ptr<MetricsHttpServer>> server =
      MetricsHttpServer::Start("127.0.0.1:0", nullptr, nullptr);
  EXPECT_EQ(server.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(MetricsHttpServerStartTest, NullIsReadyMeansReady) {
  metrics::Registry registry;
  absl::StatusOr<std::unique_ptr<MetricsHttpServer>> server =
      MetricsHttpServer::Start("127.0.0.1:0", &registry, nullptr);
  ASSERT_TRUE(server.ok()) << server.status();
  absl::StatusOr<HttpResponse> response =
      Fetch((*server)->port(), "GET", "/readyz");
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->status, 200);
  // An empty registry scrapes as an empty body.
  response = Fetch((*server)->port(), "GET", "/metrics");
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->status, 200);
  EXPECT_EQ(response->body, "");
}

}  // namespace
}  // namespace tandem
