package io.lazybreaker.bench;

/** Two empty JNI calls with the shapes of cb_allow and cb_done (floor.c). */
final class Floor {
  private Floor() {}

  static void load(String path) {
    System.load(path);
  }

  static native long allow(long handle);

  static native int done(long handle, long ticket, int outcome);
}
