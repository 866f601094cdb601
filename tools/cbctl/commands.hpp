// The long-running subcommands: each returns cbctl's exit status.
#pragma once

#include <cstdint>
#include <string>

#include "registry_file.hpp"

namespace cbctl {

struct WatchOptions {
  uint64_t interval_ns = 1000000000;
  uint64_t frames = 0;  // 0: until q, SIGINT or SIGTERM
};
// A live table: on a terminal, refreshed in place on the alternate screen
// (q or Ctrl-C ends it, the terminal is restored); elsewhere, plain tables
// one after another.
int run_watch(const RegistryFile &file, const WatchOptions &opts);

struct ServeOptions {
  std::string host = "127.0.0.1";
  int port = 9464;  // 0: any free port (the one taken is printed)
};
// GET /metrics: the Prometheus text, until SIGINT or SIGTERM.
int run_serve(const RegistryFile &file, const ServeOptions &opts);

}  // namespace cbctl
