#include "core/breaker.hpp"

#include <algorithm>

namespace lazybreaker::core {
namespace {

constexpr auto kAcquire = std::memory_order_acquire;
constexpr auto kAcqRel = std::memory_order_acq_rel;
constexpr auto kRelaxed = std::memory_order_relaxed;

// Raises `a` to `v` unless it is already higher. Stamps only grow, so a
// thread that was descheduled with an old clock reading cannot move a newer
// stamp back.
void raise_to(std::atomic<uint64_t> &a, uint64_t v) {
  uint64_t cur = a.load(kRelaxed);
  while (cur < v && !a.compare_exchange_weak(cur, v, kRelaxed)) {
  }
}

uint64_t elapsed_since(uint64_t now, uint64_t then) { return now > then ? now - then : 0; }

Counter counter_for(Outcome o) {
  switch (o) {
    case Outcome::Success:
      return Counter::Successes;
    case Outcome::Failure:
      return Counter::Failures;
    case Outcome::Ignored:
      break;
  }
  return Counter::Ignored;
}

}  // namespace

void Breaker::begin_life(uint32_t incarnation) {
  const uint64_t w = hot_.word.load(kAcquire);
  raise_to(hot_.changed_at, clock_.now());
  hot_.trips.store(0, kRelaxed);
  hot_.word.store(StateWord::pack(incarnation, StateWord::epoch(w) + 1, 0, State::Closed),
                  std::memory_order_release);
}

bool Breaker::end_life(uint32_t incarnation) {
  uint64_t w = hot_.word.load(kAcquire);
  do {
    if (!StateWord::alive_in(w, incarnation)) return false;
  } while (!hot_.word.compare_exchange_weak(
      w, StateWord::pack(incarnation + 1, StateWord::epoch(w) + 1, 0, State::Free), kAcqRel,
      kAcquire));
  return true;
}

uint64_t Breaker::open_duration(uint32_t /*trips_since_close*/) const {
  return cfg_.open_duration_ns();
}

bool Breaker::transition(uint64_t from, uint64_t to, uint64_t at) {
  raise_to(hot_.changed_at, at);
  return hot_.word.compare_exchange_strong(from, to, kAcqRel, kAcquire);
}

bool Breaker::trip(uint64_t from, uint64_t at) {
  const uint32_t trips_since_close =
      StateWord::state(from) == State::Closed
          ? 1
          : uint32_t(std::min<uint64_t>(StateWord::aux(from) + 1, StateWord::kAuxMax));
  if (!transition(from, StateWord::next(from, trips_since_close, State::Open), at)) return false;
  hot_.trips.fetch_add(1, kRelaxed);
  return true;
}

Result Breaker::allow_slow(uint32_t incarnation, const Tally &tally, uint64_t *ticket) {
  for (;;) {
    const uint64_t w = hot_.word.load(kAcquire);
    const State state = StateWord::state(w);
    if (!StateWord::alive_in(w, incarnation)) return Result::WrongIncarnation;
    const uint32_t epoch = StateWord::epoch(w);
    switch (state) {
      case State::Closed:
        *ticket = Ticket::make(epoch, TicketKind::Call);
        tally.add(Counter::Admitted);
        return Result::Ok;
      case State::Disabled:
        *ticket = Ticket::make(epoch, TicketKind::Unguarded);
        tally.add(Counter::Admitted);
        return Result::Ok;
      case State::Open: {
        const uint64_t now = clock_.now();
        const uint64_t opened_at = hot_.changed_at.load(kAcquire);
        if (elapsed_since(now, opened_at) < open_duration(StateWord::aux(w))) break;
        // Whoever wins this, every caller then competes for a probe slot.
        transition(w, StateWord::next(w, StateWord::aux(w), State::HalfOpen), now);
        continue;
      }
      case State::HalfOpen: {
        const uint64_t raw = hot_.probes.load(kAcquire);
        const ProbeLedger ledger = ProbeLedger::read(raw, epoch);
        const uint64_t now = clock_.now();
        if (ledger.in_flight() >= cfg_.half_open_max_calls() ||
            (ledger.outstanding & ProbeLedger::bit(ledger.issued)) != 0) {
          // Every probe slot is taken. If none has moved for the lease, the
          // silent probes count as failed as of the moment it ran out.
          const uint64_t last = hot_.probe_at.load(kAcquire);
          const uint64_t lease = cfg_.half_open_timeout_ns();
          if (ledger.in_flight() > 0 && elapsed_since(now, last) >= lease) {
            trip(w, last + lease);
            continue;
          }
          break;
        }
        // Stamp before claiming, so a caller that finds the slots full never
        // sees a stale lease.
        raise_to(hot_.probe_at, now);
        ProbeLedger next = ledger;
        next.issued = (ledger.issued + 1) & ProbeLedger::kIssuedMask;
        next.outstanding |= ProbeLedger::bit(ledger.issued);
        uint64_t expected = raw;
        if (!hot_.probes.compare_exchange_strong(expected, next.pack(), kAcqRel, kAcquire))
          continue;
        *ticket = Ticket::make(epoch, TicketKind::Probe, ledger.issued);
        tally.add(Counter::Admitted);
        return Result::Ok;
      }
      case State::ForcedOpen:
      case State::Free:
        break;
    }
    tally.add(Counter::Rejected);
    return Result::Rejected;
  }
}

Result Breaker::done_slow(uint64_t w, uint32_t incarnation, const Tally &tally, uint64_t ticket,
                          Outcome outcome) {
  if (!StateWord::alive_in(w, incarnation)) return Result::WrongIncarnation;
  if (!Ticket::well_formed(ticket)) return Result::BadTicket;
  tally.add(counter_for(outcome));
  // An outcome from an earlier period counts in the statistics only.
  if (Ticket::epoch(ticket) != StateWord::epoch(w)) return Result::Ok;
  switch (Ticket::kind(ticket)) {
    case TicketKind::Call:
      return done_closed(w, ticket, outcome);
    case TicketKind::Probe:
      return done_probe(w, ticket, outcome);
    case TicketKind::Unguarded:
    case TicketKind::Invalid:
      break;
  }
  return Result::Ok;
}

Result Breaker::done_closed(uint64_t w, uint64_t ticket, Outcome outcome) {
  for (;;) {
    if (StateWord::state(w) != State::Closed || StateWord::epoch(w) != Ticket::epoch(ticket) ||
        outcome == Outcome::Ignored)
      return Result::Ok;
    const uint32_t run = StateWord::aux(w);
    if (outcome == Outcome::Success) {
      if (run == 0 ||
          hot_.word.compare_exchange_weak(w, StateWord::with_aux(w, 0), kAcqRel, kAcquire))
        return Result::Ok;
      continue;
    }
    if (run + 1 >= cfg_.failure_threshold()) {
      if (trip(w, clock_.now())) return Result::Ok;
      w = hot_.word.load(kAcquire);
      continue;
    }
    if (hot_.word.compare_exchange_weak(w, StateWord::with_aux(w, run + 1), kAcqRel, kAcquire))
      return Result::Ok;
  }
}

Result Breaker::done_probe(uint64_t w, uint64_t ticket, Outcome outcome) {
  if (StateWord::state(w) != State::HalfOpen) return Result::Ok;
  const uint32_t epoch = Ticket::epoch(ticket);
  const uint32_t seq = Ticket::seq(ticket);
  for (;;) {
    uint64_t raw = hot_.probes.load(kAcquire);
    const ProbeLedger ledger = ProbeLedger::read(raw, epoch);
    // Reported before, or its epoch ended: it counts once.
    if (!ledger.owns_bit(seq)) return Result::Ok;
    ProbeLedger next = ledger;
    next.outstanding &= ~ProbeLedger::bit(seq);
    if (outcome == Outcome::Success)
      next.successes = std::min<uint32_t>(ledger.successes + 1, ProbeLedger::kSuccessMask);
    if (!hot_.probes.compare_exchange_weak(raw, next.pack(), kAcqRel, kAcquire)) continue;
    // The state word of a HALF_OPEN epoch never changes but by a transition,
    // so a failed transition below means another outcome already decided it.
    if (outcome == Outcome::Failure) {
      trip(w, clock_.now());
    } else if (outcome == Outcome::Success &&
               next.successes >= cfg_.half_open_success_threshold()) {
      transition(w, StateWord::next(w, 0, State::Closed), clock_.now());
    }
    return Result::Ok;
  }
}

Result Breaker::state(uint32_t incarnation, State *out) const {
  const uint64_t w = hot_.word.load(kAcquire);
  if (!StateWord::alive_in(w, incarnation)) return Result::WrongIncarnation;
  *out = StateWord::state(w);
  return Result::Ok;
}

Result Breaker::consecutive_failures(uint32_t incarnation, uint32_t *out) const {
  const uint64_t w = hot_.word.load(kAcquire);
  if (!StateWord::alive_in(w, incarnation)) return Result::WrongIncarnation;
  *out = StateWord::state(w) == State::Closed ? StateWord::aux(w) : 0;
  return Result::Ok;
}

Result Breaker::retry_after(uint32_t incarnation, uint64_t *out_ns) const {
  const uint64_t w = hot_.word.load(kAcquire);
  const State state = StateWord::state(w);
  if (!StateWord::alive_in(w, incarnation)) return Result::WrongIncarnation;
  uint64_t wait = 0;
  switch (state) {
    case State::ForcedOpen:
      wait = UINT64_MAX;
      break;
    case State::Open: {
      const uint64_t duration = open_duration(StateWord::aux(w));
      const uint64_t elapsed = elapsed_since(clock_.now(), hot_.changed_at.load(kAcquire));
      wait = elapsed >= duration ? 0 : duration - elapsed;
      break;
    }
    case State::HalfOpen: {
      const ProbeLedger ledger = ProbeLedger::read(hot_.probes.load(kAcquire), StateWord::epoch(w));
      if (ledger.in_flight() < cfg_.half_open_max_calls() &&
          (ledger.outstanding & ProbeLedger::bit(ledger.issued)) == 0)
        break;
      // If no probe reports, the lease runs out, the breaker re-opens as of
      // that instant, and a call is admitted once the next open duration has
      // passed.
      const uint64_t lease_end = hot_.probe_at.load(kAcquire) + cfg_.half_open_timeout_ns();
      const uint64_t next_open =
          open_duration(uint32_t(std::min<uint64_t>(StateWord::aux(w) + 1, StateWord::kAuxMax)));
      const uint64_t now = clock_.now();
      const uint64_t admit_at = lease_end + next_open;
      wait = admit_at > now ? admit_at - now : 0;
      break;
    }
    case State::Closed:
    case State::Disabled:
    case State::Free:
      break;
  }
  *out_ns = wait;
  return Result::Ok;
}

Result Breaker::force(uint32_t incarnation, State target) {
  uint64_t w = hot_.word.load(kAcquire);
  for (;;) {
    if (!StateWord::alive_in(w, incarnation)) return Result::WrongIncarnation;
    if (transition(w, StateWord::next(w, 0, target), clock_.now())) return Result::Ok;
    w = hot_.word.load(kAcquire);
  }
}

}  // namespace lazybreaker::core
