package io.lazybreaker;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Breaker configurations by name, read from properties laid out as
 * resilience4j's Spring Boot module lays them out:
 *
 * <pre>
 * resilience4j.circuitbreaker.configs.default.failure-rate-threshold=25
 * resilience4j.circuitbreaker.configs.shared.waitDurationInOpenState=PT10S
 * resilience4j.circuitbreaker.instances.payments.baseConfig=shared
 * resilience4j.circuitbreaker.instances.payments.recordExceptions[0]=java.io.IOException
 * </pre>
 *
 * Every configuration and instance starts from {@code configs.default} (itself
 * from the library's defaults), or from the {@code configs.<name>} its {@code
 * baseConfig} names, and overrides what it sets. Every configuration is built
 * (and so validated by the library) when the properties are read: a mistake
 * is found at start-up, in an {@link IllegalArgumentException} naming the
 * property.
 */
public final class BreakerConfigs {
  private static final Pattern INDEXED = Pattern.compile("(.*)\\[(\\d+)]");
  private static final String DEFAULT = "default";

  private final Map<String, BreakerConfig> instances;
  private final BreakerConfig defaultConfig;

  private BreakerConfigs(Map<String, BreakerConfig> instances, BreakerConfig defaultConfig) {
    this.instances = instances;
    this.defaultConfig = defaultConfig;
  }

  /**
   * Reads every property under {@code prefix} (e.g. {@code
   * "resilience4j.circuitbreaker"}); properties outside it are left alone.
   *
   * @throws IllegalArgumentException naming the property: a key this binding
   *     does not know or does not apply, a value it cannot read, a {@code
   *     baseConfig} that names no configuration or makes a cycle, a value the
   *     library refuses
   */
  public static BreakerConfigs fromProperties(Properties properties, String prefix) {
    Objects.requireNonNull(properties, "properties");
    Objects.requireNonNull(prefix, "prefix");
    String root = prefix.isEmpty() || prefix.endsWith(".") ? prefix : prefix + ".";
    Map<String, Map<String, Setting>> configs = new TreeMap<>();
    Map<String, Map<String, Setting>> instances = new TreeMap<>();
    for (String key : properties.stringPropertyNames()) {
      if (!key.startsWith(root)) continue;
      String rest = key.substring(root.length());
      int dot = rest.indexOf('.');
      String group = dot < 0 ? rest : rest.substring(0, dot);
      Map<String, Map<String, Setting>> target =
          group.equals("configs") ? configs : group.equals("instances") ? instances : null;
      int nameEnd = dot < 0 ? -1 : rest.indexOf('.', dot + 1);
      if (target == null || nameEnd < 0 || nameEnd == dot + 1 || nameEnd == rest.length() - 1) {
        throw new IllegalArgumentException(key
            + ": not a breaker property (expected " + root + "configs.<name>.<option> or "
            + root + "instances.<name>.<option>)");
      }
      String name = rest.substring(dot + 1, nameEnd);
      Setting s = Setting.of(key, rest.substring(nameEnd + 1), properties.getProperty(key).trim());
      Map<String, Setting> settings = target.computeIfAbsent(name, n -> new LinkedHashMap<>());
      Setting earlier = settings.get(s.option);
      settings.put(s.option, earlier == null ? s : earlier.merge(s));
    }
    Map<String, BreakerConfig> built = new TreeMap<>();
    for (Map.Entry<String, Map<String, Setting>> e : instances.entrySet()) {
      built.put(e.getKey(), build(chain(e.getValue(), configs, new ArrayList<>()), e.getValue()));
    }
    Map<String, Setting> defaults = configs.getOrDefault(DEFAULT, Map.of());
    BreakerConfig defaultConfig = build(chain(defaults, configs, new ArrayList<>()), defaults);
    // a named configuration no instance uses is still checked now
    for (Map<String, Setting> c : configs.values()) build(chain(c, configs, new ArrayList<>()), c);
    return new BreakerConfigs(Collections.unmodifiableMap(built), defaultConfig);
  }

  /** The instances' names ({@code instances.<name>}), sorted. */
  public Set<String> names() {
    return instances.keySet();
  }

  /**
   * The configuration of the instance of that name, else the default one
   * ({@code configs.default}, or the library's defaults), as resilience4j's
   * registry gives a breaker it has no instance for.
   */
  public BreakerConfig config(String name) {
    Objects.requireNonNull(name, "name");
    return instances.getOrDefault(name, defaultConfig);
  }

  /** {@code registry.getOrCreate(name, config(name))}. */
  public CircuitBreaker getOrCreate(Registry registry, String name) {
    return registry.getOrCreate(name, config(name));
  }

  /** Every instance made (or found) in {@code registry}, by name. */
  public Map<String, CircuitBreaker> getOrCreateAll(Registry registry) {
    Map<String, CircuitBreaker> breakers = new LinkedHashMap<>();
    for (String name : names()) breakers.put(name, getOrCreate(registry, name));
    return Collections.unmodifiableMap(breakers);
  }

  /**
   * The settings that apply to {@code own}, oldest first: configs.default (or
   * the baseConfig's chain), then {@code own}.
   */
  private static List<Map<String, Setting>> chain(
      Map<String, Setting> own, Map<String, Map<String, Setting>> configs, List<String> seen) {
    List<Map<String, Setting>> chain;
    Setting base = own.get("baseConfig");
    if (base != null) {
      if (seen.contains(base.value)) {
        throw new IllegalArgumentException(base.key + ": baseConfig '" + base.value
            + "' makes a cycle (" + String.join(" -> ", seen) + " -> " + base.value + ")");
      }
      Map<String, Setting> parent = configs.get(base.value);
      if (parent == null) {
        throw new IllegalArgumentException(base.key + ": no configuration named '" + base.value
            + "' (configs." + base.value + ".*)");
      }
      seen.add(base.value);
      chain = chain(parent, configs, seen);
      chain.add(parent);
    } else {
      chain = new ArrayList<>();
      Map<String, Setting> defaults = configs.get(DEFAULT);
      if (defaults != null && defaults != own) chain.add(defaults);
    }
    return chain;
  }

  private static BreakerConfig build(List<Map<String, Setting>> chain, Map<String, Setting> own) {
    Map<String, Setting> merged = new LinkedHashMap<>();
    for (Map<String, Setting> m : chain) merged.putAll(m);
    merged.putAll(own);
    BreakerConfig.Builder b = BreakerConfig.builder();
    Setting last = null;
    try {
      for (Setting s : merged.values()) {
        last = s;
        s.applyTo(b);
      }
      last = null;
      return b.build();
    } catch (IllegalArgumentException e) {
      String message = String.valueOf(e.getMessage());
      if (last != null && message.startsWith(last.key)) throw e; // names its property already
      // A builder method, or the library validating the whole configuration, refused
      // it: the message starts with the builder option at fault, whose property is named.
      Setting culprit = last != null ? last : merged.get(message.split(" ", 2)[0]);
      String where = culprit != null ? culprit.key
          : own.isEmpty() ? "configs.default"
          : own.values().iterator().next().key.replaceAll("\\.[^.]*$", "");
      throw new IllegalArgumentException(where + ": " + message, e);
    }
  }

  /** One option of one configuration: its property key, option name (camel case) and value. */
  private static final class Setting {
    final String key;
    final String option;
    final String value;
    final List<String> items; // a list option's values in index order

    private Setting(String key, String option, String value, List<String> items) {
      this.key = key;
      this.option = option;
      this.value = value;
      this.items = items;
    }

    static Setting of(String key, String option, String value) {
      Matcher m = INDEXED.matcher(option);
      if (m.matches()) {
        String camel = camel(m.group(1));
        if (!camel.equals("recordExceptions") && !camel.equals("ignoreExceptions")) {
          throw new IllegalArgumentException(key + ": " + camel + " takes no index");
        }
        int index = Integer.parseInt(m.group(2));
        List<String> items = new ArrayList<>(Collections.nCopies(index + 1, (String) null));
        items.set(index, value);
        return new Setting(key, camel, value, items);
      }
      List<String> items = new ArrayList<>();
      for (String part : value.split(",")) if (!part.isBlank()) items.add(part.trim());
      return new Setting(key, camel(option), value, items);
    }

    /** The same list option given twice: by index ([0], [1]), each fills its place. */
    Setting merge(Setting later) {
      List<String> items = new ArrayList<>(this.items);
      for (int i = 0; i < later.items.size(); i++) {
        if (later.items.get(i) == null) continue;
        while (items.size() <= i) items.add(null);
        items.set(i, later.items.get(i));
      }
      return new Setting(key, option, value, items);
    }

    /** kebab-case to camelCase: "failure-rate-threshold" is failureRateThreshold. */
    private static String camel(String option) {
      StringBuilder sb = new StringBuilder(option.length());
      boolean upper = false;
      for (char c : option.toCharArray()) {
        if (c == '-') {
          upper = true;
        } else {
          sb.append(upper ? Character.toUpperCase(c) : c);
          upper = false;
        }
      }
      return sb.toString();
    }

    void applyTo(BreakerConfig.Builder b) {
      switch (option) {
        case "baseConfig":
          return;
        case "failureRateThreshold":
          b.failureRateThreshold(floating("a percent"));
          return;
        case "slowCallRateThreshold":
          b.slowCallRateThreshold(floating("a percent"));
          return;
        case "slowCallDurationThreshold":
          b.slowCallDurationThreshold(duration());
          return;
        case "permittedNumberOfCallsInHalfOpenState":
          b.permittedNumberOfCallsInHalfOpenState(integer());
          return;
        case "maxWaitDurationInHalfOpenState":
          b.maxWaitDurationInHalfOpenState(duration());
          return;
        case "slidingWindowType":
          b.slidingWindowType(windowType());
          return;
        case "slidingWindowSize":
          b.slidingWindowSize(integer());
          return;
        case "minimumNumberOfCalls":
          b.minimumNumberOfCalls(integer());
          return;
        case "waitDurationInOpenState":
          b.waitDurationInOpenState(duration());
          return;
        case "writableStackTraceEnabled":
          b.writableStackTraceEnabled(bool());
          return;
        case "recordExceptions":
          b.recordExceptions(exceptionTypes());
          return;
        case "ignoreExceptions":
          b.ignoreExceptions(exceptionTypes());
          return;
        // this library's own options, under their builder names
        case "failureThreshold":
          b.failureThreshold(integer());
          return;
        case "halfOpenSuccessThreshold":
          b.halfOpenSuccessThreshold(integer());
          return;
        case "windowSize":
          b.windowSize(integer());
          return;
        case "windowDuration":
          b.windowDuration(duration());
          return;
        case "windowBuckets":
          b.windowBuckets(integer());
          return;
        case "openBackoffMultiplier":
          b.openBackoffMultiplier(floating("a number"));
          return;
        case "maxWaitDurationInOpenState":
          b.maxWaitDurationInOpenState(duration());
          return;
        case "openJitter":
          b.openJitter(floating("a number"));
          return;
        case "automaticTransitionFromOpenToHalfOpenEnabled":
          throw new IllegalArgumentException(key + " is not applied: recovery is lazy, the first"
              + " call after waitDurationInOpenState probes (remove the property)");
        case "registerHealthIndicator":
        case "allowHealthIndicatorToFail":
          throw new IllegalArgumentException(key + " is not applied: there is no health indicator"
              + " (read state() or the JMX MBean)");
        case "eventConsumerBufferSize":
          throw new IllegalArgumentException(key + " is not applied: events wait in the"
              + " registry's queue (RegistryOptions.eventCapacity)");
        case "enableExponentialBackoff":
        case "exponentialBackoffMultiplier":
        case "exponentialMaxWaitDurationInOpenState":
        case "enableRandomizedWait":
        case "randomizedWaitFactor":
          throw new IllegalArgumentException(key + " is not applied: use openBackoffMultiplier,"
              + " maxWaitDurationInOpenState and openJitter");
        default:
          throw new IllegalArgumentException(key + ": unknown option '" + option + "'");
      }
    }

    private int integer() {
      try {
        return Integer.parseInt(value);
      } catch (NumberFormatException e) {
        throw bad("a whole number", e);
      }
    }

    private float floating(String what) {
      try {
        float f = Float.parseFloat(value);
        if (Float.isNaN(f)) throw new NumberFormatException("NaN");
        return f;
      } catch (NumberFormatException e) {
        throw bad(what, e);
      }
    }

    private boolean bool() {
      if (value.equalsIgnoreCase("true")) return true;
      if (value.equalsIgnoreCase("false")) return false;
      throw bad("true or false", null);
    }

    private BreakerConfig.SlidingWindowType windowType() {
      try {
        return BreakerConfig.SlidingWindowType.valueOf(
            value.toUpperCase(Locale.ROOT).replace('-', '_'));
      } catch (IllegalArgumentException e) {
        throw bad("COUNT_BASED or TIME_BASED", e);
      }
    }

    /** "PT5S" (ISO-8601), or a number with a unit (ns, us, ms, s, m, h, d), or milliseconds. */
    private Duration duration() {
      if (value.regionMatches(true, 0, "PT", 0, 2) || value.regionMatches(true, 0, "P", 0, 1)) {
        try {
          return Duration.parse(value);
        } catch (DateTimeParseException e) {
          throw bad("a duration (5s, 500ms, PT5S)", e);
        }
      }
      Matcher m = Pattern.compile("(\\d+)\\s*(ns|us|ms|s|m|h|d)?").matcher(value);
      if (!m.matches()) throw bad("a duration (5s, 500ms, PT5S)", null);
      long n;
      try {
        n = Long.parseLong(m.group(1));
      } catch (NumberFormatException e) {
        throw bad("a duration (5s, 500ms, PT5S)", e);
      }
      String unit = m.group(2) == null ? "ms" : m.group(2);
      try {
        switch (unit) {
          case "ns": return Duration.ofNanos(n);
          case "us": return Duration.ofNanos(Math.multiplyExact(n, 1000L));
          case "ms": return Duration.ofMillis(n);
          case "s": return Duration.ofSeconds(n);
          case "m": return Duration.ofMinutes(n);
          case "h": return Duration.ofHours(n);
          default: return Duration.ofDays(n);
        }
      } catch (ArithmeticException e) {
        throw bad("a duration that fits", e);
      }
    }

    @SuppressWarnings({"unchecked", "rawtypes"}) // an array of a generic type has no other spelling
    private Class<? extends Throwable>[] exceptionTypes() {
      List<Class<? extends Throwable>> types = new ArrayList<>();
      ClassLoader loader = Thread.currentThread().getContextClassLoader();
      if (loader == null) loader = BreakerConfigs.class.getClassLoader();
      for (int i = 0; i < items.size(); i++) {
        String name = items.get(i);
        if (name == null) {
          throw new IllegalArgumentException(key.replaceAll("\\[\\d+]$", "") + "[" + i
              + "] is missing: the indexes of a list run from 0 without a gap");
        }
        Class<?> c;
        try {
          c = Class.forName(name.trim(), false, loader);
        } catch (ClassNotFoundException | LinkageError e) {
          throw new IllegalArgumentException(key + ": no class named " + name, e);
        }
        if (!Throwable.class.isAssignableFrom(c)) {
          throw new IllegalArgumentException(key + ": " + name + " is not a Throwable");
        }
        types.add((Class<? extends Throwable>) c);
      }
      return types.toArray(new Class[0]);
    }

    private IllegalArgumentException bad(String expected, Exception cause) {
      return new IllegalArgumentException(
          key + " must be " + expected + ", got '" + value + "'", cause);
    }
  }
}
