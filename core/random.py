"""`core.random`: counter-based pseudo-random numbers, bit-compatible with `jax.random`.

The contract. A *key* is either a raw uint32 array of shape (2,) (`PRNGKey(seed)`) or a typed key
of shape () and dtype `key<fry>` (`key(seed)`, core/prng_keys.py) whose data is that array; every
function takes both and gives the same numbers for `key(s)` and `PRNGKey(s)`, and `split`,
`fold_in` and `clone` return keys of the kind they were given. Every sampler is a pure
function of its key: the same key gives the same numbers, so never use a key twice; derive fresh
keys with `split(key)` or `fold_in(key, i)`. Bits come from the Threefry-2x32 hash
(`core.lax.threefry2x32`) applied to counters 0, 1, 2, ... laid out as in JAX's classic scheme
(`jax_threefry_partitionable=False`, JAX's default before it became True; our default), or, with
`config.update("threefry_partitionable", True)`, as JAX's newer scheme, jax 0.10's default (one
64-bit counter per element: `split`, `bits` and every sampler give other values), and every sampler
transforms bits as JAX does, so that `split`, `fold_in`, `bits`, `uniform`, `normal`, `randint`,
`bernoulli`, `categorical`, `gumbel`, `exponential`, `laplace`, `logistic`, `cauchy`,
`truncated_normal`, `permutation`, `choice` and `rademacher` reproduce JAX's numbers exactly.
`gamma`, `beta` and `dirichlet` are not bit-equal to JAX's, which use a while loop (see `gamma`).

Example:
    >>> key = random.PRNGKey(0)
    >>> key, sub = random.split(key)
    >>> x = random.normal(sub, (3,))
"""
import functools
import math
import operator
import warnings
from collections.abc import Sequence

import numpy as np

from . import dtypes
from . import key_reuse
from . import lax
from . import numpy as jnp
from .array import Array, asarray_device
from .config import config
from .custom_derivatives import custom_jvp
from .lax._base import aval_of
from .numpy._util import broadcast_shapes
from .lax.prng import mul_add, random_clone_p, threefry2x32
from .prng_keys import KEY_DTYPE, KeyArray
from .trace import Tracer

__all__ = ["PRNGKey", "key", "key_data", "wrap_key_data", "key_impl", "key_dtype", "clone", "split", "fold_in", "bits", "uniform", "normal",
           "truncated_normal", "bernoulli", "categorical", "randint", "choice", "permutation", "shuffle",
           "gumbel", "exponential", "laplace", "logistic", "cauchy", "rademacher", "gamma", "loggamma", "beta",
           "dirichlet", "multivariate_normal", "orthogonal"]

_UINT_DTYPES = {8: dtypes.uint8, 16: dtypes.uint16, 32: dtypes.uint32, 64: dtypes.uint64}
_U32 = dtypes.uint32


# ----- argument checks ----------------------------------------------------------------------

def _check_key(name, key, allow_batched=False, consume=True):
    """The key as an Array or tracer, after checking that it is uint32 with a trailing axis of 2.

    `consume`: the caller derives random bits from the key (every public sampler, `split`,
    `fold_in`, `bits`), which the key-reuse checker records while `debug_key_reuse` is on; such a
    function consumes its key here, once, and calls only private helpers with it afterwards.
    `fold_in`'s consumptions are shared: folding several data into one key is no reuse, but
    sampling from or splitting a folded key is (the counters meet those of `fold_in`).

    A typed key (`key(seed)`) is checked and consumed as its uint32[..., 2] data, which is
    returned: everything below works on the data."""
    if isinstance(key, KeyArray):
        data = key._base
        if not isinstance(data, (Array, Tracer)) or aval_of(data).dtype != _U32 or aval_of(data).shape[-1:] != (2,):
            raise TypeError(f"{name}: a typed PRNG key array must hold uint32[..., 2] data, got {data!r}.")
        if key.ndim and not allow_batched:
            raise ValueError(f"{name} accepts a single key, but was given a key array of shape {key.shape} != (). "
                             "Pick one key (keys[i]) or loop over them (or vmap).")
        if consume and config.debug_key_reuse:
            data = key_reuse.consume(data, "random." + name, shared=name == "fold_in")
        return data
    if not isinstance(key, (Array, Tracer, np.ndarray)):
        raise TypeError(f"{name}: expected a PRNG key, random.key(seed) or a uint32 array of shape (2,) as "
                        f"made by random.PRNGKey(seed), got {type(key).__name__}.")
    aval = aval_of(key)
    if aval.dtype != _U32 or aval.shape[-1:] != (2,):
        raise TypeError(f"{name}: expected a PRNG key, random.key(seed) or a uint32 array of shape (2,) as "
                        f"made by random.PRNGKey(seed), got an array of dtype {aval.dtype.name} and shape {aval.shape}.")
    if aval.ndim > 1 and not allow_batched:
        raise ValueError(f"{name} accepts a single key, but was given a key array of shape {aval.shape[:-1]} "
                         "!= (). Pick one key (keys[i]) or loop over them.")
    key = key if isinstance(key, (Array, Tracer)) else asarray_device(key)
    if consume and config.debug_key_reuse:
        key = key_reuse.consume(key, "random." + name, shared=name == "fold_in")
    return key


def _canonical_shape(name, shape):
    if isinstance(shape, (int, np.integer)) or not isinstance(shape, Sequence):
        raise TypeError(f"{name}: shape must be a tuple of ints, got {shape!r}. (Write (n,) for a vector of "
                        "length n.)")
    try:
        shape = tuple(operator.index(d) for d in shape)
    except TypeError:
        raise TypeError(f"{name}: shape must be a tuple of ints, got {shape!r}.") from None
    if any(d < 0 for d in shape):
        raise ValueError(f"{name}: shape must have non-negative sizes, got {shape}.")
    return shape


def _check_shape(name, shape, *param_shapes):
    """`shape` must be the broadcast of itself with the parameters' shapes (as JAX checks)."""
    if param_shapes:
        try:
            full = broadcast_shapes(shape, *param_shapes)
        except ValueError:
            full = None
        if full != tuple(shape):
            raise ValueError(f"{name} parameter shapes must be broadcast-compatible with shape argument, and "
                             f"the result of broadcasting the shapes must equal the shape argument, but got "
                             f"parameter shapes {list(param_shapes)} for shape argument {tuple(shape)}.")


def _float_dtype(name, dtype, allow_complex=False):
    dtype = dtypes.default_float_dtype() if dtype is None else dtypes.check_user_dtype(dtype, name)
    if not (dtypes.is_float(dtype) or (allow_complex and dtypes.is_complex(dtype))):
        kind = "a float or complex" if allow_complex else "a float"
        raise ValueError(f"dtype argument to `{name}` must be {kind} dtype, got {dtype}")
    return dtype


def _shape_of(x):
    return () if isinstance(x, (bool, int, float, complex)) else aval_of(x).shape


def _full(shape, value, dtype):
    return lax.full(shape, value, dtype)


def _param(x, dtype, shape):
    """A distribution parameter converted to `dtype` and broadcast to `shape`."""
    x = lax.convert_element_type(jnp.asarray(x), dtype)
    xshape = aval_of(x).shape
    if xshape == tuple(shape):
        return x
    rank = len(shape)
    x = lax.broadcast_to_rank(x, rank)
    return lax.broadcast_in_dim(x, shape, tuple(range(rank)))


# ----- keys ---------------------------------------------------------------------------------

def PRNGKey(seed):
    """A key (uint32[2]) made from an integer seed, as `jax.random.PRNGKey`.

    A 64-bit seed is split into its high and low 32-bit words. With x64 off, a Python int seed is
    first wrapped to int32, as JAX does, so `PRNGKey(-1)` is `[0, 4294967295]` (with x64 on it is
    `[4294967295, 4294967295]`). Example: `random.PRNGKey(42)` is `Array([0, 42], dtype=uint32)`.
    """
    if isinstance(seed, (Array, Tracer)):
        return _seed_from_array(seed)
    if isinstance(seed, (bool, int)):
        # JAX converts Python ints to int64 first (OverflowError beyond), then canonicalizes.
        seed = np.int64(seed)
        seed = seed if dtypes.x64_enabled() else seed.astype(np.int32)
    elif isinstance(seed, (np.ndarray, np.generic)):
        seed = np.asarray(seed)
        if seed.ndim:
            raise TypeError(f"PRNGKey accepts a scalar seed, but was given an array of shape {seed.shape} != (). "
                            "Make one key per seed, e.g. with a loop.")
        if seed.dtype.kind not in "iub":
            raise TypeError(f"PRNGKey seed must be an integer; got {seed!r}")
        seed = seed.astype(dtypes.canonicalize_dtype(seed.dtype))
    else:
        raise TypeError(f"PRNGKey seed must be an integer; got {seed!r}")
    wide = np.asarray(seed).astype(np.uint64)  # two's complement for negative seeds
    hi = (wide >> np.uint64(32)) if seed.dtype.itemsize == 8 else np.uint64(0)
    return asarray_device(np.array([hi, wide & np.uint64(0xFFFFFFFF)], dtype=np.uint32))


def _seed_from_array(seed):
    aval = aval_of(seed)
    if aval.ndim:
        raise TypeError(f"PRNGKey accepts a scalar seed, but was given an array of shape {aval.shape} != (). "
                        "Make one key per seed, e.g. with a loop.")
    if not (dtypes.is_int(aval.dtype) or dtypes.is_bool(aval.dtype)):
        raise TypeError(f"PRNGKey seed must be an integer; got an array of dtype {aval.dtype.name}")
    if aval.dtype.itemsize == 8:
        hi = lax.shift_right_logical(seed, lax.full((), 32, aval.dtype))
        hi = lax.convert_element_type(hi, _U32)
    else:
        hi = _full((), 0, _U32)
    lo = lax.convert_element_type(seed, _U32)
    return lax.concatenate([lax.reshape(hi, (1,)), lax.reshape(lo, (1,))], 0)


def _check_impl(name, impl):
    if impl not in (None, "threefry2x32", "threefry", KEY_DTYPE):
        raise ValueError(f"{name}: unknown PRNG implementation {impl!r}; only 'threefry2x32' exists.")


def _as_kind_of(like, data):
    """`data` (uint32[..., 2]) as a key of the kind `like` is: typed if `like` is typed."""
    return KeyArray(data) if isinstance(like, KeyArray) else data


def key(seed, *, impl=None):
    """A typed PRNG key from an integer seed, as `jax.random.key`: shape (), dtype `key<fry>`, data
    `PRNGKey(seed)` (so every sampler gives the same numbers for `key(s)` and `PRNGKey(s)`).

    Example:
        >>> k = random.key(1)
        >>> k.shape, str(k.dtype), random.key_data(k)
        ((), 'key<fry>', Array([0, 1], dtype=uint32))
    """
    _check_impl("key", impl)
    return KeyArray(PRNGKey(seed))


def key_data(keys):
    """The uint32 data of a key or an array of keys: `uint32[..., 2]` for a typed key array of shape
    `...`; a raw key is its own data.

    Example: `random.key_data(random.key(1))` is `Array([0, 1], dtype=uint32)`.
    """
    return _check_key("key_data", keys, allow_batched=True, consume=False)


def wrap_key_data(key_bits_array, *, impl=None):
    """Typed keys over a uint32 array of shape (..., 2): a key array of shape `...` (only
    threefry2x32 exists). The inverse of `key_data`.

    Example: `random.wrap_key_data(jnp.array([0, 7], jnp.uint32))` is `random.key(7)`'s equal.
    """
    _check_impl("wrap_key_data", impl)
    if isinstance(key_bits_array, KeyArray):
        raise TypeError("wrap_key_data: the argument is already a typed key array; wrap its uint32 data "
                        "(random.key_data(keys)), or use it as it is.")
    return KeyArray(_check_key("wrap_key_data", key_bits_array, allow_batched=True, consume=False))


def key_impl(keys):
    """The name of the PRNG implementation of `keys` (typed or raw): always 'threefry2x32' here.

    Example: `random.key_impl(random.key(0))` is `'threefry2x32'`.
    """
    _check_key("key_impl", keys, allow_batched=True, consume=False)
    return KEY_DTYPE.impl


def key_dtype(impl=None):
    """The dtype of typed keys of an implementation (only threefry2x32): `key<fry>`.

    Example: `random.key_dtype() == random.key(0).dtype` is True.
    """
    _check_impl("key_dtype", impl)
    return KEY_DTYPE


def clone(key):
    """A key equal to `key` that may be consumed on its own: marks an intended reuse for the
    key-reuse checker (`config.update("debug_key_reuse", True)`). With the checker off it returns
    `key` itself, as it costs nothing then.

    Example:
        >>> key = random.PRNGKey(0)
        >>> a = random.normal(random.clone(key))
        >>> b = random.normal(key)  # equal to a, on purpose
    """
    data = _check_key("clone", key, allow_batched=True, consume=False)
    if not config.debug_key_reuse:
        return key
    return _as_kind_of(key, random_clone_p.bind(data))


def _key_words(key):
    k1 = lax.reshape(lax.slice(key, (0,), (1,)), ())
    k2 = lax.reshape(lax.slice(key, (1,), (2,)), ())
    return k1, k2


def _hash(key, count):
    """JAX's `threefry_2x32(keypair, count)` on a 1-D uint32 `count`: the first and second halves
    of the (zero-padded to even length) counts are the hash's two words; outputs concatenate."""
    k1, k2 = _key_words(key)
    n = aval_of(count).shape[0]
    odd = n % 2
    if odd:
        count = lax.concatenate([count, _full((1,), 0, _U32)], 0)
    half = (n + odd) // 2
    y1, y2 = threefry2x32(k1, k2, lax.slice(count, (0,), (half,)), lax.slice(count, (half,), (2 * half,)))
    out = lax.concatenate([y1, y2], 0)
    return lax.slice(out, (0,), (n,)) if odd else out


def _split(key, shape):
    if config.threefry_partitionable:
        # JAX's `_threefry_split_foldlike`: key i is the hash of the 64-bit counter i, both words
        y1, y2 = _hash_counters(key, shape)
        return lax.concatenate([lax.reshape(y1, (*shape, 1)), lax.reshape(y2, (*shape, 1))], len(shape))
    n = math.prod(shape)
    return lax.reshape(_hash(key, lax.iota(_U32, 2 * n)), (*shape, 2))


def _hash_counters(key, shape):
    """The partitionable scheme's hash (`jax_threefry_partitionable=True`): element i (row-major)
    of `shape` hashes the 64-bit counter i, as the pair (high word, low word) = (0, i), giving the
    two uint32 arrays (y1, y2) of that shape. Each element depends only on its own index, which is
    what lets an SPMD partitioner compute any slice of it locally."""
    n = math.prod(shape)
    if n >= 2**32:
        raise NotImplementedError(f"random bits for arrays of {n} >= 2**32 elements (shape {shape}) with "
                                  "threefry_partitionable on")
    k1, k2 = _key_words(key)
    y1, y2 = threefry2x32(k1, k2, _full((n,), 0, _U32), lax.iota(_U32, n))
    return lax.reshape(y1, shape), lax.reshape(y2, shape)


def split(key, num=2):
    """Split a key into `num` new keys (an int, or a tuple for a shape): shape `(num, 2)` for a raw
    key, `(num,)` for a typed one (`random.key`).

    Example: `key, sub = random.split(key)`; `random.split(key, 3).shape` is `(3, 2)`.
    """
    data = _check_key("split", key)
    shape = tuple(num) if isinstance(num, Sequence) else (operator.index(num),)
    return _as_kind_of(key, _split(data, _canonical_shape("split", shape)))


def _split2(key):
    keys = _split(key, (2,))
    return lax.index_in_dim(keys, 0, keepdims=False), lax.index_in_dim(keys, 1, keepdims=False)


def fold_in(key, data):
    """A new key from `key` and a 32-bit integer `data` (e.g. a step number), as JAX's `fold_in`.

    Example: `random.fold_in(key, step)` gives a different key for each step.
    """
    typed_like, key = key, _check_key("fold_in", key)
    if isinstance(data, (bool, int)):
        if not 0 <= data < 2**32:
            raise OverflowError(f"fold_in: Python integer {data} out of bounds for uint32")
        data = _full((), data, _U32)
    else:
        if aval_of(data).ndim:
            raise TypeError(f"fold_in accepts a scalar, but was given an array of shape {aval_of(data).shape} != ().")
        data = lax.convert_element_type(jnp.asarray(data), _U32)
    k1, k2 = _key_words(key)
    y1, y2 = threefry2x32(k1, k2, _full((), 0, _U32), data)
    return _as_kind_of(typed_like, lax.concatenate([lax.reshape(y1, (1,)), lax.reshape(y2, (1,))], 0))


# ----- bits ---------------------------------------------------------------------------------

def _random_bits(key, bit_width, shape):
    """JAX's classic `_threefry_random_bits_original`: ceil(bit_width * size / 32) hashed counters;
    64-bit values join the first half (high words) with the second half (low words); 8- and 16-bit
    values are the little-endian pieces of each 32-bit word. With `threefry_partitionable` on,
    JAX's `_threefry_random_bits_partitionable` instead (`_random_bits_partitionable`)."""
    if config.threefry_partitionable:
        return _random_bits_partitionable(key, bit_width, shape)
    size = math.prod(shape)
    max_count = -(-bit_width * size // 32)
    if max_count >= 2**32 - 1:
        raise NotImplementedError(f"random bits for arrays of more than {2**32 - 2} 32-bit words")
    bits = _hash(key, lax.iota(_U32, max_count))
    dtype = _UINT_DTYPES[bit_width]
    if bit_width == 64:
        hi, lo = (lax.convert_element_type(b, dtype) for b in
                  (lax.slice(bits, (0,), (size,)), lax.slice(bits, (size,), (2 * size,))))
        bits = lax.bitwise_or(lax.shift_left(hi, _full((size,), 32, dtype)), lo)
    elif bit_width in (8, 16):
        per_word = 32 // bit_width
        pieces = (per_word, max_count)
        shifts = lax.mul(lax.broadcasted_iota(_U32, pieces, 0), _full(pieces, bit_width, _U32))
        words = lax.broadcast_in_dim(bits, pieces, (1,))
        parts = lax.bitwise_and(lax.shift_right_logical(words, shifts), _full(pieces, 2**bit_width - 1, _U32))
        parts = lax.reshape(lax.transpose(parts, (1, 0)), (max_count * per_word,))
        bits = lax.slice(lax.convert_element_type(parts, dtype), (0,), (size,))
    return lax.reshape(bits, shape)


def _random_bits_partitionable(key, bit_width, shape):
    """One hash per element (`_hash_counters`): 64-bit values are (y1 << 32) | y2, narrower ones the
    low bits of y1 ^ y2."""
    y1, y2 = _hash_counters(key, shape)
    dtype = _UINT_DTYPES[bit_width]
    if bit_width == 64:
        hi, lo = lax.convert_element_type(y1, dtype), lax.convert_element_type(y2, dtype)
        return lax.bitwise_or(lax.shift_left(hi, _full(shape, 32, dtype)), lo)
    return lax.convert_element_type(lax.bitwise_xor(y1, y2), dtype)


def bits(key, shape=(), dtype=None):
    """Uniform random bits as unsigned integers (uint32 by default; uint64 with x64 on).

    Example: `random.bits(random.PRNGKey(0), (3,))` is a uint32 vector.
    """
    key = _check_key("bits", key)
    dtype = dtypes.default_uint_dtype() if dtype is None else dtypes.check_user_dtype(dtype, "bits")
    if not dtypes.is_unsigned(dtype):
        raise ValueError(f"dtype argument to `bits` must be an unsigned int dtype, got {dtype}")
    return _random_bits(key, dtype.itemsize * 8, _canonical_shape("bits", shape))


# ----- continuous samplers ------------------------------------------------------------------

def uniform(key, shape=(), dtype=None, minval=0.0, maxval=1.0):
    """Uniform floats in [minval, maxval) (default dtype float32; float64 with x64 on).

    The mantissa bits of 1.0 are filled with random bits, giving a float in [1, 2); subtract 1,
    scale and shift, then clamp below at `minval` as JAX does. Example:
    `random.uniform(key, (2, 3), minval=-1.0, maxval=1.0)`.
    """
    key = _check_key("uniform", key)
    dtype = _float_dtype("uniform", dtype)
    shape = _canonical_shape("uniform", shape)
    _check_shape("uniform", shape, _shape_of(minval), _shape_of(maxval))
    return _uniform(key, shape, dtype, minval, maxval)


def _uniform(key, shape, dtype, minval, maxval):
    finfo = dtypes.finfo(dtype)
    nbits, nmant = finfo.bits, finfo.nmant
    rng_bits = 8 if nmant < 8 else nbits  # bfloat16: 8 random bits fill its 7 mantissa bits
    uint = _UINT_DTYPES[nbits]
    bits = _random_bits(key, rng_bits, shape)
    if rng_bits != nbits:
        bits = lax.convert_element_type(bits, uint)
    one_bits = int(np.array(1.0, dtype).view(uint))
    float_bits = lax.bitwise_or(lax.shift_right_logical(bits, _full(shape, rng_bits - nmant, uint)),
                                _full(shape, one_bits, uint))
    floats = lax.sub(lax.bitcast_convert_type(float_bits, dtype), _full(shape, 1.0, dtype))
    minval = _param(minval, dtype, shape)
    maxval = _param(maxval, dtype, shape)
    # one program for the multiply-add, so XLA fuses it as in JAX's jitted sampler (one rounding)
    return lax.max(minval, mul_add(floats, lax.sub(maxval, minval), minval))


def normal(key, shape=(), dtype=None):
    """Standard normal samples: `sqrt(2) * erf_inv(u)` with u uniform in (-1, 1), as JAX.

    Complex dtypes give real and imaginary parts each of variance 1/2. Example:
    `random.normal(key, (3,))`.
    """
    key = _check_key("normal", key)
    dtype = _float_dtype("normal", dtype, allow_complex=True)
    shape = _canonical_shape("normal", shape)
    if dtypes.is_complex(dtype):
        real = dtypes.finfo(dtype).dtype
        k_re, k_im = _split2(key)
        re, im = _normal(k_re, shape, real), _normal(k_im, shape, real)
        z = lax.complex(re, im)
        return lax.div(z, _full(shape, np.sqrt(2), dtype))
    return _normal(key, shape, dtype)


def _normal(key, shape, dtype):
    lo = -1.0 + float(dtypes.finfo(dtype).epsneg)  # the float after -1 toward 0
    u = _uniform(key, shape, dtype, lo, 1.0)
    return lax.mul(_full(shape, np.sqrt(2), dtype), lax.erf_inv(u))


def truncated_normal(key, lower, upper, shape=None, dtype=None):
    """Standard normal samples conditioned on lower < x < upper (inverse-CDF method, as JAX).

    `shape` defaults to the broadcast shape of `lower` and `upper`. Example:
    `random.truncated_normal(key, -1.0, 2.0, (5,))`.
    """
    key = _check_key("truncated_normal", key)
    dtype = _float_dtype("truncated_normal", dtype)
    if shape is None:
        shape = broadcast_shapes(_shape_of(lower), _shape_of(upper))
    else:
        shape = _canonical_shape("truncated_normal", shape)
        _check_shape("truncated_normal", shape, _shape_of(lower), _shape_of(upper))
    lower, upper = _param(lower, dtype, shape), _param(upper, dtype, shape)
    sqrt2 = _full(shape, np.sqrt(2), dtype)
    a = lax.erf(lax.div(lower, sqrt2))
    b = lax.erf(lax.div(upper, sqrt2))
    u = _uniform(key, shape, dtype, a, b)
    out = lax.mul(sqrt2, lax.erf_inv(u))
    # rounding can land on a bound: clamp into the open interval (lower, upper)
    lo = lax.nextafter(lower, _full(shape, np.inf, dtype))
    hi = lax.nextafter(upper, _full(shape, -np.inf, dtype))
    return lax.min(lax.max(out, lo), hi)


def gumbel(key, shape=(), dtype=None, mode="low"):
    """Standard Gumbel samples `-log(-log(u))`. mode="high" uses two uniforms per sample to reach
    further into the right tail, as JAX. Example: `random.gumbel(key, (4,))`."""
    key = _check_key("gumbel", key)
    dtype = _float_dtype("gumbel", dtype)
    shape = _canonical_shape("gumbel", shape)
    if mode not in ("high", "low"):
        raise ValueError(f"Must provide valid mode for gumbel got: {mode}")
    return _gumbel(key, shape, dtype, mode)


def _gumbel(key, shape, dtype, mode):
    info = dtypes.finfo(dtype)
    if mode == "high":
        u = _uniform(key, (2, *shape), dtype, 0.0, 1.0)
        high = lax.index_in_dim(u, 0, keepdims=False)
        low = lax.index_in_dim(u, 1, keepdims=False)
        filled = lax.add(lax.add(high, lax.mul(_full(shape, 2.0 ** -info.nmant, dtype), low)),
                         _full(shape, float(info.tiny), dtype))
        x = lax.select_n(lax.ge(high, _full(shape, 0.5, dtype)), filled, high)
        return lax.neg(lax.log(lax.neg(lax.log1p(lax.neg(x)))))
    u = _uniform(key, shape, dtype, float(info.tiny), 1.0)
    return lax.neg(lax.log(lax.neg(lax.log(u))))


def exponential(key, shape=(), dtype=None):
    """Exponential(1) samples `-log1p(-u)`. Example: `random.exponential(key, (4,))`."""
    key = _check_key("exponential", key)
    dtype = _float_dtype("exponential", dtype)
    shape = _canonical_shape("exponential", shape)
    u = _uniform(key, shape, dtype, 0.0, 1.0)
    return lax.neg(lax.log1p(lax.neg(u)))


def laplace(key, shape=(), dtype=None):
    """Laplace(0, 1) samples `sign(u) * log1p(-|u|)`, u uniform in (-1, 1).
    Example: `random.laplace(key, (4,))`."""
    key = _check_key("laplace", key)
    dtype = _float_dtype("laplace", dtype)
    shape = _canonical_shape("laplace", shape)
    u = _uniform(key, shape, dtype, -1.0 + float(dtypes.finfo(dtype).epsneg), 1.0)
    return lax.mul(lax.sign(u), lax.log1p(lax.neg(lax.abs(u))))


def logistic(key, shape=(), dtype=None):
    """Standard logistic samples `log(u) - log1p(-u)`. Example: `random.logistic(key, (4,))`."""
    key = _check_key("logistic", key)
    dtype = _float_dtype("logistic", dtype)
    shape = _canonical_shape("logistic", shape)
    u = _uniform(key, shape, dtype, float(dtypes.finfo(dtype).tiny), 1.0)
    return lax.sub(lax.log(u), lax.log1p(lax.neg(u)))


def cauchy(key, shape=(), dtype=None):
    """Standard Cauchy samples `tan(pi * (u - 1/2))`. Example: `random.cauchy(key, (4,))`."""
    key = _check_key("cauchy", key)
    dtype = _float_dtype("cauchy", dtype)
    shape = _canonical_shape("cauchy", shape)
    u = _uniform(key, shape, dtype, float(dtypes.finfo(dtype).eps), 1.0)
    return lax.tan(lax.mul(_full(shape, np.pi, dtype), lax.sub(u, _full(shape, 0.5, dtype))))


# ----- discrete samplers --------------------------------------------------------------------

def bernoulli(key, p=0.5, shape=None, mode="low"):
    """Boolean samples that are True with probability `p` (`uniform < p`, as JAX).

    `shape` defaults to `p`'s shape; mode="high" draws two uniforms per sample for accuracy at
    tiny `p`. Example: `random.bernoulli(key, 0.3, (5,))`.
    """
    key = _check_key("bernoulli", key)
    return _bernoulli(key, p, shape, mode)


def _bernoulli(key, p, shape, mode):
    if mode not in ("high", "low"):
        raise ValueError(f"got mode={mode!r}, expected 'high' or 'low'")
    p = jnp.asarray(p)
    if not dtypes.is_float(p.dtype):
        raise TypeError(f"bernoulli probability `p` must have a floating dtype, got {p.dtype}.")
    if shape is None:
        shape = p.shape
    else:
        shape = _canonical_shape("bernoulli", shape)
        _check_shape("bernoulli", shape, p.shape)
    dtype = p.dtype
    p = _param(p, dtype, shape)
    if mode == "high":
        u = _uniform(key, (2, *shape), dtype, 0.0, 1.0)
        u1 = lax.index_in_dim(u, 0, keepdims=False)
        u2 = lax.mul(lax.index_in_dim(u, 1, keepdims=False), _full(shape, 2.0 ** -dtypes.finfo(dtype).nmant, dtype))
        return lax.lt(u2, lax.sub(p, u1))
    return lax.lt(_uniform(key, shape, dtype, 0.0, 1.0), p)


def rademacher(key, shape=(), dtype=None):
    """Samples of -1 or +1 with equal probability (default dtype int32).
    Example: `random.rademacher(key, (4,))`."""
    key = _check_key("rademacher", key)
    dtype = dtypes.default_int_dtype() if dtype is None else dtypes.check_user_dtype(dtype, "rademacher")
    shape = _canonical_shape("rademacher", shape)
    b = lax.convert_element_type(_bernoulli(key, 0.5, shape, "low"), dtype)
    return lax.sub(lax.mul(_full(shape, 2, dtype), b), _full(shape, 1, dtype))


def _clip_to(val, dtype):
    """Convert integer `val` to integer `dtype`, clipping to its range instead of wrapping."""
    src = aval_of(val).dtype
    lo = max(int(dtypes.iinfo(dtype).min), int(dtypes.iinfo(src).min))
    hi = min(int(dtypes.iinfo(dtype).max), int(dtypes.iinfo(src).max))
    val = lax.clamp(lax.full((), lo, src), val, lax.full((), hi, src))
    return lax.convert_element_type(val, dtype)


def randint(key, shape, minval, maxval, dtype=None):
    """Uniform integers in [minval, maxval) (default dtype int32; int64 with x64 on).

    As JAX: two draws of the dtype's width are combined modulo the span, which makes the modulo
    bias negligible; 8- and 16-bit dtypes are sampled at 32 bits; `maxval <= minval` gives
    `minval`. Example: `random.randint(key, (3,), 0, 10)`.
    """
    key = _check_key("randint", key)
    return _randint_checked(key, shape, minval, maxval, dtype)


def _randint_checked(key, shape, minval, maxval, dtype):
    """`randint` after its key was checked (and consumed): `choice` calls it too."""
    dtype = dtypes.default_int_dtype() if dtype is None else dtypes.check_user_dtype(dtype, "randint")
    if not dtypes.is_int(dtype):
        raise TypeError(f"randint only accepts integer dtypes, got {dtype}")
    shape = _canonical_shape("randint", shape)
    _check_shape("randint", shape, _shape_of(minval), _shape_of(maxval))
    minval, maxval = jnp.asarray(minval), jnp.asarray(maxval)
    info = dtypes.iinfo(dtype)
    sample_dtype = dtype
    if info.bits < 32:
        sample_dtype = dtypes.int32
        minval = lax.clamp(lax.full((), int(info.min), dtypes.int32), _to_int(minval, dtypes.int32),
                           lax.full((), int(info.max), dtypes.int32))
        maxval = lax.clamp(lax.full((), int(info.min), dtypes.int32), _to_int(maxval, dtypes.int32),
                           lax.full((), int(info.max) + 1, dtypes.int32))
    out = _randint(key, shape, minval, maxval, sample_dtype)
    return lax.convert_element_type(out, dtype)


def _to_int(x, dtype):
    return lax.convert_element_type(x, dtype)


def _randint(key, shape, minval, maxval, dtype):
    if not dtypes.is_int(minval.dtype):
        minval = lax.convert_element_type(minval, dtypes.default_int_dtype())
    if not dtypes.is_int(maxval.dtype):
        maxval = lax.convert_element_type(maxval, dtypes.default_int_dtype())
    top = min(int(dtypes.iinfo(dtype).max), int(dtypes.iinfo(maxval.dtype).max))
    # maxval beyond the dtype's range (randint(0, 256) for uint8) must still reach the top value
    maxval_out_of_range = lax.gt(maxval, lax.full((), top, maxval.dtype) if not maxval.ndim else
                                 lax.full(maxval.shape, top, maxval.dtype))
    minval, maxval = _clip_to(minval, dtype), _clip_to(maxval, dtype)
    bcast = lambda x: _param(x, aval_of(x).dtype, shape)  # noqa: E731
    minval, maxval, maxval_out_of_range = bcast(minval), bcast(maxval), bcast(maxval_out_of_range)
    nbits = dtypes.iinfo(dtype).bits
    unsigned = _UINT_DTYPES[nbits]
    k1, k2 = _split2(key)
    higher_bits, lower_bits = _random_bits(k1, nbits, shape), _random_bits(k2, nbits, shape)
    span = lax.convert_element_type(lax.sub(maxval, minval), unsigned)
    one = _full(shape, 1, unsigned)
    span = lax.select_n(lax.le(maxval, minval), span, one)
    span = lax.select_n(lax.bitwise_and(maxval_out_of_range, lax.gt(maxval, minval)), span, lax.add(span, one))
    # (hi * 2**nbits + lo) % span without overflow: 2**nbits % span is (2**(nbits/2) % span)**2 % span
    multiplier = lax.rem(_full(shape, 2 ** (nbits // 2), unsigned), span)
    multiplier = lax.rem(lax.mul(multiplier, multiplier), span)
    offset = lax.add(lax.mul(lax.rem(higher_bits, span), multiplier), lax.rem(lower_bits, span))
    offset = lax.rem(offset, span)
    return lax.add(minval, lax.convert_element_type(offset, dtype))


def categorical(key, logits, axis=-1, shape=None, replace=True):
    """Samples of category indices with probabilities `softmax(logits, axis)` (Gumbel-max trick;
    Gumbel-top-k without replacement). The result has `logits`' shape without `axis`, or `shape`.

    Example: `random.categorical(key, jnp.log(jnp.array([0.2, 0.8])), shape=(5,))`.
    """
    key = _check_key("categorical", key)
    logits = jnp.asarray(logits)
    if not dtypes.is_float(logits.dtype):
        logits = lax.convert_element_type(logits, dtypes.default_float_dtype())
    ndim = logits.ndim
    if ndim == 0:
        raise ValueError("categorical: logits must have at least one dimension (the categories).")
    if not -ndim <= axis < ndim:
        raise ValueError(f"categorical: axis {axis} is out of bounds for logits of rank {ndim}")
    axis %= ndim
    batch_shape = logits.shape[:axis] + logits.shape[axis + 1:]
    if shape is None:
        shape = batch_shape
    else:
        shape = _canonical_shape("categorical", shape)
        _check_shape("categorical", shape, batch_shape)
    prefix = shape[:len(shape) - len(batch_shape)]
    index_dtype = dtypes.default_int_dtype()
    if replace:
        sample_shape = list(shape[len(prefix):])
        sample_shape.insert(axis, logits.shape[axis])
        g = _gumbel(key, (*prefix, *sample_shape), logits.dtype, "low")
        lg = lax.reshape(logits, (1,) * len(prefix) + logits.shape)
        return lax.argmax(lax.add(g, lg), len(prefix) + axis, index_dtype)
    k = math.prod(prefix)
    if k > logits.shape[axis]:
        raise ValueError(f"Number of samples without replacement ({k}) cannot exceed number of categories "
                         f"({logits.shape[axis]}).")
    perturbed = lax.add(logits, _gumbel(key, logits.shape, logits.dtype, "low"))
    perm = tuple(i for i in range(ndim) if i != axis) + (axis,)
    _, idx = lax.top_k(lax.transpose(perturbed, perm), k)
    idx = lax.reshape(idx, shape, dimensions=(idx.ndim - 1, *range(idx.ndim - 1)))
    return lax.convert_element_type(idx, index_dtype)


# ----- permutations and choice --------------------------------------------------------------

def _shuffle_rounds(size):
    # Enough rounds of sorting by fresh 32-bit keys that key collisions are unlikely (JAX's rule).
    return int(np.ceil(3 * np.log(max(1, size)) / np.log(2**32 - 1)))


def _shuffle(key, x, axis, rounds_size=None):
    """Sort `x` along `axis` by random 32-bit keys, as many rounds as JAX uses. With
    `rounds_size`, the keys are one vector along `axis` shared by every slice, so all slices move
    alike (equal to JAX's take of a shuffled arange of length `rounds_size`)."""
    shape = aval_of(x).shape
    shared = rounds_size is not None
    for _ in range(_shuffle_rounds(rounds_size if shared else math.prod(shape))):
        key, subkey = _split2(key)
        if shared:
            sort_keys = lax.broadcast_in_dim(_random_bits(subkey, 32, (shape[axis],)), shape, (axis,))
        else:
            sort_keys = _random_bits(subkey, 32, shape)
        _, x = lax.sort_key_val(sort_keys, x, axis)
    return x


def permutation(key, x, axis=0, independent=False):
    """A random permutation of `arange(x)` (int x) or of `x` along `axis`; with `independent`,
    each slice along `axis` is shuffled on its own. Example: `random.permutation(key, 5)`."""
    key = _check_key("permutation", key)
    return _permutation(key, x, axis, independent)


def _permutation(key, x, axis, independent):
    if isinstance(x, (bool, int, np.integer)) or (hasattr(x, "ndim") and x.ndim == 0):
        dt = dtypes.dtype(x)
        if not dtypes.is_int(dt):
            raise TypeError("x must be an integer or at least 1-dimensional")
        if isinstance(x, Tracer):
            raise TypeError("permutation: an integer x must be concrete (a Python int), not a traced value.")
        n = int(x)
        return _shuffle(key, lax.iota(dtypes.default_int_dtype(), n), 0)
    x = jnp.asarray(x)
    if not -x.ndim <= axis < x.ndim:
        raise ValueError(f"permutation: axis {axis} is out of bounds for an array of rank {x.ndim}")
    axis %= x.ndim
    if independent or x.ndim == 1:
        return _shuffle(key, x, axis)
    return _shuffle(key, x, axis, rounds_size=x.shape[axis])


def shuffle(key, x, axis=0):
    """Deprecated (as in JAX): shuffle each slice of `x` along `axis` independently. Use
    `permutation(key, x, axis, independent=True)`."""
    warnings.warn("jax.random.shuffle is deprecated; use random.permutation with independent=True.",
                  DeprecationWarning, stacklevel=2)
    key = _check_key("shuffle", key)
    x = jnp.asarray(x)
    return _shuffle(key, x, axis % max(x.ndim, 1))


def choice(key, a, shape=(), replace=True, p=None, axis=0):
    """Random samples from `a` (an array, or an int meaning `arange(a)`) along `axis`, with or
    without replacement, optionally with probabilities `p`.

    Example: `random.choice(key, 10, (3,), replace=False)`; `random.choice(key, x, (2,), p=probs)`.
    """
    key = _check_key("choice", key)
    if not isinstance(shape, Sequence):
        raise TypeError(f"shape argument of random.choice must be a sequence, got {shape}")
    shape = _canonical_shape("choice", shape)
    arr = jnp.asarray(a)
    if arr.ndim == 0:
        if isinstance(a, Tracer):
            raise TypeError("choice: an integer `a` must be concrete (a Python int), not a traced value.")
        n_inputs = int(a)
    else:
        if not -arr.ndim <= axis < arr.ndim:
            raise ValueError(f"choice: axis {axis} is out of bounds for an array of rank {arr.ndim}")
        axis %= arr.ndim
        n_inputs = arr.shape[axis]
    n_draws = math.prod(shape)
    if n_draws == 0:
        return jnp.zeros(shape if arr.ndim == 0 else arr.shape[:axis] + shape + arr.shape[axis + 1:], arr.dtype)
    if n_inputs <= 0:
        raise ValueError("a must be greater than 0 unless no samples are taken")
    if not replace and n_draws > n_inputs:
        raise ValueError(f"Cannot take a larger sample (size {n_draws}) than population (size {n_inputs}) "
                         "when 'replace=False'")
    index_dtype = dtypes.default_int_dtype()
    if p is None:
        if replace:
            ind = _randint_checked(key, shape, 0, n_inputs, None)
        else:
            perm = _permutation(key, n_inputs if arr.ndim == 0 else arr, axis, False)
            result = lax.slice_in_dim(perm, 0, n_draws, axis=0 if arr.ndim == 0 else axis)
            return lax.reshape(result, shape if arr.ndim == 0 else arr.shape[:axis] + shape + arr.shape[axis + 1:])
    else:
        p_arr = jnp.asarray(p)
        if not dtypes.is_inexact(p_arr.dtype):
            p_arr = lax.convert_element_type(p_arr, dtypes.default_float_dtype())
        if p_arr.shape != (n_inputs,):
            raise ValueError("p must be None or a 1D vector with the same size as a.shape[axis]. "
                             f"p has shape {p_arr.shape} and a.shape[axis] is {n_inputs}.")
        if replace:
            p_cuml = lax.cumsum(p_arr)
            total = lax.reshape(lax.slice(p_cuml, (n_inputs - 1,), (n_inputs,)), ())
            u = _uniform(key, shape, p_arr.dtype, 0.0, 1.0)
            r = lax.mul(lax.broadcast_in_dim(total, shape, ()), lax.sub(_full(shape, 1.0, p_arr.dtype), u))
            # searchsorted(p_cuml, r, side='left') = the number of cumulative sums below r
            below = lax.lt(lax.broadcast_in_dim(p_cuml, (*shape, n_inputs), (len(shape),)),
                           lax.broadcast_in_dim(r, (*shape, n_inputs), tuple(range(len(shape)))))
            ind = lax.reduce_sum(lax.convert_element_type(below, index_dtype), (len(shape),))
        else:
            g = lax.add(_gumbel(key, (n_inputs,), p_arr.dtype, "low"), lax.log(p_arr))
            ind = lax.convert_element_type(lax.top_k(g, n_draws)[1], index_dtype)
            ind = lax.reshape(ind, shape)
    if arr.ndim == 0:
        return lax.reshape(ind, shape)
    return jnp.take(arr, lax.reshape(ind, shape), axis=axis)


# ----- gamma family -------------------------------------------------------------------------

_GAMMA_PROPOSALS = 16


def gamma(key, a, shape=None, dtype=None):
    """Gamma(a, 1) samples (Marsaglia and Tsang's method, 2000).

    Without loops, each sample gets 16 vectorized proposals and keeps the first accepted one. Each
    proposal is accepted with probability above 0.95 for every `a`, so all 16 fail with
    probability below 1e-20; then the sample is the deterministic fallback `a - 1/3` (times the
    usual boost for a < 1), close to the mode. For a < 1 the sample is Gamma(a + 1) * u**(1/a),
    computed in log space. The numbers differ from `jax.random.gamma`'s (which loops until
    acceptance); the distribution is the same. Differentiable in `a` as JAX's: the derivative of a
    sample at its quantile held fixed (`lax.random_gamma_grad`), also for `loggamma`, `beta`,
    `dirichlet` and the samplers built on them. Example: `random.gamma(key, 2.0, (5,))`.
    """
    key = _check_key("gamma", key)
    dtype = _float_dtype("gamma", dtype)
    a, shape = _gamma_param("gamma", a, shape, dtype)
    return lax.exp(_loggamma(key, a, shape, dtype))


def loggamma(key, a, shape=None, dtype=None):
    """log of Gamma(a, 1) samples, accurate for tiny `a` where the samples underflow (see `gamma`).
    Example: `random.loggamma(key, 0.01, (5,))`."""
    key = _check_key("loggamma", key)
    dtype = _float_dtype("loggamma", dtype)
    a, shape = _gamma_param("loggamma", a, shape, dtype)
    return _loggamma(key, a, shape, dtype)


def _gamma_param(name, a, shape, dtype):
    if shape is None:
        shape = _shape_of(a)
    else:
        shape = _canonical_shape(name, shape)
        _check_shape(name, shape, _shape_of(a))
    return _param(a, dtype, shape), shape


def _loggamma(key, a, shape, dtype):
    """log of Gamma(a, 1) samples of `shape` (`a` already broadcast to it), differentiable in `a`
    by implicit reparameterization (`_loggamma_jvp`)."""
    return _loggamma_sample(key, a, shape, dtype)


@functools.partial(custom_jvp, nondiff_argnums=(2, 3))
def _loggamma_sample(key, a, shape, dtype):
    c = lambda v: _full(shape, v, dtype)  # noqa: E731
    boost = lax.lt(a, c(1.0))
    alpha = lax.select_n(boost, a, lax.add(a, c(1.0)))
    d = lax.sub(alpha, c(1.0 / 3.0))
    scale = lax.div(c(1.0 / 3.0), lax.sqrt(d))
    keys = _split(key, (3,))
    key_x, key_u, key_boost = (lax.index_in_dim(keys, i, keepdims=False) for i in range(3))
    k = _GAMMA_PROPOSALS
    pshape = (k, *shape)
    pc = lambda v: _full(pshape, v, dtype)  # noqa: E731
    bc = lambda v: lax.broadcast_in_dim(v, pshape, tuple(range(1, len(pshape))))  # noqa: E731
    x = _normal(key_x, pshape, dtype)
    log_u = lax.log(_uniform(key_u, pshape, dtype, 0.0, 1.0))
    v = lax.add(pc(1.0), lax.mul(x, bc(scale)))
    log_v3 = lax.mul(pc(3.0), lax.log(v))  # NaN where v <= 0: those proposals are rejected below
    dd = bc(d)
    bound = lax.add(lax.mul(pc(0.5), lax.mul(x, x)),
                    lax.mul(dd, lax.add(lax.sub(pc(1.0), lax.exp(log_v3)), log_v3)))
    accept = lax.bitwise_and(lax.gt(v, pc(0.0)), lax.lt(log_u, bound))
    # the first accepted proposal: argmax of a bool picks the first True
    first = lax.argmax(lax.convert_element_type(accept, dtypes.int32), 0, dtypes.int32)
    chosen = lax.eq(lax.broadcasted_iota(dtypes.int32, pshape, 0), bc(first))
    picked = lax.select_n(lax.bitwise_and(chosen, accept), pc(0.0), log_v3)
    log_v = lax.reduce_sum(picked, (0,))  # log V = 0 (V = 1, x = 0) if no proposal was accepted
    log_boost = lax.div(lax.log1p(lax.neg(_uniform(key_boost, shape, dtype, 0.0, 1.0))), a)
    log_boost = lax.select_n(boost, c(0.0), log_boost)
    return lax.add(lax.add(lax.log(d), log_v), log_boost)


@_loggamma_sample.defjvp
def _loggamma_jvp(shape, dtype, primals, tangents):
    """d log(x) / da for a sample x with its quantile u = P(a, x) held fixed (implicit
    reparameterization, Figurnov et al. 2018, as JAX's gamma): dx/da = -(dP/da) / (dP/dx), which
    is `lax.random_gamma_grad`. Differentiating through the rejection sampler instead (a sample at
    fixed normal noise, accepted or not depending on `a`) gives a biased gradient.

    In log space, d log x / da = -(dP/da) exp(x + lgamma(a) - a log x), with log x the sample
    itself, so it holds where x underflows. There (x below the smallest normal float) it is the
    limit for x -> 0 of P = x^a e^-x / Gamma(a + 1) (1 + O(x)): (digamma(a + 1) - log x) / a,
    exact to O(x)."""
    key, a = primals
    _, ta = tangents
    log_x = _loggamma_sample(key, a, shape, dtype)
    c = lambda v: _full(shape, v, dtype)  # noqa: E731
    tiny = lax.lt(log_x, c(math.log(float(dtypes.finfo(dtype).tiny))))
    x = lax.exp(lax.select_n(tiny, log_x, c(0.0)))
    d_p_da = lax.igamma_grad_a(a, x)
    log_inv_xdensity = lax.sub(lax.add(x, lax.lgamma(a)), lax.mul(a, log_x))
    general = lax.neg(lax.mul(d_p_da, lax.exp(log_inv_xdensity)))
    limit = lax.div(lax.sub(lax.digamma(lax.add(a, c(1.0))), log_x), a)
    return log_x, lax.mul(ta, lax.select_n(tiny, general, limit))


def beta(key, a, b, shape=None, dtype=None):
    """Beta(a, b) samples as G_a / (G_a + G_b) from two gamma samples (in log space, as JAX;
    not bit-equal to JAX, see `gamma`). Example: `random.beta(key, 2.0, 3.0, (5,))`."""
    key = _check_key("beta", key)
    dtype = _float_dtype("beta", dtype)
    if shape is None:
        shape = broadcast_shapes(_shape_of(a), _shape_of(b))
    else:
        shape = _canonical_shape("beta", shape)
        _check_shape("beta", shape, _shape_of(a), _shape_of(b))
    a, b = _param(a, dtype, shape), _param(b, dtype, shape)
    key_a, key_b = _split2(key)
    log_ga, log_gb = _loggamma(key_a, a, shape, dtype), _loggamma(key_b, b, shape, dtype)
    log_max = lax.max(log_ga, log_gb)
    ga, gb = lax.exp(lax.sub(log_ga, log_max)), lax.exp(lax.sub(log_gb, log_max))
    return lax.div(ga, lax.add(ga, gb))


def dirichlet(key, alpha, shape=None, dtype=None):
    """Dirichlet(alpha) samples over the last axis of `alpha` (normalized gamma samples, computed
    as a softmax of log-gamma samples; not bit-equal to JAX, see `gamma`). The result has shape
    `shape + alpha.shape[-1:]`. Example: `random.dirichlet(key, jnp.array([1., 2., 3.]), (4,))`."""
    key = _check_key("dirichlet", key)
    dtype = _float_dtype("dirichlet", dtype)
    alpha_shape = _shape_of(alpha)
    if len(alpha_shape) < 1:
        raise ValueError(f"dirichlet requires alpha.ndim >= 1, got alpha.ndim == {len(alpha_shape)}")
    if shape is None:
        shape = alpha_shape[:-1]
    else:
        shape = _canonical_shape("dirichlet", shape)
        _check_shape("dirichlet", shape, alpha_shape[:-1])
    full_shape = (*shape, alpha_shape[-1])
    logs = _loggamma(key, _param(alpha, dtype, full_shape), full_shape, dtype)
    last = len(full_shape) - 1
    m = lax.broadcast_in_dim(lax.reduce_max(logs, (last,)), full_shape, tuple(range(last)))
    e = lax.exp(lax.sub(logs, m))
    return lax.div(e, lax.broadcast_in_dim(lax.reduce_sum(e, (last,)), full_shape, tuple(range(last))))


# ----- matrix samplers (need core.numpy.linalg) ---------------------------------------------

def _linalg(name, fn):
    f = getattr(getattr(jnp, "linalg", None), fn, None)
    if f is None:
        raise NotImplementedError(f"random.{name} needs core.numpy.linalg.{fn}, which is not available yet.")
    return f


def multivariate_normal(key, mean, cov, shape=None, dtype=None, method="cholesky"):
    """Samples of N(mean, cov): `mean + factor @ z` with `factor @ factor.T == cov` from a Cholesky,
    SVD or eigendecomposition (`method`; use 'svd' or 'eigh' for singular `cov`). Result shape:
    `shape + mean.shape[-1:]` (`shape` defaults to the broadcast batch shape of mean and cov).

    Example: `random.multivariate_normal(key, jnp.zeros(2), jnp.eye(2), (5,))`.
    """
    key = _check_key("multivariate_normal", key)
    if method not in ("svd", "eigh", "cholesky"):
        raise ValueError("method must be one of {'svd', 'eigh', 'cholesky'}")
    mean, cov = jnp.asarray(mean), jnp.asarray(cov)
    if dtype is None:
        dtype = dtypes.result_type(mean, cov)
        dtype = dtype if dtypes.is_inexact(dtype) else dtypes.default_float_dtype()
    dtype = _float_dtype("multivariate_normal", dtype)
    if mean.ndim < 1:
        raise ValueError(f"multivariate_normal requires mean.ndim >= 1, got mean.ndim == {mean.ndim}")
    if cov.ndim < 2:
        raise ValueError(f"multivariate_normal requires cov.ndim >= 2, got cov.ndim == {cov.ndim}")
    n = mean.shape[-1]
    if cov.shape[-2:] != (n, n):
        raise ValueError(f"multivariate_normal requires cov.shape == (..., n, n) for n={n}, but got "
                         f"cov.shape == {cov.shape}.")
    if shape is None:
        shape = broadcast_shapes(mean.shape[:-1], cov.shape[:-2])
    else:
        shape = _canonical_shape("multivariate_normal", shape)
        _check_shape("multivariate_normal", shape, mean.shape[:-1], cov.shape[:-2])
    mean = lax.convert_element_type(mean, dtype)
    cov = lax.convert_element_type(cov, dtype)
    if method == "svd":
        u, s, _ = _linalg("multivariate_normal", "svd")(cov)
        factor = jnp.multiply(u, jnp.sqrt(s)[..., None, :])
    elif method == "eigh":
        w, v = _linalg("multivariate_normal", "eigh")(cov)
        factor = jnp.multiply(v, jnp.sqrt(w)[..., None, :])
    else:
        factor = _linalg("multivariate_normal", "cholesky")(cov)
    z = _normal(key, (*shape, n), dtype)
    return jnp.add(mean, jnp.matmul(factor, z[..., None])[..., 0])


def orthogonal(key, n, shape=(), dtype=None, m=None):
    """A random orthogonal n x m matrix (Haar measure; semi-orthogonal if n != m): the Q factor of
    a normal matrix with the signs of R's diagonal folded in (Mezzadri, 2007). Result shape:
    `shape + (n, m)`. Example: `random.orthogonal(key, 3)`."""
    key = _check_key("orthogonal", key)
    dtype = _float_dtype("orthogonal", dtype)
    shape = _canonical_shape("orthogonal", shape)
    n = operator.index(n)
    m = n if m is None else operator.index(m)
    z = _normal(key, (*shape, max(n, m), min(n, m)), dtype)
    q, r = _linalg("orthogonal", "qr")(z)
    d = jnp.diagonal(r, axis1=-2, axis2=-1)
    x = jnp.multiply(q, jnp.sign(d)[..., None, :])
    return jnp.swapaxes(x, -1, -2) if n < m else x


# the samplers built on the ones above (their own module; they use this module's helpers)
from .random_distributions import *  # noqa: E402,F401,F403
from .random_distributions import __all__ as _distributions_all  # noqa: E402

__all__ = __all__ + list(_distributions_all)
