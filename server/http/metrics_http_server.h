#ifndef TANDEM_SERVER_HTTP_METRICS_HTTP_SERVER_H_
#define TANDEM_SERVER_HTTP_METRICS_HTTP_SERVER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "server/metrics/registry.h"

struct mg_connection;
struct mg_context;

namespace tandem {

// A small HTTP server (civetweb) for Prometheus scrapes and probes:
//
//   GET /metrics  200, the registry in text format 0.0.4
//                 (Content-Type: text/plain; version=0.0.4; charset=utf-8)
//   GET /healthz  200 "ok"
//   GET /readyz   200 "ready" if is_ready() returns true, else 503 "not ready"
//   other paths   404; methods other than GET: 405 (with "Allow: GET")
//
// Ownership: does not own `registry`; the registry (and whatever is_ready
// captures) must outlive the server. The server owns its civetweb context and
// worker threads and stops them in the destructor, which blocks until
// in-flight requests are done; no callback runs after it returns.
//
// Thread-safety: requests are served on civetweb worker threads, so
// `is_ready` must be thread-safe; the registry is scraped via its
// thread-safe Collect(). The object's own methods are safe to call from any
// thread.
class MetricsHttpServer {
 public:
  // Starts serving on `listen`, "host:port" -- e.g. "127.0.0.1:9090",
  // "0.0.0.0:9090", "localhost:9090", or ":9090" for all interfaces; port 0
  // picks a free port (see port()). IPv4 only: Debian's civetweb is built
  // without IPv6. A null `is_ready` means always ready.
  //
  // Errors: InvalidArgument for a malformed address (or an IPv6 one) or a
  // null registry; Unavailable if the address cannot be bound (busy, not
  // local, unresolvable, no permission). Messages include the address and
  // civetweb's reason.
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

  // civetweb begin_request callback; returns the HTTP status it sent.
  static int HandleRequest(mg_connection* connection);

  int Handle(mg_connection* connection) const;

  // Opens and closes a connection to the listener so that civetweb's accept
  // loop (which polls with a 2 s timeout) notices a stop request at once.
  void PokeListener() const;

  const metrics::Registry* const registry_;  // Not owned.
  const std::function<bool()> is_ready_;
  mg_context* context_ = nullptr;  // Owned; released with mg_stop().
  int port_ = 0;
  // IPv4 address (network byte order) PokeListener() connects to: the bound
  // address, or loopback for a wildcard bind.
  std::uint32_t wake_address_ = 0;
};

}  // namespace tandem

#endif  // TANDEM_SERVER_HTTP_METRICS_HTTP_SERVER_H_
