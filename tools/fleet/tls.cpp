#include "tls.hpp"

#include <arpa/inet.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>

#include "connection.hpp"

namespace lazybreaker::fleet {
namespace {

// The socket under a session. Our own BIO rather than OpenSSL's socket
// one: send() with MSG_NOSIGNAL, since cbctl does not ignore SIGPIPE and a
// Redis that goes away must be a RedisDown, not the end of the program;
// and it counts what came in, for telling a plain-text server apart.
struct Socket {
  int fd;
  unsigned long received = 0;
  int first_byte = -1;
  bool eof = false;
  int last_errno = 0;
};

Socket *socket_of(BIO *b) { return static_cast<Socket *>(BIO_get_data(b)); }

bool would_block(int e) { return e == EAGAIN || e == EWOULDBLOCK || e == EINTR; }

int socket_write(BIO *b, const char *data, int len) {
  Socket *s = socket_of(b);
  BIO_clear_retry_flags(b);
  const ssize_t n = ::send(s->fd, data, size_t(len), MSG_NOSIGNAL);
  if (n < 0) {
    s->last_errno = errno;
    if (would_block(errno)) BIO_set_retry_write(b);
  }
  return int(n);
}

int socket_read(BIO *b, char *data, int len) {
  Socket *s = socket_of(b);
  BIO_clear_retry_flags(b);
  const ssize_t n = ::recv(s->fd, data, size_t(len), 0);
  if (n < 0) {
    s->last_errno = errno;
    if (would_block(errno)) BIO_set_retry_read(b);
  } else if (n == 0) {
    s->eof = true;
  } else {
    if (s->received == 0) s->first_byte = static_cast<unsigned char>(data[0]);
    s->received += static_cast<unsigned long>(n);
  }
  return int(n);
}

long socket_ctrl(BIO *b, int cmd, long, void *) {
  switch (cmd) {
    case BIO_CTRL_FLUSH:
      return 1;
    case BIO_CTRL_EOF:
      return socket_of(b)->eof ? 1 : 0;
    default:
      return 0;
  }
}

int socket_destroy(BIO *b) {
  delete socket_of(b);
  BIO_set_data(b, nullptr);
  return 1;
}

BIO_METHOD *socket_method() {
  static BIO_METHOD *method = [] {
    BIO_METHOD *m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "lazybreaker socket");
    BIO_meth_set_write(m, socket_write);
    BIO_meth_set_read(m, socket_read);
    BIO_meth_set_ctrl(m, socket_ctrl);
    BIO_meth_set_destroy(m, socket_destroy);
    return m;
  }();
  return method;
}

std::string openssl_reason() {
  const unsigned long e = ERR_get_error();
  ERR_clear_error();
  if (e == 0) return "unknown OpenSSL error";
  const char *r = ERR_reason_error_string(e);
  return r != nullptr ? r : "OpenSSL error " + std::to_string(e);
}

// Readable, and a file: OpenSSL's own messages for a missing file or a
// folder are less plain.
bool readable(const char *option, const std::string &path, std::string *why) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    *why = std::string(option) + " " + path + ": " + std::strerror(errno);
    return false;
  }
  if (S_ISDIR(st.st_mode)) {
    *why = std::string(option) + " " + path + ": is a directory";
    return false;
  }
  std::FILE *f = std::fopen(path.c_str(), "r");
  if (f == nullptr) {
    *why = std::string(option) + " " + path + ": " + std::strerror(errno);
    return false;
  }
  std::fclose(f);
  return true;
}

// An encrypted key would make OpenSSL prompt on the terminal: refuse it.
int no_passphrase(char *, int, int, void *) { return 0; }

using ContextPtr = std::unique_ptr<SSL_CTX, void (*)(SSL_CTX *)>;

ContextPtr make_context(const TlsOptions &tls, std::string *why) {
  ContextPtr ctx(SSL_CTX_new(TLS_client_method()), SSL_CTX_free);
  if (!ctx) {
    *why = "TLS: cannot make a context: " + openssl_reason();
    return ContextPtr(nullptr, SSL_CTX_free);
  }
  SSL_CTX_set_min_proto_version(ctx.get(), TLS1_2_VERSION);
  SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_PEER, nullptr);
  SSL_CTX_set_mode(ctx.get(), SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  SSL_CTX_set_default_passwd_cb(ctx.get(), no_passphrase);
  auto refuse = [&](const std::string &what) {
    *why = what;
    return ContextPtr(nullptr, SSL_CTX_free);
  };
  if (!tls.ca_file.empty()) {
    if (!readable("--tls-ca-file", tls.ca_file, why)) return refuse(*why);
    if (SSL_CTX_load_verify_locations(ctx.get(), tls.ca_file.c_str(), nullptr) != 1)
      return refuse("--tls-ca-file " + tls.ca_file + ": no PEM certificate in it (" +
                    openssl_reason() + ")");
  } else if (SSL_CTX_set_default_verify_paths(ctx.get()) != 1) {
    return refuse("TLS: the system's CA certificates cannot be loaded: " + openssl_reason());
  }
  if (tls.cert_file.empty() != tls.key_file.empty())
    return refuse("--tls-cert-file and --tls-key-file go together");
  if (!tls.cert_file.empty()) {
    if (!readable("--tls-cert-file", tls.cert_file, why) ||
        !readable("--tls-key-file", tls.key_file, why))
      return refuse(*why);
    if (SSL_CTX_use_certificate_chain_file(ctx.get(), tls.cert_file.c_str()) != 1)
      return refuse("--tls-cert-file " + tls.cert_file + ": not a PEM certificate (" +
                    openssl_reason() + ")");
    const std::string not_its_key =
        "--tls-key-file " + tls.key_file + ": not the key of --tls-cert-file " + tls.cert_file;
    if (SSL_CTX_use_PrivateKey_file(ctx.get(), tls.key_file.c_str(), SSL_FILETYPE_PEM) != 1) {
      if (ERR_GET_REASON(ERR_peek_error()) == X509_R_KEY_VALUES_MISMATCH) {
        ERR_clear_error();
        return refuse(not_its_key);
      }
      return refuse("--tls-key-file " + tls.key_file + ": not an unencrypted PEM private key (" +
                    openssl_reason() + ")");
    }
    if (SSL_CTX_check_private_key(ctx.get()) != 1) {
      ERR_clear_error();
      return refuse(not_its_key);
    }
  }
  return ctx;
}

bool is_ip_literal(const std::string &host) {
  unsigned char buf[sizeof(in6_addr)];
  return inet_pton(AF_INET, host.c_str(), buf) == 1 || inet_pton(AF_INET6, host.c_str(), buf) == 1;
}

}  // namespace

ssl_ctx_st *tls_context(const TlsOptions &tls, std::string *why) {
  // OpenSSL frees its globals in an exit handler: initialised before the
  // map below, it runs after the map's destructor has freed the contexts.
  static const bool ready = OPENSSL_init_ssl(0, nullptr) == 1;
  static std::mutex mu;
  static std::map<std::string, ContextPtr> made;
  if (!ready) {
    *why = "TLS: OpenSSL cannot start: " + openssl_reason();
    return nullptr;
  }
  const std::string key = tls.ca_file + '\0' + tls.cert_file + '\0' + tls.key_file;
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = made.find(key); it != made.end()) return it->second.get();
  ContextPtr ctx = make_context(tls, why);
  if (!ctx) return nullptr;
  return made.emplace(key, std::move(ctx)).first->second.get();
}

ssl_st *tls_session(ssl_ctx_st *ctx, int fd, const std::string &host, std::string *why) {
  SSL *ssl = SSL_new(ctx);
  BIO *bio = ssl != nullptr ? BIO_new(socket_method()) : nullptr;
  if (bio == nullptr) {
    SSL_free(ssl);
    *why = "TLS: cannot make a session: " + openssl_reason();
    return nullptr;
  }
  BIO_set_data(bio, new Socket{fd});
  BIO_set_init(bio, 1);
  SSL_set_bio(ssl, bio, bio);
  bool named;
  if (is_ip_literal(host)) {
    named = X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host.c_str()) == 1;
  } else {
    SSL_set_hostflags(ssl, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
    named =
        SSL_set1_host(ssl, host.c_str()) == 1 && SSL_set_tlsext_host_name(ssl, host.c_str()) == 1;
  }
  if (!named) {
    SSL_free(ssl);
    *why = "TLS: cannot check the server's name '" + host + "': " + openssl_reason();
    return nullptr;
  }
  return ssl;
}

unsigned long tls_bytes_received(ssl_st *ssl) { return socket_of(SSL_get_rbio(ssl))->received; }
int tls_first_byte(ssl_st *ssl) { return socket_of(SSL_get_rbio(ssl))->first_byte; }

std::string tls_failure(ssl_st *ssl, int ssl_error) {
  const unsigned long err = ERR_peek_error();
  const int reason = err != 0 ? ERR_GET_REASON(err) : 0;
  std::string text = err != 0 ? openssl_reason() : "";
  const Socket *s = socket_of(SSL_get_rbio(ssl));
  const long verified = SSL_get_verify_result(ssl);
  if (verified != X509_V_OK)
    return std::string("TLS: certificate verify failed: ") +
           X509_verify_cert_error_string(verified);
  // A TLS record starts with its type, 20..23: anything else is a
  // plain-text server answering our handshake ("-ERR ...").
  if (s->received > 0 && (s->first_byte < 20 || s->first_byte > 23))
    return "TLS: the server did not answer TLS (a plain-text port? use redis://)";
  if (reason == SSL_R_TLSV13_ALERT_CERTIFICATE_REQUIRED ||
      (reason == SSL_R_SSLV3_ALERT_HANDSHAKE_FAILURE && SSL_get_certificate(ssl) == nullptr))
    return "TLS: the server requires a client certificate (--tls-cert-file, --tls-key-file): " +
           text;
  switch (reason) {
    case SSL_R_TLSV1_ALERT_UNKNOWN_CA:
    case SSL_R_SSLV3_ALERT_BAD_CERTIFICATE:
    case SSL_R_SSLV3_ALERT_CERTIFICATE_EXPIRED:
    case SSL_R_SSLV3_ALERT_CERTIFICATE_REVOKED:
    case SSL_R_SSLV3_ALERT_CERTIFICATE_UNKNOWN:
    case SSL_R_SSLV3_ALERT_UNSUPPORTED_CERTIFICATE:
      if (SSL_get_certificate(ssl) != nullptr)
        return "TLS: the server refused this client certificate: " + text;
      break;
    default:
      break;
  }
  if (ssl_error == SSL_ERROR_ZERO_RETURN) return "TLS: the server closed the session";
  if (reason == SSL_R_UNEXPECTED_EOF_WHILE_READING || (ssl_error == SSL_ERROR_SYSCALL && s->eof))
    return SSL_is_init_finished(ssl) != 0
               ? "TLS: the server closed the connection"
               : "TLS: the server closed the connection during the handshake";
  if (ssl_error == SSL_ERROR_SYSCALL)
    return std::string("TLS: ") +
           (s->last_errno != 0 ? std::strerror(s->last_errno) : "the connection failed");
  return "TLS: " + (text.empty() ? "error " + std::to_string(ssl_error) : text);
}

}  // namespace lazybreaker::fleet
