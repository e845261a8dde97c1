"""`core.numpy.fft`: NumPy's discrete Fourier transforms over the `lax.fft` primitive.

Every transform moves its axes to the end (a transpose), pads or crops them to the requested
lengths, runs `lax.fft` (up to three axes at a time) and moves them back. As in JAX, real inputs
promote to complex64 (complex128 with x64 on) rather than NumPy's complex128, and integers to
the default float type first.

Normalization (`norm`): "backward" (default) scales the inverse by 1/n, "ortho" both directions by
1/sqrt(n), "forward" the forward transform by 1/n.
"""
import math

import numpy as np

from .. import dtypes
from .. import lax
from ..lax.fft import FftType
from ._util import asarray_operand, canonicalize_axis, check_arraylike

__all__ = ["fft", "ifft", "rfft", "irfft", "fft2", "ifft2", "rfft2", "irfft2", "fftn", "ifftn", "rfftn",
           "irfftn", "hfft", "ihfft", "fftfreq", "rfftfreq", "fftshift", "ifftshift"]

_NORMS = (None, "backward", "ortho", "forward")


# ----- machinery --------------------------------------------------------------------------------

def _to_dtype(a, kind):
    """`a` as the complex ("c") or real float ("f") dtype the transform needs: float16/bfloat16
    widen to float32, integers and bools to the default float type (float64 with x64)."""
    dt = a.dtype
    if dtypes.is_complex(dt):
        if kind == "f":
            raise TypeError(f"the rfft family requires real input, got dtype {dt.name}. Use fft for complex input.")
        return a
    if dt in (np.float32, np.float64):
        real = dt
    else:
        real = np.dtype(np.float32) if dtypes.is_float(dt) else dtypes.default_float_dtype()
    target = real if kind == "f" else np.dtype(np.complex64 if real == np.float32 else np.complex128)
    return lax.convert_element_type(a, target)


def _resize(a, axis, size):
    """Crop or zero-pad axis `axis` of `a` to `size` elements (NumPy's `n`/`s` semantics)."""
    current = a.shape[axis]
    if size == current:
        return a
    if size < current:
        limits = tuple(size if i == axis else d for i, d in enumerate(a.shape))
        return lax.slice(a, (0,) * a.ndim, limits)
    config = [(0, size - current if i == axis else 0, 0) for i in range(a.ndim)]
    return lax.pad(a, lax.convert_element_type(0, a.dtype), config)


def _scale(a, factor):
    if factor == 1:
        return a
    return lax.mul(a, lax.full_like(a, factor))


def _check_norm(norm):
    if norm not in _NORMS:
        raise ValueError(f'Invalid norm value {norm!r}; should be "backward", "ortho" or "forward".')


def _norm_factor(norm, n, inverse):
    """The factor applied after XLA's transform (whose inverse already divides by n)."""
    if norm in (None, "backward"):
        return 1
    if norm == "ortho":
        return math.sqrt(n) if inverse else 1 / math.sqrt(n)
    return n if inverse else 1 / n  # "forward"


def _transform_axes(a, fft_type, axes, lengths):
    """Run `lax.fft` over `axes` (moved last, in order) with the given output `lengths`."""
    nd = a.ndim
    rest = [i for i in range(nd) if i not in axes]
    perm = tuple(rest) + tuple(axes)
    moved = lax.transpose(a, perm) if perm != tuple(range(nd)) else a
    out = lax.fft(moved, fft_type, tuple(lengths))
    inverse_perm = tuple(int(i) for i in np.argsort(perm))
    return lax.transpose(out, inverse_perm) if perm != tuple(range(nd)) else out


def _fftn(name, a, s, axes, norm, fft_type):
    check_arraylike(name, a)
    _check_norm(norm)
    a = asarray_operand(a)
    if axes is None:
        axes = tuple(range(a.ndim)) if s is None else tuple(range(a.ndim - len(s), a.ndim))
    else:
        axes = tuple(canonicalize_axis(ax, a.ndim, name) for ax in np.atleast_1d(axes))
    if len(set(axes)) != len(axes):
        raise ValueError(f"{name} does not support repeated axes, got axes {axes}.")
    if s is not None:
        s = tuple(int(n) for n in np.atleast_1d(s))
        if len(s) != len(axes):
            raise ValueError(f"{name}: shape s {s} and axes {axes} must have the same length.")
    real_in = fft_type == FftType.RFFT
    real_out = fft_type == FftType.IRFFT
    a = _to_dtype(a, "f" if real_in else "c")
    if not axes:
        return a
    if s is None:
        s = tuple(a.shape[ax] for ax in axes)
        if real_out:
            s = s[:-1] + (2 * (a.shape[axes[-1]] - 1),)
    if any(n < 1 for n in s):
        raise ValueError(f"{name}: invalid number of data points {s}; every length must be at least 1.")
    for ax, n in zip(axes, s, strict=True):
        a = _resize(a, ax, n // 2 + 1 if real_out and ax == axes[-1] else n)
    inverse = fft_type in (FftType.IFFT, FftType.IRFFT)
    if real_in or real_out:
        if len(axes) > 3:
            raise ValueError(f"{name} supports at most 3 axes, got {len(axes)}.")
        out = _transform_axes(a, fft_type, axes, s)
    else:
        out = a
        # XLA transforms at most three dimensions at once; separable, so chain groups
        for start in range(0, len(axes), 3):
            out = _transform_axes(out, fft_type, axes[start:start + 3], s[start:start + 3])
    return _scale(out, _norm_factor(norm, math.prod(s), inverse))


def _one_axis(name, fft_type):
    def fn(a, n=None, axis=-1, norm=None):
        return _fftn(name, a, None if n is None else (n,), (axis,), norm, fft_type)
    fn.__name__ = fn.__qualname__ = name
    return fn


def _two_axes(name, fft_type):
    def fn(a, s=None, axes=(-2, -1), norm=None):
        return _fftn(name, a, s, axes, norm, fft_type)
    fn.__name__ = fn.__qualname__ = name
    return fn


def _n_axes(name, fft_type):
    def fn(a, s=None, axes=None, norm=None):
        return _fftn(name, a, s, axes, norm, fft_type)
    fn.__name__ = fn.__qualname__ = name
    return fn


# ----- the transforms ----------------------------------------------------------------------------

fft = _one_axis("fft", FftType.FFT)
fft.__doc__ = """One-dimensional discrete Fourier transform along `axis`, as `numpy.fft.fft`.

`n` crops or zero-pads the axis first. Real input promotes to complex64 (complex128 with x64).
Example: `jnp.fft.fft(jnp.array([1., 0., 0., 0.]))` is `[1, 1, 1, 1]` (complex64)."""

ifft = _one_axis("ifft", FftType.IFFT)
ifft.__doc__ = """Inverse of `fft`, as `numpy.fft.ifft`: `ifft(fft(x))` is x (to rounding).

Example: `jnp.fft.ifft(jnp.ones(4))` is `[1, 0, 0, 0]`."""

rfft = _one_axis("rfft", FftType.RFFT)
rfft.__doc__ = """Fourier transform of real input, keeping the n // 2 + 1 non-negative frequencies.

Example: `jnp.fft.rfft(jnp.ones(4))` is `[4, 0, 0]` (complex64)."""

irfft = _one_axis("irfft", FftType.IRFFT)
irfft.__doc__ = """Inverse of `rfft`: real output of length `n` (default 2 * (m - 1) for m inputs).

Example: `jnp.fft.irfft(jnp.fft.rfft(x), n=x.shape[-1])` is x for real x."""

fft2 = _two_axes("fft2", FftType.FFT)
fft2.__doc__ = """Two-dimensional `fft` over `axes` (default the last two). Example: `jnp.fft.fft2(jnp.eye(2))`."""

ifft2 = _two_axes("ifft2", FftType.IFFT)
ifft2.__doc__ = """Inverse of `fft2`. Example: `jnp.fft.ifft2(jnp.fft.fft2(x))` is x."""

rfft2 = _two_axes("rfft2", FftType.RFFT)
rfft2.__doc__ = """Two-dimensional `rfft` (the last axis is halved). Example: `jnp.fft.rfft2(jnp.ones((2, 4)))`."""

irfft2 = _two_axes("irfft2", FftType.IRFFT)
irfft2.__doc__ = """Inverse of `rfft2`. Example: `jnp.fft.irfft2(jnp.fft.rfft2(x), s=x.shape)` is x."""

fftn = _n_axes("fftn", FftType.FFT)
fftn.__doc__ = """N-dimensional `fft` over `axes` (default all, or the last len(s)).

Example: `jnp.fft.fftn(jnp.ones((2, 2, 2)))` has 8 at the origin and zeros elsewhere."""

ifftn = _n_axes("ifftn", FftType.IFFT)
ifftn.__doc__ = """Inverse of `fftn`. Example: `jnp.fft.ifftn(jnp.fft.fftn(x))` is x."""

rfftn = _n_axes("rfftn", FftType.RFFT)
rfftn.__doc__ = """N-dimensional `rfft` (at most 3 axes; the last is halved).

Example: `jnp.fft.rfftn(jnp.ones((2, 4)))` has shape (2, 3)."""

irfftn = _n_axes("irfftn", FftType.IRFFT)
irfftn.__doc__ = """Inverse of `rfftn`. Example: `jnp.fft.irfftn(jnp.fft.rfftn(x), s=x.shape)` is x."""


def hfft(a, n=None, axis=-1, norm=None):
    """FFT of a signal with Hermitian symmetry (real spectrum), as `numpy.fft.hfft`.

    `a` holds the first half of the signal; the result is real with `n` points (default
    2 * (m - 1)). It equals `irfft(conj(a), n) * n` under the default norm.
    Example: `jnp.fft.hfft(jnp.array([1., 0., 0.]))` is `[1, 1, 1, 1]`.
    """
    check_arraylike("hfft", a)
    _check_norm(norm)
    a = _to_dtype(asarray_operand(a), "c")
    m = a.shape[canonicalize_axis(axis, a.ndim, "hfft")]
    n_out = 2 * (m - 1) if n is None else int(n)
    # hfft is the forward transform of the full Hermitian signal: swap the direction of irfft's norm
    inverse_norm = {None: "forward", "backward": "forward", "ortho": "ortho", "forward": "backward"}[norm]
    return irfft(lax.conj(a), n_out, axis, inverse_norm)


def ihfft(a, n=None, axis=-1, norm=None):
    """Inverse of `hfft`: `conj(rfft(a, n)) / n` under the default norm, as `numpy.fft.ihfft`.

    Example: `jnp.fft.ihfft(jnp.array([1., 1., 1., 1.]))` is `[1, 0, 0]`.
    """
    check_arraylike("ihfft", a)
    _check_norm(norm)
    inverse_norm = {None: "forward", "backward": "forward", "ortho": "ortho", "forward": "backward"}[norm]
    return lax.conj(rfft(a, n, axis, inverse_norm))


# ----- frequencies and shifts ---------------------------------------------------------------------

def _freq_array(values, d, dtype):
    from .creation import asarray
    dtype = dtypes.default_float_dtype() if dtype is None else dtypes.canonicalize_dtype(dtype)
    if isinstance(d, (int, float, np.integer, np.floating)):
        return asarray(np.asarray(values, np.float64) / float(d), dtype=dtype)
    out = asarray(np.asarray(values, np.float64), dtype=dtype)
    d = lax.convert_element_type(asarray_operand(d), dtype)
    return lax.div(out, lax.broadcast_in_dim(d, out.shape, ()))


def fftfreq(n, d=1.0, *, dtype=None, device=None):
    """Sample frequencies of an `n`-point `fft` with sample spacing `d`, as `numpy.fft.fftfreq`.

    Returns `[0, 1, ..., (n-1)//2, -(n//2), ..., -1] / (d * n)` in the default float type.
    Example: `jnp.fft.fftfreq(4)` is `[0., 0.25, -0.5, -0.25]`.
    """
    del device
    n = int(n)
    if n < 1:
        raise ValueError(f"fftfreq: n must be a positive integer, got {n}.")
    k = np.concatenate([np.arange(0, (n - 1) // 2 + 1), np.arange(-(n // 2), 0)])
    return _freq_array(k / n, d, dtype)


def rfftfreq(n, d=1.0, *, dtype=None, device=None):
    """Sample frequencies of an `n`-point `rfft`: `[0, 1, ..., n//2] / (d * n)`.

    Example: `jnp.fft.rfftfreq(4)` is `[0., 0.25, 0.5]`.
    """
    del device
    n = int(n)
    if n < 1:
        raise ValueError(f"rfftfreq: n must be a positive integer, got {n}.")
    return _freq_array(np.arange(0, n // 2 + 1) / n, d, dtype)


def _roll(x, shift, axis):
    n = x.shape[axis]
    if n == 0:
        return x
    shift %= n
    if shift == 0:
        return x
    limits = list(x.shape)
    limits[axis] = n - shift
    head = lax.slice(x, (0,) * x.ndim, tuple(limits))
    starts = [0] * x.ndim
    starts[axis] = n - shift
    tail = lax.slice(x, tuple(starts), x.shape)
    return lax.concatenate([tail, head], axis)


def _shift(name, x, axes, sign):
    check_arraylike(name, x)
    x = asarray_operand(x)
    if axes is None:
        axes = tuple(range(x.ndim))
    else:
        axes = tuple(canonicalize_axis(ax, x.ndim, name) for ax in np.atleast_1d(axes))
    for ax in axes:
        x = _roll(x, sign * (x.shape[ax] // 2), ax)
    return x


def fftshift(x, axes=None):
    """Move the zero frequency to the center (a roll by n // 2 along each axis in `axes`).

    Example: `jnp.fft.fftshift(jnp.fft.fftfreq(4))` is `[-0.5, -0.25, 0., 0.25]`.
    """
    return _shift("fftshift", x, axes, 1)


def ifftshift(x, axes=None):
    """Inverse of `fftshift` (differs from it for odd lengths).

    Example: `jnp.fft.ifftshift(jnp.fft.fftshift(x))` is x.
    """
    return _shift("ifftshift", x, axes, -1)
