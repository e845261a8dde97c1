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
    if (!outs) goto done;
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
    if ((off_buf = slot_offset(at, "_buf")) < 0 || (off_aval = slot_offset(at, "aval")) < 0 ||
        (off_npy = slot_offset(at, "_npy")) < 0 || (off_device = slot_offset(at, "_device")) < 0 ||
        (off_fkey = slot_offset(at, "_fkey")) < 0)
        return NULL;
    Py_XSETREF(g_trace_state, Py_NewRef(ts));
    Py_XSETREF(g_eval_trace, Py_NewRef(et));
    Py_XSETREF(g_flags, Py_NewRef(fl));
    Py_XSETREF(g_finish, Py_NewRef(fin));
    Py_XSETREF(g_array_type, Py_NewRef(at));
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

static PyMethodDef methods[] = {
    {"configure", configure, METH_VARARGS, "configure(trace_state, EvalTrace, flags, Array, finish)"},
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
    /* dict and weakref support come from the Python subclass */
    PyObject *t = PyType_FromSpec(&jit_spec);
    if (!t || PyModule_AddObject(m, "JitBase", t) < 0) { Py_XDECREF(t); Py_DECREF(m); return NULL; }
    return m;
}
