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
// older bucket. An outcome older than the bucket's content is dropped: its
// bucket has already left the window.
void add(std::atomic<uint64_t> &word, uint64_t index, uint64_t hi, uint64_t lo) {
  const uint64_t s = stamp_of(index);
  uint64_t cur = word.load(std::memory_order_relaxed);
  for (;;) {
    uint64_t next;
    if (stamp(cur) == s && cur != 0)
      next = pack(s, high(cur) + hi, low(cur) + lo);
    else if (cur == 0 || later(s, stamp(cur)))
      next = pack(s, hi, lo);
    else
      return;
    if (word.compare_exchange_weak(cur, next, std::memory_order_relaxed)) return;
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

void Window::record(uint64_t index, bool failure, bool slow) {
  // Stamp 0 with all counts 0 is the never-used word; a real bucket always
  // counts at least the outcome that created it.
  add(cells_.calls[index % shape_.buckets], index, 1, failure ? 1 : 0);
  if (slow) add(cells_.slow[index % shape_.buckets], index, 1, 0);
}

WindowCounts Window::sum(uint64_t index) const {
  WindowCounts c;
  for (uint64_t k = 0; k < shape_.buckets && k <= index; ++k) {
    const uint64_t i = index - k;
    const uint64_t calls = cells_.calls[i % shape_.buckets].load(std::memory_order_relaxed);
    if (calls != 0 && stamp(calls) == stamp_of(i)) {
      c.calls += high(calls);
      c.failures += low(calls);
    }
    const uint64_t slow = cells_.slow[i % shape_.buckets].load(std::memory_order_relaxed);
    if (slow != 0 && stamp(slow) == stamp_of(i)) c.slow += high(slow);
  }
  return c;
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
