// The fleet as Redis holds it, read for `cbctl fleet list|show`, for the
// agent's Prometheus text and for its resynchronisation: each breaker's
// hash parsed and checked (a foreign value is reported, never trusted).
#pragma once

#include <charconv>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "keys.hpp"
#include "redis.hpp"

namespace lazybreaker::fleet {

// A whole decimal number and nothing else: what Redis holds for us is read
// only this way (a value that is not is foreign).
template <class T>
bool whole_number(const std::string &text, T *out) {
  const char *end = text.data() + text.size();
  auto [p, ec] = std::from_chars(text.data(), end, *out);
  return ec == std::errc() && p == end;
}

// Wall-clock milliseconds since the Unix epoch: the fleet's deadlines.
int64_t wall_ms();

struct FleetBreaker {
  std::string name;
  uint64_t epoch = 0;
  std::string state = "closed";  // closed | open | forced_open | disabled
  int64_t until_ms = 0;          // open: the period's end
  std::string by, reason;        // who made the last change, and why
  int64_t changed_ms = 0;
  uint64_t trips = 0;
  // The fleet's call counts: in Redis only from agents started with
  // --fleet-counts (has_counts), else each host's own /metrics holds them.
  uint64_t admitted = 0, rejected = 0, successes = 0, failures = 0;
  bool has_counts = false;
};

// A breaker's hash (an HGETALL reply; empty: a breaker the fleet has not
// seen change, CLOSED at epoch 0), or nullopt with *why for a value that
// is not ours.
std::optional<FleetBreaker> parse_breaker(const std::string &name, const redisReply *hgetall,
                                          std::string *why);

struct FleetView {
  std::vector<FleetBreaker> breakers;                        // by name
  std::map<std::string, std::vector<std::string>> hosts_of;  // name -> live host ids
  std::vector<std::string> ignored;                          // what was foreign, and why
  size_t live_hosts = 0;
  bool counts_in_redis = false;  // some agent adds its counts to Redis (--fleet-counts)
};

// Every breaker of the fleet (its names set), and the live hosts (a
// heartbeat not yet expired) that report each. One round trip for the
// names, hosts and their name sets' digests, one for the hashes and each
// distinct name set.
FleetView read_fleet(Redis &redis, const Keys &keys);

// A label value in Prometheus's text format.
std::string prometheus_label(const std::string &value);

// The fleet's Prometheus text exposition.
std::string fleet_prometheus(const FleetView &view, const std::string &fleet, int64_t now_ms);

}  // namespace lazybreaker::fleet
