/* csharp.i: the C# overlay of lazybreaker.i. SWIG generates the low layer
 * of the LazyBreaker package from it: internal classes in namespace
 * LazyBreaker.Native (LbNative, LbNativePINVOKE and one proxy per struct)
 * that only the hand-written API in bindings/csharp uses. What is C#'s
 * alone lives here:
 *
 *   - uint64_t (handles, tickets, nanoseconds) is a ulong and size_t a
 *     ulong too (SWIG's default maps size_t to a 32-bit uint, which is not
 *     the width of the C type on linux-x64).
 *   - %lb_raise calls back into C# (LazyBreaker.NativeErrors.ToException
 *     builds the exception from the status and the thread's last error
 *     message) and leaves the exception pending; the generated C# rethrows
 *     it as the call returns, as SWIG's own exception helpers do. The table
 *     status -> exception type lives in one C# file.
 *   - cb_registry * is a LazyBreaker.Native.RegistryHandle, a SafeHandle:
 *     the marshaller holds a reference across every call that takes it, so
 *     a registry disposed on another thread is never used after it closed.
 *   - The raise callback gets cb_last_error_field() beside the message,
 *     read on the failing thread before anything else can overwrite it:
 *     the C# API renders its own message from the status and the field,
 *     never from the library's text.
 *   - The request path (cb_allow, cb_done) is NOT wrapped here: SWIG's
 *     out-parameter typemap would cost a native temporary and a pending-
 *     exception check per call. bindings/csharp/LazyBreaker/NativeMethods.cs
 *     declares those two (and the release functions SafeHandles call) as
 *     blittable P/Invoke; docs/csharp.md says which is which.
 */
%module(imclassname="LbNativePINVOKE") LbNative

%pragma(csharp) moduleclassmodifiers="internal class"
%pragma(csharp) imclassclassmodifiers="internal class"
%typemap(csclassmodifiers) SWIGTYPE "internal class"
%typemap(csclassmodifiers) enum SWIGTYPE "internal enum"

/* Constants are compiled into the C# (no native call to read one); the
 * few whose C literal is not C# (1000ull) are read once through P/Invoke. */
%csconst(1);
%csconst(0) CB_MIN_OPEN_DURATION_NS;
%csconst(0) CB_MAX_DURATION_NS;
%csconst(0) CB_MIN_WINDOW_DURATION_NS;

/* ---- integers -------------------------------------------------------------- */
%apply unsigned long long { size_t };
%apply const unsigned long long & { const size_t & };

/* ---- the raise hook --------------------------------------------------------- */
%{
#include "lazybreaker/lazybreaker.h"

/* The C# side registers one callback (LbNativePINVOKE's static
 * initialiser, before any wrapped call) that builds the exception for a
 * negative status and leaves it pending. */
typedef void(SWIGSTDCALL *lb_csharp_raise_callback)(int status, const char *message,
                                                    const char *field);
static lb_csharp_raise_callback lb_csharp_raise_fn = NULL;

#ifdef __cplusplus
extern "C"
#endif
SWIGEXPORT void SWIGSTDCALL LbCSharpRegisterRaise(lb_csharp_raise_callback fn) {
  lb_csharp_raise_fn = fn;
}

static void lb_csharp_raise(int status) {
  const char *message = cb_last_error_message();
  if (lb_csharp_raise_fn) {
    lb_csharp_raise_fn(status, message, cb_last_error_field());
  } else {
    SWIG_CSharpSetPendingException(SWIG_CSharpApplicationException, message);
  }
}
%}
%define %lb_raise(status)
  lb_csharp_raise(status);
  return $null;
%enddef
#define LB_RAISE_DEFINED

/* Every wrapper may leave an exception pending (the status typemaps and the
 * NULL checks of lazybreaker.i): the generated C# checks after each call. */
%feature("except:canthrow", "1");

%pragma(csharp) imclasscode=%{
  [global::System.Runtime.InteropServices.UnmanagedFunctionPointer(global::System.Runtime.InteropServices.CallingConvention.Cdecl)]
  internal delegate void LbRaiseCallback(int status, global::System.IntPtr message, global::System.IntPtr field);

  [global::System.Runtime.InteropServices.DllImport("$dllimport", EntryPoint="LbCSharpRegisterRaise")]
  private static extern void LbCSharpRegisterRaise(LbRaiseCallback callback);

  // Kept in a static field: the native side holds only a function pointer.
  private static readonly LbRaiseCallback lbRaiseCallback = LbRaise;

  private static void LbRaise(int status, global::System.IntPtr message, global::System.IntPtr field) {
    SWIGPendingException.Set(global::LazyBreaker.NativeErrors.ToException(status,
        global::System.Runtime.InteropServices.Marshal.PtrToStringUTF8(message) ?? "",
        global::System.Runtime.InteropServices.Marshal.PtrToStringUTF8(field)));
  }

  // SWIG gives this class a static constructor (so no beforefieldinit):
  // this initialiser runs before the first wrapped call, so the callback
  // is in place before any wrapper can raise.
  internal static readonly bool LbRaiseRegistered = LbRegisterRaise();

  private static bool LbRegisterRaise() {
    LbCSharpRegisterRaise(lbRaiseCallback);
    return true;
  }
%}

/* ---- return types of the abstract typemaps ---------------------------------- */
%typemap(ctype) int LB_STATUS_U64, int LB_LOOKUP "unsigned long long"
%typemap(imtype) int LB_STATUS_U64, int LB_LOOKUP "ulong"
%typemap(cstype) int LB_STATUS_U64, int LB_LOOKUP "ulong"
%typemap(csout, excode=SWIGEXCODE) int LB_STATUS_U64, int LB_LOOKUP {
    ulong ret = $imcall;$excode
    return ret;
  }
%typemap(ctype) int LB_STATUS, int LB_STATE "int"
%typemap(imtype) int LB_STATUS, int LB_STATE "int"
%typemap(cstype) int LB_STATUS, int LB_STATE "int"
%typemap(csout, excode=SWIGEXCODE) int LB_STATUS, int LB_STATE {
    int ret = $imcall;$excode
    return ret;
  }

/* ---- the registry pointer is a SafeHandle ----------------------------------- */
%typemap(ctype) cb_registry * "void *"
%typemap(imtype) cb_registry * "global::LazyBreaker.Native.RegistryHandle"
%typemap(cstype) cb_registry * "global::LazyBreaker.Native.RegistryHandle"
%typemap(in) cb_registry * %{ $1 = (cb_registry *)$input; %}
%typemap(out) cb_registry * %{ $result = (void *)$1; %}
%typemap(csin) cb_registry * "$csinput"
%typemap(csout, excode=SWIGEXCODE) cb_registry * {
    global::LazyBreaker.Native.RegistryHandle ret = $imcall;$excode
    return ret;
  }

/* ---- strings ---------------------------------------------------------------- */
/* In: the C# API checks names (no NUL, well-formed UTF-16) before they get
 * here, so the marshaller's UTF-8 is exactly the user's text. Out: SWIG's
 * string callback copies the text; what the library malloc'd is freed. */
%typemap(newfree) char *lb_prometheus, char *lb_name "free($1);"

%include "lazybreaker.i"
