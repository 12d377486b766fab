// /metrics, /healthz and /readyz on the HTTP front door.
#ifndef TANDEM_SERVER_HTTP_METRICS_ROUTES_H_
#define TANDEM_SERVER_HTTP_METRICS_ROUTES_H_

#include <atomic>
#include <memory>

#include <prometheus/registry.h>

#include "server/http/http_server.h"

namespace tandem {

// Installs, before server->Start():
//   GET /metrics  200, `registry` in the Prometheus text format 0.0.4
//   GET /healthz  200 "ok" (the process is up)
//   GET /readyz   200 "ready" while *ready, else 503 "not ready" (loading,
//                 draining)
// The handlers share ownership of `registry` and `ready`, so they stay
// valid for any connection the server abandons at shutdown.
void AddMetricsRoutes(std::shared_ptr<const prometheus::Registry> registry,
                      std::shared_ptr<const std::atomic<bool>> ready, HttpServer* server);

}  // namespace tandem

#endif  // TANDEM_SERVER_HTTP_METRICS_ROUTES_H_
