package io.lazybreaker.http;

import io.lazybreaker.CircuitBreaker;
import java.time.Duration;
import java.time.temporal.ChronoUnit;

/**
 * The 503 a server-side integration answers while its breaker rejects
 * (docs/http.md, "Server side"): the {@code Retry-After} in whole seconds,
 * rounded up and at least 1, absent while forced open, and an RFC 9457
 * problem+json body with the fields every language writes.
 */
public final class ShedAnswer {
  /** The answer's status. */
  public static final int STATUS = 503;
  /** The answer's Content-Type. */
  public static final String CONTENT_TYPE = "application/problem+json";

  private final long retryAfterSeconds; // -1: forced open, no Retry-After
  private final String body;

  private ShedAnswer(long retryAfterSeconds, String body) {
    this.retryAfterSeconds = retryAfterSeconds;
    this.body = body;
  }

  /**
   * The answer to a request for {@code path} (without its query) that {@code
   * breaker} has just rejected, from its state and wait now.
   */
  public static ShedAnswer of(CircuitBreaker breaker, String path) {
    CircuitBreaker.State state = breaker.state();
    Duration wait = breaker.retryAfter();
    boolean forced = state == CircuitBreaker.State.FORCED_OPEN
        || wait.equals(ChronoUnit.FOREVER.getDuration());
    long seconds = forced ? -1 : Math.max(1, ceilSeconds(wait));
    String name = breaker.name();
    String label = forced ? "forced_open" : state.label();
    String detail = forced
        ? "The circuit '" + name + "' is forced open until an operator resets it."
        : "The circuit '" + name + "' is " + label + ": retry after " + seconds + " s.";
    String body = "{\"type\":\"about:blank\",\"title\":\"Service Unavailable\",\"status\":503,"
        + "\"detail\":" + json(detail) + ",\"instance\":" + json(path) + ",\"circuit\":" + json(name)
        + ",\"state\":" + json(label) + ",\"retryAfter\":" + (forced ? "null" : Long.toString(seconds))
        + "}";
    return new ShedAnswer(seconds, body);
  }

  private static long ceilSeconds(Duration d) {
    return d.getSeconds() + (d.getNano() > 0 ? 1 : 0);
  }

  /** The Retry-After header's value, or null when it is left out (forced open). */
  public String retryAfterHeader() {
    return retryAfterSeconds < 0 ? null : Long.toString(retryAfterSeconds);
  }

  /** The problem+json body. */
  public String body() {
    return body;
  }

  /** {@code s} as a JSON string literal. */
  static String json(String s) {
    StringBuilder sb = new StringBuilder(s.length() + 2).append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"': sb.append("\\\""); break;
        case '\\': sb.append("\\\\"); break;
        case '\n': sb.append("\\n"); break;
        case '\r': sb.append("\\r"); break;
        case '\t': sb.append("\\t"); break;
        default:
          if (c < 0x20) sb.append(String.format("\\u%04x", (int) c));
          else sb.append(c);
      }
    }
    return sb.append('"').toString();
  }
}
