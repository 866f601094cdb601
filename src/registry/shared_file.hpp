// A shared registry's file: what it holds where, how it is created, checked
// and mapped, and who owns its counter stripes. The registry
// (registry/registry.hpp) lays its breakers over the mapping; this knows
// nothing of breakers beyond the sizes of their arrays.
//
// The file, every section page-aligned:
//   FileHeader   magic, layout version, sizes, boot id, creation time, the
//                clock's offset, a checksum over all of it; then what
//                processes change: the manual clock, the stripe owners,
//                their sequence words and fold logs
//   hot lines    [slots] core::Hot, mapped over the process's Space
//   totals       [slots] core::Totals, likewise
//   cells        [kFileStripes][slots] core::Cell, a stripe mapped under the
//                process stripe of the thread that owns it
//   held words   [kFileStripes][slots], likewise (core::HeldSuccesses)
//   arena        the registry's arena (configurations, names, windows, free
//                lists, name index), as a private registry's
// Zero-filled is a valid empty state of every section after the header, so
// creation writes the header and nothing else.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "core/breaker.hpp"
#include "core/counters.hpp"
#include "platform/platform.hpp"
#include "registry/words.hpp"

namespace lazybreaker::registry {

// Counter stripes a file has, whatever the processes' own: a thread of any
// process counts in one of its own (FileHeader::stripe_owner) while one is
// free, and in the breakers' totals otherwise.
inline constexpr uint32_t kFileStripes = 64;
inline constexpr uint32_t kFileLayoutVersion = 2;
inline constexpr size_t kPage = 4096;

struct FileHeader {
  static constexpr char kMagic[8] = {'L', 'Z', 'Y', 'B', 'R', 'K', 'R', '\n'};

  // Written at creation, and at the first open after a reboot (boot_id and
  // clock_offset_ns), under the file's lock; covered by `checksum`.
  char magic[8];
  uint32_t layout_version;
  uint32_t header_bytes;
  uint64_t file_bytes;
  uint32_t capacity;
  uint32_t slots;
  uint32_t stripes;
  uint32_t clock;  // core::ClockKind
  uint8_t boot_id[16];
  uint64_t created_unix_ns;
  uint64_t jitter_seed;
  uint64_t clock_offset_ns;  // added to CLOCK_MONOTONIC (core::Clock::offset_ns)
  uint64_t checksum;         // of every byte above

  // Changed by the processes that map the file, lock-free.
  alignas(64) std::atomic<uint64_t> manual_ns;
  // File stripes ever owned: the highest + 1 (readers sum those below).
  std::atomic<uint32_t> stripes_used;
  // Folds a dead process was in the middle of, whose counts could not be
  // told apart (one counter of one breaker may be off by up to kFoldAt
  // for each): docs/shared-registries.md, "Crash safety".
  std::atomic<uint64_t> uncertain_folds;
  std::atomic<uint64_t> stripes_reclaimed;  // from dead processes
  // Per stripe: its owner (an OwnerWord: ProcessId::self()), 0 free.
  alignas(64) std::atomic<uint64_t> stripe_owner[kFileStripes];
  // Per stripe: the fold in progress (FoldLog, registry/words.hpp), for a
  // dead owner's.
  std::atomic<uint64_t> fold_log[kFileStripes];
  core::StripeSequence sequence[kFileStripes];

  uint64_t compute_checksum() const;
};

// Where each section of a file of `slots` slots and an arena of
// `arena_bytes` begins.
struct FileLayout {
  size_t header_bytes, hot_at, totals_at, cells_at, held_at, arena_at, file_bytes;
  uint32_t slots;

  static FileLayout of(uint32_t slots, size_t arena_bytes);
  size_t stripe_cells_at(uint32_t f) const { return cells_at + size_t(f) * slots * 8; }
  size_t stripe_held_at(uint32_t f) const { return held_at + size_t(f) * slots * 8; }
};

// A process as a stripe owner: its pid and its start time (so that a
// reused pid is not taken for the dead process) in an OwnerWord, never 0.
struct ProcessId {
  static uint64_t self();
  // False only when the owner is known to be dead.
  static bool alive(uint64_t owner);
  // Whether the live process `owner` maps the file of device `dev` and
  // inode `ino` (/proc/PID/maps); true when that cannot be read (another
  // user's process), to be safe.
  static bool maps(uint64_t owner, uint64_t dev, uint64_t ino);
};

// The open file: mapped whole, shared; unmapped and closed with the object
// (or by close_file).
struct MappedFile {
  int fd = -1;
  void *base = nullptr;
  size_t bytes = 0;

  MappedFile() = default;
  MappedFile(int fd_, void *base_, size_t bytes_) : fd(fd_), base(base_), bytes(bytes_) {}
  MappedFile(MappedFile &&other) noexcept : fd(other.fd), base(other.base), bytes(other.bytes) {
    other.fd = -1;
    other.base = nullptr;
    other.bytes = 0;
  }
  MappedFile &operator=(MappedFile &&other) noexcept;
  ~MappedFile();
  FileHeader *header() const { return static_cast<FileHeader *>(base); }
  char *at(size_t offset) const { return static_cast<char *>(base) + offset; }
};

// Why opening failed: the status and a message naming the file.
struct FileError {
  enum Kind { None, Missing, Exists, Permission, Version, Corrupt, Io, Disagrees, NoMemory, Busy };
  // What the caller may do about it, which the C API says in its own flags'
  // words (capi/registry.cpp): the registry speaks no ABI.
  enum Remedy { NoRemedy, CreateIt, TrustOrOpen, NameTheFile };
  Kind kind = None;
  Remedy remedy = NoRemedy;
  // The request's field at fault ("capacity", "clock"), or nullptr.
  const char *field = nullptr;
  // A file of another layout version (the C API names its own version).
  bool other_layout = false;
  char message[600] = {};
};

struct FileRequest {
  const char *path;
  bool create, exclusive;
  // With create: use an existing file whoever owns it and whoever may
  // write it (CB_REGISTRY_ANY_OWNER); it must still not be a symlink.
  bool any_owner;
  uint32_t mode;      // for a created file, exact bits
  uint32_t capacity;  // 0: the file's (a created file: default_capacity)
  uint32_t default_capacity;
  uint32_t clock;    // core::ClockKind
  bool clock_given;  // whether an existing file's clock must equal it
  // The arena bytes a registry of a capacity needs (the registry knows).
  size_t (*arena_bytes)(uint32_t capacity, uint32_t slots);
};

// Whether a configuration read from a registry file is one that
// cb_create could have stored (every field in the range it checks, the
// derived ones those Config::finish gives): what the breakers' arithmetic
// and their windows' indexes rely on.
bool stored_config_plausible(const core::ConfigCell &cell);

// How long an open waits for another process's lock on the file before it
// gives up (FileError::Busy).
inline constexpr uint64_t kLockWaitNs = 5'000'000'000;

// An open's wait for the file's lock, polled (the library has no thread,
// timer or signal to be woken by): nap() sleeps before the next try, 1 ms
// at first and twice as long each time up to 50 ms, and says false, not
// sleeping, once kLockWaitNs have passed since the wait began.
class LockWait {
 public:
  LockWait() : start_(platform::monotonic_ns()) {}
  bool nap();

 private:
  uint64_t start_;
  uint64_t pause_ns_ = 1'000'000;
};

// Opens (or creates) and checks the file, brings a file from an earlier
// boot forward (its times long expired, its stripes' owners gone), and maps
// it. The file is locked (flock; on Windows LockFileEx) only while this
// runs, and this waits at most kLockWaitNs for the lock. With create, an
// existing file is used only if it is a regular file at the path itself
// (not through a symlink), owned by the process's effective user or root
// (Windows: its user, Administrators or SYSTEM), and not writable by
// others (Windows: Everyone, Authenticated Users, Users, INTERACTIVE)
// unless req.mode grants them that (any_owner: whoever owns it, whatever
// its mode); without create, any file the caller may open.
bool open_file(const FileRequest &req, MappedFile *out, FileError *err);
void close_file(MappedFile &f);

// The parts of open_file that are the same on every platform
// (shared_file.cpp), for the platform's open_file (src/platform/).

// Fills err (kind and a printf-formatted message); returns false.
bool file_failed(FileError *err, FileError::Kind kind, const char *fmt, ...)
    __attribute__((format(LB_PRINTF_FORMAT, 3, 4)));
inline size_t file_page_up(size_t n) { return (n + kPage - 1) / kPage * kPage; }
// The header of a file created for the request (the request's capacity,
// else its default; this boot; now; a random jitter seed; its checksum),
// zero past the checksum: what creation writes.
void new_file_header(const FileRequest &req, FileHeader *h);
// Which file `f` is, for the places of its registries' runs in the space
// (Space::claim): the same for every open of one file, another for another
// file, a copy, or a file made anew at a reused inode (its device and inode,
// and its header's creation time, in ns). Never 0.
uint64_t place_tag_of(const MappedFile &f);
// Checks the header of a file of `size` bytes against the request.
bool check_header(const FileRequest &req, const FileHeader &h, size_t size, FileError *err);
// Brings a file last opened under another boot forward to this one
// (`boot`): its times long expired, its stripes' owners gone, the held
// successes forgotten, counters kept. Under the file's lock, before any
// process of this boot maps it.
void carry_over_boot(const MappedFile &f, const FileLayout &l, const uint8_t boot[16]);

}  // namespace lazybreaker::registry
