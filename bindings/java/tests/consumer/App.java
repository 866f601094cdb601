import io.lazybreaker.BreakerConfig;
import io.lazybreaker.CallNotPermittedException;
import io.lazybreaker.CircuitBreaker;
import io.lazybreaker.Lazybreaker;
import io.lazybreaker.Permit;
import io.lazybreaker.Registry;
import java.time.Duration;

/** A user of the jar alone: the lazy-recovery cycle, through the public API only. */
public class App {
  static void check(boolean ok, String what) {
    if (!ok) {
      System.err.println("consumer: FAIL: " + what);
      System.exit(1);
    }
  }

  public static void main(String[] args) {
    try (Registry reg = Registry.withManualClock()) {
      CircuitBreaker b =
          reg.create("consumer", BreakerConfig.builder().failureThreshold(2)
              .waitDurationInOpenState(Duration.ofSeconds(5)).build());
      for (int i = 0; i < 2; i++) {
        try (Permit p = b.tryAcquire()) {
          check(p != null, "admitted while CLOSED");
        }
      }
      check(b.state() == CircuitBreaker.State.OPEN, "OPEN after 2 failures");
      try {
        b.executeSupplier(() -> "never");
        check(false, "rejected while OPEN");
      } catch (CallNotPermittedException e) {
        check(e.retryAfter().equals(Duration.ofSeconds(5)), "retry after 5 s");
      }
      reg.advance(Duration.ofSeconds(5));
      check("ok".equals(b.executeSupplier(() -> "ok")), "the probe runs");
      check(b.state() == CircuitBreaker.State.CLOSED, "CLOSED after the probe");
    }
    System.out.println("consumer: natives from " + Lazybreaker.nativeOrigin() + ", library "
        + Lazybreaker.libraryVersion() + ": the cycle completed");
  }
}
