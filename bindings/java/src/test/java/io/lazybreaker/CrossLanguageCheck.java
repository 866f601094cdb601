package io.lazybreaker;

import java.nio.file.Path;
import java.time.Duration;

/**
 * The Java half of tests/cross_language, run as its own JVM by CTest
 * (cross_language.java_sees_the_c_trip): the registry file a C program made and tripped
 * "payments" in is opened here, "payments" is OPEN and rejects, and "tripped-by-java" is tripped
 * for the C program to see. The configuration equals the C program's field for field, or
 * getOrCreate would refuse it.
 */
final class CrossLanguageCheck {
  private CrossLanguageCheck() {}

  public static void main(String[] args) {
    String file = System.getenv("LB_CROSS_LANGUAGE_FILE");
    String language = System.getenv("LB_CROSS_LANGUAGE");
    if (file == null || language == null) {
      throw new IllegalStateException("run by tests/cross_language/check.sh");
    }
    BreakerConfig config =
        BreakerConfig.builder()
            .failureThreshold(1)
            .waitDurationInOpenState(Duration.ofSeconds(300))
            .build();
    try (Registry shared =
        Registry.open(RegistryOptions.builder().path(Path.of(file)).manualClock(true).build())) {
      CircuitBreaker payments = shared.getOrCreate("payments", config);
      check(payments.state() == CircuitBreaker.State.OPEN, "payments: " + payments.state());
      check(payments.tryAcquire() == null, "payments admitted a call");
      try {
        payments.executeSupplier(() -> "never");
        check(false, "executeSupplier ran on an open breaker");
      } catch (CallNotPermittedException expected) {
        System.out.println("java: payments rejects: " + expected.getMessage());
      }
      String name = "tripped-by-" + language;
      CircuitBreaker mine = shared.getOrCreate(name, config);
      mine.tryAcquire().failure();
      check(mine.state() == CircuitBreaker.State.OPEN, name + ": " + mine.state());
    }
  }

  private static void check(boolean holds, String what) {
    if (!holds) throw new AssertionError(what);
  }
}
