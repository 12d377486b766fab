#include "server/metrics/counter.h"

namespace tandem {
namespace metrics {

ClientMetric Counter::Collect() const {
  ClientMetric metric;
  metric.counter.value = Value();
  return metric;
}

}  // namespace metrics
}  // namespace tandem
