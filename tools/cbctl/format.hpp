// Text for people and for programs: durations, state names, the breaker
// table, JSON.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "registry_file.hpp"

namespace cbctl {

// "500ms", "30s", "5m", "1h", "1h30m", "1.5s", "250us", "100ns", "2d": a
// sequence of <number><unit>, where the number may have a fraction. Nothing
// (and *why says what is wrong) for anything else, a bare number included:
// a duration always names its unit.
std::optional<uint64_t> parse_duration(std::string_view text, std::string *why);

// A duration for people, to about three significant figures: "850ns",
// "12.5us", "250ms", "29.8s", "4m05s", "2h03m", "3d04h".
std::string format_duration(uint64_t ns);

// A duration exactly, in parse_duration's words, largest units first:
// "30s", "1m", "1h30m", "1s500ms", "366d".
std::string exact_duration(uint64_t ns);

// cb_state_name's, upper-cased: "CLOSED", "OPEN", "HALF_OPEN",
// "FORCED_OPEN", "DISABLED"; "UNKNOWN(n)" for a value it does not name.
std::string state_name(int state);

// A breaker name safe to print on a terminal: control characters (a name
// may hold any valid UTF-8) come out as \xNN.
std::string printable(std::string_view text);

// The columns of `cbctl list` and `cbctl watch`.
struct TableStyle {
  bool colour = false;   // ANSI colours for the header and the state
  size_t max_width = 0;  // 0: no limit; else columns past it are left out
};
std::vector<std::string> render_table(const std::vector<BreakerView> &breakers,
                                      const TableStyle &style);

// `cbctl show`: one "field: value" line each.
std::string render_details(const BreakerView &b);

// JSON: a string literal, a number (never NaN or Inf), one breaker as an
// object, a list as {"file": ..., "breakers": [...]}.
std::string json_string(std::string_view text);
std::string json_number(double x);
std::string breaker_json(const BreakerView &b);
std::string list_json(const std::string &file, const std::vector<BreakerView> &breakers);

}  // namespace cbctl
