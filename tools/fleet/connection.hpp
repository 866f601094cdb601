// How the agent and cbctl reach the fleet's Redis: the URL's server, or
// the primary that Redis Sentinel names; in plain text or over TLS
// (docs/fleet.md, "Security" and "Sentinel"). One Connector per program;
// every connection it makes is a fleet::Redis.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "redis.hpp"
#include "redis_url.hpp"

namespace lazybreaker::fleet {

struct TlsOptions {
  bool enabled = false;   // rediss://
  std::string ca_file;    // --tls-ca-file; empty: the system's CAs
  std::string cert_file;  // --tls-cert-file and --tls-key-file: a client certificate
  std::string key_file;
};

struct HostPort {
  std::string host;
  int port = 0;
};

struct ConnectionOptions {
  RedisUrl url;          // --redis; with sentinels only its user, password, db and scheme count
  std::string password;  // --password-file's; empty: the URL's
  TlsOptions tls;
  std::vector<HostPort> sentinels;  // --sentinel HOST:PORT[,HOST:PORT...]
  std::string sentinel_master;      // --sentinel-master NAME
};

class Connector {
 public:
  explicit Connector(ConnectionOptions options);
  ~Connector();
  Connector(const Connector &) = delete;
  Connector &operator=(const Connector &) = delete;

  // A connection to the primary: the URL's server, or the one the
  // sentinels name (checked with ROLE). RedisDown when none answers, its
  // message saying what each sentinel said.
  std::unique_ptr<Redis> primary(int timeout_ms);

  // With sentinels: a socket that tells of a failover (+switch-master),
  // for the caller's poll(); -1 without, or while no sentinel answers. Ask
  // for it before each poll: it changes when the watch moves to another
  // sentinel. failover_announced(), after the poll, says whether the
  // sentinels moved the primary away from where primary() last connected
  // since it was last asked. Neither blocks for more than a short timeout
  // (kWatchTimeoutMs, when a sentinel must be reached anew).
  int failover_fd();
  bool failover_announced();

  // Where this connects, for log lines (no password).
  std::string describe() const;
  const ConnectionOptions &options() const { return options_; }

  static constexpr int kWatchTimeoutMs = 200;

 private:
  std::unique_ptr<Redis> connect_to(const HostPort &at, int timeout_ms) const;
  std::unique_ptr<Redis> reach_sentinel(size_t i, int timeout_ms) const;
  struct Tries {                   // one primary() call's
    std::vector<HostPort> failed;  // primaries named that did not answer as one
    bool auth_refused = false;
  };
  std::unique_ptr<Redis> ask_sentinel(size_t i, int timeout_ms, Tries *tries, std::string *why);
  void keep_watching();
  void watch_next(int64_t now);
  void unwatch();
  void on_watch_reply(const redisReply *r);
  void moved_to(const HostPort &at);

  ConnectionOptions options_;
  size_t first_sentinel_ = 0;  // the one that last named a primary: asked first
  HostPort primary_at_;        // where primary() last connected; empty before
  // The watch: one sentinel's connection, subscribed to +switch-master.
  std::unique_ptr<Redis> watch_;
  size_t next_watched_ = 0;    // the sentinel the next watch is made to
  int64_t next_watch_ms_ = 0;  // no new attempt before (a sentinel refused)
  int64_t watch_retry_ms_ = 250;
  int64_t heard_ms_ = 0;  // the watch's last reply
  int64_t ping_ms_ = 0;   // a PING on the watch awaits its reply since; 0: none
  bool announced_ = false;
};

}  // namespace lazybreaker::fleet
