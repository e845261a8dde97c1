"""The eager fast path (core/dispatch.py, core/_jitfast.c): a primitive applied again to
uncommitted Arrays of the same types and params runs its remembered executable, in C
(`PrimitiveBase.bind`) or in Python (the lookup at the top of `dispatch.apply_primitive`). Every
test runs through both, and checks which one served the calls by its own hit counter.

Oracles: NumPy in float64 for values; JAX's promotion rules, written out by hand, for dtypes and
weak types; the slow path's own errors (debug_nans, donated buffers, key reuse) for behaviour
that the fast path must not skip.
"""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import core
import core.numpy as jnp
from core import dispatch, lax, random, trace
from core.errors import KeyReuseError
from core.lax.elementwise import neg_p, sin_p
from core.lax.linalg import qr_p
from core.lax.reductions import reduce_sum_p

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(params=["c", "python"])
def impl(request, monkeypatch):
    """Which fast path serves eager calls: the C `bind` (skipped where the extension is not built)
    or the Python one (Primitive.bind replaced by the plain Python bind for the test)."""
    if request.param == "c":
        if dispatch._jitfast is None:
            pytest.skip("core._jitfast is not built here")
        assert trace.Primitive.bind is not trace.Primitive._bind_slow
    else:
        monkeypatch.setattr(trace.Primitive, "bind", trace.Primitive._bind_slow)
    return request.param


def fast_hits(impl):
    """The hits served by `impl`'s path only."""
    return dispatch._jitfast.eager_hits() if impl == "c" else dispatch._fast_hits[0]


def test_repeated_op_runs_the_remembered_executable(impl):
    x = jnp.asarray(np.linspace(-1, 1, 8, dtype=np.float32))
    y = jnp.asarray(np.arange(8, dtype=np.float32))
    x + y  # remembered (or already)
    misses, hits = core.cache_info()["eager"]["misses"], fast_hits(impl)
    for _ in range(5):
        z = x + y
    np.testing.assert_allclose(np.asarray(z), np.linspace(-1, 1, 8) + np.arange(8), rtol=1e-6)
    assert fast_hits(impl) - hits == 5
    info = core.cache_info()["eager"]
    assert info["misses"] == misses and info["fast_size"] >= 1
    assert type(z) is core.array.Array and z._device is None and z._fkey == z.aval.type_id


def test_weak_and_strong_operands_are_different_entries(impl):
    # JAX's rules: weak + weak stays weak float32; strong + strong is strong float32; a weak
    # float32 with a strong float16 is float16 (through promotion, then the same add primitive).
    weak = jnp.asarray(1.5)
    strong = jnp.asarray(np.float32(1.5))
    half = jnp.asarray(np.float16(1.5))
    assert weak.weak_type and not strong.weak_type
    for _ in range(3):  # the first call of each remembers, the others hit
        ww, ss, wh = lax.add(weak, weak), lax.add(strong, strong), weak + half
        assert (ww.dtype, ww.weak_type) == (np.float32, True)
        assert (ss.dtype, ss.weak_type) == (np.float32, False)
        assert (wh.dtype, wh.weak_type) == (np.float16, False)
        assert float(ww) == float(ss) == float(wh) == 3.0


def test_promotion_and_params_select_the_program(impl):
    a = jnp.asarray(np.arange(6, dtype=np.int32).reshape(2, 3))
    b = jnp.asarray(np.full((2, 3), 0.5, np.float32))
    m = np.arange(6).reshape(2, 3)
    for _ in range(3):
        np.testing.assert_allclose(np.asarray(a + b), m + 0.5)  # int32 -> float32, then add
        assert (a + b).dtype == np.float32
        np.testing.assert_array_equal(np.asarray(jnp.sum(a, axis=0)), m.sum(0))  # params differ:
        np.testing.assert_array_equal(np.asarray(jnp.sum(a, axis=1)), m.sum(1))  # different entries
        np.testing.assert_array_equal(np.asarray(reduce_sum_p.bind(a, axes=(0, 1))), m.sum())


def test_a_primitive_with_several_results(impl):
    m = np.array([[4.0, 1.0], [2.0, 3.0]], np.float32)
    a = jnp.asarray(m)
    for _ in range(3):
        q, r = qr_p.bind(a, full_matrices=False)
        np.testing.assert_allclose(np.asarray(q) @ np.asarray(r), m, rtol=1e-5, atol=1e-5)
        assert isinstance(q, core.array.Array) and q._fkey == q.aval.type_id


def test_an_unhashable_param_fails_as_before(impl):
    a = jnp.ones((2, 3))
    reduce_sum_p.bind(a, axes=(0,))
    reduce_sum_p.bind(a, axes=(0,))  # the primitive's table is not empty now
    with pytest.raises(TypeError, match="unhashable"):
        reduce_sum_p.bind(a, axes=[0])


def test_debug_nans_is_seen_after_the_op_was_remembered(impl):
    x = -jnp.ones(3)
    jnp.log(x)
    assert np.isnan(np.asarray(jnp.log(x))).all()  # on the fast path, unchecked
    core.config.update("debug_nans", True)
    try:
        with pytest.raises(FloatingPointError, match="log"):
            jnp.log(x)
    finally:
        core.config.update("debug_nans", False)
    assert np.isnan(np.asarray(jnp.log(x))).all()


def test_disable_jit_and_eager_ops(impl):
    x = jnp.arange(4.0)
    x * x
    with core.disable_jit():  # the token is None: the slow path, with the same results
        np.testing.assert_array_equal(np.asarray(x * x), [0.0, 1.0, 4.0, 9.0])
    np.testing.assert_array_equal(np.asarray(x * x), [0.0, 1.0, 4.0, 9.0])


def test_tracers_never_take_the_fast_path(impl):
    x = jnp.asarray(np.array([0.5, 1.0, 2.0], np.float32))
    jnp.sin(x), jnp.sin(x)  # remembered for float32[3]
    runs = []
    entry = sin_p._eager_fast[x._fkey]  # one argument, no params: the key is its `_fkey`

    def counted(bufs):
        runs.append(1)
        return entry[1](bufs)
    sin_p._eager_fast[x._fkey] = (entry[0], counted) + entry[2:]
    np.testing.assert_allclose(np.asarray(jnp.sin(x)), np.sin([0.5, 1.0, 2.0]), rtol=1e-6)
    assert len(runs) == 1  # the eager call ran it
    jaxpr = core.make_jaxpr(jnp.sin)(x)
    assert [e.primitive.name for e in jaxpr.jaxpr.eqns] == ["sin"]
    np.testing.assert_allclose(np.asarray(core.jit(lambda v: jnp.sin(v) * 2)(x)), 2 * np.sin([0.5, 1.0, 2.0]),
                               rtol=1e-6)
    assert len(runs) == 1  # staging saw tracers of the same type and did not run it
    # grad and vmap evaluate sin on the concrete primal / the whole batch eagerly (which may run it);
    # their tracers themselves must not
    np.testing.assert_allclose(np.asarray(core.grad(lambda v: jnp.sin(v).sum())(x)), np.cos([0.5, 1.0, 2.0]),
                               rtol=1e-6)
    np.testing.assert_allclose(np.asarray(core.vmap(jnp.sin)(x)), np.sin([0.5, 1.0, 2.0]), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(core.jvp(jnp.sin, (x,), (jnp.ones(3),))[1]), np.cos([0.5, 1.0, 2.0]),
                               rtol=1e-6)


def test_committed_operands_keep_their_device(impl):
    device = core.local_devices()[-1]
    x, y = jnp.ones(3), jnp.arange(3.0)
    x + y, x + y
    xc = core.device_put(x, device)
    for _ in range(2):
        z = xc + y
        assert z.committed and z.device == device
        np.testing.assert_array_equal(np.asarray(z), [1.0, 2.0, 3.0])
    assert not (x + y).committed


def test_a_donated_operand_is_reported_as_deleted(impl):
    x, y = jnp.arange(3.0), jnp.ones(3)
    x - y, x - y
    core.jit(lambda v: v * 2, donate_argnums=0)(x)
    assert x.is_deleted()
    with pytest.raises(RuntimeError, match="deleted"):
        x - y


def test_key_reuse_checking_sees_ops_remembered_before_it_was_on(impl):
    warm = random.split(random.PRNGKey(1), 3)
    for _ in range(2):  # indexing and sampling remembered for key arrays of this type, checker off
        warm[0], warm[1], random.normal(warm[2])
    core.config.update("debug_key_reuse", True)
    try:
        keys = random.split(random.PRNGKey(0), 3)
        random.normal(keys[0])
        with pytest.raises(KeyReuseError):
            random.normal(keys[0])  # a new Array each time, the same key: its marks must follow
    finally:
        core.config.update("debug_key_reuse", False)


def test_clear_caches_and_the_bound_on_entries(impl, monkeypatch):
    core.clear_caches()
    assert core.cache_info()["eager"]["fast_size"] == 0
    monkeypatch.setattr(dispatch, "eager_fast_limit", 3)
    for n in range(1, 7):
        x = jnp.ones(n)
        for _ in range(2):
            np.testing.assert_array_equal(np.asarray(jnp.negative(x)), -np.ones(n))
        assert core.cache_info()["eager"]["fast_size"] <= 3
    core.clear_caches()
    info = core.cache_info()["eager"]
    assert info["fast_size"] == 0 and info["fast_hits"] == 0
    assert not neg_p._eager_fast


_RSS_PROBE = r"""
import json, numpy as np
import core, core.numpy as jnp
def rss_mb():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096 / 2**20
pool = [(jnp.asarray(np.full(8, i, np.float32)), jnp.ones(8)) for i in range(16)]
f = core.jit(lambda a, b: a * b + a)
def run(n):
    for i in range(n):
        a, b = pool[i & 15]
        (a + b).block_until_ready()  # eager, blocked
        jnp.sin(a)                   # eager
        f(a, b).block_until_ready()  # jit's fast path
run(20_000)
before = rss_mb()
run(100_000)
print(json.dumps({"before": before, "after": rss_mb(), "last": float((pool[3][0] + pool[3][1])[0])}))
"""


@pytest.mark.parametrize("pure_python", [False, True], ids=["c", "python"])
def test_no_memory_growth_over_100k_fast_calls(pure_python):
    # jaxlib queues references it releases on its own threads until collect_garbage(); a steady
    # loop never triggers Python's GC, which used to be the only caller: this loop grew by ~60 MB
    # (core/runtime/executable.py, count_execution).
    env = dict(os.environ, PYTHONPATH=ROOT, PURENN_PURE_PYTHON_JIT="1" if pure_python else "0")
    out = subprocess.run([sys.executable, "-c", _RSS_PROBE], env=env, capture_output=True, text=True,
                         timeout=600, check=True)
    r = json.loads(out.stdout.strip().splitlines()[-1])
    assert r["last"] == 4.0
    # 300,000 executions; a leak of one buffer, Array or queued reference per call would be 20+ MB
    assert r["after"] - r["before"] < 4.0, r


def test_one_operand_functions_keep_float_types_and_promote_the_rest():
    # A single float16/bfloat16/float32 Array skips promotion (numpy/_util.py); others promote
    # as JAX does: ints and bools to float32 for inexact functions, bools to int32 for square.
    v = np.array([0.25, 1.5], np.float64)
    for dt in (np.float16, core.dtypes.bfloat16, np.float32):
        out = jnp.sin(jnp.asarray(v.astype(dt)))
        assert out.dtype == dt and not out.weak_type
        np.testing.assert_allclose(np.asarray(out, np.float64), np.sin(v.astype(dt).astype(np.float64)),
                                   rtol=1e-2 if dt != np.float32 else 1e-6)
    weak = jnp.exp(jnp.asarray(0.5))
    assert weak.dtype == np.float32 and weak.weak_type and float(weak) == pytest.approx(np.exp(0.5), rel=1e-6)
    ints = jnp.sin(jnp.arange(3))
    assert ints.dtype == np.float32
    np.testing.assert_allclose(np.asarray(ints), np.sin([0.0, 1.0, 2.0]), rtol=1e-6)
    sq = jnp.square(jnp.asarray([True, False]))
    assert sq.dtype == np.int32 and np.asarray(sq).tolist() == [1, 0]
