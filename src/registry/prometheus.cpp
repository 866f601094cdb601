// Every breaker of a registry in the Prometheus text exposition format
// 0.0.4, for cb_metrics_prometheus (capi/metrics.cpp). Not on the request
// path: it allocates, and may throw std::bad_alloc.
#include "registry/prometheus.hpp"

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "lazybreaker/lazybreaker.h"

namespace lazybreaker::registry {
namespace {

using core::Counter;
using core::Result;
using core::State;

struct Snapshot {
  std::string label;  // the escaped breaker label value
  State state;
  Counts counts;
  core::Observation observed;
};

// Label values escape backslash, double quote and line feed.
std::string escape(const char *s) {
  std::string out;
  for (; *s != '\0'; ++s) {
    if (*s == '\\')
      out += "\\\\";
    else if (*s == '"')
      out += "\\\"";
    else if (*s == '\n')
      out += "\\n";
    else
      out += *s;
  }
  return out;
}

std::vector<Snapshot> snapshot(Registry &reg) {
  std::vector<uint64_t> handles(reg.list(nullptr, 0) + 16);
  handles.resize(std::min(handles.size(), reg.list(handles.data(), handles.size())));
  std::vector<Snapshot> out;
  out.reserve(handles.size());
  for (const uint64_t h : handles) {
    const uint32_t i = Handle::index(h) - reg.base();
    Snapshot s;
    core::Breaker b = reg.recorder(i);
    if (b.state(Handle::incarnation(h), &s.state) != Result::Ok ||
        b.observe(Handle::incarnation(h), &s.observed) != Result::Ok)
      continue;  // destroyed meanwhile
    s.counts = reg.counts(i);
    char name[CB_MAX_NAME_BYTES + 1];
    size_t len = 0;
    if (!reg.name(i, Handle::incarnation(h), name, &len)) continue;  // destroyed meanwhile
    if (name[0] == '\0') std::snprintf(name, sizeof name, "#%016" PRIx64, h);
    s.label = escape(name);
    out.push_back(std::move(s));
  }
  return out;
}

class Text {
 public:
  void family(const char *name, const char *type, const char *help) {
    out_ += "# HELP ";
    out_ += name;
    out_ += ' ';
    out_ += help;
    out_ += "\n# TYPE ";
    out_ += name;
    out_ += ' ';
    out_ += type;
    out_ += '\n';
  }
  void sample(const char *name, const std::string &labels, double value) {
    char num[64];
    std::snprintf(num, sizeof num, "%.17g", value);
    sample_text(name, labels, num);
  }
  void sample(const char *name, const std::string &labels, uint64_t value) {
    char num[32];
    std::snprintf(num, sizeof num, "%" PRIu64, value);
    sample_text(name, labels, num);
  }
  const std::string &str() const { return out_; }

 private:
  void sample_text(const char *name, const std::string &labels, const char *value) {
    out_ += name;
    if (!labels.empty()) {
      out_ += '{';
      out_ += labels;
      out_ += '}';
    }
    out_ += ' ';
    out_ += value;
    out_ += '\n';
  }
  std::string out_;
};

std::string breaker_label(const Snapshot &s) { return "breaker=\"" + s.label + "\""; }

}  // namespace

std::string prometheus_text(Registry &reg) {
  const std::vector<Snapshot> all = snapshot(reg);
  Text t;
  t.family("lazybreaker_breakers", "gauge", "Breakers in the registry.");
  t.sample("lazybreaker_breakers", "", uint64_t(all.size()));

  static const struct {
    State state;
    const char *name;
  } kStates[] = {{State::Closed, "closed"},
                 {State::Open, "open"},
                 {State::HalfOpen, "half_open"},
                 {State::ForcedOpen, "forced_open"},
                 {State::Disabled, "disabled"}};
  t.family("lazybreaker_state", "gauge",
           "The breaker's state: 1 for the state it is in, 0 for the others.");
  for (const Snapshot &s : all)
    for (const auto &k : kStates)
      t.sample("lazybreaker_state", breaker_label(s) + ",state=\"" + k.name + "\"",
               uint64_t(s.state == k.state ? 1 : 0));

  t.family("lazybreaker_state_seconds", "gauge", "Time in the current state, in seconds.");
  for (const Snapshot &s : all)
    t.sample("lazybreaker_state_seconds", breaker_label(s), double(s.observed.state_ns) / 1e9);

  struct Count {
    const char *name, *help;
    Counter counter;
  };
  static const Count kCounts[] = {
      {"lazybreaker_calls_admitted_total", "Calls the breaker admitted.", Counter::Admitted},
      {"lazybreaker_calls_rejected_total", "Calls the breaker rejected (failed fast).",
       Counter::Rejected},
      {"lazybreaker_slow_calls_total", "Calls slower than slow_call_ns.", Counter::Slow},
  };
  for (const Count &c : kCounts) {
    t.family(c.name, "counter", c.help);
    for (const Snapshot &s : all)
      t.sample(c.name, breaker_label(s), s.counts.n[unsigned(c.counter)]);
  }

  t.family("lazybreaker_outcomes_total", "counter", "Outcomes reported, by outcome.");
  for (const Snapshot &s : all) {
    t.sample("lazybreaker_outcomes_total", breaker_label(s) + ",outcome=\"success\"",
             s.counts.n[unsigned(Counter::Successes)]);
    t.sample("lazybreaker_outcomes_total", breaker_label(s) + ",outcome=\"failure\"",
             s.counts.n[unsigned(Counter::Failures)]);
    t.sample("lazybreaker_outcomes_total", breaker_label(s) + ",outcome=\"ignored\"",
             s.counts.n[unsigned(Counter::Ignored)]);
  }

  t.family("lazybreaker_trips_total", "counter", "Transitions into OPEN.");
  for (const Snapshot &s : all)
    t.sample("lazybreaker_trips_total", breaker_label(s), s.counts.trips);

  t.family("lazybreaker_failure_rate", "gauge", "Failures per call in the window now (0..1).");
  for (const Snapshot &s : all)
    t.sample("lazybreaker_failure_rate", breaker_label(s), s.observed.failure_rate);

  t.family("lazybreaker_slow_call_rate", "gauge", "Slow calls per call in the window now (0..1).");
  for (const Snapshot &s : all)
    t.sample("lazybreaker_slow_call_rate", breaker_label(s), s.observed.slow_rate);

  t.family("lazybreaker_consecutive_failures", "gauge", "The current run of failures (CLOSED).");
  for (const Snapshot &s : all)
    t.sample("lazybreaker_consecutive_failures", breaker_label(s),
             uint64_t(s.observed.consecutive_failures));

  t.family("lazybreaker_events_dropped_total", "counter",
           "Events the registry's queue dropped because it was full.");
  t.sample("lazybreaker_events_dropped_total", "", reg.events().dropped());

  if (const FileHeader *file = reg.file_header()) {
    t.family("lazybreaker_shared_capacity", "gauge",
             "Breakers the shared registry file holds, at most.");
    t.sample("lazybreaker_shared_capacity", "", uint64_t(file->capacity));
    t.family("lazybreaker_shared_stripes_used", "gauge",
             "Counter stripes of the shared registry file ever owned by a thread (of 64).");
    t.sample("lazybreaker_shared_stripes_used", "",
             uint64_t(file->stripes_used.load(std::memory_order_relaxed)));
    t.family("lazybreaker_shared_stripes_reclaimed_total", "counter",
             "Counter stripes taken back from processes that died holding them.");
    t.sample("lazybreaker_shared_stripes_reclaimed_total", "",
             file->stripes_reclaimed.load(std::memory_order_relaxed));
    t.family("lazybreaker_shared_uncertain_folds_total", "counter",
             "Counter folds a process died in the middle of whose counts could not be told "
             "apart: each leaves one counter of one breaker up to 32768 off.");
    t.sample("lazybreaker_shared_uncertain_folds_total", "",
             file->uncertain_folds.load(std::memory_order_relaxed));
  }
  return t.str();
}

}  // namespace lazybreaker::registry
