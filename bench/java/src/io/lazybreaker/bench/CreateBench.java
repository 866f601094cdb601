package io.lazybreaker.bench;

import io.lazybreaker.BreakerConfig;
import io.lazybreaker.CircuitBreaker;
import io.lazybreaker.Registry;
import io.lazybreaker.RegistryOptions;
import java.lang.management.ManagementFactory;
import java.util.Arrays;
import java.util.Locale;

/**
 * Creates of 1M breakers (issue 24's "create 1M / heap per breaker" row): each round opens a
 * private registry of 2^20 breakers and creates 1,000,000 with one BreakerConfig (its native
 * cb_config interned, so one JNI crossing carries it), names made before the clock starts.
 * Prints medians over the rounds of: seconds for the 1M creates, Java heap retained per breaker
 * (after full GCs, the names excluded, the CircuitBreaker[] slot included), and bytes allocated
 * per create. No peer row: resilience4j is not served here (the issue measured its 1M creates
 * at 14-16 s outside the repository).
 *
 * <pre>
 *   java -cp lazybreaker.jar:bench-classes io.lazybreaker.bench.CreateBench [rounds]
 * </pre>
 */
public final class CreateBench {
  static final int N = 1_000_000;

  private CreateBench() {}

  static long used() throws InterruptedException {
    Runtime rt = Runtime.getRuntime();
    for (int i = 0; i < 4; i++) {
      System.gc();
      Thread.sleep(50);
    }
    return rt.totalMemory() - rt.freeMemory();
  }

  static long allocated() {
    return ((com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean())
        .getCurrentThreadAllocatedBytes();
  }

  static double median(double[] xs) {
    double[] s = xs.clone();
    Arrays.sort(s);
    return s.length % 2 == 1 ? s[s.length / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
  }

  public static void main(String[] args) throws Exception {
    int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 3;
    String[] names = new String[N];
    for (int i = 0; i < N; i++) names[i] = "b" + i;
    BreakerConfig config = BreakerConfig.defaults();
    double[] secs = new double[rounds];
    double[] heap = new double[rounds];
    double[] alloc = new double[rounds];
    for (int r = 0; r < rounds; r++) {
      try (Registry reg = Registry.open(RegistryOptions.builder().capacity(1 << 20).build())) {
        CircuitBreaker[] held = new CircuitBreaker[N];
        long before = used();
        long a0 = allocated();
        long t0 = System.nanoTime();
        for (int i = 0; i < N; i++) held[i] = reg.create(names[i], config);
        long t1 = System.nanoTime();
        long a1 = allocated();
        long after = used();
        secs[r] = (t1 - t0) / 1e9;
        heap[r] = (after - before) / (double) N;
        alloc[r] = (a1 - a0) / (double) N;
        if (held[N - 1].isClosed()) throw new AssertionError("created closed");
      }
    }
    System.out.println("| Java create (medians of " + rounds + ") | ours | target |");
    System.out.println("|---|---|---|");
    System.out.printf(Locale.ROOT, "| create 1M breakers | %.2f s | <= 1.5 s |%n", median(secs));
    System.out.printf(
        Locale.ROOT, "| Java heap retained per breaker | %.0f B | <= 120 B |%n", median(heap));
    System.out.printf(Locale.ROOT, "| bytes allocated per create | %.0f B | |%n", median(alloc));
  }
}
