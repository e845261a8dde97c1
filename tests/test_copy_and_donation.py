"""Copies own their device buffers, and donation never deletes a buffer that another value, or a
cache, still uses (docs/design.md, "Donation and shared buffers"; docs/reliability.md F29).

The defects these guard against: `jnp.copy(a)`, `jnp.array(a)` and `copy.copy(a)` returned `a`
itself, and `jnp.zeros(())`, `jnp.array(2.0)`, `core.device_put(2.0)` returned the array the
scalar-operand cache keeps for `x * 2.0`; donating one deleted the cached buffer, and every later
use of that constant failed.
"""
import copy
import warnings

import numpy as np
import pytest

import core
import core.numpy as jnp
from core import lax
from core.array import _scalar_cache, is_cached_buffer, scalar_array

# one jitted step per test module, so each aval compiles once; `s + 1` lets the output take the
# donated buffer (same shape and dtype)
_step = core.jit(lambda s: s + 1, donate_argnums=0)


def _ptr(x):
    return x._buf.unsafe_buffer_pointer()


def _donate(x):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an unusable donation would not test anything
        return _step(x)


def _assert_scalar_cache_intact():
    deleted = [key for key, arr in _scalar_cache.items() if arr.is_deleted()]
    assert not deleted, f"the scalar-operand cache holds deleted buffers: {deleted}"


def _assert_eager_constants_work():
    # each of these reads a cache entry that one of the donations below used to delete
    np.testing.assert_array_equal(np.asarray(jnp.zeros((), jnp.int32) + 1), 1)
    np.testing.assert_array_equal(np.asarray(jnp.arange(3.0) * 2.0), [0.0, 2.0, 4.0])
    np.testing.assert_array_equal(np.asarray(jnp.arange(3.0) + 1.0), [1.0, 2.0, 3.0])
    assert float(lax.mul(2.0, 3.0)) == 6.0  # Python scalar operands, converted by the cache
    np.testing.assert_array_equal(np.asarray(jnp.full((2,), 7)), [7, 7])
    _assert_scalar_cache_intact()


# ----- copies ----------------------------------------------------------------------------------------

COPIES = {
    "jnp.copy": jnp.copy,
    "jnp.array": jnp.array,
    "jnp.array(copy=True)": lambda a: jnp.array(a, copy=True),
    "jnp.asarray(copy=True)": lambda a: jnp.asarray(a, copy=True),
    "x.copy()": lambda a: a.copy(),
    "copy.copy": copy.copy,
    "copy.deepcopy": copy.deepcopy,
}


@pytest.mark.parametrize("make_copy", COPIES.values(), ids=COPIES.keys())
def test_a_copy_is_a_distinct_equal_array_and_survives_donation_of_the_original(make_copy):
    a = jnp.asarray(np.array([1, 2, 3], np.int32))
    b = make_copy(a)
    assert b is not a and _ptr(b) != _ptr(a)
    assert b.dtype == a.dtype and b.weak_type == a.weak_type and b.shape == (3,)
    np.testing.assert_array_equal(np.asarray(b), [1, 2, 3])
    out = _donate(a)
    assert a.is_deleted() and not b.is_deleted()
    np.testing.assert_array_equal(np.asarray(b), [1, 2, 3])
    np.testing.assert_array_equal(np.asarray(out), [2, 3, 4])


@pytest.mark.parametrize("make_copy", [jnp.copy, copy.deepcopy], ids=["jnp.copy", "copy.deepcopy"])
def test_donating_a_copy_leaves_the_original_usable(make_copy):
    a = jnp.array(1.5)  # weakly typed: the copy keeps that
    b = make_copy(a)
    assert b.weak_type
    np.testing.assert_array_equal(np.asarray(_donate(b)), 2.5)
    assert b.is_deleted() and not a.is_deleted()
    assert float(a) == 1.5 and float(a + 1.0) == 2.5


def test_a_copy_stays_on_the_committed_device():
    device = core.local_devices()[1]
    a = core.device_put(jnp.arange(3.0), device)
    b = jnp.copy(a)
    assert b.committed and b.device == device and _ptr(b) != _ptr(a)
    np.testing.assert_array_equal(np.asarray(b), [0.0, 1.0, 2.0])


def test_aliasing_is_kept_where_asked_for():
    a = jnp.arange(3.0)
    assert jnp.asarray(a) is a and jnp.array(a, copy=False) is a
    assert jnp.array(a, ndmin=2).shape == (1, 3)  # the reshape makes the new buffer
    assert _ptr(jnp.array(a, dtype=jnp.int32)) != _ptr(a)


def test_copy_under_transformations():
    a = jnp.arange(3.0)
    assert "copy a" in str(core.make_jaxpr(jnp.copy)(a))
    batched = core.vmap(jnp.copy)(a)
    assert batched is not a and _ptr(batched) != _ptr(a)
    np.testing.assert_array_equal(np.asarray(batched), [0.0, 1.0, 2.0])
    # d/dx sum(copy(x)^2) = 2x, through jvp and its transpose
    np.testing.assert_array_equal(np.asarray(core.grad(lambda x: (jnp.copy(x) ** 2).sum())(a)), [0.0, 2.0, 4.0])
    _, tangent = core.jvp(jnp.copy, (a,), (jnp.ones(3),))
    np.testing.assert_array_equal(np.asarray(tangent), [1.0, 1.0, 1.0])
    x, y = core.jit(lambda v: (v, jnp.copy(v)))(a)
    assert len({_ptr(a), _ptr(x), _ptr(y)}) == 3  # every program output owns its buffer


def test_copying_a_deleted_array_says_so():
    a = jnp.arange(3.0)
    a.delete()
    with pytest.raises(RuntimeError, match=r"Array has been deleted with shape=f32\[3\]"):
        jnp.copy(a)


# ----- results of creation functions are never the cache's ------------------------------------------

CREATED = {
    "jnp.zeros((), int32)": lambda: jnp.zeros((), jnp.int32),
    "jnp.ones(())": lambda: jnp.ones(()),
    "jnp.full((), 2.0, float32)": lambda: jnp.full((), 2.0, jnp.float32),
    "jnp.array(2.0, float32)": lambda: jnp.array(2.0, jnp.float32),
    "jnp.array(2.0)": lambda: jnp.array(2.0),
    "jnp.asarray(3)": lambda: jnp.asarray(3),
    "core.device_put(2.0)": lambda: core.device_put(2.0),
    "lax.full((), 1.0)": lambda: lax.full((), 1.0),
    "jnp.zeros_like(0-d)": lambda: jnp.zeros_like(jnp.ones((), jnp.int32)),
    "grad of an unused argument": lambda: core.grad(lambda x, y: x, argnums=1)(1.0, 2.0),
}


@pytest.mark.parametrize("make", CREATED.values(), ids=CREATED.keys())
def test_created_arrays_own_their_buffers(make):
    x, y = make(), make()
    assert x is not y and _ptr(x) != _ptr(y)
    assert not is_cached_buffer(x._buf)
    assert x.aval == y.aval and np.asarray(x) == np.asarray(y)


DONATED = {
    **CREATED,
    "jnp.ones(3)": lambda: jnp.ones(3),
    "jnp.full((2,), 7)": lambda: jnp.full((2,), 7),
}


@pytest.mark.parametrize("make", DONATED.values(), ids=DONATED.keys())
def test_donating_a_created_array_leaves_later_eager_constants_correct(make):
    x = make()
    expected = np.asarray(make()) + 1  # not read from x: a host read on CPU pins x's buffer
    np.testing.assert_array_equal(np.asarray(_donate(x)), expected)
    assert x.is_deleted()
    _assert_eager_constants_work()


def test_donating_a_zero_counter_in_a_state_tree():
    # the trainer's pattern: a step counter made with jnp.zeros and a state donated every step
    update = core.jit(lambda s: {"step": s["step"] + 1, "w": s["w"] * 0.5}, donate_argnums=0)
    state = {"step": jnp.zeros((), jnp.int32), "w": jnp.ones(2)}
    for _ in range(3):
        state = update(state)
    assert int(state["step"]) == 3
    np.testing.assert_array_equal(np.asarray(state["w"]), [0.125, 0.125])
    _assert_eager_constants_work()


# ----- the backstop: a cached array that still reaches the user is never deleted ---------------------

LEAKED = {
    # 0-d arrays derived unchanged from Python scalars may still be the cache's operand arrays
    "jnp.real(2.0)": lambda: jnp.real(2.0),
    "vjp primal out": lambda: core.vjp(lambda v: v, 2.0)[0],
    "the cache itself": lambda: scalar_array(2.0, jnp.float32, weak_type=False),
}


@pytest.mark.parametrize("make", LEAKED.values(), ids=LEAKED.keys())
def test_donating_a_cached_array_donates_a_copy(make):
    x = make()
    value = float(x)
    assert float(_donate(x)) == value + 1
    assert not x.is_deleted() and float(x) == value  # the cache's buffer was not given away
    both = core.jit(lambda a, b: (a + b, a - b), donate_argnums=(0, 1))
    assert [float(v) for v in both(x, x)] == [2 * value, 0.0]  # each position donates its own copy
    _assert_eager_constants_work()


def test_deleting_a_cached_array_drops_it_from_the_cache():
    x = scalar_array(2.0, jnp.float32, weak_type=False)
    x.delete()
    assert x.is_deleted()
    _assert_eager_constants_work()  # x * 2.0 on float32 uses that entry: it is made anew


def test_compiled_call_with_a_python_scalar_donates_a_copy():
    compiled = core.jit(lambda s: s * 3.0, donate_argnums=0).lower(2.0).compile()
    assert float(compiled(2.0)) == 6.0
    _assert_eager_constants_work()


def test_donated_and_kept_are_compared_by_buffer():  # F29
    x = jnp.arange(3.0)
    same_buffer = core.device_put(x, x.device)  # a committed Array of x's buffer (as JAX, it may alias)
    assert same_buffer is not x and _ptr(same_buffer) == _ptr(x)
    add = core.jit(lambda a, b: a + b, donate_argnums=0)
    with pytest.raises(RuntimeError, match=r"passed both as a donated argument and as another argument"):
        add(x, same_buffer)
    assert not x.is_deleted()


def test_jit_on_a_device_donates_a_copy_of_a_cached_array():
    # jit(device=...) wraps each argument in a committed Array of the same buffer: the check is by buffer
    step = core.jit(lambda s: s + 1, donate_argnums=0, device=core.local_devices()[0])
    x = scalar_array(5, jnp.int32, weak_type=False)
    assert int(step(x)) == 6 and int(x) == 5
    _assert_scalar_cache_intact()


# ----- pmap ------------------------------------------------------------------------------------------

def test_pmap_donation_leaves_copies_and_constants_usable():
    devices = core.local_devices()[:2]
    step = core.pmap(lambda s: s + 1, donate_argnums=0, devices=devices)
    state = core.device_put_replicated(jnp.zeros((), jnp.int32), devices)
    kept = jnp.copy(state)
    out = step(state)
    assert state.is_deleted() and not kept.is_deleted()
    np.testing.assert_array_equal(np.asarray(out), [1, 1])
    np.testing.assert_array_equal(np.asarray(kept), [0, 0])
    _assert_eager_constants_work()


def test_pmap_donating_a_broadcast_cached_array_keeps_it():
    devices = core.local_devices()[:2]
    scale = core.pmap(lambda s, x: s * x, in_axes=(None, 0), donate_argnums=0, devices=devices)
    s = jnp.real(2.0)  # may be the cache's array
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # whether the per-device copy is usable is not the point here
        out = scale(s, jnp.ones(2))
    np.testing.assert_array_equal(np.asarray(out), [2.0, 2.0])
    assert float(s) == 2.0
    _assert_eager_constants_work()
