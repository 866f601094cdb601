// Allocation failures inside the library come back as CB_ENOMEM with a
// message, never as an exception across the C ABI (every function is
// noexcept: one escaping would end the process), and nothing leaks. This
// executable replaces the global operator new, so that the N-th allocation
// after arming fails, whoever makes it (the library's calls bind to it).
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>

#include "capi/fixture.hpp"

namespace {
std::atomic<long> g_until_failure{-1};  // allocations left before one fails; -1: never
std::atomic<long> g_live{0};            // allocations not yet freed
std::atomic<long> g_failed{0};

void *allocate(size_t n) {
  long left = g_until_failure.load();
  while (left >= 0 && !g_until_failure.compare_exchange_weak(left, left - 1)) {
  }
  if (left == 0) {
    g_failed.fetch_add(1);
    throw std::bad_alloc();
  }
  void *p = std::malloc(n == 0 ? 1 : n);
  if (p == nullptr) throw std::bad_alloc();
  g_live.fetch_add(1);
  return p;
}

void release(void *p) noexcept {
  if (p == nullptr) return;
  g_live.fetch_sub(1);
  std::free(p);
}

// Arms a failure of allocation number `n` (0 = the next) and disarms it.
struct FailAllocation {
  explicit FailAllocation(long n) {
    g_failed = 0;
    g_until_failure = n;
  }
  ~FailAllocation() { g_until_failure = -1; }
  bool happened() const { return g_failed.load() != 0; }
};
}  // namespace

// The nothrow forms too: a sanitizer's runtime defines them on its own rather
// than through the throwing ones.
void *operator new(size_t n, const std::nothrow_t &) noexcept {
  try {
    return allocate(n);
  } catch (const std::bad_alloc &) {
    return nullptr;
  }
}
void *operator new[](size_t n, const std::nothrow_t &t) noexcept { return operator new(n, t); }
void operator delete(void *p, const std::nothrow_t &) noexcept { release(p); }
void operator delete[](void *p, const std::nothrow_t &) noexcept { release(p); }
void *operator new(size_t n) { return allocate(n); }
void *operator new[](size_t n) { return allocate(n); }
void operator delete(void *p) noexcept { release(p); }
void operator delete[](void *p) noexcept { release(p); }
void operator delete(void *p, size_t) noexcept { release(p); }
void operator delete[](void *p, size_t) noexcept { release(p); }

TEST_CASE(
    "the default registry's first creation failing to allocate is CB_ENOMEM, and a later "
    "call creates it") {
  // Must be the process's first use of the default registry.
  {
    FailAllocation fail(0);
    CHECK(cb_default_registry() == nullptr);
    CHECK(fail.happened());
    CHECK(std::strstr(cb_last_error_message(), "cb_default_registry") != nullptr);
    cb_config c = config(3, 1000);
    cb_handle h = 0;
    g_until_failure = 0;
    CHECK(cb_create(nullptr, nullptr, &c, &h) == CB_ENOMEM);
  }
  CHECK(cb_default_registry() != nullptr);
}

TEST_CASE("a registry whose allocation fails is CB_ENOMEM and leaks nothing") {
  const long live = g_live.load();
  cb_registry *reg = nullptr;
  {
    FailAllocation fail(0);
    CHECK(cb_registry_open(nullptr, &reg) == CB_ENOMEM);
    CHECK(fail.happened());
    CHECK(std::strstr(cb_last_error_message(), "memory") != nullptr);
  }
  CHECK(reg == nullptr);
  CHECK(g_live.load() == live);
  REQUIRE(cb_registry_open(nullptr, &reg) == CB_OK);  // and the id it tried is not lost
  CHECK(cb_registry_close(reg) == CB_OK);
  CHECK(g_live.load() == live);
}

TEST_CASE("rendering the Prometheus text fails cleanly at every allocation it makes") {
  ManualRegistry r(64);
  for (int i = 0; i < 20; ++i) {
    const cb_handle h = r.create(config(3, 1000), ("breaker-" + std::to_string(i)).c_str());
    call(h, i % 3 == 0 ? CB_FAILURE : CB_SUCCESS);
  }
  size_t needed = 0;
  REQUIRE(cb_metrics_prometheus(r.reg, nullptr, 0, &needed) == CB_OK);
  std::string buf(needed + 1, '\0');
  const long live = g_live.load();
  int failures = 0;
  for (long n = 0;; ++n) {
    FailAllocation fail(n);
    const int st = cb_metrics_prometheus(r.reg, buf.data(), buf.size(), &needed);
    CHECK(g_live.load() == live);
    if (!fail.happened()) {
      CHECK(st == CB_OK);
      break;
    }
    ++failures;
    CHECK(st == CB_ENOMEM);
    CHECK(std::strstr(cb_last_error_message(), "out of memory") != nullptr);
  }
  CHECK(failures > 20);  // every allocation of the rendering was made to fail once
}
