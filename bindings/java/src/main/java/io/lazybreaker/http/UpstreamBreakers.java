package io.lazybreaker.http;

import io.lazybreaker.BreakerConfig;
import io.lazybreaker.CircuitBreaker;
import io.lazybreaker.Registry;
import java.net.URI;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * The breakers of a client's upstreams: made with {@code getOrCreate} in the
 * caller's registry the first time an upstream is called. By the convention
 * (one breaker per {@code http/<host>:<port>}) each is then found by the
 * URL's scheme and authority, without naming it again.
 */
public final class UpstreamBreakers {
  private final Registry registry;
  private final BreakerConfig config;
  private final Function<URI, String> naming; // null: by the convention, cached by origin
  private final ConcurrentHashMap<String, CircuitBreaker> byOrigin = new ConcurrentHashMap<>();

  private UpstreamBreakers(Registry registry, BreakerConfig config, Function<URI, String> naming) {
    this.registry = Objects.requireNonNull(registry, "registry");
    this.config = Objects.requireNonNull(config, "config");
    this.naming = naming;
  }

  /** One breaker per {@code http/<host>:<port>} (docs/http.md). */
  public static UpstreamBreakers byConvention(Registry registry, BreakerConfig config) {
    return new UpstreamBreakers(registry, config, null);
  }

  /**
   * The breaker {@code naming} names for each request's URI (e.g. one per
   * API rather than per host); asked on every request.
   */
  public static UpstreamBreakers named(
      Registry registry, BreakerConfig config, Function<URI, String> naming) {
    return new UpstreamBreakers(registry, config, Objects.requireNonNull(naming, "naming"));
  }

  /** The breaker of {@code uri}'s upstream. */
  public CircuitBreaker of(URI uri) {
    if (naming != null) return registry.getOrCreate(naming.apply(uri), config);
    String origin = uri.getScheme() + "://" + uri.getRawAuthority();
    CircuitBreaker b = byOrigin.get(origin);
    if (b == null || b.isClosed()) {
      b = registry.getOrCreate(HttpBreakerNames.of(uri), config);
      byOrigin.put(origin, b);
    }
    return b;
  }
}
