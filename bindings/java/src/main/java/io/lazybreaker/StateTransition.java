package io.lazybreaker;

import java.time.Duration;
import java.util.Objects;

/**
 * One event from a registry's queue ({@link Registry#pollEvents}): a
 * breaker's state transition, or, when {@link Registry#recordRejections} is
 * on, a rejected call ({@link Reason#REJECTED}, {@code from() == to()}).
 * Events of one breaker come in the order its transitions happened.
 */
public final class StateTransition {
  /** Why it happened ({@code cb_reason_t}). */
  public enum Reason {
    CONSECUTIVE_FAILURES(LbNativeConstants.CB_REASON_CONSECUTIVE_FAILURES),
    FAILURE_RATE(LbNativeConstants.CB_REASON_FAILURE_RATE),
    SLOW_CALL_RATE(LbNativeConstants.CB_REASON_SLOW_CALL_RATE),
    OPEN_ELAPSED(LbNativeConstants.CB_REASON_OPEN_ELAPSED),
    PROBE_FAILED(LbNativeConstants.CB_REASON_PROBE_FAILED),
    PROBE_LEASE_EXPIRED(LbNativeConstants.CB_REASON_PROBE_LEASE_EXPIRED),
    PROBES_SUCCEEDED(LbNativeConstants.CB_REASON_PROBES_SUCCEEDED),
    MANUAL(LbNativeConstants.CB_REASON_MANUAL),
    TRIPPED(LbNativeConstants.CB_REASON_TRIPPED),
    REJECTED(LbNativeConstants.CB_REASON_REJECTED),
    /** A reason newer than this binding. */
    UNKNOWN(0);

    final int code;

    Reason(int code) {
      this.code = code;
    }

    static Reason of(int code) {
      for (Reason r : values()) if (r != UNKNOWN && r.code == code) return r;
      return UNKNOWN;
    }

    /** The library's name of the reason ("probe_failed"); null for UNKNOWN. */
    public String label() {
      return this == UNKNOWN ? null : LbNative.cb_reason_name(code);
    }
  }

  private final long sequence;
  private final String breakerName;
  private final CircuitBreaker.State from;
  private final CircuitBreaker.State to;
  private final Reason reason;
  private final Duration at;

  StateTransition(
      long sequence,
      String breakerName,
      CircuitBreaker.State from,
      CircuitBreaker.State to,
      Reason reason,
      Duration at) {
    this.sequence = sequence;
    this.breakerName = breakerName;
    this.from = from;
    this.to = to;
    this.reason = reason;
    this.at = at;
  }

  /** Position in the registry's queue: increasing. */
  public long sequence() {
    return sequence;
  }

  /** The breaker's name ("" if anonymous). */
  public String breakerName() {
    return breakerName;
  }

  public CircuitBreaker.State from() {
    return from;
  }

  public CircuitBreaker.State to() {
    return to;
  }

  public Reason reason() {
    return reason;
  }

  /** When, on the registry's clock. */
  public Duration at() {
    return at;
  }

  @Override
  public boolean equals(Object o) {
    if (!(o instanceof StateTransition)) return false;
    StateTransition t = (StateTransition) o;
    return sequence == t.sequence
        && breakerName.equals(t.breakerName)
        && from == t.from
        && to == t.to
        && reason == t.reason
        && at.equals(t.at);
  }

  @Override
  public int hashCode() {
    return Objects.hash(sequence, breakerName, from, to, reason, at);
  }

  @Override
  public String toString() {
    return "StateTransition{#" + sequence + " '" + breakerName + "' " + from + " -> " + to
        + " (" + reason + ") at " + at + "}";
  }
}
