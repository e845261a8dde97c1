"""Dot algorithms as `precision=` of dot_general and the products built on it
(`lax.DotAlgorithm`, `lax.DotAlgorithmPreset`), lowered to StableHLO's `algorithm` attribute, and
JAX's `lax.AccuracyMode` / `lax.Tolerance` types, against NumPy in float64 on rounded operands."""
import ml_dtypes
import numpy as np
import pytest

import core
import core.numpy as jnp
from core import lax

P = lax.DotAlgorithmPreset
F8 = [P.ANY_F8_ANY_F8_F32, P.ANY_F8_ANY_F8_F32_FAST_ACCUM, P.ANY_F8_ANY_F8_ANY, P.ANY_F8_ANY_F8_ANY_FAST_ACCUM]


def _operands():
    rng = np.random.default_rng(7)
    return rng.standard_normal((4, 8)).astype(np.float32), rng.standard_normal((8, 3)).astype(np.float32)


def _f64(x, dtype=np.float64):
    return x.astype(dtype).astype(np.float64)


def test_every_preset_cpu_runs_computes_the_product_of_its_rounded_operands():
    a, b = _operands()
    exact = _f64(a) @ _f64(b)
    f16 = _f64(a, np.float16) @ _f64(b, np.float16)
    for preset in P:
        if preset in F8:
            continue
        out = np.asarray(lax.dot(a, b, precision=preset))
        assert out.dtype == np.float32, preset
        if preset.name.startswith("F16"):  # float32 operands are converted to float16 first, as in JAX
            np.testing.assert_allclose(out, f16, atol=3e-3 if preset is P.F16_F16_F16 else 1e-6, err_msg=str(preset))
            assert np.abs(out - exact).max() > 1e-4  # really rounded
        elif preset is P.BF16_BF16_BF16:  # float32 storage is accepted, the accumulator is bfloat16
            np.testing.assert_allclose(out, exact, atol=0.05, err_msg=str(preset))
        else:  # XLA on CPU computes float32 (and wider) exactly at each of these
            np.testing.assert_allclose(out, exact, rtol=1e-5, atol=1e-5, err_msg=str(preset))


def test_the_algorithm_is_lowered_as_the_stablehlo_attribute():
    a, b = _operands()
    text = core.jit(lambda x, y: lax.dot(x, y, precision="BF16_BF16_F32_X3")).lower(a, b).as_text()
    assert ("#stablehlo.dot_algorithm<lhs_precision_type = bf16, rhs_precision_type = bf16, accumulation_type = f32, "
            "lhs_component_count = 1, rhs_component_count = 1, num_primitive_operations = 3") in text
    assert "precision_config" not in text
    # DEFAULT is no attribute at all
    assert "dot_algorithm" not in core.jit(lambda x, y: lax.dot(x, y, precision=P.DEFAULT)).lower(a, b).as_text()


def test_a_dot_algorithm_tuple_bfloat16_inputs_and_jnp_products():
    a, b = _operands()
    a16, b16 = a.astype(np.float16), b.astype(np.float16)
    alg = lax.DotAlgorithm(np.float16, np.float16, np.float32)
    out = lax.dot_general(a16, b16, (((1,), (0,)), ((), ())), precision=alg, preferred_element_type=np.float32)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, _f64(a16) @ _f64(b16), rtol=1e-6)
    abf = a.astype(ml_dtypes.bfloat16)
    out = lax.dot(abf, abf.T, precision=P.BF16_BF16_F32, preferred_element_type=np.float32)
    np.testing.assert_allclose(out, _f64(abf) @ _f64(abf).T, rtol=1e-6)
    np.testing.assert_allclose(jnp.matmul(a, b, precision="F16_F16_F32"), _f64(a, np.float16) @ _f64(b, np.float16),
                               rtol=1e-5)
    np.testing.assert_allclose(jnp.einsum("ij,jk->ik", a, b, precision=P.F32_F32_F32), _f64(a) @ _f64(b), rtol=1e-5)


def test_gradients_keep_the_algorithm():
    a, b = _operands()
    g = core.grad(lambda x: jnp.sum(lax.dot(x, b, precision=P.F16_F16_F32) * 1.0))(a)
    # the cotangent product runs with the same algorithm: ones @ b^T with b rounded to float16
    np.testing.assert_allclose(g, np.ones((4, 3)) @ _f64(b, np.float16).T, rtol=1e-6)
    jaxpr = core.make_jaxpr(core.grad(lambda x: jnp.sum(lax.dot(x, b, precision="F32_F32_F32"))))(a)
    assert all(e.params["precision"] is P.F32_F32_F32 for e in jaxpr.eqns if e.primitive.name == "dot_general")


def test_errors_name_the_preset_and_the_fix():
    a, b = _operands()
    for preset in F8:
        with pytest.raises(ValueError, match=f"{preset.name} needs float8 operands, got float32 and float32"):
            lax.dot(a, b, precision=preset)
    with pytest.raises(ValueError, match="conv_general_dilated: a dot algorithm .* give a lax.Precision here"):
        lax.conv_general_dilated(np.ones((1, 1, 4), np.float32), np.ones((1, 1, 2), np.float32), (1,), "VALID",
                                 precision=P.F32_F32_F32)
    with pytest.raises(ValueError, match="invalid precision 'F33_F32_F32'"):
        lax.dot(a, b, precision="F33_F32_F32")


def test_accuracy_mode_and_tolerance():
    assert lax.AccuracyMode.HIGHEST.value == 1 and lax.AccuracyMode.DEFAULT.value == 2
    t = lax.Tolerance(atol=1e-6, rtol=1e-3)
    assert (t.atol, t.rtol, t.ulps) == (1e-6, 1e-3, 0)
    with pytest.raises(ValueError, match="at least one of atol, rtol or ulps"):
        lax.Tolerance()
    with pytest.raises(ValueError, match="must be non-negative"):
        lax.Tolerance(ulps=-1)
