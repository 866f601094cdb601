// --listen: GET /metrics answers the agent's gauges, the fleet's state as
// the agent last heard it and the host's own breakers' counts, all from the
// agent's own copy: a scrape never reads Redis.
#pragma once

#include <memory>
#include <string>

#include "agent.hpp"

namespace lazybreaker::agent {

class MetricsServer {
 public:
  // Binds and starts serving; nullptr with *why when it cannot bind.
  static std::unique_ptr<MetricsServer> start(const Options &opts, AgentGauges &gauges,
                                              std::string *why);
  virtual ~MetricsServer() = default;
  virtual std::string address() const = 0;  // HOST:PORT as bound
  virtual void stop() = 0;
};

}  // namespace lazybreaker::agent
