"""`lax.rng_bit_generator`, `lax.RandomAlgorithm` and `lax.rng_uniform`: shapes and dtypes,
determinism, uniformity (a chi-square test on 10^4 draws with a fixed key) and bits equal to jax
0.10.2's for fixed keys (recorded once from jax in its own venv; jax is never imported here)."""
import numpy as np
import pytest
import scipy.stats

import core
import core.numpy as jnp
from core import lax

KEY = np.array([0, 0, 0, 42], np.uint32)

# jax 0.10.2: lax.rng_bit_generator(jnp.array([0, 0, 0, 42], jnp.uint32), (2, 3), dtype, algorithm)
JAX_BITS = {
    ("RNG_THREE_FRY", "uint8"): ([0, 0, 3, 42], [[212, 227, 117], [237, 185, 217]]),
    ("RNG_THREE_FRY", "uint32"): ([0, 0, 3, 42], [[2814562516, 3955861731, 278695797],
                                                  [111458285, 837213625, 4053554905]]),
    ("RNG_DEFAULT", "uint32"): ([0, 0, 2, 42], [[3717705800, 533567081, 1961858947],
                                                [4049853823, 382712412, 2241883007]]),
    ("RNG_PHILOX", "uint8"): ([0, 0, 2, 42], [[72, 105, 131], [127, 92, 127]]),
}
# jax 0.10.2, eager and jitted: lax.rng_bit_generator(jnp.array([123, 456, 789, 1011], jnp.uint32), (8,),
# np.uint32, lax.RandomAlgorithm.RNG_THREE_FRY)
JAX_KEY2 = [123, 456, 789, 1011]
JAX_KEY2_OUT = ([123, 456, 793, 1011],
                [3679666634, 1490729281, 3337835910, 974726944, 2347351719, 144507520, 2539537895, 232638364])


@pytest.mark.parametrize("algorithm, dtype", sorted(JAX_BITS))
def test_bits_equal_jax_for_a_fixed_key(algorithm, dtype):
    new_key, bits = lax.rng_bit_generator(KEY, (2, 3), np.dtype(dtype), lax.RandomAlgorithm[algorithm])
    want_key, want_bits = JAX_BITS[algorithm, dtype]
    assert bits.dtype == np.dtype(dtype) and bits.shape == (2, 3)
    assert new_key.dtype == np.uint32 and new_key.shape == (4,)
    np.testing.assert_array_equal(new_key, want_key)
    np.testing.assert_array_equal(bits, want_bits)


def test_three_fry_bits_equal_jax_eager_and_jitted():
    f = lambda k: lax.rng_bit_generator(k, (8,), np.uint32, lax.RandomAlgorithm.RNG_THREE_FRY)  # noqa: E731
    for key, bits in (f(np.array(JAX_KEY2, np.uint32)), core.jit(f)(jnp.array(JAX_KEY2, jnp.uint32))):
        np.testing.assert_array_equal(key, JAX_KEY2_OUT[0])
        np.testing.assert_array_equal(bits, JAX_KEY2_OUT[1])


def test_deterministic_and_the_new_key_gives_new_bits():
    k1, b1 = lax.rng_bit_generator(KEY, (100,))
    k1b, b1b = lax.rng_bit_generator(KEY, (100,))
    np.testing.assert_array_equal(b1, b1b)
    np.testing.assert_array_equal(k1, k1b)
    _, b2 = lax.rng_bit_generator(k1, (100,))
    assert (np.asarray(b1) != np.asarray(b2)).mean() > 0.9
    # the algorithms are different generators
    _, b3 = lax.rng_bit_generator(KEY, (100,), algorithm=lax.RandomAlgorithm.RNG_THREE_FRY)
    assert (np.asarray(b1) != np.asarray(b3)).mean() > 0.9


@pytest.mark.parametrize("algorithm", list(lax.RandomAlgorithm))
def test_bits_look_uniform(algorithm):
    # chi-square on the top 4 bits and on the low byte of 10^4 uint32 draws with a fixed key: a fixed
    # outcome, far inside the 1e-4 quantile for a uniform source
    _, bits = lax.rng_bit_generator(KEY, (10_000,), np.uint32, algorithm)
    counts = np.bincount(np.asarray(bits) >> 28, minlength=16)
    assert scipy.stats.chisquare(counts).pvalue > 1e-4, counts
    counts = np.bincount(np.asarray(bits) & 0xFF, minlength=256)
    assert scipy.stats.chisquare(counts).pvalue > 1e-4, counts
    # each bit position is set about half the time (a stuck bit would pass the top-4-bits test)
    ones = ((np.asarray(bits)[:, None] >> np.arange(32, dtype=np.uint32)) & 1).mean(axis=0)
    assert np.all(np.abs(ones - 0.5) < 0.03), ones


def test_dtypes_shapes_and_errors(x64):
    key64 = np.array([7, 9], np.uint64)
    new_key, bits = lax.rng_bit_generator(key64, (3, 0, 2), np.uint64)
    assert new_key.dtype == np.uint64 and bits.shape == (3, 0, 2) and bits.dtype == np.uint64
    _, bits = lax.rng_bit_generator(KEY, (), np.uint16)
    assert bits.shape == () and bits.dtype == np.uint16
    with pytest.raises(TypeError, match=r"unsupported dtype .*int32.*uint8"):
        lax.rng_bit_generator(KEY, (2,), np.int32)
    with pytest.raises(TypeError, match=r"key must be uint32\[4\].*got int32\[4\]"):
        lax.rng_bit_generator(KEY.astype(np.int32), (2,))
    with pytest.raises(ValueError, match="unknown algorithm 7"):
        lax.rng_bit_generator(KEY, (2,), algorithm=7)


def test_uint64_bits_become_uint32_without_x64():
    _, bits = lax.rng_bit_generator(KEY, (2,), np.uint64)
    assert bits.dtype == np.uint32


def test_rng_uniform_range_dtype_and_uniformity():
    u = np.asarray(lax.rng_uniform(np.float32(-1.0), np.float32(3.0), (10_000,)))
    assert u.dtype == np.float32 and u.min() >= -1.0 and u.max() < 3.0
    assert scipy.stats.chisquare(np.histogram(u, bins=16, range=(-1, 3))[0]).pvalue > 1e-4
    i = np.asarray(lax.rng_uniform(np.int32(3), np.int32(7), (1000,)))
    assert i.dtype == np.int32 and set(i.tolist()) == {3, 4, 5, 6}
    with pytest.raises(ValueError, match="must be scalars"):
        lax.rng_uniform(np.zeros(2, np.float32), np.float32(1), (2,))
    with pytest.raises(TypeError, match="one dtype, got float32 and int32"):
        lax.rng_uniform(np.float32(0), np.int32(1), (2,))
    with pytest.raises(NotImplementedError, match="rng_uniform has no derivative"):
        core.grad(lambda a: lax.rng_uniform(a, 2.0, (3,)).sum())(1.0)
