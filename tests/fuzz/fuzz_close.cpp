// A registry closed at a moment the input picks, under calls the input
// picks, from threads: private or shared (a file in /dev/shm or /tmp, made
// anew), any policy, through the library or the published quiet path
// (lazybreaker/fastpath.h, as the Java, C# and Go bindings count), with
// stats, trips, forced states, destroys and creates beside the calls. Every
// call returns a status its function may return while the close runs, and
// CB_EHANDLE once the close has returned; a signal, a sanitizer report or a
// hang is a finding. Which instruction each thread is at when the close
// comes is the scheduler's: an input that finds a race finds it often, not
// always (tests/fuzz/README.md).
//
// Input (tests/fuzz/input.hpp; past its end every read is 0):
//   u8 flags: 1 shared, 2 /tmp (else /dev/shm), 4 odd threads take the
//     published quiet path, 8 rejection events on, 16 a second registry on
//     the same file stays open across the close
//   u8 policy, u8 threads (1..6), u8 breakers (1..32), u8 capacity choice,
//   u16 the close's delay in microseconds (0..1023) after the threads start,
//   then each thread's calls: a byte per call, cycled
#include <lazybreaker/lazybreaker.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "../capi/close_race_config.hpp"
#include "../capi/published_quiet_path.h"
#include "input.hpp"

namespace {

using Clock = std::chrono::steady_clock;

struct Plan {
  bool shared, in_tmp, published, rejection_events, sibling;
  int policy, threads, breakers;
  uint32_t capacity;
  std::chrono::microseconds delay;
  std::string calls;
};

Plan read_plan(lbfuzz::Reader &in) {
  Plan p;
  const uint8_t flags = in.u8();
  p.shared = flags & 1;
  p.in_tmp = flags & 2;
  p.published = flags & 4;
  p.rejection_events = flags & 8;
  p.sibling = p.shared && (flags & 16);
  p.policy = in.u8() % 3;
  p.threads = 1 + in.u8() % 6;
  p.breakers = 1 + in.u8() % 32;
  static constexpr uint32_t kCapacities[] = {0, 64, 1024, 4096};
  p.capacity = kCapacities[in.u8() % 4];
  if (p.capacity < uint32_t(p.breakers)) p.capacity = uint32_t(p.breakers);
  p.delay = std::chrono::microseconds(in.u16() % 1024);
  p.calls = in.bytes(256);
  if (p.calls.empty()) p.calls = std::string(1, '\0');
  return p;
}

[[noreturn]] void finding(const char *what, int op, int st) {
  std::fprintf(stderr, "fuzz_close: %s (operation %d gave %d: %s)\n", what, op, st,
               cb_last_error_message());
  std::abort();
}

struct Thread {
  const Plan *plan;
  std::vector<cb_handle> *handles;
  cb_registry *reg;
  bool published;
  std::atomic<uint64_t> after{0};  // calls begun once the close had returned
};

// One call the byte `b` picks, on breaker `h`; its status.
int one_call(Thread &t, const lb_quiet *q, uint8_t b, cb_handle h, std::vector<cb_ticket> &held,
             std::vector<cb_handle> &held_on) {
  int native = 0;
  switch (b % 12) {
    case 0:
    case 1:
    case 2: {
      cb_ticket tk = 0;
      const int st = q != nullptr ? lb_quiet_allow(q, h, &tk, &native) : cb_allow(h, &tk);
      if (st == CB_OK) {
        held.push_back(tk);
        held_on.push_back(h);
      }
      return st;
    }
    case 3:
    case 4:
    case 5: {
      if (held.empty()) return cb_state(h) >= 0 ? CB_OK : CB_EHANDLE;
      const cb_ticket tk = held.back();
      const cb_handle on = held_on.back();
      held.pop_back();
      held_on.pop_back();
      const int outcome = (b >> 4) % 3 == 0   ? CB_FAILURE
                          : (b >> 4) % 7 == 1 ? CB_IGNORED
                                              : CB_SUCCESS;
      return q != nullptr ? lb_quiet_done(q, on, tk, outcome, &native) : cb_done(on, tk, outcome);
    }
    case 6: {
      cb_stats s;
      s.struct_size = sizeof s;
      return cb_stats_get(h, &s);
    }
    case 7: {
      uint64_t ns = 0;
      return cb_retry_after(h, &ns);
    }
    case 8:
      return (b >> 4) % 2 == 0 ? cb_trip(h, CB_MIN_OPEN_DURATION_NS) : cb_reset(h);
    case 9: {
      char name[CB_MAX_NAME_BYTES + 1];
      return cb_name(h, name, sizeof name);
    }
    case 10:
      return (b >> 4) % 2 == 0 ? cb_force_open(h) : cb_disable(h);
    default: {
      // A destroy and a create of the same name: the slot's next life.
      char name[CB_MAX_NAME_BYTES + 1];
      if (cb_name(h, name, sizeof name) != CB_OK || cb_destroy(h) != CB_OK) return CB_EHANDLE;
      const cb_config c = close_race_config(t.plan->policy);
      cb_handle fresh = 0;
      const int st = cb_get_or_create(t.reg, name, &c, &fresh);
      // Another thread's create of the name may come first, or the close:
      // then the registry pointer is refused (CB_EINVAL), or a shared
      // registry's create gives no handle (CB_EHANDLE).
      return st == CB_OK || st == CB_EEXIST || st == CB_EFULL || st == CB_EINVAL ? CB_OK : st;
    }
  }
}

void run(Thread &t, size_t first, const std::atomic<bool> &closed, const std::atomic<bool> &stop) {
  lb_quiet q;
  const bool quiet = t.published && lb_quiet_init(&q, 0) == CB_OK;
  std::vector<cb_ticket> held;
  std::vector<cb_handle> held_on;
  const std::string &calls = t.plan->calls;
  for (size_t n = first; !stop.load(std::memory_order_acquire); ++n) {
    const bool after = closed.load(std::memory_order_acquire);
    const uint8_t b = uint8_t(calls[n % calls.size()]);
    const cb_handle h = (*t.handles)[(n * 7 + b) % t.handles->size()];
    const int st = one_call(t, quiet ? &q : nullptr, b, h, held, held_on);
    if (st != CB_OK && st != CB_REJECTED && st != CB_EHANDLE)
      finding("a status no call may give while its registry closes", b % 12, st);
    if (after && st != CB_EHANDLE && b % 12 != 11)
      finding("a call begun after the close did not give CB_EHANDLE", b % 12, st);
    if (after) t.after.fetch_add(1, std::memory_order_relaxed);
  }
}

std::string file_path(bool in_tmp) {
  return std::string(in_tmp ? "/tmp" : "/dev/shm") + "/lb-fuzz-close-" + std::to_string(getpid()) +
         ".lbr";
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  lbfuzz::Reader in(data, size);
  const Plan plan = read_plan(in);
  const std::string path = file_path(plan.in_tmp);
  cb_registry_options o;
  cb_registry_options_init(&o);
  o.capacity = plan.capacity;
  if (plan.shared) {
    unlink(path.c_str());
    o.path = path.c_str();
    o.flags = CB_REGISTRY_CREATE;
  }
  cb_registry *reg = nullptr;
  if (cb_registry_open(&o, &reg) != CB_OK) finding("the registry did not open", -1, -1);
  cb_registry *sibling = nullptr;
  if (plan.sibling && cb_registry_open(&o, &sibling) != CB_OK)
    finding("a second registry on the file did not open", -1, -1);
  if (plan.rejection_events) cb_events_select(reg, CB_EVENTS_TRANSITIONS | CB_EVENTS_REJECTIONS);
  const cb_config cfg = close_race_config(plan.policy);
  std::vector<cb_handle> handles(size_t(plan.breakers));
  for (int i = 0; i < plan.breakers; ++i) {
    const std::string name = "b" + std::to_string(i);
    if (cb_create(reg, name.c_str(), &cfg, &handles[size_t(i)]) != CB_OK)
      finding("a breaker was not created", -1, -1);
  }
  std::atomic<bool> closed{false}, stop{false};
  std::vector<Thread> threads(size_t(plan.threads));
  std::vector<std::thread> running;
  for (int i = 0; i < plan.threads; ++i) {
    Thread &t = threads[size_t(i)];
    t.plan = &plan;
    t.handles = &handles;
    t.reg = reg;
    t.published = plan.published && i % 2 == 1;
    running.emplace_back(run, std::ref(t), size_t(i) * 31, std::cref(closed), std::cref(stop));
  }
  const auto close_at = Clock::now() + plan.delay;
  while (Clock::now() < close_at) {
  }
  if (cb_registry_close(reg) != CB_OK) finding("the close failed", -1, -1);
  closed.store(true, std::memory_order_release);
  const auto give_up = Clock::now() + std::chrono::seconds(1);
  for (Thread &t : threads)
    while (t.after.load(std::memory_order_relaxed) < 4 && Clock::now() < give_up)
      std::this_thread::yield();
  stop.store(true, std::memory_order_release);
  for (std::thread &r : running) r.join();
  if (sibling != nullptr) {
    // The file's breakers live on, seen through the registry left open.
    cb_handle h = 0;
    if (cb_lookup(sibling, "b0", &h) == CB_OK && cb_state(h) < 0)
      finding("the file's breaker is gone for the registry left open", -1, -1);
    cb_registry_close(sibling);
  }
  if (plan.shared) unlink(path.c_str());
  return 0;
}
