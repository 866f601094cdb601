package io.lazybreaker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lazybreaker.jmx.Jmx;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.List;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The MBeans, read and operated through the platform MBeanServer as JConsole does. */
class JmxTest {
  private final Registry reg = Registry.withManualClock();
  private final MBeanServer server = ManagementFactory.getPlatformMBeanServer();

  @AfterEach
  void close() {
    for (CircuitBreaker b : reg.breakers()) Jmx.unregister(b);
    reg.close();
  }

  @Test
  void attributes_are_the_libraries_answers_now() throws Exception {
    CircuitBreaker b = reg.create("pay,ments=\"x\"",
        BreakerConfig.builder().failureThreshold(2).waitDurationInOpenState(Duration.ofSeconds(30)).build());
    ObjectName name = Jmx.register(b);
    assertEquals(new ObjectName("io.lazybreaker:type=CircuitBreaker,name=" + ObjectName.quote(b.name())), name);
    assertEquals(b.name(), server.getAttribute(name, "Name"));
    assertEquals("closed", server.getAttribute(name, "State"));
    b.tryAcquire().success();
    b.tryAcquire().failure();
    b.tryAcquire().failure();
    assertEquals("open", server.getAttribute(name, "State"));
    assertEquals(1L, server.getAttribute(name, "Successes"));
    assertEquals(2L, server.getAttribute(name, "Failures"));
    assertEquals(3L, server.getAttribute(name, "Admitted"));
    assertEquals(1L, server.getAttribute(name, "Trips"));
    assertEquals(30_000L, server.getAttribute(name, "RetryAfterMillis"));
    reg.advance(Duration.ofMillis(10_500));
    assertEquals(19_500L, server.getAttribute(name, "RetryAfterMillis"));
    assertEquals(10_500L, server.getAttribute(name, "MillisInState"));
  }

  @Test
  void operations_reset_force_open_and_disable() throws Exception {
    CircuitBreaker b = reg.create("ops");
    ObjectName name = Jmx.register(b);
    server.invoke(name, "forceOpen", null, null);
    assertEquals(CircuitBreaker.State.FORCED_OPEN, b.state());
    assertEquals(-1L, server.getAttribute(name, "RetryAfterMillis"));
    server.invoke(name, "disable", null, null);
    assertEquals(CircuitBreaker.State.DISABLED, b.state());
    server.invoke(name, "reset", null, null);
    assertEquals(CircuitBreaker.State.CLOSED, b.state());
  }

  @Test
  void register_all_and_unregister() throws Exception {
    reg.create("a");
    reg.create("b");
    List<ObjectName> names = Jmx.registerAll(reg);
    assertEquals(2, names.size());
    for (ObjectName n : names) assertTrue(server.isRegistered(n));
    assertEquals(2, server.queryNames(new ObjectName("io.lazybreaker:type=CircuitBreaker,*"), null)
        .stream().filter(names::contains).count());
    CircuitBreaker a = reg.lookup("a").orElseThrow();
    Jmx.unregister(a);
    assertFalse(server.isRegistered(Jmx.objectName(a)));
    Jmx.unregister(a); // nothing left: no error
    Jmx.register(a);
    Jmx.register(a); // registered again: replaced, not refused
    assertTrue(server.isRegistered(Jmx.objectName(a)));
  }

  @Test
  void bad_input_is_refused() {
    org.junit.jupiter.api.Assertions.assertThrows(NullPointerException.class, () -> Jmx.register(null));
  }
}
