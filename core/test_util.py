"""Test helpers: deterministic case sampling, random inputs per dtype, dtype-aware tolerances.

Every eager op compiles a small executable, so suites sample their (shape, dtype) cases
deterministically (as JAX's NUM_GENERATED_CASES does): `PURENN_NUM_GENERATED_CASES` (default 4)
cases per test; `PURENN_TEST_FULL=1` runs the full sweep.
"""
import itertools
import os
import random
import warnings
import zlib

import numpy as np

from . import dtypes

NUM_GENERATED_CASES = int(os.environ.get("PURENN_NUM_GENERATED_CASES", "4"))
FULL_SWEEP = os.environ.get("PURENN_TEST_FULL", "") not in ("", "0")

# Shape groups of docs/reliability.md N3: scalars, vectors, matrices, higher rank and size-0 shapes.
SCALAR_SHAPES = [()]
ARRAY_SHAPES = [(4,), (2, 3), (2, 1, 3)]
EMPTY_SHAPES = [(0,), (0, 4), (3, 0)]
ALL_SHAPES = SCALAR_SHAPES + ARRAY_SHAPES + EMPTY_SHAPES

FLOAT_DTYPES = [dtypes.float32, dtypes.float16, dtypes.bfloat16]
INT_DTYPES = [dtypes.int32, dtypes.int8, dtypes.int16]
UINT_DTYPES = [dtypes.uint32, dtypes.uint8]
COMPLEX_DTYPES = [dtypes.complex64]
BOOL_DTYPES = [dtypes.bool_]
NUMBER_DTYPES = FLOAT_DTYPES + INT_DTYPES + UINT_DTYPES + COMPLEX_DTYPES
ALL_DTYPES = NUMBER_DTYPES + BOOL_DTYPES

TOLERANCE = {dtypes.float16: 1e-3, dtypes.bfloat16: 1e-2, dtypes.float32: 1e-6, dtypes.float64: 1e-15,
             dtypes.complex64: 1e-6, dtypes.complex128: 1e-15}


def seed_for(name):
    """A deterministic seed from a test's name (adler32, as JAX's test harness does)."""
    return zlib.adler32(name.encode())


def sample_cases(cases, name, n=None):
    """A deterministic sample of `n` (default NUM_GENERATED_CASES) items of `cases`; all of them
    under PURENN_TEST_FULL=1. Use in `pytest.mark.parametrize`."""
    cases = list(cases)
    n = NUM_GENERATED_CASES if n is None else n
    if FULL_SWEEP or len(cases) <= n:
        return cases
    rng = random.Random(seed_for(name))
    return rng.sample(cases, n)


def product(*lists):
    return list(itertools.product(*lists))


def rand(rng, shape, dtype, low=-3.0, high=3.0, positive=False):
    """Random test data of `shape` and `dtype` as a NumPy array (ints in a small range, floats
    uniform in [low, high) or (0.1, high) when `positive`)."""
    dtype = np.dtype(dtype)
    if dtype == dtypes.bool_:
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        lo = 0 if dtype.kind == "u" or positive else max(int(low), np.iinfo(dtype).min)
        hi = min(int(high) + 1, int(np.iinfo(dtype).max))
        if positive:
            lo = 1
        return rng.integers(lo, max(hi, lo + 1), size=shape).astype(dtype)
    lo = 0.1 if positive else low
    if dtype.kind == "c":
        re = rng.uniform(lo, high, size=shape)
        im = rng.uniform(lo, high, size=shape)
        return (re + 1j * im).astype(dtype)
    return rng.uniform(lo, high, size=shape).astype(dtype)


def tolerance(dtype, default=0.0):
    return TOLERANCE.get(np.dtype(dtype), default)


def assert_allclose(actual, expected, dtype=None, atol=None, rtol=None, err_msg=""):
    """Compare to a (float64) oracle with the tolerance of `dtype` (exact for ints and bools)."""
    actual_np = np.asarray(actual)
    expected = np.asarray(expected)
    dtype = np.dtype(dtype if dtype is not None else actual_np.dtype)
    if actual_np.shape != expected.shape:
        raise AssertionError(f"shape {actual_np.shape} != expected {expected.shape}. {err_msg}")
    if dtype.kind in "biu":
        np.testing.assert_array_equal(actual_np, expected.astype(actual_np.dtype), err_msg=err_msg)
        return
    tol = tolerance(dtype)
    a = actual_np.astype(np.complex128 if dtype.kind == "c" else np.float64)
    e = expected.astype(np.complex128 if dtype.kind == "c" else np.float64)
    np.testing.assert_allclose(a, e, atol=tol if atol is None else atol, rtol=tol if rtol is None else rtol,
                               equal_nan=True, err_msg=err_msg)


def wide(x):
    """The float64 (complex128) form of a sampled array, for a NumPy oracle; ints and bools as they are."""
    x = np.asarray(x)
    if x.dtype.kind == "c":
        return x.astype(np.complex128)
    if x.dtype.kind in "biu":
        return x
    return x.astype(np.float64)


def numpy_oracle(f, *args):
    """`f` applied to the widened arguments, with NumPy's floating-point warnings silenced."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return f(*[wide(a) for a in args])


# ----- gradient checks (docs/reliability.md N1) ------------------------------------------------------

_GRAD_TOL = {dtypes.float16: 1e-1, dtypes.bfloat16: 1e-1, dtypes.float32: 2e-2, dtypes.float64: 1e-5,
             dtypes.complex64: 2e-2, dtypes.complex128: 1e-5}
_GRAD_EPS = {dtypes.float16: 1e-1, dtypes.bfloat16: 1e-1, dtypes.float32: 1e-2, dtypes.float64: 1e-4,
             dtypes.complex64: 1e-2, dtypes.complex128: 1e-4}


def _leaves(x):
    from .tree_util import tree_flatten
    return tree_flatten(x)[0]


def _inexact_leaves(x):
    return [np.asarray(v) for v in _leaves(x) if np.asarray(v).dtype.kind in "fc"
            or np.asarray(v).dtype == dtypes.bfloat16]


def _worst_dtype(*trees):
    """The least precise inexact dtype among the leaves (it sets the default tolerance)."""
    order = [dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.complex64, dtypes.float64, dtypes.complex128]
    found = {np.dtype(v.dtype) for t in trees for v in _inexact_leaves(t)}
    for dt in order:
        if dt in found:
            return dt
    return dtypes.float64


def _tree_op(op, *trees):
    from .tree_util import tree_map
    return tree_map(op, *trees)


def _rand_like(rng, x):
    x = np.asarray(x)
    if x.dtype.kind == "c":
        return (rng.standard_normal(x.shape) + 1j * rng.standard_normal(x.shape)).astype(x.dtype)
    if x.dtype.kind == "f" or x.dtype == dtypes.bfloat16:
        return rng.standard_normal(x.shape).astype(x.dtype)
    return np.zeros(x.shape, dtypes.float0)


def _inner(xs, ys):
    """Sum over leaves of sum(x * y) in float64 / complex128 (no conjugation, as JAX's vjp)."""
    total = 0.0
    for x, y in zip(_leaves(xs), _leaves(ys)):
        x, y = np.asarray(x), np.asarray(y)
        if x.dtype == dtypes.float0 or y.dtype == dtypes.float0:
            continue
        total = total + np.sum(wide(x) * wide(y))
    return total


def _check_close(actual, expected, atol, rtol, err_msg):
    for a, e in zip(_leaves(actual), _leaves(expected)):
        a, e = np.asarray(a), np.asarray(e)
        if a.dtype == dtypes.float0 or e.dtype == dtypes.float0:
            continue
        a = a.astype(np.complex128 if a.dtype.kind == "c" else np.float64)
        e = e.astype(np.complex128 if e.dtype.kind == "c" else np.float64)
        np.testing.assert_allclose(a, e, atol=atol, rtol=rtol, err_msg=err_msg)


def _numerical_jvp(f, primals, tangents, eps):
    """Central difference (f(x + eps t) - f(x - eps t)) / (2 eps), evaluated in the inputs' dtype."""
    def shifted(sign):
        args = _tree_op(lambda p, t: p if np.asarray(t).dtype == dtypes.float0
                        else (np.asarray(p) + sign * eps * np.asarray(t)).astype(np.asarray(p).dtype),
                        primals, tangents)
        return f(*args)
    plus, minus = shifted(1), shifted(-1)
    return _tree_op(lambda a, b: (wide(np.asarray(a)) - wide(np.asarray(b))) / (2 * eps)
                    if np.asarray(a).dtype.kind in "fc" or np.asarray(a).dtype == dtypes.bfloat16
                    else np.zeros(np.shape(a), dtypes.float0), plus, minus)


def check_jvp(f, f_jvp, args, atol=None, rtol=None, eps=None, rng=None, err_msg=""):
    """Compare `f_jvp(args, tangents)` with central differences of `f` along random tangents."""
    rng = np.random.default_rng(0) if rng is None else rng
    dt = _worst_dtype(args)
    atol = _GRAD_TOL[dt] if atol is None else atol
    rtol = _GRAD_TOL[dt] if rtol is None else rtol
    eps = _GRAD_EPS[dt] if eps is None else eps
    tangents = _tree_op(lambda x: _rand_like(rng, x), args)
    out, out_t = f_jvp(args, tangents)
    expected_out = f(*args)
    _check_close(out, expected_out, atol, rtol, f"{err_msg} (primal output of jvp)")
    numeric = _numerical_jvp(f, args, tangents, eps)
    _check_close(out_t, numeric, atol, rtol, f"{err_msg} (jvp tangent vs central differences, eps={eps})")


def check_vjp(f, f_vjp, args, atol=None, rtol=None, eps=None, rng=None, err_msg=""):
    """The inner-product identity <u, J v> = <J^T u, v>, with J v from central differences and
    J^T u from `f_vjp`, for random v and u."""
    rng = np.random.default_rng(1) if rng is None else rng
    dt = _worst_dtype(args)
    atol = _GRAD_TOL[dt] if atol is None else atol
    rtol = _GRAD_TOL[dt] if rtol is None else rtol
    eps = _GRAD_EPS[dt] if eps is None else eps
    out, pullback = f_vjp(*args)
    expected_out = f(*args)
    _check_close(out, expected_out, atol, rtol, f"{err_msg} (primal output of vjp)")
    v = _tree_op(lambda x: _rand_like(rng, x), args)
    u = _tree_op(lambda y: _rand_like(rng, y), out)
    jv = _numerical_jvp(f, args, v, eps)
    ju = pullback(u)
    # real parts: for maps between real and complex spaces (rfft) only they agree under JAX's
    # no-conjugation convention; for holomorphic maps an error still shows in the real part
    lhs, rhs = np.real(_inner(u, jv)), np.real(_inner(ju, v))
    size = max(1, sum(np.size(x) for x in _leaves(out)))
    np.testing.assert_allclose(np.asarray(rhs), np.asarray(lhs), atol=atol * size, rtol=rtol,
                               err_msg=f"{err_msg} (vjp inner-product identity, eps={eps})")


def check_grads(f, args, order, modes=("fwd", "rev"), atol=None, rtol=None, eps=None, rng=None):
    """Check the derivatives of `f` at `args` (a tuple of arrays or pytrees) to `order`: forward
    mode against central differences, reverse mode by the inner-product identity, and recursively
    the derivatives of the derivative functions (docs/reliability.md N1). Raises AssertionError naming
    the mode and order that failed.

    Example:
        >>> check_grads(jnp.sin, (np.array([0.5, 1.0], np.float32),), order=2)   # float32 tolerances
    """
    from .autodiff import jvp, vjp
    rng = np.random.default_rng(0) if rng is None else rng
    args = tuple(args)

    def _check(f, args, order, where):
        if "fwd" in modes:
            jvp_of_f = lambda primals, tangents: jvp(f, tuple(primals), tuple(tangents))  # noqa: E731
            check_jvp(f, jvp_of_f, args, atol, rtol, eps, rng, f"{where}: forward mode")
            if order > 1:
                _check(lambda *a: jvp(f, a[:len(args)], a[len(args):])[1], args + args, order - 1,
                       f"{where} -> jvp")
        if "rev" in modes:
            check_vjp(f, lambda *a: vjp(f, *a), args, atol, rtol, eps, rng, f"{where}: reverse mode")
            if order > 1:
                def f_vjp(*a):
                    out, pullback = vjp(f, *a)
                    return pullback(out)
                _check(f_vjp, args, order - 1, f"{where} -> vjp")

    _check(f, args, order, "check_grads order 1")


# ----- batching (docs/reliability.md N5) -------------------------------------------------------------------

def batching_cases(lane_ndims, sizes=(10, 0)):
    """The in_axes a batching test covers, for operands of per-example ranks `lane_ndims`: each
    operand batched alone at every position of its batch axis (the others unbatched), then all
    operands batched at the front and all at the back; for each batch size in `sizes`."""
    cases = []
    for i, nd in enumerate(lane_ndims):
        for p in range(nd + 1):
            cases.append(tuple(p if j == i else None for j in range(len(lane_ndims))))
    if len(lane_ndims) > 1:
        cases.append(tuple(0 for _ in lane_ndims))
        cases.append(tuple(nd for nd in lane_ndims))
    cases = list(dict.fromkeys(cases))
    return [(axes, size) for size in sizes for axes in cases]


def check_vmap(fun, stacked_args, atol=None, rtol=None, sizes=(10, 0), cases=None, err_msg=""):
    """Assert `vmap(fun)` equals the loop over examples (docs/reliability.md N5).

    `stacked_args` are NumPy arrays whose first axis holds the examples (at least max(sizes) of
    them). For every case of `batching_cases` the batched operands get their example axis moved
    to the case's position (and cut to its batch size), the unbatched ones are example 0, and
    `vmap(fun, in_axes)` is compared leaf by leaf with `fun` applied to each example and stacked.
    """
    import core
    from core.tree_util import tree_flatten
    stacked_args = [np.asarray(a) for a in stacked_args]
    lane_ndims = [a.ndim - 1 for a in stacked_args]
    for axes, size in (cases if cases is not None else batching_cases(lane_ndims, sizes)):
        args = []
        for a, ax in zip(stacked_args, axes):
            args.append(a[0] if ax is None else np.moveaxis(a[:size], 0, ax))
        got = tree_flatten(core.vmap(fun, in_axes=axes)(*args))[0]
        if size:
            lanes = [tree_flatten(fun(*[a[0] if ax is None else a[k] for a, ax in zip(stacked_args, axes)]))[0]
                     for k in range(size)]
            expected = [np.stack([np.asarray(lane[j]) for lane in lanes]) for j in range(len(lanes[0]))]
        else:
            shapes = tree_flatten(core.eval_shape(fun, *[a[0] for a in stacked_args]))[0]
            expected = [np.zeros((0,) + tuple(s.shape), s.dtype) for s in shapes]
        assert len(got) == len(expected), f"vmap gave {len(got)} outputs, the loop {len(expected)}"
        for j, (g, e) in enumerate(zip(got, expected)):
            g_np = np.asarray(g)
            msg = f"in_axes={axes}, batch size {size}, output {j}. {err_msg}"
            if g_np.dtype != e.dtype:
                raise AssertionError(f"dtype {g_np.dtype} != {e.dtype} from the loop; {msg}")
            assert_allclose(g_np, e, e.dtype, atol=atol, rtol=rtol, err_msg=msg)
