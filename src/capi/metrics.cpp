// cb_metrics_prometheus: every breaker of a registry in the Prometheus text
// exposition format 0.0.4. Not on the request path: it allocates.
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <exception>
#include <new>
#include <string>
#include <vector>

#include "capi/errors.hpp"
#include "capi/resolve.hpp"
#include "lazybreaker/lazybreaker.h"
#include "registry/registry.hpp"

namespace {

using lazybreaker::capi::fail;
using lazybreaker::core::Counter;
using lazybreaker::core::Result;
using lazybreaker::core::State;
using lazybreaker::registry::Handle;
using lazybreaker::registry::Registry;

struct Snapshot {
  std::string label;  // the escaped breaker label value
  State state;
  lazybreaker::registry::Counts counts;
  lazybreaker::core::Observation observed;
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
    lazybreaker::core::Breaker b = reg.breaker(i);
    if (b.state(Handle::incarnation(h), &s.state) != Result::Ok ||
        b.observe(Handle::incarnation(h), &s.observed) != Result::Ok)
      continue;  // destroyed meanwhile
    s.counts = reg.counts(i);
    char name[CB_MAX_NAME_BYTES + 1];
    reg.name(i, name);
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

std::string render(Registry &reg) {
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
  return t.str();
}

}  // namespace

extern "C" CB_API int cb_metrics_prometheus(cb_registry *reg, char *buf, size_t size,
                                            size_t *needed) CB_NOEXCEPT {
  if (needed == nullptr) return fail(CB_EINVAL, "cb_metrics_prometheus: needed is NULL");
  if (buf == nullptr && size > 0) return fail(CB_EINVAL, "cb_metrics_prometheus: buf is NULL");
  Registry *r = nullptr;
  if (const int st = lazybreaker::capi::resolve_registry(reg, &r); st != CB_OK) return st;
  try {
    const std::string text = render(*r);
    *needed = text.size();
    if (buf == nullptr) return CB_OK;  // a size query
    if (size <= text.size())
      return fail(CB_ERANGE,
                  "cb_metrics_prometheus: the text needs %zu bytes and a NUL, buf has %zu",
                  text.size(), size);
    std::memcpy(buf, text.c_str(), text.size() + 1);
    return CB_OK;
  } catch (const std::bad_alloc &) {
    return fail(CB_ENOMEM, "cb_metrics_prometheus: out of memory while rendering the text");
  } catch (const std::exception &e) {
    return fail(CB_EINTERNAL, "cb_metrics_prometheus: %s", e.what());
  } catch (...) {
    return fail(CB_EINTERNAL, "cb_metrics_prometheus: an unexpected exception");
  }
}
