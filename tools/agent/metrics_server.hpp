// --listen: GET /metrics answers the agent's gauges, the fleet's state as
// the agent last heard it and the host's own breakers' counts, all from the
// agent's own copy: a scrape never reads Redis. Only to requests that name
// this server (host_check.hpp).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "agent.hpp"

namespace lazybreaker::agent {

class MetricsServer {
 public:
  // Binds and starts serving; nullptr with *why when it cannot bind. A
  // request whose Host is neither the address bound nor one of
  // allow_hosts (--allow-host, fleet::valid_allow_host) is 403.
  static std::unique_ptr<MetricsServer> start(const Options &opts, AgentGauges &gauges,
                                              std::vector<std::string> allow_hosts,
                                              std::string *why);
  virtual ~MetricsServer() = default;
  virtual std::string address() const = 0;  // HOST:PORT as bound
  virtual void stop() = 0;
};

}  // namespace lazybreaker::agent
