// libFuzzer target (a): sequences of public-ABI calls decoded from the
// input (api_program.hpp), in private registries, shared registry files and
// the default registry, with made-up handles, tickets and registry pointers.
// After every call, what lazybreaker.h promises is checked (check.hpp), and
// where this single thread can know the answer, the answer: a model of each
// registry it opened (its breakers, names, clock, counts) says what a call
// must return, as long as the program itself kept the header's contract
// (each ticket reported once, with its own handle). A shared file opened
// twice at once, or reopened, has breakers the model did not see made: its
// breakers are then checked against the promises alone.
#include <sys/stat.h>
#include <unistd.h>

#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "api_program.hpp"
#include "check.hpp"
#include "input.hpp"
#include "lazybreaker/lazybreaker.h"

namespace {

using namespace lbfuzz;

constexpr int kSlots = 4, kDefault = 4;  // regs[4] is the default registry
constexpr size_t kMaxBreakers = 64, kMaxTickets = 64;
constexpr uint64_t kMaxBurstCalls = 200000;  // per input
constexpr size_t kConfigV1 = offsetof(cb_config, half_open_timeout_ns) + sizeof(uint64_t);
constexpr size_t kOptionsV1 = offsetof(cb_registry_options, path) + sizeof(const char *);
constexpr size_t kStatsV1 = offsetof(cb_stats, consecutive_failures) + sizeof(uint32_t);
constexpr size_t kEventV1 = offsetof(cb_event, name) + CB_MAX_NAME_BYTES + 1;

struct Reg {
  cb_registry *p = nullptr;
  bool open = false, shared = false, manual = false;
  // exact: every breaker in it is in the model, so counts, names and
  // capacity are known; aliased: its file is open twice in this process,
  // so a breaker may die through the other registry.
  bool exact = false, aliased = false;
  int path = -1;
  uint32_t capacity = 0;
  uint64_t now = 0;  // an exact manual clock
  uint64_t last_now = 0;
  uint64_t last_seq = 0;
  bool polled = false;
  uint64_t dropped = 0;
};

struct Br {
  cb_handle h = 0;
  int reg = -1;
  bool live = true, sure = true;  // sure: EHANDLE means it died
  bool exact = true;              // its counts are the model's
  bool known_config = true;
  bool named = false;
  // Its registry was a shared one and closed: a reopen of the file that is
  // given the same run makes its handle name it again
  // (docs/shared-registries.md).
  bool revivable = false;
  std::string name;
  int policy = CB_POLICY_CONSECUTIVE;
  uint64_t slow_call_ns = 0;
  uint64_t admitted = 0, rejected = 0, outcomes[3] = {0, 0, 0}, trips_min = 0;
  bool have_last = false;
  cb_stats last{};
};

struct Ticket {
  cb_ticket t;
  size_t br;
  bool reported;
};

// The paths a shared open may name, in one temporary directory.
enum { kPathA, kPathB, kPathDir, kPathMissingDir, kPathJunk, kPathEmpty, kPaths };

struct World {
  Reg regs[kSlots + 1];
  std::vector<cb_registry *> closed;
  std::vector<Br> brs;
  std::vector<Ticket> tickets;
  std::string paths[kPaths];
  bool path_exists[2] = {false, false};
  uint64_t burst_calls = 0;
};

World *g_world;
std::string g_dir;

void remove_dir() {
  if (g_dir.empty()) return;
  for (const char *f : {"/r0.lbr", "/r1.lbr", "/junk", "/empty"}) unlink((g_dir + f).c_str());
  rmdir(g_dir.c_str());
}

void setup() {
  const char *tmp = getenv("TMPDIR");
  std::string t =
      std::string(tmp != nullptr && tmp[0] != '\0' ? tmp : "/tmp") + "/lb-fuzz-api-XXXXXX";
  std::vector<char> buf(t.begin(), t.end());
  buf.push_back('\0');
  if (mkdtemp(buf.data()) == nullptr) {
    perror("fuzz_api: mkdtemp");
    abort();
  }
  g_dir = buf.data();
  atexit(remove_dir);
  g_world = new World();
  World &w = *g_world;
  w.paths[kPathA] = g_dir + "/r0.lbr";
  w.paths[kPathB] = g_dir + "/r1.lbr";
  w.paths[kPathDir] = g_dir;
  w.paths[kPathMissingDir] = g_dir + "/missing/r.lbr";
  w.paths[kPathJunk] = g_dir + "/junk";
  w.paths[kPathEmpty] = g_dir + "/empty";
  FILE *f = fopen(w.paths[kPathJunk].c_str(), "w");
  fputs(
      "not a registry file, but long enough to have a header's room......................"
      "...................................................................................",
      f);
  fclose(f);
  fclose(fopen(w.paths[kPathEmpty].c_str(), "w"));
  Reg &d = w.regs[kDefault];
  d.p = cb_default_registry();
  LBF_CHECK(d.p != nullptr);
  d.open = d.exact = true;
  d.capacity = CB_DEFAULT_REGISTRY_CAPACITY;
}

// ---- picking arguments --------------------------------------------------

struct RegPick {
  cb_registry *p;
  int slot;  // the open registry it resolves to, or -1
};

int open_slot_of(World &w, cb_registry *p) {
  if (p == nullptr) return kDefault;
  for (int i = 0; i <= kSlots; ++i)
    if (w.regs[i].open && w.regs[i].p == p) return i;
  return -1;
}

RegPick pick_reg(World &w, Reader &in) {
  const unsigned b = in.u8() % 8;
  cb_registry *p = nullptr;
  if (b < 4) {
    p = w.regs[b].p;  // NULL if never opened: the default registry
  } else if (b == 5) {
    p = cb_default_registry();
  } else if (b == 6) {
    p = reinterpret_cast<cb_registry *>(uintptr_t(in.u64()));
  } else if (b == 7) {
    p = w.closed.empty() ? nullptr : w.closed.back();
  }
  return {p, open_slot_of(w, p)};
}

// A registry argument that is no open registry is refused with CB_EINVAL.
void expect_reg(const char *fn, int st, const RegPick &r) {
  if (r.slot < 0) LBF_CHECKF(st == CB_EINVAL, "%s on a registry that is not open: %d", fn, st);
}

struct HPick {
  cb_handle h;
  int br;  // the model's breaker with this handle, or -1
};

bool untracked_breakers_possible(const World &w) {
  for (int i = 0; i < kSlots; ++i)
    if (w.regs[i].open && !w.regs[i].exact) return true;
  return false;
}

int breaker_of(const World &w, cb_handle h) {
  for (size_t i = w.brs.size(); i-- > 0;)
    if (w.brs[i].h == h) return int(i);
  return -1;
}

HPick pick_handle(World &w, Reader &in) {
  const uint8_t b = in.u8();
  cb_handle h = 0;
  if (b < 0xe0) {
    if (!w.brs.empty()) h = w.brs[b % w.brs.size()].h;
  } else if (b < 0xf0) {
    h = 0;
  } else if (b < 0xf8) {
    h = in.u64();
  } else {
    const uint8_t which = in.u8(), bit = in.u8();
    if (!w.brs.empty()) h = w.brs[which % w.brs.size()].h ^ (uint64_t(1) << (bit % 64));
  }
  return {h, breaker_of(w, h)};
}

enum class Live { Yes, No, Maybe };

Live liveness(const World &w, const HPick &k) {
  if (k.br < 0) return untracked_breakers_possible(w) && k.h != 0 ? Live::Maybe : Live::No;
  const Br &b = w.brs[size_t(k.br)];
  if (!b.live) return b.revivable ? Live::Maybe : Live::No;
  return b.sure ? Live::Yes : Live::Maybe;
}

// Whether the handle's answer agrees with the model: a dead or made-up
// handle is CB_EHANDLE, a live one never is.
void expect_handle(World &w, const char *fn, int st, const HPick &k) {
  const Live l = liveness(w, k);
  if (l == Live::No)
    LBF_CHECKF(st == CB_EHANDLE, "%s on a dead or made-up handle %#" PRIx64 " returned %d", fn, k.h,
               st);
  else if (l == Live::Yes)
    LBF_CHECKF(st != CB_EHANDLE, "%s on a live handle %#" PRIx64 " returned CB_EHANDLE", fn, k.h);
  else if (st == CB_EHANDLE && k.br >= 0)
    w.brs[size_t(k.br)].live = false;  // it died through the file's other registry
}

Br *live_br(World &w, const HPick &k) {
  return liveness(w, k) == Live::Yes ? &w.brs[size_t(k.br)] : nullptr;
}

Reg *reg_of(World &w, const Br &b) { return b.reg >= 0 ? &w.regs[b.reg] : nullptr; }

bool exact(World &w, const Br &b) {
  const Reg *r = reg_of(w, b);
  return b.exact && r != nullptr && r->exact;
}

// ---- names and configurations -------------------------------------------

bool valid_utf8(const std::string &s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    size_t len;
    uint32_t cp;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xe0) == 0xc0) {
      len = 2, cp = c & 0x1f;
    } else if ((c & 0xf0) == 0xe0) {
      len = 3, cp = c & 0x0f;
    } else if ((c & 0xf8) == 0xf0) {
      len = 4, cp = c & 0x07;
    } else {
      return false;
    }
    if (s.size() - i < len) return false;
    for (size_t k = 1; k < len; ++k) {
      const auto d = static_cast<unsigned char>(s[i + k]);
      if ((d & 0xc0) != 0x80) return false;
      cp = cp << 6 | (d & 0x3f);
    }
    static constexpr uint32_t kMin[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMin[len] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return false;
    i += len;
  }
  return true;
}

struct Name {
  bool null = true;
  std::string s;  // as a C string: up to its first NUL
  // The header: NULL (where allowed), or 1..CB_MAX_NAME_BYTES bytes of valid UTF-8.
  bool valid(bool allow_null) const {
    if (null) return allow_null;
    return !s.empty() && s.size() <= CB_MAX_NAME_BYTES && valid_utf8(s);
  }
  const char *c_str() const { return null ? nullptr : s.c_str(); }
};

Name read_name(Reader &in) {
  static const char *const kFixed[] = {"payments",         "db", "ä-é", "x",
                                       "name with spaces", "a",  "b",   "svc.一"};
  const uint8_t b = in.u8();
  Name n;
  if (b == 0) return n;
  n.null = false;
  if (b <= 8) {
    n.s = kFixed[b - 1];
  } else {
    n.s = in.bytes(size_t(b - 8) + (b == 0xff ? in.u8() : 0));
    n.s = n.s.substr(0, std::strlen(n.s.c_str()));  // what the library sees
  }
  return n;
}

uint64_t pick_u64(Reader &in, uint64_t lo, uint64_t hi) {
  switch (in.u8() % 10) {
    case 0:
      return 0;
    case 1:
      return 1;
    case 2:
      return lo;
    case 3:
      return hi;
    case 4:
      return lo - 1;
    case 5:
      return hi + 1;
    case 6:
      return lo + (hi - lo) / 2;
    case 7:
      return in.u8();
    case 8:
      return in.u32();
    default:
      return in.u64();
  }
}

double pick_f64(Reader &in) {
  switch (in.u8() % 10) {
    case 0:
      return 0.0;
    case 1:
      return 1.0;
    case 2:
      return 0.5;
    case 3:
      return std::nextafter(1.0, 2.0);
    case 4:
      return -0.0;
    case 5:
      return NAN;
    case 6:
      return INFINITY;
    case 7:
      return 1000.0;
    case 8:
      return std::nextafter(1.0, 0.0);
    default:
      return in.f64();
  }
}

// A config the input chose, in a buffer of its struct_size, and whether the
// header's ranges make it valid (unknown: a tail of non-zero bytes).
struct Config {
  bool null = false;
  std::vector<unsigned char> bytes;
  int validity = 1;  // 1 valid, 0 invalid, -1 not said by the header
  const cb_config *get() const {
    return null ? nullptr : reinterpret_cast<const cb_config *>(bytes.data());
  }
  cb_config full() const {
    cb_config c;
    cb_config_init(&c);
    if (!null) std::memcpy(&c, bytes.data(), std::min(bytes.size(), sizeof c));
    if (!null && bytes.size() < sizeof c) {  // a 1.0 caller: the 1.1 fields are the defaults
      cb_config d;
      cb_config_init(&d);
      std::memcpy(reinterpret_cast<char *>(&d), &c, kConfigV1);
      c = d;
    }
    return c;
  }
};

bool within(uint64_t v, uint64_t lo, uint64_t hi) { return v >= lo && v <= hi; }

int config_validity(const cb_config &c, size_t size) {
  if (size < kConfigV1) return 0;
  if (!within(c.failure_threshold, 1, CB_MAX_FAILURE_THRESHOLD) ||
      !within(c.open_duration_ns, CB_MIN_OPEN_DURATION_NS, CB_MAX_DURATION_NS) ||
      !within(c.half_open_max_calls, 1, CB_MAX_HALF_OPEN_CALLS) ||
      !within(c.half_open_success_threshold, 1, CB_MAX_HALF_OPEN_SUCCESSES) ||
      c.half_open_timeout_ns > CB_MAX_DURATION_NS)
    return 0;
  if (size == kConfigV1) return 1;
  if (size < sizeof(cb_config)) return -1;
  auto unit = [](double r) { return r > 0.0 && r <= 1.0; };
  if (c.policy < 0 || c.policy > 2 || !within(c.window_size, 1, CB_MAX_WINDOW_SIZE) ||
      !within(c.window_duration_ns, CB_MIN_WINDOW_DURATION_NS, CB_MAX_DURATION_NS) ||
      !within(c.window_buckets, 1, CB_MAX_WINDOW_BUCKETS) ||
      !within(c.minimum_calls, 1, CB_MAX_MINIMUM_CALLS) || !unit(c.failure_rate_threshold) ||
      c.slow_call_ns > CB_MAX_DURATION_NS || !unit(c.slow_call_rate_threshold) ||
      !(c.open_backoff_multiplier >= 1.0 &&
        c.open_backoff_multiplier <= CB_MAX_BACKOFF_MULTIPLIER) ||
      (c.open_duration_max_ns != 0 &&
       !within(c.open_duration_max_ns, c.open_duration_ns, CB_MAX_DURATION_NS)) ||
      !(c.open_jitter >= 0.0 && c.open_jitter < 1.0))
    return 0;
  return size == sizeof(cb_config) ? 1 : -1;
}

Config read_config(Reader &in) {
  Config k;
  const uint8_t shape = in.u8();
  if (shape % 8 == 0) {
    k.null = true;
    return k;
  }
  cb_config c;
  cb_config_init(&c);
  // Which fields the input sets; the rest keep their defaults.
  const uint16_t fields = in.u16();
  auto field = [&](int i) { return (fields >> i & 1) != 0; };
  if (field(0)) c.failure_threshold = uint32_t(pick_u64(in, 1, CB_MAX_FAILURE_THRESHOLD));
  if (field(1)) c.open_duration_ns = pick_u64(in, CB_MIN_OPEN_DURATION_NS, CB_MAX_DURATION_NS);
  if (field(2)) c.half_open_max_calls = uint32_t(pick_u64(in, 1, CB_MAX_HALF_OPEN_CALLS));
  if (field(3))
    c.half_open_success_threshold = uint32_t(pick_u64(in, 1, CB_MAX_HALF_OPEN_SUCCESSES));
  if (field(4)) c.half_open_timeout_ns = pick_u64(in, 0, CB_MAX_DURATION_NS);
  if (field(5)) c.policy = int(in.u8() % 4 == 3 ? int32_t(in.u32()) : in.u8() % 3);
  if (field(6)) c.window_size = uint32_t(pick_u64(in, 1, CB_MAX_WINDOW_SIZE));
  if (field(7)) c.window_duration_ns = pick_u64(in, CB_MIN_WINDOW_DURATION_NS, CB_MAX_DURATION_NS);
  if (field(8)) c.window_buckets = uint32_t(pick_u64(in, 1, CB_MAX_WINDOW_BUCKETS));
  if (field(9)) c.minimum_calls = uint32_t(pick_u64(in, 1, CB_MAX_MINIMUM_CALLS));
  if (field(10)) c.failure_rate_threshold = pick_f64(in);
  if (field(11)) c.slow_call_ns = pick_u64(in, 0, CB_MAX_DURATION_NS);
  if (field(12)) c.slow_call_rate_threshold = pick_f64(in);
  if (field(13)) c.open_backoff_multiplier = pick_f64(in);
  if (field(14)) c.open_duration_max_ns = pick_u64(in, 0, CB_MAX_DURATION_NS);
  if (field(15)) c.open_jitter = pick_f64(in);
  // struct_size: this header's, a 1.0 caller's, too small, between the
  // versions, or longer with a zero or a non-zero tail.
  size_t size = sizeof c;
  bool dirty_tail = false;
  switch (shape / 8 % 8) {
    case 1:
      size = kConfigV1;
      break;
    case 2:
      size = kConfigV1 - 1;
      break;
    case 3:
      size = kConfigV1 + 8;
      break;
    case 4:
      size = sizeof c + 16;
      break;
    case 5:
      size = sizeof c + 16, dirty_tail = true;
      break;
    default:
      break;
  }
  c.struct_size = size;
  k.bytes.assign(std::max(size, sizeof c), 0);
  std::memcpy(k.bytes.data(), &c, sizeof c);
  if (dirty_tail) k.bytes[sizeof c + 3] = 1;
  k.bytes.resize(std::max(size, kConfigV1));
  if (size < kConfigV1) k.bytes.resize(sizeof c);  // the library must not read past struct_size
  k.validity = dirty_tail        ? 0
               : size > sizeof c ? config_validity(c, sizeof c)
                                 : config_validity(c, size);
  if (dirty_tail) k.validity = -1;
  return k;
}

// ---- the operations ------------------------------------------------------

void track_ticket(World &w, cb_ticket t, size_t br) {
  if (w.tickets.size() >= kMaxTickets) w.tickets.erase(w.tickets.begin());
  w.tickets.push_back({t, br, false});
}

size_t live_in(const World &w, int slot) {
  size_t n = 0;
  for (const Br &b : w.brs) n += b.live && b.reg == slot;
  return n;
}

const Br *named_live(const World &w, int slot, const std::string &name) {
  for (const Br &b : w.brs)
    if (b.live && b.reg == slot && b.named && b.name == name) return &b;
  return nullptr;
}

// A breaker the model learns of (created, or found in a file it did not
// make); nullptr if the model is full (the breaker is destroyed again).
Br *learn(World &w, cb_handle h, int slot, bool made_here) {
  if (w.brs.size() >= kMaxBreakers) {
    if (made_here) status("cb_destroy", cb_destroy(h), {CB_OK});
    return nullptr;
  }
  Br b;
  b.h = h;
  b.reg = slot;
  b.sure = !w.regs[slot].aliased;
  b.exact = made_here && w.regs[slot].exact;
  b.known_config = made_here;
  w.brs.push_back(b);
  return &w.brs.back();
}

void close_reg(World &w, int slot) {
  Reg &r = w.regs[slot];
  status("cb_registry_close", cb_registry_close(r.p), {CB_OK});
  r.open = false;
  w.closed.push_back(r.p);
  if (w.closed.size() > 16) w.closed.erase(w.closed.begin());
  for (Br &b : w.brs) {
    if (b.reg != slot) continue;
    // Only a breaker that still lives can be named again by its old handle
    // (docs/shared-registries.md): a destroyed one stays dead.
    if (b.live) b.revivable = r.shared;
    b.live = false, b.sure = true;
    // The slot may take another registry; its closes and counts are not
    // this breaker's.
    b.reg = -1;
  }
  // The file's other registry, if any, is alone with it now, but has
  // breakers the model may not know.
}

struct OptionsBuf {
  cb_registry_options o;
  uint64_t tail[2];
};

// Options from the input; *valid: whether the header's ranges allow them.
void read_options(Reader &in, OptionsBuf *b, bool shared, bool file_exists, bool *valid,
                  bool *dirty_tail) {
  std::memset(b, 0, sizeof *b);
  cb_registry_options_init(&b->o);
  *valid = true;
  *dirty_tail = false;
  switch (in.u8() % 6) {
    case 1:
      b->o.struct_size = kOptionsV1;
      break;
    case 2:
      b->o.struct_size = kOptionsV1 - 1, *valid = false;
      break;
    case 3:
      b->o.struct_size = sizeof b->o + 8;
      break;
    case 4:
      b->o.struct_size = sizeof b->o + 8, b->tail[0] = 7, *dirty_tail = true;
      break;
    default:
      break;
  }
  switch (in.u8() % 8) {
    case 0:
      b->o.capacity = 0;
      break;
    case 1:
      b->o.capacity = 1;
      break;
    case 2:
      b->o.capacity = 2;
      break;
    case 3:
      b->o.capacity = 16;
      break;
    case 4:
      b->o.capacity = 1024;
      break;
    case 5:
      b->o.capacity = 1025;
      break;
    case 6:
      b->o.capacity = CB_MAX_CAPACITY + 1;
      break;
    default:
      b->o.capacity = in.u32();
      break;
  }
  // A file holds ~3.7 KB per breaker of capacity, all allocated: keep new
  // files small (0 would be CB_DEFAULT_FILE_CAPACITY).
  if (shared && b->o.capacity <= CB_MAX_CAPACITY) {
    if (b->o.capacity > 2048) b->o.capacity = b->o.capacity % 2048 + 1;
    if (b->o.capacity == 0 && !file_exists) b->o.capacity = 1;
  }
  if (b->o.capacity > CB_MAX_CAPACITY) *valid = false;
  switch (in.u8() % 4) {
    case 0:
      b->o.clock = CB_CLOCK_MONOTONIC;
      break;
    case 1:
      b->o.clock = CB_CLOCK_MANUAL;
      break;
    case 2:
      b->o.clock = -1, *valid = false;
      break;
    default:
      b->o.clock = int(int32_t(in.u32()));
      if (b->o.clock != 0 && b->o.clock != 1) *valid = false;
  }
  switch (in.u8() % 6) {
    case 0:
      b->o.event_capacity = 0;
      break;
    case 1:
      b->o.event_capacity = 1;
      break;
    case 2:
      b->o.event_capacity = 3;
      break;
    case 3:
      b->o.event_capacity = 1024;
      break;
    case 4:
      b->o.event_capacity = CB_MAX_EVENT_CAPACITY + 1;
      break;
    default:
      b->o.event_capacity = in.u16();
      break;
  }
  const bool has_events = b->o.struct_size >= offsetof(cb_registry_options, event_capacity) + 4;
  if (has_events && b->o.event_capacity > CB_MAX_EVENT_CAPACITY) *valid = false;
  b->o.flags = in.u8() % 16;
  switch (in.u8() % 4) {
    case 0:
      b->o.mode = 0;
      break;
    case 1:
      b->o.mode = 0600;
      break;
    case 2:
      b->o.mode = 0640;
      break;
    default:
      b->o.mode = in.u16() & 07777;
      break;
  }
  if (*dirty_tail) *valid = false;
}

void op_open(World &w, Reader &in, bool shared) {
  const int slot = in.u8() % kSlots;
  const int path = shared ? in.u8() % kPaths : -1;
  if (w.regs[slot].open) close_reg(w, slot);
  const bool exists = path >= 0 && (path > kPathB || w.path_exists[path]);
  OptionsBuf b;
  bool valid, dirty;
  read_options(in, &b, shared, path >= 0 && path <= kPathB && w.path_exists[path], &valid, &dirty);
  if (shared) b.o.path = w.paths[path].c_str();
  const bool known_v12 = b.o.struct_size >= sizeof b.o;
  cb_registry *out;
  poison(&out);
  const int st = status("cb_registry_open", cb_registry_open(&b.o, &out),
                        {CB_OK, CB_EINVAL, CB_ENOENT, CB_EEXIST, CB_EPERM, CB_EVERSION, CB_ECORRUPT,
                         CB_EIO, CB_ENOMEM, CB_EFULL});
  if (!valid) LBF_CHECKF(st == CB_EINVAL, "cb_registry_open with bad options returned %d", st);
  if (shared && known_v12 && !exists && (b.o.flags & ~3u) == 0 && (b.o.flags & 1) == 0)
    LBF_CHECKF(st != CB_OK, "cb_registry_open of a missing file without CB_REGISTRY_CREATE: %d",
               st);
  if (path == kPathDir || path == kPathJunk || path == kPathEmpty)
    LBF_CHECKF(st != CB_OK, "cb_registry_open of %s succeeded", w.paths[path].c_str());
  if (path >= 0 && path <= kPathB) {
    struct stat sb;
    w.path_exists[path] = stat(w.paths[path].c_str(), &sb) == 0;
  }
  if (st != CB_OK) {
    LBF_UNTOUCHED("cb_registry_open", st, &out, sizeof out);
    return;
  }
  LBF_CHECK(out != nullptr);
  Reg &r = w.regs[slot];
  r = Reg{};
  r.p = out;
  r.open = true;
  r.shared = shared;
  r.path = path;
  r.manual = b.o.clock == CB_CLOCK_MANUAL;
  r.capacity = b.o.capacity != 0 ? b.o.capacity : 65536;
  // A file this open made holds nothing the model has not seen.
  r.exact = !shared || (!exists && b.o.capacity != 0);
  for (int i = 0; i < kSlots; ++i) {
    Reg &o = w.regs[i];
    if (i != slot && o.open && o.shared && o.path == path) {
      o.aliased = r.aliased = true;
      o.exact = r.exact = false;
      for (Br &br : w.brs)
        if (br.reg == i) br.sure = false, br.exact = false;
    }
  }
  const int adv = status("cb_clock_advance", cb_clock_advance(out, 0), {CB_OK, CB_EINVAL});
  LBF_CHECKF((adv == CB_OK) == r.manual, "a registry of clock %d: cb_clock_advance(0) is %d",
             b.o.clock, adv);
}

void op_close(World &w, Reader &in) {
  const RegPick r = pick_reg(w, in);
  if (r.slot >= 0 && r.slot < kSlots) {
    close_reg(w, r.slot);
    return;
  }
  const int st = status("cb_registry_close", cb_registry_close(r.p), {CB_OK, CB_EINVAL});
  if (r.p == nullptr)
    LBF_CHECKF(st == CB_OK, "cb_registry_close(NULL) is %d", st);
  else
    LBF_CHECKF(st == CB_EINVAL, "cb_registry_close of the default or a closed registry: %d", st);
}

void op_create(World &w, Reader &in, bool get_or_create) {
  const RegPick r = pick_reg(w, in);
  const Name name = read_name(in);
  const Config cfg = read_config(in);
  const char *fn = get_or_create ? "cb_get_or_create" : "cb_create";
  cb_handle out;
  poison(&out);
  const int st = status(fn,
                        get_or_create ? cb_get_or_create(r.p, name.c_str(), cfg.get(), &out)
                                      : cb_create(r.p, name.c_str(), cfg.get(), &out),
                        {CB_OK, CB_EINVAL, CB_EEXIST, CB_EFULL});
  expect_reg(fn, st, r);
  if (st != CB_OK) LBF_UNTOUCHED(fn, st, &out, sizeof out);
  if (r.slot < 0) return;
  const bool bad = !name.valid(!get_or_create) || cfg.validity == 0;
  if (bad) LBF_CHECKF(st == CB_EINVAL, "%s with a bad name or config returned %d", fn, st);
  Reg &reg = w.regs[r.slot];
  const Br *same = !name.null && reg.exact ? named_live(w, r.slot, name.s) : nullptr;
  if (reg.exact && !bad && cfg.validity == 1) {
    if (same != nullptr && !get_or_create)  // a full registry may say so first
      LBF_CHECKF(st == CB_EEXIST || (st == CB_EFULL && live_in(w, r.slot) >= reg.capacity),
                 "%s of a taken name returned %d", fn, st);
    else if (same == nullptr && live_in(w, r.slot) >= reg.capacity)
      LBF_CHECKF(st == CB_EFULL, "%s in a full registry returned %d", fn, st);
    else if (same == nullptr)
      LBF_CHECKF(st == CB_OK, "%s of a free name (%zu of %u taken) returned %d", fn,
                 live_in(w, r.slot), reg.capacity, st);
  }
  if (st == CB_EFULL && reg.exact)
    LBF_CHECKF(live_in(w, r.slot) >= reg.capacity, "%s: CB_EFULL with %zu of %u breakers", fn,
               live_in(w, r.slot), reg.capacity);
  if (st != CB_OK) return;
  LBF_CHECK(out != 0);
  if (get_or_create && same != nullptr) {
    LBF_CHECKF(out == same->h, "cb_get_or_create gave %#" PRIx64 ", not its breaker's %#" PRIx64,
               out, same->h);
    return;
  }
  int known = breaker_of(w, out);
  if (known >= 0 && !w.brs[size_t(known)].live && w.brs[size_t(known)].revivable) {
    // The handle of a closed shared registry's breaker, whose slot the
    // file's registry, open again on the same run, has given a new life:
    // the old record is forgotten.
    w.brs[size_t(known)].h = 0;
    known = -1;
  }
  if (known >= 0) {
    // Only a registry the model does not see whole can give back a handle
    // it knows (get_or_create of a breaker made through the file's other
    // registry); a dead one never comes back.
    LBF_CHECKF(get_or_create && !reg.exact, "%s returned a known handle %#" PRIx64, fn, out);
    LBF_CHECKF(w.brs[size_t(known)].live, "%s returned a dead handle %#" PRIx64, fn, out);
    return;
  }
  Br *b = learn(w, out, r.slot, !get_or_create || reg.exact);
  if (b == nullptr) return;
  b->named = !name.null;
  b->name = name.s;
  const cb_config full = cfg.full();
  b->policy = full.policy;
  b->slow_call_ns = full.slow_call_ns;
}

void op_lookup(World &w, Reader &in) {
  const RegPick r = pick_reg(w, in);
  const Name name = read_name(in);
  cb_handle out;
  poison(&out);
  const int st =
      status("cb_lookup", cb_lookup(r.p, name.c_str(), &out), {CB_OK, CB_EINVAL, CB_ENOENT});
  expect_reg("cb_lookup", st, r);
  if (st != CB_OK) LBF_UNTOUCHED("cb_lookup", st, &out, sizeof out);
  if (r.slot < 0) return;
  if (!name.valid(false)) LBF_CHECKF(st == CB_EINVAL, "cb_lookup of a bad name: %d", st);
  const Reg &reg = w.regs[r.slot];
  if (reg.exact && name.valid(false)) {
    const Br *b = named_live(w, r.slot, name.s);
    LBF_CHECKF(st == (b != nullptr ? CB_OK : CB_ENOENT), "cb_lookup of \"%s\": %d", name.s.c_str(),
               st);
    if (b != nullptr) LBF_CHECK(out == b->h);
  }
  if (st == CB_OK && breaker_of(w, out) < 0) {
    if (Br *b = learn(w, out, r.slot, false)) b->named = true, b->name = name.s;
  }
}

void op_destroy(World &w, Reader &in) {
  const HPick k = pick_handle(w, in);
  const int st = status("cb_destroy", cb_destroy(k.h), {CB_OK, CB_EHANDLE});
  expect_handle(w, "cb_destroy", st, k);
  if (st == CB_OK && k.br >= 0) w.brs[size_t(k.br)].live = false;
}

int state_of(World &w, const HPick &k) {
  const int s = cb_state(k.h);
  status("cb_state", s, {0, 1, 2, 3, 4, CB_EHANDLE});
  expect_handle(w, "cb_state", s, k);
  return s;
}

void check_retry(World &w, const HPick &k, int state, uint64_t *out_ns) {
  uint64_t ns;
  poison(&ns);
  const int st = status("cb_retry_after", cb_retry_after(k.h, &ns), {CB_OK, CB_EHANDLE});
  expect_handle(w, "cb_retry_after", st, k);
  if (st != CB_OK) {
    LBF_UNTOUCHED("cb_retry_after", st, &ns, sizeof ns);
    return;
  }
  if (state >= 0) check_retry_after(state, ns);
  if (out_ns != nullptr) *out_ns = ns;
}

// The model's expectations of a breaker whose answers are known: one call
// of cb_allow, admitted exactly when cb_retry_after said 0 (a manual clock
// stands still between them).
void op_allow(World &w, Reader &in) {
  const HPick k = pick_handle(w, in);
  const bool null_ticket = in.u8() % 16 == 1;
  Br *b = live_br(w, k);
  const Reg *reg = b != nullptr ? reg_of(w, *b) : nullptr;
  uint64_t wait = 1;
  const bool predict = b != nullptr && reg->manual && !null_ticket && !reg->aliased;
  if (predict) check_retry(w, k, state_of(w, k), &wait);
  cb_ticket t;
  poison(&t);
  const int st = status("cb_allow", cb_allow(k.h, null_ticket ? nullptr : &t),
                        {CB_OK, CB_REJECTED, CB_EINVAL, CB_EHANDLE});
  if (null_ticket) {
    LBF_CHECKF(st == CB_EINVAL || st == CB_EHANDLE, "cb_allow with a NULL ticket: %d", st);
    if (liveness(w, k) == Live::Yes) LBF_CHECK(st == CB_EINVAL);
    return;
  }
  expect_handle(w, "cb_allow", st, k);
  LBF_CHECK(st != CB_EINVAL);
  if (st != CB_OK) LBF_UNTOUCHED("cb_allow", st, &t, sizeof t);
  if (predict)
    LBF_CHECKF((st == CB_OK) == (wait == 0), "cb_allow is %d, though cb_retry_after said %" PRIu64,
               st, wait);
  if (k.br < 0 || st < 0) return;
  Br &br = w.brs[size_t(k.br)];
  if (st == CB_OK) {
    LBF_CHECK(t != 0);
    ++br.admitted;
    track_ticket(w, t, size_t(k.br));
  } else {
    ++br.rejected;
  }
}

void op_done(World &w, Reader &in) {
  const uint8_t tb = in.u8();
  Ticket *kept = nullptr;
  cb_ticket t;
  if (tb < 0xf0 && !w.tickets.empty()) {
    kept = &w.tickets[tb % w.tickets.size()];
    t = kept->t;
  } else {
    t = tb == 0xf0 ? 0 : in.u64();
  }
  HPick k;
  if (in.u8() == 0 && kept != nullptr)
    k = {w.brs[kept->br].h, int(kept->br)};
  else
    k = pick_handle(w, in);
  const uint8_t ob = in.u8();
  const int outcome = ob < 0xf0 ? ob % 3 : ob == 0xf0 ? 3 : ob == 0xf1 ? -1 : int(in.u32());
  const int st = status("cb_done", cb_done(k.h, t, outcome), {CB_OK, CB_EINVAL, CB_EHANDLE});
  const Live l = liveness(w, k);
  if (l == Live::No)
    LBF_CHECKF(st == CB_EHANDLE || st == CB_EINVAL, "cb_done on a dead handle: %d", st);
  if (l == Live::Yes) LBF_CHECK(st != CB_EHANDLE);
  if (outcome < 0 || outcome > 2)
    LBF_CHECKF(st != CB_OK, "cb_done with outcome %d: CB_OK", outcome);
  if (t == 0) LBF_CHECKF(st != CB_OK, "cb_done with ticket 0: %s", "CB_OK");
  const bool own = kept != nullptr && int(kept->br) == k.br;
  if (l == Live::Yes && own && !kept->reported && outcome >= 0 && outcome <= 2)
    LBF_CHECKF(st == CB_OK, "cb_done of its own first ticket: %d", st);
  if (st == CB_EHANDLE && l == Live::Maybe && k.br >= 0) w.brs[size_t(k.br)].live = false;
  if (st != CB_OK || k.br < 0) return;
  Br &br = w.brs[size_t(k.br)];
  if (own && !kept->reported)
    ++br.outcomes[outcome];
  else
    br.exact = false;  // the program broke the contract: the counts are the library's to choose
  if (kept != nullptr) kept->reported = true;
}

void check_stats(World &w, const HPick &k, const cb_stats &s, int state) {
  check_stats_shape(s, sizeof s, state);
  if (k.br < 0) return;
  Br &b = w.brs[size_t(k.br)];
  if (b.known_config) {
    if (b.policy != CB_POLICY_CONSECUTIVE)
      LBF_CHECKF(s.consecutive_failures == 0, "consecutive_failures %u under policy %d",
                 s.consecutive_failures, b.policy);
    if (b.slow_call_ns == 0) LBF_CHECK(s.slow == 0 && s.slow_rate == 0.0);
  }
  if (b.have_last) {
    const cb_stats &p = b.last;
    LBF_CHECKF(s.admitted >= p.admitted && s.rejected >= p.rejected && s.successes >= p.successes &&
                   s.failures >= p.failures && s.ignored >= p.ignored && s.trips >= p.trips &&
                   s.slow >= p.slow,
               "a counter of %#" PRIx64 " went down", k.h);
  }
  b.last = s;
  b.have_last = true;
  if (exact(w, b)) {
    LBF_CHECKF(s.admitted == b.admitted && s.rejected == b.rejected &&
                   s.successes == b.outcomes[CB_SUCCESS] && s.failures == b.outcomes[CB_FAILURE] &&
                   s.ignored == b.outcomes[CB_IGNORED],
               "counts %" PRIu64 "/%" PRIu64 " admitted/rejected, %" PRIu64 "/%" PRIu64 "/%" PRIu64
               " outcomes; the calls made: %" PRIu64 "/%" PRIu64 ", %" PRIu64 "/%" PRIu64
               "/%" PRIu64,
               s.admitted, s.rejected, s.successes, s.failures, s.ignored, b.admitted, b.rejected,
               b.outcomes[0], b.outcomes[1], b.outcomes[2]);
    LBF_CHECKF(s.trips >= b.trips_min, "trips %" PRIu64 " after %" PRIu64 " cb_trip", s.trips,
               b.trips_min);
    LBF_CHECK(s.slow <= s.successes + s.failures + s.ignored);
  }
  if (Reg *r = reg_of(w, b); r != nullptr && r->open) {
    uint64_t now = 0;
    status("cb_clock_now", cb_clock_now(r->p, &now), {CB_OK});
    LBF_CHECKF(s.state_ns <= now, "state_ns %" PRIu64 " beyond the clock's %" PRIu64, s.state_ns,
               now);
  }
}

void op_stats(World &w, Reader &in) {
  const HPick k = pick_handle(w, in);
  const unsigned shape = in.u8() % 6;
  const int state = liveness(w, k) == Live::Yes ? state_of(w, k) : -1;
  size_t size = sizeof(cb_stats);
  switch (shape) {
    case 1:
      size = kStatsV1;
      break;
    case 2:
      size = kStatsV1 - 1;
      break;
    case 3:
      size = sizeof(cb_stats) + 16;
      break;
    case 5:
      size = offsetof(cb_stats, slow) + 8;
      break;
    default:
      break;
  }
  // Exactly struct_size bytes and a guard after them, so a write past
  // struct_size is seen (and ASan sees one past the buffer).
  std::vector<unsigned char> buf(std::max(size, sizeof(cb_stats)) + 16);
  poison(buf.data(), buf.size());
  auto *s = reinterpret_cast<cb_stats *>(buf.data());
  s->struct_size = size;
  const int st = status("cb_stats_get", cb_stats_get(k.h, shape == 4 ? nullptr : s),
                        {CB_OK, CB_EINVAL, CB_EHANDLE});
  if (shape == 4 || shape == 2) {
    LBF_CHECKF(st == CB_EINVAL || st == CB_EHANDLE, "cb_stats_get, bad out: %d", st);
    if (liveness(w, k) == Live::Yes) LBF_CHECK(st == CB_EINVAL);
  } else {
    expect_handle(w, "cb_stats_get", st, k);
    LBF_CHECK(st != CB_EINVAL);
  }
  LBF_CHECKF(untouched(buf.data() + std::max(size, sizeof(size_t)),
                       buf.size() - std::max(size, sizeof(size_t))),
             "cb_stats_get wrote past struct_size %zu", size);
  if (st != CB_OK) {
    LBF_CHECKF(s->struct_size == size && untouched(buf.data() + sizeof(size_t),
                                                   std::max(size, sizeof(size_t)) - sizeof(size_t)),
               "cb_stats_get failed with %d but wrote its out-parameter", st);
    return;
  }
  if (size >= sizeof(cb_stats)) {
    cb_stats copy;
    std::memcpy(&copy, s, sizeof copy);
    copy.struct_size = sizeof copy;
    LBF_CHECK(s->struct_size == size);
    check_stats(w, k, copy, state);
  }
}

void expect_state(World &w, const HPick &k, int want, const char *after) {
  const int s = state_of(w, k);
  if (liveness(w, k) == Live::Yes)
    LBF_CHECKF(s == want, "state %d after %s, not %d", s, after, want);
}

void op_manual(World &w, Reader &in, Op op) {
  const HPick k = pick_handle(w, in);
  const char *fn = op == kForceOpen ? "cb_force_open" : op == kDisable ? "cb_disable" : "cb_reset";
  const int st = status(fn,
                        op == kForceOpen ? cb_force_open(k.h)
                        : op == kDisable ? cb_disable(k.h)
                                         : cb_reset(k.h),
                        {CB_OK, CB_EHANDLE});
  expect_handle(w, fn, st, k);
  if (st == CB_OK &&
      !(k.br >= 0 && w.brs[size_t(k.br)].reg >= 0 && w.regs[w.brs[size_t(k.br)].reg].aliased))
    expect_state(w, k,
                 op == kForceOpen ? CB_STATE_FORCED_OPEN
                 : op == kDisable ? CB_STATE_DISABLED
                                  : CB_STATE_CLOSED,
                 fn);
}

void op_trip(World &w, Reader &in) {
  const HPick k = pick_handle(w, in);
  const uint64_t ns = pick_u64(in, CB_MIN_OPEN_DURATION_NS, CB_MAX_DURATION_NS);
  const int st = status("cb_trip", cb_trip(k.h, ns), {CB_OK, CB_EINVAL, CB_EHANDLE});
  const bool valid = within(ns, CB_MIN_OPEN_DURATION_NS, CB_MAX_DURATION_NS);
  if (!valid) LBF_CHECKF(st != CB_OK, "cb_trip(%" PRIu64 ") succeeded", ns);
  if (valid) expect_handle(w, "cb_trip", st, k);
  if (st != CB_OK || k.br < 0) return;
  Br &b = w.brs[size_t(k.br)];
  ++b.trips_min;
  const Reg *r = reg_of(w, b);
  if (r == nullptr || r->aliased) return;
  expect_state(w, k, CB_STATE_OPEN, "cb_trip");
  if (r->manual) {
    uint64_t wait = 0;
    check_retry(w, k, CB_STATE_OPEN, &wait);
    LBF_CHECKF(wait == ns, "cb_trip(%" PRIu64 ") then cb_retry_after %" PRIu64, ns, wait);
  }
}

void op_name(World &w, Reader &in) {
  const HPick k = pick_handle(w, in);
  const size_t size = in.u16() % 300;
  std::vector<char> buf(size + 16);
  poison(buf.data(), buf.size());
  const int st = status("cb_name", cb_name(k.h, size == 0 ? nullptr : buf.data(), size),
                        {CB_OK, CB_EINVAL, CB_EHANDLE});
  LBF_CHECKF(untouched(buf.data() + size, 16), "cb_name wrote past its %zu bytes", size);
  const Live l = liveness(w, k);
  if (l == Live::No) LBF_CHECK(st == CB_EHANDLE || (size == 0 && st == CB_EINVAL));
  if (l == Live::Yes) LBF_CHECK(st != CB_EHANDLE);
  if (st != CB_OK) {
    LBF_UNTOUCHED("cb_name", st, buf.data(), size);
    if (l == Live::Yes && w.brs[size_t(k.br)].known_config)
      LBF_CHECKF(size <= w.brs[size_t(k.br)].name.size(), "cb_name into %zu bytes failed: %d", size,
                 st);
    return;
  }
  LBF_CHECK(size > 0);
  const char *end = static_cast<const char *>(std::memchr(buf.data(), '\0', size));
  LBF_CHECKF(end != nullptr, "cb_name's text is not terminated within %zu bytes", size);
  if (k.br >= 0 && w.brs[size_t(k.br)].known_config) {
    const Br &b = w.brs[size_t(k.br)];
    LBF_CHECKF(b.name == buf.data(), "cb_name is \"%s\", not \"%s\"", buf.data(), b.name.c_str());
  }
}

void op_events_select(World &w, Reader &in) {
  const RegPick r = pick_reg(w, in);
  const uint8_t kb = in.u8();
  const unsigned kinds = kb < 0xf0 ? kb % 4 : kb;
  const int st = status("cb_events_select", cb_events_select(r.p, kinds), {CB_OK, CB_EINVAL});
  expect_reg("cb_events_select", st, r);
  if (r.slot >= 0) LBF_CHECKF((st == CB_OK) == (kinds <= 3), "cb_events_select(%u): %d", kinds, st);
}

void op_events_poll(World &w, Reader &in) {
  const RegPick r = pick_reg(w, in);
  const size_t max = in.u8() % 20;
  const unsigned shape = in.u8() % 6;
  size_t stride = sizeof(cb_event);
  if (shape == 1) stride = kEventV1;
  if (shape == 2) stride = kEventV1 - 1;
  if (shape == 3) stride = sizeof(cb_event) + 8;
  std::vector<unsigned char> buf(std::max<size_t>(max, 1) * stride + 16);
  poison(buf.data(), buf.size());
  reinterpret_cast<cb_event *>(buf.data())->struct_size = stride;
  size_t count;
  poison(&count);
  cb_event *out = shape == 4 && max > 0 ? nullptr : reinterpret_cast<cb_event *>(buf.data());
  const int st =
      status("cb_events_poll", cb_events_poll(r.p, out, max, shape == 5 ? nullptr : &count),
             {CB_OK, CB_EINVAL});
  expect_reg("cb_events_poll", st, r);
  if (r.slot >= 0)
    LBF_CHECKF((st == CB_OK) == (shape != 5 && (max == 0 || (shape != 2 && out != nullptr))),
               "cb_events_poll with shape %u: %d", shape, st);
  if (st != CB_OK) {
    LBF_UNTOUCHED("cb_events_poll", st, &count, sizeof count);
    LBF_CHECK(untouched(buf.data() + sizeof(size_t), buf.size() - sizeof(size_t)));
    return;
  }
  LBF_CHECKF(count <= max, "cb_events_poll: %zu events into %zu", count, max);
  LBF_CHECK(untouched(buf.data() + count * stride + (count == 0 ? sizeof(size_t) : 0),
                      buf.size() - count * stride - (count == 0 ? sizeof(size_t) : 0)));
  Reg &reg = w.regs[r.slot];
  for (size_t i = 0; i < count; ++i) {
    cb_event e;
    std::memset(&e, 0, sizeof e);
    std::memcpy(&e, buf.data() + i * stride, std::min(stride, sizeof e));
    check_event(e, stride);
    LBF_CHECKF(!reg.polled || e.sequence > reg.last_seq,
               "event sequence %" PRIu64 " after %" PRIu64, e.sequence, reg.last_seq);
    reg.polled = true;
    reg.last_seq = e.sequence;
    const int br = breaker_of(w, e.breaker);
    if (reg.exact && r.slot != kDefault)
      LBF_CHECKF(br >= 0 && w.brs[size_t(br)].reg == r.slot,
                 "an event of %#" PRIx64 ", which is not this registry's", e.breaker);
    if (br >= 0 && w.brs[size_t(br)].live && w.brs[size_t(br)].known_config && e.name[0] != '\0')
      LBF_CHECKF(w.brs[size_t(br)].name == e.name, "event name \"%s\", breaker's \"%s\"", e.name,
                 w.brs[size_t(br)].name.c_str());
  }
}

void op_events_dropped(World &w, Reader &in) {
  const RegPick r = pick_reg(w, in);
  uint64_t n;
  poison(&n);
  const int st = status("cb_events_dropped", cb_events_dropped(r.p, &n), {CB_OK, CB_EINVAL});
  expect_reg("cb_events_dropped", st, r);
  if (st != CB_OK) {
    LBF_UNTOUCHED("cb_events_dropped", st, &n, sizeof n);
    return;
  }
  Reg &reg = w.regs[r.slot];
  LBF_CHECKF(n >= reg.dropped, "events dropped went down: %" PRIu64 " < %" PRIu64, n, reg.dropped);
  reg.dropped = n;
}

void check_metrics_text(const char *text, size_t len) {
  LBF_CHECK(std::strlen(text) == len);
  for (const char *line = text; *line != '\0';) {
    LBF_CHECKF(std::strncmp(line, "# ", 2) == 0 || std::strncmp(line, "lazybreaker_", 12) == 0,
               "a Prometheus line starts \"%.40s\"", line);
    const char *nl = std::strchr(line, '\n');
    LBF_CHECKF(nl != nullptr, "the Prometheus text's last line has no newline: \"%.40s\"", line);
    line = nl + 1;
  }
}

void op_metrics(World &w, Reader &in) {
  const RegPick r = pick_reg(w, in);
  const unsigned shape = in.u8() % 6;
  size_t size = 0;
  bool null_buf = false, null_needed = false;
  size_t need0 = 0;
  switch (shape) {
    case 0:
      null_buf = true;
      break;
    case 1:
      size = in.u16();
      break;
    case 2:
      size = 1;
      break;
    case 3:  // the size asked for first, then exactly that and one more
      if (cb_metrics_prometheus(r.p, nullptr, 0, &need0) == CB_OK)
        size = need0 + 1 + in.u8() % 2 * 4096;
      break;
    case 4:
      null_needed = true, size = 64;
      break;
    default:
      null_buf = true, size = 8;
      break;
  }
  std::vector<char> buf(size + 16);
  poison(buf.data(), buf.size());
  size_t needed;
  poison(&needed);
  const int st = status("cb_metrics_prometheus",
                        cb_metrics_prometheus(r.p, null_buf ? nullptr : buf.data(), size,
                                              null_needed ? nullptr : &needed),
                        {CB_OK, CB_EINVAL, CB_ERANGE});
  expect_reg("cb_metrics_prometheus", st, r);
  LBF_CHECKF(untouched(buf.data() + size, 16), "cb_metrics_prometheus wrote past %zu bytes", size);
  if (r.slot >= 0 && (null_needed || (null_buf && size > 0))) LBF_CHECK(st == CB_EINVAL);
  if (st == CB_EINVAL) {
    LBF_UNTOUCHED("cb_metrics_prometheus", st, &needed, sizeof needed);
    return;
  }
  if (st == CB_ERANGE) {
    LBF_CHECKF(size <= needed, "CB_ERANGE with %zu bytes for %zu", size, needed);
    LBF_CHECKF(untouched(buf.data(), size),
               "cb_metrics_prometheus wrote into %zu bytes on CB_ERANGE", size);
    return;
  }
  if (null_buf) return;
  LBF_CHECKF(needed < size, "CB_OK with %zu bytes for %zu", size, needed);
  check_metrics_text(buf.data(), needed);
  LBF_CHECKF(untouched(buf.data() + needed + 1, size - needed - 1),
             "cb_metrics_prometheus wrote past its text's NUL");
}

void op_list(World &w, Reader &in) {
  const RegPick r = pick_reg(w, in);
  const uint8_t mb = in.u8();
  const size_t max = mb % 80;
  const bool null_out = mb >= 0xf0 && max > 0, null_count = mb == 0xff;
  std::vector<cb_handle> buf(max + 2);
  poison(buf.data(), buf.size() * sizeof(cb_handle));
  size_t count;
  poison(&count);
  const int st = status(
      "cb_registry_list",
      cb_registry_list(r.p, null_out ? nullptr : buf.data(), max, null_count ? nullptr : &count),
      {CB_OK, CB_EINVAL});
  expect_reg("cb_registry_list", st, r);
  if (r.slot >= 0) LBF_CHECK((st == CB_OK) == !(null_out || null_count));
  if (st != CB_OK) {
    LBF_UNTOUCHED("cb_registry_list", st, &count, sizeof count);
    LBF_CHECK(untouched(buf.data(), buf.size() * sizeof(cb_handle)));
    return;
  }
  const size_t listed = std::min(count, max);
  LBF_CHECKF(untouched(buf.data() + listed, (buf.size() - listed) * sizeof(cb_handle)),
             "cb_registry_list wrote past %zu handles", listed);
  const Reg &reg = w.regs[r.slot];
  if (reg.exact)
    LBF_CHECKF(count == live_in(w, r.slot), "cb_registry_list counts %zu, the model %zu", count,
               live_in(w, r.slot));
  for (size_t i = 0; i < listed; ++i) {
    const int br = breaker_of(w, buf[i]);
    LBF_CHECK(buf[i] != 0);
    if (reg.exact)
      LBF_CHECKF(br >= 0 && w.brs[size_t(br)].live && w.brs[size_t(br)].reg == r.slot,
                 "cb_registry_list lists %#" PRIx64 ", not a live breaker of it", buf[i]);
    else if (br < 0)
      learn(w, buf[i], r.slot, false);
  }
}

void op_clock_advance(World &w, Reader &in) {
  const RegPick r = pick_reg(w, in);
  const uint64_t ns = pick_u64(in, 1, CB_MAX_DURATION_NS);
  const int st = status("cb_clock_advance", cb_clock_advance(r.p, ns), {CB_OK, CB_EINVAL});
  expect_reg("cb_clock_advance", st, r);
  if (r.slot < 0) return;
  Reg &reg = w.regs[r.slot];
  if (!reg.manual) {
    LBF_CHECKF(st == CB_EINVAL, "cb_clock_advance of a monotonic clock: %d", st);
    return;
  }
  if (reg.exact && !reg.shared) {
    const bool overflow = reg.now + ns < reg.now;
    LBF_CHECKF((st == CB_OK) == !overflow, "cb_clock_advance(%" PRIu64 ") from %" PRIu64 ": %d", ns,
               reg.now, st);
    if (st == CB_OK) reg.now += ns;
  }
}

void op_clock_now(World &w, Reader &in) {
  const RegPick r = pick_reg(w, in);
  const bool null_out = in.u8() % 8 == 7;
  uint64_t now;
  poison(&now);
  const int st =
      status("cb_clock_now", cb_clock_now(r.p, null_out ? nullptr : &now), {CB_OK, CB_EINVAL});
  expect_reg("cb_clock_now", st, r);
  if (r.slot >= 0) LBF_CHECK((st == CB_OK) == !null_out);
  if (st != CB_OK) {
    LBF_UNTOUCHED("cb_clock_now", st, &now, sizeof now);
    return;
  }
  Reg &reg = w.regs[r.slot];
  if (reg.manual && reg.exact && !reg.shared)
    LBF_CHECKF(now == reg.now, "manual clock %" PRIu64 ", advanced to %" PRIu64, now, reg.now);
  LBF_CHECKF(now >= reg.last_now, "the clock went back: %" PRIu64 " < %" PRIu64, now, reg.last_now);
  reg.last_now = now;
}

void op_init_sizes(Reader &in) {
  const size_t cs = in.u16() % (2 * sizeof(cb_config));
  std::vector<unsigned char> buf(cs + 16);
  poison(buf.data(), buf.size());
  int st =
      status("cb_config_init_size",
             cb_config_init_size(cs == 0 ? nullptr : reinterpret_cast<cb_config *>(buf.data()), cs),
             {CB_OK, CB_EINVAL});
  LBF_CHECKF((st == CB_OK) == (cs >= kConfigV1), "cb_config_init_size(%zu): %d", cs, st);
  LBF_CHECKF(untouched(buf.data() + (st == CB_OK ? cs : 0), buf.size() - (st == CB_OK ? cs : 0)),
             "cb_config_init_size(%zu) wrote outside", cs);
  if (st == CB_OK && cs >= sizeof(cb_config)) {
    cb_config c;
    std::memcpy(&c, buf.data(), sizeof c);
    // The defaults lazybreaker.h gives.
    LBF_CHECK(c.struct_size == cs && c.failure_threshold == 5 &&
              c.open_duration_ns == 30000000000ull && c.half_open_max_calls == 1 &&
              c.half_open_success_threshold == 1 && c.half_open_timeout_ns == 0 &&
              c.policy == CB_POLICY_CONSECUTIVE && c.window_size == 100 &&
              c.window_duration_ns == 60000000000ull && c.window_buckets == 10 &&
              c.minimum_calls == 100 && c.failure_rate_threshold == 0.5 && c.slow_call_ns == 0 &&
              c.slow_call_rate_threshold == 1.0 && c.open_backoff_multiplier == 1.0 &&
              c.open_duration_max_ns == 0 && c.open_jitter == 0.0);
  }
  const size_t os = in.u16() % (2 * sizeof(cb_registry_options));
  std::vector<unsigned char> ob(os + 16);
  poison(ob.data(), ob.size());
  st = status("cb_registry_options_init_size",
              cb_registry_options_init_size(
                  os == 0 ? nullptr : reinterpret_cast<cb_registry_options *>(ob.data()), os),
              {CB_OK, CB_EINVAL});
  LBF_CHECKF((st == CB_OK) == (os >= kOptionsV1), "cb_registry_options_init_size(%zu): %d", os, st);
  LBF_CHECK(untouched(ob.data() + (st == CB_OK ? os : 0), ob.size() - (st == CB_OK ? os : 0)));
  if (st == CB_OK && os >= sizeof(cb_registry_options)) {
    cb_registry_options o;
    std::memcpy(&o, ob.data(), sizeof o);
    LBF_CHECK(o.struct_size == os && o.capacity == 0 && o.clock == CB_CLOCK_MONOTONIC &&
              o.path == nullptr && o.event_capacity == 0 && o.flags == 0 && o.mode == 0);
  }
}

void op_strerror(Reader &in) {
  const uint8_t b = in.u8();
  check_strerror(b < 0x80 ? int(b % 20) - 15 : int(int32_t(in.u32())));
  LBF_CHECK(cb_version_number() == CB_VERSION_NUMBER);
  LBF_CHECK(std::strcmp(cb_version_string(), CB_VERSION_STRING) == 0);
}

// Many allow/done pairs on one breaker: enough to fold a counter stripe's
// cells into the totals (every 32,768 counts).
void op_burst(World &w, Reader &in) {
  const HPick k = pick_handle(w, in);
  uint64_t n = uint64_t(1) << (in.u8() % 17);
  const int outcome = in.u8() % 3;
  const uint8_t advance = in.u8();
  n = std::min(n, kMaxBurstCalls - std::min(w.burst_calls, kMaxBurstCalls));
  w.burst_calls += n;
  const Live l = liveness(w, k);
  Br *b = k.br >= 0 ? &w.brs[size_t(k.br)] : nullptr;
  const Reg *reg = b != nullptr ? reg_of(w, *b) : nullptr;
  const bool tick =
      advance != 0 && reg != nullptr && reg->open && reg->manual && reg->exact && !reg->shared;
  for (uint64_t i = 0; i < n; ++i) {
    cb_ticket t = 0;
    const int st = cb_allow(k.h, &t);
    if (st == CB_EHANDLE) {
      status("cb_allow", st, {CB_EHANDLE});
      expect_handle(w, "cb_allow", st, k);
      return;
    }
    if (l == Live::No) status("cb_allow", st, {CB_EHANDLE});
    if (st == CB_REJECTED) {
      if (b != nullptr) ++b->rejected;
      continue;
    }
    if (st != CB_OK) status("cb_allow", st, {CB_OK, CB_REJECTED});
    if (b != nullptr) ++b->admitted;
    if (tick && cb_clock_advance(reg->p, advance) == CB_OK) w.regs[b->reg].now += advance;
    const int d = cb_done(k.h, t, outcome);
    if (d != CB_OK) status("cb_done", d, {CB_OK});
    if (b != nullptr) ++b->outcomes[outcome];
  }
}

void teardown(World &w) {
  for (int i = 0; i < kSlots; ++i)
    if (w.regs[i].open) close_reg(w, i);
  for (Br &b : w.brs)
    if (b.live && b.reg == kDefault) status("cb_destroy", cb_destroy(b.h), {CB_OK});
  // The default registry lives on: its event selection and queue go back
  // to how the next input finds them.
  status("cb_events_select", cb_events_select(nullptr, CB_EVENTS_TRANSITIONS), {CB_OK});
  cb_event e[16];
  e[0].struct_size = sizeof e[0];
  size_t n = 0;
  do {
    status("cb_events_poll", cb_events_poll(nullptr, e, 16, &n), {CB_OK});
    for (size_t i = 0; i < n; ++i) w.regs[kDefault].last_seq = e[i].sequence;
    if (n > 0) w.regs[kDefault].polled = true;
  } while (n == 16);
  Reg d = w.regs[kDefault];
  for (Reg &r : w.regs) r = Reg{};
  w.regs[kDefault] = d;
  w.brs.clear();
  w.tickets.clear();
  w.closed.clear();
  w.burst_calls = 0;
  for (int p = 0; p <= kPathB; ++p) unlink(w.paths[p].c_str()), w.path_exists[p] = false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (g_world == nullptr) setup();
  World &w = *g_world;
  Reader in(data, size);
  for (int ops = 0; !in.done() && ops < 512; ++ops) {
    const Op op = Op(in.u8() % kOps);
    if (tracing()) fprintf(stderr, "op %d: %d\n", ops, int(op));
    switch (op) {
      case kOpenPrivate:
        op_open(w, in, false);
        break;
      case kOpenShared:
        op_open(w, in, true);
        break;
      case kClose:
        op_close(w, in);
        break;
      case kCreate:
        op_create(w, in, false);
        break;
      case kGetOrCreate:
        op_create(w, in, true);
        break;
      case kLookup:
        op_lookup(w, in);
        break;
      case kDestroy:
        op_destroy(w, in);
        break;
      case kAllow:
        op_allow(w, in);
        break;
      case kDone:
        op_done(w, in);
        break;
      case kState:
        state_of(w, pick_handle(w, in));
        break;
      case kRetryAfter: {
        const HPick k = pick_handle(w, in);
        check_retry(w, k, liveness(w, k) == Live::Yes ? state_of(w, k) : -1, nullptr);
        break;
      }
      case kStats:
        op_stats(w, in);
        break;
      case kForceOpen:
      case kDisable:
      case kReset:
        op_manual(w, in, op);
        break;
      case kTrip:
        op_trip(w, in);
        break;
      case kName:
        op_name(w, in);
        break;
      case kEventsSelect:
        op_events_select(w, in);
        break;
      case kEventsPoll:
        op_events_poll(w, in);
        break;
      case kEventsDropped:
        op_events_dropped(w, in);
        break;
      case kMetrics:
        op_metrics(w, in);
        break;
      case kList:
        op_list(w, in);
        break;
      case kClockAdvance:
        op_clock_advance(w, in);
        break;
      case kClockNow:
        op_clock_now(w, in);
        break;
      case kInitSizes:
        op_init_sizes(in);
        break;
      case kStrerror:
        op_strerror(in);
        break;
      case kBurst:
        op_burst(w, in);
        break;
      default:
        break;
    }
  }
  teardown(w);
  return 0;
}
