"""Invariants over the whole primitive set: every primitive has a shape/dtype rule and a lowering,
and every primitive is exercised by a test file (by its lax wrapper or its name)."""
import os
import re
import sys

from core.interpreters import lowering
from core.trace import Primitive

TESTS = os.path.dirname(os.path.abspath(__file__))


def all_primitives():
    import core  # noqa: F401  (imports every lax module)
    prims = {}
    for name, module in list(sys.modules.items()):
        if name.startswith("core.lax") and module is not None:
            for value in vars(module).values():
                if isinstance(value, Primitive):
                    prims[value.name] = value
    return prims


def test_every_primitive_has_an_abstract_eval_and_a_lowering():
    prims = all_primitives()
    assert len(prims) >= 100, sorted(prims)
    missing_eval = [n for n, p in prims.items() if p.abstract_eval is None]
    missing_lowering = [n for n, p in prims.items() if p not in lowering.rules]
    assert not missing_eval and not missing_lowering, (missing_eval, missing_lowering)


def test_every_primitive_is_exercised_by_a_test():
    text = "\n".join(open(os.path.join(TESTS, f)).read() for f in os.listdir(TESTS)
                     if f.startswith("test_") and f.endswith(".py"))
    untested = []
    for name in all_primitives():
        base = name[:-1] if name.endswith("_") else name
        patterns = [rf"lax\.{re.escape(base)}_?\b", rf"[\"']{re.escape(name)}[\"']", rf"\b{re.escape(name)}_p\b",
                    rf"\blax_\w+\.{re.escape(base)}\b"]
        if not any(re.search(p, text) for p in patterns):
            untested.append(name)
    assert not untested, f"primitives no test mentions: {untested}"
