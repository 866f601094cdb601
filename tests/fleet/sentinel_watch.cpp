// fleet.sentinel's probe of fleet::Connector's failover watch, apart from
// any agent's reconnect policy:
//
//   sentinel_watch HOST:PORT[,HOST:PORT...] MASTER SECONDS
//
// connects to the primary the sentinels name, then polls the Connector's
// failover socket for SECONDS; each failover_announced() is one line,
// `t=WALL_MS announced primary=...` (the primary asked anew) or
// `t=WALL_MS announced unreachable why=...`. Status 2 for bad arguments.
#include <poll.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "connection.hpp"
#include "sentinel_options.hpp"

namespace {

int64_t wall_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

}  // namespace

int main(int argc, char **argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: sentinel_watch HOST:PORT[,HOST:PORT...] MASTER SECONDS\n");
    return 2;
  }
  std::string why;
  auto sentinels = lazybreaker::fleet::parse_host_ports(argv[1], &why);
  if (!sentinels) {
    std::fprintf(stderr, "sentinel_watch: %s\n", why.c_str());
    return 2;
  }
  lazybreaker::fleet::ConnectionOptions options;
  options.sentinels = *sentinels;
  options.sentinel_master = argv[2];
  lazybreaker::fleet::Connector connector(options);
  try {
    connector.primary(1000);
  } catch (const lazybreaker::fleet::RedisDown &e) {
    std::fprintf(stderr, "sentinel_watch: %s\n", e.what());
    return 1;
  }
  std::printf("t=%lld primary=%s\n", (long long)wall_ms(), connector.describe().c_str());
  std::fflush(stdout);
  const int64_t end = wall_ms() + int64_t(std::atof(argv[3]) * 1000);
  while (wall_ms() < end) {
    pollfd p{connector.failover_fd(), POLLIN, 0};
    ::poll(&p, p.fd >= 0 ? 1 : 0, 20);
    if (!connector.failover_announced()) continue;
    const int64_t t = wall_ms();
    try {
      connector.primary(1000);
      std::printf("t=%lld announced primary=%s\n", (long long)t, connector.describe().c_str());
    } catch (const lazybreaker::fleet::RedisDown &e) {
      std::printf("t=%lld announced unreachable why=%s\n", (long long)t, e.what());
    }
    std::fflush(stdout);
  }
  return 0;
}
