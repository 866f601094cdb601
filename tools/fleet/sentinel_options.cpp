#include "sentinel_options.hpp"

#include <CLI/CLI.hpp>

namespace lazybreaker::fleet {
namespace {

bool fail(std::string *why, const std::string &what) {
  if (why != nullptr) *why = what;
  return false;
}

bool parse_host_port(const std::string &text, HostPort *out, std::string *why) {
  std::string host, port;
  if (!text.empty() && text.front() == '[') {
    const size_t close = text.find(']');
    if (close == std::string::npos || close + 1 >= text.size() || text[close + 1] != ':')
      return fail(why, "'" + text + "': expected [IPv6]:PORT");
    host = text.substr(1, close - 1);
    port = text.substr(close + 2);
  } else {
    const size_t colon = text.rfind(':');
    if (colon == std::string::npos) return fail(why, "'" + text + "': expected HOST:PORT");
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
  }
  if (host.empty()) return fail(why, "'" + text + "': no host before the port");
  if (host.find_first_of(" \t[]/@") != std::string::npos)
    return fail(why, "'" + text + "': not a host name or address");
  if (port.empty() || port.size() > 5 ||
      port.find_first_not_of("0123456789") != std::string::npos || std::stoi(port) < 1 ||
      std::stoi(port) > 65535)
    return fail(why, "'" + text + "': bad port '" + port + "': 1..65535");
  out->host = host;
  out->port = std::stoi(port);
  return true;
}

// Sentinel accepts any name, but the name travels space-separated in
// +switch-master messages: one with a space could never be recognised.
bool valid_master_name(const std::string &name) {
  if (name.empty() || name.size() > 255) return false;
  for (unsigned char c : name)
    if (c <= ' ' || c == 0x7f) return false;
  return true;
}

}  // namespace

void add_sentinel_options(CLI::App *app, SentinelArgs *args) {
  // One value per occurrence, so that `--sentinel A NAME` never swallows
  // the command's NAME operand; a list goes comma-separated.
  app->add_option("--sentinel", args->sentinels,
                  "HOST:PORT[,HOST:PORT...] of Redis Sentinels naming the primary (repeatable)")
      ->allow_extra_args(false);
  app->add_option("--sentinel-master", args->master,
                  "With --sentinel: the name the sentinels monitor the primary under");
}

std::optional<std::vector<HostPort>> parse_host_ports(const std::string &text, std::string *why) {
  std::vector<HostPort> out;
  size_t start = 0;
  for (;;) {
    const size_t comma = text.find(',', start);
    HostPort hp;
    if (!parse_host_port(text.substr(start, comma - start), &hp, why)) return std::nullopt;
    out.push_back(hp);
    if (comma == std::string::npos) return out;
    start = comma + 1;
  }
}

std::string apply_sentinel_args(const SentinelArgs &args, bool redis_given,
                                ConnectionOptions *out) {
  const bool sentinels = !args.sentinels.empty();
  if (!sentinels && !args.master.empty()) return "--sentinel-master: goes with --sentinel";
  if (!sentinels)
    return redis_given ? "" : "--redis (or --sentinel with --sentinel-master) is required";
  if (args.master.empty()) return "--sentinel: goes with --sentinel-master NAME";
  if (!valid_master_name(args.master))
    return "--sentinel-master '" + args.master + "': 1..255 characters, no spaces";
  std::vector<HostPort> all;
  for (const std::string &list : args.sentinels) {
    std::string why;
    auto some = parse_host_ports(list, &why);
    if (!some) return "--sentinel " + why;
    all.insert(all.end(), some->begin(), some->end());
  }
  out->sentinels = std::move(all);
  out->sentinel_master = args.master;
  return "";
}

}  // namespace lazybreaker::fleet
