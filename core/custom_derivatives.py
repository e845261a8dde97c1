"""User-defined derivative rules: `custom_jvp`, `custom_vjp` and `closure_convert`.

A function decorated with `custom_jvp` (or `custom_vjp`) runs as written, except under
differentiation, where the user's rule replaces differentiating its body. Eagerly the function is
simply called. Under any other trace it is applied as one primitive (`custom_jvp_call` or
`custom_vjp_call`) holding the traced body and the rule, so the rule is found again wherever the
program is differentiated later: `grad(jit(f))` differentiates the staged program and meets the
same primitive.

`custom_vjp` under reverse mode: the jvp rule of `custom_vjp_call` runs the user's `fwd` on the
primal values and emits one `custom_lin` equation, linear in the input tangents, that holds `bwd`
and the residuals; transposing `custom_lin` calls `bwd`. Forward mode (`jvp`) of a custom_vjp
function is an error, as in JAX: a vjp rule cannot give a jvp.
"""
import functools
import inspect

import numpy as np

from . import dtypes, traceback_util
from .array import Array, to_array
from .autodiff import user_tangent_tree
from .interpreters import ad, batching, lowering
from .interpreters.evaluation import eval_jaxpr
from .interpreters.staging import trace_to_jaxpr
from .ir import consts_as_args
from .trace import EvalTrace, Primitive, Tracer, current_trace
from .tree_util import logical_structure, physical_flatten, tree_flatten, tree_map, tree_structure, tree_unflatten

__all__ = ["custom_jvp", "custom_vjp", "closure_convert"]


def _name(fun):
    return getattr(fun, "__name__", None) or type(fun).__name__


def _resolve_args(fun, signature, args, kwargs):
    """Keyword arguments bound to positions, as custom rules receive positional primals."""
    if not kwargs:
        return tuple(args)
    if signature is None:
        raise TypeError(f"{_name(fun)}: keyword arguments need an inspectable signature.")
    bound = signature.bind(*args, **kwargs)
    bound.apply_defaults()
    return tuple(bound.args)


def _as_operand(x, fname):
    if isinstance(x, (Array, Tracer)):
        return x
    try:
        return to_array(x)
    except Exception:
        raise TypeError(f"{fname}: differentiable arguments must be arrays or scalars (or pytrees of them), "
                        f"got {type(x)}. Pass other values through nondiff_argnums.") from None


def _aval(x):
    return x.aval if hasattr(x, "aval") else to_array(x).aval


def _split_nondiff(args, nondiff_argnums):
    nondiff = {i: args[i] for i in nondiff_argnums}
    diff = tuple(a for i, a in enumerate(args) if i not in nondiff)
    return nondiff, diff


def _merge_nondiff(nondiff, diff, n):
    it = iter(diff)
    return tuple(nondiff[i] if i in nondiff else next(it) for i in range(n))


def _trace_body(fun, nondiff, diff_flat, in_tree, n_args, what):
    """Trace `fun(*args)` (diff leaves as inputs) into a constant-free program plus its consts."""
    store = {}

    def flat(*leaves):
        out = fun(*_merge_nondiff(nondiff, tree_unflatten(in_tree, leaves), n_args))
        out_leaves, store["tree"] = physical_flatten(out)  # a typed key's data (core/tree_util.py)
        return [_as_operand(x, f"the output of {_name(fun)}") for x in out_leaves]

    closed = trace_to_jaxpr(flat, [_aval(x) for x in diff_flat], fun_name=_name(fun), purpose=what)
    program, consts = consts_as_args(closed)
    return program, list(consts), store["tree"]


def _check_no_closed_over_tangents(consts_t, fname, kind):
    if any(type(t) is not ad.Zero for t in consts_t):
        raise TypeError(
            f"Detected differentiation of a {kind} function ({fname}) with respect to a closed-over value. "
            f"That isn't supported because the custom rule only says how to differentiate {fname} with respect "
            "to its explicit inputs. Pass the value as an argument, or use core.closure_convert to turn the "
            "closed-over values into explicit arguments.")


def _tangent_zeros(aval):
    """A tangent argument handed to a user rule: zeros of the primal's type (float0 for integers)."""
    return ad.instantiate_zeros(ad.Zero(ad.tangent_aval(aval)))


# ----- custom_jvp -------------------------------------------------------------------------------------

class _CustomDerivative:
    """What custom_jvp and custom_vjp share: wrapping the function, and applying it (directly when
    eager, else as one primitive holding the traced body and the rule object)."""

    def __init__(self, fun, nondiff_argnums):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(sorted(int(i) for i in nondiff_argnums))
        try:
            self._signature = inspect.signature(fun)
        except (TypeError, ValueError):
            self._signature = None

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        return functools.partial(self, obj)

    def _apply(self, args, kwargs, prim, what, rule_params):
        args = _resolve_args(self.fun, self._signature, args, kwargs)
        if type(current_trace()) is EvalTrace:
            return self.fun(*args)
        nondiff, diff = _split_nondiff(args, self.nondiff_argnums)
        diff_flat, in_tree = physical_flatten(diff)
        diff_flat = [_as_operand(x, _name(self.fun)) for x in diff_flat]
        program, consts, out_tree = _trace_body(self.fun, nondiff, diff_flat, in_tree, len(args), what)
        params = rule_params(nondiff, in_tree, out_tree, len(args), [_aval(x) for x in diff_flat])
        outs = prim.bind(*consts, *diff_flat, call_jaxpr=program, num_consts=len(consts), **params)
        return tree_unflatten(out_tree, outs)


class custom_jvp(_CustomDerivative):
    """A function with a custom forward-mode rule (reverse mode follows by linearization).

    The rule `jvp(primals, tangents) -> (primal_out, tangent_out)` (with `nondiff_argnums`,
    `jvp(*nondiff_args, primals, tangents)`) must return outputs of the function's structure and
    types, with a tangent linear in `tangents`.

    Example:
        >>> @custom_jvp
        ... def log1pexp(x):
        ...     return jnp.log(1. + jnp.exp(x))
        >>> @log1pexp.defjvp
        ... def log1pexp_jvp(primals, tangents):
        ...     x, = primals; t, = tangents
        ...     return log1pexp(x), t * (1. - 1. / (1. + jnp.exp(x)))
        >>> core.grad(log1pexp)(100.)   # differentiating the body would give nan
        Array(1., dtype=float32)
    """

    def __init__(self, fun, nondiff_argnums=()):
        super().__init__(fun, nondiff_argnums)
        self.jvp = None

    def defjvp(self, jvp):
        """Set the jvp rule (usable as a decorator); returns it."""
        self.jvp = jvp
        return jvp

    def defjvps(self, *tangent_fns):
        """Set the jvp rule from one function per argument, `fn(t_i, primal_out, *primals)` giving
        that argument's contribution (None: no dependence); contributions are summed.

        Example: `f.defjvps(lambda t, ans, x, y: t * y, lambda t, ans, x, y: t * x)` for `x * y`.
        """
        if self.nondiff_argnums:
            raise TypeError("defjvps is not supported together with nondiff_argnums; use defjvp.")

        def jvp(primals, tangents):
            ans = self(*primals)
            total = None
            for fn, t in zip(tangent_fns, tangents):
                if fn is None:
                    continue
                c = fn(t, ans, *primals)
                total = c if total is None else tree_map(lambda a, b: a + b, total, c)
            if total is None:
                leaves, tree = physical_flatten(ans)
                total = user_tangent_tree(tree, [_tangent_zeros(_aval(a)) for a in leaves])
            return ans, total
        self.jvp = jvp
        return jvp

    @traceback_util.api_boundary
    def __call__(self, *args, **kwargs):
        name = _name(self.fun)
        if self.jvp is None:
            raise AttributeError(f"No JVP defined for custom_jvp function {name} using defjvp.")
        return self._apply(args, kwargs, custom_jvp_call_p, "custom_jvp",
                           lambda nondiff, in_tree, out_tree, n, avals: {
                               "jvp": _JvpRule(self, nondiff, in_tree, out_tree, n)})


class _JvpRule:
    """The user's jvp rule on flat values (a primitive param: hashed by identity)."""

    def __init__(self, f, nondiff, in_tree, out_tree, n_args):
        self.f, self.nondiff, self.in_tree, self.out_tree, self.n_args = f, nondiff, in_tree, out_tree, n_args

    def __call__(self, primals, tangents):
        f = self.f
        name = _name(f.fun)
        p_args = _merge_nondiff(self.nondiff, tree_unflatten(self.in_tree, primals), self.n_args)
        t_args = _merge_nondiff(self.nondiff, user_tangent_tree(self.in_tree, tangents), self.n_args)
        diff_p = tuple(a for i, a in enumerate(p_args) if i not in self.nondiff)
        diff_t = tuple(a for i, a in enumerate(t_args) if i not in self.nondiff)
        nondiff_vals = [self.nondiff[i] for i in f.nondiff_argnums]
        out = f.jvp(*nondiff_vals, diff_p, diff_t)
        if not (isinstance(out, (tuple, list)) and len(out) == 2):
            raise TypeError(f"Custom JVP rule of {name} must return a pair (primal_out, tangent_out), got "
                            f"{type(out).__name__}.")
        p_out, t_out = out
        p_flat, p_tree = physical_flatten(p_out)
        t_flat, t_tree = tree_flatten(t_out)  # a typed key's tangent is one float0 leaf
        if p_tree != self.out_tree:
            raise TypeError(f"Custom JVP rule of {name} must produce primal outputs with the same structure as "
                            f"{name} itself: expected {self.out_tree}, got {p_tree}.")
        p_tree = logical_structure(p_tree)
        if t_tree != p_tree:
            raise TypeError(f"Custom JVP rule of {name} must produce primal and tangent outputs with equal "
                            f"container (pytree) structures, but got {p_tree} and {t_tree}.")
        checked = []
        for i, (p, t) in enumerate(zip(p_flat, t_flat)):
            pa = _aval(p)
            if isinstance(t, np.ndarray) and t.dtype == dtypes.float0:
                checked.append(ad.Zero(ad.tangent_aval(pa)))
                continue
            ta = _aval(t)
            expected = ad.tangent_aval(pa)
            if ta.shape != pa.shape or (dtypes.is_inexact(pa.dtype) and ta.dtype != expected.dtype):
                raise TypeError(f"Custom JVP rule of {name} must produce primal and tangent outputs with "
                                f"corresponding shapes and dtypes; output {i} has primal {pa.str_short()} and "
                                f"tangent {ta.str_short()}.")
            checked.append(t if dtypes.is_inexact(pa.dtype) else ad.Zero(expected))
        return p_flat, checked


def _call_abstract_eval(*avals, call_jaxpr, **_):
    return call_jaxpr.out_avals


def _call_lowering(ctx, *args, call_jaxpr, **_):
    return lowering.lower_jaxpr_into(ctx.b, call_jaxpr.jaxpr, args)


def _custom_jvp_call_jvp(primals, tangents, *, call_jaxpr, jvp, num_consts):
    _check_no_closed_over_tangents(tangents[:num_consts], _name(jvp.f.fun), "custom_jvp")
    args = primals[num_consts:]
    ts = [_tangent_zeros(_aval(p)) if type(t) is ad.Zero else t for p, t in zip(args, tangents[num_consts:])]
    return jvp(list(args), ts)


# Batching. The held program is batched with every output's batch axis at 0, and the rule is
# wrapped so that it runs vmapped over the same inputs (`_BatchedJvpRule`), its outputs at 0 too:
# whichever order vmap and differentiation come in, the user's rule is the one differentiated.

def _all_at_front(n):
    return [0] * n


def _batched_aval(aval, dim, size):
    if dim is None:
        return aval
    return aval.update(shape=aval.shape[:dim] + (size,) + aval.shape[dim:])


def _per_example_tangent(t, dim):
    """A float0 tangent (of an integer input) carries no values: hand the rule an unbatched one."""
    if isinstance(t, np.ndarray) and t.dtype == dtypes.float0:
        shape = t.shape if dim is None else t.shape[:dim] + t.shape[dim + 1:]
        return np.zeros(shape, dtypes.float0), None
    return t, dim


def _refuse_batched_closure(rule, kind):
    if rule.closure_batched:
        name = _name(rule.f.fun)
        raise TypeError(
            f"The {kind} function {name} closes over a value that vmap batches, and it is being "
            f"differentiated outside that vmap: its custom rule cannot see that value per example. Pass the "
            f"value to {name} as an argument, or use core.closure_convert to turn closed-over values into "
            "explicit arguments.")


class _BatchedJvpRule:
    """A custom_jvp rule (a `_JvpRule`, or one already batched) run vmapped along `axis`, with the
    primal inputs batched along `in_dims`; every output comes out batched along axis 0."""

    def __init__(self, inner, axis, in_dims, closure_batched):
        self.inner, self.f, self.axis, self.in_dims = inner, inner.f, axis, tuple(in_dims)
        self.closure_batched = closure_batched

    def __repr__(self):
        return f"vmap({_name(self.f.fun)} jvp rule, in_dims={self.in_dims})"

    def __call__(self, primals, tangents):
        _refuse_batched_closure(self, "custom_jvp")
        n = len(primals)
        t_pairs = [_per_example_tangent(t, d) for t, d in zip(tangents, self.in_dims, strict=True)]
        zero_mask = []

        def per_example(*args):
            p_out, t_out = self.inner(list(args[:n]), list(args[n:]))
            zero_mask[:] = [type(t) is ad.Zero for t in t_out]
            return list(p_out) + [t for t in t_out if type(t) is not ad.Zero]

        outs, _ = batching.batch_fun(per_example, [*primals, *[t for t, _ in t_pairs]],
                                     [*self.in_dims, *[d for _, d in t_pairs]], self.axis, _all_at_front,
                                     _name(self.f.fun))
        p_out, rest = outs[:len(zero_mask)], iter(outs[len(zero_mask):])
        t_out = [ad.Zero(ad.tangent_aval(_aval(p))) if z else next(rest) for p, z in zip(p_out, zero_mask)]
        return p_out, t_out


def _batched_call(prim, axis, vals, dims, call_jaxpr, num_consts, rule_param, make_rule):
    """The batching rule shared by custom_jvp_call and custom_vjp_call: bind `prim` again with the
    batched program (outputs at axis 0) and the rule wrapped by `make_rule(rule, arg_dims,
    closure_batched)`. Eagerly no rule can be needed any more: the batched program just runs."""
    n_out = len(call_jaxpr.out_avals)
    params = {"call_jaxpr": call_jaxpr, "num_consts": num_consts, rule_param[0]: rule_param[1]}
    eager = type(current_trace()) is EvalTrace
    if all(d is None for d in dims) and not batching.jaxpr_uses_axis(call_jaxpr, axis.name):
        if eager:
            return eval_jaxpr(call_jaxpr.jaxpr, call_jaxpr.consts, *vals), [None] * n_out
        return prim.bind(*vals, **params), [None] * n_out
    batched, _ = batching.batch_jaxpr(call_jaxpr, axis, dims, [0] * n_out)
    if eager:
        return eval_jaxpr(batched.jaxpr, batched.consts, *vals), [0] * n_out
    program, consts = consts_as_args(batched)
    closure_batched = any(d is not None for d in dims[:num_consts])
    rule = make_rule(rule_param[1], dims[num_consts:], closure_batched)
    outs = prim.bind(*consts, *vals, call_jaxpr=program, num_consts=len(consts) + num_consts,
                     **{rule_param[0]: rule})
    return outs, [0] * n_out


def _custom_jvp_call_batch(axis, vals, dims, *, call_jaxpr, jvp, num_consts):
    return _batched_call(custom_jvp_call_p, axis, vals, dims, call_jaxpr, num_consts, ("jvp", jvp),
                         lambda rule, arg_dims, closure: _BatchedJvpRule(rule, axis, arg_dims, closure))


custom_jvp_call_p = Primitive("custom_jvp_call", multiple_results=True)
custom_jvp_call_p.def_abstract_eval(_call_abstract_eval)
lowering.register(custom_jvp_call_p, _call_lowering)
ad.jvp_rules[custom_jvp_call_p] = _custom_jvp_call_jvp
batching.axis_batching_rules[custom_jvp_call_p] = _custom_jvp_call_batch


# ----- custom_vjp -------------------------------------------------------------------------------------

class custom_vjp(_CustomDerivative):
    """A function with a custom reverse-mode rule: `fwd(*args) -> (out, residuals)` and
    `bwd(residuals, out_cotangent) -> tuple of input cotangents` (with `nondiff_argnums`,
    `bwd(*nondiff_args, residuals, ct)`). Forward mode (`jvp`) of it is an error.

    Example:
        >>> @custom_vjp
        ... def clip_gradient(x):
        ...     return x
        >>> clip_gradient.defvjp(lambda x: (x, None), lambda _, g: (jnp.clip(g, -1., 1.),))
        >>> core.grad(lambda x: 3. * clip_gradient(x))(2.)   # 3.0, clipped to 1.0
        Array(1., dtype=float32)
    """

    def __init__(self, fun, nondiff_argnums=()):
        super().__init__(fun, nondiff_argnums)
        self.fwd = self.bwd = None

    def defvjp(self, fwd, bwd):
        """Set the forward pass `fwd` (returns the output and residuals) and the backward pass `bwd`."""
        self.fwd, self.bwd = fwd, bwd

    @traceback_util.api_boundary
    def __call__(self, *args, **kwargs):
        name = _name(self.fun)
        if self.fwd is None:
            raise AttributeError(f"No VJP defined for custom_vjp function {name} using defvjp.")
        return self._apply(args, kwargs, custom_vjp_call_p, "custom_vjp",
                           lambda nondiff, in_tree, out_tree, n, avals: {
                               "rule": _VjpRule(self, nondiff, in_tree, out_tree, n, avals)})


class _VjpRule:
    """The user's fwd/bwd on flat values (a primitive param: hashed by identity)."""

    def __init__(self, f, nondiff, in_tree, out_tree, n_args, in_avals):
        self.f, self.nondiff, self.in_tree, self.out_tree, self.n_args = f, nondiff, in_tree, out_tree, n_args
        self.in_avals = in_avals
        self.res_tree = None

    def nondiff_values(self):
        return [self.nondiff[i] for i in self.f.nondiff_argnums]

    def fwd(self, primals):
        name = _name(self.f.fun)
        args = _merge_nondiff(self.nondiff, tree_unflatten(self.in_tree, primals), self.n_args)
        out = self.f.fwd(*args)
        if not (isinstance(out, (tuple, list)) and len(out) == 2):
            raise TypeError(f"Custom VJP fwd rule of {name} must return a pair (output, residuals), got "
                            f"{type(out).__name__}.")
        p_out, res = out
        p_flat, p_tree = physical_flatten(p_out)
        if p_tree != self.out_tree:
            raise TypeError(f"Custom VJP fwd rule of {name} must produce outputs with the same container (pytree) "
                            f"structure as {name} itself: expected {self.out_tree}, got {p_tree}.")
        res_flat, self.res_tree = physical_flatten(res)
        return p_flat, [_as_operand(r, f"the residuals of {name}'s fwd rule") for r in res_flat]

    def bwd(self, res_flat, cts_flat):
        name = _name(self.f.fun)
        res = tree_unflatten(self.res_tree, res_flat)
        ct = user_tangent_tree(self.out_tree, cts_flat)
        out = self.f.bwd(*self.nondiff_values(), res, ct)
        n_diff = self.n_args - len(self.nondiff)
        if not isinstance(out, (tuple, list)) or len(out) != n_diff:
            got = tree_structure(out)
            raise TypeError(
                f"Custom VJP bwd rule of {name} must produce an output with the same container (pytree) "
                f"structure as the args tuple of the primal function, and in particular must produce a tuple "
                f"of length equal to the number of arguments to the primal function ({n_diff}), but got bwd "
                f"output structure {got} for primal input structure {self.in_tree}.")
        flat = []
        for i, (ct_i, arg_tree) in enumerate(zip(out, self.in_tree.children())):
            if ct_i is None:
                flat.extend([None] * arg_tree.num_leaves)
                continue
            leaves, tree = tree_flatten(ct_i, is_leaf=lambda x: x is None)
            if tree != arg_tree and not (len(leaves) == arg_tree.num_leaves):
                raise TypeError(f"Custom VJP bwd rule of {name}: the cotangent for argument {i} has structure "
                                f"{tree}, but the argument has structure {arg_tree}.")
            flat.extend(leaves)
        results = []
        for i, (c, a) in enumerate(zip(flat, self.in_avals)):
            if c is None or not dtypes.is_inexact(a.dtype):
                results.append(None)
                continue
            ca = _aval(c)
            if ca.shape != a.shape:
                raise ValueError(f"Custom VJP bwd rule of {name} produced a cotangent of shape {ca.shape} for an "
                                 f"input of shape {a.shape} (input leaf {i}).")
            if ca.dtype != a.dtype:
                from .lax import convert_element_type
                c = convert_element_type(c, a.dtype)
            results.append(c)
        return results


def _custom_vjp_call_jvp(primals, tangents, *, call_jaxpr, rule, num_consts):
    _check_no_closed_over_tangents(tangents[:num_consts], _name(rule.f.fun), "custom_vjp")
    args = list(primals[num_consts:])
    p_out, res = rule.fwd(args)
    ts = [ad.instantiate_zeros(t) for t, p in zip(tangents[num_consts:], args) if dtypes.is_inexact(_aval(p).dtype)]
    out_avals = [ad.tangent_aval(_aval(p)) for p in p_out]
    lin_outs = custom_lin_p.bind(*res, *ts, num_res=len(res), rule=rule, out_avals=tuple(out_avals))
    it = iter(lin_outs)
    t_out = [next(it) if dtypes.is_inexact(a.dtype) else ad.Zero(a) for a in out_avals]
    return p_out, t_out


class _BatchedVjpRule:
    """A custom_vjp's fwd/bwd (a `_VjpRule`, or one already batched) run vmapped along `axis`, with
    the differentiable inputs batched along `in_dims`. `fwd` gives the outputs batched along axis 0
    and the residuals wherever they come out (`res_dims`); `bwd` takes output cotangents batched
    along 0 and returns input cotangents batched like the inputs, summed over the examples for an
    unbatched input (every example's cotangent reaches that one shared value)."""

    def __init__(self, inner, axis, in_dims, closure_batched, res_dims=None):
        self.inner, self.f, self.axis, self.in_dims = inner, inner.f, axis, tuple(in_dims)
        self.in_avals = [_batched_aval(a, d, axis.size) for a, d in zip(inner.in_avals, in_dims, strict=True)]
        self.closure_batched = closure_batched
        self.res_dims = res_dims

    def __repr__(self):
        return f"vmap({_name(self.f.fun)} vjp rule, in_dims={self.in_dims})"

    def fwd(self, primals):
        _refuse_batched_closure(self, "custom_vjp")
        n_out = []

        def per_example(*args):
            p_out, res = self.inner.fwd(list(args))
            n_out[:] = [len(p_out)]
            return list(p_out) + list(res)

        def placement(n):
            return [0] * n_out[0] + [None] * (n - n_out[0])

        outs, dims = batching.batch_fun(per_example, list(primals), list(self.in_dims), self.axis, placement,
                                        _name(self.f.fun))
        self.res_dims = dims[n_out[0]:]
        return outs[:n_out[0]], outs[n_out[0]:]

    def bwd(self, res_flat, cts_flat):
        from .lax import reduce_sum
        n_res = len(res_flat)
        ct_pairs = [_per_example_tangent(c, 0) for c in cts_flat]
        none_mask = []

        def per_example(*args):
            in_cts = self.inner.bwd(list(args[:n_res]), list(args[n_res:]))
            none_mask[:] = [c is None for c in in_cts]
            return [c for c in in_cts if c is not None]

        outs, _ = batching.batch_fun(per_example, [*res_flat, *[c for c, _ in ct_pairs]],
                                     [*self.res_dims, *[d for _, d in ct_pairs]], self.axis, _all_at_front,
                                     _name(self.f.fun))
        it = iter(outs)
        results = []
        for is_none, d in zip(none_mask, self.in_dims, strict=True):
            if is_none:
                results.append(None)
            elif d is None:
                results.append(reduce_sum(next(it), (0,)))
            else:
                results.append(batching.moveaxis(next(it), 0, d))
        return results


def _custom_vjp_call_batch(axis, vals, dims, *, call_jaxpr, rule, num_consts):
    return _batched_call(custom_vjp_call_p, axis, vals, dims, call_jaxpr, num_consts, ("rule", rule),
                         lambda inner, arg_dims, closure: _BatchedVjpRule(inner, axis, arg_dims, closure))


custom_vjp_call_p = Primitive("custom_vjp_call", multiple_results=True)
custom_vjp_call_p.def_abstract_eval(_call_abstract_eval)
lowering.register(custom_vjp_call_p, _call_lowering)
ad.jvp_rules[custom_vjp_call_p] = _custom_vjp_call_jvp
batching.axis_batching_rules[custom_vjp_call_p] = _custom_vjp_call_batch


def _custom_lin_abstract_eval(*avals, num_res, rule, out_avals):
    return [a for a in out_avals if dtypes.is_inexact(a.dtype)]


def _custom_lin_lowering(ctx, *args, num_res, rule, out_avals):
    raise TypeError(f"can't apply forward-mode autodiff (jvp) to a custom_vjp function "
                    f"({_name(rule.f.fun)}); use vjp/grad, or define it with custom_jvp instead.")


def _custom_lin_jvp(primals, tangents, *, num_res, rule, out_avals):
    _custom_lin_lowering(None, num_res=num_res, rule=rule, out_avals=out_avals)


def _custom_lin_transpose(cts, *args, num_res, rule, out_avals):
    res = args[:num_res]
    it = iter(cts)
    full_cts = [next(it) if dtypes.is_inexact(a.dtype) else _tangent_zeros(a) for a in out_avals]
    in_cts = rule.bwd(list(res), full_cts)
    inexact_cts = [c if c is not None else ad.Zero(ad.tangent_aval(a))
                   for c, a in zip(in_cts, rule.in_avals) if dtypes.is_inexact(a.dtype)]
    return [None] * num_res + inexact_cts


def _custom_lin_batch(vals, dims, *, num_res, rule, out_avals):
    # vmap of a linearized custom_vjp function (then transposed): the linear outputs are batched
    # along 0, and transposing calls the user's bwd vmapped, the residuals batched as they are.
    size = batching.batch_size(vals, dims)
    axis = batching.AxisData(None, size)
    t_dims = iter(dims[num_res:])
    in_dims = [next(t_dims) if dtypes.is_inexact(a.dtype) else None for a in rule.in_avals]
    batched_rule = _BatchedVjpRule(rule, axis, in_dims, False, res_dims=list(dims[:num_res]))
    batched_out = tuple(_batched_aval(a, 0, size) for a in out_avals)
    outs = custom_lin_p.bind(*vals, num_res=num_res, rule=batched_rule, out_avals=batched_out)
    return outs, [0] * len(outs)


custom_lin_p = Primitive("custom_lin", multiple_results=True)
custom_lin_p.def_abstract_eval(_custom_lin_abstract_eval)
lowering.register(custom_lin_p, _custom_lin_lowering)
ad.transpose_rules[custom_lin_p] = _custom_lin_transpose
ad.jvp_rules[custom_lin_p] = _custom_lin_jvp
batching.batching_rules[custom_lin_p] = _custom_lin_batch


# ----- closure_convert ---------------------------------------------------------------------------------

def closure_convert(fun, *example_args):
    """`(converted, consts)`: `converted(*args, *consts)` computes `fun(*args)` with the float
    values `fun` closes over (arrays, or values being traced) passed explicitly, so they can be
    differentiated inside a custom_vjp's bwd rule. `example_args` give the argument types.

    Example:
        >>> w = jnp.array([3.0, 4.0])
        >>> f, consts = closure_convert(lambda x: x * w, 1.0)
        >>> consts
        [Array([3., 4.], dtype=float32)]
        >>> f(2.0, *consts)
        Array([6., 8.], dtype=float32)
    """
    flat, in_tree = physical_flatten(example_args)
    flat = [_as_operand(x, _name(fun)) for x in flat]
    store = {}

    def flat_fun(*leaves):
        out = fun(*tree_unflatten(in_tree, leaves))
        out_leaves, store["tree"] = physical_flatten(out)
        return [_as_operand(x, _name(fun)) for x in out_leaves]

    closed = trace_to_jaxpr(flat_fun, [_aval(x) for x in flat], fun_name=_name(fun), purpose="closure_convert")
    hoist = [dtypes.is_inexact(_aval(c).dtype) for c in closed.consts]
    hoisted = [c for c, h in zip(closed.consts, hoist) if h]
    kept = [c for c, h in zip(closed.consts, hoist) if not h]
    n_in = len(flat)

    def converted(*args):
        if len(args) < len(hoisted):
            raise TypeError(f"{_name(fun)} (closure-converted) takes its arguments followed by {len(hoisted)} "
                            f"hoisted constants, got {len(args)} values.")
        user_args, consts = args[:len(args) - len(hoisted)], args[len(args) - len(hoisted):]
        leaves, tree = physical_flatten(user_args)
        if tree != in_tree or len(leaves) != n_in:
            raise TypeError(f"{_name(fun)} (closure-converted) was traced for arguments {in_tree}, got {tree}.")
        c_it, k_it = iter(consts), iter(kept)
        all_consts = [next(c_it) if h else next(k_it) for h in hoist]
        outs = eval_jaxpr(closed.jaxpr, all_consts, *leaves)
        return tree_unflatten(store["tree"], outs)

    converted.__name__ = _name(fun)
    return converted, hoisted
