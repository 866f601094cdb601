// --sentinel and --sentinel-master, taken alike by every program that
// reaches the fleet's Redis (lazybreaker-agent, cbctl fleet, cbctl serve):
// one implementation, so that an operator's command line means the same to
// each (docs/fleet.md, "Sentinel").
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "connection.hpp"

namespace CLI {
class App;
}

namespace lazybreaker::fleet {

// The options as typed; apply_sentinel_args() checks them.
struct SentinelArgs {
  std::vector<std::string> sentinels;  // each HOST:PORT[,HOST:PORT...]; repeatable
  std::string master;
};

void add_sentinel_options(CLI::App *app, SentinelArgs *args);

// "HOST:PORT[,HOST:PORT...]" ("[IPv6]:PORT" too), or nullopt with *why.
std::optional<std::vector<HostPort>> parse_host_ports(const std::string &text, std::string *why);

// Fills out->sentinels and out->sentinel_master. `redis_given`: whether
// --redis was on the command line (it may be left out with sentinels, and
// only with them). Returns "" when the options hold together, else the
// usage error to print (it names the option).
std::string apply_sentinel_args(const SentinelArgs &args, bool redis_given, ConnectionOptions *out);

}  // namespace lazybreaker::fleet
