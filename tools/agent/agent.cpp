#include "agent.hpp"

#include <sys/random.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <optional>

#include "scripts.hpp"

namespace lazybreaker::agent {

using fleet::FleetBreaker;
using fleet::is_error;
using fleet::Redis;
using fleet::RedisDown;
using fleet::Reply;
using fleet::text_of;
using fleet::wall_ms;

namespace {

// How many log entries one XREAD takes; more wait for the next read.
constexpr int kLogBatch = 1000;
// How long the reader blocks: an idle fleet costs a round trip per host per this.
constexpr int64_t kReadBlockMs = 30000;
// How recent a rejected call must be for a host to want a probe.
constexpr int64_t kDemandMs = 30000;
// Hosts per breaker that claim a lease at a period's end (ranked by hash),
// doubling every half lease while no verdict comes.
constexpr double kClaimers = 2.0;
// Publication waits: ranks below kAtOnce (one host per breaker, on
// average) publish at once; above, kRankStepMs a rank up to kRankSteps
// (a step is about a host's poll interval: hosts see their trips up to a
// poll apart), the ranks past them in order over kSpreadMs more. A waiting
// host reads the log every kWaitingReadMs and publishes when its wait is
// over, not at its next step, so it hears an earlier rank's publication
// within that pace and a round trip.
constexpr double kAtOnce = 1.0;
constexpr double kRankSteps = 4.0;
constexpr double kRankStepMs = 100.0;
constexpr double kSpreadMs = 200.0;
constexpr int64_t kWaitingReadMs = 20;
// Under churn a host reads the log at most this often (or once an
// interval, if longer): at 1,000 hosts, 4,000 reads a second at most.
constexpr int64_t kChurnReadMs = 250;

// A name or value as a log line shows it: printable ASCII as it is, the
// rest escaped, quoted when it holds a space.
std::string shown(const std::string &v) {
  std::string out;
  bool quote = v.empty();
  for (unsigned char c : v) {
    if (c == ' ') quote = true;
    if (c < 0x20 || c >= 0x7f || c == '"' || c == '\\') {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += char(c);
    }
  }
  return quote ? "\"" + out + "\"" : out;
}

void random_bytes(void *out, size_t n) {
  if (getrandom(out, n, 0) != ssize_t(n)) {
    const auto t = std::chrono::steady_clock::now().time_since_epoch().count();
    std::memcpy(out, &t, std::min(sizeof t, n));
  }
}

std::string random_id() {
  unsigned char bytes[12] = {};
  random_bytes(bytes, sizeof bytes);
  std::string id;
  for (unsigned char b : bytes) {
    char buf[3];
    std::snprintf(buf, sizeof buf, "%02x", b);
    id += buf;
  }
  return id;
}

// Uniform in [0, 1).
double random_unit() {
  uint64_t r = 0;
  random_bytes(&r, sizeof r);
  return double(r >> 11) / double(uint64_t(1) << 53);
}

// FNV-1a over the parts, each followed by a 0 byte.
uint64_t fnv1a(std::initializer_list<std::string_view> parts, uint64_t h = 0xcbf29ce484222325ull) {
  for (std::string_view p : parts) {
    for (unsigned char c : p) h = (h ^ c) * 0x100000001b3ull;
    h = (h ^ 0) * 0x100000001b3ull;
  }
  return h;
}

// A hash of (breaker, host, what) mapped to [0, 1): where this host ranks
// for that breaker, the same on every host that computes it.
double rank_unit(const std::string &name, const std::string &host, std::string_view what) {
  uint64_t h = fnv1a({name, host, what});
  h ^= h >> 33;  // FNV's low bits mix poorly: fold the high ones in
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  return double(h >> 11) / double(uint64_t(1) << 53);
}

// The content address of a host's name set: hosts that run the same names
// share one stored set.
std::string digest_of(const std::vector<std::string> &sorted_names) {
  uint64_t a = 0xcbf29ce484222325ull, b = 0x84222325cbf29ce4ull;
  for (const std::string &n : sorted_names) {
    a = fnv1a({n}, a);
    b = fnv1a({n, "\x01"}, b);
  }
  char buf[40];
  std::snprintf(buf, sizeof buf, "%016llx%016llx", (unsigned long long)a, (unsigned long long)b);
  return buf;
}

const char *state_word(int state) {
  const char *n = cb_state_name(state);
  return n != nullptr ? n : "unknown";
}

uint64_t ms_to_ns(int64_t ms) { return ms <= 0 ? 0 : uint64_t(ms) * 1'000'000u; }

std::string field_of(const std::string &info, const std::string &key) {
  const size_t at = info.find(key + ":");
  if (at == std::string::npos) return "";
  const size_t from = at + key.size() + 1;
  return info.substr(from, info.find_first_of("\r\n", from) - from);
}

}  // namespace

void log_event(const std::string &event,
               const std::vector<std::pair<std::string, std::string>> &fields) {
  std::string line = "lazybreaker-agent: " + event;
  for (const auto &[k, v] : fields) line += " " + k + "=" + shown(v);
  line += "\n";
  std::fwrite(line.data(), 1, line.size(), stderr);
}

Agent::Agent(const Options &opts, HostFiles &files, AgentGauges &gauges)
    : opts_(opts), files_(files), gauges_(gauges), keys_(opts.fleet), connector_(opts.connection) {}

Agent::~Agent() = default;

void Agent::ignored(const std::string &key, const std::string &why) {
  ++gauges_.ignored;
  auto it = ignored_.find(key);
  if (it != ignored_.end() && it->second == why) return;
  if (ignored_.size() > 10000) ignored_.clear();  // bounded, at the cost of a repeated line
  ignored_[key] = why;
  log_event("ignored", {{"key", key}, {"why", why}});
}

int64_t Agent::publish_delay_ms(const std::string &name) const {
  const double rank = rank_unit(name, opts_.host, "publish") * double(live_hosts_);
  if (rank < kAtOnce) return 0;
  if (rank < kRankSteps) return int64_t(kRankStepMs * rank);
  // Past the ranked steps (a fleet whose low ranks did not trip), the
  // ranks still in order over kSpreadMs, so that the few that trip do not
  // publish together.
  const double rest = double(live_hosts_) - kRankSteps;
  return int64_t(kRankStepMs * kRankSteps + kSpreadMs * (rank - kRankSteps) / std::max(1.0, rest));
}

bool Agent::may_claim(const std::string &name, int64_t until_ms, int64_t now) const {
  const int64_t late = std::max<int64_t>(0, now - until_ms);
  const int doublings = int(std::min<int64_t>(late / std::max<int64_t>(1, lease_ms() / 2), 30));
  const double rank = rank_unit(name, opts_.host, "lease") * double(live_hosts_);
  return rank < kClaimers * double(uint64_t(1) << doublings);
}

void Agent::step() {
  const auto start = std::chrono::steady_clock::now();
  for (const std::string &why : files_.open_missing()) log_event("waiting", {{"file", why}});
  observe_host();
  sync();
  share_rows();
  gauges_.last_poll_us = uint64_t(std::chrono::duration_cast<std::chrono::microseconds>(
                                      std::chrono::steady_clock::now() - start)
                                      .count());
}

// What the host's breakers did since the last step: each name's pending
// news for the fleet, its demand for a probe, and its counts.
void Agent::observe_host() {
  uint64_t n = 0;
  const int64_t now = wall_ms();
  for (const LocalChange &c : files_.poll()) {
    ++n;
    LocalBreaker &b = *c.breaker;
    Side &side = sides_[b.name];
    if (c.delta.rejected > 0) side.rejected_ms = now;
    if (opts_.fleet_counts) {
      side.unsent.admitted += c.delta.admitted;
      side.unsent.rejected += c.delta.rejected;
      side.unsent.successes += c.delta.successes;
      side.unsent.failures += c.delta.failures;
    }
    Pending news = Pending::None;
    if (c.tripped || (c.new_breaker && b.state == CB_STATE_OPEN)) {
      news = Pending::Trip;
    } else if (b.state == CB_STATE_FORCED_OPEN && c.from_state != CB_STATE_FORCED_OPEN) {
      news = Pending::ForceOpen;
    } else if (b.state == CB_STATE_CLOSED && side.lease_mine && c.delta.successes > 0 &&
               (c.from_state == CB_STATE_HALF_OPEN || c.from_state == CB_STATE_OPEN)) {
      // The probe's verdict: it may have gone out and closed the breaker
      // between two polls. (A host-local cb_reset, with no success
      // reported meanwhile, stays local.)
      news = Pending::Closed;
    }
    if (news == Pending::None) continue;
    if (side.pending == Pending::None) side.pending_since_ms = now;
    side.pending = news;
  }
  gauges_.breakers = n;
  // Names no file holds any more keep no state (bounded memory).
  for (auto it = sides_.begin(); it != sides_.end();)
    it = files_.breakers().count(it->first) == 0 ? sides_.erase(it) : std::next(it);
}

void Agent::sync() {
  if (!redis_) {
    if (wall_ms() < next_connect_ms_) return;
    connect();
    if (!redis_) return;
  }
  try {
    if (reader_ && read_pending_ && wall_ms() - read_sent_ms_ > kReadBlockMs + 5000)
      throw RedisDown("the change log's reader got no answer");
    publish_pending();
    manage_leases();
    flush_counts();
    heartbeat();
    arm_reader();
  } catch (const RedisDown &e) {
    drop(e.what(), true);
  }
}

void Agent::poll_fds(std::vector<pollfd> *out) const {
  if (reader_) out->push_back(pollfd{reader_->fd(), POLLIN, 0});
  const int failover = const_cast<fleet::Connector &>(connector_).failover_fd();
  if (failover >= 0) out->push_back(pollfd{failover, POLLIN, 0});
}

bool Agent::has_buffered() const { return reader_ && reader_->has_buffered(); }

void Agent::on_ready() {
  if (connector_.failover_announced() && redis_) {
    // Every agent of the fleet hears it at once: spread as for a loss.
    drop("the sentinels announced a failover", true);
    return;
  }
  if (!reader_) return;
  try {
    while (Reply r = reader_->try_read()) {
      read_pending_ = false;
      take_log(r.get());
      if (!reader_) return;  // a resync that lost the connection
    }
    if (redis_ && wall_ms() >= publish_at_ms_) publish_pending();
    arm_reader();
  } catch (const RedisDown &e) {
    drop(e.what(), true);
  }
}

void Agent::connect() {
  try {
    redis_ = connector_.primary(1000);
    reader_ = connector_.primary(1000);
    read_pending_ = false;
    next_read_ms_ = 0;
    ++gauges_.reconnects;
    log_event("connected", {{"redis", connector_.describe()}, {"fleet", opts_.fleet}});
    gauges_.connected = true;
    outage_logged_ = false;
    backoff_ms_ = 100;
    next_heartbeat_ms_ = 0;
    // Whose epochs do we hold? A Redis restarted empty (or flushed) has
    // none, and a replica promoted by a failover may lack the last ones.
    std::vector<Reply> r = redis_->pipeline({{"SET", keys_.instance(), random_id(), "NX"},
                                             {"GET", keys_.instance()},
                                             {"INFO", "replication"}});
    const std::string now_instance = text_of(r[1].get());
    const std::string now_replid = field_of(text_of(r[2].get()), "master_replid");
    const bool fresh = now_instance != instance_ || (!replid_.empty() && now_replid != replid_);
    instance_ = now_instance;
    replid_ = now_replid;
    // The same Redis with its data: the reader goes on from where it was,
    // and a gap in the log's sequence (trimmed past it) calls for a
    // resync; else the fleet's state is read afresh.
    if (fresh || !was_connected_ || log_seq_ == 0) resync(fresh && was_connected_);
    was_connected_ = true;
  } catch (const RedisDown &e) {
    drop(e.what(), false);
    if (e.auth_refused) log_event("refused", {{"why", "check --password-file and the URL's user"}});
  }
}

// `was_working`: a connection that served is lost, so every agent of the
// fleet may be reconnecting at once (a Redis restart or failover): the
// first attempt waits a random part of 5 ms per live host (2 to 10 s),
// which spreads the fleet's reconnections and resyncs over them.
void Agent::drop(const std::string &why, bool was_working) {
  const int64_t spread = std::clamp<int64_t>(int64_t(live_hosts_) * 5, 2000, 10000);
  const int64_t wait = was_working && redis_
                           ? int64_t(double(spread) * random_unit())
                           : int64_t(double(backoff_ms_) * (0.5 + 0.5 * random_unit()));
  // Once per outage (also one that began before the first connection).
  if (redis_ || gauges_.connected || !outage_logged_)
    log_event("disconnected", {{"why", why}, {"retry_ms", std::to_string(wait)}});
  outage_logged_ = true;
  redis_.reset();
  reader_.reset();
  read_pending_ = false;
  gauges_.connected = false;
  next_connect_ms_ = wall_ms() + wait;
  if (!was_working) backoff_ms_ = std::min<int64_t>(backoff_ms_ * 2, 2000);
  for (auto &[name, side] : sides_) side.lease_mine = false;
}

// Where the change log stands now: the reader starts after it.
void Agent::take_log_position() {
  read_stale_ = read_pending_;
  log_id_ = "0-0";
  log_seq_ = 0;
  Reply last = redis_->run({"XREVRANGE", keys_.log(), "+", "-", "COUNT", "1"});
  if (is_error(last.get())) {
    ignored(keys_.log(), text_of(last.get()));
    return;
  }
  for (const fleet::LogEntry &e : fleet::log_entries(last.get(), false)) {
    log_id_ = e.id;
    log_seq_ = e.ok ? e.seq : 0;
  }
}

// Reads these breakers' hashes (one round trip) and applies what moved.
void Agent::read_hashes(const std::vector<std::string> &names) {
  std::vector<fleet::Command> reads;
  for (const std::string &name : names) reads.push_back({"HGETALL", keys_.breaker(name)});
  std::vector<Reply> replies = redis_->pipeline(reads);
  for (size_t i = 0; i < names.size(); ++i) {
    std::string why;
    if (auto b = fleet::parse_breaker(names[i], replies[i].get(), &why))
      apply(*b);
    else
      ignored(keys_.breaker(names[i]), why);
  }
}

// Catches up with the fleet: the log's position, then every breaker the
// fleet holds not CLOSED (its `open` hash, one read), and the hashes of
// those this agent last knew not CLOSED that the fleet has closed since;
// the rest are CLOSED and change nothing.
// `fresh`: the Redis instance is not the one this agent's epochs came
// from, so they restart, and what this host knows (its OPEN and
// FORCED_OPEN breakers, its names) is told again: a Redis restarted empty
// is repopulated.
void Agent::resync(bool fresh) {
  take_log_position();
  const int64_t now = wall_ms();
  if (fresh) {
    for (auto &[name, side] : sides_) {
      side.applied_epoch = 0;
      side.state = "closed";
      side.until_ms = 0;
      if (side.pending != Pending::None) continue;
      for (const LocalBreaker &b : files_.breakers()[name]) {
        if (b.state == CB_STATE_OPEN) side.pending = Pending::Trip;
        if (b.state == CB_STATE_FORCED_OPEN) side.pending = Pending::ForceOpen;
      }
      if (side.pending != Pending::None) side.pending_since_ms = now;
    }
    digest_sent_.clear();  // the heartbeat names this host's breakers again, now
    next_heartbeat_ms_ = 0;
    log_event("repopulated", {{"breakers", std::to_string(sides_.size())}});
  }
  Reply open = redis_->run({"HGETALL", keys_.open()});
  if (is_error(open.get())) ignored(keys_.open(), text_of(open.get()));
  std::vector<std::string> foreign;
  std::set<std::string> heard;
  for (const FleetBreaker &b : fleet::open_breakers(open.get(), &foreign)) {
    heard.insert(b.name);
    apply(b);
  }
  for (const std::string &name : foreign) ignored(keys_.open(), "the value of " + name);
  // Breakers this agent last knew not CLOSED that the fleet has closed
  // since: their hashes say by whom (few: read one by one).
  std::vector<std::string> closed;
  for (const auto &[name, side] : sides_)
    if (side.state != "closed" && heard.count(name) == 0) closed.push_back(name);
  read_hashes(closed);
}

// The reader's next XREAD BLOCK: at most one every kChurnReadMs or
// interval (under churn a host takes the log in batches, not entry by
// entry), or one every kWaitingReadMs while a trip waits to be published.
void Agent::arm_reader() {
  if (!reader_ || read_pending_) return;
  const int64_t now = wall_ms();
  if (now < next_read_ms_) return;
  reader_->send({"XREAD", "BLOCK", std::to_string(kReadBlockMs), "COUNT", std::to_string(kLogBatch),
                 "STREAMS", keys_.log(), log_id_});
  read_pending_ = true;
  read_stale_ = false;
  read_sent_ms_ = now;
  next_read_ms_ =
      now + (publish_at_ms_ != INT64_MAX ? kWaitingReadMs
                                         : std::max<int64_t>(kChurnReadMs, opts_.interval_ms));
}

// Applies what the log's new entries say, in order; a gap in their
// sequence (the log trimmed past this agent, or written by a stranger)
// means a resync.
void Agent::take_log(const redisReply *r) {
  if (r->type == REDIS_REPLY_NIL) return;  // blocked for nothing: read again
  if (is_error(r)) {
    ignored(keys_.log(), text_of(r));
    next_read_ms_ = wall_ms() + heartbeat_ms();  // not ours: do not ask at every interval
    return;
  }
  bool gap = false;
  const std::vector<fleet::LogEntry> entries = fleet::log_entries(r, true);
  for (const fleet::LogEntry &e : entries) {
    ++gauges_.log_entries;
    if (!e.ok) {
      log_id_ = e.id;
      ignored(keys_.log(), "entry " + e.id + " is not a change");
      continue;
    }
    if (log_seq_ != 0 && e.seq <= log_seq_) {
      // Read before a resync moved the position on; else the sequence went
      // back: Redis lost the fleet (flushed, restarted), which the
      // instance check at the heartbeat, brought forward, confirms.
      if (!read_stale_) next_heartbeat_ms_ = 0;
      continue;
    }
    log_id_ = e.id;
    if (log_seq_ != 0 && e.seq != log_seq_ + 1) gap = true;
    log_seq_ = e.seq;
    for (const FleetBreaker &b : e.changes) apply(b);
  }
  if (entries.size() >= size_t(kLogBatch)) next_read_ms_ = 0;  // more wait
  if (gap && redis_) {
    log_event("resync", {{"why", "the change log skipped entries"}});
    resync(false);
  }
}

void Agent::apply(const FleetBreaker &b) {
  auto it = sides_.find(b.name);
  if (it == sides_.end()) return;
  Side &side = it->second;
  if (b.epoch <= side.applied_epoch) return;
  const bool joining = side.applied_epoch == 0;
  side.applied_epoch = b.epoch;
  side.state = b.state;
  side.until_ms = b.until_ms;
  side.trips = b.trips;
  side.lease_mine = false;
  side.holding = false;
  side.claim_after_ms = 0;
  if (b.by == opts_.host) return;  // this host's own news, back from the fleet
  // The fleet closing says less than news of ours it has not heard yet, and
  // nothing to a host joining it (whose breakers keep their own state).
  if (b.state == "closed" && (side.pending != Pending::None || joining || b.by.empty())) return;
  for (LocalBreaker &local : files_.breakers()[b.name]) act(local, b);
  ++gauges_.applied;
}

void Agent::act(LocalBreaker &local, const FleetBreaker &b) {
  int st = CB_OK;
  std::string what;
  if (b.state == "open") {
    const int64_t left = b.until_ms - wall_ms();
    if (left <= 0) return;  // the period is over: its probe is under way
    const uint64_t ns = std::max<uint64_t>(ms_to_ns(left), CB_MIN_OPEN_DURATION_NS);
    if (local.state == CB_STATE_OPEN) {
      st = cb_hold_open(local.handle, files_.clock_now(local) + ns);
      what = "hold_open";
    } else {
      st = cb_trip(local.handle, std::min<uint64_t>(ns, CB_MAX_DURATION_NS));
      what = "trip";
    }
  } else if (b.state == "forced_open") {
    st = local.state == CB_STATE_FORCED_OPEN ? CB_OK : cb_force_open(local.handle);
    what = "force_open";
  } else if (b.state == "disabled") {
    st = local.state == CB_STATE_DISABLED ? CB_OK : cb_disable(local.handle);
    what = "disable";
  } else {
    st = local.state == CB_STATE_CLOSED ? CB_OK : cb_reset(local.handle);
    what = "reset";
  }
  const int before = local.state;
  files_.refresh(local);
  log_event("applied", {{"breaker", b.name},
                        {"epoch", std::to_string(b.epoch)},
                        {"state", b.state},
                        {"by", b.by},
                        {"call", what},
                        {"from", state_word(before)},
                        {"remaining_ms", std::to_string(local.retry_after_ns / 1'000'000)},
                        {"status", st == CB_OK ? "ok" : cb_status_name(st)}});
}

// Tells the fleet, in one call, what this host's breakers did and still
// hold. A trip the fleet's running period already covers (within the
// slack) is dropped, not sent; one the fleet has not heard of waits this
// host's rank's delay first, so that at an outage's onset a few hosts per
// breaker publish and the rest hear them.
void Agent::publish_pending() {
  const int64_t now = wall_ms();
  publish_at_ms_ = INT64_MAX;
  std::vector<fleet::Change> changes;
  for (auto &[name, side] : sides_) {
    if (side.pending == Pending::None) continue;
    if (std::optional<fleet::Change> c = news_of(name, side, now)) changes.push_back(std::move(*c));
  }
  // A trip now waiting for its turn: its host reads the log at the
  // waiting pace from now on, to hear an earlier rank in time.
  if (publish_at_ms_ != INT64_MAX)
    next_read_ms_ = std::min(next_read_ms_, read_sent_ms_ + kWaitingReadMs);
  if (changes.empty()) return;
  // Pending news stays pending until Redis has answered (a lost
  // connection throws here, and it is told after the reconnection).
  const std::vector<fleet::ChangeResult> results =
      fleet::publish_changes(*redis_, keys_, opts_.host, now, publish_slack_ms(), changes);
  for (size_t i = 0; i < changes.size(); ++i) take_result(changes[i], results[i], now);
}

// The change to send for a breaker's pending news, or nullopt: it waits
// for its turn, the fleet's state already covers it, or it did not last.
std::optional<fleet::Change> Agent::news_of(const std::string &name, Side &side, int64_t now) {
  const LocalBreaker *open = nullptr, *forced = nullptr, *closed = nullptr;
  for (const LocalBreaker &b : files_.breakers()[name]) {
    if (b.state == CB_STATE_OPEN && (open == nullptr || b.retry_after_ns > open->retry_after_ns))
      open = &b;
    if (b.state == CB_STATE_FORCED_OPEN) forced = &b;
    if (b.state == CB_STATE_CLOSED) closed = &b;
  }
  fleet::Change c{name, "", 0, ""};
  if (side.pending == Pending::Trip && open != nullptr) {
    c.until_ms = now + int64_t(open->retry_after_ns / 1'000'000);
    if (!side.lease_mine && !trip_turn(name, side, c.until_ms, now)) return std::nullopt;
    c.kind = "trip";
    c.reason = side.lease_mine ? "probe_failed" : "trip";
  } else if (side.pending == Pending::ForceOpen && forced != nullptr) {
    c.kind = c.reason = "force_open";
  } else if (side.pending == Pending::Closed && closed != nullptr) {
    c.kind = "closed";
    c.reason = "probe_succeeded";
  } else {
    side.pending = Pending::None;  // it did not last: nothing to tell
    return std::nullopt;
  }
  return c;
}

// Whether a trip of this host's (ending at until_ms) is to be sent now:
// not when the fleet's state covers it (dropped: the host follows the
// fleet), nor before its rank's turn (publish_at_ms_ says when).
bool Agent::trip_turn(const std::string &name, Side &side, int64_t until_ms, int64_t now) {
  const bool covered = (side.state == "open" && side.until_ms > now &&
                        until_ms <= side.until_ms + publish_slack_ms()) ||
                       side.state == "forced_open" || side.state == "disabled";
  if (covered) {
    FleetBreaker fleet;
    fleet.name = name;
    fleet.epoch = side.applied_epoch;
    fleet.state = side.state;
    fleet.until_ms = side.until_ms;
    for (LocalBreaker &local : files_.breakers()[name])
      if (side.state != "open" || local.state == CB_STATE_OPEN) act(local, fleet);
    side.pending = Pending::None;
    ++gauges_.dropped;
    return false;
  }
  const int64_t at = side.pending_since_ms + publish_delay_ms(name);
  if (now >= at) return true;
  publish_at_ms_ = std::min(publish_at_ms_, at);  // others may say it first
  return false;
}

// What Redis answered to one change sent.
void Agent::take_result(const fleet::Change &change, const fleet::ChangeResult &r, int64_t now) {
  Side &side = sides_[change.name];
  side.pending = Pending::None;
  if (change.kind == "trip") ++gauges_.trips_sent;
  if (!r.foreign.empty()) {
    ignored(keys_.breaker(change.name), r.foreign);
    return;
  }
  log_event(r.changed ? "published" : "absorbed",
            {{"breaker", change.name},
             {"kind", change.kind},
             {"epoch", std::to_string(r.fleet.epoch)},
             {"state", r.fleet.state},
             {"remaining_ms", std::to_string(std::max<int64_t>(change.until_ms - now, 0))},
             {"waited_ms", std::to_string(now - side.pending_since_ms)}});
  side.applied_epoch = std::max(side.applied_epoch, r.fleet.epoch);
  side.state = r.fleet.state;
  side.until_ms = r.fleet.until_ms;
  side.trips = r.fleet.trips;
  if (r.changed) {
    ++gauges_.published;
    side.lease_mine = false;
    side.holding = false;
    return;
  }
  // Absorbed: the fleet's period (or an operator's state) stands, and this
  // host's breaker follows it rather than probing at its own end.
  for (LocalBreaker &local : files_.breakers()[change.name]) act(local, r.fleet);
}

// Near the end of the fleet's open period, a few hosts whose calls wait
// for a probe (ranked by hash, more of them the longer no verdict comes)
// claim the probe lease and one wins: its breaker probes. The others hold
// theirs OPEN until the verdict or until they may claim in turn; a host
// with no calls waiting never claims.
void Agent::manage_leases() {
  const int64_t now = wall_ms();
  std::vector<std::string> claims, renewals;
  for (auto &[name, side] : sides_) {
    if (side.state != "open" || side.until_ms - now > claim_margin_ms()) continue;
    const bool half_open = any_in(name, CB_STATE_HALF_OPEN);
    if (!half_open && !any_in(name, CB_STATE_OPEN)) continue;
    if (side.lease_mine) {
      if (half_open) {  // probing: keep the lease while the probe is out
        renewals.push_back(name);
      } else if (now >= side.lease_until_ms) {
        side.lease_mine = false;
        log_event("released", {{"breaker", name}, {"why", "the lease ran out"}});
      }
      continue;
    }
    const bool demand = side.rejected_ms >= 0 && now - side.rejected_ms <= kDemandMs;
    if (!demand || now < side.claim_after_ms || !may_claim(name, side.until_ms, now)) {
      hold_for_probe(name, side);
      continue;
    }
    claims.push_back(name);
    ++gauges_.lease_claims;
  }
  claim(claims, now);
  renew(renewals);
}

// One round trip for every claim: SET NX and PTTL each.
void Agent::claim(const std::vector<std::string> &claims, int64_t now) {
  std::vector<fleet::Command> pipeline;
  for (const std::string &name : claims) {
    pipeline.push_back(
        {"SET", keys_.lease(name), opts_.host, "NX", "PX", std::to_string(lease_ms())});
    pipeline.push_back({"PTTL", keys_.lease(name)});
  }
  std::vector<Reply> replies = redis_->pipeline(pipeline);
  for (size_t i = 0; i < claims.size(); ++i) {
    Side &side = sides_[claims[i]];
    const redisReply *set = replies[2 * i].get(), *ttl = replies[2 * i + 1].get();
    if (is_error(set)) {
      ignored(keys_.lease(claims[i]), text_of(set));
      side.claim_after_ms = now + lease_ms();
      continue;
    }
    if (set->type == REDIS_REPLY_STATUS && text_of(set) == "OK") {
      side.lease_mine = true;
      side.lease_until_ms = now + lease_ms();
      side.holding = false;
      log_event("lease", {{"breaker", claims[i]}, {"ms", std::to_string(lease_ms())}});
      continue;
    }
    // Another host holds it: ask again only once its lease would have run out.
    const int64_t left = ttl->type == REDIS_REPLY_INTEGER && ttl->integer > 0 ? ttl->integer : 0;
    side.claim_after_ms = now + left + opts_.interval_ms;
    hold_for_probe(claims[i], side);
  }
}

// The leases this host holds while its probe is out.
void Agent::renew(const std::vector<std::string> &renewals) {
  for (const std::string &name : renewals) {
    Reply r = redis_->eval(fleet::scripts::kRenew, {keys_.lease(name)},
                           {opts_.host, std::to_string(lease_ms())});
    Side &side = sides_[name];
    if (is_error(r.get())) {
      ignored(keys_.lease(name), text_of(r.get()));
    } else if (r->type == REDIS_REPLY_INTEGER && r->integer == 1) {
      side.lease_until_ms = wall_ms() + lease_ms();
    } else {
      side.lease_mine = false;
      log_event("released", {{"breaker", name}, {"why", "the lease ran out"}});
    }
  }
}

bool Agent::any_in(const std::string &name, int state) {
  for (const LocalBreaker &b : files_.breakers()[name])
    if (b.state == state) return true;
  return false;
}

void Agent::hold_for_probe(const std::string &name, Side &side) {
  for (LocalBreaker &b : files_.breakers()[name]) {
    if (b.state != CB_STATE_OPEN) continue;
    const int st = cb_hold_open(b.handle, files_.clock_now(b) + ms_to_ns(claim_margin_ms()));
    if (st == CB_OK && !side.holding)
      log_event("holding", {{"breaker", name}, {"for", "the lease holder's probe"}});
    side.holding |= st == CB_OK;
  }
}

// --fleet-counts only: the host's count deltas added to the fleet's
// hashes, one call an interval for every breaker whose counts moved.
void Agent::flush_counts() {
  if (!opts_.fleet_counts) return;
  std::vector<std::string> args{keys_.prefix};
  std::vector<std::string> names;
  for (auto &[name, side] : sides_) {
    const Counts &c = side.unsent;
    if (c.admitted == 0 && c.rejected == 0 && c.successes == 0 && c.failures == 0) continue;
    names.push_back(name);
    args.insert(args.end(), {name, std::to_string(c.admitted), std::to_string(c.rejected),
                             std::to_string(c.successes), std::to_string(c.failures)});
  }
  if (names.empty()) return;
  Reply r = redis_->eval(fleet::scripts::kFlush, {}, args);
  if (is_error(r.get())) {
    ignored(keys_.prefix + "b:*", text_of(r.get()));
  } else if (r->type == REDIS_REPLY_INTEGER && r->integer > 0) {
    ignored(keys_.prefix + "b:*", std::to_string(r->integer) + " breakers' hashes are not ours");
  }
  for (const std::string &n : names) sides_[n].unsent = Counts{};
}

// Every few seconds, one round trip: this host alive until three beats
// from now, the instance check, the live host count (which the ranks are
// over), and its name set kept alive. The set itself is written only when
// no host has written it yet.
void Agent::heartbeat() {
  const int64_t now = wall_ms();
  if (now < next_heartbeat_ms_) return;
  next_heartbeat_ms_ = now + heartbeat_ms();
  std::vector<std::string> names;
  names.reserve(files_.breakers().size());
  for (const auto &[name, locals] : files_.breakers()) names.push_back(name);
  std::sort(names.begin(), names.end());
  const std::string digest = digest_of(names);
  const std::string names_ttl = std::to_string(2 * host_ttl_ms());
  std::vector<fleet::Command> cmds{
      {"ZADD", keys_.hosts(), std::to_string(now + host_ttl_ms()), opts_.host},
      {"GET", keys_.instance()},
      {"ZCOUNT", keys_.hosts(), std::to_string(now), "+inf"},
      {"PEXPIRE", keys_.name_set(digest), names_ttl}};
  if (digest != digest_sent_) cmds.push_back({"HSET", keys_.host_sets(), opts_.host, digest});
  // Hosts gone for a day are forgotten, once an hour or so per host.
  if (++heartbeats_ % 720 == 1)
    cmds.push_back({"ZREMRANGEBYSCORE", keys_.hosts(), "-inf", std::to_string(now - 86'400'000)});
  std::vector<Reply> r = redis_->pipeline(cmds);
  for (const Reply &reply : r)
    if (is_error(reply.get())) ignored(keys_.prefix + "hosts", text_of(reply.get()));
  if (r[2]->type == REDIS_REPLY_INTEGER) {
    live_hosts_ = size_t(std::max<long long>(1, r[2]->integer));
    gauges_.live_hosts = live_hosts_;
  }
  const bool names_missing = r[3]->type == REDIS_REPLY_INTEGER && r[3]->integer == 0;
  if (names_missing && !names.empty()) write_names(names, digest);
  digest_sent_ = digest;
  check_instance(r[1].get());
}

void Agent::write_names(const std::vector<std::string> &names, const std::string &digest) {
  fleet::Command set{"SADD", keys_.name_set(digest)};
  set.insert(set.end(), names.begin(), names.end());
  fleet::Command all = set;
  all[1] = keys_.names();  // and the fleet's, so that `cbctl fleet list` shows them
  std::vector<Reply> r = redis_->pipeline(
      {set, {"PEXPIRE", keys_.name_set(digest), std::to_string(2 * host_ttl_ms())}, all});
  for (const Reply &reply : r)
    if (is_error(reply.get())) ignored(keys_.name_set(digest), text_of(reply.get()));
}

void Agent::check_instance(const redisReply *r) {
  const std::string now_instance = text_of(r);
  if (r != nullptr && r->type == REDIS_REPLY_STRING && now_instance == instance_) return;
  if (r != nullptr && r->type != REDIS_REPLY_STRING && r->type != REDIS_REPLY_NIL) {
    // Not ours to judge: say so once, and go on with the epochs we hold.
    ignored(keys_.instance(), is_error(r) ? now_instance : "not a string");
    return;
  }
  if (r == nullptr || r->type == REDIS_REPLY_NIL) {
    std::vector<Reply> again =
        redis_->pipeline({{"SET", keys_.instance(), random_id(), "NX"}, {"GET", keys_.instance()}});
    instance_ = text_of(again[1].get());
  } else {
    instance_ = now_instance;  // another agent repopulated first, or a foreign value
  }
  log_event("emptied", {{"redis", connector_.describe()}});
  resync(true);
}

// The rows --listen serves, refreshed at most once a second and only
// while a metrics server reads them: a scrape never reaches Redis.
void Agent::share_rows() {
  if (!gauges_.rows_wanted) return;
  const int64_t now = wall_ms();
  if (now < next_rows_ms_) return;
  next_rows_ms_ = now + 1000;
  std::vector<BreakerRow> rows;
  rows.reserve(files_.breakers().size());
  for (const auto &[name, locals] : files_.breakers()) {
    BreakerRow row;
    row.name = name;
    if (auto it = sides_.find(name); it != sides_.end()) {
      row.fleet_state = it->second.state;
      row.until_ms = it->second.until_ms;
      row.fleet_trips = it->second.trips;
    }
    if (!locals.empty()) row.host_state = locals.front().state;
    for (const LocalBreaker &b : locals) {
      row.trips += b.trips;
      row.counts.admitted += b.counts.admitted;
      row.counts.rejected += b.counts.rejected;
      row.counts.successes += b.counts.successes;
      row.counts.failures += b.counts.failures;
    }
    rows.push_back(std::move(row));
  }
  std::sort(rows.begin(), rows.end(),
            [](const BreakerRow &a, const BreakerRow &b) { return a.name < b.name; });
  std::lock_guard<std::mutex> lock(gauges_.rows_mutex);
  gauges_.rows.swap(rows);
}

}  // namespace lazybreaker::agent
