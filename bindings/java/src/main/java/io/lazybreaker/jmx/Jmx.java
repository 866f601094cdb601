package io.lazybreaker.jmx;

import io.lazybreaker.CircuitBreaker;
import io.lazybreaker.Registry;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import javax.management.InstanceAlreadyExistsException;
import javax.management.InstanceNotFoundException;
import javax.management.JMException;
import javax.management.MBeanServer;
import javax.management.MalformedObjectNameException;
import javax.management.ObjectName;
import javax.management.StandardMBean;

/**
 * Registers breakers on the platform MBean server, on request (nothing is
 * registered by itself): one MXBean per breaker, named {@code
 * io.lazybreaker:type=CircuitBreaker,name=<quoted name>}.
 */
public final class Jmx {
  private Jmx() {}

  /** The object name of {@code breaker}'s MBean (its name quoted, so any name fits). */
  public static ObjectName objectName(CircuitBreaker breaker) {
    try {
      return new ObjectName(
          "io.lazybreaker:type=CircuitBreaker,name=" + ObjectName.quote(breaker.name()));
    } catch (MalformedObjectNameException e) {
      throw new IllegalStateException("a quoted name is always well formed", e);
    }
  }

  /**
   * Registers {@code breaker}'s MBean, replacing one registered under its
   * name before (a breaker of that name closed and made again).
   *
   * @return its object name
   */
  public static ObjectName register(CircuitBreaker breaker) {
    Objects.requireNonNull(breaker, "breaker");
    MBeanServer server = ManagementFactory.getPlatformMBeanServer();
    ObjectName name = objectName(breaker);
    StandardMBean bean = new StandardMBean(new View(breaker), CircuitBreakerMXBean.class, true);
    try {
      try {
        server.registerMBean(bean, name);
      } catch (InstanceAlreadyExistsException e) {
        unregister(name);
        server.registerMBean(bean, name);
      }
    } catch (JMException e) {
      throw new IllegalStateException("could not register " + name, e);
    }
    return name;
  }

  /** Registers the MBean of every live breaker of {@code registry}; their object names. */
  public static List<ObjectName> registerAll(Registry registry) {
    List<ObjectName> names = new ArrayList<>();
    for (CircuitBreaker b : registry.breakers()) names.add(register(b));
    return names;
  }

  /** Removes {@code breaker}'s MBean; nothing if none is registered. */
  public static void unregister(CircuitBreaker breaker) {
    unregister(objectName(breaker));
  }

  private static void unregister(ObjectName name) {
    try {
      ManagementFactory.getPlatformMBeanServer().unregisterMBean(name);
    } catch (InstanceNotFoundException gone) {
      // nothing to remove
    } catch (JMException e) {
      throw new IllegalStateException("could not unregister " + name, e);
    }
  }

  /** The MXBean's reads and operations on one breaker. */
  private static final class View implements CircuitBreakerMXBean {
    private final CircuitBreaker breaker;

    View(CircuitBreaker breaker) {
      this.breaker = breaker;
    }

    @Override
    public String getName() {
      return breaker.name();
    }

    @Override
    public String getState() {
      return breaker.state().label();
    }

    @Override
    public long getRetryAfterMillis() {
      Duration d = breaker.retryAfter();
      if (d.equals(ChronoUnit.FOREVER.getDuration())) return -1;
      // rounded up: "0" must mean a call would be admitted now
      return d.toMillis() + (d.minusMillis(d.toMillis()).isZero() ? 0 : 1);
    }

    @Override
    public long getAdmitted() {
      return breaker.stats().admitted;
    }

    @Override
    public long getRejected() {
      return breaker.stats().rejected;
    }

    @Override
    public long getSuccesses() {
      return breaker.stats().successes;
    }

    @Override
    public long getFailures() {
      return breaker.stats().failures;
    }

    @Override
    public long getIgnored() {
      return breaker.stats().ignored;
    }

    @Override
    public long getTrips() {
      return breaker.stats().trips;
    }

    @Override
    public long getConsecutiveFailures() {
      return breaker.stats().consecutiveFailures;
    }

    @Override
    public long getSlowCalls() {
      return breaker.stats().slow;
    }

    @Override
    public double getFailureRate() {
      return breaker.stats().failureRate;
    }

    @Override
    public double getSlowCallRate() {
      return breaker.stats().slowRate;
    }

    @Override
    public long getMillisInState() {
      return breaker.stats().timeInState.toMillis();
    }

    @Override
    public void reset() {
      breaker.reset();
    }

    @Override
    public void forceOpen() {
      breaker.forceOpen();
    }

    @Override
    public void disable() {
      breaker.disable();
    }
  }
}
