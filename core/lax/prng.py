"""The Threefry-2x32 counter-based hash, the primitive under `core.random`.

Threefry-2x32 with 20 rounds (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC 2011;
the Random123 library) maps a 64-bit key (k1, k2) and a 64-bit counter (x1, x2) to 64 pseudo-random
bits (y1, y2). It is the hash JAX's default PRNG uses, and ours is bit-for-bit the same, so keys and
samples agree with JAX's.
"""
import numpy as np

from .. import dtypes
from ..avals import ShapedArray
from ..interpreters import ad, batching, lowering
from ..interpreters.lowering import i64_array
from ..trace import EvalTrace, Primitive
from ..trace import _state as _trace_state
from ._base import (FLOAT_OR_COMPLEX, aval_of, defjvp, defnondiff, elementwise_args, naryop, standard_primitive,
                    unbroadcast)

__all__ = ["threefry2x32"]  # and `mul_add`, used by core.random (not a JAX lax name)
# `random_consume_p` and `random_clone_p` (below) exist for the key-reuse checker (core/key_reuse.py).

# Rotation distances of the even and odd groups of four rounds, and the key-schedule parity
# constant, from the Threefry specification (Random123's threefry.h).
_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
_KS_PARITY = 0x1BD11BDA


def threefry2x32(k1, k2, x1, x2):
    """Apply the Threefry-2x32 (20 rounds) hash: returns the pair of uint32 arrays `(y1, y2)`.

    All four operands are uint32 arrays; they broadcast against each other as NumPy arrays do
    (typically the key words are scalars and the counters are arrays). Known answer (Random123):
    `lax.threefry2x32(np.uint32(0), np.uint32(0), np.uint32(0), np.uint32(0))` is
    `(0x6b200159, 0x99ba4efe)`.
    """
    return threefry2x32_p.bind(k1, k2, x1, x2)


def _threefry2x32_abstract_eval(k1, k2, x1, x2):
    avals = (k1, k2, x1, x2)
    bad = [a.dtype for a in avals if a.dtype != dtypes.uint32]
    if bad:
        raise TypeError("threefry2x32 requires uint32 arguments, got dtypes "
                        f"{[dtypes.short_name(a.dtype) for a in avals]}.")
    shapes = [a.shape for a in avals]
    rank = max(len(s) for s in shapes)
    out = []
    for dims in zip(*[(1,) * (rank - len(s)) + s for s in shapes]):
        non_one = {d for d in dims if d != 1}
        if len(non_one) > 1:
            raise TypeError("threefry2x32 got incompatible shapes for broadcasting: "
                            f"{', '.join(map(str, shapes))}.")
        out.append(non_one.pop() if non_one else 1)
    aval = ShapedArray(tuple(out), dtypes.uint32)
    return [aval, aval]


def _threefry2x32_lowering(ctx, k1, k2, x1, x2):
    b = ctx.b
    out = ctx.avals_out[0]
    rank = len(out.shape)

    def bcast(v, aval):
        if aval.shape == out.shape:
            return v
        return b.op("stablehlo.broadcast_in_dim", [v], [out],
                    {"broadcast_dimensions": i64_array(range(rank - aval.ndim, rank))})

    k1, k2, x1, x2 = (bcast(v, a) for v, a in zip((k1, k2, x1, x2), ctx.avals_in, strict=True))
    consts = {}

    def const(c):
        if c not in consts:
            consts[c] = lowering.full_like(b, np.uint32(c), out)
        return consts[c]

    def add(u, v):
        return b.op("stablehlo.add", [u, v], [out])

    def xor(u, v):
        return b.op("stablehlo.xor", [u, v], [out])

    def rotl(v, d):
        hi = b.op("stablehlo.shift_left", [v, const(d)], [out])
        lo = b.op("stablehlo.shift_right_logical", [v, const(32 - d)], [out])
        return b.op("stablehlo.or", [hi, lo], [out])

    ks = [k1, k2, xor(xor(k1, k2), const(_KS_PARITY))]
    y1, y2 = add(x1, ks[0]), add(x2, ks[1])
    for i in range(5):
        for r in _ROTATIONS[i % 2]:
            y1 = add(y1, y2)
            y2 = xor(y1, rotl(y2, r))
        # key injection i+1 uses key words (i+1) % 3 and (i+2) % 3 plus the injection counter
        y1 = add(y1, ks[(i + 1) % 3])
        y2 = add(add(y2, ks[(i + 2) % 3]), const(i + 1))
    return [y1, y2]


threefry2x32_p = standard_primitive("threefry2x32", None, None, multiple_results=True)
threefry2x32_p.def_abstract_eval(_threefry2x32_abstract_eval)
lowering.register(threefry2x32_p, _threefry2x32_lowering)
defnondiff(threefry2x32_p)  # random bits: uint32 outputs carry no derivative


def _threefry2x32_batch_rule(vals, dims):
    # Elementwise with NumPy's rank-promoting broadcasting, which aligns operands from the right:
    # the batch axis must sit at the same position of every operand once each is padded on the
    # left to the common rank (`defbroadcasting` assumes equal ranks, so it does not fit).
    from .structural import reshape
    ranks = [aval_of(x).ndim - (d is not None) for x, d in zip(vals, dims, strict=True)]
    rank = max(ranks)
    size = batching.batch_size(vals, dims)
    # keep the batch axis of a full-rank batched operand where it is (no transpose in the usual case)
    out_dim = next((d for d, r in zip(dims, ranks) if d is not None and r == rank), 0)
    args = []
    for x, d, r in zip(vals, dims, ranks, strict=True):
        shape = list(aval_of(x).shape)
        if d is None:
            if r:  # a scalar broadcasts anywhere; others get ones on the left and at out_dim
                padded = [1] * (rank - r) + shape
                padded.insert(out_dim, 1)
                x = reshape(x, tuple(padded))
        else:
            if r < rank:
                x = batching.moveaxis(x, d, 0)
                lane = list(aval_of(x).shape[1:])
                x, d = reshape(x, tuple([size] + [1] * (rank - r) + lane)), 0
            x = batching.moveaxis(x, d, out_dim)
        args.append(x)
    outs = threefry2x32_p.bind(*args)
    return outs, [out_dim, out_dim]


batching.batching_rules[threefry2x32_p] = _threefry2x32_batch_rule


# ----- mul_add -------------------------------------------------------------------------------

def mul_add(x, y, z):
    """Elementwise `x * y + z` compiled as one program.

    Inside one program XLA contracts a multiply feeding an add into a fused multiply-add (one
    rounding), as it does in a jitted JAX program. `core.random` scales uniform samples with this
    so that eager samples equal JAX's bit for bit (two separate eager ops would round twice).
    Example: `mul_add(u, maxval - minval, minval)`.
    """
    return mul_add_p.bind(*elementwise_args(x, y, z))


def _mul_add_lowering(ctx, x, y, z):
    out = ctx.avals_out[0]
    x, y, z = (lowering.broadcast_to(ctx.b, v, a, out.update(dtype=a.dtype))
               for v, a in zip((x, y, z), ctx.avals_in, strict=True))
    return ctx.b.op("stablehlo.add", [ctx.b.op("stablehlo.multiply", [x, y], [out]), z], [out])


mul_add_p = naryop("mul_add", FLOAT_OR_COMPLEX)
lowering.register(mul_add_p, _mul_add_lowering)


def _mul(x, y):
    from .elementwise import mul
    return mul(x, y)


# Bilinear in (x, y), linear in z: d(x*y + z) = tx*y + x*ty + tz, each term linear in its tangent.
defjvp(mul_add_p,
       lambda tx, x, y, z: _mul(tx, y),
       lambda ty, x, y, z: _mul(x, ty),
       lambda tz, x, y, z: tz)


def _mul_add_transpose(ct, x, y, z):
    # Linear in z, and in x or y while the other factor is known (no conjugation, as lax.mul).
    if ad.is_undefined(x) and ad.is_undefined(y):
        raise ValueError("mul_add is bilinear in its first two operands: it cannot be transposed in both "
                         "at once (the function is not linear).")
    ct_x = unbroadcast(_mul(ct, y), x.aval) if ad.is_undefined(x) else None
    ct_y = unbroadcast(_mul(x, ct), y.aval) if ad.is_undefined(y) else None
    ct_z = unbroadcast(ct, z.aval) if ad.is_undefined(z) else None
    return [ct_x, ct_y, ct_z]


ad.transpose_rules[mul_add_p] = _mul_add_transpose


# ----- key-reuse markers -----------------------------------------------------------------------
# Bound by core.random only while `debug_key_reuse` is on (core/key_reuse.py reads them); without
# the option no program contains them. Both are the identity on the key's data.

class _KeyConsumePrimitive(Primitive):
    """`bind` on a concrete key marks that Array consumed at once (no program runs); under a trace
    the consumption is recorded as an equation for the static analysis of the staged program."""

    def bind(self, key, **params):
        if _trace_state.trace.__class__ is EvalTrace:
            from ..key_reuse import consume_concrete
            return consume_concrete(key, params["name"], params["site"], params["shared"])
        return _trace_state.trace.process_primitive(self, (key,), params)


# `random_consume[name, site, shared](key) -> key`: `name` (e.g. "random.normal") consumes `key` at
# `site`; `shared` consumptions (fold_in's) may meet each other.
random_consume_p = _KeyConsumePrimitive("random_consume")
random_consume_p.def_abstract_eval(lambda key, **_: key)
lowering.register(random_consume_p, lambda ctx, key, **_: key)

# `random_clone(key) -> key`: the same data as a new key that may be consumed on its own.
random_clone_p = Primitive("random_clone")
random_clone_p.def_abstract_eval(lambda key: key)
lowering.register(random_clone_p, lambda ctx, key: key)

defnondiff(random_consume_p, random_clone_p)  # keys are integers: no derivative flows through


def _key_marker_batch_rule(prim, vals, dims, **params):
    # the marked value must keep its trailing axis of 2 key words: move a batch axis found there
    x, d = vals[0], dims[0]
    if d == aval_of(x).ndim - 1:
        x, d = batching.moveaxis(x, d, 0), 0
    return prim.bind(x, **params), d


batching.batching_rules[random_consume_p] = lambda vals, dims, **p: _key_marker_batch_rule(random_consume_p, vals,
                                                                                             dims, **p)
batching.batching_rules[random_clone_p] = lambda vals, dims: _key_marker_batch_rule(random_clone_p, vals, dims)
