// cbctl serve: GET /metrics answers the registry's Prometheus text, read
// afresh for each scrape; every other path is 404. The tool, not the
// library, runs the loop: cpp-httplib's listener and its worker threads,
// with SIGINT and SIGTERM blocked in all of them and taken by the main
// thread with sigtimedwait(), which then stops the server and joins it.
#include <httplib.h>
#include <signal.h>
#include <sys/socket.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <thread>

#include "commands.hpp"

namespace cbctl {

int run_serve(const RegistryFile &file, const ServeOptions &opts) {
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

  httplib::Server server;
  // httplib's default is SO_REUSEPORT, under which a second cbctl serve (or
  // anything else) binds the same port and takes half the scrapes. Only
  // SO_REUSEADDR: a restart binds at once, a port in use is an error.
  server.set_socket_options([](int sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  server.Get("/metrics", [&file](const httplib::Request &, httplib::Response &res) {
    try {
      res.set_content(file.prometheus(), "text/plain; version=0.0.4; charset=utf-8");
    } catch (const Failure &f) {
      res.status = 500;
      res.set_content("cbctl: " + f.message + "\n", "text/plain; charset=utf-8");
    }
  });
  const std::string shown_host =
      opts.host.find(':') != std::string::npos ? "[" + opts.host + "]" : opts.host;
  errno = 0;
  int port = opts.port;
  bool bound = port == 0 ? (port = server.bind_to_any_port(opts.host)) > 0
                         : server.bind_to_port(opts.host, port);
  if (!bound) {
    std::string why = errno ? std::strerror(errno) : "cannot bind";
    throw Failure{kExitError,
                  shown_host + ":" + std::to_string(opts.port) + ": cannot listen: " + why};
  }
  std::fprintf(stderr, "cbctl: serving %s at http://%s:%d/metrics\n", file.path().c_str(),
               shown_host.c_str(), port);
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

}  // namespace cbctl
