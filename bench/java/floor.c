/* The floor of the Java benchmark: two JNI functions that do nothing, with
 * the signatures of the glue's cb_allow and cb_done (jlong in, jlong out;
 * jlong, jlong, jint in, jint out), in a shared library loaded as the glue
 * is (System.load). The difference between this pair and tryAcquire +
 * success is what lazybreaker and its glue cost over the crossing itself. */
#include <jni.h>

JNIEXPORT jlong JNICALL Java_io_lazybreaker_bench_Floor_allow(JNIEnv *env, jclass cls, jlong h) {
  (void)env;
  (void)cls;
  return h | 1;
}

JNIEXPORT jint JNICALL Java_io_lazybreaker_bench_Floor_done(JNIEnv *env, jclass cls, jlong h,
                                                            jlong ticket, jint outcome) {
  (void)env;
  (void)cls;
  (void)h;
  (void)ticket;
  return outcome;
}
