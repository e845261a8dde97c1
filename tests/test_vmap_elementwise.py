"""Batching of the elementwise primitives (docs/reliability.md N5): for each one, `vmap(op)` equals
the loop over examples for batch sizes 10 and 0 and every placement of the batch axis, including
batched scalars among higher-rank operands (the `defbroadcasting` verb) and the scalar-or-same-
shape operands of clamp and select_n."""
import numpy as np
import pytest

from core import lax
from core.lax import prng as lax_prng
from core import test_util as tu

RNG = np.random.default_rng(11)


def floats(*shape, low=-2.0, high=2.0):
    return RNG.uniform(low, high, (10,) + shape).astype(np.float32)


def ints(*shape, low=-20, high=20):
    return RNG.integers(low, high, (10,) + shape).astype(np.int32)


def bools(*shape):
    return RNG.random((10,) + shape) > 0.5


def cplx(*shape):
    return (floats(*shape) + 1j * floats(*shape)).astype(np.complex64)


# name -> (function, operand maker per operand); each operand is 3 wide per example
UNARY = {
    "neg": (lax.neg, floats), "sign": (lax.sign, floats), "abs": (lax.abs, floats),
    "floor": (lax.floor, floats), "ceil": (lax.ceil, floats), "round": (lax.round, floats),
    "exp": (lax.exp, floats), "exp2": (lax.exp2, floats), "expm1": (lax.expm1, floats),
    "log": (lax.log, lambda *s: floats(*s, low=0.1)), "log1p": (lax.log1p, lambda *s: floats(*s, low=-0.5)),
    "tanh": (lax.tanh, floats), "logistic": (lax.logistic, floats),
    "sqrt": (lax.sqrt, lambda *s: floats(*s, low=0.1)), "rsqrt": (lax.rsqrt, lambda *s: floats(*s, low=0.1)),
    "cbrt": (lax.cbrt, floats), "square": (lax.square, floats),
    "sin": (lax.sin, floats), "cos": (lax.cos, floats), "tan": (lax.tan, lambda *s: floats(*s, low=-1, high=1)),
    "asin": (lax.asin, lambda *s: floats(*s, low=-0.9, high=0.9)),
    "acos": (lax.acos, lambda *s: floats(*s, low=-0.9, high=0.9)), "atan": (lax.atan, floats),
    "sinh": (lax.sinh, floats), "cosh": (lax.cosh, floats), "asinh": (lax.asinh, floats),
    "acosh": (lax.acosh, lambda *s: floats(*s, low=1.1, high=3)),
    "atanh": (lax.atanh, lambda *s: floats(*s, low=-0.9, high=0.9)),
    "erf": (lax.erf, floats), "erfc": (lax.erfc, floats),
    "erf_inv": (lax.erf_inv, lambda *s: floats(*s, low=-0.9, high=0.9)),
    "lgamma": (lax.lgamma, lambda *s: floats(*s, low=0.5, high=4)),
    "digamma": (lax.digamma, lambda *s: floats(*s, low=0.5, high=4)),
    "is_finite": (lax.is_finite, floats), "not": (lax.bitwise_not, ints),
    "population_count": (lax.population_count, ints), "clz": (lax.clz, ints),
    "real": (lax.real, cplx), "imag": (lax.imag, cplx), "conj": (lax.conj, cplx),
    "integer_pow": (lambda x: lax.integer_pow(x, 3), floats),
    "convert": (lambda x: lax.convert_element_type(x, np.int32), floats),
}

BINARY = {
    "add": (lax.add, floats), "sub": (lax.sub, floats), "mul": (lax.mul, floats),
    "div": (lax.div, lambda *s: floats(*s, low=0.5)), "rem": (lax.rem, lambda *s: floats(*s, low=0.5)),
    "pow": (lax.pow, lambda *s: floats(*s, low=0.5)), "atan2": (lax.atan2, floats),
    "nextafter": (lax.nextafter, floats), "max": (lax.max, floats), "min": (lax.min, floats),
    "and": (lax.bitwise_and, ints), "or": (lax.bitwise_or, ints), "xor": (lax.bitwise_xor, ints),
    "shift_left": (lax.shift_left, lambda *s: ints(*s, low=0, high=8)),
    "shift_right_arithmetic": (lax.shift_right_arithmetic, lambda *s: ints(*s, low=0, high=8)),
    "shift_right_logical": (lax.shift_right_logical, lambda *s: ints(*s, low=0, high=8)),
    "eq": (lax.eq, lambda *s: ints(*s, low=0, high=3)), "ne": (lax.ne, lambda *s: ints(*s, low=0, high=3)),
    "lt": (lax.lt, floats), "le": (lax.le, floats), "gt": (lax.gt, floats), "ge": (lax.ge, floats),
    "complex": (lax.complex, floats),
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary(name):
    f, make = UNARY[name]
    tu.check_vmap(f, [make(3)])


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary(name):
    f, make = BINARY[name]
    tu.check_vmap(f, [make(3), make(3)])


@pytest.mark.parametrize("shapes", [((), (2, 3)), ((2, 3), ()), ((2, 1), (1, 3)), ((), ())])
def test_broadcasting_scalars_and_size_one_dims(shapes):
    # a batched scalar among rank-2 operands becomes (batch, 1, 1); size-1 dims broadcast as in lax
    tu.check_vmap(lax.add, [floats(*shapes[0]), floats(*shapes[1])])
    tu.check_vmap(lambda x, y, z: lax_prng.mul_add(x, y, z), [floats(*shapes[0]), floats(*shapes[1]), floats(*shapes[0])])


def test_bool_and_empty_example_shapes():
    tu.check_vmap(lax.bitwise_and, [bools(3), bools(3)])
    tu.check_vmap(lax.mul, [floats(0), floats(0)])


def test_clamp_with_scalar_and_full_bounds():  # clamp_p: bounds are scalars or of x's shape
    tu.check_vmap(lambda lo, x, hi: lax.clamp(lo, x, hi), [floats(low=-2, high=-1), floats(2, 3), floats(low=1)])
    tu.check_vmap(lambda lo, x, hi: lax.clamp(lo, x, hi), [floats(2, 3, high=-1), floats(2, 3), floats(2, 3, low=1)])


def test_select_n():  # select_n_p: `which` is a scalar or of the cases' shape
    tu.check_vmap(lambda w, a, b: lax.select_n(w, a, b), [bools(), floats(2, 3), floats(2, 3)])
    tu.check_vmap(lambda w, a, b: lax.select_n(w, a, b), [bools(2, 3), floats(2, 3), floats(2, 3)])
    tu.check_vmap(lambda w, a, b, c: lax.select_n(w, a, b, c),
                  [RNG.integers(0, 3, (10, 3)).astype(np.int32), floats(3), floats(3), floats(3)])
    tu.check_vmap(lambda w, a, b: lax.select_n(w, a, b), [bools(), floats(), floats()])
