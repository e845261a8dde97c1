"""`core.scipy.stats`: probability distributions as in `scipy.stats` / `jax.scipy.stats`.

Each distribution is a module of functions (`norm.logpdf(x, loc, scale)`, `poisson.pmf(k, mu)`)
that take arrays, broadcast their arguments and follow SciPy's values: -inf log-densities (0
densities) outside the support, NaN for invalid parameters (scale <= 0, p outside [0, 1]) and for
probabilities outside [0, 1] given to a quantile function.

>>> from core.scipy import stats
>>> print(round(float(stats.norm.logpdf(0.0, loc=0.0, scale=1.0)), 5))
-0.91894
"""
from . import (bernoulli, beta, binom, cauchy, chi2, dirichlet, expon, gamma, laplace, logistic,  # noqa: F401
               multivariate_normal, norm, poisson, t, uniform)

__all__ = ["bernoulli", "beta", "binom", "cauchy", "chi2", "dirichlet", "expon", "gamma", "laplace", "logistic",
           "multivariate_normal", "norm", "poisson", "t", "uniform"]
