// The Lua scripts that write the fleet's state. Each runs atomically in
// Redis, so two hosts (or an operator and a host) acting on one breaker at
// once are put in one order and no update is lost (docs/fleet.md, "Who
// wins"). A key of a foreign type or a field that is not ours is refused
// with an error reply starting "FOREIGN" before anything is written.
#pragma once

namespace lazybreaker::fleet::scripts {

// KEYS: breaker hash, log, names, lease, sequence.
// ARGV: name, by, kind, until_ms, now_ms, reason.
// kind: trip | force_open | closed (a host's) | operator_trip |
// operator_force_open | operator_disable | operator_reset.
// Returns {changed (0/1), epoch, state, until_ms}.
extern const char *const kChange;

// No KEYS. ARGV: the fleet's prefix, then per breaker five: name,
// admitted, rejected, successes, failures (deltas, "0" for none). Adds the
// deltas to each breaker's hash, one HINCRBY per non-zero count; returns
// the number of breakers whose key is not a hash (foreign: left alone).
extern const char *const kFlush;

// KEYS: lease. ARGV: host, px. Renews the lease if `host` holds it: 1, else 0.
extern const char *const kRenew;

}  // namespace lazybreaker::fleet::scripts
