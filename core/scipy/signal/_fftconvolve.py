"""`fftconvolve`: N-dimensional convolution as a product of discrete Fourier transforms.

Both inputs are zero-padded to the full output length s1 + s2 - 1 along each convolved axis, so
the transforms' circular convolution is the linear one; real inputs use rfftn/irfftn (half the
spectrum), complex ones fftn/ifftn. The other axes are a batch: as in SciPy, they broadcast (each
equal, or 1 in one input). The modes crop the full result as SciPy does.
"""
import numpy as np

from ... import dtypes
from ... import lax
from ... import numpy as jnp
from ...numpy._util import canonicalize_axis, check_arraylike, promote_dtypes_inexact
from ._util import short

_MODES = ("full", "same", "valid")


def _convolved_axes(axes, ndim):
    if axes is None:
        return tuple(range(ndim))
    axes = tuple(canonicalize_axis(a, ndim, "fftconvolve") for a in np.atleast_1d(np.asarray(axes)).tolist())
    if len(set(axes)) != len(axes):
        raise ValueError(f"fftconvolve: axes must be distinct; got {axes}.")
    return axes


def _transform_product(in1, in2, axes, lengths):
    """The linear convolution over `axes` (full lengths `lengths`) as ifft(fft(in1) fft(in2))."""
    if dtypes.is_complex(in1.dtype):
        forward, inverse = jnp.fft.fftn, jnp.fft.ifftn
    elif len(axes) <= 3:
        forward, inverse = jnp.fft.rfftn, jnp.fft.irfftn
    else:  # the real transforms go up to three axes: take the real part of the complex one
        return jnp.real(_transform_product(lax.complex(in1, jnp.zeros_like(in1)), lax.complex(in2, jnp.zeros_like(in2)),
                                           axes, lengths))
    return inverse(forward(in1, lengths, axes) * forward(in2, lengths, axes), lengths, axes)


def fftconvolve(in1, in2, mode="full", axes=None):
    """The N-dimensional convolution of `in1` and `in2` through FFTs, as
    `scipy.signal.fftconvolve`: over `axes` (default all), in mode 'full', 'same' (in1's shape,
    centred) or 'valid' (where one input fully overlaps the other); the other axes broadcast.
    Integers are promoted to the default float dtype. For long inputs this is much cheaper than
    the direct `convolve`; the values agree up to rounding.

    Example:
        >>> x, y = jnp.array([1.0, 2.0, 3.0, 2.0, 1.0]), jnp.array([1.0, 1.0, 1.0])
        >>> core.scipy.signal.fftconvolve(x, y).round(4)
        Array([1., 3., 6., 7., 6., 3., 1.], dtype=float32)
        >>> core.scipy.signal.fftconvolve(x, y, mode="valid").round(4)
        Array([6., 7., 6.], dtype=float32)
    """
    check_arraylike("fftconvolve", in1, in2)
    if mode not in _MODES:
        raise ValueError(f"fftconvolve: `mode` must be one of {_MODES}; got {mode!r}.")
    in1, in2 = promote_dtypes_inexact(jnp.asarray(in1), jnp.asarray(in2))
    if in1.ndim != in2.ndim:
        raise ValueError(f"fftconvolve: in1 and in2 must have the same number of dimensions; got {short(in1)} and "
                         f"{short(in2)}.")
    if in1.ndim == 0:
        return in1 * in2
    if in1.size == 0 or in2.size == 0:
        raise ValueError(f"fftconvolve: inputs cannot be empty; got {short(in1)} and {short(in2)}.")
    if axes is not None and np.size(axes) == 0:
        raise ValueError("fftconvolve: axes, when given, cannot be empty.")
    # along an axis where one input has a single sample the convolution is a (broadcast) product:
    # SciPy treats such axes as batch axes, in every mode, and so do we
    axes = tuple(a for a in _convolved_axes(axes, in1.ndim) if 1 not in (in1.shape[a], in2.shape[a]))
    for ax in range(in1.ndim):
        if ax not in axes and in1.shape[ax] != in2.shape[ax] and 1 not in (in1.shape[ax], in2.shape[ax]):
            raise ValueError(f"fftconvolve: axis {ax} is not convolved (axes={axes}), so in1 and in2 must have equal "
                             f"sizes there, or size 1 to broadcast; got {short(in1)} and {short(in2)}.")
    s1, s2 = in1.shape, in2.shape
    if mode == "valid" and not all(s1[a] >= s2[a] for a in axes):
        if not all(s1[a] <= s2[a] for a in axes):
            raise ValueError(f"fftconvolve: in 'valid' mode one input must be at least as large as the other along "
                             f"every convolved axis {axes}; got {short(in1)} and {short(in2)}.")
        in1, in2, s1, s2 = in2, in1, s2, s1  # the larger one slides under the smaller, as in SciPy
    lengths = [s1[a] + s2[a] - 1 for a in axes]
    if not axes:
        full = in1 * in2
    else:
        full = _transform_product(in1, in2, axes, lengths)
    if mode == "full":
        return full
    # 'same' keeps in1's (original) shape on every axis, as SciPy's does; 'valid' the overlaps
    target = tuple(s1) if mode == "same" else tuple(s1[a] - s2[a] + 1 if a in axes else full.shape[a]
                                            for a in range(full.ndim))
    starts = [(f - t) // 2 for f, t in zip(full.shape, target)]
    return lax.slice(full, starts, [st + t for st, t in zip(starts, target)])
