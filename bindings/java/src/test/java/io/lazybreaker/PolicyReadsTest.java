package io.lazybreaker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.lazybreaker.BreakerConfig.Policy;
import java.time.Duration;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.Map;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;

/**
 * Which fields a policy reads comes from the library (cb_policy_reads), not from the binding:
 * the answers the builder uses are the library's, and the builder refuses and infers exactly as
 * they say, for every option and every policy.
 */
class PolicyReadsTest {
  /** Each cb_config field but the policy, set alone to a value the library accepts. */
  private static final Map<ConfigField, UnaryOperator<BreakerConfig.Builder>> SET_ALONE =
      new EnumMap<>(ConfigField.class);

  static {
    SET_ALONE.put(ConfigField.FAILURE_THRESHOLD, b -> b.failureThreshold(3));
    SET_ALONE.put(ConfigField.OPEN_DURATION, b -> b.waitDurationInOpenState(Duration.ofSeconds(5)));
    SET_ALONE.put(ConfigField.HALF_OPEN_MAX_CALLS, b -> b.permittedNumberOfCallsInHalfOpenState(2));
    SET_ALONE.put(ConfigField.HALF_OPEN_SUCCESSES, b -> b.halfOpenSuccessThreshold(1));
    SET_ALONE.put(ConfigField.HALF_OPEN_TIMEOUT,
        b -> b.maxWaitDurationInHalfOpenState(Duration.ofSeconds(1)));
    SET_ALONE.put(ConfigField.WINDOW_SIZE, b -> b.windowSize(10));
    SET_ALONE.put(ConfigField.WINDOW_DURATION, b -> b.windowDuration(Duration.ofSeconds(10)));
    SET_ALONE.put(ConfigField.WINDOW_BUCKETS, b -> b.windowBuckets(5));
    SET_ALONE.put(ConfigField.MINIMUM_CALLS, b -> b.minimumNumberOfCalls(5));
    SET_ALONE.put(ConfigField.FAILURE_RATE, b -> b.failureRateThreshold(50));
    SET_ALONE.put(ConfigField.SLOW_CALL, b -> b.slowCallDurationThreshold(Duration.ofSeconds(1)));
    SET_ALONE.put(ConfigField.SLOW_CALL_RATE, b -> b.slowCallRateThreshold(50));
    SET_ALONE.put(ConfigField.BACKOFF, b -> b.openBackoffMultiplier(2));
    SET_ALONE.put(
        ConfigField.OPEN_DURATION_MAX, b -> b.maxWaitDurationInOpenState(Duration.ofMinutes(1)));
    SET_ALONE.put(ConfigField.JITTER, b -> b.openJitter(0.1));
  }

  @Test
  void every_answer_the_builder_uses_is_the_one_the_library_gives() {
    for (Policy p : Policy.values()) {
      for (ConfigField f : ConfigField.values()) {
        int library = LbNative.cb_policy_reads(p.code, f.field);
        assertTrue(
            library == LbNativeConstants.CB_FIELD_READ
                || library == LbNativeConstants.CB_FIELD_IGNORED
                || library == LbNativeConstants.CB_FIELD_READ_WITH_SLOW_CALLS,
            p + ", " + f.field + ": " + library);
        assertEquals(library, PolicyReads.of(p, f), p + ", " + f.field);
      }
    }
  }

  @Test
  void an_unknown_field_or_policy_is_refused_by_the_library_naming_it() {
    RefusedArgument field =
        assertThrows(RefusedArgument.class, () -> LbNative.cb_policy_reads(0, "window_sizes"));
    assertEquals("field", field.field());
    RefusedArgument policy =
        assertThrows(RefusedArgument.class, () -> LbNative.cb_policy_reads(3, "window_size"));
    assertEquals("policy", policy.field());
  }

  @Test
  void an_option_set_alone_infers_the_first_policy_the_library_says_reads_its_field() {
    assertEquals(EnumSet.complementOf(EnumSet.of(ConfigField.POLICY)), SET_ALONE.keySet(),
        "every field a builder option sets");
    for (Map.Entry<ConfigField, UnaryOperator<BreakerConfig.Builder>> e : SET_ALONE.entrySet()) {
      Policy first = null;
      for (Policy p : Policy.values()) {
        if (LbNative.cb_policy_reads(p.code, e.getKey().field) == LbNativeConstants.CB_FIELD_READ) {
          first = p;
          break;
        }
      }
      assertEquals(first, e.getValue().apply(BreakerConfig.builder()).build().policy(),
          e.getKey().option);
    }
  }

  @Test
  void a_chosen_policy_refuses_exactly_the_options_the_library_says_it_does_not_read() {
    for (Policy p : Policy.values()) {
      for (Map.Entry<ConfigField, UnaryOperator<BreakerConfig.Builder>> e :
          SET_ALONE.entrySet()) {
        // slow_call_ns stays 0 unless it is the field set: READ_WITH_SLOW_CALLS is not read.
        boolean read =
            LbNative.cb_policy_reads(p.code, e.getKey().field) == LbNativeConstants.CB_FIELD_READ;
        String what = e.getKey().option + " under " + p;
        try {
          e.getValue().apply(BreakerConfig.builder().policy(p)).build();
          if (!read) fail(what + ": built, but the library says it is not read");
        } catch (IllegalArgumentException refused) {
          if (read) throw new AssertionError(what + ": refused, but the library reads it", refused);
          String expected = e.getKey().option + " does nothing under policy(" + p + ")";
          assertTrue(refused.getMessage().startsWith(expected), refused.getMessage());
        }
      }
    }
  }
}
