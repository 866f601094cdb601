// Shared registries across live processes, through the public C API: what
// the breakers of a registry file look like from several processes at once
// (the kill test, test_kill.cpp, covers processes that die).
#include <doctest/doctest.h>
#include <lazybreaker/lazybreaker.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

namespace {

// A fresh registry file path, removed when the test ends.
struct TempRegistryFile {
  std::string path;
  TempRegistryFile() {
    static int n = 0;
    const char *tmp = std::getenv("TMPDIR");
    const std::string dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm"
                            : tmp != nullptr && *tmp      ? tmp
                                                          : "/tmp";
    path =
        dir + "/lb-test-processes-" + std::to_string(getpid()) + "-" + std::to_string(++n) + ".cbr";
  }
  ~TempRegistryFile() { unlink(path.c_str()); }
};

cb_registry *open_file(const std::string &path, uint32_t flags, uint32_t capacity = 0) {
  cb_registry_options o;
  cb_registry_options_init(&o);
  o.path = path.c_str();
  o.flags = flags;
  o.capacity = capacity;
  cb_registry *reg = nullptr;
  const int st = cb_registry_open(&o, &reg);
  INFO(path, ": ", cb_strerror(st), ": ", cb_last_error_message());
  REQUIRE(st == CB_OK);
  return reg;
}

// In a child: exit 0 if `ok`, else print why and exit 1.
void child_check(bool ok, const char *what) {
  if (!ok) {
    std::fprintf(stderr, "child %d: %s: %s\n", int(getpid()), what, cb_last_error_message());
    _exit(1);
  }
}

// Forks a child that runs `body` (which exits through child_check/_exit).
template <typename Body>
pid_t fork_child(Body body) {
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    body();
    _exit(0);
  }
  REQUIRE(pid > 0);
  return pid;
}

void expect_exit_0(pid_t pid) {
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}

cb_stats stats_of(cb_handle h) {
  cb_stats s{};
  s.struct_size = sizeof s;
  REQUIRE(cb_stats_get(h, &s) == CB_OK);
  return s;
}

cb_config trips_after(uint32_t failures) {
  cb_config c;
  cb_config_init(&c);
  c.failure_threshold = failures;
  c.open_duration_ns = 3600ull * 1000000000;
  return c;
}

}  // namespace

TEST_CASE("a breaker tripped in one process is OPEN in another that opened the file") {
  TempRegistryFile file;
  cb_registry *reg = open_file(file.path, CB_REGISTRY_CREATE | CB_REGISTRY_EXCLUSIVE, 16);
  const cb_config cfg = trips_after(2);
  cb_handle h = 0;
  REQUIRE(cb_create(reg, "payments", &cfg, &h) == CB_OK);
  const pid_t child = fork_child([&] {
    cb_registry_options o;
    cb_registry_options_init(&o);
    o.path = file.path.c_str();
    cb_registry *mine = nullptr;
    child_check(cb_registry_open(&o, &mine) == CB_OK, "cb_registry_open");
    cb_handle b = 0;
    child_check(cb_lookup(mine, "payments", &b) == CB_OK, "cb_lookup");
    for (int i = 0; i < 2; ++i) {
      cb_ticket t = 0;
      child_check(cb_allow(b, &t) == CB_OK && cb_done(b, t, CB_FAILURE) == CB_OK, "a call");
    }
    child_check(cb_state(b) == CB_STATE_OPEN, "tripped");
    child_check(cb_registry_close(mine) == CB_OK, "cb_registry_close");
  });
  expect_exit_0(child);
  CHECK(cb_state(h) == CB_STATE_OPEN);
  cb_ticket t = 0;
  CHECK(cb_allow(h, &t) == CB_REJECTED);
  const cb_stats s = stats_of(h);
  CHECK(s.failures == 2);
  CHECK(s.trips == 1);
  CHECK(s.rejected == 1);
  cb_registry_close(reg);
}

TEST_CASE(
    "of processes racing cb_get_or_create on the same names, one creates each and all get it") {
  TempRegistryFile file;
  cb_registry *reg = open_file(file.path, CB_REGISTRY_CREATE | CB_REGISTRY_EXCLUSIVE, 256);
  constexpr int kProcesses = 6, kNames = 40;
  int gate[2];
  REQUIRE(pipe(gate) == 0);
  std::vector<pid_t> children;
  for (int p = 0; p < kProcesses; ++p)
    children.push_back(fork_child([&] {
      close(gate[1]);
      cb_registry_options o;
      cb_registry_options_init(&o);
      o.path = file.path.c_str();
      cb_registry *mine = nullptr;
      child_check(cb_registry_open(&o, &mine) == CB_OK, "cb_registry_open");
      char c;
      child_check(read(gate[0], &c, 1) == 0, "the gate");  // all start when it closes
      const cb_config cfg = trips_after(3);
      for (int n = 0; n < kNames; ++n) {
        cb_handle h = 0;
        const std::string name = "raced-" + std::to_string(n);
        child_check(cb_get_or_create(mine, name.c_str(), &cfg, &h) == CB_OK, "cb_get_or_create");
        cb_ticket t = 0;
        child_check(cb_allow(h, &t) == CB_OK && cb_done(h, t, CB_SUCCESS) == CB_OK, "a call");
      }
      cb_registry_close(mine);
    }));
  close(gate[0]);
  close(gate[1]);
  for (const pid_t c : children) expect_exit_0(c);
  size_t count = 0;
  REQUIRE(cb_registry_list(reg, nullptr, 0, &count) == CB_OK);
  CHECK(count == size_t(kNames));
  for (int n = 0; n < kNames; ++n) {
    cb_handle h = 0;
    const std::string name = "raced-" + std::to_string(n);
    REQUIRE(cb_lookup(reg, name.c_str(), &h) == CB_OK);
    // Every process's call went to the one breaker.
    CHECK(stats_of(h).successes == uint64_t(kProcesses));
  }
  cb_registry_close(reg);
}

TEST_CASE("threads of several processes count into one breaker exactly") {
  TempRegistryFile file;
  cb_registry *reg = open_file(file.path, CB_REGISTRY_CREATE | CB_REGISTRY_EXCLUSIVE, 16);
  cb_handle h = 0;
  REQUIRE(cb_create(reg, "counted", nullptr, &h) == CB_OK);
  // Past 32,768 per thread, so every thread's counts fold too.
  constexpr int kProcesses = 3, kThreads = 2, kCalls = 70000;
  std::vector<pid_t> children;
  for (int p = 0; p < kProcesses; ++p)
    children.push_back(fork_child([&] {
      cb_registry_options o;
      cb_registry_options_init(&o);
      o.path = file.path.c_str();
      cb_registry *mine = nullptr;
      child_check(cb_registry_open(&o, &mine) == CB_OK, "cb_registry_open");
      cb_handle b = 0;
      child_check(cb_lookup(mine, "counted", &b) == CB_OK, "cb_lookup");
      std::vector<std::thread> threads;
      std::atomic<int> bad{0};
      for (int t = 0; t < kThreads; ++t)
        threads.emplace_back([&] {
          for (int i = 0; i < kCalls; ++i) {
            cb_ticket tk = 0;
            if (cb_allow(b, &tk) != CB_OK || cb_done(b, tk, i % 2 ? CB_IGNORED : CB_SUCCESS))
              bad.store(1);
          }
        });
      for (std::thread &t : threads) t.join();
      child_check(bad.load() == 0, "the calls");
      cb_registry_close(mine);
    }));
  for (const pid_t c : children) expect_exit_0(c);
  const cb_stats s = stats_of(h);
  const uint64_t calls = uint64_t(kProcesses) * kThreads * kCalls;
  CHECK(s.admitted == calls);
  CHECK(s.successes == calls / 2);
  CHECK(s.ignored == calls / 2);
  cb_registry_close(reg);
}

// The PHP-FPM shape: the master opens the registry and counts a call or two
// before it forks its workers, which go on with the registry they inherited.
// The forking thread's counter stripe is a stripe of the file: if the child
// kept counting into it beside the parent, their counts would overwrite each
// other's.
TEST_CASE("a child forked after its parent counted into a shared registry loses no counts") {
  TempRegistryFile file;
  cb_registry *reg = open_file(file.path, CB_REGISTRY_CREATE | CB_REGISTRY_EXCLUSIVE, 16);
  cb_handle h = 0;
  REQUIRE(cb_create(reg, "inherited", nullptr, &h) == CB_OK);
  cb_ticket t = 0;
  REQUIRE(cb_allow(h, &t) == CB_OK);
  REQUIRE(cb_done(h, t, CB_SUCCESS) == CB_OK);
  constexpr int kCalls = 50000;
  int gate[2];
  REQUIRE(pipe(gate) == 0);
  const pid_t child = fork_child([&] {
    close(gate[1]);
    char c;
    child_check(read(gate[0], &c, 1) == 0, "the gate");
    for (int i = 0; i < kCalls; ++i) {
      cb_ticket tk = 0;
      child_check(cb_allow(h, &tk) == CB_OK && cb_done(h, tk, CB_SUCCESS) == CB_OK, "a call");
    }
  });
  close(gate[0]);
  close(gate[1]);  // both count at once from here
  for (int i = 0; i < kCalls; ++i) {
    cb_ticket tk = 0;
    REQUIRE(cb_allow(h, &tk) == CB_OK);
    REQUIRE(cb_done(h, tk, CB_SUCCESS) == CB_OK);
  }
  expect_exit_0(child);
  const cb_stats s = stats_of(h);
  CHECK(s.admitted == 1 + 2 * uint64_t(kCalls));
  CHECK(s.successes == 1 + 2 * uint64_t(kCalls));
  cb_registry_close(reg);
}

TEST_CASE(
    "a breaker destroyed by one process is refused through another's handle, and its slot "
    "is reused") {
  TempRegistryFile file;
  cb_registry *reg = open_file(file.path, CB_REGISTRY_CREATE | CB_REGISTRY_EXCLUSIVE, 1);
  cb_handle h = 0;
  REQUIRE(cb_create(reg, "short-lived", nullptr, &h) == CB_OK);
  const pid_t child = fork_child([&] {
    cb_registry_options o;
    cb_registry_options_init(&o);
    o.path = file.path.c_str();
    cb_registry *mine = nullptr;
    child_check(cb_registry_open(&o, &mine) == CB_OK, "cb_registry_open");
    cb_handle b = 0;
    child_check(cb_lookup(mine, "short-lived", &b) == CB_OK, "cb_lookup");
    child_check(cb_destroy(b) == CB_OK, "cb_destroy");
    // The one slot is free again: a new breaker takes it.
    child_check(cb_create(mine, "successor", nullptr, &b) == CB_OK, "cb_create in the freed slot");
    cb_registry_close(mine);
  });
  expect_exit_0(child);
  cb_ticket t = 0;
  CHECK(cb_allow(h, &t) == CB_EHANDLE);
  CHECK(cb_state(h) == CB_EHANDLE);
  cb_handle again = 0;
  CHECK(cb_lookup(reg, "short-lived", &again) == CB_ENOENT);
  REQUIRE(cb_lookup(reg, "successor", &again) == CB_OK);
  CHECK(again != h);
  CHECK(cb_state(again) == CB_STATE_CLOSED);
  // Full: capacity 1.
  CHECK(cb_create(reg, "one-too-many", nullptr, &again) == CB_EFULL);
  cb_registry_close(reg);
}

// A file has 64 counter stripes: beyond them, threads count in the shared
// totals (docs/shared-registries.md, "Counters across processes").
TEST_CASE("more threads than the file has stripes, in several processes, count exactly") {
  TempRegistryFile file;
  cb_registry *reg = open_file(file.path, CB_REGISTRY_CREATE | CB_REGISTRY_EXCLUSIVE, 16);
  cb_handle h = 0;
  REQUIRE(cb_create(reg, "crowded", nullptr, &h) == CB_OK);
  constexpr int kProcesses = 3, kThreads = 30, kCalls = 2000;
  int gate[2];
  REQUIRE(pipe(gate) == 0);
  std::vector<pid_t> children;
  for (int p = 0; p < kProcesses; ++p)
    children.push_back(fork_child([&] {
      close(gate[1]);
      cb_registry_options o;
      cb_registry_options_init(&o);
      o.path = file.path.c_str();
      cb_registry *mine = nullptr;
      child_check(cb_registry_open(&o, &mine) == CB_OK, "cb_registry_open");
      cb_handle b = 0;
      child_check(cb_lookup(mine, "crowded", &b) == CB_OK, "cb_lookup");
      char c;
      child_check(read(gate[0], &c, 1) == 0, "the gate");
      std::vector<std::thread> threads;
      std::atomic<int> bad{0}, started{0};
      for (int t = 0; t < kThreads; ++t)
        threads.emplace_back([&] {
          // Every thread holds its stripe (or has none) at once.
          started.fetch_add(1);
          while (started.load() < kThreads) std::this_thread::yield();
          for (int i = 0; i < kCalls; ++i) {
            cb_ticket tk = 0;
            if (cb_allow(b, &tk) != CB_OK || cb_done(b, tk, CB_SUCCESS) != CB_OK) bad.store(1);
          }
        });
      for (std::thread &t : threads) t.join();
      child_check(bad.load() == 0, "the calls");
      cb_registry_close(mine);
    }));
  close(gate[0]);
  close(gate[1]);
  for (const pid_t c : children) expect_exit_0(c);
  const cb_stats s = stats_of(h);
  CHECK(s.admitted == uint64_t(kProcesses) * kThreads * kCalls);
  CHECK(s.successes == uint64_t(kProcesses) * kThreads * kCalls);
  cb_registry_close(reg);
}

TEST_CASE("a process that closes and opens the file again goes on counting exactly") {
  TempRegistryFile file;
  cb_registry *reg = open_file(file.path, CB_REGISTRY_CREATE | CB_REGISTRY_EXCLUSIVE, 16);
  cb_handle h = 0;
  REQUIRE(cb_create(reg, "reopened", nullptr, &h) == CB_OK);
  const pid_t child = fork_child([&] {
    for (int round = 0; round < 20; ++round) {
      cb_registry_options o;
      cb_registry_options_init(&o);
      o.path = file.path.c_str();
      cb_registry *mine = nullptr;
      child_check(cb_registry_open(&o, &mine) == CB_OK, "cb_registry_open");
      cb_handle b = 0;
      child_check(cb_lookup(mine, "reopened", &b) == CB_OK, "cb_lookup");
      // Past a fold (32,768) now and then, from a stripe taken and given back each round.
      for (int i = 0; i < 5000; ++i) {
        cb_ticket tk = 0;
        child_check(cb_allow(b, &tk) == CB_OK && cb_done(b, tk, CB_FAILURE) == CB_OK, "a call");
        if (cb_state(b) != CB_STATE_CLOSED) child_check(cb_reset(b) == CB_OK, "cb_reset");
      }
      child_check(cb_registry_close(mine) == CB_OK, "cb_registry_close");
    }
  });
  expect_exit_0(child);
  const cb_stats s = stats_of(h);
  CHECK(s.admitted == 100000);
  CHECK(s.failures == 100000);
  cb_registry_close(reg);
}

TEST_CASE("a shared registry's manual clock is the file's: an advance in one process moves all") {
  TempRegistryFile file;
  cb_registry_options o;
  cb_registry_options_init(&o);
  o.path = file.path.c_str();
  o.flags = CB_REGISTRY_CREATE | CB_REGISTRY_EXCLUSIVE;
  o.capacity = 4;
  o.clock = CB_CLOCK_MANUAL;
  cb_registry *reg = nullptr;
  REQUIRE(cb_registry_open(&o, &reg) == CB_OK);
  const cb_config cfg = trips_after(1);  // open for an hour
  cb_handle h = 0;
  REQUIRE(cb_create(reg, "timed", &cfg, &h) == CB_OK);
  cb_ticket t = 0;
  REQUIRE(cb_allow(h, &t) == CB_OK);
  REQUIRE(cb_done(h, t, CB_FAILURE) == CB_OK);
  REQUIRE(cb_state(h) == CB_STATE_OPEN);
  const pid_t child = fork_child([&] {
    cb_registry_options mine_o;
    cb_registry_options_init(&mine_o);
    mine_o.path = file.path.c_str();  // capacity 0: the file's
    mine_o.clock = CB_CLOCK_MANUAL;   // a clock must agree with the file's
    cb_registry *mine = nullptr;
    child_check(cb_registry_open(&mine_o, &mine) == CB_OK, "cb_registry_open");
    child_check(cb_clock_advance(mine, 3600ull * 1000000000) == CB_OK, "cb_clock_advance");
    cb_registry_close(mine);
  });
  expect_exit_0(child);
  uint64_t wait = 1;
  REQUIRE(cb_retry_after(h, &wait) == CB_OK);
  CHECK(wait == 0);
  CHECK(cb_allow(h, &t) == CB_OK);  // the probe
  CHECK(cb_state(h) == CB_STATE_HALF_OPEN);
  cb_registry_close(reg);
}
