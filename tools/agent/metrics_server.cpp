#include "metrics_server.hpp"

#include <httplib.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <thread>
#include <utility>
#include <vector>

#include "fleet_view.hpp"
#include "host_check.hpp"
#include "listen_address.hpp"

namespace lazybreaker::agent {
namespace {

std::string agent_text(const AgentGauges &g, const std::string &host) {
  const std::string l = "{host=\"" + fleet::prometheus_label(host) + "\"}";
  std::string out;
  auto gauge = [&](const char *name, const char *type, const char *help, uint64_t v) {
    out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n" +
           name + l + " " + std::to_string(v) + "\n";
  };
  gauge("lazybreaker_agent_connected", "gauge", "1 while the agent is connected to Redis",
        g.connected ? 1 : 0);
  gauge("lazybreaker_agent_breakers", "gauge", "Named breakers in the host's files",
        g.breakers.load());
  gauge("lazybreaker_agent_poll_microseconds", "gauge", "The last step's duration",
        g.last_poll_us.load());
  gauge("lazybreaker_agent_published_total", "counter", "Changes the host told the fleet",
        g.published.load());
  gauge("lazybreaker_agent_dropped_total", "counter",
        "Trips not told: the fleet's period already covered them", g.dropped.load());
  gauge("lazybreaker_agent_applied_total", "counter", "Fleet changes applied to the host",
        g.applied.load());
  gauge("lazybreaker_agent_lease_claims_total", "counter", "Probe lease claims sent",
        g.lease_claims.load());
  gauge("lazybreaker_agent_log_entries_total", "counter", "Change log entries read",
        g.log_entries.load());
  gauge("lazybreaker_agent_ignored_total", "counter", "Foreign values met in Redis",
        g.ignored.load());
  gauge("lazybreaker_agent_connections_total", "counter", "Connections made to Redis",
        g.reconnects.load());
  return out;
}

// The fleet's state as this agent last heard it, and the host's own
// breakers under the library's metric names (docs/observability.md) with
// a host label: the fleet's totals are a sum by breaker over the agents.
std::string breakers_text(AgentGauges &g, const Options &opts) {
  std::vector<BreakerRow> rows;
  {
    std::lock_guard<std::mutex> lock(g.rows_mutex);
    rows = g.rows;
  }
  const std::string f = "fleet=\"" + fleet::prometheus_label(opts.fleet) + "\"";
  const std::string h = "host=\"" + fleet::prometheus_label(opts.host) + "\"";
  const int64_t now = fleet::wall_ms();
  std::string out;
  auto family = [&out](const char *name, const char *type, const char *help) {
    out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
  };
  // Labels in one order: fleet, host, breaker, then `more`.
  auto each = [&](const char *name, const std::string &labels, auto value,
                  const std::string &more = "") {
    for (const BreakerRow &r : rows)
      out += std::string(name) + "{" + labels + ",breaker=\"" + fleet::prometheus_label(r.name) +
             "\"" + more + "} " + value(r) + "\n";
  };
  family("lazybreaker_fleet_hosts", "gauge", "Live hosts of the fleet (heartbeats)");
  out += "lazybreaker_fleet_hosts{" + f + "} " + std::to_string(g.live_hosts.load()) + "\n";
  family("lazybreaker_fleet_state", "gauge",
         "1 for the fleet breaker's state (closed, open, forced_open, disabled)");
  for (const char *s : {"closed", "open", "forced_open", "disabled"})
    each(
        "lazybreaker_fleet_state", f,
        [&](const BreakerRow &r) { return r.fleet_state == s ? "1" : "0"; },
        std::string(",state=\"") + s + "\"");
  family("lazybreaker_fleet_open_remaining_seconds", "gauge",
         "Time until the fleet's open period ends (0 when not open or over)");
  each("lazybreaker_fleet_open_remaining_seconds", f, [&](const BreakerRow &r) {
    const int64_t left = r.fleet_state == "open" ? std::max<int64_t>(r.until_ms - now, 0) : 0;
    return std::to_string(double(left) / 1000.0);
  });
  family("lazybreaker_fleet_trips_total", "counter", "Fleet trips (a mirrored trip counts once)");
  each("lazybreaker_fleet_trips_total", f,
       [](const BreakerRow &r) { return std::to_string(r.fleet_trips); });
  family("lazybreaker_state", "gauge", "1 for this host's breaker's state");
  for (int s : {CB_STATE_CLOSED, CB_STATE_OPEN, CB_STATE_HALF_OPEN, CB_STATE_FORCED_OPEN,
                CB_STATE_DISABLED})
    each(
        "lazybreaker_state", f + "," + h,
        [&](const BreakerRow &r) { return r.host_state == s ? "1" : "0"; },
        std::string(",state=\"") + cb_state_name(s) + "\"");
  family("lazybreaker_calls_admitted_total", "counter", "Calls admitted on this host");
  each("lazybreaker_calls_admitted_total", f + "," + h,
       [](const BreakerRow &r) { return std::to_string(r.counts.admitted); });
  family("lazybreaker_calls_rejected_total", "counter", "Calls rejected on this host");
  each("lazybreaker_calls_rejected_total", f + "," + h,
       [](const BreakerRow &r) { return std::to_string(r.counts.rejected); });
  family("lazybreaker_outcomes_total", "counter", "Outcomes reported on this host");
  each(
      "lazybreaker_outcomes_total", f + "," + h,
      [](const BreakerRow &r) { return std::to_string(r.counts.successes); },
      ",outcome=\"success\"");
  each(
      "lazybreaker_outcomes_total", f + "," + h,
      [](const BreakerRow &r) { return std::to_string(r.counts.failures); },
      ",outcome=\"failure\"");
  family("lazybreaker_trips_total", "counter", "Trips of this host's breakers (mirrored ones too)");
  each("lazybreaker_trips_total", f + "," + h,
       [](const BreakerRow &r) { return std::to_string(r.trips); });
  return out;
}

class HttpMetrics final : public MetricsServer {
 public:
  HttpMetrics(const Options &opts, AgentGauges &gauges, std::vector<std::string> allow_hosts)
      : opts_(opts), gauges_(gauges), allow_hosts_(std::move(allow_hosts)) {
    gauges_.rows_wanted = true;
  }
  bool bind(std::string *why) {
    std::string host;
    int port = 0;
    if (!fleet::parse_listen_address(opts_.listen, &host, &port, why)) return false;
    server_.set_socket_options([](int sock) {
      int yes = 1;
      setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    });
    server_.Get("/metrics", [this](const httplib::Request &, httplib::Response &res) {
      const std::string body = agent_text(gauges_, opts_.host) + breakers_text(gauges_, opts_);
      res.set_content(body, "text/plain; version=0.0.4; charset=utf-8");
    });
    errno = 0;
    const bool bound =
        port == 0 ? (port = server_.bind_to_any_port(host)) > 0 : server_.bind_to_port(host, port);
    if (!bound) {
      *why = errno != 0 ? std::strerror(errno) : "cannot bind";
      return false;
    }
    fleet::HostCheck(host, port, allow_hosts_).install(server_);
    address_ = (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" +
               std::to_string(port);
    listener_ = std::thread([this] { server_.listen_after_bind(); });
    return true;
  }
  std::string address() const override { return address_; }
  void stop() override {
    server_.stop();
    if (listener_.joinable()) listener_.join();
  }
  ~HttpMetrics() override { stop(); }

 private:
  const Options &opts_;
  AgentGauges &gauges_;
  std::vector<std::string> allow_hosts_;
  httplib::Server server_;
  std::thread listener_;
  std::string address_;
};

}  // namespace

std::unique_ptr<MetricsServer> MetricsServer::start(const Options &opts, AgentGauges &gauges,
                                                    std::vector<std::string> allow_hosts,
                                                    std::string *why) {
  auto server = std::make_unique<HttpMetrics>(opts, gauges, std::move(allow_hosts));
  if (!server->bind(why)) return nullptr;
  return server;
}

}  // namespace lazybreaker::agent
