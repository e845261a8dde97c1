"""Test helpers: deterministic case sampling, random inputs per dtype, dtype-aware tolerances.

Every eager op compiles a small executable, so suites sample their (shape, dtype) cases
deterministically (as JAX's NUM_GENERATED_CASES does): `PURENN_NUM_GENERATED_CASES` (default 4)
cases per test; `PURENN_TEST_FULL=1` runs the full sweep.
"""
import itertools
import os
import random
import warnings
import zlib

import numpy as np

from . import dtypes

NUM_GENERATED_CASES = int(os.environ.get("PURENN_NUM_GENERATED_CASES", "4"))
FULL_SWEEP = os.environ.get("PURENN_TEST_FULL", "") not in ("", "0")

# Shape groups of RELIABILITY.md N3: scalars, vectors, matrices, higher rank and size-0 shapes.
SCALAR_SHAPES = [()]
ARRAY_SHAPES = [(4,), (2, 3), (2, 1, 3)]
EMPTY_SHAPES = [(0,), (0, 4), (3, 0)]
ALL_SHAPES = SCALAR_SHAPES + ARRAY_SHAPES + EMPTY_SHAPES

FLOAT_DTYPES = [dtypes.float32, dtypes.float16, dtypes.bfloat16]
INT_DTYPES = [dtypes.int32, dtypes.int8, dtypes.int16]
UINT_DTYPES = [dtypes.uint32, dtypes.uint8]
COMPLEX_DTYPES = [dtypes.complex64]
BOOL_DTYPES = [dtypes.bool_]
NUMBER_DTYPES = FLOAT_DTYPES + INT_DTYPES + UINT_DTYPES + COMPLEX_DTYPES
ALL_DTYPES = NUMBER_DTYPES + BOOL_DTYPES

TOLERANCE = {dtypes.float16: 1e-3, dtypes.bfloat16: 1e-2, dtypes.float32: 1e-6, dtypes.float64: 1e-15,
             dtypes.complex64: 1e-6, dtypes.complex128: 1e-15}


def seed_for(name):
    """A deterministic seed from a test's name (adler32, as JAX's test harness does)."""
    return zlib.adler32(name.encode())


def sample_cases(cases, name, n=None):
    """A deterministic sample of `n` (default NUM_GENERATED_CASES) items of `cases`; all of them
    under PURENN_TEST_FULL=1. Use in `pytest.mark.parametrize`."""
    cases = list(cases)
    n = NUM_GENERATED_CASES if n is None else n
    if FULL_SWEEP or len(cases) <= n:
        return cases
    rng = random.Random(seed_for(name))
    return rng.sample(cases, n)


def product(*lists):
    return list(itertools.product(*lists))


def rand(rng, shape, dtype, low=-3.0, high=3.0, positive=False):
    """Random test data of `shape` and `dtype` as a NumPy array (ints in a small range, floats
    uniform in [low, high) or (0.1, high) when `positive`)."""
    dtype = np.dtype(dtype)
    if dtype == dtypes.bool_:
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        lo = 0 if dtype.kind == "u" or positive else max(int(low), np.iinfo(dtype).min)
        hi = min(int(high) + 1, int(np.iinfo(dtype).max))
        if positive:
            lo = 1
        return rng.integers(lo, max(hi, lo + 1), size=shape).astype(dtype)
    lo = 0.1 if positive else low
    if dtype.kind == "c":
        re = rng.uniform(lo, high, size=shape)
        im = rng.uniform(lo, high, size=shape)
        return (re + 1j * im).astype(dtype)
    return rng.uniform(lo, high, size=shape).astype(dtype)


def tolerance(dtype, default=0.0):
    return TOLERANCE.get(np.dtype(dtype), default)


def assert_allclose(actual, expected, dtype=None, atol=None, rtol=None, err_msg=""):
    """Compare to a (float64) oracle with the tolerance of `dtype` (exact for ints and bools)."""
    actual_np = np.asarray(actual)
    expected = np.asarray(expected)
    dtype = np.dtype(dtype if dtype is not None else actual_np.dtype)
    if actual_np.shape != expected.shape:
        raise AssertionError(f"shape {actual_np.shape} != expected {expected.shape}. {err_msg}")
    if dtype.kind in "biu":
        np.testing.assert_array_equal(actual_np, expected.astype(actual_np.dtype), err_msg=err_msg)
        return
    tol = tolerance(dtype)
    a = actual_np.astype(np.complex128 if dtype.kind == "c" else np.float64)
    e = expected.astype(np.complex128 if dtype.kind == "c" else np.float64)
    np.testing.assert_allclose(a, e, atol=tol if atol is None else atol, rtol=tol if rtol is None else rtol,
                               equal_nan=True, err_msg=err_msg)


def wide(x):
    """The float64 (complex128) form of a sampled array, for a NumPy oracle; ints and bools as they are."""
    x = np.asarray(x)
    if x.dtype.kind == "c":
        return x.astype(np.complex128)
    if x.dtype.kind in "biu":
        return x
    return x.astype(np.float64)


def numpy_oracle(f, *args):
    """`f` applied to the widened arguments, with NumPy's floating-point warnings silenced."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return f(*[wide(a) for a in args])
