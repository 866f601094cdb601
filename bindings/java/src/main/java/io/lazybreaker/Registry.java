package io.lazybreaker;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.ref.Cleaner;
import java.lang.ref.Reference;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.NoSuchFileException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * A set of breakers sharing a clock, a capacity and an event queue. {@link
 * #defaultRegistry()} is the process-wide one (monotonic clock, never
 * closed); {@link #open} and {@link #withManualClock()} make private ones,
 * which {@link #close()} (or, if they become unreachable unclosed, a {@link
 * Cleaner}) closes, making every breaker in them stale.
 *
 * <p>Thread safety: every method may be called from any thread. {@link
 * #close()} waits for the registry calls under way (create, lookup, events,
 * text) and makes later ones throw {@link IllegalStateException}. Breakers'
 * calls never wait on it, and may run while it does: a call in flight when
 * the close begins returns as it would have or throws {@link
 * IllegalStateException}, and every call after it throws that (as a closed
 * breaker's do); none can crash the JVM.
 */
public final class Registry implements AutoCloseable {
  static final Cleaner CLEANER = Cleaner.create();

  private final long ptr;
  private final SWIGTYPE_p_cb_registry native_;
  private final boolean isDefault;
  // A registry file's: a breaker this object did not create is another
  // process's too, so the object lookup() gives for it never destroys it.
  private final boolean sharedFile;
  private final boolean manualClock;
  private final ReentrantReadWriteLock lifetime = new ReentrantReadWriteLock();
  private final Closer closer;
  private final Cleaner.Cleanable cleanable;
  final Owned owned = new Owned();

  /**
   * The breakers a Java object owns, by the slot of their handle: lookup()
   * hands out the same CircuitBreaker while it lives. Weak (a Destroyer is a
   * weak reference to its breaker), so that an unreachable breaker is
   * collected and destroyed by its Cleaner. A reference per slot, in chunks
   * of 1,024 made as slots are first used: 4-8 B per breaker, where a hash
   * table at most half full of keys and references took 24. Every access
   * holds this object's lock (creates and lookups already do; the request
   * path never).
   */
  static final class Owned {
    private static final int CHUNK_BITS = 10;
    private static final int SLOT_MASK = (1 << 24) - 1; // the handle's slot bits (fastpath.h)
    private CircuitBreaker.Destroyer[][] chunks = new CircuitBreaker.Destroyer[1][];

    synchronized CircuitBreaker.Destroyer get(long h) {
      int slot = (int) h & SLOT_MASK;
      int chunk = slot >>> CHUNK_BITS;
      if (chunk >= chunks.length || chunks[chunk] == null) return null;
      CircuitBreaker.Destroyer d = chunks[chunk][slot & ((1 << CHUNK_BITS) - 1)];
      return d != null && d.handle() == h ? d : null;
    }

    synchronized void add(CircuitBreaker b) {
      int slot = (int) b.handle & SLOT_MASK;
      int chunk = slot >>> CHUNK_BITS;
      if (chunk >= chunks.length) {
        chunks = java.util.Arrays.copyOf(chunks, Math.max(chunk + 1, 2 * chunks.length));
      }
      if (chunks[chunk] == null) chunks[chunk] = new CircuitBreaker.Destroyer[1 << CHUNK_BITS];
      chunks[chunk][slot & ((1 << CHUNK_BITS) - 1)] = b.destroyer();
    }

    /** Drops the entry of handle h if it is still this destroyer's. */
    synchronized void forget(long h, CircuitBreaker.Destroyer destroyer) {
      int slot = (int) h & SLOT_MASK;
      int chunk = slot >>> CHUNK_BITS;
      if (chunk >= chunks.length || chunks[chunk] == null) return;
      int at = slot & ((1 << CHUNK_BITS) - 1);
      if (chunks[chunk][at] == destroyer) chunks[chunk][at] = null;
    }
  }

  /** The Cleaner's action for a private registry; must not reach the Registry. */
  static final class Closer implements Runnable {
    private final SWIGTYPE_p_cb_registry native_;
    private final AtomicBoolean closed = new AtomicBoolean();
    private final CountDownLatch gone = new CountDownLatch(1);

    Closer(SWIGTYPE_p_cb_registry native_) {
      this.native_ = native_;
    }

    @Override
    public void run() {
      if (closed.compareAndSet(false, true)) {
        LbNative.cb_registry_close(native_);
        gone.countDown();
      }
    }

    boolean awaitClosed(long millis) throws InterruptedException {
      return gone.await(millis, TimeUnit.MILLISECONDS);
    }
  }

  private Registry(SWIGTYPE_p_cb_registry native_, boolean isDefault, boolean manualClock) {
    this(native_, isDefault, manualClock, false);
  }

  private Registry(
      SWIGTYPE_p_cb_registry native_, boolean isDefault, boolean manualClock, boolean sharedFile) {
    this.sharedFile = sharedFile;
    this.native_ = native_;
    this.ptr = SWIGTYPE_p_cb_registry.getCPtr(native_);
    this.isDefault = isDefault;
    this.manualClock = manualClock;
    this.closer = isDefault ? null : new Closer(native_);
    this.cleanable = isDefault ? null : CLEANER.register(this, closer);
  }

  private static final class DefaultHolder {
    static final Registry INSTANCE = new Registry(LbNative.lb_default_registry(), true, false);
  }

  /** The process-wide registry (monotonic clock, 1,048,576 breakers); never closed. */
  public static Registry defaultRegistry() {
    return DefaultHolder.INSTANCE;
  }

  /**
   * A new private registry, or, with {@link RegistryOptions.Builder#path} set, a shared one: the
   * registry file at that path, whose breakers every process opening it shares. Closing a shared
   * registry unmaps it; its breakers stay in the file.
   *
   * @throws IllegalArgumentException for options the library refuses (named as {@link
   *     RegistryOptions.Builder} names them), also
   *     options that disagree with an existing file's capacity or clock
   * @throws UncheckedIOException for a shared registry's file: caused by {@link
   *     NoSuchFileException} when it is missing and not to be created, {@link
   *     FileAlreadyExistsException} when it exists and was to be created exclusively, {@link
   *     AccessDeniedException} when it may not be opened or created, or a create finds a file it
   *     may not trust ({@code CB_EPERM}; {@link RegistryOptions.Builder#anyOwner}), or an
   *     {@link IOException} for another I/O error ({@code CB_EIO})
   * @throws LazybreakerException for a file that is no registry of this layout ({@code
   *     CB_EVERSION}) or a corrupt one ({@code CB_ECORRUPT}); {@link
   *     LazybreakerException#status()} says which
   * @throws RegistryBusyException when another process has held the file's lock for 5 s ({@code
   *     CB_EBUSY})
   */
  public static Registry open(RegistryOptions options) {
    Objects.requireNonNull(options, "options");
    cb_registry_options o = options.toNative();
    try {
      return open(options, o);
    } catch (RefusedArgument e) {
      String mine = options.refusal(e.field());
      if (mine == null) throw e;
      IllegalArgumentException refused = new IllegalArgumentException(mine);
      refused.initCause(e);
      throw refused;
    } finally {
      o.delete();
    }
  }

  private static Registry open(RegistryOptions options, cb_registry_options o) {
    if (options.path == null) {
      return new Registry(LbNative.lb_registry_open(o), false, options.manualClock);
    }
    byte[] path = Utf8.nulTerminated(options.path, "path");
    try {
      return new Registry(LbNative.lb_registry_open_at(o, path), false, options.manualClock, true);
    } catch (NoSuchElementException e) {
      // CB_ENOENT and CB_EEXIST name the file here, not a breaker.
      throw new UncheckedIOException(
          e.getMessage(), new NoSuchFileException(options.path, null, e.getMessage()));
    } catch (BreakerExistsException e) {
      throw new UncheckedIOException(
          e.getMessage(), new FileAlreadyExistsException(options.path, null, e.getMessage()));
    }
  }

  /**
   * The shared registry at {@code file}, created (mode 0600) if it is missing: {@code
   * open(RegistryOptions.builder().path(file).create(true).build())}.
   */
  public static Registry shared(java.nio.file.Path file) {
    return open(RegistryOptions.builder().path(file).create(true).build());
  }

  /** A new private registry whose clock starts at zero and moves only by {@link #advance}. */
  public static Registry withManualClock() {
    return open(RegistryOptions.builder().manualClock(true).build());
  }

  /**
   * Runs {@code op} with the registry's pointer while it is open: close()
   * waits for it, and so does the Cleaner (this object stays reachable
   * until {@code op} has returned: {@code op} may read only the pointer).
   */
  private <T> T whileOpen(java.util.function.Supplier<T> op) {
    ReentrantReadWriteLock.ReadLock lock = lifetime.readLock();
    lock.lock();
    try {
      if (closer != null && closer.closed.get()) {
        throw new IllegalStateException("the registry is closed");
      }
      return op.get();
    } finally {
      lock.unlock();
      Reference.reachabilityFence(this);
    }
  }

  /**
   * Creates a breaker, CLOSED, owned by the returned object: {@link
   * CircuitBreaker#close()} destroys it, and so does the Cleaner when the
   * object becomes unreachable unclosed.
   *
   * @param name 1..255 bytes of UTF-8, unique in the registry
   * @throws BreakerExistsException when the name is taken
   * @throws IllegalArgumentException for an empty name or one over 255 bytes of UTF-8
   * @throws RegistryFullException when the registry holds its capacity
   * @throws NullPointerException for a null name or config
   */
  public CircuitBreaker create(String name, BreakerConfig config) {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(config, "config");
    byte[] utf8 = Utf8.nulTerminated(name, "name");
    return whileOpen(
        () -> {
          cb_config c = config.interned();
          try {
            // Under the owned map's lock, so that a lookup racing this
            // create finds the owner, never a second object for the handle.
            synchronized (owned) {
              long h;
              try {
                h = named(() -> LbNative.cb_create(native_, utf8, c), utf8);
              } catch (BreakerExistsException e) {
                throw new BreakerExistsException("create: the registry holds a breaker named '"
                    + name + "' (lookup finds it; getOrCreate shares it)", e);
              }
              CircuitBreaker b = new CircuitBreaker(this, h, name, config.classifier, true);
              owned.add(b);
              return b;
            }
          } finally {
            // The interned struct is freed by the config's Cleaner: keep it alive over the call.
            java.lang.ref.Reference.reachabilityFence(config);
          }
        });
  }

  /** {@link #create(String, BreakerConfig)} with the library's defaults. */
  public CircuitBreaker create(String name) {
    return create(name, BreakerConfig.defaults());
  }

  /**
   * The breaker of that name if its configuration equals {@code config}, else a new one with it:
   * what every worker of a pool, and every process sharing a registry file, calls at start. Of
   * concurrent calls with one name, in any process, one creates and the others get its breaker.
   *
   * <p>The breaker is shared: the returned object's {@link CircuitBreaker#close()} and its
   * collection destroy nothing ({@link CircuitBreaker#isShared()}).
   *
   * @param name 1..255 bytes of UTF-8
   * @throws BreakerExistsException when a breaker has the name with another configuration (the
   *     message names the first option that differs, with both values)
   * @throws IllegalArgumentException for a bad name or config (said as the builder names it)
   * @throws RegistryFullException when it must be created and the registry holds its capacity
   * @throws NullPointerException for a null name or config
   */
  public CircuitBreaker getOrCreate(String name, BreakerConfig config) {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(config, "config");
    byte[] utf8 = Utf8.nulTerminated(name, "name");
    return whileOpen(
        () -> {
          cb_config c = config.interned();
          try {
            long h;
            try {
              h = named(() -> LbNative.cb_get_or_create(native_, utf8, c), utf8);
            } catch (BreakerExistsException e) {
              throw differs(name, utf8, config, e);
            }
            return new CircuitBreaker(this, h, name, config.classifier, false, false);
          } finally {
            // The interned struct is freed by the config's Cleaner: keep it alive over the call.
            java.lang.ref.Reference.reachabilityFence(config);
          }
        });
  }

  /**
   * A call that takes a breaker's name, its refusal of the name said in
   * Java's words (the library names the parameter, "name").
   */
  private static long named(java.util.function.LongSupplier call, byte[] utf8) {
    try {
      return call.getAsLong();
    } catch (RefusedArgument e) {
      if (!"name".equals(e.field())) throw e;
      int bytes = utf8.length - 1; // without the NUL
      String why = bytes == 0 ? "must not be empty"
          : "must be at most " + LbNativeConstants.CB_MAX_NAME_BYTES + " bytes of UTF-8, got "
              + bytes;
      IllegalArgumentException mine = new IllegalArgumentException("name " + why);
      mine.initCause(e);
      throw mine;
    }
  }

  /**
   * getOrCreate's CB_EEXIST: which option differs (the library names the
   * first differing field), with the registry's value and this config's,
   * each in the option's Java type.
   */
  private BreakerExistsException differs(
      String name, byte[] utf8, BreakerConfig config, BreakerExistsException e) {
    ConfigField f = ConfigField.of(e.field());
    if (f == null) return e; // destroyed meanwhile, or a field newer than this binding
    BreakerConfig.Named n = config.nameOf(f);
    String theirs = "?";
    cb_config mine = config.toNative();
    cb_config held = new cb_config();
    try {
      long h = LbNative.cb_lookup(native_, utf8);
      if (h != 0) {
        try {
          LbNative.cb_config_get(h, held);
          theirs = f.show(held, n.unit);
        } catch (IllegalStateException destroyedMeanwhile) {
          // the value is gone with it; the option still differs
        }
      }
      return new BreakerExistsException(
          "getOrCreate: breaker '" + name + "' exists with another configuration: its "
              + n.option + " is " + theirs + ", this config's " + f.show(mine, n.unit),
          e);
    } finally {
      held.delete();
      mine.delete();
    }
  }

  /** {@link #getOrCreate(String, BreakerConfig)} with the library's defaults. */
  public CircuitBreaker getOrCreate(String name) {
    return getOrCreate(name, BreakerConfig.defaults());
  }

  /**
   * The breaker of that name: the same object {@link #create} returned while
   * it lives. A breaker created outside Java (by C code in the default
   * registry, say) comes back as a CircuitBreaker that does not destroy it
   * when collected (close() still does, except in a shared registry: there
   * it is another process's too, and close() only lets go of it, as for
   * {@link #getOrCreate}).
   */
  public Optional<CircuitBreaker> lookup(String name) {
    Objects.requireNonNull(name, "name");
    byte[] utf8 = Utf8.nulTerminated(name, "name");
    return whileOpen(
        () -> {
          synchronized (owned) {
            long h = LbNative.cb_lookup(native_, utf8);
            return h == 0 ? Optional.<CircuitBreaker>empty() : Optional.ofNullable(wrap(h, name));
          }
        });
  }

  /** The Java object for a live handle; null if its owner was collected (then it is destroyed). */
  private CircuitBreaker wrap(long h, String knownName) {
    CircuitBreaker.Destroyer e = owned.get(h);
    if (e != null) {
      CircuitBreaker b = e.get();
      if (b != null) return b;
      // Its owner is unreachable and its Cleaner is due: it is gone.
      e.run();
      return null;
    }
    String name = knownName != null ? knownName : Utf8.decode(LbNative.lb_name(h));
    return new CircuitBreaker(this, h, name, Classifier.DEFAULT, false, !sharedFile);
  }

  /** The registry's live breakers, in no particular order. */
  public List<CircuitBreaker> breakers() {
    return whileOpen(
        () -> {
          lb_handle_list list = new lb_handle_list(native_);
          try {
            List<CircuitBreaker> out = new ArrayList<>((int) list.getCount());
            for (long i = 0; i < list.getCount(); i++) {
              try {
                CircuitBreaker b;
                synchronized (owned) {
                  b = wrap(list.get(i), null);
                }
                if (b != null) out.add(b);
              } catch (IllegalStateException destroyedMeanwhile) {
                // listed, then destroyed before its name could be read
              }
            }
            return List.copyOf(out);
          } finally {
            list.delete();
          }
        });
  }

  /**
   * Takes up to {@code max} events from the queue, oldest first. Nothing runs
   * inside the library on an event: drain the queue when you like. A full
   * queue drops its oldest events ({@link #eventsDropped()}).
   */
  public List<StateTransition> pollEvents(int max) {
    if (max <= 0) throw new IllegalArgumentException("max must be positive, got " + max);
    return whileOpen(
        () -> {
          List<StateTransition> out = new ArrayList<>();
          lb_event_batch batch = new lb_event_batch(Math.min(max, 256));
          try {
            while (out.size() < max) {
              int n = batch.poll(native_);
              for (int i = 0; i < n && out.size() < max; i++) {
                cb_event e = batch.get(i);
                out.add(
                    new StateTransition(
                        e.getSequence(),
                        Utf8.decode(e.getName()),
                        CircuitBreaker.State.of(e.getFrom()),
                        CircuitBreaker.State.of(e.getTo()),
                        StateTransition.Reason.of(e.getReason()),
                        Durations.ofNanos(e.getAt_ns())));
              }
              if (n < Math.min(max, 256)) break;
            }
            return out;
          } finally {
            batch.delete();
          }
        });
  }

  /** Events the queue has dropped since the registry opened. */
  public long eventsDropped() {
    return whileOpen(() -> LbNative.cb_events_dropped(native_));
  }

  /** Whether rejected calls are queued as events too (off by default; transitions always are). */
  public void recordRejections(boolean on) {
    long kinds =
        LbNativeConstants.CB_EVENTS_TRANSITIONS | (on ? LbNativeConstants.CB_EVENTS_REJECTIONS : 0);
    whileOpen(() -> LbNative.cb_events_select(native_, kinds));
  }

  /** Every breaker in the Prometheus text format 0.0.4 (docs/observability.md). */
  public String prometheus() {
    return whileOpen(() -> Utf8.decode(LbNative.lb_prometheus(native_)));
  }

  /** The registry's clock. */
  public Duration now() {
    return whileOpen(() -> Durations.ofNanos(LbNative.cb_clock_now(native_)));
  }

  /**
   * Moves a manual clock forward.
   *
   * @throws IllegalStateException unless the registry has a manual clock
   */
  public void advance(Duration d) {
    long ns = Durations.toNanos(d, "advance");
    if (!manualClock) {
      throw new IllegalStateException("advance: this registry's clock is not manual");
    }
    whileOpen(() -> LbNative.cb_clock_advance(native_, ns));
  }

  /** The Cleaner's action (a test waits on it); null for the default registry. */
  Closer closer() {
    return closer;
  }

  public boolean hasManualClock() {
    return manualClock;
  }

  public boolean isDefault() {
    return isDefault;
  }

  public boolean isClosed() {
    return closer != null && closer.closed.get();
  }

  /**
   * Closes the registry: every breaker in it becomes stale, and their calls
   * throw {@link IllegalStateException} from now on (calls in flight on
   * other threads return as they would have, or throw it). Waits for
   * registry calls under way, never for breakers' calls. Does nothing on
   * the default registry, or when already closed.
   */
  @Override
  public void close() {
    if (isDefault) return;
    ReentrantReadWriteLock.WriteLock lock = lifetime.writeLock();
    lock.lock();
    try {
      cleanable.clean();
    } finally {
      lock.unlock();
    }
  }

  // --- validation of configs (BreakerConfig.build) ------------------------------

  private static final class ValidationHolder {
    // A small private registry: BreakerConfig.build() has the library judge
    // a config by creating (and at once destroying) an anonymous breaker.
    static final Registry INSTANCE =
        open(RegistryOptions.builder().capacity(1024).manualClock(true).build());
  }

  static void validate(cb_config c) {
    Registry r = ValidationHolder.INSTANCE;
    long h = LbNative.cb_create(r.native_, null, c);
    LbNative.cb_destroy(h);
  }

  @Override
  public String toString() {
    return isDefault ? "Registry{default}" : "Registry{" + Long.toHexString(ptr) + "}";
  }
}
