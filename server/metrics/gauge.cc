#include "server/metrics/gauge.h"

#include <chrono>

namespace tandem {
namespace metrics {

void Gauge::SetToCurrentTime() {
  const auto since_epoch = std::chrono::system_clock::now().time_since_epoch();
  Set(std::chrono::duration<double>(since_epoch).count());
}

ClientMetric Gauge::Collect() const {
  ClientMetric metric;
  metric.gauge.value = Value();
  return metric;
}

}  // namespace metrics
}  // namespace tandem
