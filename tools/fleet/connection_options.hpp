// The TLS options of every program that reaches the fleet's Redis
// (lazybreaker-agent, cbctl fleet, cbctl serve --redis): one spelling and
// one check for all (docs/fleet.md, "TLS").
#pragma once

#include <string>

namespace CLI {
class App;
}

namespace lazybreaker::fleet {

struct TlsOptions;         // connection.hpp
struct ConnectionOptions;  // connection.hpp

// --tls-ca-file PATH, --tls-cert-file PATH and --tls-key-file PATH, into `tls`.
void add_tls_options(CLI::App *app, TlsOptions *tls);

// Completes `options` once its URL is parsed: TLS on for rediss://, a
// --tls-* option refused without it, --tls-cert-file and --tls-key-file
// only together, and the files loaded now (tls.hpp), so that a bad one is
// told at start rather than at every connection. false with *why: a usage
// error (status 2), naming the option, the file and what is wrong.
bool complete_connection_options(ConnectionOptions *options, std::string *why);

}  // namespace lazybreaker::fleet
