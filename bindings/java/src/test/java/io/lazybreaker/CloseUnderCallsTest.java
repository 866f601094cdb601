package io.lazybreaker;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.lazybreaker.BreakerConfig.Policy;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link Registry#close()} while 8 threads call its breakers (tryAcquire, success, failure, state,
 * stats): the JVM survives; a call in flight when the close begins returns as it would have
 * before the close or throws the closed {@link IllegalStateException}; every call begun after
 * close() returned throws it. The race of tests/capi/test_close_race.cpp: 100 rounds for each
 * registry kind (private, a shared file), each over breakers of all three trip policies, created
 * and from getOrCreate. On a library whose close unmaps under its calls the JVM dies of SIGSEGV
 * (in LbNativeJNI.cb_done or cb_allow) instead.
 */
class CloseUnderCallsTest {
  private static final int THREADS = 8;
  private static final int ROUNDS = 100;
  private static final Policy[] POLICIES = Policy.values();
  // Calls each thread makes before the close (it moves from round to round)
  // and after it.
  private static final int AFTER = 10;
  // Bounds a round that stops making progress (a hang would be a bug too).
  private static final long DEADLINE_S = 60;

  @TempDir Path dir;

  @Test
  void closing_a_private_registry_under_calls_on_breakers_of_every_policy_crashes_nothing()
      throws Exception {
    race(null);
  }

  @Test
  void closing_a_shared_registry_under_calls_on_breakers_of_every_policy_crashes_nothing()
      throws Exception {
    race(dir.resolve("close-race.lbr"));
  }

  /**
   * Trips after a few failures, and OPEN lasts 1 µs: every state comes up under the calls (also
   * CloseRaceTest's).
   */
  static BreakerConfig config(Policy policy) {
    // Each policy with its own options only: one it ignores is refused.
    BreakerConfig.Builder b =
        BreakerConfig.builder().policy(policy).waitDurationInOpenState(Duration.ofNanos(1000));
    switch (policy) {
      case CONSECUTIVE_FAILURES:
        b.failureThreshold(3);
        break;
      case COUNT_WINDOW:
        b.windowSize(16).minimumNumberOfCalls(4);
        break;
      case TIME_WINDOW:
        b.windowDuration(Duration.ofSeconds(1)).windowBuckets(8).minimumNumberOfCalls(4)
            .slowCallDurationThreshold(Duration.ofSeconds(1));
        break;
    }
    return b.build();
  }

  /** Whether a throwable is the binding's "closed": NativeErrors' CB_EHANDLE. */
  static boolean isClosedError(Throwable t) {
    return t instanceof IllegalStateException
        && t.getMessage() != null
        && t.getMessage().startsWith("the breaker is closed");
  }

  /** What a round's threads share. */
  private static final class Round {
    final CircuitBreaker[] breakers;
    final int before;
    final AtomicBoolean closing = new AtomicBoolean(); // set just before close()
    final AtomicBoolean closed = new AtomicBoolean(); // set once close() returned
    final AtomicBoolean stop = new AtomicBoolean();
    final CountDownLatch calledBefore = new CountDownLatch(THREADS);
    final CountDownLatch calledAfter = new CountDownLatch(THREADS);
    final ConcurrentLinkedQueue<String> wrong = new ConcurrentLinkedQueue<>();

    Round(CircuitBreaker[] breakers, int before) {
      this.breakers = breakers;
      this.before = before;
    }

    void note(String s) {
      if (wrong.size() < 10) wrong.add(s);
    }
  }

  /** One thread's part of a round (run on the test's pool, whose threads outlive rounds). */
  private static final class Worker implements Runnable {
    final Round round;
    int seed;

    Worker(Round round, int seed) {
      this.round = round;
      this.seed = seed;
    }

    @Override
    public void run() {
      ArrayDeque<Permit> held = new ArrayDeque<>(); // admitted, not yet reported
      long calls = 0;
      long after = 0;
      while (!round.stop.get()) {
        // Read before the call: a call begun once `closed` is seen began
        // after close() returned.
        boolean afterClose = round.closed.get();
        seed = seed * 1103515245 + 12345;
        CircuitBreaker b = round.breakers[((seed >>> 8) & 0xffff) % round.breakers.length];
        String what;
        try {
          switch (((seed >>> 16) & 0xffff) % 5) {
            case 0:
            case 1:
              what = "tryAcquire";
              Permit p = b.tryAcquire();
              if (p != null) held.push(p);
              break;
            case 2:
            case 3:
              if (held.isEmpty()) {
                what = "state";
                b.state();
              } else if (((seed >>> 24) & 0xff) % 3 == 0) {
                what = "failure";
                held.pop().failure();
              } else {
                what = "success";
                held.pop().success();
              }
              break;
            default:
              what = "stats";
              b.stats();
          }
          if (afterClose) round.note(b.name() + ": a " + what + " begun after close() returned");
        } catch (Throwable t) {
          if (!isClosedError(t)) {
            round.note(b.name() + ": a call threw " + t);
          } else if (!round.closing.get()) {
            // It returned before the close began: the close is not why.
            round.note(b.name() + ": closed before the registry's close began: " + t);
          }
        }
        if (++calls == round.before) round.calledBefore.countDown();
        if (afterClose && ++after == AFTER) {
          round.calledAfter.countDown();
          break; // each further call would only throw again
        }
        // 8 threads on fewer cores: each gets its turn every thousand calls
        // or so rather than a time slice apart, and between turns it is
        // mostly inside a call, where the scheduler preempts it (yielding
        // often makes every switch fall between calls: the race hides).
        if (calls % 1024 == 0) Thread.yield();
      }
    }
  }

  private void race(Path file) throws Exception {
    BreakerConfig[] configs = new BreakerConfig[POLICIES.length];
    for (int i = 0; i < POLICIES.length; i++) configs[i] = config(POLICIES[i]);
    ExecutorService pool = Executors.newFixedThreadPool(THREADS);
    try {
      for (int round = 0; round < ROUNDS; round++) round(pool, configs, file, round);
    } finally {
      pool.shutdownNow();
      assertTrue(pool.awaitTermination(DEADLINE_S, TimeUnit.SECONDS));
    }
  }

  private static void await(CountDownLatch latch, String what) throws InterruptedException {
    if (!latch.await(DEADLINE_S, TimeUnit.SECONDS)) fail("a thread made no calls " + what);
  }

  private void round(ExecutorService pool, BreakerConfig[] configs, Path file, int n)
      throws Exception {
    RegistryOptions.Builder options = RegistryOptions.builder().capacity(64);
    if (file != null) {
      Files.deleteIfExists(file); // a fresh file: each round's names would fill it
      options.path(file).create(true);
    }
    Registry registry = Registry.open(options.build());
    // Each policy twice: created (owned: destroyed by close()) and from
    // getOrCreate (shared: close() lets go of it).
    CircuitBreaker[] breakers = new CircuitBreaker[2 * POLICIES.length];
    for (int i = 0; i < POLICIES.length; i++) {
      String name = "b" + n + "." + POLICIES[i];
      breakers[2 * i] = registry.create(name + ".created", configs[i]);
      breakers[2 * i + 1] = registry.getOrCreate(name + ".shared", configs[i]);
    }
    Round round = new Round(breakers, (1 + n % 7) * 10);
    List<Future<?>> running = new ArrayList<>();
    for (int t = 0; t < THREADS; t++) running.add(pool.submit(new Worker(round, n * THREADS + t + 1)));
    try {
      // Closed while every thread is calling, at a point that moves from
      // round to round.
      await(round.calledBefore, "before the close");
      round.closing.set(true);
      registry.close();
      round.closed.set(true);
      await(round.calledAfter, "after the close");
    } finally {
      round.stop.set(true);
      for (Future<?> f : running) f.get(DEADLINE_S, TimeUnit.SECONDS);
    }
    assertTrue(round.wrong.isEmpty(), "round " + n + ": " + round.wrong);
    assertTrue(registry.isClosed());
    IllegalStateException e =
        assertThrows(IllegalStateException.class, () -> registry.create("late", configs[0]));
    assertEquals("the registry is closed", e.getMessage());
    for (CircuitBreaker b : breakers) {
      assertTrue(isClosedError(assertThrows(IllegalStateException.class, b::tryAcquire)));
      assertTrue(isClosedError(assertThrows(IllegalStateException.class, b::stats)));
      assertDoesNotThrow(b::close, "closing a breaker of a closed registry");
    }
  }
}
