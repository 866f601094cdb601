package io.lazybreaker.bench;

import io.lazybreaker.BreakerConfig;
import io.lazybreaker.CallNotPermittedException;
import io.lazybreaker.CircuitBreaker;
import io.lazybreaker.Permit;
import io.lazybreaker.Registry;
import io.lazybreaker.RegistryOptions;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CyclicBarrier;
import java.util.function.Supplier;

/**
 * The Java benchmark (JMH is not in Debian): each benchmark runs in forks of
 * its own (a fresh JVM, so the JIT profiles one benchmark only), is warmed up,
 * then timed over several rounds in which every thread runs the same number
 * of calls on one shared breaker; results feed a sink the JIT cannot remove.
 * The table gives medians over all forks' rounds, in nanoseconds per call per
 * thread, ratios to the empty JNI pair, to the resilience4j-shaped baseline
 * (RingBreaker, acquirePermission + onSuccess(0)) and to the synchronized one,
 * and bytes allocated per call (ThreadMXBean.getCurrentThreadAllocatedBytes).
 * A benchmark named *_off runs with the quiet path switched off
 * (-Dlazybreaker.fastpath=false: every call crosses, the figures before it);
 * *_nanotime with the OPEN shortcut on (-Dlazybreaker.fastpath.nanoTimeOpen=true).
 *
 * <pre>
 *   java -cp lazybreaker.jar:bench-classes io.lazybreaker.bench.Bench FLOOR_LIBRARY [forks]
 * </pre>
 */
public final class Bench {
  static final String[] BENCHMARKS = {
    "floor", "pair", "pair_off", "pair_window", "pair_window_off", "execute", "rejected",
    "execute_rejected", "execute_rejected_traced", "rejected_nanotime", "rejected_forced", "r4j_pair0", "r4j_pair_timed", "r4j_rejected",
    "sync_pair", "sync_rejected", "atomic_pair", "atomic_rejected"
  };
  static final Map<String, String> LABELS = new LinkedHashMap<>();

  static {
    LABELS.put("floor", "empty JNI pair (floor)");
    LABELS.put("pair", "tryAcquire + success");
    LABELS.put("pair_off", "tryAcquire + success, quiet path off");
    LABELS.put("rejected_nanotime", "tryAcquire rejected (OPEN, nanoTime)");
    LABELS.put("pair_window", "tryAcquire + success, count window");
    LABELS.put("pair_window_off", "count window, quiet path off");
    LABELS.put("execute", "executeSupplier(() -> 1)");
    LABELS.put("rejected", "tryAcquire rejected (OPEN, cb_allow)");
    LABELS.put("execute_rejected", "executeSupplier rejected, throws (OPEN)");
    LABELS.put("execute_rejected_traced", "... with writableStackTraceEnabled(true)");
    LABELS.put("rejected_forced", "tryAcquire rejected (FORCED_OPEN)");
    LABELS.put("r4j_pair0", "r4j-shaped* acquire + onSuccess(0)");
    LABELS.put("r4j_pair_timed", "r4j-shaped* + 2 nanoTime()");
    LABELS.put("r4j_rejected", "r4j-shaped* rejected (OPEN)");
    LABELS.put("sync_pair", "synchronized, gobreaker shape");
    LABELS.put("sync_rejected", "synchronized, rejected (OPEN)");
    LABELS.put("atomic_pair", "AtomicInteger, lazy shape");
    LABELS.put("atomic_rejected", "AtomicInteger, rejected (OPEN)");
  }

  static final int[] THREADS = {1, 2};
  static final long WARMUP_NANOS = 600_000_000L;
  static final long ROUND_NANOS = 150_000_000L;
  static final int ROUNDS = 5;

  // --- the measured loops: one static method each, so each compiles alone ----

  static volatile long sinkOut;
  private static final Supplier<Integer> ONE = () -> 1;

  static long floorLoop(long h, long n) {
    long sink = 0;
    for (long i = 0; i < n; i++) {
      long t = Floor.allow(h);
      sink += Floor.done(h, t, 0);
    }
    return sink;
  }

  static long pairLoop(CircuitBreaker b, long n) {
    long sink = 0;
    for (long i = 0; i < n; i++) {
      Permit p = b.tryAcquire();
      if (p != null) {
        p.success();
      } else {
        sink++;
      }
    }
    return sink;
  }

  static long executeLoop(CircuitBreaker b, long n) {
    long sink = 0;
    for (long i = 0; i < n; i++) sink += b.executeSupplier(ONE);
    return sink;
  }

  static long executeRejectedLoop(CircuitBreaker b, long n) {
    long sink = 0;
    for (long i = 0; i < n; i++) {
      try {
        sink += b.executeSupplier(ONE);
      } catch (CallNotPermittedException e) {
        sink++;
      }
    }
    return sink;
  }

  static long rejectedLoop(CircuitBreaker b, long n) {
    long sink = 0;
    for (long i = 0; i < n; i++) {
      if (b.tryAcquire() == null) sink++;
    }
    return sink;
  }

  static long r4jPairLoop(RingBreaker b, long n) {
    long sink = 0;
    for (long i = 0; i < n; i++) {
      if (b.acquirePermission()) {
        b.onSuccess(0);
      } else {
        sink++;
      }
    }
    return sink;
  }

  static long r4jTimedPairLoop(RingBreaker b, long n) {
    long sink = 0;
    for (long i = 0; i < n; i++) {
      if (b.acquirePermission()) {
        long start = System.nanoTime();
        b.onSuccess(System.nanoTime() - start);
      } else {
        sink++;
      }
    }
    return sink;
  }

  static long r4jRejectedLoop(RingBreaker b, long n) {
    long sink = 0;
    for (long i = 0; i < n; i++) {
      if (!b.acquirePermission()) sink++;
    }
    return sink;
  }

  static long syncPairLoop(SynchronizedBreaker b, long n) {
    long sink = 0;
    for (long i = 0; i < n; i++) {
      long g = b.before();
      b.after(g, true);
      sink += g;
    }
    return sink;
  }

  static long syncRejectedLoop(SynchronizedBreaker b, long n) {
    long sink = 0;
    for (long i = 0; i < n; i++) {
      if (b.before() < 0) sink++;
    }
    return sink;
  }

  static long atomicPairLoop(AtomicLazyBreaker b, long n) {
    long sink = 0;
    for (long i = 0; i < n; i++) {
      int t = b.allow();
      b.done(t, true);
      sink += t;
    }
    return sink;
  }

  static long atomicRejectedLoop(AtomicLazyBreaker b, long n) {
    long sink = 0;
    for (long i = 0; i < n; i++) {
      if (b.allow() < 0) sink++;
    }
    return sink;
  }

  interface Loop {
    long run(long n);
  }

  /** Sets up one benchmark's subject; the loop it returns is shared by the threads. */
  static Loop setUp(String name, String floorLibrary) {
    Duration year = Duration.ofDays(365);
    switch (name) {
      case "floor":
        Floor.load(floorLibrary);
        return n -> floorLoop(42, n);
      case "pair":
      case "pair_off":
      case "rejected_nanotime":
      case "pair_window":
      case "pair_window_off":
      case "execute":
      case "rejected":
      case "rejected_forced":
      case "execute_rejected":
      case "execute_rejected_traced":
        {
          Registry reg = Registry.open(RegistryOptions.defaults());
          BreakerConfig config =
              name.startsWith("pair_window")
                  ? BreakerConfig.builder()
                      .policy(BreakerConfig.Policy.COUNT_WINDOW)
                      .windowSize(100)
                      .minimumNumberOfCalls(100)
                      .build()
                  : name.equals("execute_rejected_traced")
                      ? BreakerConfig.builder().writableStackTraceEnabled(true).build()
                      : BreakerConfig.defaults();
          CircuitBreaker b = reg.create("bench", config);
          if (name.startsWith("rejected_n") || name.equals("rejected") || name.startsWith("execute_rejected")) {
            b.trip(year);
          }
          if (name.equals("rejected_forced")) b.forceOpen();
          KEEP.add(reg);
          KEEP.add(b);
          if (name.startsWith("pair")) return n -> pairLoop(b, n);
          if (name.equals("execute")) return n -> executeLoop(b, n);
          if (name.startsWith("execute_rejected")) return n -> executeRejectedLoop(b, n);
          return n -> rejectedLoop(b, n);
        }
      case "r4j_pair0":
      case "r4j_pair_timed":
      case "r4j_rejected":
        {
          RingBreaker b =
              new RingBreaker(100, 100, 50, Duration.ofSeconds(60).toNanos(), year.toNanos());
          if (name.equals("r4j_rejected")) {
            b.transitionToOpen();
            return n -> r4jRejectedLoop(b, n);
          }
          if (name.equals("r4j_pair0")) return n -> r4jPairLoop(b, n);
          return n -> r4jTimedPairLoop(b, n);
        }
      case "sync_pair":
      case "sync_rejected":
        {
          SynchronizedBreaker b = new SynchronizedBreaker(1, year.toNanos(), 5);
          if (name.equals("sync_rejected")) {
            b.forceOpenFor(year.toNanos());
            return n -> syncRejectedLoop(b, n);
          }
          return n -> syncPairLoop(b, n);
        }
      case "atomic_pair":
      case "atomic_rejected":
        {
          AtomicLazyBreaker b = new AtomicLazyBreaker(5, year.toNanos());
          if (name.equals("atomic_rejected")) {
            b.tripNow();
            return n -> atomicRejectedLoop(b, n);
          }
          return n -> atomicPairLoop(b, n);
        }
      default:
        throw new IllegalArgumentException("unknown benchmark " + name);
    }
  }

  static final List<Object> KEEP = new ArrayList<>();

  static long allocated() {
    return ((com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean())
        .getCurrentThreadAllocatedBytes();
  }

  /**
   * In a fork: warms up, then prints one "sample NS_PER_CALL BYTES_PER_CALL" line per round. The
   * worker threads live for the whole fork and warm up themselves: a thread's first call takes
   * paths (its thread-local stripe) that a thread made per round would take in the middle of the
   * measurement, deoptimizing the compiled loop.
   */
  static void fork(String name, int threads, String floorLibrary) throws Exception {
    Loop loop = setUp(name, floorLibrary);
    long[][] nanos = new long[ROUNDS][threads];
    long[][] bytes = new long[ROUNDS][threads];
    long[] perRound = new long[1];
    CyclicBarrier barrier = new CyclicBarrier(threads);
    Throwable[] failed = new Throwable[1];
    Thread[] workers = new Thread[threads];
    for (int t = 0; t < threads; t++) {
      final int id = t;
      workers[t] =
          new Thread(
              () -> {
                try {
                  long calls = warmUp(loop);
                  if (id == 0) perRound[0] = calls;
                  barrier.await();
                  for (int r = 0; r < ROUNDS; r++) {
                    barrier.await();
                    long a0 = allocated();
                    long t0 = System.nanoTime();
                    long s = loop.run(perRound[0]);
                    nanos[r][id] = System.nanoTime() - t0;
                    bytes[r][id] = allocated() - a0;
                    sinkOut += s;
                  }
                } catch (Throwable e) {
                  failed[0] = e;
                  barrier.reset();
                }
              });
      workers[t].start();
    }
    for (Thread w : workers) w.join();
    if (failed[0] != null) throw new RuntimeException(failed[0]);
    for (int r = 0; r < ROUNDS; r++) {
      long slowest = Arrays.stream(nanos[r]).max().getAsLong();
      long allBytes = Arrays.stream(bytes[r]).sum();
      System.out.printf(
          Locale.ROOT,
          "sample %.3f %.3f%n",
          (double) slowest / perRound[0],
          (double) allBytes / ((double) perRound[0] * threads));
    }
  }

  /** Runs the loop for WARMUP_NANOS; returns the calls that take about ROUND_NANOS. */
  static long warmUp(Loop loop) {
    long n = 1000;
    long start = System.nanoTime();
    long done = 0;
    while (System.nanoTime() - start < WARMUP_NANOS) {
      sinkOut += loop.run(n);
      done += n;
      if (n < 1_000_000) n *= 2;
    }
    return Math.max(1000, done * ROUND_NANOS / Math.max(1, System.nanoTime() - start));
  }

  static double median(List<Double> xs) {
    double[] a = xs.stream().mapToDouble(Double::doubleValue).sorted().toArray();
    return a.length % 2 == 1 ? a[a.length / 2] : (a[a.length / 2 - 1] + a[a.length / 2]) / 2;
  }

  public static void main(String[] args) throws Exception {
    if (args.length == 4 && args[0].equals("--fork")) {
      fork(args[1], Integer.parseInt(args[2]), args[3]);
      return;
    }
    if (args.length < 1 || args.length > 2) {
      System.err.println("usage: Bench FLOOR_LIBRARY [forks]");
      System.exit(2);
    }
    String floorLibrary = args[0];
    int forks = args.length == 2 ? Integer.parseInt(args[1]) : 3;
    String java = ProcessHandle.current().info().command().orElse("java");
    String cp = System.getProperty("java.class.path");
    // Forks of different benchmarks are interleaved (fork 1 of each, then
    // fork 2 of each, ...), so a burst of noise on a shared machine is spread
    // over all of them rather than landing on one.
    Map<String, List<Double>> nsSamples = new LinkedHashMap<>();
    Map<String, List<Double>> byteSamples = new LinkedHashMap<>();
    for (int f = 0; f < forks; f++) {
      for (int threads : THREADS) {
        for (String name : BENCHMARKS) {
          String key = name + "/" + threads;
          Process p =
              new ProcessBuilder(
                      java, "-Xms128m", "-Xmx128m",
                      "-Dlazybreaker.fastpath=" + !name.endsWith("_off"),
                      "-Dlazybreaker.fastpath.nanoTimeOpen=" + name.endsWith("_nanotime"),
                      "-cp", cp, Bench.class.getName(), "--fork",
                      name, Integer.toString(threads), floorLibrary)
                  .redirectError(ProcessBuilder.Redirect.INHERIT)
                  .start();
          try (BufferedReader r =
              new BufferedReader(
                  new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            for (String line; (line = r.readLine()) != null; ) {
              String[] t = line.split(" ");
              if (t.length == 3 && t[0].equals("sample")) {
                nsSamples.computeIfAbsent(key, k -> new ArrayList<>())
                    .add(Double.parseDouble(t[1]));
                byteSamples.computeIfAbsent(key, k -> new ArrayList<>())
                    .add(Double.parseDouble(t[2]));
              }
            }
          }
          if (p.waitFor() != 0) throw new IllegalStateException(name + " fork failed");
        }
      }
      System.err.printf(Locale.ROOT, "  fork %d of %d done%n", f + 1, forks);
    }
    Map<String, double[]> ns = new LinkedHashMap<>();
    Map<String, double[]> bytes = new LinkedHashMap<>();
    for (String key : nsSamples.keySet()) {
      ns.put(key, new double[] {median(nsSamples.get(key))});
      bytes.put(key, new double[] {median(byteSamples.get(key))});
    }
    print(ns, bytes, forks);
  }

  static void print(Map<String, double[]> ns, Map<String, double[]> bytes, int forks) {
    System.out.printf(
        Locale.ROOT,
        "%nJava (io.lazybreaker), %s %s; medians of %d forks x %d rounds;%n"
            + "ns per call per thread, all threads on one breaker%n%n",
        System.getProperty("java.vm.name"), System.getProperty("java.version"), forks, ROUNDS);
    System.out.printf(
        Locale.ROOT,
        "%-36s %7s %9s %9s %9s %8s %11s%n",
        "benchmark", "threads", "ns/call", "vs floor", "vs r4j(0)", "vs sync", "bytes/call");
    for (int threads : THREADS) {
      double floor = ns.get("floor/" + threads)[0];
      double r4j = ns.get("r4j_pair0/" + threads)[0];
      double sync = ns.get("sync_pair/" + threads)[0];
      for (String name : BENCHMARKS) {
        String key = name + "/" + threads;
        double v = ns.get(key)[0];
        System.out.printf(
            Locale.ROOT,
            "%-36s %7d %9.2f %8.2fx %8.2fx %7.2fx %11.1f%n",
            LABELS.get(name), threads, v, v / floor, r4j / v, sync / v, bytes.get(key)[0]);
      }
    }
    System.out.println();
    System.out.println(
        "* r4j-shaped: this repository's baseline in resilience4j's shape (RingBreaker.java: a lock"
            + " around a ring of outcomes),\n  not resilience4j's code. vs r4j(0) and vs sync: how"
            + " many times faster than r4j-shaped onSuccess(0)\n  and than the synchronized"
            + " (gobreaker-shaped) pair; vs floor: ns / the empty JNI pair's ns.");
    System.out.println();
    for (int threads : THREADS) {
      double pair = ns.get("pair/" + threads)[0];
      double r4j = ns.get("r4j_pair0/" + threads)[0];
      double open = ns.get("rejected/" + threads)[0];
      double openNano = ns.get("rejected_nanotime/" + threads)[0];
      System.out.printf(
          Locale.ROOT,
          "%d thread(s): tryAcquire+success %.2f ns (target <= 10: %s), %.1fx r4j-shaped"
              + " onSuccess(0) (target >= 2x: %s);%n  OPEN tryAcquire %.2f ns through cb_allow,"
              + " %.2f ns quiet with nanoTime (target <= 10: %s)%n",
          threads, pair, pair <= 10 ? "met" : "MISSED", r4j / pair,
          r4j / pair >= 2 ? "met" : "MISSED", open, openNano,
          Math.min(open, openNano) <= 10 ? "met" : "MISSED");
    }
    for (String name : new String[] {"pair", "pair_window", "execute", "rejected"}) {
      for (int threads : THREADS) {
        double b = bytes.get(name + "/" + threads)[0];
        System.out.printf(
            Locale.ROOT,
            "%s, %d thread(s): %.1f bytes/call (target 0: %s)%n",
            LABELS.get(name), threads, b, b < 0.5 ? "met" : "MISSED");
      }
    }
  }
}
