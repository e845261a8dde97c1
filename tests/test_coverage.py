"""The issue's coverage floor: at least 250 core.numpy functions are tested against NumPy."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy_coverage  # noqa: E402


def test_at_least_250_numpy_functions_are_tested():
    tested, untested = numpy_coverage.coverage()
    assert len(tested) >= 250, f"only {len(tested)} tested; untested: {untested}"
    assert "sin" in tested and "linalg.solve" in tested and "fft.rfft" in tested


def test_lax_section_compares_with_the_recorded_jax_lax_names():
    names = numpy_coverage.jax_lax_names()
    assert len(names) == len(set(names)) > 350 and "dot_general" in names and "linalg.cholesky" in names
    present, missing = numpy_coverage.lax_coverage()
    assert sorted(present + missing) == sorted(names)
    assert {"Precision", "dot_general_p", "linalg.qr", "optimization_barrier", "ragged_dot", "rng_bit_generator",
            "split_p", "DotAlgorithmPreset", "lt_to_p"} <= set(present)
    assert {"custom_linear_solve", "custom_root", "linear_solve_p", "linalg.tridiagonal_solve", "linalg.qdwh",
            "linalg.SvdAlgorithm"} <= set(present)
    assert len(present) >= 380, f"only {len(present)} of jax.lax's names; missing: {missing}"


def test_numpy_section_lists_numpys_public_names_we_lack():
    import numpy as np
    import core.numpy as jnp
    present, missing = numpy_coverage.numpy_names_coverage()
    names = numpy_coverage.numpy_names()
    assert sorted(present + missing) == names and set(np.__all__) <= set(names)
    assert {"sin", "einsum", "linalg.eig", "fft.rfft", "allclose", "roots"} <= set(present)
    # each missing name really is absent (checked here by plain attribute lookup)
    for name in missing:
        module, _, leaf = name.rpartition(".")
        assert not hasattr(getattr(jnp, module) if module else jnp, leaf), name
    assert "matrix" in missing and "memmap" in missing
    assert len(present) >= 445, f"only {len(present)} of NumPy's names; missing: {missing}"


# the counts when the SciPy section was added: a change that drops a name fails here
JAX_SCIPY_FLOORS = {"linalg": 18, "optimize": 2, "signal": 4, "special": 29, "stats": 142}
SCIPY_FLOORS = {"linalg": 19, "optimize": 1, "signal": 4, "special": 31, "stats": 30}


def test_scipy_section_compares_with_jax_scipy_and_scipy_names():
    for sub in numpy_coverage.SCIPY_SUBPACKAGES:
        names = numpy_coverage.jax_scipy_names(sub)
        assert len(names) == len(set(names)) > 0, sub
        cov = numpy_coverage.scipy_coverage(sub)
        assert sorted(cov["jax"][0] + cov["jax"][1]) == sorted(names), sub
        assert sorted(cov["scipy"][0] + cov["scipy"][1]) == numpy_coverage.scipy_names(sub), sub
        assert len(cov["jax"][0]) >= JAX_SCIPY_FLOORS[sub], (sub, cov["jax"][1])
        assert len(cov["scipy"][0]) >= SCIPY_FLOORS[sub], (sub, cov["scipy"][1])
    stats = numpy_coverage.scipy_coverage("stats")["jax"]
    assert {"norm", "norm.logpdf", "poisson.pmf", "multivariate_normal.logpdf"} <= set(stats[0])
    assert {"gumbel_r.pdf", "gaussian_kde", "rankdata"} <= set(stats[0]) and not stats[1]  # all of jax.scipy.stats
    special = numpy_coverage.scipy_coverage("special")
    assert {"gammainc", "betainc", "i0e"} <= set(special["jax"][0]) & set(special["scipy"][0])
    # helpers a module imports (core.scipy.special imports `lax`) are not counted as its names
    assert not numpy_coverage._has_dotted(__import__("core.scipy.special").scipy.special, "lax")
    assert "OptimizeResults" in numpy_coverage.scipy_coverage("optimize")["jax"][0]


def test_jax_numpy_section_compares_with_the_recorded_jax_numpy_names():
    import core.numpy as jnp
    names = numpy_coverage.jax_numpy_names()
    assert len(names) == len(set(names)) > 400 and "einsum" in names and "linalg.eigvals" in names
    present, missing = numpy_coverage.jax_numpy_names_coverage()
    assert sorted(present + missing) == sorted(names)
    assert {"roots", "linalg.eig", "fft.rfft", "ndarray"} <= set(present)
    for name in missing:  # each missing name really is absent
        module, _, leaf = name.rpartition(".")
        assert not hasattr(getattr(jnp, module) if module else jnp, leaf), name
    assert len(present) >= 463, f"only {len(present)} of jax.numpy's names; missing: {missing}"
