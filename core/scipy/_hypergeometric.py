"""Kummer's confluent hypergeometric function `hyp1f1`.

1F1(a; b; x) = sum_k (a)_k / (b)_k x^k / k!, summed for 500 terms in a loop (the terms grow until
k ~ |x| and then fall faster than geometrically, so |x| up to ~300 converges), for x < 0 after
Kummer's transformation 1F1(a; b; x) = e^x 1F1(b - a; b; -x). For a > 0 and b - a > 0 every term
is positive and the sum is accurate to a few ulp; where (a)_k changes sign (negative a, or b - a
for x < 0) the terms cancel, and accuracy falls by the ratio of the largest term to the result.
Differentiable in a, b and x by autodiff of the loop.
"""
from .. import lax
from .. import numpy as jnp
from ._util import inexact_args, library_jit

_TERMS = 500


def _hyp1f1_value(a, b, x):
    negative = x < 0
    a_eff = jnp.where(negative, b - a, a)
    ax = jnp.abs(x)

    def step(i, carry):
        total, term = carry
        k = lax.convert_element_type(i, x.dtype)
        term = term * (a_eff + k) / (b + k) * ax / (k + 1)
        return total + term, term

    total, _ = lax.fori_loop(0, _TERMS, step, (jnp.ones_like(x), jnp.ones_like(x)))
    return jnp.where(negative, jnp.exp(x) * total, total)


_hyp1f1 = library_jit(_hyp1f1_value)


def hyp1f1(a, b, x):
    """Kummer's confluent hypergeometric function 1F1(a; b; x) for real arguments, by its power
    series (after Kummer's transformation for x < 0), 500 terms: accurate for |x| up to ~300 when
    a > 0 and b > a (see the module notes for cancellation elsewhere). Differentiable.

    >>> print(round(float(hyp1f1(1.0, 2.0, 1.0)), 5))   # (e - 1) / 1
    1.71828
    """
    a, b, x = inexact_args("hyp1f1", a, b, x)
    return _hyp1f1(a, b, x)
