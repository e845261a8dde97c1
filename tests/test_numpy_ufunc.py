"""`jnp.ufunc`, `jnp.frompyfunc` and jax.numpy's ufunc objects (issue 16, item 1).

Each method is compared with NumPy's (`np.add.at`, `np.multiply.outer`, `np.maximum.reduce`,
`np.add.accumulate`, `np.add.reduceat`, `np.frompyfunc`) in float64, eagerly here and under jit when
tests/test_numpy_under_jit.py runs this file again; gradients by finite differences
(core.test_util.check_grads). Where NumPy and jax 0.10.2 differ we follow JAX (values recorded from
the jax venv) and the comment says so.
"""
import inspect
import operator
import pickle
import re

import numpy as np
import pytest

import core
import core.numpy as jnp
from core import test_util as tu
from core.numpy import ufuncs as plain_ufuncs
from core.traceback_util import unwrap_boundary
from jax_port import port  # tests/ is on sys.path

# jax 0.10.2: [n for n in dir(jnp) if isinstance(getattr(jnp, n), jnp.ufunc)], with (nin, nout, identity)
JAX_UFUNCS = {
    "add": (2, 1, 0), "bitwise_and": (2, 1, -1), "bitwise_or": (2, 1, 0), "bitwise_xor": (2, 1, 0),
    "logaddexp": (2, 1, -np.inf), "logaddexp2": (2, 1, -np.inf), "logical_and": (2, 1, True),
    "logical_or": (2, 1, False), "logical_xor": (2, 1, False), "maximum": (2, 1, None), "minimum": (2, 1, None),
    "multiply": (2, 1, 1), "negative": (1, 1, None), "subtract": (2, 1, None),
}

F = np.array([[0.5, -1.25, 2.0], [3.0, 0.75, -0.5]], np.float32)
NAN = np.array([[1.0, np.nan, 0.0], [2.0, 3.0, -1.0]], np.float32)
MASK = np.array([[True, False, True], [False, True, True]])
B = np.array([[True, False, True], [True, True, True]])
I = np.array([[5, 3, 12], [6, 10, 7]], np.int32)


def _sample(cases, name):
    # 12 by default (all under PURENN_TEST_FULL=1); 3 when tests/test_numpy_under_jit.py reruns this file
    return tu.sample_cases(cases, name, n=3 * tu.NUM_GENERATED_CASES)


def _ids(cases):
    return [f"{c[0]}-{i}" for i, c in enumerate(cases)]


def _np_ufunc(name):
    return getattr(np, name)


def _close(out, want, dtype=np.float32):
    tu.assert_allclose(out, want, dtype, atol=1e-5, rtol=1e-5)


# ----- the objects ------------------------------------------------------------------------------

@pytest.mark.eager_only  # under the jit harness jnp.add is a proxy object, not the ufunc itself
def test_jax_numpys_ufunc_objects_with_their_attributes():
    found = sorted(n for n in dir(jnp) if isinstance(getattr(jnp, n), jnp.ufunc))
    assert found == sorted(JAX_UFUNCS)
    for name, (nin, nout, identity) in JAX_UFUNCS.items():
        u = getattr(jnp, name)
        assert (u.nin, u.nout, u.nargs, u.__name__) == (nin, nout, nin, name)
        assert u.identity == identity and type(u.identity) is type(identity)
        assert repr(u) == f"<jnp.ufunc '{name}'>"
        assert pickle.loads(pickle.dumps(u)) is u
        # `x + y` and friends still call the plain function, without the ufunc's layer
        assert unwrap_boundary(u) is getattr(plain_ufuncs, name)
    # jax 0.10.2's other elementwise functions are plain functions
    assert not isinstance(jnp.divide, jnp.ufunc) and not isinstance(jnp.sin, jnp.ufunc)
    assert str(inspect.signature(jnp.add)) == "(x1, x2, /)" and "numpy.add" in jnp.add.__doc__
    assert jnp.add == jnp.add and jnp.add != jnp.subtract and hash(jnp.add) == hash(jnp.add)
    # jax 0.10.2: two frompyfunc ufuncs of one function are equal
    assert jnp.frompyfunc(operator.add, 2, 1) == jnp.frompyfunc(operator.add, 2, 1)
    u = jnp.frompyfunc(operator.add, 2, 1, identity=0)
    assert (repr(u), u.nin, u.nout, u.nargs, u.identity) == ("<jnp.ufunc 'add'>", 2, 1, 2, 0)
    assert isinstance(u, jnp.ufunc) and not isinstance(u, np.ufunc)


def test_calling_a_ufunc_is_calling_its_function():
    x, y = jnp.asarray(F), jnp.asarray(F[0])
    np.testing.assert_array_equal(jnp.add(x, y), F + F[0])
    np.testing.assert_array_equal(x + y, F + F[0])
    np.testing.assert_array_equal(jnp.negative(x), -F)
    np.testing.assert_array_equal(jnp.logical_xor(B, MASK), B ^ MASK)
    assert jnp.add(jnp.ones(3, jnp.float16), 1.0).dtype == np.float16  # weak scalars as before


# ----- reduce ------------------------------------------------------------------------------------

REDUCE_CASES = [
    ("add", F, dict(axis=0)), ("add", F, dict(axis=None, keepdims=True)), ("add", F, dict(axis=(0, 1))),
    ("add", F, dict(axis=1, where=MASK, initial=1.0)), ("multiply", F, dict(axis=1)),
    ("maximum", NAN, dict(axis=1)), ("minimum", F, dict(axis=0, where=MASK, initial=-1.0)),
    ("subtract", F, dict(axis=1)), ("subtract", F, dict(axis=0, keepdims=True, initial=10.0)),
    ("subtract", F, dict(axis=1, where=MASK, initial=0.0)), ("logical_and", B, dict(axis=1)),
    ("logical_or", B, {}), ("logical_xor", B, dict(axis=None)), ("bitwise_and", I, dict(axis=1)),
    ("bitwise_or", I, {}), ("bitwise_xor", I, dict(axis=None)), ("logaddexp", F, dict(axis=1)),
    ("logaddexp2", F, dict(axis=0, initial=0.5)),
]


REDUCE_SAMPLE = _sample(REDUCE_CASES, "ufunc_reduce")


@pytest.mark.parametrize("name,x,kwargs", REDUCE_SAMPLE, ids=_ids(REDUCE_SAMPLE))
def test_reduce_matches_numpy(name, x, kwargs):
    out = getattr(jnp, name).reduce(jnp.asarray(x), **kwargs)
    want = _np_ufunc(name).reduce(x.astype(np.float64) if x.dtype == np.float32 else x, **kwargs)
    assert out.dtype == x.dtype
    _close(out, want, x.dtype)


def test_reduce_over_all_axes_folds_in_order():
    # NumPy refuses axis=None for subtract (not reorderable); JAX folds the flattened array in order
    np.testing.assert_allclose(jnp.subtract.reduce(jnp.asarray(F), axis=None),
                               np.subtract.reduce(F.ravel().astype(np.float64)), rtol=1e-6)


def test_reduce_accumulate_and_at_dtypes_follow_jax():
    b, i8 = jnp.array([True, False, True]), jnp.array([100, 100, 1], jnp.int8)
    # jax 0.10.2 (NumPy differs: add.reduce of int8 is int64, add.accumulate of bools is bool)
    for out, dtype, value in [(jnp.add.reduce(b), np.int32, 2), (jnp.add.reduce(i8), np.int32, 201),
                              (jnp.subtract.reduce(i8), np.int8, -1), (jnp.multiply.reduce(b), np.int32, 0),
                              (jnp.maximum.reduce(b), np.bool_, True),
                              (jnp.logical_and.reduce(jnp.array([2, 0])), np.bool_, False)]:
        assert out.dtype == dtype and out.shape == () and out == value
    acc = jnp.add.accumulate(b)
    assert acc.dtype == np.int32 and acc.tolist() == [1, 1, 2]
    acc8 = jnp.add.accumulate(i8)  # int8 wraps, as in JAX
    assert acc8.dtype == np.int8 and acc8.tolist() == [100, -56, -55]
    ored = jnp.add.at(b, jnp.array([1, 1]), jnp.array([True, False]), inplace=False)  # add of bools ors
    assert ored.dtype == np.bool_ and ored.tolist() == [True, True, True]
    # reduce of an empty axis gives the identity; without one it needs initial
    assert float(jnp.add.reduce(jnp.zeros((0, 2)))[1]) == 0.0
    assert float(jnp.subtract.reduce(jnp.zeros((0,)), initial=3.0)) == 3.0


# ----- accumulate --------------------------------------------------------------------------------

ACCUMULATE_CASES = [("add", F, dict(axis=1)), ("multiply", F, {}), ("maximum", NAN, dict(axis=1)),
                    ("subtract", F, dict(axis=1)), ("logaddexp", F, {}), ("logical_and", B, dict(axis=1)),
                    ("subtract", I, dict(axis=1, dtype=np.float32))]


ACCUMULATE_SAMPLE = _sample(ACCUMULATE_CASES, "ufunc_accumulate")


@pytest.mark.parametrize("name,x,kwargs", ACCUMULATE_SAMPLE, ids=_ids(ACCUMULATE_SAMPLE))
def test_accumulate_matches_numpy(name, x, kwargs):
    out = getattr(jnp, name).accumulate(jnp.asarray(x), **kwargs)
    wide = {**kwargs, "dtype": np.float64} if "dtype" in kwargs else kwargs
    want = _np_ufunc(name).accumulate(x.astype(np.float64) if x.dtype == np.float32 else x, **wide)
    assert out.dtype == kwargs.get("dtype", x.dtype) and out.shape == x.shape
    _close(out, want, out.dtype)


# ----- at ----------------------------------------------------------------------------------------

X6 = np.arange(6.0, dtype=np.float32) - 2.0
X34 = np.arange(12.0, dtype=np.float32).reshape(3, 4) / 4
REPEATS = np.array([0, 2, 2, 5, 2])
VALS = np.array([1.5, -2.0, 3.0, 0.25, 4.0], np.float32)

AT_CASES = [
    ("add", X6, REPEATS, VALS), ("add", X6, REPEATS, 1.0), ("subtract", X6, REPEATS, VALS),
    ("multiply", X6, REPEATS, VALS), ("maximum", X6, REPEATS, VALS), ("minimum", X6, REPEATS, VALS),
    ("add", X6, slice(1, 4), 10.0), ("add", X34, (np.array([0, 0, 2]), np.array([1, 1, 3])), 1.0),
    ("logaddexp", X6, REPEATS, VALS),                        # no scatter for these: a scan, in order
    ("logaddexp", X34, np.array([0, 0]), np.array([1.0, 2.0, 3.0, 4.0], np.float32)),  # rows (JAX raises)
    ("logaddexp", X34, (np.array([2, 2]), slice(1, 3)), np.float32(0.5)),              # JAX: no slices
    ("logaddexp", X34, (slice(0, 2), np.array([3, 3, 1])), np.float32(-1.0)),          # arrays last
    ("bitwise_or", np.array([1, 2, 4, 8], np.int32), np.array([1, 1, 3]), np.array([4, 16, 1], np.int32)),
    ("negative", X6, np.array([1, 1, 4]), None),             # applied twice at 1: back where it was
]


AT_SAMPLE = _sample(AT_CASES, "ufunc_at")


@pytest.mark.parametrize("name,x,idx,b", AT_SAMPLE, ids=_ids(AT_SAMPLE))
def test_at_matches_numpy_at(name, x, idx, b):
    args = () if b is None else (b,)
    out = getattr(jnp, name).at(jnp.asarray(x), idx, *args, inplace=False)
    want = x.astype(np.float64) if x.dtype == np.float32 else x.copy()
    _np_ufunc(name).at(want, idx, *(np.asarray(a, want.dtype) for a in args))
    assert out.dtype == x.dtype and out.shape == x.shape
    _close(out, want, x.dtype)


def test_at_follows_jax_where_numpy_differs():
    x = jnp.arange(6.0)
    # out-of-bounds positions are dropped (NumPy raises IndexError); negative ones count from the end
    np.testing.assert_array_equal(jnp.add.at(x, jnp.array([7, -1]), 1.0, inplace=False), [0, 1, 2, 3, 4, 6])
    np.testing.assert_array_equal(jnp.logaddexp.at(x, jnp.array([7, -1]), 0.0, inplace=False),
                                  [0, 1, 2, 3, 4, np.logaddexp(5.0, 0.0).astype(np.float32)])
    # maximum of int32 and float32 is float32, so the update is too (NumPy refuses the cast)
    out = jnp.maximum.at(jnp.arange(3), jnp.array([1, 1]), jnp.array([0.5, 1.5]), inplace=False)
    assert out.dtype == np.float32 and out.tolist() == [0.0, 1.5, 2.0]


# ----- reduceat and outer ------------------------------------------------------------------------

A8 = np.arange(1.0, 9.0, dtype=np.float32)
REDUCEAT_CASES = [("add", A8, [0, 2, 5], {}), ("add", A8, [0, 5, 2, 7], {}), ("maximum", A8[::-1].copy(), [0, 3], {}),
                  ("subtract", A8, [1, 4], {}), ("multiply", X34, [0, 2, 3], dict(axis=1))]


REDUCEAT_SAMPLE = _sample(REDUCEAT_CASES, "ufunc_reduceat")


@pytest.mark.parametrize("name,x,idx,kwargs", REDUCEAT_SAMPLE, ids=_ids(REDUCEAT_SAMPLE))
def test_reduceat_matches_numpy(name, x, idx, kwargs):
    out = getattr(jnp, name).reduceat(jnp.asarray(x), jnp.array(idx), **kwargs)
    want = _np_ufunc(name).reduceat(x.astype(np.float64), idx, **kwargs)
    assert out.dtype == x.dtype
    _close(out, want)


def test_reduceat_dtype_converts_first():
    # NumPy honours dtype; jax 0.10.2 ignores it (returns int32 [3, 33]); we do as NumPy
    out = jnp.add.reduceat(jnp.arange(1, 9), jnp.array([0, 2]), dtype=jnp.float32)
    assert out.dtype == np.float32 and out.tolist() == [3.0, 33.0]


OUTER_CASES = [("multiply", np.arange(1.0, 4.0), np.array([0.5, -2.0])),
               ("add", np.ones((2, 1)), np.arange(3.0)), ("subtract", np.float64(2.5), np.arange(3.0)),
               ("maximum", np.array([[1.0, 5.0]]), np.array([2.0, 3.0, 6.0])),
               ("logical_and", np.array([True, False]), np.array([True, True, False]))]


OUTER_SAMPLE = _sample(OUTER_CASES, "ufunc_outer")


@pytest.mark.parametrize("name,a,b", OUTER_SAMPLE, ids=_ids(OUTER_SAMPLE))
def test_outer_matches_numpy(name, a, b):
    out = getattr(jnp, name).outer(jnp.asarray(a, jnp.float32 if a.dtype.kind == "f" else None), jnp.asarray(b))
    want = _np_ufunc(name).outer(a, b)
    assert out.shape == np.shape(a) + np.shape(b)
    _close(out, want, np.dtype(out.dtype))


def test_outer_keeps_weak_scalars_weak():
    # jax 0.10.2: add.outer(1, int8 array) is int8, add.outer(1, 2) a weakly typed int32
    assert jnp.add.outer(1, jnp.arange(3, dtype=jnp.int8)).dtype == np.int8
    assert int(jnp.add.outer(1, 2)) == 3


# ----- frompyfunc ---------------------------------------------------------------------------------

def _affine(a, b):
    return a * b + 1.0  # neither associative nor commutative with its identity: order matters


def test_frompyfunc_matches_numpys():
    # NumPy's frompyfunc computes on Python objects and returns object arrays; ours traces `func` on
    # array elements (as JAX's), so the results are float32 arrays with NumPy's values
    ours, theirs = jnp.frompyfunc(_affine, nin=2, nout=1), np.frompyfunc(_affine, 2, 1)
    x, y = F.astype(np.float64), F[0].astype(np.float64)
    as_float = lambda o: np.asarray(o, dtype=np.float64)  # noqa: E731
    _close(ours(jnp.asarray(F), jnp.asarray(F[0])), as_float(theirs(x, y)))
    _close(ours.reduce(jnp.asarray(F), axis=1), as_float(theirs.reduce(x, axis=1)))
    _close(ours.accumulate(jnp.asarray(F), axis=1), as_float(theirs.accumulate(x, axis=1)))
    _close(ours.outer(jnp.asarray(F[0]), jnp.asarray(F[1])), as_float(theirs.outer(y, x[1])))
    _close(ours.reduceat(jnp.asarray(A8), jnp.array([0, 3, 1])), as_float(theirs.reduceat(A8.astype(float), [0, 3, 1])))
    want = X6.astype(np.float64).astype(object)
    theirs.at(want, REPEATS, VALS.astype(np.float64))
    _close(ours.at(jnp.asarray(X6), jnp.asarray(REPEATS), jnp.asarray(VALS), inplace=False), as_float(want))
    # an identity is where reduce starts and what an empty reduction gives
    total = jnp.frompyfunc(operator.add, 2, 1, identity=0)
    np_total = np.frompyfunc(operator.add, 2, 1, identity=0)
    assert int(total.reduce(jnp.zeros((0,), jnp.int32))) == np_total.reduce(np.zeros((0,), np.int32)) == 0
    assert int(total.reduce(jnp.arange(5), where=jnp.arange(5) > 1)) == 9
    # several outputs come back as a tuple, as from NumPy's
    pair = jnp.frompyfunc(lambda a, b: (a + b, a * b), 2, 2)
    s, p = pair(jnp.arange(3.0), 2.0)
    np.testing.assert_array_equal(s, [2, 3, 4]) and np.testing.assert_array_equal(p, [0, 2, 4])
    # the loops batch: vmap of a fold against a Python loop over the rows
    rows = jnp.asarray(X34)
    np.testing.assert_allclose(core.vmap(ours.reduce)(rows), [float(ours.reduce(r)) for r in rows], rtol=1e-6)


# ----- gradients ----------------------------------------------------------------------------------

@pytest.mark.eager_only  # differentiates core.jit(f) itself: under the jit harness it would redo the same
def test_gradients_by_finite_differences(x64):
    rng = np.random.default_rng(7)
    x, v, m = rng.uniform(-1, 1, (5,)), rng.uniform(-1, 1, (4,)), rng.uniform(-1, 1, (2, 3))
    idx = jnp.array([0, 3, 3, 1])
    affine = jnp.frompyfunc(lambda a, b: a * b + jnp.sin(a), 2, 1)

    def f(x, v, m):  # the methods, fast routes and loops, in one program (one compile per mode)
        return (jnp.add.at(x, idx, v, inplace=False), jnp.logaddexp.at(x, idx, v, inplace=False),
                jnp.add.reduce(m), jnp.subtract.reduce(m, axis=1), jnp.add.accumulate(m, axis=1),
                jnp.subtract.accumulate(m), jnp.multiply.outer(x, v), affine.reduce(x),
                affine.at(x, idx, v, inplace=False))

    tu.check_grads(core.jit(f), (x, v, m), order=1, modes=("fwd", "rev"))


# ----- errors ---------------------------------------------------------------------------------------

def test_errors_name_the_method_and_the_fix():
    x = jnp.arange(4.0)
    with pytest.raises(NotImplementedError, match=r"add\.at: purenn arrays are immutable.*inplace=False"):
        jnp.add.at(x, 0, 1.0)
    with pytest.raises(TypeError, match=r"add\.at: .*needs a values argument b"):
        jnp.add.at(x, 0, inplace=False)
    with pytest.raises(TypeError, match=r"negative\.at: .*needs no b"):
        jnp.negative.at(x, 0, 1.0, inplace=False)
    with pytest.raises(ValueError, match=r"negative\.reduce: reduce is only supported for binary ufuncs"):
        jnp.negative.reduce(x)
    with pytest.raises(ValueError, match=r"outer is only supported for functions returning a single value"):
        jnp.frompyfunc(lambda a, b: (a, b), 2, 2).outer(x, x)
    with pytest.raises(NotImplementedError, match=r"'out' argument of jnp\.add\.reduce\(\)"):
        jnp.add.reduce(x, out=x)
    with pytest.raises(NotImplementedError, match=r"'where' argument of jnp\.add\(\)"):
        jnp.add(x, x, where=x > 1)
    with pytest.raises(ValueError, match=r"add\.reduce: the where argument must have dtype bool, got dtype int32"):
        jnp.add.reduce(x, where=jnp.arange(4))
    with pytest.raises(ValueError, match=re.escape("maximum.reduce: reduction operation 'maximum' does not have "
                                                   "an identity, so to use a where mask one has to specify 'initial'")):
        jnp.maximum.reduce(x, where=x > 1)
    with pytest.raises(ValueError, match=r"subtract\.reduce: zero-size array .* pass `initial=`"):
        jnp.subtract.reduce(jnp.zeros((0,)))
    with pytest.raises(NotImplementedError, match=r"subtract\.reduce: a tuple of axes is not supported"):
        jnp.subtract.reduce(jnp.ones((2, 2)), axis=(0, 1))
    with pytest.raises(ValueError, match=r"subtract\.accumulate: accumulate needs a single integer axis, got None"):
        jnp.subtract.accumulate(x, axis=None)
    with pytest.raises(ValueError, match=r"add\.reduceat: indices must be one-dimensional, got shape \(1, 1\)"):
        jnp.add.reduceat(x, jnp.array([[0]]))
    with pytest.raises(ValueError, match=r"add\.reduceat: indices must have an integer dtype, got float32"):
        jnp.add.reduceat(x, jnp.array([0.0]))
    with pytest.raises(TypeError, match=r"add\.reduce requires ndarray or scalar arguments, but got list"):
        jnp.add.reduce([1.0, 2.0])
    with pytest.raises(TypeError, match=r"logaddexp\.at: boolean mask indices are not supported"):
        jnp.logaddexp.at(x, x > 1, 1.0, inplace=False)
    with pytest.raises(TypeError):
        jnp.frompyfunc(operator.add, 1.5, 1)


# ----- a JAX-style program, rewritten only in its imports -------------------------------------------

PROGRAM = '''
import operator

import jax
import jax.numpy as jnp


@jax.jit
def tally(counts, bins, weights):
    counts = jnp.add.at(counts, bins, weights, inplace=False)
    running = jnp.add.accumulate(counts)
    peak = jnp.maximum.reduce(counts)
    table = jnp.multiply.outer(counts, jnp.arange(1.0, 4.0))
    return counts, running, peak, table


capped_add = jnp.frompyfunc(lambda a, b: jnp.minimum(a + b, 10.0), nin=2, nout=1, identity=0.0)


def capped_totals(x):
    return capped_add.reduce(x), capped_add.accumulate(x), capped_add.at(x, jnp.array([0, 0]), 9.0, inplace=False)


grad_weights = jax.grad(lambda w, counts, bins: jnp.sum(jnp.add.at(counts, bins, w, inplace=False) ** 2))
'''


@pytest.mark.eager_only  # the program jits and differentiates itself, as a JAX program would
def test_jax_style_program_matches_numpy():
    namespace = {}
    exec(compile(port(PROGRAM), "<jax-style program>", "exec"), namespace)
    counts0 = np.array([1.0, 0.0, 2.0, 0.5], np.float32)
    bins = np.array([0, 2, 2, 3, 0])
    w = np.array([0.5, 1.0, 2.0, 0.25, 1.5], np.float32)
    counts, running, peak, table = namespace["tally"](counts0, bins, w)
    want = counts0.astype(np.float64)
    np.add.at(want, bins, w)
    _close(counts, want)
    _close(running, np.add.accumulate(want))
    _close(peak, np.maximum.reduce(want))
    _close(table, np.multiply.outer(want, np.arange(1.0, 4.0)))

    x = np.array([4.0, 5.0, 3.0, -6.0], np.float32)
    capped = np.frompyfunc(lambda a, b: min(a + b, 10.0), 2, 1, identity=0.0)
    total, acc, hit = namespace["capped_totals"](jnp.asarray(x))
    _close(total, float(capped.reduce(x.astype(float))))
    _close(acc, np.asarray(capped.accumulate(x.astype(float)), np.float64))
    want_hit = x.astype(float).astype(object)
    capped.at(want_hit, [0, 0], 9.0)
    _close(hit, np.asarray(want_hit, np.float64))

    # d/dw sum((counts + scatter(w))^2) = 2 * (the updated counts) at each weight's bin
    g = namespace["grad_weights"](w, counts0, bins)
    _close(g, 2 * want[bins])
