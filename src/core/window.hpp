// A rolling window of outcomes, lock-free and without a timer: up to
// kMaxBuckets buckets in a ring, each a pair of 64-bit words stamped with the
// bucket's index. A bucket's counts are exact, and a reader sums only the
// buckets whose stamps are inside the window.
//
// Time window: an outcome lands in the bucket of its time; a bucket whose
// stamp is older is reset by the outcome that lands in it, in the same
// compare-and-swap that counts it.
//
// Count window: the bucket being filled is the head word, and as a bucket
// holds exactly `width` outcomes, where the next outcome goes follows from
// the head: placing and counting it is one compare-and-swap, the only
// contended write of the outcome. The outcome that finds the head full
// publishes it into the ring and starts the next bucket.
#pragma once

#include <atomic>
#include <cstdint>

namespace lazybreaker::core {

inline constexpr uint32_t kMaxBuckets = 32;
// A bucket's stamp is its index modulo 2^kStampBits.
inline constexpr unsigned kStampBits = 20;
inline constexpr uint64_t kStampMask = (1ull << kStampBits) - 1;

// The header of one breaker's window memory; its bucket words follow it
// (WindowCells).
struct WindowHeader {
  // Count windows: the bucket being filled, [stamp:20 | ring position:5 |
  // calls:19 | failures:20]; 0 before the first outcome. Time windows: the
  // index (time / bucket width) of the newest bucket written, in full.
  std::atomic<uint64_t> head{0};
  // The CLOSED epoch + 1 in which the window was last seen holding at least
  // minimum_calls outcomes (0: not seen, or seen below it since).
  std::atomic<uint32_t> warm{0};
  // Count windows: the head's stamp when the window was last emptied, so
  // that a judge can tell that fewer than minimum_calls outcomes have been
  // recorded since without summing (Window::recorded_at_most).
  std::atomic<uint32_t> start{0};
};
static_assert(sizeof(WindowHeader) == 16);

// Where one breaker's window memory is: the header, then room for `room`
// call words (a power of two, at least the window's buckets; [stamp:20 |
// calls:22 | failures:22]) and, for a breaker that tracks slow calls, as
// many slow words ([stamp:20 | slow calls:22 | unused:22]). The registry
// sizes it when it creates the breaker.
//
// A bucket index is taken modulo the room, so that a call racing its
// breaker's destroy, which may read a recycled configuration's shape or a
// head written by another shape, stays inside this memory (it may then
// disturb a bucket of whichever breaker the memory went to, as a stale
// outcome always could). Without slow words, slow() is the call word: only
// such a racing call reaches it.
class WindowCells {
 public:
  // The words a window of room `room` takes, its header included.
  static constexpr size_t words(uint32_t room, bool slow) {
    return sizeof(WindowHeader) / 8 + size_t(room) * (slow ? 2 : 1);
  }

  WindowCells(WindowHeader *header, uint32_t room, bool slow)
      : header_(header), mask_(room - 1), slow_at_(slow ? room : 0) {}

  std::atomic<uint64_t> &head() const { return header_->head; }
  std::atomic<uint32_t> &warm() const { return header_->warm; }
  std::atomic<uint32_t> &start() const { return header_->start; }
  std::atomic<uint64_t> &calls(uint32_t b) const { return bucket_words()[b & mask_]; }
  std::atomic<uint64_t> &slow(uint32_t b) const { return bucket_words()[slow_at_ + (b & mask_)]; }
  uint32_t room() const { return mask_ + 1; }

 private:
  std::atomic<uint64_t> *bucket_words() const {
    return reinterpret_cast<std::atomic<uint64_t> *>(header_ + 1);
  }

  WindowHeader *header_;
  uint32_t mask_;
  uint32_t slow_at_;
};

// Successes of one window breaker that one thread holds back rather than
// write to the shared window, one word per breaker per thread stripe, only
// that thread writes it: [epoch:24 | stamp:20 | count:20]. `epoch` is the
// CLOSED period's (state word), `stamp` the bucket they belong to: for a
// time window the bucket of their time, for a count window the head's when
// they were held. A thread holds fewer than the breaker's limit
// (WindowShape::held_limit, at most kMaxLimit); its next outcome that finds the
// word full, of another period or another bucket settles them into the
// window, and a judge counts every thread's held successes
// that are still inside the window (docs/policies.md, held successes).
struct HeldSuccesses {
  // The most WindowShape::held_limit says (a uint8_t): a settle is then
  // paid for once in up to 255 successes.
  static constexpr uint32_t kMaxLimit = 255;
  static constexpr unsigned kCountBits = 20, kStampShift = kCountBits;
  static constexpr unsigned kEpochShift = kStampShift + kStampBits;
  static constexpr uint64_t kCountMask = (1ull << kCountBits) - 1;
  static_assert(kEpochShift + 24 == 64 && kMaxLimit <= kCountMask);

  static constexpr uint64_t pack(uint32_t epoch, uint64_t stamp, uint32_t count) {
    return (uint64_t(epoch & 0xffffff) << kEpochShift) | ((stamp & kStampMask) << kStampShift) |
           count;
  }
  static constexpr uint32_t epoch(uint64_t h) { return uint32_t(h >> kEpochShift); }
  static constexpr uint64_t stamp(uint64_t h) { return (h >> kStampShift) & kStampMask; }
  static constexpr uint32_t count(uint64_t h) { return uint32_t(h & kCountMask); }
  // The held count if `h` belongs to the CLOSED period `epoch`, else 0.
  static constexpr uint32_t count_in(uint64_t h, uint32_t epoch) {
    return HeldSuccesses::epoch(h) == (epoch & 0xffffff) ? count(h) : 0;
  }
};
static_assert(HeldSuccesses::count_in(HeldSuccesses::pack(7, 3, 5), 7) == 5 &&
              HeldSuccesses::count_in(HeldSuccesses::pack(7, 3, 5), 8) == 0 &&
              HeldSuccesses::stamp(HeldSuccesses::pack(7, kStampMask + 4, 5)) == 3 &&
              HeldSuccesses::pack(7, 3, 5) + 1 == HeldSuccesses::pack(7, 3, 6));

// Where every thread's held successes for one breaker are: the calling
// thread's own word (nullptr if it has none, then it holds nothing back) and
// stripe s's at first[s * stride], for the stripes ever used.
struct HeldCells {
  std::atomic<uint64_t> *own = nullptr;
  const std::atomic<uint64_t> *first = nullptr;
  size_t stride = 0;
  uint32_t stripes = 0;
};

struct WindowCounts {
  uint64_t calls = 0, failures = 0, slow = 0;
};

// How a breaker's outcomes map to buckets.
struct WindowShape {
  bool by_time = false;
  // How many successes a thread may hold back from the window, this one
  // included, before they settle (HeldSuccesses; set with the policy by
  // Config::finish): a time window keeps held successes in their own
  // bucket, so HeldSuccesses::kMaxLimit; a count window counts them as its
  // newest outcomes, so at most a quarter of it (none for a window under 8).
  // 0: not a window policy.
  uint8_t held_limit = 0;
  uint32_t buckets = 1;       // 1..kMaxBuckets
  uint64_t bucket_width = 1;  // outcomes (count window) or nanoseconds (time window)

  // The last `size` outcomes, in at most kMaxBuckets buckets of `width`:
  // a full window then holds between (buckets - 1) * width + 1 and
  // buckets * width of the latest outcomes, which is at least
  // size - width + 1 and at most size + width - 1.
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
  // Where a bucket is: its stamp (its index modulo 2^20) and its place in
  // the ring; `depth` buckets back from it, at most, hold outcomes.
  struct Position {
    uint64_t stamp;
    uint32_t ring;
    uint32_t depth;
  };

  Window(const WindowCells &cells, const WindowShape &shape) : cells_(cells), shape_(shape) {}

  // Records one outcome (its time `now` places it in a time window) and
  // says where it landed. True if it started its bucket: the window moved
  // on, and older outcomes may have left it.
  bool record(uint64_t now, bool failure, bool slow, Position *at);
  // Records `successes` successes and then, if `failure`, one failure (at
  // `now` in a time window; as the newest outcomes in a count window), as
  // record() would one by one.
  bool record_outcomes(uint64_t now, uint64_t successes, bool failure, Position *at);
  // Records `n` successes held back in the bucket of stamp `stamp` of a
  // time window, if it is still inside the window at `now`; false (and
  // `at` untouched) if they have left it, or it started its bucket.
  bool record_held(uint64_t stamp, uint64_t now, uint32_t n, Position *at);
  bool by_time() const { return shape_.by_time; }
  // Whether the bucket of stamp `stamp` is still inside the window at `now`
  // (a count window: behind its head by fewer than its buckets).
  bool inside(uint64_t stamp, uint64_t now) const {
    return ((stamp_now(now) - stamp) & kStampMask) < shape_.buckets;
  }
  // The stamp an outcome at `now` takes: its bucket's in a time window, the
  // head's in a count window.
  uint64_t stamp_now(uint64_t now) const {
    return shape_.by_time ? (now / shape_.bucket_width) & kStampMask : head_stamp(cells_);
  }
  static uint64_t head_stamp(const WindowCells &cells) {
    return cells.head().load(std::memory_order_acquire) >> (64 - kStampBits);
  }
  // The successes held back by any thread (`held`) that are inside the
  // window whose newest bucket is `at`.
  uint64_t held(const HeldCells &held, uint32_t epoch, const Position &at) const;
  // The newest bucket as the window stands (nothing recorded yet: depth 0).
  Position latest(uint64_t now) const;
  // The counts of the window whose newest bucket is `at` (slow calls only
  // when asked for), with the successes the threads hold back in `held`
  // (if given) for the CLOSED period `epoch`, which count as its newest
  // outcomes (held()), read after the window so that none counts twice.
  WindowCounts sum(const Position &at, bool with_slow = true, const HeldCells *held = nullptr,
                   uint32_t epoch = 0) const;
  // For a count window, at least as many outcomes as it has recorded since
  // it was last emptied, given the bucket `at` of one just recorded; while
  // this is under 2^20 buckets' worth it is exact to a bucket. A time
  // window: no bound (UINT64_MAX).
  uint64_t recorded_at_most(const Position &at) const;
  // Empties every bucket (a concurrent outcome may land just after).
  void clear();

 private:
  Position of_index(uint64_t index) const;
  bool record_in_head(uint64_t successes, bool failure, Position *at);
  // record_in_head() of one outcome, the common case, in its own loop.
  bool record_one_in_head(bool failure, Position *at);
  bool record_at_index(uint64_t index, uint64_t calls, bool failure, bool slow, Position *at);
  // The parts of sum(). Each bucket's counts, newest first, as sum_buckets()
  // read them: a count window's, for trim_to_room().
  struct Buckets {
    uint64_t calls[kMaxBuckets], failures[kMaxBuckets];
  };
  void sum_buckets(const Position &at, Buckets *each, WindowCounts *c) const;
  uint32_t trim_to_room(const Buckets &each, uint32_t depth, uint64_t held, WindowCounts *c) const;
  uint64_t sum_slow(const Position &at, uint32_t depth) const;

  const WindowCells cells_;
  const WindowShape shape_;
};

}  // namespace lazybreaker::core
