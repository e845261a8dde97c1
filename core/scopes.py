"""Two context managers JAX programs use inside traced code: `ensure_compile_time_eval` (compute
concrete values now, while tracing) and `named_scope` (a name for a block of operations).

`ensure_compile_time_eval`: inside `jit`, every operation is normally staged into the program,
even one whose inputs are all constants, so its result is a tracer that Python control flow
cannot look at. Within this block an operation whose inputs are all concrete runs at once and
gives a concrete array (as eagerly); an operation on a traced value is staged as usual, by the
trace that was current when the block began.

Example:
    >>> @core.jit
    ... def f(x):
    ...     with ensure_compile_time_eval():
    ...         table = jnp.cos(jnp.arange(3.0))  # a concrete array, computed while tracing
    ...     assert type(table) is core.array.Array
    ...     return x * table
    >>> f(jnp.ones(3))
    Array([ 1.        ,  0.5403023 , -0.41614684], dtype=float32)
"""
import contextlib

from .trace import EvalTrace, Tracer, current_trace, set_current_trace

__all__ = ["ensure_compile_time_eval", "named_scope"]


class _CompileTimeEvalTrace(EvalTrace):
    """Eager evaluation for concrete operands; operations on tracers go to `outer`, the trace
    that was current when the block began (so they are staged or transformed as without it)."""

    def __init__(self, outer):
        self.outer = outer

    def process_primitive(self, prim, args, params):
        if any(isinstance(a, Tracer) for a in args):
            with set_current_trace(self.outer):
                return prim.bind(*args, **params)
        return super().process_primitive(prim, args, params)

    def __repr__(self):
        return f"CompileTimeEval({self.outer!r})"


@contextlib.contextmanager
def ensure_compile_time_eval():
    """Within the block, operations on concrete values are evaluated at once, also while a function
    is being traced by `jit`, `grad` or `vmap` (see the module docstring), as
    `jax.ensure_compile_time_eval`.

    Example:
        >>> with ensure_compile_time_eval():
        ...     y = jnp.sin(0.0)
        >>> y
        Array(0., dtype=float32, weak_type=True)
    """
    outer = current_trace()
    inner = outer if isinstance(outer, _CompileTimeEvalTrace) else _CompileTimeEvalTrace(outer)
    with set_current_trace(inner):
        yield


@contextlib.contextmanager
def named_scope(name):
    """A context manager naming the operations in its block, as `jax.named_scope`. In JAX the name
    goes into the compiled program's metadata for profilers; here it is checked and accepted, and
    changes nothing in the program (our StableHLO carries no per-operation names yet).

    Example:
        >>> with named_scope("encoder"):
        ...     y = jnp.ones(2) * 2
        >>> y
        Array([2., 2.], dtype=float32)
    """
    if not isinstance(name, str):
        raise TypeError(f"named_scope: the name must be a string, got {type(name).__name__} {name!r}")
    yield
