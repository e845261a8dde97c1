"""`core.scipy.stats`: probability distributions as in `scipy.stats` / `jax.scipy.stats`.

Each distribution is a module of functions (`norm.logpdf(x, loc, scale)`, `poisson.pmf(k, mu)`)
that take arrays, broadcast their arguments and follow SciPy's values: -inf log-densities (0
densities) outside the support, NaN for invalid parameters (scale <= 0, p outside [0, 1]) and for
probabilities outside [0, 1] given to a quantile function.

>>> from core.scipy import stats
>>> print(round(float(stats.norm.logpdf(0.0, loc=0.0, scale=1.0)), 5))
-0.91894
"""
from . import (bernoulli, beta, betabinom, binom, cauchy, chi2, dirichlet, expon, gamma, gennorm,  # noqa: F401
               geom, gumbel_l, gumbel_r, laplace, logistic, multinomial, multivariate_normal, nbinom, norm, pareto,
               poisson, t, truncnorm, uniform, vonmises, wrapcauchy)
from .descriptive import ModeResult, mode, rankdata, sem  # noqa: F401
from .kde import gaussian_kde  # noqa: F401

__all__ = ["bernoulli", "beta", "betabinom", "binom", "cauchy", "chi2", "dirichlet", "expon", "gamma", "gennorm",
           "geom", "gumbel_l", "gumbel_r", "laplace", "logistic", "multinomial", "multivariate_normal", "nbinom",
           "norm", "pareto", "poisson", "t", "truncnorm", "uniform", "vonmises", "wrapcauchy",
           "ModeResult", "mode", "rankdata", "sem", "gaussian_kde"]
