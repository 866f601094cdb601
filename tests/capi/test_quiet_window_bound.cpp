// How many outcomes a count window judges, and over which of them, checked
// against a model of docs/policies.md ("Failure rate over a count window",
// "A clean count window is quiet"): seeded random sequences of successes
// and failures, through the C ABI on a manual clock, on windows of several
// sizes (one outcome per bucket, and buckets of 2 to 32) and minimums.
//
// The model keeps every outcome of the CLOSED period in order. After the
// T-th, a window of n buckets of w outcomes judges the latest K of them,
// for one K in
//
//     [min(T, (n - 1) w + 1), min(T, n w)]
//
// and nothing more: the library's failure_rate must be failures / K for
// such a K, counting the failures among the latest K outcomes, and the
// breaker must have tripped exactly if that K reaches the threshold (a
// failure, or a success while the window is not yet known to hold its
// minimum, is judged; no other outcome trips). A window full of successes
// goes quiet and its successes are then not recorded at all; the first
// failure after that must still be judged within the same bound, and every
// K of it must be seen (so a tighter bound fails this test).
#include "published_quiet_path.h"

#include <doctest/doctest.h>
#include <lazybreaker/lazybreaker.h>

#include <algorithm>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "fixture.hpp"

namespace {

// splitmix64: the same sequences on every platform and standard library.
struct Rng {
  uint64_t s;
  uint64_t next() {
    uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  uint64_t below(uint64_t n) { return n == 0 ? 0 : next() % n; }
};

// The documented shape of a count window of `size` outcomes: n buckets of
// w, and what a thread may hold back (a quarter of the window, at most 255).
struct Shape {
  uint64_t w, n, held_limit;
  explicit Shape(uint32_t size)
      : w((uint64_t(size) + 31) / 32),
        n((uint64_t(size) + w - 1) / w),
        held_limit(std::min<uint64_t>(255, size / 4)) {}
  uint64_t guaranteed() const { return (n - 1) * w + 1; }
  uint64_t most() const { return n * w; }
};

struct Case {
  uint32_t size, minimum;
  double threshold;
  int sequences;
};

// The threshold in billionths, as docs/policies.md says it is taken.
uint64_t billionths(double threshold) {
  const double scaled = std::round(threshold * 1e9);
  return scaled < 1 ? 1 : uint64_t(scaled);
}

// Every outcome of one breaker's CLOSED period, as failure counts before
// each.
struct Model {
  Shape shape;
  uint32_t configured;
  uint64_t minimum, rate_billionths;
  std::vector<uint64_t> failures_before{0};
  bool warm = false;  // a judge has seen the window hold its minimum

  Model(uint32_t size, uint32_t minimum_calls, double threshold)
      : shape(size),
        configured(minimum_calls),
        minimum(std::min<uint64_t>(minimum_calls, shape.guaranteed())),
        rate_billionths(billionths(threshold)) {}

  void clear() {
    failures_before.assign(1, 0);
    warm = false;
  }
  uint64_t outcomes() const { return failures_before.size() - 1; }
  void add(bool failure) { failures_before.push_back(failures_before.back() + (failure ? 1 : 0)); }
  uint64_t failures_in_latest(uint64_t k) const {
    return failures_before.back() - failures_before[outcomes() - k];
  }
  // The bound: how many of the latest outcomes the window may judge.
  uint64_t fewest() const { return std::min(outcomes(), shape.guaranteed()); }
  uint64_t most() const { return std::min(outcomes(), shape.most()); }
  bool reaches(uint64_t failures, uint64_t calls) const {
    return failures * 1'000'000'000ull >= calls * rate_billionths;
  }
};

// The K in the model's bound that agree with what the library showed after
// an outcome: its failure_rate, and whether it tripped on a `judged`
// outcome. Empty: the library judged something the model does not allow.
std::vector<uint64_t> agreeing(const Model &m, double rate, bool tripped, bool judged) {
  std::vector<uint64_t> ks;
  for (uint64_t k = m.fewest(); k <= m.most(); ++k) {
    const uint64_t f = m.failures_in_latest(k);
    if (double(f) / double(k) != rate) continue;
    const bool trips = judged && k >= m.minimum && m.reaches(f, k);
    if (trips == tripped) ks.push_back(k);
  }
  return ks;
}

std::string describe(const Case &c, const Model &m, int sequence, double rate, bool tripped,
                     bool failure, bool after_quiet) {
  std::ostringstream o;
  o << "window " << c.size << " (" << m.shape.n << " buckets of " << m.shape.w << "), minimum "
    << m.configured << ", threshold " << c.threshold << ", sequence " << sequence << ": after "
    << (failure ? "a failure" : "a success") << (after_quiet ? " that ended a quiet stretch" : "")
    << ", outcome " << m.outcomes() << " of the period, the library reads rate " << rate
    << (tripped ? " and tripped" : " and did not trip") << "; the model allows K in [" << m.fewest()
    << ", " << m.most() << "]:";
  for (uint64_t k = m.fewest(); k <= m.most(); ++k) o << " " << m.failures_in_latest(k) << "/" << k;
  return o.str();
}

bool quiet_now(const lb_quiet &q, cb_handle h) {
  return lb_quiet_is_quiet(h, lb_quiet_word(&q, h));
}

// One call with `outcome`, without doctest's per-assertion cost.
bool one_call(cb_handle h, int outcome) {
  cb_ticket t = 0;
  return cb_allow(h, &t) == CB_OK && cb_done(h, t, outcome) == CB_OK;
}

// Enough successes to fill the window with them and go quiet, and more.
uint64_t quiet_run(Rng &rng, const Shape &shape) {
  return shape.most() + 2 * shape.held_limit + rng.below(2 * shape.most());
}

// A run of successes for one sequence, then (most of the time) a failure:
// a few, up to a window of them, or enough to fill the window with
// successes and go quiet.
uint64_t run_length(Rng &rng, const Shape &shape) {
  switch (rng.below(10)) {
    case 0:
    case 1:
    case 2:
      return rng.below(4);
    case 3:
    case 4:
    case 5:
      return rng.below(shape.most() + 1);
    default:
      return quiet_run(rng, shape);
  }
}

// Runs `c.sequences` random sequences, each on one of several breakers of
// the case's window: its own minimum, and each of the w minimums up to the
// window's own ((n - 1) w + 1). Where the window warms up decides where a
// thread's held successes settle, and so how full the newest bucket is when
// the window goes quiet: these minimums give every fill. Returns, for each
// K from (n - 1) w + 1 to n w, how often the first failure after a quiet
// stretch was judged over K outcomes.
std::vector<int> run_case(const Case &c, uint64_t seed) {
  const Shape shape(c.size);
  ManualRegistry r(64);
  struct Subject {
    cb_handle h;
    Model m;
  };
  std::vector<Subject> subjects;
  subjects.push_back({r.create(count_window(c.size, c.minimum, c.threshold)),
                      Model(c.size, c.minimum, c.threshold)});
  for (uint64_t j = 0; j < shape.w; ++j) {
    const uint32_t minimum = uint32_t(shape.guaranteed() - j);
    subjects.push_back({r.create(count_window(c.size, minimum, c.threshold)),
                        Model(c.size, minimum, c.threshold)});
  }
  lb_quiet q;
  REQUIRE(lb_quiet_init(&q, 0) == CB_OK);
  Rng rng{seed};
  std::vector<int> seen(shape.w, 0);
  for (int s = 0; s < c.sequences; ++s) {
    Subject &subject = subjects[rng.below(subjects.size())];
    const cb_handle h = subject.h;
    Model &m = subject.m;
    REQUIRE(cb_reset(h) == CB_OK);
    m.clear();
    const uint64_t runs = 1 + rng.below(6);
    for (uint64_t run = 0; run < runs; ++run) {
      // Half the sequences start by going quiet from an empty window.
      const uint64_t successes =
          run == 0 && rng.below(2) == 0 ? quiet_run(rng, shape) : run_length(rng, shape);
      const bool ends_in_failure = rng.below(10) != 0;
      for (uint64_t i = 0; i <= successes; ++i) {
        const bool failure = i == successes;
        if (failure && !ends_in_failure) break;
        const bool after_quiet = failure && quiet_now(q, h);
        if (!one_call(h, failure ? CB_FAILURE : CB_SUCCESS)) FAIL("cb_allow or cb_done failed");
        m.add(failure);
        const bool judged = failure || !m.warm;
        const cb_stats st = stats(h);
        const int state = cb_state(h);
        const bool tripped = state == CB_STATE_OPEN;
        if (!tripped && state != CB_STATE_CLOSED) FAIL("state " << state);
        const std::vector<uint64_t> ks = agreeing(m, st.failure_rate, tripped, judged);
        if (ks.empty()) FAIL(describe(c, m, s, st.failure_rate, tripped, failure, after_quiet));
        if (judged && m.outcomes() >= m.minimum) m.warm = true;
        if (after_quiet) {
          // The window was full of successes: one failure in it, so the
          // rate says K.
          REQUIRE(ks.size() == 1);
          REQUIRE(m.failures_in_latest(ks[0]) == 1);
          ++seen[ks[0] - shape.guaranteed()];
        }
        if (tripped) {
          REQUIRE(cb_reset(h) == CB_OK);
          m.clear();
        }
      }
    }
  }
  return seen;
}

// Runs `fn` on a thread of its own (its own counter cells and held
// successes), one call at a time, in the order the test asks.
class Helper {
 public:
  Helper() : thread_([this] { loop(); }) {}
  ~Helper() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  void run(std::function<void()> fn) {
    std::unique_lock<std::mutex> lock(mu_);
    job_ = std::move(fn);
    cv_.notify_all();
    cv_.wait(lock, [this] { return !job_; });
  }

 private:
  void loop() {
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      cv_.wait(lock, [this] { return stop_ || job_; });
      if (stop_) return;
      job_();
      job_ = nullptr;
      cv_.notify_all();
    }
  }
  std::mutex mu_;
  std::condition_variable cv_;
  std::function<void()> job_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace

TEST_CASE("count windows judge within the documented bound, before and after going quiet") {
  // Thresholds near 1 / K make the trip at the first failure after a quiet
  // stretch depend on K itself (window of 40: 0.0255 trips over 39
  // outcomes, not over 40).
  const Case cases[] = {
      {10, 5, 0.3, 1500},       // 10 buckets of 1
      {24, 100, 0.25, 1000},    // 24 of 1; the minimum is the window's 24
      {33, 33, 1 / 33.5, 800},  // 17 of 2: 33 or 34
      {40, 20, 0.2, 800},       // 20 of 2: 39 or 40
      {40, 100, 0.0255, 800},   // the minimum is 39
      {65, 30, 0.1, 500},       // 22 of 3: 64 to 66
      {100, 100, 0.5, 400},     // 25 of 4: 97 to 100
      {100, 10, 0.0101, 400},   // trips over 97 to 99, not 100
      {130, 50, 0.15, 300},     // 26 of 5: 126 to 130
      {1000, 1000, 0.02, 300},  // 32 of 32: 993 to 1,024
  };
  uint64_t seed = 20261202;
  for (const Case &c : cases) {
    CAPTURE(c.size);
    CAPTURE(c.minimum);
    const Shape shape(c.size);
    const std::vector<int> seen = run_case(c, seed++);
    // Every K of the bound is reached, its ends too: no tighter bound holds.
    for (size_t k = 0; k < seen.size(); ++k) {
      CAPTURE(shape.guaranteed() + k);
      CHECK(seen[k] > 0);
    }
  }
}

TEST_CASE("with another thread's held successes, a failure after quiet stays in the bound") {
  // A second thread holds successes back just before the window goes quiet
  // (docs/policies.md, "Held successes"): they count as the newest
  // outcomes, or settle with that thread's failure. Then one of the two
  // threads fails. The failure is the window's only one, and it is judged
  // over between (n - 1) w + 1 and n w outcomes, both ends reached.
  const Case cases[] = {{40, 40, 0.5, 300}, {100, 100, 0.5, 300}, {130, 20, 0.5, 300}};
  Helper helper;
  uint64_t seed = 7;
  for (const Case &c : cases) {
    CAPTURE(c.size);
    const Shape shape(c.size);
    ManualRegistry r;
    const cb_handle h = r.create(count_window(c.size, c.minimum, c.threshold));
    lb_quiet q;
    REQUIRE(lb_quiet_init(&q, 0) == CB_OK);
    Rng rng{seed++};
    std::vector<int> seen(shape.w, 0);
    int quiet_rounds = 0;
    for (int round = 0; round < c.sequences; ++round) {
      REQUIRE(cb_reset(h) == CB_OK);
      // Warm, loud, and a failure about to leave the window.
      calls(h, int(shape.most()), CB_SUCCESS);
      call(h, CB_FAILURE);
      calls(h, int(shape.most() - shape.w - rng.below(2 * shape.w + shape.held_limit)), CB_SUCCESS);
      const int held = int(rng.below(shape.held_limit));
      bool ok = true;
      helper.run([&] {
        for (int i = 0; i < held; ++i) ok = ok && one_call(h, CB_SUCCESS);
      });
      REQUIRE(ok);
      for (uint64_t i = 0; i < 4 * shape.most() && !quiet_now(q, h); ++i)
        REQUIRE(one_call(h, CB_SUCCESS));
      if (!quiet_now(q, h)) continue;
      ++quiet_rounds;
      // Successes while quiet, from both threads, then a failure from one.
      calls(h, int(rng.below(50)), CB_SUCCESS);
      const int helper_quiet = int(rng.below(50));
      const bool helper_fails = rng.below(2) == 0;
      helper.run([&] {
        for (int i = 0; i < helper_quiet; ++i) ok = ok && one_call(h, CB_SUCCESS);
        if (helper_fails) ok = ok && one_call(h, CB_FAILURE);
      });
      REQUIRE(ok);
      if (!helper_fails) call(h, CB_FAILURE);
      const double rate = stats(h).failure_rate;
      REQUIRE(rate > 0);
      const uint64_t k = uint64_t(std::llround(1 / rate));
      CAPTURE(round);
      CAPTURE(held);
      REQUIRE(rate == 1.0 / double(k));
      REQUIRE(k >= shape.guaranteed());
      REQUIRE(k <= shape.most());
      ++seen[k - shape.guaranteed()];
      REQUIRE(cb_state(h) == CB_STATE_CLOSED);
    }
    CHECK(quiet_rounds >= c.sequences / 2);
    CHECK(seen.front() > 0);
    CHECK(seen.back() > 0);
  }
}
