"""Count the `core.numpy` functions that the tests compare against NumPy.

A public function of `core.numpy`, `core.numpy.linalg` or `core.numpy.fft` (its `__all__`, else its
public callables) counts as tested when a test file calls it: `jnp.name(`, `jnp.linalg.name(`, or
`ALIAS.name(` where `from core.numpy import linalg as ALIAS`; or, in a file that looks functions up
by name (`getattr(jnp, name)`, `getattr(ALIAS, name)`), when the name appears there as a string
literal (the parametrize tables). Run `python tests/numpy_coverage.py` (or `make coverage`);
`--list` prints the untested names.

Then it compares name lists and prints the names still missing:
- NumPy's public names (`numpy.__all__`, and `numpy.linalg`'s and `numpy.fft`'s as `linalg.name`,
  `fft.name`, listed from the installed NumPy at run time) with `core.numpy`'s;
- jax.numpy 0.10.2's public names (with `linalg.` and `fft.`), recorded in
  `tests/jax_numpy_names.txt`, with `core.numpy`'s;
- `core.lax`'s public names (and `core.lax.linalg`'s, as `linalg.name`) with jax.lax 0.10.2's,
  recorded in `tests/jax_lax_names.txt`;
- for each SciPy subpackage issue 16 names (linalg, optimize, signal, special, stats),
  `core.scipy.<sub>`'s names with jax.scipy 0.10.2's (recorded in `tests/jax_scipy_names.txt`; a
  stats distribution as `norm` and its functions as `norm.pdf`) and with the installed SciPy's
  `scipy.<sub>.__all__` (top-level names only: SciPy's distributions are objects, ours modules).
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


def _public_names(module):
    """A module's public names: its `__all__` where it has one (so that helpers it imports, such
    as `np` or `lax`, do not count), else its attributes without a leading underscore."""
    listed = getattr(module, "__all__", None)
    return set(listed) if listed is not None else {n for n in dir(module) if not n.startswith("_")}


def _has_dotted(module, dotted):
    """Whether `module` publicly has the dotted name `a.b.c` (each part public in its parent)."""
    obj = module
    for part in dotted.split("."):
        # hasattr, not `getattr(...) is not None`: `newaxis` is None
        if not inspect.ismodule(obj) or part not in _public_names(obj) or not hasattr(obj, part):
            return False
        obj = getattr(obj, part)
    return True


def _split(names, module):
    present = sorted(n for n in names if _has_dotted(module, n))
    return present, sorted(set(names) - set(present))


def numpy_names():
    """NumPy's public names, from the installed NumPy: `numpy.__all__`, then `numpy.linalg`'s and
    `numpy.fft`'s `__all__` prefixed `linalg.` and `fft.`."""
    import numpy as np
    names = set(np.__all__)
    for sub in SUBMODULES:
        names |= {f"{sub}.{n}" for n in getattr(np, sub).__all__}
    return sorted(names)


def numpy_names_coverage():
    """(present, missing): NumPy's public names that `core.numpy` has, and those it lacks."""
    import core.numpy as jnp
    return _split(numpy_names(), jnp)


JAX_NUMPY_NAMES = os.path.join(ROOT, "tests", "jax_numpy_names.txt")


def _recorded(path):
    with open(path) as f:
        return [line.strip() for line in f if line.strip() and not line.startswith("#")]


def jax_numpy_names():
    """jax.numpy 0.10.2's public names (linalg's and fft's as `linalg.name`, `fft.name`), as
    recorded in the data file."""
    return _recorded(JAX_NUMPY_NAMES)


def jax_numpy_names_coverage():
    """(present, missing): jax.numpy's public names that `core.numpy` has, and those it lacks."""
    import core.numpy as jnp
    return _split(jax_numpy_names(), jnp)


JAX_SCIPY_NAMES = os.path.join(ROOT, "tests", "jax_scipy_names.txt")
SCIPY_SUBPACKAGES = ("linalg", "optimize", "signal", "special", "stats")


def jax_scipy_names(sub):
    """jax.scipy.<sub> 0.10.2's public names (a stats distribution as `norm`, its functions as
    `norm.pdf`), as recorded in the data file."""
    lines = _recorded(JAX_SCIPY_NAMES)
    return [line[len(sub) + 1:] for line in lines if line.startswith(sub + ".")]


def scipy_names(sub):
    """The installed SciPy's public names of `scipy.<sub>` (its `__all__`)."""
    import importlib
    return sorted(importlib.import_module(f"scipy.{sub}").__all__)


def scipy_coverage(sub):
    """{"jax": (present, missing), "scipy": (present, missing)}: jax.scipy.<sub>'s and SciPy's
    public names of the subpackage that `core.scipy.<sub>` has, and those it lacks."""
    import importlib
    ours = importlib.import_module(f"core.scipy.{sub}")
    return {"jax": _split(jax_scipy_names(sub), ours), "scipy": _split(scipy_names(sub), ours)}


def main():
    tested, untested = coverage()
    print(f"core.numpy functions tested against NumPy: {len(tested)} of {len(tested) + len(untested)}")
    if "--list" in sys.argv:
        print("untested:", " ".join(untested))
    print_numpy_names_section()
    print_jax_numpy_names_section()
    print_lax_section()
    print_scipy_section()


def _ratio(present, missing):
    return f"{len(present)} of {len(present) + len(missing)}"


def print_numpy_names_section():
    import numpy as np
    present, missing = numpy_names_coverage()
    print(f"NumPy {np.__version__} public names in core.numpy: {_ratio(present, missing)}")
    print("missing:", " ".join(missing))


def print_lax_section():
    present, missing = lax_coverage()
    print(f"jax.lax 0.10.2 public names in core.lax: {len(present)} of {len(present) + len(missing)}")
    print("missing:", " ".join(missing))


def print_jax_numpy_names_section():
    present, missing = jax_numpy_names_coverage()
    print(f"jax.numpy 0.10.2 public names in core.numpy: {_ratio(present, missing)}")
    print("missing:", " ".join(missing))


def print_scipy_section():
    import scipy
    for sub in SCIPY_SUBPACKAGES:
        cov = scipy_coverage(sub)
        (jp, jm), (sp, sm) = cov["jax"], cov["scipy"]
        print(f"scipy.{sub}: jax.scipy.{sub} 0.10.2 public names in core.scipy.{sub}: {_ratio(jp, jm)}")
        print("  missing:", " ".join(jm) or "(none)")
        print(f"  SciPy {scipy.__version__} scipy.{sub}.__all__ in core.scipy.{sub}: {_ratio(sp, sm)}")
        print("  missing:", " ".join(sm) or "(none)")


if __name__ == "__main__":
    main()
