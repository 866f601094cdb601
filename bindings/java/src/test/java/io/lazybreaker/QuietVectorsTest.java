package io.lazybreaker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * QuietPath's rules give, for every vector of the file LB_QUIET_VECTORS names, the decision
 * that include/lazybreaker/fastpath.h's own static inline functions computed
 * (tests/quiet_vectors; its format is docs/fastpath.md's). The functions checked are the ones
 * QuietPath's hot path calls. Fails on the first mismatch, naming the file's line.
 */
class QuietVectorsTest {
  private static final Map<String, Integer> ALLOW =
      Map.of("admit", QuietPath.ADMIT, "reject", QuietPath.REJECT, "library", QuietPath.LIBRARY);
  private static final Map<String, Integer> DONE =
      Map.of("success", QuietPath.SUCCESS, "library", QuietPath.LIBRARY);

  @Test
  void every_vector_of_the_header_gives_the_decision_of_the_java_port() throws IOException {
    String file = System.getenv("LB_QUIET_VECTORS");
    assertNotNull(file, "LB_QUIET_VECTORS must name the vectors file (tests/quiet_vectors)");
    List<String> lines = Files.readAllLines(Path.of(file));
    int allow = 0;
    int done = 0;
    int count = 0;
    for (int n = 0; n < lines.size(); n++) {
      String line = lines.get(n);
      if (line.isEmpty() || line.startsWith("#")) continue;
      String where = file + ":" + (n + 1) + ": " + line;
      String[] t = line.split(" ", -1);
      switch (t[0]) {
        case "allow":
          checkAllow(where, t);
          allow++;
          break;
        case "done":
          checkDone(where, t);
          done++;
          break;
        case "count":
          checkCount(where, t);
          count++;
          break;
        default:
          fail(where + ": no such kind of vector");
      }
    }
    System.out.printf(
        "%s: checked %d allow, %d done and %d count vectors%n", file, allow, done, count);
    assertTrue(allow > 0 && done > 0 && count > 0,
        file + " must hold vectors of each kind: " + allow + " allow, " + done + " done, "
            + count + " count");
  }

  /** allow h w p lean now decision ticket */
  private static void checkAllow(String where, String[] t) {
    fields(where, t, 8);
    long h = hex(where, t[1]);
    long w = hex(where, t[2]);
    long p = hex(where, t[3]);
    int lean = (int) hex(where, t[4]);
    long now = hex(where, t[5]);
    int decision = QuietPath.decideAllow(h, w, p, lean, now);
    assertEquals(named(where, ALLOW, t[6]), decision, where + ": decision");
    long ticket = decision == QuietPath.ADMIT ? QuietPath.admittedTicket(h, w) : 0;
    assertEquals(hex(where, t[7]), ticket, () -> where + ": ticket " + Long.toHexString(ticket));
    // tryAllow reads the period word and the clock only when needsClock says the rule
    // compares them: otherwise they must not change the answer.
    if (decision != QuietPath.ADMIT && !QuietPath.needsClock(h, w, lean)) {
      assertEquals(QuietPath.rejects(h, w, p, lean, now), QuietPath.rejects(h, w, 0, lean, 0),
          where + ": a rejection without needsClock depends on the period word or the clock");
    }
  }

  /** done h w ticket outcome decision */
  private static void checkDone(String where, String[] t) {
    fields(where, t, 6);
    int decision =
        QuietPath.decideDone(
            hex(where, t[1]), hex(where, t[2]), hex(where, t[3]), (int) hex(where, t[4]));
    assertEquals(named(where, DONE, t[5]), decision, where + ": decision");
  }

  /** count cell counter fold_at new_cell fold */
  private static void checkCount(String where, String[] t) {
    fields(where, t, 6);
    int f = (int) hex(where, t[2]);
    long counted = QuietPath.countCell(hex(where, t[1]), f);
    assertEquals(hex(where, t[4]), counted,
        () -> where + ": new cell " + Long.toHexString(counted));
    boolean fold = QuietPath.mustFold(counted, f, hex(where, t[3]));
    assertEquals(hex(where, t[5]) != 0, fold, where + ": fold");
  }

  private static void fields(String where, String[] t, int expected) {
    if (t.length != expected) fail(where + ": " + expected + " fields expected, got " + t.length);
  }

  private static long hex(String where, String token) {
    try {
      return Long.parseUnsignedLong(token, 16);
    } catch (NumberFormatException e) {
      throw new AssertionError(where + ": not a hex number: \"" + token + "\"", e);
    }
  }

  private static int named(String where, Map<String, Integer> decisions, String token) {
    Integer d = decisions.get(token);
    if (d == null) fail(where + ": no such decision \"" + token + "\"");
    return d;
  }
}
