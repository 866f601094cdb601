package io.lazybreaker;

/**
 * {@code CB_EINVAL} as it leaves the JNI glue: the library's message and the
 * C name of the field or parameter at fault ({@code cb_last_error_field}),
 * so that the API class that made the call can say it again in its own
 * option names and types ({@link ConfigField}). One that no caller renders
 * reaches the user as it is: an {@link IllegalArgumentException} with the
 * library's message.
 */
final class RefusedArgument extends IllegalArgumentException {
  private static final long serialVersionUID = 1L;
  private final String field;

  RefusedArgument(String message, String field) {
    super(message);
    this.field = field;
  }

  /** The C name of the field at fault, or null when the library named none. */
  String field() {
    return field;
  }
}
