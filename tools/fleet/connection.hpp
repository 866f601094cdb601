// How the agent and cbctl reach the fleet's Redis: the URL's server, or
// the primary that Redis Sentinel names; in plain text or over TLS
// (docs/fleet.md, "Security" and "Sentinel"). One Connector per program;
// every connection it makes is a fleet::Redis.
#pragma once

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
  // sentinels name (checked with ROLE). RedisDown when none answers.
  std::unique_ptr<Redis> primary(int timeout_ms);

  // With sentinels: a socket that tells of a failover (+switch-master),
  // for the caller's poll(); -1 without. failover_announced() never
  // blocks and says whether one was announced since it was last asked.
  int failover_fd();
  bool failover_announced();

  // Where this connects, for log lines (no password).
  std::string describe() const;
  const ConnectionOptions &options() const { return options_; }

 private:
  ConnectionOptions options_;
};

}  // namespace lazybreaker::fleet
