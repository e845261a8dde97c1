"""Derivatives of the lax.linalg primitives (through core.numpy.linalg) and of core.scipy.special.

Forward mode is checked against central differences and reverse mode by the inner-product
identity (`tu.check_grads`, order 2, float64). Factorizations are unique only up to signs, so the
checked functions are invariant to those choices where LAPACK's choice could flip (eigenvectors
and singular vectors appear squared elementwise or inside a reconstruction). Inputs are built
well conditioned: eigenvalues and singular values are spread apart (gaps >= 1, condition
numbers below n + 1); triangular solves use a dominant diagonal.
"""
import numpy as np
import pytest

import core
import core.numpy as jnp
from core import test_util as tu
from core.lax import linalg as lax_linalg
from core.scipy import special

LA = jnp.linalg

pytestmark = pytest.mark.usefixtures("x64")


# ----- inputs -------------------------------------------------------------------------------------

def _rand(rng, shape, complex_=False):
    x = rng.standard_normal(shape)
    return x + 1j * rng.standard_normal(shape) if complex_ else x


def _H(x):
    return np.conj(np.swapaxes(x, -1, -2))


def _orthonormal(rng, batch, n, complex_=False):
    q, _ = np.linalg.qr(_rand(rng, batch + (n, n), complex_))
    return q


def _spread_values(batch, k):
    """Values in [1, 3 + k] with gaps of at least 1, one row per batch member."""
    base = np.arange(k, 0, -1, dtype=np.float64) + 1.0
    return np.broadcast_to(base, batch + (k,)) + 0.3 * np.arange(int(np.prod(batch))).reshape(batch + (1,))


def _spd(rng, shape, complex_=False):
    """Hermitian positive definite with eigenvalues spread apart (distinct, gap >= 1)."""
    batch, n = shape[:-2], shape[-1]
    q = _orthonormal(rng, batch, n, complex_)
    return (q * _spread_values(batch, n)[..., None, :]) @ _H(q)


def _well_conditioned(rng, shape, complex_=False):
    """A square matrix with condition number below n + 1 (singular values in [1, n + 1.3])."""
    return _distinct_singular(rng, shape, complex_)


def _distinct_singular(rng, shape, complex_=False):
    """A matrix with singular values spread apart (distinct, gap >= 1)."""
    batch, (m, n) = shape[:-2], shape[-2:]
    k = min(m, n)
    u = _orthonormal(rng, batch, m, complex_)[..., :, :k]
    v = _orthonormal(rng, batch, n, complex_)[..., :, :k]
    return (u * _spread_values(batch, k)[..., None, :]) @ _H(v)


# ----- functions of the factors that do not depend on sign/phase choices ---------------------------

def _eigh_invariants(a):
    w, v = LA.eigh(a)
    return w, v * jnp.conj(v)


def _svd_invariants(a):
    u, s, vh = LA.svd(a, full_matrices=False)
    recon = (u * s[..., None, :].astype(u.dtype)) @ vh
    return s, recon, u * jnp.conj(u), vh * jnp.conj(vh)


def _qr_parts(a):
    q, r = LA.qr(a)
    return q, r


def _lu_factors(a):
    return lax_linalg.lu(a)[0]


def _slogdet(a):
    sign, logabs = LA.slogdet(a)
    return sign, logabs


SQUARE_FUNCS = {
    "solve": (lambda a, b: LA.solve(a, b), "solve"),
    "inv": (LA.inv, "general"),
    "det": (LA.det, "general"),
    "slogdet": (_slogdet, "general"),
    "matrix_power3": (lambda a: LA.matrix_power(a, 3), "general"),
    "matrix_power-2": (lambda a: LA.matrix_power(a, -2), "general"),
    "lu": (_lu_factors, "general"),
    "cholesky": (LA.cholesky, "spd"),
    "cholesky_upper": (lambda a: LA.cholesky(a, upper=True), "spd"),
    "eigh": (_eigh_invariants, "spd"),
    "eigvalsh": (LA.eigvalsh, "spd"),
    "qr": (_qr_parts, "general"),
    "svd": (_svd_invariants, "singular"),
    "svdvals": (LA.svdvals, "singular"),
    "pinv": (LA.pinv, "singular"),
    "cond": (LA.cond, "singular"),
    "norm_2": (lambda a: LA.norm(a, 2, axis=(-2, -1)), "singular"),
    "norm_nuc": (lambda a: LA.norm(a, "nuc", axis=(-2, -1)), "singular"),
    "norm_fro": (lambda a: LA.norm(a, axis=(-2, -1)), "general"),
    "cond_1": (lambda a: LA.cond(a, 1), "general"),
}

MAKERS = {"general": _well_conditioned, "spd": _spd, "singular": _distinct_singular}


def _args(rng, kind, shape, complex_=False):
    if kind == "solve":
        return (_well_conditioned(rng, shape, complex_), _rand(rng, shape[:-1] + (2,), complex_))
    return (MAKERS[kind](rng, shape, complex_),)


# ----- real (float64) second-order checks -------------------------------------------------------

@pytest.mark.parametrize("name,shape", tu.product(sorted(SQUARE_FUNCS), [(3, 3), (2, 4, 4)]))
def test_square_grads(rng, name, shape):
    f, kind = SQUARE_FUNCS[name]
    tu.check_grads(f, _args(rng, kind, shape), order=2, modes=("fwd", "rev"))


RECT_FUNCS = {
    "lu": _lu_factors,
    "qr": _qr_parts,
    "svd": _svd_invariants,
    "svdvals": LA.svdvals,
    "pinv": LA.pinv,
    "norm_2": lambda a: LA.norm(a, 2, axis=(-2, -1)),
    "cond": LA.cond,
}


@pytest.mark.parametrize("name,shape", tu.sample_cases(tu.product(sorted(RECT_FUNCS), [(4, 3), (3, 5), (2, 2, 3)]),
                                                       "grad_rectangular", 14))
def test_rectangular_grads(rng, name, shape):
    tu.check_grads(RECT_FUNCS[name], (_distinct_singular(rng, shape),), order=2, modes=("fwd", "rev"))


@pytest.mark.parametrize("shape", [(4, 2), (3, 3)])
def test_lstsq_grads(rng, shape):
    a, b = _distinct_singular(rng, shape), _rand(rng, shape[:1])
    tu.check_grads(lambda a, b: LA.lstsq(a, b)[:2], (a, b), order=2, modes=("fwd", "rev"))


TRSM_CASES = tu.product([True, False], [True, False], [True, False], [True, False], [(3, 3), (2, 3, 3)])


@pytest.mark.parametrize("left_side,lower,transpose_a,unit_diagonal,shape",
                         tu.sample_cases(TRSM_CASES, "grad_triangular_solve", 8))
def test_triangular_solve_grads(rng, left_side, lower, transpose_a, unit_diagonal, shape):
    # the unread triangle is random too: its (zero) derivative is part of what is checked
    a = _rand(rng, shape) + 4.0 * np.eye(3)
    b = _rand(rng, shape[:-1] + (2,) if left_side else shape[:-2] + (2, 3))

    def f(a, b):
        return lax_linalg.triangular_solve(a, b, left_side=left_side, lower=lower, transpose_a=transpose_a,
                                           unit_diagonal=unit_diagonal)
    tu.check_grads(f, (a, b), order=2, modes=("fwd", "rev"))


def test_cholesky_grad_matches_closed_form(rng):
    # d/dA of sum(log(diag(L))) = log det(A) / 2 is A^-1 / 2 (for a symmetric gradient)
    a = _spd(rng, (4, 4))
    g = core.grad(lambda a: jnp.sum(jnp.log(jnp.diagonal(LA.cholesky(a)))))(a)
    tu.assert_allclose(g, np.linalg.inv(a) / 2, np.float64, atol=1e-12, rtol=1e-12)


def test_eigh_grad_matches_closed_form(rng):
    # d w_i / dA = v_i v_i^T (symmetric A, as symmetrized by jnp.linalg.eigh)
    a = _spd(rng, (3, 3))
    g = core.grad(lambda a: LA.eigvalsh(a)[2])(a)
    w, v = np.linalg.eigh(a)
    tu.assert_allclose(g, np.outer(v[:, 2], v[:, 2]), np.float64, atol=1e-12, rtol=1e-12)


def test_svd_grad_matches_closed_form(rng):
    # d s_0 / dA = u_0 v_0^T
    a = _distinct_singular(rng, (4, 3))
    g = core.grad(lambda a: LA.svdvals(a)[0])(a)
    u, s, vh = np.linalg.svd(a)
    tu.assert_allclose(g, np.outer(u[:, 0], vh[0]), np.float64, atol=1e-12, rtol=1e-12)


@pytest.mark.parametrize("name", ["cholesky", "eigh"])
def test_unsymmetrized_primitives_see_the_hermitian_part_of_the_tangent(rng, name):
    # As in JAX, the rules differentiate along (T + T^H) / 2: the perturbations that keep the input
    # Hermitian. Without symmetrize_input the primal reads one triangle, so this is a convention.
    a, t = _spd(rng, (3, 3)), _rand(rng, (3, 3))
    if name == "cholesky":
        f = lambda a: lax_linalg.cholesky(a, symmetrize_input=False)  # noqa: E731
    else:
        f = lambda a: lax_linalg.eigh(a, symmetrize_input=False)  # noqa: E731
    _, tangent = core.jvp(f, (a,), (t,))
    _, expected = core.jvp(f, (a,), ((t + t.T) / 2,))
    for actual, want in zip(core.tree_util.tree_leaves(tangent), core.tree_util.tree_leaves(expected), strict=True):
        tu.assert_allclose(actual, want, np.float64, atol=1e-12, rtol=1e-12)


def test_det_grad_is_cofactor(rng):
    a = _well_conditioned(rng, (3, 3))
    g = core.grad(LA.det)(a)
    tu.assert_allclose(g, np.linalg.det(a) * np.linalg.inv(a).T, np.float64, atol=1e-12, rtol=1e-12)


# ----- complex inputs -------------------------------------------------------------------------------
# Holomorphic functions (solve, inv, det) satisfy the unconjugated identity <u, J v> = <J^T u, v>
# that tu.check_grads checks. The factorizations involve conjugation, so their jvp is only real-linear;
# under JAX's convention (the transpose of conj is conj) their vjp satisfies the identity for the real
# pairing Re<u, J v> = Re<J^T u, v>, which `_check_vjp_real_pairing` checks.

def _central(f, args, tangents, eps=1e-6):
    plus = f(*[a + eps * t for a, t in zip(args, tangents)])
    minus = f(*[a - eps * t for a, t in zip(args, tangents)])
    return [(np.asarray(p) - np.asarray(m)) / (2 * eps) for p, m in zip(plus, minus)]


def _check_vjp_real_pairing(f, args, rng):
    out, pullback = core.vjp(f, *args)
    v = [_rand(rng, np.shape(a), True) for a in args]
    u = [_rand(rng, np.shape(o), np.iscomplexobj(np.asarray(o))) for o in out]
    jv = _central(f, args, v)
    lhs = sum(np.sum(ui * ji).real for ui, ji in zip(u, jv))
    rhs = sum(np.sum(np.asarray(ci) * vi).real for ci, vi in zip(pullback(tuple(u)), v))
    np.testing.assert_allclose(rhs, lhs, rtol=1e-6, atol=1e-6)


def _tuple(f):
    def g(*args):
        out = f(*args)
        return tuple(out) if isinstance(out, tuple) else (out,)
    return g


COMPLEX_CASES = {
    "solve": (lambda a, b: LA.solve(a, b), "solve", (3, 3), True),
    "det": (LA.det, "general", (2, 3, 3), True),
    "inv": (LA.inv, "general", (3, 3), True),
    "cholesky": (LA.cholesky, "spd", (2, 3, 3), False),
    "eigh": (_eigh_invariants, "spd", (3, 3), False),
    "eigvalsh": (LA.eigvalsh, "spd", (3, 3), False),
    "qr_tall": (_qr_parts, "singular", (4, 3), False),
    "qr_wide": (_qr_parts, "singular", (2, 4), False),
    "svd_tall": (_svd_invariants, "singular", (4, 3), False),
    "svd_wide": (_svd_invariants, "singular", (3, 4), False),
    "triangular_solve": (lambda a, b: lax_linalg.triangular_solve(a, b, left_side=True, lower=True, transpose_a=True,
                                                                   conjugate_a=True), "solve", (3, 3), False),
    "triangular_solve_conj": (lambda a, b: lax_linalg.triangular_solve(b, a, lower=False, conjugate_a=True),
                              "solve_right", (3, 3), False),
}


@pytest.mark.parametrize("name", sorted(COMPLEX_CASES))
def test_complex_grads(rng, name):
    f, kind, shape, holomorphic = COMPLEX_CASES[name]
    if kind == "solve_right":
        args = (_rand(rng, (2, 3), True), _well_conditioned(rng, shape, True))
    else:
        args = _args(rng, kind, shape, complex_=True)
    if holomorphic:
        tu.check_grads(f, args, order=2, modes=("fwd", "rev"))
    else:
        tu.check_grads(f, args, order=1, modes=("fwd",))
        _check_vjp_real_pairing(_tuple(f), args, rng)


# ----- float32, jit, non-differentiable outputs, unsupported cases --------------------------------------

@pytest.mark.parametrize("name", ["solve", "cholesky", "eigh", "svd", "qr"])
def test_float32_smoke(rng, name):
    f, kind = SQUARE_FUNCS[name]
    args = tuple(a.astype(np.float32) for a in _args(rng, kind, (3, 3)))
    tu.check_grads(f, args, order=1, modes=("fwd", "rev"))


@pytest.mark.parametrize("name", ["det", "eigvalsh", "svdvals", "cholesky"])
def test_grad_under_jit(rng, name):
    f, kind = SQUARE_FUNCS[name]
    (a,) = _args(rng, kind, (3, 3))
    loss = lambda a: jnp.sum(f(a) ** 2)  # noqa: E731
    eager = core.grad(loss)(a)
    tu.assert_allclose(core.grad(core.jit(loss))(a), eager, np.float64, atol=1e-12, rtol=1e-12)
    tu.assert_allclose(core.jit(core.grad(loss))(a), eager, np.float64, atol=1e-12, rtol=1e-12)


def test_lu_integer_outputs_have_float0_tangents(rng):
    a = _well_conditioned(rng, (3, 3))
    (lu, piv, perm), (t_lu, t_piv, t_perm) = core.jvp(lax_linalg.lu, (a,), (np.ones_like(a),))
    assert np.asarray(t_piv).dtype == core.dtypes.float0 and np.shape(t_piv) == (3,)
    assert np.asarray(t_perm).dtype == core.dtypes.float0 and np.shape(t_perm) == (3,)
    assert np.asarray(t_lu).shape == (3, 3) and np.any(np.asarray(t_lu) != 0)


def test_qr_complete_tall_is_not_differentiable(rng):
    a = _rand(rng, (4, 3))
    with pytest.raises(NotImplementedError, match=r"QR decomposition derivative.*full_matrices=True.*\(4, 3\)"):
        core.jvp(lambda a: LA.qr(a, mode="complete"), (a,), (a,))


def test_svd_full_matrices_rectangular_is_not_differentiable(rng):
    a = _rand(rng, (4, 3))
    with pytest.raises(NotImplementedError, match=r"Singular value decomposition JVP.*full matrices.*\(4, 3\)"):
        core.jvp(lambda a: LA.svd(a, full_matrices=True), (a,), (a,))


def test_svd_full_matrices_square_and_values_only_are_differentiable(rng):
    a = _distinct_singular(rng, (3, 3))
    tu.check_grads(lambda a: LA.svd(a, full_matrices=True).S, (a,), order=1)
    tu.check_grads(lambda a: LA.svd(_rand(np.random.default_rng(0), (4, 3)) @ a, compute_uv=False),
                   (a,), order=1)


# ----- scipy.special ------------------------------------------------------------------------------------

_ANY = np.array([-2.0, -0.3, 0.7, 2.5])
_POS = np.array([0.3, 1.5, 4.0])

SPECIAL_CASES = {
    "erf": (special.erf, (_ANY,)),
    "gammaln": (special.gammaln, (np.array([0.3, 1.5, 4.0, -1.5]),)),
    "digamma": (special.digamma, (np.array([0.3, 1.5, 4.0, -1.5]),)),
    "gamma": (special.gamma, (np.array([0.3, 1.5, 4.0, -1.5]),)),
    "multigammaln": (lambda a: special.multigammaln(a, 3), (np.array([1.7, 2.5, 4.0]),)),
    "polygamma": (lambda x: special.polygamma(1, x), (np.array([0.3, 1.5, 4.0]),)),
    "i1e": (special.i1e, (np.array([-2.0, -0.4, 0.7, 3.0]),)),
    "boxcox": (special.boxcox, (_POS, np.array([0.0, -0.7, 1.3]))),
    "boxcox1p": (special.boxcox1p, (_POS, np.array([0.0, -0.7, 1.3]))),
    "comb": (special.comb, (np.array([5.0, 7.5]), np.array([2.0, 3.2]))),
    "erfcx": (special.erfcx, (np.array([-1.5, 0.5, 1.9, 2.1, 6.0]),)),
    "exp1": (special.exp1, (np.array([0.3, 1.9, 2.1, 6.0]),)),
    "expi": (special.expi, (np.array([-2.0, 0.3, 6.0]),)),
    "expn": (lambda x: special.expn(3, x), (np.array([0.3, 1.9, 2.1, 6.0]),)),
    "factorial": (special.factorial, (_POS,)),
    "kl_div": (special.kl_div, (_POS, np.array([2.0, 0.7, 1.1]))),
    "loggamma": (special.loggamma, (_POS,)),
    "poch": (special.poch, (np.array([2.0, -2.5, 0.7]), np.array([3.0, 1.3, -0.4]))),
    "rel_entr": (special.rel_entr, (_POS, np.array([2.0, 0.7, 1.1]))),
    "spence": (special.spence, (np.array([0.2, 1.5, 5.0]),)),
    "zeta": (special.zeta, (np.array([1.5, 2.5, 7.0]), np.array([0.4, 1.5, 3.0]))),
    "dawsn": (special.dawsn, (np.array([0.1, 0.7, 3.0, -12.0]),)),
    "sici": (lambda x: jnp.stack(special.sici(x)), (np.array([0.3, 3.9, 4.1, -2.0]),)),
    "owens_t": (special.owens_t, (np.array([0.5, -1.0, 2.0]), np.array([0.3, 0.8, 3.0]))),
    "bessel_jn": (lambda z: special.bessel_jn(z, v=2), (np.array([0.5, 3.0, -7.0]),)),
    "fresnel": (lambda x: jnp.stack(special.fresnel(x)), (np.array([0.3, 1.5, 1.7, -2.0]),)),
    "hyp1f1": (special.hyp1f1, (np.array([1.5, 0.5]), np.array([2.5, 1.5]), np.array([-3.0, 0.5]))),
}
# Checked to order 2 in both modes in float64 by tests/test_grad_numpy.py (CASES "special.<name>", on a
# non-empty sampled shape, most with special values too): checking them here again cost ~16 s of the
# suite. `test_checked_in_grad_numpy_still_is` keeps the claim true; erf, multigammaln and i1e stay
# above (their sampled shape there is empty or a scalar), as do gammaln, digamma and gamma (negative
# inputs) and polygamma (polygamma(1, x) here, polygamma(2, x) there).
CHECKED_IN_GRAD_NUMPY = {"expit", "logit", "erfc", "erfinv", "betaln", "xlogy", "xlog1py", "entr", "ndtr", "ndtri",
                         "log_ndtr", "logsumexp", "softmax", "log_softmax", "beta", "erfcinv", "i0", "i0e", "i1"}
# First derivatives only: their values come from a while loop, which reverse mode cannot go back
# through twice; tests/test_scipy_special_more.py checks their first derivatives by differences.
FIRST_ORDER_ONLY = {"gammainc", "gammaincc", "betainc",
                    # checked against differences of SciPy in tests/test_scipy_special_last.py (each
                    # compile of hyp2f1's transformed program takes seconds; wofz is complex)
                    "hyp2f1", "wofz", "sph_harm_y"}
NOT_DIFFERENTIABLE = {"gammasgn", "bernoulli"}  # bernoulli takes a static integer
# Checked to first order here: their values are loops or quadratures, and a second-order check
# compiles about ten transformed programs of them (~10 s each function). Their derivative rules
# are closed forms in the functions themselves, whose second derivatives
# tests/test_scipy_special_extra.py checks against hand-derived values.
FIRST_ORDER_CHECKED = {"exp1", "expi", "expn", "sici", "fresnel", "owens_t", "bessel_jn", "hyp1f1"}


def test_special_cases_cover_exports():
    assert not set(SPECIAL_CASES) & CHECKED_IN_GRAD_NUMPY
    assert set(SPECIAL_CASES) | CHECKED_IN_GRAD_NUMPY | FIRST_ORDER_ONLY | NOT_DIFFERENTIABLE == set(special.__all__)


def test_checked_in_grad_numpy_still_is():
    import test_grad_numpy  # tests/ is on sys.path, as for conftest
    sampled = {}
    for p in test_grad_numpy._params():
        if not p.marks:  # an xfail checks nothing
            sampled.setdefault(p.values[0], []).append(p.values[1])
    for name in sorted(CHECKED_IN_GRAD_NUMPY) + ["logsumexp[axis,b]"]:
        case, shapes = test_grad_numpy.CASES[f"special.{name}"], sampled.get(f"special.{name}", [])
        assert (case.order, case.modes, case.conj_inner) == (2, ("fwd", "rev"), False), name
        assert any(all(np.prod(s) > 0 for s in args) for args in shapes), \
            f"special.{name}: tests/test_grad_numpy.py samples only {shapes}; check it in SPECIAL_CASES again"


@pytest.mark.parametrize("name", sorted(SPECIAL_CASES))
def test_special_grads(name):
    f, args = SPECIAL_CASES[name]
    tu.check_grads(f, args, order=1 if name in FIRST_ORDER_CHECKED else 2, modes=("fwd", "rev"))


def test_special_grads_match_scipy():
    import scipy.special as ss
    x = np.array([0.3, 1.5, 4.0])
    tu.assert_allclose(core.grad(lambda x: jnp.sum(special.gammaln(x)))(x), ss.digamma(x), np.float64,
                       atol=1e-12, rtol=1e-12)
    tu.assert_allclose(core.grad(lambda x: jnp.sum(special.digamma(x)))(x), ss.polygamma(1, x), np.float64,
                       atol=1e-10, rtol=1e-10)
    p = np.array([0.04, 0.3, 0.95])
    tu.assert_allclose(core.grad(lambda p: jnp.sum(special.ndtri(p)))(p),
                       np.sqrt(2 * np.pi) * np.exp(ss.ndtri(p) ** 2 / 2), np.float64, atol=1e-10, rtol=1e-10)
