package io.lazybreaker;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The Java conformance runner: executes tests/conformance/*.scn (format in
 * tests/conformance/README.md) through the public io.lazybreaker API, each
 * scenario on a fresh manual-clock registry, as the C++ runner does through
 * the C ABI.
 *
 * <pre>
 *   java ... io.lazybreaker.ConformanceRunner [--expect malformed|mismatch] FILE...
 * </pre>
 *
 * Exit status: 0 every step matched; 1 a step did not match (reported as
 * file:line: ...); 2 a file is malformed (every bad line is reported, nothing
 * runs) or cannot be read. With --expect the runner checks itself: it exits
 * 0 exactly when every file fails in the expected way. The whole file is
 * parsed before anything runs.
 */
public final class ConformanceRunner {
  static final int PASS = 0;
  static final int MISMATCH = 1;
  static final int MALFORMED = 2;

  enum Op {
    CONFIG,
    ALLOW_OK,
    ALLOW_REJECTED,
    DONE,
    ADVANCE,
    STATE,
    RETRY_AFTER,
    FORCE_OPEN,
    DISABLE,
    RESET,
    TRIP,
    STATS
  }

  enum Kind {
    U32,
    U64,
    DECIMAL,
    POLICY
  }

  static final class Field {
    final String key;
    final Kind kind;
    long u; // U32, U64 (unsigned), POLICY
    double d; // DECIMAL

    Field(String key, Kind kind) {
      this.key = key;
      this.kind = kind;
    }
  }

  static final class Step {
    final int line;
    final Op op;
    String name; // ticket
    long value; // ns (unsigned), state ordinal, outcome
    final List<Field> fields = new ArrayList<>();

    Step(int line, Op op) {
      this.line = line;
      this.op = op;
    }
  }

  static final class Scenario {
    final String name;
    final int line;
    final List<Step> steps = new ArrayList<>();

    Scenario(String name, int line) {
      this.name = name;
      this.line = line;
    }
  }

  static final Map<String, CircuitBreaker.State> STATES = new LinkedHashMap<>();
  static final Map<String, Integer> OUTCOMES = Map.of("success", 0, "failure", 1, "ignored", 2);
  static final Map<String, BreakerConfig.Policy> POLICIES =
      Map.of(
          "consecutive", BreakerConfig.Policy.CONSECUTIVE_FAILURES,
          "count_window", BreakerConfig.Policy.COUNT_WINDOW,
          "time_window", BreakerConfig.Policy.TIME_WINDOW);
  static final Map<String, Kind> CONFIG_KEYS = new HashMap<>();
  static final Map<String, Kind> STATS_KEYS = new HashMap<>();

  static {
    STATES.put("closed", CircuitBreaker.State.CLOSED);
    STATES.put("open", CircuitBreaker.State.OPEN);
    STATES.put("half_open", CircuitBreaker.State.HALF_OPEN);
    STATES.put("forced_open", CircuitBreaker.State.FORCED_OPEN);
    STATES.put("disabled", CircuitBreaker.State.DISABLED);
    for (String k :
        new String[] {
          "failure_threshold", "half_open_max_calls", "half_open_success_threshold",
          "window_size", "window_buckets", "minimum_calls"
        }) CONFIG_KEYS.put(k, Kind.U32);
    for (String k :
        new String[] {
          "open_duration_ns", "half_open_timeout_ns", "window_duration_ns", "slow_call_ns",
          "open_duration_max_ns"
        }) CONFIG_KEYS.put(k, Kind.U64);
    for (String k :
        new String[] {
          "failure_rate_threshold", "slow_call_rate_threshold", "open_backoff_multiplier",
          "open_jitter"
        }) CONFIG_KEYS.put(k, Kind.DECIMAL);
    CONFIG_KEYS.put("policy", Kind.POLICY);
    for (String k :
        new String[] {
          "admitted", "rejected", "successes", "failures", "ignored", "trips",
          "consecutive_failures", "slow", "state_ns"
        }) STATS_KEYS.put(k, Kind.U64);
    STATS_KEYS.put("failure_rate", Kind.DECIMAL);
    STATS_KEYS.put("slow_rate", Kind.DECIMAL);
  }

  static final double RATE_TOLERANCE = 1e-9;
  private static final Pattern IDENT = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");
  private static final Pattern DIGITS = Pattern.compile("[0-9]+");
  private static final Pattern DECIMAL = Pattern.compile("[0-9]+(\\.[0-9]+)?");
  private static final Pattern SPACE = Pattern.compile("[ \t]+");
  private static final long UINT64_MAX = -1L;

  /** Thrown by the parser for one bad line. */
  static final class Malformed extends Exception {
    private static final long serialVersionUID = 1L;

    Malformed(String why) {
      super(why);
    }
  }

  /** A plain unsigned decimal that fits 64 bits, as a long holding its bits. */
  static boolean parseU64(String s, long[] out) {
    if (!DIGITS.matcher(s).matches() || s.length() > 20) return false;
    try {
      out[0] = Long.parseUnsignedLong(s);
      return true;
    } catch (NumberFormatException overflow) {
      return false;
    }
  }

  static boolean parseDecimal(String s, double[] out) {
    if (!DECIMAL.matcher(s).matches()) return false;
    double v = Double.parseDouble(s);
    if (!Double.isFinite(v)) return false;
    out[0] = v;
    return true;
  }

  // --- parsing -------------------------------------------------------------------

  static final class Parser {
    private final String file;
    private final PrintStream err;
    private boolean ok = true;
    private final Set<String> names = new HashSet<>();
    private final Set<String> tickets = new HashSet<>();

    Parser(String file, PrintStream err) {
      this.file = file;
      this.err = err;
    }

    boolean parse(List<String> lines, List<Scenario> out) {
      int line = 0;
      for (String raw : lines) {
        ++line;
        int hash = raw.indexOf('#');
        if (hash >= 0) raw = raw.substring(0, hash);
        String trimmed = raw.strip();
        if (trimmed.isEmpty()) continue;
        String[] t = SPACE.split(trimmed);
        try {
          parseLine(line, t, out);
        } catch (Malformed m) {
          err.printf("%s:%d: malformed: %s%n", file, line, m.getMessage());
          ok = false;
        }
      }
      if (out.isEmpty()) {
        err.printf("%s: malformed: no scenario in the file%n", file);
        ok = false;
      }
      for (Scenario s : out) {
        if (s.steps.isEmpty() || (s.steps.size() == 1 && s.steps.get(0).op == Op.CONFIG)) {
          err.printf("%s:%d: malformed: scenario '%s' has no steps%n", file, s.line, s.name);
          ok = false;
        }
      }
      return ok;
    }

    private static void arity(String[] t, int want) throws Malformed {
      if (t.length != want) {
        throw new Malformed(
            "'" + t[0] + "' takes " + (want - 1) + " argument(s), got " + (t.length - 1));
      }
    }

    private void parseLine(int line, String[] t, List<Scenario> out) throws Malformed {
      String cmd = t[0];
      if (cmd.equals("scenario")) {
        arity(t, 2);
        if (!IDENT.matcher(t[1]).matches()) {
          throw new Malformed("a scenario name is [A-Za-z_][A-Za-z0-9_]*");
        }
        if (!names.add(t[1])) {
          throw new Malformed("scenario '" + t[1] + "' is already defined in this file");
        }
        out.add(new Scenario(t[1], line));
        tickets.clear();
        return;
      }
      if (out.isEmpty()) throw new Malformed("a step before the first 'scenario' line");
      Scenario sc = out.get(out.size() - 1);
      long[] u = new long[1];
      Step st;
      switch (cmd) {
        case "config":
          if (!sc.steps.isEmpty()) {
            throw new Malformed("'config' must come first in a scenario, once");
          }
          if (t.length < 2) throw new Malformed("'config' needs at least one key=value");
          st = new Step(line, Op.CONFIG);
          fields(t, CONFIG_KEYS, st);
          break;
        case "allow":
          if (t.length < 3 || !t[1].equals("->")) {
            throw new Malformed("expected 'allow -> ok TICKET' or 'allow -> rejected'");
          }
          if (t[2].equals("rejected")) {
            arity(t, 3);
            st = new Step(line, Op.ALLOW_REJECTED);
          } else if (t[2].equals("ok")) {
            arity(t, 4);
            if (!IDENT.matcher(t[3]).matches()) {
              throw new Malformed("a ticket name is [A-Za-z_][A-Za-z0-9_]*");
            }
            if (!tickets.add(t[3])) {
              throw new Malformed("ticket '" + t[3] + "' is already bound in this scenario");
            }
            st = new Step(line, Op.ALLOW_OK);
            st.name = t[3];
          } else {
            throw new Malformed("allow expects 'ok' or 'rejected', got '" + t[2] + "'");
          }
          break;
        case "done":
          arity(t, 3);
          if (!tickets.contains(t[1])) {
            throw new Malformed("ticket '" + t[1] + "' is not bound by an earlier 'allow -> ok'");
          }
          Integer outcome = OUTCOMES.get(t[2]);
          if (outcome == null) {
            throw new Malformed("outcome must be success, failure or ignored, got '" + t[2] + "'");
          }
          st = new Step(line, Op.DONE);
          st.name = t[1];
          st.value = outcome;
          break;
        case "advance":
        case "trip":
          arity(t, 2);
          if (!parseU64(t[1], u)) {
            throw new Malformed(
                cmd + " takes nanoseconds as a plain decimal, got '" + t[1] + "'");
          }
          st = new Step(line, cmd.equals("advance") ? Op.ADVANCE : Op.TRIP);
          st.value = u[0];
          break;
        case "state":
          arity(t, 2);
          CircuitBreaker.State s = STATES.get(t[1]);
          if (s == null) throw new Malformed("unknown state '" + t[1] + "'");
          st = new Step(line, Op.STATE);
          st.value = s.ordinal();
          break;
        case "retry_after":
          arity(t, 2);
          st = new Step(line, Op.RETRY_AFTER);
          if (t[1].equals("max")) {
            st.value = UINT64_MAX;
          } else if (parseU64(t[1], u)) {
            st.value = u[0];
          } else {
            throw new Malformed("retry_after takes nanoseconds or 'max', got '" + t[1] + "'");
          }
          break;
        case "force_open":
        case "disable":
        case "reset":
          arity(t, 1);
          st =
              new Step(
                  line,
                  cmd.equals("force_open")
                      ? Op.FORCE_OPEN
                      : cmd.equals("disable") ? Op.DISABLE : Op.RESET);
          break;
        case "stats":
          if (t.length < 2) throw new Malformed("'stats' needs at least one key=value");
          st = new Step(line, Op.STATS);
          fields(t, STATS_KEYS, st);
          break;
        default:
          throw new Malformed("unknown step '" + cmd + "'");
      }
      sc.steps.add(st);
    }

    private static void fields(String[] t, Map<String, Kind> keys, Step st) throws Malformed {
      Set<String> seen = new HashSet<>();
      long[] u = new long[1];
      double[] d = new double[1];
      for (int i = 1; i < t.length; i++) {
        int eq = t[i].indexOf('=');
        if (eq < 0) throw new Malformed("expected key=value, got '" + t[i] + "'");
        String key = t[i].substring(0, eq);
        String val = t[i].substring(eq + 1);
        Kind kind = keys.get(key);
        if (kind == null) throw new Malformed("unknown key '" + key + "'");
        if (!seen.add(key)) throw new Malformed("key '" + key + "' given twice");
        Field f = new Field(key, kind);
        switch (kind) {
          case U32:
          case U64:
            if (!parseU64(val, u)) {
              throw new Malformed(
                  "value of '" + key + "' must be a plain integer, got '" + val + "'");
            }
            f.u = u[0];
            break;
          case DECIMAL:
            if (!parseDecimal(val, d)) {
              throw new Malformed(
                  "value of '" + key + "' must be digits or digits.digits, got '" + val + "'");
            }
            f.d = d[0];
            break;
          case POLICY:
            BreakerConfig.Policy p = POLICIES.get(val);
            if (p == null) {
              throw new Malformed(
                  "policy must be consecutive, count_window or time_window, got '" + val + "'");
            }
            f.u = p.ordinal();
            break;
        }
        st.fields.add(f);
      }
    }
  }

  // --- running -----------------------------------------------------------------

  /** A step's result differs from the expectation. */
  static final class Mismatch extends Exception {
    private static final long serialVersionUID = 1L;
    final int line;

    Mismatch(int line, String what) {
      super(what);
      this.line = line;
    }
  }

  /** An unsigned 64-bit count of nanoseconds as a Duration, or a mismatch if Java cannot hold it. */
  private static Duration nanos(long unsigned, int line, String what) throws Mismatch {
    if (unsigned < 0) {
      throw new Mismatch(
          line, what + "=" + Long.toUnsignedString(unsigned) + ": out of range for a Duration");
    }
    return Duration.ofNanos(unsigned);
  }

  private static int u32(Field f, int line) throws Mismatch {
    if (f.u < 0 || f.u > Integer.MAX_VALUE) {
      // The library's limits are all below 2^31: a value Java's int cannot
      // hold is one cb_create refuses (README: a mismatch at the config line).
      throw new Mismatch(line, f.key + "=" + Long.toUnsignedString(f.u) + ": out of range");
    }
    return (int) f.u;
  }

  static BreakerConfig config(Step step) throws Mismatch {
    BreakerConfig.Builder b = BreakerConfig.builder();
    int line = step == null ? 0 : step.line;
    if (step != null) {
      for (Field f : step.fields) {
        switch (f.key) {
          case "failure_threshold":
            b.failureThreshold(u32(f, line));
            break;
          case "half_open_max_calls":
            b.permittedNumberOfCallsInHalfOpenState(u32(f, line));
            break;
          case "half_open_success_threshold":
            b.halfOpenSuccessThreshold(u32(f, line));
            break;
          case "window_size":
            b.windowSize(u32(f, line));
            break;
          case "window_buckets":
            b.windowBuckets(u32(f, line));
            break;
          case "minimum_calls":
            b.minimumNumberOfCalls(u32(f, line));
            break;
          case "open_duration_ns":
            b.waitDurationInOpenState(nanos(f.u, line, f.key));
            break;
          case "half_open_timeout_ns":
            b.maxWaitDurationInHalfOpenState(nanos(f.u, line, f.key));
            break;
          case "window_duration_ns":
            b.windowDuration(nanos(f.u, line, f.key));
            break;
          case "slow_call_ns":
            b.slowCallDurationThreshold(nanos(f.u, line, f.key));
            break;
          case "open_duration_max_ns":
            b.maxWaitDurationInOpenState(nanos(f.u, line, f.key));
            break;
          case "policy":
            b.policy(BreakerConfig.Policy.values()[(int) f.u]);
            break;
          case "failure_rate_threshold":
            b.failureRateThresholdRatio(f.d);
            break;
          case "slow_call_rate_threshold":
            b.slowCallRateThresholdRatio(f.d);
            break;
          case "open_backoff_multiplier":
            b.openBackoffMultiplier(f.d);
            break;
          case "open_jitter":
            b.openJitter(f.d);
            break;
          default:
            throw new Mismatch(line, "runner bug: no setter for " + f.key);
        }
      }
    }
    try {
      return b.build();
    } catch (IllegalArgumentException e) {
      throw new Mismatch(line, "cb_create: " + e.getMessage());
    }
  }

  private static long statU64(CircuitBreaker.Stats s, String key) {
    switch (key) {
      case "admitted":
        return s.admitted;
      case "rejected":
        return s.rejected;
      case "successes":
        return s.successes;
      case "failures":
        return s.failures;
      case "ignored":
        return s.ignored;
      case "trips":
        return s.trips;
      case "slow":
        return s.slow;
      case "state_ns":
        return s.timeInState.toNanos();
      default:
        return s.consecutiveFailures;
    }
  }

  private static long unsignedNanos(Duration d) {
    return d.equals(Durations.FOREVER) ? UINT64_MAX : d.toNanos();
  }

  static void run(Scenario sc) throws Mismatch {
    try (Registry reg =
        Registry.open(RegistryOptions.builder().manualClock(true).capacity(1).build())) {
      int first = 0;
      Step configStep = null;
      if (!sc.steps.isEmpty() && sc.steps.get(0).op == Op.CONFIG) {
        configStep = sc.steps.get(0);
        first = 1;
      }
      BreakerConfig cfg = config(configStep);
      CircuitBreaker b;
      try {
        b = reg.create(sc.name, cfg);
      } catch (RuntimeException e) {
        throw new Mismatch(configStep != null ? configStep.line : sc.line, "cb_create: " + e);
      }
      Map<String, Permit> permits = new HashMap<>();
      for (int i = first; i < sc.steps.size(); i++) {
        step(reg, b, permits, sc.steps.get(i));
      }
    }
  }

  private static void step(Registry reg, CircuitBreaker b, Map<String, Permit> permits, Step s)
      throws Mismatch {
    try {
      switch (s.op) {
        case ALLOW_OK:
        case ALLOW_REJECTED:
          {
            Permit p = b.tryAcquire();
            boolean wantOk = s.op == Op.ALLOW_OK;
            if ((p != null) != wantOk) {
              throw new Mismatch(
                  s.line,
                  "allow: expected " + (wantOk ? "ok" : "rejected") + ", got "
                      + (p != null ? "ok" : "rejected") + " (state " + b.state() + ")");
            }
            if (p != null) permits.put(s.name, p);
            break;
          }
        case DONE:
          {
            Permit p = permits.get(s.name);
            int outcome = (int) s.value;
            if (!p.isReported()) {
              if (outcome == 0) p.success();
              else if (outcome == 1) p.failure();
              else p.ignore();
            } else {
              // Scenarios may report a ticket twice (a probe reported twice
              // counts once); Permit refuses a second verdict by design, so
              // the repeat goes to the library as it is.
              LbNativeJNI.cb_done(b.handle, p.ticket(), outcome);
            }
            break;
          }
        case ADVANCE:
          reg.advance(nanos(s.value, s.line, "advance"));
          break;
        case STATE:
          {
            CircuitBreaker.State want = CircuitBreaker.State.values()[(int) s.value];
            CircuitBreaker.State got = b.state();
            if (got != want) {
              throw new Mismatch(s.line, "state: expected " + want + ", got " + got);
            }
            break;
          }
        case RETRY_AFTER:
          {
            long got = unsignedNanos(b.retryAfter());
            if (got != s.value) {
              throw new Mismatch(
                  s.line,
                  "retry_after: expected " + Long.toUnsignedString(s.value) + ", got "
                      + Long.toUnsignedString(got) + " (state " + b.state() + ")");
            }
            break;
          }
        case FORCE_OPEN:
          b.forceOpen();
          break;
        case DISABLE:
          b.disable();
          break;
        case RESET:
          b.reset();
          break;
        case TRIP:
          b.trip(nanos(s.value, s.line, "trip"));
          break;
        case STATS:
          {
            CircuitBreaker.Stats got = b.stats();
            for (Field f : s.fields) {
              if (f.kind == Kind.DECIMAL) {
                double v = f.key.equals("failure_rate") ? got.failureRate : got.slowRate;
                if (!(Math.abs(v - f.d) <= RATE_TOLERANCE)) {
                  throw new Mismatch(
                      s.line, "stats: expected " + f.key + "=" + f.d + ", got " + v);
                }
              } else if (statU64(got, f.key) != f.u) {
                throw new Mismatch(
                    s.line,
                    "stats: expected " + f.key + "=" + Long.toUnsignedString(f.u) + ", got "
                        + Long.toUnsignedString(statU64(got, f.key)));
              }
            }
            break;
          }
        case CONFIG:
          throw new Mismatch(s.line, "runner bug: unexpected config step");
      }
    } catch (IllegalArgumentException | IllegalStateException e) {
      throw new Mismatch(s.line, s.op.name().toLowerCase() + ": " + e);
    }
  }

  /** Parses and runs one file; reports to {@code out} and {@code err}. */
  static int runFile(Path path, PrintStream out, PrintStream err) {
    List<String> lines;
    try {
      lines = Files.readAllLines(path, StandardCharsets.UTF_8);
    } catch (IOException e) {
      err.printf("%s: cannot open: %s%n", path, e);
      return MALFORMED;
    }
    List<Scenario> scenarios = new ArrayList<>();
    if (!new Parser(path.toString(), err).parse(lines, scenarios)) return MALFORMED;
    int result = PASS;
    for (Scenario sc : scenarios) {
      try {
        run(sc);
        out.printf("ok    %s:%d %s%n", path, sc.line, sc.name);
      } catch (Mismatch m) {
        err.printf("%s:%d: mismatch: %s%n", path, m.line, m.getMessage());
        out.printf("FAIL  %s:%d %s%n", path, sc.line, sc.name);
        result = MISMATCH;
      }
    }
    return result;
  }

  static int main(String[] args, PrintStream out, PrintStream err) {
    int expect = PASS;
    int first = 0;
    if (args.length >= 2 && args[0].equals("--expect")) {
      if (args[1].equals("malformed")) {
        expect = MALFORMED;
      } else if (args[1].equals("mismatch")) {
        expect = MISMATCH;
      } else {
        err.println("--expect takes malformed or mismatch");
        return MALFORMED;
      }
      first = 2;
    }
    if (first >= args.length) {
      err.println("usage: ConformanceRunner [--expect malformed|mismatch] FILE...");
      return MALFORMED;
    }
    int worst = PASS;
    for (int i = first; i < args.length; i++) {
      int e = runFile(Path.of(args[i]), out, err);
      if (expect != PASS && e != expect) {
        err.printf(
            "%s: expected the runner to find it %s, but it did not%n",
            args[i], expect == MALFORMED ? "malformed" : "mismatching");
        return MISMATCH;
      }
      worst = Math.max(worst, e);
    }
    return expect != PASS ? PASS : worst;
  }

  public static void main(String[] args) {
    System.exit(main(args, System.out, System.err));
  }
}
