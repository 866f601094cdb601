// cbctl: look at and operate the circuit breakers of a lazybreaker registry
// file, from outside the processes that use them. A client of the library
// like any other: the public C ABI only. docs/cbctl.md is the reference.
// This file is the table of subcommands, each a function, and what runs
// the one the command line names.
#include <lazybreaker/lazybreaker.h>
#include <CLI/CLI.hpp>

#include <cstdio>
#include <string>
#include <string_view>

#include "commands.hpp"
#include "connection_options.hpp"
#include "fleet.hpp"
#include "format.hpp"
#include "options.hpp"
#include "refusals.hpp"
#include "registry_file.hpp"

namespace cbctl {
namespace {

void print(const std::string &text) { std::fwrite(text.data(), 1, text.size(), stdout); }

// What the command line said: the operands and every subcommand's options.
struct Args {
  Args() { cb_config_init(&config); }
  std::string file, name;
  bool json = false;
  std::string trip_for = "30s";
  // create: cb_config_init's defaults, and the options given
  cb_config config;
  ConfigTexts config_texts;  // the texts given for config's fields
  OpenRequest creating;
  std::string mode_text;
  bool exist_ok = false;
  std::string interval = "1s";
  WatchOptions watching;
  std::string listen = "127.0.0.1:9464";
  bool allow_control = false;
  std::vector<std::string> allow_hosts;
  FleetArgs fleet, serve_fleet;
};

// --- the subcommands ------------------------------------------------------------

void list_options(CLI::App *cmd, Args *a) {
  cmd->add_flag("--json", a->json, "One JSON document instead of the table");
}
int run_list(const Args &a) {
  RegistryFile reg(a.file);
  std::vector<BreakerView> breakers = reg.breakers();
  if (a.json) {
    print(list_json(a.file, breakers));
  } else {
    for (const std::string &line : render_table(breakers, TableStyle{})) print(line + "\n");
  }
  return kExitOk;
}

void show_options(CLI::App *cmd, Args *a) {
  cmd->add_flag("--json", a->json, "One JSON object instead of the fields");
}
int run_show(const Args &a) {
  RegistryFile reg(a.file);
  std::optional<BreakerView> b = read_breaker(reg.lookup(a.name));
  if (!b)
    throw Failure{kExitNoBreaker, a.file + ": breaker '" + a.name + "' was destroyed meanwhile"};
  print(a.json ? breaker_json(*b) + "\n" : render_details(*b));
  return kExitOk;
}

void trip_options(CLI::App *cmd, Args *a) {
  cmd->add_option("--for", a->trip_for, "How long it stays OPEN (default 30s)")
      ->check(duration_validator());
}
int run_trip(const Args &a) {
  RegistryFile reg(a.file);
  cb_handle h = reg.lookup(a.name);
  int st = cb_trip(h, duration(a.trip_for));
  if (st == CB_EINVAL && cb_last_error_field() == std::string_view("open_for_ns"))
    throw Failure{exit_code_for(st, false), trip_refusal(a.trip_for, duration(a.trip_for))};
  if (st != CB_OK) throw breaker_refusal(a.file, a.name, st);
  print(printable(a.name) + ": OPEN for " + format_duration(duration(a.trip_for)) + "\n");
  return kExitOk;
}

// force-open, disable, reset: one call, then the state it leads to.
int run_manual(const Args &a, int (*call)(cb_handle), const char *state) {
  RegistryFile reg(a.file);
  if (int st = call(reg.lookup(a.name)); st != CB_OK) throw breaker_refusal(a.file, a.name, st);
  print(printable(a.name) + ": " + state + "\n");
  return kExitOk;
}
int run_force_open(const Args &a) { return run_manual(a, cb_force_open, "FORCED_OPEN"); }
int run_disable(const Args &a) { return run_manual(a, cb_disable, "DISABLED"); }
int run_reset(const Args &a) { return run_manual(a, cb_reset, "CLOSED"); }

void create_options(CLI::App *cmd, Args *a) {
  add_config_options(cmd, &a->config, &a->config_texts);
  OpenRequest &c = a->creating;
  CLI::Option *create_file =
      cmd->add_flag("--create-file", c.create, "Create the registry file if it is missing");
  cmd->add_flag("--exclusive", c.exclusive, "With --create-file: fail if the file exists")
      ->needs(create_file);
  cmd->add_flag("--any-owner", c.any_owner,
                "With --create-file: use an existing file whoever owns it and whoever may "
                "write it (CB_REGISTRY_ANY_OWNER)")
      ->needs(create_file);
  cmd->add_option("--capacity", c.capacity,
                  "Breakers the file holds (a new file; default 4096; for an existing file it "
                  "must agree)");
  cmd->add_option("--mode", a->mode_text, "Permission bits of a new file (default 0600)")
      ->check(octal_mode_validator())
      ->needs(create_file);
  cmd->add_flag("--exist-ok", a->exist_ok,
                "Succeed if the breaker exists with this very configuration (cb_get_or_create)");
}

// A name or configuration the library refuses must not leave a new file
// behind: try them first in a private registry of one breaker (the C ABI
// has no validate-only call), and fail as cb_create on the file would.
void refuse_bad_breaker_first(const Args &a) {
  cb_registry_options opts;
  cb_registry_options_init(&opts);
  opts.capacity = 1;
  opts.event_capacity = 1;
  cb_registry *scratch = nullptr;
  if (cb_registry_open(&opts, &scratch) != CB_OK) return;  // the real attempt will say why
  cb_handle h = 0;
  int st = cb_create(scratch, a.name.c_str(), &a.config, &h);
  if (st != CB_EINVAL) {
    cb_registry_close(scratch);
    return;
  }
  Failure refused = create_refusal(a.file, a.name, st, a.config, a.config_texts, nullptr, false);
  cb_registry_close(scratch);
  throw refused;
}

int run_create(const Args &a) {
  OpenRequest creating = a.creating;
  creating.offer_create = true;
  if (!a.mode_text.empty())
    creating.mode = static_cast<uint32_t>(std::stoul(a.mode_text, nullptr, 8));
  if (creating.create) refuse_bad_breaker_first(a);
  RegistryFile reg(a.file, creating);
  cb_handle h = 0;
  int st = a.exist_ok ? cb_get_or_create(reg.get(), a.name.c_str(), &a.config, &h)
                      : cb_create(reg.get(), a.name.c_str(), &a.config, &h);
  if (st != CB_OK)
    throw create_refusal(a.file, a.name, st, a.config, a.config_texts, reg.get(), a.exist_ok);
  print(printable(a.name) + ": created\n");
  return kExitOk;
}

int run_destroy(const Args &a) {
  RegistryFile reg(a.file);
  if (int st = cb_destroy(reg.lookup(a.name)); st != CB_OK)
    throw breaker_refusal(a.file, a.name, st);
  print(printable(a.name) + ": destroyed\n");
  return kExitOk;
}

void watch_options(CLI::App *cmd, Args *a) {
  cmd->add_option("--interval", a->interval, "Time between refreshes (default 1s, at least 10ms)")
      ->check(duration_validator());
  cmd->add_option("--count", a->watching.frames, "Stop after this many tables (default: never)");
}
int run_watch_command(const Args &a) {
  WatchOptions watching = a.watching;
  watching.interval_ns = duration(a.interval);
  if (watching.interval_ns < 10000000)
    throw Failure{kExitUsage, "--interval: " + a.interval + " is below 10ms"};
  RegistryFile reg(a.file);
  return run_watch(reg, watching);
}

int run_metrics(const Args &a) {
  RegistryFile reg(a.file);
  print(reg.prometheus());
  return kExitOk;
}

void serve_options(CLI::App *cmd, Args *a) {
  cmd->add_option("--listen", a->listen,
                  "HOST:PORT to listen on (default 127.0.0.1:9464; port 0: any)")
      ->check(listen_validator());
  cmd->add_flag("--allow-control", a->allow_control,
                "Accept POST /api/breakers/NAME/ACTION with the token printed at start");
  cmd->add_option("--allow-host", a->allow_hosts,
                  "A name (NAME or NAME:PORT) the Host header may give besides the listen address "
                  "(repeatable; e.g. behind a proxy)")
      ->check(allow_host_validator());
  cmd->add_option(
      "--redis", a->serve_fleet.redis,
      "Serve a fleet's breakers instead of a file's: redis[s]://[user[:password]@]HOST:PORT[/DB]");
  cmd->add_option("--fleet", a->serve_fleet.fleet,
                  "With --redis: the fleet's name (default: default)");
  cmd->add_option("--password-file", a->serve_fleet.password_file,
                  "With --redis: a file holding Redis's password");
  lazybreaker::fleet::add_tls_options(cmd, &a->serve_fleet.tls);
  lazybreaker::fleet::add_sentinel_options(cmd, &a->serve_fleet.sentinel);
}
int run_serve_command(const Args &a) {
  ServeOptions serving;
  std::string why;
  parse_listen(a.listen, &serving, &why);  // checked by listen_validator()
  serving.allow_control = a.allow_control;
  serving.allow_hosts = a.allow_hosts;
  const bool fleet = names_redis(a.serve_fleet) || !a.serve_fleet.sentinel.master.empty();
  if (fleet == !a.file.empty())
    throw Failure{
        kExitUsage,
        "serve: give a registry FILE or --redis URL (or --sentinel), not both nor neither"};
  const lazybreaker::fleet::TlsOptions &tls = a.serve_fleet.tls;
  if (!fleet && (a.serve_fleet.fleet != "default" || !a.serve_fleet.password_file.empty() ||
                 !tls.ca_file.empty() || !tls.cert_file.empty() || !tls.key_file.empty()))
    throw Failure{kExitUsage, "serve: --fleet, --password-file and --tls-* go with --redis"};
  std::unique_ptr<ServeSource> source = fleet ? fleet_source(a.serve_fleet) : file_source(a.file);
  return run_serve(*source, serving);
}

// --- the table --------------------------------------------------------------------

enum class Operands { kFile, kFileAndName, kFileOrFleet };
struct Subcommand {
  const char *name;
  const char *help;
  Operands operands;
  void (*add_options)(CLI::App *, Args *);  // nullptr: none
  int (*run)(const Args &);
};

// In the order of `cbctl --help`.
const Subcommand kSubcommands[] = {
    {"list", "A table of every breaker in the file", Operands::kFile, list_options, run_list},
    {"show", "Everything about one breaker", Operands::kFileAndName, show_options, run_show},
    {"trip", "OPEN now for a while (counts as a trip), then probing as usual",
     Operands::kFileAndName, trip_options, run_trip},
    {"force-open", "FORCED_OPEN: reject every call until a reset", Operands::kFileAndName, nullptr,
     run_force_open},
    {"disable", "DISABLED: admit every call, never trip, until a reset", Operands::kFileAndName,
     nullptr, run_disable},
    {"reset", "CLOSED, with a fresh failure run, from any state", Operands::kFileAndName, nullptr,
     run_reset},
    {"create", "Create a breaker (and the file)", Operands::kFileAndName, create_options,
     run_create},
    {"destroy", "Destroy a breaker; its name is free", Operands::kFileAndName, nullptr,
     run_destroy},
    {"watch", "A live table (q or Ctrl-C quits); plain tables when not on a terminal",
     Operands::kFile, watch_options, run_watch_command},
    {"metrics", "The Prometheus text of every breaker, to stdout", Operands::kFile, nullptr,
     run_metrics},
    {"serve",
     "Serve /metrics for Prometheus and a live dashboard page over HTTP until SIGINT or SIGTERM",
     Operands::kFileOrFleet, serve_options, run_serve_command},
};

void add_subcommands(CLI::App *app, Args *a) {
  for (const Subcommand &s : kSubcommands) {
    CLI::App *cmd = app->add_subcommand(s.name, s.help);
    CLI::Option *file = cmd->add_option("FILE", a->file, "The registry file");
    if (s.operands != Operands::kFileOrFleet) file->required();
    if (s.operands == Operands::kFileAndName)
      cmd->add_option("NAME", a->name, "The breaker's name")->required();
    if (s.add_options) s.add_options(cmd, a);
  }
  add_fleet_command(app, &a->fleet);
}

void describe(CLI::App *app) {
  app->require_subcommand(1, 1);
  app->set_version_flag("--version", std::string("cbctl ") + CB_VERSION_STRING + " (library " +
                                         cb_version_string() + ")");
  app->footer(
      "Exit status: 0 ok; 1 error; 2 usage error; 3 no such breaker; 4 file missing or not "
      "permitted; 5 not a registry file (other layout, corrupt); 6 name or file taken; 7 Redis "
      "unreachable or refused the credentials; 8 Redis answered with an error.\n"
      "See cbctl(1) and docs/cbctl.md.");
  app->get_formatter()->column_width(34);
}

// The subcommand's status, or kExitError when its output could not be
// written (a full disk, a closed pipe).
int run_parsed(const CLI::App &app, const Args &a) {
  for (const Subcommand &s : kSubcommands) {
    if (!app.got_subcommand(s.name)) continue;
    int status = s.run(a);
    if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
      std::fprintf(stderr, "cbctl: stdout: write error\n");
      return kExitError;
    }
    return status;
  }
  if (const CLI::App *fleet = app.get_subcommand("fleet"); fleet->parsed())
    return run_fleet(*fleet, a.fleet);
  return kExitUsage;  // require_subcommand(1, 1) makes this unreachable
}

int run(int argc, char **argv) {
  CLI::App app{
      "Look at and operate the circuit breakers of a lazybreaker registry file, shared by every "
      "process that opens it.",
      "cbctl"};
  describe(&app);
  Args args;
  add_subcommands(&app, &args);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    // --help and --version are "errors" with status 0.
    if (e.get_exit_code() == 0) return app.exit(e);
    std::fprintf(stderr, "cbctl: %s\nRun 'cbctl --help' or 'cbctl COMMAND --help' for more.\n",
                 e.what());
    return kExitUsage;
  }
  return run_parsed(app, args);
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
