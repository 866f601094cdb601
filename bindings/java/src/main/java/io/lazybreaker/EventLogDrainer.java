package io.lazybreaker;

import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * Opt-in: a daemon thread, started by {@link #start}, that drains a
 * registry's event queue to a {@link System.Logger} every {@code interval}.
 * The library runs nothing of its own; this is the caller's thread, and
 * {@link #close()} stops it. A transition into OPEN or FORCED_OPEN is logged
 * at WARNING, any other at INFO; events the full queue dropped since the
 * last drain at WARNING.
 */
public final class EventLogDrainer implements AutoCloseable {
  private static final int BATCH = 256;
  private final Registry registry;
  private final Logger logger;
  private final Duration interval;
  private final Thread thread;
  private long droppedSeen;
  private volatile boolean stopping;

  private EventLogDrainer(Registry registry, Logger logger, Duration interval) {
    this.registry = registry;
    this.logger = logger;
    this.interval = interval;
    this.thread = new Thread(this::run, "lazybreaker-event-log");
    this.thread.setDaemon(true);
  }

  /**
   * Starts draining {@code registry} to {@code logger}.
   *
   * @throws IllegalArgumentException if {@code interval} is not positive
   */
  public static EventLogDrainer start(Registry registry, Logger logger, Duration interval) {
    Objects.requireNonNull(registry, "registry");
    Objects.requireNonNull(logger, "logger");
    Objects.requireNonNull(interval, "interval");
    if (interval.isNegative() || interval.isZero()) {
      throw new IllegalArgumentException("interval must be positive, got " + interval);
    }
    EventLogDrainer d = new EventLogDrainer(registry, logger, interval);
    d.thread.start();
    return d;
  }

  /** Drains what is queued now to the logger, on the calling thread; how many events it logged. */
  public int drainOnce() {
    int logged = 0;
    List<StateTransition> events;
    do {
      events = registry.pollEvents(BATCH);
      for (StateTransition e : events) {
        boolean opens = e.to() == CircuitBreaker.State.OPEN || e.to() == CircuitBreaker.State.FORCED_OPEN;
        logger.log(opens ? Level.WARNING : Level.INFO,
            "circuit breaker ''{0}'': {1} -> {2} ({3})", e.breakerName(), e.from().label(),
            e.to().label(), e.reason().label());
        logged++;
      }
    } while (events.size() == BATCH);
    long dropped = registry.eventsDropped();
    if (dropped != droppedSeen) {
      logger.log(Level.WARNING, "lazybreaker dropped {0} events (the event queue was full)",
          dropped - droppedSeen);
      droppedSeen = dropped;
    }
    return logged;
  }

  private void run() {
    while (!stopping) {
      try {
        drainOnce();
      } catch (IllegalStateException registryClosed) {
        return;
      }
      try {
        Thread.sleep(interval.toMillis(), interval.toNanosPart() % 1_000_000);
      } catch (InterruptedException e) {
        break;
      }
    }
  }

  /** Whether the thread is still draining. */
  public boolean isRunning() {
    return thread.isAlive();
  }

  /**
   * Stops the thread and waits for it (a last drain is not made). Interrupted
   * while waiting, it returns with the caller's interrupt flag set again.
   */
  @Override
  public void close() {
    stopping = true;
    thread.interrupt();
    try {
      thread.join();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
