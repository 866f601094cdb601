package io.lazybreaker;

/**
 * {@code CB_EEXIST}: the registry already holds a breaker of that name (from
 * {@link Registry#getOrCreate}: with another configuration, and the message
 * names the first option that differs).
 */
public class BreakerExistsException extends IllegalArgumentException {
  private static final long serialVersionUID = 1L;
  // cb_last_error_field() of the failing call: the first cb_config field
  // that differs, for getOrCreate to name in Java's words.
  private final String field;

  public BreakerExistsException(String message) {
    this(message, (String) null);
  }

  BreakerExistsException(String message, String field) {
    super(message);
    this.field = field;
  }

  BreakerExistsException(String message, Throwable cause) {
    this(message, (String) null);
    initCause(cause);
  }

  String field() {
    return field;
  }
}
