package gobench

// The floor: the same cgo crossings as Acquire and Done (bindings/go's
// fastpath.go: a shim that returns its result by value, then a direct
// call), into two functions that do nothing in a shared library of their
// own (bench/noop.cpp, liblb_bench_noop.so), so "ours / floor" is the price
// of the breaker itself.

/*
#cgo LDFLAGS: -llb_bench_noop
#include <stdint.h>

int lb_noop_allow(uint64_t h, uint64_t *ticket);
int lb_noop_done(uint64_t h, uint64_t ticket, int outcome);

typedef struct lb_go_noop_admission {
  uint64_t ticket;
  uint64_t retry_after_ns;
  int status;
  int state;
} lb_go_noop_admission;

static lb_go_noop_admission lb_go_noop_admit(uint64_t h, int want_wait) {
  lb_go_noop_admission a = {0, 0, 0, 0};
  (void)want_wait;
  a.status = lb_noop_allow(h, &a.ticket);
  return a;
}
*/
import "C"

func floorAcquire(h uint64) (uint64, int) {
	a := C.lb_go_noop_admit(C.uint64_t(h), 0)
	return uint64(a.ticket), int(a.status)
}

func floorDone(h, ticket uint64) int {
	return int(C.lb_noop_done(C.uint64_t(h), C.uint64_t(ticket), 0))
}
