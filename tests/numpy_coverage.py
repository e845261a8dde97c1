"""Count the `core.numpy` functions that the tests compare against NumPy.

A public function of `core.numpy`, `core.numpy.linalg` or `core.numpy.fft` (its `__all__`, else its
public callables) counts as tested when a test file calls it: `jnp.name(`, `jnp.linalg.name(`, or
`ALIAS.name(` where `from core.numpy import linalg as ALIAS`; or, in a file that looks functions up
by name (`getattr(jnp, name)`, `getattr(ALIAS, name)`), when the name appears there as a string
literal (the parametrize tables). Run `python tests/numpy_coverage.py` (or `make coverage`);
`--list` prints the untested names.
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


def main():
    tested, untested = coverage()
    print(f"core.numpy functions tested against NumPy: {len(tested)} of {len(tested) + len(untested)}")
    if "--list" in sys.argv:
        print("untested:", " ".join(untested))


if __name__ == "__main__":
    main()
