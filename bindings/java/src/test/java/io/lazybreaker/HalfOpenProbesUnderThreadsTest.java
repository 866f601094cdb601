package io.lazybreaker;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Exactly permittedNumberOfCallsInHalfOpenState probes are admitted when 16
 * threads arrive at once after the open duration, round after round.
 */
class HalfOpenProbesUnderThreadsTest {
  static final int THREADS = 16;
  static final int ROUNDS = 300;
  static final int PROBES = 3;

  @Test
  void exactly_the_permitted_probes_are_admitted_among_16_threads_in_each_of_300_rounds()
      throws Exception {
    try (Registry reg = Registry.withManualClock()) {
      CircuitBreaker b =
          reg.create(
              "herd",
              BreakerConfig.builder()
                  .failureThreshold(1)
                  .permittedNumberOfCallsInHalfOpenState(PROBES)
                  .waitDurationInOpenState(Duration.ofSeconds(1))
                  .build());
      b.tryAcquire().failure(); // OPEN
      ExecutorService pool = Executors.newFixedThreadPool(THREADS);
      try {
        for (int round = 0; round < ROUNDS; round++) {
          reg.advance(Duration.ofSeconds(1));
          CyclicBarrier start = new CyclicBarrier(THREADS);
          List<Future<Permit>> calls = new ArrayList<>();
          for (int t = 0; t < THREADS; t++) {
            calls.add(
                pool.submit(
                    () -> {
                      start.await();
                      return b.tryAcquire();
                    }));
          }
          List<Permit> admitted = new ArrayList<>();
          for (Future<Permit> f : calls) {
            Permit p = f.get(60, TimeUnit.SECONDS);
            if (p != null) admitted.add(p);
          }
          assertEquals(PROBES, admitted.size(), "round " + round);
          assertEquals(CircuitBreaker.State.HALF_OPEN, b.state());
          // Every probe fails: OPEN again, for the next round's herd.
          for (Permit p : admitted) p.failure();
          assertEquals(CircuitBreaker.State.OPEN, b.state(), "round " + round);
        }
      } finally {
        pool.shutdownNow();
      }
      CircuitBreaker.Stats s = b.stats();
      assertEquals(1 + (long) ROUNDS * PROBES, s.admitted);
      assertEquals((long) ROUNDS * (THREADS - PROBES), s.rejected);
    }
  }
}
