// A registry file's bytes cannot fault or wedge a process that opens it
// (docs/shared-registries.md, "What a file's bytes can do"): whole used
// files with a few bytes changed anywhere, the header's words after its
// checksum, a stripe's sequence word left odd by nobody alive, a sparse
// copy on a full file system, and a co-tenant that writes random words into
// the live mapping. Every open is in a child under an alarm: it is refused
// (CB_ECORRUPT, CB_EVERSION) or used, never killed by a signal or stuck.
//
// LB_MUTATED_FILES (default 2000) and LB_MUTATION_SEED explore further;
// a failing file is reported by its number, which with the seed rebuilds it.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <lazybreaker/lazybreaker.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "registry/shared_file.hpp"

using lazybreaker::registry::FileHeader;
using lazybreaker::registry::kFileStripes;

namespace {

// A registry file path of its own for each test, removed at the end.
struct TempPath {
  std::string path;
  TempPath() {
    char buf[] = "/tmp/lb-damaged-XXXXXX";
    const int fd = mkstemp(buf);
    REQUIRE(fd >= 0);
    close(fd);
    unlink(buf);
    path = buf;
  }
  ~TempPath() { unlink(path.c_str()); }
};

uint64_t env_or(const char *name, uint64_t fallback) {
  const char *v = getenv(name);
  return v != nullptr && *v != '\0' ? strtoull(v, nullptr, 10) : fallback;
}

// splitmix64: the same files for the same seed on every machine.
struct Rng {
  uint64_t s;
  uint64_t next() {
    uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  uint64_t below(uint64_t n) { return next() % n; }
};

uint64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

cb_registry_options options(const std::string &path, uint32_t flags, uint32_t capacity = 0) {
  cb_registry_options o;
  cb_registry_options_init(&o);
  o.path = path.c_str();
  o.flags = flags;
  o.capacity = capacity;
  o.clock = CB_CLOCK_MANUAL;
  return o;
}

cb_config plain_config() {
  cb_config c;
  cb_config_init(&c);
  c.failure_threshold = 3;
  c.open_duration_ns = 1'000'000;
  return c;
}

cb_config count_window_config() {
  cb_config c;
  cb_config_init(&c);
  c.policy = CB_POLICY_COUNT_WINDOW;
  c.window_size = 20;
  c.minimum_calls = 5;
  c.open_duration_ns = 1'000'000;
  return c;
}

cb_config time_window_config() {
  cb_config c = count_window_config();
  c.policy = CB_POLICY_TIME_WINDOW;
  c.window_duration_ns = 1'000'000'000;
  c.slow_call_ns = 1'000;
  return c;
}

cb_config config_of(int i) {
  return i % 3 == 0 ? plain_config() : i % 3 == 1 ? count_window_config() : time_window_config();
}

void calls(cb_handle h, int n, int fail_every) {
  for (int k = 0; k < n; ++k) {
    cb_ticket t = 0;
    if (cb_allow(h, &t) == CB_OK)
      cb_done(h, t, fail_every != 0 && k % fail_every == 0 ? CB_FAILURE : CB_SUCCESS);
  }
}

// A file a registry has used: breakers of each policy, named and anonymous,
// in every state, counted, some destroyed (their slots, names, entries and
// windows on the free lists).
void make_used_file(const std::string &path) {
  const cb_registry_options o = options(path, CB_REGISTRY_CREATE, 16);
  cb_registry *reg = nullptr;
  REQUIRE(cb_registry_open(&o, &reg) == CB_OK);
  for (int i = 0; i < 14; ++i) {
    const std::string name =
        i == 13 ? std::string() : "svc-" + std::to_string(i) + std::string(size_t(i) * 11, 'x');
    const cb_config cfg = config_of(i);
    cb_handle h = 0;
    REQUIRE(cb_create(reg, name.empty() ? nullptr : name.c_str(), &cfg, &h) == CB_OK);
    calls(h, 40 + i, 3);
    switch (i % 7) {
      case 1:
        cb_trip(h, 5'000'000);
        break;
      case 2:
        cb_force_open(h);
        break;
      case 3:
        cb_disable(h);
        break;
      case 4: {  // HALF_OPEN with a probe out
        calls(h, 30, 1);
        cb_clock_advance(reg, 2'000'000);
        cb_ticket t = 0;
        cb_allow(h, &t);
        break;
      }
      case 5:
        REQUIRE(cb_destroy(h) == CB_OK);
        break;
      default:
        break;
    }
  }
  cb_registry_close(reg);
}

std::vector<unsigned char> read_file(const std::string &path) {
  std::vector<unsigned char> bytes;
  const int fd = open(path.c_str(), O_RDONLY);
  REQUIRE(fd >= 0);
  struct stat st;
  REQUIRE(fstat(fd, &st) == 0);
  bytes.resize(size_t(st.st_size));
  REQUIRE(pread(fd, bytes.data(), bytes.size(), 0) == ssize_t(bytes.size()));
  close(fd);
  return bytes;
}

void write_file(const std::string &path, const std::vector<unsigned char> &bytes) {
  const int fd = open(path.c_str(), O_RDWR | O_CREAT, 0600);
  REQUIRE(fd >= 0);
  REQUIRE(pwrite(fd, bytes.data(), bytes.size(), 0) == ssize_t(bytes.size()));
  REQUIRE(ftruncate(fd, off_t(bytes.size())) == 0);
  close(fd);
}

// Every function of the C ABI on every breaker the registry lists, and on
// new ones; then the registry is closed.
void exercise(cb_registry *reg) {
  cb_handle hs[64];
  size_t n = 0;
  cb_registry_list(reg, hs, 64, &n);
  n = std::min<size_t>(n, 64);
  cb_events_select(reg, CB_EVENTS_TRANSITIONS | CB_EVENTS_REJECTIONS);
  for (size_t i = 0; i < n; ++i) {
    const cb_handle h = hs[i];
    char name[CB_MAX_NAME_BYTES + 1];
    name[0] = '\0';
    cb_name(h, name, sizeof name);
    cb_handle found = 0;
    if (name[0] != '\0') cb_lookup(reg, name, &found);
    cb_stats s;
    s.struct_size = sizeof s;
    cb_stats_get(h, &s);
    cb_state(h);
    uint64_t wait = 0;
    cb_retry_after(h, &wait);
    calls(h, 6, 2);
    cb_ticket t = 0;
    if (cb_allow(h, &t) == CB_OK) cb_done(h, t, CB_IGNORED);
    cb_done(h, 0x0123456789abcdefull, CB_SUCCESS);
    cb_trip(h, 1'000);
    calls(h, 2, 0);
    cb_clock_advance(reg, 2'000);
    calls(h, 2, 1);
    cb_force_open(h);
    calls(h, 1, 0);
    cb_disable(h);
    calls(h, 1, 0);
    cb_reset(h);
    calls(h, 3, 0);
    cb_stats_get(h, &s);
    cb_retry_after(h, &wait);
    cb_state(h);
    if (i % 2 == 1) cb_destroy(h);
  }
  for (int i = 0; i < 6; ++i) {
    const std::string name = "svc-" + std::to_string(i) + std::string(size_t(i) * 11, 'x');
    const cb_config cfg = config_of(i + 1);
    cb_handle h = 0;
    if (cb_get_or_create(reg, name.c_str(), &cfg, &h) == CB_OK) calls(h, 3, 2);
    cb_handle fresh = 0;
    const std::string other = "new-" + std::to_string(i);
    if (cb_create(reg, i % 2 == 0 ? other.c_str() : nullptr, &cfg, &fresh) == CB_OK) {
      calls(fresh, 4, 2);
      cb_stats s;
      s.struct_size = sizeof s;
      cb_stats_get(fresh, &s);
      if (i % 3 == 0) cb_destroy(fresh);
    }
  }
  cb_event events[16];
  events[0].struct_size = sizeof events[0];  // the stride; a garbage one is the caller's bug
  size_t got = 0;
  cb_events_poll(reg, events, 16, &got);
  uint64_t dropped = 0, clock_now = 0;
  cb_events_dropped(reg, &dropped);
  cb_clock_now(reg, &clock_now);
  size_t needed = 0;
  cb_metrics_prometheus(reg, nullptr, 0, &needed);
  std::vector<char> text(needed + 1);
  cb_metrics_prometheus(reg, text.data(), text.size(), &needed);
  cb_registry_list(reg, hs, 64, &n);
  cb_registry_close(reg);
}

// In a child: a fault kills it (its parent counts it) rather than run the
// test framework's handler.
void plain_signals() {
  for (const int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) signal(sig, SIG_DFL);
}

enum class Fate { Used, Refused, OtherRefusal, Crashed, Hung };

// A child that opens the file under a 3 s alarm and exercises it.
pid_t start_child(const std::string &path) {
  fflush(nullptr);
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    plain_signals();
    alarm(3);
    const cb_registry_options o = options(path, 0);
    cb_registry *reg = nullptr;
    const int st = cb_registry_open(&o, &reg);
    if (st != CB_OK) _exit(st == CB_ECORRUPT || st == CB_EVERSION ? 3 : 4);
    exercise(reg);
    _exit(0);
  }
  return pid;
}

// What became of such a child, from its wait status.
Fate fate_of(int status) {
  if (WIFSIGNALED(status)) return WTERMSIG(status) == SIGALRM ? Fate::Hung : Fate::Crashed;
  switch (WEXITSTATUS(status)) {
    case 0:
      return Fate::Used;
    case 3:
      return Fate::Refused;
    case 4:
      return Fate::OtherRefusal;
    default:
      return Fate::Crashed;  // a sanitizer's report, or a failed check
  }
}

Fate open_in_child(const std::string &path) {
  const pid_t pid = start_child(path);
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  return fate_of(status);
}

struct Tally {
  int tried = 0, used = 0, refused = 0, other = 0, crashed = 0, hung = 0;
  std::string failures;  // the first few files that crashed or hung
  void add(Fate f, uint64_t file, int status) {
    ++tried;
    switch (f) {
      case Fate::Used:
        ++used;
        return;
      case Fate::Refused:
        ++refused;
        return;
      case Fate::OtherRefusal:
        ++other;
        return;
      case Fate::Crashed:
        ++crashed;
        break;
      case Fate::Hung:
        ++hung;
        break;
    }
    if (crashed + hung <= 10)
      failures += " file " + std::to_string(file) + " (status " + std::to_string(status) + ")";
  }
  std::string summary() const {
    return std::to_string(tried) + " tried: " + std::to_string(refused) + " refused, " +
           std::to_string(used) + " used, " + std::to_string(other) + " refused otherwise, " +
           std::to_string(crashed) + " crashed, " + std::to_string(hung) + " hung";
  }
};

// Opens `files` files, each as `make(file, path)` writes it at `path`, in
// children, a few at once (each with a file of its own): a child that
// waits out a fold's bound keeps the others going.
template <class Make>
Tally open_files(uint64_t files, Make make) {
  constexpr int kWorkers = 4;
  TempPath paths[kWorkers];
  pid_t pids[kWorkers] = {};
  uint64_t which[kWorkers] = {};
  Tally tally;
  auto reap = [&] {
    int status = 0;
    const pid_t pid = waitpid(-1, &status, 0);
    REQUIRE(pid > 0);
    int w = 0;
    while (w < kWorkers && pids[w] != pid) ++w;
    REQUIRE(w < kWorkers);
    pids[w] = 0;
    tally.add(fate_of(status), which[w], status);
    return w;
  };
  for (uint64_t file = 0; file < files; ++file) {
    int w = 0;
    while (w < kWorkers && pids[w] != 0) ++w;
    if (w == kWorkers) w = reap();
    make(file, paths[w].path);
    which[w] = file;
    pids[w] = start_child(paths[w].path);
  }
  while (std::any_of(std::begin(pids), std::end(pids), [](pid_t p) { return p != 0; })) reap();
  return tally;
}

// The pages of `bytes` a registry wrote (any byte not zero), and the header.
std::vector<size_t> written_lines(const std::vector<unsigned char> &bytes) {
  std::vector<size_t> lines;
  for (size_t at = 0; at + 64 <= bytes.size(); at += 64)
    if (std::any_of(bytes.begin() + long(at), bytes.begin() + long(at + 64),
                    [](unsigned char b) { return b != 0; }))
      lines.push_back(at);
  return lines;
}

// The words of a FileHeader after its checksum (what processes change).
constexpr size_t kTailAt = offsetof(FileHeader, manual_ns);
constexpr size_t kTailEnd = sizeof(FileHeader);

// The owner word (registry::ProcessId) of live process `pid`.
uint64_t owner_of(pid_t pid) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/stat", int(pid));
  FILE *f = fopen(path, "r");
  REQUIRE(f != nullptr);
  char buf[1024] = {};
  const size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  const char *p = strrchr(buf, ')');
  REQUIRE(p != nullptr);
  for (int field = 2; field < 22 && p != nullptr; ++field) p = strchr(p + 1, ' ');
  REQUIRE(p != nullptr);
  return uint64_t(uint32_t(pid)) << 32 | uint32_t(strtoull(p + 1, nullptr, 10));
}

}  // namespace

TEST_CASE("whole used files with 1 to 8 bytes changed are refused or used, never crash or hang") {
  TempPath pristine;
  make_used_file(pristine.path);
  const std::vector<unsigned char> bytes = read_file(pristine.path);
  const std::vector<size_t> lines = written_lines(bytes);
  REQUIRE(lines.size() > 50);
  const uint64_t files = env_or("LB_MUTATED_FILES", 2000);
  const uint64_t seed = env_or("LB_MUTATION_SEED", 21);
  const uint64_t started = now_ns();
  const Tally tally = open_files(files, [&](uint64_t file, const std::string &path) {
    Rng rng{seed * 1000003 + file};
    std::vector<unsigned char> damaged = bytes;
    const int changes = 1 + int(rng.below(8));
    for (int k = 0; k < changes; ++k) {
      // A quarter in the header, half in what the registry wrote, a
      // quarter anywhere.
      const uint64_t where = rng.below(4);
      const size_t at = where == 0   ? rng.below(sizeof(FileHeader))
                        : where == 3 ? rng.below(bytes.size())
                                     : lines[rng.below(lines.size())] + rng.below(64);
      damaged[at] =
          rng.below(2) != 0 ? uint8_t(rng.next()) : uint8_t(damaged[at] ^ (1u << rng.below(8)));
    }
    write_file(path, damaged);
  });
  MESSAGE("mutated files (seed ", seed, "): ", tally.summary(), " in ",
          (now_ns() - started) / 1'000'000, " ms;", tally.failures);
  CHECK(tally.crashed == 0);
  CHECK(tally.hung == 0);
  CHECK(tally.other == 0);
  CHECK(tally.used + tally.refused == int(files));
}

TEST_CASE("any words in the header after its checksum are used, never a crash or a hang") {
  TempPath pristine;
  make_used_file(pristine.path);
  const std::vector<unsigned char> bytes = read_file(pristine.path);
  const uint64_t rounds = std::max<uint64_t>(env_or("LB_MUTATED_FILES", 2000) / 8, 50);
  const uint64_t seed = env_or("LB_MUTATION_SEED", 21);
  const Tally tally = open_files(rounds, [&](uint64_t round, const std::string &path) {
    Rng rng{seed * 7919 + round};
    std::vector<unsigned char> damaged = bytes;
    // Every word of the tail, or a few of them; random, small, odd or
    // one-bit values, as a writer or a fault would leave them.
    const bool all = rng.below(4) == 0;
    const size_t words = (kTailEnd - kTailAt) / 8;
    for (size_t k = 0, n = all ? words : 1 + rng.below(8); k < n; ++k) {
      const size_t at = kTailAt + 8 * (all ? k : rng.below(words));
      const uint64_t kind = rng.below(4);
      const uint64_t v = kind == 0   ? rng.next()
                         : kind == 1 ? rng.below(200)
                         : kind == 2 ? rng.next() | 1
                                     : uint64_t(1) << rng.below(64);
      memcpy(&damaged[at], &v, 8);
    }
    write_file(path, damaged);
  });
  MESSAGE("header tails: ", tally.summary(), ";", tally.failures);
  CHECK(tally.crashed == 0);
  CHECK(tally.hung == 0);
  // Nothing the checksum covers changed: every file is used.
  CHECK(tally.used == int(rounds));
}

namespace {

// A file of one breaker with 1000 admissions counted, whose stripe 0 has
// its sequence word odd and owner `owner`: a fold nobody alive is in.
void make_stuck_fold(const std::string &path, uint64_t owner) {
  {
    const cb_registry_options o = options(path, CB_REGISTRY_CREATE, 16);
    cb_registry *reg = nullptr;
    REQUIRE(cb_registry_open(&o, &reg) == CB_OK);
    const cb_config cfg = plain_config();
    cb_handle h = 0;
    REQUIRE(cb_create(reg, "stuck", &cfg, &h) == CB_OK);
    calls(h, 1000, 0);
    cb_registry_close(reg);
  }
  const int fd = open(path.c_str(), O_RDWR);
  REQUIRE(fd >= 0);
  void *base = mmap(nullptr, sizeof(FileHeader), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  REQUIRE(base != MAP_FAILED);
  auto *h = static_cast<FileHeader *>(base);
  REQUIRE(h->stripes_used.load() >= 1);
  h->sequence[0].n.store(h->sequence[0].n.load() | 1);
  h->stripe_owner[0].store(owner);
  munmap(base, sizeof(FileHeader));
  close(fd);
}

// In a child: cb_stats_get on the file's breaker twice, within `limit_ms`
// each, CB_OK with every admission; the metric counts the fold.
int read_stuck_fold(const std::string &path, uint64_t limit_ms) {
  fflush(nullptr);
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    plain_signals();
    alarm(3);
    const cb_registry_options o = options(path, 0);
    cb_registry *reg = nullptr;
    if (cb_registry_open(&o, &reg) != CB_OK) _exit(10);
    cb_handle h = 0;
    if (cb_lookup(reg, "stuck", &h) != CB_OK) _exit(11);
    for (int k = 0; k < 2; ++k) {
      const uint64_t t0 = now_ns();
      cb_stats s;
      s.struct_size = sizeof s;
      if (cb_stats_get(h, &s) != CB_OK) _exit(12);
      if ((now_ns() - t0) / 1'000'000 > limit_ms) _exit(13);
      if (s.admitted != 1000 || s.successes != 1000) _exit(14);
    }
    size_t needed = 0;
    cb_metrics_prometheus(reg, nullptr, 0, &needed);
    std::string text(needed + 1, '\0');
    cb_metrics_prometheus(reg, text.data(), text.size(), &needed);
    if (text.find("lazybreaker_shared_uncertain_folds_total 1\n") == std::string::npos) _exit(15);
    cb_registry_close(reg);
    _exit(0);
  }
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace

TEST_CASE("a sequence word left odd by nobody, or by a live process not of the file, ends") {
  // The bound is 100 ms of the same odd word (docs/shared-registries.md);
  // the limit leaves room for a loaded machine.
  const uint64_t limit_ms = 1500;
  SUBCASE("owner 0") {
    TempPath f;
    make_stuck_fold(f.path, 0);
    CHECK(read_stuck_fold(f.path, limit_ms) == 0);
  }
  SUBCASE("owner a live process that does not map the file (the test's parent)") {
    TempPath f;
    make_stuck_fold(f.path, owner_of(getppid()));
    CHECK(read_stuck_fold(f.path, limit_ms) == 0);
  }
  SUBCASE("owner a process that is gone") {
    TempPath f;
    make_stuck_fold(f.path, uint64_t(0x7ffffff0) << 32 | 12345);
    const int st = read_stuck_fold(f.path, limit_ms);
    // A dead owner's fold is finished at once (and uncertain: its log says
    // nothing).
    CHECK(st == 0);
  }
}

TEST_CASE("a sparse copy of a file on a full file system is refused, not a SIGBUS") {
  TempPath pristine;
  make_used_file(pristine.path);
  const std::vector<unsigned char> bytes = read_file(pristine.path);
  char dir[] = "/tmp/lb-full-XXXXXX";
  REQUIRE(mkdtemp(dir) != nullptr);
  // Room for the file and half again: full once a filler takes the rest.
  const std::string size = "size=" + std::to_string(bytes.size() / 1024 * 3 / 2 + 64) + "k";
  if (mount("tmpfs", dir, "tmpfs", 0, size.c_str()) != 0) {
    MESSAGE("skipped: cannot mount a tmpfs (", strerror(errno), ")");
    rmdir(dir);
    return;
  }
  const std::string path = std::string(dir) + "/registry";
  {
    // Only the pages the registry wrote: the rest are holes.
    const int fd = open(path.c_str(), O_RDWR | O_CREAT, 0600);
    REQUIRE(fd >= 0);
    REQUIRE(ftruncate(fd, off_t(bytes.size())) == 0);
    for (size_t at = 0; at < bytes.size(); at += 4096) {
      const size_t len = std::min<size_t>(4096, bytes.size() - at);
      if (std::any_of(bytes.begin() + long(at), bytes.begin() + long(at + len),
                      [](unsigned char b) { return b != 0; }))
        REQUIRE(pwrite(fd, &bytes[at], len, off_t(at)) == ssize_t(len));
    }
    CHECK(lseek(fd, 0, SEEK_HOLE) < off_t(bytes.size()));
    close(fd);
    // Then the file system is filled.
    const int filler = open((std::string(dir) + "/filler").c_str(), O_WRONLY | O_CREAT, 0600);
    REQUIRE(filler >= 0);
    std::vector<char> zeros(65536, 1);
    while (write(filler, zeros.data(), zeros.size()) > 0) {
    }
    while (write(filler, zeros.data(), 4096) > 0) {
    }
    close(filler);
  }
  fflush(nullptr);
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    plain_signals();
    alarm(3);
    const cb_registry_options o = options(path, 0);
    cb_registry *reg = nullptr;
    const int st = cb_registry_open(&o, &reg);
    if (st == CB_OK) {
      exercise(reg);
      _exit(1);
    }
    _exit(st == CB_ECORRUPT && strstr(cb_last_error_message(), path.c_str()) != nullptr ? 0 : 2);
  }
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  INFO("status ", status);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  // With room again, the same file is allocated and used.
  unlink((std::string(dir) + "/filler").c_str());
  CHECK(open_in_child(path) == Fate::Used);
  umount2(dir, MNT_DETACH);
  rmdir(dir);
}

TEST_CASE("a co-tenant writing random words into the live mapping crashes no other process") {
  TempPath f;
  make_used_file(f.path);
  const std::vector<unsigned char> bytes = read_file(f.path);
  const std::vector<size_t> lines = written_lines(bytes);
  const uint64_t seed = env_or("LB_MUTATION_SEED", 21);
  const uint64_t run_ms = 1500;
  int rounds_survived = 0;
  const int rounds = 4;
  for (int round = 0; round < rounds; ++round) {
    write_file(f.path, bytes);
    int ready[2];
    REQUIRE(pipe(ready) == 0);
    fflush(nullptr);
    // The victim: opens the file, then calls and reads stats until the time is up.
    const pid_t victim = fork();
    REQUIRE(victim >= 0);
    if (victim == 0) {
      plain_signals();
      alarm(10);
      const cb_registry_options o = options(f.path, 0);
      cb_registry *reg = nullptr;
      if (cb_registry_open(&o, &reg) != CB_OK) _exit(3);
      if (write(ready[1], "r", 1) != 1) _exit(4);
      const uint64_t until = now_ns() + run_ms * 1'000'000;
      while (now_ns() < until) {
        cb_handle hs[64];
        size_t n = 0;
        cb_registry_list(reg, hs, 64, &n);
        for (size_t i = 0; i < std::min<size_t>(n, 64); ++i) {
          calls(hs[i], 20, 3);
          cb_stats s;
          s.struct_size = sizeof s;
          cb_stats_get(hs[i], &s);
          char name[CB_MAX_NAME_BYTES + 1];
          name[0] = '\0';
          cb_name(hs[i], name, sizeof name);
          cb_handle found = 0;
          cb_lookup(reg, name, &found);
          uint64_t wait = 0;
          cb_retry_after(hs[i], &wait);
          if (i % 5 == 0) cb_trip(hs[i], 1'000);
          if (i % 7 == 0) cb_reset(hs[i]);
          cb_clock_advance(reg, 500);
        }
        const cb_config cfg = config_of(int(n));
        cb_handle h = 0;
        if (cb_get_or_create(reg, "churn", &cfg, &h) == CB_OK) {
          calls(h, 5, 2);
          cb_destroy(h);
        }
        size_t needed = 0;
        cb_metrics_prometheus(reg, nullptr, 0, &needed);
      }
      cb_registry_close(reg);
      _exit(0);
    }
    char r = 0;
    REQUIRE(read(ready[0], &r, 1) == 1);
    close(ready[0]);
    close(ready[1]);
    // The co-tenant: maps the file and writes random words where the
    // registry keeps its words, while the victim runs.
    const pid_t tenant = fork();
    REQUIRE(tenant >= 0);
    if (tenant == 0) {
      alarm(10);
      const int fd = open(f.path.c_str(), O_RDWR);
      if (fd < 0) _exit(3);
      auto *base = static_cast<unsigned char *>(
          mmap(nullptr, bytes.size(), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
      if (base == MAP_FAILED) _exit(4);
      Rng rng{seed * 31 + uint64_t(round)};
      const uint64_t until = now_ns() + run_ms * 1'000'000;
      while (now_ns() < until) {
        for (int k = 0; k < 64; ++k) {
          // A quarter in the header's tail, a quarter anywhere, half where
          // the registry has written.
          const uint64_t where = rng.below(4);
          const size_t at = (where == 0   ? kTailAt + rng.below(kTailEnd - kTailAt)
                             : where == 1 ? rng.below(bytes.size())
                                          : lines[rng.below(lines.size())] + rng.below(64)) &
                            ~size_t(7);
          if (at < offsetof(FileHeader, checksum) + 8) continue;  // read at open only
          const uint64_t v = rng.below(3) == 0 ? rng.next() : rng.below(3) == 0 ? 0 : rng.below(64);
          __atomic_store_n(reinterpret_cast<uint64_t *>(base + at), v, __ATOMIC_RELAXED);
        }
        usleep(200);
      }
      _exit(0);
    }
    int vs = 0, ts = 0;
    REQUIRE(waitpid(tenant, &ts, 0) == tenant);
    REQUIRE(waitpid(victim, &vs, 0) == victim);
    INFO("round ", round, ": victim status ", vs);
    CHECK(WIFEXITED(ts));
    CHECK(WIFEXITED(vs));
    CHECK(WEXITSTATUS(vs) == 0);
    if (WIFEXITED(vs) && WEXITSTATUS(vs) == 0) ++rounds_survived;
  }
  MESSAGE("co-tenant writing into the live mapping: ", rounds_survived, " of ", rounds,
          " rounds survived");
}
