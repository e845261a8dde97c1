"""Count the `core.numpy` functions that the tests compare against NumPy.

A public function of `core.numpy`, `core.numpy.linalg` or `core.numpy.fft` (its `__all__`, else its
public callables) counts as tested when a test file calls it: `jnp.name(`, `jnp.linalg.name(`, or
`ALIAS.name(` where `from core.numpy import linalg as ALIAS`; or, in a file that looks functions up
by name (`getattr(jnp, name)`, `getattr(ALIAS, name)`), when the name appears there as a string
literal (the parametrize tables). Run `python tests/numpy_coverage.py` (or `make coverage`);
`--list` prints the untested names.

A second section compares `core.lax`'s public names (and `core.lax.linalg`'s, as `linalg.name`)
with jax.lax 0.10.2's, recorded in `tests/jax_lax_names.txt`, and prints the names still missing.
"""
import inspect
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

SUBMODULES = ("linalg", "fft")


def public_functions():
    import core.numpy as jnp
    names = set()
    for prefix, module in [("", jnp)] + [(f"{m}.", getattr(jnp, m)) for m in SUBMODULES]:
        listed = getattr(module, "__all__", None) or [n for n in dir(module) if not n.startswith("_")]
        for name in listed:
            obj = getattr(module, name, None)
            if obj is None or inspect.ismodule(obj) or isinstance(obj, type) or not callable(obj):
                continue
            names.add(prefix + name)
    return names


def tested_names(public):
    tested = set()
    tests_dir = os.path.join(ROOT, "tests")
    for fname in sorted(os.listdir(tests_dir)):
        if not (fname.startswith("test_") and fname.endswith(".py")):
            continue
        text = open(os.path.join(tests_dir, fname)).read()
        aliases = {"jnp": ""}
        for sub in SUBMODULES:
            aliases[f"jnp.{sub}"] = f"{sub}."
            for alias in re.findall(rf"from core\.numpy import {sub} as (\w+)", text):
                aliases[alias] = f"{sub}."
        strings = set(re.findall(r"[\"']([A-Za-z_][A-Za-z0-9_]*)[\"']", text))
        for alias, prefix in aliases.items():
            for name in re.findall(rf"(?<![\w.]){re.escape(alias)}\.([A-Za-z_]\w*)\s*\(", text):
                tested.add(prefix + name)
            if re.search(rf"getattr\(\s*{re.escape(alias)}\s*,", text):
                tested.update(prefix + s for s in strings)
    return tested & public


def coverage():
    public = public_functions()
    tested = tested_names(public)
    return sorted(tested), sorted(public - tested)


JAX_LAX_NAMES = os.path.join(ROOT, "tests", "jax_lax_names.txt")


def jax_lax_names():
    """jax.lax 0.10.2's public names (linalg's as `linalg.name`), as recorded in the data file."""
    with open(JAX_LAX_NAMES) as f:
        return [line.strip() for line in f if line.strip() and not line.startswith("#")]


def lax_coverage():
    """(present, missing): jax.lax's public names that `core.lax` has, and those it lacks."""
    import core.lax as lax
    ours = {n for n in dir(lax) if not n.startswith("_")}
    ours |= {"linalg." + n for n in dir(lax.linalg) if not n.startswith("_")}
    names = jax_lax_names()
    return sorted(n for n in names if n in ours), sorted(n for n in names if n not in ours)


def main():
    tested, untested = coverage()
    print(f"core.numpy functions tested against NumPy: {len(tested)} of {len(tested) + len(untested)}")
    if "--list" in sys.argv:
        print("untested:", " ".join(untested))
    print_lax_section()


def print_lax_section():
    present, missing = lax_coverage()
    print(f"jax.lax 0.10.2 public names in core.lax: {len(present)} of {len(present) + len(missing)}")
    print("missing:", " ".join(missing))


if __name__ == "__main__":
    main()
