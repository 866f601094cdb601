#include "core/window.hpp"

#include <algorithm>

namespace lazybreaker::core {
namespace {

constexpr unsigned kStampBits = 20, kCountBits = 22;
constexpr uint64_t kStampMask = (1ull << kStampBits) - 1;
constexpr uint64_t kCountMax = (1ull << kCountBits) - 1;
constexpr unsigned kStampShift = 2 * kCountBits;

constexpr uint64_t stamp_of(uint64_t index) { return index & kStampMask; }
constexpr uint64_t stamp(uint64_t word) { return word >> kStampShift; }
constexpr uint64_t high(uint64_t word) { return (word >> kCountBits) & kCountMax; }
constexpr uint64_t low(uint64_t word) { return word & kCountMax; }
constexpr uint64_t pack(uint64_t stamp, uint64_t hi, uint64_t lo) {
  return (stamp << kStampShift) | (std::min(hi, kCountMax) << kCountBits) | std::min(lo, kCountMax);
}
// Whether stamp a is later than stamp b, modulo the stamp width.
constexpr bool later(uint64_t a, uint64_t b) {
  return a != b && ((a - b) & kStampMask) < (1ull << (kStampBits - 1));
}

// Adds to the bucket word for `index`, resetting it first if it holds an
// older bucket (then returns true). An outcome older than the bucket's
// content is dropped: its bucket has already left the window.
bool add(std::atomic<uint64_t> &word, uint64_t index, uint64_t hi, uint64_t lo) {
  const uint64_t s = stamp_of(index);
  uint64_t cur = word.load(std::memory_order_relaxed);
  for (;;) {
    const bool same = stamp(cur) == s && cur != 0;
    if (!same && cur != 0 && !later(s, stamp(cur))) return false;
    const uint64_t next = same ? pack(s, high(cur) + hi, low(cur) + lo) : pack(s, hi, lo);
    if (word.compare_exchange_weak(cur, next, std::memory_order_relaxed)) return !same;
  }
}

}  // namespace

WindowShape WindowShape::count(uint32_t size) {
  const uint32_t buckets = std::min(size, kMaxBuckets);
  const uint64_t width = (uint64_t(size) + buckets - 1) / buckets;
  return {false, uint32_t((size + width - 1) / width), width};
}

WindowShape WindowShape::time(uint64_t duration_ns, uint32_t buckets) {
  return {true, buckets, std::max<uint64_t>(1, duration_ns / buckets)};
}

uint64_t Window::next_index(uint64_t now) {
  if (shape_.by_time) return now / shape_.bucket_width;
  return cells_.sequence.fetch_add(1, std::memory_order_relaxed) / shape_.bucket_width;
}

bool Window::record(uint64_t index, bool failure, bool slow) {
  // Stamp 0 with all counts 0 is the never-used word; a real bucket always
  // counts at least the outcome that created it.
  const bool started = add(cells_.calls[index % shape_.buckets], index, 1, failure ? 1 : 0);
  if (slow) add(cells_.slow[index % shape_.buckets], index, 1, 0);
  return started;
}

WindowCounts Window::sum(uint64_t index, bool with_slow) const {
  uint64_t calls = 0, failures = 0, slow = 0;
  // Bucket index - k sits at ring position (index - k) % buckets: walk the
  // ring backwards instead of dividing for each.
  uint32_t pos = uint32_t(index % shape_.buckets);
  const uint64_t n = std::min<uint64_t>(shape_.buckets, index + 1);
  for (uint64_t k = 0; k < n; ++k) {
    const uint64_t want = stamp_of(index - k);
    const uint64_t word = cells_.calls[pos].load(std::memory_order_relaxed);
    if (word != 0 && stamp(word) == want) {
      calls += high(word);
      failures += low(word);
    }
    if (with_slow) {
      const uint64_t s = cells_.slow[pos].load(std::memory_order_relaxed);
      if (s != 0 && stamp(s) == want) slow += high(s);
    }
    pos = pos == 0 ? shape_.buckets - 1 : pos - 1;
  }
  return {calls, failures, slow};
}

void Window::clear() {
  for (uint32_t b = 0; b < kMaxBuckets; ++b) {
    for (std::atomic<uint64_t> *word : {&cells_.calls[b], &cells_.slow[b]}) {
      uint64_t cur = word->load(std::memory_order_relaxed);
      while (cur != 0 && !word->compare_exchange_weak(cur, 0, std::memory_order_relaxed)) {
      }
    }
  }
}

}  // namespace lazybreaker::core
