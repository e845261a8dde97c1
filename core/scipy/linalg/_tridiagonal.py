"""`eigh_tridiagonal`: eigenvalues of a Hermitian tridiagonal matrix by Sturm-sequence bisection,
eigenvectors by inverse iteration (the methods of LAPACK stebz and stein).

All wanted eigenvalues are bisected at once: each step counts, for every interval midpoint, the
eigenvalues below it (the negative pivots of the LDL^T factorization of T - x I, one pass down
the diagonal), and halves each interval towards its eigenvalue. Inverse iteration then solves
(T - w_k I) v = v for all k at once with `lax.linalg.tridiagonal_solve(perturb_singular=True)`,
orthonormalizing the vectors of clustered eigenvalues against each other after every step.
"""
import numpy as np

from ... import dtypes
from ... import lax
from ... import numpy as jnp
from ...lax import linalg as lax_linalg
from .._util import library_jit
from ._util import _inexact, _short

_SELECTS = ("a", "i", "v")
_INVERSE_ITERATIONS = 4  # LAPACK stein: up to 5 steps, but 2 past convergence, which takes 1-2 here
_CLUSTER_GAP = 1e-3      # relative to the 1-norm of T, as stein's orthogonalization threshold


def _sturm_counts(alpha, beta_sq, pivmin, x):
    """How many eigenvalues of T lie below each entry of x: the negative pivots q_i of
    T - x I = L D L^T, q_0 = alpha_0 - x, q_i = alpha_i - x - beta_i-1^2 / q_i-1 (a pivot smaller
    than pivmin in magnitude is taken as -pivmin, as LAPACK does, to avoid overflow)."""
    def guard(q):
        return jnp.where(jnp.abs(q) < pivmin, -pivmin, q)

    def step(i, carry):
        q, count = carry
        q = guard(alpha[i] - x - beta_sq[i - 1] / q)
        return q, count + (q < 0).astype(np.int32)

    q = guard(alpha[0] - x)
    return lax.fori_loop(1, alpha.shape[0], step, (q, (q < 0).astype(np.int32)))[1]


def _bisect(alpha, beta_sq, targets, tol):
    """Eigenvalues number `targets` (a static tuple; ascending order) of T, to within
    max(tol, eps ||T||)."""
    n = alpha.shape[0]
    targets = jnp.asarray(np.array(targets, np.int32))
    finfo = dtypes.finfo(alpha.dtype)
    eps = float(finfo.eps)
    beta_abs = jnp.sqrt(beta_sq)
    # Gershgorin: every eigenvalue lies within alpha_i +- (|beta_i-1| + |beta_i|)
    radius = jnp.pad(beta_abs, (1, 0)) + jnp.pad(beta_abs, (0, 1))
    lowest, highest = jnp.min(alpha - radius), jnp.max(alpha + radius)
    t_norm = jnp.maximum(jnp.abs(lowest), jnp.abs(highest))
    pivmin = float(finfo.tiny) * (1 + eps) * jnp.maximum(1.0, jnp.max(beta_sq))
    # widen the interval a little so that rounding in the counts cannot put an eigenvalue outside
    slack = 2.1 * (n * eps * t_norm + pivmin)
    lower = jnp.full(targets.shape, lowest - slack)
    upper = jnp.full(targets.shape, highest + slack)
    abs_tol = eps * t_norm if tol is None else jnp.maximum(tol, eps * t_norm)
    # each step halves every interval: the mantissa's bits and a few more reach eps * |T|
    max_steps = finfo.nmant + 4

    def unfinished(state):
        i, lower, upper = state
        return (i < max_steps) & (jnp.max(upper - lower) > abs_tol)

    def halve(state):
        i, lower, upper = state
        mid = (lower + upper) / 2
        below = _sturm_counts(alpha, beta_sq, pivmin, mid) <= targets  # eigenvalue `target` is >= mid
        return i + 1, jnp.where(below, mid, lower), jnp.where(below, upper, mid)

    _, lower, upper = lax.while_loop(unfinished, halve, (jnp.zeros((), np.int32), lower, upper))
    return (lower + upper) / 2


def _orthonormalize_clusters(v, cluster):
    """Modified Gram-Schmidt of the rows of v (k, n), each against the earlier rows of its cluster."""
    k = v.shape[0]
    rows = jnp.arange(k)

    def one(i, v):
        vi = lax.dynamic_index_in_dim(v, i, keepdims=False)
        ci = lax.dynamic_index_in_dim(cluster, i, keepdims=False)
        earlier = ((rows < i) & (cluster == ci))[:, None]
        basis = jnp.where(earlier, v, 0)
        vi = vi - (jnp.conj(basis) @ vi) @ basis
        vi = vi / jnp.linalg.norm(vi).astype(vi.dtype)
        return lax.dynamic_update_index_in_dim(v, vi, i, axis=0)

    return lax.fori_loop(0, k, one, v)


def _inverse_iteration(alpha, beta, w, key):
    """Unit eigenvectors (n, k) of T (superdiagonal beta, subdiagonal conj(beta)) for eigenvalues w."""
    from ... import random  # core.random imports core.numpy, which imports before this package
    n, k = alpha.shape[0], w.shape[0]
    dtype = beta.dtype
    real = alpha.dtype
    one_norm = jnp.max(jnp.abs(alpha) + jnp.pad(jnp.abs(beta), (1, 0)) + jnp.pad(jnp.abs(beta), (0, 1)))
    # eigenvalues closer than the threshold form one cluster: their vectors are made orthogonal
    cluster = jnp.concatenate([jnp.zeros(1, np.int32),
                               jnp.cumsum((jnp.diff(w) > _CLUSTER_GAP * one_norm).astype(np.int32))])
    dl = jnp.broadcast_to(jnp.pad(jnp.conj(beta), (1, 0)), (k, n))
    du = jnp.broadcast_to(jnp.pad(beta, (0, 1)), (k, n))
    d = (alpha[None, :] - w[:, None]).astype(dtype)
    v = random.normal(key, (k, n), real).astype(dtype)
    v = v / jnp.linalg.norm(v, axis=-1, keepdims=True).astype(dtype)

    def step(_, v):
        v = lax_linalg.tridiagonal_solve(dl, d, du, v[..., None], perturb_singular=True)[..., 0]
        v = v / jnp.linalg.norm(v, axis=-1, keepdims=True).astype(dtype)
        return _orthonormalize_clusters(v, cluster)

    return lax.fori_loop(0, _INVERSE_ITERATIONS, step, v).T


def eigh_tridiagonal(d, e, *, eigvals_only=False, select="a", select_range=None, tol=None, key=None):
    """Eigenvalues (ascending) and eigenvectors of the Hermitian tridiagonal matrix with diagonal
    `d` (n,) and off-diagonal `e` (n - 1,), as `scipy.linalg.eigh_tridiagonal` with JAX's
    signature: `(w, v)` with `T @ v == v * w`, or w for `eigvals_only`. T's superdiagonal is e
    and its subdiagonal conj(e) (d's imaginary part is ignored). `select="a"` gives all
    eigenvalues, "i" those with index select_range[0] .. select_range[1] inclusive; "v" (a range
    of values, a data-dependent size) is not implemented, as in JAX. Eigenvalues are bisected to
    within max(`tol`, eps ||T||); eigenvectors come from inverse iteration started from normal
    vectors drawn with `key` (default a fixed key), so their signs are arbitrary.

    Example:
        >>> w = core.scipy.linalg.eigh_tridiagonal(jnp.array([2.0, 2.0, 2.0]), jnp.array([1.0, 1.0]),
        ...                                        eigvals_only=True)
        >>> [round(float(x), 4) for x in w]   # 2 - sqrt(2), 2, 2 + sqrt(2)
        [0.5858, 2.0, 3.4142]
    """
    if select not in _SELECTS:
        raise ValueError(f"eigh_tridiagonal: `select` must be one of {_SELECTS}; got {select!r}.")
    if select == "v":
        raise NotImplementedError("eigh_tridiagonal: select='v' (eigenvalues in a range of values, an output of "
                                  "data-dependent size) is not implemented, as in JAX; use select='i' with indices.")
    d, e = _inexact("eigh_tridiagonal", d, e)
    if d.ndim != 1 or e.shape != (max(d.shape[0] - 1, 0),):
        raise ValueError(f"eigh_tridiagonal: `d` must have shape (n,) and `e` shape (n - 1,); got d {_short(d)} and "
                         f"e {_short(e)}.")
    n = d.shape[0]
    if select == "i":
        if select_range is None:
            raise ValueError("eigh_tridiagonal: select='i' needs select_range=(lo, hi), eigenvalue indices.")
        lo, hi = (int(i) for i in select_range)
        if not 0 <= lo <= hi < n:
            raise ValueError(f"eigh_tridiagonal: select_range must be (lo, hi) with 0 <= lo <= hi < {n}; "
                             f"got {tuple(select_range)!r}.")
        targets = np.arange(lo, hi + 1, dtype=np.int32)
    else:
        targets = np.arange(n, dtype=np.int32)
    alpha = jnp.real(d)
    if n <= 1:
        w = alpha[targets]
        return w if eigvals_only else (w, jnp.ones((n, len(targets)), e.dtype))
    beta_sq = jnp.real(e * jnp.conj(e))
    w = _bisect_jit(alpha, beta_sq, tuple(int(t) for t in targets), None if tol is None else float(tol))
    if eigvals_only:
        return w
    if key is None:
        from ... import random
        key = random.key(42)
    return w, _inverse_iteration_jit(alpha, e, w, key)


# loops run eagerly would be traced and compiled again on every call; jitted, once per signature
_bisect_jit = library_jit(_bisect, static_argnums=(2, 3))
_inverse_iteration_jit = library_jit(_inverse_iteration)
