"""Array creation: array, asarray, zeros, ones, full, arange, linspace, eye and friends.

As in `jax.numpy`, results are immutable Arrays, 64-bit dtypes need `enable_x64`, and sizes and
other shape-determining arguments (`N`, `num`, `arange`'s bounds) must be concrete Python values.
"""
import operator

import numpy as np

from .. import dtypes, errors
from ..array import Array, asarray_device, new_scalar_array
from ..trace import Tracer
from .. import lax
from ..lax._base import any_key_array, aval_of, is_key_array
from ..lax.structural import _array_copy

__all__ = ["array", "asarray", "zeros", "ones", "full", "empty", "empty_like", "zeros_like", "ones_like",
           "full_like", "arange", "linspace", "logspace", "geomspace", "eye", "identity", "tri", "tril", "triu",
           "diag", "diagflat", "meshgrid", "indices", "copy", "fromfunction", "frombuffer"]


def _contains_tracer(obj):
    if isinstance(obj, Tracer):
        return True
    if isinstance(obj, (list, tuple)):
        return any(_contains_tracer(o) for o in obj)
    return False


def _leaves(obj, out):
    if isinstance(obj, (list, tuple)):
        for o in obj:
            _leaves(o, out)
    else:
        out.append(obj)
    return out


def _inferred_dtype(obj):
    """JAX's dtype for a nested list: the lattice join of its leaves, Python scalars weakly
    (so `[np.float16(1), 2.0]` stays float16 where NumPy would give float64)."""
    leaves = _leaves(obj, [])
    if not leaves:
        return dtypes.default_float_dtype()
    pairs = []
    for leaf in leaves:
        if isinstance(leaf, (Array, Tracer, np.ndarray, np.generic)) or dtypes.is_python_scalar(leaf):
            pairs.append(dtypes.dtype_and_weak_type(leaf))
        else:
            pairs.append((dtypes.canonicalize_dtype(np.asarray(leaf).dtype), False))
    return dtypes.promote_dtypes_weak(*pairs)[0]


def array(object, dtype=None, copy=True, order=None, ndmin=0):
    """Create an Array from array-like data, as `numpy.array`. Python scalars give weakly typed
    arrays; nested lists take the dtype JAX's promotion gives their elements, and may mix Arrays,
    NumPy arrays and scalars. The result always owns its device buffer unless `copy=False` (then
    it may be `object` itself): arrays are immutable, but a buffer donated to a jitted function is
    deleted, so a copy that shared it would be deleted with it.

    Example:
        >>> x = jnp.array([[1, 2], [3, 4]], dtype=jnp.float32)
        >>> jnp.array(x) is x, jnp.array(x, copy=False) is x, jnp.array(3.0, ndmin=2).shape
        (False, True, (1, 1))
    """
    if order not in (None, "K", "A", "C"):
        raise NotImplementedError(f"array: only C order is supported, got order={order!r}")
    if is_key_array(object) or isinstance(object, (list, tuple)) and any_key_array(_leaves(object, [])):
        from .. import prng_keys  # typed PRNG keys give a key array, as in JAX (core/prng_keys.py)
        return prng_keys.array_of_keys(object, dtype, copy, ndmin)
    dtype = dtypes.check_user_dtype(dtype, "array")
    if isinstance(object, (Array, Tracer)):
        out = object if dtype is None else lax.convert_element_type(object, dtype)
        if copy and out is object and ndmin <= out.ndim:  # else the conversion or reshape made one
            out = _array_copy(object)
    elif type(object) in (bool, int, float, complex):
        out = new_scalar_array(object, dtype, weak_type=dtype is None and type(object) is not bool)
    elif isinstance(object, (list, tuple)) and _contains_tracer(object):
        from .manipulation import stack
        dtype = dtype or _inferred_dtype(object)
        out = stack([array(o, dtype, copy=False) for o in object]) if object else array(np.zeros(0), dtype)
    else:
        if isinstance(object, (list, tuple)) and dtype is None:
            dtype = _inferred_dtype(object)
        value = _to_numpy(object)
        if value.dtype not in dtypes._SUPPORTED_SET and value.dtype.kind not in "biufc":
            raise TypeError(f"purenn only supports number and bool dtypes, got dtype {value.dtype} in array")
        out = asarray_device(value) if dtype is None else asarray_device(value.astype(dtype))
    if ndmin > out.ndim:
        out = lax.reshape(out, (1,) * (ndmin - out.ndim) + out.shape)
    return out


def _to_numpy(obj):
    if hasattr(obj, "__jax_array__"):
        obj = obj.__jax_array__()
    if isinstance(obj, (list, tuple)):
        def conv(o):
            if isinstance(o, Array):
                return np.asarray(o)
            if isinstance(o, (list, tuple)):
                return [conv(x) for x in o]
            return o
        obj = conv(obj)
    return np.asarray(obj)


def asarray(a, dtype=None, order=None, copy=None):
    """Convert `a` to an Array: `a` itself when it already is one of that dtype, unless
    `copy=True` asks for a copy with its own buffer.

    Example: `jnp.asarray(np.arange(3))` is `Array([0, 1, 2], dtype=int32)`.
    """
    if is_key_array(a):  # a typed PRNG key array: itself, as in JAX (core/prng_keys.py)
        from .. import prng_keys
        return prng_keys.array_of_keys(a, dtype, bool(copy), name="asarray")
    if not copy and isinstance(a, (Array, Tracer)) and (dtype is None or np.dtype(dtype) == a.dtype):
        return a
    return array(a, dtype=dtype, order=order, copy=bool(copy))


def _put(x, device):
    # Under a transformation the value is part of a traced program: where it lives is decided
    # where the program runs (as jnp.zeros(..., device=d) inside jax.jit).
    if device is None or isinstance(x, Tracer):
        return x
    from ..array import device_put
    return device_put(x, device)


def full(shape, fill_value, dtype=None, *, device=None):
    """An array of `shape` filled with `fill_value` (a scalar, or an array broadcast to `shape`).
    With no `dtype`, a Python scalar fill gives a weakly typed result, as in JAX.

    Example: `jnp.full((2, 2), 7.0)`.
    """
    shape = _canonical_shape(shape, "full")
    dtype = dtypes.check_user_dtype(dtype, "full")
    if np.ndim(fill_value) == 0 if not isinstance(fill_value, (Array, Tracer)) else fill_value.ndim == 0:
        if isinstance(fill_value, np.ndarray):
            fill_value = fill_value[()]
        return _put(lax.full(shape, fill_value, dtype), device)
    from .manipulation import broadcast_to
    return _put(broadcast_to(asarray(fill_value, dtype=dtype), shape), device)


def zeros(shape, dtype=None, *, device=None):
    """An array of zeros. Example: `jnp.zeros((2, 3))` has dtype float32."""
    shape = _canonical_shape(shape, "zeros")
    return full(shape, 0, dtypes.check_user_dtype(dtype, "zeros") or dtypes.default_float_dtype(), device=device)


def ones(shape, dtype=None, *, device=None):
    """An array of ones. Example: `jnp.ones(3, jnp.int32)`."""
    shape = _canonical_shape(shape, "ones")
    return full(shape, 1, dtypes.check_user_dtype(dtype, "ones") or dtypes.default_float_dtype(), device=device)


def empty(shape, dtype=None, *, device=None):
    """Like `zeros`: arrays are immutable, so there is nothing to gain from uninitialized memory."""
    shape = _canonical_shape(shape, "empty")
    return zeros(shape, dtype, device=device)


def _check_like(fun_name, a):
    from ._util import check_arraylike
    check_arraylike(fun_name, a)


def full_like(a, fill_value, dtype=None, shape=None, *, device=None):
    """An array with the shape and dtype of `a` (unless given) filled with `fill_value`.

    Example: `jnp.full_like(jnp.ones(3, jnp.int32), 7)` is `[7, 7, 7]` (int32).
    """
    _check_like("full_like", a)
    dtype = dtypes.check_user_dtype(dtype, "full_like")
    if shape is not None:
        shape = _canonical_shape(shape, "full_like")
    if np.ndim(fill_value) != 0 if not isinstance(fill_value, (Array, Tracer)) else fill_value.ndim != 0:
        aval = aval_of(a)
        return full(aval.shape if shape is None else shape, fill_value, dtype or aval.dtype, device=device)
    if isinstance(fill_value, np.ndarray):
        fill_value = fill_value[()]
    return _put(lax.full_like(a, fill_value, dtype, shape), device)


def zeros_like(a, dtype=None, shape=None, *, device=None):
    """Zeros with the shape and dtype of `a`. Example: `jnp.zeros_like(jnp.ones((2, 2)))`."""
    _check_like("zeros_like", a)
    return full_like(a, 0, dtype, shape, device=device)


def ones_like(a, dtype=None, shape=None, *, device=None):
    """Ones with the shape and dtype of `a`. Example: `jnp.ones_like(jnp.zeros(3, jnp.int8))`."""
    _check_like("ones_like", a)
    return full_like(a, 1, dtype, shape, device=device)


def empty_like(prototype, dtype=None, shape=None, *, device=None):
    """Like `zeros_like` (arrays are immutable, so nothing is left uninitialized)."""
    _check_like("empty_like", prototype)
    return zeros_like(prototype, dtype, shape, device=device)


def _concrete(x, fun_name, what, expected="a Python number"):
    if isinstance(x, Tracer):
        raise errors.static_value_error(f"core.numpy.{fun_name}", what, x, expected)
    if isinstance(x, Array):
        return x.item() if x.ndim == 0 else np.asarray(x)
    return x


def arange(start, stop=None, step=None, dtype=None, *, device=None):
    """Evenly spaced values in `[start, stop)` by `step`, as `numpy.arange` (bounds must be
    concrete). The dtype follows JAX: ints give int32, any float gives float32 (with x64 off).

    Example: `jnp.arange(5)` is `[0, 1, 2, 3, 4]`; `jnp.arange(0., 1., .25)` is `[0., .25, .5, .75]`.
    """
    dtype = dtypes.check_user_dtype(dtype, "arange")
    start = _concrete(start, "arange", "start")
    stop = _concrete(stop, "arange", "stop")
    step = _concrete(step, "arange", "step")
    for v in (start, stop, step):
        if v is not None and np.ndim(v) != 0:
            raise ValueError(f"arange: arguments must be scalars, got {v!r}")
        if v is not None and np.iscomplexobj(v):
            raise TypeError("arange does not accept complex arguments")
    if dtype is None:
        dtype = dtypes.result_type(*(v for v in (start, stop, step) if v is not None))
    if stop is None and step is None:
        size = max(int(np.ceil(start)), 0)
        if dtypes.is_bool(dtype):
            return _put(array(np.arange(size).astype(bool)), device)
        return _put(lax.iota(dtype, size), device)
    return _put(array(np.arange(start, stop, step, dtype=dtype)), device)


def _inexact_dtype(*args):
    dt = dtypes.result_type(*args)
    return dt if dtypes.is_inexact(dt) else dtypes.default_float_dtype()


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *, device=None):
    """`num` evenly spaced samples from `start` to `stop` (excluded when `endpoint=False`);
    `start`/`stop` may be arrays, then samples run along `axis`. Integer dtypes floor the samples.

    Example: `jnp.linspace(0., 1., 5)` is `[0., .25, .5, .75, 1.]`.
    """
    num = operator.index(_concrete(num, "linspace", "num"))
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    dtype = dtypes.check_user_dtype(dtype, "linspace")
    from ._util import check_arraylike
    check_arraylike("linspace", start, stop)
    comp = _inexact_dtype(start, stop) if dtype is None or not dtypes.is_complex(dtype) else dtype
    if dtype is None:
        dtype = comp
    start = lax.convert_element_type(asarray(start), comp)
    stop = lax.convert_element_type(asarray(stop), comp)
    from .manipulation import broadcast_arrays, moveaxis
    start, stop = broadcast_arrays(start, stop)
    bounds = start.shape
    axis = _canonical_new_axis(axis, len(bounds), "linspace")
    div = num - 1 if endpoint else num
    start_e = lax.expand_dims(start, (len(bounds),))
    stop_e = lax.expand_dims(stop, (len(bounds),))
    if num > 1:
        delta = lax.div(lax.sub(stop, start), lax.full((), div, comp))
        shape = bounds + (div,)
        t = lax.div(lax.broadcasted_iota(comp, shape, len(bounds)), lax.full(shape, div, comp))
        one = lax.full(shape, 1, comp)
        # start*(1-t) + stop*t hits both ends exactly, unlike start + i*delta
        out = lax.add(lax.mul(lax.broadcast_in_dim(start, shape, tuple(range(len(bounds)))), lax.sub(one, t)),
                      lax.mul(lax.broadcast_in_dim(stop, shape, tuple(range(len(bounds)))), t))
        if endpoint:
            out = lax.concatenate([out, stop_e], len(bounds))
    elif num == 1:
        delta = lax.full(bounds, np.nan, comp) if endpoint else lax.sub(stop, start)
        out = start_e
    else:
        delta = lax.full(bounds, np.nan, comp)
        out = lax.full(bounds + (0,), 0, comp)
    out = moveaxis(out, -1, axis)
    if dtypes.is_int(dtype) or dtypes.is_unsigned(dtype):
        out = lax.floor(out)
    out = _put(lax.convert_element_type(out, dtype), device)
    return (out, lax.convert_element_type(delta, comp)) if retstep else out


def _canonical_new_axis(axis, ndim, fun_name):
    """An axis of a result with one more dimension than the `ndim`-dimensional inputs."""
    axis = operator.index(axis)
    if not -(ndim + 1) <= axis <= ndim:
        raise np.exceptions.AxisError(f"{fun_name}: axis {axis} is out of bounds for array of dimension {ndim + 1}")
    return axis % (ndim + 1)


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    """`base ** linspace(start, stop, num)`. Example: `jnp.logspace(0., 2., 3)` is `[1., 10., 100.]`."""
    dtype = dtypes.check_user_dtype(dtype, "logspace")
    comp = _inexact_dtype(start, stop)
    lin = linspace(start, stop, num, endpoint=endpoint, dtype=comp, axis=axis)
    base = lax.convert_element_type(asarray(base), comp)
    out = lax.pow(lax.broadcast_in_dim(base, lin.shape, ()) if base.ndim == 0 else _bcast(base, lin.shape), lin)
    if dtype is not None and (dtypes.is_int(dtype) or dtypes.is_unsigned(dtype)):
        out = lax.floor(out)
    return out if dtype is None else lax.convert_element_type(out, dtype)


def _bcast(x, shape):
    from .manipulation import broadcast_to
    return broadcast_to(x, shape)


def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    """Samples evenly spaced on a log scale from `start` to `stop` (same sign, real values), with
    the ends exact. Example: `jnp.geomspace(1., 1000., 4)` is `[1., 10., 100., 1000.]`."""
    dtype = dtypes.check_user_dtype(dtype, "geomspace")
    comp = _inexact_dtype(start, stop)
    start = lax.convert_element_type(asarray(start), comp)
    stop = lax.convert_element_type(asarray(stop), comp)
    if dtypes.is_complex(comp):
        raise NotImplementedError("geomspace: complex start/stop are not supported")
    sign = lax.sign(start)
    log_start = lax.log(lax.mul(start, sign))
    log_stop = lax.log(lax.mul(stop, sign))
    lin = linspace(log_start, log_stop, num, endpoint=endpoint, dtype=comp, axis=-1)
    out = lax.exp(lin)
    out = lax.mul(out, lax.broadcast_in_dim(sign, out.shape, tuple(range(sign.ndim))))
    if num > 0:  # NumPy makes the ends exact
        from .manipulation import broadcast_arrays
        s, e = broadcast_arrays(start, stop)
        has_stop = endpoint and num > 1
        inner = lax.slice_in_dim(out, 1, num - 1 if has_stop else num, axis=-1)
        parts = [lax.expand_dims(s, (-1,)), inner] + ([lax.expand_dims(e, (-1,))] if has_stop else [])
        out = lax.concatenate(parts, out.ndim - 1)
    from .manipulation import moveaxis
    out = moveaxis(out, -1, _canonical_new_axis(axis, out.ndim - 1, "geomspace"))
    if dtype is not None and (dtypes.is_int(dtype) or dtypes.is_unsigned(dtype)):
        out = lax.floor(out)
    return out if dtype is None else lax.convert_element_type(out, dtype)


def _diagonal_mask(N, M, k, fun_name):
    """Boolean (N, M) mask of `j - i >= k`."""
    i = lax.broadcasted_iota(dtypes.int32, (N, M), 0)
    j = lax.broadcasted_iota(dtypes.int32, (N, M), 1)
    return lax.ge(lax.sub(j, i), lax.full((N, M), k, dtypes.int32))


def _static_int(x, fun_name, what):
    return operator.index(_concrete(x, fun_name, what, "a Python int"))


def eye(N, M=None, k=0, dtype=None, *, device=None):
    """An N x M array with ones on the `k`-th diagonal and zeros elsewhere.

    Example: `jnp.eye(2, 3, k=1)` is `[[0., 1., 0.], [0., 0., 1.]]`.
    """
    N = _static_int(N, "eye", "N")
    M = N if M is None else _static_int(M, "eye", "M")
    k = _static_int(k, "eye", "k")
    if N < 0 or M < 0:
        raise ValueError(f"eye: negative dimensions are not allowed, got N={N}, M={M}")
    dtype = dtypes.check_user_dtype(dtype, "eye") or dtypes.default_float_dtype()
    i = lax.broadcasted_iota(dtypes.int32, (N, M), 0)
    j = lax.broadcasted_iota(dtypes.int32, (N, M), 1)
    on = lax.eq(lax.sub(j, i), lax.full((N, M), k, dtypes.int32))
    return _put(lax.convert_element_type(on, dtype), device)


def identity(n, dtype=None):
    """The n x n identity matrix. Example: `jnp.identity(2, jnp.int32)`."""
    return eye(n, dtype=dtype)


def tri(N, M=None, k=0, dtype=None):
    """An N x M array with ones at and below the `k`-th diagonal. Example: `jnp.tri(3, k=-1)`."""
    N = _static_int(N, "tri", "N")
    M = N if M is None else _static_int(M, "tri", "M")
    k = _static_int(k, "tri", "k")
    dtype = dtypes.check_user_dtype(dtype, "tri") or dtypes.default_float_dtype()
    return lax.convert_element_type(lax.not_(_diagonal_mask(N, M, k + 1, "tri")), dtype)


def _tri_select(fun_name, m, k, lower):
    from ._util import check_arraylike
    check_arraylike(fun_name, m)
    m = asarray(m)
    if m.ndim < 2:
        raise ValueError(f"{fun_name}: input array must be at least 2-d, got shape {m.shape}")
    N, M = m.shape[-2:]
    k = _static_int(k, fun_name, "k")
    keep = _diagonal_mask(N, M, k + 1, fun_name) if lower else _diagonal_mask(N, M, k, fun_name)
    if lower:
        keep = lax.not_(keep)
    nd = m.ndim
    keep = lax.broadcast_in_dim(keep, m.shape, (nd - 2, nd - 1))
    return lax.select_n(keep, lax.full_like(m, 0), m)


def tril(m, k=0):
    """`m` with elements above the `k`-th diagonal zeroed (on the last two axes).

    Example: `jnp.tril(jnp.ones((2, 2)))` is `[[1., 0.], [1., 1.]]`.
    """
    return _tri_select("tril", m, k, lower=True)


def triu(m, k=0):
    """`m` with elements below the `k`-th diagonal zeroed (on the last two axes).

    Example: `jnp.triu(jnp.ones((2, 2)))` is `[[1., 1.], [0., 1.]]`.
    """
    return _tri_select("triu", m, k, lower=False)


def diag(v, k=0):
    """For 1-D `v`, the square matrix with `v` on its `k`-th diagonal; for 2-D `v`, its `k`-th
    diagonal. Example: `jnp.diag(jnp.array([1, 2]))` is `[[1, 0], [0, 2]]`.
    """
    from ._util import check_arraylike
    check_arraylike("diag", v)
    v = asarray(v)
    k = _static_int(k, "diag", "k")
    if v.ndim == 1:
        L = v.shape[0]
        n = L + abs(k)
        if L == 0:
            return lax.full((n, n), 0, v.dtype)
        # v[i] lands at flat index i*(n+1) + offset: interior padding spaces the elements n apart
        offset = k if k >= 0 else -k * n
        spread = L + (L - 1) * n
        flat = lax.pad(v, lax.full((), 0, v.dtype), [(offset, n * n - offset - spread, n)])
        return lax.reshape(flat, (n, n))
    if v.ndim == 2:
        N, M = v.shape
        length = max(0, min(N, M - k) if k >= 0 else min(N + k, M))
        if length == 0:
            return lax.full((0,), 0, v.dtype)
        start = k if k >= 0 else -k * M
        flat = lax.reshape(v, (N * M,))
        return lax.slice(flat, (start,), (start + (length - 1) * (M + 1) + 1,), (M + 1,))
    raise ValueError(f"diag: input must be 1-d or 2-d, got shape {v.shape}")


def diagflat(v, k=0):
    """The 2-D array with the flattened `v` on its `k`-th diagonal. Example: `jnp.diagflat(jnp.ones((2, 1)))`."""
    from ._util import check_arraylike
    check_arraylike("diagflat", v)
    v = asarray(v)
    return diag(lax.reshape(v, (v.size,)), k)


def meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    """Coordinate arrays from 1-D coordinate vectors; `indexing='xy'` (default) swaps the first
    two output axes as NumPy does; `sparse=True` returns broadcastable arrays.

    Example: `X, Y = jnp.meshgrid(jnp.arange(3), jnp.arange(2))` gives shapes (2, 3).
    """
    if indexing not in ("xy", "ij"):
        raise ValueError(f"Valid values for indexing are 'xy' and 'ij', got {indexing!r}")
    from ._util import check_arraylike
    check_arraylike("meshgrid", *xi)
    xs = [asarray(x) for x in xi]
    for i, x in enumerate(xs):
        if x.ndim != 1:
            raise ValueError(f"meshgrid: arguments must be 1-d, got shape {x.shape} at position {i}")
    n = len(xs)
    shape = [x.shape[0] for x in xs]
    if indexing == "xy" and n >= 2:
        shape[0], shape[1] = shape[1], shape[0]
    out = []
    for i, x in enumerate(xs):
        axis = i
        if indexing == "xy" and n >= 2 and i < 2:
            axis = 1 - i
        target = tuple(shape) if not sparse else tuple(s if a == axis else 1 for a, s in enumerate(shape))
        out.append(lax.broadcast_in_dim(x, target, (axis,)))
    return out


def indices(dimensions, dtype=None, sparse=False):
    """An array of index grids: `out[i][j0, j1, ...] == j_i` (a tuple of broadcastable arrays
    when `sparse`). Example: `jnp.indices((2, 3)).shape` is (2, 2, 3).
    """
    dimensions = _canonical_shape(dimensions, "indices")
    dtype = dtypes.check_user_dtype(dtype, "indices") or dtypes.default_int_dtype()
    n = len(dimensions)
    if sparse:
        return tuple(lax.broadcasted_iota(dtype, tuple(d if a == i else 1 for a, d in enumerate(dimensions)), i)
                     for i in range(n))
    if n == 0:
        return lax.full((0,), 0, dtype)
    grids = [lax.broadcasted_iota(dtype, (1,) + dimensions, i + 1) for i in range(n)]
    return lax.concatenate(grids, 0)


def copy(a, order=None):
    """A copy of `a` as an Array with its own device buffer (`jnp.array(a, copy=True)`): donating
    the copy to a jitted function leaves `a` usable, and the other way round.

    Example:
        >>> a = jnp.arange(3)
        >>> b = jnp.copy(a)
        >>> b is a, b
        (False, Array([0, 1, 2], dtype=int32))
    """
    if is_key_array(a):  # a typed PRNG key array: a copy of its data (core/prng_keys.py)
        return a.copy()
    from ._util import check_arraylike
    check_arraylike("copy", a)
    return array(a, copy=True, order=order)


def fromfunction(function, shape, *, dtype=float, **kwargs):
    """`function(*indices)` with one index grid per dimension of `shape`, of `dtype`.

    Example: `jnp.fromfunction(lambda i, j: i + j, (2, 2), dtype=jnp.int32)` is `[[0, 1], [1, 2]]`.
    """
    shape = _canonical_shape(shape, "fromfunction")
    dtype = dtypes.check_user_dtype(dtype, "fromfunction")
    grids = [lax.broadcasted_iota(dtype, shape, i) for i in range(len(shape))]
    return function(*grids, **kwargs)


def frombuffer(buffer, dtype=float, count=-1, offset=0):
    """An Array from the bytes of `buffer` interpreted as `dtype` (read on the host).

    Example: `jnp.frombuffer(b"\\x01\\x02", dtype=jnp.uint8)` is `[1, 2]`.
    """
    value = np.frombuffer(buffer, dtype=np.dtype(dtype), count=count, offset=offset)
    return array(value, dtype=dtypes.check_user_dtype(dtype, "frombuffer"))


def _canonical_shape(shape, fun_name, what="shape"):
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    elif isinstance(shape, Tracer) and shape.ndim == 0:
        shape = (shape,)
    try:
        shape = tuple(_static_dim(d, fun_name, what) for d in shape)
    except errors.ConcretizationTypeError:
        raise
    except TypeError:
        raise TypeError(f"{fun_name}: shape must be an int or a sequence of ints, got {shape!r}") from None
    if any(d < 0 for d in shape):
        raise ValueError(f"{fun_name}: negative dimensions are not allowed, got shape {shape}")
    return shape


def _static_dim(d, fun_name, what):
    """One dimension as a Python int; a traced one is an error naming the public function."""
    try:
        return int(operator.index(d))
    except TypeError:
        if isinstance(d, Tracer):
            raise errors.static_value_error(f"core.numpy.{fun_name}", what, d) from None
        raise


def operator_index(d):
    return operator.index(d)
