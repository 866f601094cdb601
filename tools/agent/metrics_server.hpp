// --listen: GET /metrics answers the fleet's Prometheus text (every fleet
// breaker's state, remaining open time, hosts and counts, read from Redis
// for each scrape on a connection of its own) and the agent's own gauges.
#pragma once

#include <memory>
#include <string>

#include "agent.hpp"

namespace lazybreaker::agent {

class MetricsServer {
 public:
  // Binds and starts serving; nullptr with *why when it cannot bind.
  static std::unique_ptr<MetricsServer> start(const Options &opts, const AgentGauges &gauges,
                                              std::string *why);
  virtual ~MetricsServer() = default;
  virtual std::string address() const = 0;  // HOST:PORT as bound
  virtual void stop() = 0;
};

}  // namespace lazybreaker::agent
