#include "metrics_server.hpp"

#include <httplib.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include "fleet_view.hpp"
#include "listen_address.hpp"

namespace lazybreaker::agent {
namespace {

std::string agent_text(const AgentGauges &g, const std::string &host) {
  const std::string l = "{host=\"" + host + "\"}";
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
  gauge("lazybreaker_agent_applied_total", "counter", "Fleet changes applied to the host",
        g.applied.load());
  gauge("lazybreaker_agent_ignored_total", "counter", "Foreign values met in Redis",
        g.ignored.load());
  gauge("lazybreaker_agent_connections_total", "counter", "Connections made to Redis",
        g.reconnects.load());
  return out;
}

class HttpMetrics final : public MetricsServer {
 public:
  HttpMetrics(const Options &opts, const AgentGauges &gauges) : opts_(opts), gauges_(gauges) {}
  bool bind(std::string *why) {
    std::string host;
    int port = 0;
    if (!fleet::parse_listen_address(opts_.listen, &host, &port, why)) return false;
    server_.set_socket_options([](int sock) {
      int yes = 1;
      setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    });
    server_.Get("/metrics", [this](const httplib::Request &, httplib::Response &res) {
      std::string body = agent_text(gauges_, opts_.host);
      try {
        fleet::Redis redis(fleet::HostPort{opts_.redis.host, opts_.redis.port}, opts_.connection,
                           1000);
        body += fleet::fleet_prometheus(fleet::read_fleet(redis, fleet::Keys(opts_.fleet)),
                                        opts_.fleet, fleet::wall_ms());
      } catch (const fleet::RedisDown &e) {
        body += "# the fleet's state is not readable now: Redis: " + std::string(e.what()) + "\n";
      }
      res.set_content(body, "text/plain; version=0.0.4; charset=utf-8");
    });
    errno = 0;
    const bool bound =
        port == 0 ? (port = server_.bind_to_any_port(host)) > 0 : server_.bind_to_port(host, port);
    if (!bound) {
      *why = errno != 0 ? std::strerror(errno) : "cannot bind";
      return false;
    }
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
  const AgentGauges &gauges_;
  httplib::Server server_;
  std::thread listener_;
  std::string address_;
};

}  // namespace

std::unique_ptr<MetricsServer> MetricsServer::start(const Options &opts, const AgentGauges &gauges,
                                                    std::string *why) {
  auto server = std::make_unique<HttpMetrics>(opts, gauges);
  if (!server->bind(why)) return nullptr;
  return server;
}

}  // namespace lazybreaker::agent
