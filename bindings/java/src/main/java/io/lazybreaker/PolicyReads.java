package io.lazybreaker;

import io.lazybreaker.BreakerConfig.Policy;

/**
 * Which {@code cb_config} fields each policy reads, as the library answers {@code
 * cb_policy_reads} (its table, lists.h's {@code CB_POLICY_READS}): {@code CB_FIELD_READ}, {@code
 * CB_FIELD_IGNORED} or {@code CB_FIELD_READ_WITH_SLOW_CALLS}. The binding keeps no table of its
 * own; {@link BreakerConfig.Builder#build()} refuses and infers policies from these answers only.
 * Every (policy, field) pair is asked once, when this class loads, so that a build makes no
 * crossing for it.
 */
final class PolicyReads {
  private static final int[][] ANSWERS = askTheLibrary();

  private PolicyReads() {}

  private static int[][] askTheLibrary() {
    Policy[] policies = Policy.values();
    ConfigField[] fields = ConfigField.values();
    int[][] answers = new int[policies.length][fields.length];
    for (Policy p : policies) {
      for (ConfigField f : fields) answers[p.ordinal()][f.ordinal()] = ask(p, f);
    }
    return answers;
  }

  /** The library's answer for {@code p} and {@code f}, asked now (a JNI crossing). */
  static int ask(Policy p, ConfigField f) {
    return LbNative.cb_policy_reads(p.code, f.field);
  }

  /** The library's answer for {@code p} and {@code f}, as asked once per process. */
  static int of(Policy p, ConfigField f) {
    return ANSWERS[p.ordinal()][f.ordinal()];
  }

  /** Whether {@code p} reads {@code f} whatever the other settings (what inference asks). */
  static boolean reads(Policy p, ConfigField f) {
    return of(p, f) == LbNativeConstants.CB_FIELD_READ;
  }

  /** Whether {@code p} reads {@code f} in a configuration whose slow-call tracking is as given. */
  static boolean reads(Policy p, ConfigField f, boolean slowCallsTracked) {
    int answer = of(p, f);
    return answer == LbNativeConstants.CB_FIELD_READ
        || (answer == LbNativeConstants.CB_FIELD_READ_WITH_SLOW_CALLS && slowCallsTracked);
  }
}
