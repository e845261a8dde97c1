"""Evaluating a jaxpr by binding its equations: the interpreter every transformation reuses (a jaxpr
evaluated under a jvp trace is differentiated, under a staging trace re-staged, and so on)."""
from ..array import asarray_device
from ..ir import Literal

__all__ = ["eval_jaxpr", "read_literal"]


def read_literal(lit):
    """The Array a `Literal` stands for (its dtype and weak type kept)."""
    return asarray_device(lit.val, lit.aval.dtype, lit.aval.weak_type)


def eval_jaxpr(jaxpr, consts, *args):
    """Apply the equations of `jaxpr` to `consts` (its constvars) and `args` (its invars) through
    `bind`, under whatever trace is current; returns the list of outputs."""
    env = {}
    for v, x in zip(jaxpr.constvars, consts, strict=True):
        env[v] = x
    for v, x in zip(jaxpr.invars, args, strict=True):
        env[v] = x

    def read(atom):
        return read_literal(atom) if type(atom) is Literal else env[atom]

    for eqn in jaxpr.eqns:
        outs = eqn.primitive.bind(*[read(a) for a in eqn.invars], **eqn.params)
        if eqn.primitive.multiple_results:
            for v, x in zip(eqn.outvars, outs, strict=True):
                env[v] = x
        else:
            env[eqn.outvars[0]] = outs
    return [read(v) for v in jaxpr.outvars]
