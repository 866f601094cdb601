package io.lazybreaker;

/**
 * A library error that no standard Java exception names: a corrupt or
 * foreign shared registry file ({@code CB_ECORRUPT}, {@code CB_EVERSION}),
 * a bug in lazybreaker ({@code CB_EINTERNAL}), or a status
 * newer than this binding. {@link #status()} gives the library's code.
 */
public class LazybreakerException extends RuntimeException {
  private static final long serialVersionUID = 1L;
  private final int status;

  public LazybreakerException(int status, String message) {
    super(message);
    this.status = status;
  }

  /** The library's status code (negative), e.g. -12 for {@code CB_EINTERNAL}. */
  public int status() {
    return status;
  }

  /** The status's name in the header ("CB_ECORRUPT"); null for a code the library does not know. */
  public String statusName() {
    return LbNative.cb_status_name(status);
  }
}
