// lazybreaker-scale [N] [POLICY]: the footprint of many breakers in one
// registry, measured as a user would: RSS (/proc/self/statm) before and
// after creating N breakers (default 1,000,000) with distinct 32-character
// names, then after 16 threads have each called every breaker once
// (allow + done, success), and the time to create and to destroy them all
// (wall clock and the thread's CPU time), with the library's thread count
// (it creates none). POLICY is consecutive
// (the default) or count_window (window_size 100: 25 buckets of 4).
// Prints one table; exits 1 if a call fails.
#include <time.h>
#include <unistd.h>

#include <dirent.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "lazybreaker/lazybreaker.h"

namespace {

long page_size() { return sysconf(_SC_PAGESIZE); }

// Resident bytes of this process.
long rss() {
  long size = 0, resident = 0;
  FILE *f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr || std::fscanf(f, "%ld %ld", &size, &resident) != 2) resident = -1;
  if (f != nullptr) std::fclose(f);
  return resident * page_size();
}

int threads_now() {
  int n = 0;
  if (DIR *d = opendir("/proc/self/task")) {
    while (const dirent *e = readdir(d)) n += e->d_name[0] != '.';
    closedir(d);
  }
  return n;
}

double seconds(clockid_t clock = CLOCK_MONOTONIC) {
  timespec ts;
  clock_gettime(clock, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

// The CPU time of this thread, kernel time (page faults) included: on a
// machine shared with other work it tells the cost apart from the waits.
double cpu_seconds() { return seconds(CLOCK_THREAD_CPUTIME_ID); }

}  // namespace

int main(int argc, char **argv) {
  const long n = argc > 1 ? std::strtol(argv[1], nullptr, 10) : 1'000'000;
  const bool window = argc > 2 && std::strcmp(argv[2], "count_window") == 0;
  if (n <= 0 || n > long(CB_MAX_CAPACITY) ||
      (argc > 2 && !window && std::strcmp(argv[2], "consecutive") != 0)) {
    std::fprintf(stderr, "usage: %s [N <= %u] [consecutive|count_window]\n", argv[0],
                 CB_MAX_CAPACITY);
    return 2;
  }
  constexpr int kThreads = 16;
  constexpr size_t kNameBytes = 32;
  const int threads_before = threads_now();
  // The names exist before the first measurement: they are the caller's.
  std::vector<char> names(size_t(n) * (kNameBytes + 1));
  for (long i = 0; i < n; ++i)
    std::snprintf(&names[size_t(i) * (kNameBytes + 1)], kNameBytes + 1, "downstream-host-%016u",
                  unsigned(i));
  std::vector<cb_handle> handles(static_cast<size_t>(n));
  cb_config cfg;
  cb_config_init(&cfg);
  if (window) cfg.policy = CB_POLICY_COUNT_WINDOW;

  const long rss_empty = rss();
  cb_registry_options o;
  cb_registry_options_init(&o);
  o.capacity = uint32_t(n);
  cb_registry *reg = nullptr;
  if (cb_registry_open(&o, &reg) != CB_OK) {
    std::fprintf(stderr, "cb_registry_open: %s\n", cb_last_error_message());
    return 1;
  }
  const long rss_open = rss();
  const double t0 = seconds(), c0 = cpu_seconds();
  for (long i = 0; i < n; ++i)
    if (cb_create(reg, &names[size_t(i) * (kNameBytes + 1)], &cfg, &handles[size_t(i)]) != CB_OK) {
      std::fprintf(stderr, "cb_create: %s\n", cb_last_error_message());
      return 1;
    }
  const double created_s = seconds() - t0, created_cpu_s = cpu_seconds() - c0;
  const long rss_rest = rss();

  std::vector<std::thread> pool;
  bool bad = false;
  std::vector<char> failed(kThreads, 0);
  for (int t = 0; t < kThreads; ++t)
    pool.emplace_back([&, t] {
      for (long i = 0; i < n; ++i) {
        cb_ticket k = 0;
        if (cb_allow(handles[size_t(i)], &k) != CB_OK ||
            cb_done(handles[size_t(i)], k, CB_SUCCESS) != CB_OK)
          failed[size_t(t)] = 1;
      }
    });
  for (auto &t : pool) t.join();
  for (char f : failed) bad |= f != 0;
  const long rss_called = rss();
  const int library_threads = threads_now() - threads_before;

  const double t1 = seconds(), c1 = cpu_seconds();
  for (long i = 0; i < n; ++i) bad |= cb_destroy(handles[size_t(i)]) != CB_OK;
  const double destroyed_s = seconds() - t1, destroyed_cpu_s = cpu_seconds() - c1;
  cb_registry_close(reg);

  const double per = 1.0 / double(n);
  std::printf("\nFootprint of %ld %s breakers with distinct %zu-byte names, one registry:\n\n", n,
              window ? "count-window" : "consecutive", kNameBytes);
  std::printf("%-58s %12s\n", "measure", "value");
  std::printf("%-58s %12.1f\n", "RSS per breaker at rest, bytes (incl. name, registry)",
              double(rss_rest - rss_empty) * per);
  std::printf("%-58s %12.1f\n", "  of which the open registry before any create, bytes",
              double(rss_open - rss_empty) * per);
  std::printf("%-58s %12.1f\n", "RSS per breaker at rest beyond its name, bytes",
              double(rss_rest - rss_empty) * per - double(kNameBytes));
  std::printf("%-58s %12.1f\n", "RSS per breaker after 16 threads called each once, bytes",
              double(rss_called - rss_empty) * per);
  std::printf("%-58s %12.3f\n", "creating them all, s", created_s);
  std::printf("%-58s %12.3f\n", "  of which CPU time of the creating thread, s", created_cpu_s);
  std::printf("%-58s %12.3f\n", "destroying them all, s", destroyed_s);
  std::printf("%-58s %12.3f\n", "  of which CPU time of the destroying thread, s", destroyed_cpu_s);
  std::printf("%-58s %12d\n", "threads created by the library", library_threads);
  return bad || library_threads != 0 ? 1 : 0;
}
