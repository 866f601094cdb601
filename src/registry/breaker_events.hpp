// Reports one breaker's transitions into its registry's event queue, with the
// breaker's handle and name.
#pragma once

#include "core/events.hpp"
#include "registry/registry.hpp"

namespace lazybreaker::registry {

class BreakerEvents final : public core::EventSink {
 public:
  BreakerEvents(Registry &reg, uint32_t index, uint64_t handle)
      : reg_(reg), index_(index), handle_(handle), mask_(reg.event_mask()) {}

  uint64_t reserve() noexcept override { return mask_ != 0 ? reg_.events().reserve() : 0; }
  void publish(uint64_t token, const core::Transition &t) noexcept override {
    if (mask_ == 0) return;
    if (t.reason != core::Reason::Rejected && (mask_ & kTransitionEvents) == 0) {
      cancel(token);
      return;
    }
    Event e{};
    e.handle = handle_;
    e.at_ns = t.at;
    e.from = uint32_t(t.from);
    e.to = uint32_t(t.to);
    e.reason = uint32_t(t.reason);
    e.epoch = t.epoch;
    // A destroy racing the call may have given the name's space to another
    // breaker: then the event has the handle alone.
    size_t len = 0;
    if (!reg_.name(index_, Handle::incarnation(handle_), e.name, &len)) e.name[0] = '\0';
    reg_.events().publish(token, e);
  }
  void cancel(uint64_t token) noexcept override { reg_.events().cancel(token); }
  bool wants_rejections() const noexcept override { return (mask_ & kRejectionEvents) != 0; }

 private:
  Registry &reg_;
  uint32_t index_;
  uint64_t handle_;
  uint32_t mask_;
};

}  // namespace lazybreaker::registry
