// Under an address-space limit too tight for the shared space
// (docs/semantics.md, "Memory"), registries fail with CB_ENOMEM and every
// other call still answers; nothing crashes. A program of its own, so that
// no earlier test has reserved the space before the limit is set.
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

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

  // Room for the space with 4 counter stripes (6 GiB), not with 64 (66 GiB):
  // it takes fewer stripes, and counts stay exact with more threads than
  // stripes.
  rlimit roomier = before;
  roomier.rlim_cur = mapped_bytes() + (uint64_t(8) << 30);
  REQUIRE(setrlimit(RLIMIT_AS, &roomier) == 0);
  const int opened_with_room = cb_registry_open(nullptr, &reg);
  REQUIRE(setrlimit(RLIMIT_AS, &before) == 0);
  REQUIRE(opened_with_room == CB_OK);
  {
    cb_handle shared = 0;
    REQUIRE(cb_create(reg, "shared", nullptr, &shared) == CB_OK);
    std::vector<std::thread> pool;
    for (int i = 0; i < 8; ++i)
      pool.emplace_back([shared] {
        for (int n = 0; n < 10000; ++n) {
          cb_ticket t = 0;
          if (cb_allow(shared, &t) == CB_OK) cb_done(shared, t, CB_SUCCESS);
        }
      });
    for (auto &t : pool) t.join();
    CHECK(stats(shared).admitted == 80000);
    CHECK(stats(shared).successes == 80000);
  }
  REQUIRE(cb_registry_close(reg) == CB_OK);

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
