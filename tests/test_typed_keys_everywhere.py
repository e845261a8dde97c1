"""Typed PRNG keys (`random.key`) where JAX 0.10.2 accepts them, and the same refusals where it
refuses them (issue 16 item 7): the collectives that move values under pmap and vmap, psum and
the other arithmetic collectives (TypeError), pure_callback and debug.callback (the host sees the
key's uint32 data), jnp.array / jnp.asarray / jnp.vectorize, ravel_pytree and associative_scan
(TypeError). Every value is checked against the same computation done by hand on the raw words
(`random.key_data`). Ends with a JAX-style program using keys through jit, vmap, scan, pmap,
collectives and a callback, against numbers recorded from jax 0.10.2."""
import re

import numpy as np
import pytest

import core
import core.numpy as jnp
from core import lax, random
from core.flatten_util import ravel_pytree

needs_2 = pytest.mark.skipif(core.local_device_count() < 2, reason="needs 2 CPU devices")


def _words(keys):
    return np.asarray(random.key_data(keys))


def _keys(*shape):
    """Keys of `shape` over distinct constant words (no program to compile, unlike random.split)."""
    words = np.arange(2 * int(np.prod(shape)), dtype=np.uint32).reshape(*shape, 2) * np.uint32(7919)
    return random.wrap_key_data(jnp.asarray(words))


def _is_key(x):
    return str(x.dtype) == "key<fry>"


# ----- collectives ---------------------------------------------------------------------------------

def _moving_collectives(k, ks):
    """Per example: k a key, ks a key array of shape (2, 3)."""
    return (lax.all_gather(k, "d"), lax.all_gather(ks, "d", axis=1), lax.all_gather(ks, "d", axis=-1, tiled=True),
            lax.ppermute(k, "d", [(0, 1), (1, 0)]), lax.pshuffle(ks, "d", [1, 0]),
            lax.all_to_all(ks, "d", 0, 1), lax.pswapaxes(ks, "d", 0),
            lax.all_gather({"k": k, "x": jnp.float32(1.0)}, "d")["k"])


def _moving_oracle(K, KS):
    """The same on the words: K uint32[2, 2] (example, word), KS uint32[2, 2, 3, 2]."""
    gathered = np.stack([K, K])                                          # (example, gathered, word)
    along_1 = np.stack([np.stack([KS[0], KS[1]], axis=1)] * 2)           # new key axis 1
    tiled = np.stack([np.concatenate([KS[0], KS[1]], axis=1)] * 2)       # along the last key axis
    swapped = KS[::-1]
    # all_to_all(split 0, concat 1): example j gets row j of every example, stacked along key axis 1
    dealt = np.stack([np.stack([KS[i][j] for i in range(2)], axis=1) for j in range(2)])
    pswapped = np.stack([np.stack([KS[i][j] for i in range(2)], axis=0) for j in range(2)])
    return gathered, along_1, tiled, K[::-1], swapped, dealt, pswapped, gathered


@needs_2
def test_collectives_that_move_values_take_keys_under_pmap_and_vmap():
    k, ks = _keys(2), _keys(2, 2, 3) 
    oracle = _moving_oracle(_words(k), _words(ks))
    shapes = [(2, 2), (2, 2, 2, 3), (2, 2, 6), (2,), (2, 2, 3), (2, 3, 2), (2, 2, 3), (2, 2)]
    for mapped in (core.pmap(_moving_collectives, axis_name="d"),
                   core.jit(core.vmap(_moving_collectives, axis_name="d"))):
        outs = mapped(k, ks)
        for out, want, shape in zip(outs, oracle, shapes, strict=True):
            assert _is_key(out) and out.shape == shape
            np.testing.assert_array_equal(_words(out), want)


@needs_2
def test_keys_selected_by_axis_index_under_pmap():
    table = _keys(2)
    picked = core.pmap(lambda x, t: t[lax.axis_index("d")], axis_name="d", in_axes=(0, None))(jnp.zeros(2), table)
    assert _is_key(picked) and picked.shape == (2,)
    np.testing.assert_array_equal(_words(picked), _words(table))


@pytest.mark.parametrize("name, call", [
    ("psum", lambda k: lax.psum(k, "d")), ("pmean", lambda k: lax.pmean(k, "d")),
    ("pmax", lambda k: lax.pmax(k, "d")), ("pmin", lambda k: lax.pmin(k, "d")),
    ("psum_scatter", lambda k: lax.psum_scatter(jnp.stack([k, k]), "d"))])
def test_arithmetic_collectives_refuse_keys_as_jax_does(name, call):
    # JAX: TypeError "add does not accept dtype key<fry> at position 0" (and max, true_divide)
    with pytest.raises(TypeError, match=rf"{name} does not accept PRNG key arrays \(got key<fry>\[2?\]\).*key_data"):
        core.vmap(call, axis_name="d")(_keys(2))


# ----- callbacks -----------------------------------------------------------------------------------

def _host_low_words(seen):
    def host(data, scale):
        seen.append((data.dtype, data.shape))
        return (data[..., 0] % 1000).astype(np.float32) * scale
    return host


def test_pure_callback_gives_the_host_the_key_words_eager_jit_and_vmap():
    ks = _keys(3)
    want = (_words(ks)[:, 0] % 1000).astype(np.float32) * 2
    seen = []
    host = _host_low_words(seen)
    out_struct = core.ShapeDtypeStruct((3,), jnp.float32)
    eager = core.pure_callback(host, out_struct, ks, 2.0)
    jitted = core.jit(lambda k: core.pure_callback(host, out_struct, k, 2.0))(ks)
    per_key = core.vmap(lambda k: core.pure_callback(host, core.ShapeDtypeStruct((), jnp.float32), k, 2.0,
                                                     vmap_method="sequential"))(ks)
    vectorized = core.vmap(lambda k: core.pure_callback(host, core.ShapeDtypeStruct((), jnp.float32), k, 2.0,
                                                        vmap_method="expand_dims"))(ks)
    for out in (eager, jitted, per_key, vectorized):
        np.testing.assert_array_equal(np.asarray(out), want)
    # as in JAX: the data, uint32[3, 2]; per example uint32[2]; vectorized uint32[3, 2]
    assert seen == [(np.uint32, (3, 2))] * 2 + [(np.uint32, (2,))] * 3 + [(np.uint32, (3, 2))]


def test_pure_callback_refuses_key_results_as_jax_does():
    ks = _keys(3)
    with pytest.raises(TypeError, match=r"pure_callback: result_shape_dtypes declares a PRNG key result "
                                        r"\(key<fry>\[3\]\).*uint32\[3, 2\].*wrap_key_data"):
        core.pure_callback(lambda d: d, ks, ks)


def test_debug_callback_sees_the_key_words_eager_and_under_jit():
    ks = _keys(2)
    seen = []
    core.debug.callback(lambda d, x: seen.append((np.array(d), x)), ks, {"x": 1})
    core.jit(lambda k: core.debug.callback(lambda d: seen.append((np.array(d), None)), k))(ks)
    assert len(seen) == 2
    for data, _ in seen:
        assert data.dtype == np.uint32
        np.testing.assert_array_equal(data, _words(ks))


# ----- jnp.array, asarray, vectorize -------------------------------------------------------------------

def test_jnp_array_and_asarray_return_key_arrays_as_jax_does():
    ks = _keys(3)
    assert jnp.asarray(ks) is ks and jnp.asarray(ks, dtype=ks.dtype) is ks and jnp.array(ks, copy=False) is ks
    copied = jnp.array(ks)
    assert copied is not ks and _is_key(copied) and random.key_data(copied) is not random.key_data(ks)
    np.testing.assert_array_equal(_words(copied), _words(ks))
    stacked = jnp.array([ks[2], ks[0]])
    nested = jnp.asarray([[ks[0], ks[1]], [ks[2], ks[2]]])
    raised = jnp.array(ks, ndmin=3)
    assert (stacked.shape, nested.shape, raised.shape) == ((2,), (2, 2), (1, 1, 3))
    np.testing.assert_array_equal(_words(stacked), _words(ks)[[2, 0]])
    np.testing.assert_array_equal(_words(nested), _words(ks)[[[0, 1], [2, 2]]])
    np.testing.assert_array_equal(_words(raised), _words(ks)[None, None])
    traced = core.jit(lambda k: (jnp.asarray(k), jnp.array([k[1], k[0]])))(ks)
    np.testing.assert_array_equal(_words(traced[0]), _words(ks))
    np.testing.assert_array_equal(_words(traced[1]), _words(ks)[[1, 0]])
    # JAX: ValueError "Cannot convert_element_type from key<fry> to uint32"
    with pytest.raises(ValueError, match=r"array: cannot convert PRNG key arrays \(key<fry>\) to dtype uint32.*"
                                         r"key_data"):
        jnp.array(ks, dtype=jnp.uint32)
    with pytest.raises(TypeError, match=r"array: a list that holds PRNG key arrays must hold only key arrays "
                                        r"\(got KeyArray, float\)"):
        jnp.array([ks[0], 1.0])


def test_indexing_keys_cannot_reach_into_their_words():
    ks = _keys(3)
    np.testing.assert_array_equal(_words(ks[..., 1]), _words(ks)[1])
    with pytest.raises(IndexError, match=r"too many indices for a PRNG key array of shape \(3,\): 2 were indexed"):
        ks[0, 1]


def test_jnp_vectorize_maps_over_keys():
    ks = _keys(3)
    out = core.jit(jnp.vectorize(lambda k: random.bits(k, (2,)), signature="()->(n)"))(ks)
    np.testing.assert_array_equal(np.asarray(out), np.stack([np.asarray(random.bits(k, (2,))) for k in ks]))


# ----- refusals, as in JAX -------------------------------------------------------------------------------

def test_ravel_pytree_refuses_keys_as_jax_does():
    # JAX: TypeError "Cannot determine dtype of key<fry>"
    with pytest.raises(TypeError, match=r"ravel_pytree: the leaf at \['k'\] is a PRNG key array \(key<fry>\[2\]\)"):
        ravel_pytree({"w": jnp.ones(2), "k": _keys(2)})


def test_associative_scan_refuses_keys_as_jax_does():
    # JAX: TypeError "Cannot interpret 'key<fry>' as a data type"
    with pytest.raises(TypeError, match=r"associative_scan does not accept PRNG key arrays \(got key<fry>\[4\]"):
        lax.associative_scan(lambda a, b: b, (jnp.arange(4.0), _keys(4)))


# ----- the key-reuse checker through jnp shape functions on keys ---------------------------------------------
# Shape functions on key arrays vmap over the keys' words (prng_keys.on_key_data), which moves the
# word axis to the front and back (jnp.ravel, jnp.tile); the checker follows each word.

@pytest.fixture
def checking():
    core.config.update("debug_key_reuse", True)
    try:
        yield
    finally:
        core.config.update("debug_key_reuse", False)


# each picks the key at position (1, 1) of a (2, 3) key array
PICK_1_1 = {
    "ravel": lambda ks: jnp.ravel(ks)[4],
    "tile": lambda ks: jnp.tile(ks, (2, 1))[3, 1],
    "copy": lambda ks: jnp.copy(ks)[1, 1],
    "vmapped tile": lambda ks: core.vmap(lambda row: jnp.tile(row, 2)[4])(ks)[1],
}


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
@pytest.mark.parametrize("name", list(PICK_1_1))
def test_key_reuse_checker_follows_keys_through_vmapped_shape_functions(checking, name, jit):
    pick = PICK_1_1[name]

    def reuse():
        ks = random.split(random.key(0), 6).reshape(2, 3)
        return random.normal(ks[1, 1]), random.normal(pick(ks))

    def no_reuse():
        ks = random.split(random.key(0), 6).reshape(2, 3)
        return random.normal(ks[0, 2]), random.normal(pick(ks))

    run = core.jit if jit else (lambda f: f)
    with pytest.raises(core.errors.KeyReuseError, match=r"random.normal at .* consumes a PRNG key that "
                                                       r"random.normal at .* already consumed"):
        run(reuse)()
    first, second = run(no_reuse)()
    np.testing.assert_array_equal(np.asarray(second), np.asarray(random.normal(random.split(random.key(0), 6)[4])))


# ----- a JAX-style program ---------------------------------------------------------------------------------

PROGRAM = '''
import jax
import jax.numpy as jnp
import numpy as np
from jax import lax, random


@jax.jit
def noise(key):
    return jax.vmap(lambda k: random.normal(k, (3,)))(random.split(key, 2))


def device_step(key, x):
    everyone = lax.all_gather(key[None], "d", tiled=True)
    mine = everyone[lax.axis_index("d")]
    neighbour = lax.ppermute(key, "d", [(0, 1), (1, 0)])
    dealt = lax.all_to_all(random.split(mine, 2), "d", 0, 0)

    def body(carry, sub):
        total, k = carry
        k, use = random.split(k)
        return (total + random.uniform(use), k), random.fold_in(sub, 3)

    (total, last), folded = lax.scan(body, (x, neighbour), random.split(dealt[1], 3))
    swapped = lax.pshuffle(folded, "d", [1, 0])
    return total + noise(last).sum(), random.key_data(swapped), jnp.asarray(last)


def run(seed):
    keys = random.split(random.key(seed), 2)
    totals, words, lasts = jax.pmap(device_step, axis_name="d")(keys, jnp.arange(2.0))
    width = jax.pure_callback(lambda d: (d[..., 0] % 1000).astype(np.float32),
                              jax.ShapeDtypeStruct((2,), jnp.float32), lasts)
    return totals, words, random.key_data(lasts), width, jnp.array([lasts[0], lasts[1]]).shape
'''

# run(5) under jax 0.10.2 (jax_threefry_partitionable=False, 2 CPU devices)
JAX_RUN_5 = {
    "totals": [-0.9962753057479858, 3.2672033309936523],
    "words": [[[1052317371, 3670441770], [3569282878, 1467966998], [3666839023, 3592628240]],
              [[587909766, 3829006399], [851356180, 3703165613], [2186406714, 1827689909]]],
    "lasts": [[1937492860, 3180173166], [2950095522, 519222591]],
    "width": [860.0, 522.0],
}


def _as_purenn(source):
    source = re.sub(r"^from jax import lax, random$", "from core import lax, random", source, flags=re.M)
    source = re.sub(r"^import jax\.numpy as jnp$", "import core.numpy as jnp", source, flags=re.M)
    return re.sub(r"^import jax$", "import core as jax", source, flags=re.M)


@needs_2
def test_jax_style_program_with_keys_through_jit_vmap_scan_pmap_matches_jax():
    namespace = {}
    exec(compile(_as_purenn(PROGRAM), "<jax-style typed-key program>", "exec"), namespace)
    totals, words, lasts, width, shape = namespace["run"](5)
    np.testing.assert_allclose(np.asarray(totals), JAX_RUN_5["totals"], rtol=1e-6)
    np.testing.assert_array_equal(np.asarray(words), JAX_RUN_5["words"])
    np.testing.assert_array_equal(np.asarray(lasts), JAX_RUN_5["lasts"])
    np.testing.assert_array_equal(np.asarray(width), JAX_RUN_5["width"])
    assert shape == (2,)
