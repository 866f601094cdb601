// The process cbctl's tests run beside: it creates a shared registry file
// with four breakers, puts some traffic through them, says "ready", and
// then, until "quit" or the end of its input, answers one line per command
// about what it sees in the same file, so a test can check that what cbctl
// did is seen by another process:
//   state NAME                 -> CLOSED | OPEN | ... | ENOENT
//   call NAME success|failure|ignored N
//                              -> admitted=A rejected=R
//   stats NAME                 -> admitted=.. rejected=.. successes=.. failures=.. trips=..
//   probe NAME                 -> one cb_allow whose ticket is never reported
//                                 (a probe in flight keeps HALF_OPEN): CB_OK | CB_REJECTED
//   busy NAME SUCCESSES FAILURES
//                              -> "busy": from now on a thread of the helper puts
//                                 that many calls of each outcome through NAME every
//                                 100 ms (for the dashboard's rates), until quit
//   quit
// A failing library call answers "error <status> <message>".
#include <lazybreaker/lazybreaker.h>

#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

// As cbctl shows it: cb_state_name's, upper-cased.
std::string state_name(int s) {
  const char *name = cb_state_name(s);
  std::string upper = name ? name : "UNKNOWN";
  for (char &c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return upper;
}

// "ENOENT" for CB_ENOENT.
std::string status_name(int st) {
  const char *name = cb_status_name(st);
  return name ? name + std::strlen("CB_") : std::to_string(st);
}

std::string error(int st) { return "error " + status_name(st) + " " + cb_last_error_message(); }

// N calls with one outcome; how many were admitted and rejected.
std::string calls(cb_handle h, int outcome, long n) {
  long admitted = 0, rejected = 0;
  for (long i = 0; i < n; ++i) {
    cb_ticket t = 0;
    int st = cb_allow(h, &t);
    if (st == CB_REJECTED) {
      ++rejected;
      continue;
    }
    if (st != CB_OK) return error(st);
    ++admitted;
    if ((st = cb_done(h, t, outcome)) != CB_OK) return error(st);
  }
  return "admitted=" + std::to_string(admitted) + " rejected=" + std::to_string(rejected);
}

cb_handle create(cb_registry *reg, const char *name, const cb_config &cfg) {
  cb_handle h = 0;
  if (int st = cb_create(reg, name, &cfg, &h); st != CB_OK) {
    std::fprintf(stderr, "registry_helper: cb_create(%s): %s\n", name, cb_last_error_message());
    std::exit(1);
  }
  return h;
}

// The "busy" traffic: a thread of the helper (the library makes none).
struct Traffic {
  std::mutex mu;
  std::vector<std::pair<cb_handle, std::pair<long, long>>> load;
  std::atomic<bool> stop{false};
  std::thread thread;
  void add(cb_handle h, long successes, long failures) {
    std::lock_guard<std::mutex> lock(mu);
    load.push_back({h, {successes, failures}});
    if (!thread.joinable()) thread = std::thread([this] { run(); });
  }
  void run() {
    while (!stop) {
      {
        std::lock_guard<std::mutex> lock(mu);
        for (auto &[h, n] : load) {
          calls(h, CB_SUCCESS, n.first);
          calls(h, CB_FAILURE, n.second);
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  ~Traffic() {
    stop = true;
    if (thread.joinable()) thread.join();
  }
};

}  // namespace

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: registry_helper FILE\n");
    return 2;
  }
  cb_registry_options opts;
  cb_registry_options_init(&opts);
  opts.path = argv[1];
  opts.capacity = 64;
  opts.flags = CB_REGISTRY_CREATE | CB_REGISTRY_EXCLUSIVE;
  cb_registry *reg = nullptr;
  if (cb_registry_open(&opts, &reg) != CB_OK) {
    std::fprintf(stderr, "registry_helper: %s: %s\n", argv[1], cb_last_error_message());
    return 1;
  }

  // payments: 3 failures in a row trip it; 3 successes, then 2 failures.
  cb_config cfg;
  cb_config_init(&cfg);
  cfg.failure_threshold = 3;
  cb_handle payments = create(reg, "payments", cfg);
  calls(payments, CB_SUCCESS, 3);
  calls(payments, CB_FAILURE, 2);
  // search: a count window of 10, rates from 4 calls on; 3 successes and 1
  // failure (25 %).
  cb_config_init(&cfg);
  cfg.policy = CB_POLICY_COUNT_WINDOW;
  cfg.window_size = 10;
  cfg.minimum_calls = 4;
  cb_handle search = create(reg, "search", cfg);
  calls(search, CB_SUCCESS, 3);
  calls(search, CB_FAILURE, 1);
  // inventory: a 10 s time window; 5 successes.
  cb_config_init(&cfg);
  cfg.policy = CB_POLICY_TIME_WINDOW;
  cfg.window_duration_ns = 10000000000ull;
  cb_handle inventory = create(reg, "inventory", cfg);
  calls(inventory, CB_SUCCESS, 5);
  // ledger: the defaults, no traffic.
  create(reg, "ledger", [] {
    cb_config c;
    cb_config_init(&c);
    return c;
  }());

  Traffic traffic;
  std::cout << "ready" << std::endl;
  std::string line;
  while (std::getline(std::cin, line)) {
    std::istringstream in(line);
    std::string command, name, outcome;
    in >> command >> name;
    if (command == "quit") break;
    cb_handle h = 0;
    int st = cb_lookup(reg, name.c_str(), &h);
    if (st == CB_ENOENT) {
      std::cout << status_name(st) << std::endl;
      continue;
    }
    if (st != CB_OK) {
      std::cout << error(st) << std::endl;
      continue;
    }
    if (command == "state") {
      int s = cb_state(h);
      std::cout << (s < 0 ? error(s) : state_name(s)) << std::endl;
    } else if (command == "call") {
      long n = 0;
      in >> outcome >> n;
      int o = outcome == "success" ? CB_SUCCESS : outcome == "failure" ? CB_FAILURE : CB_IGNORED;
      std::cout << calls(h, o, n) << std::endl;
    } else if (command == "stats") {
      cb_stats s;
      s.struct_size = sizeof s;
      if ((st = cb_stats_get(h, &s)) != CB_OK) {
        std::cout << error(st) << std::endl;
        continue;
      }
      std::cout << "admitted=" << s.admitted << " rejected=" << s.rejected
                << " successes=" << s.successes << " failures=" << s.failures
                << " trips=" << s.trips << std::endl;
    } else if (command == "probe") {
      cb_ticket t = 0;
      st = cb_allow(h, &t);
      std::cout << (st == CB_OK         ? "CB_OK"
                    : st == CB_REJECTED ? "CB_REJECTED"
                                        : error(st))
                << std::endl;
    } else if (command == "busy") {
      long successes = 0, failures = 0;
      in >> successes >> failures;
      traffic.add(h, successes, failures);
      std::cout << "busy" << std::endl;
    } else {
      std::cout << "error unknown command '" << command << "'" << std::endl;
    }
  }
  traffic.stop = true;
  if (traffic.thread.joinable()) traffic.thread.join();
  cb_registry_close(reg);
  return 0;
}
