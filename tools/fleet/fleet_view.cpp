#include "fleet_view.hpp"

#include <time.h>

#include <algorithm>
#include <charconv>
#include <map>

namespace lazybreaker::fleet {
namespace {

bool known_state(const std::string &s) {
  return s == "closed" || s == "open" || s == "forced_open" || s == "disabled";
}

bool set_field(FleetBreaker *b, const std::string &field, const std::string &value) {
  if (field == "state") {
    b->state = value;
    return known_state(value);
  }
  if (field == "by") return b->by = value, true;
  if (field == "reason") return b->reason = value, true;
  if (field == "epoch") return whole_number(value, &b->epoch);
  if (field == "until_ms") return whole_number(value, &b->until_ms);
  if (field == "changed_ms") return whole_number(value, &b->changed_ms);
  if (field == "trips") return whole_number(value, &b->trips);
  if (field == "admitted" || field == "rejected" || field == "successes" || field == "failures")
    b->has_counts = true;
  if (field == "admitted") return whole_number(value, &b->admitted);
  if (field == "rejected") return whole_number(value, &b->rejected);
  if (field == "successes") return whole_number(value, &b->successes);
  if (field == "failures") return whole_number(value, &b->failures);
  return true;  // a field of a later agent: not ours to judge
}

std::vector<std::string> strings_of(const redisReply *r) {
  std::vector<std::string> out;
  if (r == nullptr || r->type != REDIS_REPLY_ARRAY) return out;
  for (size_t i = 0; i < r->elements; ++i)
    if (r->element[i]->type == REDIS_REPLY_STRING) out.push_back(text_of(r->element[i]));
  return out;
}

std::string label(const std::string &v) {
  std::string out;
  for (char c : v) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

}  // namespace

std::string prometheus_label(const std::string &v) { return label(v); }

int64_t wall_ms() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return int64_t(ts.tv_sec) * 1000 + ts.tv_nsec / 1'000'000;
}

std::optional<FleetBreaker> parse_breaker(const std::string &name, const redisReply *r,
                                          std::string *why) {
  FleetBreaker b;
  b.name = name;
  if (r == nullptr || r->type != REDIS_REPLY_ARRAY || r->elements % 2 != 0) {
    *why = r != nullptr && r->type == REDIS_REPLY_ERROR ? text_of(r) : "not a hash";
    return std::nullopt;
  }
  for (size_t i = 0; i + 1 < r->elements; i += 2) {
    const std::string field = text_of(r->element[i]), value = text_of(r->element[i + 1]);
    if (!set_field(&b, field, value)) {
      *why = "field '" + field + "' holds '" + value.substr(0, 40) + "'";
      return std::nullopt;
    }
  }
  return b;
}

FleetView read_fleet(Redis &redis, const Keys &keys) {
  FleetView view;
  const std::string now = std::to_string(wall_ms());
  std::vector<Reply> first = redis.pipeline({{"SMEMBERS", keys.names()},
                                             {"ZRANGEBYSCORE", keys.hosts(), now, "+inf"},
                                             {"HGETALL", keys.host_sets()}});
  std::vector<std::string> names = strings_of(first[0].get());
  const std::vector<std::string> hosts = strings_of(first[1].get());
  const std::vector<std::string> sets = strings_of(first[2].get());
  for (size_t i = 0; i < 3; ++i)
    if (is_error(first[i].get())) view.ignored.push_back(text_of(first[i].get()));
  view.live_hosts = hosts.size();
  std::sort(names.begin(), names.end());
  // Hosts that run the same names share one stored set: read each once.
  std::map<std::string, std::string> digest_of;  // live host -> its name set
  for (size_t i = 0; i + 1 < sets.size(); i += 2)
    if (std::binary_search(hosts.begin(), hosts.end(), sets[i])) digest_of[sets[i]] = sets[i + 1];
  std::vector<std::string> digests;
  for (const auto &[host, d] : digest_of) digests.push_back(d);
  std::sort(digests.begin(), digests.end());
  digests.erase(std::unique(digests.begin(), digests.end()), digests.end());
  std::vector<Command> second;
  for (const std::string &n : names) second.push_back({"HGETALL", keys.breaker(n)});
  for (const std::string &d : digests) second.push_back({"SMEMBERS", keys.name_set(d)});
  std::vector<Reply> replies = redis.pipeline(second);
  for (size_t i = 0; i < names.size(); ++i) {
    std::string why;
    if (auto b = parse_breaker(names[i], replies[i].get(), &why)) {
      view.counts_in_redis |= b->has_counts;
      view.breakers.push_back(std::move(*b));
    } else {
      view.ignored.push_back(keys.breaker(names[i]) + ": " + why);
    }
  }
  std::map<std::string, std::vector<std::string>> names_of;  // digest -> names
  for (size_t j = 0; j < digests.size(); ++j)
    names_of[digests[j]] = strings_of(replies[names.size() + j].get());
  for (const auto &[host, d] : digest_of)
    for (const std::string &n : names_of[d]) view.hosts_of[n].push_back(host);
  for (auto &[n, hs] : view.hosts_of) std::sort(hs.begin(), hs.end());
  return view;
}

std::string fleet_prometheus(const FleetView &view, const std::string &fleet, int64_t now_ms) {
  std::string out;
  auto family = [&out](const char *name, const char *type, const char *help) {
    out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
  };
  auto labels = [&fleet](const FleetBreaker &b) {
    return "{fleet=\"" + label(fleet) + "\",breaker=\"" + label(b.name) + "\"";
  };
  family("lazybreaker_fleet_state", "gauge",
         "1 for the fleet breaker's state (closed, open, forced_open, disabled)");
  for (const FleetBreaker &b : view.breakers)
    for (const char *s : {"closed", "open", "forced_open", "disabled"})
      out += "lazybreaker_fleet_state" + labels(b) + ",state=\"" + s + "\"} " +
             (b.state == s ? "1" : "0") + "\n";
  family("lazybreaker_fleet_open_remaining_seconds", "gauge",
         "Time until the fleet's open period ends (0 when not open or over)");
  for (const FleetBreaker &b : view.breakers) {
    const int64_t left = b.state == "open" ? std::max<int64_t>(b.until_ms - now_ms, 0) : 0;
    out += "lazybreaker_fleet_open_remaining_seconds" + labels(b) + "} " +
           std::to_string(double(left) / 1000.0) + "\n";
  }
  family("lazybreaker_fleet_hosts", "gauge", "Live hosts that report the breaker");
  for (const FleetBreaker &b : view.breakers) {
    auto it = view.hosts_of.find(b.name);
    out += "lazybreaker_fleet_hosts" + labels(b) + "} " +
           std::to_string(it == view.hosts_of.end() ? 0 : it->second.size()) + "\n";
  }
  struct Counter {
    const char *name, *help;
    uint64_t FleetBreaker::*field;
  };
  for (const Counter &c :
       {Counter{"lazybreaker_fleet_trips_total", "Fleet trips (a mirrored trip counts once)",
                &FleetBreaker::trips},
        Counter{"lazybreaker_fleet_admitted_total", "Calls admitted, every host",
                &FleetBreaker::admitted},
        Counter{"lazybreaker_fleet_rejected_total", "Calls rejected, every host",
                &FleetBreaker::rejected},
        Counter{"lazybreaker_fleet_successes_total", "Successes reported, every host",
                &FleetBreaker::successes},
        Counter{"lazybreaker_fleet_failures_total", "Failures reported, every host",
                &FleetBreaker::failures}}) {
    // Call counts are in Redis only with --fleet-counts; else no family
    // claims totals it does not have (each host's /metrics holds them).
    if (c.field != &FleetBreaker::trips && !view.counts_in_redis) continue;
    family(c.name, "counter", c.help);
    for (const FleetBreaker &b : view.breakers)
      out += std::string(c.name) + labels(b) + "} " + std::to_string(b.*c.field) + "\n";
  }
  return out;
}

}  // namespace lazybreaker::fleet
