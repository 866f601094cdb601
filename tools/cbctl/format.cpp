#include "format.hpp"

#include <cctype>
#include <charconv>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <limits>

#include "config_options.hpp"

namespace cbctl {

namespace {

struct Unit {
  std::string_view suffix;
  uint64_t ns;
};
// Longest suffix first where one is a prefix of another ("ms" before "m").
constexpr Unit kUnits[] = {{"ns", 1},
                           {"us", 1000},
                           {"\xC2\xB5s", 1000},  // µs
                           {"ms", 1000000},
                           {"s", 1000000000},
                           {"m", 60 * 1000000000ull},
                           {"h", 3600 * 1000000000ull},
                           {"d", 86400 * 1000000000ull}};

bool is_digit(char c) { return c >= '0' && c <= '9'; }

}  // namespace

std::optional<uint64_t> parse_duration(std::string_view text, std::string *why) {
  auto refuse = [&](const std::string &reason) -> std::optional<uint64_t> {
    if (why) *why = "bad duration '" + std::string(text) + "': " + reason;
    return std::nullopt;
  };
  if (text.empty()) return refuse("empty (use e.g. 500ms, 30s, 5m, 1h)");
  // In long double: exact for every whole number of nanoseconds up to 2^64.
  long double total = 0;
  size_t i = 0;
  while (i < text.size()) {
    size_t start = i;
    while (i < text.size() && is_digit(text[i])) ++i;
    size_t whole_end = i;
    if (i < text.size() && text[i] == '.') {
      ++i;
      while (i < text.size() && is_digit(text[i])) ++i;
    }
    if (whole_end == start || (i > whole_end && i == whole_end + 1))
      return refuse("expected a number at '" + std::string(text.substr(start)) + "'");
    std::string number(text.substr(start, i - start));
    const Unit *unit = nullptr;
    for (const Unit &u : kUnits) {
      if (text.substr(i, u.suffix.size()) == u.suffix) {
        unit = &u;
        break;
      }
    }
    if (!unit) {
      return refuse(i == text.size() ? "no unit (use ns, us, ms, s, m, h or d, e.g. 30s)"
                                     : "unknown unit at '" + std::string(text.substr(i)) + "'");
    }
    i += unit->suffix.size();
    total += std::strtold(number.c_str(), nullptr) * static_cast<long double>(unit->ns);
    if (total > static_cast<long double>(std::numeric_limits<uint64_t>::max()))
      return refuse("too long");
  }
  return static_cast<uint64_t>(std::llroundl(total));
}

std::string format_duration(uint64_t ns) {
  char buf[64];
  constexpr uint64_t kUs = 1000, kMs = 1000 * kUs, kS = 1000 * kMs, kMin = 60 * kS, kH = 60 * kMin,
                     kD = 24 * kH;
  // Three significant figures, cut rather than rounded (a countdown never
  // shows more than is left), without a trailing ".0".
  auto scaled = [&](uint64_t unit, const char *suffix) {
    double v = static_cast<double>(ns) / static_cast<double>(unit);
    if (v < 10)
      std::snprintf(buf, sizeof buf, "%.3g%s", std::floor(v * 100) / 100, suffix);
    else if (v < 100)
      std::snprintf(buf, sizeof buf, "%.3g%s", std::floor(v * 10) / 10, suffix);
    else
      std::snprintf(buf, sizeof buf, "%.0f%s", std::floor(v), suffix);
  };
  if (ns < kUs)
    std::snprintf(buf, sizeof buf, "%" PRIu64 "ns", ns);
  else if (ns < kMs)
    scaled(kUs, "us");
  else if (ns < kS)
    scaled(kMs, "ms");
  else if (ns < kMin)
    scaled(kS, "s");
  else if (ns < kH)
    std::snprintf(buf, sizeof buf, "%" PRIu64 "m%02" PRIu64 "s", ns / kMin, ns % kMin / kS);
  else if (ns < kD)
    std::snprintf(buf, sizeof buf, "%" PRIu64 "h%02" PRIu64 "m", ns / kH, ns % kH / kMin);
  else
    std::snprintf(buf, sizeof buf, "%" PRIu64 "d%02" PRIu64 "h", ns / kD, ns % kD / kH);
  return buf;
}

std::string exact_duration(uint64_t ns) {
  if (ns == 0) return "0s";
  static constexpr Unit kLargestFirst[] = {{"d", 86400 * 1000000000ull},
                                           {"h", 3600 * 1000000000ull},
                                           {"m", 60 * 1000000000ull},
                                           {"s", 1000000000},
                                           {"ms", 1000000},
                                           {"us", 1000},
                                           {"ns", 1}};
  std::string out;
  for (const Unit &u : kLargestFirst) {
    if (ns < u.ns) continue;
    out += std::to_string(ns / u.ns) + std::string(u.suffix);
    ns %= u.ns;
  }
  return out;
}

std::string state_name(int state) {
  const char *name = cb_state_name(state);
  if (!name) return "UNKNOWN(" + std::to_string(state) + ")";
  std::string upper = name;
  for (char &c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return upper;
}

std::string printable(std::string_view text) {
  std::string out;
  for (unsigned char c : text) {
    if (c < 0x20 || c == 0x7f) {
      char esc[8];
      std::snprintf(esc, sizeof esc, "\\x%02x", c);
      out += esc;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

namespace {

// Terminal columns of UTF-8 text: one per code point (names are UTF-8;
// wide characters are rare enough in breaker names to be counted as one).
size_t columns(std::string_view s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

// The first `width` columns of s, ending in "~" when cut.
std::string cut(const std::string &s, size_t width) {
  if (columns(s) <= width) return s;
  if (width == 0) return "";
  std::string out;
  size_t n = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if ((c & 0xC0) != 0x80 && ++n == width) break;
    out += s[i];
  }
  while (!out.empty() && (static_cast<unsigned char>(out.back()) & 0xC0) == 0xC0) out.pop_back();
  return out + "~";
}

const char *state_colour(int state) {
  switch (state) {
    case CB_STATE_CLOSED:
      return "\x1b[32m";  // green
    case CB_STATE_OPEN:
      return "\x1b[1;31m";  // bold red
    case CB_STATE_HALF_OPEN:
      return "\x1b[33m";  // yellow
    case CB_STATE_FORCED_OPEN:
      return "\x1b[1;35m";  // bold magenta
    case CB_STATE_DISABLED:
      return "\x1b[2;37m";  // dim
  }
  return "";
}

std::string percent(double rate) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", rate * 100);
  return buf;
}

std::string retry_after_text(const BreakerView &b) {
  if (b.retry_after_ns == UINT64_MAX) return "never";
  if (b.retry_after_ns == 0) return "-";
  return format_duration(b.retry_after_ns);
}

}  // namespace

namespace {

struct Column {
  const char *title;
  bool right;
};
constexpr Column kColumns[] = {{"NAME", false},    {"STATE", false},      {"CONSEC", true},
                               {"FAIL%", true},    {"RETRY-AFTER", true}, {"ADMITTED", true},
                               {"REJECTED", true}, {"SUCCESSES", true},   {"FAILURES", true}};
constexpr size_t kColumnCount = sizeof kColumns / sizeof kColumns[0];
using Row = std::vector<std::string>;  // one cell per column

Row cells_of(const BreakerView &b) {
  const cb_stats &s = b.stats;
  return {printable(display_name(b)),
          state_name(b.state),
          std::to_string(s.consecutive_failures),
          percent(s.failure_rate),
          retry_after_text(b),
          std::to_string(s.admitted),
          std::to_string(s.rejected),
          std::to_string(s.successes),
          std::to_string(s.failures)};
}

// The columns shown and their widths: each as wide as its widest cell;
// to fit max_width, the name gives way first (down to 12 columns), then
// columns go from the right.
struct Layout {
  size_t width[kColumnCount];
  size_t shown = kColumnCount;

  size_t total(size_t n) const {
    size_t t = 0;
    for (size_t c = 0; c < n; ++c) t += width[c] + (c ? 2 : 0);
    return t;
  }

  Layout(const std::vector<Row> &rows, size_t max_width) {
    for (size_t c = 0; c < kColumnCount; ++c) {
      width[c] = columns(kColumns[c].title);
      for (const Row &row : rows) width[c] = std::max(width[c], columns(row[c]));
    }
    if (max_width == 0) return;
    if (total(kColumnCount) > max_width && width[0] > 12)
      width[0] -= std::min(total(kColumnCount) - max_width, width[0] - 12);
    while (shown > 1 && total(shown) > max_width) --shown;
  }
};

std::string pad(const std::string &text, size_t w, bool right) {
  std::string s = cut(text, w);
  std::string fill(w - columns(s), ' ');
  return right ? fill + s : s + fill;
}

// One line of the table; `colour` (an escape sequence, or nullptr) for the
// state column.
std::string table_line(const Row &row, const Layout &layout, const char *colour) {
  std::string line;
  for (size_t c = 0; c < layout.shown; ++c) {
    if (c) line += "  ";
    std::string cell = pad(row[c], layout.width[c], kColumns[c].right);
    line += colour && c == 1 ? colour + cell + "\x1b[0m" : cell;
  }
  while (!line.empty() && line.back() == ' ') line.pop_back();
  return line;
}

}  // namespace

std::vector<std::string> render_table(const std::vector<BreakerView> &breakers,
                                      const TableStyle &style) {
  std::vector<Row> rows;
  rows.reserve(breakers.size());
  for (const BreakerView &b : breakers) rows.push_back(cells_of(b));
  Layout layout(rows, style.max_width);
  Row titles;
  for (const Column &c : kColumns) titles.emplace_back(c.title);
  std::string header = table_line(titles, layout, nullptr);
  std::vector<std::string> lines;
  lines.push_back(style.colour ? "\x1b[1;7m" + header + "\x1b[0m" : header);
  for (size_t r = 0; r < rows.size(); ++r)
    lines.push_back(
        table_line(rows[r], layout, style.colour ? state_colour(breakers[r].state) : nullptr));
  return lines;
}

std::string render_details(const BreakerView &b) {
  const cb_stats &s = b.stats;
  std::string out;
  auto field = [&](const char *label, const std::string &value) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%-24s", (std::string(label) + ":").c_str());
    out += buf + value + "\n";
  };
  field("name", printable(display_name(b)));
  field("state", state_name(b.state));
  field("retry after", b.retry_after_ns == UINT64_MAX ? "never (until reset)"
                       : b.retry_after_ns == 0        ? "0 (a call would be admitted now)"
                                                      : format_duration(b.retry_after_ns));
  field("in state for", format_duration(s.state_ns));
  field("consecutive failures", std::to_string(s.consecutive_failures));
  field("failure rate", percent(s.failure_rate));
  field("slow call rate", percent(s.slow_rate));
  field("admitted", std::to_string(s.admitted));
  field("rejected", std::to_string(s.rejected));
  field("successes", std::to_string(s.successes));
  field("failures", std::to_string(s.failures));
  field("ignored", std::to_string(s.ignored));
  field("slow", std::to_string(s.slow));
  field("trips", std::to_string(s.trips));
  // The configuration, each field under the option of `create` that sets it.
  for (const ConfigOption &o : config_options()) field(o.flag, config_value_text(o, b.config));
  return out;
}

std::string json_string(std::string_view text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (c < 0x20 || c == 0x7f) {
          char esc[8];
          std::snprintf(esc, sizeof esc, "\\u%04x", c);
          out += esc;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

std::string json_number(double x) {
  if (!std::isfinite(x)) return "null";
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, x);
  return ec == std::errc() ? std::string(buf, end) : "null";
}

std::string breaker_json(const BreakerView &b) {
  const cb_stats &s = b.stats;
  auto u = [](uint64_t v) { return std::to_string(v); };
  std::string out = "{";
  out += "\"name\": " + json_string(display_name(b));
  out += ", \"anonymous\": " + std::string(b.name.empty() ? "true" : "false");
  out += ", \"state\": " + json_string(state_name(b.state));
  // null: never by itself (FORCED_OPEN, until a reset)
  out += ", \"retry_after_ns\": " + (b.retry_after_ns == UINT64_MAX ? "null" : u(b.retry_after_ns));
  out += ", \"state_ns\": " + u(s.state_ns);
  out += ", \"consecutive_failures\": " + u(s.consecutive_failures);
  out += ", \"failure_rate\": " + json_number(s.failure_rate);
  out += ", \"slow_rate\": " + json_number(s.slow_rate);
  out += ", \"admitted\": " + u(s.admitted);
  out += ", \"rejected\": " + u(s.rejected);
  out += ", \"successes\": " + u(s.successes);
  out += ", \"failures\": " + u(s.failures);
  out += ", \"ignored\": " + u(s.ignored);
  out += ", \"slow\": " + u(s.slow);
  out += ", \"trips\": " + u(s.trips);
  out += ", \"config\": {";
  for (const ConfigOption &o : config_options()) {
    if (&o != config_options().data()) out += ", ";
    out += json_string(o.field) + ": " + config_value_json(o, b.config);
  }
  return out + "}}";
}

std::string list_json(const std::string &file, const std::vector<BreakerView> &breakers) {
  std::string out = "{\"file\": " + json_string(file) + ", \"breakers\": [";
  for (size_t i = 0; i < breakers.size(); ++i) {
    out += i ? ",\n  " : "\n  ";
    out += breaker_json(breakers[i]);
  }
  return out + (breakers.empty() ? "]}\n" : "\n]}\n");
}

}  // namespace cbctl
