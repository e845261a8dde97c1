"""The fast Fourier transform primitive (JAX's `lax.fft`), lowered to `stablehlo.fft`.

The transform runs over the trailing `len(fft_lengths)` dimensions (one to three). XLA's inverse
transforms already divide by the number of points, as numpy's default ("backward") norm does.
"""
import enum

import numpy as np

from .. import dtypes
from ..interpreters import batching, lowering
from ..interpreters.lowering import i64_array
from ._base import COMPLEX, FLOAT, aval_of, check_dtype_accepted, deflinear, standard_primitive

__all__ = ["fft", "FftType"]


class FftType(enum.Enum):
    """The four transforms: complex->complex forward/inverse, real->complex, complex->real."""
    FFT = "FFT"
    IFFT = "IFFT"
    RFFT = "RFFT"
    IRFFT = "IRFFT"


def _complex_of(dtype):
    return np.dtype(np.complex128) if np.dtype(dtype) == np.float64 else np.dtype(np.complex64)


def fft(x, fft_type, fft_lengths):
    """Fourier transform of `x` over its trailing `len(fft_lengths)` dimensions (1 to 3).

    `fft_type` is an `FftType` or its name: "FFT" and "IFFT" map complex to complex, "RFFT" real
    to complex (last dimension n -> n // 2 + 1), "IRFFT" complex to real (last dimension
    n // 2 + 1 -> n, with n = fft_lengths[-1]). No promotion: use `core.numpy.fft` for that.
    Example: `lax.fft(jnp.ones(4, jnp.complex64), "FFT", (4,))` is `[4, 0, 0, 0]`.
    """
    if isinstance(fft_type, str):
        try:
            fft_type = FftType[fft_type.upper()]
        except KeyError:
            raise ValueError(f"fft: unknown fft_type {fft_type!r}; expected one of FFT, IFFT, RFFT, IRFFT.") from None
    elif not isinstance(fft_type, FftType):
        raise TypeError(f"fft: fft_type must be an FftType or a string, got {fft_type!r}.")
    fft_lengths = tuple(int(n) for n in np.atleast_1d(fft_lengths))
    return fft_p.bind(x, fft_type=fft_type.value, fft_lengths=fft_lengths)


def _fft_shape_rule(x, *, fft_type, fft_lengths):
    k = len(fft_lengths)
    if not 1 <= k <= 3:
        raise ValueError(f"fft: fft_lengths must name 1 to 3 dimensions, got {fft_lengths}.")
    if x.ndim < k:
        raise ValueError(f"fft: an operand of shape {x.shape} has fewer than len(fft_lengths) = {k} dimensions.")
    trailing = x.shape[x.ndim - k:]
    if fft_type == "IRFFT":
        expected = fft_lengths[:-1] + (fft_lengths[-1] // 2 + 1,)
    else:
        expected = fft_lengths
    if trailing != expected:
        raise ValueError(f"fft: {fft_type} with fft_lengths {fft_lengths} needs trailing dimensions {expected}, "
                         f"got operand shape {x.shape}.")
    if fft_type == "RFFT":
        return x.shape[:-1] + (fft_lengths[-1] // 2 + 1,)
    if fft_type == "IRFFT":
        return x.shape[:-1] + (fft_lengths[-1],)
    return x.shape


def _fft_dtype_rule(x, *, fft_type, fft_lengths):
    if fft_type == "RFFT":
        check_dtype_accepted("fft (RFFT)", x.dtype, FLOAT)
        if x.dtype not in (np.float32, np.float64):
            raise TypeError(f"fft (RFFT) requires float32 or float64, got {dtypes.short_name(x.dtype)}.")
        return _complex_of(x.dtype)
    check_dtype_accepted(f"fft ({fft_type})", x.dtype, COMPLEX)
    if fft_type == "IRFFT":
        return dtypes.finfo(x.dtype).dtype
    return x.dtype


def _fft_lowering(ctx, x, *, fft_type, fft_lengths):
    out = ctx.avals_out[0]
    if out.size == 0 or ctx.avals_in[0].size == 0:
        # nothing to transform (XLA's fft refuses zero-length transforms)
        return lowering.full_like(ctx.b, 0, out)
    return ctx.b.op("stablehlo.fft", [x], [out], {"fft_type": f"#stablehlo<fft_type {fft_type}>",
                                                  "fft_length": i64_array(fft_lengths)})


fft_p = standard_primitive("fft", _fft_shape_rule, _fft_dtype_rule)
lowering.register(fft_p, _fft_lowering)


# Differentiation: fft is linear. Transposes follow JAX's convention (no conjugation for
# C-linear maps; for a real <-> complex map the cotangent of a complex value z = u + iv is
# dL/du - i dL/dv, so a real input's cotangent is the real part of the plain transpose):
#  - FFT, IFFT: the DFT matrix exp(-+2 pi i jk / n) (and its 1/n-scaled inverse) is symmetric,
#    so each is its own transpose.
#  - RFFT = (keep the first n // 2 + 1 bins of the last axis) . FFT . (real -> complex): its
#    transpose is real(FFT(ct zero-padded back to n bins)).
#  - IRFFT reads each stored bin k of the last axis also as its Hermitian mirror n - k, except
#    bin 0 and (n even) bin n / 2: per output y = (1/N) sum w_k Re(X_k e^{+i theta}) with
#    weight w_k = 2 for mirrored bins, 1 otherwise. Its transpose is w / N * conj(RFFT(ct)).

def _fft_transpose(ct, x, *, fft_type, fft_lengths):
    from .elementwise import conj, mul, real
    from .structural import pad
    if fft_type in ("FFT", "IFFT"):
        return [fft_p.bind(ct, fft_type=fft_type, fft_lengths=fft_lengths)]
    n = fft_lengths[-1]
    if fft_type == "RFFT":
        ct_shape = aval_of(ct).shape
        padding = [(0, 0, 0)] * (len(ct_shape) - 1) + [(0, n - ct_shape[-1], 0)]
        full = fft_p.bind(pad(ct, 0, padding), fft_type="FFT", fft_lengths=fft_lengths)
        return [real(full)]
    spectrum = fft_p.bind(ct, fft_type="RFFT", fft_lengths=fft_lengths)
    spec_aval = aval_of(spectrum)
    weights = np.full(n // 2 + 1, 2.0)
    weights[0] = 1.0
    if n % 2 == 0:
        weights[-1] = 1.0
    weights = (weights / np.prod(fft_lengths)).astype(spec_aval.dtype)
    weights = weights.reshape((1,) * (spec_aval.ndim - 1) + weights.shape)
    return [mul(conj(spectrum), weights)]


deflinear(fft_p, _fft_transpose)


def _fft_batch_rule(vals, dims, *, fft_type, fft_lengths):
    # The transform reads the trailing len(fft_lengths) axes and maps over the leading ones: a batch
    # axis among the leading ones stays put, one among the transformed axes moves to the front.
    (x,), (d,) = vals, dims
    if d >= aval_of(x).ndim - len(fft_lengths):
        x, d = batching.moveaxis(x, d, 0), 0
    return fft_p.bind(x, fft_type=fft_type, fft_lengths=fft_lengths), d


batching.batching_rules[fft_p] = _fft_batch_rule
