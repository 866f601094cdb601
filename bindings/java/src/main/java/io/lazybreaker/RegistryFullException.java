package io.lazybreaker;

/**
 * {@code CB_EFULL}: the registry holds its capacity of breakers, or the
 * process holds as many registries (or breakers across them) as it may.
 */
public class RegistryFullException extends LazybreakerException {
  private static final long serialVersionUID = 1L;

  public RegistryFullException(String message) {
    super(LbNativeConstants.CB_EFULL, message);
  }
}
