"""`core.scipy.optimize`: `minimize` with BFGS, as `jax.scipy.optimize` has it (jittable, gradients
by autodiff, a strong-Wolfe zoom line search)."""
from typing import NamedTuple

import numpy as np

from ... import numpy as jnp
from ...numpy._util import check_arraylike, promote_dtypes_inexact
from . import bfgs, line_search  # noqa: F401  (the modules, as jax._src.scipy.optimize has them)
from .bfgs import minimize_bfgs

__all__ = ["minimize", "OptimizeResults"]


class OptimizeResults(NamedTuple):
    """What `minimize` returns, as JAX's: the solution `x`, `success` (converged without a failed
    line search), `status` (0 converged, 1 out of iterations, 3 or 5 a line search failed), the
    value `fun`, gradient `jac` and inverse-Hessian estimate `hess_inv` at x, and the counts
    `nfev`, `njev` (function and gradient evaluations) and `nit` (iterations)."""
    x: object
    success: object
    status: object
    fun: object
    jac: object
    hess_inv: object
    nfev: object
    njev: object
    nit: object


_BFGS_OPTIONS = ("maxiter", "norm", "gtol", "line_search_maxiter")


def minimize(fun, x0, args=(), method="BFGS", tol=None, options=None):
    """Minimize the real scalar function `fun(x, *args)` from `x0`, as
    `jax.scipy.optimize.minimize`; only `method="BFGS"` is implemented. `options` may set
    `maxiter`, `gtol` (default 1e-5; `tol` sets it too, as in SciPy, where JAX ignores `tol`),
    `norm` (of the gradient; default max-abs) and `line_search_maxiter`. An x0 of several
    dimensions is optimized flat and reshaped back (`hess_inv` is over the flat vector). Returns
    `OptimizeResults`; jittable.

    Example:
        >>> from core.scipy.optimize import minimize
        >>> res = minimize(lambda x, c: jnp.sum((x - c) ** 2), jnp.zeros(2), args=(jnp.array([1.0, -2.0]),))
        >>> jnp.round(res.x, 4), res.success, res.status
        (Array([ 1., -2.], dtype=float32), Array(True, dtype=bool), Array(0, dtype=int32))
    """
    if not isinstance(args, tuple):
        raise TypeError(f"minimize: `args` must be a tuple of extra arguments to fun; got {type(args).__name__}. "
                        f"Write args=(value,) for one argument.")
    if not isinstance(method, str) or method.lower() != "bfgs":
        raise ValueError(f"minimize: method {method!r} is not implemented; use method='BFGS'.")
    options = dict(options or {})
    unknown = sorted(set(options) - set(_BFGS_OPTIONS))
    if unknown:
        raise TypeError(f"minimize: unknown BFGS option(s) {unknown}; the options are {list(_BFGS_OPTIONS)}.")
    if tol is not None:
        options.setdefault("gtol", tol)
    check_arraylike("minimize", x0)
    (x0,) = promote_dtypes_inexact(jnp.asarray(x0))
    if np.issubdtype(x0.dtype, np.complexfloating):
        raise TypeError(f"minimize: x0 must be real; got {x0.dtype}.")
    shape = x0.shape

    def flat_fun(x):
        value = jnp.asarray(fun(x.reshape(shape), *args))
        if value.shape != ():
            raise TypeError(f"minimize: fun must return a scalar; it returned shape {value.shape}.")
        return value

    res = minimize_bfgs(flat_fun, x0.reshape(-1), **options)
    return OptimizeResults(x=res.x_k.reshape(shape), success=res.converged & ~res.failed, status=res.status,
                           fun=res.f_k, jac=res.g_k.reshape(shape), hess_inv=res.H_k, nfev=res.nfev,
                           njev=res.ngev, nit=res.k)
