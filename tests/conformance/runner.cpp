// The C++ conformance runner, lb_conformance: it reads scenario files
// (tests/conformance/*.scn, format in README.md) with the one parser
// (scenario.cpp) and executes them through the C ABI, each scenario on a
// fresh manual-clock registry, or writes them as the step streams that every
// binding's runner interprets (steps.cpp).
//
//   lb_conformance [--clock-offset N] [--shared DIR] [--expect malformed|mismatch] FILE...
//   lb_conformance [--clock-offset N] --emit OUT [--expect malformed|mismatch] FILE
//
// --clock-offset N advances each scenario's fresh manual clock by N ns
// before its breaker is created, so the scenario runs as if the clock had
// started at N (README.md, "Clock offset"): a clock that starts at 0 hides
// any code that confuses "no time yet" with "time 0".
//
// --shared DIR runs each scenario twice: on a private registry and on a
// shared one, a fresh registry file in DIR (CB_REGISTRY_CREATE |
// CB_REGISTRY_EXCLUSIVE, the same capacity and manual clock, removed
// afterwards). Both runs must match the expectations, and their transcripts
// (after every step: its result, the state, retry_after and every counter)
// must be identical: a private registry and a shared one behave alike.
//
// --emit OUT runs nothing: it writes FILE's step stream (README.md, "Step
// streams") to OUT, with the clock offset as a step of its own, or removes
// OUT when FILE is malformed or a scenario cannot run as written.
//
// Exit status: 0 every step matched (or the stream is written); 1 a step did
// not match (reported as file:line: ...); 2 a file is malformed (every bad
// line is reported, and nothing runs) or cannot be read. With --expect, the
// runner checks itself: it exits 0 exactly when the files fail in the
// expected way.
#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "lazybreaker/lazybreaker.h"
#include "scenario.hpp"
#include "steps.hpp"

namespace lb_conformance {
namespace {

// Decimal stats (rates) match within this.
constexpr double kRateTolerance = 1e-9;

// The parser admits no other key.
uint64_t stat_u64(const cb_stats &s, const std::string &key) {
  if (key == "admitted") return s.admitted;
  if (key == "rejected") return s.rejected;
  if (key == "successes") return s.successes;
  if (key == "failures") return s.failures;
  if (key == "ignored") return s.ignored;
  if (key == "trips") return s.trips;
  if (key == "slow") return s.slow;
  if (key == "state_ns") return s.state_ns;
  return s.consecutive_failures;
}

double stat_decimal(const cb_stats &s, const std::string &key) {
  return key == "failure_rate" ? s.failure_rate : s.slow_rate;
}

// What a run saw, one line per step: compared between a private and a
// shared registry.
using Transcript = std::vector<std::string>;

// Everything a breaker shows without moving: state, retry_after, counters.
std::string snapshot(cb_handle h) {
  cb_stats s;
  std::memset(&s, 0, sizeof s);
  s.struct_size = sizeof s;
  uint64_t wait = 0;
  const int rs = cb_retry_after(h, &wait);
  const int ss = cb_stats_get(h, &s);
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "state=%s retry_after=%s%" PRIu64 " stats=%s admitted=%" PRIu64 " rejected=%" PRIu64
                " successes=%" PRIu64 " failures=%" PRIu64 " ignored=%" PRIu64 " trips=%" PRIu64
                " consecutive_failures=%" PRIu32 " slow=%" PRIu64
                " failure_rate=%.17g slow_rate=%.17g state_ns=%" PRIu64,
                state_name(cb_state(h)), rs == CB_OK ? "" : cb_strerror(rs), wait,
                ss == CB_OK ? "ok" : cb_strerror(ss), s.admitted, s.rejected, s.successes,
                s.failures, s.ignored, s.trips, s.consecutive_failures, s.slow, s.failure_rate,
                s.slow_rate, s.state_ns);
  return buf;
}

class Runner {
 public:
  Runner(std::string file, uint64_t clock_offset)
      : file_(std::move(file)), clock_offset_(clock_offset) {}

  // False on the first mismatch in the scenario (reported). With a path,
  // the registry is a fresh shared one in that file (removed afterwards).
  // Each step's result and the breaker's look after it go to *transcript.
  bool run(const Scenario &sc, const std::string &shared_path, Transcript *transcript) {
    cb_registry_options o;
    cb_registry_options_init(&o);
    o.clock = CB_CLOCK_MANUAL;
    o.capacity = 1;
    if (!shared_path.empty()) {
      o.path = shared_path.c_str();
      o.flags = CB_REGISTRY_CREATE | CB_REGISTRY_EXCLUSIVE;
    }
    cb_registry *reg = nullptr;
    if (const int st = cb_registry_open(&o, &reg); st != CB_OK)
      return fail(sc.line, "cb_registry_open%s%s: %s: %s", shared_path.empty() ? "" : " ",
                  shared_path.c_str(), cb_strerror(st), cb_last_error_message());
    transcript_ = transcript;
    const bool ok = run_in(reg, sc);
    transcript_ = nullptr;
    cb_registry_close(reg);
    if (!shared_path.empty()) std::remove(shared_path.c_str());
    return ok;
  }

 private:
  void record(int line, const char *result, cb_handle h) {
    if (transcript_ != nullptr)
      transcript_->push_back(std::to_string(line) + ": " + result + " -> " + snapshot(h));
  }

  bool run_in(cb_registry *reg, const Scenario &sc) {
    cb_config cfg;
    int cfg_line = 0;
    if (std::string why; !resolve(sc, clock_offset_, &cfg, &cfg_line, &why))
      return fail(cfg_line, "%s", why.c_str());
    const size_t first = sc.steps[0].op == Op::Config ? 1 : 0;
    if (clock_offset_ != 0)
      if (const int st = cb_clock_advance(reg, clock_offset_); st != CB_OK)
        return fail(sc.line, "advance by the clock offset: %s", cb_strerror(st));
    cb_handle h = 0;
    if (const int st = cb_create(reg, sc.name.c_str(), &cfg, &h); st != CB_OK)
      return fail(cfg_line, "cb_create: %s: %s", cb_strerror(st), cb_last_error_message());
    record(cfg_line, "created", h);
    std::map<std::string, cb_ticket> tickets;
    for (size_t i = first; i < sc.steps.size(); ++i) {
      const Step &s = sc.steps[i];
      step_result_ = "ok";
      switch (s.op) {
        case Op::AllowOk:
        case Op::AllowRejected: {
          cb_ticket t = 0;
          const int st = cb_allow(h, &t);
          const int want = s.op == Op::AllowOk ? CB_OK : CB_REJECTED;
          if (st != want)
            return fail(s.line, "allow: expected %s, got %s (state %s)",
                        want == CB_OK ? "ok" : "rejected",
                        st == CB_OK         ? "ok"
                        : st == CB_REJECTED ? "rejected"
                                            : cb_strerror(st),
                        state_name(cb_state(h)));
          if (st == CB_OK) tickets[s.name] = t;
          step_result_ = st == CB_OK ? "allow ok" : "allow rejected";
          break;
        }
        case Op::Done:
          if (const int st = cb_done(h, tickets.at(s.name), int(s.value)); st != CB_OK)
            return fail(s.line, "done: expected CB_OK, got %s: %s", cb_strerror(st),
                        cb_last_error_message());
          break;
        case Op::Advance:
          if (const int st = cb_clock_advance(reg, s.value); st != CB_OK)
            return fail(s.line, "advance: %s: %s", cb_strerror(st), cb_last_error_message());
          break;
        case Op::State:
          if (const int st = cb_state(h); st != int(s.value))
            return fail(s.line, "state: expected %s, got %s", state_name(int(s.value)),
                        state_name(st));
          break;
        case Op::RetryAfter: {
          uint64_t ns = 0;
          if (const int st = cb_retry_after(h, &ns); st != CB_OK)
            return fail(s.line, "retry_after: %s", cb_strerror(st));
          if (ns != s.value)
            return fail(s.line, "retry_after: expected %" PRIu64 ", got %" PRIu64 " (state %s)",
                        s.value, ns, state_name(cb_state(h)));
          break;
        }
        case Op::ForceOpen:
        case Op::Disable:
        case Op::Reset: {
          const int st = s.op == Op::ForceOpen ? cb_force_open(h)
                         : s.op == Op::Disable ? cb_disable(h)
                                               : cb_reset(h);
          if (st != CB_OK) return fail(s.line, "%s", cb_strerror(st));
          break;
        }
        case Op::Trip:
          if (const int st = cb_trip(h, s.value); st != CB_OK)
            return fail(s.line, "trip: expected CB_OK, got %s: %s", cb_strerror(st),
                        cb_last_error_message());
          break;
        case Op::Stats: {
          cb_stats got;
          std::memset(&got, 0, sizeof got);
          got.struct_size = sizeof got;
          if (const int st = cb_stats_get(h, &got); st != CB_OK)
            return fail(s.line, "stats: %s", cb_strerror(st));
          for (const Field &f : s.fields) {
            if (f.kind == Kind::Decimal) {
              const double v = stat_decimal(got, f.key);
              if (!(std::fabs(v - f.d) <= kRateTolerance))
                return fail(s.line, "stats: expected %s=%.17g, got %.17g", f.key.c_str(), f.d, v);
            } else if (stat_u64(got, f.key) != f.u) {
              return fail(s.line, "stats: expected %s=%" PRIu64 ", got %" PRIu64, f.key.c_str(),
                          f.u, stat_u64(got, f.key));
            }
          }
          break;
        }
        case Op::Scenario:
        case Op::Config:
          return fail(s.line, "runner bug: unexpected step");
      }
      record(s.line, step_result_, h);
    }
    return true;
  }

  [[gnu::format(printf, 3, 4)]] bool fail(int line, const char *fmt, ...) {
    std::fprintf(stderr, "%s:%d: mismatch: ", file_.c_str(), line);
    va_list args;
    va_start(args, fmt);
    std::vfprintf(stderr, fmt, args);
    va_end(args);
    std::fputc('\n', stderr);
    return false;
  }

  std::string file_;
  uint64_t clock_offset_;
  Transcript *transcript_ = nullptr;
  const char *step_result_ = "";  // what the step returned, for the transcript
};

// A registry file for one scenario's shared run, unique to this process.
std::string shared_file(const std::string &dir, const Scenario &sc) {
  return dir + "/lb-conformance-" + std::to_string(getpid()) + "-" + sc.name + ".cbr";
}

// False (reported) at the first step whose transcript differs.
bool same_transcripts(const std::string &path, const Scenario &sc, const Transcript &priv,
                      const Transcript &shared) {
  for (size_t i = 0; i < std::max(priv.size(), shared.size()); ++i) {
    const std::string a = i < priv.size() ? priv[i] : "(no step)";
    const std::string b = i < shared.size() ? shared[i] : "(no step)";
    if (a != b) {
      std::fprintf(stderr,
                   "%s:%d: mismatch: scenario %s: the shared registry differs from the "
                   "private one at step %zu (LINE: step -> what the breaker shows after it)\n"
                   "  private: %s\n  shared:  %s\n",
                   path.c_str(), sc.line, sc.name.c_str(), i, a.c_str(), b.c_str());
      return false;
    }
  }
  return true;
}

Exit run_file(const std::string &path, uint64_t clock_offset, const std::string &shared_dir) {
  std::vector<Scenario> scenarios;
  if (const Exit e = parse_file(path, &scenarios); e != kPass) return e;
  Runner runner(path, clock_offset);
  Exit result = kPass;
  for (const Scenario &sc : scenarios) {
    Transcript priv, shared;
    bool ok = runner.run(sc, "", &priv);
    if (!shared_dir.empty()) {
      const bool shared_ok = runner.run(sc, shared_file(shared_dir, sc), &shared);
      ok = shared_ok && ok && same_transcripts(path, sc, priv, shared);
    }
    if (ok) {
      std::printf("ok    %s:%d %s%s\n", path.c_str(), sc.line, sc.name.c_str(),
                  shared_dir.empty() ? "" : " (private and shared, identical transcripts)");
    } else {
      std::printf("FAIL  %s:%d %s\n", path.c_str(), sc.line, sc.name.c_str());
      result = kMismatch;
    }
  }
  return result;
}

}  // namespace
}  // namespace lb_conformance

int main(int argc, char **argv) {
  using namespace lb_conformance;
  int expect = kPass;
  int first = 1;
  uint64_t clock_offset = 0;
  std::string shared_dir, emit_path;
  if (argc >= first + 2 && std::strcmp(argv[first], "--clock-offset") == 0) {
    if (!parse_u64(argv[first + 1], &clock_offset))
      return std::fprintf(stderr, "--clock-offset takes nanoseconds as a plain decimal\n"),
             kMalformed;
    first += 2;
  }
  if (argc >= first + 2 && std::strcmp(argv[first], "--emit") == 0) {
    emit_path = argv[first + 1];
    if (emit_path.empty()) return std::fprintf(stderr, "--emit takes a file\n"), kMalformed;
    first += 2;
  } else if (argc >= first + 2 && std::strcmp(argv[first], "--shared") == 0) {
    shared_dir = argv[first + 1];
    if (shared_dir.empty()) return std::fprintf(stderr, "--shared takes a directory\n"), kMalformed;
    first += 2;
  }
  if (argc >= first + 2 && std::strcmp(argv[first], "--expect") == 0) {
    if (std::strcmp(argv[first + 1], "malformed") == 0)
      expect = kMalformed;
    else if (std::strcmp(argv[first + 1], "mismatch") == 0)
      expect = kMismatch;
    else
      return std::fprintf(stderr, "--expect takes malformed or mismatch\n"), kMalformed;
    first += 2;
  }
  if (first >= argc || (!emit_path.empty() && first + 1 != argc))
    return std::fprintf(stderr,
                        "usage: %s [--clock-offset N] [--shared DIR] [--expect "
                        "malformed|mismatch] FILE...\n"
                        "       %s [--clock-offset N] --emit OUT [--expect "
                        "malformed|mismatch] FILE\n",
                        argv[0], argv[0]),
           kMalformed;
  int worst = kPass;
  for (int i = first; i < argc; ++i) {
    const Exit e = emit_path.empty() ? run_file(argv[i], clock_offset, shared_dir)
                                     : emit_file(argv[i], clock_offset, emit_path);
    if (expect != kPass && e != expect) {
      std::fprintf(stderr, "%s: expected the runner to find it %s, but it did not\n", argv[i],
                   expect == kMalformed ? "malformed" : "mismatching");
      return 1;
    }
    if (e > worst) worst = e;
  }
  return expect != kPass ? kPass : worst;
}
