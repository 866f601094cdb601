// --sentinel and --sentinel-master as the agent and cbctl take them
// (tools/fleet/sentinel_options.cpp): what is accepted, and the words of a
// refusal, which the user sees with status 2.
#include <doctest/doctest.h>

#include <string>

#include "sentinel_options.hpp"

using lazybreaker::fleet::apply_sentinel_args;
using lazybreaker::fleet::ConnectionOptions;
using lazybreaker::fleet::parse_host_ports;
using lazybreaker::fleet::SentinelArgs;

namespace {

std::string refused(const std::string &text) {
  std::string why;
  CHECK_FALSE(parse_host_ports(text, &why).has_value());
  return why;
}

}  // namespace

TEST_CASE("a list of sentinels: names, IPv4, IPv6 in brackets") {
  std::string why;
  auto all = parse_host_ports("s1.internal:26379,10.0.0.2:26380,[::1]:26381", &why);
  REQUIRE(all.has_value());
  REQUIRE(all->size() == 3);
  CHECK((*all)[0].host == "s1.internal");
  CHECK((*all)[0].port == 26379);
  CHECK((*all)[1].host == "10.0.0.2");
  CHECK((*all)[2].host == "::1");
  CHECK((*all)[2].port == 26381);
}

TEST_CASE("a bad sentinel address says which and why") {
  CHECK(refused("127.0.0.1").find("HOST:PORT") != std::string::npos);
  CHECK(refused(":26379").find("no host") != std::string::npos);
  CHECK(refused("127.0.0.1:0").find("bad port '0'") != std::string::npos);
  CHECK(refused("127.0.0.1:65536").find("bad port") != std::string::npos);
  CHECK(refused("127.0.0.1:26379x").find("bad port") != std::string::npos);
  CHECK(refused("127.0.0.1:26379,").find("''") != std::string::npos);
  CHECK(refused("[::1]26379").find("[IPv6]:PORT") != std::string::npos);
  CHECK(refused("a b:1").find("not a host") != std::string::npos);
}

TEST_CASE("--sentinel and --sentinel-master go together; --redis is optional with them") {
  ConnectionOptions o;
  CHECK(apply_sentinel_args(SentinelArgs{}, true, &o).empty());
  CHECK(o.sentinels.empty());
  CHECK(apply_sentinel_args(SentinelArgs{}, false, &o).find("--redis") != std::string::npos);
  CHECK(apply_sentinel_args(SentinelArgs{{}, "m"}, true, &o).find("goes with --sentinel") !=
        std::string::npos);
  CHECK(apply_sentinel_args(SentinelArgs{{"h:1"}, ""}, true, &o).find("--sentinel-master") !=
        std::string::npos);
  CHECK(apply_sentinel_args(SentinelArgs{{"h:1"}, "two words"}, true, &o).find("no spaces") !=
        std::string::npos);
  CHECK(apply_sentinel_args(SentinelArgs{{"h:x"}, "m"}, true, &o).rfind("--sentinel 'h:x'", 0) ==
        0);
  CHECK(o.sentinels.empty());  // nothing taken from a refused command line

  // Repeated options add up, each a list.
  CHECK(apply_sentinel_args(SentinelArgs{{"a:1", "b:2,c:3"}, "mymaster"}, false, &o).empty());
  REQUIRE(o.sentinels.size() == 3);
  CHECK(o.sentinels[2].host == "c");
  CHECK(o.sentinels[2].port == 3);
  CHECK(o.sentinel_master == "mymaster");
}
