// cbctl serve: GET /metrics answers the Prometheus text, read afresh for
// each scrape; GET / is the dashboard page (its HTML, JavaScript and CSS
// compiled into the program from tools/cbctl/dashboard/), which polls GET
// /api/breakers; with --allow-control, POST /api/breakers/NAME/ACTION
// operates a breaker when it carries the server's token. Every other path
// is 404. Before any of that, a request whose Host is not this server, or
// a POST whose Origin is another site, is 403 (host_check.hpp). The tool, not the library, runs the
// loop: cpp-httplib's listener and its worker threads, with SIGINT and SIGTERM blocked in all of
// them and taken by the main thread with sigtimedwait(), which then stops the server and joins it.
#include <httplib.h>
#include <signal.h>
#include <sys/socket.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <mutex>
#include <thread>

#include "commands.hpp"
#include "dashboard_assets.hpp"
#include "format.hpp"
#include "host_check.hpp"
#include "refusals.hpp"

namespace cbctl {
namespace {

// A per-server secret: 128 bits from the kernel, in hex.
std::string fresh_token() {
  std::ifstream in("/dev/urandom", std::ios::binary);
  unsigned char bytes[16];
  if (!in.read(reinterpret_cast<char *>(bytes), sizeof bytes))
    throw Failure{kExitError, "/dev/urandom: cannot read a token"};
  static const char digits[] = "0123456789abcdef";
  std::string out;
  for (unsigned char b : bytes) {
    out += digits[b >> 4];
    out += digits[b & 15];
  }
  return out;
}

// Compares in a time that does not depend on where they differ.
bool same_secret(const std::string &a, const std::string &b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

void no_cache(httplib::Response &res) {
  res.set_header("Cache-Control", "no-store");
  res.set_header("X-Content-Type-Options", "nosniff");
}

void text_answer(httplib::Response &res, int status, const std::string &text) {
  res.status = status;
  no_cache(res);
  res.set_content("{\"error\":" + json_string(text) + "}\n", "application/json");
}

struct Dashboard {
  ServeSource &source;
  const ServeOptions &opts;
  std::string token;  // empty without --allow-control
  std::mutex one_at_a_time;

  void page(httplib::Server &server) {
    // The page's own files only: no inline script, nothing from elsewhere.
    const char *csp =
        "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
        "img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
    for (const DashboardAsset &asset : dashboard_assets()) {
      server.Get(asset.path, [asset, csp](const httplib::Request &, httplib::Response &res) {
        no_cache(res);
        res.set_header("Content-Security-Policy", csp);
        res.set_header("Referrer-Policy", "no-referrer");
        res.set_content(asset.body, asset.type);
      });
    }
  }

  void api(httplib::Server &server) {
    server.Get("/metrics", [this](const httplib::Request &, httplib::Response &res) {
      std::lock_guard<std::mutex> lock(one_at_a_time);
      try {
        res.set_content(source.prometheus(), "text/plain; version=0.0.4; charset=utf-8");
      } catch (const Failure &f) {
        res.status = 500;
        res.set_content("cbctl: " + f.message + "\n", "text/plain; charset=utf-8");
      }
    });
    server.Get("/api/breakers", [this](const httplib::Request &, httplib::Response &res) {
      std::lock_guard<std::mutex> lock(one_at_a_time);
      try {
        const std::string body = source.breakers_json();
        no_cache(res);
        res.set_content("{\"control\":" + std::string(token.empty() ? "false" : "true") +
                            ",\"title\":" + json_string(source.describe()) + "," + body.substr(1),
                        "application/json");
      } catch (const Failure &f) {
        text_answer(res, 500, f.message);
      }
    });
    server.Post(R"(/api/breakers/(.+)/(trip|force-open|disable|reset))",
                [this](const httplib::Request &req, httplib::Response &res) { control(req, res); });
  }

  // httplib has decoded the path: a name's %2F is a '/', and the greedy
  // (.+) leaves the last segment to the action.
  void control(const httplib::Request &req, httplib::Response &res) {
    if (token.empty())
      return text_answer(res, 403, "read-only: cbctl serve was started without --allow-control");
    const std::string auth = req.get_header_value("Authorization");
    const std::string bearer = "Bearer ";
    if (auth.compare(0, bearer.size(), bearer) != 0 ||
        !same_secret(auth.substr(bearer.size()), token))
      return text_answer(res, 403,
                         "no valid 'Authorization: Bearer TOKEN' (the token cbctl serve "
                         "printed at start)");
    const std::string name = req.matches[1], action = req.matches[2];
    uint64_t for_ns = 30'000'000'000u;
    if (action == "trip" && req.has_param("for")) {
      std::string why;
      const std::string text = req.get_param_value("for");
      auto parsed = parse_duration(text, &why);
      if (!parsed) return text_answer(res, 400, "for=" + text + ": " + why);
      for_ns = *parsed;
    }
    int status = 200;
    std::string refused;
    {
      std::lock_guard<std::mutex> lock(one_at_a_time);
      refused = source.act(name, action, for_ns, &status);
    }
    if (!refused.empty()) return text_answer(res, status, refused);
    std::fprintf(stderr, "cbctl: %s %s (from %s)\n", action.c_str(), printable(name).c_str(),
                 req.remote_addr.c_str());
    no_cache(res);
    res.set_content("{\"done\":" + json_string(action) + ",\"name\":" + json_string(name) + "}\n",
                    "application/json");
  }
};

int bind_server(httplib::Server &server, const ServeOptions &opts, const std::string &shown) {
  errno = 0;
  int port = opts.port;
  bool bound = port == 0 ? (port = server.bind_to_any_port(opts.host)) > 0
                         : server.bind_to_port(opts.host, port);
  if (!bound) {
    std::string why = errno ? std::strerror(errno) : "cannot bind";
    throw Failure{kExitError, shown + ":" + std::to_string(opts.port) + ": cannot listen: " + why};
  }
  return port;
}

}  // namespace

int run_serve(ServeSource &source, const ServeOptions &opts) {
  sigset_t stop_signals, saved;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGHUP);
  // Before any thread exists, so that every thread inherits the mask.
  pthread_sigmask(SIG_BLOCK, &stop_signals, &saved);
  // A scraper that hangs up mid-answer is an EPIPE for httplib, not a death.
  struct sigaction ignore {
  }, saved_pipe{};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGPIPE, &ignore, &saved_pipe);
  struct Restore {
    const sigset_t *mask;
    const struct sigaction *pipe;
    ~Restore() {
      sigaction(SIGPIPE, pipe, nullptr);
      pthread_sigmask(SIG_SETMASK, mask, nullptr);
    }
  } restore{&saved, &saved_pipe};

  Dashboard dashboard{source, opts, opts.allow_control ? fresh_token() : "", {}};
  httplib::Server server;
  // httplib's default is SO_REUSEPORT, under which a second cbctl serve (or
  // anything else) binds the same port and takes half the scrapes. Only
  // SO_REUSEADDR: a restart binds at once, a port in use is an error.
  server.set_socket_options([](int sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  dashboard.page(server);
  dashboard.api(server);
  const std::string shown_host =
      opts.host.find(':') != std::string::npos ? "[" + opts.host + "]" : opts.host;
  const int port = bind_server(server, opts, shown_host);
  // Before any request can arrive: the check needs the port bound.
  lazybreaker::fleet::HostCheck(opts.host, port, opts.allow_hosts).install(server);
  const std::string base = "http://" + shown_host + ":" + std::to_string(port);
  std::fprintf(stderr, "cbctl: serving %s at %s/metrics\ncbctl: dashboard at %s/\n",
               source.describe().c_str(), base.c_str(), base.c_str());
  if (opts.allow_control)
    std::fprintf(stderr, "cbctl: control token: %s (the page: %s/#token=%s)\n",
                 dashboard.token.c_str(), base.c_str(), dashboard.token.c_str());
  std::fflush(stderr);

  std::atomic<bool> listener_done{false};
  std::thread listener([&] {
    server.listen_after_bind();
    listener_done = true;
  });
  // Until a signal, or until the listener gives up on its own.
  const timespec tick{0, 200 * 1000 * 1000};
  while (!listener_done) {
    if (sigtimedwait(&stop_signals, nullptr, &tick) > 0) break;
  }
  bool failed = listener_done.load();
  server.stop();
  listener.join();
  if (failed) {
    throw Failure{kExitError,
                  shown_host + ":" + std::to_string(port) + ": the HTTP server stopped on its own"};
  }
  return kExitOk;
}

// --- a registry file -------------------------------------------------------------

namespace {

class FileSource : public ServeSource {
 public:
  explicit FileSource(const std::string &path) : file_(path) {}
  std::string describe() const override { return file_.path(); }
  std::string prometheus() override { return file_.prometheus(); }
  std::string breakers_json() override { return list_json(file_.path(), file_.breakers()); }
  std::string act(const std::string &name, const std::string &action, uint64_t for_ns,
                  int *status) override {
    cb_handle h = 0;
    try {
      h = file_.lookup(name);
    } catch (const Failure &f) {
      *status = f.exit_code == kExitNoBreaker ? 404 : 500;
      return f.message;
    }
    int st = action == "trip"         ? cb_trip(h, for_ns)
             : action == "force-open" ? cb_force_open(h)
             : action == "disable"    ? cb_disable(h)
                                      : cb_reset(h);
    if (st == CB_OK) return "";
    *status = st == CB_EINVAL ? 400 : st == CB_ENOENT ? 404 : 409;
    if (st == CB_EINVAL && action == "trip") {
      // "--for 0ns must be at least 1us", in the query's words
      std::string why = trip_refusal(exact_duration(for_ns), for_ns);
      return why.rfind("--for ", 0) == 0 ? "for=" + why.substr(6) : why;
    }
    return breaker_refusal(file_.path(), name, st).message;
  }

 private:
  RegistryFile file_;
};

}  // namespace

std::unique_ptr<ServeSource> file_source(const std::string &path) {
  return std::make_unique<FileSource>(path);
}

}  // namespace cbctl
