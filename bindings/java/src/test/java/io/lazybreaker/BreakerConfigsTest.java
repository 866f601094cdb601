package io.lazybreaker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.StringReader;
import java.time.Duration;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;

/** BreakerConfigs.fromProperties: resilience4j's property layout. */
class BreakerConfigsTest {
  static final String P = "resilience4j.circuitbreaker";

  static Properties props(String text) {
    Properties p = new Properties();
    try {
      p.load(new StringReader(text));
    } catch (IOException e) {
      throw new AssertionError(e);
    }
    return p;
  }

  static BreakerConfigs read(String text) {
    return BreakerConfigs.fromProperties(props(text), P);
  }

  static String refusal(String text) {
    return assertThrows(IllegalArgumentException.class, () -> read(text)).getMessage();
  }

  @Test
  void defaults_named_configs_and_instances() {
    BreakerConfigs c = read(String.join("\n",
        "resilience4j.circuitbreaker.configs.default.failureRateThreshold=25",
        "resilience4j.circuitbreaker.configs.default.minimumNumberOfCalls=10",
        "resilience4j.circuitbreaker.configs.slow.waitDurationInOpenState=PT1M",
        "resilience4j.circuitbreaker.configs.slow.failureRateThreshold=40",
        "resilience4j.circuitbreaker.instances.payments.baseConfig=slow",
        "resilience4j.circuitbreaker.instances.payments.slidingWindowSize=20",
        "resilience4j.circuitbreaker.instances.search.wait-duration-in-open-state=5s",
        "other.key=ignored, outside the prefix"));
    assertEquals(Set.of("payments", "search"), c.names());
    BreakerConfig pay = c.config("payments");
    assertEquals(40f, pay.failureRateThreshold(), "the base config's, over default's");
    assertEquals(Duration.ofMinutes(1), pay.waitDurationInOpenState());
    assertEquals(20, pay.windowSize());
    assertEquals(10, pay.minimumNumberOfCalls(), "configs.slow starts from configs.default");
    BreakerConfig search = c.config("search");
    assertEquals(25f, search.failureRateThreshold(), "from configs.default");
    assertEquals(10, search.minimumNumberOfCalls());
    assertEquals(Duration.ofSeconds(5), search.waitDurationInOpenState());
    assertEquals(25f, c.config("unlisted").failureRateThreshold(), "configs.default for any other name");
  }

  @Test
  void durations_in_every_form() {
    String k = "resilience4j.circuitbreaker.instances.a.waitDurationInOpenState=";
    assertEquals(Duration.ofSeconds(5), read(k + "5s").config("a").waitDurationInOpenState());
    assertEquals(Duration.ofMillis(500), read(k + "500ms").config("a").waitDurationInOpenState());
    assertEquals(Duration.ofSeconds(5), read(k + "PT5S").config("a").waitDurationInOpenState());
    assertEquals(Duration.ofMillis(1500), read(k + "1500").config("a").waitDurationInOpenState(), "a bare number is milliseconds");
    assertEquals(Duration.ofMinutes(2), read(k + "2m").config("a").waitDurationInOpenState());
    assertTrue(refusal(k + "five seconds").startsWith(
        "resilience4j.circuitbreaker.instances.a.waitDurationInOpenState must be a duration"));
  }

  @Test
  void exception_class_names_comma_separated_or_indexed() {
    BreakerConfigs c = read(String.join("\n",
        "resilience4j.circuitbreaker.instances.a.recordExceptions=java.io.IOException, java.util.concurrent.TimeoutException",
        "resilience4j.circuitbreaker.instances.a.ignoreExceptions[0]=java.lang.IllegalArgumentException",
        "resilience4j.circuitbreaker.instances.a.ignoreExceptions[1]=java.lang.IllegalStateException"));
    try (Registry r = Registry.withManualClock()) {
      CircuitBreaker b = r.create("a", c.config("a"));
      assertThrows(IOException.class, () -> b.executeCallable(() -> { throw new IOException(); }));
      assertThrows(TimeoutException.class, () -> b.executeCallable(() -> { throw new TimeoutException(); }));
      assertThrows(IllegalStateException.class, () -> b.executeSupplier(() -> { throw new IllegalStateException(); }));
      assertThrows(ArithmeticException.class, () -> b.executeSupplier(() -> { throw new ArithmeticException(); }));
      assertEquals(2, b.stats().failures);
      assertEquals(1, b.stats().ignored);
      assertEquals(1, b.stats().successes, "an exception not recorded counts as a success");
    }
    assertTrue(refusal("resilience4j.circuitbreaker.instances.a.recordExceptions=com.example.Nope")
        .contains("no class named com.example.Nope"));
    assertTrue(refusal("resilience4j.circuitbreaker.instances.a.recordExceptions=java.lang.String")
        .contains("java.lang.String is not a Throwable"));
    assertTrue(refusal("resilience4j.circuitbreaker.instances.a.recordExceptions[1]=java.io.IOException")
        .contains("recordExceptions[0] is missing"));
  }

  @Test
  void kebab_and_camel_case_and_window_types() {
    BreakerConfigs c = read(String.join("\n",
        "resilience4j.circuitbreaker.instances.a.sliding-window-type=time_based",
        "resilience4j.circuitbreaker.instances.a.slidingWindowSize=30",
        "resilience4j.circuitbreaker.instances.a.permitted-number-of-calls-in-half-open-state=3",
        "resilience4j.circuitbreaker.instances.a.writable-stack-trace-enabled=true"));
    BreakerConfig a = c.config("a");
    assertEquals(BreakerConfig.Policy.TIME_WINDOW, a.policy());
    assertEquals(Duration.ofSeconds(30), a.windowDuration());
    assertEquals(3, a.permittedNumberOfCallsInHalfOpenState());
  }

  @Test
  void unknown_and_ignored_keys_are_errors_naming_them() {
    assertEquals("resilience4j.circuitbreaker.instances.a.failureRateTreshold: unknown option 'failureRateTreshold'",
        refusal("resilience4j.circuitbreaker.instances.a.failureRateTreshold=50"));
    assertTrue(refusal("resilience4j.circuitbreaker.instances.a.automatic-transition-from-open-to-half-open-enabled=true")
        .startsWith("resilience4j.circuitbreaker.instances.a.automatic-transition-from-open-to-half-open-enabled is not applied"));
    assertTrue(refusal("resilience4j.circuitbreaker.configs.default.exponentialBackoffMultiplier=2")
        .contains("use openBackoffMultiplier"));
    assertTrue(refusal("resilience4j.circuitbreaker.backends.a.failureRateThreshold=50")
        .startsWith("resilience4j.circuitbreaker.backends.a.failureRateThreshold: not a breaker property"));
  }

  @Test
  void bad_values_and_base_configs_are_errors_naming_the_property() {
    assertEquals("resilience4j.circuitbreaker.instances.a.minimumNumberOfCalls must be a whole number, got 'ten'",
        refusal("resilience4j.circuitbreaker.instances.a.minimumNumberOfCalls=ten"));
    assertTrue(refusal("resilience4j.circuitbreaker.instances.a.failureRateThreshold=150")
        .startsWith("resilience4j.circuitbreaker.instances.a.failureRateThreshold: failureRateThreshold must be above 0"));
    assertTrue(refusal("resilience4j.circuitbreaker.instances.a.baseConfig=missing")
        .contains("no configuration named 'missing'"));
    assertTrue(refusal("resilience4j.circuitbreaker.configs.x.baseConfig=y\n"
        + "resilience4j.circuitbreaker.configs.y.baseConfig=x").contains("makes a cycle"));
    assertTrue(refusal("resilience4j.circuitbreaker.configs.unused.slidingWindowType=ROUND")
        .contains("must be COUNT_BASED or TIME_BASED"), "an unused config is checked too");
    assertThrows(NullPointerException.class, () -> BreakerConfigs.fromProperties(null, P));
  }

  @Test
  void the_instances_are_made_in_a_registry() {
    BreakerConfigs c = read("resilience4j.circuitbreaker.instances.a.failureThreshold=2\n"
        + "resilience4j.circuitbreaker.instances.b.failureThreshold=3");
    try (Registry r = Registry.withManualClock()) {
      Map<String, CircuitBreaker> made = c.getOrCreateAll(r);
      assertEquals(Set.of("a", "b"), made.keySet());
      assertEquals(3, made.get("b").config().failureThreshold());
      assertEquals(made.get("a").name(), c.getOrCreate(r, "a").name());
    }
  }
}
