package io.lazybreaker;

import java.util.List;
import java.util.function.Predicate;

/**
 * How {@code execute*} treats a call: which outcome it reports, as
 * resilience4j decides it, and whether its rejections carry a stack trace.
 */
final class Classifier {
  static final Classifier DEFAULT = new Classifier(List.of(), List.of(), null, null, false);

  private final List<Class<? extends Throwable>> record;
  private final List<Class<? extends Throwable>> ignore;
  private final Predicate<Throwable> recordException;
  private final Predicate<Object> recordResult;
  final boolean writableStackTrace;

  Classifier(
      List<Class<? extends Throwable>> record,
      List<Class<? extends Throwable>> ignore,
      Predicate<Throwable> recordException,
      Predicate<Object> recordResult,
      boolean writableStackTrace) {
    this.record = record;
    this.ignore = ignore;
    this.recordException = recordException;
    this.recordResult = recordResult;
    this.writableStackTrace = writableStackTrace;
  }

  private static boolean matches(List<Class<? extends Throwable>> types, Throwable t) {
    for (Class<? extends Throwable> c : types) if (c.isInstance(t)) return true;
    return false;
  }

  /**
   * Ignored wins; then a failure if it is recorded: by default every exception
   * is; with recordExceptions or recordException set, one that a listed type
   * or the predicate matches (either, as resilience4j combines them).
   */
  int ofException(Throwable t) {
    if (matches(ignore, t)) return LbNativeConstants.CB_IGNORED;
    boolean recorded =
        record.isEmpty() && recordException == null
            || matches(record, t)
            || recordException != null && recordException.test(t);
    return recorded ? LbNativeConstants.CB_FAILURE : LbNativeConstants.CB_SUCCESS;
  }

  int ofResult(Object result) {
    return recordResult != null && recordResult.test(result)
        ? LbNativeConstants.CB_FAILURE
        : LbNativeConstants.CB_SUCCESS;
  }
}
