// The client side of TLS to Redis (OpenSSL, Debian's libssl3): the
// context every connection of a process shares, and the words a refused
// handshake is told in. hiredis 0.14 has no TLS, so fleet::Redis runs the
// TLS session itself over its own socket (redis.cpp).
#pragma once

#include <string>

struct ssl_ctx_st;  // OpenSSL's SSL_CTX
struct ssl_st;      // OpenSSL's SSL

namespace lazybreaker::fleet {

struct TlsOptions;  // connection.hpp

// The context for these files: TLS 1.2 at least, the peer's chain checked
// against tls.ca_file (the system's CAs when empty), and tls.cert_file with
// tls.key_file as the client's certificate when given. Made once per
// process and set of files (thread-safe), then kept until exit; nullptr
// with *why naming the file and what is wrong with it.
ssl_ctx_st *tls_context(const TlsOptions &tls, std::string *why);

// A TLS session on `fd` (a connected socket, non-blocking) that checks the
// peer's certificate names `host` (its IP address when `host` is one, else
// the name, also sent as SNI). Writes never raise SIGPIPE. nullptr with *why.
ssl_st *tls_session(ssl_ctx_st *ctx, int fd, const std::string &host, std::string *why);

// Bytes the session has read from its socket so far, and the first of them:
// a plain-text server answering a TLS handshake shows in its first byte.
unsigned long tls_bytes_received(ssl_st *ssl);
int tls_first_byte(ssl_st *ssl);

// Why a TLS call failed, as a log line says it ("TLS: certificate verify
// failed: hostname mismatch", "TLS: the server did not answer TLS ...").
// `ssl_error` is SSL_get_error's; the thread's OpenSSL error queue is read
// and cleared.
std::string tls_failure(ssl_st *ssl, int ssl_error);

}  // namespace lazybreaker::fleet
