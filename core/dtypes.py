"""Dtypes: the supported set, canonicalization under the x64 flag, and JAX's promotion lattice.

Python scalars are *weakly typed*: `x + 1.0` keeps `x`'s float16 because the scalar is a weak
float that any float dtype absorbs. The lattice (bool < int* < ints < float* < floats < complex*)
is JAX's, so that the same program gives the same dtypes under both frameworks.
"""
import functools
import warnings

import ml_dtypes
import numpy as np

from .config import config

bool_ = np.dtype(np.bool_)
int8, int16, int32, int64 = (np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64))
uint8, uint16, uint32, uint64 = (np.dtype(t) for t in (np.uint8, np.uint16, np.uint32, np.uint64))
float16, float32, float64 = (np.dtype(t) for t in (np.float16, np.float32, np.float64))
bfloat16 = np.dtype(ml_dtypes.bfloat16)
complex64, complex128 = np.dtype(np.complex64), np.dtype(np.complex128)

# The dtype of tangents of integer and boolean values (they have none): an empty record, as in JAX.
float0 = np.dtype([("float0", np.void, 0)])

SUPPORTED = (bool_, int8, int16, int32, int64, uint8, uint16, uint32, uint64,
             bfloat16, float16, float32, float64, complex64, complex128)
_SUPPORTED_SET = frozenset(SUPPORTED)
_TO_32 = {int64: int32, uint64: uint32, float64: float32, complex128: complex64}

# Weak (Python-scalar) nodes of the lattice.
_WEAK_INT, _WEAK_FLOAT, _WEAK_COMPLEX = "i*", "f*", "c*"
_PYTHON_SCALAR_NODE = {bool: bool_, int: _WEAK_INT, float: _WEAK_FLOAT, complex: _WEAK_COMPLEX}

_LATTICE_UP = {
    bool_: [_WEAK_INT],
    _WEAK_INT: [uint8, int8],
    uint8: [int16, uint16], uint16: [int32, uint32], uint32: [int64, uint64], uint64: [_WEAK_FLOAT],
    int8: [int16], int16: [int32], int32: [int64], int64: [_WEAK_FLOAT],
    _WEAK_FLOAT: [bfloat16, float16, _WEAK_COMPLEX],
    bfloat16: [float32], float16: [float32], float32: [float64, complex64], float64: [complex128],
    _WEAK_COMPLEX: [complex64], complex64: [complex128], complex128: [],
}


def _upper_sets():
    ups = {}

    def visit(node):
        if node not in ups:
            result = {node}
            for parent in _LATTICE_UP[node]:
                result |= visit(parent)
            ups[node] = frozenset(result)
        return ups[node]

    for node in _LATTICE_UP:
        visit(node)
    return ups


_UPPER = _upper_sets()


def x64_enabled():
    return config.enable_x64


def default_int_dtype():
    return int64 if config.enable_x64 else int32


def default_uint_dtype():
    return uint64 if config.enable_x64 else uint32


def default_float_dtype():
    return float64 if config.enable_x64 else float32


def default_complex_dtype():
    return complex128 if config.enable_x64 else complex64


def canonicalize_dtype(dtype, allow_opaque=False):
    """The dtype an array of `dtype` gets: 64-bit types become 32-bit while x64 is off, and a
    non-native byte order (NumPy's '>f4' on a little-endian host) becomes the native one: devices
    hold native values, and a host array is converted (`astype`, same values) where it enters."""
    dtype = np.dtype(dtype)
    if not dtype.isnative:
        dtype = dtype.newbyteorder("=")
    if dtype not in _SUPPORTED_SET:
        raise TypeError(f"purenn only supports number and bool dtypes, got dtype {dtype}")
    if not config.enable_x64:
        return _TO_32.get(dtype, dtype)
    return dtype


def check_user_dtype(dtype, context="array"):
    """Canonicalize an explicitly requested dtype, warning when x64 truncates it (as JAX does)."""
    if dtype is None:
        return None
    if isinstance(dtype, type) and dtype in _PYTHON_SCALAR_NODE:
        return scalar_type_default(dtype)
    try:
        dtype = np.dtype(dtype)
    except TypeError as e:
        raise TypeError(f"purenn only supports number and bool dtypes, got {dtype!r} in {context}") from e
    if not dtype.isnative:
        dtype = dtype.newbyteorder("=")  # byte order is a host layout: not a truncation to warn about
    if dtype not in _SUPPORTED_SET:
        raise TypeError(f"purenn only supports number and bool dtypes, got dtype {dtype} in {context}")
    canonical = canonicalize_dtype(dtype)
    if canonical != dtype:
        warnings.warn(
            f"Explicitly requested dtype {dtype} requested in {context} is not available, and will be "
            f"truncated to dtype {canonical}. To enable more dtypes, set the enable_x64 configuration "
            "option (core.config.update('enable_x64', True)) or the PURENN_ENABLE_X64=1 shell "
            "environment variable.", UserWarning, stacklevel=3)
    return canonical


def scalar_type_default(pytype):
    """The canonical dtype of a Python scalar type: bool, int32/64, float32/64, complex64/128."""
    if pytype is bool:
        return bool_
    if pytype is int:
        return default_int_dtype()
    if pytype is float:
        return default_float_dtype()
    if pytype is complex:
        return default_complex_dtype()
    raise TypeError(f"not a Python scalar type: {pytype}")


def is_python_scalar(x):
    return type(x) in _PYTHON_SCALAR_NODE or isinstance(x, (bool, int, float, complex)) and not isinstance(x, np.generic)


def dtype_and_weak_type(x):
    """(canonical dtype, weak_type) of any array-like value."""
    t = type(x)
    if t in _PYTHON_SCALAR_NODE:
        return scalar_type_default(t), t is not bool
    aval = getattr(x, "aval", None)
    if aval is not None:
        return aval.dtype, aval.weak_type
    if isinstance(x, (bool, int, float, complex)) and not isinstance(x, np.generic):
        pytype = bool if isinstance(x, bool) else int if isinstance(x, int) else float if isinstance(x, float) else complex
        return scalar_type_default(pytype), pytype is not bool
    dt = getattr(x, "dtype", None)
    if dt is None:
        dt = np.asarray(x).dtype
    return canonicalize_dtype(dt), False


def dtype(x):
    """The dtype an array made from `x` would have (like `jnp.result_type` of one argument)."""
    if isinstance(x, type) and x in _PYTHON_SCALAR_NODE:
        return scalar_type_default(x)
    if isinstance(x, (str, np.dtype)) or (isinstance(x, type) and issubclass(x, np.generic)):
        return canonicalize_dtype(x)
    return dtype_and_weak_type(x)[0]


def _node(dt, weak):
    if weak:
        kind = dt.kind
        if kind == "b":
            return bool_
        if kind in "iu":
            return _WEAK_INT
        if kind == "f" or dt == bfloat16:
            return _WEAK_FLOAT
        return _WEAK_COMPLEX
    return dt


@functools.lru_cache(maxsize=4096)
def _join(nodes):
    common = functools.reduce(frozenset.intersection, (_UPPER[n] for n in nodes))
    for candidate in common:
        if _UPPER[candidate] == common:
            return candidate
    raise TypeError(f"no common type for {nodes}")  # cannot happen: complex128 tops the lattice


@functools.lru_cache(maxsize=4096)
def _promote_nodes(nodes, x64):
    joined = _join(nodes)
    if joined == _WEAK_INT:
        return (int64 if x64 else int32), True
    if joined == _WEAK_FLOAT:
        return (float64 if x64 else float32), True
    if joined == _WEAK_COMPLEX:
        return (complex128 if x64 else complex64), True
    return (joined if x64 else _TO_32.get(joined, joined)), False


class extended:
    """The abstract type of dtypes that are not NumPy's (JAX's `dtypes.extended`): only the typed PRNG
    key dtype (core/prng_keys.py). Use with `jnp.issubdtype(dt, dtypes.extended)`."""


class prng_key(extended):
    """The abstract type of typed PRNG key dtypes such as `key<fry>` (JAX's `dtypes.prng_key`):
    `jnp.issubdtype(random.key(0).dtype, dtypes.prng_key)` is True."""


class TypePromotionError(ValueError):
    """Raised under `numpy_dtype_promotion='strict'` for an implicit promotion between dtypes."""


_KIND_ORDER = {"b": 0, "i": 1, "u": 1, "f": 2, "c": 3}


def _check_strict(pairs):
    strong = {d for d, w in pairs if not w}
    weak_kinds = [_KIND_ORDER["f" if d == bfloat16 else d.kind] for d, w in pairs if w]
    if len(strong) > 1 or (strong and weak_kinds and max(weak_kinds) > _KIND_ORDER[
            "f" if next(iter(strong)) == bfloat16 else next(iter(strong)).kind]):
        names = ", ".join(repr(f"{d.name}" + (" (weak)" if w else "")) for d, w in pairs)
        raise TypePromotionError(
            f"Input dtypes ({names}) have no available implicit dtype promotion path when "
            "numpy_dtype_promotion='strict'. Try explicitly casting inputs to the desired output type "
            "(x.astype(...)), or set core.config.update('numpy_dtype_promotion', 'standard').")


def promote_dtypes_weak(*pairs):
    """Join `(dtype, weak_type)` pairs: returns the result `(dtype, weak_type)`.

    As in JAX, when every input is weak the strong dtypes are joined and the result made weak
    (two weak float16 arrays stay float16); otherwise the result is weak only if the join is a
    weak node (a Python-scalar type).
    """
    x64 = config.enable_x64
    if config.numpy_dtype_promotion == "strict":
        _check_strict(pairs)
    if all(w for _, w in pairs):
        dt, _ = _promote_nodes(tuple(d for d, _ in pairs), x64)
        return dt, dt != bool_
    return _promote_nodes(tuple(_node(d, w) for d, w in pairs), x64)


def result_type(*args, return_weak_type_flag=False):
    """The dtype NumPy-style operations on `args` produce, by JAX's promotion lattice.

    Example: `result_type(jnp.ones(3, jnp.float16), 2.0)` is float16 (the scalar is weak).
    """
    if not args:
        raise ValueError("at least one array or dtype is required")
    pairs = []
    for a in args:
        if a is None:
            raise ValueError("result_type got None; pass arrays, scalars or dtypes")
        if isinstance(a, type) and a in _PYTHON_SCALAR_NODE:
            pairs.append((scalar_type_default(a), a is not bool))
        elif isinstance(a, (str, np.dtype)) or (isinstance(a, type) and issubclass(a, np.generic)):
            pairs.append((canonicalize_dtype(a), False))
        else:
            pairs.append(dtype_and_weak_type(a))
    dt, weak = promote_dtypes_weak(*pairs)
    return (dt, weak) if return_weak_type_flag else dt


def promote_types(a, b):
    """The promoted dtype of two dtypes, as `jnp.promote_types` (no weak types involved)."""
    return _promote_nodes((np.dtype(a), np.dtype(b)), True)[0]


def issubdtype(a, b):
    if a == bfloat16 or (isinstance(a, np.dtype) and a == bfloat16):
        return b in (bfloat16, np.floating, np.inexact, np.number, np.generic) or np.dtype(b) == bfloat16 if not isinstance(b, type) else b in (np.floating, np.inexact, np.number, np.generic)
    return np.issubdtype(a, b)


def is_float(dt):
    dt = np.dtype(dt)
    return dt.kind == "f" or dt == bfloat16


def is_complex(dt):
    return np.dtype(dt).kind == "c"


def is_inexact(dt):
    return is_float(dt) or is_complex(dt)


def is_int(dt):
    return np.dtype(dt).kind in "iu"


def is_unsigned(dt):
    return np.dtype(dt).kind == "u"


def is_bool(dt):
    return np.dtype(dt).kind == "b"


def finfo(dt):
    return ml_dtypes.finfo(dt)


def iinfo(dt):
    return np.iinfo(dt)


SHORT_NAMES = {bool_: "bool", int8: "i8", int16: "i16", int32: "i32", int64: "i64", uint8: "u8",
               uint16: "u16", uint32: "u32", uint64: "u64", bfloat16: "bf16", float16: "f16",
               float32: "f32", float64: "f64", complex64: "c64", complex128: "c128", float0: "float0"}


def short_name(dt):
    return SHORT_NAMES.get(np.dtype(dt), str(dt))
