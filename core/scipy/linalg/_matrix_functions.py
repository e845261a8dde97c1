"""Matrix functions: the exponential (and its Frechet derivative), square root and logarithm."""
import functools

import numpy as np

from ... import lax
from ... import numpy as jnp
from ...numpy import linalg as jnp_linalg
from .._util import library_jit
from ._decompositions import _complex_schur
from ._solves import solve_triangular
from ._util import _check_square, _inexact, _mH, _short


# ----- matrix functions ----------------------------------------------------------------------------

# Higham (2005), "The scaling and squaring method for the matrix exponential revisited": the
# coefficients of the [m/m] Pade approximants of exp, and the largest 1-norm for which each is
# accurate to unit roundoff (theta_m; float64 from the paper, float32 the values JAX uses).
_PADE = {
    3: (120.0, 60.0, 12.0, 1.0),
    5: (30240.0, 15120.0, 3360.0, 420.0, 30.0, 1.0),
    7: (17297280.0, 8648640.0, 1995840.0, 277200.0, 25200.0, 1512.0, 56.0, 1.0),
    9: (17643225600.0, 8821612800.0, 2075673600.0, 302702400.0, 30270240.0, 2162160.0, 110880.0,
        3960.0, 90.0, 1.0),
    13: (64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0,
         129060195264000.0, 10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0,
         40840800.0, 960960.0, 16380.0, 182.0, 1.0),
}
_THETA_64 = ((3, 1.495585217958292e-2), (5, 2.539398330063230e-1), (7, 9.504178996162932e-1),
             (9, 2.097847961257068e0), (13, 5.371920351148152e0))
_THETA_32 = ((3, 4.258730016922831e-1), (5, 1.880152677804762e0), (7, 3.925724783138660e0))


def _pade(m, a):
    """The odd and even parts (u, v) of the degree-m Pade numerator at `a`: p = v + u, q = v - u."""
    c = _PADE[m]
    eye = jnp.eye(a.shape[-1], dtype=a.dtype)
    a2 = a @ a
    if m == 13:
        a4 = a2 @ a2
        a6 = a4 @ a2
        u = a @ (a6 @ (c[13] * a6 + c[11] * a4 + c[9] * a2) + c[7] * a6 + c[5] * a4 + c[3] * a2 + c[1] * eye)
        v = a6 @ (c[12] * a6 + c[10] * a4 + c[8] * a2) + c[6] * a6 + c[4] * a4 + c[2] * a2 + c[0] * eye
        return u, v
    powers = [eye, a2]  # a^0, a^2, a^4, ... up to a^(m-1)
    while len(powers) <= m // 2:
        powers.append(powers[-1] @ a2)
    u = a @ sum(c[2 * i + 1] * p for i, p in enumerate(powers))
    v = sum(c[2 * i] * p for i, p in enumerate(powers))
    return u, v


def _expm_2d(a, upper_triangular, max_squarings):
    thetas = _THETA_64 if a.dtype in (np.float64, np.complex128) else _THETA_32
    norm = jnp.max(jnp.sum(jnp.abs(a), axis=0))  # the 1-norm
    # scale a by 2^-s so that its norm is at most the largest theta, then undo it by s squarings.
    # Higham's s = ceil(log2(norm / theta)); JAX's floor leaves norms up to twice theta, which
    # costs seven digits in float64 (expm(diag([20., 10.])) was off by 4e-8 relative).
    s = jnp.maximum(0.0, jnp.ceil(jnp.log2(norm / thetas[-1][1])))
    a = a / (2.0 ** s).astype(a.dtype)
    # the cheapest approximant accurate at this norm (the unscaled norm picks it, as JAX does)
    index = jnp.digitize(norm, jnp.array([t for _, t in thetas[:-1]], norm.dtype))
    branches = [functools.partial(_pade, m) for m, _ in thetas]
    u, v = lax.switch(index, branches, a)
    p, q = v + u, v - u
    r = solve_triangular(q, p) if upper_triangular else jnp_linalg.solve(q, p)

    def square(i, r):
        return lax.cond(i < s, lambda r: r @ r, lambda r: r, r)

    r = lax.fori_loop(0, max_squarings, square, r)
    # more squarings than allowed: the result would be inaccurate, so NaN (as JAX)
    return jnp.where(s > max_squarings, jnp.full_like(r, np.nan), r)


def expm(A, *, upper_triangular=False, max_squarings=16):
    """The matrix exponential, as `scipy.linalg.expm`, by Pade scaling and squaring (Higham 2005,
    as JAX, with Higham's number of squarings): the [m/m] approximant (m in 3..13, by the 1-norm)
    of A / 2^s, squared s times. A
    norm that would need more than `max_squarings` squarings gives NaN. `upper_triangular` solves
    the Pade system by back substitution. Leading dimensions are a batch; differentiable.

    Example:
        >>> core.scipy.linalg.expm(jnp.array([[0.0, 1.0], [0.0, 0.0]]))
        Array([[1., 1.],
               [0., 1.]], dtype=float32)
    """
    (A,) = _inexact("expm", A)
    _check_square("expm", A, "A")
    if A.shape[-1] == 0:
        return A
    fn = functools.partial(_expm_2d, upper_triangular=bool(upper_triangular), max_squarings=int(max_squarings))
    if A.ndim > 2:
        fn = jnp.vectorize(fn, signature="(n,n)->(n,n)")
    return fn(A)



def expm_frechet(A, E, *, method=None, compute_expm=True):
    """The Frechet derivative of the matrix exponential at `A` in the direction `E`, as
    `scipy.linalg.expm_frechet`: `(expm(A), L)` with L = d/dt expm(A + t E) at t = 0, or L alone
    for `compute_expm=False`. Both come from one `expm` of the block matrix [[A, E], [0, A]],
    whose exponential is [[expm(A), L], [0, expm(A)]] (SciPy's "blockEnlarge"; JAX takes the jvp
    of expm, the same numbers to rounding, at twice the compile time); `method` is accepted and
    ignored, as in JAX. Differentiable in A and E. A and E are (..., n, n) of one shape.

    Example:
        >>> a = jnp.array([[1.0, 2.0], [0.0, -1.0]])
        >>> expm_a, frechet = core.scipy.linalg.expm_frechet(a, jnp.eye(2))
        >>> jnp.allclose(frechet, expm_a)   # d/dt expm(a + t I) = expm(a)
        Array(True, dtype=bool)
    """
    del method
    A, E = _inexact("expm_frechet", A, E)
    _check_square("expm_frechet", A, "A")
    _check_square("expm_frechet", E, "E")
    if A.shape != E.shape:
        raise ValueError(f"expm_frechet: `A` and `E` must have the same shape; got A {_short(A)} and E {_short(E)}.")
    value, derivative = _expm_frechet_block(A, E)
    return (value, derivative) if compute_expm else derivative


def _one_norm(x):
    return jnp.max(jnp.sum(jnp.abs(x), axis=-2), axis=-1)


def _expm_frechet_block_unjitted(a, e):
    n = a.shape[-1]
    # L is linear in E: E is scaled to A's 1-norm first, so that E's size does not change the
    # number of squarings (and so the accuracy of expm(A)); the scale has no derivative of its own
    norm_a, norm_e = _one_norm(a), _one_norm(e)
    scale = jnp.where(norm_e > 0, jnp.maximum(norm_a, 1.0) / jnp.where(norm_e > 0, norm_e, 1.0), 1.0)
    scale = lax.stop_gradient(scale.astype(a.dtype))[..., None, None]
    top = jnp.concatenate([a, e * scale], axis=-1)
    bottom = jnp.concatenate([jnp.zeros_like(a), a], axis=-1)
    big = expm(jnp.concatenate([top, bottom], axis=-2))
    return big[..., :n, :n], big[..., :n, n:] / scale


# expm's loops run eagerly would be traced and compiled again on every call; jitted, once per signature
_expm_frechet_block = library_jit(_expm_frechet_block_unjitted)


def _sqrtm_triu(t):
    """The principal square root r of upper triangular (n, n) `t` (Bjorck and Hammarling 1983):
    r_ii = sqrt(t_ii), then superdiagonal by superdiagonal, r_ij = (t_ij - sum_{i<k<j} r_ik r_kj) /
    (r_ii + r_jj). The sum for a whole superdiagonal is one product of the strictly upper part
    computed so far with itself (entries beyond the current superdiagonal are still zero)."""
    n = t.shape[-1]
    root = jnp.sqrt(jnp.diagonal(t))
    rows, cols = np.indices((n, n))
    strictly_upper = jnp.asarray(cols > rows)
    denominator = root[:, None] + root[None, :]

    def superdiagonal(k, r):
        upper = jnp.where(strictly_upper, r, 0)
        rest = t - upper @ upper
        value = jnp.where(rest == 0, 0, rest / denominator)  # 0/0 (a repeated zero eigenvalue) is 0
        return jnp.where(jnp.asarray(cols - rows) == k, value, r)

    return lax.fori_loop(1, n, superdiagonal, jnp.diag(root))


def sqrtm(A, blocksize=1):
    """The principal matrix square root, as `scipy.linalg.sqrtm` by the complex Schur method (as
    JAX): `X @ X == A`. As in JAX the result is always complex. Leading dimensions are a batch.

    Example:
        >>> core.scipy.linalg.sqrtm(jnp.array([[4.0, 0.0], [0.0, 9.0]]))
        Array([[2.+0.j, 0.+0.j],
               [0.+0.j, 3.+0.j]], dtype=complex64)
    """
    if blocksize != 1:
        raise NotImplementedError(f"sqrtm: only blocksize=1 is implemented; got blocksize={blocksize!r}.")
    t, z = _complex_schur("sqrtm", A)
    if t.shape[-1] == 0:
        return t
    r = jnp.vectorize(_sqrtm_triu, signature="(n,n)->(n,n)")(t)
    return z @ r @ _mH(z)


# log(1 + x) = integral over s in [0, 1] of x / (1 + s x): an 8-point Gauss-Legendre rule is the
# [8/8] Pade approximant, accurate to far below float64 roundoff while |x| <= 1/4
_LOG_NODES, _LOG_WEIGHTS = np.polynomial.legendre.leggauss(8)
_LOG_NODES, _LOG_WEIGHTS = (_LOG_NODES + 1) / 2, _LOG_WEIGHTS / 2
_LOG_THETA = 0.25
_LOG_MAX_ROOTS = 64


def _logm_triu(t):
    """The principal logarithm of upper triangular `t` by inverse scaling and squaring: take square
    roots until the 1-norm of t - I is at most 1/4, evaluate log(I + x) by the quadrature above
    (each node one triangular solve), and scale by 2^roots."""
    n = t.shape[-1]
    eye = jnp.eye(n, dtype=t.dtype)

    def far(carry):
        roots, t = carry
        return (jnp.max(jnp.sum(jnp.abs(t - eye), axis=0)) > _LOG_THETA) & (roots < _LOG_MAX_ROOTS)

    roots, t = lax.while_loop(far, lambda c: (c[0] + 1, _sqrtm_triu(c[1])), (jnp.zeros((), np.int32), t))
    x = t - eye
    log = sum(float(w) * solve_triangular(eye + float(s) * x, x) for s, w in zip(_LOG_NODES, _LOG_WEIGHTS))
    log = log * (2.0 ** roots).astype(log.dtype)
    # a singular matrix has no logarithm
    return jnp.where(jnp.any(jnp.diagonal(t) == 0), jnp.full_like(log, np.nan), log)


def logm(A, disp=True):
    """The principal matrix logarithm, as `scipy.linalg.logm`, by the complex Schur form and
    inverse scaling and squaring: `expm(logm(A)) == A` for A with no eigenvalues on the closed
    negative real axis. Like `sqrtm` the result is always complex; a singular A gives NaN.
    `disp` is accepted (there is no error estimate to print). Leading dimensions are a batch.

    Example:
        >>> jnp.round(core.scipy.linalg.logm(jnp.array([[1.0, 1.0], [0.0, 1.0]])), 5)
        Array([[0.+0.j, 1.+0.j],
               [0.+0.j, 0.+0.j]], dtype=complex64)
    """
    del disp
    t, z = _complex_schur("logm", A)
    if t.shape[-1] == 0:
        return t
    r = jnp.vectorize(_logm_triu, signature="(n,n)->(n,n)")(t)
    return z @ r @ _mH(z)
