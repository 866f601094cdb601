// The C++ wrapper in a few lines: a breaker guarding a flaky call, through
// execute(), a Permit and try_acquire(). A manual clock keeps it
// deterministic; a real program would use lazybreaker::Registry() or the
// default registry, and real time.
#include <chrono>
#include <cstdio>
#include <stdexcept>

#include "lazybreaker/lazybreaker.hpp"

using namespace std::chrono_literals;

namespace {

bool dependency_up = false;

int fetch_price() {
  if (!dependency_up) throw std::runtime_error("connection refused");
  return 42;
}

}  // namespace

int main() try {
  auto reg = lazybreaker::Registry::manual_clock();
  const lazybreaker::Breaker prices =
      reg.create("prices", lazybreaker::Config().failure_threshold(2).open_duration(10s));

  // execute(): success on return, failure on exception, Rejected when open.
  for (int i = 0; i < 3; ++i) {
    try {
      std::printf("price: %d\n", prices.execute(fetch_price));
    } catch (const lazybreaker::Rejected &e) {
      std::printf("%s; retry in %lld s\n", e.what(),
                  static_cast<long long>(
                      std::chrono::duration_cast<std::chrono::seconds>(e.retry_after()).count()));
    } catch (const std::runtime_error &e) {
      std::printf("call failed: %s (breaker %s)\n", e.what(), to_string(prices.state()));
    }
  }

  // The dependency recovers; after the open duration one probe goes through.
  dependency_up = true;
  reg.advance(10s);
  if (auto permit = prices.try_acquire()) {
    const int price = fetch_price();  // if this threw, the permit would report failure
    permit->success();
    std::printf("probe: price %d, breaker %s\n", price, to_string(prices.state()));
  }

  // A lookup gives a non-owning view: it never destroys the breaker.
  const lazybreaker::BreakerRef same = reg.lookup("prices");
  const lazybreaker::Stats s = same.stats();
  std::printf(
      "admitted %llu, rejected %llu, failures %llu, trips %llu\n",
      static_cast<unsigned long long>(s.admitted), static_cast<unsigned long long>(s.rejected),
      static_cast<unsigned long long>(s.failures), static_cast<unsigned long long>(s.trips));
  return prices.state() == lazybreaker::State::Closed ? 0 : 1;
} catch (const lazybreaker::Error &e) {
  std::fprintf(stderr, "lazybreaker: %s\n", e.what());
  return 1;
}
