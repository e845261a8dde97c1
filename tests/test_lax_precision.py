"""lax.Precision: parsed as JAX parses it, carried as the `precision` parameter of dot_general and
conv_general_dilated through jvp, transpose and vmap, lowered to StableHLO's `precision_config`,
and defaulted by the `default_matmul_precision` option and context manager. On CPU every
precision computes float32 exactly, so results are checked against NumPy float64 as usual."""
import threading

import numpy as np
import pytest

import core
import core.numpy as jnp
from core import lax
from core.lax.precision import canonicalize_precision

P = lax.Precision


def _config_text(*names):
    return "precision_config = [" + ", ".join(f"#stablehlo<precision {n}>" for n in names) + "]"


# ----- the enum and its parsing ------------------------------------------------------------------

@pytest.mark.parametrize("text, member", [
    ("default", P.DEFAULT), ("fastest", P.DEFAULT), ("bfloat16", P.DEFAULT),
    ("high", P.HIGH), ("bfloat16_3x", P.HIGH), ("tensorfloat32", P.HIGH),
    ("highest", P.HIGHEST), ("float32", P.HIGHEST)])
def test_precision_from_jax_strings(text, member):
    assert P(text) is member
    assert canonicalize_precision(text) == (member, member)


def test_precision_members_values_and_printing_as_jax():
    assert [m.value for m in P] == [0, 1, 2]
    assert P(2) is P.HIGHEST and P(None) is P.DEFAULT
    assert repr(P.HIGH) == "Precision.HIGH" and str(P.HIGH) == "HIGH"
    assert canonicalize_precision(None) is None
    assert canonicalize_precision((P.HIGH, P.HIGHEST)) == (P.HIGH, P.HIGHEST)
    assert canonicalize_precision(["default", "float32"]) == (P.DEFAULT, P.HIGHEST)
    assert hash(canonicalize_precision("high")) == hash((P.HIGH, P.HIGH))


@pytest.mark.parametrize("bad", ["hihgest", "HIGHEST", 3.5, ("high",), ("high", "high", "high"), ("high", "x"),
                                 (P.HIGH, "high")])  # JAX refuses a mixed pair too
def test_invalid_precision_raises_value_error_naming_the_value(bad):
    x = jnp.ones((2, 2))
    with pytest.raises(ValueError, match="dot_general: invalid precision") as info:
        lax.dot_general(x, x, (((1,), (0,)), ((), ())), precision=bad)
    assert "highest" in str(info.value)  # lists the accepted strings
    with pytest.raises(ValueError, match="matmul: invalid precision"):
        jnp.matmul(x, x, precision=bad)
    with pytest.raises(ValueError, match="conv_general_dilated: invalid precision"):
        lax.conv(jnp.ones((1, 1, 3)), jnp.ones((1, 1, 2)), (1,), "VALID", precision=bad)
    if isinstance(bad, str):
        with pytest.raises(ValueError, match=repr(bad)):
            P(bad)


# ----- lowering and results ------------------------------------------------------------------

def test_dot_general_lowers_precision_config_and_matches_numpy(rng):
    a = rng.standard_normal((3, 4)).astype(np.float32)
    b = rng.standard_normal((4, 5)).astype(np.float32)
    f = core.jit(lambda x, y: lax.dot_general(x, y, (((1,), (0,)), ((), ())), precision=("default", "highest")))
    text = f.lower(a, b).as_text()
    assert _config_text("DEFAULT", "HIGHEST") in text
    np.testing.assert_allclose(f(a, b), a.astype(np.float64) @ b, rtol=1e-5, atol=1e-5)
    plain = core.jit(lambda x, y: lax.dot(x, y)).lower(a, b).as_text()
    assert "precision_config" not in plain  # None: nothing written (StableHLO's DEFAULT)
    # eagerly, each precision is its own program; the results agree exactly on CPU
    for p in (None, "highest", ("high", "default")):
        np.testing.assert_array_equal(lax.dot(a, b, precision=p), lax.dot(a, b))


def test_conv_general_dilated_lowers_precision_config_and_matches_loop(rng):
    x = rng.standard_normal((1, 2, 6)).astype(np.float32)
    w = rng.standard_normal((3, 2, 3)).astype(np.float32)
    f = core.jit(lambda x, w: lax.conv_general_dilated(x, w, (1,), "VALID", precision="highest"))
    assert _config_text("HIGHEST", "HIGHEST") in f.lower(x, w).as_text()
    ref = np.zeros((1, 3, 4))
    for o in range(3):
        for i in range(4):
            ref[0, o, i] = np.sum(x[0, :, i:i + 3].astype(np.float64) * w[o])
    np.testing.assert_allclose(f(x, w), ref, rtol=1e-5, atol=1e-5)
    for wrapper in (lambda x, w: lax.conv(x, w, (1,), "VALID", precision="high"),
                    lambda x, w: lax.conv_with_general_padding(x, w, (1,), [(0, 0)], (1,), (1,), precision="high")):
        g = core.jit(wrapper)
        assert _config_text("HIGH", "HIGH") in g.lower(x, w).as_text()
        np.testing.assert_allclose(g(x, w), ref, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name, fn, shapes", [
    ("dot", lambda a, b, p: jnp.dot(a, b, precision=p), ((2, 3), (3,))),
    ("matmul", lambda a, b, p: jnp.matmul(a, b, precision=p), ((2, 2, 3), (3, 4))),
    ("einsum", lambda a, b, p: jnp.einsum("ij,jk->ik", a, b, precision=p), ((2, 3), (3, 4))),
    ("inner", lambda a, b, p: jnp.inner(a, b, precision=p), ((2, 3), (4, 3))),
    ("tensordot", lambda a, b, p: jnp.tensordot(a, b, 1, precision=p), ((2, 3), (3, 4))),
    ("vdot", lambda a, b, p: jnp.vdot(a, b, precision=p), ((2, 3), (2, 3))),
    ("vecdot", lambda a, b, p: jnp.vecdot(a, b, precision=p), ((2, 3), (2, 3))),
    ("multi_dot", lambda a, b, p: jnp.linalg.multi_dot([a, b], precision=p), ((2, 3), (3, 4))),
    ("batch_matmul", lambda a, b, p: lax.batch_matmul(a, b, precision=p), ((2, 2, 3), (2, 3, 4))),
    ("convolve", lambda a, b, p: jnp.convolve(a, b, precision=p), ((5,), (3,))),
])
def test_numpy_contractions_pass_precision_through(rng, name, fn, shapes):
    a = rng.standard_normal(shapes[0]).astype(np.float32)
    b = rng.standard_normal(shapes[1]).astype(np.float32)
    text = core.jit(lambda x, y: fn(x, y, "highest")).lower(a, b).as_text()
    assert _config_text("HIGHEST", "HIGHEST") in text, name
    np.testing.assert_allclose(fn(a, b, "highest"), fn(a, b, None), rtol=1e-6, atol=1e-6)


# ----- transformations carry the parameter ----------------------------------------------------

def _precisions(jaxpr, prim_name):
    found = []

    def walk(jaxpr):
        for eqn in jaxpr.eqns:
            if eqn.primitive.name == prim_name:
                found.append(eqn.params["precision"])
            for v in eqn.params.values():
                inner = getattr(v, "jaxpr", None)
                if inner is not None:
                    walk(inner)
    walk(jaxpr.jaxpr)
    return found


def test_grad_of_matmul_carries_precision_per_operand(rng):
    a = rng.standard_normal((3, 4)).astype(np.float32)
    b = rng.standard_normal((4, 2)).astype(np.float32)

    def loss(x, y):
        return jnp.sum(jnp.matmul(x, y, precision=("highest", "high")) ** 2)

    grads = core.grad(loss, argnums=(0, 1))(a, b)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    ct = 2 * a64 @ b64
    np.testing.assert_allclose(grads[0], ct @ b64.T, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(grads[1], a64.T @ ct, rtol=1e-5, atol=1e-5)
    # forward (HIGHEST, HIGH); each cotangent product keeps each operand's own precision: the
    # cotangent stands in for the operand being differentiated
    assert _precisions(core.make_jaxpr(core.grad(loss, argnums=0))(a, b), "dot_general") == [
        (P.HIGHEST, P.HIGH), (P.HIGHEST, P.HIGH)]   # ct(a) @ b^T: ct in a's slot
    assert _precisions(core.make_jaxpr(core.grad(loss, argnums=1))(a, b), "dot_general") == [
        (P.HIGHEST, P.HIGH), (P.HIGHEST, P.HIGH)]   # a^T @ ct(b): ct in b's slot
    tangent_text = core.jit(lambda x, t: core.jvp(lambda x: loss(x, b), (x,), (t,))).lower(a, a).as_text()
    assert tangent_text.count(_config_text("HIGHEST", "HIGH")) == 2  # primal and tangent product


def test_grad_and_vmap_of_conv_carry_precision(rng):
    x = rng.standard_normal((2, 1, 5)).astype(np.float32)
    w = rng.standard_normal((2, 1, 2)).astype(np.float32)

    def loss(x, w):
        return jnp.sum(lax.conv(x, w, (1,), "SAME", precision="highest") ** 2)

    eps = 1e-3
    gx, gw = core.grad(loss, argnums=(0, 1))(x, w)
    # central differences in float64 of the same loss, computed by NumPy
    def np_loss(x, w):
        out = np.zeros((2, 2, 5))
        xp = np.pad(x, ((0, 0), (0, 0), (0, 1)))
        for n in range(2):
            for o in range(2):
                for i in range(5):
                    out[n, o, i] = np.sum(xp[n, :, i:i + 2] * w[o])
        return np.sum(out ** 2)
    x64, w64 = x.astype(np.float64), w.astype(np.float64)
    num_gw = np.zeros_like(w64)
    for idx in np.ndindex(w.shape):
        d = np.zeros_like(w64)
        d[idx] = eps
        num_gw[idx] = (np_loss(x64, w64 + d) - np_loss(x64, w64 - d)) / (2 * eps)
    np.testing.assert_allclose(gw, num_gw, rtol=1e-3, atol=1e-3)
    jaxpr = core.make_jaxpr(core.grad(loss, argnums=(0, 1)))(x, w)
    assert _precisions(jaxpr, "conv_general_dilated") == [(P.HIGHEST, P.HIGHEST)] * 3
    batched = core.make_jaxpr(core.vmap(lambda w: lax.conv(x, w, (1,), "SAME", precision="high")))(w[None])
    assert _precisions(batched, "conv_general_dilated") == [(P.HIGH, P.HIGH)]
    assert gx.shape == x.shape


def test_vmap_of_dot_general_carries_precision(rng):
    a = rng.standard_normal((4, 2, 3)).astype(np.float32)
    b = rng.standard_normal((3, 5)).astype(np.float32)
    f = core.vmap(lambda x: lax.dot(x, b, precision=P.HIGH))
    assert _precisions(core.make_jaxpr(f)(a), "dot_general") == [(P.HIGH, P.HIGH)]
    np.testing.assert_allclose(f(a), np.einsum("nij,jk->nik", a.astype(np.float64), b), rtol=1e-5, atol=1e-5)


# ----- the config option and the context manager ---------------------------------------------

def test_default_matmul_precision_option_sets_unspecified_precisions(rng):
    a = rng.standard_normal((2, 2)).astype(np.float32)
    f = core.jit(lambda x: x @ x)
    assert "precision_config" not in f.lower(a).as_text()
    core.config.update("jax_default_matmul_precision", "tensorfloat32")
    try:
        assert core.config.default_matmul_precision == "tensorfloat32"
        assert _config_text("HIGH", "HIGH") in f.lower(a).as_text()  # traced again: part of the key
        # an explicit precision wins over the default
        g = core.jit(lambda x: jnp.matmul(x, x, precision="highest"))
        assert _config_text("HIGHEST", "HIGHEST") in g.lower(a).as_text()
        np.testing.assert_allclose(f(a), a.astype(np.float64) @ a, rtol=1e-5, atol=1e-5)
    finally:
        core.config.update("default_matmul_precision", None)
    assert "precision_config" not in f.lower(a).as_text()


def test_default_matmul_precision_context_manager_is_thread_local(rng):
    a = rng.standard_normal((2, 2)).astype(np.float32)
    f = core.jit(lambda x: lax.dot(x, x))
    seen = {}

    def other_thread():
        seen["text"] = f.lower(a).as_text()
        seen["value"] = core.config.default_matmul_precision

    with core.default_matmul_precision("float32"):
        assert core.config.default_matmul_precision == "float32"
        assert _config_text("HIGHEST", "HIGHEST") in f.lower(a).as_text()
        np.testing.assert_allclose(f(a), a.astype(np.float64) @ a, rtol=1e-5, atol=1e-5)
        t = threading.Thread(target=other_thread)
        t.start()
        t.join()
    assert seen["value"] is None and "precision_config" not in seen["text"]
    assert core.config.default_matmul_precision is None
    assert "precision_config" not in f.lower(a).as_text()


def test_default_matmul_precision_rejects_unknown_names():
    with pytest.raises(ValueError, match="default_matmul_precision.*'fast'"):
        core.config.update("default_matmul_precision", "fast")
    with pytest.raises(ValueError, match="default_matmul_precision.*'fp32'"):
        with core.default_matmul_precision("fp32"):
            pass
