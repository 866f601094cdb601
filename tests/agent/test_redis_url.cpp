// The agent's and cbctl's Redis URL: redis://[user[:password]@]HOST:PORT[/DB]
// (rediss:// for TLS), parsed by tools/fleet since hiredis 0.14 has none.
#include <doctest/doctest.h>

#include <string>

#include "keys.hpp"
#include "redis_url.hpp"

using lazybreaker::fleet::parse_redis_url;
using lazybreaker::fleet::RedisUrl;

namespace {

RedisUrl parsed(const std::string &text) {
  std::string why;
  auto url = parse_redis_url(text, &why);
  INFO(text << ": " << why);
  REQUIRE(url.has_value());
  return *url;
}

std::string refused(const std::string &text) {
  std::string why;
  auto url = parse_redis_url(text, &why);
  CHECK_FALSE(url.has_value());
  return why;
}

}  // namespace

TEST_CASE("host and port, with or without a database") {
  RedisUrl u = parsed("redis://127.0.0.1:6379");
  CHECK(u.host == "127.0.0.1");
  CHECK(u.port == 6379);
  CHECK(u.db == 0);
  CHECK(u.user.empty());
  CHECK(u.password.empty());
  u = parsed("redis://redis.internal:16379/3");
  CHECK(u.host == "redis.internal");
  CHECK(u.port == 16379);
  CHECK(u.db == 3);
  u = parsed("redis://[::1]:6380/0");
  CHECK(u.host == "::1");
  CHECK(u.port == 6380);
  CHECK_FALSE(u.tls);
}

TEST_CASE("rediss:// is the same URL over TLS") {
  RedisUrl u = parsed("rediss://agent:pw@redis.internal:6380/2");
  CHECK(u.tls);
  CHECK(u.host == "redis.internal");
  CHECK(u.port == 6380);
  CHECK(u.db == 2);
  CHECK(u.user == "agent");
  CHECK(redacted(u) == "rediss://agent:***@redis.internal:6380/2");
  CHECK(parsed("rediss://[::1]:6379").host == "::1");
}

TEST_CASE("credentials: a password alone, a user and a password, percent-escapes") {
  RedisUrl u = parsed("redis://:s3cret@localhost:6379");
  CHECK(u.user.empty());
  CHECK(u.password == "s3cret");
  u = parsed("redis://agent:p%40ss%3Aword@localhost:6379/1");
  CHECK(u.user == "agent");
  CHECK(u.password == "p@ss:word");
  CHECK(u.db == 1);
  u = parsed("redis://agent@localhost:6379");
  CHECK(u.user == "agent");
  CHECK(u.password.empty());
}

TEST_CASE("what is refused, and why, without echoing a password") {
  CHECK(refused("redisss://h:1").find("rediss://") != std::string::npos);
  CHECK(refused("rediss://host").find("HOST:PORT") != std::string::npos);
  CHECK(refused("http://h:1").find("redis://") != std::string::npos);
  CHECK(refused("redis://host").find("HOST:PORT") != std::string::npos);
  CHECK(refused("redis://host:0").find("port") != std::string::npos);
  CHECK(refused("redis://host:65536").find("port") != std::string::npos);
  CHECK(refused("redis://host:12x").find("port") != std::string::npos);
  CHECK(refused("redis://:6379").find("host") != std::string::npos);
  CHECK(refused("redis://host:6379/x").find("database") != std::string::npos);
  CHECK(refused("redis://host:6379/16").find("database") != std::string::npos);
  CHECK(refused("redis://[::1:6379").find("IPv6") != std::string::npos);
  const std::string why = refused("redis://u:hunter2%zz@host:6379");
  CHECK(why.find("hunter2") == std::string::npos);
}

TEST_CASE("a URL as a log line shows it: the password hidden") {
  CHECK(redacted(parsed("redis://agent:hunter2@h:1/2")) == "redis://agent:***@h:1/2");
  CHECK(redacted(parsed("redis://:hunter2@h:1")) == "redis://:***@h:1/0");
  CHECK(redacted(parsed("redis://[::1]:1")) == "redis://[::1]:1/0");
}

TEST_CASE("fleet names and host ids are key-safe") {
  using lazybreaker::fleet::valid_fleet_name;
  using lazybreaker::fleet::valid_host_id;
  CHECK(valid_fleet_name("payments-eu.1_a"));
  CHECK_FALSE(valid_fleet_name(""));
  CHECK_FALSE(valid_fleet_name("a}b"));
  CHECK_FALSE(valid_fleet_name("a b"));
  CHECK_FALSE(valid_fleet_name(std::string(65, 'a')));
  CHECK(valid_host_id(std::string(255, 'h')));
  CHECK_FALSE(valid_host_id("web:1"));
  CHECK(lazybreaker::fleet::Keys("p").breaker("x/y") == "lb:{p}:b:x/y");
}
