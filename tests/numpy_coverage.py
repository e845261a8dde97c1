"""Count the `core.numpy` functions that the tests compare against NumPy.

A public callable of `core.numpy` (or of `core.numpy.linalg` / `core.numpy.fft`) counts as tested when a
test file calls it as `jnp.<name>(`, `jnp.linalg.<name>(` or `jnp.fft.<name>(`. Run
`python tests/numpy_coverage.py` (or `make coverage`); `--list` prints the untested names.
"""
import inspect
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)


def public_functions():
    import core.numpy as jnp
    names = {}
    for prefix, module in (("", jnp), ("linalg.", jnp.linalg), ("fft.", jnp.fft)):
        for name in dir(module):
            obj = getattr(module, name)
            if name.startswith("_") or inspect.ismodule(obj) or isinstance(obj, type):
                continue
            if callable(obj):
                names[prefix + name] = obj
    return names


def called_names():
    calls = set()
    pattern = re.compile(r"\bjnp\.((?:linalg\.|fft\.)?[A-Za-z_][A-Za-z0-9_]*)\s*\(")
    getattr_pattern = re.compile(r"getattr\(\s*jnp(?:\.(linalg|fft))?\s*,\s*[\"']([A-Za-z0-9_]+)[\"']")
    tests_dir = os.path.join(ROOT, "tests")
    for fname in os.listdir(tests_dir):
        if fname.startswith("test_") and fname.endswith(".py"):
            text = open(os.path.join(tests_dir, fname)).read()
            calls.update(pattern.findall(text))
            for sub, name in getattr_pattern.findall(text):
                calls.add(f"{sub}.{name}" if sub else name)
            # names listed in parametrize tables as strings: "jnp:<name>"
            calls.update(re.findall(r"[\"']jnp:((?:linalg\.|fft\.)?[A-Za-z0-9_]+)[\"']", text))
    return calls


def coverage():
    funcs = public_functions()
    called = called_names()
    tested = sorted(n for n in funcs if n in called)
    untested = sorted(n for n in funcs if n not in called)
    return tested, untested


def main():
    tested, untested = coverage()
    print(f"core.numpy functions tested against NumPy: {len(tested)} of {len(tested) + len(untested)}")
    if "--list" in sys.argv:
        print("untested:", " ".join(untested))


if __name__ == "__main__":
    main()
