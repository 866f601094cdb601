package io.lazybreaker;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lazybreaker.BreakerConfig.Policy;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * {@link Registry#close()} at a random moment 0-400 µs after 8 new threads start calling its 16
 * breakers: every call in flight returns as it would have before the close or throws the closed
 * {@link IllegalStateException}, every call begun after close() returned throws it, and the JVM
 * survives, for private and shared registries (a file made anew each round, in /dev/shm and in
 * /tmp) and every trip policy. tests/capi/test_close_race.cpp through the binding.
 *
 * <p>The threads are new each round, so that some take their counter stripe (their first call,
 * QuietPath.cells()) while the close runs: on a library that closes a shared registry without
 * waiting for stripes being taken (before 139fdff) the JVM dies of SIGSEGV (a quiet call counting
 * in its stripe's cells, QuietPath.Cells.count). So they wait at a gate that the main thread
 * opens just before its random wait, and their first calls come together around the close, not
 * spread over the milliseconds it takes to start 8 threads while the first ones already call.
 * Once through it they never yield or sleep: the race is inside calls, and a thread the scheduler
 * preempts there is what it needs. LB_CLOSE_RACE_ROUNDS sets the rounds per policy and registry
 * kind (20).
 */
class CloseRaceTest {
  private static final int THREADS = 8;
  private static final int BREAKERS = 16;
  private static final int DEFAULT_ROUNDS = 20;
  // Calls each thread must make after the close, and how long the round
  // waits for them (a thread the scheduler has not run yet gets its turn).
  private static final int CALLS_AFTER = 4;
  private static final long GIVE_UP_NS = TimeUnit.SECONDS.toNanos(10);
  private static final long JOIN_MS = TimeUnit.SECONDS.toMillis(60);

  @Test
  void closing_a_private_registry_at_any_moment_under_new_threads_calls_crashes_nothing()
      throws Exception {
    for (Policy policy : Policy.values()) race(policy, null);
  }

  @Test
  void closing_a_shared_registry_in_dev_shm_at_any_moment_under_new_threads_calls_crashes_nothing()
      throws Exception {
    for (Policy policy : Policy.values()) race(policy, Path.of("/dev/shm"));
  }

  @Test
  void closing_a_shared_registry_in_tmp_at_any_moment_under_new_threads_calls_crashes_nothing()
      throws Exception {
    for (Policy policy : Policy.values()) race(policy, Path.of("/tmp"));
  }

  private static int rounds() {
    String env = System.getenv("LB_CLOSE_RACE_ROUNDS");
    try {
      int n = env == null ? 0 : Integer.parseInt(env.trim());
      return n > 0 ? n : DEFAULT_ROUNDS;
    } catch (NumberFormatException e) {
      return DEFAULT_ROUNDS;
    }
  }

  private static void spinFor(long nanos) {
    long until = System.nanoTime() + nanos;
    while (System.nanoTime() - until < 0) Thread.onSpinWait();
  }

  /** What a round's threads share. */
  private static final class Round {
    final CircuitBreaker[] breakers;
    volatile boolean closing; // set just before close()
    volatile boolean closed; // set once close() returned
    volatile boolean stop;
    final CountDownLatch gate = new CountDownLatch(1); // opened when the threads are to call
    final ConcurrentLinkedQueue<String> wrong = new ConcurrentLinkedQueue<>();

    Round(CircuitBreaker[] breakers) {
      this.breakers = breakers;
    }

    void note(String s) {
      if (wrong.size() < 10) wrong.add(s);
    }
  }

  /** An admitted call not yet reported, and its breaker (named if the verdict goes wrong). */
  private record Held(CircuitBreaker breaker, Permit permit) {}

  private static final class Worker extends Thread {
    final Round round;
    final SplittableRandom random;
    // Read by the main thread while this one runs; the counts of wrong
    // results only once it has been joined.
    final AtomicLong callsAfter = new AtomicLong(); // begun once close() had returned
    int bad; // a result no call may give
    int afterBad; // a call begun after the close that did not throw the closed error

    Worker(Round round, long seed, String name) {
      super(name);
      // One left at the gate (a round that failed before opening it) must
      // not keep the JVM up.
      setDaemon(true);
      this.round = round;
      this.random = new SplittableRandom(seed);
    }

    @Override
    public void run() {
      try {
        round.gate.await();
      } catch (InterruptedException e) {
        return;
      }
      ArrayDeque<Held> held = new ArrayDeque<>();
      CircuitBreaker[] breakers = round.breakers;
      for (long n = 0; !round.stop; n++) {
        // Read before the call: a call that starts once `closed` is seen
        // began after close() returned.
        boolean after = round.closed;
        int r = random.nextInt();
        CircuitBreaker b = breakers[(r >>> 16) % BREAKERS];
        String what;
        try {
          if (n % 64 == 63) {
            what = "stats";
            b.stats();
          } else {
            switch (Integer.remainderUnsigned(r, 5)) {
              case 0:
              case 1:
                what = "tryAcquire";
                Permit p = b.tryAcquire();
                if (p != null) held.push(new Held(b, p));
                break;
              case 2:
              case 3:
                if (held.isEmpty()) {
                  what = "state";
                  b.state();
                  break;
                }
                Held h = held.pop();
                b = h.breaker();
                if (((r >>> 8) & 0xff) % 3 == 0) {
                  what = "failure";
                  h.permit().failure();
                } else {
                  what = "success";
                  h.permit().success();
                }
                break;
              default:
                what = "tryAcquire and ignore";
                Permit q = b.tryAcquire();
                if (q != null) q.ignore();
            }
          }
          if (after) {
            afterBad++;
            round.note(b.name() + ": a " + what + " begun after close() returned did not throw");
          }
        } catch (Throwable t) {
          if (!CloseUnderCallsTest.isClosedError(t)) {
            bad++;
            round.note(b.name() + ": a call threw " + t);
          } else if (!round.closing) {
            // It returned before the close began: the close is not why.
            bad++;
            round.note(b.name() + ": closed before the registry's close began: " + t);
          }
        }
        if (after) callsAfter.lazySet(callsAfter.get() + 1);
      }
    }
  }

  /** {@code dir}: where a shared registry's file goes (null: a private registry). */
  private static void race(Policy policy, Path dir) throws Exception {
    Path file =
        dir == null
            ? null
            : dir.resolve(
                "lb-close-race-java-" + ProcessHandle.current().pid() + "-" + policy + ".lbr");
    String kind = dir == null ? "private" : "shared in " + dir;
    BreakerConfig config = CloseUnderCallsTest.config(policy);
    SplittableRandom random = new SplittableRandom(policy.ordinal() * 7919L + kind.hashCode());
    int n = rounds();
    try {
      for (int round = 0; round < n; round++) {
        String where = policy + ", " + kind + ", round " + round;
        RegistryOptions.Builder options =
            RegistryOptions.builder().capacity(round % 2 == 0 ? 64 : 1024);
        if (file != null) {
          Files.deleteIfExists(file);
          options.path(file).create(true);
        }
        Registry registry = Registry.open(options.build());
        CircuitBreaker[] breakers = new CircuitBreaker[BREAKERS];
        for (int i = 0; i < BREAKERS; i++) {
          breakers[i] = registry.getOrCreate("b" + round + "." + i, config);
        }
        Round r = new Round(breakers);
        List<Worker> workers = new ArrayList<>();
        for (int t = 0; t < THREADS; t++) {
          Worker w = new Worker(r, random.nextLong(), "close-race-" + round + "-" + t);
          workers.add(w);
          w.start();
        }
        // The close comes soon after the gate opens, at a moment that moves
        // from round to round: some threads have made many calls, some none
        // yet.
        r.gate.countDown();
        spinFor(TimeUnit.MICROSECONDS.toNanos(random.nextInt(400)));
        r.closing = true;
        registry.close();
        r.closed = true;
        spinFor(TimeUnit.MICROSECONDS.toNanos(300));
        long giveUp = System.nanoTime() + GIVE_UP_NS;
        for (Worker w : workers) {
          while (w.callsAfter.get() < CALLS_AFTER && System.nanoTime() - giveUp < 0) {
            Thread.yield();
          }
        }
        r.stop = true;
        for (Worker w : workers) {
          w.join(JOIN_MS);
          assertFalse(w.isAlive(), where + ": " + w.getName() + " did not stop");
        }
        for (Worker w : workers) {
          String of = where + ", " + w.getName() + ": ";
          assertTrue(
              w.callsAfter.get() >= CALLS_AFTER,
              of + w.callsAfter.get() + " calls after the close");
          assertTrue(w.bad == 0, of + w.bad + " wrong results: " + r.wrong);
          assertTrue(
              w.afterBad == 0, of + w.afterBad + " calls after the close returned: " + r.wrong);
        }
        assertTrue(registry.isClosed(), where);
      }
    } finally {
      if (file != null) Files.deleteIfExists(file);
    }
  }
}
