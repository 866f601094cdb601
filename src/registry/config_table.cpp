#include "registry/config_table.hpp"

#include "core/mix.hpp"
#include "registry/words.hpp"

namespace lazybreaker::registry {
namespace {

constexpr auto kAcquire = std::memory_order_acquire;
constexpr auto kRelaxed = std::memory_order_relaxed;

bool holds(const core::ConfigCell &cell, const core::ConfigCell::Words &w) {
  return cell.words() == w;
}

}  // namespace

uint64_t ConfigTable::hash(const core::ConfigCell::Words &w) {
  uint64_t h = 0;
  for (const uint64_t word : w) h = core::mix64(h ^ word);
  return h;
}

std::optional<uint32_t> ConfigTable::find(const core::ConfigCell::Words &w, uint64_t hash) {
  const uint32_t tag = TaggedBucket::tag_of_hash(hash);
  const uint64_t longest = longest_probe_.load(kAcquire);
  for (uint64_t d = 0; d <= longest && d <= mask_; ++d) {
    const uint64_t b = at(hash, d).load(kAcquire);
    if (TaggedBucket::kind(b) == TaggedBucket::kEmpty) break;
    if (TaggedBucket::kind(b) != TaggedBucket::kNamed || TaggedBucket::tag(b) != tag) continue;
    const uint32_t e = TaggedBucket::index(b);
    if (e >= capacity_) continue;  // a damaged registry file's
    // A failed exchange reloads the references: in another life the
    // configuration is compared again (it was written before that life's
    // first reference was published, which the acquire sees).
    for (uint64_t r = refs_[e].load(kAcquire); ConfigRefs::count(r) > 0 && holds(configs_[e], w);)
      if (refs_[e].compare_exchange_weak(r, r + 1, std::memory_order_acq_rel, kAcquire)) return e;
  }
  return std::nullopt;
}

void ConfigTable::publish(uint32_t entry, uint64_t hash) {
  const uint64_t named =
      TaggedBucket::pack(TaggedBucket::tag_of_hash(hash), entry, TaggedBucket::kNamed);
  // At most `capacity` buckets are NAMED, fewer than half of them: a free
  // one is always found (but in a damaged registry file: then the entry is
  // found by no other breaker's configuration, and freed all the same).
  for (uint64_t d = 0; d <= mask_; ++d) {
    std::atomic<uint64_t> &bucket = at(hash, d);
    uint64_t cur = bucket.load(kRelaxed);
    while (TaggedBucket::kind(cur) != TaggedBucket::kNamed) {
      // Raised first, so a reader that sees the bucket searches far enough.
      for (uint64_t l = longest_probe_.load(kRelaxed);
           l < d && !longest_probe_.compare_exchange_weak(l, d, kRelaxed);) {
      }
      if (bucket.compare_exchange_weak(cur, named, std::memory_order_release, kRelaxed)) return;
    }
  }
}

std::optional<uint32_t> ConfigTable::acquire(const core::Config &cfg) {
  const core::ConfigCell::Words w = core::ConfigCell::words(cfg);
  const uint64_t h = hash(w);
  if (const std::optional<uint32_t> found = find(w, h)) return found;
  const std::optional<uint32_t> entry = free_.pop();
  if (!entry) return std::nullopt;
  // Free, so ours alone: no reader takes a reference while the count is 0.
  configs_[*entry].store(w);
  refs_[*entry].store(ConfigRefs::first(refs_[*entry].load(kRelaxed)), std::memory_order_release);
  publish(*entry, h);
  return entry;
}

void ConfigTable::release(uint32_t entry) {
  if (entry >= capacity_) return;  // a damaged registry file's
  std::atomic<uint64_t> &refs = refs_[entry];
  uint64_t r = refs.load(kRelaxed);
  while (!refs.compare_exchange_weak(r, ConfigRefs::less(r), std::memory_order_acq_rel, kRelaxed)) {
  }
  if (ConfigRefs::count(r) > 1) return;
  // The last reference: nobody takes another (the count is 0 in the new
  // life), so the configuration stays as it is until the entry is pushed.
  const uint64_t h = hash(configs_[entry].words());
  for (uint64_t d = 0; d <= mask_; ++d) {
    std::atomic<uint64_t> &bucket = at(h, d);
    const uint64_t b = bucket.load(kAcquire);
    // Only this entry's one NAMED bucket names it, and only its last
    // reference changes that bucket.
    if (TaggedBucket::kind(b) == TaggedBucket::kNamed && TaggedBucket::index(b) == entry) {
      bucket.store(TaggedBucket::gone(b), std::memory_order_release);
      break;
    }
  }
  free_.push(entry);
}

bool ConfigTable::consistent(uint32_t capacity) const {
  if (!free_.consistent() || longest_probe_.load(kRelaxed) > mask_) return false;
  for (uint64_t i = 0; i <= mask_; ++i) {
    const uint64_t b = buckets_[i].load(kRelaxed);
    if (TaggedBucket::kind(b) != TaggedBucket::kEmpty && TaggedBucket::index(b) >= capacity)
      return false;
  }
  return true;
}

uint32_t ConfigTable::in_use() const {
  uint32_t n = 0;
  for (uint32_t i = 0, end = free_.high_water(); i < end; ++i)
    n += ConfigRefs::count(refs_[i].load(kRelaxed)) > 0;
  return n;
}

}  // namespace lazybreaker::registry
