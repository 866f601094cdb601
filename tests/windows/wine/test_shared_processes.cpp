// Shared registries on Windows, through the public C API, across Windows
// processes: this program is the parent (the doctest cases) and, started by
// them with `--child ROLE PATH`, each child. A trip in one process is seen in
// another; a process killed with TerminateProcess while it holds a probe
// wedges nobody; the counts of several processes' threads add up exactly; a
// closed shared registry's handles stay stale when a private registry takes
// its slots. (Linux's suites of this, tests/shared and tests/capi/test_shared,
// fork; these start processes the Windows way.)
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>
#include <lazybreaker/lazybreaker.h>
#include <windows.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr uint64_t kSecond = 1'000'000'000;
constexpr int kCountingThreads = 2, kCallsPerThread = 3000;

// A fresh registry file path in the temporary folder, removed when the test ends.
struct TempRegistryFile {
  std::string path;
  TempRegistryFile() {
    static int n = 0;
    char dir[MAX_PATH + 1];
    const DWORD len = GetTempPathA(sizeof dir, dir);
    REQUIRE(len > 0);
    REQUIRE(len < sizeof dir);
    path = std::string(dir) + "lb-test-windows-" + std::to_string(GetCurrentProcessId()) + "-" +
           std::to_string(++n) + ".cbr";
    // Wine reuses process ids: a run that died may have left this name.
    DeleteFileA(path.c_str());
  }
  ~TempRegistryFile() { DeleteFileA(path.c_str()); }
};

cb_registry *open_at(const char *path, uint32_t flags, uint32_t capacity, int clock, int *status) {
  cb_registry_options o;
  cb_registry_options_init(&o);
  o.path = path;
  o.flags = flags;
  o.capacity = capacity;
  o.clock = clock;
  cb_registry *reg = nullptr;
  *status = cb_registry_open(&o, &reg);
  return reg;
}

cb_registry *create_file(const std::string &path, uint32_t capacity = 16) {
  int st = 0;
  cb_registry *reg = open_at(path.c_str(), CB_REGISTRY_CREATE | CB_REGISTRY_EXCLUSIVE, capacity,
                             CB_CLOCK_MANUAL, &st);
  const std::string why = path + ": " + cb_strerror(st) + ": " + cb_last_error_message();
  INFO(why);
  REQUIRE(st == CB_OK);
  return reg;
}

cb_config trips_after(uint32_t failures) {
  cb_config c;
  cb_config_init(&c);
  c.failure_threshold = failures;
  c.open_duration_ns = 10 * kSecond;
  c.half_open_timeout_ns = 20 * kSecond;
  return c;
}

cb_stats stats_of(cb_handle h) {
  cb_stats s{};
  s.struct_size = sizeof s;
  REQUIRE(cb_stats_get(h, &s) == CB_OK);
  return s;
}

// --- The children. Each returns its exit code: 0 when every step worked.

int child_failed(const char *what) {
  std::fprintf(stderr, "child %lu: %s: %s\n", GetCurrentProcessId(), what, cb_last_error_message());
  return 1;
}

cb_registry *child_open(const char *path, cb_handle *h, const char *name) {
  int st = 0;
  cb_registry *reg = open_at(path, 0, 0, CB_CLOCK_MANUAL, &st);
  if (st != CB_OK || cb_lookup(reg, name, h) != CB_OK) return nullptr;
  return reg;
}

// Fails "payments" twice: it trips.
int child_trip(const char *path) {
  cb_handle h = 0;
  cb_registry *reg = child_open(path, &h, "payments");
  if (reg == nullptr) return child_failed("open and lookup");
  for (int i = 0; i < 2; ++i) {
    cb_ticket t = 0;
    if (cb_allow(h, &t) != CB_OK || cb_done(h, t, CB_FAILURE) != CB_OK) return child_failed("call");
  }
  if (cb_state(h) != CB_STATE_OPEN) return child_failed("not tripped");
  return cb_registry_close(reg) == CB_OK ? 0 : child_failed("close");
}

// Takes the probe of the OPEN "probe" (its open duration passed) and waits
// to be killed holding it.
int child_probe(const char *path) {
  cb_handle h = 0;
  if (child_open(path, &h, "probe") == nullptr) return child_failed("open and lookup");
  cb_ticket t = 0;
  if (cb_allow(h, &t) != CB_OK) return child_failed("the probe");
  Sleep(INFINITE);
  return 0;
}

// Its threads make kCallsPerThread successful calls each on "counted".
int child_count(const char *path) {
  cb_handle h = 0;
  cb_registry *reg = child_open(path, &h, "counted");
  if (reg == nullptr) return child_failed("open and lookup");
  std::vector<std::thread> threads;
  bool failed[kCountingThreads] = {};
  for (int k = 0; k < kCountingThreads; ++k)
    threads.emplace_back([h, &failed, k] {
      for (int i = 0; i < kCallsPerThread; ++i) {
        cb_ticket t = 0;
        if (cb_allow(h, &t) != CB_OK || cb_done(h, t, CB_SUCCESS) != CB_OK) failed[k] = true;
      }
    });
  for (std::thread &t : threads) t.join();
  for (bool f : failed)
    if (f) return child_failed("a call");
  return cb_registry_close(reg) == CB_OK ? 0 : child_failed("close");
}

// --- The parent's side.

struct Child {
  PROCESS_INFORMATION pi{};
  Child(const char *role, const std::string &path) {
    wchar_t self[MAX_PATH];
    REQUIRE(GetModuleFileNameW(nullptr, self, MAX_PATH) > 0);
    std::wstring line = L"\"" + std::wstring(self) + L"\" --child ";
    for (const char *c = role; *c; ++c) line += wchar_t(*c);
    line += L" \"";
    for (char c : path) line += wchar_t(static_cast<unsigned char>(c));
    line += L"\"";
    STARTUPINFOW si{};
    si.cb = sizeof si;
    std::vector<wchar_t> writable(line.begin(), line.end());
    writable.push_back(L'\0');
    REQUIRE(CreateProcessW(self, writable.data(), nullptr, nullptr, FALSE, 0, nullptr, nullptr, &si,
                           &pi) != 0);
  }
  DWORD wait_exit() {
    REQUIRE(WaitForSingleObject(pi.hProcess, 60'000) == WAIT_OBJECT_0);
    DWORD code = 0;
    REQUIRE(GetExitCodeProcess(pi.hProcess, &code) != 0);
    return code;
  }
  ~Child() {
    CloseHandle(pi.hThread);
    CloseHandle(pi.hProcess);
  }
};

}  // namespace

TEST_CASE("a breaker tripped in one Windows process is OPEN in another") {
  TempRegistryFile file;
  cb_registry *reg = create_file(file.path);
  const cb_config cfg = trips_after(2);
  cb_handle h = 0;
  REQUIRE(cb_create(reg, "payments", &cfg, &h) == CB_OK);
  Child child("trip", file.path);
  CHECK(child.wait_exit() == 0);
  CHECK(cb_state(h) == CB_STATE_OPEN);
  cb_ticket t = 0;
  CHECK(cb_allow(h, &t) == CB_REJECTED);
  const cb_stats s = stats_of(h);
  CHECK(s.failures == 2);
  CHECK(s.trips == 1);
  CHECK(s.rejected == 1);
  CHECK(cb_registry_close(reg) == CB_OK);
}

TEST_CASE("a process killed with TerminateProcess while it holds the probe wedges nobody") {
  TempRegistryFile file;
  cb_registry *reg = create_file(file.path);
  const cb_config cfg = trips_after(1);
  cb_handle h = 0;
  REQUIRE(cb_create(reg, "probe", &cfg, &h) == CB_OK);
  cb_ticket t = 0;
  REQUIRE(cb_allow(h, &t) == CB_OK);
  REQUIRE(cb_done(h, t, CB_FAILURE) == CB_OK);
  REQUIRE(cb_state(h) == CB_STATE_OPEN);
  REQUIRE(cb_clock_advance(reg, cfg.open_duration_ns) == CB_OK);
  Child child("probe", file.path);
  // The child's probe makes it HALF_OPEN, in the file.
  for (int waited = 0; cb_state(h) != CB_STATE_HALF_OPEN && waited < 60'000; waited += 10)
    Sleep(10);
  REQUIRE(cb_state(h) == CB_STATE_HALF_OPEN);
  REQUIRE(TerminateProcess(child.pi.hProcess, 9) != 0);
  CHECK(child.wait_exit() == 9);
  // Its probe is in flight for good: the others fail fast until it has been
  // silent for half_open_timeout_ns, when it counts as failed (OPEN again);
  // after that open duration, one of them probes.
  CHECK(cb_allow(h, &t) == CB_REJECTED);
  REQUIRE(cb_clock_advance(reg, cfg.half_open_timeout_ns) == CB_OK);
  CHECK(cb_allow(h, &t) == CB_REJECTED);
  CHECK(cb_state(h) == CB_STATE_OPEN);
  REQUIRE(cb_clock_advance(reg, cfg.open_duration_ns) == CB_OK);
  REQUIRE(cb_allow(h, &t) == CB_OK);
  CHECK(cb_done(h, t, CB_SUCCESS) == CB_OK);
  CHECK(cb_state(h) == CB_STATE_CLOSED);
  CHECK(cb_registry_close(reg) == CB_OK);
}

TEST_CASE("the calls of several Windows processes' threads add up exactly") {
  TempRegistryFile file;
  cb_registry *reg = create_file(file.path);
  const cb_config cfg = trips_after(5);
  cb_handle h = 0;
  REQUIRE(cb_create(reg, "counted", &cfg, &h) == CB_OK);
  constexpr int kChildren = 3;
  std::vector<Child *> children;
  for (int c = 0; c < kChildren; ++c) children.push_back(new Child("count", file.path));
  for (Child *c : children) {
    CHECK(c->wait_exit() == 0);
    delete c;
  }
  const cb_stats s = stats_of(h);
  constexpr uint64_t kCalls = uint64_t(kChildren) * kCountingThreads * kCallsPerThread;
  CHECK(s.admitted == kCalls);
  CHECK(s.successes == kCalls);
  CHECK(cb_registry_close(reg) == CB_OK);
}

TEST_CASE("one process's registries on one file see the same breakers and counts") {
  TempRegistryFile file;
  cb_registry *a = create_file(file.path);
  int st = 0;
  cb_registry *b = open_at(file.path.c_str(), 0, 0, CB_CLOCK_MANUAL, &st);
  REQUIRE(st == CB_OK);
  const cb_config cfg = trips_after(3);
  cb_handle ha = 0, hb = 0;
  REQUIRE(cb_create(a, "inventory", &cfg, &ha) == CB_OK);
  REQUIRE(cb_lookup(b, "inventory", &hb) == CB_OK);
  CHECK(ha != hb);  // two runs of the space: two handles
  for (int i = 0; i < 3; ++i) {
    cb_ticket t = 0;
    REQUIRE(cb_allow(i % 2 == 0 ? ha : hb, &t) == CB_OK);
    REQUIRE(cb_done(i % 2 == 0 ? ha : hb, t, CB_FAILURE) == CB_OK);
  }
  CHECK(cb_state(ha) == CB_STATE_OPEN);
  CHECK(cb_state(hb) == CB_STATE_OPEN);
  CHECK(stats_of(ha).failures == 3);
  CHECK(stats_of(hb).failures == 3);
  CHECK(cb_registry_close(a) == CB_OK);
  CHECK(cb_state(ha) < 0);  // closed: stale
  CHECK(cb_state(hb) == CB_STATE_OPEN);
  CHECK(cb_registry_close(b) == CB_OK);
  // Reopened, the breaker is as it was.
  cb_registry *c = open_at(file.path.c_str(), 0, 0, CB_CLOCK_MANUAL, &st);
  REQUIRE(st == CB_OK);
  cb_handle hc = 0;
  REQUIRE(cb_lookup(c, "inventory", &hc) == CB_OK);
  CHECK(cb_state(hc) == CB_STATE_OPEN);
  CHECK(cb_registry_close(c) == CB_OK);
}

TEST_CASE("a closed shared registry's handles stay stale in the registries that take its slots") {
  TempRegistryFile file;
  std::vector<cb_handle> old;
  for (int round = 0; round < 4; ++round) {
    DeleteFileA((file.path + std::to_string(round)).c_str());
    cb_registry *shared = create_file(file.path + std::to_string(round));
    const cb_config cfg = trips_after(3);
    cb_handle h = 0;
    for (int i = 0; i < 8; ++i) {
      REQUIRE(cb_create(shared, nullptr, &cfg, &h) == CB_OK);
      old.push_back(h);
    }
    REQUIRE(cb_registry_close(shared) == CB_OK);
    DeleteFileA((file.path + std::to_string(round)).c_str());
    // Private registries of its size until one takes the freed run (first
    // fit: the others fill the free runs below it).
    const uint64_t shared_chunk = (old.back() & 0xffffff) >> 10;
    std::vector<cb_registry *> mine;
    cb_handle taker = 0;
    while (taker == 0 && mine.size() < 64) {
      cb_registry_options o;
      cb_registry_options_init(&o);
      o.capacity = 16;
      cb_registry *r = nullptr;
      REQUIRE(cb_registry_open(&o, &r) == CB_OK);
      mine.push_back(r);
      for (int i = 0; i < 8; ++i) REQUIRE(cb_create(r, nullptr, &cfg, &h) == CB_OK);
      if ((h & 0xffffff) >> 10 == shared_chunk) taker = h;
    }
    REQUIRE(taker != 0);  // its slots are the shared registry's: only the lives differ
    for (cb_handle stale : old) {
      CAPTURE(stale);
      CHECK(cb_state(stale) < 0);
      cb_ticket t = 0;
      CHECK(cb_allow(stale, &t) < 0);
    }
    CHECK(cb_state(taker) == CB_STATE_CLOSED);
    for (cb_registry *r : mine) REQUIRE(cb_registry_close(r) == CB_OK);
    old.push_back(taker);  // stale from here on too
  }
}

int main(int argc, char **argv) {
  if (argc == 4 && std::strcmp(argv[1], "--child") == 0) {
    const std::string role = argv[2];
    if (role == "trip") return child_trip(argv[3]);
    if (role == "probe") return child_probe(argv[3]);
    if (role == "count") return child_count(argv[3]);
    return 2;
  }
  doctest::Context context(argc, argv);
  return context.run();
}
