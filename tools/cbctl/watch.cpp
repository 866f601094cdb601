// cbctl watch. On a terminal: the alternate screen, the cursor hidden, the
// keyboard read unbuffered and unechoed (Ctrl-C still raises SIGINT), and
// each frame written in one piece from the top-left corner, every line
// ending in clear-to-end-of-line and the frame in clear-to-end-of-screen,
// so nothing is ever blanked before it is redrawn (no flicker). Everything
// is put back on the way out, whatever ends the watch.
#include <poll.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <ctime>

#include "commands.hpp"
#include "format.hpp"

namespace cbctl {

namespace {

volatile sig_atomic_t g_stop_signal = 0;
volatile sig_atomic_t g_resized = 0;
volatile sig_atomic_t g_suspend = 0;

void on_stop(int sig) { g_stop_signal = sig; }
void on_resize(int) { g_resized = 1; }
void on_suspend(int) { g_suspend = 1; }

// SIGINT, SIGTERM and SIGHUP end the watch, SIGWINCH redraws it, SIGTSTP
// (Ctrl-Z) suspends it with the terminal put back first. They are blocked
// except inside ppoll(), so one arriving between two frames is taken at
// the next wait, never lost in a race.
class Signals {
 public:
  Signals() {
    sigset_t block;
    sigemptyset(&block);
    for (int i = 0; i < kCount; ++i) sigaddset(&block, kSignals[i]);
    sigprocmask(SIG_BLOCK, &block, &saved_mask_);
    wait_mask_ = saved_mask_;
    for (int i = 0; i < kCount; ++i) sigdelset(&wait_mask_, kSignals[i]);
    for (int i = 0; i < kCount; ++i) {
      struct sigaction sa {};
      sa.sa_handler = kSignals[i] == SIGWINCH  ? on_resize
                      : kSignals[i] == SIGTSTP ? on_suspend
                                               : on_stop;
      sigemptyset(&sa.sa_mask);
      sigaction(kSignals[i], &sa, &saved_[i]);
    }
  }
  ~Signals() {
    for (int i = 0; i < kCount; ++i) sigaction(kSignals[i], &saved_[i], nullptr);
    sigprocmask(SIG_SETMASK, &saved_mask_, nullptr);
  }
  const sigset_t *wait_mask() const { return &wait_mask_; }

  // Stops the process as Ctrl-Z would have, had no handler been installed;
  // returns once it is continued (SIGCONT: fg or bg).
  void suspend() {
    g_suspend = 0;
    struct sigaction dfl {
    }, mine{};
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(SIGTSTP, &dfl, &mine);
    sigset_t only_tstp;
    sigemptyset(&only_tstp);
    sigaddset(&only_tstp, SIGTSTP);
    sigprocmask(SIG_UNBLOCK, &only_tstp, nullptr);
    raise(SIGTSTP);
    sigprocmask(SIG_BLOCK, &only_tstp, nullptr);
    sigaction(SIGTSTP, &mine, nullptr);
  }

 private:
  static constexpr int kCount = 5;
  static constexpr int kSignals[kCount] = {SIGINT, SIGTERM, SIGHUP, SIGWINCH, SIGTSTP};
  sigset_t saved_mask_, wait_mask_;
  struct sigaction saved_[kCount];
};

class Terminal {
 public:
  explicit Terminal(bool keyboard) : keyboard_(keyboard) { enter(); }
  ~Terminal() { leave(); }

  // The watch's terminal: keyboard unbuffered and unechoed (Ctrl-C and
  // Ctrl-Z still raise their signals), alternate screen, cursor hidden.
  void enter() {
    if (keyboard_ && tcgetattr(STDIN_FILENO, &saved_) == 0) {
      termios raw = saved_;
      raw.c_lflag &= ~static_cast<tcflag_t>(ICANON | ECHO);
      raw.c_cc[VMIN] = 0;
      raw.c_cc[VTIME] = 0;
      raw_ = tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0;
    }
    put("\x1b[?1049h\x1b[?25l");
  }
  // As it was: colours off, cursor shown, main screen, keyboard settings.
  void leave() {
    put("\x1b[0m\x1b[?25h\x1b[?1049l");
    if (raw_) tcsetattr(STDIN_FILENO, TCSANOW, &saved_);
    raw_ = false;
  }
  bool raw() const { return raw_; }

  static void put(const std::string &s) {
    std::fwrite(s.data(), 1, s.size(), stdout);
    std::fflush(stdout);
  }

 private:
  bool keyboard_;
  termios saved_{};
  bool raw_ = false;
};

void window_size(size_t *cols, size_t *rows) {
  winsize ws{};
  if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0 && ws.ws_row > 0) {
    *cols = ws.ws_col;
    *rows = ws.ws_row;
  } else {
    *cols = 80;
    *rows = 24;
  }
}

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

std::string summary(const std::vector<BreakerView> &breakers) {
  size_t by_state[5] = {};
  for (const auto &b : breakers)
    if (b.state >= 0 && b.state < 5) ++by_state[b.state];
  std::string s =
      std::to_string(breakers.size()) + (breakers.size() == 1 ? " breaker" : " breakers");
  const char *names[5] = {"closed", "open", "half-open", "forced open", "disabled"};
  for (int i = 0; i < 5; ++i)
    if (by_state[i]) s += ", " + std::to_string(by_state[i]) + " " + names[i];
  return s;
}

// A frame for the terminal: at most `rows` lines of at most `cols` columns.
std::string terminal_frame(const RegistryFile &file, const WatchOptions &opts, bool colour) {
  size_t cols, rows;
  window_size(&cols, &rows);
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
  size_t room = rows > lines.size() ? rows - lines.size() : 0;
  if (table.size() > room) {
    size_t hidden = table.size() - (room > 0 ? room - 1 : 0);
    table.resize(room > 0 ? room - 1 : 0);
    table.push_back("... " + std::to_string(hidden) + " more (a taller terminal shows them)");
  }
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

// Straight to the file descriptor, not through stdio: an EPIPE here leaves
// no half-written stdio buffer behind. False with errno set on failure
// (EINTR when a stop signal came first).
bool write_all(const std::string &text) {
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = write(STDOUT_FILENO, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR && !g_stop_signal) continue;
    if (n < 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

timespec to_timespec(uint64_t ns) {
  return timespec{static_cast<time_t>(ns / 1000000000), static_cast<long>(ns % 1000000000)};
}

}  // namespace

int run_watch(const RegistryFile &file, const WatchOptions &opts) {
  g_stop_signal = 0;
  g_resized = 0;
  Signals signals;
  bool tty = isatty(STDOUT_FILENO);
  if (!tty) {
    // A reader that goes away is an EPIPE to handle, not a death by SIGPIPE.
    struct sigaction ignore {
    }, saved_pipe{};
    ignore.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &ignore, &saved_pipe);
    struct RestorePipe {
      const struct sigaction *saved;
      ~RestorePipe() { sigaction(SIGPIPE, saved, nullptr); }
    } restore_pipe{&saved_pipe};
    for (uint64_t n = 0; !g_stop_signal && (opts.frames == 0 || n < opts.frames); ++n) {
      if (n) {
        timespec wait = to_timespec(opts.interval_ns);
        ppoll(nullptr, 0, &wait, signals.wait_mask());
        if (g_suspend) signals.suspend();
        if (g_stop_signal) break;
      }
      std::string frame = plain_frame(file);
      // Signals unblocked while writing: a reader that stops reading (a
      // paused pager) must not make the watch deaf to Ctrl-C.
      sigset_t blocked;
      sigprocmask(SIG_SETMASK, signals.wait_mask(), &blocked);
      bool written = write_all(frame);
      int write_errno = errno;
      sigprocmask(SIG_SETMASK, &blocked, nullptr);
      if (g_stop_signal) break;
      // a reader that went away (watch | head) ends the watch quietly
      if (!written) return write_errno == EPIPE ? kExitOk : kExitError;
    }
    return kExitOk;
  }
  const char *no_colour = std::getenv("NO_COLOR");
  bool colour = !(no_colour && *no_colour);
  Terminal terminal(isatty(STDIN_FILENO));
  bool keyboard_open = terminal.raw();
  for (uint64_t n = 0; !g_stop_signal && (opts.frames == 0 || n < opts.frames);) {
    Terminal::put(terminal_frame(file, opts, colour));
    ++n;
    if (opts.frames && n == opts.frames) break;
    // Wait out the interval, redrawing early on a resize, ending on q.
    timespec deadline;
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    uint64_t due = static_cast<uint64_t>(deadline.tv_sec) * 1000000000 +
                   static_cast<uint64_t>(deadline.tv_nsec) + opts.interval_ns;
    bool quit = false;
    for (;;) {
      timespec now;
      clock_gettime(CLOCK_MONOTONIC, &now);
      uint64_t at =
          static_cast<uint64_t>(now.tv_sec) * 1000000000 + static_cast<uint64_t>(now.tv_nsec);
      if (at >= due || g_stop_signal || g_resized || g_suspend) break;
      timespec wait = to_timespec(due - at);
      pollfd keyboard{STDIN_FILENO, POLLIN, 0};
      int ready = ppoll(&keyboard, keyboard_open ? 1 : 0, &wait, signals.wait_mask());
      if (ready > 0) {
        char keys[64];
        ssize_t got = (keyboard.revents & POLLIN) ? read(STDIN_FILENO, keys, sizeof keys) : 0;
        // end of input or a hung-up terminal: the keyboard is no more
        if (got <= 0 && !(got < 0 && errno == EINTR)) keyboard_open = false;
        for (ssize_t i = 0; i < got; ++i) quit |= keys[i] == 'q' || keys[i] == 'Q';
        if (quit) break;
      }
    }
    if (quit) break;
    if (g_suspend) {
      terminal.leave();
      signals.suspend();
      terminal.enter();
      keyboard_open = terminal.raw();
    }
    // A resize needs no clearing: every line is rewritten and cleared to
    // its end, and the frame clears the screen below itself.
    g_resized = 0;
  }
  return kExitOk;
}

}  // namespace cbctl
