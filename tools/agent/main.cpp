// lazybreaker-agent: links a host's registry files to the fleet's state in
// Redis (docs/fleet.md). A separate program, so that the library stays
// free of threads, timers and sockets: the services' request path never
// touches the network. Runs in the foreground until SIGTERM or SIGINT.
#include <lazybreaker/lazybreaker.h>
#include <signal.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>

#include "agent.hpp"
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

int parse(int argc, char **argv, Options *o) {
  CLI::App app{"lazybreaker-agent: one breaker state across a fleet of hosts, through Redis"};
  app.set_version_flag("--version", std::string("lazybreaker-agent ") + CB_VERSION_STRING +
                                        " (library " + cb_version_string() + ")");
  std::string url, password_file;
  lazybreaker::fleet::SentinelArgs sentinel;
  app.add_option("--file", o->files, "A registry file of this host (repeatable)")->required();
  app.add_option("--redis", url, "redis://[user[:password]@]HOST:PORT[/DB]");
  lazybreaker::fleet::add_sentinel_options(&app, &sentinel);
  app.add_option("--fleet", o->fleet, "The fleet's name, in every key (default: default)");
  app.add_option("--host", o->host, "This host's id in the fleet (default: the host name)");
  app.add_option("--password-file", password_file, "A file holding Redis's password");
  app.add_option("--listen", o->listen, "HOST:PORT to serve the fleet's Prometheus text on");
  app.add_option("--interval", o->interval_ms, "Milliseconds between polls (default 100)")
      ->check(CLI::Range(10, 60000));
  app.add_flag("--any-owner", o->any_owner,
               "Use files whoever owns them and whoever may write them");
  try {
    app.parse(argc, argv);
    lazybreaker::fleet::ConnectionOptions connection;
    std::string why = apply_sentinel_args(sentinel, app.count("--redis") > 0, &connection);
    if (!why.empty()) throw CLI::ValidationError(why);
    o->sentinels = connection.sentinels;
    o->sentinel_master = connection.sentinel_master;
    // With sentinels alone: no user, no password but --password-file's, db 0.
    auto parsed = app.count("--redis") == 0 ? std::optional(lazybreaker::fleet::RedisUrl{})
                                            : lazybreaker::fleet::parse_redis_url(url, &why);
    if (!parsed) throw CLI::ValidationError("--redis", why);
    o->redis = *parsed;
    if (!lazybreaker::fleet::valid_fleet_name(o->fleet))
      throw CLI::ValidationError("--fleet", "'" + o->fleet + "': 1..64 of A-Z a-z 0-9 _ . -");
    if (app.count("--host") == 0) o->host = host_name();
    if (!lazybreaker::fleet::valid_host_id(o->host))
      throw CLI::ValidationError("--host", "'" + o->host + "': 1..255 of A-Z a-z 0-9 _ . -");
    if (!password_file.empty()) o->password = read_password(password_file);
    std::string listen_host;
    int listen_port = 0;
    if (!o->listen.empty() &&
        !lazybreaker::fleet::parse_listen_address(o->listen, &listen_host, &listen_port, &why))
      throw CLI::ValidationError("--listen", "'" + o->listen + "': " + why);
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
  if (int code = parse(argc, argv, &opts); code >= 0) return code;
  // Every thread (the metrics server's too) inherits this mask; the main
  // loop takes the signals with sigtimedwait, which is also its sleep.
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);
  signal(SIGPIPE, SIG_IGN);

  lazybreaker::agent::HostFiles files(opts.files, opts.any_owner);
  lazybreaker::agent::AgentGauges gauges;
  lazybreaker::agent::Agent agent(opts, files, gauges);
  std::unique_ptr<lazybreaker::agent::MetricsServer> metrics;
  if (!opts.listen.empty()) {
    std::string why;
    metrics = lazybreaker::agent::MetricsServer::start(opts, gauges, &why);
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
  const timespec pause{opts.interval_ms / 1000, (opts.interval_ms % 1000) * 1'000'000L};
  for (;;) {
    agent.step();
    siginfo_t info{};
    const int sig = sigtimedwait(&stop, &info, &pause);
    if (sig == SIGINT || sig == SIGTERM) {
      lazybreaker::agent::log_event("stopping", {{"signal", sig == SIGINT ? "SIGINT" : "SIGTERM"},
                                                 {"from_pid", std::to_string(info.si_pid)}});
      break;
    }
  }
  if (metrics) metrics->stop();
  return 0;
}
