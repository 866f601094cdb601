// Processes killed while they create a registry file: the path never names
// a half-made file, and a killed creator leaves nothing else behind in the
// directory.
//
// Each round, in a fresh directory: three children race to open one missing
// path with CB_REGISTRY_CREATE (what every worker of a pool may do at
// start), and the parent kills them at a random moment within the time a
// creation takes. Then the parent opens the path: either it is missing
// (every creator died before linking it into place) or it is a whole
// registry file that opens with CB_OK. And the directory holds nothing but
// that file: a creator's scratch file (fully allocated, so as large as the
// registry) must not outlive it.
//
//   test_kill_open [ROUNDS]   (default 200)
//
// Exit 0 when every round passed, 1 at the first that did not (saying what
// was expected and seen), 2 for a setup error.
#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "lazybreaker/lazybreaker.h"

namespace {

constexpr uint32_t kCapacity = 4096;

int open_file(const std::string &path, uint32_t flags, cb_registry **reg) {
  cb_registry_options o;
  cb_registry_options_init(&o);
  o.path = path.c_str();
  o.flags = flags;
  o.capacity = flags != 0 ? kCapacity : 0;
  return cb_registry_open(&o, reg);
}

std::vector<std::string> entries(const std::string &dir) {
  std::vector<std::string> names;
  if (DIR *d = opendir(dir.c_str())) {
    while (const dirent *e = readdir(d))
      if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0)
        names.push_back(e->d_name);
    closedir(d);
  }
  return names;
}

uint64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1'000'000'000u + uint64_t(ts.tv_nsec);
}

void remove_all(const std::string &dir) {
  for (const std::string &e : entries(dir)) unlink((dir + "/" + e).c_str());
  rmdir(dir.c_str());
}

}  // namespace

int main(int argc, char **argv) {
  const long rounds = argc > 1 ? std::strtol(argv[1], nullptr, 10) : 200;
  const char *tmp = std::getenv("TMPDIR");
  const std::string base = access("/dev/shm", W_OK) == 0 ? "/dev/shm"
                           : tmp != nullptr && *tmp      ? tmp
                                                         : "/tmp";
  // How long one creation takes here: the kills fall within it.
  std::string dir = base + "/lb-kill-open-" + std::to_string(getpid());
  if (mkdir(dir.c_str(), 0700) != 0) return std::perror(dir.c_str()), 2;
  const uint64_t start = now_ns();
  cb_registry *reg = nullptr;
  if (open_file(dir + "/registry.cbr", CB_REGISTRY_CREATE, &reg) != CB_OK) {
    std::fprintf(stderr, "test_kill_open: %s\n", cb_last_error_message());
    remove_all(dir);
    return 2;
  }
  const uint64_t creation_ns = now_ns() - start;
  cb_registry_close(reg);
  remove_all(dir);

  std::mt19937_64 rng{uint64_t(getpid())};
  int result = 0;
  long litter_rounds = 0;
  for (long r = 0; r < rounds && result == 0; ++r) {
    dir = base + "/lb-kill-open-" + std::to_string(getpid()) + "-" + std::to_string(r);
    if (mkdir(dir.c_str(), 0700) != 0) return std::perror(dir.c_str()), 2;
    const std::string path = dir + "/registry.cbr";
    std::vector<pid_t> children;
    std::fflush(nullptr);
    for (int c = 0; c < 3; ++c) {
      const pid_t pid = fork();
      if (pid == 0) {
        cb_registry *mine = nullptr;
        _exit(open_file(path, CB_REGISTRY_CREATE, &mine) == CB_OK ? 0 : 1);
      }
      children.push_back(pid);
    }
    const uint64_t wait = std::uniform_int_distribution<uint64_t>(0, 2 * creation_ns)(rng);
    const timespec pause{time_t(wait / 1'000'000'000u), long(wait % 1'000'000'000u)};
    nanosleep(&pause, nullptr);
    for (const pid_t pid : children) kill(pid, SIGKILL);
    for (const pid_t pid : children) {
      int status = 0;
      waitpid(pid, &status, 0);
      if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
        std::fprintf(stderr, "test_kill_open: round %ld: a creator failed to open %s\n", r,
                     path.c_str());
        result = 1;
      }
    }
    if (access(path.c_str(), F_OK) == 0) {
      if (const int st = open_file(path, 0, &reg); st == CB_OK) {
        cb_registry_close(reg);
      } else {
        std::fprintf(stderr,
                     "test_kill_open: round %ld: expected %s to be missing or a whole registry "
                     "file, cb_registry_open says %s: %s\n",
                     r, path.c_str(), cb_strerror(st), cb_last_error_message());
        result = 1;
      }
    }
    for (const std::string &e : entries(dir)) {
      if (e == "registry.cbr") continue;
      std::fprintf(stderr,
                   "test_kill_open: round %ld: expected nothing in %s but registry.cbr after the "
                   "creators were killed, found %s\n",
                   r, dir.c_str(), e.c_str());
      result = 1;
      ++litter_rounds;
    }
    remove_all(dir);
  }
  if (result == 0)
    std::printf(
        "test_kill_open: %ld rounds of 3 creators killed within %.1f ms: no half-made "
        "file, nothing left behind\n",
        rounds, 2 * double(creation_ns) / 1e6);
  return result;
}
