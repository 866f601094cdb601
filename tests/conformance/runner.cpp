// The C++ conformance runner: executes scenario files (tests/conformance/
// *.scn, format in README.md) through the C ABI, each scenario on a fresh
// manual-clock registry.
//
//   lb_conformance [--clock-offset N] [--shared DIR] [--expect malformed|mismatch] FILE...
//
// --clock-offset N advances each scenario's fresh manual clock by N ns
// before its breaker is created, so the scenario runs as if the clock had
// started at N (README.md, "Clock offset"): a clock that starts at 0 hides
// any code that confuses "no time yet" with "time 0".
//
// --shared DIR runs each scenario twice: on a private registry and on a
// shared one, a fresh registry file in DIR (CB_REGISTRY_CREATE |
// CB_REGISTRY_EXCLUSIVE, the same capacity and manual clock, removed
// afterwards). Both runs must match the expectations, and their transcripts
// (after every step: its result, the state, retry_after and every counter)
// must be identical: a private registry and a shared one behave alike.
//
// Exit status: 0 every step matched; 1 a step did not match (reported as
// file:line: ...); 2 a file is malformed (every bad line is reported, and
// nothing runs) or cannot be read. With --expect, the runner checks itself:
// it exits 0 exactly when the files fail in the expected way.
//
// The whole file is parsed before anything runs, so a typo anywhere fails
// the test instead of being skipped.
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cinttypes>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "lazybreaker/lazybreaker.h"

namespace {

enum class Op {
  Scenario,
  Config,
  AllowOk,
  AllowRejected,
  Done,
  Advance,
  State,
  RetryAfter,
  ForceOpen,
  Disable,
  Reset,
  Trip,
  Stats
};

// How a config or stats key's value is written and compared.
enum class Kind {
  U32,      // an integer that must fit the uint32_t field (checked when it runs)
  U64,      // an integer
  Decimal,  // a double field: an integer or digits '.' digits
  Policy    // consecutive, count_window or time_window
};

struct Field {
  std::string key;
  Kind kind = Kind::U64;
  uint64_t u = 0;  // U32, U64, Policy
  double d = 0;    // Decimal
};

struct Step {
  int line = 0;
  Op op = Op::Scenario;
  std::string name;           // scenario name or ticket
  uint64_t value = 0;         // ns, state, outcome
  std::vector<Field> fields;  // config and stats
};

struct Scenario {
  std::string name;
  int line = 0;
  std::vector<Step> steps;
};

const std::map<std::string, int> kStates = {{"closed", CB_STATE_CLOSED},
                                            {"open", CB_STATE_OPEN},
                                            {"half_open", CB_STATE_HALF_OPEN},
                                            {"forced_open", CB_STATE_FORCED_OPEN},
                                            {"disabled", CB_STATE_DISABLED}};
const std::map<std::string, int> kOutcomes = {
    {"success", CB_SUCCESS}, {"failure", CB_FAILURE}, {"ignored", CB_IGNORED}};
const std::map<std::string, int> kPolicies = {{"consecutive", CB_POLICY_CONSECUTIVE},
                                              {"count_window", CB_POLICY_COUNT_WINDOW},
                                              {"time_window", CB_POLICY_TIME_WINDOW}};
const std::map<std::string, Kind> kConfigKeys = {{"failure_threshold", Kind::U32},
                                                 {"open_duration_ns", Kind::U64},
                                                 {"half_open_max_calls", Kind::U32},
                                                 {"half_open_success_threshold", Kind::U32},
                                                 {"half_open_timeout_ns", Kind::U64},
                                                 // 1.1
                                                 {"policy", Kind::Policy},
                                                 {"window_size", Kind::U32},
                                                 {"window_duration_ns", Kind::U64},
                                                 {"window_buckets", Kind::U32},
                                                 {"minimum_calls", Kind::U32},
                                                 {"failure_rate_threshold", Kind::Decimal},
                                                 {"slow_call_ns", Kind::U64},
                                                 {"slow_call_rate_threshold", Kind::Decimal},
                                                 {"open_backoff_multiplier", Kind::Decimal},
                                                 {"open_duration_max_ns", Kind::U64},
                                                 {"open_jitter", Kind::Decimal}};
const std::map<std::string, Kind> kStatsKeys = {{"admitted", Kind::U64},
                                                {"rejected", Kind::U64},
                                                {"successes", Kind::U64},
                                                {"failures", Kind::U64},
                                                {"ignored", Kind::U64},
                                                {"trips", Kind::U64},
                                                {"consecutive_failures", Kind::U64},
                                                // 1.1
                                                {"slow", Kind::U64},
                                                {"state_ns", Kind::U64},
                                                {"failure_rate", Kind::Decimal},
                                                {"slow_rate", Kind::Decimal}};

// Decimal stats (rates) match within this.
constexpr double kRateTolerance = 1e-9;

const char *state_name(int s) {
  for (const auto &[name, v] : kStates)
    if (v == s) return name.c_str();
  return s < 0 ? cb_strerror(s) : "unknown state";
}

// A plain unsigned decimal that fits 64 bits: no sign, no suffix, no spaces.
bool parse_u64(const std::string &s, uint64_t *out) {
  if (s.empty() || s.size() > 20) return false;
  uint64_t v = 0;
  for (const char c : s) {
    if (c < '0' || c > '9') return false;
    const auto d = static_cast<uint64_t>(c - '0');
    if (v > (UINT64_MAX - d) / 10) return false;
    v = v * 10 + d;
  }
  *out = v;
  return true;
}

// A decimal for a double field: an integer as above, or digits '.' digits
// (no sign, no exponent, at least one digit on each side), read as the
// nearest double.
bool parse_decimal(const std::string &s, double *out) {
  const auto dot = s.find('.');
  const std::string whole = s.substr(0, dot);
  const std::string frac = dot == std::string::npos ? "0" : s.substr(dot + 1);
  auto digits = [](const std::string &x) {
    if (x.empty()) return false;
    for (const char c : x)
      if (c < '0' || c > '9') return false;
    return true;
  };
  if (!digits(whole) || !digits(frac)) return false;
  double v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || !std::isfinite(v)) return false;
  *out = v;
  return true;
}

bool is_ident(const std::string &s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (const char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  return true;
}

class Parser {
 public:
  explicit Parser(std::string file) : file_(std::move(file)) {}

  // False if any line is malformed; every bad line is reported.
  bool parse(std::istream &in, std::vector<Scenario> *out) {
    std::string raw;
    int line = 0;
    while (std::getline(in, raw)) {
      ++line;
      if (const auto hash = raw.find('#'); hash != std::string::npos) raw.resize(hash);
      std::istringstream ss(raw);
      std::vector<std::string> t;
      for (std::string tok; ss >> tok;) t.push_back(tok);
      if (t.empty()) continue;
      std::string why;
      if (!parse_line(line, t, out, &why)) {
        std::fprintf(stderr, "%s:%d: malformed: %s\n", file_.c_str(), line, why.c_str());
        ok_ = false;
      }
    }
    if (out->empty()) {
      std::fprintf(stderr, "%s: malformed: no scenario in the file\n", file_.c_str());
      ok_ = false;
    }
    for (const Scenario &s : *out)
      if (s.steps.empty() || (s.steps.size() == 1 && s.steps[0].op == Op::Config)) {
        std::fprintf(stderr, "%s:%d: malformed: scenario '%s' has no steps\n", file_.c_str(),
                     s.line, s.name.c_str());
        ok_ = false;
      }
    return ok_;
  }

 private:
  bool parse_line(int line, const std::vector<std::string> &t, std::vector<Scenario> *out,
                  std::string *why) {
    const std::string &cmd = t[0];
    const size_t n = t.size();
    auto arity = [&](size_t want) {
      if (n == want) return true;
      *why = "'" + cmd + "' takes " + std::to_string(want - 1) + " argument(s), got " +
             std::to_string(n - 1);
      return false;
    };
    Step st;
    st.line = line;
    if (cmd == "scenario") {
      if (!arity(2)) return false;
      if (!is_ident(t[1])) return *why = "a scenario name is [A-Za-z_][A-Za-z0-9_]*", false;
      if (!names_.insert(t[1]).second)
        return *why = "scenario '" + t[1] + "' is already defined in this file", false;
      out->push_back(Scenario{t[1], line, {}});
      tickets_.clear();
      return true;
    }
    if (out->empty()) return *why = "a step before the first 'scenario' line", false;
    Scenario &sc = out->back();
    if (cmd == "config") {
      if (!sc.steps.empty()) return *why = "'config' must come first in a scenario, once", false;
      if (n < 2) return *why = "'config' needs at least one key=value", false;
      if (!fields(t, kConfigKeys, &st, why)) return false;
      st.op = Op::Config;
    } else if (cmd == "allow") {
      if (n < 3 || t[1] != "->")
        return *why = "expected 'allow -> ok TICKET' or 'allow -> rejected'", false;
      if (t[2] == "rejected") {
        if (!arity(3)) return false;
        st.op = Op::AllowRejected;
      } else if (t[2] == "ok") {
        if (!arity(4)) return false;
        if (!is_ident(t[3])) return *why = "a ticket name is [A-Za-z_][A-Za-z0-9_]*", false;
        if (!tickets_.insert(t[3]).second)
          return *why = "ticket '" + t[3] + "' is already bound in this scenario", false;
        st.op = Op::AllowOk;
        st.name = t[3];
      } else {
        return *why = "allow expects 'ok' or 'rejected', got '" + t[2] + "'", false;
      }
    } else if (cmd == "done") {
      if (!arity(3)) return false;
      if (tickets_.count(t[1]) == 0)
        return *why = "ticket '" + t[1] + "' is not bound by an earlier 'allow -> ok'", false;
      const auto o = kOutcomes.find(t[2]);
      if (o == kOutcomes.end())
        return *why = "outcome must be success, failure or ignored, got '" + t[2] + "'", false;
      st.op = Op::Done;
      st.name = t[1];
      st.value = uint64_t(o->second);
    } else if (cmd == "advance") {
      if (!arity(2)) return false;
      if (!parse_u64(t[1], &st.value))
        return *why = "advance takes nanoseconds as a plain decimal, got '" + t[1] + "'", false;
      st.op = Op::Advance;
    } else if (cmd == "state") {
      if (!arity(2)) return false;
      const auto s = kStates.find(t[1]);
      if (s == kStates.end()) return *why = "unknown state '" + t[1] + "'", false;
      st.op = Op::State;
      st.value = uint64_t(s->second);
    } else if (cmd == "retry_after") {
      if (!arity(2)) return false;
      if (t[1] == "max")
        st.value = UINT64_MAX;
      else if (!parse_u64(t[1], &st.value))
        return *why = "retry_after takes nanoseconds or 'max', got '" + t[1] + "'", false;
      st.op = Op::RetryAfter;
    } else if (cmd == "trip") {
      if (!arity(2)) return false;
      if (!parse_u64(t[1], &st.value))
        return *why = "trip takes nanoseconds as a plain decimal, got '" + t[1] + "'", false;
      st.op = Op::Trip;
    } else if (cmd == "force_open" || cmd == "disable" || cmd == "reset") {
      if (!arity(1)) return false;
      st.op = cmd == "force_open" ? Op::ForceOpen : cmd == "disable" ? Op::Disable : Op::Reset;
    } else if (cmd == "stats") {
      if (n < 2) return *why = "'stats' needs at least one key=value", false;
      if (!fields(t, kStatsKeys, &st, why)) return false;
      st.op = Op::Stats;
    } else {
      return *why = "unknown step '" + cmd + "'", false;
    }
    sc.steps.push_back(st);
    return true;
  }

  static bool fields(const std::vector<std::string> &t, const std::map<std::string, Kind> &keys,
                     Step *st, std::string *why) {
    std::set<std::string> seen;
    for (size_t i = 1; i < t.size(); ++i) {
      const auto eq = t[i].find('=');
      if (eq == std::string::npos) return *why = "expected key=value, got '" + t[i] + "'", false;
      const std::string key = t[i].substr(0, eq), val = t[i].substr(eq + 1);
      const auto k = keys.find(key);
      if (k == keys.end()) return *why = "unknown key '" + key + "'", false;
      if (!seen.insert(key).second) return *why = "key '" + key + "' given twice", false;
      Field f;
      f.key = key;
      f.kind = k->second;
      switch (f.kind) {
        case Kind::U32:
        case Kind::U64:
          if (!parse_u64(val, &f.u))
            return *why = "value of '" + key + "' must be a plain integer, got '" + val + "'",
                   false;
          break;
        case Kind::Decimal:
          if (!parse_decimal(val, &f.d))
            return *why =
                       "value of '" + key + "' must be digits or digits.digits, got '" + val + "'",
                   false;
          break;
        case Kind::Policy: {
          const auto p = kPolicies.find(val);
          if (p == kPolicies.end())
            return *why =
                       "policy must be consecutive, count_window or time_window, got '" + val + "'",
                   false;
          f.u = uint64_t(p->second);
          break;
        }
      }
      st->fields.push_back(f);
    }
    return true;
  }

  std::string file_;
  bool ok_ = true;
  std::set<std::string> names_;
  std::set<std::string> tickets_;
};

// The parser admits no other key.
uint64_t stat_u64(const cb_stats &s, const std::string &key) {
  if (key == "admitted") return s.admitted;
  if (key == "rejected") return s.rejected;
  if (key == "successes") return s.successes;
  if (key == "failures") return s.failures;
  if (key == "ignored") return s.ignored;
  if (key == "trips") return s.trips;
  if (key == "slow") return s.slow;
  if (key == "state_ns") return s.state_ns;
  return s.consecutive_failures;
}

double stat_decimal(const cb_stats &s, const std::string &key) {
  return key == "failure_rate" ? s.failure_rate : s.slow_rate;
}

// Sets one config field; false (with *why) if the value does not fit it.
bool set_config(cb_config *c, const Field &f, std::string *why) {
  if (f.kind == Kind::U32 && f.u > UINT32_MAX) return *why = "out of range", false;
  const auto u32 = uint32_t(f.u);
  const std::string &k = f.key;
  if (k == "failure_threshold")
    c->failure_threshold = u32;
  else if (k == "open_duration_ns")
    c->open_duration_ns = f.u;
  else if (k == "half_open_max_calls")
    c->half_open_max_calls = u32;
  else if (k == "half_open_success_threshold")
    c->half_open_success_threshold = u32;
  else if (k == "half_open_timeout_ns")
    c->half_open_timeout_ns = f.u;
  else if (k == "policy")
    c->policy = int(f.u);
  else if (k == "window_size")
    c->window_size = u32;
  else if (k == "window_duration_ns")
    c->window_duration_ns = f.u;
  else if (k == "window_buckets")
    c->window_buckets = u32;
  else if (k == "minimum_calls")
    c->minimum_calls = u32;
  else if (k == "failure_rate_threshold")
    c->failure_rate_threshold = f.d;
  else if (k == "slow_call_ns")
    c->slow_call_ns = f.u;
  else if (k == "slow_call_rate_threshold")
    c->slow_call_rate_threshold = f.d;
  else if (k == "open_backoff_multiplier")
    c->open_backoff_multiplier = f.d;
  else if (k == "open_duration_max_ns")
    c->open_duration_max_ns = f.u;
  else if (k == "open_jitter")
    c->open_jitter = f.d;
  else
    return *why = "runner bug: no setter", false;
  return true;
}

// What a run saw, one line per step: compared between a private and a
// shared registry.
using Transcript = std::vector<std::string>;

// Everything a breaker shows without moving: state, retry_after, counters.
std::string snapshot(cb_handle h) {
  cb_stats s;
  std::memset(&s, 0, sizeof s);
  s.struct_size = sizeof s;
  uint64_t wait = 0;
  const int rs = cb_retry_after(h, &wait);
  const int ss = cb_stats_get(h, &s);
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "state=%s retry_after=%s%" PRIu64 " stats=%s admitted=%" PRIu64 " rejected=%" PRIu64
                " successes=%" PRIu64 " failures=%" PRIu64 " ignored=%" PRIu64 " trips=%" PRIu64
                " consecutive_failures=%" PRIu32 " slow=%" PRIu64
                " failure_rate=%.17g slow_rate=%.17g state_ns=%" PRIu64,
                state_name(cb_state(h)), rs == CB_OK ? "" : cb_strerror(rs), wait,
                ss == CB_OK ? "ok" : cb_strerror(ss), s.admitted, s.rejected, s.successes,
                s.failures, s.ignored, s.trips, s.consecutive_failures, s.slow, s.failure_rate,
                s.slow_rate, s.state_ns);
  return buf;
}

class Runner {
 public:
  Runner(std::string file, uint64_t clock_offset)
      : file_(std::move(file)), clock_offset_(clock_offset) {}

  // False on the first mismatch in the scenario (reported). With a path,
  // the registry is a fresh shared one in that file (removed afterwards).
  // Each step's result and the breaker's look after it go to *transcript.
  bool run(const Scenario &sc, const std::string &shared_path, Transcript *transcript) {
    cb_registry_options o;
    cb_registry_options_init(&o);
    o.clock = CB_CLOCK_MANUAL;
    o.capacity = 1;
    if (!shared_path.empty()) {
      o.path = shared_path.c_str();
      o.flags = CB_REGISTRY_CREATE | CB_REGISTRY_EXCLUSIVE;
    }
    cb_registry *reg = nullptr;
    if (const int st = cb_registry_open(&o, &reg); st != CB_OK)
      return fail(sc.line, "cb_registry_open%s%s: %s: %s", shared_path.empty() ? "" : " ",
                  shared_path.c_str(), cb_strerror(st), cb_last_error_message());
    transcript_ = transcript;
    const bool ok = run_in(reg, sc);
    transcript_ = nullptr;
    cb_registry_close(reg);
    if (!shared_path.empty()) std::remove(shared_path.c_str());
    return ok;
  }

 private:
  void record(int line, const char *result, cb_handle h) {
    if (transcript_ != nullptr)
      transcript_->push_back(std::to_string(line) + ": " + result + " -> " + snapshot(h));
  }

  bool run_in(cb_registry *reg, const Scenario &sc) {
    cb_config cfg;
    cb_config_init(&cfg);
    size_t i = 0;
    if (!sc.steps.empty() && sc.steps[0].op == Op::Config) {
      for (const Field &f : sc.steps[0].fields) {
        std::string why;
        if (!set_config(&cfg, f, &why))
          return fail(sc.steps[0].line, "%s=%" PRIu64 ": %s", f.key.c_str(), f.u, why.c_str());
      }
      i = 1;
    }
    if (clock_offset_ != 0) {
      // Time-window buckets start at multiples of their width, so an offset
      // that is not one would move every bucket boundary the scenario relies on.
      if (cfg.policy == CB_POLICY_TIME_WINDOW && cfg.window_buckets != 0 &&
          clock_offset_ % std::max<uint64_t>(1, cfg.window_duration_ns / cfg.window_buckets) != 0)
        return fail(sc.line,
                    "the time window's bucket width does not divide the clock offset %" PRIu64,
                    clock_offset_);
      if (const int st = cb_clock_advance(reg, clock_offset_); st != CB_OK)
        return fail(sc.line, "advance by the clock offset: %s", cb_strerror(st));
    }
    cb_handle h = 0;
    if (const int st = cb_create(reg, sc.name.c_str(), &cfg, &h); st != CB_OK)
      return fail(i == 1 ? sc.steps[0].line : sc.line, "cb_create: %s: %s", cb_strerror(st),
                  cb_last_error_message());
    record(i == 1 ? sc.steps[0].line : sc.line, "created", h);
    std::map<std::string, cb_ticket> tickets;
    for (; i < sc.steps.size(); ++i) {
      const Step &s = sc.steps[i];
      step_result_ = "ok";
      switch (s.op) {
        case Op::AllowOk:
        case Op::AllowRejected: {
          cb_ticket t = 0;
          const int st = cb_allow(h, &t);
          const int want = s.op == Op::AllowOk ? CB_OK : CB_REJECTED;
          if (st != want)
            return fail(s.line, "allow: expected %s, got %s (state %s)",
                        want == CB_OK ? "ok" : "rejected",
                        st == CB_OK         ? "ok"
                        : st == CB_REJECTED ? "rejected"
                                            : cb_strerror(st),
                        state_name(cb_state(h)));
          if (st == CB_OK) tickets[s.name] = t;
          step_result_ = st == CB_OK ? "allow ok" : "allow rejected";
          break;
        }
        case Op::Done:
          if (const int st = cb_done(h, tickets.at(s.name), int(s.value)); st != CB_OK)
            return fail(s.line, "done: expected CB_OK, got %s: %s", cb_strerror(st),
                        cb_last_error_message());
          break;
        case Op::Advance:
          if (const int st = cb_clock_advance(reg, s.value); st != CB_OK)
            return fail(s.line, "advance: %s: %s", cb_strerror(st), cb_last_error_message());
          break;
        case Op::State:
          if (const int st = cb_state(h); st != int(s.value))
            return fail(s.line, "state: expected %s, got %s", state_name(int(s.value)),
                        state_name(st));
          break;
        case Op::RetryAfter: {
          uint64_t ns = 0;
          if (const int st = cb_retry_after(h, &ns); st != CB_OK)
            return fail(s.line, "retry_after: %s", cb_strerror(st));
          if (ns != s.value)
            return fail(s.line, "retry_after: expected %" PRIu64 ", got %" PRIu64 " (state %s)",
                        s.value, ns, state_name(cb_state(h)));
          break;
        }
        case Op::ForceOpen:
        case Op::Disable:
        case Op::Reset: {
          const int st = s.op == Op::ForceOpen ? cb_force_open(h)
                         : s.op == Op::Disable ? cb_disable(h)
                                               : cb_reset(h);
          if (st != CB_OK) return fail(s.line, "%s", cb_strerror(st));
          break;
        }
        case Op::Trip:
          if (const int st = cb_trip(h, s.value); st != CB_OK)
            return fail(s.line, "trip: expected CB_OK, got %s: %s", cb_strerror(st),
                        cb_last_error_message());
          break;
        case Op::Stats: {
          cb_stats got;
          std::memset(&got, 0, sizeof got);
          got.struct_size = sizeof got;
          if (const int st = cb_stats_get(h, &got); st != CB_OK)
            return fail(s.line, "stats: %s", cb_strerror(st));
          for (const Field &f : s.fields) {
            if (f.kind == Kind::Decimal) {
              const double v = stat_decimal(got, f.key);
              if (!(std::fabs(v - f.d) <= kRateTolerance))
                return fail(s.line, "stats: expected %s=%.17g, got %.17g", f.key.c_str(), f.d, v);
            } else if (stat_u64(got, f.key) != f.u) {
              return fail(s.line, "stats: expected %s=%" PRIu64 ", got %" PRIu64, f.key.c_str(),
                          f.u, stat_u64(got, f.key));
            }
          }
          break;
        }
        case Op::Scenario:
        case Op::Config:
          return fail(s.line, "runner bug: unexpected step");
      }
      record(s.line, step_result_, h);
    }
    return true;
  }

  [[gnu::format(printf, 3, 4)]] bool fail(int line, const char *fmt, ...) {
    std::fprintf(stderr, "%s:%d: mismatch: ", file_.c_str(), line);
    va_list args;
    va_start(args, fmt);
    std::vfprintf(stderr, fmt, args);
    va_end(args);
    std::fputc('\n', stderr);
    return false;
  }

  std::string file_;
  uint64_t clock_offset_;
  Transcript *transcript_ = nullptr;
  const char *step_result_ = "";  // what the step returned, for the transcript
};

enum Exit { kPass = 0, kMismatch = 1, kMalformed = 2 };

// A registry file for one scenario's shared run, unique to this process.
std::string shared_file(const std::string &dir, const Scenario &sc) {
  return dir + "/lb-conformance-" + std::to_string(getpid()) + "-" + sc.name + ".cbr";
}

// False (reported) at the first step whose transcript differs.
bool same_transcripts(const std::string &path, const Scenario &sc, const Transcript &priv,
                      const Transcript &shared) {
  for (size_t i = 0; i < std::max(priv.size(), shared.size()); ++i) {
    const std::string a = i < priv.size() ? priv[i] : "(no step)";
    const std::string b = i < shared.size() ? shared[i] : "(no step)";
    if (a != b) {
      std::fprintf(stderr,
                   "%s:%d: mismatch: scenario %s: the shared registry differs from the "
                   "private one at step %zu (LINE: step -> what the breaker shows after it)\n"
                   "  private: %s\n  shared:  %s\n",
                   path.c_str(), sc.line, sc.name.c_str(), i, a.c_str(), b.c_str());
      return false;
    }
  }
  return true;
}

Exit run_file(const std::string &path, uint64_t clock_offset, const std::string &shared_dir) {
  std::ifstream in(path);
  if (!in) {
    std::fprintf(stderr, "%s: cannot open: %s\n", path.c_str(), std::strerror(errno));
    return kMalformed;
  }
  std::vector<Scenario> scenarios;
  if (!Parser(path).parse(in, &scenarios)) return kMalformed;
  Runner runner(path, clock_offset);
  Exit result = kPass;
  for (const Scenario &sc : scenarios) {
    Transcript priv, shared;
    bool ok = runner.run(sc, "", &priv);
    if (!shared_dir.empty()) {
      const bool shared_ok = runner.run(sc, shared_file(shared_dir, sc), &shared);
      ok = shared_ok && ok && same_transcripts(path, sc, priv, shared);
    }
    if (ok) {
      std::printf("ok    %s:%d %s%s\n", path.c_str(), sc.line, sc.name.c_str(),
                  shared_dir.empty() ? "" : " (private and shared, identical transcripts)");
    } else {
      std::printf("FAIL  %s:%d %s\n", path.c_str(), sc.line, sc.name.c_str());
      result = kMismatch;
    }
  }
  return result;
}

}  // namespace

int main(int argc, char **argv) {
  int expect = kPass;
  int first = 1;
  uint64_t clock_offset = 0;
  std::string shared_dir;
  if (argc >= first + 2 && std::strcmp(argv[first], "--clock-offset") == 0) {
    if (!parse_u64(argv[first + 1], &clock_offset))
      return std::fprintf(stderr, "--clock-offset takes nanoseconds as a plain decimal\n"),
             kMalformed;
    first += 2;
  }
  if (argc >= first + 2 && std::strcmp(argv[first], "--shared") == 0) {
    shared_dir = argv[first + 1];
    if (shared_dir.empty()) return std::fprintf(stderr, "--shared takes a directory\n"), kMalformed;
    first += 2;
  }
  if (argc >= first + 2 && std::strcmp(argv[first], "--expect") == 0) {
    if (std::strcmp(argv[first + 1], "malformed") == 0)
      expect = kMalformed;
    else if (std::strcmp(argv[first + 1], "mismatch") == 0)
      expect = kMismatch;
    else
      return std::fprintf(stderr, "--expect takes malformed or mismatch\n"), kMalformed;
    first += 2;
  }
  if (first >= argc)
    return std::fprintf(stderr,
                        "usage: %s [--clock-offset N] [--shared DIR] [--expect "
                        "malformed|mismatch] FILE...\n",
                        argv[0]),
           kMalformed;
  int worst = kPass;
  for (int i = first; i < argc; ++i) {
    const Exit e = run_file(argv[i], clock_offset, shared_dir);
    if (expect != kPass && e != expect) {
      std::fprintf(stderr, "%s: expected the runner to find it %s, but it did not\n", argv[i],
                   expect == kMalformed ? "malformed" : "mismatching");
      return 1;
    }
    if (e > worst) worst = e;
  }
  return expect != kPass ? kPass : worst;
}
