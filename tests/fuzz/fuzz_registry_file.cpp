// libFuzzer target (b): the bytes of a registry file. A valid, used file
// (template/registry.lbr) is changed as the input says (file_program.hpp),
// written to a fresh path and opened; then every function is called on
// every breaker the file lists, on breakers made anew in it, and on the
// registry, with what lazybreaker.h promises checked after every call
// (check.hpp). Whatever the bytes, the open refuses the file or the calls
// return: a signal, a sanitizer report or a hang (-timeout) is a finding.
// A damaged file may give wrong but bounded figures (issue 21): the values
// checked here are only those no bytes excuse (statuses, states, out-
// parameters, terminated names, event fields, the Prometheus text's form),
// not a wait or a rate a damaged time or counter word can skew.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "check.hpp"
#include "file_program.hpp"
#include "input.hpp"
#include "lazybreaker/lazybreaker.h"
#include "registry/shared_file.hpp"

#ifndef LB_FUZZ_TEMPLATE
#define LB_FUZZ_TEMPLATE "tests/fuzz/template/registry.lbr"
#endif

namespace {

using namespace lbfuzz;
using namespace lbfuzz::file;
namespace reg = lazybreaker::registry;

std::vector<unsigned char> g_template;
std::string g_dir, g_path;
uint8_t g_boot[16];
uint64_t g_pid1_owner;

void remove_dir() {
  if (g_dir.empty()) return;
  unlink(g_path.c_str());
  rmdir(g_dir.c_str());
}

std::vector<unsigned char> read_whole(const char *path) {
  std::vector<unsigned char> out;
  FILE *f = fopen(path, "rb");
  if (f == nullptr) return out;
  unsigned char buf[65536];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) out.insert(out.end(), buf, buf + n);
  fclose(f);
  return out;
}

// As the library reads them (registry/shared_file.cpp): this boot's id,
// and a process's start time, for an owner word that names a live process.
void read_boot_id(uint8_t out[16]) {
  std::memset(out, 0, 16);
  const std::vector<unsigned char> text = read_whole("/proc/sys/kernel/random/boot_id");
  unsigned k = 0;
  for (unsigned char c : text) {
    const int v = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (v < 0 || k >= 32) continue;
    out[k / 2] = uint8_t(out[k / 2] << 4 | v);
    ++k;
  }
}

uint64_t owner_of_pid1() {
  std::vector<unsigned char> stat = read_whole("/proc/1/stat");
  stat.push_back('\0');
  const char *p = std::strrchr(reinterpret_cast<const char *>(stat.data()), ')');
  for (int field = 2; field < 22 && p != nullptr; ++field) p = std::strchr(p + 1, ' ');
  const uint64_t started = p != nullptr ? std::strtoull(p + 1, nullptr, 10) : 0;
  return uint64_t(1) << 32 | uint32_t(started);
}

void setup() {
  const char *t = getenv("LB_FUZZ_TEMPLATE");
  const char *path = t != nullptr && t[0] != '\0' ? t : LB_FUZZ_TEMPLATE;
  g_template = read_whole(path);
  if (g_template.size() < sizeof(reg::FileHeader)) {
    fprintf(stderr,
            "fuzz_registry_file: no registry file template at %s (make it with the fuzz-seeds "
            "target, or set LB_FUZZ_TEMPLATE)\n",
            path);
    abort();
  }
  const char *tmp = getenv("TMPDIR");
  std::string d =
      std::string(tmp != nullptr && tmp[0] != '\0' ? tmp : "/tmp") + "/lb-fuzz-file-XXXXXX";
  std::vector<char> buf(d.begin(), d.end());
  buf.push_back('\0');
  if (mkdtemp(buf.data()) == nullptr) {
    perror("fuzz_registry_file: mkdtemp");
    abort();
  }
  g_dir = buf.data();
  g_path = g_dir + "/registry.lbr";
  atexit(remove_dir);
  read_boot_id(g_boot);
  g_pid1_owner = owner_of_pid1();
}

// ---- changing the file ---------------------------------------------------

struct Span {
  size_t at, size;
};

Span region(const std::vector<unsigned char> &file, Region r) {
  reg::FileHeader h;
  std::memcpy(static_cast<void *>(&h), file.data(), sizeof h);
  // The template's own sections (its header is valid); the whole file for
  // anything else.
  const reg::FileLayout l = reg::FileLayout::of(h.slots, 0);
  const size_t end = file.size();
  auto span = [&](size_t a, size_t b) { return a < b && b <= end ? Span{a, b - a} : Span{0, end}; };
  switch (r) {
    case kHeader:
      return span(0, l.header_bytes);
    case kHeaderLive:
      return span(offsetof(reg::FileHeader, manual_ns), sizeof(reg::FileHeader));
    case kHot:
      return span(l.hot_at, l.totals_at);
    case kTotals:
      return span(l.totals_at, l.cells_at);
    case kCells:
      return span(l.cells_at, l.held_at);
    case kHeld:
      return span(l.held_at, l.arena_at);
    case kArena:
      return span(l.arena_at, end);
    default:
      return Span{0, end};
  }
}

uint64_t word_value(Reader &in, const reg::FileHeader &h, uint64_t old) {
  switch (WordValue(in.u8() % kWordValues)) {
    case kZero:
      return 0;
    case kOne:
      return 1;
    case kAllOnes:
      return UINT64_MAX;
    case kOdd:
      return old | 1;
    case kSelf:
      return reg::ProcessId::self();
    case kPid1:
      return g_pid1_owner;
    case kSlots:
      return h.slots;
    case kCapacity:
      return h.capacity;
    case kHighBit:
      return uint64_t(1) << 63;
    default:
      return in.u64();
  }
}

void patch(std::vector<unsigned char> &file, Reader &in) {
  const uint8_t what = in.u8();
  const Span s = region(file, Region(what % kRegions));
  const Kind kind = Kind(what / 8 % kKinds);
  size_t at = s.at + (in.u16() | size_t(in.u8()) << 16) % s.size;
  reg::FileHeader h;
  std::memcpy(static_cast<void *>(&h), file.data(), sizeof h);
  const size_t end = file.size();
  switch (kind) {
    case kBytes: {
      const std::string b = in.bytes(in.u8());
      std::memcpy(file.data() + at, b.data(), std::min(b.size(), end - at));
      break;
    }
    case kWord64:
    case kWord32: {
      const size_t n = kind == kWord64 ? 8 : 4;
      at &= ~(n - 1);
      if (at + n > end) break;
      uint64_t old = 0;
      std::memcpy(&old, file.data() + at, n);
      const uint64_t v = word_value(in, h, old);
      std::memcpy(file.data() + at, &v, n);
      break;
    }
    case kXorByte:
      file[at] ^= in.u8();
      break;
    case kZeros:
      std::memset(file.data() + at, 0, std::min<size_t>(in.u16(), end - at));
      break;
    default: {
      at &= ~size_t(7);
      if (at + 8 > end) break;
      uint64_t v;
      std::memcpy(&v, file.data() + at, 8);
      v += uint64_t(int64_t(int8_t(in.u8())));
      std::memcpy(file.data() + at, &v, 8);
    }
  }
}

bool write_file(const std::vector<unsigned char> &file) {
  unlink(g_path.c_str());
  const int fd = open(g_path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return false;
  size_t done = 0;
  while (done < file.size()) {
    const ssize_t n = write(fd, file.data() + done, file.size() - done);
    if (n <= 0) break;
    done += size_t(n);
  }
  close(fd);
  return done == file.size();
}

// ---- using what the file holds --------------------------------------------

void use_breaker(cb_registry *r, cb_handle h, bool destroy) {
  status("cb_state", cb_state(h), {0, 1, 2, 3, 4, CB_EHANDLE});
  uint64_t ns;
  poison(&ns);
  int st = status("cb_retry_after", cb_retry_after(h, &ns), {CB_OK, CB_EHANDLE});
  if (st != CB_OK) LBF_UNTOUCHED("cb_retry_after", st, &ns, sizeof ns);
  cb_stats s;
  poison(&s);
  s.struct_size = sizeof s;
  st = status("cb_stats_get", cb_stats_get(h, &s), {CB_OK, CB_EHANDLE});
  if (st == CB_OK) LBF_CHECK(s.struct_size == sizeof s);
  char name[CB_MAX_NAME_BYTES + 1];
  poison(name, sizeof name);
  st = status("cb_name", cb_name(h, name, sizeof name), {CB_OK, CB_EHANDLE});
  if (st == CB_OK) {
    LBF_CHECK(std::memchr(name, '\0', sizeof name) != nullptr);
    if (name[0] != '\0') {
      cb_handle found;
      status("cb_lookup", cb_lookup(r, name, &found), {CB_OK, CB_EINVAL, CB_ENOENT});
      cb_handle same;
      status("cb_get_or_create", cb_get_or_create(r, name, nullptr, &same),
             {CB_OK, CB_EINVAL, CB_EEXIST, CB_EFULL});
    }
  } else {
    LBF_UNTOUCHED("cb_name", st, name, sizeof name);
  }
  // Calls and outcomes of each kind, a trip, each manual state, calls again.
  for (int i = 0; i < 4; ++i) {
    cb_ticket t;
    poison(&t);
    st = status("cb_allow", cb_allow(h, &t), {CB_OK, CB_REJECTED, CB_EHANDLE});
    if (st != CB_OK) {
      LBF_UNTOUCHED("cb_allow", st, &t, sizeof t);
      continue;
    }
    LBF_CHECK(t != 0);
    status("cb_done", cb_done(h, t, i % 3), {CB_OK, CB_EHANDLE});
  }
  status("cb_trip", cb_trip(h, CB_MIN_OPEN_DURATION_NS), {CB_OK, CB_EHANDLE});
  status("cb_clock_advance", cb_clock_advance(r, 2 * CB_MIN_OPEN_DURATION_NS), {CB_OK, CB_EINVAL});
  for (int i = 0; i < 2; ++i) {
    cb_ticket t;
    if (status("cb_allow", cb_allow(h, &t), {CB_OK, CB_REJECTED, CB_EHANDLE}) == CB_OK)
      status("cb_done", cb_done(h, t, CB_FAILURE), {CB_OK, CB_EHANDLE});
  }
  status("cb_force_open", cb_force_open(h), {CB_OK, CB_EHANDLE});
  status("cb_disable", cb_disable(h), {CB_OK, CB_EHANDLE});
  status("cb_reset", cb_reset(h), {CB_OK, CB_EHANDLE});
  cb_ticket t;
  if (status("cb_allow", cb_allow(h, &t), {CB_OK, CB_REJECTED, CB_EHANDLE}) == CB_OK)
    status("cb_done", cb_done(h, t, CB_SUCCESS), {CB_OK, CB_EHANDLE});
  status("cb_state", cb_state(h), {0, 1, 2, 3, 4, CB_EHANDLE});
  poison(&s);
  s.struct_size = sizeof s;
  if (status("cb_stats_get", cb_stats_get(h, &s), {CB_OK, CB_EHANDLE}) == CB_OK)
    LBF_CHECK(s.struct_size == sizeof s);
  if (destroy) status("cb_destroy", cb_destroy(h), {CB_OK, CB_EHANDLE});
}

void use_registry_wide(cb_registry *r) {
  size_t needed = 0;
  if (status("cb_metrics_prometheus", cb_metrics_prometheus(r, nullptr, 0, &needed), {CB_OK}) ==
      CB_OK) {
    std::vector<char> text(needed + 4097);
    size_t got = 0;
    const int st =
        status("cb_metrics_prometheus", cb_metrics_prometheus(r, text.data(), text.size(), &got),
               {CB_OK, CB_ERANGE});
    if (st == CB_OK) {
      LBF_CHECK(got < text.size() && std::strlen(text.data()) == got);
      for (const char *line = text.data(); *line != '\0';) {
        LBF_CHECKF(std::strncmp(line, "# ", 2) == 0 || std::strncmp(line, "lazybreaker_", 12) == 0,
                   "a Prometheus line starts \"%.40s\"", line);
        const char *nl = std::strchr(line, '\n');
        LBF_CHECK(nl != nullptr);
        line = nl + 1;
      }
    }
  }
  cb_event e[8];
  e[0].struct_size = sizeof e[0];
  size_t n = 0;
  if (status("cb_events_poll", cb_events_poll(r, e, 8, &n), {CB_OK}) == CB_OK) {
    LBF_CHECK(n <= 8);
    for (size_t i = 0; i < n; ++i) check_event(e[i], sizeof e[0]);
  }
  uint64_t v;
  status("cb_events_dropped", cb_events_dropped(r, &v), {CB_OK});
  status("cb_events_select", cb_events_select(r, CB_EVENTS_TRANSITIONS | CB_EVENTS_REJECTIONS),
         {CB_OK});
  status("cb_clock_now", cb_clock_now(r, &v), {CB_OK});
}

// Every breaker the file lists, then new ones (which take free slots,
// names, configurations and windows from the file's arena).
void use(cb_registry *r, bool destroy) {
  size_t count = 0;
  std::vector<cb_handle> hs(64);
  if (status("cb_registry_list", cb_registry_list(r, hs.data(), hs.size(), &count), {CB_OK}) !=
      CB_OK)
    return;
  hs.resize(std::min(count, hs.size()));
  use_registry_wide(r);
  for (cb_handle h : hs) {
    LBF_CHECK(h != 0);
    use_breaker(r, h, false);
  }
  cb_config c;
  cb_config_init(&c);
  c.failure_threshold = 2;
  c.open_duration_ns = CB_MIN_OPEN_DURATION_NS;
  cb_config windowed = c;
  windowed.policy = CB_POLICY_TIME_WINDOW;
  windowed.window_duration_ns = CB_MIN_WINDOW_DURATION_NS;
  windowed.window_buckets = 4;
  windowed.minimum_calls = 2;
  windowed.slow_call_ns = 1;
  const char *names[] = {"fuzz-new", nullptr, "fuzz-windowed", "consecutive"};
  const cb_config *cfgs[] = {&c, nullptr, &windowed, nullptr};
  for (int i = 0; i < 4; ++i) {
    cb_handle h;
    poison(&h);
    const int st =
        status("cb_create", cb_create(r, names[i], cfgs[i], &h), {CB_OK, CB_EEXIST, CB_EFULL});
    if (st != CB_OK) {
      LBF_UNTOUCHED("cb_create", st, &h, sizeof h);
      continue;
    }
    use_breaker(r, h, true);
  }
  use_registry_wide(r);
  if (destroy)
    for (cb_handle h : hs) status("cb_destroy", cb_destroy(h), {CB_OK, CB_EHANDLE});
}

int open_file(uint8_t flags, uint32_t capacity, int clock, cb_registry **out) {
  cb_registry_options o;
  cb_registry_options_init(&o);
  o.path = g_path.c_str();
  o.clock = (flags & kWrongClock) != 0 ? CB_CLOCK_MONOTONIC : clock;
  o.capacity = (flags & kGiveCapacity) != 0 ? capacity : 0;
  o.event_capacity = 16;
  poison(out);
  const int st = status("cb_registry_open", cb_registry_open(&o, out),
                        {CB_OK, CB_EINVAL, CB_EVERSION, CB_ECORRUPT, CB_EIO, CB_ENOMEM, CB_EFULL});
  if (st != CB_OK) LBF_UNTOUCHED("cb_registry_open", st, out, sizeof *out);
  return st;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (g_template.empty()) setup();
  std::vector<unsigned char> file = g_template;
  reg::FileHeader th;
  std::memcpy(static_cast<void *>(&th), g_template.data(), sizeof th);
  Reader in(data, size);
  const uint8_t flags = in.u8();
  auto *h = reinterpret_cast<reg::FileHeader *>(file.data());
  if ((flags & kThisBoot) != 0) {
    std::memcpy(h->boot_id, g_boot, sizeof g_boot);
    h->checksum = h->compute_checksum();
  }
  if ((flags & kRaw) != 0) {
    const std::string raw = in.bytes(in.left());
    std::memcpy(file.data(), raw.data(), std::min(raw.size(), file.size()));
  } else {
    for (int n = 0; !in.done() && n < 256; ++n) patch(file, in);
  }
  if ((flags & kFixChecksum) != 0) h->checksum = h->compute_checksum();
  if (!write_file(file)) {
    perror("fuzz_registry_file: cannot write the file");
    abort();
  }
  cb_registry *r = nullptr, *again = nullptr;
  const int clock = th.clock == 1 ? CB_CLOCK_MANUAL : CB_CLOCK_MONOTONIC;
  if (open_file(flags, th.capacity, clock, &r) == CB_OK) {
    if ((flags & kTwice) != 0 && open_file(flags, th.capacity, clock, &again) == CB_OK)
      use(again, false);
    use(r, true);
    if (again != nullptr) status("cb_registry_close", cb_registry_close(again), {CB_OK});
    status("cb_registry_close", cb_registry_close(r), {CB_OK});
    // Closed: its pointer is refused from now on.
    LBF_CHECK(status("cb_registry_close", cb_registry_close(r), {CB_EINVAL}) == CB_EINVAL);
  }
  unlink(g_path.c_str());
  return 0;
}
