// Made-up handles are never obeyed: every handle-taking function answers
// CB_EHANDLE for any value that is not a live handle, whatever the calling
// thread has done before (its fast path warm), without touching memory that
// belongs to no breaker, and the live breakers' state and counters are left
// as they were. Each batch runs in a forked child, so a crash is a failure of
// that batch and not the end of the run; Windows has no fork, so there (the
// Windows build under Wine) the batches run in the test's own process, with
// the same checks, and a crash ends the run instead.
#ifndef _WIN32
#include <sys/wait.h>
#include <unistd.h>
#endif

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <random>
#include <set>
#include <vector>

#include "capi/fixture.hpp"

namespace {

struct Live {
  cb_handle h;
  int state;
  cb_stats stats;
};

// Breakers in every state and kind, in two registries, so that made-up
// values land next to quiet, loud, recorded, open and free slots.
struct Zoo {
  ManualRegistry manual{2048};
  std::vector<cb_handle> live;
  std::vector<cb_handle> stale;

  Zoo() {
    cb_config quiet = config(3, 1'000'000);
    for (int i = 0; i < 4; ++i) live.push_back(manual.create(quiet));
    const cb_handle run = manual.create(quiet);  // CLOSED with a failure run
    call(run, CB_FAILURE);
    live.push_back(run);
    const cb_handle open = manual.create(quiet);
    for (int i = 0; i < 3; ++i) call(open, CB_FAILURE);
    live.push_back(open);
    const cb_handle half_open = manual.create(config(1, 1000, 2));
    call(half_open, CB_FAILURE);
    live.push_back(half_open);
    const cb_handle tripped = manual.create(quiet);
    REQUIRE(cb_trip(tripped, 5000) == CB_OK);
    live.push_back(tripped);
    const cb_handle forced = manual.create(quiet);
    REQUIRE(cb_force_open(forced) == CB_OK);
    live.push_back(forced);
    const cb_handle disabled = manual.create(quiet);
    REQUIRE(cb_disable(disabled) == CB_OK);
    live.push_back(disabled);
    cb_config window = quiet;
    window.policy = CB_POLICY_COUNT_WINDOW;
    window.window_size = 10;
    window.minimum_calls = 5;
    live.push_back(manual.create(window));
    cb_config slow = quiet;
    slow.slow_call_ns = 1000;
    live.push_back(manual.create(slow));
    manual.advance(2000);  // half_open's OPEN period ends; its next call probes
    admit(half_open);
    for (int i = 0; i < 6; ++i) {
      const cb_handle gone = manual.create(quiet);
      call(gone, CB_SUCCESS);
      REQUIRE(cb_destroy(gone) == CB_OK);
      stale.push_back(gone);
    }
    // The default registry's breakers, warm on this thread's fast path.
    cb_handle d = 0;
    REQUIRE(cb_create(nullptr, nullptr, &quiet, &d) == CB_OK);
    for (int i = 0; i < 8; ++i) call(d, CB_SUCCESS);
    live.push_back(d);
    for (const cb_handle h : live)
      if (cb_state(h) == CB_STATE_CLOSED) call(h, CB_IGNORED);
  }
};

std::vector<Live> snapshot(const std::vector<cb_handle> &live) {
  std::vector<Live> out;
  for (const cb_handle h : live) {
    Live l{h, cb_state(h), {}};
    l.stats.struct_size = sizeof l.stats;
    cb_stats_get(h, &l.stats);
    out.push_back(l);
  }
  return out;
}

bool same(const Live &a, const Live &b) {
  return a.state == b.state && a.stats.admitted == b.stats.admitted &&
         a.stats.rejected == b.stats.rejected && a.stats.successes == b.stats.successes &&
         a.stats.failures == b.stats.failures && a.stats.ignored == b.stats.ignored &&
         a.stats.trips == b.stats.trips &&
         a.stats.consecutive_failures == b.stats.consecutive_failures;
}

// Every handle-taking function on `v`; the first wrong answer, or "".
std::string check_one(cb_handle v, cb_ticket real_ticket) {
  char why[160];
  const auto wrong = [&](const char *call, int got) {
    std::snprintf(why, sizeof why, "%s(0x%016" PRIx64 ") returned %d, not CB_EHANDLE", call, v,
                  got);
    return std::string(why);
  };
  cb_ticket t = 0x5eed;
  int st = cb_allow(v, &t);
  if (st != CB_EHANDLE) return wrong("cb_allow", st);
  if (t != 0x5eed) return wrong("cb_allow (ticket written)", st);
  const cb_ticket tickets[] = {0, v, v * 2, v + (v & ~uint64_t(0xffffff)), real_ticket, ~v};
  for (const cb_ticket ticket : tickets)
    for (const int outcome : {CB_SUCCESS, CB_FAILURE, CB_IGNORED})
      if ((st = cb_done(v, ticket, outcome)) != CB_EHANDLE) return wrong("cb_done", st);
  if ((st = cb_state(v)) != CB_EHANDLE) return wrong("cb_state", st);
  uint64_t ns = 0;
  if ((st = cb_retry_after(v, &ns)) != CB_EHANDLE) return wrong("cb_retry_after", st);
  cb_stats s;
  s.struct_size = sizeof s;
  if ((st = cb_stats_get(v, &s)) != CB_EHANDLE) return wrong("cb_stats_get", st);
  char name[CB_MAX_NAME_BYTES + 1];
  if ((st = cb_name(v, name, sizeof name)) != CB_EHANDLE) return wrong("cb_name", st);
  if ((st = cb_trip(v, 1000)) != CB_EHANDLE) return wrong("cb_trip", st);
  if ((st = cb_force_open(v)) != CB_EHANDLE) return wrong("cb_force_open", st);
  if ((st = cb_disable(v)) != CB_EHANDLE) return wrong("cb_disable", st);
  if ((st = cb_reset(v)) != CB_EHANDLE) return wrong("cb_reset", st);
  if ((st = cb_destroy(v)) != CB_EHANDLE) return wrong("cb_destroy", st);
  return "";
}

// Every value of the batch on a warm fast path; "" if each was refused and
// the live breakers are as they were.
std::string check_batch(const std::vector<cb_handle> &values, const std::vector<cb_handle> &live,
                        cb_handle warm) {
  const cb_ticket real_ticket = admit(warm);  // the fast path is warm (in the child too)
  REQUIRE(cb_done(warm, real_ticket, CB_SUCCESS) == CB_OK);
  const std::vector<Live> before = snapshot(live);
  std::string failure;
  for (const cb_handle v : values)
    if (!(failure = check_one(v, real_ticket)).empty()) break;
  const std::vector<Live> after = snapshot(live);
  for (size_t i = 0; failure.empty() && i < live.size(); ++i)
    if (!same(before[i], after[i]))
      failure = "a live breaker's state or counters changed, handle " + std::to_string(live[i]);
  return failure;
}

#ifdef _WIN32
std::string run_batch(const std::vector<cb_handle> &values, const std::vector<cb_handle> &live,
                      cb_handle warm) {
  return check_batch(values, live, warm);
}
#else
// Runs one batch in a child process; "" if every value was refused and the
// live breakers are as they were.
std::string run_batch(const std::vector<cb_handle> &values, const std::vector<cb_handle> &live,
                      cb_handle warm) {
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    close(fds[0]);
    const std::string failure = check_batch(values, live, warm);
    if (write(fds[1], failure.data(), failure.size()) < 0) _exit(3);
    _exit(failure.empty() ? 0 : 1);
  }
  close(fds[1]);
  std::string report;
  char buf[256];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) report.append(buf, size_t(n));
  close(fds[0]);
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  if (WIFSIGNALED(status))
    return "the child died of signal " + std::to_string(WTERMSIG(status)) +
           " while checking a batch starting with " + std::to_string(values.front());
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return report.empty() ? "the child failed" : report;
  return "";
}
#endif

// The kinds of made-up value the issue names, and more.
std::vector<cb_handle> made_up(const Zoo &zoo) {
  std::vector<cb_handle> v;
  for (uint64_t i = 0; i <= 4096; ++i) v.push_back(i);
  for (unsigned b = 0; b < 64; ++b) {
    v.push_back(uint64_t(1) << b);
    v.push_back(~(uint64_t(1) << b));
    v.push_back((uint64_t(1) << b) - 1);
  }
  for (const cb_handle h : zoo.live) {
    for (unsigned b = 0; b < 64; ++b) v.push_back(h ^ (uint64_t(1) << b));
    // Its index moved to slots nobody uses, in and beyond its registry's run.
    for (const uint64_t move :
         {64ull, 1000ull, 1024ull, 4096ull, 65536ull, 1ull << 20, 0xfff000ull})
      v.push_back((h & ~uint64_t(0xffffff)) | ((h + move) & 0xffffff));
    // Its top bits replaced by those of every other kind of state word: each
    // state, a failure run, trips, an explicit open.
    for (uint64_t nibble = 0; nibble < 16; ++nibble)
      for (const uint64_t aux : {0ull, 1ull, 2ull, 3ull, 0x8001ull, 0xffffull})
        v.push_back((nibble << 60) | (aux << 44) | (h & ((uint64_t(1) << 44) - 1)));
    v.push_back(h & 0xffffff);  // the bare index
    v.push_back(h & ((uint64_t(1) << 44) - 1));
  }
  for (const cb_handle h : zoo.stale) v.push_back(h);
  std::mt19937_64 rng(20261201);
  const uint64_t tag = zoo.live.front() & ~((uint64_t(1) << 44) - 1);
  for (int i = 0; i < 3000; ++i) {
    v.push_back(rng());
    v.push_back(tag | (rng() & ((uint64_t(1) << 44) - 1)));  // a handle's tag, random rest
  }
  // A live handle is not made up: its slot may well be another live breaker's.
  const std::set<cb_handle> live(zoo.live.begin(), zoo.live.end());
  v.erase(std::remove_if(v.begin(), v.end(), [&](cb_handle x) { return live.count(x) != 0; }),
          v.end());
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

}  // namespace

TEST_CASE(
    "made-up handles are refused with CB_EHANDLE by every function, after the fast path is "
    "warm, and change no live breaker") {
  Zoo zoo;
  const std::vector<cb_handle> values = made_up(zoo);
  REQUIRE(values.size() > 12000);
  const size_t batch = 2000;
  for (size_t at = 0; at < values.size(); at += batch) {
    const std::vector<cb_handle> part(values.begin() + long(at),
                                      values.begin() + long(std::min(values.size(), at + batch)));
    const std::string failure = run_batch(part, zoo.live, zoo.live.back());
    INFO("batch of ", part.size(), " values from index ", at);
    CHECK_MESSAGE(failure.empty(), failure);
  }
}

TEST_CASE("a handle is refused after its registry closed, whoever takes the id and slots next") {
  cb_handle h = 0;
  cb_registry *first = nullptr;
  {
    ManualRegistry r(16);
    h = r.create(config(3, 1000));
    call(h, CB_SUCCESS);
    first = r.reg;
  }
  ManualRegistry next(16);  // likely the same id and the same run of slots
  const cb_handle fresh = next.create(config(3, 1000));
  call(fresh, CB_SUCCESS);
  cb_ticket t = 0;
  CHECK(cb_allow(h, &t) == CB_EHANDLE);
  CHECK(cb_state(h) == CB_EHANDLE);
  // The closed registry's pointer names no registry, though its id is reused.
  CHECK(cb_clock_advance(first, 1) == CB_EINVAL);
  CHECK(cb_registry_close(first) == CB_EINVAL);
  CHECK(stats(fresh).admitted == 1);
}
