package io.lazybreaker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class EventsTest {
  @Test
  void transitions_arrive_in_order_with_reason_and_time() {
    try (Registry reg = Registry.withManualClock()) {
      CircuitBreaker b = reg.create("evented", BreakerConfig.builder().failureThreshold(1)
          .waitDurationInOpenState(Duration.ofSeconds(5)).build());
      b.tryAcquire().failure();
      reg.advance(Duration.ofSeconds(5));
      b.tryAcquire().failure();
      reg.advance(Duration.ofSeconds(5));
      b.tryAcquire().success();
      b.forceOpen();
      b.trip(Duration.ofSeconds(2));
      List<StateTransition> events = reg.pollEvents(100);
      CircuitBreaker.State C = CircuitBreaker.State.CLOSED, O = CircuitBreaker.State.OPEN,
          H = CircuitBreaker.State.HALF_OPEN, F = CircuitBreaker.State.FORCED_OPEN;
      Object[][] want = {
        {C, O, StateTransition.Reason.CONSECUTIVE_FAILURES, 0L},
        {O, H, StateTransition.Reason.OPEN_ELAPSED, 5L},
        {H, O, StateTransition.Reason.PROBE_FAILED, 5L},
        {O, H, StateTransition.Reason.OPEN_ELAPSED, 10L},
        {H, C, StateTransition.Reason.PROBES_SUCCEEDED, 10L},
        {C, F, StateTransition.Reason.MANUAL, 10L},
        {F, O, StateTransition.Reason.TRIPPED, 10L},
      };
      assertEquals(want.length, events.size(), events.toString());
      for (int i = 0; i < want.length; i++) {
        StateTransition e = events.get(i);
        assertEquals(want[i][0], e.from(), e.toString());
        assertEquals(want[i][1], e.to(), e.toString());
        assertEquals(want[i][2], e.reason(), e.toString());
        assertEquals(Duration.ofSeconds((Long) want[i][3]), e.at(), e.toString());
        assertEquals("evented", e.breakerName());
        if (i > 0) assertTrue(e.sequence() > events.get(i - 1).sequence());
      }
      assertTrue(reg.pollEvents(10).isEmpty(), "polling takes the events");
      assertEquals(0, reg.eventsDropped());
    }
  }

  @Test
  void poll_events_takes_at_most_max_in_batches_and_keeps_the_rest() {
    try (Registry reg = Registry.withManualClock()) {
      CircuitBreaker b = reg.create("many");
      for (int i = 0; i < 300; i++) {
        b.forceOpen();
        b.reset();
      }
      assertEquals(3, reg.pollEvents(3).size());
      List<StateTransition> rest = reg.pollEvents(1000);
      assertEquals(597, rest.size());
      for (int i = 1; i < rest.size(); i++) {
        assertEquals(rest.get(i - 1).sequence() + 1, rest.get(i).sequence());
      }
    }
  }

  @Test
  void rejections_are_events_only_when_asked_for() {
    try (Registry reg = Registry.withManualClock()) {
      CircuitBreaker b = reg.create("rejecting");
      b.forceOpen();
      reg.pollEvents(10);
      b.tryAcquire();
      assertTrue(reg.pollEvents(10).isEmpty());
      reg.recordRejections(true);
      b.tryAcquire();
      List<StateTransition> e = reg.pollEvents(10);
      assertEquals(1, e.size());
      assertEquals(StateTransition.Reason.REJECTED, e.get(0).reason());
      assertEquals(e.get(0).from(), e.get(0).to());
    }
  }

  @Test
  void a_full_queue_drops_the_oldest_and_counts_them() {
    try (Registry reg =
        Registry.open(RegistryOptions.builder().manualClock(true).eventCapacity(4).build())) {
      CircuitBreaker b = reg.create("overflow");
      for (int i = 0; i < 5; i++) {
        b.forceOpen();
        b.reset();
      }
      List<StateTransition> e = reg.pollEvents(100);
      assertEquals(4, e.size());
      assertEquals(6, reg.eventsDropped());
      assertEquals(CircuitBreaker.State.CLOSED, e.get(e.size() - 1).to());
    }
  }
}
