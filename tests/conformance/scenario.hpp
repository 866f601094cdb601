// The .scn scenario format (README.md, "Format"), parsed once: a file's
// scenarios as the parser leaves them, and what the C++ runner (runner.cpp)
// and the step-stream writer (steps.cpp) need of them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "lazybreaker/lazybreaker.h"

namespace lb_conformance {

// lb_conformance's exit statuses.
enum Exit { kPass = 0, kMismatch = 1, kMalformed = 2 };

enum class Op {
  Scenario,
  Config,
  AllowOk,
  AllowRejected,
  Done,
  Advance,
  State,
  RetryAfter,
  ForceOpen,
  Disable,
  Reset,
  Trip,
  Stats
};

// How a config or stats key's value is written and compared.
enum class Kind {
  U32,      // an integer that must fit the uint32_t field (checked by resolve)
  U64,      // an integer
  Decimal,  // a double field: an integer or digits '.' digits
  Policy    // consecutive, count_window or time_window
};

struct Field {
  std::string key;
  Kind kind = Kind::U64;
  uint64_t u = 0;  // U32, U64, Policy
  double d = 0;    // Decimal
};

struct Step {
  int line = 0;
  Op op = Op::Scenario;
  std::string name;           // scenario name or ticket
  uint64_t value = 0;         // ns, state, outcome
  std::vector<Field> fields;  // config and stats
};

struct Scenario {
  std::string name;
  int line = 0;
  std::vector<Step> steps;
};

// The config keys in cb_config's order, which is the order a step stream
// lists them in, each with the field it sets.
struct ConfigKey {
  const char *name;
  Kind kind;
  size_t offset;
};
// Every config key, in cb_config's order.
std::span<const ConfigKey> config_keys();

// A state's name in the format (or, for a negative status, its name).
const char *state_name(int s);
const char *outcome_name(uint64_t outcome);

// A plain unsigned decimal that fits 64 bits: no sign, no suffix, no spaces.
bool parse_u64(const std::string &s, uint64_t *out);

// A double as the shortest digits[.digits] that reads back as the same
// double: the format's own decimal syntax, which every language parses.
std::string decimal_text(double d);

// A config field's value in the format: a number, a decimal or a policy.
std::string config_text(const cb_config &c, const ConfigKey &k);

// A scenario's configuration: cb_config_init's defaults under its config
// line. False, with the line at fault and why, when the scenario cannot run
// as written: a value that does not fit its field, or (at a clock offset) a
// time window whose bucket width does not divide the offset.
bool resolve(const Scenario &sc, uint64_t clock_offset, cb_config *cfg, int *line,
             std::string *why);

// Reads and parses a whole file: kPass, or kMalformed with every bad line
// reported (or the file unreadable).
Exit parse_file(const std::string &path, std::vector<Scenario> *scenarios);

}  // namespace lb_conformance
