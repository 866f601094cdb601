// lb_test::Barrier: std::barrier where it works, for the tests that line
// threads up (arrive_and_wait only).
//
// mingw-w64's libstdc++ (GCC 12) has no futex on Windows, and its fallback
// for atomic waits, which std::barrier waits through, loses wake-ups:
// __waiter_pool::_M_do_wait takes its mutex and waits on its condition
// variable without reading the value again under the mutex, and the
// notifier neither takes the mutex nor waits for it, so a notify between
// the waiter's read and its wait is lost. Under Wine that hung
// tests/capi/test_stress in 2 runs of 3, every thread asleep in
// arrive_and_wait. On Windows the barrier is a plain mutex and condition
// variable instead.
#pragma once

#ifdef _WIN32
#include <condition_variable>
#include <cstddef>
#include <mutex>
#else
#include <barrier>
#endif

namespace lb_test {

#ifdef _WIN32
class Barrier {
 public:
  explicit Barrier(std::ptrdiff_t count) : count_(count), waiting_(count) {}
  Barrier(const Barrier &) = delete;
  Barrier &operator=(const Barrier &) = delete;

  void arrive_and_wait() {
    std::unique_lock<std::mutex> lock(mutex_);
    const unsigned long long phase = phase_;
    if (--waiting_ == 0) {
      waiting_ = count_;
      ++phase_;
      all_arrived_.notify_all();
      return;
    }
    all_arrived_.wait(lock, [&] { return phase_ != phase; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable all_arrived_;
  const std::ptrdiff_t count_;
  std::ptrdiff_t waiting_;
  unsigned long long phase_ = 0;
};
#else
using Barrier = std::barrier<>;
#endif

}  // namespace lb_test
