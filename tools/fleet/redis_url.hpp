// redis://[user[:password]@]HOST:PORT[/DB], and rediss:// for TLS, parsed
// here because hiredis 0.14 (Debian 12) has no URL parser. TLS is the
// connection's own (OpenSSL, tools/fleet/redis.cpp): that hiredis has none.
#pragma once

#include <optional>
#include <string>

namespace lazybreaker::fleet {

struct RedisUrl {
  std::string user;      // empty: AUTH with the password alone (Redis's default user)
  std::string password;  // empty: no AUTH
  std::string host;      // a name, an IPv4 address, or an IPv6 one without its brackets
  int port = 6379;
  int db = 0;
  bool tls = false;  // rediss://
};

// The URL, or nullopt with *why saying what is wrong (never echoing the
// password). User and password may be percent-encoded (%40 for '@').
std::optional<RedisUrl> parse_redis_url(const std::string &text, std::string *why);

// The URL as a log line may show it: the password replaced by "***".
std::string redacted(const RedisUrl &url);

}  // namespace lazybreaker::fleet
