#ifndef TANDEM_SERVER_HTTP_METRICS_HTTP_SERVER_H_
#define TANDEM_SERVER_HTTP_METRICS_HTTP_SERVER_H_

#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "server/metrics/registry.h"

namespace tandem {

// A small HTTP/1.x server (plain POSIX sockets) for Prometheus scrapes and
// probes:
//
//   GET /metrics  200, the registry in text format 0.0.4
//                 (Content-Type: text/plain; version=0.0.4; charset=utf-8)
//   GET /healthz  200 "ok"
//   GET /readyz   200 "ready" if is_ready() returns true, else 503 "not ready"
//   other paths   404; other methods on these paths: 405 (with "Allow: GET");
//                 a malformed request line: 400; a request head over 8 KiB:
//                 431 (400 if even the request line does not fit)
//
// A query string is ignored. Every response carries "Connection: close".
//
// Ownership: does not own `registry`; the registry (and whatever is_ready
// captures) must outlive the server. The server owns its listening socket,
// its wake-up eventfd and its one thread; the destructor wakes the thread,
// joins it and closes the descriptors, and returns within milliseconds even
// while a client is connected (an unfinished request is dropped). No
// callback runs after it returns.
//
// Threading: one std::thread (default stack size) accepts connections and
// serves them one at a time, so `is_ready` and registry->Collect() are only
// ever called from that thread, never concurrently with each other; they
// must still be safe against the threads that update the registry and the
// readiness state. A client that sends nothing delays the next one by at
// most the 5 s request timeout. The object's own methods are safe to call
// from any thread.
class MetricsHttpServer {
 public:
  // Starts serving on `listen`, "host:port" -- e.g. "127.0.0.1:9090",
  // "0.0.0.0:9090", "localhost:9090", or ":9090" for all interfaces; port 0
  // picks a free port (see port()). IPv4 only. A null `is_ready` means always
  // ready.
  //
  // Errors: InvalidArgument for a malformed address (or an IPv6 one) or a
  // null registry; Unavailable if the address cannot be bound (busy, not
  // local, unresolvable, no permission). Messages include the address and
  // the system's reason (strerror / gai_strerror).
  static absl::StatusOr<std::unique_ptr<MetricsHttpServer>> Start(
      const std::string& listen, const metrics::Registry* registry,
      std::function<bool()> is_ready);

  ~MetricsHttpServer();

  MetricsHttpServer(const MetricsHttpServer&) = delete;
  MetricsHttpServer& operator=(const MetricsHttpServer&) = delete;

  // The bound TCP port (the actual one when port 0 was asked for).
  int port() const { return port_; }

 private:
  MetricsHttpServer(const metrics::Registry* registry,
                    std::function<bool()> is_ready);

  // The server thread's body: polls the listener and the wake-up eventfd
  // until the eventfd becomes readable (destructor).
  void Run() const;

  // Reads one request from the accepted, non-blocking socket `fd`, answers
  // it and closes `fd`. Runs on the server thread; gives up as soon as the
  // wake-up eventfd is signalled.
  void ServeConnection(int fd) const;

  // The full response (head and body) to a parsed request.
  std::string Respond(absl::string_view method, absl::string_view path) const;

  const metrics::Registry* const registry_;  // Not owned.
  const std::function<bool()> is_ready_;
  // All of the following are set in Start() before thread_ starts and are
  // not changed until the destructor has joined it.
  int listen_fd_ = -1;  // Owned.
  int wake_fd_ = -1;    // Owned eventfd; readable once the server stops.
  int port_ = 0;
  std::thread thread_;  // Runs Run(); joined in the destructor.
};

}  // namespace tandem

#endif  // TANDEM_SERVER_HTTP_METRICS_HTTP_SERVER_H_
