// Registries: names, lookup, capacity, destroy and reuse.
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

TEST_CASE("the default registry holds breakers with a monotonic clock") {
  cb_handle h = 0;
  REQUIRE(cb_create(nullptr, "default-registry-test", nullptr, &h) == CB_OK);
  cb_handle found = 0;
  REQUIRE(cb_lookup(cb_default_registry(), "default-registry-test", &found) == CB_OK);
  CHECK(found == h);
  call(h, CB_SUCCESS);
  CHECK(cb_destroy(h) == CB_OK);
}

TEST_CASE("a million breakers fit in the default registry") {
  std::vector<cb_handle> hs(1'000'000);
  for (size_t i = 0; i < hs.size(); ++i)
    REQUIRE(cb_create(nullptr, nullptr, nullptr, &hs[i]) == CB_OK);
  call(hs.back(), CB_FAILURE);
  CHECK(stats(hs.back()).failures == 1);
  for (cb_handle h : hs) REQUIRE(cb_destroy(h) == CB_OK);
}
