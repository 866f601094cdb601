package io.lazybreaker;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Locale;

/**
 * The published quiet path (include/lazybreaker/fastpath.h, layout 1): admits a CLOSED call,
 * reports a quiet success and rejects an OPEN call far from its deadline by reading the library's
 * own words, without a JNI call. Every transition is still the library's: anything these rules do
 * not call quiet answers {@link #CROSS}, and the caller makes the JNI call it made before
 * (cb_allow, cb_done), which decides, counts and transitions.
 *
 * <p>The words are read through VarHandles over direct ByteBuffers that the JNI glue makes over
 * the published addresses (java.i): the hot lines one buffer per chunk of 2^chunk_bits slots,
 * made at a chunk's first call and kept; lean_rejections; and the calling thread's stripe of
 * counter cells (cb_fastpath_thread_cells), kept in a ThreadLocal and a table by thread id
 * ({@link #cells()}). Java 17's threads are OS
 * threads, so the stripe's one writer is the thread that owns it (a virtual thread of a later
 * Java moves between OS threads: it counts through the library). A counter that reaches fold_at
 * is folded (cb_fastpath_fold) on the same thread before it counts again.
 *
 * <p>Off when the library publishes another layout, or with {@code -Dlazybreaker.fastpath=false}:
 * then every call crosses, as it always may. A FORCED_OPEN rejection needs no clock and is always
 * quiet. An OPEN rejection needs CLOCK_MONOTONIC, and Java's only reading of it is
 * System.nanoTime(), which costs more than the JNI crossing it would save (25 ns against 13 on
 * the benchmark's VMs, docs/java.md): so OPEN crosses unless {@code
 * -Dlazybreaker.fastpath.nanoTimeOpen=true}, and even then only on Linux and once nanoTime has
 * been seen to read CLOCK_MONOTONIC.
 */
final class QuietPath {
  /**
   * tryAllow's answers that are no ticket: a ticket's top nibble is 6, 7 or 8 (h's 0xb plus the
   * word's 0xb or the call ticket's 0xc), never 0.
   */
  static final long CROSS = 0;

  static final long REJECTED_OPEN = 1;
  static final long REJECTED_FORCED_OPEN = 2;

  // What the rules decide (fastpath.h's CB_FASTPATH_LIBRARY, _ADMIT, _REJECT, _SUCCESS).
  static final int LIBRARY = 0;
  static final int ADMIT = 1;
  static final int REJECT = 2;
  static final int SUCCESS = 3;

  // The counters of a cell, and the numbers layout 1 fixes (fastpath.h's CB_FASTPATH_*).
  private static final int ADMITTED = 0;
  private static final int REJECTED = 1;
  private static final int SUCCESSES = 2;
  private static final int MODE_OPEN = 1;
  private static final int MODE_RUN = 3;
  private static final int MODE_FORCED_OPEN = 4;
  private static final int MODE_WINDOW = 7;
  private static final int MODE_SHIFT = 60;
  private static final long CALL_TICKET = 0xcL << MODE_SHIFT;
  private static final int INDEX_BITS = 24;
  private static final long INDEX_MASK = (1L << INDEX_BITS) - 1;
  private static final int LIFE_SHIFT = 24;
  private static final long LIFE_TAG = 0xb0000L << 20; // above a 20-bit incarnation
  private static final long LIFE_MASK = 0xfffff;
  private static final long PERIOD_MASK = 0xffffff;
  private static final int DEADLINE_SHIFT = 24;
  private static final int DEADLINE_UNIT_SHIFT = 20;
  private static final int COUNTER_BITS = 16;

  private static final VarHandle WORDS =
      MethodHandles.byteBufferViewVarHandle(long[].class, ByteOrder.nativeOrder());
  private static final VarHandle CHUNK = MethodHandles.arrayElementVarHandle(ByteBuffer[].class);

  /** Whether the library publishes layout 1 and the quiet path is on. */
  static final boolean ENABLED;
  /**
   * Whether OPEN rejections compare System.nanoTime() with the library's deadlines
   * (-Dlazybreaker.fastpath.nanoTimeOpen=true on Linux).
   */
  static final boolean OPEN_SHORTCUT;

  private static final int CHUNK_BITS;
  private static final int SLOT_IN_CHUNK;
  private static final int LINE_SHIFT; // log2 of a line's bytes
  private static final int OPEN_PERIOD_OFFSET;
  private static final long FOLD_AT;
  private static final ByteBuffer LEAN;
  private static final ByteBuffer[] CHUNKS;
  private static final ThreadLocal<Cells> CELLS = ThreadLocal.withInitial(Cells::ofThisThread);
  private static final int BY_THREAD_SIZE = 1024;
  private static final Cells[] BY_THREAD = new Cells[BY_THREAD_SIZE];

  static {
    NativeLibrary.load();
    long[] fp = describeOrNull();
    // Layout 1 with the numbers its rules were written for; any other and every call crosses.
    boolean usable =
        fp != null
            && !"false".equalsIgnoreCase(System.getProperty("lazybreaker.fastpath", "true"))
            && fp[0] == 1
            && fp[1] == INDEX_BITS
            && fp[2] > 0
            && Long.bitCount(fp[2]) == 1
            && fp[3] < fp[2]
            && fp[4] > 0
            && fp[4] < INDEX_BITS
            && (fp[2] * 8) << fp[4] <= 1L << 30
            && fp[5] > 0
            && fp[5] <= 0x8000
            && Long.bitCount(fp[5]) == 1;
    ByteBuffer lean = usable ? leanRejections() : null;
    ENABLED = usable && lean != null;
    CHUNK_BITS = ENABLED ? (int) fp[4] : 10;
    SLOT_IN_CHUNK = (1 << CHUNK_BITS) - 1;
    LINE_SHIFT = ENABLED ? Long.numberOfTrailingZeros(fp[2] * 8) : 6;
    OPEN_PERIOD_OFFSET = ENABLED ? (int) fp[3] * 8 : 0;
    FOLD_AT = ENABLED ? fp[5] : 0x8000;
    LEAN = lean;
    CHUNKS = new ByteBuffer[ENABLED ? 1 << (INDEX_BITS - CHUNK_BITS) : 0];
    OPEN_SHORTCUT =
        ENABLED && Boolean.getBoolean("lazybreaker.fastpath.nanoTimeOpen") && nanoTimeIsMonotonic();
  }

  private QuietPath() {}

  private static long[] describeOrNull() {
    try {
      return describe();
    } catch (RuntimeException | UnsatisfiedLinkError e) {
      return null;
    }
  }

  /**
   * System.nanoTime() is CLOCK_MONOTONIC on Linux HotSpot; elsewhere (another OS, a VM that reads
   * another clock) the shortcut is not taken. Checked: CLOCK_MONOTONIC read between two nanoTime
   * reads lies between them.
   */
  private static boolean nanoTimeIsMonotonic() {
    String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
    if (!os.startsWith("linux")) return false;
    for (int attempt = 0; attempt < 3; attempt++) {
      long before = System.nanoTime();
      long mono = monotonicNanos();
      long after = System.nanoTime();
      if (before <= mono && mono <= after) return true;
    }
    return false;
  }

  /** The calling thread's stripe, or NONE (every call crosses) when it cannot have one. */
  static final class Cells {
    static final Cells NONE = new Cells(null, 0, -1);
    final ByteBuffer cells;
    final int stripe;
    // The owner's Thread.getId(), unique for the JVM's life: no reference to the Thread, so a
    // stripe cached in BY_THREAD keeps no dead thread (and its class loader) alive.
    final long ownerId;

    private Cells(ByteBuffer cells, int stripe, long ownerId) {
      this.cells = cells;
      this.stripe = stripe;
      this.ownerId = ownerId;
    }

    static Cells ofThisThread() {
      Thread t = Thread.currentThread();
      if (!ENABLED || isVirtual(t) || overridesGetId(t)) return NONE;
      int[] stripe = new int[1];
      ByteBuffer b = threadCells(stripe);
      return b == null ? NONE : new Cells(b, stripe[0], t.getId());
    }

    private static boolean isVirtual(Thread t) {
      try {
        return (Boolean) Thread.class.getMethod("isVirtual").invoke(t);
      } catch (ReflectiveOperationException noSuchMethodBeforeJava19) {
        return false;
      }
    }

    /** A Thread subclass may override getId() (before Java 19): its id names no one thread. */
    private static boolean overridesGetId(Thread t) {
      try {
        return t.getClass().getMethod("getId").getDeclaringClass() != Thread.class;
      } catch (ReflectiveOperationException e) {
        return true;
      }
    }

    /** Counts one in counter f of slot i's cell, folding at fold_at; this thread is its writer. */
    void count(int i, long h, int f) {
      int at = i << 3;
      long v = countCell((long) WORDS.get(cells, at), f);
      WORDS.setRelease(cells, at, v);
      if (mustFold(v, f, FOLD_AT)) fold(stripe, h, f);
    }
  }

  private static ByteBuffer chunk(int i) {
    // Acquire (a plain load on x86-64): a buffer's fields are not all final, and it is published
    // to other threads through this array.
    ByteBuffer c = (ByteBuffer) CHUNK.getAcquire(CHUNKS, i >>> CHUNK_BITS);
    return c != null ? c : newChunk(i >>> CHUNK_BITS);
  }

  private static synchronized ByteBuffer newChunk(int chunk) {
    ByteBuffer c = CHUNKS[chunk];
    if (c == null) {
      c = lineChunk(chunk);
      if (c == null) {
        throw new IllegalStateException("lazybreaker: no hot lines for chunk " + chunk);
      }
      CHUNK.setRelease(CHUNKS, chunk, c);
    }
    return c;
  }

  // --- fastpath.h's rules, over values only --------------------------------------
  // The header's static inline functions in Java: isQuiet is cb_fastpath_is_quiet, and so on;
  // admits and admittedTicket are cb_fastpath_admits with its ticket, countCell and mustFold
  // cb_fastpath_count_cell with its fold flag. The hot path below decides with these and
  // nothing else, and QuietVectorsTest checks them against the vectors the header's own
  // functions computed (docs/fastpath.md).

  /** The breaker is the handle's and CLOSED, and a call changes nothing shared. */
  static boolean isQuiet(long h, long w) {
    return ((h ^ w) >>> INDEX_BITS) == 0 && w < 0;
  }

  /** The word is of the breaker life the handle names, in any state. */
  static boolean ofLife(long h, long w) {
    return (h >>> LIFE_SHIFT) == (LIFE_TAG | ((w >>> LIFE_SHIFT) & LIFE_MASK));
  }

  static int mode(long w) {
    return (int) (w >>> MODE_SHIFT);
  }

  /** The call is admitted on w alone: quiet, or CLOSED in a window or a failure run. */
  static boolean admits(long h, long w) {
    if (isQuiet(h, w)) return true;
    int mode = mode(w);
    return (mode == MODE_WINDOW || mode == MODE_RUN) && ofLife(h, w);
  }

  /** The ticket of a call that {@link #admits} admits. */
  static long admittedTicket(long h, long w) {
    return isQuiet(h, w) ? h + w : h + (CALL_TICKET | (w & PERIOD_MASK));
  }

  /** A call not admitted is rejected only as the period word and the clock say (OPEN). */
  static boolean needsClock(long h, long w, int lean) {
    return lean != 0 && mode(w) == MODE_OPEN && ofLife(h, w);
  }

  /** The OPEN period's deadline in ns that p caches for w's period; 0 for none. */
  static long deadline(long w, long p) {
    if (((p ^ w) & PERIOD_MASK) != 0) return 0;
    return (p >>> DEADLINE_SHIFT) << DEADLINE_UNIT_SHIFT;
  }

  /** A call not admitted is rejected: FORCED_OPEN, or OPEN and now (unsigned) before deadline. */
  static boolean rejects(long h, long w, long p, int lean, long now) {
    if (lean == 0 || !ofLife(h, w)) return false;
    int mode = mode(w);
    if (mode == MODE_FORCED_OPEN) return true;
    if (mode != MODE_OPEN) return false;
    long deadline = deadline(w, p);
    return deadline != 0 && Long.compareUnsigned(now, deadline) < 0;
  }

  /**
   * The allow rule whole (cb_fastpath_decide_allow): {@link #ADMIT} (ticket {@link
   * #admittedTicket}), {@link #REJECT} or {@link #LIBRARY}. {@link #tryAllow} takes it in its two
   * halves, so that it reads the lean byte only for a call not admitted, and the period word and
   * the clock only when {@link #needsClock} says the rule compares them.
   */
  static int decideAllow(long h, long w, long p, int lean, long now) {
    if (admits(h, w)) return ADMIT;
    return rejects(h, w, p, lean, now) ? REJECT : LIBRARY;
  }

  /** The done rule: {@link #SUCCESS} when the report changes nothing, else {@link #LIBRARY}. */
  static int decideDone(long h, long w, long ticket, int outcome) {
    return outcome == LbNativeConstants.CB_SUCCESS && isQuiet(h, w) && ticket == h + w
        ? SUCCESS
        : LIBRARY;
  }

  /** The cell after counting one in counter f. */
  static long countCell(long cell, int f) {
    return cell + (1L << (COUNTER_BITS * f));
  }

  /** The writer of {@code counted}, a cell just counted in counter f, must fold f first. */
  static boolean mustFold(long counted, int f, long foldAt) {
    return ((counted >>> (COUNTER_BITS * f)) & foldAt) != 0;
  }

  // --- the hot path -----------------------------------------------------------------

  /**
   * cb_allow by the rules: a ticket (admitted and counted in {@code c}, the calling thread's
   * stripe from {@link #cells()}), {@link #REJECTED_OPEN} or {@link #REJECTED_FORCED_OPEN}
   * (rejected and counted), or {@link #CROSS}: cb_allow must decide.
   */
  static long tryAllow(long h, Cells c) {
    if (c.cells == null) return CROSS;
    int i = (int) (h & INDEX_MASK);
    ByteBuffer lines = chunk(i);
    int line = (i & SLOT_IN_CHUNK) << LINE_SHIFT;
    long w = (long) WORDS.getAcquire(lines, line);
    if (admits(h, w)) {
      c.count(i, h, ADMITTED);
      return admittedTicket(h, w);
    }
    return tryReject(h, c, i, lines, line, w);
  }

  private static long tryReject(long h, Cells c, int i, ByteBuffer lines, int line, long w) {
    int lean = LEAN.get(i >>> CHUNK_BITS);
    long p = 0;
    long now = 0;
    if (needsClock(h, w, lean)) {
      if (!OPEN_SHORTCUT) return CROSS;
      p = (long) WORDS.getOpaque(lines, line + OPEN_PERIOD_OFFSET);
      now = System.nanoTime();
    }
    if (!rejects(h, w, p, lean, now)) return CROSS;
    c.count(i, h, REJECTED);
    return mode(w) == MODE_OPEN ? REJECTED_OPEN : REJECTED_FORCED_OPEN;
  }

  /** Whether tryAllow's answer is a rejection (then: which state, {@link #rejectedState}). */
  static boolean isRejection(long answer) {
    return answer == REJECTED_OPEN || answer == REJECTED_FORCED_OPEN;
  }

  static CircuitBreaker.State rejectedState(long answer) {
    return answer == REJECTED_OPEN ? CircuitBreaker.State.OPEN : CircuitBreaker.State.FORCED_OPEN;
  }

  /**
   * True when the success of {@code ticket} is quiet and counted; false: cb_done must take it.
   * {@code c} is the stripe the call was admitted with: used if this thread owns it (a permit
   * reported on another thread counts in that thread's own).
   */
  static boolean trySucceed(long h, long ticket, Cells c) {
    if (c.ownerId != Thread.currentThread().getId()) c = cells();
    if (c.cells == null) return false;
    int i = (int) (h & INDEX_MASK);
    long w = (long) WORDS.getAcquire(chunk(i), (i & SLOT_IN_CHUNK) << LINE_SHIFT);
    if (decideDone(h, w, ticket, LbNativeConstants.CB_SUCCESS) != SUCCESS) return false;
    c.count(i, h, SUCCESSES);
    return true;
  }

  /**
   * The calling thread's stripe ({@link Cells#NONE} when the quiet path is off): first from
   * BY_THREAD, a table indexed by the thread's id (a field read and a compare, where ThreadLocal's
   * hash lookup costs a few ns), else from the ThreadLocal, which then fills the table's entry.
   * Threads whose ids share an entry take turns in it; each checks the entry is its own.
   */
  static Cells cells() {
    if (!ENABLED) return Cells.NONE;
    long id = Thread.currentThread().getId();
    Cells c = BY_THREAD[(int) id & (BY_THREAD_SIZE - 1)];
    return c != null && c.ownerId == id ? c : cellsOfNewcomer(id);
  }

  private static Cells cellsOfNewcomer(long id) {
    Cells c = CELLS.get();
    // A plain store: Cells' fields are final, so a thread that reads the entry sees them whole.
    if (c != Cells.NONE) BY_THREAD[(int) id & (BY_THREAD_SIZE - 1)] = c;
    return c;
  }

  // --- java.i's natives --------------------------------------------------------

  private static native long[] describe();

  private static native ByteBuffer lineChunk(int chunk);

  private static native ByteBuffer leanRejections();

  private static native ByteBuffer threadCells(int[] stripe);

  private static native void fold(int stripe, long h, int counter);

  private static native long monotonicNanos();
}
