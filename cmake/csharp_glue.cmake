# The C# binding's native glue, lazybreaker_csharp: SWIG's P/Invoke entry
# points from bindings/swig/csharp.i, in the namespace the managed code
# calls and under the name its DllImport asks for. One definition for both
# trees that build it: the Linux one (bindings/csharp, liblazybreaker_csharp.so)
# and the Windows one (cmake/csharp_windows.cmake, lazybreaker_csharp.dll),
# each setting its platform's output name and link options after.
include_guard(GLOBAL)
include(swig)

function(lb_csharp_glue_library output_dir)
  lb_swig_library(lazybreaker_csharp LANGUAGE csharp OVERLAY ${LB_SWIG_DIR}/csharp.i
    OUTPUT_DIR ${output_dir}
    SWIG_OPTIONS -namespace LazyBreaker.Native -dllimport lazybreaker_csharp)
endfunction()
