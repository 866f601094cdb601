// From the layers' answers to the C ABI's statuses and messages, and from a
// handle to the registry and slot it names: what every noun's functions in
// capi/ share.
#pragma once

#include "core/breaker.hpp"
#include "lazybreaker/lazybreaker.h"
#include "registry/registry.hpp"

namespace lazybreaker::capi {

// A registry's answer as a status; `what` names the function for the message.
int status_to_code(registry::Status s, const char *what) noexcept;
// The core's answer as a status, for the breaker `h`.
int result_to_code(core::Result r, cb_handle h, const char *what) noexcept;
// CB_EHANDLE with a message naming `h`.
[[gnu::cold]] int bad_handle(cb_handle h, const char *what) noexcept;
// A state as cb_state reports it.
int public_state(core::State s) noexcept;

// The registry and slot a handle names, if its breaker is alive and its
// registry open; the slot's state word then checks the incarnation again.
struct Target {
  registry::Registry *reg;
  uint32_t index;
};
inline bool resolve(cb_handle h, Target *t) noexcept {
  t->reg = registry::Registry::holding(h, &t->index);
  return t->reg != nullptr;
}

}  // namespace lazybreaker::capi
