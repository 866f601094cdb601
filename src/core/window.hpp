// A rolling window of outcomes, lock-free and without a timer: up to
// kMaxBuckets buckets in a ring, each a pair of 64-bit words stamped with the
// bucket's index. An outcome lands in the bucket of its index (its position
// in the outcome sequence for a count window, its time for a time window); a
// bucket whose stamp is older is reset by the outcome that lands in it, in
// the same compare-and-swap that counts it. So a bucket's counts are exact,
// and a reader sums only the buckets whose stamps are inside the window.
#pragma once

#include <atomic>
#include <cstdint>

namespace lazybreaker::core {

inline constexpr uint32_t kMaxBuckets = 32;

// The window memory of one breaker.
struct WindowCells {
  std::atomic<uint64_t> sequence{0};  // count windows: outcomes recorded
  // The CLOSED epoch + 1 in which the window was last seen holding at least
  // minimum_calls outcomes (0: not seen, or seen below it since).
  std::atomic<uint32_t> warm{0};
  std::atomic<uint64_t> calls[kMaxBuckets] = {};  // [stamp:20 | calls:22 | failures:22]
  std::atomic<uint64_t> slow[kMaxBuckets] = {};   // [stamp:20 | slow calls:22 | unused:22]
};

struct WindowCounts {
  uint64_t calls = 0, failures = 0, slow = 0;
};

// How a breaker's outcomes map to buckets.
struct WindowShape {
  bool by_time = false;
  uint32_t buckets = 1;       // 1..kMaxBuckets
  uint64_t bucket_width = 1;  // outcomes (count window) or nanoseconds (time window)

  // The last `size` outcomes, in at most kMaxBuckets buckets: the window then
  // holds between size - width + 1 and size of the latest outcomes.
  static WindowShape count(uint32_t size);
  // The fewest outcomes a full window holds (for a time window, no limit).
  uint64_t guaranteed() const {
    return by_time ? UINT64_MAX : (uint64_t(buckets) - 1) * bucket_width + 1;
  }
  // The last `duration_ns`, in `buckets` buckets.
  static WindowShape time(uint64_t duration_ns, uint32_t buckets);
};

class Window {
 public:
  Window(WindowCells &cells, const WindowShape &shape) : cells_(cells), shape_(shape) {}

  // The bucket index of the next outcome: from the outcome sequence for a
  // count window, from `now` for a time window.
  uint64_t next_index(uint64_t now);
  // True if this outcome started its bucket: the window moved on, and older
  // outcomes may have left it.
  bool record(uint64_t index, bool failure, bool slow);
  // The counts of the window that ends with bucket `index` (slow calls only
  // when asked for).
  WindowCounts sum(uint64_t index, bool with_slow = true) const;
  // Empties every bucket (a concurrent outcome may land just after).
  void clear();

 private:
  WindowCells &cells_;
  const WindowShape shape_;
};

}  // namespace lazybreaker::core
