# The Java binding (bindings/java, package io.lazybreaker): SWIG's JNI glue
# from bindings/swig/java.i, the API classes, a jar that carries and loads
# the native libraries, its JUnit 5 tests (CTest label `java`) and its
# benchmark (bench/java). Returns early when switched off or impossible.
include_guard(GLOBAL)
option(LB_JAVA "Build the Java binding (SWIG, a JDK and Debian's junit5)" ${PROJECT_IS_TOP_LEVEL})
if(NOT LB_JAVA)
  return()
endif()
# A JVM loading an ASan- or TSan-built library needs the sanitizer's runtime
# preloaded into the java launcher and reports the JVM's own tricks (its
# signal handlers, its JIT's memory) as errors; the sanitizer builds cover
# the library through the C and C++ tests instead, and the Makefile leaves
# the java label out of their ctest runs.
if(LB_SANITIZE)
  message(STATUS "lazybreaker: Java binding not built under LB_SANITIZE=${LB_SANITIZE} (on purpose)")
  return()
endif()

include(swig)
lb_find_swig(Java _lb_have_swig)
if(NOT _lb_have_swig)
  return()
endif()
# Debian's JDK, wherever JAVA_HOME or PATH point, as long as it is 11 or later.
find_package(Java 11 QUIET COMPONENTS Development)
find_package(JNI QUIET)
if(NOT Java_FOUND OR NOT JNI_FOUND)
  lb_binding_unavailable(Java "no JDK with javac, jar and jni.h (Debian: default-jdk-headless)")
  return()
endif()
set(LB_JAVA_ENABLED ON)
add_subdirectory(${PROJECT_SOURCE_DIR}/bindings/java ${PROJECT_BINARY_DIR}/bindings/java)
