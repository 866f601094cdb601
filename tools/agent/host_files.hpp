// The host's side of the agent: its registry files, opened through the
// public C ABI like any other process, polled for each named breaker's
// state, trips and counts (events are per process, so polling is how the
// agent sees the other processes' transitions), and acted on with the
// ABI's own calls (cb_trip, cb_hold_open, cb_force_open, cb_disable,
// cb_reset): the agent never makes a transition itself.
#pragma once

#include <lazybreaker/lazybreaker.h>

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

namespace lazybreaker::agent {

struct Counts {
  uint64_t admitted = 0, rejected = 0, successes = 0, failures = 0;
};

// One named breaker of one file, as the last poll saw it.
struct LocalBreaker {
  std::string name;
  size_t file = 0;
  cb_handle handle = 0;
  int state = CB_STATE_CLOSED;
  uint64_t trips = 0;
  Counts counts;
  uint64_t retry_after_ns = 0;
};

// A host's named breakers, by name (a name may be in several files).
// Hashed: a poll looks every breaker up, at every interval.
using BreakersByName = std::unordered_map<std::string, std::vector<LocalBreaker>>;

// What a poll found changed on one breaker since the last poll.
struct LocalChange {
  LocalBreaker *breaker;
  int from_state;
  bool tripped;      // stats.trips moved and it is OPEN now
  bool new_breaker;  // first seen by this poll
  Counts delta;
};

class HostFiles {
 public:
  // Opens every file (a missing one is waited for: open_missing() retries);
  // `any_owner` lifts the owner and mode check (docs/fleet.md, "Security").
  HostFiles(std::vector<std::string> paths, bool any_owner);
  ~HostFiles();
  HostFiles(const HostFiles &) = delete;
  HostFiles &operator=(const HostFiles &) = delete;

  // Tries the files not yet open; the message of each that still fails
  // (once per distinct message).
  std::vector<std::string> open_missing();
  bool all_open() const;
  // Whether every file not open failed only because it does not exist yet.
  bool only_missing() const;
  size_t files() const { return paths_.size(); }

  // Reads every named breaker of every open file. Breakers destroyed since
  // the last poll disappear from breakers().
  std::vector<LocalChange> poll();
  BreakersByName &breakers() { return by_name_; }

  // The registry clock of a breaker's file, now.
  uint64_t clock_now(const LocalBreaker &b) const;
  // Re-reads one breaker's state, trips and retry_after (after the agent acted on it).
  void refresh(LocalBreaker &b) const;

 private:
  struct File {
    std::string path;
    cb_registry *reg = nullptr;
    std::string last_error;
    bool missing = false;
    std::unordered_map<cb_handle, std::string> names;  // "" for an anonymous breaker
  };
  const std::string *name_of(size_t file, cb_handle h);
  std::string open_one(File &f);
  void read_file(size_t file, BreakersByName *into);
  LocalChange change_of(LocalBreaker &b) const;
  std::vector<File> paths_;
  bool any_owner_;
  // The first poll's counts are history, not news: the fleet gets only
  // what happens while the agent watches.
  bool polled_before_ = false;
  std::vector<cb_handle> handles_ = std::vector<cb_handle>(256);
  BreakersByName by_name_;
};

}  // namespace lazybreaker::agent
