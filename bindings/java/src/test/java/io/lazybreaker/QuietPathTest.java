package io.lazybreaker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lazybreaker.BreakerConfig.Policy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The published quiet path (QuietPath): the library's counters stay exact through folds, under
 * several threads, for rejections, and a stale handle goes to the library. CTest runs this class
 * twice: as is (the quiet path on) and with -Dlazybreaker.fastpath=false (every call crosses), and
 * every count must come out the same.
 */
class QuietPathTest {
  /** More calls than one 16-bit counter holds before a fold (fold_at 0x8000), twice over. */
  private static final int THROUGH_FOLDS = 0x8000 * 2 + 123;

  private static final boolean ON =
      !"false".equalsIgnoreCase(System.getProperty("lazybreaker.fastpath", "true"));
  private static final boolean NANOTIME_OPEN =
      Boolean.getBoolean("lazybreaker.fastpath.nanoTimeOpen");

  private final Registry reg = Registry.open(RegistryOptions.defaults());

  @AfterEach
  void close() {
    reg.close();
  }

  @Test
  void the_quiet_path_is_on_unless_switched_off_and_a_healthy_call_takes_it() {
    assertEquals(ON, QuietPath.ENABLED, "layout 1 is this library's; on unless switched off");
    boolean linux = System.getProperty("os.name").toLowerCase().startsWith("linux");
    assertEquals(ON && linux && NANOTIME_OPEN, QuietPath.OPEN_SHORTCUT);
    CircuitBreaker b = reg.create("taken");
    long ticket = QuietPath.tryAllow(b.handle, QuietPath.cells());
    if (!ON) {
      assertEquals(QuietPath.CROSS, ticket);
      return;
    }
    assertNotEquals(QuietPath.CROSS, ticket);
    assertFalse(QuietPath.isRejection(ticket));
    assertTrue(QuietPath.trySucceed(b.handle, ticket, QuietPath.cells()));
    CircuitBreaker.Stats s = b.stats();
    assertEquals(1, s.admitted);
    assertEquals(1, s.successes);
  }

  @Test
  void consecutive_policy_counts_are_exact_through_folds() {
    CircuitBreaker b = reg.create("folds");
    for (int i = 0; i < THROUGH_FOLDS; i++) b.tryAcquire().success();
    for (int i = 0; i < THROUGH_FOLDS; i++) assertEquals(1, b.executeSupplier(() -> 1));
    CircuitBreaker.Stats s = b.stats();
    assertEquals(2L * THROUGH_FOLDS, s.admitted);
    assertEquals(2L * THROUGH_FOLDS, s.successes);
    assertEquals(0, s.failures);
    assertEquals(0, s.rejected);
  }

  @Test
  void count_window_counts_are_exact_through_folds_and_its_failures_still_trip() {
    CircuitBreaker b =
        reg.create(
            "window",
            BreakerConfig.builder()
                .policy(Policy.COUNT_WINDOW)
                .windowSize(10)
                .minimumNumberOfCalls(10)
                .failureRateThreshold(50)
                .waitDurationInOpenState(Duration.ofDays(1))
                .build());
    for (int i = 0; i < THROUGH_FOLDS; i++) b.tryAcquire().success();
    CircuitBreaker.Stats s = b.stats();
    assertEquals(THROUGH_FOLDS, s.admitted);
    assertEquals(THROUGH_FOLDS, s.successes);
    for (int i = 0; i < 5; i++) b.tryAcquire().failure();
    assertEquals(CircuitBreaker.State.OPEN, b.state(), "5 failures of 10: 50 %");
    assertEquals(1, b.stats().trips);
  }

  @Test
  void a_failure_run_is_admitted_and_its_outcomes_reach_the_library() {
    CircuitBreaker b =
        reg.create(
            "run",
            BreakerConfig.builder()
                .failureThreshold(3)
                .waitDurationInOpenState(Duration.ofDays(1))
                .build());
    b.tryAcquire().failure();
    b.tryAcquire().success(); // ends the run
    b.tryAcquire().failure();
    b.tryAcquire().failure();
    assertEquals(CircuitBreaker.State.CLOSED, b.state());
    assertEquals(2, b.stats().consecutiveFailures);
    b.tryAcquire().failure();
    assertEquals(CircuitBreaker.State.OPEN, b.state());
    CircuitBreaker.Stats s = b.stats();
    assertEquals(5, s.admitted);
    assertEquals(1, s.successes);
    assertEquals(4, s.failures);
    assertEquals(1, s.trips);
  }

  @Test
  void several_threads_on_one_breaker_count_exactly() throws Exception {
    CircuitBreaker b = reg.create("threads");
    int threads = 4;
    int each = 0x8000 * 2 + 777; // through the folds of each thread's own stripe
    CyclicBarrier start = new CyclicBarrier(threads);
    List<Thread> workers = new ArrayList<>();
    Throwable[] failed = new Throwable[1];
    for (int t = 0; t < threads; t++) {
      Thread w =
          new Thread(
              () -> {
                try {
                  start.await();
                  for (int i = 0; i < each; i++) {
                    Permit p = b.tryAcquire();
                    if ((i & 1) == 0) p.success();
                    else b.executeRunnable(() -> {});
                    if ((i & 1) == 1) p.success();
                  }
                } catch (Throwable e) {
                  synchronized (failed) {
                    failed[0] = e;
                  }
                }
              });
      workers.add(w);
      w.start();
    }
    for (Thread w : workers) w.join();
    if (failed[0] != null) throw new AssertionError(failed[0]);
    // Each thread: `each` permits, and each / 2 executeRunnable calls (the odd i).
    long calls = (long) threads * (each + each / 2);
    CircuitBreaker.Stats s = b.stats();
    assertEquals(calls, s.admitted);
    assertEquals(calls, s.successes);
    assertEquals(0, s.rejected);
  }

  @Test
  void permits_reported_on_other_threads_count_exactly() throws Exception {
    CircuitBreaker b = reg.create("handed-over");
    int n = 0x8000 + 99;
    List<Permit> permits = new ArrayList<>();
    for (int i = 0; i < n; i++) permits.add(b.tryAcquire());
    Thread other = new Thread(() -> permits.forEach(Permit::success));
    other.start();
    other.join();
    CircuitBreaker.Stats s = b.stats();
    assertEquals(n, s.admitted);
    assertEquals(n, s.successes);
  }

  @Test
  void open_rejections_are_counted_exactly_and_report_open() {
    CircuitBreaker b = reg.create("open");
    b.trip(Duration.ofDays(1));
    for (int i = 0; i < THROUGH_FOLDS; i++) assertNull(b.tryAcquire());
    CallNotPermittedException e =
        assertThrows(CallNotPermittedException.class, () -> b.executeSupplier(() -> 1));
    assertTrue(e.getMessage().contains("OPEN"), e.getMessage());
    assertTrue(e.retryAfter().compareTo(Duration.ofHours(23)) > 0, e.retryAfter().toString());
    if (QuietPath.OPEN_SHORTCUT) {
      assertEquals(QuietPath.REJECTED_OPEN, QuietPath.tryAllow(b.handle, QuietPath.cells()));
    } else {
      assertNull(b.tryAcquire()); // the same count, through the library
    }
    CircuitBreaker.Stats s = b.stats();
    assertEquals(THROUGH_FOLDS + 2L, s.rejected);
    assertEquals(0, s.admitted);
    assertEquals(CircuitBreaker.State.OPEN, b.state());
  }

  @Test
  void a_rejections_wait_is_asked_of_the_breaker_only_when_read() {
    CircuitBreaker b = reg.create("lazy-wait");
    b.trip(Duration.ofDays(1));
    CallNotPermittedException e =
        assertThrows(CallNotPermittedException.class, () -> b.executeSupplier(() -> 1));
    b.close(); // the breaker is gone before anyone asks how long to wait
    assertEquals(Duration.ZERO, e.retryAfter());
    assertTrue(e.getMessage().contains("is OPEN"), e.getMessage());
    assertEquals("lazy-wait", e.breakerName());
  }

  @Test
  void forced_open_rejections_are_counted_exactly_and_report_forced_open() {
    CircuitBreaker b = reg.create("forced");
    b.forceOpen();
    for (int i = 0; i < THROUGH_FOLDS; i++) assertNull(b.tryAcquire());
    CallNotPermittedException e =
        assertThrows(CallNotPermittedException.class, () -> b.executeRunnable(() -> {}));
    assertTrue(e.getMessage().contains("FORCED_OPEN"), e.getMessage());
    assertEquals(Durations.FOREVER, e.retryAfter());
    if (ON) {
      assertEquals(
          QuietPath.REJECTED_FORCED_OPEN, QuietPath.tryAllow(b.handle, QuietPath.cells()));
    } else {
      assertNull(b.tryAcquire());
    }
    assertEquals(THROUGH_FOLDS + 2L, b.stats().rejected);
    b.reset();
    b.tryAcquire().success();
    assertEquals(1, b.stats().successes);
  }

  @Test
  void an_elapsed_open_period_goes_to_the_library_which_probes() throws Exception {
    CircuitBreaker b = reg.create("elapsed");
    b.trip(Duration.ofMillis(2));
    Thread.sleep(20);
    Permit probe = b.tryAcquire();
    assertNotEquals(null, probe, "the open period is over: a probe");
    assertEquals(CircuitBreaker.State.HALF_OPEN, b.state());
    probe.success();
  }

  @Test
  void a_permit_reported_after_a_trip_goes_to_the_library() {
    CircuitBreaker b = reg.create("tripped-under");
    Permit p = b.tryAcquire();
    b.trip(Duration.ofDays(1));
    p.success(); // a ticket of the CLOSED period: not quiet any more, the library decides
    assertEquals(CircuitBreaker.State.OPEN, b.state());
    assertEquals(1, b.stats().admitted);
  }

  @Test
  void a_destroyed_breakers_handle_fails_the_life_test_and_is_refused_by_the_library() {
    CircuitBreaker b = reg.create("destroyed");
    long h = b.handle;
    Permit p = b.tryAcquire();
    b.close();
    assertEquals(QuietPath.CROSS, QuietPath.tryAllow(h, QuietPath.cells()));
    assertThrows(IllegalStateException.class, b::tryAcquire);
    assertThrows(IllegalStateException.class, () -> b.executeSupplier(() -> 1));
    assertFalse(QuietPath.trySucceed(h, p.ticket(), QuietPath.cells()));
    // A new breaker in the freed slot: the old handle still names nothing.
    CircuitBreaker again = reg.create("destroyed");
    assertEquals(QuietPath.CROSS, QuietPath.tryAllow(h, QuietPath.cells()));
    again.tryAcquire().success();
    assertEquals(1, again.stats().successes);
  }

  @Test
  void a_closed_registrys_handles_fail_the_life_test_and_nothing_faults() {
    Registry other = Registry.open(RegistryOptions.defaults());
    CircuitBreaker b = other.create("gone");
    CircuitBreaker open = other.create("gone-open");
    open.trip(Duration.ofDays(1));
    Permit p = b.tryAcquire();
    other.close();
    assertEquals(QuietPath.CROSS, QuietPath.tryAllow(b.handle, QuietPath.cells()));
    assertEquals(QuietPath.CROSS, QuietPath.tryAllow(open.handle, QuietPath.cells()));
    assertFalse(QuietPath.trySucceed(b.handle, p.ticket(), QuietPath.cells()));
    assertThrows(IllegalStateException.class, b::tryAcquire);
    assertThrows(IllegalStateException.class, open::tryAcquire);
    assertThrows(IllegalStateException.class, p::success);
  }

  @Test
  void a_manual_clock_registry_rejects_through_the_library_and_recovers_on_its_clock() {
    Registry manual = Registry.withManualClock();
    try {
      CircuitBreaker b = manual.create("manual");
      b.trip(Duration.ofSeconds(1));
      assertNull(b.tryAcquire());
      manual.advance(Duration.ofSeconds(2));
      Permit probe = b.tryAcquire();
      assertNotEquals(null, probe);
      probe.success();
      assertEquals(1, b.stats().rejected);
    } finally {
      manual.close();
    }
  }
}
