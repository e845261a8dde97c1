"""A line search for the strong Wolfe conditions (Nocedal and Wright, "Numerical Optimization",
algorithms 3.5 and 3.6), as `jax.scipy.optimize`'s BFGS uses: first bracket a step that satisfies
them, then zoom into the bracket by safeguarded cubic or quadratic interpolation.

It is one `lax.while_loop` whose every iteration evaluates the function and its gradient once, at
the trial step the previous iteration chose; a `phase` flag says whether the loop is still
bracketing or already zooming. So it runs under jit and vmap without nested loops.
"""
from typing import NamedTuple

import numpy as np

from ... import lax
from ... import numpy as jnp
from ...autodiff import value_and_grad
from ...numpy._util import promote_dtypes_inexact

__all__ = ["line_search", "LineSearchResults"]

_BRACKET, _ZOOM = 0, 1


class LineSearchResults(NamedTuple):
    """The outcome of `line_search`: `failed` (no step met the conditions), `nit` (iterations),
    `nfev`/`ngev` (function and gradient evaluations), `k` (iterations, as JAX), `a_k` (the step),
    `f_k` and `g_k` (value and gradient there) and `status` (0 found, 1 the zoom interval
    collapsed, 3 out of iterations)."""
    failed: object
    nit: object
    nfev: object
    ngev: object
    k: object
    a_k: object
    f_k: object
    g_k: object
    status: object


class _State(NamedTuple):
    it: object
    phase: object
    done: object
    collapsed: object
    nfev: object
    trial: object          # the step evaluated by the next iteration
    # bracketing: the previous step; zooming: `lo` is the best step so far with sufficient
    # decrease, `hi` the other end, `rec` the end replaced last (the third cubic point)
    lo: object
    phi_lo: object
    dphi_lo: object
    hi: object
    phi_hi: object
    dphi_hi: object
    rec: object
    phi_rec: object
    have_rec: object
    star: object
    phi_star: object
    g_star: object


def _cubic_min(a, fa, fpa, b, fb, c, fc):
    """The minimizer of the cubic through (a, fa) with slope fpa, (b, fb) and (c, fc); NaN when
    there is none (the caller then falls back to a quadratic)."""
    db, dc = b - a, c - a
    rb, rc = fb - fa - fpa * db, fc - fa - fpa * dc
    denom = db * db * dc * dc * (db - dc)
    # p(x) = fa + fpa t + B t^2 + A t^3 with t = x - a, fitted to the two other points
    A = (dc * dc * rb - db * db * rc) / denom
    B = (db * db * db * rc - dc * dc * dc * rb) / denom
    radical = B * B - 3 * A * fpa
    return a + (-B + jnp.sqrt(radical)) / (3 * A)


def _quadratic_min(a, fa, fpa, b, fb):
    """The minimizer of the quadratic through (a, fa) with slope fpa and (b, fb)."""
    db = b - a
    curvature = (fb - fa - fpa * db) / (db * db)
    return a - fpa / (2 * curvature)


def _next_trial(s):
    """A step strictly inside the bracket [lo, hi]: the cubic's minimizer if it lies well inside
    (20 % away from the ends), else the quadratic's (10 %), else the midpoint."""
    width = jnp.abs(s.hi - s.lo)
    left, right = jnp.minimum(s.lo, s.hi), jnp.maximum(s.lo, s.hi)

    def inside(x, margin):
        return jnp.isfinite(x) & (x > left + margin * width) & (x < right - margin * width)

    cubic = _cubic_min(s.lo, s.phi_lo, s.dphi_lo, s.hi, s.phi_hi, s.rec, s.phi_rec)
    quadratic = _quadratic_min(s.lo, s.phi_lo, s.dphi_lo, s.hi, s.phi_hi)
    middle = (s.lo + s.hi) / 2
    return jnp.where(s.have_rec & inside(cubic, 0.2), cubic, jnp.where(inside(quadratic, 0.1), quadratic, middle))


def line_search(f, xk, pk, old_fval=None, old_old_fval=None, gfk=None, c1=1e-4, c2=0.9, maxiter=20):
    """Find a step `a` along the descent direction `pk` from `xk` with sufficient decrease
    (`f(xk + a pk) <= f(xk) + c1 a g.pk`) and small slope (`|g(xk + a pk).pk| <= c2 |g.pk|`), as
    `jax.scipy.optimize.line_search`. `old_fval`/`gfk` are f and its gradient at xk if known;
    `old_old_fval` (f at the previous iterate) sets the first trial step as SciPy does. Returns
    `LineSearchResults`; jittable.

    Example:
        >>> from core.scipy.optimize.line_search import line_search
        >>> res = line_search(lambda x: jnp.sum((x - 1.0) ** 2), jnp.zeros(2), jnp.ones(2))
        >>> res.a_k, res.f_k, res.failed
        (Array(1., dtype=float32), Array(0., dtype=float32), Array(False, dtype=bool))
    """
    xk, pk = promote_dtypes_inexact(jnp.asarray(xk), jnp.asarray(pk))
    dtype = xk.dtype

    def phi_and_grad(a):
        value, g = value_and_grad(f)(xk + a.astype(dtype) * pk)
        return value, jnp.real(jnp.vdot(g, pk)), g

    if old_fval is None or gfk is None:
        phi0, dphi0, g0 = phi_and_grad(jnp.zeros((), jnp.real(xk).dtype))
        nfev0 = 1
    else:
        phi0, g0 = jnp.asarray(old_fval), jnp.asarray(gfk)
        dphi0 = jnp.real(jnp.vdot(g0, pk))
        nfev0 = 0
    real = jnp.result_type(phi0)
    one = jnp.ones((), real)
    if old_old_fval is None:
        first = one
    else:
        # the step at which a quadratic with this slope would have dropped as far as the last step
        guess = 2.02 * (phi0 - old_old_fval) / dphi0
        first = jnp.where(jnp.isfinite(guess) & (guess > 0), jnp.minimum(guess, one), one).astype(real)

    zero = jnp.zeros((), real)
    init = _State(it=jnp.zeros((), np.int32), phase=jnp.zeros((), np.int32), done=jnp.array(False),
                  collapsed=jnp.array(False), nfev=jnp.asarray(nfev0, np.int32), trial=first,
                  lo=zero, phi_lo=phi0, dphi_lo=dphi0, hi=zero, phi_hi=phi0, dphi_hi=dphi0,
                  rec=zero, phi_rec=phi0, have_rec=jnp.array(False), star=zero, phi_star=phi0, g_star=g0)

    tiny = 4 * jnp.finfo(real).eps

    def pick(cond, x, y):
        return tuple(jnp.where(cond, u, v) for u, v in zip(x, y))

    def body(s):
        a = s.trial
        phi, dphi, g = phi_and_grad(a)
        too_high = phi > phi0 + c1 * a * dphi0
        flat = jnp.abs(dphi) <= -c2 * dphi0
        here, lo, hi = (a, phi, dphi), (s.lo, s.phi_lo, s.dphi_lo), (s.hi, s.phi_hi, s.dphi_hi)
        bracketing = s.phase == _BRACKET

        # bracketing (algorithm 3.5), `lo` holding the previous step: a step that rose (or rose
        # above the previous one) brackets [previous, a]; one whose slope is not flat enough but
        # points up brackets [a, previous]; a flat one is accepted; otherwise double the step
        up = too_high | ((s.it > 0) & (phi >= s.phi_lo))
        down = ~up & ~flat & (dphi >= 0)
        b_lo, b_hi = pick(up, lo, here), pick(up, here, lo)
        # zooming (algorithm 3.6) in [lo, hi]: a step that rose replaces hi; otherwise a flat one
        # is accepted, or it becomes lo (and the old lo becomes hi where the slope at a points
        # towards hi). The end that is dropped is the third point of the next cubic fit.
        rose = too_high | (phi >= s.phi_lo)
        flip = ~rose & (dphi * (s.hi - s.lo) >= 0)
        z_lo = pick(rose, lo, here)
        z_hi = pick(rose, here, pick(flip, lo, hi))
        z_rec = pick(rose | flip, hi, lo)

        found = jnp.where(bracketing, ~up & flat, ~rose & flat)
        zooming = ~bracketing | up | down
        new_lo = pick(bracketing, b_lo, z_lo)
        new_hi = pick(bracketing, b_hi, z_hi)
        s2 = s._replace(phase=jnp.where(zooming, _ZOOM, _BRACKET).astype(np.int32),
                        lo=new_lo[0], phi_lo=new_lo[1], dphi_lo=new_lo[2],
                        hi=new_hi[0], phi_hi=new_hi[1], dphi_hi=new_hi[2],
                        rec=jnp.where(bracketing, s.rec, z_rec[0]), phi_rec=jnp.where(bracketing, s.phi_rec, z_rec[1]),
                        have_rec=~bracketing)
        trial = jnp.where(zooming, _next_trial(s2), 2 * a)
        width = jnp.abs(s2.hi - s2.lo)
        collapsed = zooming & ~found & (width <= tiny * jnp.maximum(jnp.abs(s2.lo), jnp.abs(s2.hi)))
        # the step returned: the accepted one, else the lowest seen with sufficient decrease
        better = found | (~too_high & (phi < s.phi_star))
        return s2._replace(it=s.it + 1, done=found, collapsed=collapsed, nfev=s.nfev + 1, trial=trial,
                           star=jnp.where(better, a, s.star), phi_star=jnp.where(better, phi, s.phi_star),
                           g_star=jnp.where(better, g, s.g_star))

    s = lax.while_loop(lambda s: ~s.done & ~s.collapsed & (s.it < maxiter), body, init)
    status = jnp.where(s.done, 0, jnp.where(s.collapsed, 1, 3)).astype(np.int32)
    return LineSearchResults(failed=~s.done, nit=s.it, nfev=s.nfev, ngev=s.nfev, k=s.it, a_k=s.star,
                             f_k=s.phi_star, g_k=s.g_star, status=status)
