// The quiet-path vectors (LB_QUIET_VECTORS, docs/fastpath.md) against the
// library's own code rather than the header's: the handle and word tests
// of registry/handle.hpp and registry/fast_path.hpp, the OPEN period word of
// core/words.hpp, and the core's own counter bump on a real cell. So a
// vector the header computes and the library would decide otherwise fails
// here, naming its line.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include "core/counters.hpp"
#include "core/words.hpp"
#include "registry/fast_path.hpp"
#include "registry/handle.hpp"

namespace {

using lazybreaker::core::OpenPeriod;
using lazybreaker::core::StateWord;
using lazybreaker::registry::FastPath;
using lazybreaker::registry::Handle;

// The allow decision as the library makes it on the hot line.
std::string library_allow(uint64_t h, uint64_t w, uint64_t p, uint64_t lean, uint64_t now,
                          uint64_t *ticket) {
  *ticket = 0;
  if (Handle::quiet_in(h, w)) {
    *ticket = Handle::seal(h, w);
    return "admit";
  }
  if (FastPath::admits_untimed(h, w, ticket)) return "admit";
  if (lean == 0 || !Handle::names_life(h, w) || !FastPath::may_reject(w)) return "library";
  if (StateWord::mode(w) == StateWord::kForcedOpenMode) return "reject";
  const uint64_t deadline = OpenPeriod::cheap_deadline(p, StateWord::epoch(w));
  return deadline != 0 && now < deadline ? "reject" : "library";
}

// cb_done's quiet test, in the portable form of FastPath::done: the carry
// of h + w rather than the word's high bit.
std::string library_done(uint64_t h, uint64_t w, uint64_t ticket, uint64_t outcome) {
  uint64_t sealed = 0;
  const bool quiet = outcome == 0 && __builtin_add_overflow(h, w, &sealed) && sealed == ticket &&
                     ((w ^ h) >> Handle::kIndexBits) == 0;
  return quiet ? "success" : "library";
}

// The core's bump of counter f on a cell holding `cell`.
uint64_t library_count(uint64_t cell, uint64_t f, bool *fold) {
  lazybreaker::core::Cell c;
  for (unsigned i = 0; i < lazybreaker::core::kCellFields; i++)
    c.n[i].store(uint16_t(cell >> (16 * i)), std::memory_order_relaxed);
  *fold = lazybreaker::core::bump_exclusive(c.n[f]);
  uint64_t after = 0;
  for (unsigned i = 0; i < lazybreaker::core::kCellFields; i++)
    after |= uint64_t(c.n[i].load(std::memory_order_relaxed)) << (16 * i);
  return after;
}

uint64_t hex(std::istringstream &in) {
  std::string s;
  in >> s;
  REQUIRE_MESSAGE(!s.empty(), "missing field");
  size_t end = 0;
  const uint64_t v = std::stoull(s, &end, 16);
  REQUIRE_MESSAGE(end == s.size(), "not a hex number: " << s);
  return v;
}

}  // namespace

TEST_CASE("every quiet-path vector is what the library itself decides") {
  const char *variable = std::getenv("LB_QUIET_VECTORS");
  REQUIRE_MESSAGE(variable != nullptr, "LB_QUIET_VECTORS is not set");
  const std::string path(variable);
  std::ifstream file(path);
  REQUIRE_MESSAGE(file.good(), "cannot read " << path);
  unsigned number = 0, allow = 0, done = 0, count = 0;
  for (std::string line; std::getline(file, line);) {
    number++;
    if (line.empty() || line[0] == '#') continue;
    INFO(path << ":" << number << ": " << line);
    std::istringstream in(line);
    std::string kind, decision;
    in >> kind;
    if (kind == "allow") {
      const uint64_t h = hex(in), w = hex(in), p = hex(in), lean = hex(in), now = hex(in);
      in >> decision;
      const uint64_t ticket = hex(in);
      uint64_t expected = 0;
      REQUIRE(library_allow(h, w, p, lean, now, &expected) == decision);
      REQUIRE(expected == ticket);
      allow++;
    } else if (kind == "done") {
      const uint64_t h = hex(in), w = hex(in), ticket = hex(in), outcome = hex(in);
      in >> decision;
      REQUIRE(library_done(h, w, ticket, outcome) == decision);
      done++;
    } else {
      REQUIRE(kind == "count");
      const uint64_t cell = hex(in), f = hex(in), fold_at = hex(in), after = hex(in),
                     fold = hex(in);
      REQUIRE(f < 3);
      REQUIRE(fold_at == lazybreaker::core::kFoldAt);
      bool library_fold = false;
      REQUIRE(library_count(cell, f, &library_fold) == after);
      REQUIRE(uint64_t(library_fold) == fold);
      count++;
    }
  }
  MESSAGE(allow << " allow, " << done << " done, " << count
                << " count vectors agree with the library");
  CHECK(allow > 0);
  CHECK(done > 0);
  CHECK(count > 0);
}
