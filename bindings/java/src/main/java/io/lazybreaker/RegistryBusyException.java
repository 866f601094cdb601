package io.lazybreaker;

/**
 * {@code CB_EBUSY}: another process has held the registry file's lock for 5 s, so the open gave
 * up rather than wait on (a process opening the file holds it only while it checks the file). The
 * open may be retried. @since 1.3
 */
public class RegistryBusyException extends LazybreakerException {
  private static final long serialVersionUID = 1L;

  public RegistryBusyException(String message) {
    super(LbNativeConstants.CB_EBUSY, message);
  }
}
