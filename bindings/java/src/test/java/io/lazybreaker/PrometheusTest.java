package io.lazybreaker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** The Prometheus text parses as exposition format 0.0.4 and carries the breakers' counters. */
class PrometheusTest {
  private static final Pattern HELP = Pattern.compile("# HELP ([a-zA-Z_:][a-zA-Z0-9_:]*) .*");
  private static final Pattern TYPE =
      Pattern.compile("# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram|summary|untyped)");
  private static final Pattern SAMPLE =
      Pattern.compile("([a-zA-Z_:][a-zA-Z0-9_:]*)(\\{(.*)\\})? (\\S+)( -?[0-9]+)?");
  private static final Pattern LABEL =
      Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"((?:[^\"\\\\\\n]|\\\\[\\\\\"n])*)\"(,|$)");

  /** Parses the text; returns sample key (name + labels) to value; fails on anything else. */
  static Map<String, Double> parse(String text) {
    Map<String, Double> samples = new HashMap<>();
    Set<String> typed = new HashSet<>();
    assertTrue(text.endsWith("\n"), "the text ends with a newline");
    for (String line : text.split("\n", -1)) {
      if (line.isEmpty()) continue;
      if (line.startsWith("#")) {
        Matcher t = TYPE.matcher(line);
        if (t.matches()) {
          assertTrue(typed.add(t.group(1)), "one TYPE per metric: " + line);
        } else {
          assertTrue(HELP.matcher(line).matches(), "a comment is HELP or TYPE: " + line);
        }
        continue;
      }
      Matcher m = SAMPLE.matcher(line);
      assertTrue(m.matches(), "not a sample line: " + line);
      String name = m.group(1);
      assertTrue(typed.contains(name) || typed.contains(name.replaceAll("_(sum|count|bucket)$", "")),
          "sample before its TYPE: " + line);
      if (m.group(3) != null) {
        Matcher l = LABEL.matcher(m.group(3));
        int end = 0;
        while (l.find() && l.start() == end) end = l.end();
        assertEquals(m.group(3).length(), end, "bad labels: " + line);
      }
      double v = Double.parseDouble(m.group(4).replace("+Inf", "Infinity").replace("-Inf", "-Infinity"));
      samples.put(name + (m.group(2) == null ? "" : m.group(2)), v);
    }
    return samples;
  }

  @Test
  void the_prometheus_text_parses_and_counts_what_the_stats_count() {
    try (Registry reg = Registry.withManualClock()) {
      CircuitBreaker a = reg.create("payments");
      CircuitBreaker b = reg.create("quote\"and\\backslash");
      for (int i = 0; i < 3; i++) a.tryAcquire().success();
      a.tryAcquire().failure();
      b.forceOpen();
      b.tryAcquire();
      Map<String, Double> s = parse(reg.prometheus());
      assertFalse(s.isEmpty());
      boolean sawPayments = false;
      boolean sawQuoted = false;
      for (String key : s.keySet()) {
        sawPayments |= key.contains("breaker=\"payments\"");
        sawQuoted |= key.contains("breaker=\"quote\\\"and\\\\backslash\"");
      }
      assertTrue(sawPayments, s.keySet().toString());
      assertTrue(sawQuoted, "label values are escaped: " + s.keySet());
      assertEquals(3.0, s.get("lazybreaker_outcomes_total{breaker=\"payments\",outcome=\"success\"}"));
      assertEquals(1.0, s.get("lazybreaker_outcomes_total{breaker=\"payments\",outcome=\"failure\"}"));
      assertEquals(1.0, s.get("lazybreaker_calls_rejected_total{breaker=\"quote\\\"and\\\\backslash\"}"));
      assertEquals(2.0, s.get("lazybreaker_breakers"));
    }
  }
}
