// fleet_sim: a fleet of N hosts in one process, each with its own registry
// file, its own HostFiles and its own Agent (tools/agent's code, the same
// the lazybreaker-agent program runs), against a real redis-server that
// someone else started (bench/fleet/fleet_sim.py). The simulator also plays
// every host's services: one call per breaker per interval per host,
// healthy at rest, all failing during the outage.
//
// What it measures is Redis's side of the fleet, which is what grows with
// the number of hosts: commands/s (INFO commandstats, which counts the
// commands scripts run too), Redis's main-thread CPU (INFO cpu) and memory
// (INFO memory), read between phase marks; never MONITOR, whose own cost
// would be in the figures. And the agents' own counts (publications, lease
// claims) from their gauges.
//
// One thread drives everything, as each agent's main loop does: poll() on
// every agent's sockets, on_ready() for those that have news, step() for
// those whose interval is due. On this two-core machine the simulator may
// not keep every host at its interval; the table says how many steps each
// host achieved per second, and normalises per step where it matters.
//
// With --control, stdin and stdout carry the Redis restart: the simulator
// writes "@@ kill-redis" or "@@ start-redis" and goes on driving the agents
// until a line comes back on stdin (the wrapper that owns redis-server did
// it). Without it the restart phase is skipped.
#include <lazybreaker/lazybreaker.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "agent.hpp"
#include "host_files.hpp"
#include "keys.hpp"
#include "redis.hpp"

namespace {

using lazybreaker::agent::Agent;
using lazybreaker::agent::AgentGauges;
using lazybreaker::agent::HostFiles;
namespace fleet = lazybreaker::fleet;

struct Args {
  int redis_port = 0;
  int hosts = 200;
  int breakers = 1000;
  int interval_ms = 100;
  int open_ms = 5000;
  int threshold = 5;
  double warmup_s = 2, rest_s = 10, outage_s = 20, restart_s = 3;
  int trials = 20;
  double slack = 1;  // multiplies the time bounds (sanitizer builds)
  std::string fleet = "sim";
  std::string dir = "/dev/shm";
  std::string out;
  std::string agent_log = "/dev/null";
  bool control = false;
  bool check = false;
};

volatile sig_atomic_t g_stop = 0;
// The simulator's own messages. The agents log to stderr (one line per
// event they act on: hundreds of thousands at an onset), so fd 2 goes to
// --agent-log and this keeps the original.
FILE *g_say = stderr;

void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void say(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  std::fputs("fleet_sim: ", g_say);
  std::vfprintf(g_say, fmt, ap);
  std::fputc('\n', g_say);
  std::fflush(g_say);
  va_end(ap);
}

std::string fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
std::string fmt(const char *f, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, f);
  std::vsnprintf(buf, sizeof buf, f, ap);
  va_end(ap);
  return buf;
}

int64_t mono_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

constexpr int64_t kMs = 1'000'000;
constexpr int64_t kSec = 1'000'000'000;

struct Stopped : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// One simulated host: its file, the services' handles on it, its agent.
struct Host {
  std::string id, path;
  cb_registry *reg = nullptr;
  std::vector<cb_handle> breakers;  // svc-0000 ... in order
  lazybreaker::agent::Options opts;
  std::unique_ptr<HostFiles> files;
  AgentGauges gauges;
  std::unique_ptr<Agent> agent;
  int64_t next_step_ns = 0, next_calls_ns = 0;
  uint64_t steps = 0;

  Host() = default;
  Host(const Host &) = delete;
  Host &operator=(const Host &) = delete;
  ~Host() {
    agent.reset();
    files.reset();
    if (reg != nullptr) cb_registry_close(reg);
  }
};

// INFO, parsed: what the windows subtract.
struct Info {
  double cpu_s = 0;  // main thread, user + sys
  std::map<std::string, uint64_t> calls;
  uint64_t used_memory = 0;
};

Info parse_info(const std::string &text) {
  Info info;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(pos, end - pos);
    pos = end + 1;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string key = line.substr(0, colon), value = line.substr(colon + 1);
    if (key == "used_cpu_sys_main_thread" || key == "used_cpu_user_main_thread")
      info.cpu_s += std::strtod(value.c_str(), nullptr);
    else if (key == "used_memory")
      info.used_memory = std::strtoull(value.c_str(), nullptr, 10);
    else if (key.rfind("cmdstat_", 0) == 0 && value.rfind("calls=", 0) == 0)
      info.calls[key.substr(8)] = std::strtoull(value.c_str() + 6, nullptr, 10);
  }
  return info;
}

// A phase boundary: Redis's counters, the agents' and the clock.
struct Mark {
  int64_t t_ns = 0;
  Info info;
  uint64_t published = 0, sent = 0, dropped = 0, claims = 0, steps = 0;
};

// What happened between two marks.
struct Window {
  double secs = 0, commands = 0, cpu_pct = 0, steps = 0;
  std::map<std::string, double> by_type;  // commands
  uint64_t published = 0, sent = 0, dropped = 0, claims = 0;
};

Window between(const Mark &a, const Mark &b) {
  Window w;
  w.secs = double(b.t_ns - a.t_ns) / kSec;
  for (const auto &[name, calls] : b.info.calls) {
    // Our own INFO calls are the only ones in a window; no agent sends INFO.
    if (name == "info") continue;
    auto it = a.info.calls.find(name);
    const uint64_t before = it == a.info.calls.end() ? 0 : it->second;
    const double n = calls >= before ? double(calls - before) : 0;
    if (n > 0) w.by_type[name] = n;
    w.commands += n;
  }
  w.cpu_pct = w.secs > 0 ? 100.0 * (b.info.cpu_s - a.info.cpu_s) / w.secs : 0;
  w.steps = double(b.steps - a.steps);
  w.published = b.published - a.published;
  w.sent = b.sent - a.sent;
  w.dropped = b.dropped - a.dropped;
  w.claims = b.claims - a.claims;
  return w;
}

// Nearest rank, as bench/fleet/fleet_bench.py's pct().
double percentile(std::vector<double> v, double p) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  const double rank = std::ceil(p / 100.0 * double(v.size()));
  const size_t k = size_t(std::clamp(rank - 1, 0.0, double(v.size() - 1)));
  return v[k];
}

class Sim {
 public:
  explicit Sim(const Args &a) : a_(a), keys_(a.fleet) {}
  ~Sim();
  Sim(const Sim &) = delete;
  Sim &operator=(const Sim &) = delete;

  void setup();
  // Every phase in order; the table; the failed bounds (with --check).
  std::vector<std::string> run();

 private:
  struct Trial {
    size_t breaker = 0, source = 0;
    int64_t t0 = 0, done = 0;
    std::vector<bool> seen;
    size_t open = 0;
  };

  std::string breaker_name(size_t i) const { return fmt("svc-%04zu", i); }
  void iterate();
  bool run_until(int64_t deadline_ns, const std::function<bool()> &done = nullptr,
                 int64_t check_every_ns = 20 * kMs);
  void run_for(double secs) { run_until(mono_ns() + int64_t(secs * kSec)); }
  void calls(Host &h);
  void observed(size_t host);
  void control(const char *what);
  void read_control();
  void connect_redis();
  Mark mark();
  uint64_t fleet_trips();
  bool none_in(int state) const;
  bool all_in(int state) const;
  void count_steps_from_now();
  bool everyone_stepped(uint64_t more) const;
  void restart_phase();
  void propagation_phase();
  std::string table();

  const Args &a_;
  fleet::Keys keys_;
  std::string dir_;
  std::vector<std::unique_ptr<Host>> hosts_;
  std::unique_ptr<fleet::Redis> redis_;  // our own queries: INFO, the fleet's trips
  bool failing_ = false;
  std::vector<pollfd> fds_;
  std::vector<size_t> owners_;
  std::string control_buf_;
  uint64_t acks_ = 0;
  std::optional<Trial> trial_;
  uint64_t rng_ = 0x9e3779b97f4a7c15u;
  std::vector<uint64_t> steps_from_;

  // Results.
  Window rest_, onset_, outage_, restart_run_, restart_until_agree_;
  uint64_t period_ends_ = 0;
  double onset_s_ = NAN, heal_s_ = NAN, reconnect_s_ = NAN, agree_s_ = NAN;
  bool restart_run_done_ = false;
  std::vector<double> propagation_ms_;
  int trials_timed_out_ = 0;
  uint64_t memory_rest_ = 0, memory_outage_ = 0, memory_end_ = 0;
  double setup_s_ = 0;
};

Sim::~Sim() {
  hosts_.clear();  // closes the registries before their files go
  if (!dir_.empty()) {
    for (int i = 0; i < a_.hosts; ++i) unlink(fmt("%s/host-%04d.lbr", dir_.c_str(), i).c_str());
    rmdir(dir_.c_str());
  }
}

void Sim::setup() {
  const int64_t t0 = mono_ns();
  std::string tmpl = a_.dir + "/fleet-sim.XXXXXX";
  if (mkdtemp(tmpl.data()) == nullptr)
    throw std::runtime_error(a_.dir + ": cannot make a folder: " + std::strerror(errno));
  dir_ = tmpl;
  cb_config cfg;
  cb_config_init(&cfg);
  cfg.failure_threshold = uint32_t(a_.threshold);
  cfg.open_duration_ns = uint64_t(a_.open_ms) * kMs;
  fleet::RedisUrl url;
  url.host = "127.0.0.1";
  url.port = a_.redis_port;
  for (int i = 0; i < a_.hosts; ++i) {
    auto h = std::make_unique<Host>();
    h->id = fmt("sim-%04d", i);
    h->path = fmt("%s/host-%04d.lbr", dir_.c_str(), i);
    cb_registry_options ro;
    cb_registry_options_init(&ro);
    ro.path = h->path.c_str();
    ro.flags = CB_REGISTRY_CREATE | CB_REGISTRY_EXCLUSIVE;
    ro.capacity = uint32_t((a_.breakers + 1023) / 1024 * 1024);  // files hold whole 1,024s
    if (cb_registry_open(&ro, &h->reg) != CB_OK)
      throw std::runtime_error(h->path + ": " + cb_last_error_message());
    for (int b = 0; b < a_.breakers; ++b) {
      cb_handle handle = 0;
      if (cb_create(h->reg, breaker_name(size_t(b)).c_str(), &cfg, &handle) != CB_OK)
        throw std::runtime_error(h->path + ": " + cb_last_error_message());
      h->breakers.push_back(handle);
    }
    h->opts.files = {h->path};
    h->opts.connection.url = url;
    h->opts.fleet = a_.fleet;
    h->opts.host = h->id;
    h->opts.interval_ms = a_.interval_ms;
    h->files = std::make_unique<HostFiles>(h->opts.files, false);
    for (const std::string &why : h->files->open_missing()) throw std::runtime_error(why);
    h->agent = std::make_unique<Agent>(h->opts, *h->files, h->gauges);
    // The agents start one after another over a heartbeat period, as the
    // agents of a real fleet start at unrelated times: their heartbeats
    // are then spread evenly, and a window of any length sees its share.
    // Started together, every heartbeat of the fleet would fall in one
    // instant, in a window or out of it.
    const int64_t now = mono_ns(), interval = int64_t(a_.interval_ms) * kMs;
    const int64_t ramp = std::max<int64_t>(interval, h->agent->heartbeat_ms() * kMs);
    h->next_step_ns = now + ramp * i / a_.hosts;
    h->next_calls_ns = now + interval * ((i * 7 + 3) % a_.hosts) / a_.hosts;
    hosts_.push_back(std::move(h));
  }
  connect_redis();
  setup_s_ = double(mono_ns() - t0) / kSec;
}

void Sim::connect_redis() {
  fleet::RedisUrl url;
  url.host = "127.0.0.1";
  url.port = a_.redis_port;
  // Long: at an onset of 200 hosts x 1,000 breakers Redis may be busy for
  // seconds with the agents' scripts, and our INFO waits behind them.
  redis_ = std::make_unique<fleet::Redis>(url, "", 120'000);
}

// One turn of the loop every agent's main program runs, for all of them.
void Sim::iterate() {
  if (g_stop != 0) throw Stopped("stopped by a signal");
  fds_.clear();
  owners_.clear();
  for (size_t i = 0; i < hosts_.size(); ++i) {
    hosts_[i]->agent->poll_fds(&fds_);
    owners_.resize(fds_.size(), i);
  }
  const size_t control_at = fds_.size();
  if (a_.control) fds_.push_back({STDIN_FILENO, POLLIN, 0});
  int64_t now = mono_ns(), due = INT64_MAX;
  bool buffered = false;  // a reply already read, which poll() would not report
  const int64_t wall = fleet::wall_ms();
  for (const auto &h : hosts_) {
    due = std::min({due, h->next_step_ns, h->next_calls_ns});
    // A trip waiting for its turn to be published wakes the loop then.
    if (const int64_t at = h->agent->wake_at_ms(); at != INT64_MAX)
      due = std::min(due, now + (at - wall) * kMs);
    buffered = buffered || h->agent->has_buffered();
  }
  // Bounded, so that a phase's deadline and a signal are seen.
  const int timeout =
      due <= now || buffered ? 0 : int(std::min<int64_t>((due - now + kMs - 1) / kMs, 20));
  const int n = poll(fds_.data(), fds_.size(), timeout);
  if (n < 0 && errno != EINTR) throw std::runtime_error(std::string("poll: ") + strerror(errno));
  // on_ready() for the agents with news only: lazybreaker-agent calls it
  // after every poll(), which costs one agent nothing but 200 of them a
  // system call each per turn.
  std::vector<bool> ready(hosts_.size(), false);
  for (size_t k = 0; n > 0 && k < owners_.size(); ++k)
    if (fds_[k].revents != 0) ready[owners_[k]] = true;
  const int64_t wall_after = fleet::wall_ms();
  for (size_t i = 0; i < hosts_.size(); ++i) {
    if (!ready[i] && !hosts_[i]->agent->has_buffered() &&
        hosts_[i]->agent->wake_at_ms() > wall_after)
      continue;
    hosts_[i]->agent->on_ready();
    observed(i);
  }
  if (n > 0 && a_.control && fds_[control_at].revents != 0) read_control();
  const int64_t interval = int64_t(a_.interval_ms) * kMs;
  for (size_t i = 0; i < hosts_.size(); ++i) {
    Host &h = *hosts_[i];
    now = mono_ns();
    if (now >= h.next_calls_ns) {
      calls(h);
      h.next_calls_ns = std::max(h.next_calls_ns + interval, now);
    }
    if (now >= h.next_step_ns) {
      // What reached this agent while the hosts before it stepped is taken
      // first, as its own loop would have taken it meanwhile: a turn over
      // 200 agents can take longer than an interval, and a host that had
      // not heard the fleet's trip would publish its own.
      h.agent->on_ready();
      observed(i);
      h.agent->step();
      ++h.steps;
      observed(i);
      // Behind schedule, a host is stepped at every turn: the achieved
      // rate is then what this machine allows, and the table says it.
      h.next_step_ns = std::max(h.next_step_ns + interval, now);
    }
  }
}

bool Sim::run_until(int64_t deadline_ns, const std::function<bool()> &done,
                    int64_t check_every_ns) {
  int64_t next_check = 0;
  for (;;) {
    const int64_t now = mono_ns();
    if (done && now >= next_check) {
      if (done()) return true;
      next_check = now + check_every_ns;
    }
    if (now >= deadline_ns) return false;
    iterate();
  }
}

// The host's services: one call per breaker, its outcome the phase's.
void Sim::calls(Host &h) {
  const int outcome = failing_ ? CB_FAILURE : CB_SUCCESS;
  for (cb_handle b : h.breakers) {
    cb_ticket t = 0;
    if (cb_allow(b, &t) == CB_OK) cb_done(b, t, outcome);
  }
}

// After a host's agent ran: has the trial's trip reached this host? Only
// the agent moves a host's breaker to OPEN during a trial (its services are
// healthy), so this sees each host's OPEN at the moment it happens.
void Sim::observed(size_t host) {
  if (!trial_ || trial_->done != 0 || trial_->seen[host]) return;
  if (cb_state(hosts_[host]->breakers[trial_->breaker]) != CB_STATE_OPEN) return;
  trial_->seen[host] = true;
  if (++trial_->open == hosts_.size()) trial_->done = mono_ns();
}

void Sim::read_control() {
  char buf[256];
  const ssize_t n = read(STDIN_FILENO, buf, sizeof buf);
  if (n == 0) throw Stopped("stdin closed: the wrapper is gone");
  if (n < 0) {
    if (errno == EINTR || errno == EAGAIN) return;
    throw std::runtime_error(std::string("stdin: ") + strerror(errno));
  }
  control_buf_.append(buf, size_t(n));
  for (size_t nl; (nl = control_buf_.find('\n')) != std::string::npos;) {
    control_buf_.erase(0, nl + 1);
    ++acks_;
  }
}

// Asks the wrapper, and drives the agents meanwhile: they must live
// through Redis going away, as they would.
void Sim::control(const char *what) {
  const uint64_t before = acks_;
  std::printf("@@ %s\n", what);
  std::fflush(stdout);
  if (!run_until(
          mono_ns() + 30 * kSec, [&] { return acks_ > before; }, kMs))
    throw std::runtime_error(std::string("the wrapper did not answer ") + what);
}

Mark Sim::mark() {
  Mark m;
  fleet::Reply r = redis_->run({"INFO", "cpu", "memory", "commandstats"});
  m.t_ns = mono_ns();
  m.info = parse_info(fleet::text_of(r.get()));
  for (const auto &h : hosts_) {
    m.published += h->gauges.published.load();
    m.sent += h->gauges.trips_sent.load();
    m.dropped += h->gauges.dropped.load();
    m.claims += h->gauges.lease_claims.load();
    m.steps += h->steps;
  }
  return m;
}

// The fleet's periods so far, all breakers: each after the first is a
// period end whose probe failed. Read between marks, so that these HGETs
// are in no window.
uint64_t Sim::fleet_trips() {
  std::vector<fleet::Command> cmds;
  for (int b = 0; b < a_.breakers; ++b)
    cmds.push_back({"HGET", keys_.breaker(breaker_name(size_t(b))), "trips"});
  uint64_t sum = 0;
  for (const fleet::Reply &r : redis_->pipeline(cmds))
    sum += std::strtoull(fleet::text_of(r.get()).c_str(), nullptr, 10);
  return sum;
}

bool Sim::none_in(int state) const {
  for (const auto &h : hosts_)
    for (cb_handle b : h->breakers)
      if (cb_state(b) == state) return false;
  return true;
}

bool Sim::all_in(int state) const {
  for (const auto &h : hosts_)
    for (cb_handle b : h->breakers)
      if (cb_state(b) != state) return false;
  return true;
}

void Sim::count_steps_from_now() {
  steps_from_.clear();
  for (const auto &h : hosts_) steps_from_.push_back(h->steps);
}

bool Sim::everyone_stepped(uint64_t more) const {
  for (size_t i = 0; i < hosts_.size(); ++i)
    if (hosts_[i]->steps < steps_from_[i] + more) return false;
  return true;
}

std::vector<std::string> Sim::run() {
  const double slack = a_.slack;
  say("%d hosts x %d breakers ready in %.1f s (files in %s)", a_.hosts, a_.breakers, setup_s_,
      dir_.c_str());
  auto connected = [&] {
    for (const auto &h : hosts_)
      if (!h->gauges.connected || h->steps < 3) return false;
    return true;
  };
  if (!run_until(mono_ns() + int64_t(30 * slack * kSec), connected))
    throw std::runtime_error("not every agent connected within 30 s");
  run_for(a_.warmup_s);  // the first publications of every name are done

  say("at rest, %.0f s", a_.rest_s);
  Mark m0 = mark();
  run_for(a_.rest_s);
  Mark m1 = mark();
  rest_ = between(m0, m1);
  memory_rest_ = m1.info.used_memory;

  // The outage: every call of every host fails. The onset runs until
  // every host's every breaker has left CLOSED, and then until each agent
  // has stepped twice more and six intervals have passed: a host that
  // tripped on its own publishes at a later step, after a delay of a few
  // intervals in which another host may say it first. Then the outage's
  // window, which holds several period ends.
  say("outage: the onset, then %.0f s", a_.outage_s);
  failing_ = true;
  const int64_t t_outage = mono_ns();
  const Mark o0 = mark();
  const int64_t onset_bound = t_outage + int64_t(60 * slack * kSec);
  if (run_until(
          onset_bound, [&] { return none_in(CB_STATE_CLOSED); }, 50 * kMs)) {
    const int64_t t_left = mono_ns();
    onset_s_ = double(t_left - t_outage) / kSec;
    count_steps_from_now();
    const int64_t quiet = t_left + 6 * int64_t(a_.interval_ms) * kMs;
    run_until(
        t_left + int64_t(30 * slack * kSec),
        [&] { return mono_ns() >= quiet && everyone_stepped(2); }, 5 * kMs);
  }
  const Mark o1 = mark();
  onset_ = between(o0, o1);
  const uint64_t trips0 = fleet_trips();
  const Mark o2 = mark();
  run_for(a_.outage_s);
  const Mark o3 = mark();
  const uint64_t trips1 = fleet_trips();
  outage_ = between(o2, o3);
  period_ends_ = trips1 - std::min(trips0, trips1);
  memory_outage_ = o3.info.used_memory;

  say("healing");
  failing_ = false;
  const int64_t t_heal = mono_ns();
  if (run_until(
          t_heal + 3 * int64_t(a_.open_ms) * kMs + int64_t(10 * slack * kSec),
          [&] { return all_in(CB_STATE_CLOSED); }, 50 * kMs))
    heal_s_ = double(mono_ns() - t_heal) / kSec;

  if (a_.control) restart_phase();
  propagation_phase();
  memory_end_ = mark().info.used_memory;

  const std::string t = table();
  std::fputs(t.c_str(), stdout);
  std::fflush(stdout);
  if (!a_.out.empty()) {
    std::ofstream out(a_.out);
    out << t;
    if (!out) throw std::runtime_error(a_.out + ": cannot be written");
  }

  // The bounds the agent's design promises, per breaker and per host, so
  // that they hold at any fleet size.
  std::vector<std::string> failed;
  auto bound = [&](bool ok, const std::string &what) {
    say("%s %s", ok ? "ok  " : "FAIL", what.c_str());
    if (!ok) failed.push_back(what);
  };
  if (a_.check) {
    const double per_host = rest_.commands / a_.hosts / rest_.secs;
    bound(per_host <= 1.0, fmt("at rest, %.2f commands per host per second (at most 1)", per_host));
    // A publication is a trip carried to Redis, whether it changed the
    // fleet or the script absorbed it.
    const double pubs = double(onset_.sent) / a_.breakers;
    bound(!std::isnan(onset_s_) && pubs <= 2.0,
          std::isnan(onset_s_)
              ? std::string("the onset: not every breaker left CLOSED during the outage")
              : fmt("the onset, %.2f publications per breaker (at most 2)", pubs));
    const double per_end =
        period_ends_ > 0 ? double(outage_.claims) / double(period_ends_) : INFINITY;
    bound(per_end <= 3.0,
          period_ends_ == 0
              ? std::string("no period ended during the outage's window")
              : fmt("%.2f lease claims per breaker per period end (at most 3)", per_end));
    const double p99 = percentile(propagation_ms_, 99);
    bound(trials_timed_out_ == 0 && p99 < 1000.0 * slack,
          fmt("propagation p99 %.0f ms over %zu trials, %d timed out (under %.0f ms)", p99,
              propagation_ms_.size(), trials_timed_out_, 1000.0 * slack));
    if (a_.control)
      bound(!std::isnan(agree_s_),
            "after the Redis restart, every host agrees within max(10 s, 20 intervals)");
  }
  return failed;
}

// Redis restarted empty on the same port. Before it, a trip on host 0
// that every host follows (breaker A); while it is down, a trip on host 1
// (breaker B). After it, every agent reconnected and every host OPEN on
// both is agreement: A's state lived only in the hosts, B's only in host 1.
void Sim::restart_phase() {
  say("Redis restart");
  const size_t a = size_t(a_.breakers) - 1, b = size_t(a_.breakers) - 2;
  const uint64_t long_ns = 120 * uint64_t(kSec);
  cb_trip(hosts_[0]->breakers[a], long_ns);
  auto all_open = [&](size_t br) {
    for (const auto &h : hosts_)
      if (cb_state(h->breakers[br]) != CB_STATE_OPEN) return false;
    return true;
  };
  const int64_t wait =
      int64_t(a_.slack * double(std::max<int64_t>(10 * kSec, 20 * a_.interval_ms * kMs)));
  if (!run_until(mono_ns() + wait, [&] { return all_open(a); })) {
    std::map<std::string, int> states;
    for (const auto &h : hosts_) {
      const char *name = cb_state_name(cb_state(h->breakers[a]));
      ++states[name != nullptr ? name : "unknown"];
    }
    std::string seen;
    for (const auto &[state, count] : states) seen += fmt(" %s=%d", state.c_str(), count);
    say("a trip of %s did not reach every host before the restart:%s", breaker_name(a).c_str(),
        seen.c_str());
  }
  std::vector<uint64_t> reconnects;
  for (const auto &h : hosts_) reconnects.push_back(h->gauges.reconnects.load());
  redis_.reset();
  control("kill-redis");
  cb_trip(hosts_[1 % hosts_.size()]->breakers[b], long_ns);
  control("start-redis");
  const int64_t t_start = mono_ns();
  connect_redis();
  // Every command the new Redis ran counts, those before this mark too:
  // its counters started at zero with it.
  Mark r0 = mark();
  r0.info.calls.clear();
  auto reconnected = [&] {
    for (size_t i = 0; i < hosts_.size(); ++i)
      if (!hosts_[i]->gauges.connected || hosts_[i]->gauges.reconnects <= reconnects[i])
        return false;
    return true;
  };
  const int64_t bound = t_start + wait;
  if (run_until(bound, reconnected, 5 * kMs)) reconnect_s_ = double(mono_ns() - t_start) / kSec;
  if (run_until(
          bound, [&] { return reconnected() && all_open(a) && all_open(b); }, 5 * kMs)) {
    agree_s_ = double(mono_ns() - t_start) / kSec;
    restart_until_agree_ = between(r0, mark());
  }
  run_until(t_start + int64_t(a_.restart_s * kSec));
  restart_run_ = between(r0, mark());
  restart_run_done_ = true;
}

// A trip on one host's breaker (cb_trip through the services' handle)
// until every host's is OPEN, on distinct breakers and source hosts.
void Sim::propagation_phase() {
  say("propagation, %d trials", a_.trials);
  // Open for longer than a trial may wait, so that no period ends during one.
  const uint64_t open_ns =
      std::max<uint64_t>({uint64_t(a_.open_ms), 10'000, 40 * uint64_t(a_.interval_ms)}) * kMs;
  const size_t usable = size_t(std::max(1, a_.breakers - 2));  // A and B are the restart's
  for (int k = 0; k < a_.trials; ++k) {
    Trial t;
    t.breaker = (size_t(k) * 7919) % usable;
    t.source = (size_t(k) * 37) % hosts_.size();
    t.seen.assign(hosts_.size(), false);
    // Some breakers (a previous trial's) may be OPEN already: skip them.
    bool clean = true;
    for (const auto &h : hosts_)
      clean = clean && cb_state(h->breakers[t.breaker]) == CB_STATE_CLOSED;
    if (!clean) continue;
    // A moment off the agents' phase, as a real trip would be.
    rng_ = rng_ * 6364136223846793005u + 1442695040888963407u;
    run_for(double((rng_ >> 33) % uint64_t(a_.interval_ms)) / 1000.0);
    t.t0 = mono_ns();
    cb_trip(hosts_[t.source]->breakers[t.breaker], open_ns);
    trial_ = t;
    observed(t.source);
    // Propagation takes a few intervals: a long --interval waits longer.
    const int64_t bound =
        t.t0 + int64_t(a_.slack * double(std::max<int64_t>(5 * kSec, 20 * a_.interval_ms * kMs)));
    if (run_until(
            bound, [&] { return trial_->done != 0; }, 0))
      propagation_ms_.push_back(double(trial_->done - trial_->t0) / kMs);
    else
      ++trials_timed_out_;
    trial_.reset();
  }
}

std::string Sim::table() {
  const double n = a_.hosts, m = a_.breakers;
  auto types = [](const Window &w) {
    std::vector<std::pair<double, std::string>> v;
    for (const auto &[name, c] : w.by_type) v.push_back({c, name});
    std::sort(v.rbegin(), v.rend());
    std::string s;
    for (size_t i = 0; i < v.size() && i < 5; ++i)
      s += fmt("%s%s %.0f/s", i ? ", " : "", v[i].second.c_str(), v[i].first / w.secs);
    return s.empty() ? std::string("none") : s;
  };
  auto steps = [&](const Window &w) {
    return fmt("%.1f steps per host per s (asked %.1f)", w.steps / n / w.secs,
               1000.0 / a_.interval_ms);
  };
  auto rates = [&](const Window &w) {
    return fmt("%.0f commands/s; %.2f per host per s; %.2f per host per step; Redis CPU %.1f%%",
               w.commands / w.secs, w.commands / n / w.secs,
               w.steps > 0 ? w.commands / w.steps : NAN, w.cpu_pct);
  };
  std::string t;
  t +=
      fmt("Fleet simulator (bench/fleet/fleet_sim.cpp): %d hosts x %d breakers in one process, "
          "lazybreaker-agent's code (tools/agent) per host, --interval %d ms, open period %d ms, "
          "trip after %d failures in a row, one call per breaker per interval per host; a real "
          "redis-server on loopback; all on this machine's %ld CPUs.\n\n",
          a_.hosts, a_.breakers, a_.interval_ms, a_.open_ms, a_.threshold,
          sysconf(_SC_NPROCESSORS_ONLN));
  // Below the asked rate, the agents hear the fleet's news later than
  // hosts of their own would, and the figures that depend on hearing it in
  // time (publications at the onset, lease claims, propagation) are worse
  // than such a fleet's; Redis's cost per step is still the agent's.
  const double asked = 1000.0 / a_.interval_ms;
  double slowest = INFINITY;
  for (const Window *w : {&rest_, &onset_, &outage_})
    if (w->secs > 0) slowest = std::min(slowest, w->steps / n / w->secs);
  if (slowest < 0.9 * asked)
    t +=
        fmt("The simulator did not keep up: as few as %.1f steps per host per s of the %.1f asked "
            "(one thread drives every agent). The agents then hear the fleet's news later than "
            "hosts of their own would: publications at the onset, lease claims and "
            "propagation are worse here than in such a fleet.\n\n",
            slowest, asked);
  t += "| phase | measure | value |\n|---|---|---|\n";
  t += fmt("| at rest (%.0f s) | Redis | %s |\n", rest_.secs, rates(rest_).c_str());
  t += fmt("| at rest | commands by type | %s |\n", types(rest_).c_str());
  t += fmt("| at rest | agents | %s |\n", steps(rest_).c_str());
  t += fmt("| full outage (%.0f s, %" PRIu64 " period ends) | Redis | %s |\n", outage_.secs,
           period_ends_, rates(outage_).c_str());
  t += fmt("| full outage | commands by type | %s |\n", types(outage_).c_str());
  t += fmt("| full outage | agents | %s |\n", steps(outage_).c_str());
  if (std::isnan(onset_s_)) {
    t += "| onset | every breaker left CLOSED | not within the outage |\n";
  } else {
    t +=
        fmt("| onset (%.1f s until every breaker of every host left CLOSED) | publications per "
            "breaker, fleet-wide (trips carried to Redis) | %.2f (%" PRIu64
            " for %d breakers, %" PRIu64 " of them changing the fleet; %" PRIu64
            " trips left untold, the fleet's period covering them); EVALSHA %.2f per breaker; "
            "%.0f commands in all, Redis CPU %.1f%% |\n",
            onset_s_, double(onset_.sent) / m, onset_.sent, a_.breakers, onset_.published,
            onset_.dropped, onset_.by_type["evalsha"] / m, onset_.commands, onset_.cpu_pct);
  }
  t += fmt("| period ends | lease claims per breaker per period end | %.2f (%" PRIu64
           " claims, %" PRIu64 " period ends) |\n",
           period_ends_ ? double(outage_.claims) / double(period_ends_) : NAN, outage_.claims,
           period_ends_);
  t += fmt("| recovery | every host CLOSED after the outage | %s |\n",
           std::isnan(heal_s_) ? "not within the bound" : fmt("%.1f s", heal_s_).c_str());
  if (!restart_run_done_) {
    t += "| Redis restart | | not run (needs --control) |\n";
  } else {
    t +=
        fmt("| Redis restart (empty, same port) | every agent reconnected; every host agrees | "
            "%s; %s |\n",
            std::isnan(reconnect_s_) ? "not within the bound" : fmt("%.2f s", reconnect_s_).c_str(),
            std::isnan(agree_s_) ? "not within the bound" : fmt("%.2f s", agree_s_).c_str());
    if (!std::isnan(agree_s_))
      t +=
          fmt("| Redis restart | until every host agrees | %.0f commands (%.1f per host), Redis "
              "CPU %.1f%% |\n",
              restart_until_agree_.commands, restart_until_agree_.commands / n,
              restart_until_agree_.cpu_pct);
    t += fmt("| Redis restart (first %.0f s) | Redis | %s |\n", restart_run_.secs,
             rates(restart_run_).c_str());
  }
  t += fmt(
      "| propagation (%zu trials%s) | cb_trip on one host until every host OPEN | p50 %.0f "
      "ms, p99 %.0f ms, max %.0f ms |\n",
      propagation_ms_.size(),
      trials_timed_out_ ? fmt(", %d timed out", trials_timed_out_).c_str() : "",
      percentile(propagation_ms_, 50), percentile(propagation_ms_, 99),
      propagation_ms_.empty() ? NAN
                              : *std::max_element(propagation_ms_.begin(), propagation_ms_.end()));
  t +=
      fmt("| Redis memory | used_memory | at rest %.1f MB, after the outage %.1f MB, at the end "
          "%.1f MB (after the outage, %.0f bytes per fleet breaker, every key counted) |\n",
          double(memory_rest_) / 1e6, double(memory_outage_) / 1e6, double(memory_end_) / 1e6,
          double(memory_outage_) / m);
  return t;
}

void on_signal(int) { g_stop = 1; }

}  // namespace

int main(int argc, char **argv) {
  Args a;
  CLI::App app{"fleet_sim: many hosts' lazybreaker-agent in one process against a real Redis"};
  app.add_option("--redis-port", a.redis_port, "The port of a redis-server on 127.0.0.1")
      ->required()
      ->check(CLI::Range(1, 65535));
  app.add_option("--hosts", a.hosts, "Hosts (default 200)")->check(CLI::Range(2, 10000));
  app.add_option("--breakers", a.breakers, "Breakers per host (default 1000)")
      ->check(CLI::Range(3, 100000));
  app.add_option("--interval", a.interval_ms, "The agents' --interval in ms (default 100)")
      ->check(CLI::Range(10, 60000));
  app.add_option("--open-ms", a.open_ms, "The breakers' open period (default 5000)")
      ->check(CLI::Range(100, 3'600'000));
  app.add_option("--threshold", a.threshold, "Consecutive failures that trip (default 5)")
      ->check(CLI::Range(1, 1000));
  app.add_option("--warmup-s", a.warmup_s, "Seconds before the rest window (default 2)")
      ->check(CLI::Range(0.0, 3600.0));
  app.add_option("--rest-s", a.rest_s, "The rest window (default 10)")
      ->check(CLI::Range(0.5, 3600.0));
  app.add_option("--outage-s", a.outage_s, "The outage's window after its onset (default 20)")
      ->check(CLI::Range(1.0, 3600.0));
  app.add_option("--restart-s", a.restart_s, "The window after Redis restarts (default 3)")
      ->check(CLI::Range(0.5, 3600.0));
  app.add_option("--trials", a.trials, "Propagation trials (default 20)")
      ->check(CLI::Range(1, 1000));
  app.add_option("--slack", a.slack, "Multiplies the time bounds (default 1)")
      ->check(CLI::Range(1.0, 100.0));
  app.add_option("--fleet", a.fleet, "The fleet's name (default sim)");
  app.add_option("--dir", a.dir, "Where the registry files go (default /dev/shm)");
  app.add_option("--out", a.out, "Also write the table here");
  app.add_option("--agent-log", a.agent_log, "Where the agents' log lines go (default /dev/null)");
  app.add_flag("--control", a.control,
               "Restart Redis through the wrapper: @@ lines on stdout, answers on stdin");
  app.add_flag("--check", a.check, "Exit 1 unless the per-breaker and per-host bounds hold");
  CLI11_PARSE(app, argc, argv);
  if (!fleet::valid_fleet_name(a.fleet)) {
    std::fprintf(stderr, "fleet_sim: --fleet '%s': 1..64 of A-Z a-z 0-9 _ . -\n", a.fleet.c_str());
    return 2;
  }

  const int saved = dup(STDERR_FILENO);
  FILE *say_to = saved >= 0 ? fdopen(saved, "w") : nullptr;
  FILE *log = std::fopen(a.agent_log.c_str(), "a");
  if (say_to == nullptr || log == nullptr) {
    std::fprintf(stderr, "fleet_sim: --agent-log %s: %s\n", a.agent_log.c_str(), strerror(errno));
    return 2;
  }
  g_say = say_to;
  dup2(fileno(log), STDERR_FILENO);
  std::fclose(log);

  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);

  try {
    Sim sim(a);
    sim.setup();
    const std::vector<std::string> failed = sim.run();
    if (!failed.empty()) {
      say("%zu bound(s) do not hold", failed.size());
      return 1;
    }
    return 0;
  } catch (const std::exception &e) {
    say("%s", e.what());
    return 1;
  }
}
