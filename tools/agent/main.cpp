// lazybreaker-agent: links a host's registry files to the fleet's state in
// Redis (docs/fleet.md). A separate program, so that the library stays
// free of threads, timers and sockets: the services' request path never
// touches the network. Runs in the foreground until SIGTERM or SIGINT, in
// one loop: a poll() on the change log's reader and the signals, with a
// step of the agent every interval.
#include <lazybreaker/lazybreaker.h>
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "agent.hpp"
#include "connection_options.hpp"
#include "host_check.hpp"
#include "listen_address.hpp"
#include "metrics_server.hpp"
#include "sentinel_options.hpp"

namespace {

using lazybreaker::agent::Options;

constexpr int kExitUsage = 2;

std::string read_password(const std::string &path) {
  std::ifstream in(path);
  if (!in) throw CLI::ValidationError("--password-file", path + ": cannot be read");
  std::stringstream ss;
  ss << in.rdbuf();
  std::string p = ss.str();
  while (!p.empty() && (p.back() == '\n' || p.back() == '\r')) p.pop_back();
  if (p.empty()) throw CLI::ValidationError("--password-file", path + ": is empty");
  return p;
}

std::string host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0 || buf[0] == '\0') return "localhost";
  std::string h = buf;
  for (char &c : h)
    if (!lazybreaker::fleet::valid_host_id(std::string(1, c))) c = '-';
  return h;
}

int parse(int argc, char **argv, Options *o, std::vector<std::string> *allow_hosts) {
  CLI::App app{"lazybreaker-agent: one breaker state across a fleet of hosts, through Redis"};
  app.set_version_flag("--version", std::string("lazybreaker-agent ") + CB_VERSION_STRING +
                                        " (library " + cb_version_string() + ")");
  std::string url, password_file;
  lazybreaker::fleet::SentinelArgs sentinel;
  app.add_option("--file", o->files, "A registry file of this host (repeatable)")->required();
  app.add_option("--redis", url, "redis[s]://[user[:password]@]HOST:PORT[/DB]");
  lazybreaker::fleet::add_sentinel_options(&app, &sentinel);
  app.add_option("--fleet", o->fleet, "The fleet's name, in every key (default: default)");
  app.add_option("--host", o->host, "This host's id in the fleet (default: the host name)");
  app.add_option("--password-file", password_file, "A file holding Redis's password");
  lazybreaker::fleet::add_tls_options(&app, &o->connection.tls);
  app.add_option("--listen", o->listen, "HOST:PORT to serve the fleet's Prometheus text on");
  app.add_option("--allow-host", *allow_hosts,
                 "With --listen: a name (NAME or NAME:PORT) the Host header may give besides the "
                 "listen address (repeatable)");
  app.add_option("--interval", o->interval_ms, "Milliseconds between polls (default 100)")
      ->check(CLI::Range(10, 60000));
  app.add_flag("--any-owner", o->any_owner,
               "Use files whoever owns them and whoever may write them");
  app.add_flag("--fleet-counts", o->fleet_counts,
               "Add this host's call counts to the fleet's in Redis too (small fleets)");
  try {
    app.parse(argc, argv);
    std::string why = apply_sentinel_args(sentinel, app.count("--redis") > 0, &o->connection);
    if (!why.empty()) throw CLI::ValidationError(why);
    // With sentinels alone: no user, no password but --password-file's, db 0.
    auto parsed = app.count("--redis") == 0 ? std::optional(lazybreaker::fleet::RedisUrl{})
                                            : lazybreaker::fleet::parse_redis_url(url, &why);
    if (!parsed) throw CLI::ValidationError("--redis", why);
    o->connection.url = *parsed;
    if (!lazybreaker::fleet::valid_fleet_name(o->fleet))
      throw CLI::ValidationError("--fleet", "'" + o->fleet + "': 1..64 of A-Z a-z 0-9 _ . -");
    if (app.count("--host") == 0) o->host = host_name();
    if (!lazybreaker::fleet::valid_host_id(o->host))
      throw CLI::ValidationError("--host", "'" + o->host + "': 1..255 of A-Z a-z 0-9 _ . -");
    if (!password_file.empty()) o->connection.password = read_password(password_file);
    if (!lazybreaker::fleet::complete_connection_options(&o->connection, &why))
      throw CLI::ValidationError(why);
    std::string listen_host;
    int listen_port = 0;
    if (!o->listen.empty() &&
        !lazybreaker::fleet::parse_listen_address(o->listen, &listen_host, &listen_port, &why))
      throw CLI::ValidationError("--listen", "'" + o->listen + "': " + why);
    for (const std::string &name : *allow_hosts)
      if (!lazybreaker::fleet::valid_allow_host(name, &why))
        throw CLI::ValidationError("--allow-host", why);
    if (!allow_hosts->empty() && o->listen.empty())
      throw CLI::ValidationError("--allow-host", "goes with --listen");
  } catch (const CLI::ParseError &e) {
    // --help and --version are "errors" with status 0.
    if (e.get_exit_code() == 0) return app.exit(e);
    std::fprintf(stderr, "lazybreaker-agent: %s\nRun 'lazybreaker-agent --help' for more.\n",
                 e.what());
    return kExitUsage;
  }
  return -1;
}

}  // namespace

int main(int argc, char **argv) {
  Options opts;
  std::vector<std::string> allow_hosts;
  if (int code = parse(argc, argv, &opts, &allow_hosts); code >= 0) return code;
  // Every thread (the metrics server's too) inherits this mask; the main
  // loop takes the signals from a signalfd in the poll() that is also its
  // sleep and its wait for the change log.
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);
  signal(SIGPIPE, SIG_IGN);
  const int signals = signalfd(-1, &stop, SFD_CLOEXEC | SFD_NONBLOCK);
  if (signals < 0) {
    std::fprintf(stderr, "lazybreaker-agent: signalfd: %s\n", std::strerror(errno));
    return 1;
  }

  lazybreaker::agent::HostFiles files(opts.files, opts.any_owner);
  lazybreaker::agent::AgentGauges gauges;
  lazybreaker::agent::Agent agent(opts, files, gauges);
  std::unique_ptr<lazybreaker::agent::MetricsServer> metrics;
  if (!opts.listen.empty()) {
    std::string why;
    metrics = lazybreaker::agent::MetricsServer::start(opts, gauges, allow_hosts, &why);
    if (!metrics) {
      std::fprintf(stderr, "lazybreaker-agent: --listen %s: %s\n", opts.listen.c_str(),
                   why.c_str());
      return 1;
    }
  }
  // A file not there yet is waited for (a service creates it); one that
  // is there and cannot be used will not heal by waiting.
  for (const std::string &why : files.open_missing()) {
    if (!files.only_missing()) {
      std::fprintf(stderr, "lazybreaker-agent: %s\n", why.c_str());
      return 1;
    }
    lazybreaker::agent::log_event("waiting", {{"file", why}});
  }
  lazybreaker::agent::log_event("ready",
                                {{"host", opts.host},
                                 {"fleet", opts.fleet},
                                 {"files", std::to_string(files.files())},
                                 {"interval_ms", std::to_string(opts.interval_ms)},
                                 {"metrics", metrics ? metrics->address() : std::string("off")}});
  using Clock = std::chrono::steady_clock;
  auto next_step = Clock::now();
  std::vector<pollfd> fds;
  for (;;) {
    if (Clock::now() >= next_step) {
      agent.step();
      next_step = Clock::now() + std::chrono::milliseconds(opts.interval_ms);
    }
    fds.assign(1, pollfd{signals, POLLIN, 0});
    agent.poll_fds(&fds);
    auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(next_step - Clock::now());
    // A trip waiting for its turn to be published wakes the loop then.
    if (agent.wake_at_ms() != INT64_MAX)
      wait = std::min(
          wait, std::chrono::milliseconds(agent.wake_at_ms() - lazybreaker::fleet::wall_ms()));
    const int timeout = agent.has_buffered() ? 0 : int(std::max<int64_t>(0, wait.count()) + 1);
    if (poll(fds.data(), fds.size(), timeout) < 0 && errno != EINTR) {
      std::fprintf(stderr, "lazybreaker-agent: poll: %s\n", std::strerror(errno));
      return 1;
    }
    signalfd_siginfo info{};
    if (read(signals, &info, sizeof info) == ssize_t(sizeof info)) {
      const int sig = int(info.ssi_signo);
      lazybreaker::agent::log_event("stopping", {{"signal", sig == SIGINT ? "SIGINT" : "SIGTERM"},
                                                 {"from_pid", std::to_string(info.ssi_pid)}});
      break;
    }
    agent.on_ready();
  }
  if (metrics) metrics->stop();
  close(signals);
  return 0;
}
