package io.lazybreaker;

/** Versions, and where the native libraries were loaded from. */
public final class Lazybreaker {
  private Lazybreaker() {}

  /** The version these classes were built for, e.g. "1.1.0". */
  public static String version() {
    return LbNativeConstants.CB_VERSION_STRING;
  }

  /** The version of the liblazybreaker in use (loads it if need be). */
  public static String libraryVersion() {
    return LbNative.cb_version_string();
  }

  /**
   * Where the natives came from: "java.library.path", an RPM JNI directory,
   * or "jar:native/linux-x86_64/" (extracted from this jar).
   */
  public static String nativeOrigin() {
    LbNative.cb_version_number(); // the JNI class loads the natives first
    return NativeLibrary.loadedFrom();
  }
}
