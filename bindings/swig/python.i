/* python.i: the Python overlay of lazybreaker.i. SWIG generates the low
 * layer from it, the extension module `lazybreaker._core` (built with
 * -builtin: the structs are real Python types with their own dealloc, the
 * functions are module-level builtins, no shadow classes between a call and
 * the library). The package `lazybreaker` (bindings/python/lazybreaker/) is
 * the API a Python user sees; `_core.pyi` there types this module for mypy.
 * What is Python's alone lives here:
 *
 *   - %lb_raise raises `lazybreaker.Error` (created here, at import) whose
 *     attributes are the status (`status`, and `status_name` from
 *     cb_status_name), `field` (cb_last_error_field(), or None) and whose
 *     message is cb_strerror's and cb_last_error_message()'s. The package
 *     renders its ValueError/TypeError from `field`, in its own words; it
 *     never parses the message.
 *   - results are Python ints: a status, a state, a handle, a ticket (0 when
 *     rejected), nanoseconds. Going in, uint64_t is SWIG's own: an int
 *     0..2^64-1, else OverflowError or TypeError.
 *   - the GIL: held by every call (each is a few atomic operations, none
 *     waits) except lb_registry_open_at, which may wait up to 5 s behind
 *     another process's lock on the file: %thread releases it there alone.
 *   - the request path in C (bindings/python/fastpath.c, compiled into this
 *     module): the decorator's callable `guard`, `guarded_call` and
 *     `try_acquire` with its `Permit`, one crossing per protected call.
 *   - `lb_config_fields()`: lists.h's CB_CONFIG_FIELDS as a tuple of tuples
 *     (field, type, since, unit, bounds, lo, hi, default), so the package
 *     checks types and words its errors from the ABI's own list.
 */
%module(package="lazybreaker", threads="1") _core
%nothread;
%thread lb_registry_open_at;

%{
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include "lazybreaker/lazybreaker.h"

/* lazybreaker.Error, made once at import (%init). */
static PyObject *lb_py_error = NULL;

static void lb_py_raise(int status) {
  const char *field = cb_last_error_field();
  const char *detail = cb_last_error_message();
  const char *name = cb_status_name(status);
  PyObject *msg = (detail && *detail) ? PyUnicode_FromFormat("%s: %s", cb_strerror(status), detail)
                                      : PyUnicode_FromString(cb_strerror(status));
  if (!msg) return;
  PyObject *exc = PyObject_CallOneArg(lb_py_error, msg);
  Py_DECREF(msg);
  if (!exc) return;
  PyObject *st = PyLong_FromLong(status);
  PyObject *sn = name ? PyUnicode_FromString(name) : Py_NewRef(Py_None);
  PyObject *fd = field ? PyUnicode_FromString(field) : Py_NewRef(Py_None);
  if (st && sn && fd && PyObject_SetAttrString(exc, "status", st) == 0 &&
      PyObject_SetAttrString(exc, "status_name", sn) == 0 && PyObject_SetAttrString(exc, "field", fd) == 0)
    PyErr_SetObject(lb_py_error, exc);
  Py_XDECREF(st);
  Py_XDECREF(sn);
  Py_XDECREF(fd);
  Py_DECREF(exc);
}

/* CB_CONFIG_FIELDS, one tuple per field, in cb_config's order. */
#define LB_PY_FIELD(field, type, since, unit, bounds, lo, hi, def)                                   \
  if (ok) {                                                                                          \
    PyObject *t = Py_BuildValue("(sssssddd)", #field, #type, #since, #unit, #bounds, (double)(lo), \
                                (double)(hi), (double)(def));                                       \
    if (!t || PyList_Append(list, t) != 0) ok = 0;                                                  \
    Py_XDECREF(t);                                                                                  \
  }
static PyObject *lb_config_fields(void) {
  PyObject *list = PyList_New(0);
  int ok = list != NULL;
  CB_CONFIG_FIELDS(LB_PY_FIELD)
  if (!ok) {
    Py_XDECREF(list);
    return NULL;
  }
  PyObject *tuple = PyList_AsTuple(list);
  Py_DECREF(list);
  return tuple;
}
#undef LB_PY_FIELD
%}

/* ---- the raise hook ------------------------------------------------------- */
%define %lb_raise(status)
  lb_py_raise(status);
  SWIG_fail;
%enddef
#define LB_RAISE_DEFINED
%define %lb_return_int(value)
  $result = PyLong_FromLong((long)value);
%enddef
#define LB_RETURN_INT_DEFINED

/* ---- results (LB_OVERLAY_ARGOUT): a Python int, never a C value -------------- */
#define LB_OVERLAY_ARGOUT
%typemap(argout) uint64_t *LB_OUT_U64 %{ $result = PyLong_FromUnsignedLongLong(temp$argnum); %}
%typemap(argout) cb_ticket *LB_OUT_TICKET %{
  $result = PyLong_FromUnsignedLongLong(result == CB_OK ? temp$argnum : 0);
%}

/* ---- names and paths in: str, or None for NULL; a NUL inside raises -------- */
%typemap(in) const char *name, const char *path {
  if ($input == Py_None) {
    $1 = NULL;
  } else if (PyUnicode_Check($input)) {
    Py_ssize_t len = 0;
    const char *s = PyUnicode_AsUTF8AndSize($input, &len);
    if (!s) SWIG_fail;
    if ((size_t)len != strlen(s)) {
      PyErr_SetString(PyExc_ValueError, "lazybreaker: $1_name: a NUL character inside the $1_name");
      SWIG_fail;
    }
    $1 = ($1_ltype)s;
  } else {
    PyErr_Format(PyExc_TypeError, "lazybreaker: $1_name: expected str, got %s", Py_TYPE($input)->tp_name);
    SWIG_fail;
  }
}
%typemap(typecheck) const char *name, const char *path = char *;

%wrapper %{
#include "fastpath.c"
%}
%init %{
  lb_py_error = PyErr_NewException("lazybreaker.Error", NULL, NULL);
  if (!lb_py_error) return NULL;
  Py_INCREF(lb_py_error);
  if (PyModule_AddObject(m, "Error", lb_py_error) != 0) return NULL;
  if (lb_py_fastpath_init(m) != 0) return NULL;
%}

%include "lazybreaker.i"

%rename("%s") lb_config_fields;
PyObject *lb_config_fields(void);
