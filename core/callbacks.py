"""`core.pure_callback`: call a host (NumPy) function from traced code and use its results.

Built like `core.debug.callback` (core/debugging.py): under `jit` the call becomes a
`pure_callback` equation lowered to jaxlib's CPU FFI host-callback target, so the function runs
at every execution with concrete NumPy values; eagerly it runs at once. Unlike a debug callback
it returns values, whose shapes and dtypes the caller declares (`result_shape_dtypes`, a pytree
of `ShapeDtypeStruct`s or arrays), and it is pure: the compiler may drop a call whose results
are unused, or merge two identical calls.

Under `vmap` the `vmap_method` says how the host function sees the batch, as in JAX:
"sequential" calls it once per example and stacks the results; "expand_dims" calls it once with
the batched arguments (batch axis first) and the unbatched ones given a leading axis of size 1;
"broadcast_all" likewise with every argument broadcast to the batch size. In the last two the
function must return results with the batch axis first. The default (None) refuses under `vmap`,
naming the choices. A typed PRNG key argument (`random.key`) reaches the host function as its
uint32 data (shape S + (2,)), as in JAX; results cannot be keys (declare uint32[..., 2] and wrap
them with `random.wrap_key_data`). Differentiating through a pure callback is an error (wrap it in
`core.custom_jvp` or `core.custom_vjp` to give it a derivative); values that are not being
differentiated pass through.
"""
import numpy as np

from . import dtypes
from .avals import ShapedArray
from .debugging import _client
from .interpreters import ad, batching, lowering
from .trace import EvalTrace, Primitive, Tracer, current_trace
from .tree_util import logical_structure, physical_flatten, tree_flatten, tree_unflatten

__all__ = ["pure_callback"]

_VMAP_METHODS = ("sequential", "expand_dims", "broadcast_all")


class _PureHostCallback:
    """The user's function with its argument structure and declared results: called with the flat
    operands (NumPy arrays), it returns the flat results as NumPy arrays of the declared shapes
    and dtypes. A primitive parameter, hashed by identity."""
    __slots__ = ("fn", "in_tree", "out_tree", "result_avals", "__weakref__")

    def __init__(self, fn, in_tree, out_tree, result_avals):
        self.fn, self.in_tree, self.out_tree, self.result_avals = fn, in_tree, out_tree, result_avals

    def __call__(self, *flat):
        return tuple(_checked_result(self, i, leaf, aval) for i, (leaf, aval) in
                     enumerate(zip(self.raw(*flat), self.result_avals)))

    def raw(self, *flat, lead=0):
        """The function's flat results, shapes not checked (a vectorized call adds batch axes)."""
        args, kwargs = tree_unflatten(self.in_tree, list(flat))
        leaves, tree = tree_flatten(self.fn(*args, **kwargs))
        if tree != self.out_tree:
            raise TypeError(f"pure_callback: {self!r} returned a value of structure {tree}, but "
                            f"result_shape_dtypes declares {self.out_tree}.")
        return leaves

    def __repr__(self):
        return getattr(self.fn, "__name__", type(self.fn).__name__)


def _checked_result(callback, i, leaf, aval):
    value = np.asarray(leaf)
    if value.shape != aval.shape:
        raise ValueError(f"pure_callback: {callback!r} returned result {i} of shape {value.shape}, but "
                         f"result_shape_dtypes declares {aval.str_short()}.")
    if value.dtype != aval.dtype:
        # a NumPy function often computes in float64 (or int64) where float32 was declared: cast
        # within a kind; a different kind (float for int) is a mistake to report
        if not np.can_cast(value.dtype, aval.dtype, casting="same_kind"):
            raise TypeError(f"pure_callback: {callback!r} returned result {i} of dtype {value.dtype}, but "
                            f"result_shape_dtypes declares {aval.str_short()}; cast it in the callback.")
        value = value.astype(aval.dtype)
    return value if value.flags.c_contiguous else value.copy(order="C")  # (ascontiguousarray makes 0-d 1-d)


# ----- the pure_callback primitive ---------------------------------------------------------------

pure_callback_p = Primitive("pure_callback", multiple_results=True)


def _abstract_eval(*avals, callback, result_avals, vmap_method):
    return list(result_avals)


def _lowering(ctx, *args, callback, result_avals, vmap_method):
    if _client.backend().platform != "cpu":
        raise NotImplementedError(
            "core.pure_callback inside jit uses jaxlib's CPU host-callback target, which the "
            f"'{_client.backend().platform}' backend does not run. Use PURENN_PLATFORM=cpu, or call it outside jit.")
    callbacks = ctx.b.module.__dict__.setdefault("host_callbacks", [])
    index = len(callbacks)
    callbacks.append(callback)
    outs = ctx.b.op("stablehlo.custom_call", list(args), list(result_avals),
                    {"call_target_name": '"xla_ffi_python_cpu_callback"', "api_version": "4 : i32",
                     "has_side_effect": "false", "backend_config": f"{{index = {index} : ui64}}"})
    if not result_avals:
        return []
    return [outs] if isinstance(outs, str) else list(outs)


pure_callback_p.def_abstract_eval(_abstract_eval)
lowering.register(pure_callback_p, _lowering)


def _jvp(primals, tangents, *, callback, result_avals, vmap_method):
    raise ValueError(f"pure_callback: {callback!r} cannot be differentiated (the host function has no "
                     "derivative rule). Give it one with core.custom_jvp or core.custom_vjp, or stop the "
                     "gradient of its inputs with lax.stop_gradient.")


class _BatchedCallback:
    """A pure callback under vmap: operands arrive with the batch axis first (or unbatched), and the
    results leave with it first (`result_avals`, the batched shapes), per `vmap_method` (see the
    module docstring). Nested vmaps nest these."""
    __slots__ = ("inner", "batched", "size", "method", "result_avals", "__weakref__")

    def __init__(self, inner, batched, size, method, result_avals):
        self.inner, self.batched, self.size, self.method = inner, tuple(batched), size, method
        self.result_avals = result_avals

    def __call__(self, *flat):
        if self.method == "sequential":
            rows = [self.inner(*[x[i] if b else x for x, b in zip(flat, self.batched, strict=True)])
                    for i in range(self.size)]
            outs = [np.stack([row[k] for row in rows]) if rows else np.zeros(aval.shape, aval.dtype)
                    for k, aval in enumerate(self.result_avals)]
        else:
            outs = self.raw(*flat)
        return tuple(_checked_result(self, k, o, aval) for k, (o, aval) in enumerate(zip(outs, self.result_avals)))

    def raw(self, *flat, lead=0):
        """One vectorized call ("expand_dims", "broadcast_all"): this level's batch axis is axis
        `lead` of every operand (the enclosing vmaps' axes come first); an unbatched operand gets it
        with size 1, or broadcast to the batch size."""
        args = []
        for x, b in zip(flat, self.batched, strict=True):
            if not b:
                x = np.expand_dims(x, lead)
                if self.method == "broadcast_all":
                    x = np.broadcast_to(x, x.shape[:lead] + (self.size,) + x.shape[lead + 1:])
            args.append(x)
        return self.inner.raw(*args, lead=lead + 1)

    def __repr__(self):
        return f"{self.method}({self.inner!r})"


def _batch(vals, dims, *, callback, result_avals, vmap_method):
    if vmap_method not in _VMAP_METHODS:
        raise NotImplementedError(
            f"pure_callback: {callback!r} is called under vmap, which needs vmap_method= to say how the host "
            f"function sees the batch: one of {_VMAP_METHODS} ('sequential' calls it once per example).")
    size = batching.batch_size(vals, dims)
    front = [x if d is None else batching.moveaxis(x, d, 0) for x, d in zip(vals, dims)]
    out_avals = tuple(ShapedArray((size,) + a.shape, a.dtype) for a in result_avals)
    per_batch = _BatchedCallback(callback, [d is not None for d in dims], size, vmap_method, out_avals)
    if type(current_trace()) is EvalTrace and not any(isinstance(x, Tracer) for x in front):
        outs = _to_arrays(per_batch(*[np.asarray(x) for x in front]))
    else:
        outs = pure_callback_p.bind(*front, callback=per_batch, result_avals=out_avals, vmap_method=vmap_method)
    return list(outs), [0] * len(outs)


ad.jvp_rules[pure_callback_p] = _jvp
batching.batching_rules[pure_callback_p] = _batch


def _to_arrays(outs):
    from . import numpy as jnp
    return [jnp.asarray(o) for o in outs]


# ----- the public function ---------------------------------------------------------------------

def pure_callback(callback, result_shape_dtypes, *args, sharding=None, vmap_method=None, **kwargs):
    """Call the host function `callback(*args, **kwargs)` with NumPy values and return its results
    as arrays of the shapes and dtypes that `result_shape_dtypes` declares (a pytree of
    `ShapeDtypeStruct`s or arrays; the results have its structure). Works eagerly and inside `jit`
    (CPU backend); under `vmap` give `vmap_method` ("sequential", "expand_dims" or
    "broadcast_all"). The function must be pure: it may be called fewer or more times than the
    program says. `sharding` is accepted for JAX's signature (one device: nothing to do).

    Example:
        >>> def host_sin(x):
        ...     return np.sin(x)
        >>> f = core.jit(lambda x: core.pure_callback(host_sin, core.ShapeDtypeStruct(x.shape, x.dtype), x) * 2)
        >>> f(jnp.zeros(2))
        Array([0., 0.], dtype=float32)
    """
    if not callable(callback):
        raise TypeError(f"pure_callback expects a callable, got {callback!r} of type {type(callback).__name__}")
    if vmap_method is not None and vmap_method not in _VMAP_METHODS:
        raise ValueError(f"pure_callback: vmap_method must be one of {_VMAP_METHODS} or None, got {vmap_method!r}")
    specs, out_tree = tree_flatten(result_shape_dtypes)
    for s in specs:
        if getattr(getattr(s, "dtype", None), "type", None) is dtypes.prng_key:
            raise TypeError(f"pure_callback: result_shape_dtypes declares a PRNG key result ({s.dtype}"
                            f"{list(s.shape)}), but a host function cannot return keys (as in JAX). Declare "
                            f"uint32{list(s.shape) + [2]}, return the key words, and wrap them with "
                            "random.wrap_key_data.")
    try:
        result_avals = tuple(ShapedArray(tuple(s.shape), dtypes.canonicalize_dtype(s.dtype)) for s in specs)
    except AttributeError:
        raise TypeError("pure_callback: result_shape_dtypes must be a pytree of objects with .shape and .dtype "
                        f"(core.ShapeDtypeStruct or arrays), got {result_shape_dtypes!r}") from None
    # a typed key's data (core/tree_util.py): the host function sees it in the key's place
    flat, in_tree = physical_flatten((args, kwargs))
    in_tree = logical_structure(in_tree)
    host = _PureHostCallback(callback, in_tree, out_tree, result_avals)
    if type(current_trace()) is EvalTrace and not any(isinstance(x, Tracer) for x in flat):
        outs = _to_arrays(host(*[np.asarray(x) for x in flat]))
    else:
        outs = pure_callback_p.bind(*flat, callback=host, result_avals=result_avals, vmap_method=vmap_method)
    return tree_unflatten(out_tree, list(outs))
