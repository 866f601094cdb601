// The published quiet path (lazybreaker/fastpath.h): its rules, written
// from the header alone (published_quiet_path.h), agree with the library's
// own answers, count exactly where every reader sees the counts, and leave
// everything that is not quiet to the library. Its functions refuse bad
// input.
#include "published_quiet_path.h"

#include <doctest/doctest.h>
#include <lazybreaker/lazybreaker.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include "fixture.hpp"

namespace {

constexpr uint64_t kSecond = 1'000'000'000;

lb_quiet thread_quiet() {
  lb_quiet q;
  REQUIRE(lb_quiet_init(&q, 0) == CB_OK);
  return q;
}

// One call through the published rules; *native: the library was left out.
int quiet_call(const lb_quiet &q, cb_handle h, int outcome, bool *native = nullptr) {
  cb_ticket t = 0;
  int admitted_natively = 0, reported_natively = 0;
  const int st = lb_quiet_allow(&q, h, &t, &admitted_natively);
  if (st != CB_OK) {
    if (native != nullptr) *native = admitted_natively != 0;
    return st;
  }
  REQUIRE(lb_quiet_done(&q, h, t, outcome, &reported_natively) == CB_OK);
  if (native != nullptr) *native = admitted_natively != 0 && reported_natively != 0;
  return st;
}

bool same_counts(const cb_stats &a, const cb_stats &b) {
  return a.admitted == b.admitted && a.rejected == b.rejected && a.successes == b.successes &&
         a.failures == b.failures && a.trips == b.trips &&
         a.consecutive_failures == b.consecutive_failures;
}

}  // namespace

TEST_CASE("describe publishes layout 1 and refuses bad input") {
  cb_fastpath fp;
  std::memset(&fp, 0xab, sizeof fp);
  fp.struct_size = sizeof fp;
  REQUIRE(cb_fastpath_describe(&fp) == CB_OK);
  CHECK(fp.layout == CB_FASTPATH_LAYOUT);
  CHECK(fp.index_bits == 24);
  CHECK(fp.line_words == 8);
  CHECK(fp.open_period_word == 7);
  CHECK(fp.chunk_bits == 10);
  CHECK(fp.fold_at == 0x8000);
  CHECK(fp.lines != nullptr);
  CHECK(fp.lean_rejections != nullptr);

  CHECK(cb_fastpath_describe(nullptr) == CB_EINVAL);
  cb_fastpath shorter;
  shorter.struct_size = 40;
  CHECK(cb_fastpath_describe(&shorter) == CB_EINVAL);
  CHECK(std::string(cb_last_error_field()) == "struct_size");

  // A later, longer struct: the bytes this library does not know are zero.
  unsigned char longer[sizeof(cb_fastpath) + 16];
  std::memset(longer, 0xff, sizeof longer);
  reinterpret_cast<cb_fastpath *>(longer)->struct_size = sizeof longer;
  REQUIRE(cb_fastpath_describe(reinterpret_cast<cb_fastpath *>(longer)) == CB_OK);
  for (size_t i = sizeof(cb_fastpath); i < sizeof longer; ++i) CHECK(longer[i] == 0);
}

TEST_CASE("a quiet call admits, reports and counts without the library, exactly") {
  MonotonicRegistry r;
  const cb_handle h = r.create(config(5, kSecond));
  const lb_quiet q = thread_quiet();
  // Past two folds of each counter: 2 x 32768.
  constexpr int kCalls = 70'000;
  for (int i = 0; i < kCalls; ++i) {
    bool native = false;
    REQUIRE(quiet_call(q, h, CB_SUCCESS, &native) == CB_OK);
    REQUIRE(native);
  }
  const cb_stats s = stats(h);
  CHECK(s.admitted == kCalls);
  CHECK(s.successes == kCalls);
  CHECK(s.failures == 0);
  // The library's own calls on this thread count in the same cells.
  call(h, CB_SUCCESS);
  CHECK(stats(h).admitted == kCalls + 1);
}

TEST_CASE(
    "a quiet call on a shared registry's breaker counts exactly in the file, folds included") {
  // A fresh file's run is in chunks no registry has used: its folds
  // (cb_fastpath_fold) are the file's like any other registry's.
  char path[] = "/tmp/lb-fastpath-shared-XXXXXX";
  const int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  close(fd);
  unlink(path);
  cb_registry_options o;
  cb_registry_options_init(&o);
  o.capacity = 16;
  o.path = path;
  o.flags = CB_REGISTRY_CREATE;
  cb_registry *reg = nullptr;
  REQUIRE(cb_registry_open(&o, &reg) == CB_OK);
  const cb_config cfg = config(5, kSecond);
  cb_handle h = 0;
  REQUIRE(cb_create(reg, "quiet", &cfg, &h) == CB_OK);
  const lb_quiet q = thread_quiet();
  constexpr int kCalls = 70'000;
  for (int i = 0; i < kCalls; ++i) {
    bool native = false;
    REQUIRE(quiet_call(q, h, CB_SUCCESS, &native) == CB_OK);
#ifndef _WIN32
    // Windows maps no file in place: a shared registry's calls all go to
    // the library there (docs/design.md, "The shared file").
    REQUIRE(native);
#endif
  }
  const cb_stats s = stats(h);
  CHECK(s.admitted == kCalls);
  CHECK(s.successes == kCalls);
  CHECK(s.rejected == 0);
  CHECK(cb_registry_close(reg) == CB_OK);
  unlink(path);
}

TEST_CASE("a quiet ticket is the library's ticket: cb_done takes it, and a failure goes there") {
  MonotonicRegistry r;
  const cb_handle h = r.create(config(2, 30 * kSecond));
  const lb_quiet q = thread_quiet();
  cb_ticket native_ticket = 0, library_ticket = 0;
  int native = 0;
  REQUIRE(lb_quiet_allow(&q, h, &native_ticket, &native) == CB_OK);
  CHECK(native == 1);
  REQUIRE(cb_allow(h, &library_ticket) == CB_OK);
  CHECK(native_ticket == library_ticket);
  REQUIRE(lb_quiet_done(&q, h, native_ticket, CB_FAILURE, &native) == CB_OK);
  CHECK(native == 0);
  CHECK(cb_state(h) == CB_STATE_CLOSED);
  CHECK(stats(h).consecutive_failures == 1);
  // A failure run: no longer quiet, but admitted natively (mode RUN); the
  // second failure trips through the library.
  bool both_native = true;
  REQUIRE(quiet_call(q, h, CB_FAILURE, &both_native) == CB_OK);
  CHECK_FALSE(both_native);
  CHECK(cb_state(h) == CB_STATE_OPEN);
  // A ticket from the closed period, reported now, is stale: the library's.
  REQUIRE(lb_quiet_done(&q, h, library_ticket, CB_SUCCESS, &native) == CB_OK);
  CHECK(native == 0);
  CHECK(cb_state(h) == CB_STATE_OPEN);
}

TEST_CASE("OPEN and FORCED_OPEN reject without the library while the deadline is far") {
  MonotonicRegistry r;
  const cb_handle h = r.create(config(1, 60 * kSecond));
  const lb_quiet q = thread_quiet();
  call(h, CB_FAILURE);
  REQUIRE(cb_state(h) == CB_STATE_OPEN);
  // The first rejection may have to cache the deadline: the library's.
  CHECK(cb_allow(h, nullptr) == CB_EINVAL);
  cb_ticket t = 0;
  CHECK(cb_allow(h, &t) == CB_REJECTED);
  const cb_stats before = stats(h);
  for (int i = 0; i < 1000; ++i) {
    bool native = false;
    REQUIRE(quiet_call(q, h, CB_SUCCESS, &native) == CB_REJECTED);
    REQUIRE(native);
  }
  CHECK(stats(h).rejected == before.rejected + 1000);
  CHECK(retry_after(h) > 59 * kSecond);

  REQUIRE(cb_force_open(h) == CB_OK);
  bool native = false;
  CHECK(quiet_call(q, h, CB_SUCCESS, &native) == CB_REJECTED);
  CHECK(native);
  REQUIRE(cb_reset(h) == CB_OK);
  CHECK(quiet_call(q, h, CB_SUCCESS, &native) == CB_OK);
  CHECK(native);
}

TEST_CASE("near an OPEN deadline, and on a manual clock, the rules leave the call to the library") {
  SUBCASE("a deadline within the cheap clock's slack") {
    MonotonicRegistry r;
    const cb_handle h = r.create(config(1, 1'000'000));  // 1 ms
    const lb_quiet q = thread_quiet();
    call(h, CB_FAILURE);
    REQUIRE(cb_state(h) == CB_STATE_OPEN);
    int native = 1;
    cb_ticket t = 0;
    lb_quiet_allow(&q, h, &t, &native);
    CHECK(native == 0);
  }
  SUBCASE("a manual clock: no lean rejections") {
    ManualRegistry r;
    const cb_handle h = r.create(config(1, 60 * kSecond));
    const lb_quiet q = thread_quiet();
    call(h, CB_FAILURE);
    int native = 1;
    cb_ticket t = 0;
    CHECK(lb_quiet_allow(&q, h, &t, &native) == CB_REJECTED);
    CHECK(native == 0);
  }
}

TEST_CASE("a window breaker's calls are admitted natively; their outcomes go to the library") {
  MonotonicRegistry r;
  const cb_handle h = r.create(count_window(20, 10, 0.5));
  const lb_quiet q = thread_quiet();
  for (int i = 0; i < 30; ++i) {
    cb_ticket t = 0;
    int native = 0;
    REQUIRE(lb_quiet_allow(&q, h, &t, &native) == CB_OK);
    REQUIRE(native == 1);
    REQUIRE(lb_quiet_done(&q, h, t, CB_SUCCESS, &native) == CB_OK);
  }
  for (int i = 0; i < 30 && cb_state(h) == CB_STATE_CLOSED; ++i) quiet_call(q, h, CB_FAILURE);
  CHECK(cb_state(h) == CB_STATE_OPEN);
  const cb_stats s = stats(h);
  CHECK(s.admitted == s.successes + s.failures);
  CHECK(s.successes == 30);
}

TEST_CASE("a destroyed breaker's and a closed registry's handles are never quiet") {
  const lb_quiet q = thread_quiet();
  cb_handle destroyed = 0, closed = 0;
  {
    MonotonicRegistry r;
    destroyed = r.create(config(5, kSecond));
    closed = r.create(config(5, kSecond));
    REQUIRE(cb_destroy(destroyed) == CB_OK);
    int native = 1;
    cb_ticket t = 0;
    CHECK(lb_quiet_allow(&q, destroyed, &t, &native) == CB_EHANDLE);
    CHECK(native == 0);
  }
  int native = 1;
  cb_ticket t = 0;
  CHECK(lb_quiet_allow(&q, closed, &t, &native) == CB_EHANDLE);
  CHECK(native == 0);
  // Made-up values: never quiet, never of a life.
  const cb_handle made_up_values[] = {0, 1, ~cb_handle(0), closed ^ (1ull << 63)};
  for (const cb_handle made_up : made_up_values) {
    CHECK(lb_quiet_allow(&q, made_up, &t, &native) != CB_OK);
    CHECK(native == 0);
  }
}

TEST_CASE("claimed stripes: one writer each, counted exactly, given back once") {
  MonotonicRegistry r;
  const cb_handle h = r.create(config(5, kSecond));
  constexpr int kThreads = 2, kCalls = 40'000;
  std::vector<lb_quiet> stripes(kThreads);
  for (auto &s : stripes) REQUIRE(lb_quiet_init(&s, 1) == CB_OK);
  CHECK(stripes[0].cells.claimed == 1);
  CHECK(stripes[0].cells.stripe != stripes[1].cells.stripe);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i)
    threads.emplace_back([&, i] {
      for (int c = 0; c < kCalls; ++c) quiet_call(stripes[size_t(i)], h, CB_SUCCESS);
    });
  for (auto &t : threads) t.join();
  CHECK(stats(h).admitted == uint64_t(kThreads) * kCalls);
  CHECK(stats(h).successes == uint64_t(kThreads) * kCalls);
  for (auto &s : stripes) {
    CHECK(cb_fastpath_release_cells(s.cells.stripe) == CB_OK);
    CHECK(cb_fastpath_release_cells(s.cells.stripe) == CB_EINVAL);
  }
  // The counts stay counted.
  CHECK(stats(h).admitted == uint64_t(kThreads) * kCalls);
}

TEST_CASE("fold and the stripe functions refuse bad input and change nothing") {
  MonotonicRegistry r;
  const cb_handle h = r.create(config(5, kSecond));
  const lb_quiet q = thread_quiet();
  call(h, CB_SUCCESS);
  const cb_stats before = stats(h);
  CHECK(cb_fastpath_fold(q.cells.stripe, h, CB_FASTPATH_ADMITTED) == CB_EINVAL);  // below fold_at
  CHECK(std::string(cb_last_error_field()) == "counter");
  CHECK(cb_fastpath_fold(q.cells.stripe, h, 4) == CB_EINVAL);
  CHECK(cb_fastpath_fold(q.cells.stripe, h, -1) == CB_EINVAL);
  CHECK(cb_fastpath_fold(999, h, 0) == CB_EINVAL);
  CHECK(std::string(cb_last_error_field()) == "stripe");
  CHECK(cb_fastpath_fold(q.cells.stripe, 0, 0) == CB_EHANDLE);
  CHECK(cb_fastpath_fold(q.cells.stripe, ~0ull, 0) == CB_EHANDLE);
  // Another thread's stripe is not this thread's to fold.
  uint32_t other = UINT32_MAX;
  std::thread([&] {
    lb_quiet mine;
    REQUIRE(lb_quiet_init(&mine, 0) == CB_OK);
    other = mine.cells.stripe;
    call(h, CB_SUCCESS);
  }).join();
  if (other != q.cells.stripe) CHECK(cb_fastpath_fold(other, h, 0) == CB_EINVAL);
  CHECK(cb_fastpath_thread_cells(nullptr) == CB_EINVAL);
  CHECK(cb_fastpath_claim_cells(nullptr) == CB_EINVAL);
  cb_fastpath_cells short_cells;
  short_cells.struct_size = 8;
  CHECK(cb_fastpath_claim_cells(&short_cells) == CB_EINVAL);
  CHECK(cb_fastpath_release_cells(q.cells.stripe) == CB_EINVAL);  // a thread's, not claimed
  CHECK(cb_fastpath_release_cells(UINT32_MAX) == CB_EINVAL);
  const cb_stats after = stats(h);
  CHECK(after.admitted == before.admitted + 1);  // the other thread's call only
}

TEST_CASE("conformance: the rules and the library agree on a random run of every kind of call") {
  // Two breakers of each configuration, one called through the rules, one
  // through the library alone, with the same outcomes: the same states and
  // the same counts after every step.
  const cb_config configs[] = {config(3, 60 * kSecond, 2, 2), count_window(20, 10, 0.5),
                               time_window(10 * kSecond, 10, 10, 0.5)};
  for (const cb_config &cfg : configs) {
    MonotonicRegistry r;
    const cb_handle ours = r.create(cfg), theirs = r.create(cfg);
    const lb_quiet q = thread_quiet();
    std::mt19937 rng(uint32_t(cfg.policy) + 7);
    for (int step = 0; step < 20'000; ++step) {
      const auto dice = unsigned(rng() % 100);
      const int outcome = dice < 12 ? CB_FAILURE : dice < 14 ? CB_IGNORED : CB_SUCCESS;
      if (dice == 98) {
        REQUIRE(cb_force_open(ours) == CB_OK);
        REQUIRE(cb_force_open(theirs) == CB_OK);
      } else if (dice == 99) {
        REQUIRE(cb_reset(ours) == CB_OK);
        REQUIRE(cb_reset(theirs) == CB_OK);
      }
      const int a = quiet_call(q, ours, outcome);
      cb_ticket t = 0;
      const int b = cb_allow(theirs, &t);
      if (b == CB_OK) REQUIRE(cb_done(theirs, t, outcome) == CB_OK);
      REQUIRE(a == b);
      REQUIRE(cb_state(ours) == cb_state(theirs));
    }
    const cb_stats counted = stats(ours);
    CHECK(same_counts(counted, stats(theirs)));
    // Every kind of call was made: admitted, rejected, failed.
    CHECK(counted.rejected > 1000);
    CHECK(counted.failures > 1000);
  }
}
