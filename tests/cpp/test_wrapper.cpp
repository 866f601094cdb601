// The C++ wrapper's own behaviour: ownership, permits, execute, exceptions.
// The state machine itself is pinned by tests/conformance.
#include <doctest/doctest.h>

#include <chrono>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "lazybreaker/lazybreaker.hpp"

using namespace std::chrono_literals;
using lazybreaker::Breaker;
using lazybreaker::BreakerRef;
using lazybreaker::Config;
using lazybreaker::Error;
using lazybreaker::Permit;
using lazybreaker::Registry;
using lazybreaker::RegistryRef;
using lazybreaker::Rejected;
using lazybreaker::State;

namespace {

// A breaker that trips on its first failure and stays open 1 ms.
Config one_strike() { return Config().failure_threshold(1).open_duration(1ms); }

struct Boom : std::runtime_error {
  Boom() : std::runtime_error("boom") {}
};

}  // namespace

static_assert(!std::is_copy_constructible_v<Registry> &&
              std::is_nothrow_move_constructible_v<Registry>);
static_assert(!std::is_copy_constructible_v<Breaker> &&
              std::is_nothrow_move_constructible_v<Breaker>);
static_assert(!std::is_copy_constructible_v<Permit> &&
              std::is_nothrow_move_constructible_v<Permit>);
static_assert(std::is_copy_constructible_v<BreakerRef> &&
              std::is_copy_constructible_v<RegistryRef>);
static_assert(!std::is_base_of_v<Error, Rejected>, "a rejection is not an error");

TEST_CASE("a registry closes on destruction, making its handles stale") {
  cb_handle h = 0;
  {
    Registry reg = Registry::manual_clock();
    Breaker b = reg.create("payments");
    h = b.release();
    CHECK(cb_state(h) == CB_STATE_CLOSED);
  }
  CHECK(cb_state(h) == CB_EHANDLE);
}

TEST_CASE("a moved registry is closed once, by its last owner") {
  Registry a = Registry::manual_clock();
  cb_registry *raw = a.raw();
  Registry b = std::move(a);
  CHECK(a.raw() == nullptr);
  CHECK(b.raw() == raw);
  Registry c = Registry::manual_clock();
  c = std::move(b);  // closes c's own registry, takes b's
  CHECK(c.raw() == raw);
  c.advance(5ns);
  CHECK(c.now() == 5ns);
  c.close();
  CHECK(c.raw() == nullptr);
  CHECK(cb_registry_close(raw) == CB_EINVAL);  // already closed
}

TEST_CASE("a breaker is destroyed with its owner; a lookup result never destroys") {
  Registry reg = Registry::manual_clock();
  {
    Breaker owned = reg.create("db", one_strike());
    {
      BreakerRef seen = reg.lookup("db");
      CHECK(seen == owned);
      CHECK(seen.name() == "db");
    }
    CHECK(reg.lookup("db").state() == State::Closed);  // the view's end destroyed nothing
  }
  CHECK_FALSE(reg.find("db").has_value());
  const Breaker again = reg.create("db");  // the name is free again
  CHECK(again.name() == "db");
}

TEST_CASE("moving a breaker moves ownership; assignment destroys the old one") {
  Registry reg = Registry::manual_clock();
  Breaker a = reg.create("a");
  Breaker b = std::move(a);
  CHECK_FALSE(a);
  CHECK(b.name() == "a");
  const BreakerRef old_b = b;
  b = reg.create("b");
  CHECK_THROWS_AS(old_b.state(), Error);
  CHECK(b.name() == "b");
  b.destroy();
  CHECK_FALSE(b);
  CHECK_FALSE(reg.find("b"));
}

TEST_CASE("an anonymous breaker has an empty name") {
  Registry reg = Registry::manual_clock();
  const Breaker b = reg.create();
  CHECK(b.name().empty());
}

TEST_CASE("a breaker outliving its registry is destroyed quietly") {
  Breaker b;
  CHECK_FALSE(b);
  {
    Registry reg = Registry::manual_clock();
    b = reg.create("x");
  }
  CHECK_THROWS_AS(b.state(), Error);
  b = Breaker();  // destroys the old one: must not throw
  CHECK_FALSE(b);
}

TEST_CASE("a permit reports once") {
  Registry reg = Registry::manual_clock();
  const Breaker b = reg.create(one_strike());
  Permit p = b.acquire();
  CHECK(p.pending());
  CHECK(p.success());
  CHECK_FALSE(p.pending());
  CHECK_FALSE(p.failure());  // would trip a one-strike breaker if it counted
  CHECK_FALSE(p.ignore());
  CHECK(b.state() == State::Closed);
  const auto s = b.stats();
  CHECK(s.admitted == 1);
  CHECK(s.successes == 1);
  CHECK(s.failures == 0);
  CHECK(s.ignored == 0);
}

TEST_CASE("a permit dropped without a report counts as ignored") {
  Registry reg = Registry::manual_clock();
  const Breaker b = reg.create(one_strike());
  { Permit p = b.acquire(); }
  CHECK(b.state() == State::Closed);
  CHECK(b.stats().ignored == 1);
}

TEST_CASE("a permit destroyed by stack unwinding reports failure") {
  Registry reg = Registry::manual_clock();
  const Breaker b = reg.create(one_strike());
  CHECK_THROWS_AS(
      [&] {
        Permit p = b.acquire();
        throw Boom();
      }(),
      Boom);
  CHECK(b.state() == State::Open);
  CHECK(b.stats().failures == 1);
}

TEST_CASE("a permit acquired during unwinding and dropped there counts as ignored") {
  // Only exceptions thrown after the permit was acquired make it a failure.
  Registry reg = Registry::manual_clock();
  const Breaker b = reg.create(one_strike());
  struct InDestructor {
    const Breaker &b;
    ~InDestructor() {
      Permit p = b.acquire();  // acquired while Boom is already in flight
    }
  };
  try {
    InDestructor d{b};
    throw Boom();
  } catch (const Boom &) {
  }
  CHECK(b.state() == State::Closed);
  CHECK(b.stats().ignored == 1);
}

TEST_CASE("moving a permit moves the duty to report") {
  Registry reg = Registry::manual_clock();
  const Breaker b = reg.create(one_strike());
  Permit a = b.acquire();
  const cb_ticket t = a.ticket();
  Permit c = std::move(a);
  CHECK_FALSE(a.pending());
  CHECK_FALSE(a.success());
  CHECK(c.ticket() == t);
  CHECK(c.breaker() == b);
  std::vector<Permit> held;
  held.push_back(std::move(c));
  CHECK(held.back().failure());
  CHECK(b.state() == State::Open);
  CHECK(b.stats().failures == 1);
  CHECK(b.stats().admitted == 1);
}

TEST_CASE("assigning over a pending permit settles it as dropped") {
  Registry reg = Registry::manual_clock();
  const Breaker b = reg.create(one_strike());
  Permit p = b.acquire();
  p = b.acquire();
  CHECK(b.stats().ignored == 1);
  CHECK(p.success());
  CHECK(b.stats().successes == 1);
}

TEST_CASE("try_acquire returns nothing when rejected") {
  Registry reg = Registry::manual_clock();
  const Breaker b = reg.create(one_strike());
  b.force_open();
  CHECK_FALSE(b.try_acquire().has_value());
  CHECK(b.stats().rejected == 1);
  b.reset();
  std::optional<Permit> p = b.try_acquire();
  REQUIRE(p.has_value());
  CHECK(p->success());
}

TEST_CASE("execute reports success and returns the result") {
  Registry reg = Registry::manual_clock();
  const Breaker b = reg.create(one_strike());
  CHECK(b.execute([] { return 42; }) == 42);
  int calls = 0;
  b.execute([&] { ++calls; });
  CHECK(calls == 1);
  std::string s = "x";
  std::string &r = b.execute([&]() -> std::string & { return s; });
  CHECK(&r == &s);
  CHECK(b.stats().successes == 3);
  CHECK(b.state() == State::Closed);
}

TEST_CASE("execute reports failure and rethrows") {
  Registry reg = Registry::manual_clock();
  const Breaker b = reg.create(one_strike());
  CHECK_THROWS_AS(b.execute([]() -> int { throw Boom(); }), Boom);
  CHECK(b.state() == State::Open);
  CHECK(b.stats().failures == 1);
}

TEST_CASE("execute throws Rejected without calling the function") {
  Registry reg = Registry::manual_clock();
  const Breaker b = reg.create("flaky", one_strike());
  CHECK_THROWS_AS(b.execute([] { throw Boom(); }), Boom);
  reg.advance(400us);
  bool called = false;
  try {
    b.execute([&] { called = true; });
    FAIL("not rejected");
  } catch (const Rejected &e) {
    CHECK(e.breaker_name() == "flaky");
    CHECK(e.retry_after() == 600us);
    CHECK(std::string(e.what()) == "circuit breaker 'flaky' rejected the call");
  }
  CHECK_FALSE(called);
  CHECK(b.stats().rejected == 1);
  b.force_open();
  try {
    (void)b.acquire();
    FAIL("not rejected");
  } catch (const Rejected &e) {
    CHECK(e.retry_after() == std::chrono::nanoseconds::max());
  }
}

TEST_CASE("state, retry_after and the manual clock through the wrapper") {
  Registry reg = Registry::manual_clock();
  const Breaker b = reg.create(Config().failure_threshold(2).open_duration(10us));
  CHECK(b.retry_after() == 0ns);
  b.acquire().failure();
  b.acquire().failure();
  CHECK(b.state() == State::Open);
  CHECK(b.retry_after() == 10us);
  reg.advance(10us);
  CHECK(b.retry_after() == 0ns);
  CHECK(b.state() == State::Open);  // reading never transitions
  Permit probe = b.acquire();
  CHECK(b.state() == State::HalfOpen);
  probe.success();
  CHECK(b.state() == State::Closed);
  b.disable();
  CHECK(b.state() == State::Disabled);
  CHECK(b.stats().trips == 1);
  CHECK(std::string(lazybreaker::to_string(State::HalfOpen)) == "half_open");
}

TEST_CASE("errors carry the status and the library's message") {
  Registry reg = Registry::manual_clock();
  SUBCASE("a bad config names the field") {
    try {
      (void)reg.create(Config().failure_threshold(0));
      FAIL("no error");
    } catch (const Error &e) {
      CHECK(e.status() == CB_EINVAL);
      CHECK(e.detail() == "cb_config: failure_threshold must be 1..65535, got 0");
      // what() is cb_strerror(status) and the detail.
      CHECK(std::string(e.what()) == std::string(cb_strerror(CB_EINVAL)) + ": " + e.detail());
    }
  }
  SUBCASE("a taken name") {
    const Breaker a = reg.create("dup");
    try {
      (void)reg.create("dup");
      FAIL("no error");
    } catch (const Error &e) {
      CHECK(e.status() == CB_EEXIST);
      CHECK(e.detail().find("taken") != std::string::npos);
    }
  }
  SUBCASE("an unknown name") {
    try {
      (void)reg.lookup("nobody");
      FAIL("no error");
    } catch (const Error &e) {
      CHECK(e.status() == CB_ENOENT);
    }
    CHECK_FALSE(reg.find("nobody").has_value());
  }
  SUBCASE("a name with a NUL byte is refused, not truncated") {
    using namespace std::string_view_literals;
    CHECK_THROWS_AS((void)reg.create("a\0b"sv), Error);
  }
  SUBCASE("a negative duration") {
    try {
      (void)reg.create(Config().open_duration(-1s));
      FAIL("no error");
    } catch (const Error &e) {
      CHECK(e.status() == CB_EINVAL);
      CHECK(e.detail() == "Config: open_duration is negative");
    }
  }
  SUBCASE("advancing a monotonic clock") {
    Registry mono;
    try {
      mono.advance(1ns);
      FAIL("no error");
    } catch (const Error &e) {
      CHECK(e.status() == CB_EINVAL);
      CHECK(e.detail().find("CB_CLOCK_MANUAL") != std::string::npos);
    }
  }
  SUBCASE("a destroyed breaker") {
    Breaker b = reg.create();
    const BreakerRef view = b;
    b.destroy();
    try {
      (void)view.try_acquire();
      FAIL("no error");
    } catch (const Error &e) {
      CHECK(e.status() == CB_EHANDLE);
      CHECK(e.detail().rfind("cb_allow: handle 0x", 0) == 0);
    }
  }
  SUBCASE("a permit whose breaker was destroyed throws on report, and not on drop") {
    Breaker b = reg.create();
    Permit p = b.acquire();
    Permit q = b.acquire();
    b.destroy();
    CHECK_THROWS_AS(p.success(), Error);
    CHECK_FALSE(p.pending());  // the ticket is spent even so
  }
}

TEST_CASE("the default registry is a view and is never closed") {
  const RegistryRef def = RegistryRef::default_registry();
  REQUIRE(def.raw() != nullptr);
  {
    const Breaker b = def.create();
    CHECK(b.state() == State::Closed);
  }
  CHECK_THROWS_AS(def.advance(1ns), Error);
  CHECK(std::string(lazybreaker::version()) == CB_VERSION_STRING);
}
