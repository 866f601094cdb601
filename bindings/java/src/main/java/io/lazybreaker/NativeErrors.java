package io.lazybreaker;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.util.NoSuchElementException;

/**
 * The one table from the library's negative statuses to Java exceptions. The
 * JNI glue (bindings/swig/java.i) calls {@link #toThrowable} on the thread of
 * the failing call, with that thread's last error message, and throws what it
 * returns. docs/java.md reproduces the table.
 */
final class NativeErrors {
  private NativeErrors() {}

  /**
   * Called from the JNI glue: the exception for {@code status}. {@code field}
   * is cb_last_error_field() (null when none): it travels with the
   * exceptions a caller renders again in Java's words ({@link
   * RefusedArgument}, {@link BreakerExistsException}).
   */
  static Throwable toThrowable(int status, byte[] messageUtf8, String field) {
    String detail = new String(messageUtf8, StandardCharsets.UTF_8);
    String message = detail.isEmpty() ? statusName(status) : detail;
    switch (status) {
      case LbNativeConstants.CB_EINVAL:
        return new RefusedArgument(message, field);
      case LbNativeConstants.CB_EHANDLE:
        return new IllegalStateException(
            "the breaker is closed (or its registry is): " + message);
      case LbNativeConstants.CB_ENOMEM:
        return new OutOfMemoryError("lazybreaker: native memory: " + message);
      case LbNativeConstants.CB_EEXIST:
        return new BreakerExistsException(message, field);
      case LbNativeConstants.CB_ENOENT:
        return new NoSuchElementException(message);
      case LbNativeConstants.CB_EFULL:
        return new RegistryFullException(message);
      case LbNativeConstants.CB_EIO:
        return new UncheckedIOException(message, new IOException(message));
      case LbNativeConstants.CB_EPERM:
        // A shared registry file this process may not open or create.
        return new UncheckedIOException(message, new AccessDeniedException(message));
      case LbNativeConstants.CB_ESTATE:
        return new IllegalStateException(message);
      case LbNativeConstants.CB_EBUSY:
        return new RegistryBusyException(message);
      default: // ECORRUPT, EVERSION, EINTERNAL, ERANGE and any newer code
        return new LazybreakerException(status, message);
    }
  }

  /** The status's name and description, as cb_strerror gives it ("CB_EINVAL: ..."). */
  static String statusName(int status) {
    return LbNative.cb_strerror(status);
  }
}
