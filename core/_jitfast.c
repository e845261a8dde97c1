/* jit's fast path in C: the same steps as `_python_call` in core/api.py, which stays the fallback
 * (no compiler at install time, or PURENN_PURE_PYTHON_JIT=1) and the reference the tests compare
 * against. A call qualifies when it has no keyword arguments, runs outside any trace, and every
 * argument is exactly a core.Array that is not committed to a device; its signature (the
 * arguments' `_fkey`s, an int for one argument and a tuple otherwise) must be in the function's
 * `_fast` dict under the current config token. Anything else goes to `self._call_slow(...)`.
 * The interpreter's cost of that path in Python was ~650 ns a call, ~40 % of it here
 * (bench/RESULTS.md). The output Array is built as Array.__init__ would, by writing its slots. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

typedef struct {
    PyObject_HEAD
    PyObject *fast;      /* dict signature -> entry, or None */
} JitBase;

static PyObject *g_trace_state, *g_eval_trace, *g_flags, *g_array_type, *g_finish;
static Py_ssize_t off_buf, off_aval, off_npy, off_device, off_fkey;
static PyObject *s_trace, *s_token, *s_consume, *s_type_id, *s_call_slow;

static Py_ssize_t slot_offset(PyObject *type, const char *name);

/* jaxlib queues the Python references it releases on its own threads until collect_garbage() runs
 * (core/runtime/executable.py, count_execution): both fast paths call it every `g_collect_every`
 * executions, counted together. */
static PyObject *g_collect;
static unsigned long long g_executions, g_collect_every = 1024;

static int count_execution(void) {
    if (g_collect == NULL || ++g_executions % g_collect_every) return 0;
    PyObject *r = PyObject_CallNoArgs(g_collect);
    if (!r) return -1;
    Py_DECREF(r);
    return 0;
}

#define SLOT(o, off) (*(PyObject **)((char *)(o) + (off)))

static PyObject *slow(PyObject *self, PyObject *args, PyObject *kwargs) {
    PyObject *m = PyObject_GetAttr(self, s_call_slow);
    if (!m) return NULL;
    PyObject *r = PyObject_Call(m, args, kwargs);
    Py_DECREF(m);
    return r;
}

static PyObject *jit_call(PyObject *self, PyObject *args, PyObject *kwargs) {
    JitBase *j = (JitBase *)self;
    if (g_array_type == NULL || j->fast == NULL || !PyDict_Check(j->fast) || (kwargs && PyDict_GET_SIZE(kwargs)))
        return slow(self, args, kwargs);
    PyObject *trace = PyObject_GetAttr(g_trace_state, s_trace);
    if (!trace) return NULL;
    int eval = (PyObject *)Py_TYPE(trace) == g_eval_trace;
    Py_DECREF(trace);
    if (!eval) return slow(self, args, kwargs);
    Py_ssize_t n = PyTuple_GET_SIZE(args);
    PyObject *key;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *a = PyTuple_GET_ITEM(args, i);
        if ((PyObject *)Py_TYPE(a) != g_array_type || SLOT(a, off_fkey) == NULL || SLOT(a, off_fkey) == Py_None)
            return slow(self, args, kwargs);
    }
    if (n == 1) {
        key = SLOT(PyTuple_GET_ITEM(args, 0), off_fkey);
        Py_INCREF(key);
    } else {
        key = PyTuple_New(n);
        if (!key) return NULL;
        for (Py_ssize_t i = 0; i < n; i++) {
            PyObject *k = SLOT(PyTuple_GET_ITEM(args, i), off_fkey);
            Py_INCREF(k);
            PyTuple_SET_ITEM(key, i, k);
        }
    }
    PyObject *entry = PyDict_GetItemWithError(j->fast, key);  /* borrowed */
    Py_DECREF(key);
    if (!entry) {
        if (PyErr_Occurred()) return NULL;
        return slow(self, args, kwargs);
    }
    PyObject *token = PyDict_GetItemWithError(g_flags, s_token);
    if (!token && PyErr_Occurred()) return NULL;
    /* entry: (token, execute, handlers, const_bufs list, out_avals tuple, out_tree or None) */
    if (!PyTuple_Check(entry) || PyTuple_GET_SIZE(entry) != 6 || PyTuple_GET_ITEM(entry, 0) != token ||
        !PyList_Check(PyTuple_GET_ITEM(entry, 3)) || !PyTuple_Check(PyTuple_GET_ITEM(entry, 4)) ||
        PyTuple_GET_SIZE(PyTuple_GET_ITEM(entry, 4)) < 1)
        return slow(self, args, kwargs);
    Py_INCREF(entry);  /* keep it alive while we run, whatever the call does to the dict */
    PyObject *execute = PyTuple_GET_ITEM(entry, 1), *handlers = PyTuple_GET_ITEM(entry, 2);
    PyObject *consts = PyTuple_GET_ITEM(entry, 3), *out_avals = PyTuple_GET_ITEM(entry, 4);
    PyObject *out_tree = PyTuple_GET_ITEM(entry, 5);
    Py_ssize_t nc = PyList_GET_SIZE(consts);
    PyObject *bufs = PyList_New(nc + n), *res = NULL, *outs = NULL, *out = NULL;
    if (!bufs) goto done;
    for (Py_ssize_t i = 0; i < nc; i++) {
        PyObject *b = PyList_GET_ITEM(consts, i);
        Py_INCREF(b);
        PyList_SET_ITEM(bufs, i, b);
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *b = SLOT(PyTuple_GET_ITEM(args, i), off_buf);
        if (!b) { PyErr_SetString(PyExc_AttributeError, "_buf"); goto done; }
        Py_INCREF(b);
        PyList_SET_ITEM(bufs, nc + i, b);
    }
    res = PyObject_CallOneArg(execute, bufs);
    if (!res) goto done;
    outs = PyObject_CallMethodOneArg(res, s_consume, handlers);
    if (!outs || count_execution() < 0) goto done;
    if (!PyList_Check(outs) || PyList_GET_SIZE(outs) < 1) {
        PyErr_SetString(PyExc_SystemError, "jit fast path: the executable returned no outputs");
        goto done;
    }
    if (out_tree == Py_None) {
        PyObject *aval = PyTuple_GET_ITEM(out_avals, 0);
        PyObject *tid = PyObject_GetAttr(aval, s_type_id);
        if (!tid) goto done;
        PyTypeObject *t = (PyTypeObject *)g_array_type;
        out = t->tp_alloc(t, 0);
        if (!out) { Py_DECREF(tid); goto done; }
        PyObject *b0 = PyList_GET_ITEM(outs, 0);
        Py_INCREF(b0); SLOT(out, off_buf) = b0;
        Py_INCREF(aval); SLOT(out, off_aval) = aval;
        Py_INCREF(Py_None); SLOT(out, off_npy) = Py_None;
        Py_INCREF(Py_None); SLOT(out, off_device) = Py_None;
        SLOT(out, off_fkey) = tid;
    } else {
        out = PyObject_CallFunctionObjArgs(g_finish, out_tree, outs, out_avals, NULL);
    }
done:
    Py_XDECREF(outs);
    Py_XDECREF(res);
    Py_XDECREF(bufs);
    Py_DECREF(entry);
    return out;
}

/* ----- eager primitives: Primitive.bind's fast path ----------------------------------------------
 * The same steps as the fast lookup at the top of `dispatch.apply_primitive`, which stays the
 * fallback and the reference. `bind(*args, **params)` qualifies when the current trace is the eval
 * trace and every positional argument is exactly a core.Array not committed to a device. Its key
 * in the primitive's own `_eager_fast` dict: the one argument's `_fkey` (an int) when there is one
 * argument and no params, else the tuple (fkey_0, ..., fkey_n-1, name_0, value_0, name_1, ...)
 * with the params in call order. The entry, (token, execute, handlers, out_avals, out_fkeys,
 * multiple_results), is valid while its token is `_jit_fast_token` (None while debug_nans/infs,
 * disable_jit or a per-thread override is on; a new token after any config change, so an entry
 * remembered before key-reuse checking was turned on is never used while it is on). Anything else,
 * including an unhashable param, goes to `self._bind_slow(*args, **params)`. */

typedef struct {
    PyObject_HEAD
    PyObject *eager_fast;  /* dict key -> entry, or None */
} PrimBase;

static PyObject *g_on_exec_error;       /* dispatch._raise_if_deleted(args) */
static unsigned long long g_eager_hits;  /* read by dispatch's cache info */
static PyObject *s_bind_slow;

static PyObject *prim_slow(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
    PyObject *m = PyObject_GetAttr(self, s_bind_slow);
    if (!m) return NULL;
    PyObject *r = PyObject_Vectorcall(m, args, nargs, kwnames);
    Py_DECREF(m);
    return r;
}

static PyObject *new_array(PyObject *buf, PyObject *aval, PyObject *fkey) {
    PyTypeObject *t = (PyTypeObject *)g_array_type;
    PyObject *out = t->tp_alloc(t, 0);
    if (!out) return NULL;
    Py_INCREF(buf); SLOT(out, off_buf) = buf;
    Py_INCREF(aval); SLOT(out, off_aval) = aval;
    Py_INCREF(Py_None); SLOT(out, off_npy) = Py_None;
    Py_INCREF(Py_None); SLOT(out, off_device) = Py_None;
    Py_INCREF(fkey); SLOT(out, off_fkey) = fkey;
    return out;
}

/* wrap_arrays(bufs, avals) -> [Array(buf, aval) ...]: a program's outputs as uncommitted Arrays, built
   here rather than by calling Array's Python __init__ per output (~0.4 us each: a train step's state
   has dozens of leaves). */
static PyObject *wrap_arrays(PyObject *self, PyObject *args) {
    PyObject *bufs, *avals;
    if (!PyArg_ParseTuple(args, "OO", &bufs, &avals)) return NULL;
    if (g_array_type == NULL) { PyErr_SetString(PyExc_RuntimeError, "wrap_arrays: configure() was not called"); return NULL; }
    PyObject *b = PySequence_Fast(bufs, "wrap_arrays: bufs must be a sequence");
    if (!b) return NULL;
    PyObject *a = PySequence_Fast(avals, "wrap_arrays: avals must be a sequence");
    if (!a) { Py_DECREF(b); return NULL; }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(b);
    if (PySequence_Fast_GET_SIZE(a) < n) {
        PyErr_SetString(PyExc_ValueError, "wrap_arrays: fewer avals than buffers");
        Py_DECREF(a); Py_DECREF(b); return NULL;
    }
    PyObject *out = PyList_New(n);
    for (Py_ssize_t i = 0; out && i < n; i++) {
        PyObject *aval = PySequence_Fast_GET_ITEM(a, i);
        PyObject *fkey = PyObject_GetAttr(aval, s_type_id);
        PyObject *arr = fkey ? new_array(PySequence_Fast_GET_ITEM(b, i), aval, fkey) : NULL;
        Py_XDECREF(fkey);
        if (!arr) { Py_CLEAR(out); break; }
        PyList_SET_ITEM(out, i, arr);
    }
    Py_DECREF(a); Py_DECREF(b);
    return out;
}

static PyObject *prim_bind(PyObject *self, PyObject *const *args, Py_ssize_t nargsf, PyObject *kwnames) {
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    PyObject *fast = ((PrimBase *)self)->eager_fast;
    if (g_array_type == NULL || g_on_exec_error == NULL || fast == NULL || !PyDict_CheckExact(fast) ||
        PyDict_GET_SIZE(fast) == 0)
        return prim_slow(self, args, nargs, kwnames);
    PyObject *trace = PyObject_GetAttr(g_trace_state, s_trace);
    if (!trace) return NULL;
    int eval = (PyObject *)Py_TYPE(trace) == g_eval_trace;
    Py_DECREF(trace);
    if (!eval) return prim_slow(self, args, nargs, kwnames);
    for (Py_ssize_t i = 0; i < nargs; i++) {
        PyObject *a = args[i];
        if ((PyObject *)Py_TYPE(a) != g_array_type || SLOT(a, off_fkey) == NULL || SLOT(a, off_fkey) == Py_None ||
            SLOT(a, off_buf) == NULL)
            return prim_slow(self, args, nargs, kwnames);
    }
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    PyObject *key;
    if (nargs == 1 && nkw == 0) {
        key = Py_NewRef(SLOT(args[0], off_fkey));
    } else {
        key = PyTuple_New(nargs + 2 * nkw);
        if (!key) return NULL;
        for (Py_ssize_t i = 0; i < nargs; i++)
            PyTuple_SET_ITEM(key, i, Py_NewRef(SLOT(args[i], off_fkey)));
        for (Py_ssize_t i = 0; i < nkw; i++) {
            PyTuple_SET_ITEM(key, nargs + 2 * i, Py_NewRef(PyTuple_GET_ITEM(kwnames, i)));
            PyTuple_SET_ITEM(key, nargs + 2 * i + 1, Py_NewRef(args[nargs + i]));
        }
    }
    PyObject *entry = PyDict_GetItemWithError(fast, key);  /* borrowed */
    Py_DECREF(key);
    if (!entry) {
        if (PyErr_Occurred()) {  /* an unhashable param: the slow path reports it as it always has */
            if (!PyErr_ExceptionMatches(PyExc_TypeError)) return NULL;
            PyErr_Clear();
        }
        return prim_slow(self, args, nargs, kwnames);
    }
    PyObject *token = PyDict_GetItemWithError(g_flags, s_token);
    if (!token && PyErr_Occurred()) return NULL;
    /* entry: (token, execute, handlers, out_avals tuple, out_fkeys tuple, multiple_results bool) */
    if (!PyTuple_CheckExact(entry) || PyTuple_GET_SIZE(entry) != 6 || PyTuple_GET_ITEM(entry, 0) != token ||
        !PyTuple_CheckExact(PyTuple_GET_ITEM(entry, 3)) || !PyTuple_CheckExact(PyTuple_GET_ITEM(entry, 4)) ||
        PyTuple_GET_SIZE(PyTuple_GET_ITEM(entry, 3)) < 1 ||
        PyTuple_GET_SIZE(PyTuple_GET_ITEM(entry, 3)) != PyTuple_GET_SIZE(PyTuple_GET_ITEM(entry, 4)))
        return prim_slow(self, args, nargs, kwnames);
    Py_INCREF(entry);  /* keep it alive while we run, whatever the call does to the dict */
    PyObject *execute = PyTuple_GET_ITEM(entry, 1), *handlers = PyTuple_GET_ITEM(entry, 2);
    PyObject *out_avals = PyTuple_GET_ITEM(entry, 3), *out_fkeys = PyTuple_GET_ITEM(entry, 4);
    int multiple = PyTuple_GET_ITEM(entry, 5) == Py_True;
    Py_ssize_t nout = PyTuple_GET_SIZE(out_avals);
    PyObject *bufs = PyList_New(nargs), *res = NULL, *outs = NULL, *out = NULL;
    if (!bufs) goto done;
    for (Py_ssize_t i = 0; i < nargs; i++)
        PyList_SET_ITEM(bufs, i, Py_NewRef(SLOT(args[i], off_buf)));
    res = PyObject_CallOneArg(execute, bufs);
    if (res) outs = PyObject_CallMethodOneArg(res, s_consume, handlers);
    if (!outs) {
        if (PyErr_ExceptionMatches(PyExc_RuntimeError)) {
            /* as the slow path: an execution that failed because an operand was donated says so */
            PyObject *et, *ev, *etb;
            PyErr_Fetch(&et, &ev, &etb);
            PyObject *argt = PyTuple_New(nargs);
            if (!argt) { Py_XDECREF(et); Py_XDECREF(ev); Py_XDECREF(etb); goto done; }
            for (Py_ssize_t i = 0; i < nargs; i++) PyTuple_SET_ITEM(argt, i, Py_NewRef(args[i]));
            PyObject *r = PyObject_CallOneArg(g_on_exec_error, argt);
            Py_DECREF(argt);
            if (!r) { Py_XDECREF(et); Py_XDECREF(ev); Py_XDECREF(etb); goto done; }
            Py_DECREF(r);
            PyErr_Restore(et, ev, etb);
        }
        goto done;
    }
    if (!PyList_CheckExact(outs) || PyList_GET_SIZE(outs) != nout) {
        PyErr_SetString(PyExc_SystemError, "eager fast path: the executable returned an unexpected output list");
        goto done;
    }
    if (count_execution() < 0) goto done;
    g_eager_hits++;
    if (!multiple) {
        out = new_array(PyList_GET_ITEM(outs, 0), PyTuple_GET_ITEM(out_avals, 0), PyTuple_GET_ITEM(out_fkeys, 0));
    } else {
        out = PyList_New(nout);
        if (!out) goto done;
        for (Py_ssize_t i = 0; i < nout; i++) {
            PyObject *o = new_array(PyList_GET_ITEM(outs, i), PyTuple_GET_ITEM(out_avals, i),
                                    PyTuple_GET_ITEM(out_fkeys, i));
            if (!o) { Py_CLEAR(out); goto done; }
            PyList_SET_ITEM(out, i, o);
        }
    }
done:
    Py_XDECREF(outs);
    Py_XDECREF(res);
    Py_XDECREF(bufs);
    Py_DECREF(entry);
    return out;
}

static PyMemberDef prim_members[] = {
    {"_eager_fast", T_OBJECT, offsetof(PrimBase, eager_fast), 0, "eager fast-path key -> entry (or None)"},
    {NULL}
};

static PyMethodDef prim_methods[] = {
    {"bind", (PyCFunction)(void (*)(void))prim_bind, METH_FASTCALL | METH_KEYWORDS,
     "bind(*args, **params): apply the primitive in the current trace (eagerly: a remembered executable "
     "when the arguments qualify, else `_bind_slow`)."},
    {NULL}
};

static int prim_traverse(PrimBase *self, visitproc visit, void *arg) {
    Py_VISIT(self->eager_fast);
    Py_VISIT(Py_TYPE(self));
    return 0;
}

static int prim_clear(PrimBase *self) {
    Py_CLEAR(self->eager_fast);
    return 0;
}

static void prim_dealloc(PrimBase *self) {
    PyTypeObject *tp = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    prim_clear(self);
    tp->tp_free((PyObject *)self);
    Py_DECREF(tp);
}

static PyType_Slot prim_slots[] = {
    {Py_tp_methods, prim_methods},
    {Py_tp_members, prim_members},
    {Py_tp_traverse, prim_traverse},
    {Py_tp_clear, prim_clear},
    {Py_tp_dealloc, prim_dealloc},
    {Py_tp_doc, "Base of Primitive: the eager fast path of bind, in C."},
    {0, NULL}
};

static PyType_Spec prim_spec = {
    "core._jitfast.PrimitiveBase", sizeof(PrimBase), 0,
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC, prim_slots
};

static int set_common(PyObject *ts, PyObject *et, PyObject *fl, PyObject *at) {
    if ((off_buf = slot_offset(at, "_buf")) < 0 || (off_aval = slot_offset(at, "aval")) < 0 ||
        (off_npy = slot_offset(at, "_npy")) < 0 || (off_device = slot_offset(at, "_device")) < 0 ||
        (off_fkey = slot_offset(at, "_fkey")) < 0)
        return -1;
    Py_XSETREF(g_trace_state, Py_NewRef(ts));
    Py_XSETREF(g_eval_trace, Py_NewRef(et));
    Py_XSETREF(g_flags, Py_NewRef(fl));
    Py_XSETREF(g_array_type, Py_NewRef(at));
    return 0;
}

static PyObject *configure_eager(PyObject *mod, PyObject *args) {
    PyObject *ts, *et, *fl, *at, *on_err, *collect;
    unsigned long long every;
    if (!PyArg_ParseTuple(args, "OOO!O!OOK", &ts, &et, &PyDict_Type, &fl, &PyType_Type, &at, &on_err, &collect,
                          &every))
        return NULL;
    if (every < 1) {
        PyErr_SetString(PyExc_ValueError, "configure_eager: executions per collect must be >= 1");
        return NULL;
    }
    if (set_common(ts, et, fl, at) < 0) return NULL;
    Py_XSETREF(g_on_exec_error, Py_NewRef(on_err));
    Py_XSETREF(g_collect, Py_NewRef(collect));
    g_collect_every = every;
    Py_RETURN_NONE;
}

static PyObject *eager_hits(PyObject *mod, PyObject *unused) {
    return PyLong_FromUnsignedLongLong(g_eager_hits);
}

static PyObject *reset_eager_hits(PyObject *mod, PyObject *unused) {
    g_eager_hits = 0;
    Py_RETURN_NONE;
}

static Py_ssize_t slot_offset(PyObject *type, const char *name) {
    PyObject *d = PyObject_GetAttrString(type, name);
    if (!d) return -1;
    if (!PyObject_TypeCheck(d, &PyMemberDescr_Type)) {
        Py_DECREF(d);
        PyErr_Format(PyExc_TypeError, "%s is not a slot", name);
        return -1;
    }
    Py_ssize_t off = ((PyMemberDescrObject *)d)->d_member->offset;
    Py_DECREF(d);
    return off;
}

static PyObject *configure(PyObject *mod, PyObject *args) {
    PyObject *ts, *et, *fl, *at, *fin;
    if (!PyArg_ParseTuple(args, "OOO!O!O", &ts, &et, &PyDict_Type, &fl, &PyType_Type, &at, &fin)) return NULL;
    if (set_common(ts, et, fl, at) < 0) return NULL;
    Py_XSETREF(g_finish, Py_NewRef(fin));
    Py_RETURN_NONE;
}

static PyMemberDef jit_members[] = {
    {"_fast", T_OBJECT, offsetof(JitBase, fast), 0, "signature -> fast-path entry (or None)"},
    {NULL}
};

static int jit_traverse(JitBase *self, visitproc visit, void *arg) {
    Py_VISIT(self->fast);
    Py_VISIT(Py_TYPE(self));
    return 0;
}

static int jit_clear(JitBase *self) {
    Py_CLEAR(self->fast);
    return 0;
}

static void jit_dealloc(JitBase *self) {
    PyTypeObject *tp = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    jit_clear(self);
    tp->tp_free((PyObject *)self);
    Py_DECREF(tp);
}

static PyType_Slot jit_slots[] = {
    {Py_tp_call, jit_call},
    {Py_tp_members, jit_members},
    {Py_tp_traverse, jit_traverse},
    {Py_tp_clear, jit_clear},
    {Py_tp_dealloc, jit_dealloc},
    {Py_tp_doc, "Base of jitted functions: the fast path of __call__, in C."},
    {0, NULL}
};

static PyType_Spec jit_spec = {
    "core._jitfast.JitBase", sizeof(JitBase), 0,
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC, jit_slots
};

/* core.Array's host value through the Python buffer protocol. NumPy asks an object for a buffer
 * before it looks for `__array__`, so with this slot `np.asarray(x)` of a core.Array runs no Python:
 * the export is jaxlib's own (on CPU a read-only, zero-copy view of the device buffer that waits
 * until the buffer is computed and holds a reference that keeps it alive and unchanged), which is
 * how `np.asarray` reads a jax Array. Through `__array__` the same read cost ~0.8 us more than jax's
 * (three Python frames and a memoryview; bench/RESULTS.md, Latency). `Array` inherits the slot
 * from `ArrayBase`; `configure_array(Array)` names the type whose `_buf` slot is exported directly.
 * Anything else (a subclass such as ShardedArray, a buffer jaxlib will not export: bfloat16, a
 * deleted one, a GPU buffer) exports the result of `self._value()`, the ndarray `__array__` returns,
 * so the value and the errors are those of `np.asarray(x)` through `__array__`. */
static PyObject *g_host_array_type, *s_value;
static Py_ssize_t off_host_buf;

static int array_getbuffer(PyObject *self, Py_buffer *view, int flags) {
    if (g_host_array_type != NULL && (PyObject *)Py_TYPE(self) == g_host_array_type) {
        PyObject *buf = SLOT(self, off_host_buf);
        if (buf != NULL) {
            if (PyObject_GetBuffer(buf, view, flags) == 0) return 0;
            if (!PyErr_ExceptionMatches(PyExc_Exception)) return -1;
            PyErr_Clear();  /* the route below raises the error `np.asarray` through `__array__` would */
        }
    }
    PyObject *value = PyObject_CallMethodNoArgs(self, s_value);
    if (!value) return -1;
    int r = PyObject_GetBuffer(value, view, flags);
    Py_DECREF(value);
    return r;
}

static PyType_Slot array_base_slots[] = {
    {Py_bf_getbuffer, array_getbuffer},
    {Py_tp_doc, "Base of core.Array: exports the array's host value through the buffer protocol."},
    {0, NULL}
};

static PyType_Spec array_base_spec = {
    "core._jitfast.ArrayBase", sizeof(PyObject), 0, Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, array_base_slots
};

static PyObject *configure_array(PyObject *mod, PyObject *arg) {
    if (!PyType_Check(arg)) {
        PyErr_Format(PyExc_TypeError, "configure_array: expected the core.Array type, got %R", arg);
        return NULL;
    }
    Py_ssize_t off = slot_offset(arg, "_buf");
    if (off < 0) return NULL;
    off_host_buf = off;
    Py_XSETREF(g_host_array_type, Py_NewRef(arg));
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"configure", configure, METH_VARARGS, "configure(trace_state, EvalTrace, flags, Array, finish)"},
    {"configure_eager", configure_eager, METH_VARARGS, "configure_eager(trace_state, EvalTrace, flags, Array, on_exec_error, collect_garbage, executions_per_collect): turn Primitive.bind's fast path on"},
    {"eager_hits", eager_hits, METH_NOARGS, "how many eager calls the C fast path served"},
    {"reset_eager_hits", reset_eager_hits, METH_NOARGS, "set that count to zero"},
    {"wrap_arrays", wrap_arrays, METH_VARARGS, "wrap_arrays(bufs, avals): a program's output buffers as uncommitted Arrays"},
    {"configure_array", configure_array, METH_O, "configure_array(Array): the type whose `_buf` ArrayBase exports directly"},
    {NULL}
};

static struct PyModuleDef moddef = {PyModuleDef_HEAD_INIT, "_jitfast", NULL, -1, methods};

PyMODINIT_FUNC PyInit__jitfast(void) {
    PyObject *m = PyModule_Create(&moddef);
    if (!m) return NULL;
    s_trace = PyUnicode_InternFromString("trace");
    s_token = PyUnicode_InternFromString("_jit_fast_token");
    s_consume = PyUnicode_InternFromString("consume_with_handlers");
    s_type_id = PyUnicode_InternFromString("type_id");
    s_call_slow = PyUnicode_InternFromString("_call_slow");
    s_bind_slow = PyUnicode_InternFromString("_bind_slow");
    s_value = PyUnicode_InternFromString("_value");
    /* dict and weakref support come from the Python subclass */
    PyObject *t = PyType_FromSpec(&jit_spec);
    if (!t || PyModule_AddObject(m, "JitBase", t) < 0) { Py_XDECREF(t); Py_DECREF(m); return NULL; }
    PyObject *p = PyType_FromSpec(&prim_spec);
    if (!p || PyModule_AddObject(m, "PrimitiveBase", p) < 0) { Py_XDECREF(p); Py_DECREF(m); return NULL; }
    PyObject *a = PyType_FromSpec(&array_base_spec);
    if (!a || PyModule_AddObject(m, "ArrayBase", a) < 0) { Py_XDECREF(a); Py_DECREF(m); return NULL; }
    return m;
}
