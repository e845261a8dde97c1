"""core.random and the threefry2x32 primitive.

Oracles: the Random123 known-answer vectors; a NumPy transcription of Threefry-2x32 written from the
specification; golden values recorded from JAX (see GOLDEN below); moments, Kolmogorov-Smirnov and
chi-square tests (scipy.stats) for the distributions.
"""

import numpy as np
import pytest
import scipy.special
import scipy.stats

import core.numpy as jnp
from core import test_util as tu
from core.lax import prng as lax_prng
from core import random


# ----- threefry2x32 -------------------------------------------------------------------------

def threefry2x32_reference(k1, k2, x1, x2):
    """Threefry-2x32, 20 rounds, in NumPy uint32 arithmetic (wrapping), from the Random123
    specification: key words k1, k2 and parity k1 ^ k2 ^ 0x1BD11BDA, a key injection after
    every 4 rounds, rotations (13, 15, 26, 6) and (17, 29, 16, 24) alternating."""
    k1, k2, x1, x2 = np.broadcast_arrays(*(np.asarray(v, np.uint32) for v in (k1, k2, x1, x2)))
    with np.errstate(over="ignore"):
        ks = [k1, k2, k1 ^ k2 ^ np.uint32(0x1BD11BDA)]
        rot = [(13, 15, 26, 6), (17, 29, 16, 24)]
        x = [x1 + ks[0], x2 + ks[1]]
        for group in range(5):
            for r in rot[group % 2]:
                x[0] = x[0] + x[1]
                x[1] = (x[1] << np.uint32(r)) | (x[1] >> np.uint32(32 - r))
                x[1] = x[1] ^ x[0]
            x[0] = x[0] + ks[(group + 1) % 3]
            x[1] = x[1] + ks[(group + 2) % 3] + np.uint32(group + 1)
    return x[0], x[1]


# Random123's kat_vectors for threefry2x32 with 20 rounds: (counter, key) -> output.
KAT = [
    ((0x00000000, 0x00000000), (0x00000000, 0x00000000), (0x6B200159, 0x99BA4EFE)),
    ((0xFFFFFFFF, 0xFFFFFFFF), (0xFFFFFFFF, 0xFFFFFFFF), (0x1CB996FC, 0xBB002BE7)),
    ((0x243F6A88, 0x85A308D3), (0x13198A2E, 0x03707344), (0xC4923A9C, 0x483DF7A0)),
]


@pytest.mark.parametrize("ctr,key,expected", KAT)
def test_threefry_known_answers(ctr, key, expected):
    u = np.uint32
    y1, y2 = lax_prng.threefry2x32(u(key[0]), u(key[1]), u(ctr[0]), u(ctr[1]))
    assert y1.dtype == np.uint32 and y1.shape == ()
    assert (int(y1), int(y2)) == expected
    assert tuple(int(v) for v in threefry2x32_reference(key[0], key[1], ctr[0], ctr[1])) == expected


@pytest.mark.parametrize("kshape,xshape", [((), (7,)), ((), ()), ((1, 3), (2, 3)), ((), (0,)), ((4,), (4,))])
def test_threefry_matches_reference(rng, kshape, xshape):
    k1, k2 = (rng.integers(0, 2**32, size=kshape, dtype=np.uint32) for _ in range(2))
    x1, x2 = (rng.integers(0, 2**32, size=xshape, dtype=np.uint32) for _ in range(2))
    y1, y2 = lax_prng.threefry2x32(k1, k2, x1, x2)
    e1, e2 = threefry2x32_reference(k1, k2, x1, x2)
    assert y1.shape == e1.shape and y2.shape == e2.shape
    np.testing.assert_array_equal(np.asarray(y1), e1)
    np.testing.assert_array_equal(np.asarray(y2), e2)


def test_threefry_errors():
    u = np.uint32(1)
    with pytest.raises(TypeError,
                       match=r"threefry2x32 requires uint32 arguments, got dtypes \['u32', 'u32', 'i32', 'u32'\]"):
        lax_prng.threefry2x32(u, u, np.int32(1), u)
    with pytest.raises(TypeError,
                       match=r"threefry2x32 got incompatible shapes for broadcasting: \(\), \(\), \(3,\), \(4,\)"):
        lax_prng.threefry2x32(u, u, np.ones(3, np.uint32), np.ones(4, np.uint32))



def test_mul_add_rounds_once(rng):
    # Inside one program XLA fuses x * y + z into a fused multiply-add on this backend (the reason
    # the primitive exists: JAX's jitted samplers round once); float64 gives the exact product.
    x, y, z = (rng.uniform(-3, 3, size=(64,)).astype(np.float32) for _ in range(3))
    out = np.asarray(lax_prng.mul_add(jnp.asarray(x), jnp.asarray(y), jnp.asarray(z)))
    fused = (x.astype(np.float64) * y + z).astype(np.float32)
    np.testing.assert_array_equal(out, fused)
    assert not np.array_equal(fused, x * y + z)  # the two roundings differ somewhere in 64 draws
    with pytest.raises(TypeError, match=r"mul_add does not accept dtype i32.*floating"):
        lax_prng.mul_add(np.int32(1), np.int32(2), np.int32(3))

# ----- golden values from JAX ---------------------------------------------------------------
# Recorded with jax 0.10.2 / jaxlib 0.10.2 (CPU) in a separate process (bench/.venv-jax), with
# jax.config.update('jax_threefry_partitionable', False) and the default PRNG impl threefry2x32,
# by calling the same jax.random function with the same arguments on raw uint32 keys
# (K = jax.random.PRNGKey(42)) and printing `.tolist()` (floats print exactly, as float64).
# Changing any of these numbers changes every user's random streams: note it in the changelog.

K = random.PRNGKey(42)
X = jnp.array(np.arange(12, dtype=np.int32).reshape(3, 4))
LOGITS = jnp.array([[0.1, 1.0, -0.5, 2.0], [0.0, 0.0, 0.0, 0.0]])
P = jnp.array([0.1, 0.2, 0.3, 0.25, 0.15])

GOLDEN = [
    pytest.param(lambda: random.PRNGKey(0),
                 [0, 0],
                 id='PRNGKey(0)'),
    pytest.param(lambda: random.PRNGKey(42),
                 [0, 42],
                 id='PRNGKey(42)'),
    pytest.param(lambda: random.PRNGKey(-1),
                 [0, 4294967295],
                 id='PRNGKey(-1)'),
    pytest.param(lambda: random.PRNGKey(2**31 + 5),
                 [0, 2147483653],
                 id='PRNGKey(2**31 + 5)'),
    pytest.param(lambda: random.PRNGKey(2**40 + 5),
                 [0, 5],
                 id='PRNGKey(2**40 + 5)'),
    pytest.param(lambda: random.PRNGKey(-2**40 - 3),
                 [0, 4294967293],
                 id='PRNGKey(-2**40 - 3)'),
    pytest.param(lambda: random.PRNGKey(np.uint32(4000000000)),
                 [0, 4000000000],
                 id='PRNGKey(np.uint32(4000000000))'),
    pytest.param(lambda: random.PRNGKey(np.int8(-3)),
                 [0, 4294967293],
                 id='PRNGKey(np.int8(-3))'),
    pytest.param(lambda: random.split(K),
                 [[2465931498, 3679230171], [255383827, 267815257]],
                 id='split(K)'),
    pytest.param(lambda: random.split(K, 3),
                 [[3134548294, 3733159049], [3746501087, 894150801], [801545058, 2363201431]],
                 id='split(K, 3)'),
    pytest.param(lambda: random.split(K, (2, 2)),
                 [[[2954079971, 2575172198], [1139032965, 1035738655]], [[3276725750, 1223413151], [173471767, 13772463]]],
                 id='split(K, (2, 2))'),
    pytest.param(lambda: random.fold_in(K, 7),
                 [2547012911, 1371500959],
                 id='fold_in(K, 7)'),
    pytest.param(lambda: random.fold_in(K, 2**31 + 3),
                 [1418384349, 3440491138],
                 id='fold_in(K, 2**31 + 3)'),
    pytest.param(lambda: random.fold_in(K, jnp.asarray(np.int32(-2))),
                 [3657962506, 3078979168],
                 id='fold_in(K, jnp.asarray(np.int32(-2)))'),
    pytest.param(lambda: random.bits(K, (5,)),
                 [3134548294, 3733159049, 843694964, 894150801, 801545058],
                 id='bits(K, (5,))'),
    pytest.param(lambda: random.bits(K, (2, 3)),
                 [[3134548294, 3733159049, 3746501087], [894150801, 801545058, 2363201431]],
                 id='bits(K, (2, 3))'),
    pytest.param(lambda: random.bits(K),
                 1832780943,
                 id='bits(K)'),
    pytest.param(lambda: random.bits(K, (5,), jnp.uint8),
                 [45, 179, 215, 3, 244],
                 id='bits(K, (5,), jnp.uint8)'),
    pytest.param(lambda: random.bits(K, (3,), jnp.uint16),
                 [45869, 983, 33780],
                 id='bits(K, (3,), jnp.uint16)'),
    pytest.param(lambda: random.bits(K, (0,)),
                 [],
                 id='bits(K, (0,))'),
    pytest.param(lambda: random.uniform(K, (5,)),
                 [0.7298188209533691, 0.8691937923431396, 0.19643795490264893, 0.20818567276000977, 0.1866241693496704],
                 id='uniform(K, (5,))'),
    pytest.param(lambda: random.uniform(K, (4,), jnp.float16),
                 [0.69921875, 0.0146484375, 0.5146484375, 0.6787109375],
                 id='uniform(K, (4,), jnp.float16)'),
    pytest.param(lambda: random.uniform(K, (4,), jnp.bfloat16),
                 [0.5546875, 0.015625, 0.2421875, 0.421875],
                 id='uniform(K, (4,), jnp.bfloat16)'),
    pytest.param(lambda: random.uniform(K, (2, 3), minval=-2.0, maxval=jnp.array([1.0, 2.0, 3.0])),
                 [[0.18945646286010742, 1.4767751693725586, 2.3615007400512695], [-1.3754429817199707, -1.2535033226013184, 0.751128077507019]],
                 id='uniform(K, (2, 3), minval=-2.0, maxval=jnp.array([1.0, 2.0, 3.0]))'),
    pytest.param(lambda: random.normal(K, (5,)),
                 [0.6122652292251587, 1.1225882768630981, -0.8544133901596069, -0.8127325177192688, -0.890404999256134],
                 id='normal(K, (5,))'),
    pytest.param(lambda: random.normal(K, (3,), jnp.float16),
                 [0.5224609375, -2.171875, 0.037322998046875],
                 id='normal(K, (3,), jnp.float16)'),
    pytest.param(lambda: random.randint(K, (6,), 0, 10),
                 [2, 3, 9, 9, 4, 6],
                 id='randint(K, (6,), 0, 10)'),
    pytest.param(lambda: random.randint(K, (6,), -5, 3, jnp.int8),
                 [-1, -2, 0, -4, -5, -3],
                 id='randint(K, (6,), -5, 3, jnp.int8)'),
    pytest.param(lambda: random.randint(K, (4,), 0, 256, jnp.uint8),
                 [219, 50, 65, 177],
                 id='randint(K, (4,), 0, 256, jnp.uint8)'),
    pytest.param(lambda: random.randint(K, (3,), jnp.array([0, 10, 100]), jnp.array([5, 20, 1000])),
                 [0, 18, 737],
                 id='randint(K, (3,), jnp.array([0, 10, 100]), jnp.array([5, 20, 1000]))'),
    pytest.param(lambda: random.bernoulli(K, 0.3, (8,)),
                 [False, False, True, True, False, True, True, True],
                 id='bernoulli(K, 0.3, (8,))'),
    pytest.param(lambda: random.bernoulli(K, jnp.array([0.1, 0.5, 0.9])),
                 [False, True, True],
                 id='bernoulli(K, jnp.array([0.1, 0.5, 0.9]))'),
    pytest.param(lambda: random.categorical(K, LOGITS),
                 [1, 0],
                 id='categorical(K, LOGITS)'),
    pytest.param(lambda: random.categorical(K, LOGITS, axis=0),
                 [1, 0, 0, 0],
                 id='categorical(K, LOGITS, axis=0)'),
    pytest.param(lambda: random.categorical(K, LOGITS, shape=(3, 2)),
                 [[2, 3], [3, 3], [3, 2]],
                 id='categorical(K, LOGITS, shape=(3, 2))'),
    pytest.param(lambda: random.gumbel(K, (5,)),
                 [1.1553128957748413, 1.964762568473816, -0.48698896169662476, -0.4506455659866333, -0.5179949402809143],
                 id='gumbel(K, (5,))'),
    pytest.param(lambda: random.exponential(K, (5,)),
                 [1.3086625337600708, 2.0340383052825928, 0.21870088577270508, 0.23342834413051605, 0.20656199753284454],
                 id='exponential(K, (5,))'),
    pytest.param(lambda: random.laplace(K, (5,)),
                 [-0.6155154705047607, -1.3408914804458618, 0.9342613220214844, 0.8761776089668274, 0.9855111241340637],
                 id='laplace(K, (5,))'),
    pytest.param(lambda: random.logistic(K, (5,)),
                 [0.9937036037445068, 1.8938491344451904, -1.4087077379226685, -1.335896611213684, -1.4720964431762695],
                 id='logistic(K, (5,))'),
    pytest.param(lambda: random.cauchy(K, (4,)),
                 [0.23723779618740082, 2.068115711212158, -5.2908220291137695, -5.039283275604248],
                 id='cauchy(K, (4,))'),
    pytest.param(lambda: random.truncated_normal(K, -1.0, 2.0, (5,)),
                 [0.6937515735626221, 1.1272072792053223, -0.46921414136886597, -0.44246906042099, -0.49181583523750305],
                 id='truncated_normal(K, -1.0, 2.0, (5,))'),
    pytest.param(lambda: random.permutation(K, 10),
                 [9, 0, 2, 6, 1, 4, 5, 8, 3, 7],
                 id='permutation(K, 10)'),
    pytest.param(lambda: random.permutation(K, X),
                 [[8, 9, 10, 11], [0, 1, 2, 3], [4, 5, 6, 7]],
                 id='permutation(K, X)'),
    pytest.param(lambda: random.permutation(K, X, axis=1),
                 [[2, 0, 1, 3], [6, 4, 5, 7], [10, 8, 9, 11]],
                 id='permutation(K, X, axis=1)'),
    pytest.param(lambda: random.permutation(K, X, axis=1, independent=True),
                 [[0, 2, 3, 1], [4, 7, 6, 5], [11, 10, 8, 9]],
                 id='permutation(K, X, axis=1, independent=True)'),
    pytest.param(lambda: random.choice(K, 10, (4,)),
                 [5, 4, 7, 3],
                 id='choice(K, 10, (4,))'),
    pytest.param(lambda: random.choice(K, 10, (4,), replace=False),
                 [9, 0, 2, 6],
                 id='choice(K, 10, (4,), replace=False)'),
    pytest.param(lambda: random.choice(K, X, (2,), axis=1),
                 [[2, 1], [6, 5], [10, 9]],
                 id='choice(K, X, (2,), axis=1)'),
    pytest.param(lambda: random.choice(K, 5, (6,), p=P),
                 [1, 1, 1, 3, 3, 2],
                 id='choice(K, 5, (6,), p=P)'),
    pytest.param(lambda: random.choice(K, 5, (3,), replace=False, p=P),
                 [1, 0, 2],
                 id='choice(K, 5, (3,), replace=False, p=P)'),
    pytest.param(lambda: random.rademacher(K, (6,)),
                 [-1, -1, -1, 1, 1, -1],
                 id='rademacher(K, (6,))'),
    pytest.param(lambda: random.normal(K, (3,), jnp.complex64),
                 [(0.44781118631362915-0.40131857991218567j), (0.6795947551727295+0.20109540224075317j), (0.9634871482849121-0.6590664982795715j)],
                 id='normal(K, (3,), jnp.complex64)'),
]

GOLDEN_X64 = [
    pytest.param(lambda: random.PRNGKey(-1),
                 [4294967295, 4294967295],
                 id='PRNGKey(-1)'),
    pytest.param(lambda: random.PRNGKey(2**40 + 5),
                 [256, 5],
                 id='PRNGKey(2**40 + 5)'),
    pytest.param(lambda: random.PRNGKey(-2**40 - 3),
                 [4294967039, 4294967293],
                 id='PRNGKey(-2**40 - 3)'),
    pytest.param(lambda: random.bits(K, (3,)),
                 [13462782411356743825, 16033796027023006562, 16091099645456652183],
                 id='bits(K, (3,))'),
    pytest.param(lambda: random.bits(K, (3,), jnp.uint32),
                 [2465931498, 430176367, 255383827],
                 id='bits(K, (3,), jnp.uint32)'),
    pytest.param(lambda: random.uniform(K, (3,)),
                 [0.7298188969046309, 0.8691938242843895, 0.8723002596642415],
                 id='uniform(K, (3,))'),
    pytest.param(lambda: random.normal(K, (3,)),
                 [0.6122653570510959, 1.1225883830713081, 1.1373320995160152],
                 id='normal(K, (3,))'),
    pytest.param(lambda: random.randint(K, (4,), 0, 10),
                 [5, 3, 9, 7],
                 id='randint(K, (4,), 0, 10)'),
]

@pytest.mark.parametrize("fn,expected", GOLDEN)
def test_golden_values_match_jax(fn, expected):
    out = np.asarray(fn())
    expected = np.asarray(expected, dtype=out.dtype)
    assert out.shape == expected.shape
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("fn,expected", GOLDEN_X64)
def test_golden_values_match_jax_x64(x64, fn, expected):
    out = np.asarray(fn())
    np.testing.assert_array_equal(out, np.asarray(expected, dtype=out.dtype))


def test_result_dtypes():
    assert random.PRNGKey(0).dtype == np.uint32 and random.PRNGKey(0).shape == (2,)
    assert random.bits(K, (5,)).dtype == np.uint32
    assert random.uniform(K, (5,)).dtype == np.float32
    assert random.uniform(K, (4,), jnp.bfloat16).dtype == jnp.bfloat16
    assert random.normal(K, (5,)).dtype == np.float32
    assert random.randint(K, (6,), 0, 5).dtype == np.int32
    assert random.randint(K, (4,), 0, 5, jnp.uint8).dtype == np.uint8
    assert random.bernoulli(K, 0.5, (8,)).dtype == np.bool_
    assert random.categorical(K, LOGITS).dtype == np.int32
    assert random.permutation(K, 10).dtype == np.int32
    assert random.split(K, 3).shape == (3, 2)
    assert random.uniform(K, (0, 3)).shape == (0, 3)
    assert random.normal(K).shape == ()


def test_x64_dtypes(x64):
    assert random.uniform(random.PRNGKey(0), (2,)).dtype == np.float64
    assert random.bits(random.PRNGKey(0), (2,)).dtype == np.uint64
    assert random.randint(random.PRNGKey(0), (2,), 0, 5).dtype == np.int64
    np.testing.assert_array_equal(np.asarray(random.PRNGKey(np.uint64(2**63 + 7))), [2**31, 7])


# ----- keys -------------------------------------------------------------------------------------

def test_keys_are_reproducible_and_distinct():
    np.testing.assert_array_equal(np.asarray(random.normal(K, (4,))), np.asarray(random.normal(K, (4,))))
    k1, k2 = random.split(K)
    draws = [np.asarray(random.uniform(k, (8,))) for k in (K, k1, k2, random.fold_in(K, 1), random.fold_in(K, 2))]
    for i in range(len(draws)):
        for j in range(i):
            assert not np.array_equal(draws[i], draws[j]), (i, j)
    keys = np.asarray(random.split(K, 64))
    assert len({tuple(k) for k in keys}) == 64


def test_key_data_and_wrap_key_data():
    np.testing.assert_array_equal(np.asarray(random.key_data(random.key(3))), [0, 3])
    keys = random.wrap_key_data(jnp.array(np.arange(6, dtype=np.uint32).reshape(3, 2)))
    assert keys.shape == (3,) and str(keys.dtype) == "key<fry>"  # typed keys over uint32[3, 2]
    np.testing.assert_array_equal(np.asarray(random.key_data(keys)), np.arange(6).reshape(3, 2))
    np.testing.assert_array_equal(np.asarray(random.uniform(random.wrap_key_data(np.array([0, 42], np.uint32)))),
                                  np.asarray(random.uniform(K)))


def test_seed_from_device_array_matches_python_int():
    for seed in (0, 7, -5, 2**31 - 1):
        np.testing.assert_array_equal(np.asarray(random.PRNGKey(jnp.asarray(np.int32(seed)))),
                                      np.asarray(random.PRNGKey(seed)))


def test_key_errors():
    with pytest.raises(TypeError,
                       match=r"uniform: expected a PRNG key, random.key\(seed\) or a uint32 array of shape \(2,\).*float32 and shape \(2,\)"):
        random.uniform(jnp.zeros(2))
    with pytest.raises(TypeError, match=r"normal: expected a PRNG key.*shape \(3,\)"):
        random.normal(jnp.zeros(3, jnp.uint32))
    with pytest.raises(TypeError, match=r"split: expected a PRNG key.*got list"):
        random.split([0, 1])
    with pytest.raises(ValueError, match=r"bits accepts a single key, but was given a key array of shape \(3,\)"):
        random.bits(random.split(K, 3))
    with pytest.raises(TypeError, match=r"PRNGKey seed must be an integer"):
        random.PRNGKey(1.5)
    with pytest.raises(TypeError, match=r"PRNGKey accepts a scalar seed, but was given an array of shape \(2,\)"):
        random.PRNGKey(np.array([1, 2]))
    with pytest.raises(OverflowError):
        random.PRNGKey(2**64)
    with pytest.raises(OverflowError, match="fold_in"):
        random.fold_in(K, -1)
    with pytest.raises(TypeError, match=r"fold_in accepts a scalar"):
        random.fold_in(K, jnp.array([1, 2]))


def test_argument_errors():
    with pytest.raises(TypeError, match=r"uniform: shape must be a tuple of ints, got 3"):
        random.uniform(K, 3)
    with pytest.raises(ValueError, match=r"dtype argument to `uniform` must be a float dtype, got int32"):
        random.uniform(K, (2,), jnp.int32)
    with pytest.raises(ValueError, match=r"dtype argument to `bits` must be an unsigned int dtype"):
        random.bits(K, (2,), jnp.int32)
    with pytest.raises(TypeError, match=r"randint only accepts integer dtypes"):
        random.randint(K, (2,), 0, 3, jnp.float32)
    with pytest.raises(ValueError, match=r"randint parameter shapes must be broadcast-compatible.*\(3,\)"):
        random.randint(K, (2,), jnp.zeros(3, jnp.int32), 5)
    with pytest.raises(ValueError, match=r"Cannot take a larger sample \(size 4\) than population \(size 3\)"):
        random.choice(K, 3, (4,), replace=False)
    with pytest.raises(ValueError, match=r"p must be None or a 1D vector"):
        random.choice(K, 3, (2,), p=jnp.ones(4))
    with pytest.raises(TypeError, match=r"bernoulli probability `p` must have a floating dtype"):
        random.bernoulli(K, jnp.array([1]))
    with pytest.raises(ValueError, match=r"Number of samples without replacement \(5\) cannot exceed"):
        random.categorical(K, jnp.zeros(3), shape=(5,), replace=False)
    with pytest.raises(ValueError, match=r"method must be one of"):
        random.multivariate_normal(K, jnp.zeros(2), jnp.ones((2, 2)), method="lu")


def test_bits_8_and_16_are_little_endian_pieces_of_words():
    words = np.asarray(random.bits(K, (2,)), dtype=np.uint32)  # two 32-bit words of counters 0, 1
    np.testing.assert_array_equal(np.asarray(random.bits(K, (8,), jnp.uint8)), words.view(np.uint8))
    np.testing.assert_array_equal(np.asarray(random.bits(K, (4,), jnp.uint16)), words.view(np.uint16))


# ----- permutations -----------------------------------------------------------------------------

@pytest.mark.parametrize("n", [1, 7, 2000])
def test_permutation_is_a_permutation(n):
    # n = 2000 needs two rounds of sorting (JAX's collision rule)
    out = np.asarray(random.permutation(random.PRNGKey(n), n))
    np.testing.assert_array_equal(np.sort(out), np.arange(n))
    if n > 1:
        assert not np.array_equal(out, np.arange(n))


def test_permutation_of_rows_and_independent():
    x = np.arange(24, dtype=np.float32).reshape(4, 6)
    rows = np.asarray(random.permutation(K, jnp.asarray(x)))
    np.testing.assert_array_equal(np.sort(rows[:, 0]), x[:, 0])
    np.testing.assert_array_equal(rows - rows[:, :1], x - x[:, :1])  # rows move whole
    cols = np.asarray(random.permutation(K, jnp.asarray(x), axis=1, independent=True))
    np.testing.assert_array_equal(np.sort(cols, axis=1), x)
    perms = {tuple(np.argsort(r)) for r in cols}
    assert len(perms) > 1  # each row gets its own shuffle
    with pytest.warns(DeprecationWarning):
        shuffled = random.shuffle(K, jnp.asarray(x), axis=1)
    np.testing.assert_array_equal(np.asarray(shuffled), cols)


def test_choice_without_replacement_is_distinct():
    out = np.asarray(random.choice(K, 50, (20,), replace=False))
    assert len(set(out.tolist())) == 20 and out.min() >= 0 and out.max() < 50
    out = np.asarray(random.choice(K, 6, (6,), replace=False, p=jnp.array([0.3, 0.1, 0.1, 0.2, 0.2, 0.1])))
    np.testing.assert_array_equal(np.sort(out), np.arange(6))
    assert random.choice(K, 5, (0,)).shape == (0,)


# ----- distributions: moments and Kolmogorov-Smirnov ------------------------------------------------

N = 20000


def _check_moments(samples, dist, name):
    """Sample mean and variance within 5 standard errors of `dist`'s (a frozen scipy.stats law)."""
    mean, var, kurt = (float(v) for v in dist.stats(moments="mvk"))
    n = samples.size
    se_mean = np.sqrt(var / n)
    se_var = np.sqrt(var**2 * (kurt + 2) / n)
    assert abs(samples.mean() - mean) < 5 * se_mean, f"{name}: mean {samples.mean()} vs {mean}"
    assert abs(samples.var() - var) < 5 * se_var, f"{name}: variance {samples.var()} vs {var}"


def _check_ks(samples, dist, name):
    p = scipy.stats.kstest(samples, dist.cdf).pvalue
    assert p > 1e-3, f"{name}: Kolmogorov-Smirnov p-value {p}"


def _dirichlet_first(key):
    x = np.asarray(random.dirichlet(key, jnp.array([2.0, 1.0, 3.0]), (N,)))
    assert x.shape == (N, 3) and (x >= 0).all()
    np.testing.assert_allclose(x.sum(-1), 1.0, rtol=1e-5)
    return x[:, 0]


def _beta_marginal(alpha):
    return scipy.stats.beta(alpha[0], sum(alpha) - alpha[0])


CONTINUOUS = [
    ("uniform", lambda k: random.uniform(k, (N,)), scipy.stats.uniform(), True),
    ("uniform_range", lambda k: random.uniform(k, (N,), minval=-2.0, maxval=3.0), scipy.stats.uniform(-2, 5), True),
    ("uniform_bf16", lambda k: random.uniform(k, (N,), jnp.bfloat16), None, False),
    ("normal", lambda k: random.normal(k, (N,)), scipy.stats.norm(), True),
    ("truncated_normal", lambda k: random.truncated_normal(k, -1.0, 2.0, (N,)), scipy.stats.truncnorm(-1, 2), True),
    ("gumbel", lambda k: random.gumbel(k, (N,)), scipy.stats.gumbel_r(), True),
    ("gumbel_high", lambda k: random.gumbel(k, (N,), mode="high"), scipy.stats.gumbel_r(), True),
    ("exponential", lambda k: random.exponential(k, (N,)), scipy.stats.expon(), True),
    ("laplace", lambda k: random.laplace(k, (N,)), scipy.stats.laplace(), True),
    ("logistic", lambda k: random.logistic(k, (N,)), scipy.stats.logistic(), True),
    ("cauchy", lambda k: random.cauchy(k, (N,)), scipy.stats.cauchy(), False),
    ("gamma_3", lambda k: random.gamma(k, 3.0, (N,)), scipy.stats.gamma(3.0), True),
    ("gamma_0.3", lambda k: random.gamma(k, 0.3, (N,)), scipy.stats.gamma(0.3), True),
    ("loggamma_0.5", lambda k: jnp.exp(random.loggamma(k, 0.5, (N,))), scipy.stats.gamma(0.5), True),
    ("beta_2_5", lambda k: random.beta(k, 2.0, 5.0, (N,)), scipy.stats.beta(2, 5), True),
    ("beta_0.5_0.5", lambda k: random.beta(k, 0.5, 0.5, (N,)), scipy.stats.beta(0.5, 0.5), True),
    ("dirichlet", lambda k: _dirichlet_first(k), _beta_marginal([2.0, 1.0, 3.0]), True),
]


@pytest.mark.parametrize("name,sample,dist,moments", CONTINUOUS, ids=[c[0] for c in CONTINUOUS])
def test_continuous_distribution(name, sample, dist, moments):
    x = np.asarray(sample(random.PRNGKey(tu.seed_for(name))), dtype=np.float64)
    assert x.shape == (N,) and np.isfinite(x).all()
    if dist is None:  # bfloat16 uniform: 128 equally likely values k / 128
        counts = np.bincount(np.round(x * 128).astype(int), minlength=128)
        _check_chi2(counts, np.full(128, N / 128))
        return
    if moments:
        _check_moments(x, dist, name)
    _check_ks(x, dist, name)


def test_truncated_normal_stays_inside_bounds():
    x = np.asarray(random.truncated_normal(K, jnp.array([-0.5, 3.0]), jnp.array([0.5, 3.5]), (N // 4, 2)))
    assert (x[:, 0] > -0.5).all() and (x[:, 0] < 0.5).all() and (x[:, 1] > 3.0).all() and (x[:, 1] < 3.5).all()


def test_gamma_broadcasts_parameters_and_small_alpha():
    a = np.tile(np.array([0.01, 1.0, 10.0, 0.5], np.float32), N // 4)  # (N,): reuses compiled shapes
    x = np.asarray(random.gamma(random.PRNGKey(1), jnp.asarray(a), (N,))).reshape(-1, 4)
    assert (x >= 0).all()
    np.testing.assert_allclose(x.mean(0), [0.01, 1.0, 10.0, 0.5], rtol=0.1)
    assert np.isfinite(np.asarray(random.loggamma(random.PRNGKey(2), 1e-4, (N,)))).all()


def test_gamma_fallback_when_every_proposal_is_rejected(monkeypatch):
    # With one proposal per sample about 2% of Gamma(3) samples are rejected; they take the
    # documented fallback a - 1/3, and the rest stay Gamma(3)-distributed.
    monkeypatch.setattr(random, "_GAMMA_PROPOSALS", 1)
    x = np.asarray(random.gamma(random.PRNGKey(3), 3.0, (N,)), dtype=np.float64)
    fallback = np.isclose(x, 3.0 - 1.0 / 3.0, rtol=1e-6)
    assert 0.005 < fallback.mean() < 0.05
    assert scipy.stats.kstest(x[~fallback], scipy.stats.gamma(3.0).cdf).pvalue > 1e-3


def test_normal_complex_moments():
    z = np.asarray(random.normal(random.PRNGKey(5), (N,), jnp.complex64))
    assert z.dtype == np.complex64
    for part in (z.real, z.imag):
        _check_moments(part.astype(np.float64), scipy.stats.norm(scale=np.sqrt(0.5)), "complex normal")


@pytest.mark.skipif(not hasattr(getattr(jnp, "linalg", None), "cholesky"), reason="core.numpy.linalg not available yet")
@pytest.mark.parametrize("method", ["cholesky", "svd", "eigh"])
def test_multivariate_normal(method):
    mean = np.array([1.0, -2.0], np.float32)
    cov = np.array([[2.0, 0.6], [0.6, 1.0]], np.float32)
    x = np.asarray(random.multivariate_normal(random.PRNGKey(6), mean, cov, (N,), method=method), np.float64)
    assert x.shape == (N, 2)
    np.testing.assert_allclose(x.mean(0), mean, atol=5 * np.sqrt(2.0 / N))
    np.testing.assert_allclose(np.cov(x.T), cov, atol=0.06)


@pytest.mark.skipif(not hasattr(getattr(jnp, "linalg", None), "qr"), reason="core.numpy.linalg not available yet")
@pytest.mark.parametrize("n,m", [(3, 3), (2, 4), (4, 2)])
def test_orthogonal(n, m):
    q = np.asarray(random.orthogonal(K, n, m=m), np.float64)
    assert q.shape == (n, m)
    gram = q @ q.T if n <= m else q.T @ q
    np.testing.assert_allclose(gram, np.eye(min(n, m)), atol=1e-5)


# ----- discrete distributions: chi-square -----------------------------------------------------

def _check_chi2(counts, expected):
    counts, expected = np.asarray(counts, np.float64), np.asarray(expected, np.float64)
    assert counts.sum() == pytest.approx(expected.sum())
    stat = ((counts - expected) ** 2 / expected).sum()
    p = scipy.special.chdtrc(len(counts) - 1, stat)  # scipy.stats.chisquare by hand
    assert p > 1e-3, f"chi-square p-value {p}: counts {counts} vs expected {expected}"


def test_randint_chi2():
    x = np.asarray(random.randint(random.PRNGKey(11), (N,), -3, 4))
    assert x.min() >= -3 and x.max() <= 3
    _check_chi2(np.bincount(x + 3, minlength=7), np.full(7, N / 7))


def test_randint_edges():
    x = np.asarray(random.randint(random.PRNGKey(12), (N,), 0, 256, jnp.uint8))
    _check_chi2(np.bincount(x, minlength=256), np.full(256, N / 256))
    np.testing.assert_array_equal(np.asarray(random.randint(K, (5,), 4, 2)), 4)  # maxval <= minval gives minval
    big = np.asarray(random.randint(K, (1000,), -2**31, 2**31 - 1))
    assert big.min() < -2**30 and big.max() > 2**30


def test_bernoulli_chi2():
    x = np.asarray(random.bernoulli(random.PRNGKey(13), 0.3, (N,)))
    _check_chi2([(~x).sum(), x.sum()], [0.7 * N, 0.3 * N])
    x = np.asarray(random.bernoulli(random.PRNGKey(14), 0.3, (N,), mode="high"))
    _check_chi2([(~x).sum(), x.sum()], [0.7 * N, 0.3 * N])
    rad = np.asarray(random.rademacher(random.PRNGKey(15), (N,)))
    assert set(np.unique(rad).tolist()) == {-1, 1}
    _check_chi2([(rad == -1).sum(), (rad == 1).sum()], [N / 2, N / 2])


def test_categorical_chi2():
    probs = np.array([0.1, 0.2, 0.3, 0.4])
    x = np.asarray(random.categorical(random.PRNGKey(16), jnp.asarray(np.log(probs).astype(np.float32)), shape=(N,)))
    _check_chi2(np.bincount(x, minlength=4), probs * N)
    # along axis 0 with a batch of two distributions
    logits = np.log(np.stack([probs, probs[::-1]], axis=1)).astype(np.float32)  # (4, 2)
    y = np.asarray(random.categorical(random.PRNGKey(17), jnp.asarray(logits), axis=0, shape=(N // 2, 2)))
    _check_chi2(np.bincount(y[:, 1], minlength=4), probs[::-1] * N / 2)


def test_categorical_without_replacement_is_distinct():
    out = np.asarray(random.categorical(K, jnp.zeros((2, 6)), shape=(6, 2), replace=False))
    assert out.shape == (6, 2)
    for col in out.T:
        np.testing.assert_array_equal(np.sort(col), np.arange(6))


def test_choice_with_p_chi2():
    probs = np.array([0.05, 0.25, 0.3, 0.4], np.float32)
    x = np.asarray(random.choice(random.PRNGKey(18), 4, (N,), p=jnp.asarray(probs)))
    _check_chi2(np.bincount(x, minlength=4), probs.astype(np.float64) * N)
    y = np.asarray(random.choice(random.PRNGKey(19), 4, (N,)))
    _check_chi2(np.bincount(y, minlength=4), np.full(4, N / 4))
