// cbctl fleet: the fleet's breakers in Redis (docs/fleet.md), listed,
// shown and operated; an operator's command reaches every host's agent
// within its next poll.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>

#include "connection.hpp"
#include "sentinel_options.hpp"

namespace cbctl {

struct FleetArgs {
  std::string action;  // list | show | trip | force-open | disable | reset
  std::string name;
  std::string redis, fleet = "default", password_file;
  lazybreaker::fleet::TlsOptions tls;         // --tls-*, with rediss://
  lazybreaker::fleet::SentinelArgs sentinel;  // --sentinel, --sentinel-master
  std::string trip_for = "30s";
  bool json = false;
};

// `cbctl fleet ACTION ...`, with ACTION a subcommand of its own.
void add_fleet_command(CLI::App *app, FleetArgs *a);
// Whether the command line names a Redis (--redis, or sentinels).
bool names_redis(const FleetArgs &a);
class ServeSource;
// `cbctl serve --redis URL [--fleet NAME]`: the fleet as the page and
// /metrics show it; its actions by the script `cbctl fleet` uses.
std::unique_ptr<ServeSource> fleet_source(const FleetArgs &a);
// The exit status of the fleet command the command line named.
int run_fleet(const CLI::App &fleet, const FleetArgs &a);

}  // namespace cbctl
