// The server's one HTTP front door: a cpp-httplib server with its own thread
// pool, timeouts and limits. /metrics and the probes are routes on it
// (metrics_routes.h); the OpenAI-compatible API will be more routes.
#ifndef TANDEM_SERVER_HTTP_HTTP_SERVER_H_
#define TANDEM_SERVER_HTTP_HTTP_SERVER_H_

#include <httplib.h>

#include <cstddef>
#include <future>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace tandem {

struct HttpServerOptions {
  // "host:port": "127.0.0.1:9400", "0.0.0.0:9400", "localhost:0", or ":9400"
  // for every interface. Port 0 picks a free port (see port()).
  std::string listen;
  // Connections served at once, each on its own pool thread for its
  // lifetime: size it for long-lived streaming responses plus scrapes.
  // Further connections wait in the queue until a thread is free.
  int threads = 64;
  // Per read/write on a connection; an idle keep-alive connection is closed
  // after keep_alive_timeout. A client that sends nothing gets nothing.
  absl::Duration read_timeout = absl::Seconds(5);
  absl::Duration write_timeout = absl::Seconds(5);
  absl::Duration keep_alive_timeout = absl::Seconds(5);
  // Request bodies above this are refused with 413 (chunked ones with 411,
  // compressed ones with 415: their size is not known before they are
  // read); header blocks above max_header_bytes or max_headers get 431. (The request line and each
  // header line are limited to 8 KiB by the library's build: 414 and 400.)
  size_t max_body_bytes = 1 << 20;
  size_t max_header_bytes = 32 * 1024;
  size_t max_headers = 100;
  // How long the destructor waits for open connections to finish; longer
  // than keep_alive_timeout, so idle scrapers' connections close in time.
  absl::Duration shutdown_timeout = absl::Seconds(6);
  // HTTPS with this certificate chain and private key (PEM files) when set.
  std::string tls_cert_file;
  std::string tls_key_file;
  // When set, every path except `open_paths` needs the header
  // "Authorization: Bearer <api_key>" (401 otherwise).
  std::string api_key;
  std::set<std::string> open_paths;
  // Paths under this prefix are a JSON API: their errors (401, 404, 405,
  // 413, 431, ...) are {"error": {"message", "type", "param", "code"}}
  // objects (OpenAI's shape). Empty: none.
  std::string api_prefix;
  // Browser origins ("https://chat.example", or "*") allowed to call the API
  // paths from another origin (CORS): their responses get
  // Access-Control-Allow-Origin, and OPTIONS preflights are answered (without
  // the API key, which browsers do not send there). Empty: CORS off.
  std::set<std::string> cors_origins;
};

struct RouteMethods;  // http_server.cc

// Ownership: owns the httplib::Server, its pool and the listening thread.
// Threading: Get/Post only before Start(); handlers run on the pool threads,
// concurrently, and must be thread-safe. Every known path answers other
// methods with 405 and an Allow header; unknown paths get 404. With an API
// key, handlers run only for requests that carry it (401 otherwise).
class HttpServer {
 public:
  // Binds `options.listen`. UNAVAILABLE (address in use, not local) or
  // INVALID_ARGUMENT (malformed address; unreadable certificate or key),
  // naming the address or file.
  static absl::StatusOr<std::unique_ptr<HttpServer>> Bind(const HttpServerOptions& options);
  // Stops accepting, then waits up to shutdown_timeout for open connections;
  // connections still open after that are abandoned with the server object
  // (so handlers must only use state they share ownership of).
  ~HttpServer();

  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  void Get(const std::string& path, httplib::Server::Handler handler);
  void Post(const std::string& path, httplib::Server::Handler handler);
  // Starts serving on a thread of its own.
  void Start();

  int port() const { return port_; }

 private:
  explicit HttpServer(const HttpServerOptions& options);
  void Allow(const std::string& path, const std::string& method);
  // `handler`, behind the API key check.
  httplib::Server::Handler Guarded(httplib::Server::Handler handler) const;

  const HttpServerOptions options_;
  std::unique_ptr<httplib::Server> server_;
  // The methods each route answers (shared with the hooks; filled before Start).
  std::shared_ptr<RouteMethods> allowed_;
  int port_ = 0;
  std::thread thread_;        // runs listen_after_bind()
  std::future<void> stopped_;  // ready when the thread's loop has returned
};

}  // namespace tandem

#endif  // TANDEM_SERVER_HTTP_HTTP_SERVER_H_
