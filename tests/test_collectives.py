"""Collectives over named axes (core/lax/parallel.py): every collective under `vmap(axis_name=...)`
and under `pmap` on 1, 2 and 4 devices, each against NumPy loops over the stacked inputs; their
derivatives (finite differences, the inner-product identity, and per-example `grad` under
vmap/pmap equal to `grad` of the summed mapped function); collectives over the outer of two
named axes; the StableHLO ops the pmap lowering emits; and the error messages."""
import numpy as np
import pytest

import core
import core.numpy as jnp
from core import lax
from core import test_util as tu
from core.avals import ShapedArray
from core.interpreters import lowering
from core.lax import parallel

N_DEVICES = core.local_device_count()


def needs(n):
    return pytest.mark.skipif(n > N_DEVICES, reason=f"needs {n} CPU devices (PURENN_NUM_CPU_DEVICES={n}), "
                                                    f"have {N_DEVICES}")


# ----- the oracles: loops over the examples of the stacked input V (examples along axis 0) ---------------

def _each(V, out):
    return np.stack([out] * V.shape[0])


def gather_oracle(axis, tiled):
    def oracle(V):
        one = np.concatenate(list(V), axis=axis) if tiled else np.stack(list(V), axis=axis)
        return _each(V, one)
    return oracle


def scatter_oracle(dim, tiled):
    def oracle(V):
        n, total = V.shape[0], V.sum(0)
        if tiled:
            return np.stack(np.split(total, n, axis=dim))
        return np.stack([np.take(total, i, axis=dim) for i in range(n)])
    return oracle


def a2a_oracle(split, concat, tiled):
    def oracle(V):
        n = V.shape[0]
        outs = []
        for d in range(n):  # example d receives part d of every example s, in the order of s
            if tiled:
                outs.append(np.concatenate([np.split(V[s], n, axis=split)[d] for s in range(n)], axis=concat))
            else:
                outs.append(np.stack([np.take(V[s], d, axis=split) for s in range(n)], axis=concat))
        return np.stack(outs)
    return oracle


def permute_oracle(perm_of):
    def oracle(V):
        out = np.zeros_like(V)
        for s, t in perm_of(V.shape[0]):
            out[t] = V[s]
        return out
    return oracle


def cycle(n):
    return [(i, (i + 1) % n) for i in range(n)]


def first_to_last(n):
    return [(0, n - 1)]


# name: (per-example shape given the axis size n, per-example function, oracle on the stacked V)
CASES = {
    "psum": (lambda n: (2, 3), lambda v: lax.psum(v, "i"), lambda V: _each(V, V.sum(0))),
    "pmean": (lambda n: (3,), lambda v: v - lax.pmean(v, "i"), lambda V: V - V.mean(0)),
    "pmax": (lambda n: (2, 3), lambda v: lax.pmax(v, "i"), lambda V: _each(V, V.max(0))),
    "pmin": (lambda n: (3,), lambda v: lax.pmin(v, "i"), lambda V: _each(V, V.min(0))),
    "all_gather": (lambda n: (2, 3), lambda v: lax.all_gather(v, "i"), gather_oracle(0, False)),
    "all_gather_axis2": (lambda n: (2, 3), lambda v: lax.all_gather(v, "i", axis=2), gather_oracle(2, False)),
    "all_gather_tiled1": (lambda n: (2, 3), lambda v: lax.all_gather(v, "i", axis=1, tiled=True),
                          gather_oracle(1, True)),
    "axis_index": (lambda n: (2,), lambda v: lax.axis_index("i") + jnp.zeros(v.shape, jnp.int32),
                   lambda V: np.broadcast_to(np.arange(V.shape[0])[:, None], V.shape)),
    "axis_size": (lambda n: (2,), lambda v: v * lax.axis_size("i"), lambda V: V * V.shape[0]),
    "psum_scatter": (lambda n: (n, 3), lambda v: lax.psum_scatter(v, "i"), scatter_oracle(0, False)),
    "psum_scatter_dim1": (lambda n: (2, n), lambda v: lax.psum_scatter(v, "i", scatter_dimension=-1),
                          scatter_oracle(1, False)),
    "psum_scatter_tiled1": (lambda n: (2, 2 * n), lambda v: lax.psum_scatter(v, "i", scatter_dimension=1, tiled=True),
                            scatter_oracle(1, True)),
    "all_to_all_0_1": (lambda n: (n, 3), lambda v: lax.all_to_all(v, "i", 0, 1), a2a_oracle(0, 1, False)),
    "all_to_all_2_0": (lambda n: (2, 3, n), lambda v: lax.all_to_all(v, "i", 2, 0), a2a_oracle(2, 0, False)),
    "all_to_all_1_1": (lambda n: (2, n), lambda v: lax.all_to_all(v, "i", 1, 1), a2a_oracle(1, 1, False)),
    "all_to_all_tiled_0_1": (lambda n: (2 * n, 3), lambda v: lax.all_to_all(v, "i", 0, 1, tiled=True),
                             a2a_oracle(0, 1, True)),
    "all_to_all_tiled_1_0": (lambda n: (3, 2 * n), lambda v: lax.all_to_all(v, "i", -1, 0, tiled=True),
                             a2a_oracle(1, 0, True)),
    "all_to_all_tiled_1_1": (lambda n: (2, 2 * n), lambda v: lax.all_to_all(v, "i", 1, 1, tiled=True),
                             a2a_oracle(1, 1, True)),
    "ppermute_cycle": (lambda n: (2, 3), lambda v: lax.ppermute(v, "i", cycle(lax.axis_size("i"))),
                       permute_oracle(cycle)),
    "ppermute_partial": (lambda n: (3,), lambda v: lax.ppermute(v, "i", first_to_last(lax.axis_size("i"))),
                         permute_oracle(first_to_last)),
}
NAMES = list(CASES)


def stacked(name, n, dtype=np.float32):
    shape_of, f, oracle = CASES[name]
    rng = np.random.default_rng(tu.seed_for(f"{name}-{n}"))
    V = tu.rand(rng, (n, *shape_of(n)), dtype)
    return V, f, oracle


@pytest.mark.parametrize("n", [1, 3, 4])
@pytest.mark.parametrize("name", NAMES)
def test_under_vmap(name, n):
    V, f, oracle = stacked(name, n)
    want = oracle(V.astype(np.float64))
    tu.assert_allclose(core.vmap(f, axis_name="i")(V), want, np.float32)
    if n == 4:
        tu.assert_allclose(core.jit(core.vmap(f, axis_name="i"))(V), want, np.float32)


@pytest.mark.parametrize("name", NAMES)
def test_under_vmap_batch_axis_elsewhere_or_unbatched(name):
    V, f, oracle = stacked(name, 4)
    want = oracle(V.astype(np.float64))
    # the examples along axis 1 of the argument: the rules see a batch axis that is not in front
    moved = np.moveaxis(V, 0, 1)
    tu.assert_allclose(core.vmap(f, in_axes=1, axis_name="i")(moved), want, np.float32)
    # one value shared by every example (the rules see an unbatched operand)
    same = np.broadcast_to(V[:1], V.shape)
    got = core.vmap(f, in_axes=None, axis_size=4, axis_name="i")(V[0])
    tu.assert_allclose(got, oracle(same.astype(np.float64)), np.float32)


@pytest.mark.parametrize("n", [1, 2, 4])
@pytest.mark.parametrize("name", NAMES)
def test_under_pmap(name, n):
    if n > N_DEVICES:
        pytest.skip(f"needs {n} CPU devices (PURENN_NUM_CPU_DEVICES={n}), have {N_DEVICES}")
    V, f, oracle = stacked(name, n)
    tu.assert_allclose(core.pmap(f, axis_name="i")(V), oracle(V.astype(np.float64)), np.float32)


@pytest.mark.parametrize("dtype", [np.int32, np.bool_])
@pytest.mark.parametrize("name", ["pmax", "pmin", "all_gather_tiled1", "all_to_all_0_1", "ppermute_partial",
                                  "psum_scatter_tiled1"])
def test_integer_and_bool_values(name, dtype):
    n = min(2, N_DEVICES)
    V, f, oracle = stacked(name, n, dtype)
    counted = name == "psum_scatter_tiled1"  # a sum: bools are counted, in int32
    want = oracle(V.astype(np.int32) if counted else V).astype(np.int32 if counted else dtype)
    for mapped in (core.vmap, core.pmap):
        out = mapped(f, axis_name="i")(V)
        assert out.dtype == want.dtype
        tu.assert_allclose(out, want, dtype)


def test_psum_counts_bools_as_int32():
    V = np.array([[True, False], [True, True]])
    n = min(2, N_DEVICES)
    for mapped in (core.vmap, core.pmap):
        out = mapped(lambda v: lax.psum(v, "i"), axis_name="i")(V[:n])
        assert out.dtype == np.int32
        tu.assert_allclose(out, np.broadcast_to(V[:n].sum(0), (n, 2)).astype(np.int32))


# ----- two named axes: collectives over the outer one (the inner vmap passes them through) --------------

@pytest.mark.parametrize("name", ["psum", "pmax", "all_gather_axis2", "all_gather_tiled1", "axis_index",
                                  "psum_scatter_dim1", "psum_scatter_tiled1", "all_to_all_2_0",
                                  "all_to_all_tiled_0_1", "ppermute_cycle", "ppermute_partial"])
def test_collective_over_the_outer_of_two_axes(name):
    n, m = min(4, N_DEVICES), 3
    shape_of, f, oracle = CASES[name]
    rng = np.random.default_rng(tu.seed_for(name))
    V = tu.rand(rng, (n, m, *shape_of(n)), np.float32)  # [i, j, ...]
    want = np.stack([oracle(V[:, j].astype(np.float64)) for j in range(m)], axis=1)
    inner = core.vmap(f, axis_name="j")
    tu.assert_allclose(core.vmap(inner, axis_name="i")(V), want, np.float32)
    tu.assert_allclose(core.pmap(inner, axis_name="i")(V), want, np.float32)
    # the inner vmap mapping the examples' axis 1: its batch axis is not in front either
    inner1 = core.vmap(f, in_axes=1, out_axes=1, axis_name="j")
    tu.assert_allclose(core.pmap(inner1, axis_name="i")(np.moveaxis(V, 1, 2)), np.moveaxis(want, 1, 2), np.float32)


def test_psum_over_both_axes_and_index_in_pmap_of_vmap():
    n, m = min(4, N_DEVICES), 3
    V = np.arange(n * m * 2, dtype=np.float32).reshape(n, m, 2)
    both = core.pmap(core.vmap(lambda v: lax.psum(v, ("i", "j")), axis_name="j"), axis_name="i")(V)
    tu.assert_allclose(both, np.broadcast_to(V.sum((0, 1)), V.shape))
    idx = core.pmap(core.vmap(lambda v: lax.axis_index("i") * 10 + lax.axis_index("j"), axis_name="j"),
                    axis_name="i")(V)
    tu.assert_allclose(idx, np.arange(n)[:, None] * 10 + np.arange(m)[None, :])


def test_collectives_inside_scan_cond_and_jit_under_pmap():
    # the lowering rules run inside the regions of control flow and inlined jit programs too;
    # vmap (checked against NumPy above) is the reference
    n = min(4, N_DEVICES)

    def body(v):
        def step(c, _):
            shifted = lax.ppermute(c, "i", cycle(n))
            return shifted + lax.psum_scatter(jnp.ones((n,)), "i"), lax.axis_index("i")

        c, idx = lax.scan(step, v, None, length=3)
        c2 = lax.cond(c.sum() > 0, lambda a: lax.all_to_all(jnp.stack([a] * n), "i", 0, 0),
                      lambda a: jnp.zeros((n, 2)), c)
        return c, idx, c2, core.jit(lambda a: lax.pmax(a, "i"))(v)

    X = np.arange(2 * n, dtype=np.float32).reshape(n, 2)
    want = core.vmap(body, axis_name="i")(X)
    tu.assert_allclose(want[0], np.stack([np.roll(X, 3, axis=0)[i] + 3 * n for i in range(n)]))
    for got, expected in zip(core.pmap(body, axis_name="i")(X), want, strict=True):
        tu.assert_allclose(got, expected)


# ----- derivatives ------------------------------------------------------------------------------------------

GRAD_NAMES = ["psum", "pmean", "pmax", "pmin", "all_gather_axis2", "all_gather_tiled1", "psum_scatter",
              "psum_scatter_tiled1", "all_to_all_0_1", "all_to_all_2_0", "all_to_all_tiled_1_0",
              "ppermute_cycle", "ppermute_partial"]


def _objective(f):
    # a per-example scalar that is nonlinear in the collective's result, weighted per example
    def g(v, w):
        return jnp.sum(jnp.sin(f(v)) * w)
    return g


@pytest.mark.parametrize("name", GRAD_NAMES)
def test_grads_under_vmap(name):
    n = 4
    V, f, _ = stacked(name, n)
    W = tu.rand(np.random.default_rng(1), core.eval_shape(core.vmap(f, axis_name="i"), V).shape, np.float32)
    g = _objective(f)

    def total(X):
        return core.vmap(g, axis_name="i")(X, W).sum()

    # forward mode against central differences, reverse mode by the inner-product identity
    tu.check_grads(total, (V,), order=1, modes=("fwd", "rev"), atol=5e-2, rtol=5e-2)
    # a per-example gradient through a collective is the gradient of the sum over the examples
    want = core.grad(total)(V)
    tu.assert_allclose(core.vmap(core.grad(g), axis_name="i")(V, W), want, np.float32, atol=1e-5, rtol=1e-5)
    _, tangent = core.jvp(total, (V,), (np.ones_like(V),))
    tu.assert_allclose(tangent, np.sum(want), np.float32, atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize("name", GRAD_NAMES)
def test_grads_under_pmap(name):
    n = min(4, N_DEVICES)
    V, f, _ = stacked(name, n)
    W = tu.rand(np.random.default_rng(1), core.eval_shape(core.vmap(f, axis_name="i"), V).shape, np.float32)
    g = _objective(f)
    want = core.grad(lambda X: core.vmap(g, axis_name="i")(X, W).sum())(V)
    tu.assert_allclose(core.pmap(core.grad(g), axis_name="i")(V, W), want, np.float32, atol=1e-5, rtol=1e-5)
    through_pmap = core.grad(lambda X: core.pmap(g, axis_name="i")(X, W).sum())(V)
    tu.assert_allclose(through_pmap, want, np.float32, atol=1e-5, rtol=1e-5)


def test_hand_derived_transposes():
    # the transposes: psum_scatter <-> all_gather, all_to_all with its axes swapped, ppermute inverted
    V = np.arange(12, dtype=np.float32).reshape(3, 4)  # 3 examples, 4 elements each
    C = np.arange(3, dtype=np.float32)[:, None] * 100

    def pullback(f, x, ct):
        return core.vjp(lambda X: core.vmap(f, axis_name="i")(X), x)[1](ct)[0]

    # example i keeps element i of the total: every example's input gets all the cotangents
    got = pullback(lambda v: lax.psum_scatter(v[:3], "i"), V, np.array([1.0, 2.0, 3.0], np.float32))
    tu.assert_allclose(got, np.concatenate([np.tile([1.0, 2.0, 3.0], (3, 1)), np.zeros((3, 1))], 1))
    # ppermute's cotangent travels back: example s receives what its destination got
    got = pullback(lambda v: lax.ppermute(v, "i", [(0, 2), (2, 1)]), V, V + C)
    want = np.stack([(V + C)[2], np.zeros(4), (V + C)[1]])
    tu.assert_allclose(got, want)
    # all_to_all here swaps the example axis with the split axis (a matrix transpose), so its
    # pullback transposes the cotangent back
    sq = np.arange(9, dtype=np.float32).reshape(3, 3)
    tu.assert_allclose(core.vmap(lambda v: lax.all_to_all(v, "i", 0, 0), axis_name="i")(sq), sq.T)
    tu.assert_allclose(pullback(lambda v: lax.all_to_all(v, "i", 0, 0), sq, C + sq), (C + sq).T)


def test_axis_index_has_zero_derivative():
    def f(x):
        return core.vmap(lambda v: v * lax.axis_index("i").astype(jnp.float32), axis_name="i")(x).sum()
    tu.assert_allclose(core.grad(f)(np.ones(3, np.float32)), np.arange(3.0))


# ----- the lowering for pmap ---------------------------------------------------------------------------------

def _lower(prim, aval, params, axis_env):
    m = lowering.ModuleBuilder("t", axis_env=axis_env)
    f = m.func("main", [aval] if aval is not None else [])
    avals_out = [prim.abstract_eval(*([aval] if aval is not None else []), **params)]
    avals_out = avals_out[0] if isinstance(avals_out[0], list) else avals_out
    lowering.lower_equation(f, prim, f.args, [aval] if aval is not None else [], avals_out, params)
    return "\n".join(f.lines)


X4 = ShapedArray((4, 2), np.dtype(np.float32))
LOWERINGS = [
    (parallel.psum_p, X4, {"axis_name": ("i",)}, ["stablehlo.all_reduce", "stablehlo.add"]),
    (parallel.pmax_p, X4, {"axis_name": ("i",)}, ["stablehlo.all_reduce", "stablehlo.maximum"]),
    (parallel.pmin_p, X4, {"axis_name": ("i",)}, ["stablehlo.all_reduce", "stablehlo.minimum"]),
    (parallel.all_gather_p, X4, {"axis_name": ("i",), "axis": 1, "tiled": False, "axis_size": 4},
     ["stablehlo.all_gather", "all_gather_dim = 1 : i64"]),
    (parallel.psum_scatter_p, X4, {"axis_name": ("i",), "scatter_dimension": 0, "tiled": False, "axis_size": 4},
     ["stablehlo.reduce_scatter", "scatter_dimension = 0 : i64"]),
    (parallel.all_to_all_p, X4, {"axis_name": ("i",), "split_axis": 0, "concat_axis": 1, "axis_size": 4},
     ["stablehlo.all_to_all", "split_dimension = 0 : i64", "concat_dimension = 1 : i64", "split_count = 4 : i64"]),
    (parallel.ppermute_p, X4, {"axis_name": ("i",), "perm": ((0, 1), (1, 0))},
     ["stablehlo.collective_permute", "source_target_pairs = dense<[[0, 1], [1, 0]]> : tensor<2x2xi64>"]),
    (parallel.axis_index_p, None, {"axis_name": ("i",)}, ["stablehlo.replica_id"]),
]


@pytest.mark.parametrize("prim, aval, params, fragments", LOWERINGS, ids=[p[0].name for p in LOWERINGS])
def test_lowering_emits_the_cross_replica_op(prim, aval, params, fragments):
    text = _lower(prim, aval, params, {"i": 4})
    for fragment in fragments:
        assert fragment in text, text
    if prim is not parallel.axis_index_p and prim is not parallel.ppermute_p:
        assert "replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>" in text, text
    # outside a pmap, or in a pmap over another axis, the axis is unbound
    for env in (None, {"j": 4}):
        with pytest.raises(NameError, match=rf"{prim.name} over axis \('i',\) cannot be compiled: the axis is not "
                                            "bound"):
            _lower(prim, aval, params, env)


def test_leaked_collective_cannot_be_compiled():
    # a program traced where the axis was bound, then run outside it
    from core.interpreters import batching
    from core.interpreters.evaluation import eval_jaxpr
    with batching.binding_axis(batching.AxisData("i", 2)):
        closed = core.make_jaxpr(lambda u: lax.ppermute(u, "i", [(0, 1)]))(np.ones(3, np.float32))
    with pytest.raises(NameError, match=r"ppermute over axis \('i',\) cannot be compiled"):
        core.jit(lambda u: eval_jaxpr(closed.jaxpr, closed.consts, u)[0])(np.ones(3, np.float32))


# ----- errors ----------------------------------------------------------------------------------------------

def _vmapped(f, n=4, shape=(4, 3)):
    return core.vmap(f, axis_name="i")(np.ones((n, *shape), np.float32))


@pytest.mark.parametrize("perm, pattern", [
    ([(0, 1), (0, 2)], r"ppermute: perm sources and destinations must be unique, got perm=\(\(0, 1\), \(0, 2\)\)"),
    ([(0, 1), (2, 1)], r"sources and destinations must be unique"),
    ([(0, 4)], r"ppermute: perm indices must be in range\(0, 4\) \(the size of axis 'i'\), got 4"),
    ([(-1, 0)], r"must be in range\(0, 4\).*got -1"),
])
def test_ppermute_perm_errors(perm, pattern):
    with pytest.raises(ValueError, match=pattern):
        _vmapped(lambda v: lax.ppermute(v, "i", perm))


def test_ppermute_perm_must_be_pairs():
    with pytest.raises(TypeError, match=r"ppermute: perm must be a sequence of \(source, destination\) pairs"):
        _vmapped(lambda v: lax.ppermute(v, "i", [0, 1]))


@pytest.mark.parametrize("f, error, pattern", [
    (lambda v: lax.psum_scatter(v, "i", scatter_dimension=1), ValueError,
     r"psum_scatter requires the size of scatter_dimension 1 of the operand \(shape \(4, 3\)\) to equal the size of "
     r"axis 'i', 4; or pass tiled=True"),
    (lambda v: lax.psum_scatter(v, "i", scatter_dimension=1, tiled=True), ValueError,
     r"psum_scatter with tiled=True requires the size of scatter_dimension 1 .*shape \(4, 3\).* divisible by the "
     r"size of axis 'i', 4"),
    (lambda v: lax.psum_scatter(v, "i", scatter_dimension=2), ValueError,
     r"psum_scatter: scatter_dimension 2 is out of range for an operand of shape \(4, 3\)"),
    (lambda v: lax.all_to_all(v, "i", 1, 0), ValueError,
     r"all_to_all requires the size of split_axis 1 of the operand \(shape \(4, 3\)\) to equal the size of axis "
     r"'i', 4; or pass tiled=True"),
    (lambda v: lax.all_to_all(v, "i", 1, 0, tiled=True), ValueError,
     r"all_to_all with tiled=True requires the size of split_axis 1 .* divisible by the size of axis 'i', 4"),
    (lambda v: lax.all_to_all(v, "i", 0, 2), ValueError,
     r"all_to_all: concat_axis 2 is out of range for an operand of shape \(4, 3\)"),
    (lambda v: lax.psum_scatter(v, "i", axis_index_groups=[[0, 1], [2, 3]]), NotImplementedError,
     r"psum_scatter: axis_index_groups is not supported"),
    (lambda v: lax.all_to_all(v, "i", 0, 0, axis_index_groups=[[0, 1], [2, 3]]), NotImplementedError,
     r"all_to_all: axis_index_groups is not supported"),
    (lambda v: lax.ppermute(v, ("i", "i"), [(0, 1)]), NotImplementedError,
     r"ppermute over several axis names at once is not supported"),
    (lambda v: lax.psum_scatter(v, "k"), NameError, r"unbound axis name: 'k'. The axis names bound here are \['i'\]"),
    (lambda v: lax.all_to_all(v, "k", 0, 0), NameError, r"unbound axis name: 'k'"),
])
def test_argument_errors(f, error, pattern):
    with pytest.raises(error, match=pattern):
        _vmapped(f)


def test_new_collectives_outside_any_mapped_axis():
    x = np.ones((2, 2), np.float32)
    for call in (lambda: lax.psum_scatter(x, "i"), lambda: lax.all_to_all(x, "i", 0, 1),
                 lambda: lax.ppermute(x, "i", [(0, 1)])):
        with pytest.raises(NameError, match=r"unbound axis name: 'i'. No vmap or pmap"):
            call()
