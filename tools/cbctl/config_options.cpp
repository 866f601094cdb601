#include "config_options.hpp"

#include "format.hpp"

namespace cbctl {

namespace {

// FIELD(f): the field's name and its member, written once.
#define FIELD(f) #f, &cb_config::f
constexpr ConfigOption kConfigOptions[] = {
    {"--policy", FIELD(policy), nullptr, "Trip policy: consecutive (the default), count or time"},
    {"--failure-threshold", FIELD(failure_threshold), nullptr,
     "consecutive: failures in a row that trip (default 5)"},
    {"--open-for", FIELD(open_duration_ns), nullptr, "How long OPEN rejects (default 30s)"},
    {"--half-open-calls", FIELD(half_open_max_calls), nullptr,
     "Probes admitted at once (default 1)"},
    {"--half-open-successes", FIELD(half_open_success_threshold), nullptr,
     "Probe successes that close (default 1)"},
    {"--half-open-timeout", FIELD(half_open_timeout_ns), nullptr,
     "A probe silent this long counts as failed (default: --open-for)"},
    {"--window-size", FIELD(window_size), nullptr, "count: outcomes in the window (default 100)"},
    {"--window-duration", FIELD(window_duration_ns), nullptr,
     "time: the window's length (default 60s)"},
    {"--window-buckets", FIELD(window_buckets), nullptr,
     "time: buckets of the window (default 10)"},
    {"--minimum-calls", FIELD(minimum_calls), nullptr,
     "count, time: outcomes in the window before a rate trips (default 100)"},
    {"--failure-rate", FIELD(failure_rate_threshold), nullptr,
     "count, time: failure rate that trips, (0, 1] (default 0.5)"},
    {"--slow-call", FIELD(slow_call_ns), "off",
     "A call longer than this is slow (default: not tracked)"},
    {"--slow-call-rate", FIELD(slow_call_rate_threshold), nullptr,
     "Slow-call rate that trips, (0, 1] (default 1)"},
    {"--backoff", FIELD(open_backoff_multiplier), nullptr,
     "Open duration multiplier per trip in a row, 1..1000 (default 1)"},
    {"--open-for-max", FIELD(open_duration_max_ns), "no cap",
     "Cap of backoff and jitter (default: no cap)"},
    {"--jitter", FIELD(open_jitter), nullptr,
     "Open durations scaled by a random factor in [1-j, 1+j], [0, 1)"},
};
#undef FIELD

// Every field of the header's list has its option: a field added there
// stops this build until create can set it.
constexpr bool has_option(std::string_view field) {
  for (const ConfigOption &o : kConfigOptions) {
    if (field == o.field) return true;
  }
  return false;
}
#define LB_HAS_OPTION(field, type, since, unit, bounds, lo, hi, def) \
  static_assert(has_option(#field), "cbctl create has no option for cb_config." #field);
CB_CONFIG_FIELDS(LB_HAS_OPTION)
#undef LB_HAS_OPTION

// By cb_policy_t.
constexpr std::string_view kPolicyNames[] = {"consecutive", "count", "time"};
static_assert(CB_POLICY_CONSECUTIVE == 0 && CB_POLICY_COUNT_WINDOW == 1 &&
              CB_POLICY_TIME_WINDOW == 2);

// A value's text: `json` in nanoseconds and with the policy quoted.
struct ValueText {
  const ConfigOption &o;
  const cb_config &cfg;
  bool json;
  std::string operator()(uint32_t cb_config::*m) const { return std::to_string(cfg.*m); }
  std::string operator()(double cb_config::*m) const { return json_number(cfg.*m); }
  std::string operator()(uint64_t cb_config::*m) const {
    if (json) return std::to_string(cfg.*m);
    return cfg.*m == 0 && o.zero ? o.zero : exact_duration(cfg.*m);
  }
  std::string operator()(int cb_config::*m) const {
    std::string_view name = policy_name(cfg.*m);
    std::string text = name.empty() ? std::to_string(cfg.*m) : std::string(name);
    return json && !name.empty() ? json_string(text) : text;
  }
};

}  // namespace

std::span<const ConfigOption> config_options() { return kConfigOptions; }

const ConfigOption *config_option_for(std::string_view field) {
  for (const ConfigOption &o : kConfigOptions) {
    if (field == o.field) return &o;
  }
  return nullptr;
}

std::string_view policy_name(int policy) {
  if (policy < 0 || policy >= static_cast<int>(std::size(kPolicyNames))) return {};
  return kPolicyNames[policy];
}

std::vector<std::string> policy_names() {
  return std::vector<std::string>(std::begin(kPolicyNames), std::end(kPolicyNames));
}

int policy_named(std::string_view name) {
  for (size_t i = 0; i < std::size(kPolicyNames); ++i) {
    if (name == kPolicyNames[i]) return static_cast<int>(i);
  }
  return CB_POLICY_CONSECUTIVE;
}

std::string config_value_text(const ConfigOption &o, const cb_config &cfg) {
  return std::visit(ValueText{o, cfg, false}, o.member);
}

std::string config_value_json(const ConfigOption &o, const cb_config &cfg) {
  return std::visit(ValueText{o, cfg, true}, o.member);
}

}  // namespace cbctl
