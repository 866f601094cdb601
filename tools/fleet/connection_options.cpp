#include "connection_options.hpp"

#include <CLI/CLI.hpp>

#include "connection.hpp"
#include "tls.hpp"

namespace lazybreaker::fleet {

void add_tls_options(CLI::App *app, TlsOptions *tls) {
  app->add_option("--tls-ca-file", tls->ca_file,
                  "With rediss://: the CA certificates (PEM) Redis's certificate must chain to "
                  "(default: the system's)");
  app->add_option("--tls-cert-file", tls->cert_file,
                  "With rediss://: a client certificate (PEM), for Redis's tls-auth-clients");
  app->add_option("--tls-key-file", tls->key_file,
                  "With rediss://: the client certificate's private key (PEM, unencrypted)");
}

bool complete_connection_options(ConnectionOptions *options, std::string *why) {
  TlsOptions &tls = options->tls;
  if (!options->url.tls) {
    const char *given = !tls.ca_file.empty()     ? "--tls-ca-file"
                        : !tls.cert_file.empty() ? "--tls-cert-file"
                        : !tls.key_file.empty()  ? "--tls-key-file"
                                                 : nullptr;
    if (given != nullptr) {
      *why = std::string(given) + " goes with a rediss:// URL (TLS); this one is redis://";
      return false;
    }
    tls.enabled = false;
    return true;
  }
  tls.enabled = true;
  if (tls.cert_file.empty() != tls.key_file.empty()) {
    *why = tls.cert_file.empty() ? "--tls-key-file needs --tls-cert-file"
                                 : "--tls-cert-file needs --tls-key-file";
    return false;
  }
  return tls_context(tls, why) != nullptr;
}

}  // namespace lazybreaker::fleet
