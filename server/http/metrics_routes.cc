#include "server/http/metrics_routes.h"

#include <utility>

#include <prometheus/text_serializer.h>

namespace tandem {

void AddMetricsRoutes(std::shared_ptr<const prometheus::Registry> registry,
                      std::shared_ptr<const std::atomic<bool>> ready, HttpServer* server) {
  server->Get("/metrics", [registry = std::move(registry)](const httplib::Request&,
                                                          httplib::Response& response) {
    response.set_content(prometheus::TextSerializer().Serialize(registry->Collect()),
                         "text/plain; version=0.0.4; charset=utf-8");
  });
  server->Get("/healthz", [](const httplib::Request&, httplib::Response& response) {
    response.set_content("ok\n", "text/plain");
  });
  server->Get("/readyz", [ready = std::move(ready)](const httplib::Request&,
                                                    httplib::Response& response) {
    const bool is_ready = ready->load();
    response.status = is_ready ? 200 : 503;
    response.set_content(is_ready ? "ready\n" : "not ready\n", "text/plain");
  });
}

}  // namespace tandem
