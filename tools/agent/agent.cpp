#include "agent.hpp"

#include <sys/random.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>

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

std::string random_id() {
  unsigned char bytes[12] = {};
  if (getrandom(bytes, sizeof bytes, 0) != ssize_t(sizeof bytes)) {
    const auto t = std::chrono::steady_clock::now().time_since_epoch().count();
    std::memcpy(bytes, &t, std::min(sizeof t, sizeof bytes));
  }
  std::string id;
  for (unsigned char b : bytes) {
    char buf[3];
    std::snprintf(buf, sizeof buf, "%02x", b);
    id += buf;
  }
  return id;
}

const char *state_word(int state) {
  const char *n = cb_state_name(state);
  return n != nullptr ? n : "unknown";
}

uint64_t ms_to_ns(int64_t ms) { return ms <= 0 ? 0 : uint64_t(ms) * 1'000'000u; }

// An entry of XREAD's reply: its id and its fields.
struct LogEntry {
  std::string id, name;
  uint64_t epoch = 0, seq = 0;
  bool ok = false;
};

std::vector<LogEntry> log_entries(const redisReply *r) {
  std::vector<LogEntry> out;
  if (r == nullptr || r->type != REDIS_REPLY_ARRAY || r->elements == 0) return out;
  const redisReply *stream = r->element[0];
  if (stream->type != REDIS_REPLY_ARRAY || stream->elements != 2) return out;
  const redisReply *entries = stream->element[1];
  if (entries->type != REDIS_REPLY_ARRAY) return out;
  for (size_t i = 0; i < entries->elements; ++i) {
    const redisReply *e = entries->element[i];
    LogEntry le;
    if (e->type != REDIS_REPLY_ARRAY || e->elements != 2) continue;
    le.id = text_of(e->element[0]);
    const redisReply *f = e->element[1];
    bool has_name = false, has_epoch = false;
    for (size_t j = 0; f->type == REDIS_REPLY_ARRAY && j + 1 < f->elements; j += 2) {
      const std::string k = text_of(f->element[j]), v = text_of(f->element[j + 1]);
      char *end = nullptr;
      if (k == "name") le.name = v, has_name = true;
      if (k == "epoch") le.epoch = std::strtoull(v.c_str(), &end, 10), has_epoch = end && !*end;
      if (k == "seq") le.seq = std::strtoull(v.c_str(), &end, 10);
    }
    le.ok = has_name && has_epoch;
    out.push_back(le);
  }
  return out;
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
    : opts_(opts), files_(files), gauges_(gauges), keys_(opts.fleet) {}

void Agent::ignored(const std::string &key, const std::string &why) {
  ++gauges_.ignored;
  auto it = ignored_.find(key);
  if (it != ignored_.end() && it->second == why) return;
  if (ignored_.size() > 10000) ignored_.clear();  // bounded, at the cost of a repeated line
  ignored_[key] = why;
  log_event("ignored", {{"key", key}, {"why", why}});
}

void Agent::step() {
  const auto start = std::chrono::steady_clock::now();
  for (const std::string &why : files_.open_missing()) log_event("waiting", {{"file", why}});
  observe_host();
  sync();
  gauges_.last_poll_us = uint64_t(std::chrono::duration_cast<std::chrono::microseconds>(
                                      std::chrono::steady_clock::now() - start)
                                      .count());
}

// What the host's breakers did since the last step: each name's pending
// news for the fleet, and its counts.
void Agent::observe_host() {
  uint64_t n = 0;
  for (const LocalChange &c : files_.poll()) {
    ++n;
    LocalBreaker &b = *c.breaker;
    Side &side = sides_[b.name];
    side.unsent.admitted += c.delta.admitted;
    side.unsent.rejected += c.delta.rejected;
    side.unsent.successes += c.delta.successes;
    side.unsent.failures += c.delta.failures;
    if (c.tripped || (c.new_breaker && b.state == CB_STATE_OPEN)) {
      side.pending = Pending::Trip;
    } else if (b.state == CB_STATE_FORCED_OPEN && c.from_state != CB_STATE_FORCED_OPEN) {
      side.pending = Pending::ForceOpen;
    } else if (b.state == CB_STATE_CLOSED && side.lease_mine && c.delta.successes > 0 &&
               (c.from_state == CB_STATE_HALF_OPEN || c.from_state == CB_STATE_OPEN)) {
      // The probe's verdict: it may have gone out and closed the breaker
      // between two polls. (A host-local cb_reset, with no success
      // reported meanwhile, stays local.)
      side.pending = Pending::Closed;
    }
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
    read_log();
    publish_pending();
    manage_leases();
    flush_counts();
    heartbeat();
  } catch (const RedisDown &e) {
    drop(e.what());
  }
}

void Agent::connect() {
  try {
    redis_ = std::make_unique<Redis>(fleet::HostPort{opts_.redis.host, opts_.redis.port},
                                     opts_.connection, 1000);
    ++gauges_.reconnects;
    log_event("connected", {{"redis", fleet::redacted(opts_.redis)}, {"fleet", opts_.fleet}});
    gauges_.connected = true;
    outage_logged_ = false;
    backoff_ms_ = 100;
    next_heartbeat_ms_ = 0;
    names_sent_.clear();
    // Whose epochs do we hold? A Redis restarted empty (or flushed) has none.
    redis_->run({"SET", keys_.instance(), random_id(), "NX"});
    Reply r = redis_->run({"GET", keys_.instance()});
    const std::string now_instance = text_of(r.get());
    const bool fresh = now_instance != instance_;
    instance_ = now_instance;
    resync(fresh && was_connected_);
    was_connected_ = true;
  } catch (const RedisDown &e) {
    drop(e.what());
    if (e.auth_refused) log_event("refused", {{"why", "check --password-file and the URL's user"}});
  }
}

void Agent::drop(const std::string &why) {
  // Once per outage (also one that began before the first connection).
  if (redis_ || gauges_.connected || !outage_logged_)
    log_event("disconnected", {{"why", why}, {"retry_ms", std::to_string(backoff_ms_)}});
  outage_logged_ = true;
  redis_.reset();
  gauges_.connected = false;
  next_connect_ms_ = wall_ms() + backoff_ms_;
  backoff_ms_ = std::min<int64_t>(backoff_ms_ * 2, 2000);
  for (auto &[name, side] : sides_) side.lease_mine = false;
}

// Where the change log stands now: the next XREAD starts after it.
void Agent::take_log_position() {
  log_id_ = "0-0";
  log_seq_ = 0;
  Reply last = redis_->run({"XREVRANGE", keys_.log(), "+", "-", "COUNT", "1"});
  if (is_error(last.get())) {
    ignored(keys_.log(), text_of(last.get()));
    return;
  }
  if (last->type != REDIS_REPLY_ARRAY || last->elements != 1) return;
  const redisReply *entry = last->element[0];
  if (entry->type != REDIS_REPLY_ARRAY || entry->elements != 2) return;
  log_id_ = text_of(entry->element[0]);
  const redisReply *f = entry->element[1];
  for (size_t j = 0; f->type == REDIS_REPLY_ARRAY && j + 1 < f->elements; j += 2)
    if (text_of(f->element[j]) == "seq")
      log_seq_ = std::strtoull(text_of(f->element[j + 1]).c_str(), nullptr, 10);
}

// Reads these breakers' hashes (one round trip) and applies what moved.
void Agent::apply_hashes(const std::vector<std::string> &names) {
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

// Reads every local name's fleet hash and applies what moved. `fresh`: the
// Redis instance is not the one this agent's epochs came from, so they
// restart, and what this host knows (its OPEN and FORCED_OPEN breakers, its
// names) is told again: a Redis restarted empty is repopulated.
void Agent::resync(bool fresh) {
  take_log_position();
  std::vector<std::string> names;
  for (auto &[name, locals] : files_.breakers()) names.push_back(name);
  if (fresh) {
    for (auto &[name, side] : sides_) {
      side.applied_epoch = 0;
      if (side.pending != Pending::None) continue;
      for (const LocalBreaker &b : files_.breakers()[name]) {
        if (b.state == CB_STATE_OPEN) side.pending = Pending::Trip;
        if (b.state == CB_STATE_FORCED_OPEN) side.pending = Pending::ForceOpen;
      }
    }
    names_sent_.clear();  // the heartbeat lists this host's names again, now
    next_heartbeat_ms_ = 0;
    log_event("repopulated", {{"breakers", std::to_string(names.size())}});
  }
  if (!names.empty()) {
    fleet::Command add{"SADD", keys_.names()};
    add.insert(add.end(), names.begin(), names.end());
    Reply r = redis_->run(add);
    if (is_error(r.get())) ignored(keys_.names(), text_of(r.get()));
  }
  apply_hashes(names);
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
    redis_->run({"SET", keys_.instance(), random_id(), "NX"});
    Reply again = redis_->run({"GET", keys_.instance()});
    instance_ = text_of(again.get());
  } else {
    instance_ = now_instance;  // another agent repopulated first, or a foreign value
  }
  log_event("emptied", {{"redis", fleet::redacted(opts_.redis)}});
  resync(true);
}

void Agent::read_log() {
  std::vector<Reply> r = redis_->pipeline(
      {{"GET", keys_.instance()}, {"XREAD", "COUNT", "10000", "STREAMS", keys_.log(), log_id_}});
  check_instance(r[0].get());
  if (is_error(r[1].get())) {
    ignored(keys_.log(), text_of(r[1].get()));
    return;
  }
  std::map<std::string, uint64_t> moved;
  bool gap = false;
  for (const LogEntry &e : log_entries(r[1].get())) {
    log_id_ = e.id;
    if (!e.ok) {
      ignored(keys_.log(), "entry " + e.id + " is not a change");
      continue;
    }
    if (log_seq_ != 0 && e.seq != log_seq_ + 1) gap = true;
    log_seq_ = e.seq;
    auto side = sides_.find(e.name);
    if (side != sides_.end() && e.epoch > side->second.applied_epoch) moved[e.name] = e.epoch;
  }
  if (gap) {  // the log was trimmed past this agent, or written by a stranger
    log_event("resync", {{"why", "the change log skipped entries"}});
    resync(false);
    return;
  }
  std::vector<std::string> names;
  for (const auto &[name, epoch] : moved) names.push_back(name);
  apply_hashes(names);
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

void Agent::publish_pending() {
  for (auto &[name, side] : sides_) {
    if (side.pending == Pending::None) continue;
    if (publish(name, side)) ++gauges_.published;
    side.pending = Pending::None;
  }
}

// Tells the fleet what this host's breaker did, if it still holds.
bool Agent::publish(const std::string &name, Side &side) {
  std::vector<LocalBreaker> &locals = files_.breakers()[name];
  const LocalBreaker *open = nullptr, *forced = nullptr, *closed = nullptr;
  for (const LocalBreaker &b : locals) {
    if (b.state == CB_STATE_OPEN && (open == nullptr || b.retry_after_ns > open->retry_after_ns))
      open = &b;
    if (b.state == CB_STATE_FORCED_OPEN) forced = &b;
    if (b.state == CB_STATE_CLOSED) closed = &b;
  }
  const int64_t now = wall_ms();
  std::string kind, reason;
  int64_t until = 0;
  if (side.pending == Pending::Trip && open != nullptr) {
    kind = "trip";
    reason = side.lease_mine ? "probe_failed" : "trip";
    until = now + int64_t(open->retry_after_ns / 1'000'000);
  } else if (side.pending == Pending::ForceOpen && forced != nullptr) {
    kind = "force_open";
    reason = "force_open";
  } else if (side.pending == Pending::Closed && closed != nullptr) {
    kind = "closed";
    reason = "probe_succeeded";
  } else {
    return false;  // it did not last: nothing to tell
  }
  Reply r = redis_->eval(
      fleet::scripts::kChange,
      {keys_.breaker(name), keys_.log(), keys_.names(), keys_.lease(name), keys_.sequence()},
      {name, opts_.host, kind, std::to_string(until), std::to_string(now), reason});
  if (is_error(r.get())) {
    ignored(keys_.breaker(name), text_of(r.get()));
    return false;
  }
  if (r->type != REDIS_REPLY_ARRAY || r->elements != 4) return false;
  const bool changed = r->element[0]->integer == 1;
  const uint64_t epoch = uint64_t(r->element[1]->integer);
  log_event(changed ? "published" : "absorbed",
            {{"breaker", name},
             {"kind", kind},
             {"epoch", std::to_string(epoch)},
             {"state", text_of(r->element[2])},
             {"remaining_ms", std::to_string(std::max<int64_t>(until - now, 0))}});
  FleetBreaker fleet;
  fleet.name = name;
  fleet.epoch = epoch;
  fleet.state = text_of(r->element[2]);
  fleet.until_ms = r->element[3]->type == REDIS_REPLY_INTEGER ? r->element[3]->integer : until;
  side.applied_epoch = std::max(side.applied_epoch, epoch);
  side.state = fleet.state;
  side.until_ms = fleet.until_ms;
  if (changed) {
    side.lease_mine = false;
    side.holding = false;
    return true;
  }
  // Absorbed: the fleet's period (or an operator's state) stands, and this
  // host's breaker follows it rather than probing at its own period's end.
  for (LocalBreaker &local : files_.breakers()[name]) act(local, fleet);
  return false;
}

// Near the end of the fleet's open period, one host takes the probe lease
// and lets its breaker probe; the others hold theirs OPEN until the
// verdict comes back (or the lease runs out and another host takes it).
void Agent::manage_leases() {
  const int64_t now = wall_ms();
  std::vector<std::string> names;
  std::vector<fleet::Command> cmds;
  for (auto &[name, side] : sides_) {
    if (side.state != "open" || side.until_ms - now > claim_margin_ms()) continue;
    bool half_open = false, open = false;
    for (const LocalBreaker &b : files_.breakers()[name]) {
      half_open |= b.state == CB_STATE_HALF_OPEN;
      open |= b.state == CB_STATE_OPEN;
    }
    if (!half_open && !open) continue;
    if (!side.lease_mine && now < side.claim_after_ms) {  // another host's lease is young
      hold_for_probe(name, side);
      continue;
    }
    names.push_back(name);
    const std::string px = std::to_string(lease_ms());
    if (side.lease_mine && half_open)  // probing: keep the lease
      cmds.push_back({"EVAL", fleet::scripts::kRenew, "1", keys_.lease(name), opts_.host, px});
    else if (side.lease_mine)  // no call yet: is it still ours?
      cmds.push_back({"GET", keys_.lease(name)});
    else
      cmds.push_back({"SET", keys_.lease(name), opts_.host, "NX", "PX", px});
  }
  std::vector<Reply> replies = redis_->pipeline(cmds);
  for (size_t i = 0; i < names.size(); ++i) on_lease_reply(names[i], replies[i].get());
}

void Agent::on_lease_reply(const std::string &name, const redisReply *r) {
  Side &side = sides_[name];
  if (is_error(r)) {
    ignored(keys_.lease(name), text_of(r));
    return;
  }
  if (side.lease_mine) {
    const bool kept = r->type == REDIS_REPLY_INTEGER ? r->integer == 1 : text_of(r) == opts_.host;
    if (!kept) {
      side.lease_mine = false;
      log_event("released", {{"breaker", name}, {"why", "the lease ran out"}});
    }
    return;
  }
  if (r->type == REDIS_REPLY_STATUS && text_of(r) == "OK") {
    side.lease_mine = true;
    side.holding = false;
    log_event("lease", {{"breaker", name}, {"ms", std::to_string(lease_ms())}});
    return;
  }
  // Another host holds the lease: ask again once half of it has passed
  // (one claim per breaker per half lease, not per poll, during an outage).
  side.claim_after_ms = wall_ms() + lease_ms() / 2;
  hold_for_probe(name, side);
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

void Agent::flush_counts() {
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

void Agent::heartbeat() {
  const int64_t now = wall_ms();
  if (now < next_heartbeat_ms_) return;
  next_heartbeat_ms_ = now + std::max<int64_t>(1000, opts_.interval_ms);
  const std::string ttl = std::to_string(heartbeat_ttl_ms());
  std::set<std::string> names;
  for (const auto &[name, locals] : files_.breakers()) names.insert(name);
  std::vector<fleet::Command> cmds{{"SET", keys_.host(opts_.host), std::to_string(now), "PX", ttl},
                                   {"SADD", keys_.hosts(), opts_.host}};
  if (names != names_sent_) {
    cmds.push_back({"DEL", keys_.host_names(opts_.host)});
    if (!names.empty()) {
      fleet::Command add{"SADD", keys_.host_names(opts_.host)};
      add.insert(add.end(), names.begin(), names.end());
      cmds.push_back(add);
      add[1] = keys_.names();  // and the fleet's, so that `cbctl fleet list` shows them
      cmds.push_back(add);
    }
  }
  cmds.push_back({"PEXPIRE", keys_.host_names(opts_.host), ttl});
  for (const Reply &r : redis_->pipeline(cmds))
    if (is_error(r.get())) ignored(keys_.host_names(opts_.host), text_of(r.get()));
  names_sent_ = std::move(names);
}

}  // namespace lazybreaker::agent
