// The long-running subcommands: each returns cbctl's exit status.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

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
  int port = 9464;             // 0: any free port (the one taken is printed)
  bool allow_control = false;  // POST /api/breakers/NAME/ACTION with the token
  std::vector<std::string>
      allow_hosts;  // --allow-host: names the Host may give besides the address
};

// What `cbctl serve` shows and operates: a registry file, or a fleet in
// Redis. Called from the server's worker threads, one call at a time.
class ServeSource {
 public:
  virtual ~ServeSource() = default;
  virtual std::string describe() const = 0;  // "FILE" or "fleet NAME at redis://..."
  virtual std::string prometheus() = 0;
  // The JSON object the page reads: {"source": ..., "breakers": [...]}.
  virtual std::string breakers_json() = 0;
  // An operator action (trip, force-open, disable, reset; for_ns: trip's
  // period): "" when done, else why not, with the HTTP status in *status.
  virtual std::string act(const std::string &name, const std::string &action, uint64_t for_ns,
                          int *status) = 0;
};

// GET /metrics (the Prometheus text), / (the page) and /api/breakers (its
// JSON); with allow_control, the POSTs. Until SIGINT, SIGTERM or SIGHUP.
int run_serve(ServeSource &source, const ServeOptions &opts);

// The sources: a registry file, open for the server's life.
std::unique_ptr<ServeSource> file_source(const std::string &path);

}  // namespace cbctl
