// Create/destroy churn keeps resident memory flat: a destroyed breaker's
// slot, configuration entry and window block are the next create's, before
// any never-used one (src/registry/free_list.hpp), so a registry that never
// holds more than a few breakers at once touches the memory of a few,
// however large its capacity and however many breakers it has made. So
// does opening and closing registries. Measured (resident memory from
// /proc/self/statm, page faults from getrusage), never timed.
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <string>

#include "fixture.hpp"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define LB_TEST_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define LB_TEST_SANITIZED 1
#endif
#endif

namespace {

constexpr uint32_t kCapacity = 1'000'000;
#ifdef LB_TEST_SANITIZED
// A sanitizer's build takes some 25 times as long a cycle: a twentieth of
// the cycles, against a twentieth of the bound (its shadow memory grows
// with what the library touches, so the bound holds there too).
constexpr uint32_t kCycles = 100'000;
#else
constexpr uint32_t kCycles = 2'000'000;
#endif
constexpr uint32_t kWarmUp = 1024;
constexpr long kBound = (16l << 20) / (2'000'000 / kCycles);
// A slot's lives (docs/semantics.md): a slot that has had them all retires
// and another stands in for it.
constexpr uint32_t kLives = 1u << 20;

long resident_bytes() {
  long size = 0, resident = 0;
  FILE *f = std::fopen("/proc/self/statm", "r");
  REQUIRE(f != nullptr);
  REQUIRE(std::fscanf(f, "%ld %ld", &size, &resident) == 2);
  std::fclose(f);
  return resident * sysconf(_SC_PAGESIZE);
}

struct Churn {
  long grown;      // resident bytes
  uint32_t slots;  // distinct slots the breakers were given, up to kSeen
  static constexpr uint32_t kSeen = 64;
};

// kCycles create/destroy cycles in a registry of kCapacity, with at most
// `alive` breakers alive at once, named from a set of 8 names or unnamed.
// Resident memory is measured from the end of the first kWarmUp cycles,
// which touch the pages of what a few breakers take: among them the name
// index's buckets of those names, which the registry backs with huge pages
// (2 MB for each one touched). A handle's low 24 bits are its slot
// (docs/semantics.md, Handles).
Churn churn(const cb_config &c, uint32_t alive, bool named) {
  cb_registry_options o;
  cb_registry_options_init(&o);
  o.capacity = kCapacity;
  cb_registry *reg = nullptr;
  REQUIRE(cb_registry_open(&o, &reg) == CB_OK);
  cb_handle held[4] = {};
  REQUIRE(alive <= 4);
  uint32_t seen[Churn::kSeen];
  Churn result{0, 0};
  char name[32] = "";
  long before = resident_bytes();
  for (uint32_t i = 0; i < kWarmUp + kCycles; ++i) {
    if (i == kWarmUp) before = resident_bytes();
    cb_handle &h = held[i % alive];
    // Checked only when they fail: a doctest assertion a cycle would take
    // longer than the cycle.
    if (h != 0)
      if (const int st = cb_destroy(h); st != CB_OK) REQUIRE(st == CB_OK);
    if (named) std::snprintf(name, sizeof name, "churn-%u", i % 8);
    if (const int st = cb_create(reg, named ? name : nullptr, &c, &h); st != CB_OK)
      REQUIRE(st == CB_OK);
    const uint32_t slot = uint32_t(h & 0xffffff);
    if (result.slots < Churn::kSeen &&
        std::find(seen, seen + result.slots, slot) == seen + result.slots)
      seen[result.slots++] = slot;
  }
  result.grown = resident_bytes() - before;
  for (const cb_handle h : held)
    if (h != 0) CHECK(cb_destroy(h) == CB_OK);
  cb_registry_close(reg);
  return result;
}

void check_flat(const std::string &what, uint32_t alive, const Churn &c) {
  MESSAGE(what << ": resident memory grew " << c.grown / 1024 << " KiB over " << kCycles
               << " create/destroy cycles in a registry of capacity " << kCapacity << ", in "
               << c.slots << " slots");
  CHECK(c.grown <= kBound);
  // The few slots alive at once, and those that stood in for the ones that
  // had their last life meanwhile (the registry's slots may have lived in
  // an earlier registry of the process too).
  CHECK(c.slots <= 2 * alive + (kWarmUp + kCycles) / kLives);
}

}  // namespace

#ifndef LB_TEST_SANITIZED
TEST_CASE("opening and closing a small registry touches a few pages, not its whole layout") {
  // What a registry maps is address space; a page gets memory when it is
  // first touched. A registry with one breaker, one call and no event
  // touches its slot's structures, not its event queue nor its threads'
  // held words: a service that opens a registry per request, or a test
  // suite that opens thousands, pays for what it uses. (A create also reads
  // its slot's cell in every counter stripe the process has used: one
  // thread here.)
  constexpr int kPairs = 2000;
  auto pair = [] {
    cb_registry_options o;
    cb_registry_options_init(&o);
    o.capacity = 4;
    cb_registry *reg = nullptr;
    REQUIRE(cb_registry_open(&o, &reg) == CB_OK);
    cb_handle h = 0;
    REQUIRE(cb_create(reg, "downstream", nullptr, &h) == CB_OK);
    cb_ticket t = 0;
    REQUIRE(cb_allow(h, &t) == CB_OK);
    REQUIRE(cb_done(h, t, CB_SUCCESS) == CB_OK);
    REQUIRE(cb_registry_close(reg) == CB_OK);
  };
  for (int i = 0; i < 16; ++i) pair();  // the space's first chunk, the thread's stripe
  rusage before, after;
  getrusage(RUSAGE_SELF, &before);
  for (int i = 0; i < kPairs; ++i) pair();
  getrusage(RUSAGE_SELF, &after);
  const double faults = double(after.ru_minflt - before.ru_minflt) / kPairs;
  MESSAGE("an open and close of a registry of capacity 4 faults in " << faults << " pages");
  CHECK(faults <= 16);
}
#endif

TEST_CASE("create/destroy churn with no breaker alive keeps resident memory flat") {
  cb_config c;
  cb_config_init(&c);
  check_flat("consecutive, unnamed", 1, churn(c, 1, false));
}

TEST_CASE("create/destroy churn of named window breakers keeps resident memory flat") {
  // Each life takes a name, a configuration entry and a window block, all
  // given back at its destroy; a few alive at once, as a pool's are.
  cb_config c;
  cb_config_init(&c);
  c.policy = CB_POLICY_COUNT_WINDOW;
  c.window_size = 100;
  check_flat("count window, named, 4 alive", 4, churn(c, 4, true));
}
