// cbctl watch's terminal handling, apart from what it draws: the signals
// that end, redraw and suspend it, the terminal's modes on the way in and
// out, the keyboard, and writes that a signal or a vanished reader can
// interrupt. Everything is put back on the way out, whatever ends the watch.
#pragma once

#include <signal.h>
#include <termios.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace cbctl {

// SIGINT, SIGTERM and SIGHUP end the watch, SIGWINCH redraws it, SIGTSTP
// (Ctrl-Z) suspends it with the terminal put back first. They are blocked
// except while the watch waits (or writes), so one arriving between two
// frames is taken at the next wait, never lost in a race. One at a time.
class Signals {
 public:
  Signals();
  ~Signals();
  Signals(const Signals &) = delete;
  Signals &operator=(const Signals &) = delete;

  static bool stopped();  // SIGINT, SIGTERM or SIGHUP came
  static bool resized();  // SIGWINCH came since clear_resized()
  static void clear_resized();
  static bool suspend_requested();  // SIGTSTP came

  // The mask under which the signals above are taken.
  const sigset_t *wait_mask() const { return &wait_mask_; }
  // Sleeps `ns`, or less when a signal comes; then suspends if asked to.
  void sleep(uint64_t ns);
  // Stops the process as Ctrl-Z would have, had no handler been installed;
  // returns once it is continued (SIGCONT: fg or bg).
  void suspend();

 private:
  static constexpr int kCount = 5;
  sigset_t saved_mask_, wait_mask_;
  struct sigaction saved_[kCount];
};

// SIGPIPE ignored while it lives: a reader that goes away is an EPIPE to
// handle, not a death.
class IgnoreSigpipe {
 public:
  IgnoreSigpipe();
  ~IgnoreSigpipe();
  IgnoreSigpipe(const IgnoreSigpipe &) = delete;
  IgnoreSigpipe &operator=(const IgnoreSigpipe &) = delete;

 private:
  struct sigaction saved_;
};

// `text` to standard output's file descriptor, not through stdio (an EPIPE
// leaves no half-written stdio buffer behind), with the signals unblocked
// (a reader that stops reading, a paused pager, must not make the watch
// deaf to Ctrl-C). False with errno set on failure (EINTR when a stop
// signal came first).
bool write_unblocked(const std::string &text, const Signals &signals);

// The watch's terminal while it lives: keyboard unbuffered and unechoed
// when `keyboard` (Ctrl-C and Ctrl-Z still raise their signals), the
// alternate screen, the cursor hidden.
class Terminal {
 public:
  explicit Terminal(bool keyboard) : keyboard_(keyboard) { enter(); }
  ~Terminal() { leave(); }
  Terminal(const Terminal &) = delete;
  Terminal &operator=(const Terminal &) = delete;

  void enter();
  // As it was: colours off, cursor shown, main screen, keyboard settings.
  void leave();
  // Suspends the process (Signals::suspend) with the terminal as it was
  // meanwhile.
  void suspend(Signals *signals);

  // Waits until CLOCK_MONOTONIC reaches `due_ns`, or less when a signal
  // comes; true when q was pressed.
  bool wait_for_quit(uint64_t due_ns, const Signals &signals);

  static void put(const std::string &s);
  // The terminal's columns and rows (80x24 when it does not say).
  static void size(size_t *cols, size_t *rows);

 private:
  bool keyboard_;
  termios saved_{};
  bool raw_ = false;
  bool keyboard_open_ = false;  // raw, and neither at end of input nor hung up
};

// CLOCK_MONOTONIC in nanoseconds.
uint64_t monotonic_ns();

}  // namespace cbctl
