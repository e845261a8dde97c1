"""The examples in the docstrings run, and print what they say they print.

Every public module of core, nn, optim and train (found by walking the packages, so a new module is
included without touching this file; modules whose name starts with `_` are private and skipped)
goes through `doctest.testmod`. As JAX's doctest setup does, the examples may use a few names
without importing them: `np`, `core`, `jnp`, `lax`, `random`, `nn` and `optim`. Everything else an
example needs it imports or defines itself (a module's own globals are visible too). A module with no example passes trivially; the count
test below guards against the walk silently finding nothing.
"""
import doctest
import importlib
import pkgutil

import numpy as np
import pytest

import core
import core.numpy as jnp
import nn
import optim
from core import lax, random

PACKAGES = ("core", "nn", "optim", "train")
NAMESPACE = {"np": np, "core": core, "jnp": jnp, "lax": lax, "random": random, "nn": nn, "optim": optim}
FLAGS = doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS


def public_modules():
    names = []
    for package in PACKAGES:
        names.append(package)
        for info in pkgutil.walk_packages(importlib.import_module(package).__path__, package + "."):
            if not any(part.startswith("_") for part in info.name.split(".")):
                names.append(info.name)
    return sorted(names)


MODULES = public_modules()


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    failures = []
    # the module's own names win over the shared ones; each docstring starts from a fresh copy
    globs = {**NAMESPACE, **vars(module)}
    for test in finder.find(module, name, globs=globs):
        runner.run(test, out=failures.append)
    assert not failures, "".join(failures)


def test_the_walk_finds_the_modules_that_hold_examples():
    # modules known to carry examples: if the walk or the filter breaks, this fails
    for name in ("core.api", "core.autodiff", "nn.layers", "nn.summary", "optim.optimizers"):
        assert name in MODULES
    assert not [m for m in MODULES if any(part.startswith("_") for part in m.split("."))]
    examples = sum(len(t.examples) for m in ("core.autodiff", "nn.summary", "optim.optimizers")
                   for t in doctest.DocTestFinder().find(importlib.import_module(m), m))
    assert examples >= 40
