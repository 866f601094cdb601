// The library starts no thread, and its request path makes no system call
// and allocates nothing.
#include <dirent.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>

#include "fixture.hpp"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define LB_SANITIZED 1
#else
#define LB_SANITIZED 0
#endif

namespace {

int tasks() {
  int n = 0;
  DIR *d = opendir("/proc/self/task");
  REQUIRE(d != nullptr);
  while (dirent *e = readdir(d)) n += e->d_name[0] != '.';
  closedir(d);
  return n;
}

// One full cycle through every request-path function.
bool full_cycle(cb_registry *reg, cb_handle h) {
  bool ok = true;
  cb_ticket t = 0;
  for (int i = 0; i < 1000; ++i)
    ok &= cb_allow(h, &t) == CB_OK && cb_done(h, t, CB_SUCCESS) == CB_OK;
  ok &= cb_allow(h, &t) == CB_OK && cb_done(h, t, CB_FAILURE) == CB_OK;
  ok &= cb_state(h) == CB_STATE_OPEN;
  ok &= cb_allow(h, &t) == CB_REJECTED;
  uint64_t wait = 0;
  ok &= cb_retry_after(h, &wait) == CB_OK && wait == 1000;
  ok &= cb_clock_advance(reg, 1000) == CB_OK;
  ok &= cb_allow(h, &t) == CB_OK && cb_state(h) == CB_STATE_HALF_OPEN;
  cb_ticket t2 = 0;
  ok &= cb_allow(h, &t2) == CB_REJECTED;
  ok &= cb_done(h, t, CB_SUCCESS) == CB_OK && cb_state(h) == CB_STATE_CLOSED;
  cb_stats s;
  s.struct_size = sizeof s;
  ok &= cb_stats_get(h, &s) == CB_OK && s.trips == 1;
  ok &= cb_allow(0, &t) == CB_EHANDLE;  // error paths too
  ok &= cb_done(h, t, 9) == CB_EINVAL;
  return ok;
}

}  // namespace

TEST_CASE("the library creates no thread over 100,000 breakers' lives") {
  const int before = tasks();
  ManualRegistry r(1024);
  for (int i = 0; i < 100000; ++i) {
    cb_handle h = r.create(config(1, 1000));
    call(h, CB_FAILURE);
    cb_ticket t = 0;
    REQUIRE(cb_allow(h, &t) == CB_REJECTED);
    REQUIRE(cb_destroy(h) == CB_OK);
  }
  cb_handle h = 0;
  REQUIRE(cb_create(nullptr, nullptr, nullptr, &h) == CB_OK);  // the default registry too
  REQUIRE(cb_destroy(h) == CB_OK);
  CHECK(tasks() == before);
}

TEST_CASE("the request path makes no system call (seccomp strict mode)") {
  if (LB_SANITIZED) {
    MESSAGE("skipped under sanitizers, whose runtimes make system calls of their own");
    return;
  }
  ManualRegistry r;
  const cb_handle h = r.create(config(1, 1000));
  call(h, CB_SUCCESS);  // this thread's first call claims its counter stripe
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    // From here on any system call but read, write and exit kills the child.
    if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT) != 0) syscall(SYS_exit, 2);
    syscall(SYS_exit, full_cycle(r.reg, h) ? 0 : 1);
  }
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  CHECK_MESSAGE(!WIFSIGNALED(status), "killed by seccomp: a system call on the request path");
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}

#if !LB_SANITIZED
namespace {
std::atomic<bool> g_counting{false};
std::atomic<int> g_allocations{0};
}  // namespace

extern "C" void *__libc_malloc(size_t);
extern "C" void *__libc_calloc(size_t, size_t);
extern "C" void *__libc_realloc(void *, size_t);

// Interposes on the library's allocations (the shared library resolves
// malloc through this executable first).
extern "C" void *malloc(size_t n) {
  if (g_counting.load(std::memory_order_relaxed)) g_allocations.fetch_add(1);
  return __libc_malloc(n);
}
extern "C" void *calloc(size_t n, size_t m) {
  if (g_counting.load(std::memory_order_relaxed)) g_allocations.fetch_add(1);
  return __libc_calloc(n, m);
}
extern "C" void *realloc(void *p, size_t n) {
  if (g_counting.load(std::memory_order_relaxed)) g_allocations.fetch_add(1);
  return __libc_realloc(p, n);
}

TEST_CASE("the request path allocates nothing") {
  ManualRegistry r;
  const cb_handle h = r.create(config(1, 1000));
  call(h, CB_SUCCESS);
  g_counting.store(true);
  const bool ok = full_cycle(r.reg, h);
  g_counting.store(false);
  CHECK(ok);
  CHECK(g_allocations.load() == 0);
}
#endif
