// The .scn parser (README.md, "Format"): the one reader of the scenario
// files, for the C++ runner and the step streams alike. The whole file is
// parsed before anything runs, so a typo anywhere fails the test instead of
// being skipped.
#include "scenario.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string_view>
#include <type_traits>

namespace lb_conformance {
namespace {

// The format's state names are the library's (cb_state_name).
const std::map<std::string, int> kStates = {
#define LB_STATE(enumerator, name) {name, enumerator},
    CB_STATE_LIST(LB_STATE)
#undef LB_STATE
};
const std::map<std::string, int> kOutcomes = {
    {"success", CB_SUCCESS}, {"failure", CB_FAILURE}, {"ignored", CB_IGNORED}};
const std::map<std::string, int> kPolicies = {{"consecutive", CB_POLICY_CONSECUTIVE},
                                              {"count_window", CB_POLICY_COUNT_WINDOW},
                                              {"time_window", CB_POLICY_TIME_WINDOW}};

// How a field of the given C type and unit (lists.h) is written.
template <class T>
constexpr Kind kind_of(std::string_view unit) {
  if (unit == "policy") return Kind::Policy;
  if (std::is_same_v<T, double>) return Kind::Decimal;
  return sizeof(T) == sizeof(uint32_t) ? Kind::U32 : Kind::U64;
}

// A config key for every field of cb_config, in its order: the keys a
// scenario may set are the library's own list (lists.h).
constexpr ConfigKey kConfigKeys[] = {
#define LB_CONFIG_KEY(field, type, since, unit, ...) \
  {#field, kind_of<type>(#unit), offsetof(cb_config, field)},
    CB_CONFIG_FIELDS(LB_CONFIG_KEY)
#undef LB_CONFIG_KEY
};
static_assert(kConfigKeys[0].kind == Kind::U32 && kConfigKeys[1].kind == Kind::U64 &&
              kConfigKeys[5].kind == Kind::Policy && kConfigKeys[10].kind == Kind::Decimal);
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

}  // namespace

std::span<const ConfigKey> config_keys() { return kConfigKeys; }

const char *state_name(int s) {
  for (const auto &[name, v] : kStates)
    if (v == s) return name.c_str();
  return s < 0 ? cb_strerror(s) : "unknown state";
}

const char *outcome_name(uint64_t outcome) {
  for (const auto &[name, v] : kOutcomes)
    if (uint64_t(v) == outcome) return name.c_str();
  return "unknown outcome";
}

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

namespace {

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

template <class T>
T config_get(const cb_config &c, const ConfigKey &k) {
  T v;
  std::memcpy(&v, reinterpret_cast<const unsigned char *>(&c) + k.offset, sizeof v);
  return v;
}

}  // namespace

std::string decimal_text(double d) {
  char buf[400];  // DBL_MAX has 309 digits
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::fixed);
  return ec == std::errc() ? std::string(buf, end) : "nan";
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

Exit parse_file(const std::string &path, std::vector<Scenario> *scenarios) {
  std::ifstream in(path);
  if (!in) {
    std::fprintf(stderr, "%s: cannot open: %s\n", path.c_str(), std::strerror(errno));
    return kMalformed;
  }
  return Parser(path).parse(in, scenarios) ? kPass : kMalformed;
}

}  // namespace lb_conformance
