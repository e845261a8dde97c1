"""Loop carries never change dtype silently (issue 17 item 1).

A body whose carry output has another dtype or shape than its input is a TypeError naming the
component by its pytree path, its input type and its output type, as in JAX; a weakly typed initial
carry (a Python scalar) is promoted to the body's dtype, and weak-type-only differences are allowed.
The same holds for cond/switch branch outputs and associative_scan's combining function; `map` has
no carry, so its outputs may have any dtype.
"""
import re

import numpy as np
import pytest

import core
import core.numpy as jnp
from core import lax


def _i32(v):
    return jnp.asarray(np.int32(v))


def _f32(v):
    return jnp.asarray(np.float32(v))


# ----- the three loops of the report: each used to truncate or stall, now each is a TypeError -------

def test_fori_loop_refuses_a_body_that_turns_an_int_carry_into_floats():
    # was 9: 2 * 1.5 truncated to int every step
    with pytest.raises(TypeError, match=re.escape(
            "fori_loop body function carry input and carry output must have equal types (shapes and dtypes), but "
            "they differ: the input carry c has type i32[] but the corresponding output carry component has type "
            "f32[]{weak}, so the dtypes do not match.")):
        lax.fori_loop(0, 4, lambda i, c: c * 1.5, _i32(2))


def test_fori_loop_with_traced_bounds_refuses_it_too():
    f = core.jit(lambda n: lax.fori_loop(0, n, lambda i, c: c * 1.5, _i32(2)))
    with pytest.raises(TypeError, match=r"fori_loop body function .* the input carry c has type i32\[\]"):
        f(4)


def test_scan_refuses_a_carry_that_becomes_float():
    # was (0, [0, 0, 0, 0]): 0.25 truncated away every step
    with pytest.raises(TypeError, match=re.escape(
            "scan body function carry input and carry output must have equal types (shapes and dtypes), but they "
            "differ: the input carry c has type i32[] but the corresponding output carry component has type "
            "f32[]{weak}, so the dtypes do not match.")):
        lax.scan(lambda c, x: (c + 0.25, c), _i32(0), None, length=4)


def test_while_loop_refuses_a_carry_that_becomes_float():
    # It used to run forever (c + 0.5 truncated back to c); tracing alone shows the error without
    # running anything, so this test cannot hang on a regression.
    with pytest.raises(TypeError, match=re.escape(
            "while_loop body function carry input and carry output must have equal types (shapes and dtypes), but "
            "they differ: the input carry c has type i32[] but the corresponding output carry component has type "
            "f32[]{weak}, so the dtypes do not match.")):
        core.make_jaxpr(lambda: lax.while_loop(lambda c: c < 10, lambda c: c + 0.5, _i32(0)))()


def test_the_error_names_the_component_by_its_path_and_suggests_the_fix():
    init = {"w": _f32(1.0), "n": _i32(0)}
    with pytest.raises(TypeError) as info:
        lax.fori_loop(0, 3, lambda i, val: {"w": val["w"] * 2.0, "n": val["n"] + 0.5}, init)
    msg = str(info.value)
    assert "the input carry component val['n'] has type i32[] but the corresponding output carry component " \
           "has type f32[]{weak}, so the dtypes do not match" in msg
    assert "val['w']" not in msg.split("The carry input")[0]  # only the differing component is listed
    assert "convert the output (e.g. `.astype(...)`)" in msg
    # the loop index that fori_loop carries along is not part of what the user sees
    assert "The carry input is {'n': i32[], 'w': f32[]} and the carry output is {'n': f32[]{weak}, 'w': f32[]}" \
        in msg


def test_shape_changes_are_named_too():
    with pytest.raises(TypeError, match=re.escape(
            "the input carry component carry[1] has type f32[3] but the corresponding output carry component has "
            "type f32[1,3], so the shapes do not match")):
        lax.scan(lambda carry, x: ((carry[0], carry[1][None]), x), (_i32(0), jnp.ones(3)), jnp.ones(2))


def test_fori_loop_structure_errors_show_the_users_carry_only():
    with pytest.raises(TypeError, match=re.escape(
            "fori_loop body function carry input and carry output must have the same pytree structure, but they "
            "differ: the carry input is (f32[],) and the carry output is [f32[]].")):
        lax.fori_loop(0, 2, lambda i, c: [c[0]], (_f32(1.0),))


# ----- what stays allowed -------------------------------------------------------------------------

def test_a_weak_initial_carry_is_promoted_to_the_bodys_dtype():
    out = lax.fori_loop(0, 3, lambda i, c: c + 0.5, 0)  # Python 0: weak int, promoted to float32
    assert out.dtype == np.float32 and float(out) == 1.5
    out = lax.fori_loop(0, 4, lambda i, c: c * 1.5, 2)
    assert out.dtype == np.float32 and float(out) == 2 * 1.5 ** 4


def test_weak_type_only_differences_are_allowed_and_the_carry_keeps_its_strong_type():
    # a strong float32 carry whose body returns a Python float (weak float32)
    out = lax.fori_loop(0, 3, lambda i, c: 1.0, _f32(5.0))
    assert out.dtype == np.float32 and float(out) == 1.0 and not out.weak_type
    # a weak float32 carry whose body returns a strong float32
    out, ys = lax.scan(lambda c, x: (c + x, c), 0.0, jnp.asarray(np.arange(3, dtype=np.float32)))
    assert out.dtype == np.float32 and float(out) == 3.0
    np.testing.assert_array_equal(np.asarray(ys), [0.0, 0.0, 1.0])
    out = lax.while_loop(lambda c: c < 3.0, lambda c: c + _f32(1.0), 0.5)
    assert out.dtype == np.float32 and float(out) == 3.5


def test_an_int_carry_with_an_int_body_is_unchanged():
    expected = 2
    for _ in range(4):
        expected = expected * 3 + 1
    assert int(lax.fori_loop(0, 4, lambda i, c: c * 3 + 1, _i32(2))) == expected
    assert int(core.jit(lambda n: lax.fori_loop(0, n, lambda i, c: c * 3 + 1, _i32(2)))(4)) == expected


# ----- cond / switch: branch outputs ----------------------------------------------------------------

def test_cond_names_the_branch_output_that_differs():
    x = jnp.ones(3)
    with pytest.raises(TypeError, match=re.escape(
            "true_fun and false_fun output must have identical types, got {'a': f32[3], 'b': (f32[3], f32[3])} "
            "and {'a': f32[3], 'b': (f32[3], i32[3])}: output ['b'][1] is f32[3] in true_fun but i32[3] in "
            "false_fun, so the dtypes do not match.")):
        lax.cond(True, lambda x: {"a": x, "b": (x, x)}, lambda x: {"a": x, "b": (x, x.astype(jnp.int32))}, x)
    with pytest.raises(TypeError, match=re.escape(
            "true_fun and false_fun output must have identical types, got i32[] and f32[]{weak}: the output is i32[] "
            "in true_fun but f32[]{weak} in false_fun, so the dtypes do not match.")):
        lax.cond(True, lambda c: c, lambda c: c * 1.5, _i32(2))


def test_switch_names_the_branch_output_that_differs():
    with pytest.raises(TypeError, match=re.escape(
            "branch 0 and 2 outputs must have identical types, got (f32[3], f32[3]) and (f32[3], f32[2]): output [1] "
            "is f32[3] in branch 0 but f32[2] in branch 2, so the shapes do not match.")):
        lax.switch(1, [lambda x: (x, x), lambda x: (x, x), lambda x: (x, x[:2])], jnp.ones(3))


def test_cond_branches_may_differ_in_weak_type_only():
    out = lax.cond(False, lambda: 1.0, lambda: _f32(2.0))
    assert out.dtype == np.float32 and float(out) == 2.0 and not out.weak_type


# ----- associative_scan and map ------------------------------------------------------------------

def test_associative_scan_refuses_a_dtype_changing_fn_naming_the_element():
    elems = (jnp.asarray(np.arange(4, dtype=np.float32)), jnp.asarray(np.arange(4, dtype=np.int32)))
    with pytest.raises(TypeError, match=re.escape(
            "associative_scan: fn must return values of the types of its inputs (shapes and dtypes), but they "
            "differ: fn was given elems[1] as i32[2] and returned f32[2]{weak} for it, so the dtypes do not "
            "match.")):
        lax.associative_scan(lambda a, b: (a[0] + b[0], a[1] * 1.5 + b[1]), elems)


def test_associative_scan_with_type_preserving_fn_matches_cumsum():
    x = np.arange(1, 8, dtype=np.float32)
    np.testing.assert_allclose(np.asarray(lax.associative_scan(lambda a, b: a + b, jnp.asarray(x))), np.cumsum(x))


@pytest.mark.parametrize("batch_size", [None, 2])
def test_map_outputs_may_change_dtype(batch_size):
    # map has no carry: f's output dtype is the result's dtype (int in, float out)
    out = lax.map(lambda v: v * 1.5, jnp.asarray(np.arange(5, dtype=np.int32)), batch_size=batch_size)
    assert out.dtype == np.float32
    np.testing.assert_array_equal(np.asarray(out), np.arange(5) * 1.5)
