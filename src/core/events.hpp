// What the state machine tells the world about its transitions. The core
// only calls this interface; where events go (a registry's queue) is the
// registry's business. It is called after a transition is decided and never
// while anything is held, so no user code can deadlock the breaker.
#pragma once

#include <cstdint>

#include "core/words.hpp"

namespace lazybreaker::core {

enum class Reason : uint32_t {
  None = 0,
  ConsecutiveFailures = 1,  // CLOSED -> OPEN: the failure run reached the threshold
  FailureRate = 2,          // CLOSED -> OPEN: the window's failure rate
  SlowCallRate = 3,         // CLOSED -> OPEN: the window's slow-call rate
  OpenElapsed = 4,          // OPEN -> HALF_OPEN: the open duration passed and a call came
  ProbeFailed = 5,          // HALF_OPEN -> OPEN
  ProbeLeaseExpired = 6,    // HALF_OPEN -> OPEN: a probe stayed silent
  ProbesSucceeded = 7,      // HALF_OPEN -> CLOSED
  Manual = 8,               // cb_force_open, cb_disable, cb_reset
  Tripped = 9,              // cb_trip
  Rejected = 10,            // not a transition: a rejected call (when asked for)
};

struct Transition {
  State from, to;
  Reason reason;
  uint32_t epoch;  // of the new state
  uint64_t at;     // registry clock
};

class EventSink {
 public:
  // Called before a transition's compare-and-swap, so that events queue in
  // the order the transitions happen. 0 = no room (the event is lost).
  virtual uint64_t reserve() noexcept = 0;
  // Exactly one of these follows every reserve().
  virtual void publish(uint64_t token, const Transition &t) noexcept = 0;
  virtual void cancel(uint64_t token) noexcept = 0;
  virtual bool wants_rejections() const noexcept = 0;

 protected:
  ~EventSink() = default;
};

}  // namespace lazybreaker::core
