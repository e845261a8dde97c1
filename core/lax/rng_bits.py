"""XLA's own random number generators: `rng_bit_generator` (stateless: a key in, the next key
and random bits out) and `rng_uniform` (stateful: the compiler's hidden state). `core.random`
does not use them (its bits come from `threefry2x32`, which is portable and splittable); they
exist for programs written against `jax.lax` that call XLA's generators directly.

The key of `rng_bit_generator` is JAX's: uint32[4] (or uint64[2] with x64), seen by StableHLO's
`rng_bit_generator` as the u64[2] state that its THREE_FRY and PHILOX algorithms take (PHILOX
also accepts u64[3]; we pass u64[2] for every algorithm, as JAX does), so the bits of a key equal
JAX's.
"""
import enum

import numpy as np

from .. import dtypes
from ..avals import ShapedArray
from ..interpreters import ad, batching, lowering
from ._base import aval_of, defnondiff, standard_primitive

__all__ = ["RandomAlgorithm", "rng_bit_generator", "rng_uniform"]


class RandomAlgorithm(enum.IntEnum):
    """Which algorithm `rng_bit_generator` runs, as `jax.lax.RandomAlgorithm`: RNG_DEFAULT (the
    platform's choice), RNG_THREE_FRY (Threefry-2x32) or RNG_PHILOX (Philox-4x32).

    >>> lax.RandomAlgorithm.RNG_PHILOX, str(lax.RandomAlgorithm.RNG_THREE_FRY)
    (<RandomAlgorithm.RNG_PHILOX: 2>, 'RNG_THREE_FRY')
    """

    RNG_DEFAULT = 0
    RNG_THREE_FRY = 1
    RNG_PHILOX = 2

    def __str__(self):
        return self.name


_HLO_ALGORITHM = {RandomAlgorithm.RNG_DEFAULT: "DEFAULT", RandomAlgorithm.RNG_THREE_FRY: "THREE_FRY",
                  RandomAlgorithm.RNG_PHILOX: "PHILOX"}
_BIT_DTYPES = ("uint8", "uint16", "uint32", "uint64")


# ----- rng_bit_generator -------------------------------------------------------------------------

def rng_bit_generator(key, shape, dtype=np.uint32, algorithm=RandomAlgorithm.RNG_DEFAULT, *, out_sharding=None):
    """`(new_key, bits)`: uniformly distributed random `bits` of `shape` and unsigned `dtype`
    (uint8/16/32/64) from XLA's RngBitGenerator with `algorithm`, and the key to use next. The
    same key gives the same bits; `key` is uint32[4] (or uint64[2] with x64).

    Under `vmap` each key gives what it gives alone (JAX instead draws the whole batch from the
    first key).

    >>> key = jnp.array([0, 0, 0, 42], jnp.uint32)
    >>> new_key, bits = lax.rng_bit_generator(key, (2, 3), algorithm=lax.RandomAlgorithm.RNG_THREE_FRY)
    >>> new_key.shape, bits.shape, bits.dtype
    ((4,), (2, 3), dtype('uint32'))
    """
    shape = _shape("rng_bit_generator", shape)
    name = np.dtype(dtype).name if not isinstance(dtype, str) else dtype
    if name not in _BIT_DTYPES:
        raise TypeError(f"rng_bit_generator: unsupported dtype {dtype}; the bits are one of {list(_BIT_DTYPES)}.")
    dtype = dtypes.canonicalize_dtype(np.dtype(name))  # uint64 is uint32 unless x64 is on
    try:
        algorithm = RandomAlgorithm(algorithm)
    except ValueError:
        raise ValueError(f"rng_bit_generator: unknown algorithm {algorithm!r}; use a lax.RandomAlgorithm "
                         f"({', '.join(a.name for a in RandomAlgorithm)}).") from None
    return tuple(rng_bit_generator_p.bind(key, shape=shape, dtype=dtype, algorithm=algorithm))


def _shape(name, shape):
    try:
        shape = tuple(int(d) for d in shape)
    except TypeError:
        raise TypeError(f"{name}: shape must be a sequence of integers, got {shape!r}.") from None
    if any(d < 0 for d in shape):
        raise ValueError(f"{name}: shape {shape} has a negative dimension.")
    return shape


def _rng_bit_generator_abstract_eval(key, *, shape, dtype, algorithm):
    ok = ((key.shape == (4,) and key.dtype == dtypes.uint32)
          or (key.shape == (2,) and key.dtype == dtypes.uint64))
    if not ok:
        raise TypeError(f"rng_bit_generator: key must be uint32[4] (or uint64[2] with x64), got "
                        f"{np.dtype(key.dtype).name}{list(key.shape)}. Make one with "
                        "jnp.array([a, b, c, d], jnp.uint32).")
    return [ShapedArray(key.shape, key.dtype, key.weak_type), ShapedArray(shape, dtype)]


def _rng_bit_generator_lowering(ctx, key, *, shape, dtype, algorithm):
    b = ctx.b
    key_aval, bits_aval = ctx.avals_out
    state_t = lowering.tensor_type((2,), dtypes.uint64)
    state = key
    if key_aval.dtype == dtypes.uint32:  # u32[4] -> u32[2, 2] -> u64[2]: JAX's layout of the state
        pairs = b.op("stablehlo.reshape", [key], [lowering.tensor_type((2, 2), dtypes.uint32)])
        state = b.op("stablehlo.bitcast_convert", [pairs], [state_t])
    new_state, bits = b.op("stablehlo.rng_bit_generator", [state], [state_t, bits_aval],
                           {"rng_algorithm": f"#stablehlo<rng_algorithm {_HLO_ALGORITHM[algorithm]}>"})
    if key_aval.dtype == dtypes.uint32:
        pairs = b.op("stablehlo.bitcast_convert", [new_state], [lowering.tensor_type((2, 2), dtypes.uint32)])
        new_state = b.op("stablehlo.reshape", [pairs], [key_aval])
    return [new_state, bits]


rng_bit_generator_p = standard_primitive("rng_bit_generator", None, None, multiple_results=True)
rng_bit_generator_p.def_abstract_eval(_rng_bit_generator_abstract_eval)
lowering.register(rng_bit_generator_p, _rng_bit_generator_lowering)
defnondiff(rng_bit_generator_p)  # integer key in, integer key and bits out


def _rng_bit_generator_batch_rule(vals, dims, **params):
    # One generator call per key (a `map`, so the program does not grow with the batch): each
    # example gets exactly the bits its key gives alone, which keeps vmap equal to a loop.
    from .control_flow import map as lax_map
    (keys,), (d,) = vals, dims
    keys = batching.moveaxis(keys, d, 0)
    new_keys, bits = lax_map(lambda k: tuple(rng_bit_generator_p.bind(k, **params)), keys)
    return [new_keys, bits], [0, 0]


batching.batching_rules[rng_bit_generator_p] = _rng_bit_generator_batch_rule


# ----- rng_uniform -------------------------------------------------------------------------------

def rng_uniform(a, b, shape):
    """Random numbers of `shape` uniform in [a, b) from XLA's stateful generator (scalars `a` and
    `b` of one dtype: a float, integer or unsigned type). Each compiled program has its own hidden
    state, so results are not reproducible across programs; use `core.random` for anything that
    must be. As in JAX it has no derivative.

    >>> u = lax.rng_uniform(2.0, 3.0, (1000,))
    >>> bool(((u >= 2) & (u < 3)).all()), u.dtype
    (True, dtype('float32'))
    """
    from ._base import elementwise_args
    a, b = elementwise_args(a, b)
    return rng_uniform_p.bind(a, b, shape=_shape("rng_uniform", shape))


def _rng_uniform_abstract_eval(a, b, *, shape):
    if a.dtype != b.dtype:
        raise TypeError(f"rng_uniform: a and b must have one dtype, got {np.dtype(a.dtype).name} and "
                        f"{np.dtype(b.dtype).name}.")
    if a.shape != () or b.shape != ():
        raise ValueError(f"rng_uniform: a and b must be scalars, got shapes {a.shape} and {b.shape}.")
    if a.dtype.kind not in "iuf" and a.dtype != dtypes.bfloat16:
        raise TypeError(f"rng_uniform: a and b must be integers or floats, got {np.dtype(a.dtype).name}.")
    return ShapedArray(shape, a.dtype, a.weak_type and b.weak_type)


def _rng_uniform_lowering(ctx, a, b, *, shape):
    shape_value = ctx.b.constant(np.array(shape, np.int64), dtypes.int64, (len(shape),))
    return ctx.b.op("stablehlo.rng", [a, b, shape_value], [ctx.avals_out[0]],
                    {"rng_distribution": "#stablehlo<rng_distribution UNIFORM>"})


rng_uniform_p = standard_primitive("rng_uniform", None, None)
rng_uniform_p.def_abstract_eval(_rng_uniform_abstract_eval)
lowering.register(rng_uniform_p, _rng_uniform_lowering)


def _rng_uniform_jvp(primals, tangents, *, shape):
    if any(type(t) is not ad.Zero for t in tangents):
        raise NotImplementedError("rng_uniform has no derivative (as in JAX). For samples that are "
                                  "differentiable in their bounds use a + (b - a) * random.uniform(key, shape).")
    out = rng_uniform_p.bind(*primals, shape=shape)
    return out, ad.Zero(ad.tangent_aval(aval_of(out)))


ad.jvp_rules[rng_uniform_p] = _rng_uniform_jvp


def _rng_uniform_batch_rule(vals, dims, *, shape):
    # per-example bounds: one draw of `shape` per example (independent draws, as a loop would make)
    from .control_flow import map as lax_map
    size = batching.batch_size(vals, dims)
    a, b = (batching.bdim_at_front(x, d, size) for x, d in zip(vals, dims, strict=True))
    return lax_map(lambda ab: rng_uniform_p.bind(ab[0], ab[1], shape=shape), (a, b)), 0


batching.batching_rules[rng_uniform_p] = _rng_uniform_batch_rule
