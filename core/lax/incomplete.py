"""jax.lax's incomplete gamma and beta functions: `igamma`, `igammac`, `igamma_grad_a`,
`random_gamma_grad` and `betainc` (the function behind jax.lax's `regularized_incomplete_beta_p`).

One implementation: these are lax's calling convention (one shape, rank-0 operands broadcast; one
floating dtype, no promotion; Python scalars take the array operand's dtype) over `core/scipy/_incomplete.py`'s
elementwise iterations, which `core.scipy.special.gammainc`/`gammaincc`/`betainc` use as well.
That module is written with `core.numpy`, which imports `core.lax`; so it is imported when a
function here is first called, not when `core.lax` is (an import at load time would be a cycle).

They are compositions (while loops over the whole array), not primitives: JAX's `igamma_p`,
`igammac_p`, `igamma_grad_a_p` and `regularized_incomplete_beta_p` have no counterpart here.
Derivatives: igamma and igammac in both arguments (in `a` through `igamma_grad_a`'s forward-mode
iteration, in `x` the gamma density), first order in reverse mode; betainc in all three (JAX
defines only the one in x). `igamma_grad_a` and `random_gamma_grad` have no derivative in JAX;
here forward mode through them works, reverse mode raises.
"""
import numpy as np

from .. import dtypes
from ._base import aval_of, elementwise_args

__all__ = ["igamma", "igammac", "igamma_grad_a", "random_gamma_grad", "betainc"]


def _impl():
    from ..scipy import _incomplete  # at call time: core.scipy imports core.numpy, which imports core.lax
    return _incomplete


def _operands(name, names, *args):
    """lax's rule for these functions: arrays of one shape (rank-0 operands broadcast) and one
    floating dtype (Python scalars take the dtype of the array operand), with an error naming each
    operand's type otherwise."""
    args = elementwise_args(*args)
    if any(isinstance(a, (bool, int, float, complex)) for a in args):  # scalars only: default float
        from .structural import full
        dtype = dtypes.canonicalize_dtype(np.float64)
        args = [full((), a, dtype) if isinstance(a, (bool, int, float, complex)) else a for a in args]
    avals = [aval_of(a) for a in args]
    types = ", ".join(f"{n}: {np.dtype(aval.dtype).name}{list(aval.shape)}" for n, aval in zip(names, avals))
    if not all(dtypes.issubdtype(aval.dtype, np.floating) for aval in avals):
        raise TypeError(f"lax.{name} takes floating-point arrays, got {types}; convert with "
                        f"lax.convert_element_type (or use core.scipy.special, which promotes).")
    shapes = {aval.shape for aval in avals if aval.shape != ()}
    if len({aval.dtype for aval in avals}) != 1 or len(shapes) > 1:
        raise TypeError(f"lax.{name} needs operands of one shape (or rank 0) and one dtype (lax does "
                        f"not broadcast or promote), got {types}; broadcast and convert them first (or "
                        f"use core.scipy.special).")
    if shapes:  # rank-0 operands broadcast to the others' shape, as in lax's elementwise functions
        from .structural import broadcast_in_dim
        (shape,) = shapes
        args = [broadcast_in_dim(a, shape, ()) if aval.shape == () else a for a, aval in zip(args, avals)]
    return args


def igamma(a, x):
    """The regularized lower incomplete gamma function P(a, x), elementwise, as
    `jax.lax.igamma` (`core.scipy.special.gammainc` with lax's argument rules).

    >>> print(lax.igamma(jnp.array([2.0]), jnp.array([3.0])))
    [0.800851...]
    """
    a, x = _operands("igamma", ("a", "x"), a, x)
    return _impl()._gammainc(a, x)


def igammac(a, x):
    """The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x), elementwise, as
    `jax.lax.igammac` (computed directly, so small upper tails keep their relative accuracy).

    >>> print(lax.igammac(jnp.array([2.0]), jnp.array([3.0])))
    [0.199148...]
    """
    a, x = _operands("igammac", ("a", "x"), a, x)
    return _impl()._gammaincc(a, x)


def _igamma_grad_a(a, x):
    from ..autodiff import jvp
    impl = _impl()
    from .structural import full_like
    return jvp(lambda a_: impl._igamma_value(a_, x, False), (a,), (full_like(a, 1.0),))[1]


def igamma_grad_a(a, x):
    """d/da P(a, x), the derivative of `igamma` in its shape parameter, as `jax.lax.igamma_grad_a`
    (forward-mode differentiation of the same iteration, run until the derivative settles).

    >>> print(lax.igamma_grad_a(jnp.array([2.0]), jnp.array([3.0])))
    [-0.197425...]
    """
    a, x = _operands("igamma_grad_a", ("a", "x"), a, x)
    return _igamma_grad_a(a, x)


def random_gamma_grad(a, x):
    """The derivative in `a` of a Gamma(a, 1) sample `x` with its quantile held fixed, as
    `jax.lax.random_gamma_grad` (implicit reparameterization): dx/da = -(dP/da) / (dP/dx), where
    P(a, x) is `igamma` and dP/dx the gamma density; 0 at x == 0.

    >>> print(lax.random_gamma_grad(jnp.array([2.0]), jnp.array([3.0])))
    [1.32179...]
    """
    from . import elementwise as el
    from .structural import full_like
    a, x = _operands("random_gamma_grad", ("a", "x"), a, x)
    positive = el.gt(x, full_like(x, 0.0))
    safe_x = el.select_n(positive, full_like(x, 1.0), x)
    # 1 / density = exp(x + lgamma(a) - (a - 1) log x), in log space so it neither over- nor underflows early
    log_inv_density = el.sub(el.add(safe_x, el.lgamma(a)), el.mul(el.sub(a, full_like(a, 1.0)), el.log(safe_x)))
    grad = el.neg(el.mul(_igamma_grad_a(a, safe_x), el.exp(log_inv_density)))
    return el.select_n(positive, full_like(x, 0.0), grad)


def betainc(a, b, x):
    """The regularized incomplete beta function I_x(a, b), elementwise, as `jax.lax.betainc`
    (`regularized_incomplete_beta_p` in JAX; `core.scipy.special.betainc` with lax's argument rules).

    >>> print(lax.betainc(jnp.array([2.0]), jnp.array([3.0]), jnp.array([0.4])))
    [0.5248...]
    """
    a, b, x = _operands("betainc", ("a", "b", "x"), a, b, x)
    return _impl()._betainc(a, b, x)
