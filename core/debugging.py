"""`core.debug.print` and `core.debug.callback`: look at values while the program runs.

Eagerly they run at once. Under `jit` (and inside loops that stage their bodies) they become a
`debug_callback` equation, lowered to an XLA custom call into Python: jaxlib's CPU FFI target
`xla_ffi_python_cpu_callback`, whose `backend_config = {index = i}` picks the i-th Python callable
handed to the compiler with the module. So they run at *execution* time, once per execution
(every iteration of a loop), with concrete values, unlike Python's `print`, which runs only while
tracing.

The contract of a callback: it receives the arguments as read-only NumPy arrays (in the pytree
structure it was given) and its return value is ignored. Callbacks are unordered with respect to
each other inside one program (as JAX's `ordered=False`), and are never removed as dead code:
the primitive has `has_side_effect = True`, which passes that remove unused equations must honour.
Host callbacks inside compiled programs need the CPU backend. Under `vmap` the callback runs once
per example: the batched operands are passed stacked along axis 0 and the host side loops over
the examples (`_PerExampleCallback`). A typed PRNG key argument (`random.key`) is seen as its
uint32 data (shape S + (2,)), as inside JAX's jit.
"""
import numpy as np

from .interpreters import ad, batching, lowering
from .runtime import client as _client
from .trace import EvalTrace, Primitive, Tracer, current_trace
from .tree_util import logical_structure, physical_flatten, tree_unflatten

__all__ = ["print", "callback"]

_print = print  # the builtin, before this module's `print` shadows it


class _HostCallback:
    """A user callable with the pytree structure of its arguments; a primitive parameter (hashed
    by identity) and the Python callable the compiled program calls with the flat operands."""
    __slots__ = ("fn", "in_tree", "__weakref__")

    def __init__(self, fn, in_tree):
        self.fn = fn
        self.in_tree = in_tree

    def __call__(self, *flat):
        args, kwargs = tree_unflatten(self.in_tree, list(flat))
        self.fn(*args, **kwargs)
        return ()

    def __repr__(self):
        return getattr(self.fn, "__name__", type(self.fn).__name__)


# ----- the debug_callback primitive ------------------------------------------------------------

debug_callback_p = Primitive("debug_callback", multiple_results=True)
debug_callback_p.has_side_effect = True  # keep it even though nothing uses its (zero) outputs


def _debug_callback_abstract_eval(*avals, callback):
    return []


def _debug_callback_lowering(ctx, *args, callback):
    if _client.backend().platform != "cpu":
        raise NotImplementedError(
            "core.debug.print / core.debug.callback inside jit use jaxlib's CPU host-callback target, "
            f"which the '{_client.backend().platform}' backend does not run. Use PURENN_PLATFORM=cpu, or "
            "call them outside jit.")
    callbacks = ctx.b.module.__dict__.setdefault("host_callbacks", [])
    index = len(callbacks)
    callbacks.append(callback)
    ctx.b.op("stablehlo.custom_call", list(args), [],
             {"call_target_name": '"xla_ffi_python_cpu_callback"', "api_version": "4 : i32",
              "has_side_effect": "true", "backend_config": f"{{index = {index} : ui64}}"})
    return []


debug_callback_p.def_abstract_eval(_debug_callback_abstract_eval)
lowering.register(debug_callback_p, _debug_callback_lowering)


def _debug_callback_jvp(primals, tangents, *, callback):
    # The callback sees the primal values only; it has no outputs, hence no tangents.
    debug_callback_p.bind(*primals, callback=callback)
    return [], []


def _debug_callback_transpose(cts, *args, callback):
    raise ValueError("Transpose doesn't support debugging callbacks.")


class _PerExampleCallback:
    """A host callback under vmap: its batched operands arrive stacked along axis 0 and it calls the
    callback it wraps once per example, in order, with that example's slice (unbatched operands
    are passed whole to every call). Nested vmaps nest these, the outer axis looping outermost."""
    __slots__ = ("inner", "batched", "size", "__weakref__")

    def __init__(self, inner, batched, size):
        self.inner = inner
        self.batched = tuple(batched)
        self.size = size

    def __call__(self, *flat):
        for i in range(self.size):
            self.inner(*[x[i] if b else x for x, b in zip(flat, self.batched, strict=True)])
        return ()

    def __repr__(self):
        return f"per_example({self.inner!r})"


def _debug_callback_batch(vals, dims, *, callback):
    size = batching.batch_size(vals, dims)
    front = [x if d is None else batching.moveaxis(x, d, 0) for x, d in zip(vals, dims)]
    per_example = _PerExampleCallback(callback, [d is not None for d in dims], size)
    if type(current_trace()) is EvalTrace and not any(isinstance(x, Tracer) for x in front):
        per_example(*[np.asarray(x) for x in front])  # eagerly: call it now, no program to compile
    else:
        debug_callback_p.bind(*front, callback=per_example)
    return [], []


ad.jvp_rules[debug_callback_p] = _debug_callback_jvp
ad.transpose_rules[debug_callback_p] = _debug_callback_transpose
batching.batching_rules[debug_callback_p] = _debug_callback_batch


# ----- the public functions ---------------------------------------------------------------------

def callback(fn, *args, **kwargs):
    """Call `fn(*args, **kwargs)` with the concrete values of the (pytree) arguments when the
    program runs: at once eagerly, at every execution inside `jit` (not only while tracing).
    `fn` gets NumPy arrays; its return value is ignored. Under `vmap` it is called once per
    example, in order, with that example's values (as JAX does); with no batched argument it is
    called once.

    Example:
        >>> seen = []
        >>> f = core.jit(lambda x: (core.debug.callback(seen.append, x * 2), x)[1])
        >>> _ = f(jnp.arange(3.0)); seen[-1]
        array([0., 2., 4.], dtype=float32)
    """
    if not callable(fn):
        raise TypeError(f"core.debug.callback expects a callable, got {fn!r} of type {type(fn)}")
    # a typed key's data (core/tree_util.py): the callback sees it in the key's place
    flat, in_tree = physical_flatten((args, kwargs))
    in_tree = logical_structure(in_tree)
    if not any(isinstance(x, Tracer) for x in flat):
        a, k = tree_unflatten(in_tree, [np.asarray(x) for x in flat])
        fn(*a, **k)
        return None
    debug_callback_p.bind(*flat, callback=_HostCallback(fn, in_tree))
    return None


def print(fmt, *args, **kwargs):  # noqa: A001 (JAX's name)
    """Print `fmt.format(*args, **kwargs)` with the runtime values of the arguments (eagerly, or
    at every execution inside `jit`; under `vmap`, one line per example).

    Example:
        >>> @core.jit
        ... def f(x):
        ...     core.debug.print("x = {x}, total {}", x.sum(), x=x)
        ...     return x * 2
        >>> f(jnp.arange(3.0))
        x = [0. 1. 2.], total 3.0
        Array([0., 2., 4.], dtype=float32)
    """
    if not isinstance(fmt, str):
        raise TypeError(f"core.debug.print expects a format string first, got {type(fmt)}")

    def emit(*a, **k):
        _print(fmt.format(*a, **k), flush=True)

    emit.__name__ = "debug_print"
    callback(emit, *args, **kwargs)
