// The fleet's keys in Redis (docs/fleet.md, "Keys"): every key under
// "lb:{FLEET}:", one hash per breaker, a change log, the probe leases, and
// the membership (a heartbeat per host and the name sets hosts share).
#pragma once

#include <string>

namespace lazybreaker::fleet {

// [A-Za-z0-9_.-], 1..64 characters: a fleet name is part of every key.
bool valid_fleet_name(const std::string &name);
// Host ids: the same characters, 1..255 of them.
bool valid_host_id(const std::string &id);

struct Keys {
  explicit Keys(const std::string &fleet) : prefix("lb:{" + fleet + "}:") {}
  std::string prefix;
  std::string breaker(const std::string &name) const { return prefix + "b:" + name; }
  std::string lease(const std::string &name) const { return prefix + "lease:" + name; }
  std::string names() const { return prefix + "names"; }
  std::string open() const { return prefix + "open"; }
  std::string log() const { return prefix + "log"; }
  std::string sequence() const { return prefix + "seq"; }
  std::string instance() const { return prefix + "instance"; }
  std::string hosts() const { return prefix + "hosts"; }
  std::string host_sets() const { return prefix + "hostsets"; }
  std::string name_set(const std::string &digest) const { return prefix + "nameset:" + digest; }
};

}  // namespace lazybreaker::fleet
