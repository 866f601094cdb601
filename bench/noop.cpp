// Two functions that do nothing, with the signatures of cb_allow and
// cb_done, in a shared library of their own: calling them costs what a
// call into liblazybreaker.so costs (PLT, call, return) and nothing else,
// so "ours / noop" is the price of the breaker itself.
#include "bench/peers.h"

extern "C" {

LB_BENCH_API __attribute__((noinline)) int lb_noop_allow(cb_handle h, cb_ticket *ticket) {
  (void)h;
  (void)ticket;
  return 0;
}

LB_BENCH_API __attribute__((noinline)) int lb_noop_done(cb_handle h, cb_ticket ticket,
                                                        int outcome) {
  (void)h;
  (void)ticket;
  (void)outcome;
  return 0;
}

}  // extern "C"
