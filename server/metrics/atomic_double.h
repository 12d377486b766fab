#ifndef TANDEM_SERVER_METRICS_ATOMIC_DOUBLE_H_
#define TANDEM_SERVER_METRICS_ATOMIC_DOUBLE_H_

#include <atomic>

namespace tandem {
namespace metrics {

// A double that can be read, written and added to from many threads at once.
//
// Thread-safety: all methods are lock-free and may be called concurrently.
// Memory ordering is relaxed: the value itself is the only thing published,
// metrics never guard other data. Never allocates.
class AtomicDouble {
 public:
  explicit AtomicDouble(double value = 0.0) : value_(value) {}

  AtomicDouble(const AtomicDouble&) = delete;
  AtomicDouble& operator=(const AtomicDouble&) = delete;

  double Load() const { return value_.load(std::memory_order_relaxed); }

  void Store(double value) { value_.store(value, std::memory_order_relaxed); }

  // Atomically adds `delta` (C++17 has no fetch_add for floating point).
  void Add(double delta) {
    double current = value_.load(std::memory_order_relaxed);
    // compare_exchange compares object representations, so the loop also
    // terminates once the value is NaN.
    while (!value_.compare_exchange_weak(current, current + delta,
                                         std::memory_order_relaxed,
                                         std::memory_order_relaxed)) {
    }
  }

 private:
  static_assert(std::atomic<double>::is_always_lock_free,
                "metrics need a lock-free std::atomic<double>");

  std::atomic<double> value_;
};

}  // namespace metrics
}  // namespace tandem

#endif  // TANDEM_SERVER_METRICS_ATOMIC_DOUBLE_H_
