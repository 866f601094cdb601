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
lb_swig_library(lazybreaker_csharp LANGUAGE csharp OVERLAY ${LB_SWIG_DIR}/csharp.i
  OUTPUT_DIR ${PROJECT_BINARY_DIR}/bindings/csharp/generated
  SWIG_OPTIONS -namespace LazyBreaker.Native -dllimport lazybreaker_csharp)
# The name C# P/Invokes (DllImport "lazybreaker_csharp" finds
# lazybreaker_csharp.dll), next to lazybreaker.dll, which Windows' loader
# then finds in the same folder. SWIGEXPORT is __declspec(dllexport) on
# Windows, so the CSharp_* entry points alone are exported. PE has no -z
# relro/now (ELF's options of lb_swig_library); -static links libgcc and
# winpthread in, as lazybreaker.dll does: no DLL Windows does not ship.
set_target_properties(lazybreaker_csharp PROPERTIES OUTPUT_NAME lazybreaker_csharp PREFIX "" SUFFIX .dll
  LIBRARY_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/bin
  LINK_OPTIONS "-static;-Wl,--no-undefined")
