#include "core/breaker.hpp"
#include "core/mix.hpp"

#include <algorithm>
#include <bit>
#include <cmath>

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

uint32_t Config::billionths(double threshold) {
  const double scaled = std::round(threshold * double(kRateScale));
  return scaled < 1 ? 1 : scaled >= double(kRateScale) ? uint32_t(kRateScale) : uint32_t(scaled);
}

void Config::finish() {
  if (half_open_timeout_ns == 0) half_open_timeout_ns = open_duration_ns;
  slow_unit_shift = slow_unit_shift_for(slow_call_ns);
  failure_rate_billionths = billionths(failure_rate_threshold);
  slow_rate_billionths = billionths(slow_call_rate_threshold);
  shape = policy == Policy::TimeWindow ? WindowShape::time(window_duration_ns, window_buckets)
                                       : WindowShape::count(window_size);
  shape.held_limit =
      uint8_t(policy == Policy::TimeWindow    ? HeldSuccesses::kMaxLimit
              : policy == Policy::CountWindow ? std::min(HeldSuccesses::kMaxLimit, window_size / 4)
                                              : 0);
}

void Breaker::begin_life(uint32_t incarnation, const Config &cfg) {
  const uint64_t w = hot_.word.load(kAcquire);
  raise_to(hot_.changed_at, clock_.now());
  hot_.trips.store(0, kRelaxed);
  if (cfg.recorded()) window(cfg).clear();
  hot_.word.store(
      StateWord::pack(incarnation, StateWord::epoch(w) + 1, 0, State::Closed, cfg.recording()),
      std::memory_order_release);
}

bool Breaker::end_life(uint32_t incarnation) {
  uint64_t w = hot_.word.load(kAcquire);
  do {
    if (!StateWord::alive_in(w, incarnation)) return false;
  } while (!hot_.word.compare_exchange_weak(w, StateWord::ended(w), kAcqRel, kAcquire));
  return true;
}

void Breaker::retire() {
  for (uint64_t w = hot_.word.load(kAcquire); StateWord::state(w) != State::Free;
       w = hot_.word.load(kAcquire))
    end_life(StateWord::incarnation(w));
  hot_.changed_at.store(0, kRelaxed);
  hot_.opened_at.store(0, kRelaxed);
  hot_.probe_at.store(0, kRelaxed);
  hot_.probes.store(0, kRelaxed);
  hot_.trips.store(0, kRelaxed);
  hot_.explicit_ns.store(0, kRelaxed);
  hot_.open_period.store(0, kRelaxed);
}

uint64_t Breaker::open_duration(uint64_t w, const Config &cfg) const {
  if (StateWord::explicit_open(w)) return hot_.explicit_ns.load(kRelaxed);
  const uint64_t cap = cfg.open_duration_max_ns != 0 ? cfg.open_duration_max_ns : kLongestOpenNs;
  const uint32_t trips = std::max<uint32_t>(StateWord::trips(w), 1);
  const bool backed_off = cfg.open_backoff_multiplier > 1.0 && trips > 1;
  // A fixed duration is exact to the nanosecond: no double on its way.
  if (!backed_off && cfg.open_jitter <= 0.0) return std::min(cfg.open_duration_ns, cap);
  // Otherwise binary64 arithmetic, within a few units in the last place
  // of the exact product (docs/policies.md).
  double d = double(cfg.open_duration_ns);
  if (backed_off)
    d *= std::pow(cfg.open_backoff_multiplier, double(std::min<uint32_t>(trips - 1, 4096)));
  if (cfg.open_jitter > 0.0) {
    // The same factor for every reader of this OPEN period, a different one
    // for each period, each life and each breaker.
    const uint64_t period = uint64_t(StateWord::incarnation(w)) << 32 | StateWord::epoch(w);
    const double u = double(mix64(mix64(jitter_seed_) ^ period) >> 11) * 0x1.0p-53;
    d *= 1.0 - cfg.open_jitter + 2.0 * cfg.open_jitter * u;
  }
  // (Negative or NaN only from a damaged registry file's configuration.)
  if (!(d >= 0.0 && d < 0x1.0p64)) return cap;
  return std::min(std::max(uint64_t(d), kShortestOpenNs), cap);
}

bool Breaker::transition(uint64_t from, uint64_t to, uint64_t at, Reason reason) {
  // A caller that has already lost the race reserves no event.
  if (hot_.word.load(kAcquire) != from) return false;
  const uint64_t token = events_ != nullptr ? events_->reserve() : 0;
  raise_to(hot_.changed_at, at);
  const bool won = hot_.word.compare_exchange_strong(from, to, kAcqRel, kAcquire);
  if (events_ != nullptr) {
    if (won)
      events_->publish(
          token, {StateWord::state(from), StateWord::state(to), reason, StateWord::epoch(to), at});
    else
      events_->cancel(token);
  }
  return won;
}

bool Breaker::trip(const Config &cfg, uint64_t from, uint64_t at, Reason reason,
                   bool explicit_duration) {
  const uint32_t trips = StateWord::state(from) == State::Closed
                             ? 1
                             : std::min(StateWord::trips(from) + 1, StateWord::kTripsMax);
  const uint64_t to = StateWord::next(
      from, trips | (explicit_duration ? StateWord::kExplicitOpen : 0), State::Open);
  if (hot_.word.load(kAcquire) != from) return false;
  raise_to(hot_.opened_at, at);
  if (!transition(from, to, at, reason)) return false;
  // After the win: a loser's duration (another kind of trip from the same
  // word) must never stand for the winner's period. Until it lands, calls
  // take the general path.
  cache_open_period(to, at, open_duration(to, cfg));
  hot_.trips.fetch_add(1, kRelaxed);
  return true;
}

bool Breaker::close(uint64_t from, uint64_t at, Reason reason) {
  // Empty the window before the new CLOSED period can record into it, and
  // not at all once another thread has made the transition.
  if (hot_.word.load(kAcquire) != from) return false;
  const Config cfg = cfg_.load();
  if (cfg.recorded()) window(cfg).clear();
  return transition(from, StateWord::next(from, 0, State::Closed, cfg.recording()), at, reason);
}

bool Breaker::slow(const Config &cfg, uint64_t ticket, uint64_t now) const {
  if (cfg.slow_call_ns == 0) return false;
  const uint64_t mask = Ticket::start_mask(Ticket::kind(ticket));
  const uint64_t units = ((now >> cfg.slow_unit_shift) - Ticket::start(ticket)) & mask;
  return (units << cfg.slow_unit_shift) > cfg.slow_call_ns;
}

// One loop over the state word; each state's step is the row of
// docs/semantics.md, "What each call does in each state".
Result Breaker::allow(uint32_t incarnation, const Tally &tally, uint64_t *ticket) {
  // CLOSED and DISABLED admit on one field of the config; the others need it whole.
  const uint64_t w0 = hot_.word.load(kAcquire);
  if (StateWord::alive_in(w0, incarnation) && admits_every_call(w0))
    return admit_call(w0, cfg_.slow_call_ns(), tally, ticket);
  // During an outage most calls are rejected: the hot line and the cheap
  // clock are enough for nearly all of them.
  if (StateWord::alive_in(w0, incarnation) && rejects_early(w0)) return reject(w0, tally);
  const Config cfg = cfg_.load();
  for (;;) {
    const uint64_t w = hot_.word.load(kAcquire);
    if (!StateWord::alive_in(w, incarnation)) return Result::WrongIncarnation;
    Step step = Step::Reject;
    switch (StateWord::state(w)) {
      case State::Closed:
      case State::Disabled:
        return admit_call(w, cfg.slow_call_ns, tally, ticket);
      case State::Open:
        step = allow_open(w, cfg);
        break;
      case State::HalfOpen:
        step = allow_half_open(w, cfg, tally, ticket);
        break;
      case State::ForcedOpen:
      case State::Free:
        break;
    }
    if (step == Step::Admitted) return Result::Ok;
    if (step == Step::Reject) return reject(w, tally);
  }
}

Result Breaker::admit_call(uint64_t w, uint64_t slow_call_ns, const Tally &tally,
                           uint64_t *ticket) {
  *ticket = call_ticket(w, call_start(slow_call_ns, slow_call_ns != 0 ? clock_.now() : 0));
  tally.add(Counter::Admitted);
  return Result::Ok;
}

Result Breaker::reject(uint64_t w, const Tally &tally) {
  tally.add(Counter::Rejected);
  if (events_ != nullptr && events_->wants_rejections()) {
    const State state = StateWord::state(w);
    const uint64_t token = events_->reserve();
    events_->publish(token, {state, state, Reason::Rejected, StateWord::epoch(w), clock_.now()});
  }
  return Result::Rejected;
}

void Breaker::install_empty_ledger(uint64_t w, uint64_t seen, uint32_t epoch) {
  if (hot_.word.load(kAcquire) == w)
    hot_.probes.compare_exchange_strong(seen, ProbeLedger::empty(epoch).pack(), kAcqRel, kAcquire);
}

Breaker::Step Breaker::allow_open(uint64_t w, const Config &cfg) {
  const uint64_t opened_at = hot_.opened_at.load(kAcquire);
  const uint64_t duration = open_duration(w, cfg);
  // The period's cached duration went missing (a trip not yet cached, or a
  // slow cache of an older period's overwrote it): cache it again, so the
  // next calls reject early.
  if (!OpenPeriod::tagged(hot_.open_period.load(kRelaxed), StateWord::epoch(w)) &&
      hot_.word.load(kAcquire) == w)
    cache_open_period(w, opened_at, duration);
  // Far from the deadline, the cheap clock is enough to fail fast.
  const uint64_t deadline = opened_at > UINT64_MAX - duration ? UINT64_MAX : opened_at + duration;
  if (surely_before(deadline)) return Step::Reject;
  const uint64_t now = clock_.now();
  if (elapsed_since(now, opened_at) < duration) return Step::Reject;
  // Every contender installs the HALF_OPEN period's empty ledger before it
  // may be published, so no period ever sees an older one's probes (however
  // its tag aliases). Reading the ledger before checking the state makes a
  // late contender's install fail instead of wiping claims already made in
  // the new period.
  install_empty_ledger(w, hot_.probes.load(kAcquire), StateWord::epoch(w) + 1);
  // Whoever wins this, every caller then competes for a probe slot.
  transition(w, StateWord::next(w, StateWord::trips(w), State::HalfOpen), now, Reason::OpenElapsed);
  return Step::Again;
}

Breaker::Step Breaker::allow_half_open(uint64_t w, const Config &cfg, const Tally &tally,
                                       uint64_t *ticket) {
  const uint32_t epoch = StateWord::epoch(w);
  const uint64_t raw = hot_.probes.load(kAcquire);
  if (!ProbeLedger::tagged(raw, epoch)) {
    // Another period's ledger: this view of the state is stale (or, should a
    // ledger ever be lost, install this period's).
    install_empty_ledger(w, raw, epoch);
    return Step::Again;
  }
  const ProbeLedger ledger = ProbeLedger::read(raw, epoch);
  const uint64_t now = clock_.now();
  if (ledger.in_flight() >= cfg.half_open_max_calls) {
    // Every probe slot is taken. If none has moved for the lease, the silent
    // probes count as failed as of the moment it ran out.
    const uint64_t last = hot_.probe_at.load(kAcquire);
    if (ledger.in_flight() > 0 && elapsed_since(now, last) >= cfg.half_open_timeout_ns) {
      trip(cfg, w, last + cfg.half_open_timeout_ns, Reason::ProbeLeaseExpired);
      return Step::Again;
    }
    return Step::Reject;
  }
  // Stamp before claiming, so a caller that finds the slots full never sees
  // a stale lease.
  raise_to(hot_.probe_at, now);
  // A probe still out after 32 later ones were admitted is taken for lost:
  // the new probe takes over its bit, and its report is stale.
  ProbeLedger next = ledger;
  next.issued = (ledger.issued + 1) & ProbeLedger::kIssuedMask;
  next.outstanding |= ProbeLedger::bit(ledger.issued);
  uint64_t expected = raw;
  if (!hot_.probes.compare_exchange_strong(expected, next.pack(), kAcqRel, kAcquire))
    return Step::Again;
  // The claim counts only if the period is still the one it was made in: a
  // caller that read the state before a probe failed must not become a probe
  // of the breaker that failure re-opened.
  if (hot_.word.load(kAcquire) != w) {
    release_probe(epoch, ledger.issued);
    return Step::Again;
  }
  *ticket = Ticket::make(epoch, TicketKind::Probe, ledger.issued, ticket_start(cfg, now));
  tally.add(Counter::Admitted);
  return Step::Admitted;
}

Result Breaker::done(uint32_t incarnation, const Tally &tally, uint64_t ticket, Outcome outcome) {
  const uint64_t w = hot_.word.load(kAcquire);
  if (!StateWord::alive_in(w, incarnation)) return Result::WrongIncarnation;
  if (!Ticket::well_formed(ticket)) return Result::BadTicket;
  // A window policy's outcome in its CLOSED period, from a few fields.
  if (outcome != Outcome::Ignored && StateWord::recording(w) == Recording::Window &&
      Ticket::kind(ticket) == TicketKind::Call && Ticket::epoch(ticket) == StateWord::epoch(w)) {
    tally.add(counter_for(outcome));
    return done_window_outcome(w, outcome == Outcome::Failure);
  }
  const Config cfg = cfg_.load();
  // The clock is read only for what needs it: a time window, slow calls.
  // Without them `now` is 0, which is not a time: a trip reads the clock.
  const uint64_t now = cfg.timed_outcomes() ? clock_.now() : 0;
  const bool is_slow = outcome != Outcome::Ignored && slow(cfg, ticket, now);
  tally.add(counter_for(outcome));
  if (is_slow) tally.add(Counter::Slow);
  // An outcome from an earlier period counts in the statistics only.
  if (Ticket::epoch(ticket) != StateWord::epoch(w)) return Result::Ok;
  switch (Ticket::kind(ticket)) {
    case TicketKind::Call:
      // A quiet count window (quiet_if_clean): a success changes nothing, a
      // failure is recorded in its window.
      if (StateWord::quiet(w) && cfg.policy == Policy::CountWindow)
        return outcome == Outcome::Failure ? done_window_outcome(StateWord::loud(w), true)
                                           : Result::Ok;
      if (StateWord::recorded(w) && StateWord::state(w) == State::Closed &&
          outcome != Outcome::Ignored) {
        const Result r = done_recorded(w, cfg, outcome, is_slow, now);
        if (cfg.policy != Policy::Consecutive) return r;
      }
      return done_closed(w, cfg, ticket, outcome);
    case TicketKind::Probe:
      return done_probe(w, cfg, ticket, outcome, is_slow);
    case TicketKind::Unguarded:
    case TicketKind::Invalid:
      break;
  }
  return Result::Ok;
}

// The consecutive-failures policy.
Result Breaker::done_closed(uint64_t w, const Config &cfg, uint64_t ticket, Outcome outcome) {
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
    if (run + 1 >= cfg.failure_threshold) {
      if (trip(cfg, w, clock_.now(), Reason::ConsecutiveFailures)) return Result::Ok;
      w = hot_.word.load(kAcquire);
      continue;
    }
    if (hot_.word.compare_exchange_weak(w, StateWord::with_aux(w, run + 1), kAcqRel, kAcquire))
      return Result::Ok;
  }
}

// The window policies, and slow-call tracking under any policy.
Result Breaker::done_recorded(uint64_t w, const Config &cfg, Outcome outcome, bool is_slow,
                              uint64_t now) {
  const bool failure = outcome == Outcome::Failure;
  Window win = window(cfg);
  Window::Position at;
  const bool moved = win.record(now, failure, is_slow, &at);
  // A fast success only lowers the rates of a window that holds enough
  // calls and has not moved on, and of a count window even if it has (it
  // takes an older outcome's place: done_window_outcome). Any other outcome
  // is checked: it may be the call that reaches minimum_calls, or older
  // outcomes of a time window may have left.
  const uint32_t warm = StateWord::epoch(w) + 1;
  if (!failure && !is_slow && (!moved || !cfg.shape.by_time) &&
      window_.warm().load(kRelaxed) == warm)
    return Result::Ok;
  return done_judged(w, Judging::of(cfg), at, cfg.timed_outcomes() ? now : 0);
}

Result Breaker::done_window_outcome(uint64_t w, bool failure) {
  // The caller checked the ticket against `w`; a breaker destroyed since
  // (whose window block another may hold now) takes none of this thread's
  // held successes, nor this outcome, into a window. A count window that
  // went quiet meanwhile is full of successes, so a success changes nothing
  // there, and a failure makes it loud again first.
  if (uint64_t now_w = hot_.word.load(kAcquire); now_w != w) {
    if (!failure || now_w != StateWord::quieted(w) ||
        (!hot_.word.compare_exchange_strong(now_w, w, kAcqRel, kAcquire) && now_w != w))
      return Result::Ok;
  }
  const WindowShape shape = cfg_.window_shape();
  // Only a time window places an outcome by its time, and a success by the
  // cheap clock where its buckets are wider than that clock's slack: it may
  // then land in the bucket before its own, never after (docs/policies.md,
  // bounds).
  const bool cheap = !failure && shape.bucket_width > clock_.coarse_slack_ns;
  const uint64_t now = !shape.by_time ? 0 : cheap ? clock_.earliest_now() : clock_.now();
  Window win(window_, shape);
  Window::Position at;
  const bool moved = settle_held(w, win, now, failure ? 0 : 1, failure, &at);
  if (failure && !shape.by_time) stay_loud(w);
  // A success is judged only where it may raise the failure rate of a
  // window known to hold minimum_calls: in a time window that moved on,
  // whose older outcomes may have left. In a count window it takes the
  // place of an older outcome in the last N, which never raises the rate.
  if (!failure && (!moved || !shape.by_time) &&
      window_.warm().load(kRelaxed) == StateWord::epoch(w) + 1) {
    if (moved && !shape.by_time) quiet_if_clean(w, win, at, shape);
    return Result::Ok;
  }
  Judging j;
  j.shape = shape;
  j.minimum_calls = cfg_.field<uint32_t, offsetof(Config, minimum_calls)>();
  j.failure_rate_billionths = cfg_.field<uint32_t, offsetof(Config, failure_rate_billionths)>();
  return done_judged(w, j, at, failure ? now : 0);
}

// A count window whose last N outcomes are all successes reads the same
// after any number of further successes: its word goes quiet, and its
// successes take the write-free path (docs/policies.md, "A clean count
// window is quiet"). The first failure makes it loud again (stay_loud, and
// done() for a quiet ticket), and lands in the window as it stood.
void Breaker::quiet_if_clean(uint64_t w, const Window &win, const Window::Position &at,
                             const WindowShape &shape) {
  auto clean = [&](const Window::Position &p) {
    const WindowCounts c = win.sum(p, false);
    return c.failures == 0 && c.calls >= shape.guaranteed();
  };
  if (StateWord::mode(w) != StateWord::kClosedWindowMode || !clean(at)) return;
  uint64_t expected = w;
  if (!hot_.word.compare_exchange_strong(expected, StateWord::quieted(w), kAcqRel, kRelaxed))
    return;
  // A failure recorded since the sum, by a caller that then read the word
  // loud (stay_loud): both read-modify-write the head after their own write
  // (the failure's record is a compare-and-swap on it), so the later of the
  // two sees the other's write, and the window is summed again here.
  window_.head().fetch_add(0, kAcqRel);
  if (clean(win.latest(0))) return;
  expected = StateWord::quieted(w);
  hot_.word.compare_exchange_strong(expected, w, kAcqRel, kRelaxed);
}

void Breaker::stay_loud(uint64_t w) {
  window_.head().fetch_add(0, kAcqRel);
  uint64_t now_w = hot_.word.load(kAcquire);
  if (now_w == StateWord::quieted(w))
    hot_.word.compare_exchange_strong(now_w, w, kAcqRel, kRelaxed);
}

bool Breaker::holds_timed_success(const ConfigCell &cfg, const Clock &clock,
                                  std::atomic<uint64_t> &own, uint64_t w) {
  // By the cheap clock, where buckets are wider than its slack (as done()
  // places a success).
  const uint64_t width = cfg.window_shape().bucket_width;
  return width > clock.coarse_slack_ns && holds_in(cfg, own, w, clock.earliest_now() / width);
}

bool Breaker::settle_held(uint64_t w, Window &win, uint64_t now, uint32_t successes, bool failure,
                          Window::Position *at) {
  const uint32_t epoch = StateWord::epoch(w);
  bool moved = false;
  if (held_.own != nullptr) {
    const uint64_t h = held_.own->load(kRelaxed);
    const uint64_t stamp = HeldSuccesses::stamp(h);
    uint32_t count = HeldSuccesses::count_in(h, epoch);
    // Emptied before they reach the window, so that a judge never counts
    // them twice (it may miss them for the moment in between).
    held_.own->store(HeldSuccesses::pack(epoch, stamp, 0), kRelaxed);
    // Those whose bucket has left the window are dropped, as its own
    // outcomes are. A time window's others go to their own bucket, a count
    // window's are the newest outcomes but this one.
    if (count != 0 && !win.inside(stamp, now)) count = 0;
    if (count != 0 && win.by_time() && win.stamp_now(now) != stamp)
      moved = win.record_held(stamp, now, count, at);
    else
      successes += count;
  }
  moved |= win.record_outcomes(now, successes, failure, at);
  if (held_.own != nullptr)
    held_.own->store(HeldSuccesses::pack(epoch, win.stamp_now(now), 0), kRelaxed);
  return moved;
}

// `now` is the outcome's precise time if it was read, else 0 (then a trip
// reads the clock).
Result Breaker::done_judged(uint64_t w, const Judging &j, const Window::Position &at,
                            uint64_t now) {
  const uint32_t warm = StateWord::epoch(w) + 1;
  const Window win(window_, j.shape);
  // A count window never holds fewer than guaranteed() once full, so a
  // larger minimum would only be met at its bucket boundaries.
  const uint64_t minimum = std::min<uint64_t>(j.minimum_calls, j.shape.guaranteed());
  // A count window that has not yet recorded `minimum` outcomes since it
  // was emptied holds fewer: nothing to sum. (Once it has been seen warm
  // the bound is not needed, so its stamp arithmetic never wraps.)
  // Every thread's held successes count, as the newest outcomes (only a
  // window without slow-call tracking has them).
  const HeldCells *held =
      StateWord::recording(w) == Recording::Window && held_.stripes != 0 ? &held_ : nullptr;
  if (window_.warm().load(kRelaxed) != warm) {
    const uint64_t recorded = win.recorded_at_most(at);  // UINT64_MAX: no bound
    if (recorded < minimum &&
        recorded + (held != nullptr ? win.held(*held, StateWord::epoch(w), at) : 0) < minimum)
      return Result::Ok;
  }
  const WindowCounts c = win.sum(at, j.slow_call_ns != 0, held, StateWord::epoch(w));
  if (c.calls == 0 || c.calls < minimum) {
    window_.warm().store(0, kRelaxed);
    return Result::Ok;
  }
  window_.warm().store(warm, kRelaxed);
  Reason reason = Reason::None;
  if (j.rates_failures && Config::reaches(c.failures, c.calls, j.failure_rate_billionths))
    reason = Reason::FailureRate;
  else if (j.slow_call_ns != 0 && Config::reaches(c.slow, c.calls, j.slow_rate_billionths))
    reason = Reason::SlowCallRate;
  if (reason == Reason::None) return Result::Ok;
  const Config cfg = cfg_.load();
  // A count window placed the outcome without its time, a time window's
  // success by the cheap clock; the OPEN period starts now, not at the last
  // stamp the breaker happens to hold. (A manual clock reading 0 reads 0
  // again.)
  const uint64_t trip_at = now != 0 ? now : clock_.now();
  // A failure run counted meanwhile changes the word, not the period: retry
  // while the breaker is still CLOSED in this epoch.
  const uint32_t epoch = StateWord::epoch(w);
  while (!trip(cfg, w, trip_at, reason)) {
    w = hot_.word.load(kAcquire);
    if (StateWord::state(w) != State::Closed || StateWord::epoch(w) != epoch) break;
  }
  return Result::Ok;
}

void Breaker::release_probe(uint32_t epoch, uint32_t seq) {
  uint64_t raw = hot_.probes.load(kAcquire);
  for (;;) {
    const ProbeLedger ledger = ProbeLedger::read(raw, epoch);
    if (!ledger.owns_bit(seq)) return;
    ProbeLedger next = ledger;
    next.outstanding &= ~ProbeLedger::bit(seq);
    if (hot_.probes.compare_exchange_weak(raw, next.pack(), kAcqRel, kAcquire)) return;
  }
}

Result Breaker::done_probe(uint64_t w, const Config &cfg, uint64_t ticket, Outcome outcome,
                           bool is_slow) {
  if (StateWord::state(w) != State::HalfOpen) return Result::Ok;
  // A probe that succeeds slowly says the dependency is still slow.
  if (is_slow && outcome == Outcome::Success) outcome = Outcome::Failure;
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
    if (outcome == Outcome::Failure)
      trip(cfg, w, clock_.now(), Reason::ProbeFailed);
    else if (outcome == Outcome::Success && next.successes >= cfg.half_open_success_threshold)
      close(w, clock_.now(), Reason::ProbesSucceeded);
    return Result::Ok;
  }
}

Result Breaker::state(uint32_t incarnation, State *out) const {
  const uint64_t w = hot_.word.load(kAcquire);
  if (!StateWord::alive_in(w, incarnation)) return Result::WrongIncarnation;
  *out = StateWord::state(w);
  return Result::Ok;
}

Result Breaker::observe(uint32_t incarnation, Observation *out) const {
  const uint64_t w = hot_.word.load(kAcquire);
  if (!StateWord::alive_in(w, incarnation)) return Result::WrongIncarnation;
  const Config cfg = cfg_.load();
  const uint64_t now = clock_.now();
  Observation o;
  o.state_ns = elapsed_since(now, hot_.changed_at.load(kAcquire));
  if (StateWord::state(w) == State::Closed) o.consecutive_failures = StateWord::aux(w);
  if (cfg.recorded()) {
    // The window as it stands, without recording anything.
    const Window win = window(cfg);
    const Window::Position at = win.latest(now);
    // Slow words only if it tracks slow calls: a window without them has
    // none (its block's class has no room for them).
    const WindowCounts c = win.sum(at, cfg.slow_call_ns != 0, &held_, StateWord::epoch(w));
    if (c.calls != 0) {
      o.failure_rate = double(c.failures) / double(c.calls);
      o.slow_rate = double(c.slow) / double(c.calls);
    }
  }
  *out = o;
  return Result::Ok;
}

Result Breaker::retry_after(uint32_t incarnation, uint64_t *out_ns) const {
  const uint64_t w = hot_.word.load(kAcquire);
  const State state = StateWord::state(w);
  if (!StateWord::alive_in(w, incarnation)) return Result::WrongIncarnation;
  const Config cfg = cfg_.load();
  uint64_t wait = 0;
  switch (state) {
    case State::ForcedOpen:
      wait = UINT64_MAX;
      break;
    case State::Open: {
      const uint64_t duration = open_duration(w, cfg);
      const uint64_t opened_at = hot_.opened_at.load(kAcquire);
      const uint64_t now = clock_.now();
      if (opened_at <= now) {
        const uint64_t elapsed = now - opened_at;
        wait = elapsed >= duration ? 0 : duration - elapsed;
      } else {  // held (hold_open) past a period's start, or a later clock reading than ours
        wait = opened_at - now > UINT64_MAX - duration ? UINT64_MAX : opened_at - now + duration;
      }
      break;
    }
    case State::HalfOpen: {
      const ProbeLedger ledger = ProbeLedger::read(hot_.probes.load(kAcquire), StateWord::epoch(w));
      if (ledger.in_flight() < cfg.half_open_max_calls) break;
      // If no probe reports, the lease runs out, the breaker re-opens as of
      // that instant, and a call is admitted once the next open duration has
      // passed: probe_at + lease + next open. That instant may lie past the
      // end of the clock (then no call is ever admitted, and the wait, though
      // it outlasts the clock, is still not 0), so the wait is computed
      // without adding to probe_at.
      const uint64_t probe_at = hot_.probe_at.load(kAcquire);
      const uint64_t next_open = open_duration(
          StateWord::next(w, std::min(StateWord::trips(w) + 1, StateWord::kTripsMax), State::Open),
          cfg);
      // Both at most CB_MAX_DURATION_NS: the sum fits.
      const uint64_t span = cfg.half_open_timeout_ns + next_open;
      const uint64_t now = clock_.now();
      if (probe_at <= now) {
        wait = span - std::min(span, now - probe_at);
      } else {  // a probe admitted on a later clock reading than ours
        wait = probe_at - now > UINT64_MAX - span ? UINT64_MAX : probe_at - now + span;
      }
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
  for (;;) {
    const uint64_t w = hot_.word.load(kAcquire);
    if (!StateWord::alive_in(w, incarnation)) return Result::WrongIncarnation;
    const uint64_t now = clock_.now();
    if (target == State::Closed ? close(w, now, Reason::Manual)
                                : transition(w, StateWord::next(w, 0, target), now, Reason::Manual))
      return Result::Ok;
  }
}

Result Breaker::trip_for(uint32_t incarnation, uint64_t open_ns) {
  const Config cfg = cfg_.load();
  for (;;) {
    const uint64_t w = hot_.word.load(kAcquire);
    if (!StateWord::alive_in(w, incarnation)) return Result::WrongIncarnation;
    // Concurrent cb_trip calls race on this word; the last one to trip wins.
    hot_.explicit_ns.store(open_ns, kRelaxed);
    if (trip(cfg, w, clock_.now(), Reason::Tripped, true)) return Result::Ok;
  }
}

Result Breaker::hold_open(uint32_t incarnation, uint64_t until) {
  const Config cfg = cfg_.load();
  for (;;) {
    const uint64_t w = hot_.word.load(kAcquire);
    if (!StateWord::alive_in(w, incarnation)) return Result::WrongIncarnation;
    if (StateWord::state(w) != State::Open) return Result::NotOpen;
    const uint64_t opened_at = hot_.opened_at.load(kAcquire);
    const uint64_t duration = open_duration(w, cfg);
    if (opened_at <= UINT64_MAX - duration && opened_at + duration >= until) return Result::Ok;
    // The period ends at opened_at + duration: moving opened_at (which only
    // ever grows) moves the end, and nothing else of the period. Its epoch
    // moves too, so that a caller who judged the period over from the old
    // stamp loses its compare-and-swap and looks again; the same trips and
    // explicit bit keep the backoff. The next epoch's duration may differ
    // (jitter hashes the epoch): computed for it.
    const uint64_t to = StateWord::next(w, StateWord::aux(w), State::Open);
    const uint64_t next_duration = open_duration(to, cfg);
    if (until > next_duration) raise_to(hot_.opened_at, until - next_duration);
    uint64_t seen = w;
    if (hot_.word.compare_exchange_strong(seen, to, kAcqRel, kAcquire)) {
      cache_open_period(to, hot_.opened_at.load(kAcquire), next_duration);
      return Result::Ok;
    }
  }
}

}  // namespace lazybreaker::core
