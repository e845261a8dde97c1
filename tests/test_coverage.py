"""The issue's coverage floor: at least 250 core.numpy functions are tested against NumPy."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy_coverage  # noqa: E402


def test_at_least_250_numpy_functions_are_tested():
    tested, untested = numpy_coverage.coverage()
    assert len(tested) >= 250, f"only {len(tested)} tested; untested: {untested}"
    assert "sin" in tested and "linalg.solve" in tested and "fft.rfft" in tested
