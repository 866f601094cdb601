// The C++ conformance runner: the one parser of the scenario files
// (tests/conformance/*.scn, format in README.md). It executes them through
// the C ABI, each scenario on a fresh manual-clock registry, or writes them
// as a step stream that every binding's runner interprets.
//
//   lb_conformance [--clock-offset N] [--shared DIR] [--expect malformed|mismatch] FILE...
//   lb_conformance [--clock-offset N] --emit OUT [--expect malformed|mismatch] FILE
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
// --emit OUT runs nothing: it writes FILE's step stream (README.md, "Step
// streams") to OUT, with the clock offset as a step of its own, or removes
// OUT when FILE is malformed or a scenario cannot run as written.
//
// Exit status: 0 every step matched (or the stream is written); 1 a step did
// not match (reported as file:line: ...); 2 a file is malformed (every bad
// line is reported, and nothing runs) or cannot be read. With --expect, the
// runner checks itself: it exits 0 exactly when the files fail in the
// expected way.
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
#include <cstddef>
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
// The config keys in cb_config's order, which is the order a step stream
// lists them in, each with the field it sets.
struct ConfigKey {
  const char *name;
  Kind kind;
  size_t offset;
};
#define LB_CONFIG_KEY(field, kind) \
  { #field, Kind::kind, offsetof(cb_config, field) }
constexpr ConfigKey kConfigKeys[] = {
    LB_CONFIG_KEY(failure_threshold, U32),
    LB_CONFIG_KEY(open_duration_ns, U64),
    LB_CONFIG_KEY(half_open_max_calls, U32),
    LB_CONFIG_KEY(half_open_success_threshold, U32),
    LB_CONFIG_KEY(half_open_timeout_ns, U64),
    // 1.1
    LB_CONFIG_KEY(policy, Policy),
    LB_CONFIG_KEY(window_size, U32),
    LB_CONFIG_KEY(window_duration_ns, U64),
    LB_CONFIG_KEY(window_buckets, U32),
    LB_CONFIG_KEY(minimum_calls, U32),
    LB_CONFIG_KEY(failure_rate_threshold, Decimal),
    LB_CONFIG_KEY(slow_call_ns, U64),
    LB_CONFIG_KEY(slow_call_rate_threshold, Decimal),
    LB_CONFIG_KEY(open_backoff_multiplier, Decimal),
    LB_CONFIG_KEY(open_duration_max_ns, U64),
    LB_CONFIG_KEY(open_jitter, Decimal),
};
#undef LB_CONFIG_KEY
const std::map<std::string, Kind> kConfigKinds = [] {
  std::map<std::string, Kind> m;
  for (const ConfigKey &k : kConfigKeys) m.emplace(k.name, k.kind);
  return m;
}();
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
      if (!fields(t, kConfigKinds, &st, why)) return false;
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

const ConfigKey &config_key(const std::string &name) {
  for (const ConfigKey &k : kConfigKeys)
    if (name == k.name) return k;
  std::abort();  // the parser admits no other key
}

// Sets one config field; false (with *why) if the value does not fit it.
bool set_config(cb_config *c, const Field &f, std::string *why) {
  unsigned char *at = reinterpret_cast<unsigned char *>(c) + config_key(f.key).offset;
  switch (f.kind) {
    case Kind::U32: {
      if (f.u > UINT32_MAX) return *why = "out of range", false;
      const auto v = uint32_t(f.u);
      std::memcpy(at, &v, sizeof v);
      break;
    }
    case Kind::U64:
      std::memcpy(at, &f.u, sizeof f.u);
      break;
    case Kind::Policy: {
      const int v = int(f.u);
      std::memcpy(at, &v, sizeof v);
      break;
    }
    case Kind::Decimal:
      std::memcpy(at, &f.d, sizeof f.d);
      break;
  }
  return true;
}

// A double as the shortest digits[.digits] that reads back as the same
// double: the .scn's own decimal syntax, which every language parses.
std::string decimal_text(double d) {
  char buf[400];  // DBL_MAX has 309 digits
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::fixed);
  return ec == std::errc() ? std::string(buf, end) : "nan";
}

template <class T>
T config_get(const cb_config &c, const ConfigKey &k) {
  T v;
  std::memcpy(&v, reinterpret_cast<const unsigned char *>(&c) + k.offset, sizeof v);
  return v;
}

std::string config_text(const cb_config &c, const ConfigKey &k) {
  switch (k.kind) {
    case Kind::U32:
      return std::to_string(config_get<uint32_t>(c, k));
    case Kind::U64:
      return std::to_string(config_get<uint64_t>(c, k));
    case Kind::Policy:
      for (const auto &[name, v] : kPolicies)
        if (v == config_get<int>(c, k)) return name;
      return std::to_string(config_get<int>(c, k));
    case Kind::Decimal:
      return decimal_text(config_get<double>(c, k));
  }
  return "";
}

// A scenario's configuration: cb_config_init's defaults under its config
// line. False, with the line at fault and why, when the scenario cannot run
// as written: a value that does not fit its field, or (at a clock offset) a
// time window whose bucket width does not divide the offset.
bool resolve(const Scenario &sc, uint64_t clock_offset, cb_config *cfg, int *line,
             std::string *why) {
  cb_config_init(cfg);
  *line = sc.line;
  if (!sc.steps.empty() && sc.steps[0].op == Op::Config) {
    *line = sc.steps[0].line;
    for (const Field &f : sc.steps[0].fields)
      if (!set_config(cfg, f, why))
        return *why = f.key + "=" + std::to_string(f.u) + ": " + *why, false;
  }
  // Time-window buckets start at multiples of their width, so an offset
  // that is not one would move every bucket boundary the scenario relies on.
  if (clock_offset != 0 && cfg->policy == CB_POLICY_TIME_WINDOW && cfg->window_buckets != 0 &&
      clock_offset % std::max<uint64_t>(1, cfg->window_duration_ns / cfg->window_buckets) != 0) {
    *line = sc.line;
    *why = "the time window's bucket width does not divide the clock offset " +
           std::to_string(clock_offset);
    return false;
  }
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
    int cfg_line = 0;
    if (std::string why; !resolve(sc, clock_offset_, &cfg, &cfg_line, &why))
      return fail(cfg_line, "%s", why.c_str());
    const size_t first = sc.steps[0].op == Op::Config ? 1 : 0;
    if (clock_offset_ != 0)
      if (const int st = cb_clock_advance(reg, clock_offset_); st != CB_OK)
        return fail(sc.line, "advance by the clock offset: %s", cb_strerror(st));
    cb_handle h = 0;
    if (const int st = cb_create(reg, sc.name.c_str(), &cfg, &h); st != CB_OK)
      return fail(cfg_line, "cb_create: %s: %s", cb_strerror(st), cb_last_error_message());
    record(cfg_line, "created", h);
    std::map<std::string, cb_ticket> tickets;
    for (size_t i = first; i < sc.steps.size(); ++i) {
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

const char *outcome_name(uint64_t outcome) {
  for (const auto &[name, v] : kOutcomes)
    if (uint64_t(v) == outcome) return name.c_str();
  return "unknown outcome";
}

// The steps of one scenario after its breaker is created, as stream lines.
void emit_steps(const Scenario &sc, std::ostream &o) {
  for (const Step &s : sc.steps) {
    switch (s.op) {
      case Op::Scenario:
      case Op::Config:
        break;  // written before the breaker is created
      case Op::AllowOk:
        o << "allow " << s.line << " ok " << s.name << '\n';
        break;
      case Op::AllowRejected:
        o << "allow " << s.line << " rejected\n";
        break;
      case Op::Done:
        o << "done " << s.line << ' ' << s.name << ' ' << outcome_name(s.value) << '\n';
        break;
      case Op::Advance:
        o << "advance " << s.line << ' ' << s.value << '\n';
        break;
      case Op::State:
        o << "state " << s.line << ' ' << state_name(int(s.value)) << '\n';
        break;
      case Op::RetryAfter:
        o << "retry_after " << s.line << ' ' << s.value << '\n';
        break;
      case Op::ForceOpen:
        o << "force_open " << s.line << '\n';
        break;
      case Op::Disable:
        o << "disable " << s.line << '\n';
        break;
      case Op::Reset:
        o << "reset " << s.line << '\n';
        break;
      case Op::Trip:
        o << "trip " << s.line << ' ' << s.value << '\n';
        break;
      case Op::Stats:
        for (const Field &f : s.fields)
          if (f.kind == Kind::Decimal)
            o << "rate " << s.line << ' ' << f.key << ' ' << decimal_text(f.d) << '\n';
          else
            o << "count " << s.line << ' ' << f.key << ' ' << f.u << '\n';
        break;
    }
  }
}

// The scenarios as a step stream (README.md, "Step streams"); false
// (reported as a mismatch) when one of them cannot run as written.
bool emit(const std::string &path, const std::vector<Scenario> &scenarios, uint64_t clock_offset,
          std::ostream &o) {
  o << "lbsteps 1 " << path << '\n';
  bool ok = true;
  for (const Scenario &sc : scenarios) {
    cb_config cfg;
    int line = 0;
    if (std::string why; !resolve(sc, clock_offset, &cfg, &line, &why)) {
      std::fprintf(stderr, "%s:%d: mismatch: %s\n", path.c_str(), line, why.c_str());
      ok = false;
      continue;
    }
    const std::vector<Field> none;
    const auto &given = sc.steps[0].op == Op::Config ? sc.steps[0].fields : none;
    o << "scenario " << sc.line << ' ' << sc.name << '\n';
    for (const ConfigKey &k : kConfigKeys) {
      // The policy is always set, so that no binding infers one from the
      // other options (README.md, "Step streams").
      const bool set =
          k.kind == Kind::Policy ||
          std::any_of(given.begin(), given.end(), [&](const Field &f) { return f.key == k.name; });
      o << "config " << line << ' ' << k.name << ' ' << config_text(cfg, k)
        << (set ? " set\n" : " default\n");
    }
    if (clock_offset != 0) o << "advance " << sc.line << ' ' << clock_offset << '\n';
    o << "create " << line << '\n';
    emit_steps(sc, o);
    o << "end " << sc.line << '\n';
  }
  return ok;
}

Exit parse_file(const std::string &path, std::vector<Scenario> *scenarios) {
  std::ifstream in(path);
  if (!in) {
    std::fprintf(stderr, "%s: cannot open: %s\n", path.c_str(), std::strerror(errno));
    return kMalformed;
  }
  return Parser(path).parse(in, scenarios) ? kPass : kMalformed;
}

// Writes the file's step stream to out_path, and nothing when the file is
// malformed or a scenario cannot run as written.
Exit emit_file(const std::string &path, uint64_t clock_offset, const std::string &out_path) {
  std::remove(out_path.c_str());  // no stale stream outlives a failed one
  std::vector<Scenario> scenarios;
  if (const Exit e = parse_file(path, &scenarios); e != kPass) return e;
  std::ostringstream text;
  if (!emit(path, scenarios, clock_offset, text)) return kMismatch;
  std::ofstream out(out_path, std::ios::binary);
  out << text.str();
  out.close();
  if (!out) {
    std::fprintf(stderr, "%s: cannot write: %s\n", out_path.c_str(), std::strerror(errno));
    std::remove(out_path.c_str());
    return kMalformed;
  }
  return kPass;
}

Exit run_file(const std::string &path, uint64_t clock_offset, const std::string &shared_dir) {
  std::vector<Scenario> scenarios;
  if (const Exit e = parse_file(path, &scenarios); e != kPass) return e;
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
  std::string shared_dir, emit_path;
  if (argc >= first + 2 && std::strcmp(argv[first], "--clock-offset") == 0) {
    if (!parse_u64(argv[first + 1], &clock_offset))
      return std::fprintf(stderr, "--clock-offset takes nanoseconds as a plain decimal\n"),
             kMalformed;
    first += 2;
  }
  if (argc >= first + 2 && std::strcmp(argv[first], "--emit") == 0) {
    emit_path = argv[first + 1];
    if (emit_path.empty()) return std::fprintf(stderr, "--emit takes a file\n"), kMalformed;
    first += 2;
  } else if (argc >= first + 2 && std::strcmp(argv[first], "--shared") == 0) {
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
  if (first >= argc || (!emit_path.empty() && first + 1 != argc))
    return std::fprintf(stderr,
                        "usage: %s [--clock-offset N] [--shared DIR] [--expect "
                        "malformed|mismatch] FILE...\n"
                        "       %s [--clock-offset N] --emit OUT [--expect "
                        "malformed|mismatch] FILE\n",
                        argv[0], argv[0]),
           kMalformed;
  int worst = kPass;
  for (int i = first; i < argc; ++i) {
    const Exit e = emit_path.empty() ? run_file(argv[i], clock_offset, shared_dir)
                                     : emit_file(argv[i], clock_offset, emit_path);
    if (expect != kPass && e != expect) {
      std::fprintf(stderr, "%s: expected the runner to find it %s, but it did not\n", argv[i],
                   expect == kMalformed ? "malformed" : "mismatching");
      return 1;
    }
    if (e > worst) worst = e;
  }
  return expect != kPass ? kPass : worst;
}
