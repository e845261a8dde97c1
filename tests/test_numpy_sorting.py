"""lax.sort / sort_key_val / top_k and core.numpy sorting, searching, counting and set operations
against NumPy (which orders NaN last and ties -0.0 with 0.0, as we do)."""
import numpy as np
import pytest

import core.numpy as jnp
from core import dtypes, lax, test_util as tu
from core.avals import ShapedArray
from core.trace import Tracer

SORT_DTYPES = [np.float32, np.float16, dtypes.bfloat16, np.int32, np.int8, np.uint8, np.bool_]


def _with_specials(x, rng):
    """Sprinkle NaN, -0.0, 0.0 and infinities into a float test array."""
    if x.dtype.kind == "f" or x.dtype == dtypes.bfloat16:
        flat = x.reshape(-1)
        specials = np.array([np.nan, -0.0, 0.0, np.inf, -np.inf, -np.nan], x.dtype)
        pick = rng.random(flat.shape) < 0.4
        flat[pick] = rng.choice(specials, size=int(pick.sum()))
    return x


# ----- lax.sort ------------------------------------------------------------------------------------

_SORT_CASES = tu.sample_cases(tu.product([(5,), (3, 4), (2, 1, 6), (0,), (4, 0)], [-1, 0], SORT_DTYPES),
                              "lax_sort", 10)


@pytest.mark.parametrize("shape,dimension,dtype", _SORT_CASES)
def test_lax_sort_matches_numpy(rng, shape, dimension, dtype):
    x = _with_specials(tu.rand(rng, shape, dtype), rng)
    out = lax.sort(jnp.asarray(x), dimension=dimension)
    assert out.dtype == np.dtype(dtype) and out.shape == shape
    expected = np.sort(x.astype(np.float64) if x.dtype == dtypes.bfloat16 else x, axis=dimension, kind="stable")
    tu.assert_allclose(out, expected, dtype)


def test_lax_sort_total_order_and_stability():
    x = np.array([3.0, np.nan, -0.0, 0.0, -np.nan, -np.inf, 1.0, 0.0, -0.0], np.float32)
    k, v = lax.sort_key_val(jnp.asarray(x), jnp.asarray(np.arange(9, dtype=np.int32)))
    np.testing.assert_array_equal(v, np.argsort(x, kind="stable"))  # zeros tie and keep their order
    np.testing.assert_array_equal(v, [5, 2, 3, 7, 8, 6, 0, 1, 4])
    # the values come back bit-for-bit: the -0.0 at position 2 is still negative
    assert np.signbit(np.asarray(k)[1]) and not np.signbit(np.asarray(k)[2])
    z = np.array([1 + 2j, 1 - 1j, -3 + 5j, 1 - 1j], np.complex64)
    np.testing.assert_array_equal(lax.sort(jnp.asarray(z)), np.sort(z))


def test_lax_sort_multiple_operands(rng):
    k1 = rng.integers(0, 3, 12).astype(np.int32)
    k2 = tu.rand(rng, (12,), np.float32)
    k2[:4] = k2[4:8]  # ties in the secondary key too
    vals = np.arange(12, dtype=np.float32)
    s1, s2, sv = lax.sort((jnp.asarray(k1), jnp.asarray(k2), jnp.asarray(vals)), num_keys=2)
    order = np.lexsort((k2, k1))
    np.testing.assert_array_equal(sv, vals[order])
    np.testing.assert_array_equal(s1, k1[order])
    _, _, sv1 = lax.sort((jnp.asarray(k1), jnp.asarray(k2), jnp.asarray(vals)), num_keys=1)
    np.testing.assert_array_equal(sv1, vals[np.argsort(k1, kind="stable")])
    with pytest.raises(TypeError, match=r"sort requires all operands to have the same shape, got \(12,\), \(3,\)"):
        lax.sort((jnp.asarray(k1), jnp.ones(3)))
    with pytest.raises(ValueError, match=r"sort: num_keys=3 must be at least 1 and at most the number of "
                                         r"operands \(2\)"):
        lax.sort((jnp.asarray(k1), jnp.asarray(k2)), num_keys=3)
    with pytest.raises(ValueError, match=r"sort: dimension 1 is out of bounds for operands of shape \(12,\)"):
        lax.sort(jnp.asarray(k1), dimension=1)


# ----- top_k -------------------------------------------------------------------------------------

@pytest.mark.parametrize("shape,k,dtype", [((6,), 3, np.float32), ((3, 5), 2, np.int32), ((2, 4), 4, np.float16),
                                           ((3, 5), 0, np.float32), ((2, 7), 1, dtypes.bfloat16)])
def test_top_k_matches_argsort(rng, shape, k, dtype):
    x = rng.integers(-2, 3, size=shape).astype(dtype)  # ties: lower index first
    vals, idx = lax.top_k(jnp.asarray(x), k)
    assert idx.dtype == np.int32 and vals.shape == shape[:-1] + (k,)
    expected_idx = np.argsort(-x.astype(np.float64), axis=-1, kind="stable")[..., :k]
    np.testing.assert_array_equal(idx, expected_idx)
    tu.assert_allclose(vals, np.take_along_axis(x.astype(np.float64), expected_idx, -1), dtype)


def test_top_k_nan_and_errors():
    vals, idx = lax.top_k(jnp.asarray(np.array([1.0, np.nan, 5.0, 5.0], np.float32)), 3)
    np.testing.assert_array_equal(vals, [np.nan, 5.0, 5.0])
    np.testing.assert_array_equal(idx, [1, 2, 3])
    with pytest.raises(TypeError, match=r"top_k: k must be smaller than or equal to the size of the last axis, "
                                        r"got k=5 for operand of shape \(4,\)"):
        lax.top_k(jnp.ones(4), 5)
    with pytest.raises(TypeError, match=r"top_k operand must have >= 1 dimension"):
        lax.top_k(jnp.ones(()), 1)


# ----- jnp.sort / argsort / lexsort / partition -----------------------------------------------------

@pytest.mark.parametrize("axis,descending", [(-1, False), (0, False), (None, False), (-1, True), (None, True)])
def test_jnp_sort_and_argsort(rng, axis, descending):
    x = rng.integers(0, 4, size=(3, 5)).astype(np.float32)  # many ties: stability matters
    x[1, 1] = np.nan
    a = jnp.asarray(x)
    out = jnp.sort(a, axis=axis, descending=descending)
    idx = jnp.argsort(a, axis=axis, descending=descending)
    assert idx.dtype == np.int32
    flat = x.reshape(-1) if axis is None else x
    ax = 0 if axis is None else axis
    if descending:
        # NumPy has no descending sort: the stable order of -x keeps equal elements in place, NaN first
        expected_idx = np.argsort(np.where(np.isnan(flat), -np.inf, -flat), axis=ax, kind="stable")
    else:
        expected_idx = np.argsort(flat, axis=ax, kind="stable")
    np.testing.assert_array_equal(idx, expected_idx)
    np.testing.assert_array_equal(out, np.take_along_axis(flat, expected_idx, ax))


def test_argsort_is_stable_for_ints_and_bools(rng):
    x = rng.integers(0, 2, size=40).astype(np.int8)
    np.testing.assert_array_equal(jnp.argsort(jnp.asarray(x)), np.argsort(x, kind="stable"))
    b = x.astype(bool)
    np.testing.assert_array_equal(jnp.argsort(jnp.asarray(b)), np.argsort(b, kind="stable"))
    np.testing.assert_array_equal(jnp.sort(jnp.asarray(np.float32(2.0)), axis=None), [2.0])
    with pytest.raises(np.exceptions.AxisError, match=r"sort: axis -1 is out of bounds for array of dimension 0"):
        jnp.sort(jnp.asarray(np.float32(2.0)))  # as NumPy
    np.testing.assert_array_equal(jnp.argsort(jnp.zeros((0,))), np.zeros(0, np.int32))


def test_lexsort_partition_argpartition(rng):
    k1 = rng.integers(0, 3, 10)
    k2 = rng.integers(0, 3, 10)
    np.testing.assert_array_equal(jnp.lexsort((jnp.asarray(k1), jnp.asarray(k2))), np.lexsort((k1, k2)))
    keys = rng.integers(0, 2, (3, 2, 4))
    np.testing.assert_array_equal(jnp.lexsort(jnp.asarray(keys)), np.lexsort(keys))
    x = tu.rand(rng, (3, 7), np.float32)
    for kth in (0, 3, -1):
        p = np.asarray(jnp.partition(jnp.asarray(x), kth, axis=1))
        s = np.sort(x, axis=1)
        np.testing.assert_array_equal(p[:, kth], s[:, kth])
        k = kth % 7
        assert (p[:, :k] <= p[:, k:k + 1]).all() and (p[:, k:] >= p[:, k:k + 1]).all()
        ip = np.asarray(jnp.argpartition(jnp.asarray(x), kth, axis=1))
        np.testing.assert_array_equal(np.take_along_axis(x, ip, 1)[:, kth], s[:, kth])
    with pytest.raises(ValueError, match=r"partition: kth\(=7\) out of bounds \(7\)"):
        jnp.partition(jnp.asarray(x), 7)
    with pytest.raises(ValueError, match=r"lexsort: all keys need to be the same shape"):
        jnp.lexsort((jnp.ones(3), jnp.ones(4)))
    with pytest.raises(np.exceptions.AxisError, match=r"sort: axis 2 is out of bounds for array of dimension 2"):
        jnp.sort(jnp.asarray(x), axis=2)


# ----- searching ---------------------------------------------------------------------------------

@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted(rng, side):
    a = np.sort(rng.integers(0, 6, 9)).astype(np.float32)
    a[-1] = np.nan
    v = np.array([[-1.0, 0.0, 2.0], [2.5, 5.0, np.nan]], np.float32)
    out = jnp.searchsorted(jnp.asarray(a), jnp.asarray(v), side=side)
    assert out.dtype == np.int32 and out.shape == v.shape
    np.testing.assert_array_equal(out, np.searchsorted(a, v, side=side))
    perm = rng.permutation(9)
    shuffled = a[perm]
    sorter = np.argsort(shuffled, kind="stable")
    np.testing.assert_array_equal(jnp.searchsorted(jnp.asarray(shuffled), jnp.asarray(v), side=side,
                                                   sorter=jnp.asarray(sorter)),
                                  np.searchsorted(shuffled, v, side=side, sorter=sorter))
    ints = np.array([1, 3, 3, 7], np.int32)
    np.testing.assert_array_equal(jnp.searchsorted(jnp.asarray(ints), 3, side=side),
                                  np.searchsorted(ints, 3, side=side))
    np.testing.assert_array_equal(jnp.searchsorted(jnp.zeros((0,)), jnp.asarray(v)), np.zeros(v.shape, int))


def test_searchsorted_errors():
    with pytest.raises(ValueError, match=r"searchsorted: side must be 'left' or 'right', got 'middle'"):
        jnp.searchsorted(jnp.ones(3), 1.0, side="middle")
    with pytest.raises(ValueError, match=r"searchsorted: a should be 1-dimensional, got shape \(2, 2\)"):
        jnp.searchsorted(jnp.ones((2, 2)), 1.0)


@pytest.mark.parametrize("right", [False, True])
def test_digitize(rng, right):
    x = rng.integers(-1, 6, 12).astype(np.float32)
    inc = np.array([0.0, 1.0, 1.0, 3.0, 5.0], np.float32)
    np.testing.assert_array_equal(jnp.digitize(jnp.asarray(x), jnp.asarray(inc), right=right),
                                  np.digitize(x, inc, right=right))
    dec = inc[::-1].copy()
    np.testing.assert_array_equal(jnp.digitize(jnp.asarray(x), jnp.asarray(dec), right=right),
                                  np.digitize(x, dec, right=right))


def test_bincount(rng):
    x = rng.integers(0, 5, 20)
    w = tu.rand(rng, (20,), np.float32)
    np.testing.assert_array_equal(jnp.bincount(jnp.asarray(x)), np.bincount(x))
    np.testing.assert_array_equal(jnp.bincount(jnp.asarray(x), minlength=8), np.bincount(x, minlength=8))
    out = jnp.bincount(jnp.asarray(x), jnp.asarray(w))
    assert out.dtype == np.float32
    tu.assert_allclose(out, np.bincount(x, _ws(w)), np.float32, atol=1e-5)
    # static length: larger values are dropped, as in JAX
    np.testing.assert_array_equal(jnp.bincount(jnp.asarray(x), length=3), np.bincount(x)[:3])
    np.testing.assert_array_equal(jnp.bincount(jnp.zeros((0,), jnp.int32)), np.zeros(0, int))
    with pytest.raises(TypeError, match=r"bincount: x argument must have an integer type, got float32"):
        jnp.bincount(jnp.ones(3))
    with pytest.raises(ValueError, match=r"bincount: x must contain only non-negative values"):
        jnp.bincount(jnp.asarray(np.array([1, -1])))


def _ws(w):
    return w.astype(np.float64)


class _FakeTracer(Tracer):
    """A stand-in tracer: just enough to reach the concreteness checks."""
    __slots__ = ("_aval",)

    def __init__(self, aval):
        self._aval = aval

    @property
    def aval(self):
        return self._aval


def test_value_dependent_shapes_need_concrete_inputs():
    t = _FakeTracer(ShapedArray((4,), np.int32))
    with pytest.raises(TypeError, match=r"jnp.bincount needs a concrete array here.*pass a static `length=`"):
        jnp.bincount(t)


# ----- unique and set operations --------------------------------------------------------------

def test_unique_matches_numpy(rng):
    x = rng.integers(0, 5, (3, 4)).astype(np.float32)
    x[0, 1] = x[2, 2] = np.nan
    x[1, 1] = -0.0
    ours = jnp.unique(jnp.asarray(x), return_index=True, return_inverse=True, return_counts=True)
    theirs = np.unique(x, return_index=True, return_inverse=True, return_counts=True)
    for o, t in zip(ours, theirs, strict=True):
        np.testing.assert_array_equal(o, t)
    ints = rng.integers(-3, 3, 15).astype(np.int8)
    np.testing.assert_array_equal(jnp.unique(jnp.asarray(ints)), np.unique(ints))
    assert jnp.unique(jnp.zeros((0,))).shape == (0,)


def test_unique_with_size_pads_and_truncates():
    x = jnp.asarray(np.array([3, 1, 3, 2, 1], np.int32))
    vals, idx, counts = jnp.unique(x, return_index=True, return_counts=True, size=5, fill_value=-1)
    np.testing.assert_array_equal(vals, [1, 2, 3, -1, -1])
    np.testing.assert_array_equal(idx, [1, 3, 0, 0, 0])
    np.testing.assert_array_equal(counts, [2, 1, 2, 0, 0])
    np.testing.assert_array_equal(jnp.unique(x, size=4), [1, 2, 3, 1])  # default fill: the smallest value
    np.testing.assert_array_equal(jnp.unique(x, size=2), [1, 2])
    with pytest.raises(NotImplementedError, match=r"jnp.unique: only axis=None"):
        jnp.unique(x, axis=0)


def test_set_operations(rng):
    a = rng.integers(0, 8, 10)
    b = rng.integers(4, 12, 7)
    ja, jb = jnp.asarray(a), jnp.asarray(b)
    np.testing.assert_array_equal(jnp.union1d(ja, jb), np.union1d(a, b))
    np.testing.assert_array_equal(jnp.intersect1d(ja, jb), np.intersect1d(a, b))
    np.testing.assert_array_equal(jnp.setdiff1d(ja, jb), np.setdiff1d(a, b))
    np.testing.assert_array_equal(jnp.setxor1d(ja, jb), np.setxor1d(a, b))
    n = len(np.intersect1d(a, b))
    np.testing.assert_array_equal(jnp.intersect1d(ja, jb, size=n + 2, fill_value=-7),
                                  np.concatenate([np.intersect1d(a, b), [-7, -7]]))
    m = len(np.setdiff1d(a, b))
    np.testing.assert_array_equal(jnp.setdiff1d(ja, jb, size=m + 1, fill_value=99),
                                  np.concatenate([np.setdiff1d(a, b), [99]]))
    np.testing.assert_array_equal(jnp.setxor1d(ja, jb, size=3), np.setxor1d(a, b)[:3])
    np.testing.assert_array_equal(jnp.union1d(ja, jb, size=2), np.union1d(a, b)[:2])


def test_isin(rng):
    e = rng.integers(0, 6, (3, 4)).astype(np.float32)
    e[0, 0] = np.nan
    t = np.array([1.0, 3.0, np.nan, 5.0], np.float32)
    np.testing.assert_array_equal(jnp.isin(jnp.asarray(e), jnp.asarray(t)), np.isin(e, t))
    np.testing.assert_array_equal(jnp.isin(jnp.asarray(e), jnp.asarray(t), invert=True), np.isin(e, t, invert=True))
    np.testing.assert_array_equal(jnp.in1d(jnp.asarray(e), jnp.asarray(t)), np.isin(e.ravel(), t))
    np.testing.assert_array_equal(jnp.isin(jnp.asarray(e), jnp.zeros((0,))), np.zeros(e.shape, bool))


# ----- histogram ------------------------------------------------------------------------------

def test_histogram(rng):
    # values on a 0.25 grid are exact in float32 and land on the edges: the boundary rules matter
    a = rng.integers(0, 17, 40) / 4.0
    for bins, rng_ in ((4, None), (8, (0.0, 4.0)), (3, (1.0, 3.0))):
        h, e = jnp.histogram(jnp.asarray(a.astype(np.float32)), bins=bins, range=rng_)
        eh, ee = np.histogram(a, bins=bins, range=rng_)
        np.testing.assert_array_equal(h, eh)
        tu.assert_allclose(e, ee, np.float32)
    edges = np.array([0.0, 0.5, 2.0, 4.0])
    w = tu.rand(rng, (40,), np.float32, positive=True)
    h, _ = jnp.histogram(jnp.asarray(a.astype(np.float32)), bins=jnp.asarray(edges.astype(np.float32)),
                         weights=jnp.asarray(w))
    tu.assert_allclose(h, np.histogram(a, edges, weights=w.astype(np.float64))[0], np.float32, atol=1e-5)
    h, _ = jnp.histogram(jnp.asarray(a.astype(np.float32)), bins=jnp.asarray(edges.astype(np.float32)), density=True)
    tu.assert_allclose(h, np.histogram(a, edges, density=True)[0], np.float32, atol=1e-6)
    h, e = jnp.histogram(jnp.asarray(np.full(5, 2.0, np.float32)), bins=2)  # equal min and max: +-0.5
    np.testing.assert_array_equal(h, np.histogram(np.full(5, 2.0), bins=2)[0])
    tu.assert_allclose(e, [1.5, 2.0, 2.5], np.float32)
    with pytest.raises(ValueError, match=r"histogram: `bins` must be positive"):
        jnp.histogram(jnp.ones(3), bins=0)
    with pytest.raises(ValueError, match=r"histogram: max must be larger than min in range parameter"):
        jnp.histogram(jnp.ones(3), bins=2, range=(2.0, 1.0))
