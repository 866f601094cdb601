// The platform layer on Linux (platform.hpp).
#include "platform/platform.hpp"

#include <fcntl.h>
#include <linux/membarrier.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace lazybreaker::platform {

void *reserve(size_t bytes) {
  void *p = mmap(nullptr, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  return p == MAP_FAILED ? nullptr : p;
}

void release(void *base, size_t bytes) { munmap(base, bytes); }

bool commit_read_only(void *at, size_t bytes) { return mprotect(at, bytes, PROT_READ) == 0; }

bool commit(void *at, size_t bytes) { return mprotect(at, bytes, PROT_READ | PROT_WRITE) == 0; }

void decommit(void *at, size_t bytes) { madvise(at, bytes, MADV_DONTNEED); }

void *allocate(size_t bytes) {
  // Reserved, not committed: pages are given memory only as they are
  // written.
  void *p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  return p == MAP_FAILED ? nullptr : p;
}

void free_allocation(void *base, size_t bytes) { munmap(base, bytes); }

void advise_huge_pages(void *at, size_t bytes) {
#ifdef MADV_HUGEPAGE
  madvise(at, bytes, MADV_HUGEPAGE);
#else
  (void)at;
  (void)bytes;
#endif
}

bool map_file_at(void *at, size_t bytes, int fd, size_t offset) {
  return mmap(at, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, off_t(offset)) == at;
}

bool map_zero_at(void *at, size_t bytes) {
  return mmap(at, bytes, PROT_READ | PROT_WRITE,
              MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0) == at;
}

bool file_identity(int fd, uint64_t *device, uint64_t *inode) {
  struct stat st;
  if (fstat(fd, &st) != 0) return false;
  *device = st.st_dev;
  *inode = st.st_ino;
  return true;
}

void boot_id(uint8_t out[16]) {
  std::memset(out, 0, 16);
  const int fd = ::open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  char text[64] = {};
  const ssize_t n = ::read(fd, text, sizeof text - 1);
  ::close(fd);
  // A UUID: its 32 hex digits, the dashes skipped.
  unsigned k = 0;
  for (ssize_t i = 0; i < n && k < 32; ++i) {
    const char c = text[i];
    const int v = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (v < 0) continue;
    out[k / 2] = uint8_t(out[k / 2] << 4 | v);
    ++k;
  }
}

uint64_t coarse_resolution_ns() {
  timespec res;
  return clock_getres(CLOCK_MONOTONIC_COARSE, &res) == 0
             ? uint64_t(res.tv_sec) * 1000000000ull + uint64_t(res.tv_nsec)
             : 10'000'000;
}

uint64_t unix_now_ns() { return detail::read_clock(CLOCK_REALTIME); }

void sleep_ns(uint64_t ns) {
  const timespec ts{time_t(ns / 1'000'000'000), long(ns % 1'000'000'000)};
  nanosleep(&ts, nullptr);
}

bool make_thread_exit_key(ThreadExitKey *key, void (*on_exit)(void *value)) {
  pthread_key_t k;
  key->made = pthread_key_create(&k, on_exit) == 0;
  key->id = key->made ? uintptr_t(k) : 0;
  return key->made;
}

bool set_thread_exit_value(const ThreadExitKey &key, void *value) {
  return key.made && pthread_setspecific(pthread_key_t(key.id), value) == 0;
}

void on_fork_child(void (*in_child)()) { pthread_atfork(nullptr, nullptr, in_child); }

bool process_wide_barrier() {
  enum { Unknown, Expedited, Global, None };
  static int kind = Unknown;  // under the caller's lock (Grace's limbo lock)
  if (kind == Unknown) {
    const long supported = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
    if (supported > 0 && (supported & MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) != 0 &&
        syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0)
      kind = Expedited;
    else if (supported > 0 && (supported & MEMBARRIER_CMD_GLOBAL) != 0)
      kind = Global;
    else
      kind = None;
  }
  if (kind == Expedited)
    return syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0;
  if (kind == Global) return syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0) == 0;
  return false;
}

bool random_bytes(void *out, size_t bytes) {
  return getrandom(out, bytes, GRND_NONBLOCK) == ssize_t(bytes);
}

uint32_t process_id() { return uint32_t(getpid()); }

// The 22nd field of /proc/PID/stat: when the process started, in clock
// ticks since boot; 0 if unreadable.
uint64_t process_start_time(uint32_t pid) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%lu/stat", (unsigned long)pid);
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

bool process_gone(uint32_t pid) {
  return pid == 0 || pid > uint32_t(INT32_MAX) || (kill(pid_t(pid), 0) != 0 && errno == ESRCH);
}

bool process_maps_file(uint32_t pid, uint64_t device, uint64_t inode) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%lu/maps", (unsigned long)pid);
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
      unsigned long long ino = 0;
      found = sscanf(line, "%*s %*s %*s %x:%x %llu", &major_no, &minor_no, &ino) == 3 &&
              ino == inode && makedev(major_no, minor_no) == device;
    }
    size_t left = have - size_t(line - buf);
    if (left == sizeof buf - 1) left = 0;
    std::memmove(buf, line, left);
    have = left;
  }
  ::close(fd);
  return found;
}

}  // namespace lazybreaker::platform
