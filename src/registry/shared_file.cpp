#include "registry/shared_file.hpp"

#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <utility>

#include "core/breaker.hpp"
#include "core/config_check.hpp"
#include "core/mix.hpp"
#include "lazybreaker/lists.h"
#include "registry/repair.hpp"
#include "registry/space.hpp"

namespace lazybreaker::registry {

static_assert(sizeof(FileHeader) <= 2 * kPage);
static_assert(offsetof(FileHeader, manual_ns) >= offsetof(FileHeader, checksum) + 8);

namespace {

size_t page_up(size_t n) { return (n + kPage - 1) / kPage * kPage; }

bool failed(FileError *err, FileError::Kind kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
bool failed(FileError *err, FileError::Kind kind, const char *fmt, ...) {
  err->kind = kind;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err->message, sizeof err->message, fmt, ap);
  va_end(ap);
  return false;
}

// The error of a failed open(2), link(2), ... of `path`.
bool failed_errno(FileError *err, const char *path, const char *doing) {
  const int e = errno;
  const FileError::Kind kind = e == ENOENT                               ? FileError::Missing
                               : e == EACCES || e == EPERM || e == EROFS ? FileError::Permission
                               : e == ENOMEM                             ? FileError::NoMemory
                                                                         : FileError::Io;
  return failed(err, kind, "%s: %s: %s", path, doing, strerror(e));
}

// This boot's id (/proc/sys/kernel/random/boot_id, a UUID), or zeros if
// the kernel does not say.
void read_boot_id(uint8_t out[16]) {
  std::memset(out, 0, 16);
  const int fd = ::open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  char text[64] = {};
  const ssize_t n = ::read(fd, text, sizeof text - 1);
  ::close(fd);
  unsigned k = 0;
  for (ssize_t i = 0; i < n && k < 32; ++i) {
    const char c = text[i];
    const int v = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (v < 0) continue;
    out[k / 2] = uint8_t(out[k / 2] << 4 | v);
    ++k;
  }
}

uint64_t unix_now_ns() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

// The 22nd field of /proc/PID/stat: when the process started, in clock
// ticks since boot; 0 if unreadable.
uint64_t start_time(long pid) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%ld/stat", pid);
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char buf[1024];
  const ssize_t n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  if (n <= 0) return 0;
  buf[n] = '\0';
  // The command name may hold spaces and parentheses: fields start after
  // the last ')'.
  const char *p = strrchr(buf, ')');
  if (p == nullptr) return 0;
  for (int field = 2; field < 22 && p != nullptr; ++field) p = strchr(p + 1, ' ');
  return p != nullptr ? strtoull(p + 1, nullptr, 10) : 0;
}

}  // namespace

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
  l.header_bytes = page_up(sizeof(FileHeader));
  l.hot_at = l.header_bytes;
  l.totals_at = l.hot_at + page_up(size_t(slots) * sizeof(core::Hot));
  l.cells_at = l.totals_at + page_up(size_t(slots) * sizeof(core::Totals));
  l.held_at = l.cells_at + page_up(size_t(kFileStripes) * slots * sizeof(core::Cell));
  l.arena_at = l.held_at + page_up(size_t(kFileStripes) * slots * sizeof(uint64_t));
  l.file_bytes = l.arena_at + page_up(arena_bytes);
  return l;
}

uint64_t ProcessId::self() {
  // Cached per pid: a forked child is another owner.
  static std::atomic<uint64_t> cached{0};
  const long pid = getpid();
  uint64_t c = cached.load(std::memory_order_relaxed);
  if (c != 0 && long(OwnerWord::pid(c)) == pid) return c;
  c = OwnerWord::pack(uint32_t(pid), start_time(pid));
  cached.store(c, std::memory_order_relaxed);
  return c;
}

bool ProcessId::alive(uint64_t owner) {
  // (Whether the stripe is being reclaimed, OwnerWord::Reclaiming, says
  // nothing of the process.)
  const long pid = long(OwnerWord::pid(owner));
  if (pid <= 0) return false;
  if (kill(pid_t(pid), 0) != 0 && errno == ESRCH) return false;
  const uint64_t started = start_time(pid);
  // Unreadable (another user's /proc, hidepid): alive, to be safe.
  return started == 0 || uint32_t(started) == OwnerWord::started(owner);
}

bool ProcessId::maps(uint64_t owner, uint64_t dev, uint64_t ino) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%ld/maps", long(OwnerWord::pid(owner)));
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errno != ENOENT && errno != ESRCH;
  // Each line: "start-end perms offset major:minor inode path", the device
  // in hex. A line cut at the buffer's end is read again from its start
  // (one longer than the buffer loses its start: it names no file then).
  char buf[8192];
  size_t have = 0;
  bool found = false;
  while (!found) {
    const ssize_t n = ::read(fd, buf + have, sizeof buf - 1 - have);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    have += size_t(n);
    buf[have] = '\0';
    char *line = buf;
    for (char *end; !found && (end = std::strchr(line, '\n')) != nullptr; line = end + 1) {
      *end = '\0';
      unsigned major_no = 0, minor_no = 0;
      unsigned long long inode = 0;
      found = sscanf(line, "%*s %*s %*s %x:%x %llu", &major_no, &minor_no, &inode) == 3 &&
              inode == ino && makedev(major_no, minor_no) == dev;
    }
    size_t left = have - size_t(line - buf);
    if (left == sizeof buf - 1) left = 0;
    std::memmove(buf, line, left);
    have = left;
  }
  ::close(fd);
  return found;
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

namespace {

// Checks the header of `fd` (of `size` bytes) against the request.
bool check_header(const FileRequest &req, const FileHeader &h, size_t size, FileError *err) {
  const char *path = req.path;
  if (std::memcmp(h.magic, FileHeader::kMagic, sizeof h.magic) != 0)
    return failed(err, FileError::Version,
                  "%s: not a lazybreaker registry file (its first 8 bytes are not the magic)",
                  path);
  if (h.layout_version != kFileLayoutVersion) {
    err->other_layout = true;
    return failed(err, FileError::Version,
                  "%s: the file has layout version %u; this library reads layout version %u", path,
                  h.layout_version, kFileLayoutVersion);
  }
  if (h.checksum != h.compute_checksum())
    return failed(err, FileError::Corrupt,
                  "%s: the header's checksum is wrong (the header was changed or damaged)", path);
  if (h.capacity == 0 || h.capacity > CB_MAX_CAPACITY || h.slots != Space::run_slots(h.capacity) ||
      h.stripes != kFileStripes || h.clock > 1 || h.header_bytes != page_up(sizeof(FileHeader)))
    return failed(err, FileError::Corrupt,
                  "%s: the header's fields are inconsistent (capacity %u, slots %u, stripes %u, "
                  "clock %u)",
                  path, h.capacity, h.slots, h.stripes, h.clock);
  const FileLayout layout = FileLayout::of(h.slots, req.arena_bytes(h.capacity, h.slots));
  if (h.file_bytes != layout.file_bytes)
    return failed(err, FileError::Corrupt,
                  "%s: the header says %llu bytes, but a registry of capacity %u has %zu", path,
                  (unsigned long long)h.file_bytes, h.capacity, layout.file_bytes);
  if (size != h.file_bytes)
    return failed(err, FileError::Corrupt,
                  "%s: the file is %zu bytes, but its header says %llu (truncated or extended?)",
                  path, size, (unsigned long long)h.file_bytes);
  if (req.capacity != 0 && req.capacity != h.capacity) {
    err->field = "capacity";
    return failed(err, FileError::Disagrees,
                  "%s: the file has capacity %u, the options ask for %u (0 takes the file's)", path,
                  h.capacity, req.capacity);
  }
  if (req.clock_given && req.clock != h.clock) {
    auto kind = [](uint32_t clock) { return clock == 1 ? "manual" : "monotonic"; };
    err->field = "clock";
    return failed(err, FileError::Disagrees, "%s: the file's clock is %s, the options ask for %s",
                  path, kind(h.clock), kind(req.clock));
  }
  return true;
}

// Whether every block of the file `fd` (of `size` bytes) is allocated, so
// that no load or store into its mapping can fault for want of one
// (SIGBUS): a file copied sparse, or onto a file system that filled up,
// has holes. A hole is filled if the file system has room (a hole reads as
// zeros, and so does the block that fills it); a file whose holes cannot
// be filled is refused.
bool check_allocated(int fd, size_t size, const char *path, FileError *err) {
  const off_t hole = lseek(fd, 0, SEEK_HOLE);
  if (hole >= 0 && uint64_t(hole) >= size) return true;
  if (fallocate(fd, 0, 0, off_t(size)) == 0) return true;
  return failed(err, FileError::Corrupt,
                "%s: the file has unallocated blocks (a sparse copy, or its file system filled "
                "up) that cannot be allocated now: %s",
                path, strerror(errno));
}

// An unnamed file (O_TMPFILE) in the directory of `path`, or -1 where the
// file system or the kernel has none.
int open_unnamed_beside(const char *path) {
  const char *slash = std::strrchr(path, '/');
  char dir[4096] = ".";
  if (slash != nullptr) {
    const size_t len = slash == path ? 1 : size_t(slash - path);
    if (len >= sizeof dir) return -1;
    std::memcpy(dir, path, len);
    dir[len] = '\0';
  }
  return ::open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
}

// Gives the unnamed file `fd` the name `path`: 0, or -1 with errno.
int link_unnamed(int fd, const char *path) {
  char self[64];
  snprintf(self, sizeof self, "/proc/self/fd/%d", fd);
  if (linkat(AT_FDCWD, self, AT_FDCWD, path, AT_SYMLINK_FOLLOW) == 0) return 0;
  if (errno == EEXIST) return -1;
  // Without /proc mounted: only with CAP_DAC_READ_SEARCH.
  return linkat(fd, "", AT_FDCWD, path, AT_EMPTY_PATH);
}

// Makes a complete registry file beside `path` and links it there, so that
// the path never names a half-made file; false with err->kind Exists if
// another process linked one first. The file is made unnamed (O_TMPFILE)
// where it can be, so that a creator killed before the link leaves nothing
// behind; else (or if the unnamed file cannot be linked) as
// `path.PID.SALT.tmp`, which such a creator leaves.
bool create_file(const FileRequest &req, int *fd_out, FileError *err, bool unnamed = true) {
  const uint32_t capacity = req.capacity != 0 ? req.capacity : req.default_capacity;
  const uint32_t slots = Space::run_slots(capacity);
  const FileLayout layout = FileLayout::of(slots, req.arena_bytes(capacity, slots));
  char tmp[4096] = "";
  int fd = unnamed ? open_unnamed_beside(req.path) : -1;
  if (fd < 0) {
    uint64_t salt = 0;
    if (getrandom(&salt, sizeof salt, GRND_NONBLOCK) != ssize_t(sizeof salt)) salt = unix_now_ns();
    if (snprintf(tmp, sizeof tmp, "%s.%ld.%016llx.tmp", req.path, long(getpid()),
                 (unsigned long long)salt) >= int(sizeof tmp))
      return failed(err, FileError::Io, "%s: the path is too long", req.path);
    fd = ::open(tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) return failed_errno(err, req.path, "cannot create a file in its directory");
  }
  auto give_up = [&](bool result) {
    ::close(fd);
    if (tmp[0] != '\0') unlink(tmp);
    return result;
  };
  if (fchmod(fd, req.mode != 0 ? req.mode : 0600) != 0)
    return give_up(failed_errno(err, req.path, "cannot set its mode"));
  // Every page allocated now, so that no store into the mapping can fail
  // later for want of space (which would be SIGBUS).
  if (const int e = posix_fallocate(fd, 0, off_t(layout.file_bytes)); e != 0) {
    errno = e;
    return give_up(failed_errno(err, req.path, "cannot allocate the file"));
  }
  FileHeader h{};
  std::memcpy(h.magic, FileHeader::kMagic, sizeof h.magic);
  h.layout_version = kFileLayoutVersion;
  h.header_bytes = uint32_t(layout.header_bytes);
  h.file_bytes = layout.file_bytes;
  h.capacity = capacity;
  h.slots = slots;
  h.stripes = kFileStripes;
  h.clock = req.clock;
  read_boot_id(h.boot_id);
  h.created_unix_ns = unix_now_ns();
  if (getrandom(&h.jitter_seed, sizeof h.jitter_seed, GRND_NONBLOCK) != ssize_t(sizeof(uint64_t)))
    h.jitter_seed = core::mix64(h.created_unix_ns ^ uint64_t(getpid()));
  h.checksum = h.compute_checksum();
  // Only the checksummed part: the rest is zero (fallocate), and a valid
  // empty state.
  if (pwrite(fd, &h, offsetof(FileHeader, checksum) + sizeof h.checksum, 0) !=
      ssize_t(offsetof(FileHeader, checksum) + sizeof h.checksum))
    return give_up(failed_errno(err, req.path, "cannot write the header"));
  if ((tmp[0] != '\0' ? link(tmp, req.path) : link_unnamed(fd, req.path)) != 0) {
    if (errno == EEXIST) {
      give_up(false);
      err->kind = FileError::Exists;
      snprintf(err->message, sizeof err->message, "%s: the file exists", req.path);
      return false;
    }
    if (tmp[0] == '\0') {  // an unnamed file this process may not link: a named one
      give_up(false);
      return create_file(req, fd_out, err, false);
    }
    return give_up(failed_errno(err, req.path, "cannot link the new file into place"));
  }
  if (tmp[0] != '\0') unlink(tmp);
  *fd_out = fd;
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
    const uint64_t now = core::Clock::read(CLOCK_MONOTONIC);
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

}  // namespace

namespace {

// Why the symlink at `req.path` is not used: where it points, and whether
// that exists. A create never goes through one (the link could point
// anywhere its owner likes); an open without create follows it, so only a
// dangling one gets here then.
bool symlink_refused(const FileRequest &req, FileError *err) {
  char target[4096];
  const ssize_t n = readlink(req.path, target, sizeof target - 1);
  if (n < 0) return failed_errno(err, req.path, "cannot read the symbolic link");
  target[n] = '\0';
  struct stat st;
  const bool exists = stat(req.path, &st) == 0;
  if (!req.create)
    return failed(err, FileError::Missing, "%s: a symbolic link to %s, which does not exist",
                  req.path, target);
  err->remedy = FileError::NameTheFile;
  return failed(err, FileError::Permission,
                "%s: a symbolic link to %s%s; a create makes or uses a registry file only at the "
                "path itself, never through a symlink",
                req.path, target, exists ? "" : ", which does not exist");
}

// Whether a create may use the existing file `fd` it found at the path:
// owned by this process's effective user or by root, and not writable by
// others unless the create's own mode grants them that; any_owner: either
// way. (Not a regular file: open_file refuses it as not a registry file.)
bool trusted_for_create(const FileRequest &req, int fd, FileError *err) {
  struct stat st;
  if (fstat(fd, &st) != 0) return failed_errno(err, req.path, "cannot stat it");
  if (req.any_owner || !S_ISREG(st.st_mode)) return true;
  const uint32_t mode = req.mode != 0 ? req.mode : 0600;
  const uid_t me = geteuid();
  const bool owner_ok = st.st_uid == me || st.st_uid == 0;
  const bool others_ok = (st.st_mode & S_IWOTH) == 0 || (mode & S_IWOTH) != 0;
  if (owner_ok && others_ok) return true;
  char name[300] = "";
  passwd pw, *found = nullptr;
  char buf[1024];
  if (getpwuid_r(st.st_uid, &pw, buf, sizeof buf, &found) == 0 && found != nullptr)
    snprintf(name, sizeof name, " (%s)", found->pw_name);
  char why[120];
  if (!owner_ok)
    snprintf(why, sizeof why, "neither this process's user (uid %u) nor root owns it",
             unsigned(me));
  else
    snprintf(why, sizeof why,
             "others may write it, and the create's mode 0%03o does not grant that",
             unsigned(mode));
  err->remedy = FileError::TrustOrOpen;
  return failed(err, FileError::Permission,
                "%s: an existing file owned by uid %u%s with mode 0%03o: %s; a create uses an "
                "existing file only if this process's user or root owns it and others may write "
                "it only if the create's mode grants that",
                req.path, unsigned(st.st_uid), name, unsigned(st.st_mode & 07777), why);
}

// Takes the file's lock, waiting at most kLockWaitNs behind another process
// that holds it: a process holding it for good (a reader's LOCK_SH, a
// stopped process) cannot wedge an open. Polled, so that the library needs
// no thread, timer or signal.
bool lock_file(int fd, const char *path, FileError *err) {
  const uint64_t start = core::Clock::read(CLOCK_MONOTONIC);
  uint64_t pause_ns = 1'000'000;
  for (;;) {
    if (flock(fd, LOCK_EX | LOCK_NB) == 0) return true;
    if (errno == EINTR) continue;
    if (errno != EWOULDBLOCK) return failed_errno(err, path, "cannot lock it");
    const uint64_t waited = core::Clock::read(CLOCK_MONOTONIC) - start;
    if (waited >= kLockWaitNs)
      return failed(err, FileError::Busy,
                    "%s: a process holds the registry file's lock and has not let go in %llu s "
                    "(an open holds it only while it checks the file: that process is stuck, or "
                    "holds it on purpose; fuser -v %s lists who has the file open)",
                    path, (unsigned long long)(kLockWaitNs / 1'000'000'000), path);
    const uint64_t nap = std::min(pause_ns, kLockWaitNs - waited);
    const timespec ts{time_t(nap / 1'000'000'000), long(nap % 1'000'000'000)};
    nanosleep(&ts, nullptr);
    pause_ns = std::min<uint64_t>(pause_ns * 2, 50'000'000);
  }
}

}  // namespace

namespace {

// Opens the existing file at the path for reading and writing, into `*fd`.
bool open_existing(const FileRequest &req, int *fd, FileError *err) {
  // A create never goes through a symlink at the path (O_NOFOLLOW).
  *fd = ::open(req.path, O_RDWR | O_CLOEXEC | (req.create ? O_NOFOLLOW : 0));
  if (*fd >= 0) return true;
  struct stat link;
  const int e = errno;
  if ((e == ELOOP || e == ENOENT) && lstat(req.path, &link) == 0 && S_ISLNK(link.st_mode))
    return symlink_refused(req, err);
  if (e == ENOENT && req.create)  // linked by another process, removed since
    return failed(err, FileError::Missing,
                  "%s: the file was removed while this opened it (try again)", req.path);
  if (e == ENOENT) {
    err->remedy = FileError::CreateIt;
    return failed(err, FileError::Missing, "%s: no such file", req.path);
  }
  if (e == EISDIR)
    return failed(err, FileError::Version, "%s: a directory, not a registry file", req.path);
  errno = e;
  return failed_errno(err, req.path, "cannot open it for reading and writing");
}

// Reads and checks the header of the locked file `fd` into `h` (zeroed
// past the checksummed part).
bool read_header(const FileRequest &req, int fd, FileHeader *h, FileError *err) {
  struct stat st;
  if (fstat(fd, &st) != 0) return failed_errno(err, req.path, "cannot stat it");
  if (!S_ISREG(st.st_mode))
    return failed(err, FileError::Version, "%s: not a regular file", req.path);
  std::memset(static_cast<void *>(h), 0, sizeof *h);
  const size_t fixed = offsetof(FileHeader, checksum) + sizeof h->checksum;
  if (size_t(st.st_size) < fixed) {
    if (st.st_size >= 8 && pread(fd, h->magic, 8, 0) == 8 &&
        std::memcmp(h->magic, FileHeader::kMagic, 8) == 0)
      return failed(err, FileError::Corrupt,
                    "%s: the file is %lld bytes, shorter than a registry header", req.path,
                    (long long)st.st_size);
    return failed(err, FileError::Version,
                  "%s: not a lazybreaker registry file (%lld bytes, no header)", req.path,
                  (long long)st.st_size);
  }
  if (pread(fd, h, fixed, 0) != ssize_t(fixed))
    return failed_errno(err, req.path, "cannot read the header");
  return check_header(req, *h, size_t(st.st_size), err) &&
         check_allocated(fd, size_t(st.st_size), req.path, err);
}

}  // namespace

bool open_file(const FileRequest &req, MappedFile *out, FileError *err) {
  int fd = -1;
  bool created = false;
  if (req.create) {
    if (create_file(req, &fd, err)) {
      created = true;
    } else if (err->kind != FileError::Exists || req.exclusive) {
      return false;
    }
  }
  if (fd < 0 && !open_existing(req, &fd, err)) return false;
  auto give_up = [&](bool result) {
    ::close(fd);
    return result;
  };
  if (req.create && !created && !trusted_for_create(req, fd, err)) return give_up(false);
  // Held while the file is checked and brought forward: another process
  // opening it then waits (kLockWaitNs at most), and a process killed
  // holding it lets go.
  if (!lock_file(fd, req.path, err)) return give_up(false);
  FileHeader h;
  if (!read_header(req, fd, &h, err)) return give_up(false);
  void *base = mmap(nullptr, h.file_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) return give_up(failed_errno(err, req.path, "cannot map it"));
  MappedFile f{fd, base, size_t(h.file_bytes)};
  uint8_t boot[16];
  read_boot_id(boot);
  if (!created && std::memcmp(boot, f.header()->boot_id, 16) != 0)
    carry_over_boot(f, FileLayout::of(h.slots, req.arena_bytes(h.capacity, h.slots)), boot);
  flock(fd, LOCK_UN);
  *out = std::move(f);
  return true;
}

void close_file(MappedFile &f) {
  if (f.base != nullptr) munmap(f.base, f.bytes);
  if (f.fd >= 0) ::close(f.fd);
  f.fd = -1;
  f.base = nullptr;
  f.bytes = 0;
}

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
