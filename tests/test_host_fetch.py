"""Host fetches of fresh results (issue 18): no import machinery on the path, NumPy's values,
read-only views that outlive the Array; `block_until_ready` and `device_get` over pytrees."""
import gc
import io
import os
import sys
from contextlib import redirect_stdout

import numpy as np
import pytest

import core
import core.numpy as jnp

N_FETCHES = 1000


class _CountingFinder:
    """A meta-path finder that finds nothing and counts how often the import system asks it."""

    def __init__(self):
        self.names = []

    def find_spec(self, name, path=None, target=None):
        self.names.append(name)
        return None


@pytest.fixture
def counting_finder():
    finder = _CountingFinder()
    sys.meta_path.insert(0, finder)
    try:
        yield finder
    finally:
        sys.meta_path.remove(finder)


_f = core.jit(lambda a, b: (a * b + a) - b)
_fi = core.jit(lambda a: (a * 3 + 1).sum())
_fs = core.jit(lambda a, b: ((a * b + a) - b).sum())

_x = jnp.arange(8.0)
_y = jnp.ones(8) * 0.5
_i = jnp.arange(8)


def _routes():
    """Each host fetch a user can write, applied to a fresh result of a jitted call."""
    def printed():
        with redirect_stdout(io.StringIO()):
            print(_f(_x, _y))
    return {
        "np.asarray": lambda: np.asarray(_f(_x, _y)),
        "float": lambda: float(_fs(_x, _y)),
        "int": lambda: int(_fi(_i)),
        "item": lambda: _f(_x, _y).item(3),
        "tolist": lambda: _f(_x, _y).tolist(),
        "device_get": lambda: core.device_get({"a": _f(_x, _y), "b": [_fs(_x, _y)], "c": 1}),
        "print": printed,
        "repr": lambda: repr(_f(_x, _y)),
    }


@pytest.mark.parametrize("route", sorted(_routes()))
def test_fetch_of_fresh_result_makes_no_import_attempt(route, counting_finder):
    # jaxlib's own reader tries `import jax._src.sharding_impls` on each fresh buffer, which
    # without jax went through the whole import machinery every time (docs/design.md)
    fetch = _routes()[route]
    fetch()  # compiles and warms caches outside the count
    del counting_finder.names[:]
    for _ in range(N_FETCHES):
        fetch()
    assert counting_finder.names == [], (
        f"{len(counting_finder.names)} import attempts in {N_FETCHES} fetches through {route}: "
        f"{sorted(set(counting_finder.names))}")


def test_fetched_values_match_numpy():
    xs = np.arange(8, dtype=np.float32) * 0.75 - 2
    ys = np.linspace(-1, 1, 8, dtype=np.float32)
    expected = (xs.astype(np.float64) * ys + xs) - ys
    got = np.asarray(_f(jnp.asarray(xs), jnp.asarray(ys)))
    assert got.dtype == np.float32 and got.shape == (8,)
    np.testing.assert_allclose(got, expected, rtol=1e-6)
    assert float(_fs(jnp.asarray(xs), jnp.asarray(ys))) == pytest.approx(expected.sum(), rel=1e-5)
    assert int(_fi(jnp.arange(8))) == int((np.arange(8) * 3 + 1).sum())
    r = _f(jnp.asarray(xs), jnp.asarray(ys))
    assert r.tolist() == pytest.approx(expected.tolist(), rel=1e-6)
    assert r.item(5) == pytest.approx(expected[5], rel=1e-6)


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "int32", "uint8", "bool", "complex64"])
@pytest.mark.parametrize("shape", [(), (0,), (3, 4)])
def test_fetch_dtypes_and_shapes(dtype, shape):
    # bfloat16 is one the buffer protocol does not carry: it takes jaxlib's reader instead
    rng = np.random.default_rng(0)
    host = (rng.standard_normal(shape) * 4).astype(np.float32)
    if dtype == "bool":
        host = host > 0
    elif dtype in ("int32", "uint8"):
        host = np.abs(host).astype(dtype)
    x = jnp.asarray(host, dtype=dtype)
    value = np.asarray(x + x if dtype != "bool" else x | x)  # a computed buffer, not the put one
    want = np.asarray(jnp.asarray(host, dtype=dtype))
    want = want + want if dtype != "bool" else want
    assert value.shape == shape and value.dtype == x.dtype
    np.testing.assert_array_equal(value.astype(np.float64) if dtype == "bfloat16" else value,
                                  want.astype(np.float64) if dtype == "bfloat16" else want)
    assert not value.flags.writeable


def test_fetched_value_is_read_only_as_in_jax():
    r = _f(_x, _y)
    v = np.asarray(r)
    with pytest.raises(ValueError, match="read-only"):
        v[0] = 1.0
    # every fetch, not only the first, is a read-only view (fresh results of several dtypes and shapes)
    for i in range(20):
        for value in (np.asarray(_f(_x, _y) + float(i)), np.asarray(jnp.arange(i + 1)),
                      np.asarray(jnp.ones((2, i + 1), jnp.uint8) * 3)):
            assert not value.flags.writeable
    got = core.device_get({"r": _f(_x, _y)})["r"]
    with pytest.raises(ValueError, match="read-only"):
        got[0] = 1.0
    copy = np.array(r)  # an explicit copy is the user's own
    copy[0] = 42.0
    assert np.asarray(r)[0] != 42.0


def test_fetched_view_outlives_its_array():
    # the host value may alias device memory: it must keep that memory alive and unchanged
    values = [np.asarray(_f(_x + i, _y)) for i in range(4)]
    gc.collect()
    for i in range(50):  # device memory freed by the dropped Arrays would be reused by these
        _f(_x + 100 * i, _y).block_until_ready()
    for i, v in enumerate(values):
        np.testing.assert_allclose(v, ((np.arange(8.0) + i) * 0.5 + np.arange(8.0) + i) - 0.5)


def test_fetched_view_survives_donation_of_its_array():
    y = _x * 2.0
    v = np.asarray(y)
    before = v.copy()
    out = core.jit(lambda a: a + 1.0, donate_argnums=0)(y)
    np.testing.assert_array_equal(np.asarray(out), before + 1.0)
    np.testing.assert_array_equal(v, before)


def test_fetch_of_deleted_array_names_the_problem():
    r = _f(_x, _y)
    r.delete()
    with pytest.raises(RuntimeError, match=r"Array has been deleted with shape=f32\[8\]"):
        np.asarray(r)


def test_copy_to_host_async_then_fetch():
    r = _f(_x, _y)
    r.copy_to_host_async()  # was an AttributeError: jaxlib's array has no such method
    np.testing.assert_allclose(np.asarray(r), np.asarray(_f(_x, _y)))


def test_device_get_converts_arrays_and_passes_other_leaves():
    tree = {"a": _f(_x, _y), "b": [jnp.arange(3), None, "s"], "c": 2.5}
    got = core.device_get(tree)
    assert set(got) == {"a", "b", "c"} and got["c"] == 2.5 and got["b"][1:] == [None, "s"]
    assert isinstance(got["a"], np.ndarray) and isinstance(got["b"][0], np.ndarray)
    np.testing.assert_array_equal(got["b"][0], [0, 1, 2])
    single = core.device_get(_f(_x, _y))
    assert isinstance(single, np.ndarray)
    np.testing.assert_array_equal(single, got["a"])


def test_block_until_ready_returns_its_argument():
    tree = {"a": _f(_x, _y), "b": [_fs(_x, _y), None, 3], "c": (np.ones(2),)}
    assert core.block_until_ready(tree) is tree
    assert all(leaf.is_ready() for leaf in (tree["a"]._buf, tree["b"][0]._buf))
    r = _f(_x, _y)
    assert core.block_until_ready(r) is r
    assert core.block_until_ready(5) == 5 and core.block_until_ready(None) is None
    sharded = core.device_put_replicated(jnp.ones(2), core.local_devices())
    assert core.block_until_ready([sharded, r])[0] is sharded


def test_block_until_ready_reaches_leaves_of_every_node_kind():
    # lists, tuples and dicts are walked directly; namedtuples, OrderedDicts and custom nodes
    # through tree_leaves: a deleted Array under any of them must be found
    import collections
    Pair = collections.namedtuple("Pair", "u v")
    for wrap in (lambda d: Pair(1.0, [d]), lambda d: collections.OrderedDict(k=d), lambda d: ((None, d),)):
        dead = jnp.arange(3.0) + 1
        dead.delete()
        with pytest.raises(RuntimeError, match=r"Array has been deleted with shape=f32\[3\]"):
            core.block_until_ready({"ok": _f(_x, _y), "w": wrap(dead)})
    tree = {"p": Pair(_f(_x, _y), [1.0, None, "s"]), "o": collections.OrderedDict(k=_fs(_x, _y))}
    assert core.block_until_ready(tree) is tree
    assert tree["p"].u._buf.is_ready() and tree["o"]["k"]._buf.is_ready()


def test_is_ready_says_whether_a_fetch_would_wait():
    """`Array.is_ready()` (as `jax.Array.is_ready`): False while the program that makes the array
    still runs (here ~0.5 s of matrix products, dispatched asynchronously), True once done; a
    deleted array is named, as `block_until_ready` names it."""
    @core.jit
    def slow(m):
        return core.lax.fori_loop(0, 40, lambda i, a: jnp.tanh(a @ m), m)[0, :3]

    m = jnp.full((600, 600), 1e-3, jnp.float32)
    slow(m).block_until_ready()            # compiled
    r = slow(m)
    assert r.is_ready() is False
    r.block_until_ready()
    assert r.is_ready() is True
    np.testing.assert_allclose(np.asarray(r), np.asarray(slow(m)))
    r.delete()
    with pytest.raises(RuntimeError, match=r"Array has been deleted with shape=f32\[3\]"):
        r.is_ready()


def test_block_until_ready_on_a_deleted_leaf_names_it():
    a, b = _f(_x, _y), jnp.arange(3.0) + 1
    b.delete()
    with pytest.raises(RuntimeError, match=r"Array has been deleted with shape=f32\[3\]"):
        core.block_until_ready({"a": a, "b": b})
    with pytest.raises(RuntimeError, match=r"Array has been deleted with shape=f32\[3\]"):
        core.block_until_ready(b)


def _c_extension_in_use():
    import importlib.util
    return (importlib.util.find_spec("core._jitfast") is not None
            and os.environ.get("PURENN_PURE_PYTHON_JIT", "") != "1")


_buffer_export = pytest.mark.skipif(not _c_extension_in_use(),
                                    reason="core._jitfast (Array's buffer export) is not in use here")


@_buffer_export
def test_np_asarray_reads_through_the_buffer_protocol_without_python():
    # NumPy asks for a buffer before it calls __array__: an Array exports its device buffer there
    # (core/_jitfast.c, ArrayBase), as jax's arrays do, so a fetch runs none of our Python (it ran
    # __array__ -> _value -> to_numpy, ~0.8 us more than jax's fetch; bench/RESULTS.md, Latency)
    results = [_f(_x + float(i), _y) for i in range(N_FETCHES)]
    values, calls = [], []
    ours = os.path.dirname(core.__file__)

    def profile(frame, event, arg):
        if event == "call" and frame.f_code.co_filename.startswith(ours):
            calls.append(frame.f_code.co_name)

    gc.disable()  # its callbacks (core/runtime/client.py) are not part of a fetch
    sys.setprofile(profile)
    try:
        for r in results:
            values.append(np.asarray(r))
    finally:
        sys.setprofile(None)
        gc.enable()
    assert calls == [], f"{len(calls)} calls into core in {N_FETCHES} fetches: {sorted(set(calls))}"
    for i in (0, 1, N_FETCHES - 1):
        np.testing.assert_allclose(values[i], ((np.arange(8.0) + i) * 0.5 + np.arange(8.0) + i) - 0.5)
        assert not values[i].flags.writeable


@_buffer_export
@pytest.mark.parametrize("dtype", ["float32", "float16", "int8", "uint32", "bool", "complex64"])
@pytest.mark.parametrize("shape", [(), (0, 3), (2, 3)])
def test_memoryview_of_array_holds_numpys_bytes(dtype, shape):
    host = (np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape) * 1.5 - 2)
    host = (host > 0) if dtype == "bool" else host.astype(dtype)
    view = memoryview(jnp.asarray(host) + jnp.zeros(shape, dtype))  # a computed buffer
    assert view.readonly and view.shape == shape and view.itemsize == host.itemsize
    assert view.tobytes() == host.tobytes()


@_buffer_export
def test_buffer_export_refuses_writes_and_falls_back_as_asarray_does():
    import ctypes
    x = _f(_x, _y)
    with pytest.raises(TypeError, match="not writable"):
        ctypes.c_char.from_buffer(x)
    # a dtype the buffer protocol cannot carry is refused by memoryview, read by np.asarray
    b = jnp.asarray([1.5, -2.0], dtype="bfloat16") * 2
    with pytest.raises(ValueError):
        memoryview(b)
    np.testing.assert_array_equal(np.asarray(b).astype(np.float64), [3.0, -4.0])
    # a deleted Array: the buffer export names the problem as np.asarray does
    x.delete()
    with pytest.raises(RuntimeError, match=r"Array has been deleted with shape=f32\[8\]"):
        memoryview(x)
    # a subclass (pmap's ShardedArray) exports its gathered value
    s = core.device_put_sharded([jnp.arange(3.0), jnp.arange(3.0) + 10], core.local_devices()[:2])
    assert memoryview(s).tobytes() == np.array([[0, 1, 2], [10, 11, 12]], np.float32).tobytes()
