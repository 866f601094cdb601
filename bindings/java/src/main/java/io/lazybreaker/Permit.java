package io.lazybreaker;

/**
 * One admitted call, from {@link CircuitBreaker#tryAcquire()}: report its
 * outcome once, with {@link #success()}, {@link #failure()} or {@link
 * #ignore()}. Closing a permit that has no verdict reports a failure, so
 * try-with-resources around a call that throws is correct:
 *
 * <pre>{@code
 * try (Permit p = breaker.tryAcquire()) {   // null when rejected: check first
 *   call();
 *   p.success();
 * }                                          // an exception: reported as a failure
 * }</pre>
 *
 * A permit belongs to the thread that acquired it (it is not synchronized). A
 * permit dropped without a verdict reports nothing; the library's probe lease
 * and stale-ticket rule keep the breaker safe then.
 */
public final class Permit implements AutoCloseable {
  private final CircuitBreaker breaker;
  private final long ticket;
  private final QuietPath.Cells cells; // the stripe the call was admitted with
  private boolean reported;

  Permit(CircuitBreaker breaker, long ticket, QuietPath.Cells cells) {
    this.breaker = breaker;
    this.ticket = ticket;
    this.cells = cells;
  }

  /** The call succeeded. @throws IllegalStateException if already reported */
  public void success() {
    report(LbNativeConstants.CB_SUCCESS);
  }

  /** The call failed and counts against the dependency. */
  public void failure() {
    report(LbNativeConstants.CB_FAILURE);
  }

  /** Neither: e.g. a cancellation or a client error; counted nowhere. */
  public void ignore() {
    report(LbNativeConstants.CB_IGNORED);
  }

  /** The library's ticket (for the conformance runner, which may report one twice). */
  long ticket() {
    return ticket;
  }

  CircuitBreaker breaker() {
    return breaker;
  }

  /** Whether a verdict has been reported (or the permit closed). */
  public boolean isReported() {
    return reported;
  }

  /** Reports a failure unless a verdict was reported; else does nothing. */
  @Override
  public void close() {
    if (!reported) report(LbNativeConstants.CB_FAILURE);
  }

  private void report(int outcome) {
    if (reported) {
      throw new IllegalStateException(
          "this permit of '" + breaker.name() + "' has already been reported");
    }
    reported = true;
    breaker.done(ticket, outcome, cells);
  }
}
