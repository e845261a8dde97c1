"""Every core.numpy test also runs under jit (issue 3): the numpy test files run again, in a
subprocess, with PURENN_TEST_UNDER_JIT=1, so each public function of core.numpy, core.numpy.linalg,
core.numpy.fft and core.scipy.special, and Array indexing, is called through core.jit
(tests/jit_harness.py says how arguments are split and which calls stay eager, and why).

One case per sampled parametrization (PURENN_NUM_GENERATED_CASES=1) bounds the time; the files run
in a few groups so that each subprocess stays well inside a test's time.
"""
import importlib
import os
import subprocess
import sys

import numpy as np
import pytest

import core
import core.numpy as jnp
import jit_harness  # tests/ is on sys.path, as for conftest

SUBPROCESS_TIMEOUT_S = 480
TESTS_DIR = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(TESTS_DIR)

GROUPS = {
    "ufuncs_creation": ["test_numpy_ufuncs.py", "test_numpy_creation.py", "test_numpy_ufunc.py"],
    "indexing_manipulation": ["test_numpy_indexing.py", "test_numpy_manipulation.py"],
    "reductions_sorting_products": ["test_numpy_reductions.py", "test_numpy_sorting.py", "test_numpy_products.py",
                                    "test_numpy_complex_order.py"],
    "linalg_fft_special": ["test_linalg.py", "test_fft.py", "test_scipy_special.py"],
    "issue16_additions": ["test_numpy_calculus.py", "test_numpy_comparison.py", "test_numpy_functional.py",
                          "test_numpy_index_tricks.py", "test_numpy_jax_style_program.py", "test_numpy_polynomial.py",
                          "test_numpy_signal.py", "test_numpy_statistics.py", "test_numpy_windows_histograms.py"],
}


def _all_numpy_test_files():
    names = sorted(os.listdir(TESTS_DIR))
    return [n for n in names if n.startswith("test_numpy_") and n.endswith(".py") and n != "test_numpy_under_jit.py"] + \
        ["test_linalg.py", "test_fft.py", "test_scipy_special.py"]


def test_groups_cover_every_numpy_test_file():
    grouped = sorted(f for files in GROUPS.values() for f in files)
    assert grouped == sorted(_all_numpy_test_files()), "add the new numpy test file to GROUPS"


@pytest.mark.parametrize("group", sorted(GROUPS))
def test_numpy_tests_pass_under_jit(group):
    env = dict(os.environ, PURENN_TEST_UNDER_JIT="1", PURENN_NUM_GENERATED_CASES="1")
    env.pop("PURENN_TEST_FULL", None)
    files = [os.path.join(TESTS_DIR, f) for f in GROUPS[group]]
    cmd = [sys.executable, "-m", "pytest", *files, "-q", "-p", "no:cacheprovider", "--tb=short", "-rfE"]
    try:
        # a hang (an endless loop while tracing, say) fails this test instead of the whole run
        proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=SUBPROCESS_TIMEOUT_S)
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        pytest.fail(f"numpy tests under jit ({group}) took over {SUBPROCESS_TIMEOUT_S} s:\n{out[-4000:]}")
    assert proc.returncode == 0, (f"numpy tests under jit ({group}) failed, exit code {proc.returncode}:\n"
                                  f"{proc.stdout[-12000:]}\n{proc.stderr[-2000:]}")


# ----- the exemption list: every call that stays eager fails clearly under jit ------------------

_X = np.arange(6.0, dtype=np.float32)
_I = np.array([1, 3], np.int32)
_B = _X > 2

# name -> (function of traced arguments, arguments, regex the error must match)
NEEDS_CONCRETE_CASES = {
    "arange": (lambda n: jnp.arange(n), (np.int32(3),), r"arange requires a concrete value.*Python number"),
    "unique": (jnp.unique, (_X,), r"concrete.*size="),
    "nonzero": (jnp.nonzero, (_X,), r"must be concrete.*size="),
    "flatnonzero": (jnp.flatnonzero, (_X,), r"must be concrete.*size="),
    "argwhere": (jnp.argwhere, (_X,), r"must be concrete.*size="),
    "where": (jnp.where, (_B,), r"must be concrete.*size="),
    "compress": (jnp.compress, (_B, _X), r"must be concrete.*size="),
    "extract": (jnp.extract, (_B, _X), r"must be concrete.*size="),
    "union1d": (jnp.union1d, (_X, _X), r"concrete.*size="),
    "intersect1d": (jnp.intersect1d, (_X, _X), r"concrete.*size="),
    "setdiff1d": (jnp.setdiff1d, (_X, _X), r"concrete.*size="),
    "setxor1d": (jnp.setxor1d, (_X, _X), r"concrete.*size="),
    "trim_zeros": (jnp.trim_zeros, (_X,), r"trim_zeros.*must be concrete"),
    "bincount": (jnp.bincount, (_I,), r"concrete.*length="),
    "repeat": (jnp.repeat, (_X[:2], _I), r"repeats must be concrete.*total_repeat_length="),
    "split": (jnp.split, (_X, _I), r"split: indices_or_sections " + "must be concrete"),
    "array_split": (jnp.array_split, (_X, _I), r"array_split: indices_or_sections must be concrete"),
    "hsplit": (jnp.hsplit, (_X, _I), r"indices_or_sections must be concrete"),
    "vsplit": (jnp.vsplit, (_X.reshape(6, 1), _I), r"indices_or_sections must be concrete"),
    "dsplit": (jnp.dsplit, (_X.reshape(1, 1, 6), _I), r"indices_or_sections must be concrete"),
    "delete": (jnp.delete, (_X, _I), r"delete: obj must be concrete"),
    "insert": (lambda x, i: jnp.insert(x, i, 0.0), (_X, _I), r"insert: obj must be concrete"),
    "tile": (jnp.tile, (_X, _I), r"tile: reps must be concrete"),
    "pad": (jnp.pad, (_X, _I), r"pad: pad_width must be concrete"),
    "reshape": (jnp.reshape, (_X, np.array([2, 3])),
                r"core.numpy.reshape requires a concrete value for the argument shape.*static_argnums"),
    "resize": (jnp.resize, (_X, np.array([2, 3])),
               r"core.numpy.resize requires a concrete value for the argument new_shape"),
    "broadcast_to": (jnp.broadcast_to, (_X, np.array([2, 6])),
                     r"core.numpy.broadcast_to requires a concrete value for the argument shape"),
    "ix_": (jnp.ix_, (_B,), r"boolean argument of jnp.ix_ must be concrete"),
    "choose": (lambda i: jnp.choose(i, [jnp.ones(2), jnp.zeros(2)]), (np.array([0, 1]),),
               r"mode='raise'.*Use mode='wrap' or mode='clip'"),
    "ravel_multi_index": (lambda i: jnp.ravel_multi_index((i, i), (4, 4)), (_I,),
                          r"mode='raise'.*Use mode='wrap' or mode='clip'"),
    "unique_values": (jnp.unique_values, (_X,), r"concrete.*size="),
    "unique_counts": (jnp.unique_counts, (_X,), r"concrete.*size="),
    "unique_inverse": (jnp.unique_inverse, (_X,), r"concrete.*size="),
    "unique_all": (jnp.unique_all, (_X,), r"concrete.*size="),
    "mask_indices": (lambda k: jnp.mask_indices(3, lambda m, _: jnp.triu(m) * k), (_X[1],), r"must be concrete.*size="),
    "roots": (jnp.roots, (_X,), r"roots\(p\) with strip_zeros=True needs concrete coefficients "
                                r"\(got a traced float32\[6\]\).*pass strip_zeros=False"),
    "polymul": (lambda a: jnp.polymul(a, a, trim_leading_zeros=True), (_X,), r"polymul.*needs concrete"),
    "polydiv": (lambda a: jnp.polydiv(a, a[:2] + 1, trim_leading_zeros=True), (_X,), r"polydiv.*needs concrete"),
    "getitem_mask": (lambda x, b: x[b], (_X, _B), r"boolean indices must be concrete.*size="),
    "at_mask": (lambda x, b: x.at[b].set(0.0), (_X, _B), r"boolean indices must be concrete.*size="),
    **{f"{name}.at": (lambda x, b, _u=name: getattr(jnp, _u).at(x, b, 2.0, inplace=False), (_X, _B),
                      r"boolean indices must be concrete.*size=") for name in jit_harness.SCATTER_AT_UFUNCS},
}


def test_every_concrete_exemption_has_an_error_case():
    assert set(jit_harness.NEEDS_CONCRETE) | {"getitem_mask", "at_mask"} == set(NEEDS_CONCRETE_CASES)


@pytest.mark.parametrize("name", sorted(NEEDS_CONCRETE_CASES))
def test_needs_concrete_calls_fail_clearly_under_jit(name):
    fn, args, pattern = NEEDS_CONCRETE_CASES[name]
    with pytest.raises(TypeError, match=pattern):
        core.jit(fn)(*args)


# ----- what running the numpy tests under jit fixed -------------------------------------------------

@pytest.mark.parametrize("reps,total", [([1, 2, 2], 7), ([1, 0, 3], 3), ([2, 0, 0], 5), ([0, 0, 0], 2), (2, 4), ([3], 5)])
def test_repeat_traced_counts_with_total_repeat_length(reps, total):
    x = np.arange(3.0, dtype=np.float32)
    out = core.jit(lambda a, r: jnp.repeat(a, r, total_repeat_length=total))(x, np.asarray(reps, np.int32))
    # oracle (JAX's rule): NumPy's repeat, cut to `total`, or padded with the last input element
    full = np.repeat(x, np.broadcast_to(np.asarray(reps), (3,)))
    expected = full[:total] if total <= full.size else np.concatenate([full, np.full(total - full.size, x[-1])])
    np.testing.assert_array_equal(np.asarray(out), expected)
    # concrete counts take the static path: the same result
    np.testing.assert_array_equal(np.asarray(jnp.repeat(x, reps, total_repeat_length=total)), expected)


def test_repeat_traced_counts_along_an_axis():
    x = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    out = core.jit(lambda a, r: jnp.repeat(a, r, axis=1, total_repeat_length=4))(x, np.array([2, 0, 2], np.int32))
    np.testing.assert_array_equal(np.asarray(out), np.repeat(x, [2, 0, 2], axis=1))
    with pytest.raises(ValueError, match=r"repeat: repeats must be an int or a 1-d array of 3 counts, got shape \(2,\)"):
        core.jit(lambda a, r: jnp.repeat(a, r, axis=1, total_repeat_length=4))(x, np.array([1, 2], np.int32))


def test_iterating_a_tracer_unstacks_its_leading_axis():
    x = np.arange(6.0, dtype=np.float32).reshape(3, 2)
    rows = core.jit(lambda a: list(a))(x)
    assert len(rows) == 3
    np.testing.assert_array_equal(np.asarray(rows[2]), x[2])
    np.testing.assert_array_equal(np.asarray(core.jit(lambda a: jnp.concatenate(a))(x)), x.reshape(-1))
    with pytest.raises(TypeError, match="iteration over a 0-d array"):
        core.jit(lambda a: list(a))(np.float32(1.0))


def test_histogram_checks_a_static_range_under_jit():
    with pytest.raises(ValueError, match=r"histogram: max must be larger than min in range parameter"):
        core.jit(lambda a: jnp.histogram(a, bins=2, range=(2.0, 1.0)))(np.ones(3, np.float32))


def test_creation_with_device_under_jit():
    out = core.jit(lambda: jnp.zeros(2, device=core.devices()[0]) + jnp.arange(2.0, device=core.devices()[0]))()
    np.testing.assert_array_equal(np.asarray(out), [0.0, 1.0])


# ----- the harness itself -----------------------------------------------------------------------------

def test_static_keys_separate_types_and_signed_zeros():
    def key(v):
        return jit_harness.encode(v, [])
    assert key(1) != key(1.0) and key(1) != key(True) and key(0.0) != key(-0.0)
    assert key([1, 2]) != key((1, 2)) and key(float("nan")) == key(float("nan"))
    assert key(np.float32(1)) != key(1.0) and key(slice(1, None)) == key(slice(1, None))


def test_encode_decode_round_trip_moves_arrays_to_leaves():
    x = np.ones(3, np.float32)
    leaves = []
    args = ([x, 2, (None, "s")], {"axis": slice(0, -1), "w": x})
    key = jit_harness.encode(args, leaves)
    assert len(leaves) == 2 and hash(key) == hash(jit_harness.encode(args, []))
    back = jit_harness.decode(key, leaves)
    assert back[0][1:] == [2, (None, "s")] and back[1]["axis"] == slice(0, -1) and back[0][0] is x


def test_proxy_calls_go_through_jit(monkeypatch):
    monkeypatch.setattr(jit_harness, "STATS", jit_harness.collections.Counter())
    proxy = jit_harness.proxy_for(jnp)
    np.testing.assert_allclose(np.asarray(proxy.sin(np.zeros(2, np.float32))), [0.0, 0.0])
    proxy.nonzero(np.array([0, 1]))  # exempt: eager
    assert proxy.float32 is jnp.float32 and proxy.linalg is jit_harness.proxy_for(jnp.linalg)
    assert dict(jit_harness.STATS) == {("sin", "jit"): 1, ("nonzero", "exempt"): 1}


def test_derivative_checks_are_left_to_the_eager_run(monkeypatch):
    import types
    from core import test_util
    eager_check = test_util.check_grads
    module = types.ModuleType("fake_numpy_test")
    module.jnp, module.check_grads = jnp, eager_check
    with monkeypatch.context() as m:
        m.setattr(jit_harness, "STATS", jit_harness.collections.Counter())
        jit_harness.install(m, module)
        assert module.jnp is jit_harness.proxy_for(jnp)
        test_util.check_grads(jnp.sin, (np.ones(2, np.float32),), order=2)
        module.check_grads(jnp.sin, (np.ones(2, np.float32),), order=2)
        assert jit_harness.STATS == {("check_grads", "eager run"): 2}
    assert test_util.check_grads is eager_check and module.check_grads is eager_check and module.jnp is jnp


@pytest.mark.parametrize("size", [2, 5, 7, 40, 1000])
def test_the_case_sampled_under_jit_is_one_the_eager_run_checks(size):
    # the harness leaves derivative checks to the eager run (PURENN_NUM_GENERATED_CASES=4 there, 1 here)
    from core import test_util
    cases = list(range(size))
    for name in ("grad_numpy_float32", "test_x[3]", "a"):
        assert set(test_util.sample_cases(cases, name, 1)) <= set(test_util.sample_cases(cases, name, 4))


def _captured_functions(obj, path, originals, out, depth=0):
    if callable(obj) and id(obj) in originals:
        out.append(f"{path} is {originals[id(obj)]}")
    elif depth < 4 and isinstance(obj, dict):
        for k, v in obj.items():
            _captured_functions(v, f"{path}[{k!r}]", originals, out, depth + 1)
    elif depth < 4 and isinstance(obj, (list, tuple)):
        for i, v in enumerate(obj):
            _captured_functions(v, f"{path}[{i}]", originals, out, depth + 1)


def test_numpy_test_files_look_functions_up_when_called():
    # A function taken from a module at import time (`TABLE = {"erf": special.erf}`, `from core.numpy
    # import sin`) escapes the per-test proxies, so it would silently never run under jit.
    originals = {id(f): f"{m.__name__}.{n}" for m in jit_harness.WRAPPED_MODULES
                 for n, f in jit_harness.public_functions(m).items()}
    found = []
    for name in sorted(f for files in GROUPS.values() for f in files):
        module = importlib.import_module(name[:-3])
        for k, v in vars(module).items():
            _captured_functions(v, f"{name}: {k}", originals, found)
    assert not found, "look these up when the test runs (getattr(module, name)):\n" + "\n".join(found)
