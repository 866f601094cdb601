#include "redis_url.hpp"

#include <cctype>

namespace lazybreaker::fleet {
namespace {

bool all_digits(const std::string &s) {
  if (s.empty() || s.size() > 9) return false;
  for (char c : s)
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::optional<std::string> percent_decoded(const std::string &s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out += s[i];
      continue;
    }
    if (i + 2 >= s.size()) return std::nullopt;
    const int hi = hex_value(s[i + 1]), lo = hex_value(s[i + 2]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out += char(hi * 16 + lo);
    i += 2;
  }
  return out;
}

bool fail(std::string *why, const std::string &what) {
  if (why != nullptr) *why = what;
  return false;
}

// "user:password" or "password-less user" before the '@'.
bool parse_credentials(const std::string &text, RedisUrl *url, std::string *why) {
  const size_t colon = text.find(':');
  auto user = percent_decoded(text.substr(0, colon));
  auto password = percent_decoded(colon == std::string::npos ? "" : text.substr(colon + 1));
  if (!user || !password) return fail(why, "a bad %-escape in the user or password");
  url->user = *user;
  url->password = *password;
  return true;
}

// "HOST:PORT", "[IPv6]:PORT".
bool parse_address(const std::string &text, RedisUrl *url, std::string *why) {
  std::string host, port;
  if (!text.empty() && text.front() == '[') {
    const size_t close = text.find(']');
    if (close == std::string::npos || close + 1 >= text.size() || text[close + 1] != ':')
      return fail(why, "expected [IPv6]:PORT");
    host = text.substr(1, close - 1);
    port = text.substr(close + 2);
  } else {
    const size_t colon = text.rfind(':');
    if (colon == std::string::npos) return fail(why, "expected HOST:PORT after the scheme");
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
  }
  if (host.empty()) return fail(why, "no host before the port");
  if (!all_digits(port) || std::stoi(port) < 1 || std::stoi(port) > 65535)
    return fail(why, "bad port '" + port + "': 1..65535");
  url->host = host;
  url->port = std::stoi(port);
  return true;
}

}  // namespace

std::optional<RedisUrl> parse_redis_url(const std::string &text, std::string *why) {
  RedisUrl url;
  url.tls = text.rfind("rediss://", 0) == 0;
  const std::string scheme = url.tls ? "rediss://" : "redis://";
  if (text.rfind(scheme, 0) != 0) {
    fail(why, "expected redis://[user[:password]@]HOST:PORT[/DB] (rediss:// for TLS)");
    return std::nullopt;
  }
  std::string rest = text.substr(scheme.size());
  const size_t at = rest.rfind('@');
  if (at != std::string::npos) {
    if (!parse_credentials(rest.substr(0, at), &url, why)) return std::nullopt;
    rest = rest.substr(at + 1);
  }
  const size_t slash = rest.find('/');
  if (slash != std::string::npos) {
    const std::string db = rest.substr(slash + 1);
    if (!all_digits(db) || std::stoi(db) > 15) {
      fail(why, "bad database '" + db + "': a number, 0..15 on a default Redis");
      return std::nullopt;
    }
    url.db = std::stoi(db);
    rest = rest.substr(0, slash);
  }
  if (!parse_address(rest, &url, why)) return std::nullopt;
  return url;
}

std::string redacted(const RedisUrl &url) {
  std::string s = url.tls ? "rediss://" : "redis://";
  if (!url.user.empty() || !url.password.empty())
    s += url.user + (url.password.empty() ? "" : ":***") + "@";
  s += url.host.find(':') != std::string::npos ? "[" + url.host + "]" : url.host;
  return s + ":" + std::to_string(url.port) + "/" + std::to_string(url.db);
}

}  // namespace lazybreaker::fleet
