"""The jaxpr IR: variables, literals, equations, jaxprs and closed jaxprs, with a pretty printer in
JAX's format and a type checker that re-runs every primitive's shape and dtype rule.

    { lambda a:f32[3]; b:f32[3]. let c:f32[3] = mul b a; d:f32[] = reduce_sum[axes=(0,)] c in (d,) }

Constants a program closes over are `constvars` (before the `;`), bound by a `ClosedJaxpr`.
Scalars appear inline as `Literal`s.
"""
import itertools
import weakref

import numpy as np

from .avals import ShapedArray

__all__ = ["Var", "Literal", "JaxprEqn", "Jaxpr", "ClosedJaxpr", "check_jaxpr", "JaxprTypeError", "intern",
           "structural_key", "consts_as_args"]


class Var:
    """A variable of the IR, typed by an abstract value. Names are assigned when printing."""
    __slots__ = ("aval", "suffix")

    def __init__(self, aval, suffix=""):
        self.aval = aval
        self.suffix = suffix

    def __repr__(self):
        return f"Var({self.aval.str_short()})"


class Literal:
    """A scalar constant written inline in the program (Python scalars, 0-d arrays)."""
    __slots__ = ("val", "aval")

    def __init__(self, val, aval):
        self.val = val
        self.aval = aval

    def __repr__(self):
        # the value printed in its own dtype's shortest form: 0.1 for float32 0.1, not 0.10000000149
        value = np.asarray(self.val).astype(self.aval.dtype)[()]
        text = str(value.item() if value.dtype.kind in "biu" else value)
        if value.dtype.kind == "f" and not any(c in text for c in ".einf"):
            text += ".0"
        return f"{text}:{self.aval.str_short()}"


class JaxprEqn:
    """One primitive application: `outvars = primitive[params] invars`."""
    __slots__ = ("primitive", "invars", "outvars", "params", "source_info")

    def __init__(self, primitive, invars, outvars, params, source_info=None):
        self.primitive = primitive
        self.invars = list(invars)
        self.outvars = list(outvars)
        self.params = dict(params)
        self.source_info = source_info

    def __repr__(self):
        return _pp_eqn(self, _Names())


class Jaxpr:
    """A typed first-order program: `constvars`, `invars`, equations in order, `outvars`."""
    __slots__ = ("constvars", "invars", "outvars", "eqns", "debug_info")

    def __init__(self, constvars, invars, outvars, eqns, debug_info=None):
        self.constvars = list(constvars)
        self.invars = list(invars)
        self.outvars = list(outvars)
        self.eqns = list(eqns)
        self.debug_info = debug_info

    in_avals = property(lambda self: [v.aval for v in self.invars])
    out_avals = property(lambda self: [v.aval for v in self.outvars])

    def pretty_print(self):
        return _pp_jaxpr(self, _Names(), "")

    def __str__(self):
        return self.pretty_print()

    __repr__ = __str__


class ClosedJaxpr:
    """A jaxpr with values for its constvars. Hashable by identity, so it can be a primitive param."""
    __slots__ = ("jaxpr", "consts", "__weakref__")

    def __init__(self, jaxpr, consts):
        if len(jaxpr.constvars) != len(consts):
            raise ValueError(f"ClosedJaxpr: {len(jaxpr.constvars)} constvars but {len(consts)} consts")
        self.jaxpr = jaxpr
        self.consts = list(consts)

    in_avals = property(lambda self: self.jaxpr.in_avals)
    out_avals = property(lambda self: self.jaxpr.out_avals)
    eqns = property(lambda self: self.jaxpr.eqns)

    def __str__(self):
        return self.jaxpr.pretty_print()

    __repr__ = __str__


# ----- pretty printing --------------------------------------------------------------------------

class _Names:
    """Short names a, b, ..., z, ba, bb, ... in order of first appearance, as JAX prints them."""

    def __init__(self):
        self.names = {}
        self.counter = itertools.count()

    def __call__(self, v):
        if isinstance(v, Literal):
            return repr(v)
        name = self.names.get(id(v))
        if name is None:
            name = self.names[id(v)] = _encode(next(self.counter)) + getattr(v, "suffix", "")
        return name


def _encode(i):
    letters = "abcdefghijklmnopqrstuvwxyz"
    s = letters[i % 26]
    i //= 26
    while i:
        s = letters[i % 26] + s
        i //= 26
    return s


def _binder(v, names):
    return f"{names(v)}:{v.aval.str_short()}"


def _pp_param(value, names, indent):
    if isinstance(value, ClosedJaxpr):
        return _pp_jaxpr(value.jaxpr, names, indent + "    ")
    if isinstance(value, Jaxpr):
        return _pp_jaxpr(value, names, indent + "    ")
    if isinstance(value, (tuple, list)) and value and all(isinstance(v, (ClosedJaxpr, Jaxpr)) for v in value):
        inner = ("\n" + indent + "    ").join(_pp_param(v, names, indent) for v in value)
        return f"(\n{indent}    {inner}\n{indent})"
    if isinstance(value, np.dtype):
        return value.name
    if callable(value) and hasattr(value, "__name__"):
        return value.__name__
    return repr(value)


def _pp_eqn(eqn, names, indent=""):
    params = ""
    if eqn.params:
        params = "[" + " ".join(f"{k}={_pp_param(v, names, indent)}" for k, v in eqn.params.items()) + "]"
    ins = " ".join(names(v) for v in eqn.invars)
    outs = " ".join(_binder(v, names) for v in eqn.outvars)
    lhs = f"{outs} = " if outs else ""
    return f"{lhs}{eqn.primitive.name}{params} {ins}".rstrip()


def _pp_jaxpr(jaxpr, names, indent):
    consts = " ".join(_binder(v, names) for v in jaxpr.constvars)
    ins = " ".join(_binder(v, names) for v in jaxpr.invars)
    head = f"{{ lambda {consts}; {ins}. let"
    body = [indent + "    " + _pp_eqn(e, names, indent + "    ") for e in jaxpr.eqns]
    outs = ", ".join(names(v) for v in jaxpr.outvars)
    tail = f"in ({outs},) }}" if len(jaxpr.outvars) == 1 else f"in ({outs}) }}"
    if not body:
        return f"{head} {tail}"
    return head + "\n" + "\n".join(body) + "\n" + indent + "  " + tail


# ----- type checking ----------------------------------------------------------------------------

class JaxprTypeError(TypeError):
    """A jaxpr whose equations do not type-check (a bug in a transformation, not in user code)."""


def check_jaxpr(jaxpr):
    """Re-run every equation's shape and dtype rule and check each variable is defined before use
    and has the type it is declared with. Raises `JaxprTypeError` naming the equation."""
    defined = set()

    def read(v, where):
        if isinstance(v, Literal):
            return v.aval
        if id(v) not in defined:
            raise JaxprTypeError(f"{where}: variable {v!r} used before it is defined")
        return v.aval

    def write(v, where):
        if id(v) in defined:
            raise JaxprTypeError(f"{where}: variable {v!r} defined twice")
        defined.add(id(v))

    for v in jaxpr.constvars + jaxpr.invars:
        write(v, "binders")
    for i, eqn in enumerate(jaxpr.eqns):
        where = f"equation {i} ({eqn.primitive.name})"
        in_avals = [read(v, where) for v in eqn.invars]
        out = eqn.primitive.abstract_eval(*in_avals, **eqn.params)
        out_avals = list(out) if eqn.primitive.multiple_results else [out]
        if len(out_avals) != len(eqn.outvars):
            raise JaxprTypeError(f"{where}: {len(eqn.outvars)} outputs declared, rule gives {len(out_avals)}")
        for v, aval in zip(eqn.outvars, out_avals, strict=True):
            if not _same_type(v.aval, aval):
                raise JaxprTypeError(f"{where}: output declared {v.aval.str_short()}, rule gives {aval.str_short()}")
            write(v, where)
    for v in jaxpr.outvars:
        read(v, "outputs")


def _same_type(a, b):
    return isinstance(a, ShapedArray) and isinstance(b, ShapedArray) and a.shape == b.shape and a.dtype == b.dtype


# ----- interning ------------------------------------------------------------------------------

_interned = weakref.WeakValueDictionary()


def intern(closed):
    """One ClosedJaxpr object per program structure (constant-free jaxprs only), so that equal traces
    give identical primitive params, and so share one compiled executable: a fresh lambda traced in
    a loop compiles once. Jaxprs with unhashable params are returned as they are."""
    if closed.consts:
        return closed
    try:
        key = structural_key(closed.jaxpr)
    except TypeError:
        return closed
    return _interned.setdefault(key, closed)


def structural_key(jaxpr):
    """A hashable description of a jaxpr up to renaming of its variables (source lines ignored)."""
    numbers = {}

    def bind(v):
        numbers[id(v)] = len(numbers)
        return v.aval

    def atom(a):
        if isinstance(a, Literal):
            return ("literal", a.aval, np.asarray(a.val).tobytes())
        return numbers[id(a)]

    binders = tuple(bind(v) for v in jaxpr.constvars + jaxpr.invars)
    eqns = []
    for e in jaxpr.eqns:
        ins = tuple(atom(a) for a in e.invars)
        params = tuple((k, _param_key(v)) for k, v in e.params.items())
        eqns.append((e.primitive, ins, params, tuple(bind(v) for v in e.outvars)))
    return binders, tuple(eqns), tuple(atom(a) for a in jaxpr.outvars)


def _param_key(v):
    if isinstance(v, ClosedJaxpr):
        return ("closed", structural_key(v.jaxpr)) if not v.consts else v
    if isinstance(v, Jaxpr):
        return ("jaxpr", structural_key(v))
    if isinstance(v, (tuple, list)):
        return (type(v).__name__,) + tuple(_param_key(x) for x in v)
    hash(v)
    return v


def consts_as_args(closed):
    """The same program with its constants as leading arguments (so they are passed, never baked
    into an executable as literals), interned, plus the constant values to pass."""
    j = closed.jaxpr
    return intern(ClosedJaxpr(Jaxpr([], j.constvars + j.invars, j.outvars, j.eqns), [])), closed.consts
