// The name store (src/registry/name_index.hpp) on its own: a name costs
// its length in words, a destroyed breaker's name space goes to the next
// name of its size, and a name always fits, however the lengths shift.
#include <doctest/doctest.h>

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "registry/name_index.hpp"

using lazybreaker::registry::NameStore;

namespace {

struct Store {
  uint32_t capacity, slots;
  std::unique_ptr<std::atomic<uint64_t>[]> refs, words;
  NameStore::State state;
  std::unique_ptr<NameStore> names;

  Store(uint32_t capacity_, uint32_t slots_)
      : capacity(capacity_),
        slots(slots_),
        refs(new std::atomic<uint64_t>[slots_]()),
        words(new std::atomic<uint64_t>[NameStore::words_needed(capacity_, slots_)]()),
        names(new NameStore(state, refs.get(), words.get(), capacity_, slots_)) {}

  std::string read(uint32_t slot) const {
    char buf[NameStore::kMaxBytes + 1];
    const size_t len = names->read(slot, buf);
    REQUIRE(buf[len] == '\0');
    return std::string(buf, len);
  }
};

// A name of `length` bytes that differs from every other (slot, length).
std::string name_of(uint32_t slot, size_t length) {
  std::string s(length, 'a');
  for (size_t i = 0; i < length; ++i) s[i] = char('a' + (slot * 7 + i * 13 + length) % 26);
  return s;
}

}  // namespace

TEST_CASE("a name takes as many words as its length needs, and reads back exactly") {
  Store s(8, 8);
  s.names->write(0, name_of(0, 1));
  s.names->write(1, name_of(1, 8));
  s.names->write(2, name_of(2, 9));
  s.names->write(3, name_of(3, 255));
  s.names->write(4, "");
  CHECK(s.names->pool_words_carved() == 1 + 1 + 2 + 32);
  CHECK(s.read(0) == name_of(0, 1));
  CHECK(s.read(1) == name_of(1, 8));
  CHECK(s.read(2) == name_of(2, 9));
  CHECK(s.read(3) == name_of(3, 255));
  CHECK(s.read(4).empty());
  CHECK(s.names->equals(2, name_of(2, 9)));
  CHECK_FALSE(s.names->equals(2, name_of(2, 9).substr(0, 8)));
  CHECK_FALSE(s.names->equals(2, name_of(2, 9) + "x"));
  std::string last_byte_differs = name_of(2, 9);
  last_byte_differs[8] ^= 1;
  CHECK_FALSE(s.names->equals(2, last_byte_differs));
}

TEST_CASE("a released name's space goes to the next name of its size") {
  Store s(4, 4);
  s.names->write(0, name_of(0, 20));  // 3 words
  s.names->release(0);
  CHECK(s.read(0).empty());
  s.names->write(1, name_of(1, 17));  // 3 words again: the same space
  CHECK(s.names->pool_words_carved() == 3);
  CHECK(s.names->pool_words_free() == 0);
  s.names->write(0, name_of(0, 40));  // 5 words: new space
  CHECK(s.names->pool_words_carved() == 8);
  CHECK(s.read(1) == name_of(1, 17));
  CHECK(s.read(0) == name_of(0, 40));
}

TEST_CASE("names of shifting lengths always fit, and all their space comes back") {
  // Each round fills every slot with names of one length and releases
  // them: freed space of one size serves no other, so the pool runs out
  // and names move to their slots' own words, and still every write fits.
  Store s(16, 20);
  bool used_own_words = false;
  for (size_t length = 1; length <= NameStore::kMaxBytes; ++length) {
    for (uint32_t slot = 0; slot < s.capacity; ++slot) s.names->write(slot, name_of(slot, length));
    used_own_words |= s.names->names_in_own_words() > 0;
    for (uint32_t slot = 0; slot < s.capacity; ++slot)
      REQUIRE(s.read(slot) == name_of(slot, length));
    for (uint32_t slot = 0; slot < s.capacity; ++slot) s.names->release(slot);
  }
  CHECK(used_own_words);
  CHECK(s.names->pool_words_carved() <= uint64_t(s.capacity) * NameStore::kMaxWords);
  CHECK(s.names->names_in_own_words() == 0);
  CHECK(s.names->pool_words_free() == s.names->pool_words_carved());
  // A full store of the longest names after all that.
  for (uint32_t slot = 0; slot < s.capacity; ++slot) s.names->write(slot, name_of(slot, 255));
  for (uint32_t slot = 0; slot < s.capacity; ++slot) REQUIRE(s.read(slot) == name_of(slot, 255));
}

TEST_CASE("a million random-length names through a small store: no space is lost") {
  Store s(64, 64);
  uint64_t x = 12345;
  auto next = [&x] {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    return uint32_t(x >> 33);
  };
  std::vector<std::string> all;  // all[slot * 255 + length - 1]
  for (uint32_t slot = 0; slot < 64; ++slot)
    for (size_t length = 1; length <= NameStore::kMaxBytes; ++length)
      all.push_back(name_of(slot, length));
  const std::string *live[64] = {};
  char buf[NameStore::kMaxBytes + 1];
  for (int n = 0; n < 1'000'000; ++n) {
    const uint32_t slot = next() % 64;
    if (live[slot] != nullptr) {
      REQUIRE(s.names->read(slot, buf) == live[slot]->size());
      REQUIRE(*live[slot] == buf);
      s.names->release(slot);
      live[slot] = nullptr;
    } else {
      live[slot] = &all[slot * NameStore::kMaxBytes + next() % NameStore::kMaxBytes];
      s.names->write(slot, *live[slot]);
    }
  }
  for (uint32_t slot = 0; slot < 64; ++slot) {
    if (live[slot] == nullptr) continue;
    REQUIRE(s.read(slot) == *live[slot]);
    s.names->release(slot);
  }
  // Every carved word is back on a free list, and no name is left in a
  // slot's own words.
  CHECK(s.names->pool_words_free() == s.names->pool_words_carved());
  CHECK(s.names->names_in_own_words() == 0);
  CHECK(s.names->pool_words_carved() <= 64 * NameStore::kMaxWords);
}
