"""Invariants over the whole primitive set: every primitive has a shape/dtype rule and a lowering,
every primitive is exercised by a test file (by its lax wrapper or its name), every primitive can
be differentiated (a jvp rule, or declared non-differentiable) and every linear primitive has a
transpose rule."""
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
        if (name.startswith("core.") and module is not None
                and not name.startswith(("core.interpreters", "core.runtime"))):
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


# The primitives that are linear in (some of) their operands: reverse mode needs their transposes.
LINEAR = ["add", "sub", "neg", "mul", "dot_general", "conv_general_dilated", "reduce_sum", "broadcast_in_dim",
          "reshape", "transpose", "squeeze", "rev", "slice", "pad", "concatenate", "gather", "scatter_add",
          "dynamic_slice", "dynamic_update_slice", "select_n", "convert_element_type", "cumsum",
          "reduce_window_sum", "real", "imag", "conj", "complex", "fft", "triangular_solve", "jit", "cond",
          "scan", "remat", "custom_lin", "name", "mul_add", "copy", "linear_solve", "tridiagonal_solve"]


def test_every_primitive_is_differentiable_or_declared_not():
    from core.interpreters import ad
    missing = [n for n, p in all_primitives().items() if p not in ad.jvp_rules and p not in ad.nondifferentiable]
    assert not missing, f"primitives with neither a jvp rule nor a non-differentiable declaration: {missing}"


def test_every_linear_primitive_has_a_transpose_rule():
    from core.interpreters import ad
    prims = all_primitives()
    missing = [n for n in LINEAR if n not in prims or prims[n] not in ad.transpose_rules]
    assert not missing, f"linear primitives without a transpose rule: {missing}"


# Primitives with no operands are never batched: vmap applies them as they are.
NO_OPERANDS = ["iota", "axis_index", "create_token"]


def test_every_primitive_has_a_batching_rule():
    from core.interpreters import batching
    missing = [n for n, p in all_primitives().items()
               if p not in batching.batching_rules and p not in batching.axis_batching_rules and n not in NO_OPERANDS]
    assert not missing, f"primitives without a batching rule: {missing}"


def test_every_batching_rule_is_exercised_by_a_vmap_test():
    text = "\n".join(open(os.path.join(TESTS, f)).read() for f in os.listdir(TESTS)
                     if f.startswith(("test_vmap_", "test_per_example", "test_collectives", "test_pmap"))
                     and f.endswith(".py"))
    untested = []
    for name in all_primitives():
        base = name[:-1] if name.endswith("_") else name
        patterns = [rf"lax\.{re.escape(base)}_?\b", rf"[\"']{re.escape(name)}[\"']", rf"\b{re.escape(name)}_p\b"]
        if name not in NO_OPERANDS and not any(re.search(p, text) for p in patterns):
            untested.append(name)
    assert not untested, f"primitives no vmap test mentions: {untested}"
