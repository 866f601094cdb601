// A process killed inside cb_create (or cb_get_or_create creating) or
// cb_destroy of a named breaker leaves the name usable (found by the kill
// test, fixed on main in "a process killed inside a create or destroy
// wedges no name"). Before the fix, a kill between the name-index insert
// and the breaker's life, or between ending the life and erasing the name,
// blocked the name for good: cb_create said CB_EEXIST, cb_lookup CB_ENOENT,
// and cb_get_or_create, which loops between the two, never returned; what a
// worker pool does at start then hung every worker after the first was
// killed in it. It reproduced within 60 to 350 kills.
//
// A child creates and destroys one named breaker in a loop; the parent kills
// it at a random moment, then asks the file about the name. The specified
// behaviour (lazybreaker.h: a failed or interrupted call changes nothing
// else; at most a slot is lost) is that the name can be created again, or is
// found by cb_lookup if the child's create had finished. Exit 0 when every
// kill left the name usable, 1 at the first one that did not (saying what
// each call returned), 2 for a setup error.
//
//   test_kill_names [KILLS]   (default 2000)
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>

#include "lazybreaker/lazybreaker.h"

namespace {

cb_registry *open_file(const std::string &path, uint32_t flags) {
  cb_registry_options o;
  cb_registry_options_init(&o);
  o.path = path.c_str();
  o.flags = flags;
  o.capacity = flags != 0 ? 4096 : 0;
  cb_registry *reg = nullptr;
  return cb_registry_open(&o, &reg) == CB_OK ? reg : nullptr;
}

[[noreturn]] void churn(const std::string &path, const char *name) {
  cb_registry *reg = open_file(path, 0);
  if (reg == nullptr) _exit(2);
  for (;;) {
    cb_handle h = 0;
    if (cb_get_or_create(reg, name, nullptr, &h) != CB_OK) _exit(3);
    if (cb_destroy(h) != CB_OK) _exit(4);
  }
}

// Does cb_get_or_create(name) return within 2 s? Asked in a child, since
// the bug makes it spin forever.
const char *get_or_create_returns(const std::string &path, const char *name) {
  const pid_t pid = fork();
  if (pid == 0) {
    alarm(2);
    cb_registry *reg = open_file(path, 0);
    cb_handle h = 0;
    _exit(reg != nullptr && cb_get_or_create(reg, name, nullptr, &h) == CB_OK ? 0 : 1);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM) return "did not return in 2 s";
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? "returned CB_OK" : "failed";
}

}  // namespace

int main(int argc, char **argv) {
  const long kills = argc > 1 ? std::strtol(argv[1], nullptr, 10) : 2000;
  const char *tmp = std::getenv("TMPDIR");
  const std::string dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm"
                          : tmp != nullptr && *tmp      ? tmp
                                                        : "/tmp";
  const std::string path = dir + "/lb-kill-names-" + std::to_string(getpid()) + ".cbr";
  cb_registry *reg = open_file(path, CB_REGISTRY_CREATE | CB_REGISTRY_EXCLUSIVE);
  if (reg == nullptr) {
    std::fprintf(stderr, "test_kill_names: %s: %s\n", path.c_str(), cb_last_error_message());
    return 2;
  }
  std::mt19937_64 rng{uint64_t(getpid())};
  int result = 0;
  for (long k = 1; k <= kills && result == 0; ++k) {
    // A fresh name per round, so that one blocked name is seen as such.
    const std::string name = "worker-pool-breaker-" + std::to_string(k);
    std::fflush(nullptr);
    const pid_t pid = fork();
    if (pid == 0) churn(path, name.c_str());
    const timespec pause{0, long(std::uniform_int_distribution<int>(0, 300'000)(rng))};
    nanosleep(&pause, nullptr);
    kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFSIGNALED(status)) {
      std::fprintf(stderr, "test_kill_names: the child exited with %d before the kill\n",
                   WEXITSTATUS(status));
      result = 2;
      break;
    }
    cb_handle h = 0;
    const int created = cb_create(reg, name.c_str(), nullptr, &h);
    if (created == CB_OK) {
      cb_destroy(h);
      continue;
    }
    const int found = cb_lookup(reg, name.c_str(), &h);
    if (created == CB_EEXIST && found == CB_OK) {  // the child's create had finished
      cb_destroy(h);
      continue;
    }
    std::fprintf(stderr,
                 "test_kill_names: FAIL after kill %ld: name '%s' blocked: expected cb_create to "
                 "return CB_OK, or CB_EEXIST with cb_lookup finding it; got cb_create %s, "
                 "cb_lookup %s; cb_get_or_create %s\n",
                 k, name.c_str(), cb_strerror(created), cb_strerror(found),
                 get_or_create_returns(path, name.c_str()));
    result = 1;
  }
  if (result == 0) std::printf("test_kill_names: %ld kills, every name usable afterwards\n", kills);
  cb_registry_close(reg);
  unlink(path.c_str());
  return result;
}
