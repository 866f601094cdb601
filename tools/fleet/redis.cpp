#include "redis.hpp"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstring>

#include "connection.hpp"
#include "tls.hpp"

namespace lazybreaker::fleet {
namespace {

int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::string host_port(const std::string &host, int port) {
  return (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" +
         std::to_string(port);
}

}  // namespace

// One connection's bytes: what is still to be written, the TLS session
// (when there is one) and hiredis's reply parser, fed with what is read.
// Once a round trip has failed the connection is out of step with Redis
// (a late reply would answer the next command), so every later call fails.
struct Redis::Wire {
  int fd = -1;
  SSL *ssl = nullptr;
  redisReader *reader = nullptr;
  std::string out;
  int timeout_ms = 0;
  std::string where;      // HOST:PORT, for messages
  std::string lost;       // why the connection failed; empty while it works
  bool answered = false;  // a byte of Redis's came (decrypted, with TLS)
  int first_byte = -1;
  bool want_write = false;  // TLS wants the socket writable before it reads
  // The parser's buffer may hold a whole reply: it was fed, or gave one,
  // since it last said it had none. (A part of a reply waits for the
  // socket, which poll() tells of: no reason to call again before.)
  bool unparsed = false;

  ~Wire() {
    // close_notify, without waiting for the server's: polite, never blocking.
    if (ssl != nullptr && lost.empty()) SSL_shutdown(ssl);
    ERR_clear_error();
    if (ssl != nullptr) SSL_free(ssl);
    if (reader != nullptr) redisReaderFree(reader);
    if (fd >= 0) ::close(fd);
  }

  [[noreturn]] void fail(const std::string &why, bool auth = false) {
    lost = why;
    throw RedisDown(why, auth);
  }

  void check() const {
    if (!lost.empty()) throw RedisDown("the connection was lost earlier: " + lost);
  }

  // Whether the socket became ready for `events` before `deadline`.
  bool ready(short events, int64_t deadline) {
    for (;;) {
      const int64_t left = deadline - now_ms();
      if (left <= 0) return false;
      pollfd p{fd, events, 0};
      const int n = ::poll(&p, 1, int(std::min<int64_t>(left, INT_MAX)));
      if (n > 0) return true;
      if (n < 0 && errno != EINTR) fail(std::string("poll: ") + std::strerror(errno));
    }
  }

  void wait(short events, int64_t deadline, const char *what) {
    if (!ready(events, deadline))
      fail(std::string("no ") + what + " from " + where + " within " + std::to_string(timeout_ms) +
           " ms");
  }

  // 0 once `fd` is connected to `a`, else the errno (ETIMEDOUT at the deadline).
  int connect_to(const addrinfo *a, int64_t deadline) {
    fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) return errno;
    if (::connect(fd, a->ai_addr, a->ai_addrlen) == 0) return 0;
    if (errno != EINPROGRESS) return errno;
    pollfd p{fd, POLLOUT, 0};
    int n;
    do {
      const int64_t left = deadline - now_ms();
      n = left <= 0 ? 0 : ::poll(&p, 1, int(std::min<int64_t>(left, INT_MAX)));
    } while (n < 0 && errno == EINTR);
    if (n <= 0) return ETIMEDOUT;
    int err = 0;
    socklen_t len = sizeof err;
    return ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0 ? errno : err;
  }

  void connect(const std::string &host, int port, int64_t deadline) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo *found = nullptr;
    const int rc = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found);
    if (rc != 0)
      fail("cannot connect to " + where + ": " +
           (rc == EAI_SYSTEM ? std::strerror(errno) : ::gai_strerror(rc)));
    std::unique_ptr<addrinfo, void (*)(addrinfo *)> list(found, ::freeaddrinfo);
    std::string why = "no address";
    for (const addrinfo *a = found; a != nullptr; a = a->ai_next) {
      const int err = connect_to(a, deadline);
      if (err == 0) {
        const int yes = 1;
        ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof yes);
        return;
      }
      if (fd >= 0) ::close(fd);
      fd = -1;
      why = err == ETIMEDOUT ? "no answer within " + std::to_string(timeout_ms) + " ms"
                             : std::strerror(err);
      if (now_ms() >= deadline) break;
    }
    fail("cannot connect to " + where + ": " + why);
  }

  void handshake(SSL_CTX *ctx, const std::string &host, int64_t deadline) {
    std::string why;
    ssl = tls_session(ctx, fd, host, &why);
    if (ssl == nullptr) fail(why);
    for (;;) {
      ERR_clear_error();
      const int r = SSL_connect(ssl);
      if (r == 1) return;
      const int e = SSL_get_error(ssl, r);
      if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
        if (ready(e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, deadline)) continue;
        // A plain-text Redis waits for the end of a line that never comes.
        if (tls_bytes_received(ssl) == 0)
          fail("TLS: the server did not answer TLS within " + std::to_string(timeout_ms) +
               " ms (a stalled server, or a plain-text port? use redis://)");
        fail("TLS: the handshake with " + where + " took over " + std::to_string(timeout_ms) +
             " ms");
      }
      fail(tls_failure(ssl, e));
    }
  }

  // Writes everything in `out`, waiting at most until `deadline`.
  void flush(int64_t deadline) {
    size_t done = 0;
    while (done < out.size()) {
      const size_t chunk = std::min<size_t>(out.size() - done, INT_MAX);
      short again = POLLOUT;
      if (ssl != nullptr) {
        ERR_clear_error();
        const int n = SSL_write(ssl, out.data() + done, int(chunk));
        if (n > 0) {
          done += size_t(n);
          continue;
        }
        const int e = SSL_get_error(ssl, n);
        if (e == SSL_ERROR_WANT_READ)
          again = POLLIN;
        else if (e != SSL_ERROR_WANT_WRITE)
          fail("cannot send to " + where + ": " + tls_lost(e));
      } else {
        const ssize_t n = ::send(fd, out.data() + done, chunk, MSG_NOSIGNAL);
        if (n >= 0) {
          done += size_t(n);
          continue;
        }
        if (errno == EINTR) continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK)
          fail(unanswered("cannot send to " + where + ": " + std::strerror(errno)));
      }
      wait(again, deadline, "room to send");
    }
    out.clear();
  }

  // A TLS port takes plain text for a bad handshake and hangs up.
  std::string unanswered(const std::string &why) const {
    return answered ? why : why + " before any reply (a TLS port? use rediss://)";
  }

  std::string tls_lost(int ssl_error) {
    std::string why = tls_failure(ssl, ssl_error);
    if (answered || ssl_error == SSL_ERROR_SSL) return why;
    // In TLS 1.3 the server checks our certificate (or its absence) after
    // our side of the handshake is done: its alert may be there to read.
    char buf[512];
    ERR_clear_error();
    const int r = SSL_read(ssl, buf, sizeof buf);
    if (r <= 0 && SSL_get_error(ssl, r) == SSL_ERROR_SSL) return tls_failure(ssl, SSL_ERROR_SSL);
    ERR_clear_error();
    return why + (SSL_get_certificate(ssl) == nullptr
                      ? " (does the server require a client certificate? --tls-cert-file, "
                        "--tls-key-file)"
                      : " (does the server refuse this client certificate?)");
  }

  // Bytes read into buf (0: none now; want_write when TLS must write
  // first); RedisDown when the connection is gone.
  size_t read_some(char *buf, size_t size) {
    if (ssl != nullptr) {
      ERR_clear_error();
      const int r = SSL_read(ssl, buf, int(size));
      if (r > 0) return size_t(r);
      const int e = SSL_get_error(ssl, r);
      want_write = e == SSL_ERROR_WANT_WRITE;
      if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) return 0;
      fail("lost the connection to " + where + ": " + tls_lost(e));
    }
    for (;;) {
      const ssize_t r = ::recv(fd, buf, size, 0);
      if (r > 0) {
        if (first_byte < 0) first_byte = static_cast<unsigned char>(buf[0]);
        return size_t(r);
      }
      if (r == 0) fail(unanswered(where + " closed the connection"));
      if (errno == EAGAIN || errno == EWOULDBLOCK) return 0;
      if (errno != EINTR)
        fail(unanswered("lost the connection to " + where + ": " + std::strerror(errno)));
    }
  }

  // Reads what the socket has now into the parser, never blocking; the
  // bytes read (0: nothing yet).
  size_t fill() {
    char buf[16384];
    size_t total = 0;
    want_write = false;
    // Bounded, so a fast stream cannot keep one call here.
    while (total < 1024 * 1024) {
      const size_t n = read_some(buf, sizeof buf);
      if (n == 0) break;
      answered = true;
      unparsed = true;
      if (redisReaderFeed(reader, buf, n) != REDIS_OK) fail("out of memory reading a reply");
      total += n;
    }
    return total;
  }

  // A whole reply from the parser, or nullptr.
  Reply parsed() {
    void *raw = nullptr;
    if (redisReaderGetReply(reader, &raw) != REDIS_OK) {
      // 21 is a TLS alert record, 22 a handshake: a TLS port read our plain
      // text as a bad handshake.
      if (ssl == nullptr && (first_byte == 21 || first_byte == 22))
        fail(where + " answered in TLS (a TLS port? use rediss://)");
      fail("a bad reply from " + where + ": " + reader->errstr);
    }
    Reply r(static_cast<redisReply *>(raw));
    unparsed = r != nullptr;
    if (is_error(r.get()) && text_of(r.get()).rfind("READONLY", 0) == 0)
      fail(where + " answered READONLY: the server is a replica now");
    return r;
  }

  Reply read(int64_t deadline) {
    for (;;) {
      if (Reply r = parsed()) return r;
      if (fill() == 0) wait(want_write ? POLLOUT : POLLIN, deadline, "reply");
    }
  }

  bool buffered() const {
    return (unparsed && reader != nullptr && reader->len > reader->pos) ||
           (ssl != nullptr && SSL_pending(ssl) > 0);
  }
};

Redis::Redis(const HostPort &at, const ConnectionOptions &options, int timeout_ms)
    : wire_(std::make_unique<Wire>()) {
  Wire &w = *wire_;
  w.timeout_ms = timeout_ms;
  w.where = host_port(at.host, at.port);
  w.reader = redisReaderCreate();
  if (w.reader == nullptr) throw RedisDown("out of memory connecting to Redis");
  const bool tls = options.tls.enabled || options.url.tls;
  SSL_CTX *ctx = nullptr;
  if (tls) {
    std::string why;
    ctx = tls_context(options.tls, &why);
    if (ctx == nullptr) throw RedisDown(why);
  }
  const int64_t deadline = now_ms() + timeout_ms;
  w.connect(at.host, at.port, deadline);
  if (tls) w.handshake(ctx, at.host, deadline);

  // One round trip for AUTH, SELECT and PING: over TLS on a far network
  // each round trip counts.
  const RedisUrl &url = options.url;
  const std::string &pass = options.password.empty() ? url.password : options.password;
  std::vector<Command> hello;
  if (!pass.empty())
    hello.push_back(url.user.empty() ? Command{"AUTH", pass} : Command{"AUTH", url.user, pass});
  if (url.db != 0) hello.push_back({"SELECT", std::to_string(url.db)});
  hello.push_back({"PING"});
  std::vector<Reply> replies = pipeline(hello);
  size_t i = 0;
  if (!pass.empty() && is_error(replies[i++].get()))
    w.fail("Redis refused the credentials: " + text_of(replies[i - 1].get()), true);
  if (url.db != 0 && is_error(replies[i++].get()))
    w.fail("cannot select database: " + text_of(replies[i - 1].get()));
  if (is_error(replies[i].get())) {
    const std::string why = text_of(replies[i].get());
    w.fail("Redis answered PING with: " + why, why.rfind("NOAUTH", 0) == 0);
  }
}

namespace {

ConnectionOptions url_options(const RedisUrl &url, const std::string &password) {
  ConnectionOptions o;
  o.url = url;
  o.password = password;
  o.tls.enabled = url.tls;
  return o;
}

}  // namespace

Redis::Redis(const RedisUrl &url, const std::string &password, int timeout_ms)
    : Redis(HostPort{url.host, url.port}, url_options(url, password), timeout_ms) {}

Redis::~Redis() = default;
Redis::Redis(Redis &&) noexcept = default;
Redis &Redis::operator=(Redis &&) noexcept = default;

void Redis::append(const Command &argv) {
  wire_->check();
  std::vector<const char *> args;
  std::vector<size_t> lens;
  for (const std::string &a : argv) {
    args.push_back(a.data());
    lens.push_back(a.size());
  }
  char *text = nullptr;
  const int len = redisFormatCommandArgv(&text, int(args.size()), args.data(), lens.data());
  if (len < 0 || text == nullptr) throw RedisDown("out of memory formatting a command");
  wire_->out.append(text, size_t(len));
  redisFreeCommand(text);
  ++commands_;
}

Reply Redis::run(const Command &argv) {
  append(argv);
  ++round_trips_;
  const int64_t deadline = now_ms() + wire_->timeout_ms;
  wire_->flush(deadline);
  return wire_->read(deadline);
}

std::vector<Reply> Redis::pipeline(const std::vector<Command> &commands) {
  std::vector<Reply> replies;
  if (commands.empty()) return replies;
  for (const Command &c : commands) append(c);
  ++round_trips_;
  const int64_t deadline = now_ms() + wire_->timeout_ms;
  wire_->flush(deadline);
  replies.reserve(commands.size());
  for (size_t i = 0; i < commands.size(); ++i) replies.push_back(wire_->read(deadline));
  return replies;
}

void Redis::send(const Command &argv) {
  append(argv);
  ++round_trips_;
  wire_->flush(now_ms() + wire_->timeout_ms);
}

Reply Redis::try_read() {
  wire_->check();
  if (Reply r = wire_->parsed()) return r;
  if (wire_->fill() == 0) return nullptr;
  return wire_->parsed();
}

bool Redis::has_buffered() const { return wire_->buffered(); }

int Redis::fd() const { return wire_->fd; }

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
