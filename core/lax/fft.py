"""The fast Fourier transform primitive (JAX's `lax.fft`), lowered to `stablehlo.fft`.

The transform runs over the trailing `len(fft_lengths)` dimensions (one to three). XLA's inverse
transforms already divide by the number of points, as numpy's default ("backward") norm does.
"""
import enum

import numpy as np

from .. import dtypes
from ..interpreters import lowering
from ..interpreters.lowering import i64_array
from ._base import COMPLEX, FLOAT, check_dtype_accepted, standard_primitive

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
