// Under an address-space limit too tight for the shared space
// (docs/semantics.md, "Memory"), registries fail with CB_ENOMEM and every
// other call still answers; nothing crashes. A program of its own, so that
// no earlier test has reserved the space before the limit is set.
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <random>

#include "fixture.hpp"

namespace {

uint64_t mapped_bytes() {
  unsigned long pages = 0;
  std::FILE *f = std::fopen("/proc/self/statm", "r");
  REQUIRE(f != nullptr);
  REQUIRE(std::fscanf(f, "%lu", &pages) == 1);
  std::fclose(f);
  return uint64_t(pages) * uint64_t(sysconf(_SC_PAGESIZE));
}

}  // namespace

TEST_CASE("with too little address space, registries are CB_ENOMEM and calls still answer") {
  rlimit before{};
  REQUIRE(getrlimit(RLIMIT_AS, &before) == 0);
  // Room for a registry's own arena, not for the shared space's gigabytes.
  rlimit tight = before;
  tight.rlim_cur = mapped_bytes() + (uint64_t(256) << 20);
  REQUIRE(setrlimit(RLIMIT_AS, &tight) == 0);

  cb_registry *reg = nullptr;
  const int opened = cb_registry_open(nullptr, &reg);
  const bool said_why = std::strstr(cb_last_error_message(), "memory") != nullptr;
  cb_registry *const fallback = cb_default_registry();
  cb_handle h = 0;
  const int created = cb_create(nullptr, "nowhere", nullptr, &h);
  // More failed opens than a process has registry ids: a failure keeps none.
  int refused = 0;
  for (int i = 0; i < 70000; ++i) refused += cb_registry_open(nullptr, &reg) == CB_ENOMEM;
  std::mt19937_64 rng(7);
  int answered = 0;
  for (int i = 0; i < 10000; ++i) {
    cb_handle any = rng();
    cb_ticket t = 0;
    answered += cb_allow(any, &t) == CB_EHANDLE && cb_done(any, any, CB_SUCCESS) == CB_EHANDLE &&
                cb_state(any) == CB_EHANDLE;
  }
  REQUIRE(setrlimit(RLIMIT_AS, &before) == 0);

  CHECK(opened == CB_ENOMEM);
  CHECK(said_why);
  CHECK(fallback == nullptr);
  CHECK(created == CB_ENOMEM);
  CHECK(answered == 10000);
  CHECK(refused == 70000);

  // With the limit lifted, the same process opens registries as usual.
  REQUIRE(cb_registry_open(nullptr, &reg) == CB_OK);
  const cb_handle ok = [&] {
    cb_handle made = 0;
    REQUIRE(cb_create(reg, "somewhere", nullptr, &made) == CB_OK);
    return made;
  }();
  call(ok, CB_SUCCESS);
  CHECK(stats(ok).successes == 1);
  CHECK(cb_registry_close(reg) == CB_OK);
  // The default registry too: a failed first try is not the last.
  CHECK(cb_default_registry() != nullptr);
  CHECK(cb_create(nullptr, "nowhere", nullptr, &h) == CB_OK);
}
