package io.lazybreaker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lazybreaker.http.HttpBreakerNames;
import io.lazybreaker.http.RetryAfter;
import java.net.URI;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** docs/http.md's name table and Retry-After rules, for io.lazybreaker.http. */
class HttpNamesTest {
  @Test
  void the_table_of_docs_http_md() {
    assertEquals("http/api.example.com:443", HttpBreakerNames.of(URI.create("https://API.Example.com/v1/users?page=2")));
    assertEquals("http/api.example.com:80", HttpBreakerNames.of(URI.create("http://api.example.com/")));
    assertEquals("http/127.0.0.1:8080", HttpBreakerNames.of(URI.create("http://127.0.0.1:8080/health")));
    assertEquals("http/xn--bcher-kva.example:443", HttpBreakerNames.of(URI.create("https://bücher.example/")));
    assertEquals("http/[2001:db8::1]:8443", HttpBreakerNames.of(URI.create("http://[2001:DB8:0:0::1]:8443/")));
  }

  @Test
  void scheme_path_query_and_user_info_are_left_out() {
    assertEquals("http/api.example.com:80", HttpBreakerNames.of(URI.create("https://user:pw@api.example.com:80/v2")));
  }

  @Test
  void ipv6_in_its_shortest_form() {
    assertEquals("http/[::1]:80", HttpBreakerNames.of(URI.create("http://[0:0:0:0:0:0:0:1]/")));
    assertEquals("http/[2001:db8:0:1::]:80", HttpBreakerNames.of("http", "[2001:db8:0:1:0:0:0:0]", -1));
    assertEquals("http/[2001:db8::1:0:0:1]:80", HttpBreakerNames.of("http", "2001:db8:0:0:1:0:0:1", -1));
  }

  @Test
  void bad_input_is_refused() {
    assertThrows(IllegalArgumentException.class, () -> HttpBreakerNames.of(URI.create("mailto:a@b.c")));
    assertThrows(IllegalArgumentException.class, () -> HttpBreakerNames.of("ftp", "h", -1));
    assertThrows(NullPointerException.class, () -> HttpBreakerNames.of((URI) null));
  }

  @Test
  void retry_after_seconds_dates_and_nothing() {
    Instant now = Instant.parse("2026-10-21T07:27:00Z");
    assertEquals(Optional.of(Duration.ofSeconds(120)), RetryAfter.parse("120", now));
    assertEquals(Optional.of(Duration.ofSeconds(60)), RetryAfter.parse("Wed, 21 Oct 2026 07:28:00 GMT", now));
    for (String none : new String[] {null, "", "0", "-1", "soon", "Wed, 21 Oct 2026 07:26:00 GMT"}) {
      assertTrue(RetryAfter.parse(none, now).isEmpty(), none);
    }
    assertEquals(Optional.of(Duration.ofDays(366)), RetryAfter.parse("99999999999999999999999", now));
  }
}
