package io.lazybreaker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.text.MessageFormat;
import java.time.Duration;
import java.util.List;
import java.util.ResourceBundle;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** EventLogDrainer: transitions to a System.Logger, on the caller's thread or its own. */
class EventLogDrainerTest {
  private final Registry reg = Registry.withManualClock();

  @AfterEach
  void close() {
    reg.close();
  }

  /** Keeps what it is given, formatted. */
  static final class Recorder implements System.Logger {
    final List<String> lines = new CopyOnWriteArrayList<>();

    @Override
    public String getName() {
      return "test";
    }

    @Override
    public boolean isLoggable(Level level) {
      return true;
    }

    @Override
    public void log(Level level, ResourceBundle bundle, String msg, Throwable thrown) {
      lines.add(level + " " + msg);
    }

    @Override
    public void log(Level level, ResourceBundle bundle, String format, Object... params) {
      lines.add(level + " " + MessageFormat.format(format, params));
    }

    @Override
    public void log(Level level, Supplier<String> msg) {
      lines.add(level + " " + msg.get());
    }
  }

  @Test
  void transitions_are_logged_warning_when_they_open() {
    CircuitBreaker b = reg.create("pay", BreakerConfig.builder().failureThreshold(1).build());
    b.tryAcquire().failure();
    b.reset();
    Recorder log = new Recorder();
    try (EventLogDrainer d = EventLogDrainer.start(reg, log, Duration.ofHours(1))) {
      // the thread's first drain may already have run: drain what is left, then read both
      d.drainOnce();
      for (int i = 0; i < 500 && log.lines.size() < 2; i++) Thread.sleep(10);
    } catch (InterruptedException e) {
      throw new AssertionError(e);
    }
    assertEquals(List.of("WARNING circuit breaker 'pay': closed -> open (consecutive_failures)",
        "INFO circuit breaker 'pay': open -> closed (manual)"), log.lines);
  }

  @Test
  void the_thread_stops_when_closed() throws Exception {
    EventLogDrainer d = EventLogDrainer.start(reg, new Recorder(), Duration.ofMillis(5));
    assertTrue(d.isRunning());
    d.close();
    assertFalse(d.isRunning());
    d.close(); // again: nothing
  }

  @Test
  void bad_input_is_refused() {
    Recorder log = new Recorder();
    assertEquals("interval must be positive, got PT0S", assertThrows(IllegalArgumentException.class,
        () -> EventLogDrainer.start(reg, log, Duration.ZERO)).getMessage());
    assertThrows(NullPointerException.class, () -> EventLogDrainer.start(null, log, Duration.ofSeconds(1)));
  }
}
