// Writes the fuzz targets' seed corpora and the registry file template into
// the source tree: `cmake --build build-fuzz --target fuzz-seeds` (then
// review the diff and commit it). Only the seed-* files are rewritten;
// regression inputs (regress-*) stay as they are.
//
//   tests/fuzz/template/registry.lbr   a used registry file of capacity 16
//                                      (the smallest run: 1,024 slots),
//                                      copied while its registry was open
//   tests/fuzz/corpus/fuzz_api/seed-*  programs of public-ABI calls
//   tests/fuzz/corpus/fuzz_registry_file/seed-*   changes to the template
//   tests/fuzz/corpus/fuzz_close/seed-*   closes under calls (fuzz_close.cpp)
#include <sys/stat.h>
#include <unistd.h>

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "api_program.hpp"
#include "file_program.hpp"
#include "input.hpp"
#include "lazybreaker/lazybreaker.h"
#include "registry/shared_file.hpp"

namespace {

using lbfuzz::Writer;
namespace F = lbfuzz::file;
namespace reg = lazybreaker::registry;

std::string g_root;

void must(int st, const char *what) {
  if (st < 0) {
    fprintf(stderr, "make_seeds: %s: %s (%s)\n", what, cb_strerror(st), cb_last_error_message());
    exit(1);
  }
}

void write_bytes(const std::string &path, const void *data, size_t n) {
  FILE *f = fopen(path.c_str(), "wb");
  if (f == nullptr || fwrite(data, 1, n, f) != n || fclose(f) != 0) {
    perror(path.c_str());
    exit(1);
  }
}

void seed(const char *target, const std::string &name, const Writer &w) {
  write_bytes(g_root + "/corpus/" + target + "/seed-" + name, w.out.data(), w.out.size());
}

// ---- the template ----------------------------------------------------------

cb_handle make(cb_registry *r, const char *name, const cb_config &c) {
  cb_handle h;
  must(cb_create(r, name, &c, &h), name);
  return h;
}

void calls(cb_handle h, int n, int outcome, cb_registry *r = nullptr, uint64_t each_ns = 0) {
  for (int i = 0; i < n; ++i) {
    cb_ticket t;
    if (cb_allow(h, &t) != CB_OK) continue;
    if (r != nullptr && each_ns != 0) must(cb_clock_advance(r, each_ns), "advance");
    must(cb_done(h, t, outcome), "cb_done");
  }
}

void make_template(const std::string &out) {
  char dir[] = "/tmp/lb-seeds-XXXXXX";
  if (mkdtemp(dir) == nullptr) {
    perror("mkdtemp");
    exit(1);
  }
  const std::string path = std::string(dir) + "/registry.lbr";
  cb_registry_options o;
  cb_registry_options_init(&o);
  o.path = path.c_str();
  o.capacity = 16;
  o.clock = CB_CLOCK_MANUAL;
  o.flags = CB_REGISTRY_CREATE | CB_REGISTRY_EXCLUSIVE;
  cb_registry *r;
  must(cb_registry_open(&o, &r), "cb_registry_open");
  must(cb_events_select(r, CB_EVENTS_TRANSITIONS | CB_EVENTS_REJECTIONS), "select");
  cb_config c;
  cb_config_init(&c);
  c.failure_threshold = 3;
  c.open_duration_ns = 1000000;
  const cb_handle run = make(r, "consecutive", c);
  calls(run, 5, CB_SUCCESS);
  calls(run, 2, CB_FAILURE);
  calls(run, 1, CB_IGNORED);
  const cb_handle open = make(r, "open", c);
  calls(open, 3, CB_FAILURE);
  calls(open, 2, CB_SUCCESS);  // rejected
  cb_config probe = c;
  probe.failure_threshold = 1;
  probe.open_duration_ns = 1000;
  probe.half_open_max_calls = 2;
  probe.half_open_success_threshold = 2;
  const cb_handle half = make(r, "half-open", probe);
  calls(half, 1, CB_FAILURE);
  must(cb_clock_advance(r, 2000), "advance");
  cb_ticket kept;
  must(cb_allow(half, &kept), "probe");  // a probe left in flight
  must(cb_force_open(make(r, "forced", c)), "force");
  const cb_handle disabled = make(r, "disabled", c);
  must(cb_disable(disabled), "disable");
  calls(disabled, 4, CB_FAILURE);
  cb_config count = c;
  count.policy = CB_POLICY_COUNT_WINDOW;
  count.window_size = 10;
  count.minimum_calls = 5;
  count.failure_rate_threshold = 0.6;
  const cb_handle cw = make(r, "count-window", count);
  calls(cw, 4, CB_SUCCESS);
  calls(cw, 3, CB_FAILURE);
  cb_config time = c;
  time.policy = CB_POLICY_TIME_WINDOW;
  time.window_duration_ns = 4000000;
  time.window_buckets = 4;
  time.minimum_calls = 4;
  time.slow_call_ns = 10;
  time.slow_call_rate_threshold = 0.9;
  const cb_handle tw = make(r, "time-window", time);
  calls(tw, 3, CB_SUCCESS, r, 20);
  calls(tw, 2, CB_FAILURE, r, 5);
  cb_config backoff = c;
  backoff.failure_threshold = 1;
  backoff.open_duration_ns = 1000;
  backoff.open_backoff_multiplier = 2.0;
  backoff.open_jitter = 0.25;
  backoff.open_duration_max_ns = 100000;
  backoff.slow_call_ns = 50;
  const cb_handle bo = make(r, "backoff", backoff);
  for (int i = 0; i < 3; ++i) {
    calls(bo, 1, CB_FAILURE);
    must(cb_clock_advance(r, 200000), "advance");
  }
  must(cb_trip(make(r, "tripped", c), 5000), "trip");
  cb_handle anon;
  must(cb_create(r, nullptr, &count, &anon), "anonymous");
  calls(anon, 6, CB_FAILURE);
  must(cb_create(r, nullptr, nullptr, &anon), "anonymous");
  // More than a counter stripe's cells hold: folded into the totals.
  const cb_handle folded = make(r, "folded", c);
  calls(folded, 40000, CB_SUCCESS);
  calls(folded, 1, CB_FAILURE);
  // A freed slot, name and window block.
  must(cb_destroy(make(r, "destroyed", count)), "destroy");
  must(cb_destroy(make(r, "destroyed-too", c)), "destroy");
  must(cb_clock_advance(r, 1000), "advance");
  // Copied as a process that dies now would leave it: open, stripes owned.
  std::vector<unsigned char> bytes;
  FILE *f = fopen(path.c_str(), "rb");
  unsigned char buf[65536];
  size_t n;
  while (f != nullptr && (n = fread(buf, 1, sizeof buf, f)) > 0)
    bytes.insert(bytes.end(), buf, buf + n);
  if (f != nullptr) fclose(f);
  must(cb_registry_close(r), "close");
  unlink(path.c_str());
  rmdir(dir);
  write_bytes(out, bytes.data(), bytes.size());
  printf("make_seeds: %s: %zu bytes\n", out.c_str(), bytes.size());
}

// ---- fuzz_api programs -----------------------------------------------------

using namespace lbfuzz;

// Registry bytes: slot 0..3, 4 NULL (default).
Writer &open_private(Writer &w, int slot, bool manual, int capacity_sel = 3) {
  return w.u8(kOpenPrivate).u8(slot).u8(0).u8(capacity_sel).u8(manual ? 1 : 0).u8(0).u8(0).u8(0);
}

Writer &open_shared(Writer &w, int slot, int path, bool manual, unsigned flags = 1) {
  return w.u8(kOpenShared).u8(slot).u8(path).u8(0).u8(3).u8(manual ? 1 : 0).u8(0).u8(flags).u8(1);
}

// name: 0 NULL, 1..8 fixed; config: a NULL one.
Writer &create(Writer &w, int reg, int name) { return w.u8(kCreate).u8(reg).u8(name).u8(0); }

// A config with the fields in `mask` set from selectors (pick_u64: 2 lo,
// 3 hi, 4 lo - 1, 5 hi + 1, 6 middle).
Writer &create_cfg(Writer &w, int reg, int name, uint16_t mask, const std::vector<uint8_t> &sels,
                   uint8_t shape = 1) {
  w.u8(kCreate).u8(reg).u8(name).u8(shape).u16(mask);
  for (uint8_t s : sels) w.u8(s);
  return w;
}

Writer &allow(Writer &w, int h) { return w.u8(kAllow).u8(h).u8(0); }
// The last kept ticket (modulo) with its own handle.
Writer &done(Writer &w, int ticket, int outcome) {
  return w.u8(kDone).u8(ticket).u8(0).u8(outcome);
}
Writer &h1(Writer &w, Op op, int h) { return w.u8(op).u8(h); }
Writer &stats(Writer &w, int h, int shape = 0) { return w.u8(kStats).u8(h).u8(shape); }
Writer &advance(Writer &w, int reg, uint64_t ns) {
  return w.u8(kClockAdvance).u8(reg).u8(9).u64(ns);
}
Writer &everything(Writer &w, int reg) {
  w.u8(kEventsPoll).u8(reg).u8(19).u8(0);
  w.u8(kEventsDropped).u8(reg);
  w.u8(kMetrics).u8(reg).u8(3).u8(0);
  w.u8(kList).u8(reg).u8(40);
  return w.u8(kClockNow).u8(reg).u8(0);
}

void api_seeds() {
  const char *T = "fuzz_api";
  {
    Writer w;
    open_private(w, 0, true);
    create(w, 0, 1);
    allow(w, 0);
    done(w, 0, CB_SUCCESS);
    stats(w, 0);
    h1(w, kState, 0);
    w.u8(kName).u8(0).u16(64);
    everything(w, 0);
    w.u8(kClose).u8(0);
    seed(T, "private-basic", w);
  }
  {
    Writer w;  // CLOSED -> OPEN -> HALF_OPEN -> CLOSED on a manual clock
    open_private(w, 1, true);
    create_cfg(w, 1, 2, 1 << 0 | 1 << 1, {2, 2});  // threshold 1, open 1 us
    allow(w, 0);
    done(w, 0, CB_FAILURE);
    h1(w, kRetryAfter, 0);
    allow(w, 0);
    advance(w, 1, 5000);
    allow(w, 0);
    done(w, 1, CB_SUCCESS);
    stats(w, 0);
    everything(w, 1);
    seed(T, "private-cycle", w);
  }
  {
    Writer w;  // count window: failure rate
    open_private(w, 0, true);
    create_cfg(w, 0, 3, 1 << 5 | 1 << 6 | 1 << 9, {0, 1, 7, 10, 7, 4});
    for (int i = 0; i < 8; ++i) allow(w, 0), done(w, uint8_t(i), i % 2 ? CB_FAILURE : CB_SUCCESS);
    stats(w, 0);
    h1(w, kState, 0);
    everything(w, 0);
    seed(T, "count-window", w);
  }
  {
    Writer w;  // time window with slow calls, many calls
    open_private(w, 2, true);
    create_cfg(w, 2, 4, 1 << 5 | 1 << 7 | 1 << 8 | 1 << 11, {0, 2, 2, 6, 7, 8, 7, 5});
    w.u8(kBurst).u8(0).u8(10).u8(CB_FAILURE).u8(3);
    stats(w, 0);
    advance(w, 2, 10000000);
    w.u8(kBurst).u8(0).u8(8).u8(CB_SUCCESS).u8(0);
    stats(w, 0);
    everything(w, 2);
    seed(T, "time-window-slow", w);
  }
  {
    Writer w;  // a counter folded into the totals
    open_private(w, 0, true);
    create(w, 0, 5);
    w.u8(kBurst).u8(0).u8(16).u8(CB_SUCCESS).u8(0);
    stats(w, 0);
    everything(w, 0);
    seed(T, "fold", w);
  }
  {
    Writer w;  // a shared file, made here
    open_shared(w, 0, 0, true);
    create(w, 0, 1);
    create(w, 0, 0);
    allow(w, 0);
    done(w, 0, CB_FAILURE);
    w.u8(kBurst).u8(1).u8(16).u8(CB_IGNORED).u8(0);
    stats(w, 0);
    stats(w, 1);
    everything(w, 0);
    w.u8(kClose).u8(0);
    open_shared(w, 1, 0, true, 0);  // reopened: breakers the model did not make
    everything(w, 1);
    w.u8(kLookup).u8(1).u8(1);
    stats(w, 2);
    seed(T, "shared-file", w);
  }
  {
    Writer w;  // one file, two registries at once
    open_shared(w, 0, 1, false);
    open_shared(w, 1, 1, false, 0);
    create(w, 0, 2);
    w.u8(kLookup).u8(1).u8(2);
    h1(w, kDestroy, 1);
    h1(w, kState, 0);
    allow(w, 0);
    everything(w, 0);
    everything(w, 1);
    seed(T, "shared-twice", w);
  }
  {
    Writer w;  // files that are not registries
    for (int p = 2; p < 6; ++p) open_shared(w, p % 4, p, false);
    open_shared(w, 0, 0, false, 0);  // missing, no CB_REGISTRY_CREATE
    open_shared(w, 0, 0, false, 2);  // exclusive alone
    open_shared(w, 0, 0, false, 3);
    open_shared(w, 1, 0, false, 3);  // exclusive, exists
    open_shared(w, 1, 0, true, 1);   // another clock
    seed(T, "shared-bad-paths", w);
  }
  {
    Writer w;  // made-up handles, on every handle function
    open_private(w, 0, true);
    create(w, 0, 1);
    for (Op op : {kDestroy, kState, kRetryAfter, kForceOpen, kDisable, kReset}) {
      w.u8(op).u8(0xf0).u64(0x123456789abcdefull);
      w.u8(op).u8(0xe0);
      w.u8(op).u8(0xf8).u8(0).u8(3);
    }
    w.u8(kAllow).u8(0xf0).u64(1).u8(0);
    w.u8(kStats).u8(0xf8).u8(0).u8(40).u8(0);
    w.u8(kTrip).u8(0xf0).u64(42).u8(2);
    w.u8(kName).u8(0xf8).u8(0).u8(1).u16(10);
    w.u8(kDone).u8(0xf1).u64(77).u8(1).u8(0).u8(0);
    w.u8(kDone).u8(0xf0).u8(1).u8(0).u8(0);
    seed(T, "made-up-handles", w);
  }
  {
    Writer w;  // made-up and closed registry pointers
    open_private(w, 0, false);
    w.u8(kClose).u8(0);
    for (Op op : {kEventsDropped, kClose}) w.u8(op).u8(6).u64(0xcb0 | 7ull << 12), w.u8(op).u8(7);
    w.u8(kCreate).u8(0).u8(1).u8(0);
    w.u8(kLookup).u8(6).u64(0xdeadbeef).u8(1);
    w.u8(kMetrics).u8(7).u8(0);
    w.u8(kList).u8(0).u8(4);
    w.u8(kClockAdvance).u8(7).u8(1);
    w.u8(kEventsSelect).u8(6).u64(0xcb0).u8(1);
    w.u8(kClose).u8(5);  // the default registry
    w.u8(kClose).u8(4);  // NULL
    seed(T, "registry-pointers", w);
  }
  {
    Writer w;  // each config field out of range, and odd struct sizes
    open_private(w, 0, true);
    for (int f = 0; f < 16; ++f) {
      std::vector<uint8_t> sel = {5};
      if (f == 5) sel = {3, 0xff, 0xff, 0xff, 0x7f};
      if (f >= 10 && f != 11 && f != 14) sel = {5};  // NaN for the doubles
      create_cfg(w, 0, 0, uint16_t(1u << f), sel);
      create_cfg(w, 0, 0, uint16_t(1u << f), {4});
    }
    for (int shape : {1 | 1 << 3, 1 | 2 << 3, 1 | 3 << 3, 1 | 4 << 3, 1 | 5 << 3})
      create_cfg(w, 0, 0, 0, {}, uint8_t(shape));
    seed(T, "bad-configs", w);
  }
  {
    Writer w;  // names: invalid UTF-8, the longest, one too long, taken
    open_private(w, 0, true);
    const std::string bad[] = {"\xff",
                               "\xc0\xaf",
                               "\xed\xa0\x80",
                               "\xf4\x90\x80\x80",
                               "a\xe2\x82",
                               std::string(255, 'n'),
                               std::string(256, 'n'),
                               "payments"};
    for (const std::string &s : bad) {
      if (s.size() + 8 < 0xff)
        w.u8(kCreate).u8(0).u8(uint8_t(s.size() + 8)).bytes(s).u8(0);
      else
        w.u8(kCreate).u8(0).u8(0xff).u8(uint8_t(s.size() - 0xf7)).bytes(s).u8(0);
    }
    create(w, 0, 1);
    create(w, 0, 1);
    w.u8(kGetOrCreate).u8(0).u8(1).u8(0);
    w.u8(kGetOrCreate).u8(0).u8(0).u8(0);
    w.u8(kLookup).u8(0).u8(2);
    w.u8(kName).u8(0).u16(3);
    w.u8(kName).u8(0).u16(9);
    w.u8(kName).u8(0).u16(0);
    seed(T, "names", w);
  }
  {
    Writer w;
    for (int s : {0, 8, 47, 48, 56, 104, 128, 200}) w.u8(kInitSizes).u16(s).u16(s / 2);
    for (int s = -16; s < 4; ++s) w.u8(kStrerror).u8(uint8_t(s + 15));
    w.u8(kStrerror).u8(0x80).u32(0x7fffffff);
    seed(T, "init-and-strerror", w);
  }
  {
    Writer w;                     // a full registry, then a slot freed
    open_private(w, 0, true, 2);  // capacity 2
    create(w, 0, 1);
    create(w, 0, 2);
    create(w, 0, 3);
    h1(w, kDestroy, 0);
    create(w, 0, 3);
    w.u8(kList).u8(0).u8(1);
    w.u8(kList).u8(0).u8(0);
    seed(T, "full", w);
  }
  {
    Writer w;  // manual states and trips, stale tickets and reports twice
    open_private(w, 0, true);
    create(w, 0, 1);
    allow(w, 0);
    allow(w, 0);
    h1(w, kForceOpen, 0);
    allow(w, 0);
    done(w, 0, CB_FAILURE);
    h1(w, kDisable, 0);
    allow(w, 0);
    h1(w, kReset, 0);
    w.u8(kTrip).u8(0).u8(9).u64(2000000);
    w.u8(kTrip).u8(0).u8(4);
    done(w, 1, CB_SUCCESS);
    done(w, 1, CB_SUCCESS);
    w.u8(kDone).u8(2).u8(0).u8(0xf0);
    stats(w, 0, 1);
    stats(w, 0, 3);
    stats(w, 0, 5);
    stats(w, 0, 2);
    stats(w, 0, 4);
    everything(w, 0);
    seed(T, "manual-states", w);
  }
  {
    Writer w;  // rejections as events, polled at every stride
    open_private(w, 3, true);
    w.u8(kEventsSelect).u8(3).u8(3);
    create_cfg(w, 3, 6, 1, {2});
    allow(w, 0);
    done(w, 0, CB_FAILURE);
    for (int i = 0; i < 5; ++i) allow(w, 0);
    for (uint8_t shape = 0; shape < 6; ++shape) w.u8(kEventsPoll).u8(3).u8(3).u8(shape);
    w.u8(kEventsSelect).u8(3).u8(0xf4);
    w.u8(kEventsDropped).u8(3);
    seed(T, "events", w);
  }
  {
    Writer w;  // the Prometheus text at every size
    open_private(w, 0, false);
    create(w, 0, 1);
    create(w, 0, 0);
    create_cfg(w, 0, 7, 1 << 5, {1});
    for (uint8_t shape = 0; shape < 6; ++shape) w.u8(kMetrics).u8(0).u8(shape).u16(100).u8(1);
    w.u8(kMetrics).u8(4).u8(3).u8(0);
    seed(T, "metrics", w);
  }
  {
    Writer w;  // a registry closed under its handles and tickets
    open_private(w, 0, true);
    create(w, 0, 1);
    allow(w, 0);
    w.u8(kClose).u8(0);
    done(w, 0, CB_SUCCESS);
    h1(w, kState, 0);
    stats(w, 0);
    w.u8(kClose).u8(0);
    open_private(w, 0, true);
    create(w, 0, 1);
    h1(w, kState, 0);
    h1(w, kState, 1);
    seed(T, "closed-under-handles", w);
  }
  {
    Writer w;  // the default registry and its clock
    create(w, 4, 8);
    allow(w, 0);
    done(w, 0, CB_IGNORED);
    w.u8(kBurst).u8(0).u8(12).u8(CB_SUCCESS).u8(0);
    stats(w, 0);
    advance(w, 4, 1);
    everything(w, 4);
    everything(w, 5);
    seed(T, "default-registry", w);
  }
  {
    Writer w;  // manual clock to its end
    open_private(w, 0, true);
    create(w, 0, 1);
    advance(w, 0, UINT64_MAX - 10);
    advance(w, 0, 100);
    h1(w, kRetryAfter, 0);
    w.u8(kTrip).u8(0).u8(3);
    h1(w, kRetryAfter, 0);
    stats(w, 0);
    seed(T, "clock-end", w);
  }
  {
    Writer w;                                                      // registry options out of range
    w.u8(kOpenPrivate).u8(0).u8(2).u8(0).u8(0).u8(0).u8(0).u8(0);  // struct too small
    w.u8(kOpenPrivate).u8(0).u8(0).u8(6).u8(0).u8(0).u8(0).u8(0);  // capacity
    w.u8(kOpenPrivate).u8(0).u8(0).u8(0).u8(2).u8(0).u8(0).u8(0);  // clock
    w.u8(kOpenPrivate).u8(0).u8(0).u8(0).u8(0).u8(4).u8(0).u8(0);  // event capacity
    w.u8(kOpenPrivate).u8(0).u8(4).u8(0).u8(0).u8(0).u8(0).u8(0);  // non-zero tail
    w.u8(kOpenPrivate).u8(0).u8(3).u8(1).u8(1).u8(1).u8(0).u8(0);  // zero tail
    w.u8(kOpenShared).u8(1).u8(0).u8(0).u8(1).u8(0).u8(0).u8(9).u8(0);             // unknown flag
    w.u8(kOpenShared).u8(1).u8(0).u8(0).u8(1).u8(0).u8(0).u8(1).u8(3).u16(01777);  // mode
    seed(T, "bad-options", w);
  }
  {
    Writer w;  // two private registries and two files together
    open_private(w, 0, true);
    open_private(w, 1, false);
    open_shared(w, 2, 0, true);
    open_shared(w, 3, 1, false);
    for (int r = 0; r < 4; ++r) create(w, r, 1), create(w, r, 0);
    for (int h = 0; h < 8; ++h) allow(w, h), done(w, uint8_t(h), h % 3), stats(w, h);
    for (int r = 0; r < 4; ++r) everything(w, r);
    seed(T, "four-registries", w);
  }
  {
    Writer w;  // get_or_create against create, with configs
    open_private(w, 0, true);
    create_cfg(w, 0, 1, 1, {2});
    w.u8(kGetOrCreate).u8(0).u8(1).u8(1).u16(1).u8(2);
    w.u8(kGetOrCreate).u8(0).u8(1).u8(1).u16(1).u8(3);
    w.u8(kGetOrCreate).u8(0).u8(2).u8(0);
    w.u8(kGetOrCreate).u8(0).u8(2).u8(0);
    w.u8(kLookup).u8(0).u8(2);
    everything(w, 0);
    seed(T, "get-or-create", w);
  }
}

// ---- fuzz_registry_file changes --------------------------------------------

// A patch at a byte offset within a region.
Writer &at(Writer &w, F::Region r, F::Kind k, size_t offset) {
  return w.u8(uint8_t(r + 8 * k)).u16(offset & 0xffff).u8(offset >> 16);
}

void file_seeds() {
  const char *T = "fuzz_registry_file";
  using H = reg::FileHeader;
  seed(T, "as-is", Writer().u8(0));
  seed(T, "this-boot", Writer().u8(F::kThisBoot));
  seed(T, "twice", Writer().u8(F::kThisBoot | F::kTwice));
  seed(T, "wrong-clock", Writer().u8(F::kThisBoot | F::kWrongClock));
  seed(T, "capacity-given", Writer().u8(F::kGiveCapacity));
  {
    Writer w;  // the start of the header written over the file: the same file
    w.u8(F::kRaw).bytes(std::string(H::kMagic, 8));
    seed(T, "raw-magic", w);
  }
  seed(T, "raw-garbage", Writer().u8(F::kRaw).bytes("LZYBRKR\nnot quite a header"));
  {
    Writer w;  // a checksummed field changed, checksum kept: refused
    at(w, F::kHeader, F::kWord32, offsetof(H, capacity)).u8(F::kRawValue).u64(17);
    seed(T, "capacity-changed", w);
  }
  {
    Writer w;  // ... and the checksum made right
    w.u8(F::kFixChecksum | F::kThisBoot);
    at(w, F::kHeader, F::kWord32, offsetof(H, capacity)).u8(F::kRawValue).u64(1024);
    seed(T, "capacity-changed-checksummed", w);
  }
  {
    Writer w;
    w.u8(F::kFixChecksum);
    at(w, F::kHeader, F::kWord64, offsetof(H, file_bytes)).u8(F::kAllOnes);
    at(w, F::kHeader, F::kWord32, offsetof(H, slots)).u8(F::kZero);
    seed(T, "sizes-checksummed", w);
  }
  {
    Writer w;  // the manual clock near its end
    w.u8(F::kThisBoot);
    at(w, F::kHeaderLive, F::kWord64, 0).u8(F::kHighBit);
    seed(T, "manual-clock-high", w);
  }
  {
    Writer w;  // a stripe owned by another live process
    w.u8(F::kThisBoot);
    at(w, F::kHeader, F::kWord64, offsetof(H, stripe_owner)).u8(F::kPid1);
    seed(T, "owner-alive", w);
  }
  {
    Writer w;  // a fold log pointing at a slot, from a dead owner
    at(w, F::kHeader, F::kWord64, offsetof(H, fold_log) + 8)
        .u8(F::kRawValue)
        .u64(5ull << 32 | 1 << 8);
    at(w, F::kHeader, F::kWord64, offsetof(H, sequence) + sizeof(H::sequence[0])).u8(F::kOdd);
    seed(T, "fold-log-dead-owner", w);
  }
  {
    Writer w;
    w.u8(F::kThisBoot);
    at(w, F::kHeader, F::kWord64, offsetof(H, stripes_reclaimed)).u8(F::kAllOnes);
    at(w, F::kHeader, F::kWord64, offsetof(H, uncertain_folds)).u8(F::kAllOnes);
    seed(T, "header-counters", w);
  }
  {
    Writer w;  // hot lines, totals, cells and held words
    w.u8(F::kThisBoot);
    for (F::Region r : {F::kHot, F::kTotals, F::kCells, F::kHeld})
      for (size_t off : {0, 8, 64, 72, 128})
        at(w, r, F::kWord64, off).u8(F::kAllOnes), at(w, r, F::kAdd64, off + 16).u8(0x81);
    seed(T, "slot-words", w);
  }
  {
    Writer w;  // the start of the arena: the registry's state words
    w.u8(F::kThisBoot);
    for (size_t off = 0; off < 512; off += 8) at(w, F::kArena, F::kWord64, off).u8(F::kSlots);
    seed(T, "arena-state-slots", w);
  }
  {
    Writer w;
    w.u8(F::kThisBoot);
    for (size_t off = 0; off < 4096; off += 64) at(w, F::kArena, F::kXorByte, off).u8(0x80);
    seed(T, "arena-high-bits", w);
  }
  {
    Writer w;
    w.u8(F::kThisBoot);
    at(w, F::kArena, F::kZeros, 0).u16(0xffff);
    seed(T, "arena-zeros", w);
  }
  {
    Writer w;
    w.u8(0);
    for (size_t off = 4096; off < 65536; off += 4096)
      at(w, F::kArena, F::kBytes, off).u8(8).bytes("\xff\xff\xff\xff\x00\x00\x00\x01");
    seed(T, "arena-pages", w);
  }
  {
    Writer w;
    w.u8(F::kThisBoot);
    at(w, F::kHot, F::kZeros, 0).u16(0xffff);
    at(w, F::kTotals, F::kZeros, 0).u16(0xffff);
    seed(T, "hot-totals-zeros", w);
  }
  {
    Writer w;
    w.u8(F::kThisBoot | F::kTwice);
    for (size_t off = 0; off < 2048; off += 8) at(w, F::kHot, F::kWord32, off).u8(F::kCapacity);
    seed(T, "hot-capacity", w);
  }
}

// fuzz_close: each kind of registry and each policy, closed 0, 100 and
// 600 microseconds after four threads start on sixteen breakers (its
// input's layout is in fuzz_close.cpp).
void close_seeds() {
  struct Kind {
    const char *name;
    uint8_t flags;
  };
  const Kind kinds[] = {{"private", 0},          {"shm", 1},
                        {"tmp", 1 | 2},          {"shm-published", 1 | 4},
                        {"shm-sibling", 1 | 16}, {"private-events", 4 | 8}};
  for (const Kind &k : kinds)
    for (uint8_t policy = 0; policy < 3; ++policy)
      for (int delay : {0, 100, 600}) {
        Writer w;
        w.u8(k.flags).u8(policy).u8(3).u8(15).u8(1).u16(delay);
        // Mostly calls and reports, now and then anything else.
        for (uint8_t i = 0; i < 64; ++i) w.u8(i % 8 == 7 ? 6 + i / 8 % 6 : i % 6);
        seed("fuzz_close",
             std::string(k.name) + "-p" + std::to_string(policy) + "-d" + std::to_string(delay), w);
      }
}

void mkdirs(const std::string &p) { mkdir(p.c_str(), 0755); }

}  // namespace

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: make_seeds <tests/fuzz>\n");
    return 2;
  }
  g_root = argv[1];
  mkdirs(g_root + "/template");
  mkdirs(g_root + "/corpus");
  mkdirs(g_root + "/corpus/fuzz_api");
  mkdirs(g_root + "/corpus/fuzz_registry_file");
  mkdirs(g_root + "/corpus/fuzz_close");
  make_template(g_root + "/template/registry.lbr");
  api_seeds();
  file_seeds();
  close_seeds();
  return 0;
}
