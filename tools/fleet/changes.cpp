#include "changes.hpp"

#include <algorithm>
#include <charconv>
#include <sstream>

#include "scripts.hpp"

namespace lazybreaker::fleet {
namespace {

// "EPOCH STATE UNTIL_MS TRIPS REASON[ BY]", as kPublish packs it.
bool unpack(const std::string &value, FleetBreaker *b) {
  std::istringstream in(value);
  std::string epoch, until, trips;
  if (!(in >> epoch >> b->state >> until >> trips >> b->reason)) return false;
  in >> b->by;
  return whole_number(epoch, &b->epoch) && whole_number(until, &b->until_ms) &&
         whole_number(trips, &b->trips) &&
         (b->state == "closed" || b->state == "open" || b->state == "forced_open" ||
          b->state == "disabled");
}

LogEntry entry_of(const redisReply *e) {
  LogEntry le;
  if (e == nullptr || e->type != REDIS_REPLY_ARRAY || e->elements != 2) return le;
  le.id = text_of(e->element[0]);
  const redisReply *f = e->element[1];
  if (f->type != REDIS_REPLY_ARRAY) return le;
  bool has_seq = false, bad = false;
  for (size_t j = 0; j + 1 < f->elements; j += 2) {
    const std::string k = text_of(f->element[j]), v = text_of(f->element[j + 1]);
    if (k == "seq") {
      has_seq = whole_number(v, &le.seq);
    } else if (k == "by") {
      le.by = v;
    } else if (k.rfind("b:", 0) == 0) {
      FleetBreaker b;
      b.name = k.substr(2);
      if (unpack(v, &b))
        le.changes.push_back(std::move(b));
      else
        bad = true;
    }
  }
  for (FleetBreaker &b : le.changes) b.by = le.by;
  le.ok = has_seq && !bad && !le.changes.empty();
  return le;
}

}  // namespace

std::vector<FleetBreaker> open_breakers(const redisReply *r, std::vector<std::string> *foreign) {
  std::vector<FleetBreaker> out;
  if (r == nullptr || r->type != REDIS_REPLY_ARRAY) return out;
  for (size_t i = 0; i + 1 < r->elements; i += 2) {
    FleetBreaker b;
    b.name = text_of(r->element[i]);
    if (unpack(text_of(r->element[i + 1]), &b))
      out.push_back(std::move(b));
    else
      foreign->push_back(b.name);
  }
  return out;
}

std::vector<ChangeResult> publish_changes(Redis &redis, const Keys &keys, const std::string &by,
                                          int64_t now_ms, int64_t slack_ms,
                                          const std::vector<Change> &changes) {
  std::vector<ChangeResult> results(changes.size());
  for (size_t from = 0; from < changes.size(); from += scripts::kMaxChangesPerCall) {
    const size_t to = std::min(changes.size(), from + scripts::kMaxChangesPerCall);
    std::vector<std::string> args{keys.prefix, by, std::to_string(now_ms),
                                  std::to_string(slack_ms)};
    for (size_t i = from; i < to; ++i)
      args.insert(args.end(), {changes[i].name, changes[i].kind,
                               std::to_string(changes[i].until_ms), changes[i].reason});
    Reply r = redis.eval(scripts::kPublish,
                         {keys.log(), keys.names(), keys.sequence(), keys.open()}, args);
    for (size_t i = from; i < to; ++i) {
      ChangeResult &out = results[i];
      out.fleet.name = changes[i].name;
      if (is_error(r.get()) || r->type != REDIS_REPLY_ARRAY || r->elements != to - from) {
        out.foreign = is_error(r.get()) ? text_of(r.get()) : "an answer that is not ours";
        continue;
      }
      const redisReply *e = r->element[i - from];
      if (is_error(e) || e->type != REDIS_REPLY_ARRAY || e->elements != 5) {
        out.foreign = is_error(e) ? text_of(e) : "an answer that is not ours";
        continue;
      }
      bool integers = true;
      for (size_t k : {0, 1, 3, 4}) integers &= e->element[k]->type == REDIS_REPLY_INTEGER;
      if (!integers) {
        out.foreign = "an answer that is not ours";
        continue;
      }
      out.changed = e->element[0]->integer == 1;
      out.fleet.epoch = uint64_t(e->element[1]->integer);
      out.fleet.state = text_of(e->element[2]);
      out.fleet.until_ms = e->element[3]->integer;
      out.fleet.trips = uint64_t(e->element[4]->integer);
      out.fleet.by = out.changed ? by : "";
      out.fleet.reason = changes[i].reason;
    }
  }
  return results;
}

std::vector<LogEntry> log_entries(const redisReply *r, bool xread) {
  std::vector<LogEntry> out;
  if (r == nullptr || r->type != REDIS_REPLY_ARRAY) return out;
  const redisReply *entries = r;
  if (xread) {  // [[stream, entries]]
    if (r->elements != 1 || r->element[0]->type != REDIS_REPLY_ARRAY ||
        r->element[0]->elements != 2)
      return out;
    entries = r->element[0]->element[1];
  }
  if (entries->type != REDIS_REPLY_ARRAY) return out;
  for (size_t i = 0; i < entries->elements; ++i) out.push_back(entry_of(entries->element[i]));
  return out;
}

}  // namespace lazybreaker::fleet
