"""The dtype lattice, weak types, x64 canonicalization, and bad dtypes (docs/reliability.md F19-F21)."""
import warnings

import ml_dtypes
import numpy as np
import pytest

import core
import core.numpy as jnp
from core import dtypes

bf16 = np.dtype(ml_dtypes.bfloat16)

# Hand-derived from JAX's documented promotion table (x64 on): (a, b) -> result
PROMOTIONS_X64 = [
    ("bool", "int8", "int8"), ("int8", "uint8", "int16"), ("uint8", "int32", "int32"),
    ("uint32", "int32", "int64"), ("uint64", "int64", "float64"), ("int64", "float16", "float16"),
    ("uint8", "bfloat16", "bfloat16"), ("bfloat16", "float16", "float32"), ("float16", "float32", "float32"),
    ("float32", "complex64", "complex64"), ("float64", "complex64", "complex128"),
    ("int32", "complex64", "complex64"), ("bool", "bool", "bool"), ("uint16", "uint32", "uint32"),
]


@pytest.mark.parametrize("a,b,expected", PROMOTIONS_X64)
def test_promote_types_matches_jax_table(x64, a, b, expected):
    a, b = np.dtype(bf16 if a == "bfloat16" else a), np.dtype(bf16 if b == "bfloat16" else b)
    expected = bf16 if expected == "bfloat16" else np.dtype(expected)
    assert jnp.promote_types(a, b) == expected
    assert jnp.promote_types(b, a) == expected


def test_x32_canonicalizes_64_bit_results():
    assert jnp.result_type(np.uint32, np.int32) == np.int32  # int64 truncated while x64 is off
    assert jnp.result_type(np.float64) == np.float32


@pytest.mark.parametrize("dtype", [np.float16, bf16, np.int8, np.uint8, np.float32, np.complex64])
def test_python_scalars_are_weak(dtype):
    x = jnp.ones(3, dtype)
    assert (x + 1).dtype == dtype if np.dtype(dtype).kind != "b" else True
    if np.dtype(dtype).kind in "fcV":
        assert (x * 2.5).dtype == dtype


def test_weak_and_strong_results():
    assert jnp.result_type(1.0) == np.float32
    assert dtypes.result_type(1.0, return_weak_type_flag=True) == (np.float32, True)
    assert dtypes.result_type(jnp.ones(2, jnp.int8), 1, return_weak_type_flag=True) == (np.int8, False)
    assert dtypes.result_type(jnp.ones(2, jnp.int8), 1.0, return_weak_type_flag=True) == (np.float32, True)
    # all-weak inputs join their strong dtypes and stay weak
    assert dtypes.promote_dtypes_weak((np.dtype(np.float16), True), (np.dtype(np.int32), True)) == (np.float16, True)
    assert jnp.array(2.0).weak_type and not jnp.array([2.0]).weak_type


def test_float64_request_warns_and_truncates_with_x64_off():
    with pytest.warns(UserWarning, match=r"Explicitly requested dtype float64 requested in array is not "
                                         r"available, and will be truncated to dtype float32.*enable_x64"):
        x = jnp.array([1.0, 2.0], dtype=np.float64)
    assert x.dtype == np.float32


def test_float64_numpy_input_is_silently_canonical():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert jnp.asarray(np.ones(2)).dtype == np.float32
        assert jnp.asarray(np.arange(2)).dtype == np.int32


def test_x64_keeps_64_bit(x64):
    assert jnp.asarray(np.ones(2)).dtype == np.float64
    assert jnp.array(1.5).dtype == np.float64
    assert (jnp.ones(2) + 1).dtype == np.float64


def test_x64_flag_from_environment():
    from tests.test_runtime import run_python
    r = run_python("import core.numpy as jnp; print(jnp.array(1.0).dtype)", PURENN_ENABLE_X64="1")
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.strip() == "float64"


@pytest.mark.parametrize("bad", [np.array(["a", "b"]), np.array([object(), 1], dtype=object)])
def test_non_numeric_dtypes_are_refused(bad):
    with pytest.raises(TypeError, match=r"only supports number and bool dtypes, got dtype"):
        jnp.asarray(bad)


def test_unknown_config_option_is_an_error():
    with pytest.raises(AttributeError, match=r"Unknown config option 'enable_x65'.*enable_x64"):
        core.config.update("enable_x65", True)


def test_scalar_types_are_dtypes_and_constructors():
    assert np.dtype(jnp.float32) == np.float32
    x = jnp.float16(1.5)
    assert isinstance(x, core.Array) and x.dtype == np.float16 and x.shape == ()
    assert jnp.dtype(jnp.bfloat16) == bf16
    assert jnp.issubdtype(jnp.bfloat16, jnp.floating) and not jnp.issubdtype(jnp.int8, jnp.floating)
    assert jnp.finfo(jnp.bfloat16).bits == 16 and jnp.iinfo(jnp.int8).max == 127
    assert jnp.can_cast(jnp.int8, jnp.int16) and not jnp.can_cast(jnp.float32, jnp.int32)


@pytest.fixture
def strict_promotion():
    core.config.update("numpy_dtype_promotion", "strict")
    try:
        yield
    finally:
        core.config.update("numpy_dtype_promotion", "standard")


@pytest.fixture
def rank_promotion():
    def set_mode(mode):
        core.config.update("numpy_rank_promotion", mode)
    yield set_mode
    core.config.update("numpy_rank_promotion", "allow")


def test_strict_dtype_promotion_refuses_mixed_array_dtypes(strict_promotion):  # F19
    with pytest.raises(dtypes.TypePromotionError, match=r"Input dtypes \('int32', 'float32'\) have no "
                                                        r"available implicit dtype promotion path.*strict"):
        jnp.ones(3, jnp.int32) + jnp.ones(3, jnp.float32)
    with pytest.raises(ValueError, match="'float32 \\(weak\\)'"):
        jnp.ones(3, jnp.int32) * 2.5  # a weak float cannot silently turn an int array into floats
    assert (jnp.ones(3, jnp.float16) * 2).dtype == np.float16  # weak scalars still adapt
    assert (jnp.ones(3) + jnp.ones(3)).dtype == np.float32


def test_rank_promotion_modes(rank_promotion):  # F18
    x, bias = jnp.ones((3, 4)), jnp.ones(4)
    rank_promotion("raise")
    with pytest.raises(ValueError, match=r"add: operands could not be broadcast together with shapes "
                                         r"\(3, 4\) \(4,\).*numpy_rank_promotion='raise'"):
        x + bias
    assert (x + 1.0).shape == (3, 4)  # scalars are not rank promotion
    assert (x + bias[None, :]).shape == (3, 4)
    rank_promotion("warn")
    with pytest.warns(UserWarning, match="numpy_rank_promotion='warn'"):
        x + bias
    with pytest.raises(ValueError, match="must be one of"):
        core.config.update("numpy_rank_promotion", "sometimes")


def test_shape_queries_and_isdtype():
    x = jnp.ones((2, 3))
    assert jnp.ndim(x) == 2 and jnp.ndim(3.0) == 0 and jnp.ndim([[1, 2]]) == 2
    assert jnp.size(x) == 6 and jnp.size(x, 1) == 3 and jnp.shape([1, 2, 3]) == (3,)
    assert jnp.isdtype(jnp.float32, "real floating") and jnp.isdtype(jnp.bfloat16, "real floating")
    assert not jnp.isdtype(jnp.int8, ("real floating", "complex floating"))
    assert jnp.isdtype(jnp.uint8, "integral") and jnp.isdtype(jnp.int16, jnp.int16)
    with pytest.raises(ValueError, match="unknown kind 'floats'"):
        jnp.isdtype(jnp.float32, "floats")
