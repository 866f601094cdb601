#include "host_check.hpp"

#include <arpa/inet.h>
#include <httplib.h>

#include <cctype>
#include <cstring>

namespace lazybreaker::fleet {
namespace {

// One spelling per address, so that "[::1]", "[0:0::1]" and an IPv4
// client's "::ffff:127.0.0.1" (on a socket bound to "::") compare equal
// to what they name; names compare without case (RFC 9110: the host is
// case-insensitive).
std::string canonical(const std::string &host) {
  std::string lower;
  for (char c : host) lower += char(std::tolower(static_cast<unsigned char>(c)));
  unsigned char bytes[16];
  char text[INET6_ADDRSTRLEN];
  if (inet_pton(AF_INET, lower.c_str(), bytes) == 1)
    return inet_ntop(AF_INET, bytes, text, sizeof text) ? text : lower;
  if (inet_pton(AF_INET6, lower.c_str(), bytes) != 1) return lower;
  static const unsigned char v4_mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  if (std::memcmp(bytes, v4_mapped, sizeof v4_mapped) == 0)
    return inet_ntop(AF_INET, bytes + 12, text, sizeof text) ? text : lower;
  return inet_ntop(AF_INET6, bytes, text, sizeof text) ? text : lower;
}

bool loopback(const std::string &canonical_host) {
  return canonical_host == "::1" || canonical_host.rfind("127.", 0) == 0;
}

bool name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_';
}

// "NAME", "NAME:PORT", "[IPv6]" or "[IPv6]:PORT"; *port -1 without one.
bool split_authority(const std::string &text, std::string *host, int *port) {
  std::string rest;
  if (!text.empty() && text.front() == '[') {
    const size_t close = text.find(']');
    if (close == std::string::npos) return false;
    *host = text.substr(1, close - 1);
    unsigned char bytes[16];
    if (inet_pton(AF_INET6, host->c_str(), bytes) != 1) return false;
    rest = text.substr(close + 1);
  } else {
    const size_t colon = text.find(':');
    *host = text.substr(0, colon);
    if (host->empty()) return false;
    for (char c : *host)
      if (!name_char(c)) return false;
    if (colon != std::string::npos) rest = text.substr(colon);
  }
  *port = -1;
  if (rest.empty()) return true;
  const std::string digits = rest.substr(1);
  if (rest[0] != ':' || digits.empty() || digits.size() > 5 ||
      digits.find_first_not_of("0123456789") != std::string::npos)
    return false;
  *port = std::stoi(digits);
  return *port >= 1 && *port <= 65535;
}

// A header's value in a message: printable ASCII, cut short.
std::string shown(const std::string &value) {
  std::string out;
  for (char c : value.substr(0, 80)) out += c >= 0x20 && c < 0x7f ? c : '?';
  return value.size() > 80 ? out + "..." : out;
}

}  // namespace

bool valid_allow_host(const std::string &text, std::string *why) {
  std::string host;
  int port = 0;
  if (split_authority(text, &host, &port)) return true;
  *why = "'" + shown(text) + "': expected NAME or NAME:PORT (an IPv6 address in brackets)";
  return false;
}

HostCheck::HostCheck(const std::string &listen_host, int port,
                     const std::vector<std::string> &allowed) {
  const std::string bound = canonical(listen_host);
  if (bound != "0.0.0.0" && bound != "::") {
    // The name --listen gave (its owner's choice), or its one address.
    allowed_.push_back({bound, port, false});
    // A browser resolves localhost to the loopback itself (RFC 6761), so
    // no other site can answer to it.
    if (loopback(bound)) allowed_.push_back({"localhost", port, false});
  }
  for (const std::string &text : allowed) {
    std::string host;
    int p = -1;
    if (split_authority(text, &host, &p)) allowed_.push_back({canonical(host), p, true});
  }
}

bool HostCheck::admits(const std::string &host, int port, bool https,
                       const httplib::Request &req) const {
  const std::string h = canonical(host);
  for (const Allowed &a : allowed_)
    if (a.host == h && (a.port < 0 || a.port == port) && (a.https || !https)) return true;
  if (https || port != req.local_port) return false;
  // The address this connection came in on, as a literal: what a browser
  // sends only for a page of this very server, whatever name --listen
  // gave or however many addresses it covers.
  const std::string local = canonical(req.local_addr);
  return h == local || (h == "localhost" && loopback(local));
}

std::string HostCheck::refusal(const httplib::Request &req) const {
  const size_t hosts = req.get_header_value_count("Host");
  if (hosts != 1)
    return hosts == 0 ? "refused: no Host header (this server answers only requests that name it)"
                      : "refused: more than one Host header";
  const std::string host_header = req.get_header_value("Host");
  std::string host;
  int port = -1;
  if (!split_authority(host_header, &host, &port))
    return "refused: Host '" + shown(host_header) + "' is not HOST[:PORT]";
  if (!admits(host, port < 0 ? 80 : port, false, req))
    // Not the names and addresses it would take: a rebinding page can read
    // this answer, and should learn nothing of the host from it.
    return "refused: Host '" + shown(host_header) +
           "' is not this server's address (--allow-host NAME admits a name)";
  if (req.method == "GET" || req.method == "HEAD" || !req.has_header("Origin")) return "";
  // A browser sends Origin with every POST; a script (curl) need not.
  const std::string origin = req.get_header_value("Origin");
  const bool https = origin.rfind("https://", 0) == 0;
  const size_t scheme = https ? 8 : origin.rfind("http://", 0) == 0 ? 7 : 0;
  if (req.get_header_value_count("Origin") != 1 || scheme == 0 ||
      !split_authority(origin.substr(scheme), &host, &port) ||
      !admits(host, port < 0 ? (https ? 443 : 80) : port, https, req))
    return "refused: Origin '" + shown(origin) + "' is another site (a " + shown(req.method) +
           " is taken only from this server's own page)";
  return "";
}

void HostCheck::install(httplib::Server &server) const {
  server.set_pre_routing_handler(
      [check = *this](const httplib::Request &req, httplib::Response &res) {
        const std::string why = check.refusal(req);
        if (why.empty()) return httplib::Server::HandlerResponse::Unhandled;
        res.status = 403;
        res.set_header("Cache-Control", "no-store");
        res.set_content(why + "\n", "text/plain; charset=utf-8");
        return httplib::Server::HandlerResponse::Handled;
      });
}

}  // namespace lazybreaker::fleet
