// The Lua scripts that write the fleet's state. Each runs atomically in
// Redis, so two hosts (or an operator and a host) acting on one breaker at
// once are put in one order and no update is lost (docs/fleet.md, "Who
// wins"). A key of a foreign type or a field that is not ours is refused
// with an error starting "FOREIGN" for that breaker, and nothing of it is
// written.
#pragma once

namespace lazybreaker::fleet::scripts {

// Every change one host (or an operator) has for the fleet, in one call.
// KEYS: log, names, sequence, open (a hash: every breaker not CLOSED ->
// "EPOCH STATE UNTIL_MS TRIPS REASON BY", what a resync reads).
// ARGV: the fleet's prefix, by, now_ms, slack_ms (a host's trip ending no
// more than this after the running period's end is absorbed), then per
// change four: name, kind, until_ms, reason. kind: trip | force_open | closed (a host's) |
// operator_trip | operator_force_open | operator_disable | operator_reset.
// Appends one log entry holding every change made (fields `seq`, `by`,
// and per change `b:NAME` = "EPOCH STATE UNTIL_MS TRIPS REASON").
// Returns per change {changed (0/1), epoch, state, until_ms, trips}, or an
// error reply (a string starting FOREIGN) in its place.
extern const char *const kPublish;
constexpr int kMaxChangesPerCall = 1000;

// No KEYS. ARGV: the fleet's prefix, then per breaker five: name,
// admitted, rejected, successes, failures (deltas, "0" for none). Adds the
// deltas to each breaker's hash, one HINCRBY per non-zero count; returns
// the number of breakers whose key is not a hash (foreign: left alone).
// Only agents started with --fleet-counts call it.
extern const char *const kFlush;

// KEYS: lease. ARGV: host, px. Renews the lease if `host` holds it: 1, else 0.
extern const char *const kRenew;

}  // namespace lazybreaker::fleet::scripts
