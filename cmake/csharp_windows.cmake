# The C# binding's native half in the Windows tree (`make windows`,
# cmake/toolchain-mingw64.cmake): lazybreaker_csharp.dll, SWIG's P/Invoke
# glue from bindings/swig/csharp.i, beside lazybreaker.dll in bin/. The
# LazyBreaker .nupkg of the Linux tree carries both under
# runtimes/win-x64/native/ (bindings/csharp/CMakeLists.txt). SWIG is a host
# program; without it the Windows tree is built without the glue, loudly.
include_guard(GLOBAL)
option(LB_CSHARP "Build the C# binding's native glue (SWIG)" ${PROJECT_IS_TOP_LEVEL})
if(NOT LB_CSHARP)
  return()
endif()
include(swig)
lb_find_swig(CSharp _lb_have_swig)
if(NOT _lb_have_swig)
  return()
endif()
include(csharp_glue)
lb_csharp_glue_library(${PROJECT_BINARY_DIR}/bindings/csharp/generated)
# The name C# P/Invokes (DllImport "lazybreaker_csharp" finds
# lazybreaker_csharp.dll), next to lazybreaker.dll, which Windows' loader
# then finds in the same folder. SWIGEXPORT is __declspec(dllexport) on
# Windows, so the CSharp_* entry points alone are exported. PE has no -z
# relro/now (ELF's options of lb_swig_library); -static links libgcc and
# winpthread in, as lazybreaker.dll does: no DLL Windows does not ship.
set_target_properties(lazybreaker_csharp PROPERTIES OUTPUT_NAME lazybreaker_csharp PREFIX "" SUFFIX .dll
  LIBRARY_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/bin
  LINK_OPTIONS "-static;-Wl,--no-undefined")

# Under Wine, in the prefix of tests/windows/wine (included before this, so
# its fixture and environment exist): a program that loads the glue by name
# and calls through it into lazybreaker.dll (label windows; run by the Linux
# tree's windows.under_wine).
get_directory_property(_lb_wine_env DIRECTORY ${PROJECT_SOURCE_DIR}/tests/windows/wine DEFINITION LB_WINE_ENV)
if(LB_BUILD_TESTS AND CMAKE_CROSSCOMPILING_EMULATOR AND _lb_wine_env)
  add_executable(lb_csharp_glue_consumer ${PROJECT_SOURCE_DIR}/bindings/csharp/windows/glue_consumer.c)
  target_link_libraries(lb_csharp_glue_consumer PRIVATE lb_build_options)
  target_link_options(lb_csharp_glue_consumer PRIVATE -static)
  add_dependencies(lb_csharp_glue_consumer lazybreaker_csharp)
  add_test(NAME windows.csharp_glue_loads COMMAND lb_csharp_glue_consumer)
  set_tests_properties(windows.csharp_glue_loads PROPERTIES LABELS "windows;csharp" FIXTURES_REQUIRED wine_prefix
                       ENVIRONMENT "${_lb_wine_env}" TIMEOUT 300)
endif()
