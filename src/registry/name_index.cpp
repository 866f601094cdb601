#include "registry/name_index.hpp"

#include <cstring>

namespace lazybreaker::registry {
namespace {
constexpr auto kSeqCst = std::memory_order_seq_cst;
}

// Byte 0 holds the length, bytes 1..255 the name, packed into words so that
// a reader racing a recycled slot reads atomically (and then fails the
// caller's validation) instead of racing. Stores release and loads acquire:
// a reader that sees a word of the slot's next life then also sees that the
// life it read the state of has ended.
void NameStore::write(uint32_t slot, std::string_view name) {
  unsigned char bytes[kWords * 8] = {};
  bytes[0] = static_cast<unsigned char>(name.size());
  if (!name.empty()) std::memcpy(bytes + 1, name.data(), name.size());
  for (size_t i = 0; i < kWords; ++i) {
    uint64_t w;
    std::memcpy(&w, bytes + 8 * i, 8);
    names_[slot].words[i].store(w, std::memory_order_release);
  }
}

size_t NameStore::read(uint32_t slot, char *buf) const {
  unsigned char bytes[kWords * 8];
  for (size_t i = 0; i < kWords; ++i) {
    const uint64_t w = names_[slot].words[i].load(std::memory_order_acquire);
    std::memcpy(bytes + 8 * i, &w, 8);
  }
  const size_t len = bytes[0];
  std::memcpy(buf, bytes + 1, len);
  buf[len] = '\0';
  return len;
}

bool NameStore::equals(uint32_t slot, std::string_view name) const {
  char buf[kWords * 8];
  const size_t len = read(slot, buf);
  return len == name.size() && std::memcmp(buf, name.data(), len) == 0;
}

uint64_t NameIndex::hash(std::string_view name) {
  // FNV-1a, then a finaliser so that both halves are well mixed.
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : name) h = (h ^ c) * 0x100000001b3ull;
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  return h;
}

NameIndex::Insert NameIndex::insert(std::string_view name, uint32_t slot) {
  const uint64_t h = hash(name);
  const uint32_t tag = NameBucket::tag_of_hash(h);
  const uint64_t mine_claimed = bucket(tag, slot, kClaimed);

  uint64_t mine = mask_ + 1;  // distance of our claim from home
  for (uint64_t d = 0; d <= mask_;) {
    uint64_t b = at(h, d).load(kSeqCst);
    if ((kind(b) == kEmpty || kind(b) == kGone) &&
        at(h, d).compare_exchange_strong(b, mine_claimed, kSeqCst)) {
      mine = d;
      break;
    }
    if (kind(b) != kEmpty && kind(b) != kGone) ++d;  // else retry this bucket
  }
  if (mine > mask_) return Insert::Full;
  uint64_t longest = longest_probe_.load(kSeqCst);
  while (longest < mine && !longest_probe_.compare_exchange_weak(longest, mine, kSeqCst)) {
  }

  bool lost = false;
  const uint64_t limit = longest_probe_.load(kSeqCst);
  for (uint64_t d = 0; d <= limit && !lost; ++d) {
    if (d == mine) continue;
    uint64_t b = at(h, d).load(kSeqCst);
    if (kind(b) == kEmpty) break;
    while (!lost && (kind(b) == kNamed || kind(b) == kClaimed) && names_match(b, tag, name)) {
      if (kind(b) == kNamed || d < mine) {
        lost = true;
      } else if (at(h, d).compare_exchange_strong(b, bucket(tag, NameIndex::slot(b), kGone),
                                                  kSeqCst)) {
        break;  // a later twin, now out of the race
      }
    }
  }
  uint64_t expected = mine_claimed;
  if (!lost && at(h, mine).compare_exchange_strong(expected, bucket(tag, slot, kNamed), kSeqCst))
    return Insert::Ok;
  expected = mine_claimed;
  at(h, mine).compare_exchange_strong(expected, bucket(tag, slot, kGone), kSeqCst);
  return Insert::Exists;
}

uint32_t NameIndex::find(std::string_view name) const {
  const uint64_t h = hash(name);
  const uint32_t tag = NameBucket::tag_of_hash(h);
  const uint64_t limit = longest_probe_.load(kSeqCst);
  for (uint64_t d = 0; d <= limit; ++d) {
    const uint64_t b = at(h, d).load(kSeqCst);
    if (kind(b) == kEmpty) break;
    if (kind(b) == kNamed && names_match(b, tag, name)) return slot(b);
  }
  return UINT32_MAX;
}

bool NameIndex::erase(std::string_view name, uint32_t slot) {
  const uint64_t h = hash(name);
  const uint32_t tag = NameBucket::tag_of_hash(h);
  const uint64_t named = bucket(tag, slot, kNamed);
  const uint64_t limit = longest_probe_.load(kSeqCst);
  for (uint64_t d = 0; d <= limit; ++d) {
    uint64_t b = at(h, d).load(kSeqCst);
    if (kind(b) == kEmpty) break;
    if (b == named && at(h, d).compare_exchange_strong(b, bucket(tag, slot, kGone), kSeqCst))
      return true;
  }
  return false;
}

}  // namespace lazybreaker::registry
