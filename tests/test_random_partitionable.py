"""The `threefry_partitionable` option: core.random's values under both of JAX's counter schemes.

Oracle: jax 0.10.2's values (its default is jax_threefry_partitionable=True), recorded once with
bench/.venv-jax for each setting of `jax_threefry_partitionable`, for key PRNGKey(0). The recorded
literals are compared bit for bit (floats through their uint32 bit patterns).
"""
import os
import subprocess
import sys

import numpy as np
import pytest

import core
import core.numpy as jnp
from core import random

# jax.random.<call> with jax_threefry_partitionable = False (jax's classic scheme, our default) ...
CLASSIC = {
    "normal_bits": [1072199044, 3203865186, 1051592177],  # normal(k, (3,)).view(uint32)
    "uniform_bits": [[1058214518, 1036789808, 1061024122], [1063577822, 1058584726, 1055396000]],  # (2, 3)
    "randint": [68, 21, 73, 8, 78],  # randint(k, (5,), 0, 100)
    "bits": [[2467461003, 428148500, 3186719485], [3840466878, 2562233961, 1946702221]],  # bits(k, (2, 3))
    "bits8": [143, 35, 95, 55, 29],  # bits(k, (5,), uint8)
    "bits16": [9103, 14175, 5405],  # bits(k, (3,), uint16)
    "bits64": [10597664315880824766, 1838883807893689961, 13686855971547664781],  # x64, bits(k, (3,), uint64)
    "chain_k1": [4146024105, 967050713],  # k1, k2 = split(k)
    "chain_k3": [3933439148, 592356596],  # k3 = fold_in(k2, 7)
    "chain_split3": [[1947578110, 2474436398], [1096880300, 3313800996], [1357113092, 2274918006]],  # split(k3, 3)
    "split3": [[2467461003, 428148500], [3186719485, 3840466878], [2562233961, 1946702221]],
    "split23": [[[3792494674, 582972539], [2883479965, 3114868201], [1492792183, 3245818218]],
                [[2909014575, 82862454], [1782947029, 692041252], [1067690106, 2610540821]]],
    "perm": [1, 0, 2, 5, 4, 3],  # permutation(k, 6)
}
# ... and with jax_threefry_partitionable = True (jax 0.10.2's default).
PARTITIONABLE = {
    "normal_bits": [1070576317, 1073847792, 3202220055],
    "uniform_bits": [[1064475214, 1064993846, 1051337244], [1055913296, 1058137146, 1042905504]],
    "randint": [89, 0, 12, 73, 71],
    "bits": [[4070199207, 4202968722, 1427181096], [2012915765, 2447653815, 710830403]],
    "bits8": [167, 146, 40, 53, 183],
    "bits16": [20391, 13970, 3624],
    "bits64": [7719171245655871230, 3989946895414531357, 17807037942121513089],
    "chain_k1": [1797259609, 2579123966],
    "chain_k3": [3820244711, 2120015096],
    "chain_split3": [[4228094792, 4289384040], [1177162061, 3178106805], [3648821424, 1619713787]],
    "split3": [[1797259609, 2579123966], [928981903, 3453687069], [4146024105, 2718843009]],
    "split23": [[[1797259609, 2579123966], [928981903, 3453687069], [4146024105, 2718843009]],
                [[2467461003, 3840466878], [2285895361, 433833334], [1524306142, 1887795613]]],
    "perm": [0, 1, 5, 4, 3, 2],
}
# jax.random.normal(k, (3,)) as printed floats, for reading (the bits above are what is compared).
NORMAL_FLOATS = {False: [1.8160862922668457, -0.4826231598854065, 0.3398890793323517],
                 True: [1.622642159461975, 2.0252647399902344, -0.4335944354534149]}


@pytest.fixture(params=[False, True], ids=["classic", "partitionable"])
def scheme(request):
    """Run the test under each setting; yields (setting, jax's values for it)."""
    core.config.update("threefry_partitionable", request.param)
    try:
        yield request.param, (PARTITIONABLE if request.param else CLASSIC)
    finally:
        core.config.update("threefry_partitionable", False)


def _values(k):
    """Our values for the recorded calls, keyed as CLASSIC/PARTITIONABLE (bits64 apart: needs x64)."""
    k1, k2 = random.split(k)
    k3 = random.fold_in(k2, 7)
    as_list = lambda x: np.asarray(x).tolist()  # noqa: E731
    return {
        "normal_bits": as_list(np.asarray(random.normal(k, (3,))).view(np.uint32)),
        "uniform_bits": as_list(np.asarray(random.uniform(k, (2, 3))).view(np.uint32)),
        "randint": as_list(random.randint(k, (5,), 0, 100)),
        "bits": as_list(random.bits(k, (2, 3))),
        "bits8": as_list(random.bits(k, (5,), jnp.uint8)),
        "bits16": as_list(random.bits(k, (3,), jnp.uint16)),
        "chain_k1": as_list(k1),
        "chain_k3": as_list(k3),
        "chain_split3": as_list(random.split(k3, 3)),
        "split3": as_list(random.split(k, 3)),
        "split23": as_list(random.split(k, (2, 3))),
        "perm": as_list(random.permutation(k, 6)),
    }


def test_values_equal_jax_bit_for_bit(scheme):
    setting, expected = scheme
    got = _values(random.PRNGKey(0))
    for name, value in got.items():
        assert value == expected[name], (name, setting)
    np.testing.assert_array_equal(np.asarray(random.normal(random.PRNGKey(0), (3,))),
                                  np.float32(NORMAL_FLOATS[setting]))


def test_bits64_equal_jax(scheme, x64):
    _, expected = scheme
    got = random.bits(random.PRNGKey(0), (3,), jnp.uint64)
    assert got.dtype == np.uint64
    assert np.asarray(got).tolist() == expected["bits64"]


def test_same_values_under_jit_and_vmap(scheme):
    _, expected = scheme
    k = random.PRNGKey(0)
    assert np.asarray(core.jit(lambda k: random.split(k, 3))(k)).tolist() == expected["split3"]
    keys = random.split(k, 3)
    # vmap over keys equals a Python loop over them
    got = np.asarray(core.vmap(lambda kk: random.bits(kk, (4,)))(keys))
    loop = np.stack([np.asarray(random.bits(keys[i], (4,))) for i in range(3)])
    np.testing.assert_array_equal(got, loop)


def test_partitionable_bits_are_the_hash_of_each_elements_counter():
    """Hand-derived from the scheme: element i of bits(k, shape) is y1 ^ y2 of threefry2x32(k, (0, i))."""
    from core.lax import threefry2x32
    k = random.PRNGKey(3)
    y1, y2 = threefry2x32(k[0], k[1], jnp.zeros(6, jnp.uint32), jnp.arange(6, dtype=jnp.uint32))
    core.config.update("threefry_partitionable", True)
    try:
        got = random.bits(k, (2, 3))
        keys = random.split(k, 6)
    finally:
        core.config.update("threefry_partitionable", False)
    np.testing.assert_array_equal(np.asarray(got), (np.asarray(y1) ^ np.asarray(y2)).reshape(2, 3))
    np.testing.assert_array_equal(np.asarray(keys), np.stack([np.asarray(y1), np.asarray(y2)], axis=1))


def test_changing_the_option_invalidates_jit_caches():
    """A function jitted (and called, so cached, fast path included) under one scheme gives the
    other scheme's values after the option changes, and the first's again when it changes back."""
    sample = core.jit(lambda k: random.bits(k, (2, 3)))
    k = random.PRNGKey(0)
    assert np.asarray(sample(k)).tolist() == CLASSIC["bits"]
    assert np.asarray(sample(k)).tolist() == CLASSIC["bits"]  # fast path
    core.config.update("jax_threefry_partitionable", True)  # JAX's spelling
    try:
        assert core.config.jax_threefry_partitionable is True
        assert np.asarray(sample(k)).tolist() == PARTITIONABLE["bits"]
        assert np.asarray(sample(k)).tolist() == PARTITIONABLE["bits"]
    finally:
        core.config.update("threefry_partitionable", False)
    assert np.asarray(sample(k)).tolist() == CLASSIC["bits"]


@pytest.mark.parametrize("var", ["JAX_THREEFRY_PARTITIONABLE", "PURENN_THREEFRY_PARTITIONABLE"])
def test_environment_variable_turns_it_on(var):
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = {k: v for k, v in os.environ.items() if "THREEFRY" not in k}
    env[var] = "1"
    env["PYTHONPATH"] = root
    code = ("import core; from core import random; import numpy as np; "
            "print(core.config.threefry_partitionable, np.asarray(random.split(random.PRNGKey(0), 3)).tolist())")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    assert out.strip() == f"True {PARTITIONABLE['split3']}"


def test_jax_style_program():
    """A program written with jax names (only the imports rewritten)."""
    import core as jax
    import core.numpy as jnp  # noqa: F811
    from core import random as jrandom

    jax.config.update("jax_threefry_partitionable", True)
    try:
        key = jrandom.PRNGKey(0)
        key, sub = jrandom.split(key)
        w = jrandom.normal(sub, (3,))
        step_keys = [jrandom.fold_in(key, i) for i in range(2)]
        noise = jax.jit(lambda k: jrandom.uniform(k, (2, 3)))(jrandom.PRNGKey(0))
    finally:
        jax.config.update("jax_threefry_partitionable", False)
    # split(k) is split(k, 2): the first two of split(k, 3), as in jax's fold-like split
    assert np.asarray(key).tolist() == PARTITIONABLE["split3"][0]
    assert np.asarray(noise).view(np.uint32).tolist() == PARTITIONABLE["uniform_bits"]
    assert w.shape == (3,) and len({tuple(np.asarray(s).tolist()) for s in step_keys}) == 2
