package io.lazybreaker;

/**
 * How to open a {@link Registry}: the library's {@code cb_registry_options}.
 * Unset fields keep the library's defaults (capacity 65,536 breakers, the
 * monotonic clock, 1,024 queued events).
 */
public final class RegistryOptions {
  final Integer capacity;
  final boolean manualClock;
  final Integer eventCapacity;

  private RegistryOptions(Builder b) {
    capacity = b.capacity;
    manualClock = b.manualClock;
    eventCapacity = b.eventCapacity;
  }

  public static Builder builder() {
    return new Builder();
  }

  /** The library's defaults. */
  public static RegistryOptions defaults() {
    return builder().build();
  }

  public boolean manualClock() {
    return manualClock;
  }

  cb_registry_options toNative() {
    cb_registry_options o = new cb_registry_options();
    if (capacity != null) o.setCapacity(capacity);
    if (manualClock) o.setClock(LbNativeConstants.CB_CLOCK_MANUAL);
    if (eventCapacity != null) o.setEvent_capacity(eventCapacity);
    return o;
  }

  public static final class Builder {
    private Integer capacity;
    private boolean manualClock;
    private Integer eventCapacity;

    private Builder() {}

    /** The most breakers the registry may hold (1..4,194,304; 0 is the default 65,536). */
    public Builder capacity(int breakers) {
      if (breakers < 0) throw new IllegalArgumentException("capacity must not be negative");
      capacity = breakers;
      return this;
    }

    /** A clock that starts at zero and moves only by {@link Registry#advance}: for tests. */
    public Builder manualClock(boolean manual) {
      manualClock = manual;
      return this;
    }

    /** Events the queue holds before it drops the oldest (0 is the default 1,024). */
    public Builder eventCapacity(int events) {
      if (events < 0) throw new IllegalArgumentException("eventCapacity must not be negative");
      eventCapacity = events;
      return this;
    }

    public RegistryOptions build() {
      return new RegistryOptions(this);
    }
  }
}
