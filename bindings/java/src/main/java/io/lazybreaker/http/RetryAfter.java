package io.lazybreaker.http;

import java.time.Duration;
import java.time.Instant;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.Optional;

/**
 * A {@code Retry-After} header's wait (docs/http.md): delta-seconds or an
 * HTTP date, counted from the wall clock; nothing for a value that is
 * missing, unreadable, zero or past; at most the library's longest open
 * duration (366 days).
 */
public final class RetryAfter {
  /** CB_MAX_DURATION_NS: the longest a trip can last. */
  static final Duration LONGEST = Duration.ofDays(366);

  private RetryAfter() {}

  /** The wait {@code header} asks for, seen at {@code now}. */
  public static Optional<Duration> parse(String header, Instant now) {
    if (header == null) return Optional.empty();
    String v = header.trim();
    if (v.isEmpty()) return Optional.empty();
    Duration wait;
    if (v.chars().allMatch(c -> c >= '0' && c <= '9')) {
      // delta-seconds: a longer number than a long holds is "very long"
      wait = v.length() > 18 ? LONGEST : Duration.ofSeconds(Long.parseLong(v));
    } else {
      try {
        Instant at = ZonedDateTime.parse(v, DateTimeFormatter.RFC_1123_DATE_TIME).toInstant();
        wait = Duration.between(now, at);
      } catch (DateTimeParseException e) {
        return Optional.empty();
      }
    }
    if (wait.isNegative() || wait.isZero()) return Optional.empty();
    return Optional.of(wait.compareTo(LONGEST) > 0 ? LONGEST : wait);
  }
}
