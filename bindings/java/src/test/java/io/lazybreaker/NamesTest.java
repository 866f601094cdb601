package io.lazybreaker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** Names are UTF-8 in the library; any Unicode name (outside the BMP too) survives the trip. */
class NamesTest {
  static final String NAME = "paiement-\u00e9t\u00e9-\ud83d\udcb3-\u6c7a\u6e08";

  @Test
  void a_name_outside_the_basic_plane_round_trips_through_lookup_events_and_prometheus() {
    try (Registry reg = Registry.withManualClock()) {
      CircuitBreaker b = reg.create(NAME);
      assertSame(b, reg.lookup(NAME).orElseThrow());
      b.forceOpen();
      List<StateTransition> e = reg.pollEvents(1);
      assertEquals(NAME, e.get(0).breakerName());
      assertTrue(reg.prometheus().contains("breaker=\"" + NAME + "\""));
    }
  }

  @Test
  void the_255_byte_limit_is_in_utf8_bytes_not_chars() {
    try (Registry reg = Registry.withManualClock()) {
      String card = "\ud83d\udcb3"; // 4 bytes of UTF-8, 2 Java chars
      String fits = card.repeat(63) + "abc"; // 255 bytes
      assertEquals(255, fits.getBytes(StandardCharsets.UTF_8).length);
      reg.create(fits);
      BadInputTest.class.getName();
      try {
        reg.create(card.repeat(64)); // 256 bytes
        throw new AssertionError("256 bytes were accepted");
      } catch (IllegalArgumentException expected) {
        assertTrue(expected.getMessage().contains("name"), expected.getMessage());
      }
    }
  }

  @Test
  void a_lookup_racing_the_create_gets_the_created_object_never_a_second_one()
      throws Exception {
    int n = 2000;
    try (Registry reg = Registry.withManualClock()) {
      CircuitBreaker[] created = new CircuitBreaker[n];
      CircuitBreaker[] found = new CircuitBreaker[n];
      Thread looker =
          new Thread(
              () -> {
                for (int i = 0; i < n; i++) {
                  Optional<CircuitBreaker> b;
                  while ((b = reg.lookup("n" + i)).isEmpty()) Thread.onSpinWait();
                  found[i] = b.get();
                }
              });
      looker.start();
      for (int i = 0; i < n; i++) created[i] = reg.create("n" + i);
      looker.join();
      for (int i = 0; i < n; i++) assertSame(created[i], found[i], "n" + i);
    }
  }

  @Test
  void lookup_returns_the_created_object_and_breakers_lists_them() {
    try (Registry reg = Registry.withManualClock()) {
      CircuitBreaker a = reg.create("a");
      CircuitBreaker b = reg.create("b");
      assertTrue(reg.lookup("c").isEmpty());
      List<CircuitBreaker> all = reg.breakers();
      assertEquals(2, all.size());
      assertTrue(all.contains(a) && all.contains(b));
    }
  }
}
