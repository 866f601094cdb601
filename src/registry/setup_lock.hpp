// A lock for what happens as registries open and close (never on a call):
// a plain pthread mutex, because std::mutex::lock may throw and nothing in
// this library may let an exception out. Statically initialised, so it
// needs no constructor to run before first use.
#pragma once

#include <pthread.h>

namespace lazybreaker::registry {

class SetupLock {
 public:
  class Held {
   public:
    explicit Held(SetupLock &l) noexcept : m_(&l.m_) { pthread_mutex_lock(m_); }
    ~Held() { pthread_mutex_unlock(m_); }
    Held(const Held &) = delete;
    Held &operator=(const Held &) = delete;

   private:
    pthread_mutex_t *m_;
  };

 private:
  pthread_mutex_t m_ = PTHREAD_MUTEX_INITIALIZER;
};

}  // namespace lazybreaker::registry
