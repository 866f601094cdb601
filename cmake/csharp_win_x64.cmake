# Where the LazyBreaker .nupkg's runtimes/win-x64/native/ files come from
# (bindings/csharp/CMakeLists.txt). Sets
#   LB_CSHARP_WIN_X64_NATIVE   the folder holding lazybreaker.dll and
#                              lazybreaker_csharp.dll, or empty
#   LB_CSHARP_WIN_X64_DEPENDS  the files (and target) packing waits for
#   LB_CSHARP_WIN_X64_SKIPPED  why win-x64 is left out, or empty
# and, when it cross-builds them, the target lazybreaker_csharp_windows.
include_guard(GLOBAL)
set(LB_CSHARP_WIN_X64_DIR "" CACHE PATH
    "Folder with a mingw-built lazybreaker.dll and lazybreaker_csharp.dll for the .nupkg's win-x64 \
runtime (empty: cross-build them here with mingw-w64)")
set(LB_CSHARP_WIN_X64_NATIVE "")
set(LB_CSHARP_WIN_X64_DEPENDS "")
set(LB_CSHARP_WIN_X64_SKIPPED "")
set(_lb_win_x64_files lazybreaker.dll lazybreaker_csharp.dll)

if(LB_CSHARP_WIN_X64_DIR)
  set(LB_CSHARP_WIN_X64_NATIVE ${LB_CSHARP_WIN_X64_DIR})
  list(TRANSFORM _lb_win_x64_files PREPEND ${LB_CSHARP_WIN_X64_DIR}/ OUTPUT_VARIABLE LB_CSHARP_WIN_X64_DEPENDS)
  return()
endif()

# The names cmake/windows.cmake looks for (the same cache entries).
find_program(LB_MINGW_CXX x86_64-w64-mingw32-g++-posix)
find_program(LB_MINGW_CC x86_64-w64-mingw32-gcc-posix)
if(NOT LB_MINGW_CXX OR NOT LB_MINGW_CC)
  set(LB_CSHARP_WIN_X64_SKIPPED
      "mingw-w64's -posix compilers not found (Debian: g++-mingw-w64-x86-64-posix)")
  if("$ENV{CI}" STREQUAL "true")
    message(FATAL_ERROR "lazybreaker: the C# package's win-x64 natives cannot be built: "
                        "${LB_CSHARP_WIN_X64_SKIPPED} (CI=true: a missing toolchain is an error; "
                        "packaging/install-deps.sh installs it)")
  endif()
  message(WARNING "lazybreaker: SKIPPING win-x64 in the C# .nupkg (linux-x64 only): "
                  "${LB_CSHARP_WIN_X64_SKIPPED}. Run packaging/install-deps.sh, or give "
                  "-DLB_CSHARP_WIN_X64_DIR=<folder with the two DLLs>.")
  file(APPEND ${LB_SKIPPED_BINDINGS_FILE} "CSharp .nupkg win-x64 natives: ${LB_CSHARP_WIN_X64_SKIPPED}\n")
  return()
endif()

set(LB_CSHARP_WIN_X64_NATIVE ${PROJECT_BINARY_DIR}/windows/bin)
list(TRANSFORM _lb_win_x64_files PREPEND ${LB_CSHARP_WIN_X64_NATIVE}/ OUTPUT_VARIABLE _lb_win_x64_paths)
# Always run: the Windows tree's own build decides what is out of date (a
# few seconds when nothing is). The DLLs' times change only when relinked,
# so the .nupkg is packed again only then.
add_custom_target(lazybreaker_csharp_windows
  COMMAND ${PROJECT_SOURCE_DIR}/tests/windows/build_dll.sh ${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR}/windows
  BYPRODUCTS ${_lb_win_x64_paths}
  COMMENT "Cross-building lazybreaker.dll and lazybreaker_csharp.dll (mingw-w64) into windows/"
  VERBATIM)
set(LB_CSHARP_WIN_X64_DEPENDS ${_lb_win_x64_paths} lazybreaker_csharp_windows)
