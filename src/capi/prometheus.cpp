// Every breaker of a registry in the Prometheus text exposition format
// 0.0.4, for cb_metrics_prometheus (capi/metrics.cpp): one table of metric
// families, the state label's values from lists.h. Not on the request
// path: it allocates, and may throw std::bad_alloc.
#include "capi/prometheus.hpp"

#include <cinttypes>
#include <cstdio>
#include <string>
#include <vector>

#include "capi/status.hpp"
#include "lazybreaker/lazybreaker.h"

namespace lazybreaker::capi {
namespace {

using core::Counter;
using core::Result;
using registry::Counts;
using registry::FileHeader;
using registry::Handle;
using registry::Registry;

struct Snapshot {
  std::string label;  // breaker="<escaped name>"
  int state;          // a cb_state_t
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
    core::State state;
    core::Breaker b = reg.recorder(i);
    if (b.state(Handle::incarnation(h), &state) != Result::Ok ||
        b.observe(Handle::incarnation(h), &s.observed) != Result::Ok)
      continue;  // destroyed meanwhile
    s.state = public_state(state);
    s.counts = reg.counts(i);
    char name[CB_MAX_NAME_BYTES + 1];
    size_t len = 0;
    if (!reg.name(i, Handle::incarnation(h), name, &len)) continue;  // destroyed meanwhile
    if (name[0] == '\0') std::snprintf(name, sizeof name, "#%016" PRIx64, h);
    s.label = "breaker=\"" + escape(name) + "\"";
    out.push_back(std::move(s));
  }
  return out;
}

// A sample's value: a count, or a real number.
struct Value {
  bool real;
  uint64_t count;
  double number;
};
Value count(uint64_t v) { return {false, v, 0}; }
Value number(double v) { return {true, 0, v}; }

void append_sample(std::string *out, const char *family, const std::string &labels, Value v) {
  char num[64];
  if (v.real)
    std::snprintf(num, sizeof num, "%.17g", v.number);
  else
    std::snprintf(num, sizeof num, "%" PRIu64, v.count);
  *out += family;
  if (!labels.empty()) *out += '{' + labels + '}';
  *out += ' ';
  *out += num;
  *out += '\n';
}

void append_family(std::string *out, const char *name, const char *type, const char *help) {
  *out += std::string("# HELP ") + name + ' ' + help + "\n# TYPE " + name + ' ' + type + '\n';
}

// One series of a breaker's family: `label` ("" or `key="value"`) beside
// the breaker's, its value read with `arg` (a counter, a state).
struct Series {
  const char *label;
  Value (*read)(const Snapshot &, int arg);
  int arg;
};

Value counter(const Snapshot &s, int c) { return count(s.counts.n[c]); }
Value in_state(const Snapshot &s, int state) { return count(s.state == state ? 1 : 0); }

// A family with a series per state, labelled with cb_state_name's names.
#define LB_STATE_SERIES(value, name) {"state=\"" name "\"", in_state, value},

struct BreakerFamily {
  const char *name, *type, *help;
  std::vector<Series> series;
};
const BreakerFamily kBreakerFamilies[] = {
    {"lazybreaker_state",
     "gauge",
     "The breaker's state: 1 for the state it is in, 0 for the others.",
     {CB_STATE_LIST(LB_STATE_SERIES)}},
    {"lazybreaker_state_seconds",
     "gauge",
     "Time in the current state, in seconds.",
     {{"", [](const Snapshot &s, int) { return number(double(s.observed.state_ns) / 1e9); }, 0}}},
    {"lazybreaker_calls_admitted_total",
     "counter",
     "Calls the breaker admitted.",
     {{"", counter, int(Counter::Admitted)}}},
    {"lazybreaker_calls_rejected_total",
     "counter",
     "Calls the breaker rejected (failed fast).",
     {{"", counter, int(Counter::Rejected)}}},
    {"lazybreaker_slow_calls_total",
     "counter",
     "Calls slower than slow_call_ns.",
     {{"", counter, int(Counter::Slow)}}},
    {"lazybreaker_outcomes_total",
     "counter",
     "Outcomes reported, by outcome.",
     {{"outcome=\"success\"", counter, int(Counter::Successes)},
      {"outcome=\"failure\"", counter, int(Counter::Failures)},
      {"outcome=\"ignored\"", counter, int(Counter::Ignored)}}},
    {"lazybreaker_trips_total",
     "counter",
     "Transitions into OPEN.",
     {{"", [](const Snapshot &s, int) { return count(s.counts.trips); }, 0}}},
    {"lazybreaker_failure_rate",
     "gauge",
     "Failures per call in the window now (0..1).",
     {{"", [](const Snapshot &s, int) { return number(s.observed.failure_rate); }, 0}}},
    {"lazybreaker_slow_call_rate",
     "gauge",
     "Slow calls per call in the window now (0..1).",
     {{"", [](const Snapshot &s, int) { return number(s.observed.slow_rate); }, 0}}},
    {"lazybreaker_consecutive_failures",
     "gauge",
     "The current run of failures (CLOSED).",
     {{"", [](const Snapshot &s, int) { return count(s.observed.consecutive_failures); }, 0}}},
};
#undef LB_STATE_SERIES

// A registry's own figures; a shared registry's come from its file.
struct FileFamily {
  const char *name, *type, *help;
  uint64_t (*read)(const FileHeader &);
};
const FileFamily kFileFamilies[] = {
    {"lazybreaker_shared_capacity", "gauge", "Breakers the shared registry file holds, at most.",
     [](const FileHeader &f) { return uint64_t(f.capacity); }},
    {"lazybreaker_shared_stripes_used", "gauge",
     "Counter stripes of the shared registry file ever owned by a thread (of 64).",
     [](const FileHeader &f) { return uint64_t(f.stripes_used.load(std::memory_order_relaxed)); }},
    {"lazybreaker_shared_stripes_reclaimed_total", "counter",
     "Counter stripes taken back from processes that died holding them.",
     [](const FileHeader &f) {
       return uint64_t(f.stripes_reclaimed.load(std::memory_order_relaxed));
     }},
    {"lazybreaker_shared_uncertain_folds_total", "counter",
     "Counter folds a process died in the middle of whose counts could not be told apart: each "
     "leaves one counter of one breaker up to 32768 off.",
     [](const FileHeader &f) {
       return uint64_t(f.uncertain_folds.load(std::memory_order_relaxed));
     }},
};

}  // namespace

std::string prometheus_text(Registry &reg) {
  const std::vector<Snapshot> all = snapshot(reg);
  std::string out;
  append_family(&out, "lazybreaker_breakers", "gauge", "Breakers in the registry.");
  append_sample(&out, "lazybreaker_breakers", "", count(all.size()));
  for (const BreakerFamily &f : kBreakerFamilies) {
    append_family(&out, f.name, f.type, f.help);
    for (const Snapshot &s : all)
      for (const Series &series : f.series)
        append_sample(&out, f.name, *series.label == '\0' ? s.label : s.label + ',' + series.label,
                      series.read(s, series.arg));
  }
  append_family(&out, "lazybreaker_events_dropped_total", "counter",
                "Events the registry's queue dropped because it was full.");
  append_sample(&out, "lazybreaker_events_dropped_total", "", count(reg.events().dropped()));
  if (const FileHeader *file = reg.file_header()) {
    for (const FileFamily &f : kFileFamilies) {
      append_family(&out, f.name, f.type, f.help);
      append_sample(&out, f.name, "", count(f.read(*file)));
    }
  }
  return out;
}

}  // namespace lazybreaker::capi
