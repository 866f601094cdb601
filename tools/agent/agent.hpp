// The agent's synchronisation between the host's registry files and the
// fleet's state in Redis (docs/fleet.md). Each step polls the files,
// publishes in one script call what the host's breakers did (trips,
// forced opens, the probe verdict of the host that holds the lease),
// claims or waits for the probe lease where calls wait for a probe, and
// beats the host's heartbeat. What the fleet did reaches it pushed: a
// second connection blocks on the change log (XREAD BLOCK), whose entries
// carry every change whole. When Redis is away the host's breakers go on
// alone and the agent keeps what it must tell; it reconnects after a
// jittered wait and reconciles.
#pragma once

#include <poll.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "changes.hpp"
#include "connection.hpp"
#include "fleet_view.hpp"
#include "host_files.hpp"
#include "keys.hpp"
#include "redis.hpp"

namespace lazybreaker::agent {

struct Options {
  std::vector<std::string> files;
  fleet::ConnectionOptions connection;
  std::string fleet = "default";
  std::string host;
  std::string listen;  // empty: no metrics server
  int interval_ms = 100;
  bool any_owner = false;
  bool fleet_counts = false;  // --fleet-counts: add the host's counts to Redis too
};

// One breaker name as the agent's --listen shows it: the fleet's state as
// the agent last heard it, and the host's own breakers of that name.
struct BreakerRow {
  std::string name;
  std::string fleet_state = "closed";
  int64_t until_ms = 0;
  uint64_t fleet_trips = 0;
  int host_state = CB_STATE_CLOSED;  // the first instance's
  uint64_t trips = 0;
  Counts counts;  // summed over the host's files
};

// What the metrics server reads of the agent, from its own thread.
struct AgentGauges {
  std::atomic<bool> connected{false};
  std::atomic<uint64_t> breakers{0};
  std::atomic<uint64_t> last_poll_us{0};
  std::atomic<uint64_t> published{0}, applied{0}, ignored{0}, reconnects{0};
  std::atomic<uint64_t> trips_sent{0};    // trips carried to Redis (changing the fleet or not)
  std::atomic<uint64_t> dropped{0};       // trips not published: the fleet's period covered them
  std::atomic<uint64_t> lease_claims{0};  // SET NX sent for a probe lease
  std::atomic<uint64_t> log_entries{0};   // change log entries read
  std::atomic<uint64_t> live_hosts{0};
  std::atomic<bool> rows_wanted{false};  // a metrics server reads `rows`
  std::mutex rows_mutex;
  std::vector<BreakerRow> rows;  // by name; under rows_mutex
};

class Agent {
 public:
  Agent(const Options &opts, HostFiles &files, AgentGauges &gauges);
  ~Agent();
  // One interval's work.
  void step();
  // The sockets whose replies come unasked (the change log's reader, a
  // sentinel's failover news), for the caller's poll(); then on_ready()
  // takes what arrived, without blocking.
  void poll_fds(std::vector<pollfd> *out) const;
  void on_ready();
  // Whether a reply may already wait in a buffer (poll would not say so).
  bool has_buffered() const;
  // When a waiting trip is due to be published (wall ms; INT64_MAX: none):
  // the caller's poll() wakes then and calls on_ready().
  int64_t wake_at_ms() const { return publish_at_ms_; }

  // Derived timings (docs/fleet.md, "Timing").
  int64_t claim_margin_ms() const { return 3 * int64_t(opts_.interval_ms); }
  int64_t lease_ms() const { return std::max<int64_t>(1000, 10 * int64_t(opts_.interval_ms)); }
  int64_t heartbeat_ms() const { return std::max<int64_t>(5000, opts_.interval_ms); }
  int64_t host_ttl_ms() const { return 3 * heartbeat_ms(); }
  // A trip heard from the fleet covers this host's if it ends no more than
  // this much earlier.
  int64_t publish_slack_ms() const {
    return std::max<int64_t>(1000, 10 * int64_t(opts_.interval_ms));
  }
  // How long this host waits before it publishes a trip of `name` (0: at
  // once), from its rank among the live hosts.
  int64_t publish_delay_ms(const std::string &name) const;
  // Whether this host may claim `name`'s probe lease now.
  bool may_claim(const std::string &name, int64_t until_ms, int64_t now) const;

 private:
  enum class Pending { None, Trip, ForceOpen, Closed };
  // The fleet's side of one breaker name, as this agent last applied it.
  struct Side {
    uint64_t applied_epoch = 0;
    std::string state = "closed";
    int64_t until_ms = 0;
    uint64_t trips = 0;
    bool lease_mine = false;
    int64_t lease_until_ms = 0;
    bool holding = false;
    int64_t claim_after_ms = 0;  // no claim before this (another host's lease runs)
    Pending pending = Pending::None;
    int64_t pending_since_ms = 0;
    int64_t rejected_ms = -1;  // when a call was last rejected here (demand for a probe)
    Counts unsent;             // --fleet-counts: counts not yet added to the fleet's
  };

  void observe_host();
  void sync();
  void connect();
  void drop(const std::string &why, bool was_working);
  void resync(bool fresh);
  void take_log_position();
  void read_hashes(const std::vector<std::string> &names);
  void arm_reader();
  void take_log(const redisReply *reply);
  void apply(const fleet::FleetBreaker &b);
  void act(LocalBreaker &local, const fleet::FleetBreaker &b);
  void publish_pending();
  std::optional<fleet::Change> news_of(const std::string &name, Side &side, int64_t now);
  bool trip_turn(const std::string &name, Side &side, int64_t until_ms, int64_t now);
  void take_result(const fleet::Change &change, const fleet::ChangeResult &r, int64_t now);
  void manage_leases();
  void claim(const std::vector<std::string> &claims, int64_t now);
  void renew(const std::vector<std::string> &renewals);
  bool any_in(const std::string &name, int state);  // a local breaker of name in state
  void hold_for_probe(const std::string &name, Side &side);
  void flush_counts();
  void heartbeat();
  void write_names(const std::vector<std::string> &names, const std::string &digest);
  void check_instance(const redisReply *r);
  void ignored(const std::string &key, const std::string &why);
  void share_rows();

  const Options &opts_;
  HostFiles &files_;
  AgentGauges &gauges_;
  fleet::Keys keys_;
  fleet::Connector connector_;
  std::unique_ptr<fleet::Redis> redis_;   // commands, one round trip at a time
  std::unique_ptr<fleet::Redis> reader_;  // XREAD BLOCK on the change log
  bool read_pending_ = false;
  bool read_stale_ = false;            // the pending read began before the last resync
  int64_t publish_at_ms_ = INT64_MAX;  // the next waiting trip's turn
  int64_t read_sent_ms_ = 0, next_read_ms_ = 0;
  std::unordered_map<std::string, Side> sides_;
  std::string instance_;  // the Redis instance id this agent's epochs belong to
  std::string replid_;    // its replication id: a failover changes it
  std::string log_id_ = "0-0";
  uint64_t log_seq_ = 0;  // 0: unknown (no gap check on the next entry)
  int64_t next_connect_ms_ = 0;
  int64_t backoff_ms_ = 100;
  int64_t next_heartbeat_ms_ = 0;
  uint64_t heartbeats_ = 0;
  size_t live_hosts_ = 1;
  std::string digest_sent_;  // the name set the heartbeat last named
  int64_t next_rows_ms_ = 0;
  std::map<std::string, std::string> ignored_;  // key -> why, logged once each
  bool was_connected_ = false;
  bool outage_logged_ = false;
};

// One line on stderr: "lazybreaker-agent: EVENT key=value ...".
void log_event(const std::string &event,
               const std::vector<std::pair<std::string, std::string>> &fields);

}  // namespace lazybreaker::agent
