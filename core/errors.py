"""User-facing errors of tracing, one class each; the long explanation lives in the docstring."""

__all__ = ["ConcretizationTypeError", "TracerBoolConversionError", "TracerIntegerConversionError",
           "TracerArrayConversionError", "UnexpectedTracerError", "LeakedTracerError", "static_value_error"]


class ConcretizationTypeError(TypeError):
    """A traced value was used where Python needs a concrete one.

    Inside `jit`, arguments are abstract (only shape and dtype are known), so Python control flow
    on their values cannot run at trace time. Use `lax.cond` / `lax.select` / `jnp.where` for
    value-dependent choices, or mark the argument static with `static_argnums`.
    """


class TracerBoolConversionError(ConcretizationTypeError):
    """`bool()` (an `if`, `while`, `and`, `or`, `assert`) on a traced array."""


class TracerIntegerConversionError(TypeError):
    """`__index__`/`int()` on a traced array: `range(x)`, `lst[x]`, `int(x)` inside a transformation."""


class TracerArrayConversionError(TypeError):
    """`np.asarray(tracer)` or a NumPy function applied to a traced array."""


class UnexpectedTracerError(Exception):
    """A traced value escaped the function being traced (stored in a global, a list, an attribute)
    and was used after that trace ended. Return values from the function instead of storing them."""


class LeakedTracerError(Exception):
    """With `checking_leaks()` (or the `check_tracer_leaks` flag), a traced function returned while a
    tracer it created was still referenced from elsewhere (a global, a list, an attribute). Return
    the value from the function instead of storing it."""


def static_value_error(function, argument, value, expected="a Python int or a tuple of ints"):
    """The error for a traced `value` given where `function` needs a concrete one because it fixes
    the shape of the result (`jnp.ones(n)` with `n` traced): names the public function, the
    argument and the value's type, says what the value depends on, and suggests the fixes.

    Example:
        >>> str(static_value_error("core.numpy.ones", "shape", 3)).split(":")[0]
        'core.numpy.ones requires a concrete value for the argument shape, which determines the shape of its result'
    """
    aval = getattr(value, "aval", None)
    kind = f" of type {aval.str_short()}" if aval is not None else ""
    context = getattr(value, "concretization_context", None)
    return ConcretizationTypeError(
        f"{function} requires a concrete value for the argument {argument}, which determines the shape of its "
        f"result: pass {expected}, not a traced value{kind}. Shapes are fixed when a function "
        "is traced: mark the argument static (jit(f, static_argnums=...) or static_argnames=...), or compute "
        "the size from static shape information (x.shape) instead of from array values."
        + (context() if context is not None else ""))


class KeyReuseError(Exception):
    """With `debug_key_reuse` on, a PRNG key was consumed twice (by a sampler, `split` or `fold_in`):
    the same key gives the same random bits, so the two results are not independent. Split the key
    (`key, sub = random.split(key)`) and consume each key once; `random.clone(key)` marks an
    intended reuse. The message names both consumers; the first one's stack is chained."""


__all__.append("KeyReuseError")
