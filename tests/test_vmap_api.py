"""`core.vmap` itself: in_axes / out_axes forms, keyword arguments, nesting, composition with jit
and differentiation (each checked against a Python loop), named-axis collectives, `jnp.vectorize`,
and the errors of docs/reliability.md F25/F26."""
import numpy as np
import pytest

import core
import core.numpy as jnp
from core import lax
from core import test_util as tu

RNG = np.random.default_rng(5)


def rand(*shape):
    return RNG.normal(size=shape).astype(np.float32)


def loop(f, *args, in_axes=0):
    """The reference: f applied to each example, stacked (in_axes: an int or None per argument)."""
    axes = in_axes if isinstance(in_axes, tuple) else (in_axes,) * len(args)
    n = next(np.shape(a)[ax] for a, ax in zip(args, axes) if ax is not None)
    outs = [f(*[a if ax is None else jnp.asarray(np.take(a, k, axis=ax)) for a, ax in zip(args, axes)])
            for k in range(n)]
    return core.tree_map(lambda *xs: np.stack([np.asarray(x) for x in xs]), *outs)


def close(a, b, tol=1e-5):
    for x, y in zip(core.tree_leaves(a), core.tree_leaves(b), strict=True):
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=tol, atol=tol)


# ----- axes specifications ----------------------------------------------------------------------------

def f2(x, y):
    return jnp.sin(x) * y + x


@pytest.mark.parametrize("in_axes", [0, (0, 0), [0, None], (None, 0), (1, 0), (-1, None), (0, -2)])
def test_in_axes_forms(in_axes):
    axes = tuple(in_axes) if isinstance(in_axes, (tuple, list)) else (in_axes, in_axes)
    shapes = {0: (4, 3), 1: (3, 4), -1: (3, 4), -2: (4, 3), None: (3,)}
    x = rand(*shapes[axes[0]])
    y = rand(*shapes[axes[1]])
    close(core.vmap(f2, in_axes=in_axes)(x, y), loop(f2, x, y, in_axes=tuple(a % 2 if a is not None else None
                                                                                 for a in axes)))


def test_in_axes_pytree_prefix_and_kwargs():
    def f(p, x, scale=1.0):
        return (p["w"] * x + p["b"]) * scale

    p = {"w": rand(3), "b": rand(5, 3)}
    x, scale = rand(5, 3), rand(5)
    got = core.vmap(f, in_axes=({"w": None, "b": 0}, 0))(p, x, scale=scale)
    want = np.stack([(p["w"] * x[k] + p["b"][k]) * scale[k] for k in range(5)])
    close(got, want)


@pytest.mark.parametrize("out_axes", [0, 1, -1, 2])
def test_out_axes(out_axes):
    x = rand(4, 2, 3)
    got = core.vmap(lambda v: v * 2, out_axes=out_axes)(x)
    close(got, np.moveaxis(x * 2, 0, out_axes))


def test_out_axes_pytree_and_none():
    x = rand(4, 3)
    c = rand(3)
    out = core.vmap(lambda v: {"a": v, "b": (v + 1, c * 2)}, out_axes={"a": 1, "b": (0, None)})(x)
    close(out["a"], x.T)
    close(out["b"][0], x + 1)
    close(out["b"][1], c * 2)
    with pytest.raises(ValueError, match=r"out_axes None, but it depends on the mapped inputs"):
        core.vmap(lambda v: v, out_axes=None)(x)


def test_unbatched_output_is_broadcast():
    out = core.vmap(lambda v: jnp.ones(2), in_axes=0)(rand(5, 3))
    assert out.shape == (5, 2)


def test_axis_size_without_mapped_inputs():
    out = core.vmap(lambda c: c + 1.0, in_axes=None, axis_size=3)(rand(2))
    assert out.shape == (3, 2)


def test_nested_vmap_is_an_outer_product():
    x, y = rand(4), rand(5)
    got = core.vmap(core.vmap(lambda a, b: a * b, in_axes=(None, 0)), in_axes=(0, None))(x, y)
    close(got, np.outer(x, y))


def test_vmap_of_python_scalars_and_size_zero():
    assert core.vmap(lambda x: x * 2.0)(np.zeros((0, 3), np.float32)).shape == (0, 3)
    close(core.vmap(lambda x, s: x * s, in_axes=(0, None))(rand(3, 2), 2.0).shape, (3, 2))


# ----- errors (docs/reliability.md F25, F26) ------------------------------------------------------------

def test_inconsistent_sizes_lists_each_argument():
    with pytest.raises(ValueError, match=r"(?s)inconsistent sizes for array axes to be mapped:\n"
                                         r"  \* one axis had size 3: axis 0 of argument x of type float32\[3\];\n"
                                         r"  \* some axes \(2 of them\) had size 4, e.g. axis 0 of argument y"):
        core.vmap(lambda x, y, z: x)(rand(3), rand(4, 2), {"a": rand(4)})
    with pytest.raises(ValueError, match=r"axis 1 of argument p\['w'\] of type float32\[2,5\]"):
        core.vmap(lambda p, y: y, in_axes=({"w": 1}, 0))({"w": rand(2, 5)}, rand(3))


def test_all_none_in_axes():
    with pytest.raises(ValueError, match="vmap must have at least one non-None value in in_axes"):
        core.vmap(f2, in_axes=None)(rand(3), rand(3))


def test_in_axes_tree_mismatch_shows_both_trees():
    with pytest.raises(ValueError, match=r"tree prefix of the corresponding value.*\{'a': 0\}.*\{'b'"):
        core.vmap(lambda d: d["b"], in_axes=({"a": 0},))({"b": rand(3)})
    with pytest.raises(ValueError, match=r"len\(in_axes\)=3, len\(args\)=2"):
        core.vmap(f2, in_axes=(0, 0, 0))(rand(3), rand(3))


def test_out_of_range_axis_names_the_argument():
    with pytest.raises(ValueError, match=r"argument y along axis 2.*rank should be at least 3, but is only 1"):
        core.vmap(f2, in_axes=(0, 2))(rand(3), rand(3))


def test_out_of_range_out_axes():
    with pytest.raises(ValueError, match=r"out_axes=3 is out of range for an output of rank 1 per example"):
        core.vmap(lambda v: v, out_axes=3)(rand(2, 4))


def test_bad_axis_spec_type():
    with pytest.raises(TypeError, match=r"in_axes must be an int, None, or .*got 'a'"):
        core.vmap(f2, in_axes=("a", 0))


def test_python_control_flow_on_a_batched_value_is_explained():
    with pytest.raises(core.errors.ConcretizationTypeError, match=r"bool\(\) was called on a batched value.*jnp.where"):
        core.vmap(lambda x: x if x > 0 else -x)(rand(3))


# ----- the composition matrix (each against a loop) ------------------------------------------------------

def g(x):
    return jnp.sum(jnp.tanh(x) ** 2) + jnp.prod(jnp.cos(x))


X = rand(6, 3)


def test_vmap_of_jit_and_jit_of_vmap():
    want = loop(g, X)
    close(core.vmap(core.jit(g))(X), want)
    close(core.jit(core.vmap(g))(X), want)
    close(core.jit(core.vmap(core.jit(g)))(X), want)


def test_vmap_of_grad_and_grad_of_vmap():
    want = loop(core.grad(g), X)
    close(core.vmap(core.grad(g))(X), want)
    close(core.jit(core.vmap(core.grad(g)))(X), want)
    # each example's gradient depends only on its own row
    close(core.grad(lambda xs: core.vmap(g)(xs).sum())(X), want)


def test_jacobians_and_hessian_agree_with_loops_and_nested_vmap():
    f = lambda x: jnp.sin(x) * jnp.sum(x ** 2)
    x = rand(3)
    # the Jacobian by a loop of jvps against basis vectors
    cols = [core.jvp(f, (x,), (np.eye(3, dtype=np.float32)[k],))[1] for k in range(3)]
    want = np.stack([np.asarray(c) for c in cols], axis=1)
    close(core.jacfwd(f)(x), want)
    close(core.jacrev(f)(x), want)
    close(core.vmap(core.jacfwd(f))(X), loop(core.jacrev(f), X))
    h = core.hessian(lambda x: jnp.sum(jnp.sin(x) * x[0]))
    close(core.vmap(h)(X), loop(h, X), tol=1e-4)


def test_seed_batched_hessians_of_the_logistic_loss():
    # per-example Hessian of the logistic loss is sigmoid'(w.x) x x^T, a hand-derived oracle
    def loss(w, x, y):
        z = jnp.dot(w, x)
        return -(y * jax_log_sigmoid(z) + (1 - y) * jax_log_sigmoid(-z))

    def jax_log_sigmoid(z):
        return -jnp.logaddexp(0.0, -z)

    w = rand(3)
    xs, ys = rand(5, 3), (RNG.random(5) > 0.5).astype(np.float32)
    hs = core.vmap(core.hessian(loss), in_axes=(None, 0, 0))(w, xs, ys)
    s = 1 / (1 + np.exp(-(xs.astype(np.float64) @ w)))
    want = (s * (1 - s))[:, None, None] * xs[:, :, None] * xs[:, None, :]
    close(hs, want, tol=1e-5)


def test_seed_vmap_predict_single():
    W1, b1, W2, b2 = rand(4, 3), rand(4), rand(2, 4), rand(2)

    def predict_single(params, x):
        (W1, b1), (W2, b2) = params
        return jnp.dot(W2, jnp.tanh(jnp.dot(W1, x) + b1)) + b2

    params = ((W1, b1), (W2, b2))
    xs = rand(7, 3)
    want = np.tanh(xs @ W1.T + b1) @ W2.T + b2
    close(core.vmap(predict_single, in_axes=(None, 0))(params, xs), want)
    close(core.jit(core.vmap(predict_single, in_axes=(None, 0)))(params, xs), want)


# ----- named axes ------------------------------------------------------------------------------------------

V = rand(5, 3)


@pytest.mark.parametrize("name, f, oracle", [
    ("psum", lambda v: lax.psum(v, "i"), lambda V: np.broadcast_to(V.sum(0), V.shape)),
    ("pmean", lambda v: v - lax.pmean(v, "i"), lambda V: V - V.mean(0)),
    ("pmax", lambda v: lax.pmax(v, "i"), lambda V: np.broadcast_to(V.max(0), V.shape)),
    ("pmin", lambda v: lax.pmin(v, "i"), lambda V: np.broadcast_to(V.min(0), V.shape)),
    ("all_gather", lambda v: lax.all_gather(v, "i"), lambda V: np.broadcast_to(V, (5,) + V.shape)),
    ("all_gather_axis1", lambda v: lax.all_gather(v, "i", axis=1), lambda V: np.broadcast_to(V.T, (5, 3, 5))),
    ("all_gather_tiled", lambda v: lax.all_gather(v, "i", tiled=True), lambda V: np.broadcast_to(V.ravel(), (5, 15))),
    ("axis_index", lambda v: lax.axis_index("i") + 0 * v[0].astype(jnp.int32), lambda V: np.arange(5)),
    ("axis_size", lambda v: v * lax.axis_size("i"), lambda V: V * 5),
])
def test_collectives_under_vmap(name, f, oracle):
    want = oracle(V.astype(np.float64))
    close(core.vmap(f, axis_name="i")(V), want)
    close(core.jit(core.vmap(f, axis_name="i"))(V), want)
    close(core.vmap(core.jit(f), axis_name="i")(V), want)


def test_collectives_with_two_named_axes():
    x = rand(2, 3)
    both = core.vmap(core.vmap(lambda v: lax.psum(v, ("i", "j")), axis_name="j"), axis_name="i")(x)
    close(both, np.full((2, 3), x.sum()))
    outer = core.vmap(core.vmap(lambda v: lax.psum(v, "i"), axis_name="j"), axis_name="i")(x)
    close(outer, np.broadcast_to(x.sum(0), (2, 3)))
    inner = core.vmap(core.vmap(lambda v: lax.psum(v, "j"), axis_name="j"), axis_name="i")(x)
    close(inner, np.broadcast_to(x.sum(1, keepdims=True), (2, 3)))


def test_gradients_through_collectives():
    # d/dx_k of sum_i x_i / psum(x): finite differences in float64 as the oracle
    def total(x):
        return core.vmap(lambda v: v / lax.psum(v, "i") + lax.pmax(v, "i") * v, axis_name="i")(x).sum()

    x = np.array([1.0, 3.0, 4.5, 2.0], np.float32)
    tu.check_grads(total, (x,), order=1, modes=("fwd", "rev"), atol=5e-2, rtol=5e-2)

    def gathered(x):
        return core.vmap(lambda v: jnp.sum(lax.all_gather(v, "i") * jnp.arange(4.0)) * v, axis_name="i")(x).sum()

    tu.check_grads(gathered, (x,), order=1, modes=("fwd", "rev"), atol=5e-2, rtol=5e-2)


def test_unbound_axis_name_lists_the_bound_names():
    with pytest.raises(NameError, match=r"unbound axis name: 'j'.*bound here are \['i'\]"):
        core.vmap(lambda v: lax.psum(v, "j"), axis_name="i")(V)
    with pytest.raises(NameError, match=r"unbound axis name: 'i'. No vmap or pmap"):
        lax.psum(1.0, "i")


# ----- jnp.vectorize ---------------------------------------------------------------------------------------

def test_vectorize_elementwise_broadcasts():
    f = jnp.vectorize(lambda a, b: a * 2 + b)
    a, b = rand(4, 1), rand(3)
    close(f(a, b), a * 2 + b)


def test_vectorize_with_signature():
    a, b = rand(2, 5, 3), rand(3)
    close(jnp.vectorize(jnp.dot, signature="(n),(n)->()")(a, b), a @ b)
    mv = jnp.vectorize(lambda m, v: m @ v, signature="(m,n),(n)->(m)")
    close(mv(rand(4, 2, 3), rand(4, 3)).shape, (4, 2))
    two = jnp.vectorize(lambda x: (x.sum(), x.max()), signature="(n)->(),()")
    s, m = two(a)
    close(s, a.sum(-1))
    close(m, a.max(-1))


def test_vectorize_excluded_and_errors():
    f = jnp.vectorize(lambda x, p: x ** p, excluded={1})
    close(f(np.arange(3.0, dtype=np.float32), 2), np.arange(3.0) ** 2)
    dot = jnp.vectorize(jnp.dot, signature="(n),(n)->()")
    with pytest.raises(ValueError, match=r"inconsistent size for core dimension 'n': 3 vs 4"):
        dot(rand(3), rand(4))
    with pytest.raises(ValueError, match="not a valid gufunc signature"):
        jnp.vectorize(jnp.dot, signature="(n)(n)->()")
    with pytest.raises(ValueError, match=r"output 0 has shape \(\), but the signature .* 1 core dimensions"):
        jnp.vectorize(jnp.sum, signature="(n)->(n)")(rand(2, 3))


# ----- the composition matrix of test_jit, with vmap added (docs/design.md, Testing) ------------------

from test_jit import FUNCTIONS  # noqa: E402  (one function per primitive family)

NOT_DIFFERENTIABLE_IN_X = {"random"}  # adds noise only: its gradient is trivially one; skip nothing else


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_composition_matrix_with_vmap(name):
    f = FUNCTIONS[name]
    xs = RNG.uniform(0.1, 1.0, (3, 4, 5)).astype(np.float32)
    want = loop(f, xs)
    close(core.vmap(f)(xs), want, tol=2e-5)
    close(core.jit(core.vmap(f))(xs), want, tol=2e-5)
    close(core.vmap(core.jit(f))(xs), want, tol=2e-5)
    close(core.vmap(f, in_axes=1, out_axes=-1)(np.moveaxis(xs, 0, 1)), np.moveaxis(want, 0, -1), tol=2e-5)
    if name in NOT_DIFFERENTIABLE_IN_X:
        return
    scalar = lambda x: jnp.sum(f(x) * jnp.arange(f(x).size).reshape(f(x).shape))
    grads = loop(core.grad(scalar), xs)
    close(core.jit(core.vmap(core.grad(scalar)))(xs), grads, tol=1e-4)
    close(core.jit(core.grad(lambda xs: core.vmap(scalar)(xs).sum()))(xs), grads, tol=1e-4)


def test_jit_inside_vmap_is_cached_per_axis_size():
    # pmean reads the axis size while the jitted function is traced: a cached trace from a vmap of
    # another size must not be reused
    f = core.jit(lambda v: v - lax.pmean(v, "i"))
    for n in (4, 6, 4):
        x = rand(n)
        close(core.vmap(f, axis_name="i")(x), x - x.mean())
