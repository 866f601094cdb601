package gobench

// The C library's own create of a million named breakers, in one cgo call:
// the figure the binding's NewCircuitBreaker is held to.

/*
#cgo pkg-config: lazybreaker
#include <stdio.h>
#include <lazybreaker/lazybreaker.h>

static cb_registry *lb_bench_create_million(unsigned n) {
  cb_registry_options o;
  cb_registry_options_init(&o);
  o.capacity = n;
  cb_registry *reg = NULL;
  if (cb_registry_open(&o, &reg) != CB_OK) return NULL;
  cb_config cfg;
  cb_config_init(&cfg);
  char name[32];
  for (unsigned i = 0; i < n; i++) {
    cb_handle h;
    snprintf(name, sizeof name, "host-%07u", i);
    if (cb_create(reg, name, &cfg, &h) != CB_OK) {
      cb_registry_close(reg);
      return NULL;
    }
  }
  return reg;
}
*/
import "C"

import "unsafe"

func cCreateMillion(n int) unsafe.Pointer {
	reg := C.lb_bench_create_million(C.uint(n))
	if reg == nil {
		panic("cb_create failed")
	}
	return unsafe.Pointer(reg)
}

func cCloseRegistry(reg unsafe.Pointer) { C.cb_registry_close((*C.cb_registry)(reg)) }
