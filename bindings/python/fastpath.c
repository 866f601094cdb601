/* fastpath.c: the request path of the Python binding, in C (compiled into
 * lazybreaker._core from bindings/swig/python.i, as Lua's objects.c is):
 * one crossing per protected call instead of a Python frame around two.
 * It decides nothing about breakers: cb_allow, the call, cb_done, in that
 * order, as the Python layer would write them; the outcome of an exception
 * is the caller's rule (a tuple of ignored types, or a classify callable).
 *
 *   _core.guard(handle, fn, classify, on_reject, on_error)
 *       a callable that runs fn(*args, **kwargs) through the breaker
 *       (the decorator; a descriptor, so a decorated method binds self).
 *   _core.guarded_call(handle, classify, on_reject, on_error, fn, *args, **kwargs)
 *       the same, once (Breaker.call).
 *   _core.try_acquire(handle, on_error) -> permit or None
 *   _core.acquire(handle, on_error, on_reject) -> permit, or raises
 *       the two-step form (and the context managers' entry); the permit's success(), failure(),
 * ignore(), report(outcome) report once, a second report raises RuntimeError.
 *
 * classify: a tuple of exception types that are not failures (then any
 * other Exception is a failure, and a BaseException that is not an
 * Exception, asyncio.CancelledError among them, is ignored), or a callable
 * taking the exception and returning a cb_outcome_t. on_reject is
 * (CircuitOpenError, the breaker's name): a rejected call raises it with
 * retry_after_ns from cb_retry_after (None when forced open); on_error(e) turns a library error e
 * (lazybreaker.Error, a stale handle after a close) into the one to raise. Both are the breaker's,
 * written in Python (bindings/python/lazybreaker/_breaker.py). Everything runs with the GIL held:
 * each library call is a few atomic operations. */

/* Raises what on_error makes of the library error now set. */
static PyObject *lb_py_translate(PyObject *on_error) {
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  PyErr_NormalizeException(&type, &value, &tb);
  PyObject *exc = PyObject_CallOneArg(on_error, value ? value : Py_None);
  Py_XDECREF(type);
  Py_XDECREF(value);
  Py_XDECREF(tb);
  if (exc) {
    PyErr_SetObject((PyObject *)Py_TYPE(exc), exc);
    Py_DECREF(exc);
  }
  return NULL;
}

/* Raises the rejection: reject is (exception type, breaker name); the
 * instance is made without running a Python __init__ (Exception's own init,
 * then two attributes: the rest is the class's, retry_after a property of
 * retry_after_ns), so a rejection costs one crossing and no Python frame. */
static PyObject *lb_py_reject(cb_handle h, PyObject *reject) {
  if (!PyTuple_Check(reject) || PyTuple_GET_SIZE(reject) != 2 ||
      !PyType_Check(PyTuple_GET_ITEM(reject, 0))) {
    PyErr_SetString(PyExc_TypeError, "lazybreaker: reject must be (exception type, name)");
    return NULL;
  }
  uint64_t ns = 0;
  const int st = cb_retry_after(h, &ns);
  PyTypeObject *type = (PyTypeObject *)PyTuple_GET_ITEM(reject, 0);
  PyObject *empty = PyTuple_New(0);
  PyObject *exc = empty ? type->tp_new(type, empty, NULL) : NULL;
  if (exc && ((PyTypeObject *)PyExc_Exception)->tp_init(exc, empty, NULL) != 0) Py_CLEAR(exc);
  Py_XDECREF(empty);
  if (!exc) return NULL;
  PyObject *wait =
      st != CB_OK || ns == UINT64_MAX ? Py_NewRef(Py_None) : PyLong_FromUnsignedLongLong(ns);
  if (wait && PyObject_SetAttrString(exc, "retry_after_ns", wait) == 0 &&
      PyObject_SetAttrString(exc, "breaker", PyTuple_GET_ITEM(reject, 1)) == 0)
    PyErr_SetObject((PyObject *)type, exc);
  Py_XDECREF(wait);
  Py_DECREF(exc);
  return NULL;
}

/* The outcome of the exception now set; it stays set. -1 if classify
 * itself failed (its error replaces the call's). */
static int lb_py_outcome(PyObject *classify) {
  if (PyTuple_Check(classify)) {
    if (!PyErr_ExceptionMatches(PyExc_Exception)) return CB_IGNORED;
    if (PyTuple_GET_SIZE(classify) > 0 && PyErr_ExceptionMatches(classify)) return CB_IGNORED;
    return CB_FAILURE;
  }
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  PyErr_NormalizeException(&type, &value, &tb);
  PyObject *r = PyObject_CallOneArg(classify, value ? value : Py_None);
  long outcome = r ? PyLong_AsLong(r) : -1;
  Py_XDECREF(r);
  if (outcome < 0 || outcome > CB_IGNORED) {
    if (!PyErr_Occurred())
      PyErr_SetString(PyExc_ValueError, "lazybreaker: classify must return an outcome");
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(tb);
    return -1;
  }
  PyErr_Restore(type, value, tb);
  return (int)outcome;
}

static PyObject *lb_py_run(cb_handle h, PyObject *classify, PyObject *on_reject, PyObject *on_error,
                           PyObject *fn, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
  cb_ticket ticket = 0;
  int st = cb_allow(h, &ticket);
  if (st == CB_REJECTED) return lb_py_reject(h, on_reject);
  if (st != CB_OK) {
    lb_py_raise(st);
    return lb_py_translate(on_error);
  }
  PyObject *result = PyObject_Vectorcall(fn, args, nargsf, kwnames);
  int outcome = CB_SUCCESS;
  if (!result) {
    outcome = lb_py_outcome(classify);
    if (outcome < 0) outcome = CB_FAILURE; /* classify raised: its error propagates */
  }
  st = cb_done(h, ticket, outcome);
  if (st < 0 && result) {
    Py_DECREF(result);
    lb_py_raise(st);
    return lb_py_translate(on_error);
  }
  return result;
}

/* ---- guard: the decorator's callable ---------------------------------------- */
typedef struct {
  PyObject_HEAD cb_handle h;
  PyObject *fn, *classify, *on_reject, *on_error, *dict;
  vectorcallfunc vectorcall;
} lb_py_guard;

static PyObject *lb_py_guard_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf,
                                        PyObject *kwnames) {
  lb_py_guard *g = (lb_py_guard *)self;
  return lb_py_run(g->h, g->classify, g->on_reject, g->on_error, g->fn, args, nargsf, kwnames);
}

static int lb_py_guard_traverse(PyObject *self, visitproc visit, void *arg) {
  lb_py_guard *g = (lb_py_guard *)self;
  Py_VISIT(g->fn);
  Py_VISIT(g->classify);
  Py_VISIT(g->on_reject);
  Py_VISIT(g->on_error);
  Py_VISIT(g->dict);
  return 0;
}

static int lb_py_guard_clear(PyObject *self) {
  lb_py_guard *g = (lb_py_guard *)self;
  Py_CLEAR(g->fn);
  Py_CLEAR(g->classify);
  Py_CLEAR(g->on_reject);
  Py_CLEAR(g->on_error);
  Py_CLEAR(g->dict);
  return 0;
}

static void lb_py_guard_dealloc(PyObject *self) {
  PyObject_GC_UnTrack(self);
  lb_py_guard_clear(self);
  Py_TYPE(self)->tp_free(self);
}

/* A decorated method binds its instance, as a function does. */
static PyObject *lb_py_guard_get(PyObject *self, PyObject *obj, PyObject *type) {
  if (obj == NULL || obj == Py_None) return Py_NewRef(self);
  return PyMethod_New(self, obj);
}

static PyObject *lb_py_guard_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
  unsigned long long h = 0;
  PyObject *fn, *classify, *on_reject, *on_error;
  if (kwargs && PyDict_GET_SIZE(kwargs)) {
    PyErr_SetString(PyExc_TypeError, "guard() takes no keyword arguments");
    return NULL;
  }
  if (!PyArg_ParseTuple(args, "KOOOO:guard", &h, &fn, &classify, &on_reject, &on_error))
    return NULL;
  if (!PyCallable_Check(fn) || !PyTuple_Check(on_reject) || !PyCallable_Check(on_error)) {
    PyErr_SetString(PyExc_TypeError,
                    "lazybreaker: guard: fn and on_error must be callable, on_reject a tuple");
    return NULL;
  }
  lb_py_guard *g = (lb_py_guard *)type->tp_alloc(type, 0);
  if (!g) return NULL;
  g->h = (cb_handle)h;
  g->fn = Py_NewRef(fn);
  g->classify = Py_NewRef(classify);
  g->on_reject = Py_NewRef(on_reject);
  g->on_error = Py_NewRef(on_error);
  g->vectorcall = lb_py_guard_vectorcall;
  return (PyObject *)g;
}

/* Pickled by reference, as a function is (its module and qualified name,
 * which functools.wraps copied): a decorated function crosses to another
 * process (multiprocessing, a task queue) as the name it is known by. */
static PyObject *lb_py_guard_reduce(PyObject *self, PyObject *unused) {
  return PyObject_GetAttrString(self, "__qualname__");
}

static PyObject *lb_py_guard_repr(PyObject *self) {
  return PyUnicode_FromFormat("<lazybreaker guard of %R>", ((lb_py_guard *)self)->fn);
}

static PyMethodDef lb_py_guard_methods[] = {{"__reduce__", lb_py_guard_reduce, METH_NOARGS, NULL},
                                            {NULL, NULL, 0, NULL}};

static PyMemberDef lb_py_guard_members[] = {
    {"__dictoffset__", T_PYSSIZET, offsetof(lb_py_guard, dict), READONLY, NULL},
    {"__vectorcalloffset__", T_PYSSIZET, offsetof(lb_py_guard, vectorcall), READONLY, NULL},
    {NULL, 0, 0, 0, NULL}};

static PyGetSetDef lb_py_guard_getset[] = {
    {"__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyType_Slot lb_py_guard_slots[] = {{Py_tp_new, (void *)lb_py_guard_new},
                                          {Py_tp_dealloc, (void *)lb_py_guard_dealloc},
                                          {Py_tp_traverse, (void *)lb_py_guard_traverse},
                                          {Py_tp_clear, (void *)lb_py_guard_clear},
                                          {Py_tp_descr_get, (void *)lb_py_guard_get},
                                          {Py_tp_call, (void *)PyVectorcall_Call},
                                          {Py_tp_members, (void *)lb_py_guard_members},
                                          {Py_tp_methods, (void *)lb_py_guard_methods},
                                          {Py_tp_repr, (void *)lb_py_guard_repr},
                                          {Py_tp_getset, (void *)lb_py_guard_getset},
                                          {Py_tp_doc, (void *)"a function guarded by a breaker"},
                                          {0, NULL}};

static PyType_Spec lb_py_guard_spec = {
    "lazybreaker._core.guard", sizeof(lb_py_guard), 0,
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL, lb_py_guard_slots};

/* guarded_call(handle, classify, on_reject, on_error, fn, *args, **kwargs) */
static PyObject *lb_py_guarded_call(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                    PyObject *kwnames) {
  if (nargs < 5) {
    PyErr_SetString(PyExc_TypeError,
                    "guarded_call(handle, classify, on_reject, on_error, fn, *args, **kwargs)");
    return NULL;
  }
  const unsigned long long h = PyLong_AsUnsignedLongLong(args[0]);
  if (h == (unsigned long long)-1 && PyErr_Occurred()) return NULL;
  return lb_py_run((cb_handle)h, args[1], args[2], args[3], args[4], args + 5, (size_t)(nargs - 5),
                   kwnames);
}

/* ---- permit: the two-step form ------------------------------------------------ */
typedef struct {
  PyObject_HEAD cb_handle h;
  cb_ticket ticket;
  int reported;
  PyObject *on_error;
} lb_py_permit;

static PyTypeObject *lb_py_permit_type = NULL;

static int lb_py_permit_traverse(PyObject *self, visitproc visit, void *arg) {
  Py_VISIT(((lb_py_permit *)self)->on_error);
  return 0;
}

static int lb_py_permit_clear(PyObject *self) {
  Py_CLEAR(((lb_py_permit *)self)->on_error);
  return 0;
}

static void lb_py_permit_dealloc(PyObject *self) {
  PyObject_GC_UnTrack(self);
  lb_py_permit_clear(self);
  Py_TYPE(self)->tp_free(self);
}

static PyObject *lb_py_permit_report(lb_py_permit *p, int outcome) {
  if (p->reported) {
    PyErr_SetString(PyExc_RuntimeError, "lazybreaker: this permit was already reported");
    return NULL;
  }
  p->reported = 1;
  const int st = cb_done(p->h, p->ticket, outcome);
  if (st < 0) {
    lb_py_raise(st);
    return lb_py_translate(p->on_error);
  }
  Py_RETURN_NONE;
}

static PyObject *lb_py_permit_success(PyObject *self, PyObject *unused) {
  return lb_py_permit_report((lb_py_permit *)self, CB_SUCCESS);
}
static PyObject *lb_py_permit_failure(PyObject *self, PyObject *unused) {
  return lb_py_permit_report((lb_py_permit *)self, CB_FAILURE);
}
static PyObject *lb_py_permit_ignore(PyObject *self, PyObject *unused) {
  return lb_py_permit_report((lb_py_permit *)self, CB_IGNORED);
}
/* report("success" | "failure" | "ignored") */
static PyObject *lb_py_permit_report_named(PyObject *self, PyObject *outcome) {
  static const char *const names[] = {"success", "failure", "ignored"};
  for (int i = 0; i < 3; i++) {
    if (PyUnicode_Check(outcome) && PyUnicode_CompareWithASCIIString(outcome, names[i]) == 0)
      return lb_py_permit_report((lb_py_permit *)self, i == 0   ? CB_SUCCESS
                                                       : i == 1 ? CB_FAILURE
                                                                : CB_IGNORED);
  }
  PyErr_Format(PyExc_ValueError,
               "lazybreaker: outcome: expected success, failure or ignored, got %R", outcome);
  return NULL;
}

static PyObject *lb_py_permit_reported(PyObject *self, void *unused) {
  return PyBool_FromLong(((lb_py_permit *)self)->reported);
}
static PyObject *lb_py_permit_ticket(PyObject *self, void *unused) {
  return PyLong_FromUnsignedLongLong(((lb_py_permit *)self)->ticket);
}

static PyMethodDef lb_py_permit_methods[] = {
    {"success", lb_py_permit_success, METH_NOARGS, "reports a success"},
    {"failure", lb_py_permit_failure, METH_NOARGS, "reports a failure"},
    {"ignore", lb_py_permit_ignore, METH_NOARGS, "reports an outcome that counts nowhere"},
    {"report", lb_py_permit_report_named, METH_O,
     "reports \"success\", \"failure\" or \"ignored\""},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef lb_py_permit_getset[] = {
    {"reported", lb_py_permit_reported, NULL, "whether the permit was reported", NULL},
    {"ticket", lb_py_permit_ticket, NULL, "the library's ticket", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyType_Slot lb_py_permit_slots[] = {{Py_tp_dealloc, (void *)lb_py_permit_dealloc},
                                           {Py_tp_traverse, (void *)lb_py_permit_traverse},
                                           {Py_tp_clear, (void *)lb_py_permit_clear},
                                           {Py_tp_methods, (void *)lb_py_permit_methods},
                                           {Py_tp_getset, (void *)lb_py_permit_getset},
                                           {Py_tp_doc, (void *)"one admitted call: report it once"},
                                           {0, NULL}};

static PyType_Spec lb_py_permit_spec = {
    "lazybreaker.Permit", sizeof(lb_py_permit), 0,
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_DISALLOW_INSTANTIATION,
    lb_py_permit_slots};

/* A permit for h, or None when rejected; NULL with the error set. */
static PyObject *lb_py_permit_for(PyObject *handle, PyObject *on_error, PyObject *reject) {
  const unsigned long long h = PyLong_AsUnsignedLongLong(handle);
  if (h == (unsigned long long)-1 && PyErr_Occurred()) return NULL;
  cb_ticket ticket = 0;
  const int st = cb_allow((cb_handle)h, &ticket);
  if (st == CB_REJECTED) {
    if (reject) return lb_py_reject((cb_handle)h, reject);
    Py_RETURN_NONE;
  }
  if (st != CB_OK) {
    lb_py_raise(st);
    return lb_py_translate(on_error);
  }
  lb_py_permit *p = PyObject_GC_New(lb_py_permit, lb_py_permit_type);
  if (!p) {
    cb_done((cb_handle)h, ticket, CB_IGNORED); /* never a silent probe */
    return NULL;
  }
  p->h = (cb_handle)h;
  p->ticket = ticket;
  p->reported = 0;
  p->on_error = Py_NewRef(on_error);
  PyObject_GC_Track((PyObject *)p);
  return (PyObject *)p;
}

/* try_acquire(handle, on_error) -> permit or None */
static PyObject *lb_py_try_acquire(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  if (nargs != 2) {
    PyErr_SetString(PyExc_TypeError, "try_acquire(handle, on_error)");
    return NULL;
  }
  return lb_py_permit_for(args[0], args[1], NULL);
}

/* acquire(handle, on_error, reject) -> permit; a rejection raises */
static PyObject *lb_py_acquire(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  if (nargs != 3) {
    PyErr_SetString(PyExc_TypeError, "acquire(handle, on_error, reject)");
    return NULL;
  }
  return lb_py_permit_for(args[0], args[1], args[2]);
}

static PyMethodDef lb_py_fast_functions[] = {
    {"guarded_call", (PyCFunction)(void (*)(void))lb_py_guarded_call, METH_FASTCALL | METH_KEYWORDS,
     "guarded_call(handle, classify, on_reject, on_error, fn, *args, **kwargs)"},
    {"try_acquire", (PyCFunction)(void (*)(void))lb_py_try_acquire, METH_FASTCALL,
     "try_acquire(handle, on_error) -> permit or None"},
    {"acquire", (PyCFunction)(void (*)(void))lb_py_acquire, METH_FASTCALL,
     "acquire(handle, on_error, reject) -> permit; raises the rejection"},
    {NULL, NULL, 0, NULL}};

/* Adds guard, Permit, guarded_call and try_acquire to the module. */
static int lb_py_fastpath_init(PyObject *m) {
  PyObject *guard = PyType_FromSpec(&lb_py_guard_spec);
  if (!guard || PyModule_AddObject(m, "guard", guard) != 0) return -1;
  PyObject *permit = PyType_FromSpec(&lb_py_permit_spec);
  if (!permit) return -1;
  lb_py_permit_type = (PyTypeObject *)permit;
  Py_INCREF(permit);
  if (PyModule_AddObject(m, "Permit", permit) != 0) return -1;
  return PyModule_AddFunctions(m, lb_py_fast_functions);
}
