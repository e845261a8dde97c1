"""Run the `core.numpy` test files with every public function called through `core.jit`.

With `PURENN_TEST_UNDER_JIT=1` (see tests/conftest.py and tests/test_numpy_under_jit.py), each test
of the numpy test files sees, for the duration of the test, proxies in place of the modules it
imported (`jnp`, `LA`, `jfft`, `special`, `indexing`): a public function looked up through a proxy
is a wrapper that calls the real function through `core.jit`. `Array.__getitem__` and `Array.at`
are patched the same way. The functions themselves, and the calls they make to each other, are
untouched, so a failure means "this function is not trace-safe" (or differs under jit).

How arguments are split: array leaves (core.Array, NumPy arrays of a traceable dtype), anywhere
inside lists, tuples, dicts and slices, become traced arguments; everything else (Python scalars,
axes, shapes, strings, dtypes, None, callables) is static. The static part is encoded into a
hashable key that also records each value's type (so `1`, `1.0` and `True` do not share a trace)
and is decoded back to the very same Python objects (a list stays a list) inside the traced
function. A value that cannot be made hashable (e.g. a NumPy string array) makes the call run
eagerly. One jitted function per wrapped function, with a large signature cache, so signatures
repeat across tests without retracing.

A wrapper called while some trace is active (the test jits or traces by itself) calls the real
function directly: it is already being traced.
"""
import collections
import functools
import inspect
import os

import numpy as np

import core
import core.numpy
import core.numpy.fft
import core.numpy.indexing
import core.numpy.linalg
import core.scipy.special
from core import api, dtypes, test_util
from core.array import Array
from core.trace import EvalTrace, current_trace

ENV_VAR = "PURENN_TEST_UNDER_JIT"

# The modules whose public functions run under jit, and the test files that call them.
WRAPPED_MODULES = (core.numpy, core.numpy.linalg, core.numpy.fft, core.scipy.special, core.numpy.indexing)
NUMPY_TEST_FILES = ("test_numpy_creation.py", "test_numpy_indexing.py", "test_numpy_manipulation.py",
                    "test_numpy_products.py", "test_numpy_reductions.py", "test_numpy_sorting.py",
                    "test_numpy_ufuncs.py", "test_linalg.py", "test_fft.py", "test_scipy_special.py")


def enabled():
    return os.environ.get(ENV_VAR, "") not in ("", "0")


def is_numpy_test_file(path):
    name = os.path.basename(str(path))
    return name in NUMPY_TEST_FILES or (name.startswith("test_numpy_") and name.endswith(".py")
                                        and name != "test_numpy_under_jit.py")


# ----- exemptions: calls that run eagerly, by design ----------------------------------------------
# Each entry maps a function name to a predicate over its bound arguments (inspect.BoundArguments,
# defaults applied): True means "run this call eagerly". Everything else must work under jit; a
# failure there is a bug to fix in core.

def _always(ba):
    return True


def _no_size(ba):
    return ba.arguments.get("size") is None


def _is_array(x):
    return isinstance(x, (Array, np.ndarray))


def _arg_is_array(name):
    return lambda ba: _is_array(ba.arguments.get(name))


def _has_bool_array(x):
    if _is_array(x):
        return np.dtype(x.dtype) == np.bool_
    if isinstance(x, (list, tuple)):
        return any(_has_bool_array(i) for i in x)
    return False


# Not array functions, or creation from host data: they compute on dtypes, shapes or Python values
# and return Python values (types, shape tuples, bools, a contraction path) that a jitted function
# cannot return as such, or they only copy host data to the device (nothing to trace). A list
# with arrays inside (`jnp.array([a, b])`) does run under jit, as does every other creation
# function with static arguments.
NOT_TRACED = {
    **{name: _always for name in core.numpy.dtype_api.__all__},
    "broadcast_shapes": _always,
    "isrealobj": _always,
    "iscomplexobj": _always,
    "einsum_path": _always,
    "array": lambda ba: not _contains_array(ba.arguments.get("object")) or _is_array(ba.arguments.get("object")),
    "asarray": lambda ba: not _contains_array(ba.arguments.get("a")) or _is_array(ba.arguments.get("a")),
    "frombuffer": _always,
    "isscalar": _always,
    "iterable": _always,
    "frompyfunc": _always,  # returns a ufunc object (its methods jit their own loops)
}

# Calls whose result shape depends on argument values (JAX needs them concrete too, unless a
# static size=, length= or total_repeat_length= bounds the result). Under jit each raises a
# clear error naming the argument and the fix: tests/test_numpy_under_jit.py checks every entry.
NEEDS_CONCRETE = {
    "arange": lambda ba: any(_is_array(ba.arguments.get(k)) for k in ("start", "stop", "step")),
    "unique": _no_size,
    "nonzero": _no_size,
    "flatnonzero": _no_size,
    "argwhere": _no_size,
    "where": lambda ba: ba.arguments.get("x") is None and ba.arguments.get("y") is None and _no_size(ba),
    "compress": _no_size,
    "extract": _no_size,
    "union1d": _no_size,
    "intersect1d": _no_size,
    "setdiff1d": _no_size,
    "setxor1d": _no_size,
    "trim_zeros": _always,           # the result length is the count of leading/trailing zeros
    "bincount": lambda ba: ba.arguments.get("length") is None,  # result length is max(x) + 1
    "repeat": lambda ba: _is_array(ba.arguments.get("repeats")) and ba.arguments.get("total_repeat_length") is None,
    # split points, deleted/inserted positions, tile counts, pad widths and shapes fix the result shape
    "split": _arg_is_array("indices_or_sections"),
    "array_split": _arg_is_array("indices_or_sections"),
    "hsplit": _arg_is_array("indices_or_sections"),
    "vsplit": _arg_is_array("indices_or_sections"),
    "dsplit": _arg_is_array("indices_or_sections"),
    "delete": _arg_is_array("obj"),
    "insert": _arg_is_array("obj"),
    "tile": _arg_is_array("reps"),
    "pad": _arg_is_array("pad_width"),
    "reshape": lambda ba: _is_array(ba.arguments.get("shape")) or _is_array(ba.arguments.get("newshape")),
    "resize": _arg_is_array("new_shape"),
    "broadcast_to": _arg_is_array("shape"),
    "ix_": lambda ba: _has_bool_array(ba.arguments.get("args")),  # a boolean mask is its nonzero positions
    # mode='raise' checks index values on the host (JAX has no 'raise' under jit either)
    "choose": lambda ba: ba.arguments.get("mode") == "raise",
    "ravel_multi_index": lambda ba: ba.arguments.get("mode") == "raise",
    # issue 16's additions: unique's array-API forms and mask_indices without size=, roots with
    # strip_zeros=True (the default: the output's length depends on the leading and trailing zeros,
    # as in JAX), and trimming leading zeros of a polynomial
    **{name: _no_size for name in ("unique_values", "unique_counts", "unique_inverse", "unique_all", "mask_indices")},
    "roots": lambda ba: bool(ba.arguments.get("strip_zeros")),
    "polymul": lambda ba: bool(ba.arguments.get("trim_leading_zeros")),
    "polydiv": lambda ba: bool(ba.arguments.get("trim_leading_zeros")),
}
# Array indexing with a boolean mask (`x[mask]`, `x.at[mask]`) needs it concrete as well
# (`_index_needs_concrete` below), and so does `ufunc.at` with one where `at` is that scatter
# (`jnp.add.at(x, mask, 1.0, inplace=False)`; the other ufuncs' `at` refuses masks, eager or not).
UFUNC_METHODS = ("__call__", "reduce", "accumulate", "at", "reduceat", "outer")
SCATTER_AT_UFUNCS = ("add", "subtract", "multiply", "maximum", "minimum")
NEEDS_CONCRETE.update({f"{name}.at": lambda ba: _has_bool_array(ba.arguments.get("indices"))
                       for name in SCATTER_AT_UFUNCS})

EXEMPT = {**NOT_TRACED, **NEEDS_CONCRETE}


def _contains_array(x):
    if _is_array(x):
        return True
    if isinstance(x, (list, tuple)):
        return any(_contains_array(i) for i in x)
    return False


def _exempt(name, fn, args, kwargs):
    pred = EXEMPT.get(name)
    if pred is None:
        return False
    if pred is _always:
        return True
    try:
        ba = inspect.signature(fn).bind(*args, **kwargs)
    except TypeError:
        return True  # a wrong call: let the function raise its own error, eagerly
    ba.apply_defaults()
    return bool(pred(ba))


# ----- hashable encoding of the static part of the arguments --------------------------------------

class _Unencodable(Exception):
    """An argument that can be neither traced nor used as a static (hashable) value."""


class _Key:
    """A hashable, type-aware stand-in for one node of the argument tree (`value`, the original
    scalar, is carried along but takes no part in equality)."""
    __slots__ = ("kind", "data", "value")

    def __init__(self, kind, data, value=None):
        self.kind, self.data, self.value = kind, data, value

    def __hash__(self):
        return hash((self.kind, self.data))

    def __eq__(self, other):
        return type(other) is _Key and self.kind == other.kind and self.data == other.data

    def __repr__(self):
        return f"{self.kind}{self.data!r}"


def _traceable_array(x):
    if isinstance(x, Array):
        return True
    if isinstance(x, np.ndarray):
        return x.dtype in dtypes._SUPPORTED_SET or x.dtype.kind in "biufc"
    return False


def encode(x, leaves):
    """(hashable key, with traced leaves appended to `leaves`) for argument tree `x`."""
    if _traceable_array(x):
        leaves.append(x)
        return _Key("leaf", len(leaves) - 1)
    t = type(x)
    if t in (bool, int, float, complex) or isinstance(x, np.generic):
        # repr separates -0.0 from 0.0 and keeps NaN equal to itself; the type separates 1, 1.0, True
        return _Key("scalar", (type(x), repr(x)), x)
    if t is list or t is tuple:
        return _Key(t.__name__, tuple(encode(i, leaves) for i in x))
    if isinstance(x, tuple) and hasattr(x, "_fields"):  # namedtuple
        return _Key("namedtuple", (t, tuple(encode(i, leaves) for i in x)))
    if t is dict:
        return _Key("dict", tuple((k, encode(v, leaves)) for k, v in x.items()))
    if t is slice:
        return _Key("slice", (encode(x.start, leaves), encode(x.stop, leaves), encode(x.step, leaves)))
    if isinstance(x, np.ndarray):
        raise _Unencodable(f"array of dtype {x.dtype}")
    try:
        hash(x)
    except TypeError:
        raise _Unencodable(type(x).__name__) from None
    return _Key("const", (t, x))


def decode(key, leaves):
    kind, data = key.kind, key.data
    if kind == "leaf":
        return leaves[data]
    if kind == "scalar":
        return key.value
    if kind == "list":
        return [decode(k, leaves) for k in data]
    if kind == "tuple":
        return tuple(decode(k, leaves) for k in data)
    if kind == "namedtuple":
        return data[0](*(decode(k, leaves) for k in data[1]))
    if kind == "dict":
        return {k: decode(v, leaves) for k, v in data}
    if kind == "slice":
        return slice(*(decode(k, leaves) for k in data))
    return data[1]


# ----- the jitted wrappers ------------------------------------------------------------------------

MAX_SIGNATURES = 100_000
_jitted = {}  # (id of the real callable) -> core.jit of its runner


def _jit_for(fn, name):
    entry = _jitted.get(id(fn))
    if entry is None:
        def runner(key, *leaves):
            args, kwargs = decode(key, leaves)
            return fn(*args, **kwargs)
        runner.__name__ = runner.__qualname__ = name
        entry = _jitted[id(fn)] = (fn, core.jit(runner, static_argnums=0, max_cached_signatures=MAX_SIGNATURES))
    return entry[1]


# (function name, how it ran) -> number of calls: "jit", "exempt", "unencodable", "traced" (called
# while the test itself traces); printed at the end of the run (conftest's terminal summary).
STATS = collections.Counter()


def call_jitted(fn, name, args, kwargs):
    """`fn(*args, **kwargs)` through core.jit (eagerly when exempt, unencodable or already traced)."""
    if type(current_trace()) is not EvalTrace:
        STATS[name, "traced"] += 1
        return fn(*args, **kwargs)
    if _exempt(name, fn, args, kwargs):
        STATS[name, "exempt"] += 1
        return fn(*args, **kwargs)
    leaves = []
    try:
        key = encode((tuple(args), dict(kwargs)), leaves)
    except _Unencodable:
        STATS[name, "unencodable"] += 1
        return fn(*args, **kwargs)
    STATS[name, "jit"] += 1
    return _jit_for(fn, name)(key, *leaves)


def summary():
    """Lines for the terminal summary: how many calls ran under jit, and which ran eagerly."""
    by_how = collections.Counter()
    eager = collections.defaultdict(collections.Counter)
    for (name, how), n in STATS.items():
        by_how[how] += n
        if how in ("exempt", "unencodable"):
            eager[how][name] += n
    lines = [f"calls: {dict(by_how)}"]
    for how, names in sorted(eager.items()):
        lines.append(f"eager ({how}): " + ", ".join(f"{k} x{v}" for k, v in sorted(names.items())))
    return lines


def wrap(fn, name):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return call_jitted(fn, name, args, kwargs)
    return wrapper


def _is_public_function(module, name):
    """Public functions: those in the module's `__all__` (core.numpy has none: every name without
    a leading underscore); classes (result namedtuples, dtypes) are not wrapped."""
    if name.startswith("_"):
        return False
    names = getattr(module, "__all__", None)
    if names is not None and name not in names:
        return False
    return inspect.isfunction(getattr(module, name, None))


def public_functions(module):
    return {name: getattr(module, name) for name in dir(module) if _is_public_function(module, name)}


class ModuleProxy:
    """Stands for a module in a test's globals: public functions come back jitted (wrapped once),
    submodules as proxies, every other attribute as it is."""

    def __init__(self, module):
        object.__setattr__(self, "_module", module)
        object.__setattr__(self, "_cache", {})

    def __getattr__(self, name):
        module = self._module
        value = getattr(module, name)
        if name.startswith("_"):
            return value
        cache = self._cache
        if name in cache and cache[name][0] is value:
            return cache[name][1]
        if isinstance(value, type(module)) and value in WRAPPED_MODULES:
            wrapped = proxy_for(value)
        elif isinstance(value, core.numpy.ufunc):
            wrapped = UfuncProxy(value, name)
        elif _is_public_function(module, name):
            wrapped = wrap(value, name)
        else:
            return value
        cache[name] = (value, wrapped)
        return wrapped

    def __setattr__(self, name, value):
        setattr(self._module, name, value)

    def __dir__(self):
        return dir(self._module)

    def __repr__(self):
        return f"<jit proxy of {self._module.__name__}>"


class UfuncProxy:
    """Stands for a ufunc object (`jnp.add`, ...): calling it and its methods (`reduce`, `at`, ...)
    run through core.jit as the module's functions do; every other attribute is the ufunc's."""

    def __init__(self, ufunc, name):
        object.__setattr__(self, "_ufunc", ufunc)
        # bound methods kept alive here, so the jit cache (keyed on the callable's id) stays valid
        object.__setattr__(self, "_wrapped", {
            m: wrap(getattr(ufunc, m), name if m == "__call__" else f"{name}.{m}") for m in UFUNC_METHODS})

    def __call__(self, *args, **kwargs):
        return self._wrapped["__call__"](*args, **kwargs)

    def __getattr__(self, name):
        wrapped = self._wrapped.get(name)
        return wrapped if wrapped is not None else getattr(self._ufunc, name)

    def __repr__(self):
        return repr(self._ufunc)


_proxies = {}


def proxy_for(module):
    p = _proxies.get(module.__name__)
    if p is None:
        p = _proxies[module.__name__] = ModuleProxy(module)
    return p


# ----- Array.__getitem__ and Array.at ---------------------------------------------------------------

_original_getitem = None
_original_at = None


def _index_needs_concrete(idx):
    """Boolean-array indices are masks: their nonzero positions fix the result shape."""
    return _has_bool_array(idx if isinstance(idx, tuple) else (idx,))


def _getitem_runner(x, idx):
    return _original_getitem(x, idx)


def jit_getitem(self, idx):
    if type(current_trace()) is not EvalTrace or _index_needs_concrete(idx):
        STATS["__getitem__", "exempt"] += _index_needs_concrete(idx)
        return _original_getitem(self, idx)
    return call_jitted(_getitem_runner, "__getitem__", (self, idx), {})


class _JitAtHelper:
    __slots__ = ("array",)

    def __init__(self, array):
        self.array = array

    def __getitem__(self, index):
        return _JitAtRef(self.array, index)


def _at_runner(x, index, method, args, kwargs):
    return getattr(_original_at.fget(x)[index], method)(*args, **kwargs)


class _JitAtRef:
    __slots__ = ("array", "index")

    def __init__(self, array, index):
        self.array, self.index = array, index

    def _call(self, method, args, kwargs):
        if type(current_trace()) is not EvalTrace or _index_needs_concrete(self.index):
            STATS["at", "exempt"] += _index_needs_concrete(self.index)
            return getattr(_original_at.fget(self.array)[self.index], method)(*args, **kwargs)
        return call_jitted(_at_runner, "at", (self.array, self.index, method, args, kwargs), {})


def _at_method(method):
    def m(self, *args, **kwargs):
        return self._call(method, args, kwargs)
    m.__name__ = method
    return m


for _m in ("get", "set", "add", "subtract", "multiply", "mul", "divide", "power", "min", "max", "apply"):
    setattr(_JitAtRef, _m, _at_method(_m))


def jit_at(self):
    return _JitAtHelper(self)


# ----- derivative checks: done by the eager run -------------------------------------------------------
# Under jit a test's `tu.check_grads(f, args)` would repeat the eager run's check: jvp and vjp
# trace `f`, and a wrapper called under a trace runs the real function directly ("traced" above),
# so the derivative rules exercised are the eager ones, on the same inputs (a test's data is seeded
# from its name; a sampled parametrization's one case here is among the eager run's cases, which
# tests/test_numpy_under_jit.py checks). It was half of the numpy files' time under jit. What jit
# adds, the jitted primal, each of those tests compares with NumPy itself.

def check_grads_done_eagerly(f, args, order, *rest, **kwargs):
    STATS["check_grads", "eager run"] += 1


# ----- installing for one test ----------------------------------------------------------------------

def install(monkeypatch, test_module):
    """Replace, for one test, the wrapped modules in `test_module`'s globals by proxies, patch Array
    indexing and leave derivative checks to the eager run; `monkeypatch` undoes it all after the test."""
    global _original_getitem, _original_at
    if _original_getitem is None:
        _original_getitem = Array.__getitem__
        _original_at = Array.__dict__["at"]
    for name, value in list(vars(test_module).items()):
        if isinstance(value, type(core)) and value in WRAPPED_MODULES:
            monkeypatch.setattr(test_module, name, proxy_for(value))
        elif value is test_util.check_grads:  # `from core.test_util import check_grads`
            monkeypatch.setattr(test_module, name, check_grads_done_eagerly)
    monkeypatch.setattr(test_util, "check_grads", check_grads_done_eagerly)
    monkeypatch.setattr(Array, "__getitem__", jit_getitem)
    monkeypatch.setattr(Array, "at", property(jit_at))
    # Every function here meets hundreds of signatures over the run; that is expected.
    monkeypatch.setattr(api, "RECOMPILE_WARNING_THRESHOLD", 10**9)
