// A change to fleet breakers: what a host or an operator sends in one
// script call (scripts::kPublish), and what the change log carries back to
// every host, packed so that hosts apply it without reading hashes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fleet_view.hpp"
#include "keys.hpp"
#include "redis.hpp"

namespace lazybreaker::fleet {

struct Change {
  std::string name;
  std::string kind;  // trip | force_open | closed | operator_*
  int64_t until_ms = 0;
  std::string reason;
};

struct ChangeResult {
  bool changed = false;  // false: absorbed (the fleet's state stands), or foreign
  std::string foreign;   // why the breaker's key is not ours; empty when it is
  FleetBreaker fleet;    // the fleet's state after the call
};

// Sends the changes (one call per scripts::kMaxChangesPerCall); a result
// per change, in order. A trip ending no more than slack_ms after the
// fleet's running period is absorbed (docs/fleet.md, "Who wins"). RedisDown when the connection is
// lost; an error reply for the whole call (a foreign log, names or open key) fills every result's
// `foreign`.
std::vector<ChangeResult> publish_changes(Redis &redis, const Keys &keys, const std::string &by,
                                          int64_t now_ms, int64_t slack_ms,
                                          const std::vector<Change> &changes);

// One entry of the change log: its id, sequence number, author and the
// breakers it changed. ok is false for an entry that is not ours.
struct LogEntry {
  std::string id;
  uint64_t seq = 0;
  std::string by;
  std::vector<FleetBreaker> changes;
  bool ok = false;
};

// The breakers of an HGETALL of the `open` hash (every breaker whose fleet
// state is not CLOSED); the names whose value is not ours in *foreign.
std::vector<FleetBreaker> open_breakers(const redisReply *hgetall,
                                        std::vector<std::string> *foreign);

// The entries of an XREAD reply (xread) or an XRANGE/XREVRANGE one.
std::vector<LogEntry> log_entries(const redisReply *reply, bool xread);

}  // namespace lazybreaker::fleet
