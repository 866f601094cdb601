// lazybreaker-bench: cb_allow + cb_done through liblazybreaker.so, side by
// side in one run with the floor (a do-nothing pair in a shared library)
// and the baseline (a mutex-based breaker in a shared library), at 1 and 2
// threads (and 16, beyond the CPUs) on ONE breaker, CLOSED and OPEN (and a
// full HALF_OPEN period, next to the coarse clock read a rejection makes),
// and the CLOSED call under each other policy next to the consecutive one, and the CLOSED
// pair, the count-window pair and the OPEN rejection on a shared registry (a file in
// /dev/shm) next to the same on a private one. Every benchmark is
// repeated and only its aggregates are reported; the closing table gives ratios of the medians,
// since these machines are shared and noisy.
#include <benchmark/benchmark.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "bench/peers.h"
#include "lazybreaker/lazybreaker.h"

namespace {

cb_handle g_closed = 0, g_open = 0;
// HALF_OPEN with its one probe slot taken for the whole run.
cb_handle g_half_open = 0;
// The same CLOSED call under each other policy (all outcomes successes).
cb_handle g_count = 0, g_time = 0, g_slow = 0;
lb_mutex_breaker *g_mutex_closed = nullptr, *g_mutex_open = nullptr;
// The window baseline, configured as the count window's defaults are
// (100 calls, minimum 100, 50 %).
lb_r4j_breaker *g_r4j = nullptr;

// The same three on a shared registry (a registry file): CLOSED
// consecutive, CLOSED count window, OPEN. 0 when the file could not be
// opened (their benchmarks then say why).
cb_handle g_shared_closed = 0, g_shared_count = 0, g_shared_open = 0;
std::string g_shared_path, g_shared_error;
cb_registry *g_shared_reg = nullptr;

constexpr int kRepetitions = 5;

void die(const char *what, int st) {
  std::fprintf(stderr, "lazybreaker-bench: %s: %s (%s)\n", what, cb_strerror(st),
               cb_last_error_message());
  std::exit(1);
}

// A registry file in /dev/shm (else $TMPDIR or /tmp), with the private
// run's three breakers configured alike; removed at exit.
void setup_shared() {
  const char *tmp = std::getenv("TMPDIR");
  const std::string dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm"
                          : tmp != nullptr && *tmp      ? tmp
                                                        : "/tmp";
  g_shared_path = dir + "/lazybreaker-bench-" + std::to_string(getpid()) + ".cbr";
  cb_registry_options o;
  cb_registry_options_init(&o);
  o.path = g_shared_path.c_str();
  o.flags = CB_REGISTRY_CREATE | CB_REGISTRY_EXCLUSIVE;
  o.capacity = 16;
  cb_config open_cfg, count_cfg;
  cb_config_init(&open_cfg);
  open_cfg.failure_threshold = 1;
  open_cfg.open_duration_ns = CB_MAX_DURATION_NS;
  cb_config_init(&count_cfg);
  count_cfg.policy = CB_POLICY_COUNT_WINDOW;
  cb_ticket t = 0;
  int st = cb_registry_open(&o, &g_shared_reg);
  if (st == CB_OK) st = cb_create(g_shared_reg, "bench-closed", nullptr, &g_shared_closed);
  if (st == CB_OK) st = cb_create(g_shared_reg, "bench-count-window", &count_cfg, &g_shared_count);
  if (st == CB_OK) st = cb_create(g_shared_reg, "bench-open", &open_cfg, &g_shared_open);
  if (st == CB_OK) st = cb_allow(g_shared_open, &t);
  if (st == CB_OK) st = cb_done(g_shared_open, t, CB_FAILURE);
  if (st == CB_OK && cb_state(g_shared_open) != CB_STATE_OPEN) st = CB_EINTERNAL;
  if (st != CB_OK) {
    g_shared_error = "shared registry " + g_shared_path + ": " + cb_strerror(st) + " (" +
                     cb_last_error_message() + ")";
    std::fprintf(stderr, "lazybreaker-bench: %s: the shared benchmarks are skipped\n",
                 g_shared_error.c_str());
    g_shared_closed = g_shared_count = g_shared_open = 0;
  }
  std::atexit([] {
    if (g_shared_reg != nullptr) cb_registry_close(g_shared_reg);
    if (!g_shared_path.empty()) unlink(g_shared_path.c_str());
  });
}

void setup() {
  cb_registry *reg = nullptr;
  if (int st = cb_registry_open(nullptr, &reg); st != CB_OK) die("cb_registry_open", st);
  if (int st = cb_create(reg, "bench-closed", nullptr, &g_closed); st != CB_OK)
    die("cb_create closed", st);

  // OPEN for the whole run: one failure trips it for a year.
  cb_config cfg;
  cb_config_init(&cfg);
  cfg.failure_threshold = 1;
  cfg.open_duration_ns = CB_MAX_DURATION_NS;
  if (int st = cb_create(reg, "bench-open", &cfg, &g_open); st != CB_OK) die("cb_create open", st);
  cb_ticket t = 0;
  if (int st = cb_allow(g_open, &t); st != CB_OK) die("cb_allow open", st);
  if (int st = cb_done(g_open, t, CB_FAILURE); st != CB_OK) die("cb_done open", st);
  if (cb_state(g_open) != CB_STATE_OPEN) die("tripping the open breaker", cb_state(g_open));

  // Tripped for the shortest open duration; the probe's lease is the
  // configured year.
  if (int st = cb_create(reg, "bench-half-open", &cfg, &g_half_open); st != CB_OK)
    die("cb_create half-open", st);
  if (int st = cb_trip(g_half_open, CB_MIN_OPEN_DURATION_NS); st != CB_OK) die("cb_trip", st);
  const timespec pause{0, 1'000'000};
  nanosleep(&pause, nullptr);
  if (int st = cb_allow(g_half_open, &t); st != CB_OK) die("cb_allow probe", st);
  if (cb_state(g_half_open) != CB_STATE_HALF_OPEN) die("taking the probe", cb_state(g_half_open));

  cb_config_init(&cfg);
  cfg.policy = CB_POLICY_COUNT_WINDOW;
  if (int st = cb_create(reg, "bench-count-window", &cfg, &g_count); st != CB_OK)
    die("cb_create count window", st);
  cb_config_init(&cfg);
  cfg.policy = CB_POLICY_TIME_WINDOW;
  if (int st = cb_create(reg, "bench-time-window", &cfg, &g_time); st != CB_OK)
    die("cb_create time window", st);
  cb_config_init(&cfg);
  cfg.slow_call_ns = 1'000'000'000;
  if (int st = cb_create(reg, "bench-slow-calls", &cfg, &g_slow); st != CB_OK)
    die("cb_create slow calls", st);

  setup_shared();

  g_r4j = lb_r4j_create(100, 100, 50.0, 30'000'000'000ull);
  if (g_r4j == nullptr) die("lb_r4j_create", CB_ENOMEM);
  g_mutex_closed = lb_mutex_create(5, 30'000'000'000ull, 1);
  g_mutex_open = lb_mutex_create(1, CB_MAX_DURATION_NS, 1);
  if (g_mutex_closed == nullptr || g_mutex_open == nullptr) die("lb_mutex_create", CB_ENOMEM);
  if (lb_mutex_allow(g_mutex_open, &t) != CB_OK || lb_mutex_done(g_mutex_open, t, CB_FAILURE) ||
      lb_mutex_state(g_mutex_open) != CB_STATE_OPEN)
    die("tripping the open mutex breaker", CB_EINTERNAL);
}

// CLOSED: one admitted call reported successful per iteration, through
// `allow` and `done` (each a call into a shared library).
template <typename Allow, typename Done>
void closed_pairs(benchmark::State &state, Allow allow, Done done, const char *failure) {
  cb_ticket t = 0;
  int bad = 0;
  for (auto _ : state) {
    if (__builtin_expect(allow(&t) == CB_OK, 1))
      bad |= done(t);
    else
      bad = 1;
  }
  if (bad) state.SkipWithError(failure);
  state.SetItemsProcessed(state.iterations());
}

// OPEN: one rejected allow per iteration (it reads the clock).
template <typename Allow>
void open_rejections(benchmark::State &state, Allow allow, int expected, const char *failure) {
  cb_ticket t = 0;
  int bad = 0;
  for (auto _ : state) bad |= allow(&t) ^ expected;
  if (bad) state.SkipWithError(failure);
  state.SetItemsProcessed(state.iterations());
}

void ours_closed(benchmark::State &state, cb_handle h) {
  closed_pairs(
      state, [h](cb_ticket *t) { return cb_allow(h, t); },
      [h](cb_ticket t) { return cb_done(h, t, CB_SUCCESS); }, "cb_allow/cb_done failed in CLOSED");
}
void BM_ours_closed(benchmark::State &state) { ours_closed(state, g_closed); }
// The same CLOSED call under each other policy.
void BM_count_window(benchmark::State &state) { ours_closed(state, g_count); }
void BM_time_window(benchmark::State &state) { ours_closed(state, g_time); }
void BM_slow_calls(benchmark::State &state) { ours_closed(state, g_slow); }

// The same on a shared registry.
void BM_shared_closed(benchmark::State &state) {
  if (g_shared_closed == 0) return state.SkipWithError(g_shared_error.c_str());
  ours_closed(state, g_shared_closed);
}
void BM_shared_count_window(benchmark::State &state) {
  if (g_shared_count == 0) return state.SkipWithError(g_shared_error.c_str());
  ours_closed(state, g_shared_count);
}

void BM_noop_pair(benchmark::State &state) {
  const cb_handle h = g_closed;
  closed_pairs(
      state, [h](cb_ticket *t) { return lb_noop_allow(h, t); },
      [h](cb_ticket t) { return lb_noop_done(h, t, CB_SUCCESS); }, "noop failed");
}

void BM_mutex_closed(benchmark::State &state) {
  lb_mutex_breaker *const b = g_mutex_closed;
  closed_pairs(
      state, [b](cb_ticket *t) { return lb_mutex_allow(b, t); },
      [b](cb_ticket t) { return lb_mutex_done(b, t, CB_SUCCESS); },
      "mutex breaker failed in CLOSED");
}

void BM_r4j_window(benchmark::State &state) {
  lb_r4j_breaker *const b = g_r4j;
  closed_pairs(
      state, [b](cb_ticket *t) { return lb_r4j_allow(b, t); },
      [b](cb_ticket t) { return lb_r4j_done(b, t, CB_SUCCESS); }, "r4j breaker failed in CLOSED");
}

void BM_ours_open(benchmark::State &state) {
  const cb_handle h = g_open;
  open_rejections(
      state, [h](cb_ticket *t) { return cb_allow(h, t); }, CB_REJECTED,
      "cb_allow did not reject in OPEN");
}

void BM_shared_open(benchmark::State &state) {
  const cb_handle h = g_shared_open;
  if (h == 0) return state.SkipWithError(g_shared_error.c_str());
  open_rejections(
      state, [h](cb_ticket *t) { return cb_allow(h, t); }, CB_REJECTED,
      "cb_allow did not reject in OPEN (shared)");
}

void BM_half_open_full(benchmark::State &state) {
  const cb_handle h = g_half_open;
  open_rejections(
      state, [h](cb_ticket *t) { return cb_allow(h, t); }, CB_REJECTED,
      "cb_allow did not reject in a full HALF_OPEN period");
}

// What an OPEN rejection far from its deadline reads: the coarse clock.
void BM_coarse_clock(benchmark::State &state) {
  for (auto _ : state) {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    benchmark::DoNotOptimize(ts);
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_noop_allow(benchmark::State &state) {
  const cb_handle h = g_open;
  open_rejections(
      state, [h](cb_ticket *t) { return lb_noop_allow(h, t); }, CB_OK, "noop failed");
}

void BM_mutex_open(benchmark::State &state) {
  lb_mutex_breaker *const b = g_mutex_open;
  open_rejections(
      state, [b](cb_ticket *t) { return lb_mutex_allow(b, t); }, CB_REJECTED,
      "mutex breaker did not reject in OPEN");
}

void configure(benchmark::internal::Benchmark *b) {
  b->Threads(1)->Threads(2)->UseRealTime()->Repetitions(kRepetitions)->ReportAggregatesOnly(true);
}

BENCHMARK(BM_ours_closed)->Apply(configure);
BENCHMARK(BM_noop_pair)->Apply(configure);
BENCHMARK(BM_mutex_closed)->Apply(configure);
BENCHMARK(BM_ours_open)->Apply(configure);
BENCHMARK(BM_half_open_full)->Apply(configure);
BENCHMARK(BM_coarse_clock)->Apply(configure);
BENCHMARK(BM_noop_allow)->Apply(configure);
BENCHMARK(BM_mutex_open)->Apply(configure);
BENCHMARK(BM_count_window)->Apply(configure);
BENCHMARK(BM_time_window)->Apply(configure);
BENCHMARK(BM_slow_calls)->Apply(configure);
BENCHMARK(BM_r4j_window)->Apply(configure);
BENCHMARK(BM_shared_closed)->Apply(configure);
BENCHMARK(BM_shared_count_window)->Apply(configure);
BENCHMARK(BM_shared_open)->Apply(configure);
// More threads than a small machine has CPUs, as a thread-per-request
// server runs: each still counts in cells of its own.
constexpr int kManyThreads = 16;
void configure_many(benchmark::internal::Benchmark *b) {
  b->Threads(kManyThreads)->UseRealTime()->Repetitions(kRepetitions)->ReportAggregatesOnly(true);
}
BENCHMARK(BM_ours_closed)->Apply(configure_many);
BENCHMARK(BM_noop_pair)->Apply(configure_many);

// The console table as usual, and the medians kept for the ratio table.
class RatioReporter : public benchmark::ConsoleReporter {
 public:
  struct Median {
    double ns_per_op;  // wall time per operation, all threads together
    double ops_per_s;  // throughput, all threads together
  };

  void ReportRuns(const std::vector<Run> &runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run &r : runs) {
      if (r.error_occurred) continue;
      const bool median = r.run_type == Run::RT_Aggregate && r.aggregate_name == "median";
      // A single repetition (--benchmark_repetitions=1) reports no median.
      const bool single = r.run_type == Run::RT_Iteration && r.repetitions <= 1;
      if (!median && !single) continue;
      const auto it = r.counters.find("items_per_second");
      const double ops = it != r.counters.end() ? double(it->second) : 0.0;
      medians_[{r.run_name.function_name, int(r.threads)}] = {
          ops > 0 ? 1e9 / ops : r.GetAdjustedRealTime(), ops};
    }
  }

  const Median *get(const char *fn, int threads) const {
    const auto it = medians_.find({fn, threads});
    return it == medians_.end() ? nullptr : &it->second;
  }

  void summary() const {
    std::printf(
        "\nMedians (ns per operation = wall time / all threads' operations; an operation is\n"
        "allow+done in CLOSED, one rejected allow in OPEN):\n\n");
    std::printf("%-24s %12s %12s %14s %14s\n", "benchmark", "1T ns/op", "2T ns/op", "1T Mops/s",
                "2T Mops/s");
    for (const char *fn : {"BM_ours_closed", "BM_noop_pair", "BM_mutex_closed", "BM_ours_open",
                           "BM_half_open_full", "BM_coarse_clock", "BM_noop_allow", "BM_mutex_open",
                           "BM_count_window", "BM_time_window", "BM_slow_calls", "BM_r4j_window",
                           "BM_shared_closed", "BM_shared_count_window", "BM_shared_open"}) {
      const Median *a = get(fn, 1), *b = get(fn, 2);
      std::printf("%-24s %12.2f %12.2f %14.1f %14.1f\n", fn, a ? a->ns_per_op : 0.0,
                  b ? b->ns_per_op : 0.0, a ? a->ops_per_s / 1e6 : 0.0,
                  b ? b->ops_per_s / 1e6 : 0.0);
    }

    std::printf("\nRatios of medians (the bound the design expects in the last column):\n\n");
    std::printf("%-52s %9s %12s\n", "ratio", "measured", "expected");
    // Time ratio: ours over the floor, lower is better.
    auto time_ratio = [&](const char *label, const char *num, const char *den, int threads,
                          const char *target) {
      const Median *n = get(num, threads), *d = get(den, threads);
      if (n && d && d->ns_per_op > 0)
        std::printf("%-52s %8.2fx %12s\n", label, n->ns_per_op / d->ns_per_op, target);
      else
        std::printf("%-52s %9s %12s\n", label, "n/a", target);
    };
    // Throughput ratio: higher is better.
    auto tput_ratio = [&](const char *label, const char *num, int tn, const char *den, int td,
                          const char *target) {
      const Median *n = get(num, tn), *d = get(den, td);
      if (n && d && d->ops_per_s > 0)
        std::printf("%-52s %8.2fx %12s\n", label, n->ops_per_s / d->ops_per_s, target);
      else
        std::printf("%-52s %9s %12s\n", label, "n/a", target);
    };
    time_ratio("CLOSED ours/noop time, 1T", "BM_ours_closed", "BM_noop_pair", 1, "<= 1.5x");
    time_ratio("CLOSED ours/noop time, 2T", "BM_ours_closed", "BM_noop_pair", 2, "");
    time_ratio("CLOSED ours/noop time, 16T (more threads than CPUs)", "BM_ours_closed",
               "BM_noop_pair", kManyThreads, "");
    tput_ratio("CLOSED ours 2T/1T throughput", "BM_ours_closed", 2, "BM_ours_closed", 1, ">= 1.8x");
    tput_ratio("CLOSED noop 2T/1T throughput (machine's ceiling)", "BM_noop_pair", 2,
               "BM_noop_pair", 1, "");
    tput_ratio("CLOSED mutex 2T/1T throughput", "BM_mutex_closed", 2, "BM_mutex_closed", 1, "");
    tput_ratio("CLOSED ours/mutex throughput, 1T", "BM_ours_closed", 1, "BM_mutex_closed", 1,
               ">= 2x");
    tput_ratio("CLOSED ours/mutex throughput, 2T", "BM_ours_closed", 2, "BM_mutex_closed", 2,
               ">= 10x");
    time_ratio("OPEN ours/noop time, 1T", "BM_ours_open", "BM_noop_allow", 1, "");
    time_ratio("OPEN ours/coarse clock read time, 1T", "BM_ours_open", "BM_coarse_clock", 1,
               "<= 2x");
    time_ratio("full HALF_OPEN ours/coarse clock read time, 1T", "BM_half_open_full",
               "BM_coarse_clock", 1, "");
    tput_ratio("OPEN ours 2T/1T throughput", "BM_ours_open", 2, "BM_ours_open", 1, "");
    tput_ratio("OPEN ours/mutex throughput, 1T", "BM_ours_open", 1, "BM_mutex_open", 1, "");
    tput_ratio("OPEN ours/mutex throughput, 2T", "BM_ours_open", 2, "BM_mutex_open", 2, "");

    std::printf(
        "\nEach policy's CLOSED allow+done (successes) against the consecutive policy's:\n\n");
    for (const char *fn : {"BM_count_window", "BM_time_window", "BM_slow_calls"}) {
      for (int threads : {1, 2}) {
        const std::string label =
            std::string(fn + 3) + " / consecutive time, " + std::to_string(threads) + "T";
        time_ratio(label.c_str(), fn, "BM_ours_closed", threads, "");
      }
    }
    tput_ratio("count_window / mutex throughput, 2T", "BM_count_window", 2, "BM_mutex_closed", 2,
               "");
    // One window breaker, its 2 threads against its 1: each thread counts in its own cells.
    tput_ratio("count_window 2T/1T throughput", "BM_count_window", 2, "BM_count_window", 1,
               ">= 1.8x");
    tput_ratio("time_window 2T/1T throughput", "BM_time_window", 2, "BM_time_window", 1, ">= 1.8x");
    std::printf(
        "\nEach window policy's CLOSED allow+done (successes) against the\n"
        "resilience4j-shaped window (a lock around a ring and running totals):\n\n");
    for (const char *fn : {"BM_count_window", "BM_time_window", "BM_slow_calls"}) {
      for (int threads : {1, 2}) {
        const std::string label =
            std::string(fn + 3) + " / r4j throughput, " + std::to_string(threads) + "T";
        tput_ratio(label.c_str(), fn, threads, "BM_r4j_window", threads,
                   threads == 1 ? ">= 3x" : ">= 10x");
      }
    }
    tput_ratio("r4j window 2T/1T throughput", "BM_r4j_window", 2, "BM_r4j_window", 1, "");

    std::printf(
        "\nA shared registry (a file in /dev/shm) against a private one, the same\n"
        "breaker and calls (lower is better; a shared file should cost nothing more):\n\n");
    const struct {
      const char *label, *shared, *priv;
    } pairs[] = {{"CLOSED allow+done", "BM_shared_closed", "BM_ours_closed"},
                 {"count_window allow+done", "BM_shared_count_window", "BM_count_window"},
                 {"OPEN rejection", "BM_shared_open", "BM_ours_open"}};
    std::printf("%-30s %14s %14s %9s\n", "shared / private time", "private ns/op", "shared ns/op",
                "ratio");
    for (const auto &p : pairs) {
      for (int threads : {1, 2}) {
        const Median *sh = get(p.shared, threads), *pr = get(p.priv, threads);
        const std::string label = std::string(p.label) + ", " + std::to_string(threads) + "T";
        if (sh && pr && pr->ns_per_op > 0)
          std::printf("%-30s %14.2f %14.2f %8.2fx\n", label.c_str(), pr->ns_per_op, sh->ns_per_op,
                      sh->ns_per_op / pr->ns_per_op);
        else
          std::printf("%-30s %14s %14s %9s\n", label.c_str(), "n/a", "n/a", "n/a");
      }
    }
  }

 private:
  std::map<std::pair<std::string, int>, Median> medians_;
};

}  // namespace

int main(int argc, char **argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  setup();
  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  reporter.summary();
  benchmark::Shutdown();
  return 0;
}
