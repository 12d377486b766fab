#ifndef TANDEM_SERVER_METRICS_COLLECTABLE_H_
#define TANDEM_SERVER_METRICS_COLLECTABLE_H_

#include <vector>

#include "server/metrics/metric_family.h"

namespace tandem {
namespace metrics {

// Something that can be scraped: returns snapshots of its metric families.
//
// Thread-safety: implementations must allow Collect() concurrently with
// metric updates and with other Collect() calls.
class Collectable {
 public:
  virtual ~Collectable() = default;

  virtual std::vector<MetricFamily> Collect() const = 0;
};

}  // namespace metrics
}  // namespace tandem

#endif  // TANDEM_SERVER_METRICS_COLLECTABLE_H_
