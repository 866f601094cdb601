package io.lazybreaker;

import static java.lang.Double.parseDouble;
import static java.util.Map.entry;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.BiConsumer;
import java.util.function.ToLongFunction;

/**
 * The Java conformance runner: interprets the step streams that {@code lb_conformance --emit}
 * writes from tests/conformance/*.scn (tests/conformance/README.md, "Step streams"), every step
 * through the public io.lazybreaker API, each scenario on a fresh manual-clock registry.
 *
 * <pre>
 *   java ... io.lazybreaker.ConformanceRunner STREAM...
 * </pre>
 *
 * Exit status: 0 every step matched; 1 a step did not match (reported as file:line: ...); 2 a
 * stream cannot be read or is not one. ConformanceTest runs it on every stream.
 */
public final class ConformanceRunner {
  static final int PASS = 0;
  static final int MISMATCH = 1;
  static final int BAD_STREAM = 2;
  private static final double RATE_TOLERANCE = 1e-9;
  private static final String HEADER = "lbsteps 1 ";

  private static final Map<String, BreakerConfig.Policy> POLICIES =
      Map.of(
          "consecutive", BreakerConfig.Policy.CONSECUTIVE_FAILURES,
          "count_window", BreakerConfig.Policy.COUNT_WINDOW,
          "time_window", BreakerConfig.Policy.TIME_WINDOW);

  // Each cb_config field as the option a Java user sets.
  private static final Map<String, BiConsumer<BreakerConfig.Builder, String>> OPTIONS =
      Map.ofEntries(
          entry("failure_threshold", (b, v) -> b.failureThreshold(u32(v))),
          entry("open_duration_ns", (b, v) -> b.waitDurationInOpenState(nanos(v))),
          entry("half_open_max_calls", (b, v) -> b.permittedNumberOfCallsInHalfOpenState(u32(v))),
          entry("half_open_success_threshold", (b, v) -> b.halfOpenSuccessThreshold(u32(v))),
          entry("half_open_timeout_ns", (b, v) -> b.maxWaitDurationInHalfOpenState(nanos(v))),
          entry("policy", (b, v) -> b.policy(POLICIES.get(v))),
          entry("window_size", (b, v) -> b.windowSize(u32(v))),
          entry("window_duration_ns", (b, v) -> b.windowDuration(nanos(v))),
          entry("window_buckets", (b, v) -> b.windowBuckets(u32(v))),
          entry("minimum_calls", (b, v) -> b.minimumNumberOfCalls(u32(v))),
          entry("failure_rate_threshold", (b, v) -> b.failureRateThresholdRatio(parseDouble(v))),
          entry("slow_call_ns", (b, v) -> b.slowCallDurationThreshold(nanos(v))),
          entry("slow_call_rate_threshold", (b, v) -> b.slowCallRateThresholdRatio(parseDouble(v))),
          entry("open_backoff_multiplier", (b, v) -> b.openBackoffMultiplier(parseDouble(v))),
          entry("open_duration_max_ns", (b, v) -> b.maxWaitDurationInOpenState(nanos(v))),
          entry("open_jitter", (b, v) -> b.openJitter(parseDouble(v))));

  private static final Map<String, ToLongFunction<CircuitBreaker.Stats>> COUNTS =
      Map.of(
          "admitted", s -> s.admitted, "rejected", s -> s.rejected,
          "successes", s -> s.successes, "failures", s -> s.failures,
          "ignored", s -> s.ignored, "trips", s -> s.trips,
          "consecutive_failures", s -> s.consecutiveFailures, "slow", s -> s.slow,
          "state_ns", s -> s.timeInState.toNanos());

  /** A step's result differs from the expectation. */
  static final class Mismatch extends Exception {
    Mismatch(String what) {
      super(what);
    }
  }

  private static int u32(String v) {
    return Integer.parseInt(v); // every library limit is below 2^31
  }

  private static Duration nanos(String v) {
    return Duration.ofNanos(Long.parseLong(v));
  }

  private static void expect(String what, String want, String got) throws Mismatch {
    if (!want.equals(got)) throw new Mismatch(what + ": expected " + want + ", got " + got);
  }

  // One scenario as it runs.
  private final String line;
  private final String name;
  private final BreakerConfig.Builder options = BreakerConfig.builder();
  private final Map<String, Permit> permits = new HashMap<>();
  private Registry reg;
  private CircuitBreaker breaker;
  private String mismatch;

  private ConformanceRunner(String line, String name) {
    this.line = line;
    this.name = name;
  }

  private void step(String[] t) throws Mismatch {
    switch (t[0]) {
      case "scenario" ->
          reg = Registry.open(RegistryOptions.builder().manualClock(true).capacity(1).build());
      case "config" -> {
        if (t[4].equals("set")) OPTIONS.get(t[2]).accept(options, t[3]);
      }
      case "create" -> breaker = reg.create(name, options.build());
      case "allow" -> {
        Permit p = breaker.tryAcquire();
        expect("allow (state " + breaker.state() + ")", t[2], p == null ? "rejected" : "ok");
        if (p != null) permits.put(t[3], p);
      }
      case "done" -> done(permits.get(t[2]), t[3]);
      case "advance" -> reg.advance(nanos(t[2]));
      case "state" -> expect("state", t[2], breaker.state().name().toLowerCase(Locale.ROOT));
      case "retry_after" -> {
        Duration d = breaker.retryAfter();
        String ns = d.equals(Durations.FOREVER) ? "18446744073709551615" : "" + d.toNanos();
        expect("retry_after (state " + breaker.state() + ")", t[2], ns);
      }
      case "force_open" -> breaker.forceOpen();
      case "disable" -> breaker.disable();
      case "reset" -> breaker.reset();
      case "trip" -> breaker.trip(nanos(t[2]));
      case "count" -> {
        long got = COUNTS.get(t[2]).applyAsLong(breaker.stats());
        expect(t[2], t[3], Long.toUnsignedString(got));
      }
      case "rate" -> {
        CircuitBreaker.Stats s = breaker.stats();
        double got = t[2].equals("failure_rate") ? s.failureRate : s.slowRate;
        if (!(Math.abs(got - parseDouble(t[3])) <= RATE_TOLERANCE)) {
          throw new Mismatch(t[2] + ": expected " + t[3] + ", got " + got);
        }
      }
      default -> throw new IllegalArgumentException("not a step: " + String.join(" ", t));
    }
  }

  private void done(Permit p, String outcome) {
    // A scenario may report a ticket twice (a probe reported twice counts
    // once); Permit refuses a second verdict by design, so the repeat goes to
    // the library as it is.
    int verdict = List.of("success", "failure", "ignored").indexOf(outcome);
    if (p.isReported()) LbNativeJNI.cb_done(breaker.handle, p.ticket(), verdict);
    else if (verdict == 0) p.success();
    else if (verdict == 1) p.failure();
    else p.ignore();
  }

  /** Interprets one stream; reports to {@code out} and {@code err}. */
  static int runStream(Path path, PrintStream out, PrintStream err) {
    List<String> lines;
    try {
      lines = Files.readAllLines(path, StandardCharsets.UTF_8);
    } catch (IOException e) {
      err.printf("%s: cannot read: %s%n", path, e);
      return BAD_STREAM;
    }
    if (lines.isEmpty() || !lines.get(0).startsWith(HEADER)) {
      err.printf("%s: not a step stream of version 1%n", path);
      return BAD_STREAM;
    }
    String source = lines.get(0).substring(HEADER.length());
    ConformanceRunner r = null;
    int result = PASS;
    for (String text : lines.subList(1, lines.size())) {
      String[] t = text.split(" ");
      if (t[0].equals("scenario")) r = new ConformanceRunner(t[1], t[2]);
      if (t[0].equals("end")) {
        if (r.reg != null) r.reg.close(); // every permit left is silent now
        if (r.mismatch == null) {
          out.printf("ok    %s:%s %s%n", source, r.line, r.name);
        } else {
          err.println(r.mismatch);
          out.printf("FAIL  %s:%s %s%n", source, r.line, r.name);
          result = MISMATCH;
        }
      } else if (r.mismatch == null) {
        // After a mismatch, the rest of the scenario is skipped.
        try {
          r.step(t);
        } catch (Mismatch m) {
          r.mismatch = source + ":" + t[1] + ": mismatch: " + m.getMessage();
        } catch (RuntimeException e) {
          r.mismatch = source + ":" + t[1] + ": mismatch: " + t[0] + ": " + e;
        }
      }
    }
    return result;
  }

  static int main(String[] args, PrintStream out, PrintStream err) {
    if (args.length == 0) {
      err.println("usage: ConformanceRunner STREAM...");
      return BAD_STREAM;
    }
    int worst = PASS;
    for (String a : args) worst = Math.max(worst, runStream(Path.of(a), out, err));
    return worst;
  }

  public static void main(String[] args) {
    System.exit(main(args, System.out, System.err));
  }
}
