// Registries: names, lookup, capacity, destroy and reuse.
#include <cstring>
#include <string>
#include <vector>

#include "fixture.hpp"

TEST_CASE("a name is unique in its registry and found by lookup") {
  ManualRegistry r;
  const cb_handle a = r.create(config(1, 1000), "inventory");
  cb_handle h = 0;
  CHECK(cb_create(r.reg, "inventory", nullptr, &h) == CB_EEXIST);
  REQUIRE(cb_lookup(r.reg, "inventory", &h) == CB_OK);
  CHECK(h == a);
  CHECK(cb_lookup(r.reg, "inventor", &h) == CB_ENOENT);
}

TEST_CASE("the same name may live in two registries") {
  ManualRegistry r1, r2;
  const cb_handle a = r1.create(config(1, 1000), "shared-name");
  const cb_handle b = r2.create(config(1, 1000), "shared-name");
  CHECK(a != b);
  call(a, CB_FAILURE);
  CHECK(cb_state(a) == CB_STATE_OPEN);
  CHECK(cb_state(b) == CB_STATE_CLOSED);
}

TEST_CASE("destroy frees the name for a new breaker") {
  ManualRegistry r;
  const cb_handle a = r.create(config(1, 1000), "svc");
  REQUIRE(cb_destroy(a) == CB_OK);
  cb_handle h = 0;
  CHECK(cb_lookup(r.reg, "svc", &h) == CB_ENOENT);
  const cb_handle b = r.create(config(1, 1000), "svc");
  REQUIRE(cb_lookup(r.reg, "svc", &h) == CB_OK);
  CHECK(h == b);
}

TEST_CASE("a full registry says CB_EFULL, and a destroy makes room") {
  ManualRegistry r(8);
  std::vector<cb_handle> hs;
  for (int i = 0; i < 8; ++i) hs.push_back(r.create(config(1, 1000), std::to_string(i).c_str()));
  cb_handle h = 0;
  CHECK(cb_create(r.reg, "one-more", nullptr, &h) == CB_EFULL);
  CHECK(cb_create(r.reg, nullptr, nullptr, &h) == CB_EFULL);
  REQUIRE(cb_destroy(hs[3]) == CB_OK);
  CHECK(cb_create(r.reg, "one-more", nullptr, &h) == CB_OK);
  for (int i = 0; i < 8; ++i) {
    cb_handle found = 0;
    CHECK(cb_lookup(r.reg, i == 3 ? "one-more" : std::to_string(i).c_str(), &found) == CB_OK);
  }
}

TEST_CASE("names churned through a registry many times over stay findable") {
  ManualRegistry r(64);
  for (int round = 0; round < 200; ++round) {
    std::vector<cb_handle> hs;
    for (int i = 0; i < 64; ++i) {
      const std::string name = "host-" + std::to_string(round * 64 + i);
      hs.push_back(r.create(config(1, 1000), name.c_str()));
    }
    for (int i = 0; i < 64; i += 7) {
      const std::string name = "host-" + std::to_string(round * 64 + i);
      cb_handle h = 0;
      REQUIRE(cb_lookup(r.reg, name.c_str(), &h) == CB_OK);
      REQUIRE(h == hs[size_t(i)]);
    }
    for (cb_handle h : hs) REQUIRE(cb_destroy(h) == CB_OK);
  }
}

TEST_CASE("a breaker's counters start at zero in a reused slot") {
  ManualRegistry r(1);
  const cb_handle a = r.create(config(1, 1000));
  call(a, CB_FAILURE);
  REQUIRE(cb_destroy(a) == CB_OK);
  const cb_handle b = r.create(config(1, 1000));
  const cb_stats s = stats(b);
  CHECK(s.admitted == 0);
  CHECK(s.failures == 0);
  CHECK(s.trips == 0);
  CHECK(cb_state(b) == CB_STATE_CLOSED);
}

TEST_CASE("a breaker's counters start at zero in a slot whose last lives counted in its totals") {
  ManualRegistry r(1);
  // Only ignored outcomes: they go to the breaker's totals, its cells stay 0.
  const cb_handle ignoring = r.create(config(1, 1000));
  for (int i = 0; i < 3; ++i) REQUIRE(cb_done(ignoring, admit(ignoring), CB_IGNORED) == CB_OK);
  REQUIRE(cb_destroy(ignoring) == CB_OK);
  // More successes than a counter cell's field holds: they fold into the totals.
  const cb_handle folding = r.create(config(1, 1000));
  CHECK(stats(folding).admitted == 0);
  CHECK(stats(folding).ignored == 0);
  for (int i = 0; i < 40'000; ++i) call(folding, CB_SUCCESS);
  CHECK(stats(folding).successes == 40'000);
  REQUIRE(cb_destroy(folding) == CB_OK);
  const cb_handle idle = r.create(config(1, 1000));
  REQUIRE(cb_destroy(idle) == CB_OK);
  const cb_handle next = r.create(config(1, 1000));
  const cb_stats s = stats(next);
  CHECK(s.admitted == 0);
  CHECK(s.successes == 0);
  CHECK(s.ignored == 0);
  call(next, CB_SUCCESS);
  CHECK(stats(next).successes == 1);
}

TEST_CASE("the default registry holds breakers with a monotonic clock") {
  cb_handle h = 0;
  REQUIRE(cb_create(nullptr, "default-registry-test", nullptr, &h) == CB_OK);
  cb_handle found = 0;
  REQUIRE(cb_lookup(cb_default_registry(), "default-registry-test", &found) == CB_OK);
  CHECK(found == h);
  call(h, CB_SUCCESS);
  CHECK(cb_destroy(h) == CB_OK);
}

// TSan keeps shadow state for every breaker touched, some 8 GB for a
// million (13 GB for this file), which starves a 2-core, 24 GB machine
// running the suite in parallel: under TSan the same test holds a tenth as
// many. TSan is there for the races, the release and ASan runs for the scale.
#if defined(__SANITIZE_THREAD__)
constexpr size_t kMillion = 100'000;
#else
constexpr size_t kMillion = 1'000'000;
#endif

TEST_CASE("a million breakers fit in the default registry") {
  std::vector<cb_handle> hs(kMillion);
  for (size_t i = 0; i < hs.size(); ++i)
    REQUIRE(cb_create(nullptr, nullptr, nullptr, &hs[i]) == CB_OK);
  call(hs.back(), CB_FAILURE);
  CHECK(stats(hs.back()).failures == 1);
  for (cb_handle h : hs) REQUIRE(cb_destroy(h) == CB_OK);
}

TEST_CASE("a slot passed on by a closed registry starts afresh under the next one's clock") {
  cb_registry_options o;
  cb_registry_options_init(&o);
  o.capacity = 1;
  cb_registry *monotonic = nullptr;
  REQUIRE(cb_registry_open(&o, &monotonic) == CB_OK);
  const cb_config cfg = config(1, 1000);
  cb_handle before = 0;
  REQUIRE(cb_create(monotonic, "tripped", &cfg, &before) == CB_OK);
  call(before, CB_FAILURE);  // tripped at the monotonic clock's now, far past a manual clock's 0
  REQUIRE(cb_state(before) == CB_STATE_OPEN);
  REQUIRE(cb_registry_close(monotonic) == CB_OK);

  ManualRegistry r(1);
  const cb_handle h = r.create(cfg, "tripped");
  // The freed run is the first one free, so the new breaker has the slot
  // the tripped one had (the low 24 bits of a handle are its slot).
  REQUIRE((h & 0xffffff) == (before & 0xffffff));
  CHECK(cb_state(before) == CB_EHANDLE);
  CHECK(stats(h).trips == 0);
  call(h, CB_FAILURE);
  CHECK(retry_after(h) == 1000);
  r.advance(1000);
  CHECK(stats(h).state_ns == 1000);
  CHECK(retry_after(h) == 0);
  call(h, CB_SUCCESS);
  CHECK(cb_state(h) == CB_STATE_CLOSED);
}

TEST_CASE("thousands of small registries are open at once, each its own") {
  std::vector<cb_registry *> regs(3000);
  std::vector<cb_handle> hs(regs.size());
  cb_registry_options o;
  cb_registry_options_init(&o);
  o.capacity = 1;
  o.clock = CB_CLOCK_MANUAL;
  const cb_config cfg = config(1, 1000);
  for (size_t i = 0; i < regs.size(); ++i) {
    REQUIRE(cb_registry_open(&o, &regs[i]) == CB_OK);
    REQUIRE(cb_create(regs[i], "only", &cfg, &hs[i]) == CB_OK);
    if (i % 2 == 0) call(hs[i], CB_FAILURE);
  }
  for (size_t i = 0; i < regs.size(); ++i) {
    REQUIRE(cb_state(hs[i]) == (i % 2 == 0 ? CB_STATE_OPEN : CB_STATE_CLOSED));
    cb_handle found = 0;
    REQUIRE(cb_lookup(regs[i], "only", &found) == CB_OK);
    REQUIRE(found == hs[i]);
  }
  for (cb_registry *reg : regs) REQUIRE(cb_registry_close(reg) == CB_OK);
  for (cb_handle h : hs) REQUIRE(cb_state(h) == CB_EHANDLE);
}

TEST_CASE("the open registries share 16,777,216 slots: past them, CB_EFULL, until one closes") {
  cb_registry_options o;
  cb_registry_options_init(&o);
  o.capacity = CB_MAX_CAPACITY;
  std::vector<cb_registry *> regs;
  int st = CB_OK;
  while (regs.size() < 5) {
    cb_registry *reg = nullptr;
    st = cb_registry_open(&o, &reg);
    if (st != CB_OK) break;
    regs.push_back(reg);
  }
  // Four when the default registry has not been created, three beside it.
  CHECK(regs.size() >= 3);
  CHECK(regs.size() <= 4);
  CHECK(st == CB_EFULL);
  CHECK(std::strstr(cb_last_error_message(), "16777216") != nullptr);
  cb_handle h = 0;
  REQUIRE(cb_create(regs.back(), nullptr, nullptr, &h) == CB_OK);
  REQUIRE(cb_registry_close(regs.back()) == CB_OK);
  CHECK(cb_state(h) == CB_EHANDLE);
  REQUIRE(cb_registry_open(&o, &regs.back()) == CB_OK);
  for (cb_registry *reg : regs) REQUIRE(cb_registry_close(reg) == CB_OK);
}

TEST_CASE("a process may open and close registries forever, and the default registry then works") {
  cb_registry_options o;
  cb_registry_options_init(&o);
  o.capacity = 1024;
  o.event_capacity = 2;  // what is measured is the ids, not the time to lay out an event queue
  for (int i = 0; i < 100000; ++i) {
    cb_registry *r = nullptr;
    REQUIRE(cb_registry_open(&o, &r) == CB_OK);
    REQUIRE(cb_registry_close(r) == CB_OK);
  }
  REQUIRE(cb_default_registry() != nullptr);
  cb_config c = config(3, 1000);
  cb_handle h = 0;
  REQUIRE(cb_create(nullptr, nullptr, &c, &h) == CB_OK);
  call(h, CB_SUCCESS);
  CHECK(stats(h).successes == 1);
  CHECK(cb_destroy(h) == CB_OK);
}

TEST_CASE(
    "a slot retires after its 1,048,576th life: its first handle stays refused, and a spare "
    "slot stands in for it") {
  ManualRegistry r(1);
  const cb_config c = config(3, 1000);
  const cb_handle first = r.create(c);
  call(first, CB_SUCCESS);
  REQUIRE(cb_destroy(first) == CB_OK);
  for (uint32_t life = 1; life < (1u << 20); ++life) {
    cb_handle h = 0;
    REQUIRE(cb_create(r.reg, nullptr, &c, &h) == CB_OK);
    REQUIRE(h != first);
    REQUIRE(cb_destroy(h) == CB_OK);
  }
  // Every life of the slot has been lived: the next breaker lives elsewhere.
  const cb_handle next = r.create(c);
  CHECK((next & 0xffffff) != (first & 0xffffff));
  CHECK(cb_state(first) == CB_EHANDLE);
  cb_ticket t = 0;
  CHECK(cb_allow(first, &t) == CB_EHANDLE);
  CHECK(cb_done(first, t, CB_SUCCESS) == CB_EHANDLE);
  call(next, CB_SUCCESS);
  CHECK(stats(next).successes == 1);
  // The capacity still holds: one breaker at a time.
  cb_handle extra = 0;
  CHECK(cb_create(r.reg, nullptr, &c, &extra) == CB_EFULL);
}
