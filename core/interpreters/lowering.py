"""Lowering to StableHLO text: a small emitter and the table of per-primitive lowering rules.

We emit MLIR's generic operation syntax (`%3 = "stablehlo.add"(%1, %2) : (T, T) -> T`), which the
parser accepts for every op, so a rule never depends on an op's custom pretty syntax. Value names
are unique within a module, and every value's type is remembered, so rules pass only names.

A rule is `rule(ctx, *operands, **params) -> value or list of values` where `ctx.avals_in`,
`ctx.avals_out` and `ctx.b` (the function builder) are available; it is registered with
`register(prim, rule)` next to the primitive's definition (one primitive, one block).
"""
import itertools
import re

import numpy as np

from .. import dtypes
from ..tokens import AbstractToken

rules = {}


def register(prim, rule):
    rules[prim] = rule
    return rule


# ----- types and attributes -----------------------------------------------------------------

_ELEMENT_TYPES = {
    dtypes.bool_: "i1", dtypes.int8: "i8", dtypes.int16: "i16", dtypes.int32: "i32", dtypes.int64: "i64",
    dtypes.uint8: "ui8", dtypes.uint16: "ui16", dtypes.uint32: "ui32", dtypes.uint64: "ui64",
    dtypes.bfloat16: "bf16", dtypes.float16: "f16", dtypes.float32: "f32", dtypes.float64: "f64",
    dtypes.complex64: "complex<f32>", dtypes.complex128: "complex<f64>",
}


def element_type(dtype):
    return _ELEMENT_TYPES[np.dtype(dtype)]


def tensor_type(shape, dtype):
    dims = "".join(f"{d}x" for d in shape)
    return f"tensor<{dims}{element_type(dtype)}>"


TOKEN_TYPE = "!stablehlo.token"


def aval_type(aval):
    if type(aval) is AbstractToken:
        return TOKEN_TYPE
    return tensor_type(aval.shape, aval.dtype)


def i64_array(values):
    """A dense i64 array attribute: `array<i64: 1, 2>` (or `array<i64>` when empty)."""
    values = [int(v) for v in values]
    return f"array<i64: {', '.join(map(str, values))}>" if values else "array<i64>"


def bool_array(values):
    values = ["true" if v else "false" for v in values]
    return f"array<i1: {', '.join(values)}>" if values else "array<i1>"


def int_list(values):
    return "[" + ", ".join(str(int(v)) for v in values) + "]"


def dense_elements(value, dtype, shape):
    """A `dense<...>` literal holding `value` (broadcast to `shape`) exactly, as raw hex bytes.

    One element is a splat; hex keeps NaN, infinities, -0.0 and bfloat16 bit-exact.
    """
    dtype = np.dtype(dtype)
    arr = np.asarray(value, dtype=dtype)
    if arr.ndim == 0:
        flat = arr.reshape(1)
    else:
        flat = np.broadcast_to(arr, shape).reshape(-1)
        if flat.size == 0:
            return "dense<>"
        if flat.size > 1 and (flat == flat[0]).all():
            flat = flat[:1]
    if dtype == dtypes.bool_:
        flat = flat.astype(np.uint8)
    return f'dense<"0x{np.ascontiguousarray(flat).tobytes().hex().upper()}">'


# ----- builders -----------------------------------------------------------------------------

class ModuleBuilder:
    """Collects the functions of one module and hands out module-unique value names."""

    def __init__(self, name="purenn", attributes=None, axis_env=None):
        self.name = name
        self.attributes = attributes or {}
        # the named axes the module's replicas span: {name: size} (pmap); collectives lower over it
        self.axis_env = axis_env or {}
        self.functions = []
        self._counter = itertools.count()
        self.types = {}

    def fresh(self, type_str):
        name = f"%{next(self._counter)}"
        self.types[name] = type_str
        return name

    def func(self, name, in_avals, public=True):
        f = FunctionBuilder(self, name, in_avals, public)
        self.functions.append(f)
        return f

    def text(self):
        attrs = ""
        if self.attributes:
            attrs = " attributes {" + ", ".join(f"{k} = {v}" for k, v in self.attributes.items()) + "}"
        body = "\n".join(f.text() for f in self.functions)
        return f"module @{self.name}{attrs} {{\n{body}\n}}\n"


class FunctionBuilder:
    """Emits the operations of one function (or one region body) in order."""

    def __init__(self, module, name, in_avals, public=True, indent="    "):
        self.module = module
        self.name = name
        self.public = public
        self.indent = indent
        self.lines = []
        self.args = [module.fresh(aval_type(a)) for a in in_avals]
        self.result_types = None

    def type_of(self, value):
        return self.module.types[value]

    def op(self, name, operands, results, attrs=None, regions=()):
        """Emit `name` on `operands`; `results` are avals or type strings. Returns the result names
        (one name for one result, else a list)."""
        result_types = [r if isinstance(r, str) else aval_type(r) for r in results]
        outs = [self.module.fresh(t) for t in result_types]
        lhs = f"{', '.join(outs)} = " if outs else ""
        region_text = ""
        if regions:
            region_text = " (" + ", ".join(regions) + ")"
        if isinstance(attrs, dict):
            attrs = ", ".join(f"{k} = {v}" for k, v in attrs.items())
        attr_text = f" {{{attrs}}}" if attrs else ""
        in_types = ", ".join(self.type_of(v) for v in operands)
        out_types = ", ".join(result_types)
        out_sig = out_types if len(result_types) == 1 else f"({out_types})"
        self.lines.append(f'{self.indent}{lhs}"{name}"({", ".join(operands)}){region_text}{attr_text} '
                          f": ({in_types}) -> {out_sig}")
        return outs[0] if len(outs) == 1 else outs

    def constant(self, value, dtype, shape=()):
        """A constant tensor of `shape` filled from `value` (a scalar or an array of that shape)."""
        t = tensor_type(shape, dtype)
        out = self.module.fresh(t)
        self.lines.append(f'{self.indent}{out} = "stablehlo.constant"() '
                          f"{{value = {dense_elements(value, dtype, shape)} : {t}}} : () -> {t}")
        return out

    def region(self, arg_avals, body):
        """The text of a one-block region whose arguments have `arg_avals`; `body(b, *args)` emits
        the block and returns the values it yields."""
        inner = FunctionBuilder(self.module, None, arg_avals, indent=self.indent + "    ")
        results = body(inner, *inner.args)
        if isinstance(results, str):
            results = [results]
        inner.op("stablehlo.return", list(results), [])
        params = ", ".join(f"{a}: {self.type_of(a)}" for a in inner.args)
        head = f"{self.indent}  ^bb0({params}):"
        return "{\n" + head + "\n" + "\n".join(inner.lines) + "\n" + self.indent + "}"

    def ret(self, values):
        self.result_types = [self.type_of(v) for v in values]
        self.op("func.return", list(values), [])

    def text(self):
        vis = "public" if self.public else "private"
        params = ", ".join(f"{a}: {self.type_of(a)}" for a in self.args)
        rets = ", ".join(self.result_types or [])
        body = "\n".join(self.lines)
        return f"  func.func {vis} @{self.name}({params}) -> ({rets}) {{\n{body}\n  }}"


class LoweringRuleContext:
    """What a lowering rule may know: the builder and the avals of its operands and results."""
    __slots__ = ("b", "avals_in", "avals_out", "primitive")

    def __init__(self, b, primitive, avals_in, avals_out):
        self.b, self.primitive, self.avals_in, self.avals_out = b, primitive, avals_in, avals_out


def lower_equation(b, prim, in_values, avals_in, avals_out, params):
    """Emit one primitive application into builder `b`; returns the list of output values."""
    rule = rules.get(prim)
    if rule is None:
        raise NotImplementedError(f"No lowering rule for primitive '{prim.name}'")
    ctx = LoweringRuleContext(b, prim, avals_in, avals_out)
    outs = rule(ctx, *in_values, **params)
    if prim.multiple_results:
        return list(outs)
    return [outs]


def lower_primitive(prim, avals_in, avals_out, params):
    """A whole module that applies `prim` once: how eager execution runs a primitive."""
    m = ModuleBuilder("eager_" + re.sub(r"[^A-Za-z0-9_]", "_", prim.name))
    f = m.func("main", avals_in)
    outs = lower_equation(f, prim, f.args, avals_in, avals_out, params)
    f.ret(outs)
    return m.text()


# ----- helpers shared by many rules ------------------------------------------------------------

def broadcast_to(b, value, aval_in, aval_out):
    """Broadcast `value` (rank 0, or the output's rank with sizes 1 or equal) to `aval_out`'s shape."""
    if aval_in.shape == aval_out.shape:
        return value
    out = aval_out.update(dtype=aval_in.dtype)
    return b.op("stablehlo.broadcast_in_dim", [value], [out],
                {"broadcast_dimensions": i64_array(range(len(aval_in.shape)))})


def compare_type(dtype):
    dtype = np.dtype(dtype)
    if dtypes.is_inexact(dtype):
        return "FLOAT"
    if dtype.kind == "i":
        return "SIGNED"
    return "UNSIGNED"


def compare(b, x, y, direction, operand_aval, out_shape=None):
    shape = operand_aval.shape if out_shape is None else out_shape
    out_t = tensor_type(shape, dtypes.bool_)
    return b.op("stablehlo.compare", [x, y], [out_t],
                {"comparison_direction": f"#stablehlo<comparison_direction {direction}>",
                 "compare_type": f"#stablehlo<comparison_type {compare_type(operand_aval.dtype)}>"})


def full_like(b, value, aval):
    """A constant tensor of `aval`'s shape and dtype, every element `value`."""
    scalar = b.constant(value, aval.dtype, ())
    if not aval.shape:
        return scalar
    return b.op("stablehlo.broadcast_in_dim", [scalar], [aval], {"broadcast_dimensions": i64_array([])})


# ----- whole jaxprs ------------------------------------------------------------------------------

def lower_jaxpr_into(b, jaxpr, in_values):
    """Emit the equations of `jaxpr` into builder `b`; `in_values` bind its constvars then invars.
    Returns the values of its outputs. (Nested jaxprs, e.g. of an inner `jit`, are inlined.)"""
    from ..ir import Literal
    env = {}
    for v, value in zip(jaxpr.constvars + jaxpr.invars, in_values, strict=True):
        env[v] = value

    def read(atom):
        if isinstance(atom, Literal):
            return b.constant(atom.val, atom.aval.dtype, atom.aval.shape)
        return env[atom]

    for eqn in jaxpr.eqns:
        outs = lower_equation(b, eqn.primitive, [read(a) for a in eqn.invars], [a.aval for a in eqn.invars],
                              [v.aval for v in eqn.outvars], eqn.params)
        for v, value in zip(eqn.outvars, outs, strict=True):
            env[v] = value
    return [read(v) for v in jaxpr.outvars]


def lower_jaxpr(jaxpr, name="main_jit"):
    """A module whose `main` runs `jaxpr` (its constvars are leading arguments)."""
    m = ModuleBuilder(re.sub(r"[^A-Za-z0-9_]", "_", name))
    f = m.func("main", [v.aval for v in jaxpr.constvars + jaxpr.invars])
    outs = lower_jaxpr_into(f, jaxpr, f.args)
    f.ret(outs)
    return m.text()
