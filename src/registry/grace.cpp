#include "registry/grace.hpp"

#include <new>

#include "platform/platform.hpp"
#include "registry/setup_lock.hpp"

namespace lazybreaker::registry {

namespace detail {
Announcement g_readers[kReaderSlots];
std::atomic<uint64_t> g_epoch{1};
constinit thread_local uint32_t t_reader_slot_plus_one __attribute__((tls_model("initial-exec"))) =
    0;
constinit thread_local uint32_t t_reading_depth __attribute__((tls_model("initial-exec"))) = 0;
}  // namespace detail

namespace {

using detail::Announcement;
using detail::g_epoch;
using detail::g_readers;
using detail::kReaderSlots;
using detail::t_reader_slot_plus_one;
constexpr uint32_t kNoSlot = kReaderSlots;
std::atomic<uint64_t> g_claimed[kReaderSlots / 64];
std::atomic<uint64_t> g_overflow{0};  // calls in flight on threads without a slot
platform::ThreadExitKey g_slot_key;

void give_slot_back(uint32_t s) {
  g_claimed[s / 64].fetch_and(~(1ull << (s % 64)), std::memory_order_release);
}

__attribute__((constructor)) void make_slot_key() {
  platform::make_thread_exit_key(&g_slot_key, [](void *slot_plus_one) {
    // A later destructor's call counts in the shared announcement.
    t_reader_slot_plus_one = kNoSlot + 1;
    give_slot_back(uint32_t(reinterpret_cast<uintptr_t>(slot_plus_one)) - 1);
  });
  // A forked child has only the thread that forked, which was in no call:
  // the parent's other threads' announcements would hold every grace back.
  platform::on_fork_child([] {
    for (Announcement &a : g_readers) a.epoch.store(0, std::memory_order_relaxed);
    g_overflow.store(0, std::memory_order_relaxed);
    for (auto &w : g_claimed) w.store(0, std::memory_order_relaxed);
    const uint32_t mine = t_reader_slot_plus_one - 1;
    if (mine < kReaderSlots)
      g_claimed[mine / 64].fetch_or(1ull << (mine % 64), std::memory_order_relaxed);
  });
}

uint32_t claim_slot() {
  for (uint32_t k = 0; g_slot_key.made && k < kReaderSlots / 64; ++k) {
    uint64_t taken = g_claimed[k].load(std::memory_order_relaxed);
    while (~taken != 0) {
      const uint32_t bit = uint32_t(__builtin_ctzll(~taken));
      if (!g_claimed[k].compare_exchange_weak(taken, taken | (1ull << bit),
                                              std::memory_order_acquire))
        continue;
      const uint32_t s = k * 64 + bit;
      if (!platform::set_thread_exit_value(g_slot_key,
                                           reinterpret_cast<void *>(uintptr_t(s) + 1))) {
        give_slot_back(s);
        break;
      }
      t_reader_slot_plus_one = s + 1;
      return s;
    }
  }
  t_reader_slot_plus_one = kNoSlot + 1;
  return kNoSlot;
}

// Whether every call that began before epoch `tag` has ended.
bool passed(uint64_t tag) {
  if (g_overflow.load(std::memory_order_acquire) != 0) return false;
  for (const Announcement &a : g_readers) {
    const uint64_t e = a.epoch.load(std::memory_order_acquire);
    if (e != 0 && e < tag) return false;
  }
  return true;
}

struct Held {
  uint64_t tag;
  void (*give_back)(void *);
  void *arg;
  Held *next;
};
SetupLock g_limbo_lock;
Held *g_limbo = nullptr;  // under g_limbo_lock
uint32_t g_limbo_count = 0;

constexpr uint64_t kNever = 0;

// Takes out of the limbo what has passed its grace, for the caller to give back.
Held *take_passed() {
  Held *passed_list = nullptr;
  for (Held **at = &g_limbo; *at != nullptr;) {
    Held *h = *at;
    if (h->tag != kNever && passed(h->tag)) {
      *at = h->next;
      h->next = passed_list;
      passed_list = h;
      --g_limbo_count;
    } else {
      at = &h->next;
    }
  }
  return passed_list;
}

void give_back_all(Held *list) {
  while (list != nullptr) {
    Held *next = list->next;
    list->give_back(list->arg);
    delete list;
    list = next;
  }
}

}  // namespace

void Grace::enter_slow() noexcept {
  uint32_t s = t_reader_slot_plus_one - 1;
  if (s == UINT32_MAX) s = claim_slot();
  if (s < kReaderSlots)
    announce(s);
  else
    g_overflow.fetch_add(1, std::memory_order_seq_cst);
}

void Grace::leave_slow() noexcept { g_overflow.fetch_sub(1, std::memory_order_release); }

void Grace::retire(void (*give_back)(void *), void *arg) {
  Held *ready = nullptr;
  bool now = false;
  {
    SetupLock::Held lock(g_limbo_lock);
    const uint64_t tag = g_epoch.fetch_add(1, std::memory_order_seq_cst) + 1;
    // Makes every thread's announcement so far visible to the loads that
    // follow, and every thread's loads that follow see what was stored
    // before (the other half of Grace::enter's plain store). Without such a
    // barrier nothing is ever given back.
    const bool barrier = platform::process_wide_barrier();
    now = barrier && passed(tag);
    if (!now) {
      // Without a barrier nothing tells when the grace is over: held for
      // good.
      auto *held = new (std::nothrow) Held{barrier ? tag : kNever, give_back, arg, g_limbo};
      if (held != nullptr) {
        g_limbo = held;
        ++g_limbo_count;
      }
    }
    ready = take_passed();
  }
  if (now) give_back(arg);
  give_back_all(ready);
}

void Grace::collect() {
  Held *ready;
  {
    SetupLock::Held lock(g_limbo_lock);
    ready = take_passed();
  }
  give_back_all(ready);
}

uint32_t Grace::pending() {
  SetupLock::Held lock(g_limbo_lock);
  return g_limbo_count;
}

}  // namespace lazybreaker::registry
