// The guard of the tools' web surfaces (cbctl serve, the agent's --listen)
// against other sites (docs/fleet.md, "Web surfaces"). A page on another
// site cannot read these servers' answers (no CORS), but a DNS-rebinding
// page can: its name, re-pointed at 127.0.0.1, makes the browser treat
// this server as that page's own origin. The browser still sends that
// name as Host, so a server that answers only to its own address (or to
// names the operator admits with --allow-host) gives such a page nothing.
// A POST is refused when its Origin names another site, so that a form or
// fetch from elsewhere cannot operate a breaker even with a stolen token.
#pragma once

#include <string>
#include <vector>

namespace httplib {
class Server;
struct Request;
}  // namespace httplib

namespace lazybreaker::fleet {

// --allow-host's value: NAME or NAME:PORT (NAME a DNS name or an IP
// address, an IPv6 one in brackets). False, with *why, for anything else.
bool valid_allow_host(const std::string &text, std::string *why);

class HostCheck {
 public:
  // listen_host: --listen's host, IPv6 without brackets ("0.0.0.0" and
  // "::" are every address); port: the port bound; allowed: the
  // --allow-host values, each valid_allow_host(). Admitted besides those:
  // the address a request came in on, and localhost when that is a
  // loopback address.
  HostCheck(const std::string &listen_host, int port, const std::vector<std::string> &allowed);

  // Empty when the request may be served; else why it is refused (403).
  std::string refusal(const httplib::Request &req) const;

  // Answers a refused request 403, text/plain, before any route sees it.
  // Call before listening; the server keeps its own copy of the check.
  void install(httplib::Server &server) const;

 private:
  struct Allowed {
    std::string host;  // canonical: lower case, an IP address in its shortest form
    int port;          // -1: any port
    bool https;        // an Origin may be https:// (a name behind a TLS proxy)
  };
  bool admits(const std::string &host, int port, bool https, const httplib::Request &req) const;
  std::vector<Allowed> allowed_;
};

}  // namespace lazybreaker::fleet
