// Names through the C ABI: every length from 1 to CB_MAX_NAME_BYTES reads
// back exactly, a full registry holds its capacity of the longest names,
// and names of shifting lengths churned through a registry never run it
// out of room below its capacity, from one thread or several (a million
// cycles below the C ABI: tests/registry/test_name_store.cpp).
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "fixture.hpp"

namespace {

// A name of `length` bytes of ASCII, distinct for each (seed, length) while
// 64^min(length, 4) > seed: the seed is written in base 64 in the last bytes.
std::string name_of(uint32_t seed, size_t length) {
  static const char kDigits[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-";
  std::string s(length, 'a');
  for (size_t i = 0; i < length; ++i) s[i] = kDigits[(seed * 7 + i * 13 + length) % 64];
  for (size_t i = length; i > 0 && i + 4 > length; --i, seed /= 64) s[i - 1] = kDigits[seed % 64];
  return s;
}

std::string name(cb_handle h) {
  char buf[CB_MAX_NAME_BYTES + 1];
  REQUIRE(cb_name(h, buf, sizeof buf) == CB_OK);
  return buf;
}

struct Rng {
  uint64_t x;
  uint32_t operator()() {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    return uint32_t(x >> 33);
  }
};

}  // namespace

TEST_CASE("names of every length from 1 to 255 bytes read back exactly and are found") {
  ManualRegistry r(CB_MAX_NAME_BYTES);
  std::vector<cb_handle> hs;
  for (size_t length = 1; length <= CB_MAX_NAME_BYTES; ++length)
    hs.push_back(r.create(config(1, 1000), name_of(0, length).c_str()));
  for (size_t length = 1; length <= CB_MAX_NAME_BYTES; ++length) {
    const std::string n = name_of(0, length);
    CHECK(name(hs[length - 1]) == n);
    cb_handle found = 0;
    REQUIRE(cb_lookup(r.reg, n.c_str(), &found) == CB_OK);
    CHECK(found == hs[length - 1]);
    // One byte more or less, or the last byte changed, is another name.
    if (length < CB_MAX_NAME_BYTES) CHECK(cb_lookup(r.reg, (n + "~").c_str(), &found) == CB_ENOENT);
    std::string changed = n;
    changed.back() = '~';
    CHECK(cb_lookup(r.reg, changed.c_str(), &found) == CB_ENOENT);
  }
}

TEST_CASE("a full registry holds its capacity of 255-byte names, then of 1-byte ones") {
  constexpr uint32_t kCapacity = 1024;
  ManualRegistry r(kCapacity);
  std::vector<cb_handle> hs;
  for (uint32_t i = 0; i < kCapacity; ++i)
    hs.push_back(r.create(config(1, 1000), name_of(i, CB_MAX_NAME_BYTES).c_str()));
  cb_handle h = 0;
  CHECK(cb_create(r.reg, "one-more", nullptr, &h) == CB_EFULL);
  for (uint32_t i = 0; i < kCapacity; ++i) REQUIRE(name(hs[i]) == name_of(i, CB_MAX_NAME_BYTES));
  for (const cb_handle x : hs) REQUIRE(cb_destroy(x) == CB_OK);
  // 64 one-byte names, the rest two to four bytes: short names after long.
  hs.clear();
  for (uint32_t i = 0; i < kCapacity; ++i) {
    const std::string n = i < 64 ? name_of(i, 1) : name_of(i, 2 + i % 3);
    hs.push_back(r.create(config(1, 1000), n.c_str()));
    REQUIRE(name(hs.back()) == n);
  }
}

TEST_CASE("rounds of names of one length after another never fill a registry below capacity") {
  // A destroyed name's space serves the next name of its size only, so
  // these rounds spend the registry's name pool: names must still fit.
  constexpr uint32_t kCapacity = 64;
  ManualRegistry r(kCapacity);
  for (size_t length = 1; length <= CB_MAX_NAME_BYTES; ++length) {
    std::vector<cb_handle> hs;
    for (uint32_t i = 0; i < kCapacity; ++i)
      hs.push_back(r.create(config(1, 1000), name_of(i, length).c_str()));
    for (uint32_t i = 0; i < kCapacity; ++i) REQUIRE(name(hs[i]) == name_of(i, length));
    for (const cb_handle h : hs) REQUIRE(cb_destroy(h) == CB_OK);
  }
  for (size_t length = CB_MAX_NAME_BYTES; length >= 1; --length) {
    std::vector<cb_handle> hs;
    for (uint32_t i = 0; i < kCapacity; ++i)
      hs.push_back(r.create(config(1, 1000), name_of(i, length).c_str()));
    for (uint32_t i = 0; i < kCapacity; ++i) REQUIRE(name(hs[i]) == name_of(i, length));
    for (const cb_handle h : hs) REQUIRE(cb_destroy(h) == CB_OK);
  }
}

TEST_CASE("300,000 creates and destroys of random-length names: none fails below capacity") {
  constexpr uint32_t kCapacity = 32;
  ManualRegistry r(kCapacity);
  std::vector<std::string> all;  // all[k * 255 + length - 1]
  for (uint32_t k = 0; k < kCapacity; ++k)
    for (size_t length = 1; length <= CB_MAX_NAME_BYTES; ++length)
      all.push_back(name_of(k, length));
  Rng next{42};
  std::vector<cb_handle> live(kCapacity, 0);
  std::vector<const std::string *> names(kCapacity);
  for (uint32_t n = 0; n < 300'000; ++n) {
    const uint32_t k = next() % kCapacity;
    if (live[k] != 0) {
      char buf[CB_MAX_NAME_BYTES + 1];
      REQUIRE(cb_name(live[k], buf, sizeof buf) == CB_OK);
      REQUIRE(*names[k] == buf);
      REQUIRE(cb_destroy(live[k]) == CB_OK);
      live[k] = 0;
    } else {
      names[k] = &all[k * CB_MAX_NAME_BYTES + next() % CB_MAX_NAME_BYTES];
      REQUIRE(cb_create(r.reg, names[k]->c_str(), nullptr, &live[k]) == CB_OK);
    }
  }
  for (uint32_t k = 0; k < kCapacity; ++k)
    if (live[k] != 0) REQUIRE(name(live[k]) == *names[k]);
}

TEST_CASE("threads creating, reading, finding and destroying random-length names agree") {
  // Four writers, each with its own names in one registry, and a reader
  // looking them up: a lookup that finds a breaker alive reads its name
  // exactly, never another's or a mix of two.
  constexpr uint32_t kWriters = 4, kEach = 16;
  ManualRegistry r(kWriters * kEach);
  std::atomic<bool> stop{false};
  std::vector<std::thread> pool;
  for (uint32_t t = 0; t < kWriters; ++t)
    pool.emplace_back([&, t] {
      Rng next{t + 1};
      std::vector<cb_handle> live(kEach, 0);
      for (int n = 0; n < 50'000; ++n) {
        const uint32_t k = next() % kEach;
        if (live[k] != 0) {
          REQUIRE(cb_destroy(live[k]) == CB_OK);
          live[k] = 0;
        } else {
          // Lengths from a few, so the reader below finds some alive.
          const std::string n_ = name_of(t * kEach + k, 1 + (next() % 4) * 60);
          REQUIRE(cb_create(r.reg, n_.c_str(), nullptr, &live[k]) == CB_OK);
          REQUIRE(name(live[k]) == n_);
        }
      }
      for (const cb_handle h : live)
        if (h != 0) REQUIRE(cb_destroy(h) == CB_OK);
    });
  uint64_t found = 0;
  Rng next{99};
  std::thread reader([&] {
    while (!stop.load()) {
      const std::string n = name_of(next() % (kWriters * kEach), 1 + (next() % 4) * 60);
      cb_handle h = 0;
      if (cb_lookup(r.reg, n.c_str(), &h) != CB_OK) continue;
      char buf[CB_MAX_NAME_BYTES + 1];
      const int st = cb_name(h, buf, sizeof buf);
      REQUIRE((st == CB_EHANDLE || (st == CB_OK && n == buf)));
      found += st == CB_OK;
    }
  });
  for (auto &t : pool) t.join();
  stop.store(true);
  reader.join();
  MESSAGE("lookups that found a breaker alive: " << found);
}
