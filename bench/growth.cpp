// lazybreaker-growth [MAX_N]: the quiet pair (cb_allow + cb_done, success)
// on a random breaker out of N, one thread, for N = 1, 1,000, 100,000 and
// 1,000,000 (up to MAX_N), beside an array of N mutex breakers of the same
// shape (bench/mutex_breaker.cpp: one std::mutex around state and counts,
// gobreaker's design) called in the same order. Each round walks a
// precomputed random order of 4,000,000 calls; the figures are the median
// of 5 rounds, ours and the baseline's interleaved so that noise on this
// shared machine falls on both; each row runs in a fresh process. What it shows: whether a call
// costs more when its breaker is one of many, that is, how many cache lines and pages a quiet call
// touches (docs/performance.md, "A million breakers"). Prints one table; exits 1 if a call fails.
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "lazybreaker/lazybreaker.h"
#include "peers.h"

namespace {

constexpr size_t kCalls = 4'000'000;
constexpr int kRounds = 5;

uint64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1'000'000'000ull + uint64_t(ts.tv_nsec);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

std::vector<uint32_t> random_order(size_t n) {
  std::mt19937_64 rng(42);
  std::vector<uint32_t> order(kCalls);
  for (auto &i : order) i = uint32_t(rng() % n);
  return order;
}

// ns per pair over `order`, or a negative value if a call failed.
double ours(const std::vector<cb_handle> &handles, const std::vector<uint32_t> &order) {
  const uint64_t start = now_ns();
  for (const uint32_t i : order) {
    cb_ticket t = 0;
    if (cb_allow(handles[i], &t) != CB_OK || cb_done(handles[i], t, CB_SUCCESS) != CB_OK) return -1;
  }
  return double(now_ns() - start) / double(order.size());
}

double mutexes(const std::vector<lb_mutex_breaker *> &breakers,
               const std::vector<uint32_t> &order) {
  const uint64_t start = now_ns();
  for (const uint32_t i : order) {
    cb_ticket t = 0;
    if (lb_mutex_allow(breakers[i], &t) != CB_OK ||
        lb_mutex_done(breakers[i], t, CB_SUCCESS) != CB_OK)
      return -1;
  }
  return double(now_ns() - start) / double(order.size());
}

// One row: false if a call failed.
bool row(size_t n) {
  cb_registry_options o;
  cb_registry_options_init(&o);
  o.capacity = uint32_t(n);
  cb_registry *reg = nullptr;
  cb_config cfg;
  cb_config_init(&cfg);
  if (cb_registry_open(&o, &reg) != CB_OK) return false;
  std::vector<cb_handle> handles(n);
  std::vector<lb_mutex_breaker *> breakers(n);
  for (size_t i = 0; i < n; ++i) {
    if (cb_create(reg, nullptr, &cfg, &handles[i]) != CB_OK) return false;
    breakers[i] = lb_mutex_create(cfg.failure_threshold, cfg.open_duration_ns, 1);
  }
  const std::vector<uint32_t> order = random_order(n);
  std::vector<double> a, b;
  for (int r = 0; r < kRounds; ++r) {
    a.push_back(ours(handles, order));
    b.push_back(mutexes(breakers, order));
  }
  for (lb_mutex_breaker *m : breakers) lb_mutex_destroy(m);
  cb_registry_close(reg);
  if (*std::min_element(a.begin(), a.end()) < 0 || *std::min_element(b.begin(), b.end()) < 0)
    return false;
  const double ours_ns = median(a), theirs_ns = median(b);
  std::printf("| %9zu | %8.1f | %8.1f | %6.2fx |\n", n, ours_ns, theirs_ns, theirs_ns / ours_ns);
  return true;
}

}  // namespace

int main(int argc, char **argv) {
  const long max_n = argc > 1 ? std::strtol(argv[1], nullptr, 10) : 1'000'000;
  std::printf(
      "\nQuiet pair on a random breaker out of N, one thread (ns per allow+done, median of %d "
      "rounds of %zu calls)\n\n",
      kRounds, kCalls);
  std::printf(
      "mutex: an array of N baseline breakers in gobreaker's shape, one mutex each; ratio "
      "= mutex / ours\n\n");
  std::printf("| %9s | %8s | %8s | %7s |\n", "N", "ours", "mutex", "ratio");
  std::printf("|----------:|---------:|---------:|--------:|\n");
  std::fflush(stdout);
  // Each row in a process of its own, as a service opens its registry
  // once: a row's pages are then not the previous rows' (huge pages are
  // given at a page's first touch).
  for (const long n : {1L, 1'000L, 100'000L, 1'000'000L}) {
    if (n > max_n) continue;
    const pid_t child = fork();
    if (child == 0) {
      const bool ok = row(size_t(n));
      std::fflush(stdout);
      _exit(ok ? 0 : 1);
    }
    int status = 0;
    if (child < 0 || waitpid(child, &status, 0) != child || !WIFEXITED(status) ||
        WEXITSTATUS(status) != 0) {
      std::fprintf(stderr, "lazybreaker-growth: the row of N = %ld failed\n", n);
      return 1;
    }
  }
  return 0;
}
