"""Direct N-dimensional convolution and cross-correlation as `scipy.signal` (and
`jax.scipy.signal`) have them, each one `lax.conv_general_dilated`.

Modes are SciPy's: 'full' (every overlap), 'same' (the centre of 'full', of in1's shape) and
'valid' (full overlaps only). As in SciPy, the larger input slides over the smaller one whatever
their order, so one input must be at least as large as the other in every dimension. As in JAX,
integer inputs stay integer and empty inputs are refused. Every `method` ('auto', 'direct',
'fft') runs the direct convolution (XLA's), so 'fft' gives the same values up to rounding;
`fftconvolve` (in `_fftconvolve`) is the transform-based one.
"""
import numpy as np

from ... import dtypes
from ... import lax
from ... import numpy as jnp
from ...numpy._util import check_arraylike, promote_dtypes

__all__ = ["convolve", "correlate", "convolve2d", "correlate2d"]

_MODES = ("full", "same", "valid")
_METHODS = ("auto", "direct", "fft")


def _short(x):
    return f"{np.dtype(x.dtype).name}{list(x.shape)}"


def _operands(name, in1, in2, mode):
    check_arraylike(name, in1, in2)
    if mode not in _MODES:
        raise ValueError(f"{name}: `mode` must be one of {_MODES}; got {mode!r}.")
    in1, in2 = promote_dtypes(jnp.asarray(in1), jnp.asarray(in2))
    if in1.ndim != in2.ndim:
        raise ValueError(f"{name}: in1 and in2 must have the same number of dimensions; got {_short(in1)} and "
                         f"{_short(in2)}.")
    if in1.size == 0 or in2.size == 0:
        raise ValueError(f"{name}: inputs cannot be empty; got {_short(in1)} and {_short(in2)}.")
    if dtypes.is_bool(in1.dtype):
        raise TypeError(f"{name}: bool inputs are not supported (got {_short(in1)}); cast them with .astype(int).")
    return in1, in2


def _convolve(name, in1, in2, mode, precision):
    """The convolution of checked, promoted operands: the larger one is the image, the smaller one
    (flipped: lax convolutions do not flip) the kernel; 'same' is cropped from 'full' as SciPy
    centres it on in1."""
    if in1.ndim == 0:
        return in1 * in2
    if all(s1 >= s2 for s1, s2 in zip(in1.shape, in2.shape)):
        image, kernel = in1, in2
    elif all(s1 <= s2 for s1, s2 in zip(in1.shape, in2.shape)):
        image, kernel = in2, in1
    else:
        raise ValueError(f"{name}: one input must be at least as large as the other in every dimension; got "
                         f"{_short(in1)} and {_short(in2)}.")
    nd = in1.ndim
    padding = [(0, 0)] * nd if mode == "valid" else [(k - 1, k - 1) for k in kernel.shape]
    out = lax.conv_general_dilated(image[None, None], jnp.flip(kernel)[None, None], (1,) * nd, padding,
                                   precision=precision)[0, 0]
    if mode == "same":
        starts = [(f - s) // 2 for f, s in zip(out.shape, in1.shape)]
        out = lax.slice(out, starts, [st + s for st, s in zip(starts, in1.shape)])
    return out


def _check_method(name, method):
    if method not in _METHODS:
        raise ValueError(f"{name}: `method` must be one of {_METHODS}; got {method!r}.")


def convolve(in1, in2, mode="full", method="auto", precision=None):
    """The N-dimensional convolution of `in1` and `in2`, as `scipy.signal.convolve`:
    `out[n] = sum_k in1[k] in2[n - k]` over the 'full', 'same' (in1's shape, centred) or 'valid'
    region; the inputs have equal ranks.

    Example:
        >>> core.scipy.signal.convolve(jnp.array([1.0, 2.0, 3.0]), jnp.array([0.0, 1.0, 0.5]))
        Array([0. , 1. , 2.5, 4. , 1.5], dtype=float32)
    """
    _check_method("convolve", method)
    in1, in2 = _operands("convolve", in1, in2, mode)
    return _convolve("convolve", in1, in2, mode, precision)


def correlate(in1, in2, mode="full", method="auto", precision=None):
    """The N-dimensional cross-correlation `out[k] = sum_n in1[n + k] conj(in2[n])`, as
    `scipy.signal.correlate` (the convolution of in1 with in2 reversed and conjugated), over the
    'full', 'same' (in1's shape) or 'valid' region.

    Example:
        >>> core.scipy.signal.correlate(jnp.array([1.0, 2.0, 3.0]), jnp.array([0.0, 1.0, 0.5]))
        Array([0.5, 2. , 3.5, 3. , 0. ], dtype=float32)
    """
    _check_method("correlate", method)
    in1, in2 = _operands("correlate", in1, in2, mode)
    return _convolve("correlate", in1, jnp.flip(jnp.conj(in2)), mode, precision)


def _check_2d(name, in1, in2, boundary, fillvalue):
    if boundary != "fill" or fillvalue != 0:
        raise NotImplementedError(f"{name}: only boundary='fill' with fillvalue=0 is implemented; got "
                                  f"boundary={boundary!r}, fillvalue={fillvalue!r}.")
    if np.ndim(in1) != 2 or np.ndim(in2) != 2:
        raise ValueError(f"{name}: inputs must be 2-dimensional; got shapes {np.shape(in1)} and {np.shape(in2)}.")


def convolve2d(in1, in2, mode="full", boundary="fill", fillvalue=0, precision=None):
    """The 2-D convolution of `in1` and `in2`, as `scipy.signal.convolve2d` with zero padding
    (the only `boundary` implemented, as in JAX).

    Example:
        >>> core.scipy.signal.convolve2d(jnp.eye(2), jnp.array([[1.0, 2.0]]))
        Array([[1., 2., 0.],
               [0., 1., 2.]], dtype=float32)
    """
    _check_2d("convolve2d", in1, in2, boundary, fillvalue)
    in1, in2 = _operands("convolve2d", in1, in2, mode)
    return _convolve("convolve2d", in1, in2, mode, precision)


def correlate2d(in1, in2, mode="full", boundary="fill", fillvalue=0, precision=None):
    """The 2-D cross-correlation of `in1` and `in2`, as `scipy.signal.correlate2d` with zero
    padding (the only `boundary` implemented, as in JAX).

    Example:
        >>> core.scipy.signal.correlate2d(jnp.eye(2), jnp.array([[1.0, 2.0]]))
        Array([[2., 1., 0.],
               [0., 2., 1.]], dtype=float32)
    """
    _check_2d("correlate2d", in1, in2, boundary, fillvalue)
    in1, in2 = _operands("correlate2d", in1, in2, mode)
    # scipy.signal.correlate2d is `correlate` except in two places, which we reproduce: 'same'
    # centres the window as a convolution with the reversed in1 would (one sample off from
    # `correlate` for an even-sized in2), and 'valid' with in1 the smaller input is
    # correlate(in2, in1) reversed
    if mode == "same":
        return jnp.flip(_convolve("correlate2d", jnp.flip(in1), jnp.conj(in2), mode, precision))
    smaller = all(s1 <= s2 for s1, s2 in zip(in1.shape, in2.shape)) and in1.shape != in2.shape
    if mode == "valid" and smaller:
        return _convolve("correlate2d", jnp.flip(in2), jnp.conj(in1), mode, precision)
    return _convolve("correlate2d", in1, jnp.flip(jnp.conj(in2)), mode, precision)
