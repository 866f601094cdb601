#include "registry/name_index.hpp"

#include <algorithm>
#include <cstring>

namespace lazybreaker::registry {
namespace {
constexpr auto kSeqCst = std::memory_order_seq_cst;
}

namespace {
// The name's bytes from `at` as one little-endian word, zero past its end.
uint64_t word_of(std::string_view name, size_t at) {
  uint64_t w = 0;
  std::memcpy(&w, name.data() + at, std::min<size_t>(8, name.size() - at));
  return w;
}
}  // namespace

void NameStore::write(uint32_t slot, std::string_view name) {
  if (name.empty()) {
    refs_[slot].store(0, std::memory_order_release);
    return;
  }
  const uint32_t words = words_for(name.size());
  const uint32_t at = allocate(slot, words);
  for (uint32_t i = 0; i < words; ++i)
    words_[at + i].store(word_of(name, size_t(i) * 8), std::memory_order_release);
  refs_[slot].store(NameRef::pack(at, uint32_t(name.size())), std::memory_order_release);
}

void NameStore::release(uint32_t slot) {
  const uint64_t r = refs_[slot].load(std::memory_order_relaxed);
  const uint32_t words = words_for(NameRef::length(r));
  if (words == 0) return;
  refs_[slot].store(0, std::memory_order_release);
  if (NameRef::offset(r) < pool_words_)
    push(words, NameRef::offset(r));
  else
    in_own_words_.fetch_sub(1, std::memory_order_relaxed);
}

uint32_t NameStore::allocate(uint32_t slot, uint32_t words) {
  if (const std::optional<uint32_t> reused = pop(words)) return *reused;
  uint64_t carved = carved_.load(std::memory_order_relaxed);
  // (Not carved + words, which a damaged registry file's count wraps.)
  while (carved <= pool_words_ && words <= pool_words_ - carved)
    if (carved_.compare_exchange_weak(carved, carved + words, std::memory_order_relaxed))
      return uint32_t(carved);
  // The pool is spent on other classes' free space: the slot's own words.
  in_own_words_.fetch_add(1, std::memory_order_relaxed);
  return uint32_t(pool_words_ + size_t(slot) * kMaxWords);
}

std::optional<uint32_t> NameStore::pop(uint32_t words) {
  std::atomic<uint64_t> &head = free_[words].word;
  uint64_t h = head.load(std::memory_order_acquire);
  for (;;) {
    const uint32_t top = FreeListHead::top_plus_one(h);
    // Beyond the pool only in a damaged registry file: none free then.
    if (top == 0 || top - 1 + uint64_t(words) > pool_words_) return std::nullopt;
    // The link may be a name's bytes already, if the space was taken
    // meanwhile; then the head's tag has changed and the exchange fails.
    const uint64_t link = words_[top - 1].load(std::memory_order_relaxed);
    if (head.compare_exchange_weak(h, FreeListHead::next(h, uint32_t(link)),
                                   std::memory_order_acq_rel, std::memory_order_acquire))
      return top - 1;
  }
}

void NameStore::push(uint32_t words, uint32_t offset) {
  std::atomic<uint64_t> &head = free_[words].word;
  uint64_t h = head.load(std::memory_order_relaxed);
  for (;;) {
    words_[offset].store(FreeListHead::top_plus_one(h), std::memory_order_relaxed);
    if (head.compare_exchange_weak(h, FreeListHead::next(h, offset + 1), std::memory_order_release,
                                   std::memory_order_relaxed))
      return;
  }
}

bool NameStore::consistent(uint32_t slots) const {
  if (carved_.load(std::memory_order_relaxed) > pool_words_ ||
      in_own_words_.load(std::memory_order_relaxed) > slots)
    return false;
  for (uint32_t words = 1; words <= kMaxWords; ++words)
    if (FreeListHead::top_plus_one(free_[words].word.load(std::memory_order_relaxed)) > pool_words_)
      return false;
  return true;
}

bool NameIndex::consistent(uint32_t slots) const {
  if (longest_probe_.load(kSeqCst) > mask_) return false;
  for (uint64_t i = 0; i <= mask_; ++i) {
    const uint64_t b = buckets_[i].load(std::memory_order_relaxed);
    if (kind(b) != kEmpty && slot(b) >= slots) return false;
  }
  return true;
}

uint64_t NameStore::pool_words_free() const {
  uint64_t n = 0;
  for (uint32_t words = 1; words <= kMaxWords; ++words)
    for (uint32_t top =
             FreeListHead::top_plus_one(free_[words].word.load(std::memory_order_acquire));
         top != 0 && top <= pool_words_;
         top = uint32_t(words_[top - 1].load(std::memory_order_relaxed)))
      n += words;
  return n;
}

size_t NameStore::read(uint32_t slot, char *buf) const {
  const uint64_t r = slot < slots_ ? refs_[slot].load(std::memory_order_acquire) : 0;
  const size_t len = NameRef::length(r), at = NameRef::offset(r);
  if (at + words_for(len) > end_) {  // never written so: a corrupt reference reads as no name
    buf[0] = '\0';
    return 0;
  }
  for (size_t i = 0; i < words_for(len); ++i) {
    const uint64_t w = words_[at + i].load(std::memory_order_acquire);
    std::memcpy(buf + 8 * i, &w, std::min<size_t>(8, len - 8 * i));
  }
  buf[len] = '\0';
  return len;
}

bool NameStore::equals(uint32_t slot, std::string_view name) const {
  if (slot >= slots_) return false;  // a damaged registry file's name-index entry
  const uint64_t r = refs_[slot].load(std::memory_order_acquire);
  const size_t len = NameRef::length(r), at = NameRef::offset(r);
  if (len != name.size() || at + words_for(len) > end_) return false;
  for (size_t i = 0; i < words_for(len); ++i)
    if (words_[at + i].load(std::memory_order_acquire) != word_of(name, 8 * i)) return false;
  return true;
}

uint64_t NameIndex::hash(std::string_view name) {
  // A word at a time (names are a few words long; a byte at a time was a
  // chain of 32 multiplies for a 32-byte name), then MurmurHash3's
  // finaliser, so that both halves (home bucket and tag) are well mixed.
  uint64_t h = 0x9e3779b97f4a7c15ull ^ name.size();
  for (size_t at = 0; at < name.size(); at += 8) {
    h ^= word_of(name, at) * 0xbf58476d1ce4e5b9ull;
    h = ((h << 31) | (h >> 33)) * 0x94d049bb133111ebull;
  }
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ull;
  h ^= h >> 33;
  return h;
}

uint64_t NameIndex::claim(uint64_t h, uint64_t claimed) {
  for (uint64_t d = 0; d <= mask_;) {
    uint64_t b = at(h, d).load(kSeqCst);
    if ((kind(b) == kEmpty || kind(b) == kGone) &&
        at(h, d).compare_exchange_strong(b, claimed, kSeqCst))
      return d;
    if (kind(b) != kEmpty && kind(b) != kGone) ++d;  // else retry this bucket
  }
  return mask_ + 1;
}

bool NameIndex::twin_wins(std::atomic<uint64_t> &cell, uint64_t b, uint32_t tag,
                          std::string_view name, uint32_t slot, bool nearer) const {
  while ((kind(b) == kNamed || kind(b) == kClaimed) && names_match(b, tag, name)) {
    const uint64_t gone = bucket(tag, NameIndex::slot(b), kGone);
    // A twin that a dead process left (a shared registry's) is in nobody's
    // way: it goes, as a destroy would have made it go.
    if (stale_ != nullptr && NameIndex::slot(b) != slot &&
        stale_->stale(NameIndex::slot(b), kind(b) == kClaimed)) {
      if (cell.compare_exchange_strong(b, gone, kSeqCst)) return false;
      continue;
    }
    if (kind(b) == kNamed || nearer) return true;
    if (cell.compare_exchange_strong(b, gone, kSeqCst)) return false;  // a later twin, now out
  }
  return false;
}

NameIndex::Insert NameIndex::insert(std::string_view name, uint64_t h, uint32_t slot) {
  const uint32_t tag = TaggedBucket::tag_of_hash(h);
  const uint64_t mine_claimed = bucket(tag, slot, kClaimed);
  const uint64_t mine = claim(h, mine_claimed);  // distance of our claim from home
  if (mine > mask_) return Insert::Full;
  uint64_t longest = longest_probe_.load(kSeqCst);
  while (longest < mine && !longest_probe_.compare_exchange_weak(longest, mine, kSeqCst)) {
  }

  bool lost = false;
  const uint64_t limit = probe_limit();
  for (uint64_t d = 0; d <= limit && !lost; ++d) {
    if (d == mine) continue;
    const uint64_t b = at(h, d).load(kSeqCst);
    if (kind(b) == kEmpty) break;
    lost = twin_wins(at(h, d), b, tag, name, slot, d < mine);
  }
  uint64_t expected = mine_claimed;
  if (!lost && at(h, mine).compare_exchange_strong(expected, bucket(tag, slot, kNamed), kSeqCst))
    return Insert::Ok;
  expected = mine_claimed;
  at(h, mine).compare_exchange_strong(expected, bucket(tag, slot, kGone), kSeqCst);
  return Insert::Exists;
}

void NameIndex::erase_left(uint64_t h, uint32_t slot) {
  const uint32_t tag = TaggedBucket::tag_of_hash(h);
  const uint64_t limit = probe_limit();
  for (uint64_t d = 0; d <= limit; ++d) {
    uint64_t b = at(h, d).load(kSeqCst);
    if (kind(b) == kEmpty) break;
    if ((kind(b) == kNamed || kind(b) == kClaimed) && this->tag(b) == tag &&
        NameIndex::slot(b) == slot)
      at(h, d).compare_exchange_strong(b, bucket(tag, slot, kGone), kSeqCst);
  }
}

uint32_t NameIndex::find(std::string_view name) const {
  const uint64_t h = hash(name);
  const uint32_t tag = TaggedBucket::tag_of_hash(h);
  const uint64_t limit = probe_limit();
  for (uint64_t d = 0; d <= limit; ++d) {
    const uint64_t b = at(h, d).load(kSeqCst);
    if (kind(b) == kEmpty) break;
    if (kind(b) == kNamed && names_match(b, tag, name)) return slot(b);
  }
  return UINT32_MAX;
}

bool NameIndex::erase(uint64_t h, uint32_t slot) {
  const uint32_t tag = TaggedBucket::tag_of_hash(h);
  const uint64_t named = bucket(tag, slot, kNamed);
  const uint64_t limit = probe_limit();
  for (uint64_t d = 0; d <= limit; ++d) {
    uint64_t b = at(h, d).load(kSeqCst);
    if (kind(b) == kEmpty) break;
    if (b == named && at(h, d).compare_exchange_strong(b, bucket(tag, slot, kGone), kSeqCst))
      return true;
  }
  return false;
}

}  // namespace lazybreaker::registry
