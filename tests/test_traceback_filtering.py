"""purenn's own frames are cut from tracebacks at every public entry point (issue 17, item 7;
docs/reliability.md F12): eager control flow, transformations, core.numpy / core.lax functions and
the array operators. The full traceback stays chained as `__cause__`, and
PURENN_TRACEBACK_FILTERING=off keeps tracebacks whole."""
import os
import traceback

import pytest

import core
import core.numpy as jnp
from core import lax
from core.traceback_util import UnfilteredStackTrace

CORE_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "core") + os.sep


class BodyError(Exception):
    """Raised by the user's functions below, so the test knows the error is theirs."""


def user_body(*args):
    raise BodyError("raised by the user's function")


def _scan():
    return lax.scan(lambda c, x: user_body(c, x), 0.0, jnp.ones(3))


def _cond():
    return lax.cond(True, user_body, lambda x: x, 1.0)


def _while():
    return lax.while_loop(lambda c: c < 3, user_body, 0)


def _fori():
    return lax.fori_loop(0, 3, lambda i, c: user_body(c), 0.0)


def _switch():
    return lax.switch(1, [lambda x: x, user_body], 1.0)


def _map():
    return lax.map(user_body, jnp.ones(3))


def _vmap():
    return core.vmap(user_body)(jnp.ones(3))


def _grad():
    return core.grad(user_body)(1.0)


def _value_and_grad():
    return core.value_and_grad(user_body)(1.0)


def _jit():
    return core.jit(user_body)(1.0)


def _vmap_of_scan():
    return core.vmap(lambda xs: lax.scan(lambda c, x: user_body(c, x), 0.0, xs))(jnp.ones((2, 3)))


def _grad_of_cond():
    return core.grad(lambda x: lax.cond(x > 0, user_body, lambda v: v, x))(1.0)


def _tree_map():
    return core.tree_util.tree_map(user_body, {"a": 1.0})


USER_CALLBACKS = {f.__name__[1:]: f for f in [_scan, _cond, _while, _fori, _switch, _map, _vmap, _grad,
                                             _value_and_grad, _jit, _vmap_of_scan, _grad_of_cond, _tree_map]}

INTERNAL_ERRORS = {  # errors raised inside purenn by a bad call from the user
    "jnp_function": lambda: jnp.dot(jnp.ones((2, 3)), jnp.ones(4)),
    "lax_function": lambda: lax.add(jnp.ones(3), jnp.ones(4)),
    "array_operator": lambda: jnp.ones((2, 3)) + jnp.ones(4),
    "array_method": lambda: jnp.ones(6).reshape(4, 2),
    "indexing": lambda: jnp.ones(3)[jnp.ones(2)],
    "indexed_update": lambda: jnp.ones((2, 3)).at[0].add(jnp.ones(4)),
    "random": lambda: core.random.normal(core.random.PRNGKey(0), (2,), dtype=jnp.int32),
}


def _printed_frames(e):
    """The frames Python prints for the error itself (the part after its chained cause)."""
    text = "".join(traceback.format_exception(e))
    shown = text.split("The above exception was the direct cause of the following exception:")[-1]
    return [line.strip() for line in shown.splitlines() if line.strip().startswith('File "')]


def _core_frames(lines):
    return [line for line in lines if line.startswith(f'File "{CORE_DIR}')]


@pytest.mark.parametrize("name", sorted(USER_CALLBACKS))
def test_an_error_in_the_users_function_shows_the_users_frames(name):
    with pytest.raises(BodyError, match=r"^raised by the user's function$") as info:
        USER_CALLBACKS[name]()
    e = info.value
    shown = _printed_frames(e)
    assert _core_frames(shown) == [], "\n".join(shown)  # none of purenn's frames is shown
    assert any("in user_body" in line for line in shown) and any(f"in _{name}" in line for line in shown), shown
    # the whole traceback is chained, with purenn's frames and the user's
    assert isinstance(e.__cause__, UnfilteredStackTrace)
    full = traceback.extract_tb(e.__cause__.__traceback__)
    assert any(f.filename.startswith(CORE_DIR) for f in full)
    assert "user_body" in [f.name for f in full]


@pytest.mark.parametrize("name", sorted(INTERNAL_ERRORS))
def test_an_error_raised_inside_purenn_shows_only_the_call(name):
    with pytest.raises(Exception) as info:
        INTERNAL_ERRORS[name]()
    e = info.value
    frames = traceback.extract_tb(e.__traceback__)
    assert not [f for f in frames if f.filename.startswith(CORE_DIR)], traceback.format_list(frames)
    assert frames[-1].filename == __file__.removesuffix("c") and frames[-1].name == "<lambda>"
    assert isinstance(e.__cause__, UnfilteredStackTrace)


def test_filtering_off_keeps_the_whole_traceback(monkeypatch):
    monkeypatch.setenv("PURENN_TRACEBACK_FILTERING", "off")
    with pytest.raises(BodyError) as info:
        _scan()
    frames = traceback.extract_tb(info.value.__traceback__)
    assert len([f for f in frames if f.filename.startswith(CORE_DIR)]) >= 3
    assert info.value.__cause__ is None


def test_public_functions_stay_picklable_and_identical_across_namespaces():
    import pickle
    assert pickle.loads(pickle.dumps(jnp.sin)) is jnp.sin
    assert pickle.loads(pickle.dumps(lax.scan)) is lax.scan
    assert core.tree_map is core.tree_util.tree_map
    assert jnp.sin.__name__ == "sin" and "numpy.sin" in jnp.sin.__doc__
