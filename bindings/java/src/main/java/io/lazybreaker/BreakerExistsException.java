package io.lazybreaker;

/** {@code CB_EEXIST}: the registry already holds a breaker of that name. */
public class BreakerExistsException extends IllegalArgumentException {
  private static final long serialVersionUID = 1L;

  public BreakerExistsException(String message) {
    super(message);
  }
}
