package io.lazybreaker;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Locale;

/**
 * Loads liblazybreaker and its JNI glue once per class loader, before the
 * first native call (the SWIG JNI class calls {@link #load()} from its static
 * initializer).
 *
 * <p>Where from, in this order: {@code java.library.path}, when a distro
 * package (liblazybreaker-java) installed the glue there (Debian's
 * /usr/lib/&lt;triplet&gt;/jni is on it); the JNI directories of the RPM
 * layout, which Fedora's path lacks (/usr/lib64/jni, /usr/lib/jni); else the copies the
 * jar carries under {@code io/lazybreaker/native/<os>-<arch>/}, extracted to a
 * private temporary directory (mode 0700), loaded, and deleted again at once
 * (a loaded library stays mapped), so nothing is left behind. The system
 * property {@code lazybreaker.native} forces one: {@code system} or {@code
 * jar}.
 */
final class NativeLibrary {
  static final String GLUE = "lazybreaker_jni";
  static final String LIBRARY = "liblazybreaker.so." + LbNativeConstants.CB_VERSION_MAJOR;

  private static final String[] RPM_JNI_DIRS = {"/usr/lib64/jni", "/usr/lib/jni"};

  private static String loadedFrom;

  private NativeLibrary() {}

  static synchronized void load() {
    if (loadedFrom != null) return;
    String mode = System.getProperty("lazybreaker.native", "auto");
    if (!mode.equals("auto") && !mode.equals("system") && !mode.equals("jar")) {
      throw new IllegalArgumentException(
          "lazybreaker.native must be auto, system or jar, got '" + mode + "'");
    }
    UnsatisfiedLinkError fromSystem = null;
    if (!mode.equals("jar")) {
      try {
        System.loadLibrary(GLUE);
        loadedFrom = "java.library.path";
      } catch (UnsatisfiedLinkError e) {
        fromSystem = e;
        for (String dir : RPM_JNI_DIRS) {
          Path glue = Path.of(dir, System.mapLibraryName(GLUE));
          if (!Files.isRegularFile(glue)) continue;
          System.load(glue.toString());
          loadedFrom = dir;
          break;
        }
        if (loadedFrom == null && mode.equals("system")) throw e;
      }
    }
    if (loadedFrom == null) {
      try {
        loadedFrom = loadFromJar();
      } catch (UnsatisfiedLinkError | IOException e) {
        UnsatisfiedLinkError error =
            new UnsatisfiedLinkError(
                "lazybreaker: cannot load the native libraries: " + e.getMessage());
        error.initCause(e);
        if (fromSystem != null) error.addSuppressed(fromSystem);
        throw error;
      }
    }
    checkVersions();
  }

  /** Where the natives came from: "java.library.path" or the jar's resource path. */
  static synchronized String loadedFrom() {
    return loadedFrom;
  }

  /** The platform directory inside the jar, e.g. "linux-x86_64". */
  static String platform() {
    String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
    String arch = System.getProperty("os.arch", "").toLowerCase(Locale.ROOT);
    if (os.startsWith("linux")) os = "linux";
    if (arch.equals("amd64") || arch.equals("x86_64")) arch = "x86_64";
    if (arch.equals("arm64")) arch = "aarch64";
    return os + "-" + arch;
  }

  private static String loadFromJar() throws IOException {
    String dir = "native/" + platform() + "/";
    String glueFile = System.mapLibraryName(GLUE);
    if (NativeLibrary.class.getResource(dir + glueFile) == null) {
      throw new UnsatisfiedLinkError(
          "this jar carries no natives for "
              + platform()
              + " (it has io/lazybreaker/native/linux-x86_64) and "
              + glueFile
              + " is not on java.library.path");
    }
    Path tmp = Files.createTempDirectory("lazybreaker-");
    try {
      // The library first: the glue's NEEDED liblazybreaker.so.1 is then
      // satisfied by the loaded copy (the dynamic linker matches the soname).
      Path library = extract(dir + LIBRARY, tmp.resolve(LIBRARY));
      Path glue = extract(dir + glueFile, tmp.resolve(glueFile));
      System.load(library.toString());
      System.load(glue.toString());
      return "jar:" + dir;
    } finally {
      try (var files = Files.list(tmp)) {
        for (Path p : (Iterable<Path>) files::iterator) Files.deleteIfExists(p);
      }
      Files.deleteIfExists(tmp);
    }
  }

  private static Path extract(String resource, Path to) throws IOException {
    try (InputStream in = NativeLibrary.class.getResourceAsStream(resource)) {
      if (in == null) throw new UnsatisfiedLinkError("the jar lacks io/lazybreaker/" + resource);
      Files.copy(in, to, StandardCopyOption.REPLACE_EXISTING);
    }
    return to;
  }

  /** The glue must match these classes, and the library must be at least as new. */
  private static void checkVersions() {
    int glue = LbNative.lb_java_glue_version();
    int library = LbNative.cb_version_number();
    int expected = LbNativeConstants.CB_VERSION_NUMBER;
    if (glue != expected) {
      throw new UnsatisfiedLinkError(
          "lazybreaker: the JNI glue from " + loadedFrom + " is version " + glue
              + ", these classes are " + expected + " (install matching packages, or run with"
              + " -Dlazybreaker.native=jar)");
    }
    if (library / 10000 != expected / 10000 || library < expected) {
      throw new UnsatisfiedLinkError(
          "lazybreaker: liblazybreaker is version " + LbNative.cb_version_string()
              + ", these classes need " + LbNativeConstants.CB_VERSION_STRING
              + " or a later 1.x");
    }
  }
}
