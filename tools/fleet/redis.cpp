#include "redis.hpp"

#include <poll.h>
#include <sys/time.h>

#include <cstring>

namespace lazybreaker::fleet {
namespace {

timeval to_timeval(int ms) { return timeval{ms / 1000, (ms % 1000) * 1000}; }

}  // namespace

Redis::Redis(const RedisUrl &url, const std::string &password, int timeout_ms)
    : ctx_(nullptr, redisFree) {
  ctx_.reset(redisConnectWithTimeout(url.host.c_str(), url.port, to_timeval(timeout_ms)));
  if (!ctx_) throw RedisDown("out of memory connecting to Redis");
  if (ctx_->err != 0) throw RedisDown(std::string("cannot connect: ") + ctx_->errstr);
  if (redisSetTimeout(ctx_.get(), to_timeval(timeout_ms)) != REDIS_OK)
    throw RedisDown("cannot set the socket timeout");
  const std::string &pass = password.empty() ? url.password : password;
  if (!pass.empty()) {
    Reply r = url.user.empty() ? run({"AUTH", pass}) : run({"AUTH", url.user, pass});
    if (is_error(r.get()))
      throw RedisDown("Redis refused the credentials: " + text_of(r.get()), true);
  }
  if (url.db != 0) {
    Reply r = run({"SELECT", std::to_string(url.db)});
    if (is_error(r.get())) throw RedisDown("cannot select database: " + text_of(r.get()));
  }
  Reply r = run({"PING"});
  if (is_error(r.get())) {
    const std::string why = text_of(r.get());
    throw RedisDown("Redis answered PING with: " + why, why.rfind("NOAUTH", 0) == 0);
  }
}

void Redis::append(const Command &argv) {
  std::vector<const char *> args;
  std::vector<size_t> lens;
  for (const std::string &a : argv) {
    args.push_back(a.data());
    lens.push_back(a.size());
  }
  if (redisAppendCommandArgv(ctx_.get(), int(args.size()), args.data(), lens.data()) != REDIS_OK)
    throw RedisDown(std::string("cannot send: ") + ctx_->errstr);
  ++commands_;
}

Reply Redis::read() {
  void *raw = nullptr;
  if (redisGetReply(ctx_.get(), &raw) != REDIS_OK || raw == nullptr)
    throw RedisDown(ctx_->err != 0 ? std::string("lost the connection: ") + ctx_->errstr
                                   : std::string("lost the connection"));
  return Reply(static_cast<redisReply *>(raw));
}

Reply Redis::run(const Command &argv) {
  append(argv);
  ++round_trips_;
  return read();
}

std::vector<Reply> Redis::pipeline(const std::vector<Command> &commands) {
  std::vector<Reply> replies;
  if (commands.empty()) return replies;
  for (const Command &c : commands) append(c);
  ++round_trips_;
  replies.reserve(commands.size());
  for (size_t i = 0; i < commands.size(); ++i) replies.push_back(read());
  return replies;
}

void Redis::send(const Command &argv) {
  append(argv);
  ++round_trips_;
  int done = 0;
  while (done == 0)
    if (redisBufferWrite(ctx_.get(), &done) != REDIS_OK)
      throw RedisDown(std::string("cannot send: ") + ctx_->errstr);
}

Reply Redis::try_read() {
  void *raw = nullptr;
  if (redisGetReplyFromReader(ctx_.get(), &raw) != REDIS_OK)
    throw RedisDown(std::string("bad reply: ") + ctx_->errstr);
  if (raw != nullptr) return Reply(static_cast<redisReply *>(raw));
  pollfd p{ctx_->fd, POLLIN, 0};
  if (::poll(&p, 1, 0) <= 0) return nullptr;
  if (redisBufferRead(ctx_.get()) != REDIS_OK)
    throw RedisDown(ctx_->err != 0 ? std::string("lost the connection: ") + ctx_->errstr
                                   : std::string("lost the connection"));
  if (redisGetReplyFromReader(ctx_.get(), &raw) != REDIS_OK)
    throw RedisDown(std::string("bad reply: ") + ctx_->errstr);
  return Reply(static_cast<redisReply *>(raw));
}

bool Redis::has_buffered() const {
  return ctx_->reader != nullptr && ctx_->reader->len > ctx_->reader->pos;
}

int Redis::fd() const { return ctx_->fd; }

std::string Redis::load(const std::string &script) {
  for (const auto &[text, sha] : scripts_)
    if (text == script) return sha;
  Reply r = run({"SCRIPT", "LOAD", script});
  if (is_error(r.get()) || r->type != REDIS_REPLY_STRING)
    throw RedisDown("Redis refused a script: " + text_of(r.get()));
  scripts_.emplace_back(script, text_of(r.get()));
  return scripts_.back().second;
}

Reply Redis::eval(const std::string &script, const std::vector<std::string> &keys,
                  const std::vector<std::string> &args) {
  for (int attempt = 0;; ++attempt) {
    Command c{"EVALSHA", load(script), std::to_string(keys.size())};
    c.insert(c.end(), keys.begin(), keys.end());
    c.insert(c.end(), args.begin(), args.end());
    Reply r = run(c);
    // A Redis restarted (or SCRIPT FLUSHed) has forgotten the script.
    if (attempt == 0 && is_error(r.get()) && text_of(r.get()).rfind("NOSCRIPT", 0) == 0) {
      std::erase_if(scripts_, [&](const auto &s) { return s.first == script; });
      continue;
    }
    return r;
  }
}

std::string text_of(const redisReply *r) {
  if (r == nullptr) return "";
  switch (r->type) {
    case REDIS_REPLY_STRING:
    case REDIS_REPLY_STATUS:
    case REDIS_REPLY_ERROR:
      return std::string(r->str, r->len);
    case REDIS_REPLY_INTEGER:
      return std::to_string(r->integer);
    default:
      return "";
  }
}

bool is_error(const redisReply *r) { return r != nullptr && r->type == REDIS_REPLY_ERROR; }

}  // namespace lazybreaker::fleet
