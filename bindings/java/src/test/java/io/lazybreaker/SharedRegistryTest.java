package io.lazybreaker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Shared registries through the Java API: the options pass through to cb_registry_open, and
 * getOrCreate's breakers are shared, so closing them destroys nothing. (The library's own
 * behaviour of the file is pinned in tests/capi/test_shared.cpp; another process's view in
 * tests/shared: cross_language.)
 */
class SharedRegistryTest {
  @TempDir Path dir;

  private static final BreakerConfig ONE_FAILURE_TRIPS =
      BreakerConfig.builder()
          .failureThreshold(1)
          .waitDurationInOpenState(Duration.ofMinutes(5))
          .build();

  private RegistryOptions.Builder shared(Path file) {
    return RegistryOptions.builder().path(file).manualClock(true);
  }

  @Test
  void a_breaker_tripped_through_one_registry_object_is_open_through_a_second_on_the_same_file() {
    Path file = dir.resolve("breakers.lbr");
    try (Registry first = Registry.open(shared(file).create(true).build());
        Registry second = Registry.open(shared(file).build())) {
      CircuitBreaker payments = first.getOrCreate("payments", ONE_FAILURE_TRIPS);
      payments.tryAcquire().failure();
      assertEquals(CircuitBreaker.State.OPEN, payments.state());

      CircuitBreaker seen = second.getOrCreate("payments", ONE_FAILURE_TRIPS);
      assertEquals(CircuitBreaker.State.OPEN, seen.state());
      assertNull(seen.tryAcquire(), "the second registry admitted a call the first's trip rejects");
      assertThrows(CallNotPermittedException.class, () -> seen.executeSupplier(() -> "never"));
      assertTrue(second.lookup("payments").isPresent());
    }
  }

  @Test
  void closing_a_shared_breaker_leaves_it_in_the_file() {
    Path file = dir.resolve("kept.lbr");
    try (Registry reg = Registry.open(shared(file).create(true).build())) {
      CircuitBreaker b = reg.getOrCreate("kept", ONE_FAILURE_TRIPS);
      assertTrue(b.isShared());
      b.trip(Duration.ofMinutes(1));
      b.close();
      assertTrue(b.isClosed());
    }
    try (Registry again = Registry.open(shared(file).build())) {
      CircuitBreaker b = again.lookup("kept").orElseThrow();
      assertEquals(CircuitBreaker.State.OPEN, b.state());
      // What lookup finds in a shared registry is other processes' too:
      // close() destroys nothing either.
      assertTrue(b.isShared());
      b.close();
      assertTrue(again.lookup("kept").isPresent());
    }
  }

  @Test
  void a_create_refuses_a_file_others_may_write_unless_any_owner() {
    Path file = dir.resolve("writable.lbr");
    Registry.open(shared(file).create(true).mode(0666).build()).close();
    UncheckedIOException e =
        assertThrows(
            UncheckedIOException.class, () -> Registry.open(shared(file).create(true).build()));
    assertInstanceOf(java.nio.file.AccessDeniedException.class, e.getCause());
    assertTrue(e.getMessage().contains("mode 0666"), e.getMessage());
    try (Registry reg = Registry.open(shared(file).create(true).anyOwner(true).build())) {
      assertEquals(CircuitBreaker.State.CLOSED, reg.getOrCreate("p", ONE_FAILURE_TRIPS).state());
    }
    assertThrows(
        IllegalArgumentException.class, () -> Registry.open(shared(file).anyOwner(true).build()));
  }

  @Test
  void a_file_locked_by_another_process_is_registry_busy() {
    // The 5 s wait itself is pinned once, in tests/shared/test_trust.cpp.
    Throwable t =
        NativeErrors.toThrowable(
            LbNativeConstants.CB_EBUSY, "f: a process holds it".getBytes(StandardCharsets.UTF_8),
            null);
    RegistryBusyException busy = assertInstanceOf(RegistryBusyException.class, t);
    assertEquals(LbNativeConstants.CB_EBUSY, busy.status());
    assertEquals("f: a process holds it", busy.getMessage());
  }

  @Test
  void a_missing_file_without_create_is_no_such_file() {
    Path file = dir.resolve("missing.lbr");
    UncheckedIOException e =
        assertThrows(UncheckedIOException.class, () -> Registry.open(shared(file).build()));
    assertInstanceOf(NoSuchFileException.class, e.getCause());
    assertTrue(e.getMessage().contains("missing.lbr"), e.getMessage());
    assertFalse(Files.exists(file));
  }

  @Test
  void an_existing_file_with_create_exclusive_is_file_already_exists() {
    Path file = dir.resolve("taken.lbr");
    Registry.open(shared(file).create(true).build()).close();
    UncheckedIOException e =
        assertThrows(
            UncheckedIOException.class,
            () -> Registry.open(shared(file).create(true).exclusive(true).build()));
    assertInstanceOf(FileAlreadyExistsException.class, e.getCause());
  }

  @Test
  void get_or_create_with_another_config_is_breaker_exists() {
    try (Registry reg = Registry.open(shared(dir.resolve("cfg.lbr")).create(true).build())) {
      reg.getOrCreate("inventory", ONE_FAILURE_TRIPS);
      BreakerConfig other = BreakerConfig.builder().failureThreshold(7).build();
      assertThrows(BreakerExistsException.class, () -> reg.getOrCreate("inventory", other));
      // the same config again is the same breaker, not an error
      CircuitBreaker same = reg.getOrCreate("inventory", ONE_FAILURE_TRIPS);
      assertEquals(CircuitBreaker.State.CLOSED, same.state());
    }
  }

  @Test
  void mode_gives_the_created_file_its_permission_bits() throws Exception {
    Path file = dir.resolve("group.lbr");
    Registry.open(shared(file).create(true).mode(0640).build()).close();
    assertEquals("rw-r-----", PosixFilePermissions.toString(Files.getPosixFilePermissions(file)));
    Path byDefault = dir.resolve("private.lbr");
    Registry.open(shared(byDefault).create(true).build()).close();
    assertEquals(
        "rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(byDefault)));
  }

  @Test
  void a_file_that_is_no_registry_is_a_lazybreaker_exception_with_the_version_status()
      throws Exception {
    Path file = dir.resolve("notes.txt");
    Files.write(file, "not a registry\n".repeat(1000).getBytes(StandardCharsets.UTF_8));
    LazybreakerException e =
        assertThrows(LazybreakerException.class, () -> Registry.open(shared(file).build()));
    assertEquals(LbNativeConstants.CB_EVERSION, e.status(), e.getMessage());
  }

  @Test
  void an_unreadable_file_is_access_denied() throws Exception {
    Path file = dir.resolve("locked.lbr");
    Registry.open(shared(file).create(true).build()).close();
    Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("---------"));
    // root reads any file: nothing to deny, so the test is skipped, not passed
    assumeFalse(Files.isReadable(file), "this user may read a file of mode 000 (root)");
    UncheckedIOException e =
        assertThrows(UncheckedIOException.class, () -> Registry.open(shared(file).build()));
    assertInstanceOf(java.nio.file.AccessDeniedException.class, e.getCause());
  }
}
