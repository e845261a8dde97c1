"""core.scipy.stats' later distributions and functions (betabinom, gennorm, geom, gumbel_l,
gumbel_r, multinomial, nbinom, pareto, truncnorm, vonmises, wrapcauchy; mode, rankdata, sem;
gaussian_kde) against scipy.stats in float64 over grids with tails, support edges and invalid
parameters; far-tail values where SciPy's own underflow or cancel against mpmath values (60
digits, recorded below) or closed forms; gradients in x and in the parameters against central
differences of SciPy's functions; and one JAX-style program.

Compiling is most of the cost here. Every distribution is evaluated eagerly on flat arrays of one
length N (a grid of points and parameter combinations, broadcast, flattened and repeated up to N;
gradient points and single tail points too), so each primitive and each jitted special function
compiles once for the whole file. (Jitting each grid instead costs several times more: XLA
compiles every large program from scratch.) The descriptive functions, multinomial and
gaussian_kde are the other way round (many small operations on varied shapes): each of their tests
runs as one jitted program."""

import numpy as np
import pytest
import scipy.stats as st

import core
import core.numpy as jnp
from core.scipy import stats

# the SciPy oracle warns on the infinite and invalid edge arguments it is given on purpose
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

N = 1024


def _check(ours, theirs, what, rtol=1e-12, atol=0.0):
    ours = np.asarray(ours, np.float64)
    assert ours.shape == np.shape(theirs), what
    with np.errstate(all="ignore"):
        np.testing.assert_allclose(ours, theirs, rtol=rtol, atol=atol, equal_nan=True, err_msg=what)


def _flat(*arrays):
    """The arrays broadcast together, flattened and repeated cyclically up to length N."""
    arrays = np.broadcast_arrays(*[np.asarray(a, np.float64) for a in arrays])
    assert arrays[0].size <= N
    return [np.resize(a.ravel(), N) for a in arrays]


def _grid(points, combinations):
    """Every point with every parameter combination, flattened to length N: [x, p1, p2, ...]."""
    columns = [np.array(column, np.float64)[None, :] for column in zip(*combinations)]
    return _flat(np.asarray(points, np.float64).reshape(-1, 1) if np.ndim(points) == 1 else points, *columns)


def _both(name, fn):
    return getattr(getattr(stats, name), fn), getattr(getattr(st, name), fn)


# ----- continuous distributions against SciPy -----------------------------------------------------

# x values at the usual edges: infinities, far tails, 0 (and 1e-8 above it), 1 (pareto's support
# starts there), 2 pi and just above it (wrapcauchy's support ends there), large magnitudes
X = np.array([-np.inf, -800.0, -40.0, -3.0, -1.0, -0.3, 0.0, 1e-8, 0.25, 1.0, 1.7, 3.14, 2 * np.pi, 6.3,
              45.0, 800.0, np.inf])
Q = np.array([-0.1, 0.0, 1e-300, 1e-12, 0.01, 0.3, 0.5, 0.9, 1 - 1e-9, 1.0, 1.2, np.nan])
LOC_SCALE = [(0.0, 1.0), (0.7, 2.5), (-1.0, 0.4), (0.0, -1.0), (0.0, 0.0)]
ON_X = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"]
TRUNCATIONS = [(-1.0, 1.0), (0.0, 2.0), (-np.inf, np.inf), (-np.inf, 0.5), (1.0, np.inf), (30.0, 40.0),
               (-40.0, -30.0), (-0.1, 0.1), (-3.0, 1e-8), (0.5, 0.9), (2.0, 1.0), (1.0, 1.0)]


def _truncnorm_grid():
    """X's first ten points and 7 points spread over each [a, b]'s finite part (scaled and
    shifted), for every truncation and (loc, scale)."""
    columns, combinations = [], []
    for a, b in TRUNCATIONS:
        lo, hi = (a if np.isfinite(a) else -5.0), (b if np.isfinite(b) else 5.0)
        inner = np.linspace(lo, hi, 9)[1:-1]
        for loc, scale in LOC_SCALE:
            columns.append(np.concatenate([X[:10], inner * (scale if scale > 0 else 1) + loc]))
            combinations.append((a, b, loc, scale))
    return _grid(np.stack(columns, axis=1), combinations)


def _continuous_cases():
    cases = []
    for name in ("gumbel_r", "gumbel_l"):
        cases += [(name, fn, _grid(X, LOC_SCALE)) for fn in ON_X]
        cases.append((name, "ppf", _grid(Q, LOC_SCALE)))
    pareto = [(b, loc, scale) for b in (0.5, 2.0, 7.0, -1.0, 0.0) for loc, scale in LOC_SCALE]
    cases += [("pareto", fn, _grid(X, pareto)) for fn in ON_X] + [("pareto", "ppf", _grid(Q, pareto))]
    cases += [("truncnorm", fn, _truncnorm_grid()) for fn in ON_X]
    cases += [("gennorm", fn, _grid(X, [(b,) for b in (0.3, 1.0, 2.0, 8.0, -1.0, 0.0)]))
              for fn in ("logpdf", "pdf", "cdf")]
    cases += [("vonmises", fn, _grid(X, [(k,) for k in (0.0, 0.5, 3.0, 700.0, 1e5, -1.0)])) for fn in ("logpdf", "pdf")]
    cases += [("wrapcauchy", fn, _grid(X, [(c,) for c in (0.0, 1e-3, 0.5, 0.99, 1.0, -0.5)]))
              for fn in ("logpdf", "pdf")]
    return cases


# grid cells where SciPy's difference of cdfs loses 3e-9 relative (masses of 1e-8 and less):
# truncnorm on [0, 2] at 1e-8 and on [-3, 1e-8] at 0, as (standardized x, a, b); the next test
# checks them against mpmath
_SCIPY_CANCELS = [(1e-8, 0.0, 2.0), (0.0, -3.0, 1e-8)]
RTOL = {"truncnorm": 2e-12, "vonmises": 1e-11, "wrapcauchy": 2e-12, "gennorm": 1e-13}


def test_continuous_distributions_against_scipy(x64):
    for name, fn, args in _continuous_cases():
        ours, theirs = _both(name, fn)
        ours = np.asarray(ours(*args))
        expected = theirs(*args)
        if (name, fn) in (("gumbel_r", "logsf"), ("gumbel_l", "logcdf")):
            # SciPy underflows to -inf here; log(1 - exp(-exp(-z))) = -z - exp(-z)/2 to double
            # precision for z > 20 (it is -2002.5 at z = 2002.5)
            x, loc, scale = args
            with np.errstate(all="ignore"):
                z = (1 if name == "gumbel_r" else -1) * (x - loc) / scale
                expected = np.where(np.isfinite(z) & (z > 20) & (scale > 0), -z - 0.5 * np.exp(-z), expected)
        if name == "truncnorm":
            x, a, b, loc, scale = args
            with np.errstate(all="ignore"):
                y = (x - loc) / scale
            for cell in _SCIPY_CANCELS:
                at = (y == cell[0]) & (a == cell[1]) & (b == cell[2])
                assert at.any()
                expected = np.where(at, ours, expected)
        _check(ours, expected, f"{name}.{fn}", RTOL.get(name, 1e-12), 1e-15 if fn == "ppf" else 0.0)


# single points, each function's points repeated up to N (so they reuse the grids' executables)
TAIL_POINTS = {
    "gumbel_r.logsf": [[30.0, 800.0, 1e6]],
    "gumbel_l.logcdf": [[-30.0, -800.0, -1e6]],
    "gumbel_r.logcdf": [[-700.0]],
    "gumbel_l.logsf": [[700.0]],
    "pareto.cdf": [[1 + 2.0 ** -30], [2.0]],
    "pareto.logcdf": [[1 + 2.0 ** -30], [2.0]],
    "pareto.logsf": [[1e300], [3.0]],
    "truncnorm.logcdf": [[-40.0, 0.0], [-np.inf, -3.0], [np.inf, 1e-8]],
    "truncnorm.logpdf": [[31.0, 1e-10], [30.0, 1e-10], [40.0, 2e-10]],
    "truncnorm.logsf": [[35.0, 1e-8, 0.0], [30.0, 0.0, -3.0], [40.0, 2.0, 1e-8]],
    "truncnorm.cdf": [[1.25e-10, 1 + 2.0 ** -30, 1e-8], [1e-10, 1.0, 0.0], [2e-10, np.inf, 2.0]],
    "gennorm.cdf": [[-30.0], [1.5]],
    "wrapcauchy.pdf": [[0.0], [1 - 2.0 ** -30]],
}


def test_far_tails_and_narrow_intervals(x64):
    ours = {}
    for label, args in TAIL_POINTS.items():
        name, fn = label.split(".")
        ours[label] = np.asarray(getattr(getattr(stats, name), fn)(*_flat(*args)))[:len(args[0])]
    z = np.array([30.0, 800.0, 1e6])
    # log(1 - exp(-exp(-z))) = -z - exp(-z)/2 + O(exp(-2z)) (mpmath: -30.00000000000004678811 at 30);
    # SciPy gives -inf at 800
    _check(ours["gumbel_r.logsf"], -z - 0.5 * np.exp(-z), "gumbel_r.logsf far tail", 1e-15)
    _check(ours["gumbel_l.logcdf"], -z - 0.5 * np.exp(-z), "gumbel_l.logcdf far tail", 1e-15)
    _check(ours["gumbel_r.logsf"][0], -30.00000000000004678811484, "gumbel_r.logsf(30), mpmath", 1e-15)
    # the lower tail's log is exact: log cdf = -exp(-z)
    _check(ours["gumbel_r.logcdf"], [-np.exp(700.0)], "gumbel_r.logcdf(-700)", 1e-14)
    _check(ours["gumbel_l.logsf"], [-np.exp(700.0)], "gumbel_l.logsf(700)", 1e-14)
    # just above pareto's support start (SciPy loses 1e-10 relative here): mpmath at 1 + 2^-30
    _check(ours["pareto.cdf"], [1.8626451466288718205e-9], "pareto.cdf near 1", 1e-15)
    _check(ours["pareto.logcdf"], [-20.101268237635397834], "pareto.logcdf near 1", 1e-15)
    _check(ours["pareto.logsf"], [-3 * np.log(1e300)], "pareto.logsf(1e300), where sf underflows", 1e-15)
    # truncnorm far out (masses of 1e-200 and less), on an interval 1e-10 wide next to 0 (SciPy is
    # off by 2e-6 there), and the grid cells SciPy loses 3e-9 at: mpmath values
    cdf_0_2 = 8.3591910047026914869e-9  # on [0, 2] at 1e-8
    _check(ours["truncnorm.logcdf"], [st.norm.logcdf(-40.0), -8.0004451464221348925e-9], "truncnorm.logcdf", 1e-14)
    _check(ours["truncnorm.logpdf"], [st.truncnorm.logpdf(31.0, 30.0, 40.0), 23.025850929940456804],
           "truncnorm.logpdf far out and on [1e-10, 2e-10]", 1e-14)
    _check(ours["truncnorm.logsf"], [st.truncnorm.logsf(35.0, 30.0, 40.0), np.log1p(-cdf_0_2),
                                     -18.643768657512062084], "truncnorm.logsf", 1e-12)
    # on [1, inf) at 1 + 2^-30 the mass is a difference of two cdfs near 0.84: inherently ~1e-7
    _check(ours["truncnorm.cdf"][[0, 2]], [0.25000000000000003231, cdf_0_2], "truncnorm.cdf on narrow intervals",
           1e-14)
    _check(ours["truncnorm.cdf"][1], 1.420392911369711862e-9, "truncnorm.cdf on [1, inf) at 1 + 2^-30", 2e-6)
    # the lower tail of gennorm's cdf keeps its digits (1/2 - P/2 would round to 0)
    _check(ours["gennorm.cdf"], [st.gennorm.cdf(-30.0, 1.5)], "gennorm.cdf far tail", 1e-12)
    # c near 1 at x = 0: (1 - c^2) / (2 pi (1 - c)^2) = (1 + c) / (2 pi (1 - c)); SciPy's 1 + c^2 - 2c
    # cancels to 0 there and it returns inf
    c = 1 - 2.0 ** -30
    _check(ours["wrapcauchy.pdf"], [(1 + c) / (2 * np.pi * 2.0 ** -30)], "wrapcauchy near c = 1", 1e-14)


# ----- discrete distributions --------------------------------------------------------------------

K = np.array([-2.0, -1.0, 0.0, 0.5, 1.0, 2.0, 3.0, 7.0, 40.0, 1e4])


def test_discrete_distributions_against_scipy(x64):
    geom = [(p, loc) for p in (1e-3, 0.3, 1.0, 0.0, 1.5) for loc in (0, 2)]
    nbinom = [(n, p, loc) for p in (1e-3, 0.3, 1.0, 0.0, 1.5) for n in (0.5, 3.0, 40.0, 0.0, -1.0) for loc in (0, -1)]
    betabinom = [(n, a, b, loc) for n in (0, 1, 5, 40, 2.5, -1)
                 for a, b in ((0.5, 0.5), (2.0, 7.0), (1e3, 3.0), (0.0, 1.0), (1.0, -2.0)) for loc in (0, 1)]
    for name, combinations, rtol, atol in [("geom", geom, 1e-13, 0.0),
                                           # the coefficient is a difference of log-gammas of 1e4
                                           # (SciPy's pmf is exact)
                                           ("nbinom", nbinom, 3e-11, 0.0),
                                           # log-pmfs near 0 (masses near 1) are compared absolutely
                                           ("betabinom", betabinom, 1e-11, 1e-11)]:
        args = _grid(K, combinations)
        for fn in ("logpmf", "pmf"):
            ours, theirs = _both(name, fn)
            _check(ours(*args), theirs(*args), f"{name}.{fn}", rtol, atol)


def test_multinomial(x64):
    x = np.array([[1, 2, 0], [0, 0, 3], [1, 1, 1], [2, 2, -1], [3, 0, 0]])
    # the invalid cases: n < 0 and a negative probability (SciPy: NaN); then integral float counts,
    # per-row n and a batch of probability vectors
    cases = [(3, [0.2, 0.3, 0.5]), (3, [0.0, 0.5, 0.5]), (-1, [0.2, 0.3, 0.5]), (3, [-0.1, 0.6, 0.5]),
             (3, [1.0, 0.0, 0.0])]
    ns = np.array([3, 3, 3, 3, 4])
    ps = np.array([[0.2, 0.3, 0.5], [0.1, 0.1, 0.8]])[np.array([0, 1, 0, 1, 0])]
    ours = core.jit(lambda x, ns, ps: (
        [(stats.multinomial.logpmf(x, n, jnp.array(p)), stats.multinomial.pmf(x, n, jnp.array(p))) for n, p in cases],
        stats.multinomial.logpmf(x.astype(jnp.float64), ns, ps),
        stats.multinomial.logpmf(jnp.array([1.5, 1.5, 0.0]), 3, ps[0])))(x, ns, ps)
    for (n, p), (logpmf, pmf) in zip(cases, ours[0]):
        # (a mass of 1 has a log-pmf of 0 up to rounding: compared absolutely)
        _check(logpmf, st.multinomial.logpmf(x, n, p), f"multinomial.logpmf({n}, {p})", 1e-13, 1e-15)
        _check(pmf, st.multinomial.pmf(x, n, p), f"multinomial.pmf({n}, {p})", 1e-13)
    _check(ours[1], [st.multinomial.logpmf(x[i], ns[i], ps[i]) for i in range(5)], "batched n and p", 1e-13)
    assert float(ours[2]) == -np.inf  # counts that are not integers
    with pytest.raises(ValueError, match=r"multinomial.logpmf: x and p must have as many categories.*int\d+\[5, 3\]"):
        stats.multinomial.logpmf(x, 3, np.array([0.5, 0.5]))


# ----- gradients: in x and in every parameter, against central differences of SciPy -----------------

# (module, functions, arguments): four points each, one list per argument; differentiating the sum
# of an elementwise function gives every point's partial derivatives at once
_GUMBEL = ([-1.5, 0.3, 2.0, 5.0], [0.2, -0.5, 1.0, 0.0], [1.5, 0.7, 2.0, 1.0])
_GUMBEL_Q = ([0.01, 0.3, 0.7, 0.999], [0.2, -0.5, 1.0, 0.0], [1.5, 0.7, 2.0, 1.0])
_PARETO = ([0.7, 2.0, 3.0, 1.2], [0.1, -0.5, 0.0, 0.3], [1.0, 2.0, 0.5, 1.5])
GRADIENT_CASES = [
    ("gumbel_r", ON_X, _GUMBEL),
    ("gumbel_l", ON_X, _GUMBEL),
    ("gumbel_r", ["ppf"], _GUMBEL_Q),
    ("gumbel_l", ["ppf"], _GUMBEL_Q),
    ("pareto", ON_X, ([1.5, 3.0, 10.0, 2.2], *_PARETO)),
    ("pareto", ["ppf"], ([0.01, 0.3, 0.7, 0.999], *_PARETO)),
    # the standardized x inside [a, b] in each: an interval around 0, one across 0, one right of 1,
    # one far out
    ("truncnorm", ON_X, ([0.1, -0.5, 2.2, 31.0], [-1.0, -2.0, 1.5, 30.0], [1.0, 0.5, 3.0, 40.0],
                         [0.2, 0.0, 0.1, 0.0], [1.2, 0.8, 1.0, 1.0])),
    ("gennorm", ["logpdf", "pdf", "cdf"], ([-2.0, -0.3, 0.7, 1.5], [0.8, 1.5, 2.0, 5.0])),
    ("vonmises", ["logpdf", "pdf"], ([-2.0, 0.3, 1.0, 3.0], [0.5, 2.0, 10.0, 200.0])),
    ("wrapcauchy", ["logpdf", "pdf"], ([0.2, 1.0, 3.0, 6.0], [0.1, 0.5, 0.9, 0.99])),
]


def _central_difference(fun, args, i):
    h = 1e-6 * np.maximum(1.0, np.abs(args[i]))
    up = [a + h if j == i else a for j, a in enumerate(args)]
    down = [a - h if j == i else a for j, a in enumerate(args)]
    return (fun(*up) - fun(*down)) / (2 * h)


@pytest.mark.parametrize("case", range(len(GRADIENT_CASES)), ids=[f"{c[0]}-{c[1][0]}" for c in GRADIENT_CASES])
def test_gradients_against_finite_differences(x64, case):
    name, functions, args = GRADIENT_CASES[case]
    args = _flat(*args)
    argnums = tuple(range(len(args)))
    for fn in functions:
        ours, theirs = _both(name, fn)
        grads = core.grad(lambda *a: jnp.sum(ours(*a)), argnums=argnums)(*args)
        for i in argnums:
            fd = _central_difference(theirs, [a[:4] for a in args], i)
            _check(grads[i][:4], fd, f"d {name}.{fn} / d argument {i}", 2e-6, 1e-9 * np.max(np.abs(fd)))


def test_discrete_parameter_gradients(x64):
    # d/dn and d/dp of nbinom's log-pmf, d/da of betabinom's, d/dp of geom's (closed form)
    k, n, p, a = _flat([0.0, 1.0, 4.0, 9.0], [0.5, 2.0, 3.5, 10.0], [0.2, 0.5, 0.7, 0.9], [0.5, 1.0, 2.0, 8.0])
    g_n, g_p = core.grad(lambda n, p: jnp.sum(stats.nbinom.logpmf(k, n, p)), argnums=(0, 1))(n, p)
    g_a = core.grad(lambda a: jnp.sum(stats.betabinom.logpmf(k, 9.0, a, 2.0)))(a)
    g_geom = core.grad(lambda p: jnp.sum(stats.geom.logpmf(k + 1, p)))(p)
    k, n, p, a = (v[:4] for v in (k, n, p, a))
    _check(g_n[:4], _central_difference(lambda n: st.nbinom.logpmf(k, n, p), [n], 0), "d nbinom / dn", 1e-6)
    _check(g_p[:4], _central_difference(lambda p: st.nbinom.logpmf(k, n, p), [p], 0), "d nbinom / dp", 1e-6)
    _check(g_a[:4], _central_difference(lambda a: st.betabinom.logpmf(k, 9, a, 2.0), [a], 0), "d betabinom / da",
           1e-6)
    _check(g_geom[:4], -k / (1 - p) + 1 / p, "d geom / dp (closed form)", 1e-13)


# ----- mode, rankdata, sem --------------------------------------------------------------------------

_TIES = np.array([[3.0, 1.0, 3.0, 2.0, 1.0, 3.0],
                  [5.0, 5.0, 0.0, 0.0, 5.0, 0.0],
                  [2.0, 7.0, 1.0, 9.0, 4.0, 8.0],
                  [1.0, 1.0, 1.0, 1.0, 1.0, 1.0]])
# NaNs: a column with two and a row with three (they count as one value for 'propagate'), an
# all-NaN row
_WITH_NAN = np.array([[3.0, np.nan, 3.0, 2.0, np.nan, np.nan],
                      [5.0, 5.0, 0.0, 0.0, 5.0, 0.0],
                      [2.0, 1.0, 1.0, 9.0, 4.0, 8.0],
                      [np.nan, np.nan, np.nan, np.nan, np.nan, np.nan]])


# (axis, keepdims, nan_policy) per data kind; ints have no NaNs, so 'omit' is not repeated for them
MODE_CASES = {"float": [(0, False, "propagate"), (1, True, "propagate"), (None, False, "omit"), (-1, False, "omit")],
              "int": [(None, True, "propagate")]}
# (method, axis, nan_policy)
RANK_CASES = {"float": [(method, axis, policy) for method in ("average", "min", "max", "dense", "ordinal")
                        for axis, policy in ((None, "propagate"), (1, "omit"))],
              "int": [("average", 0, "propagate")]}
# (axis, ddof, nan_policy, keepdims)
SEM_CASES = [(0, 1, "propagate", False), (None, 0, "propagate", True), (1, 2, "omit", True)]


def test_mode_rankdata_sem_against_scipy(x64):
    # one jitted program for every case (eagerly each call would compile its dozens of small
    # operations one by one)
    def program(floats, ints):
        out = {}
        for kind, data in (("float", floats), ("int", ints)):
            for i, (axis, keepdims, policy) in enumerate(MODE_CASES[kind]):
                out[f"mode {kind} {i}"] = stats.mode(data, axis=axis, keepdims=keepdims, nan_policy=policy)
            for i, (method, axis, policy) in enumerate(RANK_CASES[kind]):
                out[f"rankdata {kind} {i}"] = stats.rankdata(data, method, axis=axis, nan_policy=policy)
        for i, (axis, ddof, policy, keepdims) in enumerate(SEM_CASES):
            out[f"sem {i}"] = stats.sem(floats[:3], axis=axis, ddof=ddof, nan_policy=policy, keepdims=keepdims)
        # per row through vmap (a Python loop over rows is the oracle's)
        out["vmap"] = core.vmap(lambda row: stats.rankdata(row, "min"))(floats)
        return out

    ints = _TIES.astype(np.int64)
    ours = core.jit(program)(_WITH_NAN, ints)
    for kind, data in (("float", _WITH_NAN), ("int", ints)):
        for i, (axis, keepdims, policy) in enumerate(MODE_CASES[kind]):
            m, c = ours[f"mode {kind} {i}"]
            theirs = st.mode(data, axis=axis, keepdims=keepdims, nan_policy=policy)
            what = f"mode({kind}, axis={axis}, keepdims={keepdims}, {policy})"
            _check(m, theirs.mode, what)
            _check(c, theirs.count, what)
            assert m.dtype == data.dtype and c.dtype == np.int64, what
        for i, (method, axis, policy) in enumerate(RANK_CASES[kind]):
            r = ours[f"rankdata {kind} {i}"]
            _check(r, st.rankdata(data, method, axis=axis, nan_policy=policy),
                   f"rankdata({kind}, {method}, axis={axis}, {policy})")
            assert r.dtype == np.float64
    for i, (axis, ddof, policy, keepdims) in enumerate(SEM_CASES):
        # the first three rows: every slice keeps at least two numbers for 'omit' (SciPy gives NaN
        # for fewer, where the formula gives std / sqrt(n))
        _check(ours[f"sem {i}"], st.sem(_WITH_NAN[:3], axis=axis, ddof=ddof, nan_policy=policy, keepdims=keepdims),
               f"sem(axis={axis}, ddof={ddof}, {policy}, keepdims={keepdims})", 1e-14)
    _check(ours["vmap"], [st.rankdata(row, "min") for row in _WITH_NAN], "vmap(rankdata)")
    m, c = stats.mode(np.zeros((0,)))
    assert np.isnan(float(m)) and float(c) == 0.0


def test_descriptive_under_jit_and_argument_errors():
    x = _TIES.astype(np.float32)
    m, c = core.jit(lambda a: stats.mode(a, axis=1))(x)
    _check(m, st.mode(x, axis=1).mode, "jit(mode)")
    _check(c, st.mode(x, axis=1).count, "jit(mode) count")
    assert c.dtype == np.int32 and m.dtype == np.float32
    with pytest.raises(ValueError, match=r"rankdata: method must be one of .* got 'mean'"):
        stats.rankdata(_TIES, "mean")
    for fun in (stats.mode, stats.rankdata, stats.sem):
        with pytest.raises(NotImplementedError, match=r"nan_policy='raise' is not supported.*isnan"):
            fun(_TIES, nan_policy="raise")
        with pytest.raises(ValueError, match=r"nan_policy must be one of .* got 'skip'"):
            fun(_TIES, nan_policy="skip")
    with pytest.raises(ValueError, match=r"mode: axis 2 is out of bounds"):
        stats.mode(_TIES, axis=2)


# ----- gaussian_kde -----------------------------------------------------------------------------

def _kde_data():
    rng = np.random.default_rng(16)
    data1 = rng.normal(size=30) * np.array([1.0, 3.0])[rng.integers(0, 2, size=30)]
    data2 = rng.normal(size=(2, 30)) + np.array([[0.0], [1.0]])
    data2[1] += 0.6 * data2[0]
    return data1, data2, rng.uniform(0.1, 2.0, size=30)


# (d, options, everything): the first two get every method, the others (bandwidth rules, which
# change only the covariance) their covariance
KDE_CASES = [(1, {}, True), (2, {"weights": True}, True), (1, {"bw_method": 0.3}, False),
             (1, {"bw_method": "silverman"}, False), (2, {"bw_method": lambda kde: kde.neff ** -0.25}, False)]
BOXES = [(-1.0, 0.5), (-np.inf, 0.0), (2.0, np.inf), (-np.inf, np.inf)]


def test_gaussian_kde_against_scipy(x64):
    data1, data2, weights = _kde_data()
    points = {1: np.array([-30.0, -4.0, -0.5, 0.0, 0.3, 2.0, 9.0, 1e3]),
              2: np.random.default_rng(1).normal(size=(2, 8)) * 2}

    def options(kw, weights):
        return {k: (weights if k == "weights" else v) for k, v in kw.items()}

    # one jitted program builds every estimate and evaluates all of it (eagerly the estimator's
    # linear algebra and sampling would compile operation by operation)
    def program(data1, data2, weights, key):
        out = []
        for d, kw, everything in KDE_CASES:
            kde = stats.gaussian_kde(data1 if d == 1 else data2, **options(kw, weights))
            p = points[d]
            results = {"covariance": kde.covariance, "neff": kde.neff}
            out.append(results)
            if not everything:
                continue
            results.update({"logpdf": kde.logpdf(p), "evaluate": kde.evaluate(p), "integrate_kde": kde.integrate_kde(kde),
                            "integrate_gaussian": kde.integrate_gaussian(jnp.full(d, 0.5), 0.7 * jnp.eye(d))})
            if d == 1:
                results["pdf"], results["call"] = kde.pdf(p), kde(p)
                results["boxes"] = jnp.stack([kde.integrate_box_1d(lo, hi) for lo, hi in BOXES])
                results["grad"] = core.vmap(core.grad(lambda t: kde.logpdf(t[None])[0]))(p[2:6])
            else:
                results["one point"] = kde.evaluate(p[:, 0])
                results["weighted"] = kde
                results["samples"] = kde.resample(key, (200, 50))
        return out

    ours = core.jit(program)(data1, data2, weights, core.random.key(0))
    for (d, kw, everything), results in zip(KDE_CASES, ours):
        oracle = st.gaussian_kde(data1 if d == 1 else data2, **options(kw, weights))
        what = f"gaussian_kde(d={d}, {sorted(kw)})"
        p = points[d]
        _check(results["covariance"], oracle.covariance, what + " covariance", 1e-12)
        _check(results["neff"], oracle.neff, what + " neff", 1e-13)
        if not everything:
            continue
        _check(results["logpdf"], oracle.logpdf(p), f"{what} logpdf", 1e-11)
        _check(results["evaluate"], oracle.evaluate(p), f"{what} evaluate", 1e-11, 1e-300)
        _check(results["integrate_gaussian"], oracle.integrate_gaussian(np.full(d, 0.5), 0.7 * np.eye(d)),
               what + " integrate_gaussian", 1e-12)
        _check(results["integrate_kde"], oracle.integrate_kde(oracle), what + " integrate_kde", 1e-12)
        if d == 1:
            _check(results["boxes"], [oracle.integrate_box_1d(lo, hi) for lo, hi in BOXES], what + " boxes", 1e-12)
            h = 1e-6
            fd = (oracle.logpdf(p[2:6] + h) - oracle.logpdf(p[2:6] - h)) / (2 * h)
            _check(results["grad"], fd, what + " d logpdf / dx", 1e-7)
            # logpdf stays finite far out (at 1e3), where the density underflows
            assert -np.inf < results["logpdf"][-1] < -1e3
        else:
            _check(results["one point"], oracle.evaluate(p[:, :1]), what + " one point given flat", 1e-11)
    _check(ours[0]["pdf"], st.gaussian_kde(data1).pdf(points[1]), "pdf", 1e-11, 1e-300)
    _check(ours[0]["call"], st.gaussian_kde(data1)(points[1]), "__call__", 1e-11, 1e-300)

    # resampling gives (d,) + shape; the mixture's mean is the weighted data mean, its covariance
    # the data's weighted spread plus the kernel covariance
    weighted, samples = ours[1]["weighted"], ours[1]["samples"]
    assert samples.shape == (2, 200, 50)
    flat = np.asarray(samples).reshape(2, -1)
    w = weights / weights.sum()
    mean = data2 @ w
    expected_cov = (data2 - mean[:, None]) * w @ (data2 - mean[:, None]).T + np.asarray(weighted.covariance)
    # 10,000 draws: allow 5 standard errors of each mean (sqrt(var / 1e4)) and of each covariance
    # entry (about sqrt(2 / 1e4) var)
    largest = np.max(np.diag(expected_cov))
    np.testing.assert_allclose(flat.mean(axis=1), mean, rtol=0, atol=5 * np.sqrt(largest / 1e4))
    np.testing.assert_allclose(np.cov(flat), expected_cov, rtol=0, atol=5 * np.sqrt(2 / 1e4) * largest)

    # the estimator is a pytree: it came out of jit above, and goes into it here
    assert len(core.tree_util.tree_leaves(weighted)) == 5
    _check(core.jit(lambda kde: kde.inv_cov @ kde.covariance)(weighted), np.eye(2), "jit(kde)", 1e-12, 1e-15)


def test_gaussian_kde_argument_errors():
    kde = stats.gaussian_kde.__new__(stats.gaussian_kde)
    kde.dataset, kde.weights = jnp.zeros((2, 5)), jnp.full((5,), 0.2)
    with pytest.raises(ValueError, match=r"points must be \(d, m\) with d = 2.*float32\[3, 4\]"):
        kde.evaluate(np.zeros((3, 4), np.float32))
    with pytest.raises(ValueError, match=r"integrate_box_1d: only one-dimensional data"):
        kde.integrate_box_1d(0.0, 1.0)
    with pytest.raises(ValueError, match=r"weights must be one-dimensional with one weight per point \(5\)"):
        stats.gaussian_kde(np.zeros((2, 5)), weights=np.ones(4))
    with pytest.raises(ValueError, match=r"dataset must hold several points"):
        stats.gaussian_kde(np.ones(1))
    with pytest.raises(ValueError, match=r"bw_method must be 'scott', 'silverman'.*'wide'"):
        stats.gaussian_kde(np.arange(4.0), bw_method="wide")
    with pytest.raises(NotImplementedError, match="integrate_box_1d"):
        kde.integrate_box(np.zeros(2), np.ones(2))
    with pytest.raises(NotImplementedError, match="immutable"):
        kde.set_bandwidth("scott")


# ----- float32, and a JAX-style program ---------------------------------------------------------

def test_float32_results_keep_the_default_dtype():
    x = np.array([0.5, 1.5, 3.0], np.float32)
    ours = core.jit(lambda x: [stats.gumbel_r.logcdf(x, 0.5, 2.0), stats.pareto.logsf(x + 1, 2.0),
                               stats.wrapcauchy.pdf(x, 0.5), stats.geom.pmf(jnp.array([1, 2, 3]), 0.3)])(x)
    expected = [st.gumbel_r.logcdf(x, 0.5, 2.0), st.pareto.logsf(x + 1, 2.0), st.wrapcauchy.pdf(x, 0.5),
                st.geom.pmf([1, 2, 3], 0.3)]
    for out, theirs in zip(ours, expected):
        assert out.dtype == np.float32
        _check(out, theirs, "float32", 3e-6)


def test_jax_style_gumbel_fit(x64):
    # Written as a JAX program; only these import lines differ from it:
    #   import jax; import jax.numpy as jnp; from jax.scipy.stats import gumbel_r
    import core as jax
    import core.numpy as jnp
    from core.scipy.stats import gumbel_r

    data = st.gumbel_r.rvs(loc=1.5, scale=0.8, size=500, random_state=np.random.default_rng(7))

    def nll(params, xs):
        loc, log_scale = params
        return -jnp.mean(gumbel_r.logpdf(xs, loc, jnp.exp(log_scale)))

    @jax.jit
    def step(params, xs):
        value, g = jax.value_and_grad(nll)(params, xs)
        return params - 0.8 * g, value

    params = jnp.array([0.0, 0.0])
    for _ in range(400):
        params, value = step(params, data)
    loc, log_scale = np.asarray(params)
    # SciPy's maximum-likelihood fit (it solves the likelihood equations)
    fit_loc, fit_scale = st.gumbel_r.fit(data)
    _check([loc, np.exp(log_scale)], [fit_loc, fit_scale], "gumbel_r fit", 1e-7)
    _check(value, -st.gumbel_r.logpdf(data, fit_loc, fit_scale).mean(), "gumbel_r NLL at the fit", 1e-12)
