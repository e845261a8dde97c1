"""Dtype objects and queries: `jnp.float32(...)`, finfo, iinfo, result_type, promote_types, can_cast."""
import numpy as np

import ml_dtypes

from .. import dtypes

# ml_dtypes' narrow types that jax.numpy names. purenn arrays cannot hold them (dtypes.SUPPORTED), so
# their scalar types serve as dtype specifiers (np.dtype(jnp.int4), finfo, issubdtype), and calling one
# gives a host (NumPy) array of that dtype with the value jax.numpy's Array would hold.
_NARROW_NAMES = ["float8_e3m4", "float8_e4m3", "float8_e4m3b11fnuz", "float8_e4m3fn", "float8_e4m3fnuz",
                 "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu", "float6_e2m3fn", "float6_e3m2fn",
                 "float4_e2m1fn", "int4", "uint4", "int2", "uint2", "int1", "uint1"]

__all__ = ["bool_", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
           "bfloat16", "float16", "float32", "float64", "complex64", "complex128", "int_", "uint",
           "float_", "complex_", "dtype", "finfo", "iinfo", "result_type", "promote_types", "can_cast",
           "issubdtype", "isdtype", "integer", "signedinteger", "unsignedinteger", "floating",
           "complexfloating", "inexact", "number", "generic", "bool", "ndim", "shape", "size",
           "double", "single", "cdouble", "csingle", "character", "flexible", "object_",
           *_NARROW_NAMES]


class _ScalarMeta(type):
    """`jnp.float32` is a dtype stand-in that NumPy understands (`np.dtype(jnp.float32)`) and a
    constructor: `jnp.float32(1.5)` is a 0-d float32 Array."""

    def __call__(cls, x):
        from .creation import array
        if cls.dtype not in dtypes.SUPPORTED:
            return _narrow_host_array(cls, x)
        return array(x, dtype=cls.dtype, copy=False)  # as JAX's asarray: an Array of that dtype is kept

    def __eq__(cls, other):
        return cls is other or (isinstance(other, (np.dtype, type, str)) and _safe_dtype(other) == cls.dtype)

    def __hash__(cls):
        return hash(cls.dtype.type)

    def __repr__(cls):
        return f"<class 'core.numpy.{cls.__name__}'>"

    def __instancecheck__(cls, instance):
        return isinstance(instance, cls.dtype.type)


def _narrow_host_array(cls, x):
    """`jnp.int4(x)` and the other narrow types: a NumPy array of that dtype (0-d for a scalar).

    jax.numpy gives a device Array; purenn arrays cannot hold these dtypes, so the value stays on
    the host, converted as JAX converts it: Python scalars by NumPy's rules (OverflowError when one
    does not fit: `jnp.uint4(-3)`), arrays with a cast (`int4` wraps, floats round to nearest).
    """
    from ..trace import Tracer
    if isinstance(x, Tracer):
        supported = ", ".join(str(d) for d in dtypes.SUPPORTED)
        raise TypeError(
            f"jnp.{cls.__name__}(x) of a traced {x.aval.str_short()}: purenn arrays cannot hold dtype {cls.dtype} "
            f"(supported: {supported}), so it cannot be computed inside jit, grad or vmap; convert outside "
            f"the transformation (jnp.{cls.__name__}(np.asarray(x))) or use a supported dtype such as int8 or "
            "float16.")
    if hasattr(x, "__array__") and not isinstance(x, np.ndarray):
        x = np.asarray(x)  # a purenn Array: its host value
    return np.array(x, dtype=cls.dtype)


def _safe_dtype(x):
    try:
        return np.dtype(x)
    except TypeError:
        return None


def _scalar_type(name, dt):
    return _ScalarMeta(name, (), {"dtype": np.dtype(dt)})


bool_ = _scalar_type("bool_", dtypes.bool_)
bool = bool_  # noqa: A001  (jnp.bool is the NumPy 2 name)
int8, int16, int32, int64 = (_scalar_type(n, getattr(dtypes, n)) for n in ("int8", "int16", "int32", "int64"))
uint8, uint16, uint32, uint64 = (_scalar_type(n, getattr(dtypes, n)) for n in ("uint8", "uint16", "uint32", "uint64"))
bfloat16 = _scalar_type("bfloat16", dtypes.bfloat16)
float16, float32, float64 = (_scalar_type(n, getattr(dtypes, n)) for n in ("float16", "float32", "float64"))
complex64, complex128 = _scalar_type("complex64", dtypes.complex64), _scalar_type("complex128", dtypes.complex128)
int_ = int64
uint = uint64
float_ = float64
complex_ = complex128
# NumPy's C-named aliases, the same objects as in jax.numpy (jnp.double is jnp.float64).
double, single, cdouble, csingle = float64, float32, complex128, complex64
# NumPy's abstract and object scalar classes, which jax.numpy re-exports unchanged.
character, flexible, object_ = np.character, np.flexible, np.object_
for _name in _NARROW_NAMES:
    globals()[_name] = _scalar_type(_name, getattr(ml_dtypes, _name))
del _name
_NARROW_KINDS = {np.dtype(getattr(ml_dtypes, n)): "f" if n.startswith("float") else "u" if n.startswith("u") else "i"
                 for n in _NARROW_NAMES}
_ABSTRACT_PARENTS = {"f": (np.generic, np.number, np.inexact, np.floating),
                     "i": (np.generic, np.number, np.integer, np.signedinteger),
                     "u": (np.generic, np.number, np.integer, np.unsignedinteger)}

integer, signedinteger, unsignedinteger = np.integer, np.signedinteger, np.unsignedinteger
floating, complexfloating, inexact, number, generic = np.floating, np.complexfloating, np.inexact, np.number, np.generic


def dtype(obj, align=False, copy=False):
    """`numpy.dtype`, accepting purenn's scalar types (`jnp.dtype(jnp.float32)`)."""
    if isinstance(obj, _ScalarMeta):
        return obj.dtype
    return np.dtype(obj, align=align, copy=copy)


def finfo(dt):
    """Machine limits of a float dtype (bfloat16 included). Example: `jnp.finfo(jnp.float32).eps`."""
    return dtypes.finfo(_as_np_dtype(dt))


def iinfo(dt):
    """Machine limits of an integer dtype. Example: `jnp.iinfo(jnp.int8).max` is 127."""
    dt = _as_np_dtype(dt)
    return ml_dtypes.iinfo(dt) if dt in _NARROW_KINDS else np.iinfo(dt)


def _as_np_dtype(x):
    if isinstance(x, _ScalarMeta):
        return x.dtype
    if hasattr(x, "dtype") and not isinstance(x, (type, np.dtype)):
        return np.dtype(x.dtype)
    return np.dtype(x)


def result_type(*args):
    """The dtype of a NumPy operation on `args` by JAX's promotion rules (weak Python scalars).

    Example: `jnp.result_type(jnp.float16, 1.0)` is float16.
    """
    args = [a.dtype if isinstance(a, _ScalarMeta) else a for a in args]
    return dtypes.result_type(*args)


def promote_types(a, b):
    """The smallest dtype both `a` and `b` safely convert to, on JAX's lattice.

    Example: `jnp.promote_types(jnp.int8, jnp.uint8)` is int16.
    """
    return dtypes.promote_types(_as_np_dtype(a), _as_np_dtype(b))


def can_cast(from_, to, casting="safe"):
    """`numpy.can_cast` on dtypes (`from_` may be an array)."""
    return np.can_cast(_as_np_dtype(from_), _as_np_dtype(to), casting=casting)


def issubdtype(arg1, arg2):
    """`numpy.issubdtype`, with bfloat16 counted as a floating type, and the typed PRNG key dtype
    (`key<fry>`) a subtype of `dtypes.prng_key` and `dtypes.extended` only."""
    extended = _extended_issubdtype(arg1, arg2)
    if extended is not None:
        return extended
    a = _as_np_dtype(arg1)
    if isinstance(arg2, type) and issubclass(arg2, np.generic) and arg2 in (np.generic, np.number, np.inexact, np.floating, np.complexfloating, np.integer, np.signedinteger, np.unsignedinteger, np.bool_):
        kind = "f" if a == dtypes.bfloat16 else _NARROW_KINDS.get(a)
        if kind is not None:  # ml_dtypes' types have NumPy kind 'V': place them by what they hold
            return arg2 in _ABSTRACT_PARENTS[kind]
        return np.issubdtype(a, arg2)
    return a == _as_np_dtype(arg2)


def _extended_issubdtype(arg1, arg2):
    """issubdtype when either side is an extended dtype or one of its abstract types; None if not."""
    def kind(x):
        if isinstance(x, type) and issubclass(x, dtypes.extended):
            return x
        dt = getattr(x, "dtype", x) if not isinstance(x, type) else x
        return dt if isinstance(getattr(dt, "type", None), type) and issubclass(dt.type, dtypes.extended) else None

    k1, k2 = kind(arg1), kind(arg2)
    if k1 is None and k2 is None:
        return None
    if k1 is None or k2 is None:
        return False
    if isinstance(k2, type):
        return issubclass(k1 if isinstance(k1, type) else k1.type, k2)
    return not isinstance(k1, type) and k1 == k2


def isdtype(dt, kind):
    """The array-API `isdtype`: kind is a dtype, a name like 'real floating', or a tuple of them."""
    dt = _as_np_dtype(dt)
    if isinstance(kind, tuple):
        return any(isdtype(dt, k) for k in kind)
    names = {"bool": lambda d: d.kind == "b", "signed integer": lambda d: _kind(d) == "i",
             "unsigned integer": lambda d: _kind(d) == "u", "integral": lambda d: _kind(d) in ("i", "u"),
             "real floating": lambda d: _kind(d) == "f", "complex floating": dtypes.is_complex,
             "numeric": lambda d: _kind(d) in ("i", "u", "f", "c")}
    if isinstance(kind, str):
        if kind not in names:
            raise ValueError(f"isdtype: unknown kind {kind!r}; expected one of {sorted(names)}")
        return names[kind](dt)
    return dt == _as_np_dtype(kind)


def _kind(dt):
    """NumPy's kind letter, with bfloat16 and ml_dtypes' narrow types (kind 'V') as 'f', 'i' or 'u'."""
    return "f" if dt == dtypes.bfloat16 else _NARROW_KINDS.get(dt, dt.kind)


def ndim(a):
    """Number of dimensions of `a` (any array-like)."""
    return len(shape(a))


def shape(a):
    """Shape of `a` (any array-like)."""
    s = getattr(a, "shape", None)
    return tuple(s) if s is not None else np.shape(a)


def size(a, axis=None):
    """Number of elements of `a`, or along `axis`."""
    s = shape(a)
    return int(np.prod(s)) if axis is None else s[axis]
