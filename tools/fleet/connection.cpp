#include "connection.hpp"

namespace lazybreaker::fleet {

Connector::Connector(ConnectionOptions options) : options_(std::move(options)) {}
Connector::~Connector() = default;

std::unique_ptr<Redis> Connector::primary(int timeout_ms) {
  return std::make_unique<Redis>(HostPort{options_.url.host, options_.url.port}, options_,
                                 timeout_ms);
}

int Connector::failover_fd() { return -1; }
bool Connector::failover_announced() { return false; }

std::string Connector::describe() const { return redacted(options_.url); }

}  // namespace lazybreaker::fleet
