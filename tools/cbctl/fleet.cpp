#include "fleet.hpp"

#include <lazybreaker/lazybreaker.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>

#include "changes.hpp"
#include "commands.hpp"
#include "connection_options.hpp"
#include "fleet_view.hpp"
#include "format.hpp"
#include "options.hpp"
#include "registry_file.hpp"

namespace cbctl {
namespace {

using lazybreaker::fleet::Connector;
using lazybreaker::fleet::FleetBreaker;
using lazybreaker::fleet::FleetView;
using lazybreaker::fleet::Keys;
using lazybreaker::fleet::Redis;
using lazybreaker::fleet::RedisDown;

struct Action {
  const char *name, *help;
  bool named;
  const char *kind;    // the change script's kind; nullptr: a read
  const char *result;  // what every host's breaker becomes
};
const Action kActions[] = {
    {"list", "Every fleet breaker: state, hosts, the fleet's counts", false, nullptr, nullptr},
    {"show", "Everything the fleet holds about one breaker", true, nullptr, nullptr},
    {"trip", "OPEN on every host for a while (one fleet trip), then one probe", true,
     "operator_trip", "OPEN"},
    {"force-open", "FORCED_OPEN on every host until a fleet reset", true, "operator_force_open",
     "FORCED_OPEN"},
    {"disable", "DISABLED on every host until a fleet reset", true, "operator_disable", "DISABLED"},
    {"reset", "CLOSED on every host", true, "operator_reset", "CLOSED"},
};

std::string password_of(const FleetArgs &a) {
  if (a.password_file.empty()) return "";
  std::ifstream in(a.password_file);
  if (!in) throw Failure{kExitUsage, "--password-file " + a.password_file + ": cannot be read"};
  std::stringstream ss;
  ss << in.rdbuf();
  std::string p = ss.str();
  while (!p.empty() && (p.back() == '\n' || p.back() == '\r')) p.pop_back();
  return p;
}

Connector connector(const FleetArgs &a) {
  lazybreaker::fleet::ConnectionOptions o;
  std::string why = apply_sentinel_args(a.sentinel, !a.redis.empty(), &o);
  if (!why.empty()) throw Failure{kExitUsage, why};
  // With sentinels alone: no user, no password but --password-file's, db 0.
  if (!a.redis.empty()) {
    auto url = lazybreaker::fleet::parse_redis_url(a.redis, &why);
    if (!url) throw Failure{kExitUsage, "--redis: " + why};
    o.url = *url;
  }
  if (!lazybreaker::fleet::valid_fleet_name(a.fleet))
    throw Failure{kExitUsage, "--fleet '" + a.fleet + "': 1..64 of A-Z a-z 0-9 _ . -"};
  o.password = password_of(a);
  o.tls = a.tls;
  if (!lazybreaker::fleet::complete_connection_options(&o, &why)) throw Failure{kExitUsage, why};
  return Connector(std::move(o));
}

std::unique_ptr<Redis> connect(Connector &c) {
  try {
    return c.primary(2000);
  } catch (const RedisDown &e) {
    // With sentinels, the message says what each one said.
    throw Failure{kExitRedisDown,
                  (c.options().sentinels.empty() ? c.describe() + ": " : "") + e.what()};
  }
}

std::unique_ptr<Redis> connect(const FleetArgs &a) {
  Connector c = connector(a);
  return connect(c);
}

std::string remaining(const FleetBreaker &b, int64_t now) {
  if (b.state == "forced_open") return "until reset";
  if (b.state != "open") return "-";
  const int64_t left = b.until_ms - now;
  return left > 0 ? format_duration(uint64_t(left) * 1'000'000u) : "probing";
}

std::string upper(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return char(std::toupper(c)); });
  return s;
}

std::string hosts_of(const FleetView &v, const std::string &name) {
  auto it = v.hosts_of.find(name);
  if (it == v.hosts_of.end() || it->second.empty()) return "-";
  std::string out;
  for (const std::string &h : it->second) out += (out.empty() ? "" : ",") + h;
  return out;
}

std::string breaker_json(const FleetView &v, const FleetBreaker &b, int64_t now) {
  std::string hosts = "[";
  if (auto it = v.hosts_of.find(b.name); it != v.hosts_of.end())
    for (const std::string &h : it->second) hosts += (hosts.size() > 1 ? "," : "") + json_string(h);
  hosts += "]";
  const int64_t left = b.state == "open" ? std::max<int64_t>(b.until_ms - now, 0) : 0;
  return "{\"name\":" + json_string(b.name) + ",\"state\":" + json_string(b.state) +
         ",\"epoch\":" + std::to_string(b.epoch) + ",\"until_ms\":" + std::to_string(b.until_ms) +
         ",\"remaining_ms\":" + std::to_string(left) + ",\"by\":" + json_string(b.by) +
         ",\"reason\":" + json_string(b.reason) + ",\"hosts\":" + hosts +
         ",\"trips\":" + std::to_string(b.trips) + ",\"admitted\":" + std::to_string(b.admitted) +
         ",\"rejected\":" + std::to_string(b.rejected) +
         ",\"successes\":" + std::to_string(b.successes) +
         ",\"failures\":" + std::to_string(b.failures) + "}";
}

void warn_ignored(const FleetView &v) {
  for (const std::string &why : v.ignored)
    std::fprintf(stderr, "cbctl: ignored, not a fleet breaker: %s\n", printable(why).c_str());
}

int run_list(const FleetArgs &a) {
  const std::unique_ptr<Redis> redis = connect(a);
  const FleetView v = lazybreaker::fleet::read_fleet(*redis, Keys(a.fleet));
  const int64_t now = lazybreaker::fleet::wall_ms();
  warn_ignored(v);
  if (a.json) {
    std::string out =
        "{\"fleet\":" + json_string(a.fleet) + ",\"live_hosts\":" + std::to_string(v.live_hosts) +
        ",\"counts_in_redis\":" + (v.counts_in_redis ? "true" : "false") + ",\"breakers\":[";
    for (size_t i = 0; i < v.breakers.size(); ++i)
      out += (i ? "," : "") + breaker_json(v, v.breakers[i], now);
    std::printf("%s]}\n", out.c_str());
    return kExitOk;
  }
  // Call counts are in Redis only from agents started with --fleet-counts.
  std::vector<std::vector<std::string>> rows{{"NAME", "STATE", "REMAINING", "HOSTS", "TRIPS"}};
  if (v.counts_in_redis) rows[0].insert(rows[0].end(), {"ADMITTED", "REJECTED", "FAILURES"});
  for (const FleetBreaker &b : v.breakers) {
    rows.push_back({printable(b.name), upper(b.state), remaining(b, now), hosts_of(v, b.name),
                    std::to_string(b.trips)});
    if (v.counts_in_redis)
      rows.back().insert(rows.back().end(), {std::to_string(b.admitted), std::to_string(b.rejected),
                                             std::to_string(b.failures)});
  }
  std::vector<size_t> width(rows[0].size(), 0);
  for (const auto &r : rows)
    for (size_t i = 0; i < r.size(); ++i) width[i] = std::max(width[i], r[i].size());
  for (const auto &r : rows) {
    std::string line;
    for (size_t i = 0; i < r.size(); ++i)
      line += r[i] + (i + 1 < r.size() ? std::string(width[i] - r[i].size() + 2, ' ') : "");
    std::printf("%s\n", line.c_str());
  }
  std::printf("%zu live hosts; call counts: %s\n", v.live_hosts,
              v.counts_in_redis ? "in Redis (agents with --fleet-counts), above"
                                : "each host's agent --listen /metrics (sum by breaker)");
  return kExitOk;
}

const FleetBreaker &find(const FleetView &v, const FleetArgs &a) {
  for (const FleetBreaker &b : v.breakers)
    if (b.name == a.name) return b;
  throw Failure{kExitNoBreaker,
                "fleet " + a.fleet + ": no breaker named '" + printable(a.name) + "'"};
}

int run_show(const FleetArgs &a) {
  const std::unique_ptr<Redis> redis = connect(a);
  const FleetView v = lazybreaker::fleet::read_fleet(*redis, Keys(a.fleet));
  warn_ignored(v);
  const FleetBreaker &b = find(v, a);
  const int64_t now = lazybreaker::fleet::wall_ms();
  if (a.json) {
    std::printf("%s\n", breaker_json(v, b, now).c_str());
    return kExitOk;
  }
  std::printf(
      "name:        %s\nfleet:       %s\nstate:       %s\nremaining:   %s\nepoch:       %llu\n"
      "changed by:  %s (%s)\nhosts:       %s\ntrips:       %llu\nadmitted:    %llu\n"
      "rejected:    %llu\nsuccesses:   %llu\nfailures:    %llu\n",
      printable(b.name).c_str(), a.fleet.c_str(), upper(b.state).c_str(), remaining(b, now).c_str(),
      (unsigned long long)b.epoch, b.by.empty() ? "-" : printable(b.by).c_str(),
      b.reason.empty() ? "-" : b.reason.c_str(), hosts_of(v, b.name).c_str(),
      (unsigned long long)b.trips, (unsigned long long)b.admitted, (unsigned long long)b.rejected,
      (unsigned long long)b.successes, (unsigned long long)b.failures);
  return kExitOk;
}

// An operator's change through the fleet's change script (the one every
// host's agent applies): `cbctl fleet trip|...` and `cbctl serve --redis`.
void change(Redis &redis, const std::string &fleet, const std::string &name, const char *kind,
            uint64_t for_ns) {
  const int64_t now = lazybreaker::fleet::wall_ms();
  const bool trip = kind == std::string("operator_trip");
  const int64_t until = trip ? now + int64_t(for_ns / 1'000'000) : 0;
  const std::vector<lazybreaker::fleet::ChangeResult> r = lazybreaker::fleet::publish_changes(
      redis, Keys(fleet), "operator", now, 0, {{name, kind, until, kind}});
  if (!r.front().foreign.empty())
    throw Failure{kExitRedisError,
                  "fleet " + fleet + ": " + printable(name) + ": " + r.front().foreign};
}

bool trip_period_ok(uint64_t for_ns) {
  return for_ns >= CB_MIN_OPEN_DURATION_NS && for_ns <= CB_MAX_DURATION_NS;
}

int run_change(const FleetArgs &a, const Action &act) {
  const uint64_t for_ns = duration(a.trip_for);
  const bool trip = act.kind == std::string("operator_trip");
  if (trip && !trip_period_ok(for_ns))
    throw Failure{kExitUsage, "--for " + a.trip_for + ": must be within 1us..366d"};
  const std::unique_ptr<Redis> redis = connect(a);
  change(*redis, a.fleet, a.name, act.kind, for_ns);
  std::string what = act.result;
  if (trip) what += " for " + format_duration(for_ns);
  std::printf("%s: %s on every host of fleet %s\n", printable(a.name).c_str(), what.c_str(),
              a.fleet.c_str());
  return kExitOk;
}

// cbctl serve --redis: the fleet read afresh per request over one
// connection (made again after a loss), its changes by the same script.
class FleetSource : public ServeSource {
 public:
  explicit FleetSource(const FleetArgs &a)
      : args_(a), connector_(connector(args_)), redis_(connect(connector_)) {}
  std::string describe() const override {
    return "fleet " + args_.fleet + " at " + connector_.describe();
  }
  std::string prometheus() override {
    const FleetView v = read();
    return lazybreaker::fleet::fleet_prometheus(v, args_.fleet, lazybreaker::fleet::wall_ms());
  }
  std::string breakers_json() override {
    const FleetView v = read();
    const int64_t now = lazybreaker::fleet::wall_ms();
    std::string out = "{\"fleet\":" + json_string(args_.fleet) +
                      ",\"now_ms\":" + std::to_string(now) + ",\"breakers\":[";
    for (size_t i = 0; i < v.breakers.size(); ++i) {
      std::string b = breaker_json(v, v.breakers[i], now);
      b.pop_back();  // the closing brace: one more field
      out +=
          (i ? "," : "") + b + ",\"changed_ms\":" + std::to_string(v.breakers[i].changed_ms) + "}";
    }
    return out + "]}";
  }
  std::string act(const std::string &name, const std::string &action, uint64_t for_ns,
                  int *status) override {
    const Action *found = nullptr;
    for (const Action &a : kActions)
      if (a.kind != nullptr && action == a.name) found = &a;
    if (found == nullptr) return *status = 404, "no action " + action;
    if (action == "trip" && !trip_period_ok(for_ns))
      return *status = 400, "for=" + format_duration(for_ns) + ": must be within 1us..366d";
    try {
      ensure_connected();
      change(*redis_, args_.fleet, name, found->kind, for_ns);
      return "";
    } catch (const RedisDown &e) {
      redis_.reset();
      return *status = 503, std::string("Redis: ") + e.what();
    } catch (const Failure &f) {
      return *status = f.exit_code == kExitRedisDown ? 503 : 409, f.message;
    }
  }

 private:
  void ensure_connected() {
    // Reads on a demoted primary would go on answering, stale: the
    // sentinels' word moves the page to the new one.
    if (connector_.failover_announced()) redis_.reset();
    if (!redis_) redis_ = connect(connector_);
  }
  FleetView read() {
    try {
      ensure_connected();
      return lazybreaker::fleet::read_fleet(*redis_, Keys(args_.fleet));
    } catch (const RedisDown &e) {
      redis_.reset();
      throw Failure{kExitRedisDown, std::string("Redis: ") + e.what()};
    }
  }
  FleetArgs args_;
  Connector connector_;
  std::unique_ptr<Redis> redis_;
};

}  // namespace

void add_fleet_command(CLI::App *app, FleetArgs *a) {
  CLI::App *fleet =
      app->add_subcommand("fleet", "The fleet's breakers in Redis (lazybreaker-agent)");
  fleet->require_subcommand(1, 1);
  for (const Action &act : kActions) {
    CLI::App *cmd = fleet->add_subcommand(act.name, act.help);
    if (act.named) cmd->add_option("NAME", a->name, "The breaker's name")->required();
    cmd->add_option("--redis", a->redis, "redis[s]://[user[:password]@]HOST:PORT[/DB]");
    lazybreaker::fleet::add_sentinel_options(cmd, &a->sentinel);
    cmd->add_option("--fleet", a->fleet, "The fleet's name (default: default)");
    cmd->add_option("--password-file", a->password_file, "A file holding Redis's password");
    lazybreaker::fleet::add_tls_options(cmd, &a->tls);
    if (act.kind != nullptr && std::string_view(act.kind) == "operator_trip")
      cmd->add_option("--for", a->trip_for, "How long it stays OPEN (default 30s)")
          ->check(duration_validator());
    if (act.kind == nullptr) cmd->add_flag("--json", a->json, "JSON instead of text");
  }
}

bool names_redis(const FleetArgs &a) { return !a.redis.empty() || !a.sentinel.sentinels.empty(); }

std::unique_ptr<ServeSource> fleet_source(const FleetArgs &a) {
  try {
    return std::make_unique<FleetSource>(a);
  } catch (const RedisDown &e) {
    throw Failure{kExitRedisDown, "Redis: " + std::string(e.what())};
  }
}

int run_fleet(const CLI::App &fleet, const FleetArgs &a) {
  for (const Action &act : kActions) {
    if (!fleet.got_subcommand(act.name)) continue;
    try {
      if (act.kind == nullptr) return act.named ? run_show(a) : run_list(a);
      return run_change(a, act);
    } catch (const RedisDown &e) {
      throw Failure{kExitRedisDown, "Redis: " + std::string(e.what())};
    }
  }
  return kExitUsage;
}

}  // namespace cbctl
