"""`jnp.ufunc` and `jnp.frompyfunc`: NumPy's universal-function objects, as jax.numpy 0.10.2 has them.

jax.numpy's binary ufuncs (`add`, `multiply`, `maximum`, the logical and bitwise ones, ...) and
`negative` are `ufunc` objects: callable as before, with the methods `reduce`, `accumulate`, `at`,
`reduceat` and `outer` and the attributes `nin`, `nout`, `nargs` and `identity`. This module
defines the class and those fourteen objects over the plain functions of `ufuncs.py`, which the
rest of `core.numpy` keeps calling directly.

Calling a ufunc costs what calling the plain function through its entry-point wrapper cost before:
`__call__` is itself the entry point (it filters tracebacks in its own frame, see
core/traceback_util.py) and calls the plain function, and `x + y` still calls the plain function
(`unwrap_boundary(jnp.add)` is it). The methods take the fast routes where one exists
(`add.reduce` is `sum`, `add.accumulate` is `cumsum`, `add.at` is `x.at[idx].add`, ...); the
others (and every method of a `frompyfunc` ufunc) apply the function in a loop (`fori_loop`,
`scan`) inside a jit, so an eager call compiles once per shape and a traced one stays one loop.

Where NumPy and JAX differ we follow JAX: `ufunc.at` returns a new array and needs
`inplace=False`; `add.accumulate` of bools counts (int32) where NumPy ors; sums of narrow integers
widen to the default int (int32) where NumPy's widen to int64; `frompyfunc` functions take and
return arrays, not Python objects (dtype object does not exist here).
"""
import math
import operator

import numpy as np

from .. import dtypes, lax
from ..avals import ShapeDtypeStruct
from ..traceback_util import boundaries_for_methods, filter_exception, register_boundary
from . import ufuncs as _ufuncs
from . import reductions as _reductions
from ._util import asarray_operand, broadcast_shapes, canonicalize_axis, check_arraylike
from .indexing import take as _take

__all__ = ["ufunc", "frompyfunc", "add", "subtract", "multiply", "maximum", "minimum", "logaddexp",
           "logaddexp2", "logical_and", "logical_or", "logical_xor", "bitwise_and", "bitwise_or",
           "bitwise_xor", "negative"]

_AT_INPLACE = ("{name}.at: purenn arrays are immutable, so ufunc.at cannot update `a` in place as "
               "numpy.ufunc.at does. Pass inplace=False and use the returned array: "
               "`x = jnp.{name}.at(x, indices, values, inplace=False)`.")


class ufunc:
    """A universal function: an elementwise function of `nin` arrays (broadcast together) with
    NumPy's ufunc methods, as `jax.numpy.ufunc`.

    Most code uses the predefined ones (`jnp.add`, `jnp.multiply`, `jnp.maximum`, ...); build your
    own from a function of scalars with `frompyfunc`. `func` is the elementwise function (for the
    methods' fallbacks), `call` a faster equivalent for arrays if there is one (otherwise `func` is
    vectorized), and `reduce`, `accumulate`, `at`, `reduceat` optional fast implementations of
    those methods, with the methods' signatures less `out` (and `inplace` for `at`).

    Example:
        >>> x = jnp.array([1, 2, 3, 4])
        >>> jnp.add(x, 1)
        Array([2, 3, 4, 5], dtype=int32)
        >>> jnp.add.reduce(x), jnp.add.identity, jnp.add.nin
        (Array(10, dtype=int32), 0, 2)
        >>> jnp.multiply.outer(x[:2], x)
        Array([[1, 2, 3, 4],
               [2, 4, 6, 8]], dtype=int32)
        >>> jnp.add.at(x, jnp.array([0, 0]), 10, inplace=False)
        Array([21,  2,  3,  4], dtype=int32)
        >>> jnp.maximum.accumulate(jnp.array([1, 3, 2]))
        Array([1, 3, 3], dtype=int32)
    """
    # An entry point whose plain function is `__wrapped__` (traceback_util.unwrap_boundary): the
    # array operators (`x + y`) call `add`'s plain function without this object's layer.
    _purenn_boundary = True

    def __init__(self, func, /, nin, nout, *, name=None, nargs=None, identity=None, call=None, reduce=None,
                 accumulate=None, at=None, reduceat=None):
        if not callable(func):
            raise TypeError(f"ufunc: func must be callable, got {func!r} of type {type(func).__name__}")
        self.__doc__ = func.__doc__
        self.__name__ = name or getattr(func, "__name__", "ufunc")
        self._func = func
        self._nin, self._nout = operator.index(nin), operator.index(nout)
        self._nargs = operator.index(nargs or nin)
        self._identity = identity
        self._call = call if call is not None else self._call_vectorized
        self.__wrapped__ = self._call
        self._reduce, self._accumulate, self._at, self._reduceat = reduce, accumulate, at, reduceat
        self._jitted = {}  # method -> its jitted loop (built on first use)

    nin = property(lambda self: self._nin, doc="The number of inputs.")
    nout = property(lambda self: self._nout, doc="The number of outputs.")
    nargs = property(lambda self: self._nargs, doc="The number of arguments (`nin` unless given).")
    identity = property(lambda self: self._identity,
                        doc="The value `reduce` starts from (None: the ufunc has no identity).")

    def _key(self):
        return (self._func, self.__name__, self._identity, self._nin, self._nout, self._nargs)

    def __hash__(self):
        return hash(self._key())

    def __eq__(self, other):
        return isinstance(other, ufunc) and self._key() == other._key()

    def __repr__(self):
        return f"<jnp.ufunc '{self.__name__}'>"

    def __reduce__(self):
        # the predefined ufuncs pickle by name (as functions do); others by their parts
        import core.numpy as jnp
        if getattr(jnp, self.__name__, None) is self:
            return (_predefined, (self.__name__,))
        return (_rebuild, (self._func, self._nin, self._nout, self.__name__, self._nargs, self._identity,
                           None if self._call == self._call_vectorized else self._call, self._reduce,
                           self._accumulate, self._at, self._reduceat))

    def __call__(self, *args, out=None, where=None):
        try:
            if out is None and where is None:
                return self._call(*args)
            self._refuse(out=out, where=where)
        except Exception as e:
            filter_exception(e)
            raise

    def _refuse(self, method="", **unsupported):
        for arg, value in unsupported.items():
            if value is not None:
                fix = ("purenn arrays are immutable, so use the return value." if arg == "out" else
                       "compute everywhere and select with jnp.where(where, result, fallback).")
                raise NotImplementedError(
                    f"The '{arg}' argument of jnp.{self.__name__}{method}() is not supported (as in JAX): {fix}")

    def _call_vectorized(self, *args):
        check_arraylike(self.__name__, *args)
        fn = self._jitted.get("call")
        if fn is None:
            from .vectorize import vectorize
            fn = self._jitted["call"] = _library_jit(vectorize(self._func))
        return fn(*args)

    def _require_binary(self, method):
        if self._nin != 2:
            raise ValueError(f"{self.__name__}.{method}: {method} is only supported for binary ufuncs; "
                             f"{self!r} takes {self._nin} input(s).")
        if self._nout != 1:
            raise ValueError(f"{self.__name__}.{method}: {method} is only supported for functions returning a "
                             f"single value; {self!r} returns {self._nout}.")

    def _result_dtype(self, *args):
        """The dtype `func` gives for scalars of the arguments' dtypes (found without computing)."""
        return _result_dtype(self._call, *args)

    def _loop(self, method, body, static_argnames):
        fn = self._jitted.get(method)
        if fn is None:
            fn = self._jitted[method] = _library_jit(body, static_argnames=static_argnames)
        return fn

    # ----- reduce ---------------------------------------------------------------------------------

    def reduce(self, a, axis=0, dtype=None, out=None, keepdims=False, initial=None, where=None):
        """Reduce `a` along `axis` by applying the ufunc repeatedly, as `numpy.ufunc.reduce`
        (`axis=None`: over all elements; a tuple of axes only where a fast reduction exists).

        `initial` starts the reduction (default: `identity`; an empty slice needs one), and
        `where` (a bool mask broadcast to `a`) picks the elements taking part, which needs an
        identity or `initial`. `add.reduce` is `sum`, `multiply.reduce` `prod`, `maximum.reduce`
        `max`, `logical_and.reduce` `all`, `logaddexp.reduce` a stable logsumexp; the others
        fold from the first element in order. Differs from NumPy as `jnp.sum` does (sums of bools
        and narrow integers are int32).

        Example:
            >>> x = jnp.array([[1, 2, 3], [4, 5, 6]])
            >>> jnp.add.reduce(x), jnp.subtract.reduce(x, axis=1)
            (Array([5, 7, 9], dtype=int32), Array([-4, -7], dtype=int32))
            >>> jnp.bitwise_or.reduce(x, axis=None)
            Array(7, dtype=int32)
        """
        name = f"{self.__name__}.reduce"
        self._require_binary("reduce")
        check_arraylike(name, a)
        self._refuse(".reduce", out=out)
        if initial is not None:
            check_arraylike(name, initial)
        if where is not None:
            check_arraylike(name, where)
            if self._identity is None and initial is None:
                raise ValueError(f"{name}: reduction operation {self.__name__!r} does not have an identity, so to "
                                 "use a where mask one has to specify 'initial'.")
            where_dtype = dtypes.dtype_and_weak_type(where)[0]
            if where_dtype != dtypes.bool_:
                raise ValueError(f"{name}: the where argument must have dtype bool, got dtype {where_dtype}.")
        if dtype is not None:
            dtype = dtypes.check_user_dtype(dtype, name)
        if self._reduce is not None:
            return self._reduce(a, axis=axis, dtype=dtype, keepdims=keepdims, initial=initial, where=where)
        a = asarray_operand(a)
        if isinstance(axis, (tuple, list)):
            raise NotImplementedError(
                f"{name}: a tuple of axes is not supported for {self!r} (it has no fast reduction, and a fold "
                "over several axes depends on their order); reduce one axis at a time.")
        if axis is not None:
            axis = canonicalize_axis(axis, a.ndim, name)
        dtype = self._result_dtype(a, a) if dtype is None else dtype
        if initial is None:
            initial = self._identity
        empty = a.size == 0 if axis is None else a.shape[axis] == 0
        if empty and initial is None:
            raise ValueError(f"{name}: zero-size array to reduction operation {self.__name__} which has no "
                             "identity; pass `initial=` to give empty slices a value.")
        fold = self._loop("reduce", self._reduce_by_folding, ("axis", "dtype", "keepdims"))
        return fold(a, axis=axis, dtype=dtype, keepdims=keepdims, initial=initial, where=where)

    def _reduce_by_folding(self, a, axis, dtype, keepdims, initial, where):
        if where is not None:
            where = _reductions._broadcast_to(where, a.shape)
        if axis is None:
            final_shape = (1,) * a.ndim if keepdims else ()
            a = lax.reshape(a, (a.size,))
            where = None if where is None else lax.reshape(where, (a.size,))
            axis = 0
        else:
            final_shape = tuple(1 if i == axis else d for i, d in enumerate(a.shape) if keepdims or i != axis)
        a = _to_front(lax.convert_element_type(a, dtype), axis)
        where = None if where is None else _to_front(where, axis)
        if a.shape[0] == 0:
            return lax.full(final_shape, initial, dtype)
        call = self._call

        def body(i, acc):
            step = call(acc, _row(a, i))
            return step if where is None else _reductions._where(_row(where, i), step, acc)

        if initial is None:
            start, acc = 1, a[0]
        else:
            start = 0
            acc = lax.broadcast_in_dim(lax.convert_element_type(asarray_operand(initial), dtype), a.shape[1:], ())
        result = lax.fori_loop(start, a.shape[0], body, acc)
        return lax.reshape(result, final_shape) if result.shape != final_shape else result

    # ----- accumulate ----------------------------------------------------------------------------

    def accumulate(self, a, axis=0, dtype=None, out=None):
        """The running reduction along `axis`, as `numpy.ufunc.accumulate`: element i is the
        reduction of elements 0..i. `add.accumulate` is `cumsum` and `multiply.accumulate`
        `cumprod` (so bools count as int32, where NumPy's `add.accumulate` ors them); the others
        run a `scan`.

        Example:
            >>> jnp.add.accumulate(jnp.array([1, 2, 3])), jnp.subtract.accumulate(jnp.array([9, 1, 2]))
            (Array([1, 3, 6], dtype=int32), Array([9, 8, 6], dtype=int32))
        """
        name = f"{self.__name__}.accumulate"
        self._require_binary("accumulate")
        check_arraylike(name, a)
        self._refuse(".accumulate", out=out)
        if dtype is not None:
            dtype = dtypes.check_user_dtype(dtype, name)
        if self._accumulate is not None:
            return self._accumulate(a, axis=axis, dtype=dtype)
        a = asarray_operand(a)
        if axis is None or isinstance(axis, (tuple, list)):
            raise ValueError(f"{name}: accumulate needs a single integer axis, got {axis!r}.")
        axis = canonicalize_axis(axis, a.ndim, name)
        dtype = self._result_dtype(a, a) if dtype is None else dtype
        scan = self._loop("accumulate", self._accumulate_by_scan, ("axis", "dtype"))
        return scan(a, axis=axis, dtype=dtype)

    def _accumulate_by_scan(self, a, axis, dtype):
        a = lax.convert_element_type(a, dtype)
        if a.size == 0:
            return a
        rows = _to_front(a, axis)
        call = self._call

        def step(acc, row):
            acc = call(acc, row)
            return acc, acc

        _, rest = lax.scan(step, rows[0], rows[1:])
        result = lax.concatenate([lax.expand_dims(rows[0], (0,)), rest], 0)
        return _from_front(result, axis)

    # ----- at ------------------------------------------------------------------------------------

    def at(self, a, indices, b=None, /, *, inplace=True):
        """`a` with the ufunc applied at `indices`, as `numpy.ufunc.at`: `a[indices] = ufunc(a[indices], b)`
        with repeated indices applied once each, in order (unary ufuncs take no `b`).

        NumPy updates `a` in place; purenn arrays are immutable, so (as in JAX) pass `inplace=False`
        and use the returned array; the default `inplace=True` raises. `add`, `subtract`,
        `multiply`, `maximum` and `minimum` are one scatter (`a.at[indices].add(b)`, ...); the
        others a `scan` over the indices. Out-of-bounds indices are dropped.

        Example:
            >>> x = jnp.zeros(4)
            >>> jnp.add.at(x, jnp.array([1, 1, 3]), 1.0, inplace=False)
            Array([0., 2., 0., 1.], dtype=float32)
            >>> jnp.negative.at(jnp.arange(3), 2, inplace=False)
            Array([ 0,  1, -2], dtype=int32)
        """
        name = f"{self.__name__}.at"
        if inplace:
            raise NotImplementedError(_AT_INPLACE.format(name=self.__name__))
        args = () if b is None else (b,)
        if len(args) != self._nin - 1:
            raise TypeError(f"{name}: {self!r} takes {self._nin} input(s), so at() needs "
                            f"{'a values argument b' if self._nin == 2 else 'no b'}; got {len(args) + 1} input(s).")
        check_arraylike(name, a, *args)
        if self._nout != 1:
            raise ValueError(f"{name}: at is only supported for functions returning a single value; "
                             f"{self!r} returns {self._nout}.")
        if self._at is not None:
            return self._at(asarray_operand(a), indices, *args)
        return self._at_by_scan(a, indices, *args)

    def _at_by_scan(self, a, indices, *args):
        name = f"{self.__name__}.at"
        dtype = self._result_dtype(a, *args)
        a = lax.convert_element_type(asarray_operand(a), dtype)
        args = tuple(lax.convert_element_type(asarray_operand(x), dtype) for x in args)
        index = _index_tuple(indices, a.ndim, name)
        if not index:
            return a
        advanced = [k for k, i in enumerate(index) if not isinstance(i, slice)]
        shape = broadcast_shapes(*(np.shape(index[k]) for k in advanced)) if advanced else ()
        call = self._call
        if not shape:  # one location (or one block of slices): no repeated index to apply in order
            return a.at[index].set(call(a.at[index].get(mode="clip"), *args))
        n = math.prod(shape)
        positions = tuple(lax.reshape(_reductions._broadcast_to(asarray_operand(index[k]), shape), (n,))
                          for k in advanced)
        values = tuple(_values_per_position(v, a.shape, index, advanced, shape) for v in args)

        def step(acc, xs):
            where, vals = xs
            pos = list(index)
            for k, w in zip(advanced, where):
                pos[k] = w
            pos = tuple(pos)
            return acc.at[pos].set(call(acc.at[pos].get(mode="clip"), *vals)), None

        result, _ = lax.scan(step, a, (positions, values), length=n)
        return result

    # ----- reduceat ------------------------------------------------------------------------------

    def reduceat(self, a, indices, axis=0, dtype=None, out=None):
        """Reductions over slices of `a` along `axis`, as `numpy.ufunc.reduceat`: element i
        reduces `a[indices[i]:indices[i+1]]` (to the end for the last), or is `a[indices[i]]`
        alone where `indices[i+1] <= indices[i]`.

        `indices` is a 1-D integer array (negative indices count from the end, as in JAX). A
        `dtype` converts `a` first (JAX 0.10.2 ignores it; NumPy uses it, and so do we).

        Example:
            >>> jnp.add.reduceat(jnp.arange(1, 9), jnp.array([0, 2, 5]))
            Array([ 3, 12, 21], dtype=int32)
        """
        name = f"{self.__name__}.reduceat"
        self._require_binary("reduceat")
        self._refuse(".reduceat", out=out)
        check_arraylike(name, a, indices)
        a, indices = asarray_operand(a), asarray_operand(indices)
        if a.ndim == 0:
            raise ValueError(f"{name}: a must have one or more dimensions, got a 0-d array.")
        if indices.ndim != 1:
            raise ValueError(f"{name}: indices must be one-dimensional, got shape {indices.shape}.")
        if indices.dtype.kind not in "iu":
            raise ValueError(f"{name}: indices must have an integer dtype, got {indices.dtype}.")
        if axis is None or isinstance(axis, (tuple, list)):
            raise ValueError(f"{name}: reduceat needs a single integer axis, got {axis!r}.")
        axis = canonicalize_axis(axis, a.ndim, name)
        if dtype is not None:
            dtype = dtypes.check_user_dtype(dtype, name)
        elif self._reduceat is None:
            dtype = self._result_dtype(a, a)
        if self._reduceat is not None:
            return self._reduceat(a, indices, axis=axis, dtype=dtype)
        loop = self._loop("reduceat", self._reduceat_by_loop, ("axis", "dtype"))
        return loop(a, indices, axis=axis, dtype=dtype)

    def _reduceat_by_loop(self, a, indices, axis, dtype):
        a = lax.convert_element_type(a, dtype)
        n = a.shape[axis]
        out = _take(a, indices, axis=axis)
        if indices.shape[0] == 0:
            return out
        # segment i covers positions start_i < j < end_i after its first element out[i] = a[start_i]
        ends = lax.concatenate([indices[1:], lax.full((1,), n, indices.dtype)], 0)
        bcast = tuple(d if i == axis else 1 for i, d in enumerate(out.shape))
        starts = lax.broadcast_in_dim(lax.reshape(indices, bcast), out.shape, tuple(range(out.ndim)))
        ends = lax.broadcast_in_dim(lax.reshape(ends, bcast), out.shape, tuple(range(out.ndim)))
        call = self._call

        def body(j, acc):
            inside = lax.bitwise_and(lax.gt(j, starts), lax.lt(j, ends))
            return _reductions._where(inside, call(acc, lax.dynamic_slice_in_dim(a, j, 1, axis)), acc)

        return lax.fori_loop(0, n, body, out)

    # ----- outer ---------------------------------------------------------------------------------

    def outer(self, A, B, /):
        """The ufunc applied to every pair of elements of `A` and `B`, as `numpy.ufunc.outer`: the
        result has shape `A.shape + B.shape` (one broadcast call, no loop).

        Example:
            >>> jnp.multiply.outer(jnp.arange(1, 4), jnp.arange(1, 3))
            Array([[1, 2],
                   [2, 4],
                   [3, 6]], dtype=int32)
        """
        self._require_binary("outer")
        check_arraylike(f"{self.__name__}.outer", A, B)
        a_shape, b_shape = np.shape(A), np.shape(B)
        if a_shape and b_shape:  # A's axes first, then B's: both of rank len(A) + len(B)
            A = lax.reshape(asarray_operand(A), a_shape + (1,) * len(b_shape))
            B = lax.reshape(asarray_operand(B), (1,) * len(a_shape) + b_shape)
        return self._call(A, B)


register_boundary(ufunc.__call__)
boundaries_for_methods(ufunc)


def frompyfunc(func, /, nin, nout, *, identity=None):
    """A `ufunc` from `func`, a function of `nin` scalars returning `nout` values, as
    `jax.numpy.frompyfunc` (NumPy's `frompyfunc` builds object arrays; here `func` is traced on
    array elements, so it must be written with array operations, and runs under jit, vmap and grad).

    Calls broadcast the arguments and vectorize `func` over them; `reduce`, `accumulate`,
    `reduceat` and `at` apply it in a loop, in order, so `func` need not be associative;
    `identity` is where `reduce` starts (and what an empty reduction gives).

    Example:
        >>> import operator
        >>> add = jnp.frompyfunc(operator.add, nin=2, nout=1, identity=0)
        >>> x = jnp.arange(4)
        >>> add(x, 10)
        Array([10, 11, 12, 13], dtype=int32)
        >>> add.reduce(x), add.accumulate(x)
        (Array(6, dtype=int32), Array([0, 1, 3, 6], dtype=int32))
        >>> add.at(x, jnp.array([1, 1]), 10, inplace=False)
        Array([ 0, 21,  2,  3], dtype=int32)
    """
    return ufunc(func, nin, nout, identity=identity)


def _predefined(name):
    import core.numpy as jnp
    return getattr(jnp, name)


def _rebuild(func, nin, nout, name, nargs, identity, call, reduce, accumulate, at, reduceat):
    return ufunc(func, nin, nout, name=name, nargs=nargs, identity=identity, call=call, reduce=reduce,
                 accumulate=accumulate, at=at, reduceat=reduceat)


def _library_jit(fun, **options):
    """`jit` for a ufunc's internal loop, without jit's many-signatures warning (the signatures are
    the caller's shapes, and a warning pointing here would not help)."""
    from ..api import jit
    jitted = jit(fun, **options)
    jitted._warned = True
    return jitted


# ----- helpers for the loops ---------------------------------------------------------------------

def _to_front(x, axis):
    if axis == 0:
        return x
    perm = (axis, *(i for i in range(x.ndim) if i != axis))
    return lax.transpose(x, perm)


def _from_front(x, axis):
    if axis == 0:
        return x
    perm = list(range(1, x.ndim))
    perm.insert(axis, 0)
    return lax.transpose(x, tuple(perm))


def _row(x, i):
    """x[i] for a traced scalar index i along the leading axis (a dynamic slice, no gather)."""
    row = lax.dynamic_slice_in_dim(x, i, 1, 0)
    return lax.reshape(row, x.shape[1:])


def _index_tuple(indices, ndim, name):
    """`indices` as a tuple of slices and integer arrays/scalars, Ellipsis expanded (one entry per
    axis from the left), for the loop of `ufunc.at`."""
    if isinstance(indices, list):
        raise TypeError(f"{name}: a list index is ambiguous (NumPy once read it as a tuple); pass "
                        f"jnp.asarray({indices!r}) for an index array, or a tuple for one index per axis.")
    index = indices if isinstance(indices, tuple) else (indices,)
    if not index:
        return index
    if any(i is None for i in index):
        raise NotImplementedError(f"{name}: None (newaxis) in the index is not supported here; index without it.")
    if sum(i is Ellipsis for i in index) > 1:
        raise IndexError(f"{name}: an index can only have a single ellipsis ('...').")
    if any(i is Ellipsis for i in index):
        k = next(k for k, i in enumerate(index) if i is Ellipsis)
        index = index[:k] + (slice(None),) * (ndim - len(index) + 1) + index[k + 1:]
    if len(index) > ndim:
        raise IndexError(f"{name}: too many indices for an array of dimension {ndim}: got {len(index)}.")
    for i in index:
        if isinstance(i, slice):
            continue
        check_arraylike(name, i)
        dt = dtypes.dtype_and_weak_type(i)[0]
        if dt == dtypes.bool_:
            raise TypeError(f"{name}: boolean mask indices are not supported by this ufunc's at(); pass the "
                            "integer positions instead (jnp.nonzero(mask)).")
        if dt.kind not in "iu":
            raise TypeError(f"{name}: indices must be integers or slices, got dtype {dt}.")
    return index


def _values_per_position(v, a_shape, index, advanced, shape):
    """`b` of `ufunc.at`, broadcast against `a[index]` (NumPy's rule) and laid out as one block per
    position of the index arrays: shape (positions, *block), the block being the sliced axes."""
    block_dims = [len(range(*index[k].indices(a_shape[k]))) if k < len(index) else a_shape[k]
                  for k in range(len(a_shape)) if k not in advanced]
    # NumPy puts the index arrays' axes where the arrays stand if they are adjacent, first otherwise
    adjacent = advanced == list(range(advanced[0], advanced[-1] + 1))
    at = sum(1 for k in range(advanced[0]) if k not in advanced) if adjacent else 0
    full = (*block_dims[:at], *shape, *block_dims[at:])
    v = _reductions._broadcast_to(v, full)
    if at:
        perm = (*range(at, at + len(shape)), *range(at), *range(at + len(shape), len(full)))
        v = lax.transpose(v, perm)
    return lax.reshape(v, (math.prod(shape), *block_dims))


def _result_dtype(fn, *args):
    """The dtype `fn` gives for scalars of the arguments' dtypes and weak types (found by tracing
    abstractly, as JAX's generic ufunc methods do)."""
    from ..api import eval_shape
    structs = [ShapeDtypeStruct((), *dtypes.dtype_and_weak_type(a)) for a in args]
    return np.dtype(eval_shape(fn, *structs).dtype)


# ----- the fast methods of the predefined ufuncs --------------------------------------------------

def _sum(a, *, axis, dtype, keepdims, initial, where):
    return _reductions.sum(a, axis=axis, dtype=dtype, keepdims=keepdims, initial=initial, where=where)


def _prod(a, *, axis, dtype, keepdims, initial, where):
    return _reductions.prod(a, axis=axis, dtype=dtype, keepdims=keepdims, initial=initial, where=where)


def _extreme(fn):
    def reduce(a, *, axis, dtype, keepdims, initial, where):
        a = asarray_operand(a) if dtype is None else lax.convert_element_type(asarray_operand(a), dtype)
        return fn(a, axis=axis, keepdims=keepdims, initial=initial, where=where)
    return reduce


def _monoid(name, kind, logical):
    """A reduction by `kind` ('and', 'or', 'xor') of bools (`logical`) or of integers/bools."""
    def reduce(a, *, axis, dtype, keepdims, initial, where):
        a = asarray_operand(a)
        if not logical and a.dtype.kind not in "biu":
            raise ValueError(f"{name}.reduce: an integer or bool argument is required, got dtype {a.dtype}.")
        r = _reductions._reduction(a, f"{name}.reduce", kind, axis, None, None, keepdims, initial, where,
                                   bool_op=logical)
        return r if dtype is None else lax.convert_element_type(r, dtype)
    return reduce


def _logsumexp(a, *, axis, dtype, keepdims, initial, where):
    """log(sum(exp(a))) over `axis`, shifted by the (gradient-free) maximum so nothing overflows."""
    a = asarray_operand(a) if dtype is None else lax.convert_element_type(asarray_operand(a), dtype)
    (a,) = _ufuncs.promote_args_inexact("logaddexp.reduce", a)
    _ufuncs._no_complex("logaddexp.reduce", a)
    peak = _reductions.max(a, axis=axis, keepdims=True, where=where, initial=-np.inf)
    peak = lax.stop_gradient(_reductions._where(lax.is_finite(peak), peak, lax.full_like(peak, 0)))
    total = _reductions.sum(lax.exp(lax.sub(a, peak)), axis=axis, keepdims=keepdims, where=where)
    if not keepdims:
        peak = lax.reshape(peak, total.shape)
    result = lax.add(lax.log(total), peak)
    return result if initial is None else _ufuncs.logaddexp(initial, result)


def _logsumexp2(a, *, axis, dtype, keepdims, initial, where):
    """log2(sum(2**a)) as logsumexp(a ln 2) / ln 2."""
    a = asarray_operand(a) if dtype is None else lax.convert_element_type(asarray_operand(a), dtype)
    (a,) = _ufuncs.promote_args_inexact("logaddexp2.reduce", a)
    scaled_initial = None if initial is None else _ufuncs.multiply(initial, _ufuncs._LN2)
    r = _logsumexp(_ufuncs.multiply(a, _ufuncs._LN2), axis=axis, dtype=None, keepdims=keepdims,
                   initial=scaled_initial, where=where)
    return _ufuncs.divide(r, _ufuncs._LN2)


def _jitted_reduction(reduce):
    """`reduce` as one compiled program per signature (a dozen operations: eagerly one dispatch
    instead of a dozen), with the axis, dtype and keepdims static."""
    jitted = []

    def run(a, *, axis, dtype, keepdims, initial, where):
        if not jitted:
            jitted.append(_library_jit(reduce, static_argnames=("axis", "dtype", "keepdims")))
        axis = tuple(axis) if isinstance(axis, list) else axis
        return jitted[0](a, axis=axis, dtype=dtype, keepdims=keepdims, initial=initial, where=where)
    return run


def _cumsum(a, *, axis, dtype):
    return _reductions.cumsum(a, axis=axis, dtype=dtype)


def _cumprod(a, *, axis, dtype):
    return _reductions.cumprod(a, axis=axis, dtype=dtype)


def _bool_through_int(update):
    """An `.at` update of bools done on int32 and turned back into bools (`add.at` of bools ors,
    `multiply.at` ands), as in JAX."""
    def at(a, indices, b):
        if a.dtype == dtypes.bool_:
            b = lax.convert_element_type(lax.convert_element_type(asarray_operand(b), dtypes.bool_), dtypes.int32)
            a = lax.convert_element_type(a, dtypes.int32)
            return lax.convert_element_type(update(a.at[indices], b), dtypes.bool_)
        return update(a.at[indices], b)
    return at


def _extreme_at(method, func):
    """`maximum.at`/`minimum.at` as one scatter-max/min, in the dtype `func` gives (as the loop would)."""
    def at(a, indices, b):
        dtype = _result_dtype(func, a, b)
        if dtype == dtypes.bool_:  # scatter max/min of bools: through uint8
            a8 = lax.convert_element_type(a, dtypes.uint8)
            b8 = lax.convert_element_type(asarray_operand(b), dtypes.uint8)
            return lax.convert_element_type(getattr(a8.at[indices], method)(b8), dtypes.bool_)
        a = lax.convert_element_type(a, dtype)
        return getattr(a.at[indices], method)(lax.convert_element_type(asarray_operand(b), dtype))
    return at


def _binary(func, identity, **methods):
    return ufunc(func, 2, 1, name=func.__name__, identity=identity, call=func, **methods)


add = _binary(_ufuncs.add, 0, reduce=_sum, accumulate=_cumsum,
              at=_bool_through_int(lambda ref, b: ref.add(b)))
multiply = _binary(_ufuncs.multiply, 1, reduce=_prod, accumulate=_cumprod,
                   at=_bool_through_int(lambda ref, b: ref.multiply(b)))
subtract = _binary(_ufuncs.subtract, None, at=lambda a, indices, b: a.at[indices].subtract(b))
maximum = _binary(_ufuncs.maximum, None, reduce=_extreme(_reductions.max), at=_extreme_at("max", _ufuncs.maximum))
minimum = _binary(_ufuncs.minimum, None, reduce=_extreme(_reductions.min), at=_extreme_at("min", _ufuncs.minimum))
logaddexp = _binary(_ufuncs.logaddexp, -np.inf, reduce=_jitted_reduction(_logsumexp))
logaddexp2 = _binary(_ufuncs.logaddexp2, -np.inf, reduce=_jitted_reduction(_logsumexp2))
logical_and = _binary(_ufuncs.logical_and, True, reduce=_monoid("logical_and", "and", True))
logical_or = _binary(_ufuncs.logical_or, False, reduce=_monoid("logical_or", "or", True))
logical_xor = _binary(_ufuncs.logical_xor, False, reduce=_monoid("logical_xor", "xor", True))
bitwise_and = _binary(_ufuncs.bitwise_and, -1, reduce=_monoid("bitwise_and", "and", False))
bitwise_or = _binary(_ufuncs.bitwise_or, 0, reduce=_monoid("bitwise_or", "or", False))
bitwise_xor = _binary(_ufuncs.bitwise_xor, 0, reduce=_monoid("bitwise_xor", "xor", False))
negative = ufunc(_ufuncs.negative, 1, 1, name="negative", call=_ufuncs.negative)
