// cbctl watch: what it draws, and when. On a terminal (terminal.hpp sets it
// up and puts it back), each frame is written in one piece from the
// top-left corner, every line ending in clear-to-end-of-line and the frame
// in clear-to-end-of-screen, so nothing is ever blanked before it is
// redrawn (no flicker); elsewhere, plain tables one after another.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <ctime>

#include "commands.hpp"
#include "format.hpp"
#include "terminal.hpp"

namespace cbctl {

namespace {

std::string clock_text(bool utc) {
  char buf[32];
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  if (utc) {
    gmtime_r(&now, &tm);
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  } else {
    localtime_r(&now, &tm);
    std::strftime(buf, sizeof buf, "%H:%M:%S", &tm);
  }
  return buf;
}

// The states, by cb_state_t (CB_STATE_LIST: 0, 1, ... in order).
#define LB_COUNT_STATE(state, name) +1
constexpr int kStates = 0 CB_STATE_LIST(LB_COUNT_STATE);
#undef LB_COUNT_STATE
#define LB_CHECK_STATE(state, name) static_assert((state) >= 0 && (state) < kStates);
CB_STATE_LIST(LB_CHECK_STATE)
#undef LB_CHECK_STATE

// "4 breakers, 3 closed, 1 forced open": cb_state_name's words.
std::string summary(const std::vector<BreakerView> &breakers) {
  size_t by_state[kStates] = {};
  for (const auto &b : breakers)
    if (b.state >= 0 && b.state < kStates) ++by_state[b.state];
  std::string s =
      std::to_string(breakers.size()) + (breakers.size() == 1 ? " breaker" : " breakers");
  for (int i = 0; i < kStates; ++i) {
    if (!by_state[i]) continue;
    std::string name = cb_state_name(i);
    std::replace(name.begin(), name.end(), '_', ' ');
    s += ", " + std::to_string(by_state[i]) + " " + name;
  }
  return s;
}

// The table cut to `room` lines, the last of them counting what was left out.
void fit_rows(std::vector<std::string> *table, size_t room) {
  if (table->size() <= room) return;
  size_t kept = room > 0 ? room - 1 : 0;
  size_t hidden = table->size() - kept;
  table->resize(kept);
  table->push_back("... " + std::to_string(hidden) + " more (a taller terminal shows them)");
}

// A frame for the terminal: at most `rows` lines of at most `cols` columns.
std::string terminal_frame(const RegistryFile &file, const WatchOptions &opts, bool colour) {
  size_t cols, rows;
  Terminal::size(&cols, &rows);
  std::vector<BreakerView> breakers = file.breakers();
  std::vector<std::string> lines;
  std::string title = "cbctl watch " + printable(file.path()) + "  every " +
                      format_duration(opts.interval_ns) + "  " + clock_text(false) + "  q: quit";
  if (title.size() > cols) title.resize(cols);
  lines.push_back(colour ? "\x1b[1m" + title + "\x1b[0m" : title);
  std::string sum = summary(breakers);
  if (sum.size() > cols) sum.resize(cols);
  lines.push_back(sum);
  lines.push_back("");
  std::vector<std::string> table = render_table(breakers, TableStyle{colour, cols});
  fit_rows(&table, rows > lines.size() ? rows - lines.size() : 0);
  lines.insert(lines.end(), table.begin(), table.end());
  std::string frame = "\x1b[H";
  for (size_t i = 0; i < lines.size(); ++i) {
    frame += lines[i];
    frame += "\x1b[K";
    if (i + 1 < lines.size()) frame += "\r\n";
  }
  return frame + "\x1b[J";
}

std::string plain_frame(const RegistryFile &file) {
  std::vector<BreakerView> breakers = file.breakers();
  std::string frame =
      "# " + printable(file.path()) + " at " + clock_text(true) + ": " + summary(breakers) + "\n";
  for (const std::string &line : render_table(breakers, TableStyle{})) frame += line + "\n";
  return frame + "\n";
}

bool more_frames(const WatchOptions &opts, uint64_t drawn) {
  return !Signals::stopped() && (opts.frames == 0 || drawn < opts.frames);
}

// Off a terminal: a plain table every interval.
int watch_plain(const RegistryFile &file, const WatchOptions &opts, Signals *signals) {
  IgnoreSigpipe ignore_sigpipe;
  for (uint64_t n = 0; more_frames(opts, n); ++n) {
    if (n) {
      signals->sleep(opts.interval_ns);
      if (Signals::stopped()) break;
    }
    bool written = write_unblocked(plain_frame(file), *signals);
    if (Signals::stopped()) break;
    // a reader that went away (watch | head) ends the watch quietly
    if (!written) return errno == EPIPE ? kExitOk : kExitError;
  }
  return kExitOk;
}

// On a terminal: a frame every interval, or at once after a resize, until
// q, a stop signal or the last frame.
int watch_terminal(const RegistryFile &file, const WatchOptions &opts, Signals *signals) {
  const char *no_colour = std::getenv("NO_COLOR");
  bool colour = !(no_colour && *no_colour);
  Terminal terminal(isatty(STDIN_FILENO));
  for (uint64_t n = 0; more_frames(opts, n);) {
    Terminal::put(terminal_frame(file, opts, colour));
    ++n;
    if (opts.frames && n == opts.frames) break;
    if (terminal.wait_for_quit(monotonic_ns() + opts.interval_ns, *signals)) break;
    if (Signals::suspend_requested()) terminal.suspend(signals);
    // A resize needs no clearing: every line is rewritten and cleared to
    // its end, and the frame clears the screen below itself.
    Signals::clear_resized();
  }
  return kExitOk;
}

}  // namespace

int run_watch(const RegistryFile &file, const WatchOptions &opts) {
  Signals signals;
  return isatty(STDOUT_FILENO) ? watch_terminal(file, opts, &signals)
                               : watch_plain(file, opts, &signals);
}

}  // namespace cbctl
