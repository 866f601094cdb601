# The C# binding (bindings/csharp, namespace LazyBreaker): SWIG's P/Invoke
# glue from bindings/swig/csharp.i, the API over it, the LazyBreaker .nupkg
# (natives under runtimes/linux-x64/native/), its xunit tests (CTest label
# `csharp`) and its benchmark (bench/csharp, run by `make bench`). Returns
# early when switched off or impossible.
include_guard(GLOBAL)
option(LB_CSHARP "Build the C# binding (SWIG and a .NET 8 or later SDK)" ${PROJECT_IS_TOP_LEVEL})
if(NOT LB_CSHARP)
  return()
endif()
# dotnet cannot load an ASan- or TSan-built library without the sanitizer's
# runtime preloaded into the dotnet host, and the runtime's own tricks (its
# GC's memory, its signal handlers) then read as errors; the sanitizer
# builds cover the library through the C and C++ tests instead, and the
# Makefile leaves the csharp label out of their ctest runs.
if(LB_SANITIZE)
  message(STATUS "lazybreaker: C# binding not built under LB_SANITIZE=${LB_SANITIZE} (on purpose)")
  return()
endif()

include(swig)
lb_find_swig(CSharp _lb_have_swig)
if(NOT _lb_have_swig)
  return()
endif()
# The .NET SDK is not in Debian's archive: a machine of the project's kind
# has it on PATH (packaging/install-deps.sh says so).
find_program(LB_DOTNET dotnet)
if(LB_DOTNET)
  execute_process(COMMAND ${LB_DOTNET} --list-sdks OUTPUT_VARIABLE _lb_sdks ERROR_QUIET RESULT_VARIABLE _lb_rc)
  string(REGEX MATCHALL "(^|\n)([0-9]+)\\." _lb_majors "${_lb_sdks}")
  set(_lb_sdk_ok FALSE)
  foreach(_lb_major IN LISTS _lb_majors)
    string(REGEX REPLACE "[^0-9]" "" _lb_major "${_lb_major}")
    if(_lb_major GREATER_EQUAL 8)
      set(_lb_sdk_ok TRUE)
    endif()
  endforeach()
endif()
if(NOT LB_DOTNET OR NOT _lb_sdk_ok)
  lb_binding_unavailable(CSharp "no .NET SDK 8 or later (dotnet) on PATH; it is not in Debian's archive")
  return()
endif()
set(LB_CSHARP_ENABLED ON)
add_subdirectory(${PROJECT_SOURCE_DIR}/bindings/csharp ${PROJECT_BINARY_DIR}/bindings/csharp)
