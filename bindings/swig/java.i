/* java.i: the Java overlay of lazybreaker.i. SWIG generates the low layer
 * of package io.lazybreaker from it: package-private classes (LbNative,
 * LbNativeJNI and one proxy per struct) that only the hand-written API in
 * bindings/java uses. What is Java's alone lives here:
 *
 *   - uint64_t (handles, tickets, nanoseconds) is a Java long, bit for bit:
 *     no BigInteger on the request path. UINT64_MAX reads as -1.
 *   - %lb_raise throws through io.lazybreaker.NativeErrors.toThrowable, so
 *     the table status -> exception class lives in one Java file.
 *   - Strings cross as UTF-8 byte arrays both ways. JNI's own string calls
 *     speak "modified UTF-8", which is not the UTF-8 the library checks
 *     names against (a supplementary character would be refused going in
 *     and could be misread coming out).
 *   - constants are compiled into the Java classes (no JNI call to read one).
 *   - the natives of io.lazybreaker.QuietPath (fastpath.h's words as direct
 *     ByteBuffers), hand-written below.
 */
%module(jniclassname="LbNativeJNI") LbNative

%pragma(java) moduleclassmodifiers="final class"
%pragma(java) jniclassclassmodifiers="final class"
%pragma(java) moduleimports=""
%typemap(javaclassmodifiers) SWIGTYPE "final class"
/* No finalize() (deprecated since Java 9): the API in bindings/java frees
 * every proxy it makes with delete(), in a finally block. */
%typemap(javafinalize) SWIGTYPE ""

%javaconst(1);
/* C enums as int constants in LbNativeConstants, like the #defines: the
 * API's own Java enums map them (CircuitBreaker.State, ...). */
%include "enumsimple.swg"
/* Unsigned literals (65535u, 1000ull) are not Java: these few are read
 * through JNI once, when the constants interface loads. */
%javaconst(0) CB_MAX_FAILURE_THRESHOLD;
%javaconst(0) CB_MAX_HALF_OPEN_CALLS;
%javaconst(0) CB_MAX_HALF_OPEN_SUCCESSES;
%javaconst(0) CB_MIN_OPEN_DURATION_NS;
%javaconst(0) CB_MAX_DURATION_NS;
%javaconst(0) CB_MAX_NAME_BYTES;
%javaconst(0) CB_MAX_WINDOW_SIZE;
%javaconst(0) CB_MAX_WINDOW_BUCKETS;
%javaconst(0) CB_MIN_WINDOW_DURATION_NS;
%javaconst(0) CB_MAX_MINIMUM_CALLS;
%javaconst(0) CB_MAX_CAPACITY;
%javaconst(0) CB_MAX_EVENT_CAPACITY;
%javaconst(0) CB_DEFAULT_REGISTRY_CAPACITY;
%javaconst(0) CB_EVENTS_TRANSITIONS;
%javaconst(0) CB_EVENTS_REJECTIONS;
%javaconst(0) CB_REGISTRY_CREATE;
%javaconst(0) CB_REGISTRY_EXCLUSIVE;
%javaconst(0) CB_REGISTRY_ANY_OWNER;

/* ---- uint64_t is a long --------------------------------------------------- */
%apply long long { uint64_t, cb_handle, cb_ticket, unsigned long long };
%apply const long long & { const uint64_t & };
%apply unsigned int { uint32_t };

/* ---- the raise hook ------------------------------------------------------- */
%{
#include <jni.h>
#include <string.h>
#include "lazybreaker/lazybreaker.h"

/* Throws the Java exception for a negative status, built by
 * io.lazybreaker.NativeErrors.toThrowable(int, byte[], String) from the
 * status, this thread's last error message and the field at fault
 * (cb_last_error_field: the Java side renders its own message from the
 * status and the field, never from the message's text). Class and method
 * are looked up on the first error and kept (a race between two first
 * errors only looks them up twice). */
static jclass lb_errors_class = NULL;
static jmethodID lb_errors_method = NULL;

static void lb_java_raise(JNIEnv *jenv, int status) {
  if ((*jenv)->ExceptionCheck(jenv)) return;
  const char *message = cb_last_error_message();
  const char *field = cb_last_error_field();
  if (!lb_errors_method) {
    jclass local = (*jenv)->FindClass(jenv, "io/lazybreaker/NativeErrors");
    if (!local) return; /* NoClassDefFoundError is pending */
    jmethodID method = (*jenv)->GetStaticMethodID(
        jenv, local, "toThrowable", "(I[BLjava/lang/String;)Ljava/lang/Throwable;");
    if (!method) return;
    lb_errors_class = (jclass)(*jenv)->NewGlobalRef(jenv, local);
    lb_errors_method = method;
    (*jenv)->DeleteLocalRef(jenv, local);
  }
  const jsize len = (jsize)strlen(message);
  jbyteArray bytes = (*jenv)->NewByteArray(jenv, len);
  if (!bytes) return; /* OutOfMemoryError is pending */
  (*jenv)->SetByteArrayRegion(jenv, bytes, 0, len, (const jbyte *)message);
  /* Field names are C identifiers: ASCII, the same in modified UTF-8. */
  jstring jfield = field ? (*jenv)->NewStringUTF(jenv, field) : NULL;
  if (field && !jfield) {
    (*jenv)->DeleteLocalRef(jenv, bytes);
    return; /* OutOfMemoryError is pending */
  }
  jthrowable error = (jthrowable)(*jenv)->CallStaticObjectMethod(
      jenv, lb_errors_class, lb_errors_method, (jint)status, bytes, jfield);
  (*jenv)->DeleteLocalRef(jenv, bytes);
  if (jfield) (*jenv)->DeleteLocalRef(jenv, jfield);
  if (error && !(*jenv)->ExceptionCheck(jenv)) (*jenv)->Throw(jenv, error);
}
%}
%define %lb_raise(status)
  lb_java_raise(jenv, status);
  return $null;
%enddef
#define LB_RAISE_DEFINED

/* ---- return types of the abstract typemaps -------------------------------- */
%typemap(jni) int LB_STATUS_U64, int LB_LOOKUP "jlong"
%typemap(jtype) int LB_STATUS_U64, int LB_LOOKUP "long"
%typemap(jstype) int LB_STATUS_U64, int LB_LOOKUP "long"
%typemap(javaout) int LB_STATUS_U64, int LB_LOOKUP { return $jnicall; }
%typemap(jni) int LB_STATUS, int LB_STATE "jint"
%typemap(jtype) int LB_STATUS, int LB_STATE "int"
%typemap(jstype) int LB_STATUS, int LB_STATE "int"
%typemap(javaout) int LB_STATUS, int LB_STATE { return $jnicall; }

/* ---- strings as UTF-8 ----------------------------------------------------- */
/* In: a NUL-terminated UTF-8 byte[] (io.lazybreaker.Utf8.nulTerminated
 * makes it and refuses a NUL inside); null stays NULL. */
%typemap(jni) const char *name "jbyteArray"
%typemap(jtype) const char *name "byte[]"
%typemap(jstype) const char *name "byte[]"
%typemap(javain) const char *name "$javainput"
%typemap(in) const char *name {
  $1 = NULL;
  if ($input) {
    const jsize len = (*jenv)->GetArrayLength(jenv, $input);
    if (len == 0) {
      SWIG_JavaThrowException(jenv, SWIG_JavaIllegalArgumentException, "name: not NUL-terminated");
      return $null;
    }
    $1 = (char *)(*jenv)->GetByteArrayElements(jenv, $input, NULL);
    if (!$1) return $null;
    if ($1[len - 1] != '\0') {
      (*jenv)->ReleaseByteArrayElements(jenv, $input, (jbyte *)$1, JNI_ABORT);
      SWIG_JavaThrowException(jenv, SWIG_JavaIllegalArgumentException, "name: not NUL-terminated");
      return $null;
    }
  }
}
%typemap(freearg) const char *name {
  if ($1) (*jenv)->ReleaseByteArrayElements(jenv, $input, (jbyte *)$1, JNI_ABORT);
}
/* A shared registry's path crosses the same way (Utf8.nulTerminated of
 * the path's text): the file's name is the bytes a C program would pass. */
%apply const char *name { const char *path };

/* Out: the bytes as they are; the Java side decodes them as UTF-8. */
%define %lb_utf8_out(DECL)
%typemap(jni) DECL "jbyteArray"
%typemap(jtype) DECL "byte[]"
%typemap(jstype) DECL "byte[]"
%typemap(javaout) DECL { return $jnicall; }
%typemap(out) DECL {
  const jsize len = (jsize)strlen((const char *)$1);
  $result = (*jenv)->NewByteArray(jenv, len);
  if ($result) (*jenv)->SetByteArrayRegion(jenv, $result, 0, len, (const jbyte *)$1);
}
%enddef
%lb_utf8_out(char *lb_prometheus)
%lb_utf8_out(char *lb_name)
%lb_utf8_out(const char *cb_last_error_message)
%lb_utf8_out(char name[ANY])

/* ---- the published quiet path (fastpath.h) ---------------------------------- */
/* io.lazybreaker.QuietPath reads the library's words through VarHandles over
 * direct ByteBuffers; these natives make the buffers (cold: once per
 * process, per chunk of lines, per thread) and fold a counter. Nothing on
 * the request path crosses here but a fold, once per fold_at counts. */
%{
#include <time.h>
#include "lazybreaker/fastpath.h"

static int lb_java_fastpath(cb_fastpath *fp) {
  memset(fp, 0, sizeof *fp);
  fp->struct_size = sizeof *fp;
  return cb_fastpath_describe(fp);
}

/* {layout, index_bits, line_words, open_period_word, chunk_bits, fold_at},
 * or null (and an exception) when the library cannot describe it. */
JNIEXPORT jlongArray JNICALL Java_io_lazybreaker_QuietPath_describe(JNIEnv *jenv, jclass cls) {
  (void)cls;
  cb_fastpath fp;
  const int status = lb_java_fastpath(&fp);
  if (status != CB_OK) {
    lb_java_raise(jenv, status);
    return NULL;
  }
  const jlong fields[6] = {fp.layout,     fp.index_bits, fp.line_words, fp.open_period_word,
                           fp.chunk_bits, fp.fold_at};
  jlongArray out = (*jenv)->NewLongArray(jenv, 6);
  if (out) (*jenv)->SetLongArrayRegion(jenv, out, 0, 6, fields);
  return out;
}

/* The hot lines of the 2^chunk_bits slots of chunk `chunk`. */
JNIEXPORT jobject JNICALL Java_io_lazybreaker_QuietPath_lineChunk(JNIEnv *jenv, jclass cls,
                                                                  jint chunk) {
  (void)cls;
  cb_fastpath fp;
  if (lb_java_fastpath(&fp) != CB_OK || chunk < 0 ||
      (uint32_t)chunk >= (1u << (fp.index_bits - fp.chunk_bits)))
    return NULL;
  const size_t slots = (size_t)1 << fp.chunk_bits;
  const uint64_t *first = fp.lines + (size_t)chunk * slots * fp.line_words;
  return (*jenv)->NewDirectByteBuffer(jenv, (void *)first,
                                      (jlong)(slots * fp.line_words * sizeof *first));
}

/* lean_rejections: a byte per chunk. */
JNIEXPORT jobject JNICALL Java_io_lazybreaker_QuietPath_leanRejections(JNIEnv *jenv, jclass cls) {
  (void)cls;
  cb_fastpath fp;
  if (lb_java_fastpath(&fp) != CB_OK) return NULL;
  return (*jenv)->NewDirectByteBuffer(jenv, (void *)fp.lean_rejections,
                                      (jlong)1 << (fp.index_bits - fp.chunk_bits));
}

/* The calling thread's stripe (its number in stripe[0]), or null when
 * every stripe is taken (CB_EFULL: the thread counts through the library). */
JNIEXPORT jobject JNICALL Java_io_lazybreaker_QuietPath_threadCells(JNIEnv *jenv, jclass cls,
                                                                    jintArray stripe) {
  (void)cls;
  cb_fastpath fp;
  cb_fastpath_cells cells;
  memset(&cells, 0, sizeof cells);
  cells.struct_size = sizeof cells;
  if (lb_java_fastpath(&fp) != CB_OK || cb_fastpath_thread_cells(&cells) != CB_OK || !cells.cells)
    return NULL;
  const jint number = (jint)cells.stripe;
  (*jenv)->SetIntArrayRegion(jenv, stripe, 0, 1, &number);
  if ((*jenv)->ExceptionCheck(jenv)) return NULL;
  return (*jenv)->NewDirectByteBuffer(jenv, cells.cells,
                                      (jlong)(((size_t)1 << fp.index_bits) * sizeof *cells.cells));
}

/* cb_fastpath_fold; a refusal throws (a count would be lost otherwise). */
JNIEXPORT void JNICALL Java_io_lazybreaker_QuietPath_fold(JNIEnv *jenv, jclass cls, jint stripe,
                                                         jlong h, jint counter) {
  (void)cls;
  const int status = cb_fastpath_fold((uint32_t)stripe, (cb_handle)h, counter);
  if (status != CB_OK) lb_java_raise(jenv, status);
}

/* CLOCK_MONOTONIC now: QuietPath checks once that System.nanoTime() reads
 * this clock before it compares nanoTime with the library's deadlines. */
JNIEXPORT jlong JNICALL Java_io_lazybreaker_QuietPath_monotonicNanos(JNIEnv *jenv, jclass cls) {
  (void)jenv;
  (void)cls;
  struct timespec ts;
  if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0) return -1;
  return (jlong)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}
%}

/* ---- loading ---------------------------------------------------------------- */
/* The JNI class loads the natives before its first call: from
 * java.library.path when a distro package put them there, else from the jar
 * (io.lazybreaker.NativeLibrary). */
%pragma(java) jniclasscode=%{
  static {
    NativeLibrary.load();
  }
%}
/* The header version the glue was built with, so the loader can tell a
 * glue that does not match the jar's classes. */
%inline %{
static int lb_java_glue_version(void) { return CB_VERSION_NUMBER; }
%}

%include "lazybreaker.i"
