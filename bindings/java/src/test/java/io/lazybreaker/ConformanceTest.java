package io.lazybreaker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

/**
 * Every scenario of tests/conformance passes in Java, on a clock that starts at 0 and at the
 * clock offset: the step streams that lb_conformance writes at build time (the directory comes
 * from the system property lazybreaker.conformance.steps); the runner proves it skips nothing by
 * finding the mismatch in each mismatch self-test. The quiet path is on (the default), so the
 * scenarios' calls that the quiet path's rules admit or reject are made in Java and agree with C.
 */
class ConformanceTest {
  static Path dir() {
    String d = System.getProperty("lazybreaker.conformance.steps");
    if (d == null) throw new IllegalStateException("-Dlazybreaker.conformance.steps is not set");
    return Path.of(d);
  }

  static List<Path> streams(Path dir) throws IOException {
    try (Stream<Path> s = Files.list(dir)) {
      return s.filter(p -> p.toString().endsWith(".steps")).sorted().collect(Collectors.toList());
    }
  }

  private static DynamicTest expect(Path file, int expected) {
    return DynamicTest.dynamicTest(
        dir().relativize(file).toString(),
        () -> {
          ByteArrayOutputStream out = new ByteArrayOutputStream();
          ByteArrayOutputStream err = new ByteArrayOutputStream();
          int got =
              ConformanceRunner.runStream(
                  file,
                  new PrintStream(out, true, StandardCharsets.UTF_8),
                  new PrintStream(err, true, StandardCharsets.UTF_8));
          assertEquals(
              expected,
              got,
              () -> out.toString(StandardCharsets.UTF_8) + err.toString(StandardCharsets.UTF_8));
        });
  }

  @Test
  void the_scenarios_run_with_the_quiet_path_on() {
    // Every scenario's CLOSED calls then go through QuietPath, and must agree with C.
    assertTrue(QuietPath.ENABLED, "the library publishes layout 1: the quiet path is on");
  }

  @TestFactory
  Stream<DynamicTest> every_scenario_passes() throws IOException {
    List<Path> files = streams(dir());
    assertFalse(files.isEmpty(), "no step streams in " + dir());
    return files.stream().map(f -> expect(f, ConformanceRunner.PASS));
  }

  @TestFactory
  Stream<DynamicTest> every_mismatch_selftest_fails_with_a_mismatch() throws IOException {
    List<Path> files = streams(dir().resolve("selftest/mismatch"));
    assertFalse(files.isEmpty());
    return files.stream().map(f -> expect(f, ConformanceRunner.MISMATCH));
  }
}
