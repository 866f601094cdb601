#include "core/window.hpp"

#include <algorithm>

namespace lazybreaker::core {
namespace {

constexpr unsigned kCountBits = 22;
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

// Adds to the bucket word of stamp `s`, resetting it first if it holds
// another bucket (then returns true). `age()` is how many buckets the
// window's newest bucket is ahead of this one, read after the word: an
// outcome whose bucket has already left the window (age >= `buckets`) is
// dropped. Otherwise any other bucket the word holds is older, however old
// (its stamp says nothing about that once it is 2^19 buckets behind): a
// newer bucket in the same ring place is `buckets` ahead, and whoever
// writes a bucket moves the newest to it first, so a reader that sees that
// bucket's word sees an age of at least `buckets`.
template <class Age>
bool add(std::atomic<uint64_t> &word, uint64_t s, uint64_t hi, uint64_t lo, uint32_t buckets,
         Age age) {
  uint64_t cur = word.load(std::memory_order_acquire);
  for (;;) {
    if (age() >= buckets) return false;
    const bool same = stamp(cur) == s && cur != 0;
    const uint64_t next = same ? pack(s, high(cur) + hi, low(cur) + lo) : pack(s, hi, lo);
    if (word.compare_exchange_weak(cur, next, std::memory_order_release, std::memory_order_acquire))
      return !same;
  }
}

// Sets a ring word to a full bucket, unless it already holds that bucket or
// a later one (a publisher that fell behind).
void publish(std::atomic<uint64_t> &word, uint64_t bucket) {
  uint64_t cur = word.load(std::memory_order_relaxed);
  while (cur == 0 || later(stamp(bucket), stamp(cur))) {
    if (word.compare_exchange_weak(cur, bucket, std::memory_order_release,
                                   std::memory_order_relaxed))
      return;
  }
}

// The head word of a count window.
struct Head {
  static constexpr unsigned kFailureBits = 20, kCallBits = 19, kRingBits = 5;
  static constexpr unsigned kCallShift = kFailureBits, kRingShift = kCallShift + kCallBits;
  static constexpr unsigned kStampShift = kRingShift + kRingBits;
  static_assert(kStampShift + kStampBits == 64 && kMaxBuckets <= 1u << kRingBits);
  // The widest bucket: a million outcomes in 32 buckets.
  static_assert(1'000'000 / kMaxBuckets + 1 < 1u << kCallBits);

  static constexpr uint64_t pack(uint64_t stamp, uint32_t ring, uint64_t calls, uint64_t failures) {
    return (stamp << kStampShift) | (uint64_t(ring) << kRingShift) | (calls << kCallShift) |
           failures;
  }
  static constexpr uint64_t stamp(uint64_t h) { return h >> kStampShift; }
  static constexpr uint32_t ring(uint64_t h) {
    return uint32_t(h >> kRingShift) & ((1u << kRingBits) - 1);
  }
  static constexpr uint64_t calls(uint64_t h) {
    return (h >> kCallShift) & ((1ull << kCallBits) - 1);
  }
  static constexpr uint64_t failures(uint64_t h) { return h & ((1ull << kFailureBits) - 1); }
};

}  // namespace

WindowShape WindowShape::count(uint32_t size) {
  const uint32_t buckets = std::min(size, kMaxBuckets);
  const uint64_t width = (uint64_t(size) + buckets - 1) / buckets;
  WindowShape shape;
  shape.buckets = uint32_t((size + width - 1) / width);
  shape.bucket_width = width;
  return shape;
}

WindowShape WindowShape::time(uint64_t duration_ns, uint32_t buckets) {
  WindowShape shape;
  shape.by_time = true;
  shape.buckets = buckets;
  shape.bucket_width = std::max<uint64_t>(1, duration_ns / buckets);
  return shape;
}

Window::Position Window::of_index(uint64_t index) const {
  return {stamp_of(index), uint32_t(index % shape_.buckets),
          uint32_t(std::min<uint64_t>(shape_.buckets, index + 1))};
}

bool Window::record(uint64_t now, bool failure, bool slow, Position *at) {
  if (!shape_.by_time) {
    const bool started = record_in_head(failure ? 0 : 1, failure, at);
    if (slow) {
      // The head's stamp is the newest bucket's; the head cannot have moved
      // on 2^20 buckets while this outcome was being recorded.
      const uint64_t s = at->stamp;
      add(cells_.slow(at->ring), s, 1, 0, shape_.buckets, [this, s] {
        return (Head::stamp(cells_.head().load(std::memory_order_acquire)) - s) & kStampMask;
      });
    }
    return started;
  }
  return record_at_index(now / shape_.bucket_width, 1, failure, slow, at);
}

bool Window::record_outcomes(uint64_t now, uint64_t successes, bool failure, Position *at) {
  if (!shape_.by_time) return record_in_head(successes, failure, at);
  return record_at_index(now / shape_.bucket_width, successes + (failure ? 1 : 0), failure, false,
                         at);
}

bool Window::record_held(uint64_t stamp, uint64_t now, uint32_t n, Position *at) {
  const uint64_t index = now / shape_.bucket_width;
  const uint64_t age = (stamp_of(index) - stamp) & kStampMask;
  if (age >= shape_.buckets || age > index) return false;
  return record_at_index(index - age, n, false, false, at);
}

bool Window::record_at_index(uint64_t index, uint64_t calls, bool failure, bool slow,
                             Position *at) {
  *at = of_index(index);
  // The head of a time window is its newest bucket's index, in full: it
  // says which of two buckets in one ring place is the newer whatever their
  // stamps (see add()). It is raised before the bucket is written.
  std::atomic<uint64_t> &newest = cells_.head();
  for (uint64_t n = newest.load(std::memory_order_relaxed);
       n < index && !newest.compare_exchange_weak(n, index, std::memory_order_relaxed);) {
  }
  const auto age = [&newest, index] {
    const uint64_t n = newest.load(std::memory_order_relaxed);
    return n > index ? n - index : 0;  // below it only after a clear()
  };
  // Stamp 0 with all counts 0 is the never-used word; a real bucket always
  // counts at least the outcome that created it.
  const bool started =
      add(cells_.calls(at->ring), at->stamp, calls, failure ? 1 : 0, shape_.buckets, age);
  if (slow) add(cells_.slow(at->ring), at->stamp, 1, 0, shape_.buckets, age);
  return started;
}

// `successes` successes and then, if `failure`, one failure, as the newest
// outcomes: as many as fit in the head, the rest in the buckets after it.
bool Window::record_in_head(uint64_t successes, bool failure, Position *at) {
  const uint64_t width = shape_.bucket_width;
  uint64_t left = successes + (failure ? 1 : 0);
  if (left == 1) return record_one_in_head(failure, at);
  bool started = false;
  uint64_t cur = cells_.head().load(std::memory_order_relaxed);
  while (left > 0) {
    uint64_t next, taken;
    if (cur != 0 && Head::calls(cur) < width) {
      taken = std::min(left, width - Head::calls(cur));
      next = cur + (taken << Head::kCallShift);
    } else {
      taken = std::min(left, width);
      if (cur == 0) {
        next = Head::pack(0, 0, taken, 0);
      } else {
        // The full bucket is in the ring before the head leaves it, so a
        // reader that sees the new head finds it there.
        publish(cells_.calls(Head::ring(cur)),
                pack(Head::stamp(cur), Head::calls(cur), Head::failures(cur)));
        const uint32_t ring = Head::ring(cur) + 1 >= shape_.buckets ? 0 : Head::ring(cur) + 1;
        next = Head::pack((Head::stamp(cur) + 1) & kStampMask, ring, taken, 0);
      }
    }
    // The failure is the last outcome: it goes with the last of them.
    if (failure && taken == left) next += 1;
    if (cells_.head().compare_exchange_weak(cur, next, std::memory_order_release,
                                            std::memory_order_relaxed)) {
      started |= Head::calls(next) == taken;
      *at = {Head::stamp(next), Head::ring(next), shape_.buckets};
      left -= taken;
      cur = next;
    }
  }
  return started;
}

bool Window::record_one_in_head(bool failure, Position *at) {
  const uint64_t failed = failure ? 1 : 0;
  uint64_t cur = cells_.head().load(std::memory_order_relaxed);
  for (;;) {
    uint64_t next;
    if (cur != 0 && Head::calls(cur) < shape_.bucket_width) {
      next = cur + (uint64_t(1) << Head::kCallShift) + failed;
    } else if (cur == 0) {
      next = Head::pack(0, 0, 1, failed);
    } else {
      publish(cells_.calls(Head::ring(cur)),
              pack(Head::stamp(cur), Head::calls(cur), Head::failures(cur)));
      const uint32_t ring = Head::ring(cur) + 1 >= shape_.buckets ? 0 : Head::ring(cur) + 1;
      next = Head::pack((Head::stamp(cur) + 1) & kStampMask, ring, 1, failed);
    }
    if (cells_.head().compare_exchange_weak(cur, next, std::memory_order_release,
                                            std::memory_order_relaxed)) {
      *at = {Head::stamp(next), Head::ring(next), shape_.buckets};
      return Head::calls(next) == 1;
    }
  }
}

uint64_t Window::held(const HeldCells &held, uint32_t epoch, const Position &at) const {
  uint64_t n = 0;
  for (uint32_t s = 0; s < held.stripes; ++s) {
    const uint64_t h = held.first[s * held.stride].load(std::memory_order_relaxed);
    const uint32_t count = HeldSuccesses::count_in(h, epoch);
    if (count != 0 && ((at.stamp - HeldSuccesses::stamp(h)) & kStampMask) < at.depth) n += count;
  }
  return n;
}

Window::Position Window::latest(uint64_t now) const {
  if (shape_.by_time) return of_index(now / shape_.bucket_width);
  const uint64_t h = cells_.head().load(std::memory_order_acquire);
  return {Head::stamp(h), Head::ring(h), h == 0 ? 0 : shape_.buckets};
}

// The buckets of the window whose newest bucket is `at`, newest first, into
// `c`, and for a count window each one's counts into `each` (trim_to_room()
// needs them). A count window's newest may still be in the head. Bucket k
// back sits k places back in the ring: walk it backwards rather than divide
// for each. Only the newest bucket can be the head (the head is never older
// than `at`), so the walk over the ring tests no head.
[[gnu::always_inline]] inline void Window::sum_buckets(const Position &at, Buckets *each,
                                                       WindowCounts *c) const {
  const bool by_count = !shape_.by_time;
  const uint64_t head = by_count ? cells_.head().load(std::memory_order_acquire) : 0;
  const uint32_t last = shape_.buckets - 1;
  uint64_t calls = 0, failures = 0;
  uint32_t k = 0, pos = at.ring;
  if (at.depth > 0 && head != 0 && Head::stamp(head) == at.stamp) {
    calls = each->calls[0] = Head::calls(head);
    failures = each->failures[0] = Head::failures(head);
    k = 1;
    pos = pos == 0 ? last : pos - 1;
  }
  for (uint32_t p = pos; k < at.depth; ++k) {
    const uint64_t word = cells_.calls(p).load(std::memory_order_acquire);
    const bool inside = word != 0 && stamp(word) == ((at.stamp - k) & kStampMask);
    const uint64_t bc = inside ? high(word) : 0, bf = inside ? low(word) : 0;
    calls += bc;
    failures += bf;
    if (by_count) each->calls[k] = bc, each->failures[k] = bf;
    p = p == 0 ? last : p - 1;
  }
  c->calls = calls;
  c->failures = failures;
}

// Held successes are the newest outcomes, so in a count window they push
// the oldest buckets out: it keeps as many whole buckets of `each` (the
// first `depth`, newest first), as fit in its buckets x width outcomes with
// the `held` ones, and `c` counts those. Returns how many it keeps.
[[gnu::always_inline]] inline uint32_t Window::trim_to_room(const Buckets &each, uint32_t depth,
                                                            uint64_t held, WindowCounts *c) const {
  const uint64_t room = uint64_t(shape_.buckets) * shape_.bucket_width;
  if (held == 0 || c->calls + held <= room) return depth;
  uint64_t calls = 0, failures = 0;
  uint32_t k = 0;
  for (; k < depth; ++k) {
    if (k > 0 && held + calls + each.calls[k] > room) break;
    calls += each.calls[k];
    failures += each.failures[k];
  }
  c->calls = calls;
  c->failures = failures;
  return k;
}

// The slow calls of the `depth` newest buckets, the newest `at`.
[[gnu::always_inline]] inline uint64_t Window::sum_slow(const Position &at, uint32_t depth) const {
  const uint32_t last = shape_.buckets - 1;
  uint64_t slow = 0;
  for (uint32_t j = 0, p = at.ring; j < depth; ++j) {
    const uint64_t s = cells_.slow(p).load(std::memory_order_acquire);
    if (s != 0 && stamp(s) == ((at.stamp - j) & kStampMask)) slow += high(s);
    p = p == 0 ? last : p - 1;
  }
  return slow;
}

WindowCounts Window::sum(const Position &at, bool with_slow, const HeldCells *held_cells,
                         uint32_t epoch) const {
  Buckets each;
  WindowCounts c;
  sum_buckets(at, &each, &c);
  // Then the successes the threads hold back: a thread that settles empties
  // its word before its successes reach the window (Breaker::settle_held),
  // so a success that reached a bucket read above reads as settled here
  // (the acquire loads above order these after it), and none counts twice.
  const uint64_t held = held_cells != nullptr ? this->held(*held_cells, epoch, at) : 0;
  const uint32_t depth = shape_.by_time ? at.depth : trim_to_room(each, at.depth, held, &c);
  c.calls += held;
  if (with_slow) c.slow = sum_slow(at, depth);
  return c;
}

uint64_t Window::recorded_at_most(const Position &at) const {
  if (shape_.by_time) return UINT64_MAX;
  const uint64_t buckets = (at.stamp - cells_.start().load(std::memory_order_relaxed)) & kStampMask;
  return (buckets + 1) * shape_.bucket_width;
}

void Window::clear() {
  // A count window goes on with an empty bucket kMaxBuckets stamps after
  // its last, so a bucket that a caller who read the old head publishes
  // late is older than any window from here on can reach, and the next
  // bucket that lands in its place overwrites it. Acquiring the head sees
  // every bucket published before it, so the loop below clears them.
  //
  // A time window's head is the newest bucket's index: forgotten, as the
  // next life of the slot may run on another clock.
  uint64_t head = 0;
  if (shape_.by_time)
    cells_.head().store(0, std::memory_order_release);
  else
    head = cells_.head().load(std::memory_order_acquire);
  while (head != 0) {
    const uint32_t ring = Head::ring(head) + 1 >= shape_.buckets ? 0 : Head::ring(head) + 1;
    const uint64_t next = Head::pack((Head::stamp(head) + kMaxBuckets) & kStampMask, ring, 0, 0);
    if (cells_.head().compare_exchange_weak(head, next, std::memory_order_acq_rel,
                                            std::memory_order_acquire)) {
      head = next;
      break;
    }
  }
  cells_.start().store(uint32_t(Head::stamp(head)), std::memory_order_relaxed);
  // The block may have been another breaker's, whose epochs were others.
  cells_.warm().store(0, std::memory_order_relaxed);
  for (uint32_t b = 0; b < cells_.room(); ++b) {
    for (std::atomic<uint64_t> *word : {&cells_.calls(b), &cells_.slow(b)}) {
      uint64_t cur = word->load(std::memory_order_relaxed);
      while (cur != 0 && !word->compare_exchange_weak(cur, 0, std::memory_order_relaxed)) {
      }
    }
  }
}

}  // namespace lazybreaker::core
