import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# eight CPU devices (docs/reliability.md N9), so pmap is tested on 1, 2, 4 and 8 of them (a pmap over k
# slices uses the first k); everything else runs on the first, the default device
os.environ.setdefault("PURENN_NUM_CPU_DEVICES", "8")

import core  # noqa: E402
from core import test_util  # noqa: E402


@pytest.fixture
def rng(request):
    """A NumPy Generator seeded from the test's name: deterministic, different per test."""
    return np.random.default_rng(test_util.seed_for(request.node.name))


@pytest.fixture(autouse=True)
def _config_unchanged():
    """Global config must be unchanged after each test (docs/reliability.md N9)."""
    before = dict(core.config._values)
    yield
    after = dict(core.config._values)
    if before != after:
        for name, value in before.items():
            core.config.update(name, value)
        pytest.fail(f"test changed global config: {before} -> {after}")


@pytest.fixture
def x64():
    """Run the test with 64-bit types on, restoring the flag afterwards."""
    core.config.update("enable_x64", True)
    try:
        yield
    finally:
        core.config.update("enable_x64", False)


# ----- the numpy test files under jit (tests/jit_harness.py) ------------------------------------
# With PURENN_TEST_UNDER_JIT=1 every test of the numpy test files calls core.numpy, linalg, fft,
# scipy.special and Array indexing through core.jit; tests marked `eager_only` (they check
# behaviour that only exists eagerly) are skipped then. tests/test_numpy_under_jit.py runs this.

@pytest.fixture(autouse=True)
def _numpy_under_jit(request):
    import jit_harness  # tests/ is on sys.path (pytest's rootdir-relative conftest import)
    if not jit_harness.enabled() or not jit_harness.is_numpy_test_file(request.node.path):
        yield
        return
    if request.node.get_closest_marker("eager_only") is not None:
        pytest.skip("eager_only: not run under PURENN_TEST_UNDER_JIT")
    jit_harness.install(request.getfixturevalue("monkeypatch"), request.module)
    yield


def pytest_terminal_summary(terminalreporter):
    import jit_harness
    if jit_harness.enabled() and jit_harness.STATS:
        terminalreporter.section("numpy under jit")
        for line in jit_harness.summary():
            terminalreporter.write_line(line)
