// lazybreaker-icount N [POLICY]: calls cb_allow + cb_done N times on one
// CLOSED breaker with successful outcomes (statistics counting, as always),
// then the do-nothing pair N times, for callgrind-count.sh to count the
// instructions of each function's body under callgrind. POLICY is
// consecutive (the default), count_window, time_window or slow_calls.
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "bench/peers.h"
#include "lazybreaker/lazybreaker.h"

int main(int argc, char **argv) {
  const char *policy = argc == 3 ? argv[2] : "consecutive";
  cb_config cfg;
  cb_config_init(&cfg);
  if (std::strcmp(policy, "count_window") == 0)
    cfg.policy = CB_POLICY_COUNT_WINDOW;
  else if (std::strcmp(policy, "time_window") == 0)
    cfg.policy = CB_POLICY_TIME_WINDOW;
  else if (std::strcmp(policy, "slow_calls") == 0)
    cfg.slow_call_ns = 1'000'000'000;
  else if (std::strcmp(policy, "consecutive") != 0)
    argc = 0;
  if (argc != 2 && argc != 3) {
    std::fprintf(stderr, "usage: %s N [consecutive|count_window|time_window|slow_calls]\n",
                 argv[0]);
    return 2;
  }
  const long n = std::strtol(argv[1], nullptr, 10);
  cb_registry *reg = nullptr;
  cb_handle h = 0;
  if (cb_registry_open(nullptr, &reg) != CB_OK || cb_create(reg, nullptr, &cfg, &h) != CB_OK) {
    std::fprintf(stderr, "cb_create: %s\n", cb_last_error_message());
    return 1;
  }
  int bad = 0;
  for (long i = 0; i < n; ++i) {
    cb_ticket t = 0;
    bad |= cb_allow(h, &t);
    bad |= cb_done(h, t, CB_SUCCESS);
  }
  for (long i = 0; i < n; ++i) {
    cb_ticket t = 0;
    bad |= lb_noop_allow(h, &t);
    bad |= lb_noop_done(h, t, CB_SUCCESS);
  }
  cb_stats s;
  s.struct_size = sizeof s;
  if (bad || cb_state(h) != CB_STATE_CLOSED || cb_stats_get(h, &s) != CB_OK ||
      s.admitted != uint64_t(n) || s.successes != uint64_t(n)) {
    std::fprintf(stderr, "lazybreaker-icount: the calls did not all succeed in CLOSED\n");
    return 1;
  }
  return 0;
}
