// cbctl: look at and operate the circuit breakers of a lazybreaker registry
// file, from outside the processes that use them. A client of the library
// like any other: the public C ABI only. docs/cbctl.md is the reference.
#include <lazybreaker/lazybreaker.h>
#include <CLI/CLI.hpp>

#include <cstdio>
#include <functional>
#include <map>
#include <string>

#include "commands.hpp"
#include "format.hpp"
#include "registry_file.hpp"

namespace cbctl {
namespace {

CLI::Validator duration_validator() {
  return CLI::Validator(
      [](std::string &text) {
        std::string why;
        return parse_duration(text, &why) ? std::string() : why;
      },
      "DURATION");
}

uint64_t duration(const std::string &text) {
  // Checked by duration_validator() while parsing.
  return parse_duration(text, nullptr).value_or(0);
}

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

void print(const std::string &text) { std::fwrite(text.data(), 1, text.size(), stdout); }

// What `create` may set: every field of cb_config, each with its
// library default when not given.
struct ConfigOptions {
  std::string policy;
  uint32_t failure_threshold = 0;
  std::string open_for, half_open_timeout, window_duration, slow_call, open_for_max;
  uint32_t half_open_calls = 0, half_open_successes = 0, window_size = 0, window_buckets = 0,
           minimum_calls = 0;
  double failure_rate = 0, slow_call_rate = 0, backoff = 0, jitter = 0;
  std::map<std::string, CLI::Option *> given;

  void add_to(CLI::App *cmd) {
    auto add = [&](const std::string &flag, auto &var, const std::string &help) {
      CLI::Option *o = cmd->add_option(flag, var, help)->group("Breaker configuration");
      given[flag] = o;
      return o;
    };
    add("--policy", policy, "Trip policy: consecutive (the default), count or time")
        ->check(CLI::IsMember({"consecutive", "count", "time"}));
    add("--failure-threshold", failure_threshold,
        "consecutive: failures in a row that trip (default 5)");
    add("--open-for", open_for, "How long OPEN rejects (default 30s)")->check(duration_validator());
    add("--half-open-calls", half_open_calls, "Probes admitted at once (default 1)");
    add("--half-open-successes", half_open_successes, "Probe successes that close (default 1)");
    add("--half-open-timeout", half_open_timeout,
        "A probe silent this long counts as failed (default: --open-for)")
        ->check(duration_validator());
    add("--window-size", window_size, "count: outcomes in the window (default 100)");
    add("--window-duration", window_duration, "time: the window's length (default 60s)")
        ->check(duration_validator());
    add("--window-buckets", window_buckets, "time: buckets of the window (default 10)");
    add("--minimum-calls", minimum_calls,
        "count, time: outcomes in the window before a rate trips (default 100)");
    add("--failure-rate", failure_rate,
        "count, time: failure rate that trips, (0, 1] (default 0.5)");
    add("--slow-call", slow_call, "A call longer than this is slow (default: not tracked)")
        ->check(duration_validator());
    add("--slow-call-rate", slow_call_rate, "Slow-call rate that trips, (0, 1] (default 1)");
    add("--backoff", backoff, "Open duration multiplier per trip in a row, 1..1000 (default 1)");
    add("--open-for-max", open_for_max, "Cap of backoff and jitter (default: no cap)")
        ->check(duration_validator());
    add("--jitter", jitter, "Open durations scaled by a random factor in [1-j, 1+j], [0, 1)");
  }

  bool has(const std::string &flag) const { return given.at(flag)->count() > 0; }

  cb_config to_config() const {
    cb_config cfg;
    cb_config_init(&cfg);
    if (has("--policy"))
      cfg.policy = policy == "count"  ? CB_POLICY_COUNT_WINDOW
                   : policy == "time" ? CB_POLICY_TIME_WINDOW
                                      : CB_POLICY_CONSECUTIVE;
    if (has("--failure-threshold")) cfg.failure_threshold = failure_threshold;
    if (has("--open-for")) cfg.open_duration_ns = duration(open_for);
    if (has("--half-open-calls")) cfg.half_open_max_calls = half_open_calls;
    if (has("--half-open-successes")) cfg.half_open_success_threshold = half_open_successes;
    if (has("--half-open-timeout")) cfg.half_open_timeout_ns = duration(half_open_timeout);
    if (has("--window-size")) cfg.window_size = window_size;
    if (has("--window-duration")) cfg.window_duration_ns = duration(window_duration);
    if (has("--window-buckets")) cfg.window_buckets = window_buckets;
    if (has("--minimum-calls")) cfg.minimum_calls = minimum_calls;
    if (has("--failure-rate")) cfg.failure_rate_threshold = failure_rate;
    if (has("--slow-call")) cfg.slow_call_ns = duration(slow_call);
    if (has("--slow-call-rate")) cfg.slow_call_rate_threshold = slow_call_rate;
    if (has("--backoff")) cfg.open_backoff_multiplier = backoff;
    if (has("--open-for-max")) cfg.open_duration_max_ns = duration(open_for_max);
    if (has("--jitter")) cfg.open_jitter = jitter;
    return cfg;
  }
};

// A name or configuration the library refuses must not leave a new file
// behind: try them first in a private registry of one breaker (the C ABI
// has no validate-only call), and fail as cb_create on the file would.
void refuse_bad_breaker_first(const std::string &file, const std::string &name,
                              const cb_config &cfg) {
  cb_registry_options opts;
  cb_registry_options_init(&opts);
  opts.capacity = 1;
  opts.event_capacity = 1;
  cb_registry *scratch = nullptr;
  if (cb_registry_open(&opts, &scratch) != CB_OK) return;  // the real attempt will say why
  cb_handle h = 0;
  int st = cb_create(scratch, name.c_str(), &cfg, &h);
  std::string message = cb_last_error_message();
  cb_registry_close(scratch);
  if (st == CB_EINVAL) throw Failure{exit_code_for(st, false), file + ": " + message};
}

// "HOST:PORT", "[IPv6]:PORT" or ":PORT" (every IPv4 address).
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

int run(int argc, char **argv) {
  CLI::App app{
      "Look at and operate the circuit breakers of a lazybreaker registry file, shared by every "
      "process that opens it.",
      "cbctl"};
  app.require_subcommand(1, 1);
  app.set_version_flag("--version", std::string("cbctl ") + CB_VERSION_STRING + " (library " +
                                        cb_version_string() + ")");
  app.footer(
      "Exit status: 0 ok; 1 error; 2 usage error; 3 no such breaker; 4 file missing or not "
      "permitted; 5 not a registry file (other layout, corrupt); 6 name or file taken.\n"
      "See cbctl(1) and docs/cbctl.md.");
  app.get_formatter()->column_width(34);

  std::string file, name;
  auto with_file = [&](CLI::App *cmd) {
    cmd->add_option("FILE", file, "The registry file")->required();
    return cmd;
  };
  auto with_name = [&](CLI::App *cmd) {
    with_file(cmd)->add_option("NAME", name, "The breaker's name")->required();
    return cmd;
  };
  std::map<CLI::App *, std::function<int()>> commands;

  bool json = false;
  CLI::App *list = with_file(app.add_subcommand("list", "A table of every breaker in the file"));
  list->add_flag("--json", json, "One JSON document instead of the table");
  commands[list] = [&] {
    RegistryFile reg(file);
    std::vector<BreakerView> breakers = reg.breakers();
    if (json) {
      print(list_json(file, breakers));
    } else {
      for (const std::string &line : render_table(breakers, TableStyle{})) print(line + "\n");
    }
    return kExitOk;
  };

  CLI::App *show = with_name(app.add_subcommand("show", "Everything about one breaker"));
  show->add_flag("--json", json, "One JSON object instead of the fields");
  commands[show] = [&] {
    RegistryFile reg(file);
    std::optional<BreakerView> b = read_breaker(reg.lookup(name));
    if (!b)
      throw Failure{kExitNoBreaker, file + ": breaker '" + name + "' was destroyed meanwhile"};
    print(json ? breaker_json(*b) + "\n" : render_details(*b));
    return kExitOk;
  };

  std::string trip_for = "30s";
  CLI::App *trip = with_name(
      app.add_subcommand("trip", "OPEN now for a while (counts as a trip), then probing as usual"));
  trip->add_option("--for", trip_for, "How long it stays OPEN (default 30s)")
      ->check(duration_validator());
  commands[trip] = [&] {
    RegistryFile reg(file);
    cb_handle h = reg.lookup(name);
    if (int st = cb_trip(h, duration(trip_for)); st != CB_OK) reg.fail(st);
    print(printable(name) + ": OPEN for " + format_duration(duration(trip_for)) + "\n");
    return kExitOk;
  };

  struct Manual {
    const char *command, *help, *state;
    int (*call)(cb_handle);
  };
  const Manual manuals[] = {
      {"force-open", "FORCED_OPEN: reject every call until a reset", "FORCED_OPEN", cb_force_open},
      {"disable", "DISABLED: admit every call, never trip, until a reset", "DISABLED", cb_disable},
      {"reset", "CLOSED, with a fresh failure run, from any state", "CLOSED", cb_reset},
  };
  for (const Manual &m : manuals) {
    CLI::App *cmd = with_name(app.add_subcommand(m.command, m.help));
    commands[cmd] = [&, m] {
      RegistryFile reg(file);
      if (int st = m.call(reg.lookup(name)); st != CB_OK) reg.fail(st);
      print(printable(name) + ": " + m.state + "\n");
      return kExitOk;
    };
  }

  ConfigOptions config;
  OpenRequest creating;
  std::string mode_text;
  bool exist_ok = false;
  CLI::App *create = with_name(app.add_subcommand("create", "Create a breaker (and the file)"));
  config.add_to(create);
  CLI::Option *create_file = create->add_flag("--create-file", creating.create,
                                              "Create the registry file if it is missing");
  create->add_flag("--exclusive", creating.exclusive, "With --create-file: fail if the file exists")
      ->needs(create_file);
  create
      ->add_flag("--any-owner", creating.any_owner,
                 "With --create-file: use an existing file whoever owns it and whoever may "
                 "write it (CB_REGISTRY_ANY_OWNER)")
      ->needs(create_file);
  create->add_option("--capacity", creating.capacity,
                     "Breakers the file holds (a new file; default 4096; for an existing file it "
                     "must agree)");
  create->add_option("--mode", mode_text, "Permission bits of a new file (default 0600)")
      ->check(octal_mode_validator())
      ->needs(create_file);
  create->add_flag("--exist-ok", exist_ok,
                   "Succeed if the breaker exists with this very configuration (cb_get_or_create)");
  commands[create] = [&] {
    if (!mode_text.empty())
      creating.mode = static_cast<uint32_t>(std::stoul(mode_text, nullptr, 8));
    cb_config cfg = config.to_config();
    if (creating.create) refuse_bad_breaker_first(file, name, cfg);
    RegistryFile reg(file, creating);
    cb_handle h = 0;
    int st = exist_ok ? cb_get_or_create(reg.get(), name.c_str(), &cfg, &h)
                      : cb_create(reg.get(), name.c_str(), &cfg, &h);
    if (st != CB_OK) reg.fail(st);
    print(printable(name) + ": created\n");
    return kExitOk;
  };

  CLI::App *destroy =
      with_name(app.add_subcommand("destroy", "Destroy a breaker; its name is free"));
  commands[destroy] = [&] {
    RegistryFile reg(file);
    if (int st = cb_destroy(reg.lookup(name)); st != CB_OK) reg.fail(st);
    print(printable(name) + ": destroyed\n");
    return kExitOk;
  };

  std::string interval = "1s";
  WatchOptions watching;
  CLI::App *watch = with_file(app.add_subcommand(
      "watch", "A live table (q or Ctrl-C quits); plain tables when not on a terminal"));
  watch->add_option("--interval", interval, "Time between refreshes (default 1s, at least 10ms)")
      ->check(duration_validator());
  watch->add_option("--count", watching.frames, "Stop after this many tables (default: never)");
  commands[watch] = [&] {
    watching.interval_ns = duration(interval);
    if (watching.interval_ns < 10000000)
      throw Failure{kExitUsage, "--interval: " + interval + " is below 10ms"};
    RegistryFile reg(file);
    return run_watch(reg, watching);
  };

  CLI::App *metrics =
      with_file(app.add_subcommand("metrics", "The Prometheus text of every breaker, to stdout"));
  commands[metrics] = [&] {
    RegistryFile reg(file);
    print(reg.prometheus());
    return kExitOk;
  };

  std::string listen = "127.0.0.1:9464";
  CLI::App *serve = with_file(app.add_subcommand(
      "serve", "Serve /metrics over HTTP for Prometheus until SIGINT or SIGTERM"));
  serve
      ->add_option("--listen", listen,
                   "HOST:PORT to listen on (default 127.0.0.1:9464; port 0: any)")
      ->check(CLI::Validator(
          [](std::string &text) {
            ServeOptions ignored;
            std::string why;
            return parse_listen(text, &ignored, &why) ? std::string() : why;
          },
          "HOST:PORT"));
  commands[serve] = [&] {
    ServeOptions serving;
    std::string why;
    parse_listen(listen, &serving, &why);
    RegistryFile reg(file);
    return run_serve(reg, serving);
  };

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    // --help and --version are "errors" with status 0.
    if (e.get_exit_code() == 0) return app.exit(e);
    std::fprintf(stderr, "cbctl: %s\nRun 'cbctl --help' or 'cbctl COMMAND --help' for more.\n",
                 e.what());
    return kExitUsage;
  }
  for (auto &[cmd, action] : commands) {
    if (cmd->parsed()) {
      int status = action();
      if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
        std::fprintf(stderr, "cbctl: stdout: write error\n");
        return kExitError;
      }
      return status;
    }
  }
  return kExitUsage;  // require_subcommand(1, 1) makes this unreachable
}

}  // namespace
}  // namespace cbctl

int main(int argc, char **argv) {
  try {
    return cbctl::run(argc, argv);
  } catch (const cbctl::Failure &f) {
    std::fflush(stdout);
    std::fprintf(stderr, "cbctl: %s\n", f.message.c_str());
    return f.exit_code;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "cbctl: %s\n", e.what());
    return cbctl::kExitError;
  }
}
