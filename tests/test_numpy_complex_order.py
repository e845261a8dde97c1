"""Complex max/min/argmax/argmin (and their nan-, amax/amin, ptp, maximum/minimum and sort relatives)
against NumPy: complex numbers order lexicographically (real part, then imaginary part), and a number
with a NaN in either part propagates (max/min, maximum/minimum) or is chosen (argmax/argmin, the first
one). Values come from a small grid so real parts tie often; NaNs are planted in either part.

JAX (0.10.2) gives `jax.grad(lambda x: jnp.max(x).real)` a one-hot at the chosen element (ties share
it), and refuses argmax of complex ("gt does not accept dtype complex64"); we follow NumPy's argmax
and JAX's gradient."""
import numpy as np
import pytest

import core
import core.numpy as jnp
from core import lax

NAN = np.nan


def _grid(rng, shape, dtype, nans=True):
    """Complex values with real and imaginary parts in {-1, 0, 1} (so ties in the real part are
    common), with a few NaNs in the real part, the imaginary part or both."""
    x = (rng.integers(-1, 2, shape) + 1j * rng.integers(-1, 2, shape)).astype(dtype)
    if nans and x.size:
        flat = x.reshape(-1)
        picks = rng.choice(flat.size, size=max(1, flat.size // 8), replace=False)
        for i, p in enumerate(picks):
            flat[p] = [complex(NAN, flat[p].imag), complex(flat[p].real, NAN), complex(NAN, NAN)][i % 3]
    return x


def _assert_same(actual, expected):
    """Equal values, with NaN where NumPy has NaN (which NaN of several is unspecified, so only
    the NaN-ness is compared there)."""
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.dtype == expected.dtype and actual.shape == expected.shape, (actual, expected)
    a_nan, e_nan = np.isnan(actual), np.isnan(expected)
    np.testing.assert_array_equal(a_nan, e_nan)
    np.testing.assert_array_equal(actual[~a_nan], expected[~e_nan])


CASES = [((7,), None, False), ((4, 5), 0, False), ((4, 5), 1, True), ((3, 4, 2), (0, 2), False),
         ((3, 4, 2), -1, True), ((3, 4, 2), None, True)]


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
@pytest.mark.parametrize("shape,axis,keepdims", CASES)
def test_max_min_ptp_match_numpy(shape, axis, keepdims, dtype, x64):
    rng = np.random.default_rng(hash((shape, str(axis))) % 2**32)
    for nans in (False, True):
        x = _grid(rng, shape, dtype, nans)
        for name in ("max", "min", "amax", "amin", "nanmax", "nanmin", "ptp"):
            got = getattr(jnp, name)(jnp.asarray(x), axis=axis, keepdims=keepdims)
            with np.errstate(invalid="ignore"):
                _assert_same(got, getattr(np, name)(x, axis=axis, keepdims=keepdims))


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
@pytest.mark.parametrize("shape,axis,keepdims", [c for c in CASES if not isinstance(c[1], tuple)])
def test_argmax_argmin_match_numpy(shape, axis, keepdims, dtype, x64):
    rng = np.random.default_rng(len(shape) + (axis or 0))
    for nans in (False, True):
        x = _grid(rng, shape, dtype, nans)
        for name in ("argmax", "argmin"):
            got = getattr(jnp, name)(jnp.asarray(x), axis=axis, keepdims=keepdims)
            np.testing.assert_array_equal(got, getattr(np, name)(x, axis=axis, keepdims=keepdims), err_msg=name)
        # nan-variants: NumPy raises on an all-NaN slice (we give -1, as JAX); the grid has none
        for name in ("nanargmax", "nanargmin"):
            got = getattr(jnp, name)(jnp.asarray(x), axis=axis, keepdims=keepdims)
            np.testing.assert_array_equal(got, getattr(np, name)(x, axis=axis, keepdims=keepdims), err_msg=name)


def test_hand_derived_lexicographic_and_nan_choices():
    x = jnp.asarray(np.array([1 + 2j, 3 - 1j, 3 + 4j, -2 + 9j, 3 + 4j], np.complex64))
    assert complex(jnp.max(x)) == 3 + 4j and int(jnp.argmax(x)) == 2  # the first of the tie
    assert complex(jnp.min(x)) == -2 + 9j and int(jnp.argmin(x)) == 3
    # (-inf - 1j) is below (-inf + 0j): the nan-variants' fill must not beat it
    y = jnp.asarray(np.array([complex(NAN, 0), complex(-np.inf, -1), 1j], np.complex64))
    assert complex(jnp.nanmin(y)) == complex(-np.inf, -1) and int(jnp.nanargmin(y)) == 1
    z = np.array([1 + 0j, complex(0, NAN), complex(NAN, 5), 2j], np.complex64)
    assert int(jnp.argmax(jnp.asarray(z))) == 1 and int(jnp.argmin(jnp.asarray(z))) == 1
    assert np.isnan(complex(jnp.max(jnp.asarray(z)))) and int(jnp.nanargmax(jnp.asarray(z))) == 0  # 1+0j beats 0+2j


def test_initial_and_where():
    x = np.array([[1 + 2j, 3 - 1j, 3 + 4j], [0j, -1 + 5j, 2 + 2j]], np.complex64)
    mask = np.array([[True, True, False], [False, True, False]])
    for name in ("max", "min"):
        for kw in ({"initial": 3 + 0j}, {"initial": 0j, "where": mask}, {"initial": 3 + 0j, "axis": 1}):
            got = getattr(jnp, name)(jnp.asarray(x), **kw)
            np.testing.assert_array_equal(got, getattr(np, name)(x, **kw), err_msg=f"{name} {kw}")
    assert complex(jnp.max(jnp.zeros((0,), jnp.complex64), initial=1j)) == 1j
    with pytest.raises(ValueError, match="identity"):
        jnp.max(jnp.zeros((0,), jnp.complex64))


def test_maximum_minimum_elementwise():
    rng = np.random.default_rng(3)
    x, y = _grid(rng, (40,), np.complex64), _grid(rng, (40,), np.complex64)
    for name in ("maximum", "minimum"):
        got = np.asarray(getattr(jnp, name)(jnp.asarray(x), jnp.asarray(y)))
        want = getattr(np, name)(x, y)  # a NaN wins, x's first: exact, NaN payload included
        np.testing.assert_array_equal(got.view(np.float32), want.view(np.float32), err_msg=name)
    got = np.asarray(jnp.maximum(jnp.asarray(x[:4]), 0j))  # broadcasting a scalar
    np.testing.assert_array_equal(got.view(np.float32), np.maximum(x[:4], 0j).view(np.float32))


def test_lax_reductions_accept_complex():
    x = jnp.asarray(np.array([[1 + 2j, 1 + 3j], [complex(-np.inf, -1), 0j]], np.complex64))
    np.testing.assert_array_equal(lax.reduce_max(x, (1,)), [1 + 3j, 0j])
    np.testing.assert_array_equal(lax.reduce_min(x, (0,)), [complex(-np.inf, -1), 0j])
    np.testing.assert_array_equal(lax.argmax(x, 0, np.int32), [0, 0])
    # an empty axis gives the identity, below (above) every complex number
    e = lax.reduce_max(jnp.zeros((0,), jnp.complex64), (0,))
    assert complex(e) == complex(-np.inf, -np.inf)


def test_under_jit_and_vmap():
    rng = np.random.default_rng(5)
    x = _grid(rng, (6, 5), np.complex64)
    f = core.jit(lambda a: (jnp.max(a, axis=1), jnp.argmax(a, axis=1), jnp.nanargmin(a, axis=0)))
    m, i, j = f(jnp.asarray(x))
    _assert_same(m, np.max(x, axis=1))
    np.testing.assert_array_equal(i, np.argmax(x, axis=1))
    np.testing.assert_array_equal(j, np.nanargmin(x, axis=0))
    v = core.vmap(jnp.argmax)(jnp.asarray(x))
    np.testing.assert_array_equal(v, [np.argmax(row) for row in x])
    v = core.vmap(jnp.min, in_axes=1)(jnp.asarray(x))
    _assert_same(v, np.array([np.min(x[:, k]) for k in range(x.shape[1])]))


def test_sort_orders_nans_as_numpy():
    v = np.array([complex(NAN, 0), complex(0, NAN), 1 + 1j, complex(NAN, NAN), 1 + 0j, complex(NAN, -1),
                  complex(-1, NAN), 1 - 1j, complex(-np.inf, 2)], np.complex64)
    got = np.asarray(jnp.sort(jnp.asarray(v)))
    np.testing.assert_array_equal(got.view(np.float32), np.sort(v).view(np.float32))
    np.testing.assert_array_equal(jnp.argsort(jnp.asarray(v)), np.argsort(v, kind="stable"))


def test_grad_is_one_hot_at_the_choice_as_jax():
    # jax.grad(lambda x: jnp.max(x).real) of this input is [0, 0, 1, 0] (recorded from JAX 0.10.2);
    # ties share the cotangent evenly, as for real inputs
    c = jnp.asarray(np.array([1 + 2j, 3 - 1j, 3 + 4j, -2 + 9j], np.complex64))
    np.testing.assert_array_equal(core.grad(lambda x: jnp.max(x).real)(c), [0, 0, 1, 0])
    np.testing.assert_array_equal(core.grad(lambda x: jnp.min(x).real)(c), [0, 0, 0, 1])
    np.testing.assert_array_equal(core.grad(lambda x: jnp.ptp(x).real)(c), [0, 0, 1, -1])
    np.testing.assert_array_equal(core.grad(lambda x: jnp.maximum(x, 2 + 0j).real.sum())(c), [0, 1, 1, 0])
    # |max| has derivative conj(max)/|max| at the chosen element (JAX's convention for C -> R)
    np.testing.assert_allclose(core.grad(lambda x: jnp.abs(jnp.max(x)))(c), [0, 0, 0.6 - 0.8j, 0], atol=1e-6)
