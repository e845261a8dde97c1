import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import core  # noqa: E402
from core import test_util  # noqa: E402


@pytest.fixture
def rng(request):
    """A NumPy Generator seeded from the test's name: deterministic, different per test."""
    return np.random.default_rng(test_util.seed_for(request.node.name))


@pytest.fixture(autouse=True)
def _config_unchanged():
    """Global config must be unchanged after each test (RELIABILITY.md N9)."""
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
