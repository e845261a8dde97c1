"""User-facing differentiation: `jvp`, `linearize`, `vjp`, `grad`, `value_and_grad`, `jacfwd`,
`jacrev`, `hessian`, `linear_transpose`.

All of them take pytrees of arrays and work at any order and under `jit` (and `jit` works inside
them). Forward mode is the jvp interpreter; reverse mode is linearize (jvp + partial evaluation)
followed by transposition of the linear program (`core/interpreters/ad.py`; docs/design.md,
Automatic differentiation).

`jacfwd` and `jacrev` push the whole standard basis through one vmapped jvp (vjp), so the
Jacobian is computed by batched operations rather than a loop over basis vectors.
"""
import functools

import numpy as np

from . import dtypes, traceback_util
from .array import Array, to_array
from .interpreters import ad
from .interpreters.ad import UndefinedPrimal, Zero, tangent_aval
from .interpreters.batching import vmap_flat
from .interpreters.partial_eval import PartialEvalTrace
from .interpreters.staging import check_leaks
from .prng_keys import is_key_array
from .trace import Tracer, current_trace, set_current_trace
from .tree_util import (logical_structure, physical_flatten, physical_map, physical_structure, tree_flatten,
                        tree_leaves, tree_unflatten, typed_leaf_mask)

__all__ = ["jvp", "linearize", "vjp", "grad", "value_and_grad", "jacfwd", "jacrev", "hessian",
           "linear_transpose"]


# ----- argument handling ---------------------------------------------------------------------------

def _fun_name(fun):
    return getattr(fun, "__name__", None) or type(fun).__name__


def _as_value(x, what):
    """A leaf given to a differentiation API as a primitive operand (Array or tracer)."""
    if isinstance(x, (Array, Tracer)):
        return x
    if isinstance(x, (bool, int, float, complex, np.ndarray, np.generic)):
        return to_array(x)
    raise TypeError(f"{what}: expected arrays, scalars or pytrees of them, got a value of type {type(x)}.")


def _flat_fun(fun, in_tree, has_aux=False):
    """`fun` on flat inputs returning flat outputs; the output tree (and aux) land in `store`."""
    store = {}

    def flat(*leaves):
        out = fun(*tree_unflatten(in_tree, leaves))
        if has_aux:
            if not (isinstance(out, (tuple, list)) and len(out) == 2):
                raise TypeError(f"{_fun_name(fun)} was differentiated with has_aux=True, so it must return a "
                                f"pair (output, auxiliary data); it returned {type(out).__name__}.")
            out, aux = out
            # aux leaves leave without their tangents (they are not differentiated)
            trace = current_trace()
            store["aux"] = physical_map(lambda x: x.primal if type(x) is ad.JVPTracer and x._trace is trace else x,
                                        aux)
        leaves_out, store["tree"] = physical_flatten(out)  # a typed key's data (core/tree_util.py)
        return [_as_value(x, f"the output of {_fun_name(fun)}") for x in leaves_out]
    flat.__name__ = _fun_name(fun)
    return flat, store


def _float0_zeros(aval):
    return np.zeros(aval.shape, dtypes.float0)


# Typed PRNG keys are traced as their uint32 data (core/tree_util.py, "The physical view"), so
# they are integer leaves here; but the user sees a key of shape S as one leaf, whose tangent or
# cotangent is float0 of shape S, as in JAX, not of its data's shape S + (2,).

def user_tangent_tree(treedef, values):
    """(Co)tangents of the leaves of the physical tree `treedef`, in the structure the user sees."""
    mask = typed_leaf_mask(treedef)
    if not any(mask):
        return tree_unflatten(treedef, values)
    return tree_unflatten(logical_structure(treedef),
                          [np.zeros(np.shape(v)[:-1], dtypes.float0) if m else v for v, m in zip(values, mask)])


def _flatten_user_tree(tree, treedef, what, whose):
    """A user's (co)tangent tree for the physical tree `treedef`: its leaves, and a mask of those
    that stand for typed keys; a structure other than the one the user sees is a TypeError."""
    leaves, user_tree = tree_flatten(tree)
    expected = logical_structure(treedef)
    if user_tree != expected:
        raise TypeError(f"{what} must have {whose} structure {expected}, got {user_tree}.")
    return leaves, typed_leaf_mask(treedef)


def _check_tangent(p, t, i, key=False):
    """A user tangent for primal `p`: `Zero` for a float0 tangent, else an array of p's type. For
    the data of a typed key (`key`), float0 of the key's shape."""
    p_aval = p.aval
    expected = tangent_aval(p_aval)
    if isinstance(t, np.ndarray) and t.dtype == dtypes.float0:
        shape = p_aval.shape[:-1] if key else p_aval.shape
        if t.shape != shape:
            raise ValueError(f"jvp: the tangent of primal {i} has shape {t.shape}, the primal {shape}.")
        return Zero(expected)
    if key:
        raise TypeError(f"jvp: primal {i} is a PRNG key array (dtype key<fry>, shape {p_aval.shape[:-1]}), so its "
                        "tangent must be a float0 array of that shape (np.zeros(shape, dtype=core.dtypes.float0)), "
                        f"got {type(t).__name__}.")
    t = _as_value(t, "jvp tangents")
    if expected.dtype == dtypes.float0:
        raise TypeError(f"jvp: primal {i} has dtype {dtypes.short_name(p_aval.dtype)}, so its tangent must be "
                        f"a float0 array (np.zeros(shape, dtype=core.dtypes.float0)), got "
                        f"{dtypes.short_name(t.dtype)}.")
    if t.shape != p_aval.shape or t.dtype != p_aval.dtype:
        raise TypeError(f"jvp: primal and tangent arguments must have equal types; primal {i} is "
                        f"{p_aval.str_short()} but its tangent is {t.aval.str_short()}.")
    return t


def _user_tangent(t, aval):
    """A tangent returned to the user: zeros materialized, float0 for integer outputs."""
    if not dtypes.is_inexact(aval.dtype):
        return _float0_zeros(aval)
    return ad.instantiate_zeros(t)


# ----- forward mode ---------------------------------------------------------------------------------

@traceback_util.api_boundary
def jvp(fun, primals, tangents, has_aux=False):
    """Evaluate `fun` at `primals` and its directional derivative along `tangents` (forward mode).

    `primals` and `tangents` are tuples of pytrees of the same structure and types; integer inputs
    take float0 tangents. Returns `(fun(*primals), tangent_out)` (and the aux data with `has_aux`).

    Example:
        >>> jvp(jnp.sin, (0.1,), (0.2,))   # (sin(0.1), 0.2 * cos(0.1))
        (Array(0.09983342, dtype=float32, weak_type=True), Array(0.19900084, dtype=float32, weak_type=True))
    """
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError("jvp: primal and tangent arguments must be tuples or lists; found "
                        f"{type(primals).__name__} and {type(tangents).__name__}.")
    flat_p, tree_p = physical_flatten(tuple(primals))
    flat_t, tree_t = tree_flatten(tuple(tangents))
    if logical_structure(tree_p) != tree_t:
        raise TypeError(f"jvp: primal and tangent arguments must have the same tree structure; got "
                        f"{logical_structure(tree_p)} and {tree_t}.")
    flat_p = [_as_value(p, "jvp primals") for p in flat_p]
    flat_t = [_check_tangent(p, t, i, key) for i, (p, t, key) in
              enumerate(zip(flat_p, flat_t, typed_leaf_mask(tree_p)))]
    flat, store = _flat_fun(fun, tree_p, has_aux)
    p_out, t_out = ad.jvp_flat(flat, flat_p, flat_t, instantiate=False)
    t_out = [_user_tangent(t, _aval(p)) for p, t in zip(p_out, t_out)]
    out = (tree_unflatten(store["tree"], p_out), user_tangent_tree(store["tree"], t_out))
    return out + (store["aux"],) if has_aux else out


def _aval(x):
    return x.aval if hasattr(x, "aval") else to_array(x).aval


# ----- linearize and reverse mode ------------------------------------------------------------------

def linearize_flat(flat_fun, primals, fun_name="<fun>", purpose="linearize"):
    """Linearize a flat function at `primals`.

    Returns `(primal_outs, linear, in_mask, out_mask)`: `linear` is a ClosedJaxpr (residuals as its
    constants) from the tangents of the inputs marked in `in_mask` (the inexact ones) to the tangents
    of the outputs marked in `out_mask`. `purpose` names the user's transformation ("grad", "vjp",
    ...) in errors about its values.
    """
    pe = PartialEvalTrace(current_trace(), fun_name, "linearize")
    jt = ad.JVPTrace(pe, fun_name, purpose)
    in_mask = [dtypes.is_inexact(p.aval.dtype) for p in primals]
    tangents = [pe.new_arg(tangent_aval(p.aval)) if m else Zero(tangent_aval(p.aval))
                for p, m in zip(primals, in_mask)]
    try:
        with set_current_trace(jt):
            outs = flat_fun(*[jt.new(p, t) for p, t in zip(primals, tangents)])
        primal_outs, tangent_outs = [], []
        for o in outs:
            p, t = jt.lift(o)
            primal_outs.append(p)
            tangent_outs.append(t)
        out_mask = [dtypes.is_inexact(_aval(p).dtype) for p in primal_outs]
        with set_current_trace(pe):
            lin_outs = [ad.instantiate_zeros(t) for t, m in zip(tangent_outs, out_mask) if m]
        linear = pe.to_jaxpr(lin_outs)
    finally:
        jt.alive = False
        pe.alive = False
    if jt._leak_refs is not None:
        outs = o = None  # our own references are not leaks
        check_leaks(jt, jt._leak_refs)
    return primal_outs, linear, in_mask, out_mask


@traceback_util.api_boundary
def linearize(fun, *primals):
    """`fun(*primals)` and the linear function `tangents -> jvp` at `primals`, whose evaluation
    reuses the residuals saved here instead of re-running `fun`.

    Example:
        >>> y, f_jvp = linearize(jnp.sin, 1.0)
        >>> f_jvp(2.0)   # 2 * cos(1.0)
        Array(1.0806046, dtype=float32, weak_type=True)
    """
    flat_p, in_tree = physical_flatten(primals)
    flat_p = [_as_value(p, "linearize primals") for p in flat_p]
    flat, store = _flat_fun(fun, in_tree)
    p_out, linear, in_mask, out_mask = linearize_flat(flat, flat_p, _fun_name(fun))
    out_tree = store["tree"]

    @traceback_util.api_boundary
    def f_jvp(*tangents):
        flat_t, keys = _flatten_user_tree(tangents, in_tree,
                                          f"linearized function of {_fun_name(fun)}: tangents", "the primals'")
        ts = [_check_tangent(p, t, i, key) for i, (p, t, key) in enumerate(zip(flat_p, flat_t, keys))]
        ins = [ad.instantiate_zeros(t) for t, m in zip(ts, in_mask) if m]
        from .interpreters.evaluation import eval_jaxpr
        lin = iter(eval_jaxpr(linear.jaxpr, linear.consts, *ins))
        outs = [next(lin) if m else _float0_zeros(_aval(p)) for p, m in zip(p_out, out_mask)]
        return user_tangent_tree(out_tree, outs)

    return tree_unflatten(out_tree, p_out), f_jvp


def _vjp_flat(flat, flat_p, fun_name, purpose="vjp"):
    p_out, linear, in_mask, out_mask = linearize_flat(flat, flat_p, fun_name, purpose)
    undefined = [UndefinedPrimal(tangent_aval(p.aval)) for p, m in zip(flat_p, in_mask) if m]

    def pullback(flat_cts):
        cts = [ct for ct, m in zip(flat_cts, out_mask) if m]
        in_cts = iter(ad.backward_pass(linear.jaxpr, list(linear.consts) + undefined, cts))
        return [ad.instantiate_zeros(next(in_cts)) if m else _float0_zeros(p.aval)
                for p, m in zip(flat_p, in_mask)]
    return p_out, pullback


@traceback_util.api_boundary
def vjp(fun, *primals, has_aux=False):
    """`fun(*primals)` and its pullback: a function from a cotangent of the output (same structure,
    shapes and dtypes) to the cotangents of `primals` (a tuple, one per primal).

    Example:
        >>> y, f_vjp = vjp(lambda x, y: (jnp.sin(x), jnp.cos(y)), 0.5, 1.0)
        >>> f_vjp((1.0, 1.0))   # (cos(0.5), -sin(1.0))
        (Array(0.87758255, dtype=float32, weak_type=True), Array(-0.84147096, dtype=float32, weak_type=True))
    """
    return _vjp(fun, primals, has_aux, "vjp")


def _vjp(fun, primals, has_aux, purpose):
    name = _fun_name(fun)
    flat_p, in_tree = physical_flatten(primals)
    flat_p = [_as_value(p, "vjp primals") for p in flat_p]
    flat, store = _flat_fun(fun, in_tree, has_aux)
    p_out, pullback = _vjp_flat(flat, flat_p, name, purpose)
    out_tree = store["tree"]
    out_avals = [_aval(p) for p in p_out]

    @traceback_util.api_boundary
    def f_vjp(ct):
        flat_ct, keys = _flatten_user_tree(ct, out_tree, f"vjp of {name}: the cotangent", "the output's")
        cts = []
        for i, (c, a, key) in enumerate(zip(flat_ct, out_avals, keys)):
            if key or isinstance(c, np.ndarray) and c.dtype == dtypes.float0:  # a key's: float0, not used
                cts.append(Zero(tangent_aval(a)))
                continue
            c = _as_value(c, f"vjp of {name}: cotangent")
            if dtypes.is_inexact(a.dtype) and (c.shape != a.shape or c.dtype != a.dtype):
                raise ValueError(f"vjp of {name}: cotangent {i} has type {c.aval.str_short()} but the "
                                 f"output it pulls back has type {a.str_short()}.")
            cts.append(c)
        return user_tangent_tree(in_tree, pullback(cts))

    out = tree_unflatten(out_tree, p_out)
    return (out, f_vjp, store["aux"]) if has_aux else (out, f_vjp)


@traceback_util.api_boundary
def linear_transpose(fun, *primals):
    """The transpose of the linear function `fun`, traced at the types of `primals` (only their
    shapes and dtypes are used): a function from an output cotangent to a tuple of input ones.

    Example:
        >>> f_t = linear_transpose(lambda x: 2.0 * x, 1.0)
        >>> f_t(3.0)
        (Array(6., dtype=float32),)
    """
    from .interpreters.staging import trace_to_jaxpr
    name = _fun_name(fun)
    flat_p, in_tree = tree_flatten(primals)
    avals = [_aval(_as_value(p, "linear_transpose primals")) if not hasattr(p, "dtype") or
             not hasattr(p, "shape") or isinstance(p, (Array, Tracer, np.ndarray, np.generic))
             else _shape_dtype_aval(p) for p in flat_p]
    for a in avals:
        if not dtypes.is_inexact(a.dtype):
            raise TypeError(f"linear_transpose of {name}: inputs must be float or complex, got "
                            f"{dtypes.short_name(a.dtype)}.")
    flat, store = _flat_fun(fun, in_tree)
    closed = trace_to_jaxpr(flat, [a.strip_weak_type() for a in avals], fun_name=name, purpose="linear_transpose")
    out_tree = store["tree"]
    out_avals = closed.out_avals

    @traceback_util.api_boundary
    def transposed(ct):
        flat_ct, ct_tree = tree_flatten(ct)
        if ct_tree != out_tree:
            raise TypeError(f"linear_transpose of {name}: cotangent structure {ct_tree} does not match the "
                            f"output structure {out_tree}.")
        cts = []
        for c, a in zip(flat_ct, out_avals):
            c = _as_value(c, "linear_transpose cotangent")
            if c.shape != a.shape or c.dtype != a.dtype:
                raise TypeError(f"linear_transpose of {name}: cotangent type {c.aval.str_short()} does not match "
                                f"the output type {a.str_short()}.")
            cts.append(c)
        outs = ad.backward_pass(closed.jaxpr, list(closed.consts) + [UndefinedPrimal(a) for a in avals], cts)
        return tree_unflatten(in_tree, [ad.instantiate_zeros(o) for o in outs])
    return transposed


def _shape_dtype_aval(x):
    from .avals import ShapedArray
    return ShapedArray(x.shape, dtypes.canonicalize_dtype(x.dtype))


# ----- grad ----------------------------------------------------------------------------------------

def _argnums_tuple(argnums, n_args, fname, what):
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    if not nums:
        raise ValueError(f"{what} of {fname}: argnums must not be empty.")
    for a in nums:
        if not isinstance(a, (int, np.integer)):
            raise TypeError(f"{what} of {fname}: argnums must be an int or a tuple of ints, got {argnums!r}.")
        if not -n_args <= a < n_args:
            raise ValueError(f"{what} of {fname}: argnums={argnums!r} but the function was called with "
                             f"{n_args} positional argument(s).")
    return tuple(int(a) % n_args for a in nums)


def _partial(fun, args, kwargs, nums):
    """`fun` as a function of the arguments at positions `nums` only."""
    def f(*dyn):
        full = list(args)
        for i, x in zip(nums, dyn):
            full[i] = x
        return fun(*full, **kwargs)
    f.__name__ = _fun_name(fun)
    return f


def _check_input_dtypes(dyn, fname, allow_int, holomorphic, what):
    for leaf in tree_leaves(dyn):
        if is_key_array(leaf):  # keys are integer data: differentiable as allow_int allows integers
            if not allow_int or holomorphic:
                raise TypeError(f"{what} requires real- or complex-valued inputs (input dtype that is a sub-dtype "
                                f"of np.inexact), but got {leaf.dtype}. If you want to use Boolean- or "
                                "integer-valued inputs, use vjp or set allow_int to True.")
            continue
        dt = _aval(_as_value(leaf, f"{what} of {fname}")).dtype
        if holomorphic:
            if not dtypes.is_complex(dt):
                raise TypeError(f"{what} with holomorphic=True requires inputs with complex dtype, but got "
                                f"{dtypes.short_name(dt)}.")
        elif not dtypes.is_inexact(dt) and not allow_int:
            raise TypeError(f"{what} requires real- or complex-valued inputs (input dtype that is a sub-dtype "
                            f"of np.inexact), but got {np.dtype(dt).name}. If you want to use Boolean- or "
                            "integer-valued inputs, use vjp or set allow_int to True.")


def value_and_grad(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False):
    """A function returning `(fun(*args), gradient of fun at args)` with respect to the arguments
    at `argnums` (an int, or a tuple giving a tuple of gradients). `fun` must return a real scalar
    (complex with `holomorphic=True`); with `has_aux` it returns `(scalar, aux)` and the result is
    `((value, aux), gradient)`.

    Example:
        >>> value_and_grad(lambda x: (x ** 2).sum())(jnp.array([1.0, 2.0]))
        (Array(5., dtype=float32), Array([2., 4.], dtype=float32))
    """
    fname = _fun_name(fun)

    @traceback_util.api_boundary
    @functools.wraps(fun)
    def value_and_grad_f(*args, **kwargs):
        nums = _argnums_tuple(argnums, len(args), fname, "grad")
        dyn = tuple(args[i] for i in nums)
        _check_input_dtypes(dyn, fname, allow_int, holomorphic, "grad")
        f = _partial(fun, args, kwargs, nums)
        if has_aux:
            ans, f_vjp, aux = _vjp(f, dyn, True, "grad")
        else:
            ans, f_vjp = _vjp(f, dyn, False, "grad")
        _check_scalar(ans, fname, holomorphic)
        grads = f_vjp(ad.instantiate_zeros(_ones_like(ans)))
        g = grads[0] if isinstance(argnums, int) else tuple(grads)
        return ((ans, aux), g) if has_aux else (ans, g)

    return value_and_grad_f


def _ones_like(x):
    from .lax import full
    a = _aval(x)
    return full(a.shape, 1, a.dtype)


def _check_scalar(x, fname, holomorphic):
    if not isinstance(x, (Array, Tracer)):
        raise TypeError(f"Gradient only defined for scalar-output functions. Output of {fname} was "
                        f"{type(x).__name__}.")
    aval = x.aval
    if aval.shape != ():
        raise TypeError(f"Gradient only defined for scalar-output functions. Output had shape: {aval.shape}. "
                        f"(function {fname}; for a vector output use jacrev, jacfwd or vjp)")
    if holomorphic:
        if not dtypes.is_complex(aval.dtype):
            raise TypeError(f"grad with holomorphic=True requires outputs with complex dtype, but got "
                            f"{dtypes.short_name(aval.dtype)}.")
    elif not dtypes.is_float(aval.dtype):
        if dtypes.is_complex(aval.dtype):
            raise TypeError(f"grad requires real-valued outputs (output dtype that is a sub-dtype of "
                            f"np.floating), but got {np.dtype(aval.dtype).name}. For holomorphic "
                            "differentiation, pass holomorphic=True. For differentiating non-holomorphic "
                            "functions involving complex outputs, use jax.vjp directly.")
        raise TypeError(f"grad requires real-valued outputs (output dtype that is a sub-dtype of np.floating), "
                        f"but got {np.dtype(aval.dtype).name}.")


def grad(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False):
    """The gradient of the scalar function `fun` with respect to the argument(s) at `argnums`.

    Example:
        >>> grad(jnp.tanh)(1.0)
        Array(0.4199743, dtype=float32)
        >>> w, x = jnp.array([1.0, 2.0]), jnp.array([3.0, 4.0])
        >>> grad(lambda w, x: (w * x).sum(), argnums=(0, 1))(w, x)   # (x, w)
        (Array([3., 4.], dtype=float32), Array([1., 2.], dtype=float32))
    """
    vg = value_and_grad(fun, argnums, has_aux, holomorphic, allow_int)

    @traceback_util.api_boundary
    @functools.wraps(fun)
    def grad_f(*args, **kwargs):
        if has_aux:
            (_, aux), g = vg(*args, **kwargs)
            return g, aux
        return vg(*args, **kwargs)[1]
    return grad_f


# ----- Jacobians --------------------------------------------------------------------------------------

def _basis(avals):
    """The standard basis of the flattened leaves, batched: for each leaf an array of shape
    `(total size, *leaf shape)` whose row k is basis vector k restricted to that leaf. The rows come
    from one identity matrix (`iota == iota`, which XLA folds), so a jitted Jacobian carries no
    constants."""
    from . import numpy as jnp
    total = sum(a.size for a in avals)
    offsets = np.cumsum([0] + [a.size for a in avals])
    return [jnp.eye(total, dtype=a.dtype)[:, offsets[i]:offsets[i + 1]].reshape((total,) + a.shape)
            for i, a in enumerate(avals)]


def _jac_tree(out_tree, out_avals, in_tree, in_avals, batched, forward):
    """Assemble a Jacobian pytree: the output structure outside, each output leaf replaced by the
    input structure, with arrays of shape `out.shape + in.shape`.

    Forward: `batched[j]` is output leaf j's tangents, one row per flat input element. Reverse:
    `batched[i]` is input leaf i's cotangents, one row per flat output element.
    """
    in_offsets = np.cumsum([0] + [a.size for a in in_avals])
    out_offsets = np.cumsum([0] + [a.size for a in out_avals])
    leaves = []
    for j, oa in enumerate(out_avals):
        row = []
        for i, ia in enumerate(in_avals):
            if forward:
                rows = batched[j][in_offsets[i]:in_offsets[i + 1]]
                block = rows.reshape((ia.size, oa.size)).T
            else:
                block = batched[i][out_offsets[j]:out_offsets[j + 1]]
            row.append(block.reshape(oa.shape + ia.shape))
        leaves.append(tree_unflatten(in_tree, row))
    return tree_unflatten(out_tree, leaves)


def _jacobian_setup(fun, argnums, args, kwargs, has_aux, holomorphic, allow_int, what):
    """The differentiated arguments of a Jacobian call as flat values, and `fun` on them flat."""
    fname = _fun_name(fun)
    nums = _argnums_tuple(argnums, len(args), fname, what)
    dyn = args[nums[0]] if isinstance(argnums, int) else tuple(args[i] for i in nums)
    _check_input_dtypes(dyn, fname, allow_int, holomorphic, what)
    f = _partial(fun, args, kwargs, nums)
    f1 = (lambda x: f(x)) if isinstance(argnums, int) else (lambda x: f(*x))
    flat_in, in_tree = physical_flatten(dyn)
    flat_in = [_as_value(x, f"{what} of {fname}") for x in flat_in]
    flat, store = _flat_fun(f1, physical_structure((dyn,)), has_aux)
    return flat, store, flat_in, in_tree


def jacfwd(fun, argnums=0, has_aux=False, holomorphic=False):
    """The Jacobian of `fun` by forward mode (one jvp per input element). The result has the output's
    structure, each output leaf replaced by the structure of the differentiated argument(s), with
    arrays of shape `out.shape + in.shape`, as JAX documents.

    Example:
        >>> jacfwd(lambda x: jnp.sin(x))(jnp.array([0.0, 1.0]))   # diag(cos(x))
        Array([[1.       , 0.       ],
               [0.       , 0.5403023]], dtype=float32)
    """
    @traceback_util.api_boundary
    @functools.wraps(fun)
    def jacfun(*args, **kwargs):
        flat, store, flat_in, in_tree = _jacobian_setup(fun, argnums, args, kwargs, has_aux, holomorphic, False,
                                                        "jacfwd")
        in_avals = [x.aval for x in flat_in]
        n_in = len(flat_in)

        def tangents_of(*basis):  # one jvp per basis vector, vmapped: outputs and their tangents
            p_out, t_out = ad.jvp_flat(flat, flat_in, list(basis), instantiate=True)
            return p_out + t_out

        basis = _basis(in_avals)
        outs = vmap_flat(tangents_of, basis, [0] * n_in,
                         lambda n: [None] * (n // 2) + [0] * (n // 2), sum(a.size for a in in_avals),
                         fun_name=_fun_name(fun))
        n_out = len(outs) // 2
        out_avals = [_aval(p) for p in outs[:n_out]]
        columns = outs[n_out:]
        jac = _jac_tree(store["tree"], out_avals, in_tree, in_avals, columns, forward=True)
        return (jac, store["aux"]) if has_aux else jac
    return jacfun


def jacrev(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False):
    """The Jacobian of `fun` by reverse mode (one vjp per output element), with the same structure
    as `jacfwd`'s.

    Example:
        >>> jacrev(lambda x: x ** 2)(jnp.array([1.0, 2.0]))
        Array([[2., 0.],
               [0., 4.]], dtype=float32)
    """
    fname = _fun_name(fun)

    @traceback_util.api_boundary
    @functools.wraps(fun)
    def jacfun(*args, **kwargs):
        flat, store, flat_in, in_tree = _jacobian_setup(fun, argnums, args, kwargs, has_aux, holomorphic,
                                                        allow_int, "jacrev")
        in_avals = [x.aval for x in flat_in]
        p_out, pullback = _vjp_flat(flat, flat_in, fname, "jacrev")
        out_avals = [_aval(p) for p in p_out]
        n_rows = sum(a.size for a in out_avals)
        inexact = [dtypes.is_inexact(a.dtype) for a in in_avals]

        def cotangents_of(*basis):  # one vjp per basis vector, vmapped (float0 rows added after)
            return [ct for ct, keep in zip(pullback(list(basis)), inexact) if keep]

        rows = iter(vmap_flat(cotangents_of, _basis(out_avals), [0] * len(out_avals), lambda n: [0] * n,
                              n_rows, fun_name=fname))
        rows = [next(rows) if keep else np.zeros((n_rows,) + a.shape, dtypes.float0)
                for a, keep in zip(in_avals, inexact)]
        jac = _jac_tree(store["tree"], out_avals, in_tree, in_avals, rows, forward=False)
        return (jac, store["aux"]) if has_aux else jac
    return jacfun


def hessian(fun, argnums=0, has_aux=False, holomorphic=False):
    """The Hessian of the scalar function `fun`: `jacfwd(jacrev(fun))`.

    Example:
        >>> hessian(lambda x: x[0] ** 3 - 2 * x[0] * x[1] - x[1] ** 6)(jnp.array([1.0, 2.0]))
        Array([[   6.,   -2.],
               [  -2., -480.]], dtype=float32)
    """
    return jacfwd(jacrev(fun, argnums, has_aux=has_aux, holomorphic=holomorphic), argnums,
                  has_aux=has_aux, holomorphic=holomorphic)


