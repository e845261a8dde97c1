"""jax.numpy's remaining public names (issue 16): dtype aliases and ml_dtypes' narrow scalar types,
NumPy's printing names, host I/O (save/load/savez, fromstring, from_dlpack, the refused fromfile and
fromiter), and linalg's tensordot/tensorinv/tensorsolve, each against NumPy, ml_dtypes or jax 0.10.2
values recorded here (computed in the jax venv, never imported by the tests).

Not in tests/test_numpy_under_jit.py's GROUPS: files and iterators are host side effects, not traced.
"""
import io

import ml_dtypes
import numpy as np
import pytest

import core.numpy as jnp
from core import test_util as tu
from core.numpy import linalg as LA

NARROW = ["float8_e3m4", "float8_e4m3", "float8_e4m3b11fnuz", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2",
          "float8_e5m2fnuz", "float8_e8m0fnu", "float6_e2m3fn", "float6_e3m2fn", "float4_e2m1fn",
          "int4", "uint4", "int2", "uint2", "int1", "uint1"]


# ----- dtype names -----------------------------------------------------------------------------

def test_c_named_aliases_are_the_sized_scalar_types_and_build_arrays():
    # jax 0.10.2: jnp.double is jnp.float64, jnp.single is jnp.float32, jnp.csingle is jnp.complex64
    assert (jnp.double, jnp.single, jnp.cdouble, jnp.csingle) == (jnp.float64, jnp.float32, jnp.complex128,
                                                                  jnp.complex64)
    assert jnp.double is jnp.float64 and jnp.csingle is jnp.complex64
    x = jnp.single(2)
    assert isinstance(x, jnp.ndarray) and x.dtype == np.float32 and x.shape == () and float(x) == 2.0
    z = jnp.csingle(1.5)
    assert z.dtype == np.complex64 and complex(z) == 1.5
    assert (jnp.character, jnp.flexible, jnp.object_) == (np.character, np.flexible, np.object_)


@pytest.mark.parametrize("name", NARROW)
def test_narrow_scalar_types_name_ml_dtypes_dtypes(name):
    t = getattr(jnp, name)
    want = np.dtype(getattr(ml_dtypes, name))
    assert np.dtype(t) == want and jnp.dtype(t) == want and t == want
    # placed by what they hold, as jax 0.10.2's issubdtype / isdtype do (NumPy's kind is 'V')
    kind = "real floating" if name.startswith("float") else "unsigned integer" if name.startswith("u") \
        else "signed integer"
    assert jnp.isdtype(t, kind) and jnp.isdtype(t, "numeric") and not jnp.isdtype(t, "bool")
    parent = {"real floating": jnp.floating, "signed integer": jnp.signedinteger,
              "unsigned integer": jnp.unsignedinteger}[kind]
    assert jnp.issubdtype(t, parent) and jnp.issubdtype(t, jnp.number)
    assert not jnp.issubdtype(t, jnp.complexfloating)
    assert jnp.issubdtype(t, jnp.integer) == (kind != "real floating")
    info = jnp.finfo(t) if kind == "real floating" else jnp.iinfo(t)
    ref = ml_dtypes.finfo(want) if kind == "real floating" else ml_dtypes.iinfo(want)
    assert (info.max, info.min) == (ref.max, ref.min)
    v = -1 if name == "int1" else 1  # representable in every one (int1 holds -1 and 0; float8_e8m0fnu no 0)
    host = t(v)  # a host array of that dtype (purenn Arrays cannot hold it; jax.numpy gives an Array)
    assert isinstance(host, np.ndarray) and host.dtype == want and host.shape == () and float(host) == v


# jax 0.10.2, computed in the jax venv: jnp.<name>(value) as float64
NARROW_CALLS = [("int4", 3, 3.0), ("int4", 9, -7.0), ("int2", 3, -1.0), ("uint4", 1.5, 1.0),
                ("float8_e8m0fnu", 3, 4.0), ("float8_e4m3fn", 300.0, 288.0), ("float8_e4m3fn", 0.1, 0.1015625),
                ("float8_e5m2", -2.7, -2.5), ("float4_e2m1fn", -2.7, -3.0), ("float8_e4m3fnuz", 300.0, np.nan)]


def test_calling_a_narrow_type_converts_as_jax_does():
    for name, value, want in NARROW_CALLS:
        np.testing.assert_array_equal(getattr(jnp, name)(value).astype(np.float64), want, err_msg=name)
    # arrays are cast (int4 wraps), lists too; Python scalars that do not fit raise, as in JAX
    out = jnp.int4(jnp.array([1, 9, -9]))
    assert out.dtype == ml_dtypes.int4 and out.astype(int).tolist() == [1, -7, 7]
    assert jnp.uint4([1, 2, 15]).astype(int).tolist() == [1, 2, 15]
    with pytest.raises(OverflowError):
        jnp.uint4(-2.7)
    with pytest.raises(OverflowError):
        jnp.int4(300.0)
    # under a transformation there is no array to hold it: the error says why and what to do
    import core
    with pytest.raises(TypeError, match=r"jnp\.int4\(x\) of a traced f32\[2\]: purenn arrays cannot hold dtype int4"):
        core.jit(jnp.int4)(jnp.ones(2))


def test_narrow_info_matches_recorded_jax_values():
    # jax 0.10.2: jnp.iinfo(jnp.int4).max == 7, jnp.finfo(jnp.float8_e4m3fn).max == 448, uint2 max 3
    assert jnp.iinfo(jnp.int4).max == 7 and jnp.iinfo(jnp.int4).min == -8 and jnp.iinfo(jnp.uint2).max == 3
    assert float(jnp.finfo(jnp.float8_e4m3fn).max) == 448.0
    assert jnp.iinfo(jnp.int8).max == 127  # the NumPy path is unchanged


# ----- printing -----------------------------------------------------------------------------------

def test_printing_names_are_numpys_and_govern_array_printing():
    assert jnp.printoptions is np.printoptions and jnp.array_repr is np.array_repr
    assert jnp.array_str is np.array_str and jnp.ComplexWarning is np.exceptions.ComplexWarning
    x = jnp.array([1 / 3, 2.0])
    with jnp.printoptions(precision=2):
        assert jnp.get_printoptions()["precision"] == 2
        assert str(x) == "[0.33 2.  ]"
        assert jnp.array_str(np.asarray(x)) == "[0.33 2.  ]"
        assert jnp.array_repr(np.asarray(x)) == "array([0.33, 2.  ], dtype=float32)"
    before = np.get_printoptions()
    try:
        jnp.set_printoptions(precision=3)
        assert np.get_printoptions()["precision"] == 3 and str(x) == "[0.333 2.   ]"
    finally:
        np.set_printoptions(**before)


# ----- host I/O -----------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, ml_dtypes.bfloat16, np.int8])
def test_save_load_round_trip_returns_arrays_of_the_saved_dtype(dtype):
    x = jnp.array([1.5, -2.0, 3.0]).astype(dtype)
    f = io.BytesIO()
    jnp.save(f, x)
    f.seek(0)
    y = jnp.load(f)
    assert isinstance(y, jnp.ndarray) and y.dtype == np.dtype(dtype)  # bfloat16 from NumPy's 'V2'
    np.testing.assert_array_equal(np.asarray(y), np.asarray(x))


def test_load_passes_through_what_arrays_cannot_hold_and_npz_archives():
    f = io.BytesIO()
    jnp.save(f, np.array(["a", "bc"]))
    f.seek(0)
    s = jnp.load(f)
    assert isinstance(s, np.ndarray) and s.tolist() == ["a", "bc"]
    f = io.BytesIO()
    jnp.savez(f, a=jnp.arange(3), b=np.ones(2))
    f.seek(0)
    with jnp.load(f) as z:
        np.testing.assert_array_equal(z["a"], np.arange(3))
        np.testing.assert_array_equal(z["b"], np.ones(2))


def test_fromstring_matches_numpy():
    got = jnp.fromstring("0.1, 0.2, 0.3", dtype=float, count=2, sep=",")
    assert got.dtype == np.float32
    tu.assert_allclose(got, np.fromstring("0.1, 0.2, 0.3", dtype=float, count=2, sep=","))
    got = jnp.fromstring("1 2 3", dtype=jnp.int16, sep=" ")
    assert got.dtype == np.int16 and np.asarray(got).tolist() == [1, 2, 3]


def test_from_dlpack_reads_any_dlpack_producer():
    src = np.arange(6, dtype=np.float32).reshape(2, 3)
    got = jnp.from_dlpack(src)
    assert isinstance(got, jnp.ndarray) and got.dtype == np.float32
    np.testing.assert_array_equal(np.asarray(got), src)
    x = jnp.arange(3)
    assert jnp.from_dlpack(x) is x
    np.testing.assert_array_equal(np.asarray(jnp.from_dlpack(x, copy=True)), np.arange(3))
    with pytest.raises(TypeError, match=r"from_dlpack: expected an object with a __dlpack__ method.*list"):
        jnp.from_dlpack([1, 2])


def test_fromfile_and_fromiter_refuse_as_jax_does():
    with pytest.raises(NotImplementedError, match=r"jnp\.fromfile is not provided.*np\.fromfile"):
        jnp.fromfile(io.BytesIO(b"\x00" * 8), dtype=np.float32)
    with pytest.raises(NotImplementedError, match=r"jnp\.fromiter is not provided.*np\.fromiter"):
        jnp.fromiter(iter([1.0, 2.0]), float)


# ----- linalg tensor forms ------------------------------------------------------------------------

def _well_conditioned(rng, shape, rows):
    n = int(np.prod(shape[:rows]))
    return (np.eye(n) + 0.3 * rng.standard_normal((n, n))).reshape(shape)


def test_linalg_tensordot_matches_numpy():
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((2, 3, 4)), rng.standard_normal((3, 4, 5))
    tu.assert_allclose(LA.tensordot(a.astype(np.float32), b.astype(np.float32)), np.tensordot(a, b), rtol=1e-5,
                       atol=1e-5)
    tu.assert_allclose(jnp.linalg.tensordot(a, b, axes=([1], [0])), np.tensordot(a, b, axes=([1], [0])),
                       rtol=1e-5, atol=1e-5)


def test_tensorinv_matches_numpy_and_its_gradient_finite_differences():
    rng = np.random.default_rng(1)
    a = _well_conditioned(rng, (6, 2, 3), 1)
    got = LA.tensorinv(a.astype(np.float32), ind=1)
    assert got.shape == (2, 3, 6)
    tu.assert_allclose(got, np.linalg.tensorinv(a, ind=1), rtol=1e-4, atol=1e-5)
    a2 = _well_conditioned(rng, (2, 2, 4), 2)
    tu.assert_allclose(jnp.linalg.tensorinv(a2), np.linalg.tensorinv(a2), rtol=1e-4, atol=1e-5)
    tu.check_grads(lambda m: LA.tensorinv(m, ind=1), (a.astype(np.float32),), order=1, atol=2e-2, rtol=2e-2)
    with pytest.raises(ValueError, match=r"tensorinv: the first ind=1 axes.*\(2,\).*shape \(2, 3\)"):
        LA.tensorinv(np.ones((2, 3), np.float32), ind=1)


def test_tensorsolve_matches_numpy_and_its_gradient_finite_differences():
    rng = np.random.default_rng(2)
    a = _well_conditioned(rng, (2, 3, 6), 2)
    b = rng.standard_normal((2, 3))
    tu.assert_allclose(LA.tensorsolve(a.astype(np.float32), b.astype(np.float32)), np.linalg.tensorsolve(a, b),
                       rtol=1e-4, atol=1e-5)
    a_moved = np.moveaxis(a, 2, 0)  # (6, 2, 3): axes=(0,) moves axis 0 back to the end
    tu.assert_allclose(jnp.linalg.tensorsolve(a_moved, b, axes=(0,)), np.linalg.tensorsolve(a_moved, b, axes=(0,)),
                       rtol=1e-4, atol=1e-5)
    tu.check_grads(LA.tensorsolve, (a.astype(np.float32), b.astype(np.float32)), order=1, atol=2e-2, rtol=2e-2)
    with pytest.raises(ValueError, match=r"tensorsolve: after moving axes.*\(3, 2, 6\).*\(2, 3\)"):
        LA.tensorsolve(np.ones((3, 2, 6), np.float32), np.ones((2, 3), np.float32))
