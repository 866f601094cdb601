// The step-stream writer: lb_conformance --emit (README.md, "Step streams").
#include "steps.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <ostream>
#include <sstream>
#include <vector>

namespace lb_conformance {
namespace {

// The steps of one scenario after its breaker is created, as stream lines.
void emit_steps(const Scenario &sc, std::ostream &o) {
  for (const Step &s : sc.steps) {
    switch (s.op) {
      case Op::Scenario:
      case Op::Config:
        break;  // written before the breaker is created
      case Op::AllowOk:
        o << "allow " << s.line << " ok " << s.name << '\n';
        break;
      case Op::AllowRejected:
        o << "allow " << s.line << " rejected\n";
        break;
      case Op::Done:
        o << "done " << s.line << ' ' << s.name << ' ' << outcome_name(s.value) << '\n';
        break;
      case Op::Advance:
        o << "advance " << s.line << ' ' << s.value << '\n';
        break;
      case Op::State:
        o << "state " << s.line << ' ' << state_name(int(s.value)) << '\n';
        break;
      case Op::RetryAfter:
        o << "retry_after " << s.line << ' ' << s.value << '\n';
        break;
      case Op::ForceOpen:
        o << "force_open " << s.line << '\n';
        break;
      case Op::Disable:
        o << "disable " << s.line << '\n';
        break;
      case Op::Reset:
        o << "reset " << s.line << '\n';
        break;
      case Op::Trip:
        o << "trip " << s.line << ' ' << s.value << '\n';
        break;
      case Op::Stats:
        for (const Field &f : s.fields)
          if (f.kind == Kind::Decimal)
            o << "rate " << s.line << ' ' << f.key << ' ' << decimal_text(f.d) << '\n';
          else
            o << "count " << s.line << ' ' << f.key << ' ' << f.u << '\n';
        break;
    }
  }
}

// The scenarios as a step stream (README.md, "Step streams"); false
// (reported as a mismatch) when one of them cannot run as written.
bool emit(const std::string &path, const std::vector<Scenario> &scenarios, uint64_t clock_offset,
          std::ostream &o) {
  o << "lbsteps 1 " << path << '\n';
  bool ok = true;
  for (const Scenario &sc : scenarios) {
    cb_config cfg;
    int line = 0;
    if (std::string why; !resolve(sc, clock_offset, &cfg, &line, &why)) {
      std::fprintf(stderr, "%s:%d: mismatch: %s\n", path.c_str(), line, why.c_str());
      ok = false;
      continue;
    }
    const std::vector<Field> none;
    const auto &given = sc.steps[0].op == Op::Config ? sc.steps[0].fields : none;
    o << "scenario " << sc.line << ' ' << sc.name << '\n';
    for (const ConfigKey &k : config_keys()) {
      // The policy is always set, so that no binding infers one from the
      // other options (README.md, "Step streams").
      const bool set =
          k.kind == Kind::Policy ||
          std::any_of(given.begin(), given.end(), [&](const Field &f) { return f.key == k.name; });
      o << "config " << line << ' ' << k.name << ' ' << config_text(cfg, k)
        << (set ? " set\n" : " default\n");
    }
    if (clock_offset != 0) o << "advance " << sc.line << ' ' << clock_offset << '\n';
    o << "create " << line << '\n';
    emit_steps(sc, o);
    o << "end " << sc.line << '\n';
  }
  return ok;
}

}  // namespace

Exit emit_file(const std::string &path, uint64_t clock_offset, const std::string &out_path) {
  std::remove(out_path.c_str());  // no stale stream outlives a failed one
  std::vector<Scenario> scenarios;
  if (const Exit e = parse_file(path, &scenarios); e != kPass) return e;
  std::ostringstream text;
  if (!emit(path, scenarios, clock_offset, text)) return kMismatch;
  std::ofstream out(out_path, std::ios::binary);
  out << text.str();
  out.close();
  if (!out) {
    std::fprintf(stderr, "%s: cannot write: %s\n", out_path.c_str(), std::strerror(errno));
    std::remove(out_path.c_str());
    return kMalformed;
  }
  return kPass;
}

}  // namespace lb_conformance
