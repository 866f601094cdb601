#include "connection.hpp"

#include <algorithm>
#include <chrono>
#include <utility>

namespace lazybreaker::fleet {
namespace {

// A sentinel answers from memory: a short wait per sentinel keeps one that
// is down from holding up the next.
constexpr int kSentinelTimeoutMs = 500;
// A watch silent this long gets a PING, and one that leaves the PING
// unanswered as long again is given up: a sentinel host that vanished
// sends no reset, and its socket would never say so.
constexpr int64_t kWatchPingMs = 2000;
// A watch that could not be made is tried again (at the next sentinel)
// after this, doubling: a sentinel that swallows packets costs the caller
// kWatchTimeoutMs per attempt.
constexpr int64_t kWatchRetryMinMs = 250, kWatchRetryMaxMs = 4000;

int64_t monotonic_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(steady_clock::now().time_since_epoch()).count();
}

std::string text_of(const HostPort &at) {
  const bool v6 = at.host.find(':') != std::string::npos;
  return (v6 ? "[" + at.host + "]" : at.host) + ":" + std::to_string(at.port);
}

bool same(const HostPort &a, const HostPort &b) { return a.host == b.host && a.port == b.port; }

// SENTINEL get-master-addr-by-name's answer: [host, port].
bool address_of(const redisReply *r, HostPort *out) {
  if (r == nullptr || r->type != REDIS_REPLY_ARRAY || r->elements != 2) return false;
  const std::string port = fleet::text_of(r->element[1]);
  if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos)
    return false;
  out->host = fleet::text_of(r->element[0]);
  out->port = std::stoi(port);
  return !out->host.empty() && out->port > 0 && out->port <= 65535;
}

// Every connection is made here: to `at`, with the scheme (plain or TLS)
// and the credentials and database that `options` give.
std::unique_ptr<Redis> connection_to(const HostPort &at, const ConnectionOptions &options,
                                     int timeout_ms) {
  return std::make_unique<Redis>(at, options, timeout_ms);
}

}  // namespace

Connector::Connector(ConnectionOptions options) : options_(std::move(options)) {}
Connector::~Connector() = default;

std::unique_ptr<Redis> Connector::connect_to(const HostPort &at, int timeout_ms) const {
  return connection_to(at, options_, timeout_ms);
}

// A sentinel has no databases and, by default, no password: it is asked
// without credentials first, and with the URL's user and password when it
// requires them (sentinel.conf's requirepass set to the data's).
std::unique_ptr<Redis> Connector::reach_sentinel(size_t i, int timeout_ms) const {
  ConnectionOptions sentinel = options_;
  sentinel.url.db = 0;
  const bool have_credentials = !sentinel.password.empty() || !sentinel.url.password.empty();
  try {
    ConnectionOptions bare = sentinel;
    bare.url.user.clear();
    bare.url.password.clear();
    bare.password.clear();
    return connection_to(options_.sentinels[i], bare, timeout_ms);
  } catch (const RedisDown &e) {
    if (!e.auth_refused || !have_credentials) throw;
  }
  return connection_to(options_.sentinels[i], sentinel, timeout_ms);
}

// Asks sentinel i where the primary is, connects there and checks that it
// says it is the primary: a sentinel can lag a failover (it was cut off)
// and name the old primary, now a replica.
std::unique_ptr<Redis> Connector::ask_sentinel(size_t i, int timeout_ms, Tries *tries,
                                               std::string *why) {
  const std::string sentinel = "sentinel " + text_of(options_.sentinels[i]);
  HostPort at;
  try {
    std::unique_ptr<Redis> s = reach_sentinel(i, std::min(timeout_ms, kSentinelTimeoutMs));
    Reply r = s->run({"SENTINEL", "get-master-addr-by-name", options_.sentinel_master});
    if (is_error(r.get())) {
      const std::string said = fleet::text_of(r.get());
      *why = sentinel + (said.rfind("ERR unknown command", 0) == 0
                             ? " is no sentinel (a Redis server? it does not know SENTINEL)"
                             : " answered: " + said);
      return nullptr;
    }
    if (!address_of(r.get(), &at)) {
      *why = sentinel + " monitors no primary named '" + options_.sentinel_master + "'";
      return nullptr;
    }
  } catch (const RedisDown &e) {
    *why = sentinel + ": " + e.what();
    return nullptr;
  }
  const std::string named = sentinel + " names " + text_of(at);
  // Sentinels that lag all name the same dead primary: it is given one
  // timeout per call, not one per sentinel.
  for (const HostPort &failed : tries->failed)
    if (same(failed, at)) {
      *why = named + " (again)";
      return nullptr;
    }
  try {
    std::unique_ptr<Redis> p = connect_to(at, timeout_ms);
    Reply role = p->run({"ROLE"});
    const std::string said = role && role->type == REDIS_REPLY_ARRAY && role->elements > 0
                                 ? fleet::text_of(role->element[0])
                                 : fleet::text_of(role.get());
    if (said != "master") {
      *why = named + ", whose ROLE says " + (said.empty() ? "nothing" : said);
      return nullptr;
    }
    first_sentinel_ = i;
    primary_at_ = at;
    announced_ = false;  // what was announced is where this connected
    return p;
  } catch (const RedisDown &e) {
    *why = named + ": " + e.what();
    tries->auth_refused = tries->auth_refused || e.auth_refused;
    tries->failed.push_back(at);
    return nullptr;
  }
}

std::unique_ptr<Redis> Connector::primary(int timeout_ms) {
  if (options_.sentinels.empty())
    return connect_to({options_.url.host, options_.url.port}, timeout_ms);
  std::string whys;
  Tries tries;
  const size_t n = options_.sentinels.size();
  for (size_t k = 0; k < n; ++k) {
    std::string why;
    if (auto p = ask_sentinel((first_sentinel_ + k) % n, timeout_ms, &tries, &why)) return p;
    whys += (whys.empty() ? "" : "; ") + why;
  }
  throw RedisDown("no sentinel named a primary for '" + options_.sentinel_master + "': " + whys,
                  tries.auth_refused);
}

int Connector::failover_fd() {
  keep_watching();
  return watch_ ? watch_->fd() : -1;
}

bool Connector::failover_announced() {
  keep_watching();
  return std::exchange(announced_, false);
}

// Reads what the watch has (never waiting), keeps it alive, and makes it
// anew when it is gone.
void Connector::keep_watching() {
  if (options_.sentinels.empty()) return;
  const int64_t now = monotonic_ms();
  if (watch_) {
    try {
      while (Reply r = watch_->try_read()) on_watch_reply(r.get());
      if (ping_ms_ != 0 && now - ping_ms_ >= kWatchPingMs) {
        unwatch();
      } else if (ping_ms_ == 0 && now - heard_ms_ >= kWatchPingMs) {
        watch_->send({"PING"});
        ping_ms_ = now;
      }
    } catch (const RedisDown &) {
      unwatch();
    }
  }
  if (!watch_ && now >= next_watch_ms_) watch_next(now);
}

void Connector::watch_next(int64_t now) {
  const size_t i = next_watched_ % options_.sentinels.size();
  // After a loss or a refusal, the next sentinel: the one watched may be
  // the one that went down with the old primary's host.
  next_watched_ = i + 1;
  try {
    std::unique_ptr<Redis> s = reach_sentinel(i, kWatchTimeoutMs);
    // A failover while nothing watched (this one, or a lost watch before
    // it) shows as the primary being elsewhere than where we connected.
    if (!primary_at_.host.empty()) {
      HostPort at;
      Reply r = s->run({"SENTINEL", "get-master-addr-by-name", options_.sentinel_master});
      if (address_of(r.get(), &at)) moved_to(at);
    }
    s->send({"SUBSCRIBE", "+switch-master"});
    watch_ = std::move(s);
    heard_ms_ = now;
    ping_ms_ = 0;
    watch_retry_ms_ = kWatchRetryMinMs;
  } catch (const RedisDown &) {
    next_watch_ms_ = now + watch_retry_ms_;
    watch_retry_ms_ = std::min(watch_retry_ms_ * 2, kWatchRetryMaxMs);
  }
}

void Connector::unwatch() {
  watch_.reset();
  next_watch_ms_ = 0;  // at once, at the next sentinel
}

// "+switch-master" messages: "NAME OLD-IP OLD-PORT NEW-IP NEW-PORT"; the
// rest (the subscription's confirmation, PING's reply) only says the
// sentinel is there.
void Connector::on_watch_reply(const redisReply *r) {
  heard_ms_ = monotonic_ms();
  ping_ms_ = 0;
  if (r->type != REDIS_REPLY_ARRAY || r->elements != 3 ||
      fleet::text_of(r->element[0]) != "message")
    return;
  std::vector<std::string> words;
  const std::string payload = fleet::text_of(r->element[2]);
  for (size_t start = 0; start <= payload.size();) {
    const size_t space = std::min(payload.find(' ', start), payload.size());
    words.push_back(payload.substr(start, space - start));
    start = space + 1;
  }
  if (words.size() != 5 || words[0] != options_.sentinel_master) return;
  const std::string &port = words[4];
  if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos)
    return;
  moved_to({words[3], std::stoi(port)});
}

// Announced only when it matters to the caller: a primary() already made
// to the new address (after a READONLY, say) needs no second reconnect.
void Connector::moved_to(const HostPort &at) {
  if (primary_at_.host.empty() || !same(at, primary_at_)) announced_ = true;
}

std::string Connector::describe() const {
  if (options_.sentinels.empty()) return redacted(options_.url);
  std::string list;
  for (const HostPort &s : options_.sentinels) list += (list.empty() ? "" : ",") + text_of(s);
  const std::string whose = "primary '" + options_.sentinel_master + "' of sentinels " + list;
  if (primary_at_.host.empty()) return "the " + whose;
  RedisUrl url = options_.url;
  url.host = primary_at_.host;
  url.port = primary_at_.port;
  return redacted(url) + " (" + whose + ")";
}

}  // namespace lazybreaker::fleet
