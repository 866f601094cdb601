#include "options.hpp"

#include <variant>

#include "format.hpp"

namespace cbctl {

CLI::Validator duration_validator() {
  return CLI::Validator(
      [](std::string &text) {
        std::string why;
        return parse_duration(text, &why) ? std::string() : why;
      },
      "DURATION");
}

uint64_t duration(const std::string &text) { return parse_duration(text, nullptr).value_or(0); }

CLI::Validator octal_mode_validator() {
  return CLI::Validator(
      [](std::string &text) {
        if (text.empty() || text.size() > 5 ||
            text.find_first_not_of("01234567") != std::string::npos)
          return "bad mode '" + text + "': octal permission bits, e.g. 0660";
        return std::string();
      },
      "OCTAL");
}

bool parse_listen(const std::string &text, ServeOptions *out, std::string *why) {
  size_t colon = text.rfind(':');
  if (colon == std::string::npos) {
    *why = "expected HOST:PORT, e.g. 127.0.0.1:9464";
    return false;
  }
  std::string host = text.substr(0, colon), port = text.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  if (host.empty()) host = "0.0.0.0";
  if (port.empty() || port.size() > 5 ||
      port.find_first_not_of("0123456789") != std::string::npos || std::stoi(port) > 65535) {
    *why = "bad port '" + port + "': 0..65535 (0: any free port)";
    return false;
  }
  out->host = host;
  out->port = std::stoi(port);
  return true;
}

CLI::Validator listen_validator() {
  return CLI::Validator(
      [](std::string &text) {
        ServeOptions ignored;
        std::string why;
        return parse_listen(text, &ignored, &why) ? std::string() : why;
      },
      "HOST:PORT");
}

namespace {

// The field an option sets, by its type: a count or a rate is taken as
// CLI11 converts it, a duration as parse_duration reads it, the policy by
// its name.
using Member = std::variant<uint32_t cb_config::*, uint64_t cb_config::*, double cb_config::*,
                            int cb_config::*>;
struct ConfigOption {
  const char *flag;
  const char *field;  // the member's name, as cb_last_error_field() names it
  Member member;
  const char *help;
};

// In the order of `cbctl create --help`. FIELD(f): the name and the member,
// written once.
#define FIELD(f) #f, &cb_config::f
const ConfigOption kConfigOptions[] = {
    {"--policy", FIELD(policy), "Trip policy: consecutive (the default), count or time"},
    {"--failure-threshold", FIELD(failure_threshold),
     "consecutive: failures in a row that trip (default 5)"},
    {"--open-for", FIELD(open_duration_ns), "How long OPEN rejects (default 30s)"},
    {"--half-open-calls", FIELD(half_open_max_calls), "Probes admitted at once (default 1)"},
    {"--half-open-successes", FIELD(half_open_success_threshold),
     "Probe successes that close (default 1)"},
    {"--half-open-timeout", FIELD(half_open_timeout_ns),
     "A probe silent this long counts as failed (default: --open-for)"},
    {"--window-size", FIELD(window_size), "count: outcomes in the window (default 100)"},
    {"--window-duration", FIELD(window_duration_ns), "time: the window's length (default 60s)"},
    {"--window-buckets", FIELD(window_buckets), "time: buckets of the window (default 10)"},
    {"--minimum-calls", FIELD(minimum_calls),
     "count, time: outcomes in the window before a rate trips (default 100)"},
    {"--failure-rate", FIELD(failure_rate_threshold),
     "count, time: failure rate that trips, (0, 1] (default 0.5)"},
    {"--slow-call", FIELD(slow_call_ns), "A call longer than this is slow (default: not tracked)"},
    {"--slow-call-rate", FIELD(slow_call_rate_threshold),
     "Slow-call rate that trips, (0, 1] (default 1)"},
    {"--backoff", FIELD(open_backoff_multiplier),
     "Open duration multiplier per trip in a row, 1..1000 (default 1)"},
    {"--open-for-max", FIELD(open_duration_max_ns), "Cap of backoff and jitter (default: no cap)"},
    {"--jitter", FIELD(open_jitter),
     "Open durations scaled by a random factor in [1-j, 1+j], [0, 1)"},
};
#undef FIELD

int policy_named(const std::string &name) {
  if (name == "count") return CB_POLICY_COUNT_WINDOW;
  if (name == "time") return CB_POLICY_TIME_WINDOW;
  return CB_POLICY_CONSECUTIVE;
}

CLI::Option *add_config_option(CLI::App *cmd, cb_config *cfg, const ConfigOption &o) {
  struct Add {
    CLI::App *cmd;
    cb_config *cfg;
    const ConfigOption &o;
    CLI::Option *operator()(uint32_t cb_config::*m) const {
      return cmd->add_option(o.flag, cfg->*m, o.help);
    }
    CLI::Option *operator()(double cb_config::*m) const {
      return cmd->add_option(o.flag, cfg->*m, o.help);
    }
    CLI::Option *operator()(uint64_t cb_config::*m) const {
      auto set = [c = cfg, m](const std::string &text) { c->*m = duration(text); };
      return cmd->add_option_function<std::string>(o.flag, set, o.help)
          ->check(duration_validator());
    }
    CLI::Option *operator()(int cb_config::*m) const {
      auto set = [c = cfg, m](const std::string &text) { c->*m = policy_named(text); };
      return cmd->add_option_function<std::string>(o.flag, set, o.help)
          ->check(CLI::IsMember({"consecutive", "count", "time"}));
    }
  };
  return std::visit(Add{cmd, cfg, o}, o.member);
}

}  // namespace

void add_config_options(CLI::App *cmd, cb_config *cfg) {
  for (const ConfigOption &o : kConfigOptions)
    add_config_option(cmd, cfg, o)->group("Breaker configuration");
}

}  // namespace cbctl
