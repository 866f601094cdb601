// A shared registry file on Linux: created whole beside its path and linked
// there, checked for its owner and mode, locked with flock while an open
// checks it, and mapped whole (registry/shared_file.hpp says what each does).
#include <fcntl.h>
#include <pwd.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <utility>

#include "platform/platform.hpp"
#include "registry/shared_file.hpp"

namespace lazybreaker::registry {

namespace {

// The error of a failed open(2), link(2), ... of `path`.
bool failed_errno(FileError *err, const char *path, const char *doing) {
  const int e = errno;
  const FileError::Kind kind = e == ENOENT                               ? FileError::Missing
                               : e == EACCES || e == EPERM || e == EROFS ? FileError::Permission
                               : e == ENOMEM                             ? FileError::NoMemory
                                                                         : FileError::Io;
  return file_failed(err, kind, "%s: %s: %s", path, doing, strerror(e));
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
  return file_failed(
      err, FileError::Corrupt,
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
  FileHeader h;
  new_file_header(req, &h);
  char tmp[4096] = "";
  int fd = unnamed ? open_unnamed_beside(req.path) : -1;
  if (fd < 0) {
    uint64_t salt = 0;
    if (!platform::random_bytes(&salt, sizeof salt)) salt = platform::unix_now_ns();
    if (snprintf(tmp, sizeof tmp, "%s.%ld.%016llx.tmp", req.path, long(platform::process_id()),
                 (unsigned long long)salt) >= int(sizeof tmp))
      return file_failed(err, FileError::Io, "%s: the path is too long", req.path);
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
  if (const int e = posix_fallocate(fd, 0, off_t(h.file_bytes)); e != 0) {
    errno = e;
    return give_up(failed_errno(err, req.path, "cannot allocate the file"));
  }
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
    return file_failed(err, FileError::Missing, "%s: a symbolic link to %s, which does not exist",
                       req.path, target);
  err->remedy = FileError::NameTheFile;
  return file_failed(
      err, FileError::Permission,
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
  return file_failed(
      err, FileError::Permission,
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
  for (LockWait wait;;) {
    if (flock(fd, LOCK_EX | LOCK_NB) == 0) return true;
    if (errno == EINTR) continue;
    if (errno != EWOULDBLOCK) return failed_errno(err, path, "cannot lock it");
    if (!wait.nap())
      return file_failed(
          err, FileError::Busy,
          "%s: a process holds the registry file's lock and has not let go in %llu s "
          "(an open holds it only while it checks the file: that process is stuck, or "
          "holds it on purpose; fuser -v %s lists who has the file open)",
          path, (unsigned long long)(kLockWaitNs / 1'000'000'000), path);
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
    return file_failed(err, FileError::Missing,
                       "%s: the file was removed while this opened it (try again)", req.path);
  if (e == ENOENT) {
    err->remedy = FileError::CreateIt;
    return file_failed(err, FileError::Missing, "%s: no such file", req.path);
  }
  if (e == EISDIR)
    return file_failed(err, FileError::Version, "%s: a directory, not a registry file", req.path);
  errno = e;
  return failed_errno(err, req.path, "cannot open it for reading and writing");
}

// Reads and checks the header of the locked file `fd` into `h` (zeroed
// past the checksummed part).
bool read_header(const FileRequest &req, int fd, FileHeader *h, FileError *err) {
  struct stat st;
  if (fstat(fd, &st) != 0) return failed_errno(err, req.path, "cannot stat it");
  if (!S_ISREG(st.st_mode))
    return file_failed(err, FileError::Version, "%s: not a regular file", req.path);
  std::memset(static_cast<void *>(h), 0, sizeof *h);
  const size_t fixed = offsetof(FileHeader, checksum) + sizeof h->checksum;
  if (size_t(st.st_size) < fixed) {
    if (st.st_size >= 8 && pread(fd, h->magic, 8, 0) == 8 &&
        std::memcmp(h->magic, FileHeader::kMagic, 8) == 0)
      return file_failed(err, FileError::Corrupt,
                         "%s: the file is %lld bytes, shorter than a registry header", req.path,
                         (long long)st.st_size);
    return file_failed(err, FileError::Version,
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
  platform::boot_id(boot);
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

}  // namespace lazybreaker::registry
