package io.lazybreaker;

import java.lang.ref.Cleaner;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.lang.ref.Reference;
import java.lang.ref.WeakReference;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.Callable;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * One breaker in a {@link Registry}, guarding one downstream dependency. All
 * methods may be called from any thread. The state machine is the C
 * library's: this class only carries the handle across.
 *
 * <p>The request path: {@link #tryAcquire()} returns a {@link Permit}, or
 * {@code null} when the breaker rejects the call (no exception, no
 * allocation but the permit's); or {@link #executeSupplier}, {@link
 * #executeCallable} and {@link #executeRunnable}, which throw {@link
 * CallNotPermittedException} when rejected and report the outcome
 * themselves.
 *
 * <p>{@link #close()} destroys the breaker in its registry; afterwards every
 * call throws {@link IllegalStateException} (the library refuses the stale
 * handle; nothing can crash). A breaker made by {@link Registry#create} that
 * becomes unreachable unclosed is destroyed by a {@link Cleaner}. A breaker
 * from {@link Registry#getOrCreate} is shared (other processes use it):
 * neither its {@code close()} nor the Cleaner destroys it.
 */
public final class CircuitBreaker implements AutoCloseable {
  /** The five states ({@code cb_state_t}; each value is the header's). */
  public enum State {
    /** Admitting; the trip policy is counting. */
    CLOSED(LbNativeConstants.CB_STATE_CLOSED),
    /** Rejecting until the open duration passes; the next call then probes. */
    OPEN(LbNativeConstants.CB_STATE_OPEN),
    /** Admitting a bounded number of probes. */
    HALF_OPEN(LbNativeConstants.CB_STATE_HALF_OPEN),
    /** Rejecting everything until {@link #reset()}. */
    FORCED_OPEN(LbNativeConstants.CB_STATE_FORCED_OPEN),
    /** Admitting everything, tripping never, until {@link #reset()}. */
    DISABLED(LbNativeConstants.CB_STATE_DISABLED);

    final int code;

    State(int code) {
      this.code = code;
    }

    static State of(int code) {
      for (State s : values()) if (s.code == code) return s;
      throw new IllegalStateException("lazybreaker: a state this binding does not know: "
          + LbNative.cb_state_name(code) + " (" + code + ")");
    }

    /** The library's name of the state ("half_open"): the Prometheus label's value. */
    public String label() {
      return LbNative.cb_state_name(code);
    }
  }

  /**
   * A breaker's counters ({@code cb_stats}), counted in every state. Exact
   * once calls have returned.
   */
  public static final class Stats {
    /** Calls admitted. */
    public final long admitted;
    /** Calls rejected. */
    public final long rejected;

    public final long successes;
    public final long failures;
    public final long ignored;
    /** Transitions into OPEN (not FORCED_OPEN). */
    public final long trips;
    /** The current failure run (CLOSED). */
    public final long consecutiveFailures;
    /** Outcomes slower than the slow-call threshold. */
    public final long slow;
    /** Failures / calls in the window now (rate policies), 0..1. */
    public final double failureRate;
    /** Slow calls / calls in the window now, 0..1. */
    public final double slowRate;
    /** Time in the current state, on the registry's clock. */
    public final Duration timeInState;

    Stats(cb_stats s) {
      admitted = s.getAdmitted();
      rejected = s.getRejected();
      successes = s.getSuccesses();
      failures = s.getFailures();
      ignored = s.getIgnored();
      trips = s.getTrips();
      consecutiveFailures = s.getConsecutive_failures();
      slow = s.getSlow();
      failureRate = s.getFailure_rate();
      slowRate = s.getSlow_rate();
      timeInState = Durations.ofNanos(s.getState_ns());
    }

    @Override
    public String toString() {
      return "Stats{admitted=" + admitted + ", rejected=" + rejected + ", successes=" + successes
          + ", failures=" + failures + ", ignored=" + ignored + ", trips=" + trips
          + ", consecutiveFailures=" + consecutiveFailures + ", slow=" + slow + ", failureRate="
          + failureRate + ", slowRate=" + slowRate + ", timeInState=" + timeInState + "}";
    }
  }

  // Every method that calls the library with the handle keeps this object
  // reachable until the call has returned (Reference.reachabilityFence):
  // the call reads only the long, and the JIT may otherwise let this
  // object, and the Registry it holds, be collected during it, so that a
  // Cleaner destroys the breaker or closes the registry under the call.
  final long handle;
  private final Registry registry;
  private final String name;
  private final Classifier classifier;
  private final Destroyer destroyer;
  private final Cleaner.Cleanable cleanable; // null: not ours to destroy when collected

  /**
   * The Cleaner's action: destroys the breaker once, whether close() or the
   * Cleaner gets there first. It must not reach the CircuitBreaker strongly:
   * it is also the owned map's weak reference to it (one object per breaker
   * for both, with the Cleaner's registration the only other one).
   */
  static final class Destroyer extends WeakReference<CircuitBreaker> implements Runnable {
    private static final VarHandle DONE;

    static {
      try {
        DONE = MethodHandles.lookup().findVarHandle(Destroyer.class, "state", int.class);
      } catch (ReflectiveOperationException e) {
        throw new ExceptionInInitializerError(e);
      }
    }

    private final long handle;
    private final Registry.Owned owned;
    // The life in the low bits (LIVE, DESTROYING, DESTROYED) and KEEPS, set for a
    // shared breaker (destroyed by nobody: only let go of), in one word: a
    // separate boolean would cost the object 8 more bytes.
    private volatile int state;
    private static final int LIVE = 0;
    private static final int DESTROYING = 1;
    private static final int DESTROYED = 2;
    private static final int LIFE = 3;
    private static final int KEEPS = 4;

    Destroyer(CircuitBreaker b, long handle, Registry.Owned owned, boolean destroys) {
      super(b);
      this.handle = handle;
      this.owned = owned;
      this.state = destroys ? LIVE : KEEPS;
    }

    boolean destroyed() {
      return (state & LIFE) != LIVE;
    }

    long handle() {
      return handle;
    }

    boolean destroys() {
      return (state & KEEPS) == 0;
    }

    @Override
    public void run() {
      int keeps = state & KEEPS;
      if (!DONE.compareAndSet(this, keeps | LIVE, keeps | DESTROYING)) return;
      // A breaker of a registry closed meanwhile is already gone (stale).
      if (keeps == 0) {
        try {
          LbNativeJNI.cb_destroy(handle);
        } catch (IllegalStateException alreadyStale) {
          // nothing left to release
        }
      }
      if (owned != null) owned.forget(handle, this);
      state = keeps | DESTROYED;
    }

    /** Waits (polling; tests only) until the breaker is destroyed. */
    boolean awaitDestroyed(long millis) throws InterruptedException {
      long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
      while ((state & LIFE) != DESTROYED) {
        if (System.nanoTime() - end > 0) return false;
        Thread.sleep(1);
      }
      return true;
    }
  }

  CircuitBreaker(
      Registry registry, long handle, String name, Classifier classifier, boolean cleanOnCollect) {
    this(registry, handle, name, classifier, cleanOnCollect, true);
  }

  /** destroyOnClose false: a shared breaker (getOrCreate), which close() only lets go of. */
  CircuitBreaker(
      Registry registry,
      long handle,
      String name,
      Classifier classifier,
      boolean cleanOnCollect,
      boolean destroyOnClose) {
    this.registry = registry;
    this.handle = handle;
    this.name = name;
    this.classifier = classifier;
    this.destroyer = new Destroyer(this, handle, cleanOnCollect ? registry.owned : null, destroyOnClose);
    this.cleanable = cleanOnCollect ? Registry.CLEANER.register(this, destroyer) : null;
  }

  Destroyer destroyer() {
    return destroyer;
  }

  /**
   * Asks to make a call.
   *
   * @return a permit to report the call's outcome on, or {@code null} when the
   *     breaker rejects it (see {@link #retryAfter()})
   * @throws IllegalStateException if the breaker is closed
   */
  public Permit tryAcquire() {
    QuietPath.Cells cells = QuietPath.cells();
    long ticket = allow(cells);
    if (QuietPath.isRejection(ticket)) return null;
    return ticket == 0 ? null : new Permit(this, ticket, cells);
  }

  /**
   * As {@link #tryAcquire()}, throwing when rejected (resilience4j's {@code
   * acquirePermission}): for an integration that reports the outcome itself
   * and whose caller expects the rejection as an exception.
   *
   * @throws CallNotPermittedException when the breaker rejects the call
   */
  public Permit acquirePermission() {
    QuietPath.Cells cells = QuietPath.cells();
    return new Permit(this, acquireOrThrow(cells), cells);
  }

  /**
   * A ticket, 0 (rejected by the library) or one of QuietPath's rejections: the quiet path's
   * answer when it has one, else cb_allow's.
   */
  private long allow(QuietPath.Cells cells) {
    try {
      long ticket = QuietPath.tryAllow(handle, cells);
      return ticket != QuietPath.CROSS ? ticket : LbNativeJNI.cb_allow(handle);
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  private long acquireOrThrow(QuietPath.Cells cells) {
    long ticket = allow(cells);
    if (ticket == 0) throw rejected(state());
    if (QuietPath.isRejection(ticket)) throw rejected(QuietPath.rejectedState(ticket));
    return ticket;
  }

  private CallNotPermittedException rejected(State state) {
    return new CallNotPermittedException(name(), state, this, classifier.writableStackTrace);
  }

  /**
   * Reports an outcome: a quiet success without crossing, anything else through cb_done. {@code
   * cells}: the stripe the call was admitted with.
   */
  void done(long ticket, int outcome, QuietPath.Cells cells) {
    try {
      if (outcome != LbNativeConstants.CB_SUCCESS
          || !QuietPath.trySucceed(handle, ticket, cells)) {
        LbNativeJNI.cb_done(handle, ticket, outcome);
      }
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /**
   * Runs {@code supplier} if the breaker admits it and reports the outcome: a
   * result is a success unless {@code recordResult} says otherwise; an
   * exception is a failure (or ignored, or a success, as the config's
   * recordExceptions and ignoreExceptions say) and is rethrown.
   *
   * @throws CallNotPermittedException when rejected; {@code supplier} does
   *     not run
   */
  public <T> T executeSupplier(Supplier<T> supplier) {
    Objects.requireNonNull(supplier, "supplier");
    QuietPath.Cells cells = QuietPath.cells();
    long ticket = acquireOrThrow(cells);
    T result;
    try {
      result = supplier.get();
    } catch (Throwable t) {
      reportException(ticket, t, cells);
      throw t;
    }
    reportResult(ticket, result, cells);
    return result;
  }

  /** As {@link #executeSupplier}, for a call that may throw a checked exception. */
  public <T> T executeCallable(Callable<T> callable) throws Exception {
    Objects.requireNonNull(callable, "callable");
    QuietPath.Cells cells = QuietPath.cells();
    long ticket = acquireOrThrow(cells);
    T result;
    try {
      result = callable.call();
    } catch (Throwable t) {
      reportException(ticket, t, cells);
      throw t;
    }
    reportResult(ticket, result, cells);
    return result;
  }

  /** As {@link #executeSupplier}, for a call without a result (a success unless it throws). */
  public void executeRunnable(Runnable runnable) {
    Objects.requireNonNull(runnable, "runnable");
    QuietPath.Cells cells = QuietPath.cells();
    long ticket = acquireOrThrow(cells);
    try {
      runnable.run();
    } catch (Throwable t) {
      reportException(ticket, t, cells);
      throw t;
    }
    done(ticket, LbNativeConstants.CB_SUCCESS, cells);
  }

  /**
   * As {@link #executeSupplier}, and when the call is rejected or throws, the
   * fallback's answer to that exception instead (the outcome is reported
   * first, as without a fallback).
   */
  public <T> T executeSupplier(
      Supplier<T> supplier, Function<? super Throwable, ? extends T> fallback) {
    Objects.requireNonNull(fallback, "fallback");
    try {
      return executeSupplier(supplier);
    } catch (RuntimeException e) { // an Error (out of memory, ...) is no answer to fall back from
      return fallback.apply(e);
    }
  }

  /**
   * Starts the asynchronous call {@code supplier} makes if the breaker admits
   * it, and reports its outcome when its stage completes: a result as {@link
   * #executeSupplier} classifies it, an exceptional completion as a thrown
   * exception (a {@link CompletionException}'s cause is classified), a
   * cancellation ({@link CancellationException}) as ignored: the caller gave
   * up, the dependency did nothing wrong.
   *
   * @return a stage completed as the call's; completed exceptionally with
   *     {@link CallNotPermittedException} when rejected ({@code supplier} is
   *     not called), or with what {@code supplier} threw instead of returning
   *     a stage (a failure)
   */
  public <T> CompletionStage<T> executeCompletionStage(Supplier<? extends CompletionStage<T>> supplier) {
    Objects.requireNonNull(supplier, "supplier");
    QuietPath.Cells cells = QuietPath.cells();
    long ticket = allow(cells);
    if (ticket == 0) return CompletableFuture.failedFuture(rejected(state()));
    if (QuietPath.isRejection(ticket)) {
      return CompletableFuture.failedFuture(rejected(QuietPath.rejectedState(ticket)));
    }
    CompletionStage<T> stage;
    try {
      stage = Objects.requireNonNull(supplier.get(), "the stage supplier returned null");
    } catch (Throwable t) {
      reportException(ticket, t, cells);
      return CompletableFuture.failedFuture(t);
    }
    // The stage may complete on any thread: done() then counts in that
    // thread's stripe, as a Permit reported from another thread does.
    CompletableFuture<T> answer = new CompletableFuture<>();
    stage.whenComplete(
        (result, thrown) -> {
          try {
            if (thrown == null) {
              reportResult(ticket, result, cells);
            } else {
              Throwable cause = thrown instanceof CompletionException && thrown.getCause() != null
                  ? thrown.getCause()
                  : thrown;
              if (cause instanceof CancellationException) {
                done(ticket, LbNativeConstants.CB_IGNORED, cells);
              } else {
                reportException(ticket, cause, cells);
              }
            }
          } catch (Throwable reporting) {
            // a user predicate threw, or the breaker was closed meanwhile
            answer.completeExceptionally(reporting);
            return;
          }
          if (thrown == null) answer.complete(result);
          else answer.completeExceptionally(thrown);
        });
    return answer;
  }

  /**
   * As {@link #executeCompletionStage(Supplier)}, and when the call is
   * rejected or completes exceptionally (cancellation included), the stage
   * completes with the fallback's answer to that exception instead.
   */
  public <T> CompletionStage<T> executeCompletionStage(
      Supplier<? extends CompletionStage<T>> supplier,
      Function<? super Throwable, ? extends T> fallback) {
    Objects.requireNonNull(fallback, "fallback");
    return executeCompletionStage(supplier)
        .exceptionally(
            thrown -> fallback.apply(
                thrown instanceof CompletionException && thrown.getCause() != null
                    ? thrown.getCause()
                    : thrown));
  }

  /** {@code supplier} behind this breaker, each call through {@link #executeCompletionStage}. */
  public <T> Supplier<CompletionStage<T>> decorateCompletionStage(
      Supplier<? extends CompletionStage<T>> supplier) {
    Objects.requireNonNull(supplier, "supplier");
    return () -> executeCompletionStage(supplier);
  }

  // resilience4j's static decorators, with its signatures, so that code
  // written against them (or composing them with resilience4j's own Retry)
  // needs only its import changed.

  /** {@code supplier} behind {@code breaker}: each call through {@link #executeSupplier}. */
  public static <T> Supplier<T> decorateSupplier(CircuitBreaker breaker, Supplier<T> supplier) {
    Objects.requireNonNull(breaker, "breaker");
    Objects.requireNonNull(supplier, "supplier");
    return () -> breaker.executeSupplier(supplier);
  }

  /** {@code callable} behind {@code breaker}: each call through {@link #executeCallable}. */
  public static <T> Callable<T> decorateCallable(CircuitBreaker breaker, Callable<T> callable) {
    Objects.requireNonNull(breaker, "breaker");
    Objects.requireNonNull(callable, "callable");
    return () -> breaker.executeCallable(callable);
  }

  /** {@code function} behind {@code breaker}: each application through {@link #executeSupplier}. */
  public static <T, R> Function<T, R> decorateFunction(
      CircuitBreaker breaker, Function<T, R> function) {
    Objects.requireNonNull(breaker, "breaker");
    Objects.requireNonNull(function, "function");
    return t -> breaker.executeSupplier(() -> function.apply(t));
  }

  /** {@code runnable} behind {@code breaker}: each run through {@link #executeRunnable}. */
  public static Runnable decorateRunnable(CircuitBreaker breaker, Runnable runnable) {
    Objects.requireNonNull(breaker, "breaker");
    Objects.requireNonNull(runnable, "runnable");
    return () -> breaker.executeRunnable(runnable);
  }

  /** {@code supplier} behind {@code breaker}: each call through {@link #executeCompletionStage}. */
  public static <T> Supplier<CompletionStage<T>> decorateCompletionStage(
      CircuitBreaker breaker, Supplier<CompletionStage<T>> supplier) {
    Objects.requireNonNull(breaker, "breaker");
    return breaker.decorateCompletionStage(supplier);
  }

  /**
   * Reports a thrown call as the config classifies it. The ticket is
   * reported even when a user predicate throws (as a failure; the
   * predicate's exception then propagates).
   */
  private void reportException(long ticket, Throwable thrown, QuietPath.Cells cells) {
    int outcome = LbNativeConstants.CB_FAILURE;
    try {
      outcome = classifier.ofException(thrown);
    } finally {
      done(ticket, outcome, cells);
    }
  }

  private void reportResult(long ticket, Object result, QuietPath.Cells cells) {
    int outcome = LbNativeConstants.CB_FAILURE;
    try {
      outcome = classifier.ofResult(result);
    } finally {
      done(ticket, outcome, cells);
    }
  }

  /** The state now; asking never moves it (an elapsed OPEN stays OPEN until a call). */
  public State state() {
    try {
      return State.of(LbNativeJNI.cb_state(handle));
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /**
   * How long until a call could be admitted: zero when one would be now; the
   * rest of the open duration in OPEN; {@code ChronoUnit.FOREVER.getDuration()}
   * in FORCED_OPEN. Never moves the state.
   */
  public Duration retryAfter() {
    try {
      return Durations.ofNanos(LbNativeJNI.cb_retry_after(handle));
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /** The counters now. */
  public Stats stats() {
    cb_stats s = new cb_stats();
    try {
      LbNative.cb_stats_get(handle, s);
      return new Stats(s);
    } finally {
      s.delete();
      Reference.reachabilityFence(this);
    }
  }

  /** FORCED_OPEN: rejects everything until {@link #reset()}. */
  public void forceOpen() {
    LbNativeJNI.cb_force_open(handle);
    Reference.reachabilityFence(this);
  }

  /** DISABLED: admits everything and never trips, until {@link #reset()}. */
  public void disable() {
    LbNativeJNI.cb_disable(handle);
    Reference.reachabilityFence(this);
  }

  /** CLOSED with a fresh count, from any state. */
  public void reset() {
    LbNativeJNI.cb_reset(handle);
    Reference.reachabilityFence(this);
  }

  /**
   * OPEN now for exactly {@code openFor} (e.g. a "429, Retry-After: 20"
   * answer), then probing as usual. Counts as a trip.
   *
   * @throws IllegalArgumentException outside 1 µs .. 366 days (naming openFor, the bound, the value)
   */
  public void trip(Duration openFor) {
    try {
      LbNativeJNI.cb_trip(handle, Durations.toNanos(openFor, "openFor"));
    } catch (RefusedArgument e) {
      if (!"open_for_ns".equals(e.field())) throw e;
      long ns = openFor.toNanos();
      String why = Long.compareUnsigned(ns, LbNativeConstants.CB_MIN_OPEN_DURATION_NS) < 0
          ? "at least " + Durations.describe(LbNativeConstants.CB_MIN_OPEN_DURATION_NS)
          : "at most " + Durations.describe(LbNativeConstants.CB_MAX_DURATION_NS);
      IllegalArgumentException mine =
          new IllegalArgumentException("trip: openFor must be " + why + ", got " + openFor);
      mine.initCause(e);
      throw mine;
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /**
   * The configuration the breaker holds, read back from the library
   * (cb_config_get): for a breaker this process made, its config's fields
   * (maxWaitDurationInHalfOpenState zero reads as the open duration); for
   * one found by lookup, the configuration its creator gave, in any
   * language. The classifier is this object's.
   */
  public BreakerConfig config() {
    cb_config c = new cb_config();
    try {
      LbNative.cb_config_get(handle, c);
      return BreakerConfig.fromNative(c, classifier);
    } finally {
      c.delete();
      Reference.reachabilityFence(this);
    }
  }

  /** The breaker's name, unique in its registry. */
  public String name() {
    return name;
  }

  /** The registry holding this breaker. */
  public Registry registry() {
    return registry;
  }

  /** Whether {@link #close()} has run (or the Cleaner destroyed the breaker). */
  public boolean isClosed() {
    return destroyer.destroyed();
  }

  /**
   * Whether this object is a shared breaker's (from {@link Registry#getOrCreate}): {@link
   * #close()} leaves the breaker in its registry for every other process.
   */
  public boolean isShared() {
    return !destroyer.destroys();
  }

  /**
   * Destroys the breaker: its name becomes free and every later call throws
   * {@link IllegalStateException}. Calling it again does nothing. On a shared
   * breaker ({@link #isShared()}) it destroys nothing: it only marks this
   * object closed, and the breaker lives on for every process using it
   * (until its registry closes, this object's calls still reach it).
   */
  @Override
  public void close() {
    if (cleanable != null) {
      cleanable.clean();
    } else {
      destroyer.run();
    }
  }

  @Override
  public String toString() {
    return "CircuitBreaker{'" + name + "'" + (isClosed() ? ", closed}" : "}");
  }
}
