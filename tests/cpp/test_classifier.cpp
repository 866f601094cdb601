// execute(f, classifier): which exceptions are failures, which are
// ignored, which results are failures (lazybreaker::Classifier), and that
// the exception and the result always reach the caller.
#include <doctest/doctest.h>

#include <stdexcept>
#include <string>
#include <system_error>
#include <type_traits>

#include "lazybreaker/lazybreaker.hpp"

using namespace std::chrono_literals;
using lazybreaker::Breaker;
using lazybreaker::Classifier;
using lazybreaker::Config;
using lazybreaker::Outcome;
using lazybreaker::Registry;
using lazybreaker::State;
using lazybreaker::Stats;

namespace {

struct NotFound : std::runtime_error {
  NotFound() : std::runtime_error("not found") {}
};
struct IoError : std::runtime_error {
  IoError() : std::runtime_error("i/o") {}
};
struct Timeout : IoError {};
struct Response {
  int status;
};

// Trips on its second failure: one failure shows in the stats, and the
// state says whether a second counted.
Config two_strikes() { return Config().failure_threshold(2).open_duration(1ms); }

// What one call of `f` under `c` reported, by the stats it moved.
template <class F, class C>
Stats outcome_of(const Breaker &b, F f, const C &c) {
  const Stats before = b.stats();
  try {
    (void)b.execute(f, c);
  } catch (...) {
  }
  Stats s = b.stats();
  s.successes -= before.successes;
  s.failures -= before.failures;
  s.ignored -= before.ignored;
  return s;
}

bool reported(const Stats &s, uint64_t successes, uint64_t failures, uint64_t ignored) {
  return s.successes == successes && s.failures == failures && s.ignored == ignored;
}

}  // namespace

TEST_CASE("an ignored exception is counted neither way, and is rethrown") {
  Registry reg = Registry::manual_clock();
  const Breaker b = reg.create("users", two_strikes());
  const auto c = Classifier().ignore<NotFound>();
  for (int i = 0; i < 3; ++i)
    CHECK_THROWS_AS(b.execute([]() -> int { throw NotFound(); }, c), NotFound);
  CHECK(b.stats().ignored == 3);
  CHECK(b.stats().failures == 0);
  CHECK(b.state() == State::Closed);
  // Another exception is still a failure: no record rule.
  CHECK(reported(outcome_of(
                     b, [] { throw IoError(); }, c),
                 0, 1, 0));
}

TEST_CASE("with a record rule, a recorded exception is a failure and any other a success") {
  Registry reg = Registry::manual_clock();
  const Breaker b = reg.create("users", two_strikes());
  const auto c = Classifier().record<IoError>();
  CHECK(reported(outcome_of(
                     b, [] { throw std::logic_error("bug"); }, c),
                 1, 0, 0));
  CHECK(reported(outcome_of(
                     b, [] { throw Timeout(); }, c),
                 0, 1, 0));  // derived from IoError
  CHECK_THROWS_AS(b.execute([] { throw IoError(); }, c), IoError);
  CHECK(b.state() == State::Open);
}

TEST_CASE("ignore wins over record, whatever the order they were given in") {
  Registry reg = Registry::manual_clock();
  const Breaker b = reg.create("users", two_strikes());
  const auto c = Classifier().record<std::runtime_error>().ignore<NotFound>();
  CHECK(reported(outcome_of(
                     b, [] { throw NotFound(); }, c),
                 0, 0, 1));
  CHECK(reported(outcome_of(
                     b, [] { throw IoError(); }, c),
                 0, 1, 0));
}

TEST_CASE("predicates on the exception: record_if and ignore_if") {
  Registry reg = Registry::manual_clock();
  const Breaker b = reg.create("disk", two_strikes());
  const auto c = Classifier()
                     .record_if<std::system_error>([](const std::system_error &e) {
                       return e.code() == std::errc::timed_out;
                     })
                     .ignore_if<std::system_error>([](const std::system_error &e) {
                       return e.code() == std::errc::operation_canceled;
                     });
  const auto fail_with = [](std::errc code) {
    return [code] { throw std::system_error(std::make_error_code(code)); };
  };
  CHECK(reported(outcome_of(b, fail_with(std::errc::timed_out), c), 0, 1, 0));
  CHECK(reported(outcome_of(b, fail_with(std::errc::operation_canceled), c), 0, 0, 1));
  CHECK(reported(outcome_of(b, fail_with(std::errc::no_such_file_or_directory), c), 1, 0, 0));
}

TEST_CASE("an exception of any type can be classified, std::exception or not") {
  Registry reg = Registry::manual_clock();
  const Breaker b = reg.create("legacy", two_strikes());
  const auto c = Classifier().ignore<int>();
  CHECK_THROWS_AS(b.execute([] { throw 42; }, c), int);
  CHECK(b.stats().ignored == 1);
  CHECK(reported(outcome_of(
                     b, [] { throw std::string("text"); }, c),
                 0, 1, 0));
}

TEST_CASE("fail_if: a result can be a failure, and is returned all the same") {
  Registry reg = Registry::manual_clock();
  const Breaker b = reg.create("http", two_strikes());
  const auto c =
      Classifier().ignore<NotFound>().fail_if([](const Response &r) { return r.status >= 500; });
  CHECK(b.execute([] { return Response{200}; }, c).status == 200);
  CHECK(b.stats().successes == 1);
  CHECK(b.execute([] { return Response{503}; }, c).status == 503);
  CHECK(b.stats().failures == 1);
  // The exception rules stay with the result rule.
  CHECK(reported(outcome_of(
                     b, []() -> Response { throw NotFound(); }, c),
                 0, 0, 1));
  CHECK(b.execute([] { return Response{502}; }, c).status == 502);
  CHECK(b.state() == State::Open);
}

TEST_CASE("on_result: a result can be ignored") {
  Registry reg = Registry::manual_clock();
  const Breaker b = reg.create("http", two_strikes());
  const auto c = Classifier().on_result([](const Response &r) {
    return r.status == 404   ? Outcome::Ignored
           : r.status >= 500 ? Outcome::Failure
                             : Outcome::Success;
  });
  CHECK(reported(outcome_of(
                     b, [] { return Response{404}; }, c),
                 0, 0, 1));
  CHECK(reported(outcome_of(
                     b, [] { return Response{500}; }, c),
                 0, 1, 0));
  CHECK(reported(outcome_of(
                     b, [] { return Response{204}; }, c),
                 1, 0, 0));
}

TEST_CASE("a void call is a success unless it throws, whatever the result rule") {
  Registry reg = Registry::manual_clock();
  const Breaker b = reg.create("jobs", two_strikes());
  const auto c =
      Classifier().ignore<NotFound>().fail_if([](const Response &r) { return r.status >= 500; });
  int runs = 0;
  b.execute([&] { ++runs; }, c);
  CHECK(runs == 1);
  CHECK(b.stats().successes == 1);
  CHECK(reported(outcome_of(
                     b, [] { throw NotFound(); }, c),
                 0, 0, 1));
}

TEST_CASE("a classifier that throws, or answers outside Outcome, reports a failure") {
  Registry reg = Registry::manual_clock();
  const Breaker b = reg.create("odd", Config().failure_threshold(10));
  struct Throwing {
    Outcome of_exception(const std::exception_ptr &) const { throw std::bad_alloc(); }
    Outcome of_result(int) const { throw std::bad_alloc(); }
  };
  struct OutOfRange {
    Outcome of_exception(const std::exception_ptr &) const { return Outcome(7); }
    Outcome of_result(int) const { return Outcome(-1); }
  };
  // The call's own exception and result reach the caller.
  CHECK_THROWS_AS(b.execute([] { throw NotFound(); }, Throwing{}), NotFound);
  CHECK(b.execute([] { return 5; }, Throwing{}) == 5);
  CHECK_THROWS_AS(b.execute([] { throw NotFound(); }, OutOfRange{}), NotFound);
  CHECK(b.execute([] { return 6; }, OutOfRange{}) == 6);
  CHECK(b.stats().failures == 4);
  CHECK(b.stats().successes == 0);
}

TEST_CASE("the call's exception reaches the caller even when its report fails") {
  Registry reg = Registry::manual_clock();
  Breaker b = reg.create("gone", two_strikes());
  const lazybreaker::BreakerRef view = b;
  // The breaker is destroyed during the call: cb_done fails with
  // CB_EHANDLE, and NotFound, not lazybreaker::Error, comes out.
  CHECK_THROWS_AS(
      view.execute([&] { b.destroy(), throw NotFound(); }, Classifier().ignore<IoError>()),
      NotFound);
}

TEST_CASE("a rejected call runs nothing and asks the classifier nothing") {
  Registry reg = Registry::manual_clock();
  const Breaker b = reg.create("shut", two_strikes());
  b.force_open();
  int asked = 0;
  const auto c = Classifier().fail_if([&asked](int) { return ++asked, true; });
  CHECK_THROWS_AS(b.execute([] { return 1; }, c), lazybreaker::Rejected);
  CHECK(asked == 0);
}

TEST_CASE("a classifier built on an lvalue, copied, and used with references") {
  Registry reg = Registry::manual_clock();
  const Breaker b = reg.create("cache", two_strikes());
  Classifier c;
  c.ignore<NotFound>();
  c.record<IoError>();
  const Classifier copy = c;
  CHECK(copy.of_exception(std::make_exception_ptr(NotFound())) == Outcome::Ignored);
  CHECK(copy.of_exception(std::make_exception_ptr(Timeout())) == Outcome::Failure);
  CHECK(copy.of_exception(std::make_exception_ptr(std::logic_error("x"))) == Outcome::Success);
  int value = 1;
  int &got = b.execute([&]() -> int & { return value; }, copy.fail_if([](int v) { return v < 0; }));
  CHECK(&got == &value);
  CHECK(b.stats().successes == 1);
}

static_assert(std::is_same_v<decltype(Classifier().record<IoError>()), Classifier<> &&>,
              "a builder on a temporary stays a temporary");
