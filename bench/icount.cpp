// lazybreaker-icount N [MODE]: calls cb_allow + cb_done N times on one
// breaker, then the do-nothing pair N times, for callgrind-count.sh to count
// the instructions of each function's body under callgrind (statistics
// counting, as always). MODE is one of
//   consecutive (the default), count_window, time_window, slow_calls:
//     CLOSED, successful outcomes, under that policy;
//   count_window_failures, time_window_failures: failures until the trip,
//     then cb_reset (not counted) and again, under that window;
//   open: cb_allow alone on an OPEN breaker far from its deadline (rejected);
//   half_open_full: cb_allow alone on a HALF_OPEN breaker whose one probe
//     slot is taken, far from the lease's end (rejected);
//   shared_MODE (shared_consecutive, shared_count_window, shared_open, ...):
//     MODE on a shared registry, a fresh registry file in /dev/shm (else
//     $TMPDIR or /tmp), removed at the end.
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "bench/peers.h"
#include "lazybreaker/lazybreaker.h"

namespace {

enum class Mode { Closed, Failures, Open, HalfOpenFull };

// Puts `h` (open duration 1 h) into HALF_OPEN with its one probe slot taken.
bool take_the_probe(cb_handle h) {
  if (cb_trip(h, CB_MIN_OPEN_DURATION_NS) != CB_OK) return false;
  const timespec pause{0, 1'000'000};  // well past the 1 us open duration
  nanosleep(&pause, nullptr);
  cb_ticket probe = 0;
  return cb_allow(h, &probe) == CB_OK && cb_state(h) == CB_STATE_HALF_OPEN;
}

// Opens a private registry, or with `shared` a fresh registry file (whose
// path goes to *path).
int open_registry(bool shared, std::string *path, cb_registry **reg) {
  if (!shared) return cb_registry_open(nullptr, reg);
  const char *tmp = std::getenv("TMPDIR");
  *path = std::string(access("/dev/shm", W_OK) == 0 ? "/dev/shm"
                      : tmp != nullptr && *tmp      ? tmp
                                                    : "/tmp") +
          "/lazybreaker-icount-" + std::to_string(getpid()) + ".cbr";
  cb_registry_options o;
  cb_registry_options_init(&o);
  o.path = path->c_str();
  o.flags = CB_REGISTRY_CREATE | CB_REGISTRY_EXCLUSIVE;
  o.capacity = 16;
  return cb_registry_open(&o, reg);
}

}  // namespace

int main(int argc, char **argv) {
  const char *mode_name = argc == 3 ? argv[2] : "consecutive";
  const bool shared = std::strncmp(mode_name, "shared_", 7) == 0;
  if (shared) mode_name += 7;
  cb_config cfg;
  cb_config_init(&cfg);
  Mode mode = Mode::Closed;
  if (std::strcmp(mode_name, "count_window") == 0)
    cfg.policy = CB_POLICY_COUNT_WINDOW;
  else if (std::strcmp(mode_name, "time_window") == 0)
    cfg.policy = CB_POLICY_TIME_WINDOW;
  else if (std::strcmp(mode_name, "slow_calls") == 0)
    cfg.slow_call_ns = 1'000'000'000;
  else if (std::strcmp(mode_name, "count_window_failures") == 0)
    cfg.policy = CB_POLICY_COUNT_WINDOW, mode = Mode::Failures;
  else if (std::strcmp(mode_name, "time_window_failures") == 0)
    cfg.policy = CB_POLICY_TIME_WINDOW, mode = Mode::Failures;
  else if (std::strcmp(mode_name, "open") == 0)
    mode = Mode::Open;
  else if (std::strcmp(mode_name, "half_open_full") == 0)
    mode = Mode::HalfOpenFull;
  else if (std::strcmp(mode_name, "consecutive") != 0)
    argc = 0;
  if (argc != 2 && argc != 3) {
    std::fprintf(stderr,
                 "usage: %s N "
                 "[[shared_]consecutive|count_window|time_window|slow_calls|"
                 "count_window_failures|time_window_failures|open|half_open_full]\n",
                 argv[0]);
    return 2;
  }
  cfg.open_duration_ns = 3'600'000'000'000ull;
  const long n = std::strtol(argv[1], nullptr, 10);
  cb_registry *reg = nullptr;
  cb_handle h = 0;
  std::string path;
  if (open_registry(shared, &path, &reg) != CB_OK || cb_create(reg, nullptr, &cfg, &h) != CB_OK) {
    std::fprintf(stderr, "lazybreaker-icount: %s\n", cb_last_error_message());
    if (!path.empty()) unlink(path.c_str());
    return 1;
  }
  struct RemoveFile {
    const std::string &path;
    ~RemoveFile() {
      if (!path.empty()) unlink(path.c_str());
    }
  } remove_file{path};
  int bad = 0;
  if (mode == Mode::Closed) {
    for (long i = 0; i < n; ++i) {
      cb_ticket t = 0;
      bad |= cb_allow(h, &t);
      bad |= cb_done(h, t, CB_SUCCESS);
    }
  } else if (mode == Mode::Failures) {
    // Failures until the trip, then cb_reset (not counted) and again.
    for (long i = 0; i < n; ++i) {
      cb_ticket t = 0;
      bad |= cb_allow(h, &t);
      bad |= cb_done(h, t, CB_FAILURE);
      if (cb_state(h) == CB_STATE_OPEN) bad |= cb_reset(h);
    }
  } else {
    if (mode == Mode::Open ? cb_trip(h, cfg.open_duration_ns) != CB_OK : !take_the_probe(h)) {
      std::fprintf(stderr, "lazybreaker-icount: could not set up %s\n", mode_name);
      return 1;
    }
    for (long i = 0; i < n; ++i) {
      cb_ticket t = 0;
      bad |= cb_allow(h, &t) != CB_REJECTED;
    }
  }
  for (long i = 0; i < n; ++i) {
    cb_ticket t = 0;
    bad |= lb_noop_allow(h, &t);
    bad |= lb_noop_done(h, t, CB_SUCCESS);
  }
  cb_stats s;
  s.struct_size = sizeof s;
  const bool counted =
      cb_stats_get(h, &s) == CB_OK &&
      (mode == Mode::Closed ? cb_state(h) == CB_STATE_CLOSED && s.admitted == uint64_t(n) &&
                                  s.successes == uint64_t(n)
       : mode == Mode::Failures ? s.failures == uint64_t(n) && s.trips > 0
                                : s.rejected == uint64_t(n));
  if (bad || !counted) {
    std::fprintf(stderr, "lazybreaker-icount: the calls did not all go as %s expects\n", mode_name);
    return 1;
  }
  return 0;
}
