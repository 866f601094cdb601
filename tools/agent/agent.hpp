// The agent's synchronisation between the host's registry files and the
// fleet's state in Redis (docs/fleet.md): each step polls the files,
// publishes what the host's breakers did (trips, forced opens, the probe
// verdict of the host that holds the lease), applies what the fleet did,
// claims or waits for the probe lease, and adds the counts. When Redis is
// away the host's breakers go on alone and the agent keeps what it must
// tell; it reconnects with a capped backoff and reconciles.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "connection.hpp"
#include "fleet_view.hpp"
#include "host_files.hpp"
#include "keys.hpp"
#include "redis.hpp"
#include "redis_url.hpp"

namespace lazybreaker::agent {

struct Options {
  std::vector<std::string> files;
  fleet::RedisUrl redis;
  std::string password;  // from --password-file; empty: the URL's
  // --sentinel, --sentinel-master: the primary is the one the sentinels name
  std::vector<fleet::HostPort> sentinels;
  std::string sentinel_master;
  std::string fleet = "default";
  std::string host;
  std::string listen;  // empty: no metrics server
  int interval_ms = 100;
  bool any_owner = false;
};

// What the metrics server reads of the agent, from its own thread.
struct AgentGauges {
  std::atomic<bool> connected{false};
  std::atomic<uint64_t> breakers{0};
  std::atomic<uint64_t> last_poll_us{0};
  std::atomic<uint64_t> published{0}, applied{0}, ignored{0}, reconnects{0};
};

class Agent {
 public:
  Agent(const Options &opts, HostFiles &files, AgentGauges &gauges);
  // One interval's work.
  void step();

  // Derived timings (docs/fleet.md, "Timing").
  int64_t claim_margin_ms() const { return 3 * int64_t(opts_.interval_ms); }
  int64_t lease_ms() const { return std::max<int64_t>(1000, 10 * int64_t(opts_.interval_ms)); }
  int64_t heartbeat_ttl_ms() const {
    return std::max<int64_t>(3000, 30 * int64_t(opts_.interval_ms));
  }

 private:
  enum class Pending { None, Trip, ForceOpen, Closed };
  // The fleet's side of one breaker name, as this agent last applied it.
  struct Side {
    uint64_t applied_epoch = 0;
    std::string state = "closed";
    int64_t until_ms = 0;
    bool lease_mine = false;
    bool holding = false;
    int64_t claim_after_ms = 0;  // no claim before this (another host's lease is young)
    Pending pending = Pending::None;
    Counts unsent;  // counts not yet added to the fleet's
  };

  void observe_host();
  void sync();
  void connect();
  void drop(const std::string &why);
  void resync(bool fresh);
  void take_log_position();
  void apply_hashes(const std::vector<std::string> &names);
  void read_log();
  void apply(const fleet::FleetBreaker &b);
  void act(LocalBreaker &local, const fleet::FleetBreaker &b);
  void publish_pending();
  bool publish(const std::string &name, Side &side);
  void manage_leases();
  void on_lease_reply(const std::string &name, const redisReply *reply);
  void hold_for_probe(const std::string &name, Side &side);
  void flush_counts();
  void heartbeat();
  void check_instance(const redisReply *r);
  void ignored(const std::string &key, const std::string &why);

  const Options &opts_;
  HostFiles &files_;
  AgentGauges &gauges_;
  fleet::Keys keys_;
  std::unique_ptr<fleet::Redis> redis_;
  std::map<std::string, Side> sides_;
  std::string instance_;  // the Redis instance id this agent's epochs belong to
  std::string log_id_ = "0-0";
  uint64_t log_seq_ = 0;  // 0: unknown (no gap check on the next entry)
  int64_t next_connect_ms_ = 0;
  int64_t backoff_ms_ = 100;
  int64_t next_heartbeat_ms_ = 0;
  std::set<std::string> names_sent_;            // the names the heartbeat last listed
  std::map<std::string, std::string> ignored_;  // key -> why, logged once each
  bool was_connected_ = false;
  bool outage_logged_ = false;
};

// One line on stderr: "lazybreaker-agent: EVENT key=value ...".
void log_event(const std::string &event,
               const std::vector<std::pair<std::string, std::string>> &fields);

}  // namespace lazybreaker::agent
