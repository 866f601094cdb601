#include "registry/shared_file.hpp"

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <utility>

#include "core/breaker.hpp"
#include "core/config_check.hpp"
#include "core/mix.hpp"
#include "lazybreaker/lists.h"
#include "platform/platform.hpp"
#include "registry/repair.hpp"
#include "registry/space.hpp"

namespace lazybreaker::registry {

static_assert(sizeof(FileHeader) <= 2 * kPage);
static_assert(offsetof(FileHeader, manual_ns) >= offsetof(FileHeader, checksum) + 8);

bool file_failed(FileError *err, FileError::Kind kind, const char *fmt, ...) {
  err->kind = kind;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err->message, sizeof err->message, fmt, ap);
  va_end(ap);
  return false;
}

uint64_t FileHeader::compute_checksum() const {
  const auto *bytes = reinterpret_cast<const unsigned char *>(this);
  uint64_t h = 0x6c617a7962726b72ull;
  for (size_t i = 0; i < offsetof(FileHeader, checksum); i += 8) {
    uint64_t w = 0;
    std::memcpy(&w, bytes + i, std::min<size_t>(8, offsetof(FileHeader, checksum) - i));
    h = core::mix64(h ^ w);
  }
  return h;
}

FileLayout FileLayout::of(uint32_t slots, size_t arena_bytes) {
  FileLayout l{};
  l.slots = slots;
  l.header_bytes = file_page_up(sizeof(FileHeader));
  l.hot_at = l.header_bytes;
  l.totals_at = l.hot_at + file_page_up(size_t(slots) * sizeof(core::Hot));
  l.cells_at = l.totals_at + file_page_up(size_t(slots) * sizeof(core::Totals));
  l.held_at = l.cells_at + file_page_up(size_t(kFileStripes) * slots * sizeof(core::Cell));
  l.arena_at = l.held_at + file_page_up(size_t(kFileStripes) * slots * sizeof(uint64_t));
  l.file_bytes = l.arena_at + file_page_up(arena_bytes);
  return l;
}

uint64_t ProcessId::self() {
  // Cached per pid: a forked child is another owner.
  static std::atomic<uint64_t> cached{0};
  const uint32_t pid = platform::process_id();
  uint64_t c = cached.load(std::memory_order_relaxed);
  if (c != 0 && OwnerWord::pid(c) == pid) return c;
  c = OwnerWord::pack(pid, platform::process_start_time(pid));
  cached.store(c, std::memory_order_relaxed);
  return c;
}

bool ProcessId::alive(uint64_t owner) {
  // (Whether the stripe is being reclaimed, OwnerWord::Reclaiming, says
  // nothing of the process.)
  const uint32_t pid = uint32_t(OwnerWord::pid(owner));
  if (platform::process_gone(pid)) return false;
  const uint64_t started = platform::process_start_time(pid);
  // Unreadable (another user's /proc, hidepid): alive, to be safe.
  return started == 0 || uint32_t(started) == OwnerWord::started(owner);
}

bool ProcessId::maps(uint64_t owner, uint64_t dev, uint64_t ino) {
  return platform::process_maps_file(uint32_t(OwnerWord::pid(owner)), dev, ino);
}

bool stored_config_plausible(const core::ConfigCell &cell) {
  // A bool is read as one only if it is 0 or 1.
  const core::ConfigCell::Words words = cell.words();
  unsigned char by_time = 0;
  std::memcpy(&by_time,
              reinterpret_cast<const char *>(words.data()) + offsetof(core::Config, shape) +
                  offsetof(core::WindowShape, by_time),
              1);
  if (by_time > 1) return false;
  return core::finished_and_valid(cell.load());
}

void new_file_header(const FileRequest &req, FileHeader *h) {
  const uint32_t capacity = req.capacity != 0 ? req.capacity : req.default_capacity;
  const uint32_t slots = Space::run_slots(capacity);
  const FileLayout layout = FileLayout::of(slots, req.arena_bytes(capacity, slots));
  std::memset(static_cast<void *>(h), 0, sizeof *h);
  std::memcpy(h->magic, FileHeader::kMagic, sizeof h->magic);
  h->layout_version = kFileLayoutVersion;
  h->header_bytes = uint32_t(layout.header_bytes);
  h->file_bytes = layout.file_bytes;
  h->capacity = capacity;
  h->slots = slots;
  h->stripes = kFileStripes;
  h->clock = req.clock;
  platform::boot_id(h->boot_id);
  h->created_unix_ns = platform::unix_now_ns();
  if (!platform::random_bytes(&h->jitter_seed, sizeof h->jitter_seed))
    h->jitter_seed = core::mix64(h->created_unix_ns ^ uint64_t(platform::process_id()));
  h->checksum = h->compute_checksum();
}

bool LockWait::nap() {
  const uint64_t waited = platform::monotonic_ns() - start_;
  if (waited >= kLockWaitNs) return false;
  platform::sleep_ns(std::min(pause_ns_, kLockWaitNs - waited));
  pause_ns_ = std::min<uint64_t>(pause_ns_ * 2, 50'000'000);
  return true;
}

uint64_t place_tag_of(const MappedFile &f) {
  uint64_t device = 0, inode = 0;
  platform::file_identity(f.fd, &device, &inode);
  const FileHeader &h = *f.header();
  const uint64_t tag = core::mix64(h.created_unix_ns ^ core::mix64(device ^ core::mix64(inode)));
  return tag != 0 ? tag : 1;
}

// Checks the header of `fd` (of `size` bytes) against the request.
bool check_header(const FileRequest &req, const FileHeader &h, size_t size, FileError *err) {
  const char *path = req.path;
  if (std::memcmp(h.magic, FileHeader::kMagic, sizeof h.magic) != 0)
    return file_failed(err, FileError::Version,
                       "%s: not a lazybreaker registry file (its first 8 bytes are not the magic)",
                       path);
  if (h.layout_version != kFileLayoutVersion) {
    err->other_layout = true;
    return file_failed(err, FileError::Version,
                       "%s: the file has layout version %u; this library reads layout version %u",
                       path, h.layout_version, kFileLayoutVersion);
  }
  if (h.checksum != h.compute_checksum())
    return file_failed(err, FileError::Corrupt,
                       "%s: the header's checksum is wrong (the header was changed or damaged)",
                       path);
  if (h.capacity == 0 || h.capacity > CB_MAX_CAPACITY || h.slots != Space::run_slots(h.capacity) ||
      h.stripes != kFileStripes || h.clock > 1 ||
      h.header_bytes != file_page_up(sizeof(FileHeader)))
    return file_failed(
        err, FileError::Corrupt,
        "%s: the header's fields are inconsistent (capacity %u, slots %u, stripes %u, "
        "clock %u)",
        path, h.capacity, h.slots, h.stripes, h.clock);
  const FileLayout layout = FileLayout::of(h.slots, req.arena_bytes(h.capacity, h.slots));
  if (h.file_bytes != layout.file_bytes)
    return file_failed(err, FileError::Corrupt,
                       "%s: the header says %llu bytes, but a registry of capacity %u has %zu",
                       path, (unsigned long long)h.file_bytes, h.capacity, layout.file_bytes);
  if (size != h.file_bytes)
    return file_failed(
        err, FileError::Corrupt,
        "%s: the file is %zu bytes, but its header says %llu (truncated or extended?)", path, size,
        (unsigned long long)h.file_bytes);
  if (req.capacity != 0 && req.capacity != h.capacity) {
    err->field = "capacity";
    return file_failed(err, FileError::Disagrees,
                       "%s: the file has capacity %u, the options ask for %u (0 takes the file's)",
                       path, h.capacity, req.capacity);
  }
  if (req.clock_given && req.clock != h.clock) {
    auto kind = [](uint32_t clock) { return clock == 1 ? "manual" : "monotonic"; };
    err->field = "clock";
    return file_failed(err, FileError::Disagrees,
                       "%s: the file's clock is %s, the options ask for %s", path, kind(h.clock),
                       kind(req.clock));
  }
  return true;
}

// A file last opened under another boot: its times count as long expired
// (its clock goes on from beyond every time recorded, and beyond any
// duration), the stripes' owners are gone (their folds finished) and the
// successes threads held back are forgotten; counters are kept. Under the
// file's lock, before any process of this boot maps it.
void carry_over_boot(const MappedFile &f, const FileLayout &l, const uint8_t boot[16]) {
  FileHeader &h = *f.header();
  auto *hot = reinterpret_cast<core::Hot *>(f.at(l.hot_at));
  uint64_t latest = h.clock == 1 ? h.manual_ns.load(std::memory_order_relaxed) : 0;
  for (uint32_t i = 0; i < h.slots; ++i)
    latest = std::max({latest, hot[i].changed_at.load(std::memory_order_relaxed),
                       hot[i].opened_at.load(std::memory_order_relaxed),
                       hot[i].probe_at.load(std::memory_order_relaxed)});
  // Windows and held words reckon time in buckets of at most this.
  const uint64_t beyond = latest + 2 * CB_MAX_DURATION_NS;
  if (h.clock == 1) {
    h.manual_ns.store(beyond, std::memory_order_relaxed);
  } else {
    const uint64_t now = platform::monotonic_ns();
    h.clock_offset_ns = beyond > now ? beyond - now : 0;
  }
  auto *cells = reinterpret_cast<core::Cell *>(f.at(l.cells_at));
  for (uint32_t s = 0; s < kFileStripes; ++s) {
    // A phase-0 fold is counted as uncertain; a log that names no fold (a
    // damaged file's) is not counted here, as it never was after a reboot
    // (a reader's reclaim_stripe counts it).
    finish_fold(h, cells, h.slots, s);
    h.fold_log[s].store(0, std::memory_order_relaxed);
    h.stripe_owner[s].store(0, std::memory_order_relaxed);
  }
  std::memset(f.at(l.held_at), 0, size_t(kFileStripes) * h.slots * sizeof(uint64_t));
  std::memcpy(h.boot_id, boot, 16);
  h.checksum = h.compute_checksum();
}

// The platform's close_file (src/platform/) unmaps and closes.
MappedFile &MappedFile::operator=(MappedFile &&other) noexcept {
  if (this != &other) {
    close_file(*this);
    std::swap(fd, other.fd);
    std::swap(base, other.base);
    std::swap(bytes, other.bytes);
  }
  return *this;
}

MappedFile::~MappedFile() { close_file(*this); }

}  // namespace lazybreaker::registry
