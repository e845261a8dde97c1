"""NumPy's elementwise functions (ufuncs) over the lax primitives, with NumPy-style promotion.

Arguments broadcast by NumPy's rules and promote by JAX's type lattice (`promote_args*`): Python
scalars are weakly typed, so `jnp.ones(3, jnp.float16) + 1.0` stays float16, and a Python int
that does not fit a small integer dtype wraps (`jnp.int8(1) + 300` is 45, as in JAX; NumPy
raises). Where JAX differs from NumPy we follow JAX: x64 is off by default (so `float_power`
gives float32) and `power` of integers to a negative integer array is implementation-defined.
Integer division by zero gives 0 in `floor_divide`, `remainder`, `fmod` and `divmod`, NumPy's
value without its warning; JAX agrees for `remainder` and `fmod`, while its `floor_divide`
returns what XLA's division gives (-1 or -2 on CPU, and another value elsewhere).
"""

from functools import partial

import numpy as np

from .. import dtypes
from .. import lax
from ..array import Array, scalar_array
from ..custom_derivatives import custom_jvp
from ..lax.elementwise import RoundingMethod
from ._util import (asarray_operand, broadcast_to_common_shape, check_arraylike, promote_args, promote_args_inexact,
                    promote_args_numeric, promote_shapes)

__all__ = [
    "add", "subtract", "multiply", "divide", "true_divide", "floor_divide", "remainder", "mod", "fmod",
    "divmod", "power", "float_power", "negative", "positive", "absolute", "abs", "fabs", "sign", "floor",
    "ceil", "trunc", "rint", "round", "around", "fix", "exp", "exp2", "expm1", "log", "log2", "log10",
    "log1p", "logaddexp", "logaddexp2", "sqrt", "cbrt", "square", "reciprocal", "sin", "cos", "tan",
    "arcsin", "arccos", "arctan", "arctan2", "sinh", "cosh", "tanh", "arcsinh", "arccosh", "arctanh",
    "deg2rad", "rad2deg", "degrees", "radians", "hypot", "maximum", "minimum", "fmax", "fmin", "equal",
    "not_equal", "less", "less_equal", "greater", "greater_equal", "logical_and", "logical_or",
    "logical_xor", "logical_not", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "invert",
    "bitwise_count", "left_shift", "right_shift", "isfinite", "isinf", "isnan", "isneginf", "isposinf",
    "signbit", "copysign", "nextafter", "heaviside", "gcd", "lcm", "frexp", "ldexp", "modf", "sinc",
    "conj", "conjugate", "real", "imag", "angle", "iscomplex", "isreal", "isrealobj", "iscomplexobj",
    "nan_to_num", "clip", "i0", "spacing",
]


_LN2 = float(np.log(2.0))  # Python floats, so they stay weakly typed constants
_LN10 = float(np.log(10.0))


# ----- promotion and small helpers ----------------------------------------------------------

def _promote(name, promote, *args):
    """`promote(name, *args)`, wrapping Python ints that overflow a small integer result dtype as
    JAX does (`int8 + 300` wraps) instead of raising."""
    try:
        return promote(name, *args)
    except OverflowError:
        if not any(type(a) is int for a in args):
            raise
        return promote(name, *_wrap_python_ints(args))


def _wrap_python_ints(args):
    to_dtype = dtypes.result_type(*args)
    if not dtypes.is_int(to_dtype):
        return args
    limits = dtypes.iinfo(dtypes.default_int_dtype())
    out = []
    for a in args:
        if type(a) is int and limits.min <= a <= limits.max:
            a = int(np.array(a, dtype=np.int64).astype(to_dtype))
        out.append(a)
    return out


def _promote_full(name, promote, x1, x2):
    """Promoted arguments broadcast to one shape (for formulas that select between them)."""
    return broadcast_to_common_shape(*_promote(name, promote, x1, x2))


_FLOAT_DTYPES = frozenset([dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.float64])


def _binary(name, lax_fn, promote=promote_args, doc=None):
    if promote is promote_args:
        def fn(x1, x2, /):
            # fast paths for the common eager cases: two Arrays of one aval, or a float Array and
            # a Python float or int (the scalar is weak, so the Array's dtype and weak type win)
            if type(x1) is Array:
                t2 = type(x2)
                if t2 is Array:
                    if x1.aval.type_id == x2.aval.type_id:  # equal avals (interned ids; cheaper than ==)
                        return lax_fn(x1, x2)
                elif (t2 is float or t2 is int) and x1.aval.dtype in _FLOAT_DTYPES:
                    return lax_fn(x1, scalar_array(x2, x1.aval.dtype, x1.aval.weak_type))
            elif type(x2) is Array and (type(x1) is float or type(x1) is int) and x2.aval.dtype in _FLOAT_DTYPES:
                return lax_fn(scalar_array(x1, x2.aval.dtype, x2.aval.weak_type), x2)
            return lax_fn(*_promote(name, promote, x1, x2))
    else:
        def fn(x1, x2, /):
            # the fast path holds only where promotion would not change an inexact dtype
            if (type(x1) is Array and type(x2) is Array and x1.aval == x2.aval
                    and dtypes.is_inexact(x1.aval.dtype)):
                return lax_fn(x1, x2)
            return lax_fn(*_promote(name, promote, x1, x2))
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc or f"Elementwise `numpy.{name}` with NumPy broadcasting and JAX's type promotion."
    return fn


def _unary(name, lax_fn, promote=promote_args, doc=None):
    def fn(x, /):
        return lax_fn(*promote(name, x))
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc or f"Elementwise `numpy.{name}`."
    return fn


def _kind(x):
    """'b', 'i', 'u', 'f' or 'c' for an array or tracer (bfloat16 counts as 'f')."""
    return "f" if x.dtype == dtypes.bfloat16 else x.dtype.kind


def _fill(value, like, dtype=None):
    """A constant of `like`'s shape (and dtype unless given), every element `value`."""
    dtype = like.dtype if dtype is None else dtype
    return lax.broadcast_in_dim(scalar_array(value, dtype, weak_type=False), like.shape, ())


def _where(cond, x, y):
    """`x` where `cond` else `y`; all three of one shape."""
    return lax.select_n(cond, y, x)


def _no_complex(name, x):
    if _kind(x) == "c":
        raise TypeError(f"{name} does not support complex-valued inputs, got dtype {x.dtype}.")


def _real_float(name, x):
    """One argument promoted to an inexact dtype, refusing complex numbers."""
    (x,) = promote_args_inexact(name, x)
    _no_complex(name, x)
    return x


def _int_passthrough(name, float_fn):
    """A rounding function: integers and bools come back unchanged (as in NumPy 2 and JAX)."""
    def fn(x, /):
        check_arraylike(name, x)
        x = asarray_operand(x)
        if _kind(x) in "biu":
            return x
        _no_complex(name, x)
        return float_fn(x)
    fn.__name__ = fn.__qualname__ = name
    return fn


# ----- arithmetic ---------------------------------------------------------------------------

def _add(x1, x2):  # (dtype.kind: ~30 ns less than comparing dtypes, on every eager x + y)
    return lax.or_(x1, x2) if x1.aval.dtype.kind == "b" else lax.add(x1, x2)


def _multiply(x1, x2):
    return lax.and_(x1, x2) if x1.aval.dtype.kind == "b" else lax.mul(x1, x2)


add = _binary("add", _add, doc="""Elementwise x1 + x2 (logical or for bools), as `numpy.add`.

    Example: `jnp.add(jnp.ones(3, jnp.float16), 1.0)` is float16 `[2., 2., 2.]`.""")
subtract = _binary("subtract", lax.sub, doc="""Elementwise x1 - x2, as `numpy.subtract`.

    Example: `jnp.subtract(jnp.arange(3), 1)` is `[-1, 0, 1]`.""")
multiply = _binary("multiply", _multiply, doc="""Elementwise x1 * x2 (logical and for bools).

    Example: `jnp.multiply(jnp.arange(3), 2.5)` is float32 `[0., 2.5, 5.]`.""")
divide = _binary("divide", lax.div, promote_args_inexact, doc="""Elementwise true division x1 / x2;
    integers are promoted to floats. Example: `jnp.divide(1, jnp.array([2, 4]))` is `[0.5, 0.25]`.""")
true_divide = divide


def floor_divide(x1, x2, /):
    """Elementwise x1 // x2, rounding toward minus infinity (also for negative operands), as
    `numpy.floor_divide`. Example: `jnp.floor_divide(jnp.array([-7, 7]), 2)` is `[-4, 3]`.
    Integer division by zero gives 0, as in NumPy (without its warning).
    """
    x1, x2 = _promote_full("floor_divide", promote_args_numeric, x1, x2)
    kind = _kind(x1)
    if kind == "c":
        raise TypeError("floor_divide does not support complex-valued inputs")
    if kind in "iu":
        return _integer_divmod(x1, x2)[0]
    return _float_divmod(x1, x2)[0]


def _integer_divmod(x1, x2):
    """NumPy's integer (x1 // x2, x1 % x2): rounded toward minus infinity, and (0, 0) for a zero
    divisor. XLA's division by zero is implementation-defined (on CPU x1 / 0 is -1 and x1 % 0 is
    x1), so the divisor is replaced by 1 there and the quotient zeroed. INT_MIN // -1 wraps to
    INT_MIN with remainder 0 in both."""
    zero_divisor = lax.eq(x2, 0)
    safe_x2 = _where(zero_divisor, _fill(1, x2), x2)
    quotient, mod = lax.div(x1, safe_x2), lax.rem(x1, safe_x2)
    if _kind(x1) == "i":
        # C division truncates: step down where the remainder is nonzero and the signs differ
        fix = lax.and_(lax.ne(mod, 0), lax.ne(lax.lt(mod, 0), lax.lt(safe_x2, 0)))
        quotient = _where(fix, lax.sub(quotient, 1), quotient)
        mod = _where(fix, lax.add(mod, safe_x2), mod)
    return _where(zero_divisor, _fill(0, quotient), quotient), mod


def _float_divmod(x1, x2):
    """NumPy's float divmod: the quotient from fmod, corrected to round toward minus infinity."""
    mod = lax.rem(x1, x2)
    div = lax.div(lax.sub(x1, mod), x2)
    fix = lax.and_(lax.ne(mod, 0), lax.ne(lax.lt(x2, 0), lax.lt(mod, 0)))
    mod = _where(fix, lax.add(mod, x2), mod)
    div = _where(fix, lax.sub(div, 1), div)
    # a zero remainder takes the divisor's sign, as in NumPy (0.0 % -1.0 is -0.0)
    mod = _where(lax.eq(mod, 0), _where(signbit(x2), _fill(-0.0, mod), _fill(0.0, mod)), mod)
    floor_div = lax.floor(div)
    # (x1 - mod) / x2 is an integer up to rounding: take the nearest one
    floor_div = _where(lax.gt(lax.sub(div, floor_div), 0.5), lax.add(floor_div, 1), floor_div)
    # signed zero quotients as NumPy; a zero divisor gives x1 / x2 (inf or nan)
    quotient = lax.div(x1, x2)
    floor_div = _where(lax.eq(div, 0), lax.mul(quotient, 0), floor_div)
    floor_div = _where(lax.eq(x2, 0), quotient, floor_div)
    return floor_div, mod


def remainder(x1, x2, /):
    """Elementwise remainder of floor division: the result has the sign of x2, as
    `numpy.remainder`. Integer division by zero gives 0, as in NumPy and JAX.
    Example: `jnp.remainder(jnp.array([-7, 7]), 3)` is `[2, 1]`.
    """
    x1, x2 = _promote_full("remainder", promote_args_numeric, x1, x2)
    kind = _kind(x1)
    if kind == "c":
        raise TypeError("remainder does not support complex-valued inputs")
    if kind == "f":
        return _float_divmod(x1, x2)[1]
    return _integer_divmod(x1, x2)[1]


mod = remainder


def fmod(x1, x2, /):
    """Elementwise C-style remainder: the result has the sign of x1, as `numpy.fmod`. Integer
    division by zero gives 0, as in NumPy and JAX.

    Example: `jnp.fmod(jnp.array([-7, 7]), 3)` is `[-1, 1]`.
    """
    x1, x2 = _promote_full("fmod", promote_args_numeric, x1, x2)
    _no_complex("fmod", x1)
    if _kind(x1) in "iu":
        # x1 % 1 is 0: XLA's x1 % 0 is implementation-defined (x1 on CPU)
        return lax.rem(x1, _where(lax.eq(x2, 0), _fill(1, x2), x2))
    return lax.rem(x1, x2)


def divmod(x1, x2, /):
    """`(floor_divide(x1, x2), remainder(x1, x2))`, as `numpy.divmod`.

    Example: `jnp.divmod(jnp.array([-7]), 2)` is `([-4], [1])`.
    """
    x1, x2 = _promote_full("divmod", promote_args_numeric, x1, x2)
    kind = _kind(x1)
    if kind == "c":
        raise TypeError("divmod does not support complex-valued inputs")
    if kind in "iu":
        return _integer_divmod(x1, x2)
    return _float_divmod(x1, x2)


def power(x1, x2, /):
    """Elementwise x1 ** x2, as `numpy.power`.

    A Python (or NumPy) integer exponent uses `lax.integer_pow` (exact for integer bases; a
    negative one raises TypeError for integers). Integer arrays use binary exponentiation over
    the exponent's low 6 bits, as JAX; negative integer exponents in an array give
    implementation-defined values. Example: `jnp.power(jnp.array([2, 3]), 3)` is `[8, 27]`.
    """
    check_arraylike("power", x1, x2)
    if isinstance(x2, (int, np.integer)) and not isinstance(x2, (bool, np.bool_)):
        (x1,) = promote_args_numeric("power", x1)
        return lax.integer_pow(x1, int(x2))
    x1, x2 = _promote("power", promote_args_numeric, x1, x2)
    if _kind(x1) in "iu":
        return _integer_power(*broadcast_to_common_shape(x1, x2))
    return lax.pow(x1, x2)


def _integer_power(x1, x2):
    # 6 bits of exponent suffice: any base other than 0 and +-1 overflows past 2**63
    one = _fill(1, x1)
    zero = _fill(0, x1)
    acc = _where(lax.and_(lax.eq(x1, 0), lax.ne(x2, 0)), zero, one)
    for _ in range(6):
        acc = _where(lax.ne(lax.and_(x2, 1), 0), lax.mul(acc, x1), acc)
        x1 = lax.mul(x1, x1)
        x2 = lax.shift_right_logical(x2, 1)
    return acc


def float_power(x1, x2, /):
    """Elementwise x1 ** x2 in an inexact dtype (float32 unless x64 is on; NumPy uses float64).

    Example: `jnp.float_power(2, jnp.array([-1, 3]))` is `[0.5, 8.]`.
    """
    return lax.pow(*_promote("float_power", promote_args_inexact, x1, x2))


negative = _unary("negative", lax.neg, doc="""Elementwise -x, as `numpy.negative`.

    Example: `jnp.negative(jnp.array([1, -2]))` is `[-1, 2]`.""")


def positive(x, /):
    """Elementwise +x (a copy), as `numpy.positive`. Example: `jnp.positive(jnp.array([-1.0]))` is `[-1.]`."""
    return promote_args("positive", x)[0]


def absolute(x, /):
    """Elementwise |x|; the magnitude for complex x; unsigned and bool values are unchanged.

    Example: `jnp.absolute(jnp.array([-1.5, 3+4j]))` is `[1.5, 5.]`.
    """
    (x,) = promote_args("absolute", x)
    return x if _kind(x) in "bu" else lax.abs(x)


abs = absolute


def fabs(x, /):
    """Elementwise |x| as a float (complex refused), as `numpy.fabs`.

    Example: `jnp.fabs(jnp.array([-3]))` is `[3.]`.
    """
    return lax.abs(_real_float("fabs", x))


sign = _unary("sign", lax.sign, doc="""Elementwise sign (-1, 0, 1; x/|x| for complex), as `numpy.sign`.

    Example: `jnp.sign(jnp.array([-2.0, 0.0, 3.0]))` is `[-1., 0., 1.]`.""")


# ----- rounding -----------------------------------------------------------------------------

floor = _int_passthrough("floor", lax.floor)
floor.__doc__ = """Elementwise floor; integers and bools are returned unchanged.

    Example: `jnp.floor(jnp.array([-1.5, 1.5]))` is `[-2., 1.]`."""
ceil = _int_passthrough("ceil", lax.ceil)
ceil.__doc__ = """Elementwise ceiling; integers and bools are returned unchanged.

    Example: `jnp.ceil(jnp.array([-1.5, 1.5]))` is `[-1., 2.]`."""


def _trunc(x):
    return _where(lax.lt(x, 0), lax.ceil(x), lax.floor(x))


trunc = _int_passthrough("trunc", _trunc)
trunc.__doc__ = """Elementwise rounding toward zero; integers and bools are returned unchanged.

    Example: `jnp.trunc(jnp.array([-1.5, 1.5]))` is `[-1., 1.]`."""
fix = _int_passthrough("fix", _trunc)
fix.__doc__ = """Elementwise rounding toward zero (`numpy.fix`, the same as `trunc`).

    Example: `jnp.fix(jnp.array([-1.5, 1.5]))` is `[-1., 1.]`."""


def _round_half_even(x):
    if _kind(x) == "c":
        return lax.complex(_round_half_even(lax.real(x)), _round_half_even(lax.imag(x)))
    return lax.round(x, rounding_method=RoundingMethod.TO_NEAREST_EVEN)


def rint(x, /):
    """Elementwise round to the nearest integer, ties to even; integers become floats.

    Example: `jnp.rint(jnp.array([0.5, 1.5, 2.5]))` is `[0., 2., 2.]`.
    """
    return _round_half_even(promote_args_inexact("rint", x)[0])


def round(a, decimals=0, out=None):
    """Round to `decimals` decimal places, ties to even (NumPy's rule), as `numpy.round`.

    Integers are returned unchanged for `decimals >= 0` (negative decimals on integers raise
    NotImplementedError, as in JAX); float16 and bfloat16 are scaled in float32 to avoid
    overflow. `out` is not supported (arrays are immutable). Example:
    `jnp.round(jnp.array([0.125, 2.5]), 2)` is `[0.12, 2.5]`.
    """
    check_arraylike("round", a)
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.round is not supported: arrays are immutable.")
    decimals = int(decimals)
    x = asarray_operand(a)
    if _kind(x) in "biu":
        if decimals < 0:
            raise NotImplementedError("integer np.round not implemented for decimals < 0")
        return x
    if decimals == 0:
        return _round_half_even(x)
    return _round_decimals(x, decimals)


def _round_decimals(x, decimals):
    if _kind(x) == "c":
        return lax.complex(_round_decimals(lax.real(x), decimals), _round_decimals(lax.imag(x), decimals))
    dtype = x.dtype
    if dtype in (dtypes.float16, dtypes.bfloat16):
        x = lax.convert_element_type(x, dtypes.float32, weak_type=x.weak_type)
    factor = 10.0 ** decimals
    out = lax.div(_round_half_even(lax.mul(x, factor)), factor)
    return lax.convert_element_type(out, dtype, weak_type=x.weak_type)


around = round


# ----- exponentials and logarithms ----------------------------------------------------------

exp = _unary("exp", lax.exp, promote_args_inexact, doc="""Elementwise e**x (integers promote to float).

    Example: `jnp.exp(jnp.array([0, 1]))` is `[1., 2.7182817]`.""")
exp2 = _unary("exp2", lax.exp2, promote_args_inexact, doc="""Elementwise 2**x.

    Example: `jnp.exp2(jnp.array([3]))` is `[8.]`.""")
expm1 = _unary("expm1", lax.expm1, promote_args_inexact, doc="""Elementwise e**x - 1, accurate near 0.

    Example: `jnp.expm1(jnp.array([0.0]))` is `[0.]`.""")
log = _unary("log", lax.log, promote_args_inexact, doc="""Elementwise natural log (log(0) = -inf).

    Example: `jnp.log(jnp.array([1.0, 0.0]))` is `[0., -inf]`.""")
log1p = _unary("log1p", lax.log1p, promote_args_inexact, doc="""Elementwise log(1 + x), accurate near 0.

    Example: `jnp.log1p(jnp.array([0.0]))` is `[0.]`.""")


def log2(x, /):
    """Elementwise base-2 logarithm. Example: `jnp.log2(jnp.array([8.0]))` is `[3.]`."""
    (x,) = promote_args_inexact("log2", x)
    return lax.div(lax.log(x), _LN2)


def log10(x, /):
    """Elementwise base-10 logarithm. Example: `jnp.log10(jnp.array([100.0]))` is `[2.]`."""
    (x,) = promote_args_inexact("log10", x)
    return lax.div(lax.log(x), _LN10)


def logaddexp(x1, x2, /):
    """Elementwise log(exp(x1) + exp(x2)) without overflow, as `numpy.logaddexp`.

    Example: `jnp.logaddexp(jnp.array([1000.0]), 1000.0)` is `[1000.6931]`.
    """
    x1, x2 = _promote_full("logaddexp", promote_args_inexact, x1, x2)
    _no_complex("logaddexp", x1)
    return _logaddexp(x1, x2)


@custom_jvp
def _logaddexp(x1, x2):
    amax = lax.max(x1, x2)
    delta = lax.sub(x1, x2)
    # equal infinities give a nan delta: their sum is the answer
    return _where(lax.ne(delta, delta), lax.add(x1, x2), lax.add(amax, lax.log1p(lax.exp(lax.neg(lax.abs(delta))))))


def _logaddexp_tangent(weight, primals, tangents):
    """t1 * w(x1 - x2) + t2 * w(x2 - x1), w the logistic function of base e or 2: the partials
    b**xi / (b**x1 + b**x2) as functions of the difference alone. They are exact at ties (where
    max/abs in the primal formula would split or skew the derivative), 0 and 1 where one input is
    -inf or +inf, and always sum to 1, except where both inputs are the same infinity: the
    difference is NaN there, and so are both partials (as in JAX at (-inf, -inf))."""
    (x1, x2), (t1, t2) = primals, tangents
    return lax.add(lax.mul(t1, weight(lax.sub(x1, x2))), lax.mul(t2, weight(lax.sub(x2, x1))))


def _logistic2(d):
    """1 / (1 + 2**-d), the base-2 logistic function."""
    return lax.div(_fill(1, d), lax.add(_fill(1, d), lax.exp2(lax.neg(d))))


@_logaddexp.defjvp
def _logaddexp_jvp(primals, tangents):
    return _logaddexp(*primals), _logaddexp_tangent(lax.logistic, primals, tangents)


def logaddexp2(x1, x2, /):
    """Elementwise log2(2**x1 + 2**x2) without overflow, as `numpy.logaddexp2`.

    Example: `jnp.logaddexp2(jnp.array([3.0]), 3.0)` is `[4.]`.
    """
    x1, x2 = _promote_full("logaddexp2", promote_args_inexact, x1, x2)
    _no_complex("logaddexp2", x1)
    return _logaddexp2(x1, x2)


@custom_jvp
def _logaddexp2(x1, x2):
    amax = lax.max(x1, x2)
    delta = lax.sub(x1, x2)
    tail = lax.div(lax.log1p(lax.exp2(lax.neg(lax.abs(delta)))), _LN2)
    return _where(lax.ne(delta, delta), lax.add(x1, x2), lax.add(amax, tail))


@_logaddexp2.defjvp
def _logaddexp2_jvp(primals, tangents):
    return _logaddexp2(*primals), _logaddexp_tangent(_logistic2, primals, tangents)


sqrt = _unary("sqrt", lax.sqrt, promote_args_inexact, doc="""Elementwise square root (nan for negative reals).

    Example: `jnp.sqrt(jnp.array([4, -1]))` is `[2., nan]`.""")


def cbrt(x, /):
    """Elementwise real cube root (complex refused). Example: `jnp.cbrt(jnp.array([-8]))` is `[-2.]`."""
    return lax.cbrt(_real_float("cbrt", x))


square = _unary("square", lax.square, promote_args_numeric, doc="""Elementwise x * x (bools become int32).

    Example: `jnp.square(jnp.array([3, -2]))` is `[9, 4]`.""")
reciprocal = _unary("reciprocal", lax.reciprocal, promote_args_inexact, doc="""Elementwise 1 / x; integers
    promote to float (as JAX; NumPy divides integers). Example: `jnp.reciprocal(jnp.array([2]))` is `[0.5]`.""")


# ----- trigonometry -------------------------------------------------------------------------

def _inexact_unary(name, lax_fn, example):
    return _unary(name, lax_fn, promote_args_inexact,
                  doc=f"Elementwise `numpy.{name}` (integers promote to float). Example: {example}.")


sin = _inexact_unary("sin", lax.sin, "`jnp.sin(jnp.array([0.0]))` is `[0.]`")
cos = _inexact_unary("cos", lax.cos, "`jnp.cos(jnp.array([0.0]))` is `[1.]`")
tan = _inexact_unary("tan", lax.tan, "`jnp.tan(jnp.array([0.0]))` is `[0.]`")
arcsin = _inexact_unary("arcsin", lax.asin, "`jnp.arcsin(jnp.array([1.0]))` is `[1.5707964]`")
arccos = _inexact_unary("arccos", lax.acos, "`jnp.arccos(jnp.array([1.0]))` is `[0.]`")
arctan = _inexact_unary("arctan", lax.atan, "`jnp.arctan(jnp.array([1.0]))` is `[0.7853982]`")
sinh = _inexact_unary("sinh", lax.sinh, "`jnp.sinh(jnp.array([0.0]))` is `[0.]`")
cosh = _inexact_unary("cosh", lax.cosh, "`jnp.cosh(jnp.array([0.0]))` is `[1.]`")
tanh = _inexact_unary("tanh", lax.tanh, "`jnp.tanh(jnp.array([0.0]))` is `[0.]`")
arcsinh = _inexact_unary("arcsinh", lax.asinh, "`jnp.arcsinh(jnp.array([0.0]))` is `[0.]`")
arccosh = _inexact_unary("arccosh", lax.acosh, "`jnp.arccosh(jnp.array([1.0]))` is `[0.]`")
arctanh = _inexact_unary("arctanh", lax.atanh, "`jnp.arctanh(jnp.array([0.0]))` is `[0.]`")


def arctan2(x1, x2, /):
    """Elementwise angle of the point (x2, x1) in (-pi, pi], as `numpy.arctan2`.

    Example: `jnp.arctan2(jnp.array([1.0]), -1.0)` is `[2.3561945]`.
    """
    x1, x2 = _promote("arctan2", promote_args_inexact, x1, x2)
    _no_complex("arctan2", x1)
    return lax.atan2(x1, x2)


def deg2rad(x, /):
    """Degrees to radians. Example: `jnp.deg2rad(jnp.array([180]))` is `[3.1415927]`."""
    return lax.mul(promote_args_inexact("deg2rad", x)[0], np.pi / 180)


def rad2deg(x, /):
    """Radians to degrees. Example: `jnp.rad2deg(jnp.array([jnp.pi]))` is `[180.]`."""
    return lax.mul(promote_args_inexact("rad2deg", x)[0], 180 / np.pi)


radians = deg2rad
degrees = rad2deg


def hypot(x1, x2, /):
    """Elementwise sqrt(x1**2 + x2**2) without intermediate overflow; inf if either is infinite
    (even with a nan), as `numpy.hypot`. Example: `jnp.hypot(3, jnp.array([4.0]))` is `[5.]`.
    """
    x1, x2 = _promote_full("hypot", promote_args_inexact, x1, x2)
    _no_complex("hypot", x1)
    a, b = lax.abs(x1), lax.abs(x2)
    any_inf = lax.or_(lax.eq(a, np.inf), lax.eq(b, np.inf))
    big, small = lax.max(a, b), lax.min(a, b)
    big_is_zero = lax.eq(big, 0)
    safe_big = _where(big_is_zero, _fill(1, big), big)
    ratio = lax.div(small, safe_big)
    out = _where(big_is_zero, big, lax.mul(big, lax.sqrt(lax.add(lax.mul(ratio, ratio), 1))))
    return _where(any_inf, _fill(np.inf, out), out)


# ----- maxima and minima --------------------------------------------------------------------

maximum = _binary("maximum", lax.max, doc="""Elementwise maximum, propagating NaN, as `numpy.maximum`.

    Example: `jnp.maximum(jnp.array([1.0, jnp.nan]), 0.5)` is `[1., nan]`.""")
minimum = _binary("minimum", lax.min, doc="""Elementwise minimum, propagating NaN, as `numpy.minimum`.

    Example: `jnp.minimum(jnp.array([1.0, jnp.nan]), 0.5)` is `[0.5, nan]`.""")


def _nan_ignoring(name, lax_fn):
    def fn(x1, x2, /):
        x1, x2 = _promote(name, promote_args, x1, x2)
        if _kind(x1) in "biu":
            return lax_fn(x1, x2)
        x1, x2 = broadcast_to_common_shape(x1, x2)
        out = lax_fn(x1, x2)
        out = _where(lax.ne(x1, x1), x2, out)
        return _where(lax.ne(x2, x2), x1, out)
    fn.__name__ = fn.__qualname__ = name
    return fn


fmax = _nan_ignoring("fmax", lax.max)
fmax.__doc__ = """Elementwise maximum ignoring NaN (NaN only when both are NaN), as `numpy.fmax`.

    Example: `jnp.fmax(jnp.array([1.0, jnp.nan]), jnp.array([jnp.nan, 2.0]))` is `[1., 2.]`."""
fmin = _nan_ignoring("fmin", lax.min)
fmin.__doc__ = """Elementwise minimum ignoring NaN (NaN only when both are NaN), as `numpy.fmin`.

    Example: `jnp.fmin(jnp.array([1.0, jnp.nan]), jnp.array([jnp.nan, 2.0]))` is `[1., 2.]`."""


# ----- comparisons and logic ----------------------------------------------------------------

equal = _binary("equal", lax.eq,
                doc="Elementwise x1 == x2. Example: `jnp.equal(jnp.arange(3), 1)` is `[False, True, False]`.")
not_equal = _binary("not_equal", lax.ne,
                    doc="Elementwise x1 != x2. Example: `jnp.not_equal(jnp.arange(2), 1)` is `[True, False]`.")
less = _binary("less", lax.lt,
               doc="Elementwise x1 < x2. Example: `jnp.less(jnp.arange(3), 1)` is `[True, False, False]`.")
less_equal = _binary("less_equal", lax.le,
                     doc="Elementwise x1 <= x2. Example: `jnp.less_equal(jnp.arange(3), 1)` is `[True, True, False]`.")
greater = _binary("greater", lax.gt,
                  doc="Elementwise x1 > x2. Example: `jnp.greater(jnp.arange(3), 1)` is `[False, False, True]`.")
greater_equal = _binary("greater_equal", lax.ge,
                        doc="Elementwise x1 >= x2. Example: `jnp.greater_equal(jnp.arange(3), 1)` is `[False, True, True]`.")


def _truth(x):
    x = asarray_operand(x)
    return x if x.dtype == dtypes.bool_ else lax.ne(x, _fill(0, x))


def _logical(name, lax_fn):
    def fn(x1, x2, /):
        check_arraylike(name, x1, x2)
        return lax_fn(*promote_shapes(name, _truth(x1), _truth(x2)))
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"Elementwise logical {name[8:]} of the truth values (nonzero is true), as `numpy.{name}`.\n\n"
                  f"    Example: `jnp.{name}(jnp.array([0, 1, 2]), True)` has dtype bool.")
    return fn


logical_and = _logical("logical_and", lax.and_)
logical_or = _logical("logical_or", lax.or_)
logical_xor = _logical("logical_xor", lax.xor)


def logical_not(x, /):
    """Elementwise logical not (nonzero is true). Example: `jnp.logical_not(jnp.array([0, 2]))` is `[True, False]`."""
    check_arraylike("logical_not", x)
    return lax.not_(_truth(x))


bitwise_and = _binary("bitwise_and", lax.and_,
                      doc="Elementwise x1 & x2 for integers and bools. Example: `jnp.bitwise_and(jnp.array([6]), 3)` is `[2]`.")
bitwise_or = _binary("bitwise_or", lax.or_,
                     doc="Elementwise x1 | x2 for integers and bools. Example: `jnp.bitwise_or(jnp.array([6]), 3)` is `[7]`.")
bitwise_xor = _binary("bitwise_xor", lax.xor,
                      doc="Elementwise x1 ^ x2 for integers and bools. Example: `jnp.bitwise_xor(jnp.array([6]), 3)` is `[5]`.")
bitwise_not = _unary("bitwise_not", lax.not_,
                     doc="Elementwise ~x for integers and bools. Example: `jnp.bitwise_not(jnp.array([0], jnp.int8))` is `[-1]`.")
invert = bitwise_not


def bitwise_count(x, /):
    """Elementwise number of set bits of |x|, as uint8 (`numpy.bitwise_count`).

    Example: `jnp.bitwise_count(jnp.array([-3, 7]))` is `[2, 3]` (uint8).
    """
    (x,) = promote_args("bitwise_count", x)
    if x.dtype == dtypes.bool_:
        return lax.convert_element_type(x, dtypes.uint8)
    if _kind(x) == "i":
        x = lax.abs(x)
    return lax.convert_element_type(lax.population_count(x), dtypes.uint8)


def left_shift(x1, x2, /):
    """Elementwise x1 << x2 for integers (bools become int32), as `numpy.left_shift`.

    Example: `jnp.left_shift(jnp.array([1, 3]), 2)` is `[4, 12]`.
    """
    return lax.shift_left(*_promote("left_shift", promote_args_numeric, x1, x2))


def right_shift(x1, x2, /):
    """Elementwise x1 >> x2: arithmetic for signed, logical for unsigned integers.

    Example: `jnp.right_shift(jnp.array([-8, 8]), 1)` is `[-4, 4]`.
    """
    x1, x2 = _promote("right_shift", promote_args_numeric, x1, x2)
    if _kind(x1) == "u":
        return lax.shift_right_logical(x1, x2)
    return lax.shift_right_arithmetic(x1, x2)


# ----- floating-point classification --------------------------------------------------------

def _constant_bool(x, value):
    return _fill(bool(value), x, dtypes.bool_)


def isfinite(x, /):
    """Elementwise: neither infinite nor NaN (always true for integers and bools).

    Example: `jnp.isfinite(jnp.array([1.0, jnp.inf, jnp.nan]))` is `[True, False, False]`.
    """
    check_arraylike("isfinite", x)
    x = asarray_operand(x)
    kind = _kind(x)
    if kind == "f":
        return lax.is_finite(x)
    if kind == "c":
        return lax.and_(lax.is_finite(lax.real(x)), lax.is_finite(lax.imag(x)))
    return _constant_bool(x, True)


def isinf(x, /):
    """Elementwise: positive or negative infinity (either part for complex).

    Example: `jnp.isinf(jnp.array([1.0, -jnp.inf]))` is `[False, True]`.
    """
    check_arraylike("isinf", x)
    x = asarray_operand(x)
    kind = _kind(x)
    if kind == "f":
        return lax.eq(lax.abs(x), np.inf)
    if kind == "c":
        return lax.or_(isinf(lax.real(x)), isinf(lax.imag(x)))
    return _constant_bool(x, False)


def isnan(x, /):
    """Elementwise: not a number (either part for complex). Example: `jnp.isnan(jnp.array([jnp.nan, 1.0]))` is `[True, False]`."""
    check_arraylike("isnan", x)
    x = asarray_operand(x)
    if _kind(x) in "fc":
        return lax.ne(x, x)
    return _constant_bool(x, False)


def _isinf_signed(name, value):
    def fn(x, /):
        check_arraylike(name, x)
        x = asarray_operand(x)
        kind = _kind(x)
        if kind == "c":
            raise ValueError("isposinf/isneginf are not well defined for complex types")
        if kind == "f":
            return lax.eq(x, value)
        return _constant_bool(x, False)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"Elementwise: equal to {value} (complex refused), as `numpy.{name}`.\n\n"
                  f"    Example: `jnp.{name}(jnp.array([{value}, 0.0]))` is `[True, False]`.")
    return fn


isneginf = _isinf_signed("isneginf", -np.inf)
isposinf = _isinf_signed("isposinf", np.inf)

_SAME_WIDTH_INT = {2: dtypes.int16, 4: dtypes.int32, 8: dtypes.int64}


def signbit(x, /):
    """Elementwise: the sign bit is set (true for -0.0 and negative NaNs), as `numpy.signbit`.

    Example: `jnp.signbit(jnp.array([-0.0, 0.0, -2.0]))` is `[True, False, True]`.
    """
    check_arraylike("signbit", x)
    x = asarray_operand(x)
    kind = _kind(x)
    if kind == "i":
        return lax.lt(x, _fill(0, x))
    if kind in "bu":
        return _constant_bool(x, False)
    _no_complex("signbit", x)
    bits = lax.bitcast_convert_type(x, _SAME_WIDTH_INT[x.dtype.itemsize])
    return lax.lt(bits, _fill(0, bits))


def copysign(x1, x2, /):
    """Elementwise |x1| with the sign (bit) of x2, as `numpy.copysign`.

    Example: `jnp.copysign(jnp.array([1.0, 2.0]), -0.0)` is `[-1., -2.]`.
    """
    x1, x2 = _promote("copysign", promote_args_inexact, x1, x2)
    _no_complex("copysign", x1)
    x1, x2 = broadcast_to_common_shape(x1, x2)
    magnitude = lax.abs(x1)
    return _where(signbit(x2), lax.neg(magnitude), magnitude)


def nextafter(x1, x2, /):
    """Elementwise the next representable float after x1 toward x2.

    Example: `jnp.nextafter(jnp.array([1.0]), 2.0)` is `[1.0000001]`.
    """
    x1, x2 = _promote("nextafter", promote_args_inexact, x1, x2)
    _no_complex("nextafter", x1)
    return lax.nextafter(x1, x2)


def heaviside(x1, x2, /):
    """Elementwise step function: 0 for x1 < 0, x2 at 0, 1 for x1 > 0, nan for nan (as a float).

    Example: `jnp.heaviside(jnp.array([-1.0, 0.0, 2.0]), 0.5)` is `[0., 0.5, 1.]`.
    """
    x1, x2 = _promote("heaviside", promote_args_inexact, x1, x2)
    _no_complex("heaviside", x1)
    x1, x2 = broadcast_to_common_shape(x1, x2)
    zero, one = _fill(0, x1), _fill(1, x1)
    out = _where(lax.lt(x1, zero), zero, _where(lax.gt(x1, zero), one, x2))
    return _where(lax.ne(x1, x1), x1, out)  # nan stays nan


# ----- integer functions --------------------------------------------------------------------

def _check_integers(name, *args):
    check_arraylike(name, *args)
    if not dtypes.is_int(dtypes.result_type(*args)):
        raise ValueError(f"Arguments to {name} must be integers, got dtypes "
                         f"{', '.join(str(dtypes.dtype(a)) for a in args)}.")


def gcd(x1, x2, /):
    """Elementwise greatest common divisor of |x1| and |x2| (gcd(0, 0) = 0), as `numpy.gcd`.

    As in NumPy, Euclid runs on the magnitudes in the unsigned type of the same width, so
    `gcd(INT_MIN, 5)` is 1; only `gcd(INT_MIN, 0)` and `gcd(INT_MIN, INT_MIN)`, whose answer 2**(bits-1)
    does not fit, wrap to INT_MIN. A fixed number of Euclid steps, enough for the dtype's width,
    traces to a straight-line program. Example: `jnp.gcd(jnp.array([12, -8]), 18)` is `[6, 2]`.
    """
    _check_integers("gcd", x1, x2)
    x1, x2 = _promote("gcd", promote_args_numeric, x1, x2)
    x1, x2 = broadcast_to_common_shape(x1, x2)
    return lax.convert_element_type(_unsigned_gcd(*_magnitudes(x1, x2)), x1.dtype)


def _magnitudes(x1, x2):
    """|x1| and |x2| in the unsigned type of their width: exact also for INT_MIN, whose signed
    absolute value wraps to itself (the conversion reinterprets the two's complement bits)."""
    if _kind(x1) == "u":
        return x1, x2
    unsigned = np.dtype(f"uint{x1.dtype.itemsize * 8}")
    return tuple(lax.convert_element_type(lax.abs(x), unsigned) for x in (x1, x2))


def _unsigned_gcd(a, b):
    # Euclid needs at most log_phi(2**bits) + 2 steps (Lame's theorem)
    steps = int(np.ceil(a.dtype.itemsize * 8 * 1.4405)) + 2
    one = _fill(1, b)
    for _ in range(steps):
        b_is_zero = lax.eq(b, 0)
        safe_b = _where(b_is_zero, one, b)
        a, b = _where(b_is_zero, a, b), _where(b_is_zero, b, lax.rem(a, safe_b))
    return a


def lcm(x1, x2, /):
    """Elementwise least common multiple of |x1| and |x2| (0 if either is 0), as `numpy.lcm`.

    A result too large for the dtype wraps as NumPy's does (`|x1| // gcd * |x2|` in the unsigned
    type, reinterpreted), so it can come out negative. Example: `jnp.lcm(jnp.array([4, -6]), 6)`
    is `[12, 6]`.
    """
    _check_integers("lcm", x1, x2)
    x1, x2 = _promote("lcm", promote_args_numeric, x1, x2)
    x1, x2 = broadcast_to_common_shape(x1, x2)
    a, b = _magnitudes(x1, x2)
    d = _unsigned_gcd(a, b)
    d_is_zero = lax.eq(d, 0)
    safe_d = _where(d_is_zero, _fill(1, d), d)
    out = _where(d_is_zero, _fill(0, d), lax.mul(lax.div(a, safe_d), b))
    return lax.convert_element_type(out, x1.dtype)


# ----- floating-point decomposition ---------------------------------------------------------

def _float_layout(dtype):
    info = dtypes.finfo(dtype)
    nmant = int(info.nmant)
    bias = int(info.maxexp) - 1
    return nmant, bias, _SAME_WIDTH_INT[np.dtype(dtype).itemsize]


def frexp(x, /):
    """Decompose x into mantissa and exponent: x = m * 2**e with 0.5 <= |m| < 1 (m = x, e = 0
    for 0, inf and nan), as `numpy.frexp`. Exponents are int32.

    Example: `jnp.frexp(jnp.array([8.0, -3.0]))` is `([0.5, -0.75], [4, 2])`.
    """
    x = _real_float("frexp", x)
    nmant, bias, int_dtype = _float_layout(x.dtype)
    # scale subnormals into the normal range first, so the exponent field is meaningful
    tiny = lax.lt(lax.abs(x), float(dtypes.finfo(x.dtype).tiny))
    scaled = _where(tiny, lax.mul(x, float(2.0 ** (nmant + 1))), x)
    bits = lax.bitcast_convert_type(scaled, int_dtype)
    exp_mask = (1 << (x.dtype.itemsize * 8 - 1 - nmant)) - 1
    field = lax.and_(lax.shift_right_logical(bits, nmant), exp_mask)
    e = lax.sub(field, bias - 1)
    e = _where(tiny, lax.sub(e, nmant + 1), e)
    clear = ~(exp_mask << nmant)
    m_bits = lax.or_(lax.and_(bits, _fill(_wrap_int(clear, int_dtype), bits)),
                     _fill((bias - 1) << nmant, bits))
    m = lax.bitcast_convert_type(m_bits, x.dtype)
    special = lax.or_(lax.eq(x, 0), lax.not_(lax.is_finite(x)))
    e = lax.convert_element_type(_where(special, _fill(0, e), e), dtypes.int32)
    return _where(special, x, m), e


def _wrap_int(value, dtype):
    return int(np.array(value, dtype=np.int64).astype(dtype))


def ldexp(x1, x2, /):
    """Elementwise x1 * 2**x2 for an integer x2, exact unless the result under- or overflows, as
    `numpy.ldexp` (XLA on CPU may flush subnormal results to zero).

    Example: `jnp.ldexp(jnp.array([1.0, 3.0]), jnp.array([3, -1]))` is `[8., 1.5]`.
    """
    check_arraylike("ldexp", x1, x2)
    if not dtypes.is_int(dtypes.dtype(x2)):
        raise TypeError(f"ldexp: the exponent x2 must be an integer array, got dtype {dtypes.dtype(x2)}.")
    (x1,) = promote_args_inexact("ldexp", x1)
    _no_complex("ldexp", x1)
    x2 = asarray_operand(x2)
    x1, x2 = promote_shapes("ldexp", x1, x2)
    x1, x2 = broadcast_to_common_shape(x1, x2)
    nmant, bias, int_dtype = _float_layout(x1.dtype)
    # three factors 2**k with k in the normal exponent range reach every representable result
    limit = 3 * (bias - 1)
    k = lax.clamp(-limit, lax.convert_element_type(x2, dtypes.int32), limit)
    first = lax.div(k, 3)
    second = lax.div(lax.sub(k, first), 2)
    third = lax.sub(lax.sub(k, first), second)
    out = x1
    for part in (first, second, third):
        biased = lax.convert_element_type(lax.add(part, bias), int_dtype)
        out = lax.mul(out, lax.bitcast_convert_type(lax.shift_left(biased, _fill(nmant, biased)), x1.dtype))
    return out


def modf(x, /):
    """Elementwise fractional and integral parts, both with the sign of x, as `numpy.modf`.

    Example: `jnp.modf(jnp.array([-2.5]))` is `([-0.5], [-2.])`.
    """
    x = _real_float("modf", x)
    whole = _trunc(x)
    frac = _where(lax.is_finite(x), lax.sub(x, whole), lax.mul(lax.sign(x), 0))
    frac = _where(lax.ne(x, x), x, frac)
    return frac, whole


def spacing(x, /):
    """Elementwise distance from x to the next float away from zero (negative for negative x;
    nan for infinities), as `numpy.spacing`. Example: `jnp.spacing(jnp.float32(1.0))` is `1.1920929e-07`.
    """
    x = lax.stop_gradient(_real_float("spacing", x))  # a step size: no derivative flows through
    toward = _where(lax.lt(x, _fill(0, x)), _fill(-np.inf, x), _fill(np.inf, x))
    step = lax.nextafter(x, toward)
    # at zero the step is the smallest subnormal, which the subtraction could flush to zero
    return _where(lax.eq(x, _fill(0, x)), step, lax.sub(step, x))


def sinc(x, /):
    """Elementwise normalized sinc: sin(pi x) / (pi x), with sinc(0) = 1, as `numpy.sinc`.

    Example: `jnp.sinc(jnp.array([0.0, 0.5]))` is `[1., 0.63661975]`.
    """
    (x,) = promote_args_inexact("sinc", x)
    is_zero = lax.eq(x, _fill(0, x))
    safe = lax.mul(_where(is_zero, _fill(1, x), x), np.pi)
    # at 0 the value comes from sin(y)/y's Maclaurin series, so every derivative order is right there
    return _where(is_zero, _sinc_maclaurin(0, lax.mul(x, np.pi)), lax.div(lax.sin(safe), safe))


@partial(custom_jvp, nondiff_argnums=(0,))
def _sinc_maclaurin(k, y):
    """The k-th derivative of sin(y)/y at y = 0 ((-1)^(k/2) / (k + 1) for even k, 0 for odd), in y's
    shape; its own derivative is the next one."""
    coeff = 0.0 if k % 2 else (-1.0) ** (k // 2) / (k + 1)
    return _fill(coeff, y)


@_sinc_maclaurin.defjvp
def _sinc_maclaurin_jvp(k, primals, tangents):
    (y,), (t,) = primals, tangents
    return _sinc_maclaurin(k, y), lax.mul(_sinc_maclaurin(k + 1, y), t)


# ----- complex numbers ----------------------------------------------------------------------

def conjugate(x, /):
    """Elementwise complex conjugate; real arrays are returned unchanged.

    Example: `jnp.conjugate(jnp.array([1+2j]))` is `[1-2j]`.
    """
    check_arraylike("conjugate", x)
    x = asarray_operand(x)
    return lax.conj(x) if _kind(x) == "c" else x


conj = conjugate


def real(val, /):
    """Elementwise real part; real arrays are returned unchanged. Example: `jnp.real(jnp.array([1+2j]))` is `[1.]`."""
    check_arraylike("real", val)
    x = asarray_operand(val)
    return lax.real(x) if _kind(x) == "c" else x


def imag(val, /):
    """Elementwise imaginary part; zeros of the same dtype for real arrays.

    Example: `jnp.imag(jnp.array([1+2j]))` is `[2.]`.
    """
    check_arraylike("imag", val)
    x = asarray_operand(val)
    return lax.imag(x) if _kind(x) == "c" else _fill(0, x)


def angle(z, deg=False):
    """Elementwise argument of a complex number in (-pi, pi] (pi for negative reals), in degrees
    when `deg`. Example: `jnp.angle(jnp.array([1j, -1.0]))` is `[1.5707964, 3.1415927]`.
    """
    check_arraylike("angle", z)
    x = asarray_operand(z)
    if _kind(x) == "c":
        re, im = lax.real(x), lax.imag(x)
    else:
        (re,) = promote_args_inexact("angle", x)
        im = _fill(0, re)
    out = lax.atan2(im, re)
    return lax.mul(out, 180 / np.pi) if deg else out


def iscomplex(x, /):
    """Elementwise: the imaginary part is nonzero. Example: `jnp.iscomplex(jnp.array([1+0j, 1j]))` is `[False, True]`."""
    i = imag(x)
    return lax.ne(i, _fill(0, i))


def isreal(x, /):
    """Elementwise: the imaginary part is zero. Example: `jnp.isreal(jnp.array([1+0j, 1j]))` is `[True, False]`."""
    i = imag(x)
    return lax.eq(i, _fill(0, i))


def iscomplexobj(x):
    """Whether `x` has a complex dtype (a Python bool, whatever the values).

    Example: `jnp.iscomplexobj(jnp.array([1+0j]))` is True.
    """
    if x is None:
        return False
    dt = getattr(x, "dtype", None)
    if dt is None:
        dt = np.asarray(x).dtype
    return np.dtype(dt).kind == "c"


def isrealobj(x):
    """Whether `x` does not have a complex dtype. Example: `jnp.isrealobj(1.0)` is True."""
    return not iscomplexobj(x)


# ----- cleaning up values -------------------------------------------------------------------

def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    """Replace NaN with `nan` and infinities with `posinf`/`neginf` (default: the dtype's largest
    and smallest finite values), as `numpy.nan_to_num`; complex parts separately. `copy` is
    ignored (arrays are immutable). Example: `jnp.nan_to_num(jnp.array([jnp.nan, jnp.inf]))` is
    `[0., 3.4028235e+38]`.
    """
    check_arraylike("nan_to_num", x)
    x = asarray_operand(x)
    kind = _kind(x)
    if kind in "biu":
        return x
    if kind == "c":
        return lax.complex(nan_to_num(lax.real(x), nan=nan, posinf=posinf, neginf=neginf),
                           nan_to_num(lax.imag(x), nan=nan, posinf=posinf, neginf=neginf))
    info = dtypes.finfo(x.dtype)
    posinf = float(info.max) if posinf is None else posinf
    neginf = float(info.min) if neginf is None else neginf
    out = _where(lax.ne(x, x), _fill(nan, x), x)
    out = _where(lax.eq(x, np.inf), _fill(posinf, x), out)
    return _where(lax.eq(x, -np.inf), _fill(neginf, x), out)


def clip(a, a_min=None, a_max=None, *, min=None, max=None):
    """Limit values to [min, max] (either may be None), as `numpy.clip`: `maximum(a, min)` then
    `minimum(., max)`, so NaN bounds propagate. `min`/`max` (NumPy 2 and JAX) and
    `a_min`/`a_max` (older NumPy) are the same arguments. Example: `jnp.clip(jnp.arange(5), 1, 3)`
    is `[1, 1, 2, 3, 3]`.
    """
    if min is not None and a_min is not None:
        raise TypeError("clip: pass only one of min and a_min")
    if max is not None and a_max is not None:
        raise TypeError("clip: pass only one of max and a_max")
    lo = a_min if min is None else min
    hi = a_max if max is None else max
    check_arraylike("clip", a, *(v for v in (lo, hi) if v is not None))
    out = asarray_operand(a)
    if lo is not None:
        out = maximum(out, lo)
    if hi is not None:
        out = minimum(out, hi)
    return out


# ----- special functions --------------------------------------------------------------------

def i0(x, /):
    """Elementwise modified Bessel function of the first kind, order 0, as `numpy.i0`.

    |x| <= 15 sums the power series sum_k ((x/2)**2)**k / (k!)**2 (all terms positive, so no
    cancellation); larger |x| uses the asymptotic expansion e**|x| / sqrt(2 pi |x|) *
    sum_k ((2k-1)!!)**2 / (k! (8|x|)**k). Example: `jnp.i0(jnp.array([0.0, 1.0]))` is
    `[1., 1.266066]`.
    """
    x = _real_float("i0", x)
    ax = lax.abs(x)
    small = lax.le(ax, 15.0)
    xs = _where(small, ax, _fill(0, ax))
    q = lax.mul(lax.mul(xs, xs), 0.25)
    term, total = _fill(1, ax), _fill(1, ax)
    for k in range(1, 41):
        term = lax.div(lax.mul(term, q), float(k * k))
        total = lax.add(total, term)
    xl = _where(small, _fill(16, ax), ax)
    inv8x = lax.div(_fill(1, ax), lax.mul(xl, 8.0))
    aterm, asum = _fill(1, ax), _fill(1, ax)
    for k in range(1, 13):
        aterm = lax.mul(aterm, lax.mul(inv8x, float((2 * k - 1) ** 2) / k))
        asum = lax.add(asum, aterm)
    half = lax.exp(lax.mul(xl, 0.5))
    # e**x split in two halves so the product overflows only where i0 itself does
    large = lax.mul(half, lax.mul(lax.div(half, lax.sqrt(lax.mul(xl, 2 * np.pi))), asum))
    return _where(small, total, large)
