// The kill test (issue 16): lock-freedom as the safety argument of a shared
// registry. A parent creates a registry file with breakers of every policy,
// forks workers that open it and hammer those breakers from several threads
// each (successes, failures and ignored outcomes in bursts, so they trip,
// probe and close, and a create/destroy churn of breakers of their own), and
// SIGKILLs random workers at random moments, restarting each at once.
// Afterwards, with every worker stopped, it checks that
//   - every breaker still works: reset admits a call, a trip rejects and then
//     probes after its open duration, and an OPEN or HALF_OPEN breaker left
//     by the run admits a call once its open duration and probe lease have
//     passed (no probe is wedged beyond its lease), and a child killed
//     holding every probe slot of every breaker leaves them HALF_OPEN only
//     until the lease has run out;
//   - slots: as many breakers can still be created as the capacity leaves,
//     less at most one slot per kill that landed inside a create, destroy
//     or get_or_create (the only calls that take or give back a slot; a
//     per-thread flag on the board says when a thread is inside one; the
//     next open of the file gives most of those back), and the slots the
//     churn may have retired (one per 1,048,576 breakers);
//     and the slots freed are all reusable;
//   - counters: for each breaker, admitted >= successes + failures + ignored
//     and the registry's outcome counts equal what the workers saw finish
//     (a count in a MAP_SHARED|MAP_ANONYMOUS board that survives their
//     deaths), each off by at most the calls that were in flight when a
//     worker died (measured: a per-thread flag on the board says when a
//     thread is inside a call), plus 32,768 per counter fold a kill
//     interrupted where the library could not tell what it had done (it
//     counts those: lazybreaker_shared_uncertain_folds_total);
//   - stripes: never more than the file's 64 in use, and some reclaimed
//     from killed workers (there were far more threads than stripes);
//   - during the run, no counter of any breaker ever went down between two
//     reads.
// Only the public C API is used: this is what a pool of worker processes
// does.
//
//   test_kill [--kills N] [--seconds S] [--workers W] [--threads T] [--seed X] [--dir D]
//
// It makes N kills (default 2000) on a fresh file and checks; with
// --seconds, rounds of that until S seconds have passed (the soak: `make
// soak`). The file goes in D, else /dev/shm, else
// $TMPDIR, else /tmp, and is removed at the end. Exit 0 when every check
// passed, 1 when one failed (each failure says what was expected and what
// was seen), 2 for a bad argument.
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "lazybreaker/lazybreaker.h"

namespace {

constexpr int kMaxWorkers = 16;
constexpr int kMaxThreads = 4;
// Three breakers of each policy.
constexpr int kPerPolicy = 3;
constexpr int kBreakers = 3 * kPerPolicy;
// The file's capacity: a round loses a few dozen slots (about one per kill
// inside a create or destroy).
constexpr uint32_t kCapacity = 8192;
// The counts a fold moves at once (docs/semantics.md, "Statistics").
constexpr uint64_t kFoldCounts = 32768;
// Breakers a slot holds before it retires (lazybreaker.h, cb_handle).
constexpr uint64_t kSlotLifetime = 1048576;
// Short periods, so the breakers cycle many times in a run.
constexpr uint64_t kOpenNs = 1'000'000;
constexpr uint64_t kLeaseNs = 2'000'000;

// What a worker thread is doing, for the parent to read once it is dead:
// a call (cb_allow to the worker's own count of the outcome), the churn's
// cb_create/cb_destroy, or the start's cb_get_or_create (and the clean-up
// of a predecessor's leftover).
enum Phase : int { kIdle = 0, kInCall = 1, kInChurn = 2, kInStart = 3 };

// One worker thread's part of the board: it alone writes it, so its counts
// are exact up to the moment it dies, when at most the call in flight is
// missing from them.
struct ThreadBoard {
  std::atomic<int> phase;
  // Outcomes whose cb_done returned, per breaker and cb_outcome_t.
  std::atomic<uint64_t> finished[kBreakers][3];
  std::atomic<uint64_t> rejected;
  std::atomic<uint64_t> churned;  // breakers of its own created and destroyed
  // Numbers the churn's names: each is new, also across restarts, so that
  // a name a killed predecessor left behind is never asked for again (see
  // test_kill_names.cpp for why that matters).
  std::atomic<uint64_t> churn_serial;
};

struct WorkerBoard {
  ThreadBoard threads[kMaxThreads];
  char error[512];  // set by a worker that found a call misbehaving
};

// MAP_SHARED|MAP_ANONYMOUS, mapped before the first fork.
struct Board {
  std::atomic<int> stop;
  std::atomic<int> all_fail;  // the end of the run: every outcome a failure
  WorkerBoard workers[kMaxWorkers];
};

struct Options {
  long kills = 2000;
  long seconds = 0;
  int workers = 4;
  int threads = 2;
  uint64_t seed = 0;
  std::string dir;
};

int g_failures = 0;

[[gnu::format(printf, 1, 2)]] void failed(const char *fmt, ...) {
  std::fputs("test_kill: FAIL: ", stderr);
  va_list args;
  va_start(args, fmt);
  std::vfprintf(stderr, fmt, args);
  va_end(args);
  std::fputc('\n', stderr);
  ++g_failures;
}

uint64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1'000'000'000u + uint64_t(ts.tv_nsec);
}

void sleep_ns(uint64_t ns) {
  timespec ts{time_t(ns / 1'000'000'000u), long(ns % 1'000'000'000u)};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

const char *policy_name(int i) {
  return i / kPerPolicy == 0 ? "consecutive" : i / kPerPolicy == 1 ? "count" : "time";
}

std::string breaker_name(int i) { return std::string(policy_name(i)) + "-" + std::to_string(i); }

// Every process builds the same configurations, so get_or_create finds the
// parent's breakers.
cb_config breaker_config(int i) {
  cb_config c;
  cb_config_init(&c);
  c.open_duration_ns = kOpenNs;
  c.half_open_timeout_ns = kLeaseNs;
  c.half_open_max_calls = 1 + uint32_t(i % 2);
  c.half_open_success_threshold = 1 + uint32_t(i % 2);
  switch (i / kPerPolicy) {
    case 0:
      c.policy = CB_POLICY_CONSECUTIVE;
      c.failure_threshold = 5;
      break;
    case 1:
      c.policy = CB_POLICY_COUNT_WINDOW;
      c.window_size = 20;
      c.minimum_calls = 10;
      c.failure_rate_threshold = 0.5;
      break;
    default:
      c.policy = CB_POLICY_TIME_WINDOW;
      c.window_duration_ns = 10'000'000;
      c.window_buckets = 5;
      c.minimum_calls = 10;
      c.failure_rate_threshold = 0.5;
      break;
  }
  return c;
}

// capacity 0: the file's.
cb_registry *open_registry(const std::string &path, uint32_t flags, uint32_t capacity,
                           int *status) {
  cb_registry_options o;
  cb_registry_options_init(&o);
  o.path = path.c_str();
  o.flags = flags;
  o.capacity = capacity;
  cb_registry *reg = nullptr;
  *status = cb_registry_open(&o, &reg);
  return *status == CB_OK ? reg : nullptr;
}

// --- the worker --------------------------------------------------------

[[noreturn]] void worker_fail(WorkerBoard *wb, const char *fmt, ...) {
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(wb->error, sizeof wb->error, fmt, args);
  va_end(args);
  _exit(3);
}

// Failures come in bursts: every few milliseconds the failure share jumps
// from 5 % to 70 % and back, so breakers of every policy trip, probe and
// close many times in a run.
bool bursty_failure(std::mt19937_64 &rng, const Board *board) {
  if (board->all_fail.load(std::memory_order_relaxed) != 0) return true;
  const bool burst = (now_ns() / 3'000'000) % 2 == 1;
  return std::uniform_int_distribution<int>(0, 99)(rng) < (burst ? 70 : 5);
}

void worker_thread(cb_registry *reg, const cb_handle *handles, Board *board, int w, int t,
                   uint64_t seed) {
  WorkerBoard *wb = &board->workers[w];
  ThreadBoard &tb = wb->threads[t];
  const std::atomic<int> *stop = &board->stop;
  std::mt19937_64 rng(seed);
  const std::string churn_prefix = "churn-" + std::to_string(w) + "-" + std::to_string(t) + "-";
  // A predecessor killed between its churn's create and destroy left that
  // breaker behind: destroy it, so leftovers do not pile up over a soak.
  if (const uint64_t serial = tb.churn_serial.load(); serial > 0) {
    cb_handle left = 0;
    const std::string name = churn_prefix + std::to_string(serial - 1);
    tb.phase.store(kInStart);
    if (cb_lookup(reg, name.c_str(), &left) == CB_OK) cb_destroy(left);
    tb.phase.store(kIdle);
  }
  for (uint64_t n = 0; stop->load(std::memory_order_relaxed) == 0; ++n) {
    const int b = std::uniform_int_distribution<int>(0, kBreakers - 1)(rng);
    tb.phase.store(kInCall);  // seq_cst: visible before anything the call stores
    cb_ticket ticket = 0;
    const int st = cb_allow(handles[b], &ticket);
    if (st == CB_OK) {
      const int roll = std::uniform_int_distribution<int>(0, 99)(rng);
      const int outcome = roll < 3                     ? CB_IGNORED
                          : bursty_failure(rng, board) ? CB_FAILURE
                                                       : CB_SUCCESS;
      if (const int d = cb_done(handles[b], ticket, outcome); d != CB_OK)
        worker_fail(wb, "cb_done(%s) returned %s: %s", breaker_name(b).c_str(), cb_strerror(d),
                    cb_last_error_message());
      tb.finished[b][outcome].fetch_add(1, std::memory_order_relaxed);
    } else if (st == CB_REJECTED) {
      tb.rejected.fetch_add(1, std::memory_order_relaxed);
    } else {
      worker_fail(wb, "cb_allow(%s) returned %s: %s", breaker_name(b).c_str(), cb_strerror(st),
                  cb_last_error_message());
    }
    tb.phase.store(kIdle);
    // Now and then a breaker of its own comes and goes, so kills land in
    // cb_create and cb_destroy too (a killed predecessor's leftover stays
    // until the parent destroys it at the end).
    if (n % 256 == 255) {
      const std::string churn_name =
          churn_prefix + std::to_string(tb.churn_serial.fetch_add(1, std::memory_order_relaxed));
      tb.phase.store(kInChurn);
      cb_handle mine = 0;
      // No other thread has the name: it is this thread's.
      if (const int c = cb_create(reg, churn_name.c_str(), nullptr, &mine); c != CB_OK)
        worker_fail(wb, "cb_create(%s) returned %s: %s", churn_name.c_str(), cb_strerror(c),
                    cb_last_error_message());
      if (const int d = cb_destroy(mine); d != CB_OK)
        worker_fail(wb, "cb_destroy(%s) returned %s", churn_name.c_str(), cb_strerror(d));
      tb.churned.fetch_add(1, std::memory_order_relaxed);
      tb.phase.store(kIdle);
    }
  }
}

[[noreturn]] void worker_main(const std::string &path, Board *board, int w, int threads,
                              uint64_t seed) {
  WorkerBoard *wb = &board->workers[w];
  int st = CB_OK;
  cb_registry *reg = open_registry(path, 0, 0, &st);
  if (reg == nullptr)
    worker_fail(wb, "cb_registry_open(%s) returned %s: %s", path.c_str(), cb_strerror(st),
                cb_last_error_message());
  cb_handle handles[kBreakers];
  // What every worker of a pool does at start.
  wb->threads[0].phase.store(kInStart);
  for (int i = 0; i < kBreakers; ++i) {
    const cb_config cfg = breaker_config(i);
    if (const int g = cb_get_or_create(reg, breaker_name(i).c_str(), &cfg, &handles[i]); g != CB_OK)
      worker_fail(wb, "cb_get_or_create(%s) returned %s: %s", breaker_name(i).c_str(),
                  cb_strerror(g), cb_last_error_message());
  }
  wb->threads[0].phase.store(kIdle);
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t)
    pool.emplace_back(worker_thread, reg, handles, board, w, t, seed + uint64_t(t));
  worker_thread(reg, handles, board, w, 0, seed);
  for (std::thread &th : pool) th.join();
  if (const int c = cb_registry_close(reg); c != CB_OK)
    worker_fail(wb, "cb_registry_close returned %s", cb_strerror(c));
  _exit(0);
}

// --- the parent --------------------------------------------------------

struct Totals {
  uint64_t admitted = 0, rejected = 0, successes = 0, failures = 0, ignored = 0, trips = 0;
};

Totals read_stats(cb_handle h) {
  cb_stats s;
  std::memset(&s, 0, sizeof s);
  s.struct_size = sizeof s;
  Totals t;
  if (const int st = cb_stats_get(h, &s); st != CB_OK) {
    failed("cb_stats_get: expected CB_OK, got %s: %s", cb_strerror(st), cb_last_error_message());
    return t;
  }
  t.admitted = s.admitted;
  t.rejected = s.rejected;
  t.successes = s.successes;
  t.failures = s.failures;
  t.ignored = s.ignored;
  t.trips = s.trips;
  return t;
}

class Parent {
 public:
  Parent(Options opts, std::string path, cb_registry *reg, uint32_t capacity, Board *board)
      : o_(std::move(opts)),
        path_(std::move(path)),
        reg_(reg),
        capacity_(capacity),
        board_(board),
        rng_(o_.seed) {}

  bool create_breakers() {
    for (int i = 0; i < kBreakers; ++i) {
      const cb_config cfg = breaker_config(i);
      if (const int st = cb_create(reg_, breaker_name(i).c_str(), &cfg, &handles_[i]);
          st != CB_OK) {
        failed("cb_create(%s): expected CB_OK, got %s: %s", breaker_name(i).c_str(),
               cb_strerror(st), cb_last_error_message());
        return false;
      }
      last_[i] = Totals{};
    }
    return true;
  }

  // Kills are sent without waiting for the worker's death: a process
  // killed while its threads hold every CPU takes milliseconds to be torn
  // down, and the next kill goes to another worker meanwhile. A worker is
  // restarted as soon as it has been reaped.
  void run() {
    for (int w = 0; w < o_.workers; ++w) spawn(w);
    const uint64_t start = now_ns();
    while (g_failures == 0 && kills_ < o_.kills) {
      sleep_ns(std::uniform_int_distribution<uint64_t>(0, 2'000'000)(rng_));
      const long before = kills_;
      reap_and_restart(false);
      std::vector<int> live;
      for (int w = 0; w < o_.workers; ++w)
        if (!dying_[w]) live.push_back(w);
      if (live.empty()) {
        reap_and_restart(true);
        continue;
      }
      const int w = live[std::uniform_int_distribution<size_t>(0, live.size() - 1)(rng_)];
      kill(pids_[w], SIGKILL);
      dying_[w] = true;
      if (kills_ / 16 != before / 16) check_monotonic();
    }
    while (std::find(std::begin(dying_), std::end(dying_), true) != std::end(dying_) &&
           g_failures == 0)
      reap_and_restart(true);
    stop_all();
    std::printf(
        "test_kill: %ld kills in %.1f s (%d workers x %d threads); threads caught in a "
        "call %" PRIu64 ", in the churn's create/destroy %" PRIu64
        ", in the start's get_or_create %" PRIu64 "\n",
        kills_, double(now_ns() - start) / 1e9, o_.workers, o_.threads, in_flight_at_kill_,
        in_churn_at_kill_, in_start_at_kill_);
  }

  void check_counters() {
    check_monotonic();
    const uint64_t folds = uncertain_folds();
    const uint64_t fold_slack = folds * kFoldCounts;
    uint64_t unfinished_total = 0, unreported_total = 0;
    for (int i = 0; i < kBreakers; ++i) {
      const Totals s = read_stats(handles_[i]);
      const std::string name = breaker_name(i);
      const uint64_t outcomes = s.successes + s.failures + s.ignored;
      if (s.admitted + fold_slack < outcomes)
        failed("%s: expected admitted >= successes + failures + ignored (within %" PRIu64
               " for %" PRIu64 " interrupted folds), saw admitted %" PRIu64 " < %" PRIu64,
               name.c_str(), fold_slack, folds, s.admitted, outcomes);
      else if (s.admitted > outcomes)
        unfinished_total += s.admitted - outcomes;
      uint64_t seen[3] = {0, 0, 0};
      for (int w = 0; w < o_.workers; ++w)
        for (int t = 0; t < o_.threads; ++t)
          for (int k = 0; k < 3; ++k)
            seen[k] += board_->workers[w].threads[t].finished[i][k].load();
      const uint64_t counted[3] = {s.successes, s.failures, s.ignored};
      static const char *const kOutcome[3] = {"successes", "failures", "ignored"};
      for (int k = 0; k < 3; ++k) {
        // A kill between cb_done's count and the worker's own leaves the
        // registry ahead by one; it is never behind.
        if (counted[k] + fold_slack < seen[k])
          failed("%s: expected the registry's %s >= the %" PRIu64
                 " the workers saw finish, saw %" PRIu64,
                 name.c_str(), kOutcome[k], seen[k], counted[k]);
        else if (counted[k] > seen[k])
          unreported_total += counted[k] - seen[k];
      }
      std::printf("test_kill: %-14s admitted %9" PRIu64 " rejected %9" PRIu64 " successes %9" PRIu64
                  " failures %8" PRIu64 " ignored %7" PRIu64 " trips %6" PRIu64 "\n",
                  name.c_str(), s.admitted, s.rejected, s.successes, s.failures, s.ignored,
                  s.trips);
      // Workers killed before they made this many calls (a sanitizer on a
      // loaded machine: a few dozen calls a round) cannot be expected to
      // have failed often enough to trip; a normal run makes hundreds of
      // thousands and trips about a thousand times.
      constexpr uint64_t kCallsToExpectATrip = 1000;
      if (s.trips == 0 && s.admitted >= kCallsToExpectATrip)
        failed("%s: expected the run to trip it at least once, saw 0 trips", name.c_str());
      else if (s.trips == 0)
        std::printf("test_kill: %s: %" PRIu64 " calls, too few to expect a trip\n", name.c_str(),
                    s.admitted);
    }
    // Each thread has at most one call in flight when its process dies, and
    // that call is either admitted without an outcome (killed before
    // cb_done counted) or counted without the worker's own count (killed
    // after): never both. The coarse bound, kills x threads, is printed too.
    const uint64_t bound = in_flight_at_kill_ + fold_slack;
    const uint64_t coarse = uint64_t(kills_) * uint64_t(o_.threads);
    std::printf("test_kill: admitted without an outcome %" PRIu64
                ", outcomes the workers never saw %" PRIu64 "; bound on their sum %" PRIu64
                " (threads in a call at a kill) + %" PRIu64 " (%" PRIu64
                " uncertain folds x 32,768); kills x threads = %" PRIu64 "\n",
                unfinished_total, unreported_total, in_flight_at_kill_, fold_slack, folds, coarse);
    if (unfinished_total + unreported_total > bound)
      failed(
          "expected (admitted - successes - failures - ignored) + (the registry's outcomes - "
          "the workers' own counts) <= %" PRIu64
          " over all breakers (one per thread in a "
          "call at a kill), saw %" PRIu64 " + %" PRIu64,
          bound, unfinished_total, unreported_total);
    // The file's 64 stripes: never more than 64 in use, and taken back from
    // the dead once they ran out (under a sanitizer most workers die before
    // they count, and may never take them all).
    const uint64_t used = metric("lazybreaker_shared_stripes_used");
    const uint64_t reclaimed = metric("lazybreaker_shared_stripes_reclaimed_total");
    std::printf("test_kill: stripes used %" PRIu64 " of 64, %" PRIu64
                " reclaimed from killed workers\n",
                used, reclaimed);
    if (used > 64) failed("expected at most 64 stripes used, saw %" PRIu64, used);
    if (used == 64 && uint64_t(kills_) * uint64_t(o_.threads) > 2 * 64 && reclaimed == 0)
      failed("expected stripes reclaimed from some of the %ld killed workers, saw none", kills_);
  }

  // With no worker left: a breaker the run left OPEN or HALF_OPEN admits a
  // call once its open duration and probe lease have passed; every one can
  // be reset and admits then, and trips, rejects and probes again.
  void check_breakers_work() {
    // A HALF_OPEN breaker's probes may belong to a worker killed at the end.
    int open = 0, half_open = 0;
    for (const cb_handle h : handles_) {
      open += cb_state(h) == CB_STATE_OPEN;
      half_open += cb_state(h) == CB_STATE_HALF_OPEN;
    }
    std::printf("test_kill: after the run %d breakers OPEN, %d HALF_OPEN, the rest CLOSED\n", open,
                half_open);
    sleep_ns(kOpenNs + kLeaseNs + 2'000'000);
    for (int i = 0; i < kBreakers; ++i) {
      const cb_handle h = handles_[i];
      const std::string name = breaker_name(i);
      const int left = cb_state(h);
      cb_ticket t = 0;
      int st = cb_allow(h, &t);
      if (st != CB_OK)
        failed("%s: left in state %d; expected a call admitted %" PRIu64
               " ns past its open duration and lease, got %s",
               name.c_str(), left, kOpenNs + kLeaseNs + 2'000'000, cb_strerror(st));
      else
        cb_done(h, t, CB_SUCCESS);
      if ((st = cb_reset(h)) != CB_OK || cb_state(h) != CB_STATE_CLOSED)
        failed("%s: expected cb_reset to close it, got %s and state %d", name.c_str(),
               cb_strerror(st), cb_state(h));
      if ((st = cb_allow(h, &t)) != CB_OK)
        failed("%s: expected a call admitted after cb_reset, got %s", name.c_str(),
               cb_strerror(st));
      else
        cb_done(h, t, CB_SUCCESS);
      if ((st = cb_trip(h, kOpenNs)) != CB_OK || cb_allow(h, &t) != CB_REJECTED)
        failed("%s: expected cb_trip to open it and a call then rejected", name.c_str());
      sleep_ns(kOpenNs + 1'000'000);
      const uint32_t probes = breaker_config(i).half_open_success_threshold;
      for (uint32_t p = 0; p < probes; ++p) {
        if ((st = cb_allow(h, &t)) != CB_OK) {
          failed("%s: expected probe %u admitted after the open duration, got %s (state %d)",
                 name.c_str(), p + 1, cb_strerror(st), cb_state(h));
          break;
        }
        cb_done(h, t, CB_SUCCESS);
      }
      if (cb_state(h) != CB_STATE_CLOSED)
        failed("%s: expected CLOSED after %u successful probes, got state %d", name.c_str(), probes,
               cb_state(h));
    }
  }

  // A probe whose process is killed holding it is forgotten after its
  // lease: a child takes every probe slot of every breaker and is killed;
  // the breakers stay HALF_OPEN and reject until the lease has run out, then
  // admit a call.
  void check_killed_probes() {
    for (const cb_handle h : handles_)
      if (cb_reset(h) != CB_OK || cb_trip(h, kOpenNs) != CB_OK) failed("cb_reset/cb_trip failed");
    sleep_ns(kOpenNs + 1'000'000);
    int ready[2];
    if (pipe(ready) != 0) return failed("pipe: %s", std::strerror(errno));
    std::fflush(stdout);
    const pid_t pid = fork();
    if (pid == 0) {
      int st = CB_OK;
      cb_registry *reg = open_registry(path_, 0, 0, &st);
      // 0 if a probe slot could not be taken, else when the first was.
      uint64_t taken_at = 0;
      bool all = reg != nullptr;
      for (int i = 0; i < kBreakers && all; ++i) {
        cb_handle h = 0;
        cb_ticket t = 0;
        all = cb_lookup(reg, breaker_name(i).c_str(), &h) == CB_OK;
        for (uint32_t p = 0; p < breaker_config(i).half_open_max_calls && all; ++p) {
          all = cb_allow(h, &t) == CB_OK;
          if (i == 0 && p == 0) taken_at = now_ns();
        }
      }
      if (!all) taken_at = 0;
      if (write(ready[1], &taken_at, sizeof taken_at) != sizeof taken_at) _exit(1);
      pause();
      _exit(0);
    }
    uint64_t taken_at = 0;
    const bool got = read(ready[0], &taken_at, sizeof taken_at) == sizeof taken_at;
    // Looked at as soon as it is killed (its teardown may take milliseconds,
    // and its probes are held, dead or alive), then waited for.
    kill(pid, SIGKILL);
    if (!got || taken_at == 0) {
      waitpid(pid, nullptr, 0);
      return failed("the prober: expected it to take every probe slot of every breaker");
    }
    for (int i = 0; i < kBreakers; ++i) {
      const int state = cb_state(handles_[i]);
      cb_ticket t = 0;
      const int st = cb_allow(handles_[i], &t);
      // Only while the lease surely runs: on a busy machine it may have run
      // out by now, and the call is then rightly admitted.
      if (const uint64_t late = now_ns() - taken_at; late >= kLeaseNs / 2) {
        std::printf("test_kill: %s: looked %.2f ms after the probe, too late to see it held\n",
                    breaker_name(i).c_str(), double(late) / 1e6);
        if (st == CB_OK) cb_done(handles_[i], t, CB_SUCCESS);
        continue;
      }
      if (state != CB_STATE_HALF_OPEN || st != CB_REJECTED)
        failed(
            "%s: expected HALF_OPEN and a call rejected while the killed prober's lease runs, "
            "got state %d and %s",
            breaker_name(i).c_str(), state, cb_strerror(st));
    }
    waitpid(pid, nullptr, 0);
    close(ready[0]);
    close(ready[1]);
    // The lease, then the open duration that follows a silent probe.
    sleep_ns(kLeaseNs + kOpenNs + 1'000'000);
    for (int i = 0; i < kBreakers; ++i) {
      cb_ticket t = 0;
      const int st = cb_allow(handles_[i], &t);
      if (st != CB_OK)
        failed("%s: expected a call admitted once the killed prober's lease (%" PRIu64
               " ns) and the open duration after it have passed, got %s (state %d)",
               breaker_name(i).c_str(), kLeaseNs, cb_strerror(st), cb_state(handles_[i]));
      else
        cb_done(handles_[i], t, CB_SUCCESS);
    }
  }

  // With no worker left: the live breakers are ours (the churn leftovers of
  // killed workers are destroyed first); the rest of the capacity must be
  // creatable, less at most one slot per kill inside a slot call.
  void check_slots() {
    std::vector<cb_handle> live(capacity_);
    size_t count = 0;
    if (cb_registry_list(reg_, live.data(), live.size(), &count) != CB_OK || count > live.size()) {
      failed("cb_registry_list: expected CB_OK and at most %u breakers, saw %zu", capacity_, count);
      return;
    }
    size_t leftovers = 0;
    for (size_t i = 0; i < count; ++i) {
      char name[CB_MAX_NAME_BYTES + 1];
      if (cb_name(live[i], name, sizeof name) == CB_OK && std::strncmp(name, "churn-", 6) == 0) {
        if (cb_destroy(live[i]) != CB_OK) failed("cb_destroy(%s) of a leftover failed", name);
        ++leftovers;
      }
    }
    const size_t ours = count - leftovers;
    if (ours != size_t(kBreakers))
      failed("expected %d breakers besides the churn leftovers, saw %zu", kBreakers, ours);
    // Named, so that the name index is filled up too.
    std::vector<cb_handle> made;
    for (;;) {
      cb_handle h = 0;
      const std::string name = "refill-" + std::to_string(made.size());
      const int st = cb_create(reg_, name.c_str(), nullptr, &h);
      if (st == CB_EFULL) break;
      if (st != CB_OK) {
        failed("cb_create(%s) of a fresh breaker: expected CB_OK or CB_EFULL, got %s: %s",
               name.c_str(), cb_strerror(st), cb_last_error_message());
        break;
      }
      made.push_back(h);
    }
    const size_t free_slots = capacity_ - ours;
    const size_t lost = free_slots > made.size() ? free_slots - made.size() : 0;
    // A slot that has held 1,048,576 breakers retires (lazybreaker.h,
    // cb_handle): the churn may have retired one per that many breakers.
    uint64_t churned = 0;
    for (int w = 0; w < o_.workers; ++w)
      for (int t = 0; t < o_.threads; ++t) churned += board_->workers[w].threads[t].churned.load();
    const uint64_t retired = churned / kSlotLifetime + 1;
    // A slot is lost only by a kill inside a call that takes or gives one
    // back: the churn's create/destroy, or the start's clean-up (a destroy).
    // The start's get_or_create finds the breakers the parent made.
    const uint64_t bound = in_churn_at_kill_ + in_start_at_kill_ + retired;
    std::printf(
        "test_kill: created %zu of %zu free slots after the run (%zu churn leftovers "
        "destroyed); %zu lost, bound %" PRIu64 " (%" PRIu64
        " kills inside the churn's create/destroy + %" PRIu64 " inside the start + %" PRIu64
        " slots retired by %" PRIu64 " churned breakers at most)\n",
        made.size(), free_slots, leftovers, lost, bound, in_churn_at_kill_, in_start_at_kill_,
        retired, churned);
    if (made.size() > free_slots)
      failed("expected at most %zu breakers creatable, created %zu", free_slots, made.size());
    if (lost > bound)
      failed("expected at most %" PRIu64
             " slots lost (one per kill inside a create, destroy or get_or_create, and the "
             "retired), saw %zu: created %zu of %zu free",
             bound, lost, made.size(), free_slots);
    for (const cb_handle h : made)
      if (cb_destroy(h) != CB_OK) failed("cb_destroy of a fresh breaker failed");
    // Destroyed slots are reused: the same number fits again.
    const size_t first_round = made.size();
    made.clear();
    for (cb_handle h = 0;
         cb_create(reg_, ("again-" + std::to_string(made.size())).c_str(), nullptr, &h) == CB_OK;)
      made.push_back(h);
    if (made.size() != first_round)
      failed("expected the %zu destroyed slots to be reusable, created %zu", first_round,
             made.size());
    for (const cb_handle h : made) cb_destroy(h);
  }

 private:
  void spawn(int w) {
    const uint64_t seed = rng_();
    std::fflush(stdout);  // or the child would print the parent's buffer again
    const pid_t pid = fork();
    if (pid == 0) worker_main(path_, board_, w, o_.threads, seed);
    if (pid < 0) {
      failed("fork: %s", std::strerror(errno));
      std::exit(1);
    }
    pids_[w] = pid;
  }

  // Reaps dead workers (with `block`, waits for one): a killed one is
  // counted and restarted; any other death is a failure, reported with
  // what the worker wrote on the board.
  void reap_and_restart(bool block, bool restart = true) {
    for (;;) {
      int status = 0;
      const pid_t pid = waitpid(-1, &status, block ? 0 : WNOHANG);
      if (pid <= 0) return;
      block = false;
      const int w = int(std::find(pids_, pids_ + o_.workers, pid) - pids_);
      if (w == o_.workers) continue;  // not a worker (none other is forked)
      pids_[w] = 0;
      const bool killed = dying_[w];
      dying_[w] = false;
      // Told to stop (the end of the run), it may have exited before the kill.
      if (board_->stop.load() != 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0) continue;
      if (!killed || !WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL) {
        report_death(w, status, "die of our SIGKILL");
        continue;
      }
      ++kills_;
      // The worker is dead: everything it stored is visible.
      for (int t = 0; t < o_.threads; ++t) {
        std::atomic<int> &phase = board_->workers[w].threads[t].phase;
        const int p = phase.load();
        if (p == kInCall) ++in_flight_at_kill_;
        if (p == kInChurn) ++in_churn_at_kill_;
        if (p == kInStart) ++in_start_at_kill_;
        phase.store(kIdle);
      }
      if (restart) spawn(w);
    }
  }

  void report_death(int w, int status, const char *expected) {
    const WorkerBoard &wb = board_->workers[w];
    failed("worker %d: expected it to %s, it %s %d%s%s", w, expected,
           WIFSIGNALED(status) ? "died of signal" : "exited with",
           WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status), wb.error[0] ? ": " : "",
           wb.error);
  }

  // The end of the run: after 20 ms of failures only, every other worker is
  // killed as the rest are told to stop, so the breakers are left OPEN or
  // HALF_OPEN, some with probes whose process died (the checks then wait
  // out their lease), and with processes that exited and gave their stripes
  // back.
  void stop_all() {
    board_->all_fail.store(1);
    sleep_ns(20'000'000);  // every breaker trips, and probes only fail
    board_->stop.store(1);
    for (int w = 1; w < o_.workers; w += 2)
      if (pids_[w] != 0 && !dying_[w]) {
        kill(pids_[w], SIGKILL);
        dying_[w] = true;
      }
    while (std::find(std::begin(dying_), std::end(dying_), true) != std::end(dying_) &&
           g_failures == 0)
      reap_and_restart(true, false);
    for (int w = 0; w < o_.workers; ++w) {
      if (pids_[w] == 0) continue;
      if (dying_[w]) kill(pids_[w], SIGKILL);  // after a failure, none is left running
      int status = 0;
      if (waitpid(pids_[w], &status, 0) != pids_[w]) {
        failed("waitpid(worker %d): %s", w, std::strerror(errno));
        continue;
      }
      if (!dying_[w] && !(WIFEXITED(status) && WEXITSTATUS(status) == 0))
        report_death(w, status, "exit with 0 when told to stop");
      pids_[w] = 0;
      dying_[w] = false;
    }
  }

  void check_monotonic() {
    for (int i = 0; i < kBreakers; ++i) {
      const Totals s = read_stats(handles_[i]);
      const Totals &p = last_[i];
      const struct {
        const char *what;
        uint64_t before, now;
      } fields[] = {{"admitted", p.admitted, s.admitted},    {"rejected", p.rejected, s.rejected},
                    {"successes", p.successes, s.successes}, {"failures", p.failures, s.failures},
                    {"ignored", p.ignored, s.ignored},       {"trips", p.trips, s.trips}};
      for (const auto &f : fields)
        if (f.now < f.before)
          failed("%s: expected %s never to go down between two reads, saw %" PRIu64
                 " after %" PRIu64 " (after %ld kills)",
                 breaker_name(i).c_str(), f.what, f.now, f.before, kills_);
      last_[i] = s;
    }
  }

  // Counter folds a kill interrupted and the library could not finish from
  // its fold log, each of which may leave one counter up to 32,768 low: the
  // file counts them (docs/shared-registries.md, "Counters across
  // processes").
  uint64_t uncertain_folds() const { return metric("lazybreaker_shared_uncertain_folds_total"); }

  // A sample without labels from the registry's Prometheus text; fails the
  // test if it is missing.
  uint64_t metric(const char *name) const {
    size_t needed = 0;
    std::string text;
    int st = cb_metrics_prometheus(reg_, nullptr, 0, &needed);
    while (st == CB_OK || st == CB_ERANGE) {
      text.resize(needed + 4096);
      st = cb_metrics_prometheus(reg_, text.data(), text.size(), &needed);
      if (st == CB_OK) break;
    }
    if (st != CB_OK) {
      failed("cb_metrics_prometheus: %s", cb_strerror(st));
      return 0;
    }
    const std::string line = std::string("\n") + name + " ";
    const size_t at = std::string_view(text.c_str()).find(line);
    if (at == std::string_view::npos) {
      failed("expected a sample %s in the registry's metrics, found none", name);
      return 0;
    }
    return std::strtoull(text.c_str() + at + line.size(), nullptr, 10);
  }

  Options o_;
  std::string path_;
  cb_registry *reg_;
  uint32_t capacity_;
  Board *board_;
  std::mt19937_64 rng_;
  cb_handle handles_[kBreakers] = {};
  Totals last_[kBreakers];
  pid_t pids_[kMaxWorkers] = {};
  bool dying_[kMaxWorkers] = {};  // sent SIGKILL, not reaped yet
  long kills_ = 0;
  uint64_t in_flight_at_kill_ = 0;
  uint64_t in_churn_at_kill_ = 0;
  uint64_t in_start_at_kill_ = 0;
};

bool parse_args(int argc, char **argv, Options *o) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) return false;
    const char *v = argv[++i];
    char *end = nullptr;
    const unsigned long long n = std::strtoull(v, &end, 10);
    const bool number = *v != '\0' && *end == '\0';
    if (a == "--dir") {
      o->dir = v;
    } else if (!number) {
      return false;
    } else if (a == "--kills") {
      o->kills = long(n);
    } else if (a == "--seconds") {
      o->seconds = long(n);
    } else if (a == "--workers" && n >= 1 && n <= kMaxWorkers) {
      o->workers = int(n);
    } else if (a == "--threads" && n >= 1 && n <= kMaxThreads) {
      o->threads = int(n);
    } else if (a == "--seed") {
      o->seed = n;
    } else {
      return false;
    }
  }
  return true;
}

std::string registry_dir(const Options &o) {
  if (!o.dir.empty()) return o.dir;
  if (access("/dev/shm", W_OK) == 0) return "/dev/shm";
  const char *tmp = std::getenv("TMPDIR");
  return tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
}

}  // namespace

namespace {

// One round: a fresh file, o.kills kills, every check. False if one failed.
bool run_round(const Options &o, Board *board, int round) {
  new (board) Board();
  const std::string path = registry_dir(o) + "/lb-kill-test-" + std::to_string(getpid()) + "-" +
                           std::to_string(round) + ".cbr";
  int st = CB_OK;
  cb_registry *reg =
      open_registry(path, CB_REGISTRY_CREATE | CB_REGISTRY_EXCLUSIVE, kCapacity, &st);
  if (reg == nullptr) {
    failed("cb_registry_open(%s, CREATE|EXCLUSIVE): expected CB_OK, got %s: %s", path.c_str(),
           cb_strerror(st), cb_last_error_message());
    return false;
  }
  {
    Options round_options = o;
    round_options.seed = o.seed + uint64_t(round);
    Parent parent(round_options, path, reg, kCapacity, board);
    if (parent.create_breakers()) {
      parent.run();
      if (g_failures == 0) {
        parent.check_counters();
        parent.check_breakers_work();
        parent.check_killed_probes();
        parent.check_slots();
      }
    }
  }
  cb_registry_close(reg);
  unlink(path.c_str());
  return g_failures == 0;
}

}  // namespace

int main(int argc, char **argv) {
  Options o;
  o.seed = now_ns() ^ uint64_t(getpid());
  if (!parse_args(argc, argv, &o)) {
    std::fprintf(stderr,
                 "usage: %s [--kills N] [--seconds S] [--workers 1..%d] [--threads 1..%d] "
                 "[--seed X] [--dir D]\n",
                 argv[0], kMaxWorkers, kMaxThreads);
    return 2;
  }
  std::printf("test_kill: seed %" PRIu64 " (--seed to repeat the parent's choices)\n", o.seed);
  void *mem =
      mmap(nullptr, sizeof(Board), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) return std::perror("mmap"), 1;
  Board *board = static_cast<Board *>(mem);
  // The soak runs rounds of --kills kills, each on a fresh file, until
  // --seconds have passed: a file then loses no more slots than the suite's
  // (one per kill inside a create or destroy), and every round is checked.
  const uint64_t deadline = now_ns() + uint64_t(o.seconds) * 1'000'000'000u;
  int round = 0;
  bool ok = true;
  do {
    if (o.seconds > 0) std::printf("test_kill: round %d\n", round + 1);
    ok = run_round(o, board, round++);
  } while (ok && o.seconds > 0 && now_ns() < deadline);
  munmap(mem, sizeof(Board));
  if (!ok) {
    std::fprintf(stderr, "test_kill: %d check(s) failed in round %d (seed %" PRIu64 ")\n",
                 g_failures, round, o.seed + uint64_t(round - 1));
    return 1;
  }
  std::printf("test_kill: ok (%d round%s)\n", round, round == 1 ? "" : "s");
  return 0;
}
