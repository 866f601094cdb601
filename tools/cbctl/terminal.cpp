#include "terminal.hpp"

#include <poll.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <ctime>

namespace cbctl {

namespace {

volatile sig_atomic_t g_stop_signal = 0;
volatile sig_atomic_t g_resized = 0;
volatile sig_atomic_t g_suspend = 0;

void on_stop(int sig) { g_stop_signal = sig; }
void on_resize(int) { g_resized = 1; }
void on_suspend(int) { g_suspend = 1; }

constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGWINCH, SIGTSTP};

timespec to_timespec(uint64_t ns) {
  return timespec{static_cast<time_t>(ns / 1000000000), static_cast<long>(ns % 1000000000)};
}

}  // namespace

Signals::Signals() {
  static_assert(sizeof kSignals / sizeof kSignals[0] == kCount);
  g_stop_signal = 0;
  g_resized = 0;
  sigset_t block;
  sigemptyset(&block);
  for (int sig : kSignals) sigaddset(&block, sig);
  sigprocmask(SIG_BLOCK, &block, &saved_mask_);
  wait_mask_ = saved_mask_;
  for (int sig : kSignals) sigdelset(&wait_mask_, sig);
  for (int i = 0; i < kCount; ++i) {
    struct sigaction sa {};
    sa.sa_handler = kSignals[i] == SIGWINCH  ? on_resize
                    : kSignals[i] == SIGTSTP ? on_suspend
                                             : on_stop;
    sigemptyset(&sa.sa_mask);
    sigaction(kSignals[i], &sa, &saved_[i]);
  }
}

Signals::~Signals() {
  for (int i = 0; i < kCount; ++i) sigaction(kSignals[i], &saved_[i], nullptr);
  sigprocmask(SIG_SETMASK, &saved_mask_, nullptr);
}

bool Signals::stopped() { return g_stop_signal != 0; }
bool Signals::resized() { return g_resized != 0; }
void Signals::clear_resized() { g_resized = 0; }
bool Signals::suspend_requested() { return g_suspend != 0; }

void Signals::sleep(uint64_t ns) {
  timespec wait = to_timespec(ns);
  ppoll(nullptr, 0, &wait, wait_mask());
  if (g_suspend) suspend();
}

void Signals::suspend() {
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

IgnoreSigpipe::IgnoreSigpipe() {
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGPIPE, &ignore, &saved_);
}

IgnoreSigpipe::~IgnoreSigpipe() { sigaction(SIGPIPE, &saved_, nullptr); }

bool write_unblocked(const std::string &text, const Signals &signals) {
  sigset_t blocked;
  sigprocmask(SIG_SETMASK, signals.wait_mask(), &blocked);
  size_t done = 0;
  bool written = true;
  while (done < text.size()) {
    ssize_t n = write(STDOUT_FILENO, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR && !g_stop_signal) continue;
    if (n < 0) {
      written = false;
      break;
    }
    done += static_cast<size_t>(n);
  }
  int write_errno = errno;
  sigprocmask(SIG_SETMASK, &blocked, nullptr);
  errno = write_errno;
  return written;
}

void Terminal::enter() {
  if (keyboard_ && tcgetattr(STDIN_FILENO, &saved_) == 0) {
    termios raw = saved_;
    raw.c_lflag &= ~static_cast<tcflag_t>(ICANON | ECHO);
    raw.c_cc[VMIN] = 0;
    raw.c_cc[VTIME] = 0;
    raw_ = tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0;
  }
  keyboard_open_ = raw_;
  put("\x1b[?1049h\x1b[?25l");
}

void Terminal::leave() {
  put("\x1b[0m\x1b[?25h\x1b[?1049l");
  if (raw_) tcsetattr(STDIN_FILENO, TCSANOW, &saved_);
  raw_ = false;
}

void Terminal::suspend(Signals *signals) {
  leave();
  signals->suspend();
  enter();
}

bool Terminal::wait_for_quit(uint64_t due_ns, const Signals &signals) {
  for (;;) {
    uint64_t at = monotonic_ns();
    if (at >= due_ns || g_stop_signal || g_resized || g_suspend) return false;
    timespec wait = to_timespec(due_ns - at);
    pollfd keyboard{STDIN_FILENO, POLLIN, 0};
    if (ppoll(&keyboard, keyboard_open_ ? 1 : 0, &wait, signals.wait_mask()) <= 0) continue;
    char keys[64];
    ssize_t got = (keyboard.revents & POLLIN) ? read(STDIN_FILENO, keys, sizeof keys) : 0;
    // end of input or a hung-up terminal: the keyboard is no more
    if (got <= 0 && !(got < 0 && errno == EINTR)) keyboard_open_ = false;
    for (ssize_t i = 0; i < got; ++i) {
      if (keys[i] == 'q' || keys[i] == 'Q') return true;
    }
  }
}

void Terminal::put(const std::string &s) {
  std::fwrite(s.data(), 1, s.size(), stdout);
  std::fflush(stdout);
}

void Terminal::size(size_t *cols, size_t *rows) {
  winsize ws{};
  if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0 && ws.ws_row > 0) {
    *cols = ws.ws_col;
    *rows = ws.ws_row;
  } else {
    *cols = 80;
    *rows = 24;
  }
}

uint64_t monotonic_ns() {
  timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<uint64_t>(now.tv_sec) * 1000000000 + static_cast<uint64_t>(now.tv_nsec);
}

}  // namespace cbctl
