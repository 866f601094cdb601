package io.lazybreaker;

/**
 * How to open a {@link Registry}: the library's {@code cb_registry_options}.
 * Unset fields keep the library's defaults (capacity 65,536 breakers, the
 * monotonic clock, 1,024 queued events, a private registry in memory).
 *
 * <p>With {@link Builder#path} set, the registry is a shared one: a file
 * that every process opening the same path maps, seeing the same breakers,
 * states and counters (docs/shared-registries.md). An existing file's
 * capacity and clock are the file's: leave capacity unset (or 0) to accept
 * it; one that disagrees is refused.
 */
public final class RegistryOptions {
  final Integer capacity;
  final boolean manualClock;
  final Integer eventCapacity;
  final String path;
  final boolean create;
  final boolean exclusive;
  final boolean anyOwner;
  final int mode;

  private RegistryOptions(Builder b) {
    capacity = b.capacity;
    manualClock = b.manualClock;
    eventCapacity = b.eventCapacity;
    path = b.path;
    create = b.create;
    exclusive = b.exclusive;
    anyOwner = b.anyOwner;
    mode = b.mode;
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

  /** The shared registry file, or empty for a private registry. */
  public java.util.Optional<String> path() {
    return java.util.Optional.ofNullable(path);
  }

  cb_registry_options toNative() {
    cb_registry_options o = new cb_registry_options();
    if (capacity != null) o.setCapacity(capacity);
    if (manualClock) o.setClock(LbNativeConstants.CB_CLOCK_MANUAL);
    if (eventCapacity != null) o.setEvent_capacity(eventCapacity);
    long flags =
        (create ? LbNativeConstants.CB_REGISTRY_CREATE : 0)
            | (exclusive ? LbNativeConstants.CB_REGISTRY_EXCLUSIVE : 0)
            | (anyOwner ? LbNativeConstants.CB_REGISTRY_ANY_OWNER : 0);
    o.setFlags(flags);
    o.setMode(Integer.toUnsignedLong(mode));
    return o;
  }

  /**
   * The library's refusal of the field {@code field} (cb_last_error_field) in
   * this builder's words, or null for a field it has none for.
   */
  String refusal(String field) {
    if (field == null) return null;
    switch (field) {
      case "capacity":
        return "capacity must be at most " + LbNativeConstants.CB_MAX_CAPACITY
            + " (0: the default), got " + Integer.toUnsignedString(capacity == null ? 0 : capacity);
      case "event_capacity":
        return "eventCapacity must be at most " + LbNativeConstants.CB_MAX_EVENT_CAPACITY
            + " (0: the default), got "
            + Integer.toUnsignedString(eventCapacity == null ? 0 : eventCapacity);
      case "mode":
        return "mode must be permission bits 0..0777, got 0" + Integer.toOctalString(mode);
      case "flags":
        if (exclusive && !create) return "exclusive(true) needs create(true)";
        if (anyOwner && !create) return "anyOwner(true) needs create(true)";
        return null;
      case "path":
        return "path must name a registry file, got '" + path + "'";
      default:
        return null;
    }
  }

  public static final class Builder {
    private Integer capacity;
    private boolean manualClock;
    private Integer eventCapacity;
    private String path;
    private boolean create;
    private boolean exclusive;
    private boolean anyOwner;
    private int mode;

    private Builder() {}

    /**
     * Opens the shared registry file at {@code file}, which every process
     * opening the same path shares. Without {@link #create(boolean)} the file
     * must exist ({@link java.nio.file.NoSuchFileException} otherwise).
     */
    public Builder path(java.nio.file.Path file) {
      java.util.Objects.requireNonNull(file, "path");
      return path(file.toString());
    }

    /** {@link #path(java.nio.file.Path)} by its text; {@code null} is a private registry again. */
    public Builder path(String file) {
      if (file != null && file.isEmpty()) {
        throw new IllegalArgumentException("path must not be empty");
      }
      path = file;
      return this;
    }

    /** With {@link #path}: create the file if it is missing ({@code CB_REGISTRY_CREATE}). */
    public Builder create(boolean createIfMissing) {
      create = createIfMissing;
      return this;
    }

    /**
     * With {@link #create(boolean)}: fail with {@link
     * java.nio.file.FileAlreadyExistsException} if the file exists ({@code
     * CB_REGISTRY_EXCLUSIVE}).
     */
    public Builder exclusive(boolean mustCreate) {
      exclusive = mustCreate;
      return this;
    }

    /**
     * With {@link #create(boolean)}: use an existing file whoever owns it and whoever may write
     * it ({@code CB_REGISTRY_ANY_OWNER}). Without it, a create refuses, with {@link
     * java.nio.file.AccessDeniedException}, a file at the path that another user than this
     * process's or root owns, or that others may write while {@link #mode} does not grant them
     * that; a symlink at the path is refused either way (docs/shared-registries.md,
     * "Permissions").
     */
    public Builder anyOwner(boolean whoeverOwnsIt) {
      anyOwner = whoeverOwnsIt;
      return this;
    }

    /**
     * The permission bits of a file this open creates, before the umask (e.g.
     * {@code 0660} for a group); 0, the default, is 0600. The library refuses
     * anything but permission bits 0..0777 when the registry opens.
     */
    public Builder mode(int permissionBits) {
      mode = permissionBits;
      return this;
    }

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
