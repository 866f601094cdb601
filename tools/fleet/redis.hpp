// One connection to Redis: our own non-blocking socket and poll(), TLS by
// OpenSSL when asked (rediss://), and hiredis 0.14 for the protocol only
// (formatting commands, parsing replies), since that hiredis has no TLS.
// Every round trip waits at most the timeout, so a slow or stopped Redis
// costs the agent at most that per round trip and never the services
// (which never talk to Redis at all).
#pragma once

#include <hiredis/hiredis.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "redis_url.hpp"

namespace lazybreaker::fleet {

struct HostPort;           // connection.hpp
struct ConnectionOptions;  // connection.hpp

// The connection is gone (refused, timed out, reset) or was never made:
// the caller reconnects. `auth` says Redis refused the credentials. An
// error reply READONLY is one too: the server became a replica (a
// failover), so the caller reconnects to the primary.
struct RedisDown : std::runtime_error {
  explicit RedisDown(const std::string &what, bool auth = false)
      : std::runtime_error(what), auth_refused(auth) {}
  bool auth_refused;
};

struct ReplyDeleter {
  void operator()(redisReply *r) const { freeReplyObject(r); }
};
using Reply = std::unique_ptr<redisReply, ReplyDeleter>;
using Command = std::vector<std::string>;

class Redis {
 public:
  // Connects to `at` within `timeout_ms` (TLS when options.tls.enabled or
  // the URL is rediss://, the peer verified: tls.hpp), authenticates with
  // the URL's user and options.password (the URL's when empty), and
  // selects the URL's database; RedisDown if any fails, saying why.
  Redis(const HostPort &at, const ConnectionOptions &options, int timeout_ms);
  // The URL's own server, TLS with the system's CAs for rediss://.
  Redis(const RedisUrl &url, const std::string &password, int timeout_ms);
  ~Redis();
  Redis(Redis &&) noexcept;
  Redis &operator=(Redis &&) noexcept;

  // One command, binary-safe. An error reply (WRONGTYPE, NOSCRIPT, ...)
  // is a reply of type REDIS_REPLY_ERROR; RedisDown when the connection is
  // lost, a reply is late, or the reply is READONLY.
  Reply run(const Command &argv);
  // Several commands in one round trip; their replies in order.
  std::vector<Reply> pipeline(const std::vector<Command> &commands);

  // A Lua script run by its SHA1 (loaded once per connection, and again
  // after a Redis restart says NOSCRIPT).
  Reply eval(const std::string &script, const std::vector<std::string> &keys,
             const std::vector<std::string> &args);

  // One command whose reply comes later (XREAD BLOCK, SUBSCRIBE): the
  // caller polls fd() for POLLIN and calls try_read(), which never blocks
  // and gives the reply once it is whole (nullptr before). has_buffered():
  // bytes already read (or decrypted) that may hold a reply, so the caller
  // calls try_read() before it polls again.
  void send(const Command &argv);
  Reply try_read();
  bool has_buffered() const;
  int fd() const;

  // Round trips and commands sent on this connection (for the bench).
  uint64_t round_trips() const { return round_trips_; }
  uint64_t commands() const { return commands_; }

 private:
  struct Wire;  // the socket, its TLS session and the reply parser
  void append(const Command &argv);
  std::string load(const std::string &script);

  std::unique_ptr<Wire> wire_;
  std::vector<std::pair<std::string, std::string>> scripts_;  // text, sha1
  uint64_t round_trips_ = 0, commands_ = 0;
};

// Reply helpers: nullopt-free readers that say what a reply was not.
std::string text_of(const redisReply *r);  // a string/status/integer reply as text, else ""
bool is_error(const redisReply *r);

}  // namespace lazybreaker::fleet
