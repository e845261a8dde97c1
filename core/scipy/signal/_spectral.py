"""Windowed-FFT spectral estimates: `stft`, `csd` and `welch`, as scipy.signal and
jax.scipy.signal have them.

All three cut the signal (along `axis`) into segments of `nperseg` samples that start every
nperseg - noverlap samples, detrend and window each segment, and Fourier transform it (one
gather builds every segment at once; its transpose, a scatter-add, carries the gradient back).
`stft` returns the transforms; `csd` and `welch` average the (cross) periodograms over segments.

Segment sizes, windows given by name, boundary extension and padding are static: they fix the
shapes. A window given as an array may be traced (a learned window, say). Where jax.scipy.signal
0.10.2 departs from SciPy we follow SciPy: `nperseg=None` with a named window means 256 samples
(JAX uses the whole signal, against its own documentation).
"""
import warnings

import numpy as np

from ... import dtypes
from ... import numpy as jnp
from ...numpy._util import canonicalize_axis, check_arraylike, promote_dtypes_inexact
from ._detrend import detrend as _detrend
from ._util import short, static_int
from ._windows import get_window

_BOUNDARIES = ("even", "odd", "constant", "zeros", None)
_SCALINGS = ("density", "spectrum")
_AVERAGES = ("mean", "median")


def window_and_length(function, window, nperseg, input_length, dtype):
    """The window as an array of the real `dtype` (a NumPy array when given by name; an array
    window stays complex if it is) and the segment
    length: 256 by default for a named window (at most `input_length`, with a warning as in
    SciPy), the window's length for an array."""
    if nperseg is not None:
        nperseg = static_int(function, "nperseg", nperseg)
        if nperseg < 1:
            raise ValueError(f"{function}: nperseg must be a positive integer; got {nperseg}.")
    if isinstance(window, (str, tuple)):
        nperseg = 256 if nperseg is None else nperseg
        if nperseg > input_length:
            warnings.warn(f"{function}: nperseg={nperseg} is greater than the input length {input_length}; using "
                          f"nperseg={input_length}.", stacklevel=4)
            nperseg = input_length
        return get_window(window, nperseg).astype(dtype), nperseg
    check_arraylike(function, window)
    win = jnp.asarray(window)
    win = win if dtypes.is_complex(win.dtype) else win.astype(dtype)
    if win.ndim != 1:
        raise ValueError(f"{function}: window must be 1-D; got {short(win)}.")
    if win.shape[0] > input_length:
        raise ValueError(f"{function}: the window ({win.shape[0]} samples) is longer than the input signal "
                         f"({input_length} samples along the axis).")
    if nperseg is not None and nperseg != win.shape[0]:
        raise ValueError(f"{function}: nperseg={nperseg} differs from the window's length {win.shape[0]}; leave "
                         "nperseg None or make them equal.")
    return win, win.shape[0]


def segment_overlap_fft(function, nperseg, noverlap, nfft):
    """(noverlap, nfft) with their defaults (nperseg // 2 and nperseg), checked."""
    noverlap = nperseg // 2 if noverlap is None else static_int(function, "noverlap", noverlap)
    nfft = nperseg if nfft is None else static_int(function, "nfft", nfft)
    if nfft < nperseg:
        raise ValueError(f"{function}: nfft={nfft} must be at least nperseg={nperseg}.")
    if not 0 <= noverlap < nperseg:
        raise ValueError(f"{function}: noverlap={noverlap} must be in [0, nperseg={nperseg}).")
    return noverlap, nfft


def _extend(x, n, boundary):
    """`x` extended by `n` samples at both ends of its last axis: 'zeros', 'constant' (the edge
    value repeated), 'even' (mirrored about the edge sample) or 'odd' (mirrored, then reflected
    through the edge value, so the slope continues)."""
    if boundary is None or n < 1:
        return x
    widths = [(0, 0)] * (x.ndim - 1) + [(n, n)]
    if boundary == "zeros":
        return jnp.pad(x, widths)
    if boundary == "constant":
        return jnp.pad(x, widths, mode="edge")
    if n > x.shape[-1] - 1:
        raise ValueError(f"stft: boundary={boundary!r} extends by nperseg // 2 = {n} samples, which needs a signal "
                         f"of more than {n} samples; got {x.shape[-1]}.")
    even = jnp.pad(x, widths, mode="reflect")
    if boundary == "even":
        return even
    left, right = x[..., :1], x[..., -1:]
    return jnp.concatenate([2 * left - even[..., :n], x, 2 * right - even[..., -n:]], axis=-1)


def _detrender(function, detrend, axis):
    """A function of segments (..., nseg, nperseg) that detrends each along its last axis."""
    if detrend is False or detrend is None:
        return lambda d: d
    if isinstance(detrend, str):
        return lambda d: _detrend(d, axis=-1, type=detrend)
    if callable(detrend):
        if axis == -1:
            return detrend
        # SciPy's convention: the function sees segments laid out as the data was, along `axis`
        return lambda d: jnp.moveaxis(detrend(jnp.moveaxis(d, -1, axis)), axis, -1)
    raise ValueError(f"{function}: detrend must be False, 'constant', 'linear' or a function; got {detrend!r}.")


def _segments(x, nperseg, nstep):
    """The segments of the last axis of `x`, (..., nseg, nperseg), as one gather."""
    nseg = (x.shape[-1] - nperseg) // nstep + 1
    index = np.arange(nseg)[:, None] * nstep + np.arange(nperseg)[None, :]
    return x[..., index]


def _windowed_fft(x, win, detrender, nperseg, nstep, nfft, onesided):
    segments = detrender(_segments(x, nperseg, nstep)) * win
    return jnp.fft.rfft(jnp.real(segments), n=nfft) if onesided else jnp.fft.fft(segments, n=nfft)


def spectral(function, x, y, fs, window, nperseg, noverlap, nfft, detrend, return_onesided, scaling, axis,
             mode, boundary=None, padded=False):
    """The windowed FFTs behind stft (mode 'stft': the transforms) and csd/welch (mode 'psd': the
    per-segment (cross) periodograms). Returns (freqs, times, result) with the frequencies along
    `axis` and the segments last. `y` None means the auto-spectrum of x."""
    if boundary not in _BOUNDARIES:
        raise ValueError(f"{function}: boundary must be one of {_BOUNDARIES}; got {boundary!r}.")
    if scaling not in _SCALINGS:
        raise ValueError(f"{function}: scaling must be one of {_SCALINGS}; got {scaling!r}.")
    if y is None:
        check_arraylike(function, x)
        (x,) = promote_dtypes_inexact(jnp.asarray(x))
    else:
        check_arraylike(function, x, y)
        x, y = promote_dtypes_inexact(jnp.asarray(x), jnp.asarray(y))
        if x.ndim != y.ndim:
            raise ValueError(f"{function}: x and y must have the same number of dimensions; got {short(x)} and "
                             f"{short(y)}.")
    if x.ndim == 0:
        raise ValueError(f"{function}: x must have at least one dimension; got {short(x)}.")
    axis = canonicalize_axis(static_int(function, "axis", axis), x.ndim, function)
    result_dtype = np.dtype(np.complex128 if np.dtype(x.dtype) in (np.float64, np.complex128) else np.complex64)
    real_dtype = np.dtype(np.float64 if result_dtype == np.complex128 else np.float32)
    # every check on static information first, before any computation
    length = x.shape[axis] if y is None else max(x.shape[axis], y.shape[axis])
    if y is not None:
        try:
            np.broadcast_shapes(np.delete(x.shape, axis), np.delete(y.shape, axis))
        except ValueError:
            raise ValueError(f"{function}: x and y must broadcast together outside axis {axis}; got {short(x)} and "
                             f"{short(y)}.") from None
    if x.size == 0 or (y is not None and y.size == 0):
        shapes = short(x) if y is None else f"{short(x)} and {short(y)}"
        raise ValueError(f"{function}: inputs cannot be empty; got {shapes}.")
    win, nperseg = window_and_length(function, window, nperseg, length, real_dtype)
    noverlap, nfft = segment_overlap_fft(function, nperseg, noverlap, nfft)
    nstep = nperseg - noverlap
    detrender = _detrender(function, detrend, -1 if axis == x.ndim - 1 else axis)

    x = jnp.moveaxis(x, axis, -1)
    if y is not None:  # the shorter signal is zero-padded, as in SciPy
        y = jnp.moveaxis(y, axis, -1)
        x, y = (jnp.pad(v, [(0, 0)] * (v.ndim - 1) + [(0, length - v.shape[-1])]) for v in (x, y))
    x = _extend(x, nperseg // 2, boundary)
    y = None if y is None else _extend(y, nperseg // 2, boundary)
    if padded:  # zeros up to a whole number of segments, after the extension (as SciPy)
        extra = (-(x.shape[-1] - nperseg) % nstep) % nperseg
        x = jnp.pad(x, [(0, 0)] * (x.ndim - 1) + [(0, extra)])
        y = None if y is None else jnp.pad(y, [(0, 0)] * (y.ndim - 1) + [(0, extra)])

    if isinstance(fs, (int, float, np.integer, np.floating)):
        fs = float(fs)  # weakly typed, so float32 data keeps float32 frequencies and values
    # the periodogram's normalisation: power per unit frequency ('density') or per bin ('spectrum');
    # the STFT takes the square root of 'spectrum' (a window of sum one)
    power = (win * win).sum() if scaling == "density" else win.sum() ** 2
    if isinstance(win, np.ndarray):
        power = power.item()
    scale = 1.0 / (fs * power) if scaling == "density" else 1.0 / power
    if mode == "stft":
        scale = scale ** 0.5 if isinstance(scale, (float, complex)) else jnp.sqrt(scale)

    onesided = bool(return_onesided)
    if onesided and (dtypes.is_complex(x.dtype) or (y is not None and dtypes.is_complex(y.dtype))):
        warnings.warn(f"{function}: the input is complex, so the spectrum is two-sided (return_onesided=False).",
                      stacklevel=3)
        onesided = False
    unit_freqs = np.fft.rfftfreq(nfft) if onesided else np.fft.fftfreq(nfft)
    freqs = jnp.asarray(unit_freqs, dtype=real_dtype) * fs

    spectrum = _windowed_fft(x, win, detrender, nperseg, nstep, nfft, onesided)
    if y is not None:
        spectrum = jnp.conj(spectrum) * _windowed_fft(y, win, detrender, nperseg, nstep, nfft, onesided)
    elif mode == "psd":
        spectrum = jnp.real(jnp.conj(spectrum) * spectrum)
    spectrum = spectrum * scale
    if onesided and mode == "psd":
        # each positive frequency also stands for its negative twin (not 0, nor Nyquist for even nfft)
        doubling = np.full(nfft // 2 + 1, 2.0)
        doubling[0] = 1.0
        if nfft % 2 == 0:
            doubling[-1] = 1.0
        spectrum = spectrum * jnp.asarray(doubling, dtype=real_dtype)
    spectrum = spectrum.astype(real_dtype if (y is None and mode == "psd") else result_dtype)
    centres = np.arange(nperseg / 2, x.shape[-1] - nperseg / 2 + 1, nstep)
    if boundary is not None:
        centres = centres - nperseg / 2
    times = jnp.asarray(centres, dtype=real_dtype) / fs
    return freqs, times, jnp.moveaxis(spectrum, -1, axis)


def stft(x, fs=1.0, window="hann", nperseg=256, noverlap=None, nfft=None, detrend=False, return_onesided=True,
         boundary="zeros", padded=True, axis=-1):
    """The short-time Fourier transform of `x` along `axis`, as `scipy.signal.stft` (with
    jax.scipy.signal's signature): segments of `nperseg` samples every nperseg - noverlap (default
    noverlap: nperseg // 2), each detrended (`detrend`: False, 'constant', 'linear' or a function),
    multiplied by `window` (a name, a (name, *parameters) tuple or an array) and transformed with
    `nfft` points, scaled so that the window sums to one. `boundary` ('zeros', 'even', 'odd',
    'constant' or None) extends the signal by nperseg // 2 at both ends; `padded` zero-pads it to
    a whole number of segments. Complex input gives a two-sided spectrum. Returns (f, t, Zxx):
    frequencies, segment times, and Zxx with frequencies along `axis` and segments last.

    Example:
        >>> f, t, Z = core.scipy.signal.stft(jnp.array([1.0, 2.0, 3.0, 2.0, 1.0, 0.0, 1.0, 2.0]), nperseg=4)
        >>> f, t, Z.shape
        (Array([0.  , 0.25, 0.5 ], dtype=float32), Array([0., 2., 4., 6., 8.], dtype=float32), (3, 5))
    """
    return spectral("stft", x, None, fs, window, nperseg, noverlap, nfft, detrend, return_onesided, "spectrum",
                    axis, "stft", boundary, padded)


def _check_average(function, average):
    if average not in _AVERAGES:
        raise ValueError(f"{function}: average must be one of {_AVERAGES}; got {average!r}.")


def _average(periodograms, average):
    """The mean or (bias-corrected) median over the segments (the last axis)."""
    nseg = periodograms.shape[-1]
    if nseg == 1:
        return periodograms[..., 0]
    if average == "mean":
        return jnp.mean(periodograms, axis=-1)
    # the median of n exponential-like periodograms is biased low against the mean by this factor
    # (Allen et al., FINDCHIRP, appendix B; the same factor SciPy divides by)
    even = np.arange(2.0, nseg, 2.0)
    bias = 1.0 + np.sum(1.0 / (even + 1) - 1.0 / even)
    if dtypes.is_complex(periodograms.dtype):
        median = jnp.median(jnp.real(periodograms), axis=-1) + 1j * jnp.median(jnp.imag(periodograms), axis=-1)
    else:
        median = jnp.median(periodograms, axis=-1)
    return median / bias


def csd(x, y, fs=1.0, window="hann", nperseg=None, noverlap=None, nfft=None, detrend="constant",
        return_onesided=True, scaling="density", axis=-1, average="mean"):
    """The cross power spectral density of `x` and `y` by Welch's method, as `scipy.signal.csd`:
    the average ('mean' or bias-corrected 'median') over segments of conj(X) Y, X and Y the
    windowed FFTs of the segments (see `stft`; default nperseg 256, noverlap nperseg // 2, each
    segment's mean removed), doubled at the positive frequencies of a one-sided spectrum and
    scaled to a density (`scaling='density'`, per Hz at sampling rate `fs`) or a power spectrum
    ('spectrum'). The shorter input is zero-padded; `y=None` gives welch's real PSD of x.
    Returns (f, Pxy), frequencies along `axis`.

    Example:
        >>> x = jnp.array([0.0, 1.0, 0.0, -1.0] * 4)
        >>> f, P = core.scipy.signal.csd(x, jnp.roll(x, 1), nperseg=4)  # y lags x by a quarter period
        >>> f, (3 * P).round(4)  # P = -4j / 3 at f = 0.25
        (Array([0.  , 0.25, 0.5 ], dtype=float32), Array([0.+0.j, 0.-4.j, 0.+0.j], dtype=complex64))
    """
    _check_average("csd", average)
    freqs, _, per_segment = spectral("csd", x, y, fs, window, nperseg, noverlap, nfft, detrend, return_onesided,
                                     scaling, axis, "psd")
    return freqs, _average(per_segment, average)


def welch(x, fs=1.0, window="hann", nperseg=None, noverlap=None, nfft=None, detrend="constant",
          return_onesided=True, scaling="density", axis=-1, average="mean"):
    """The power spectral density of `x` by Welch's method, as `scipy.signal.welch`: the average
    ('mean' or bias-corrected 'median') of the periodograms of overlapping windowed segments
    (see `csd`, whose arguments these are, with y = x). Returns (f, Pxx), both real.

    Example:
        >>> x = jnp.array([0.0, 1.0, 0.0, -1.0] * 4)
        >>> f, P = core.scipy.signal.welch(x, nperseg=4)  # all the power at a quarter of the rate
        >>> f, (3 * P).round(4)  # P = 4 / 3 at f = 0.25
        (Array([0.  , 0.25, 0.5 ], dtype=float32), Array([0., 4., 0.], dtype=float32))
    """
    _check_average("welch", average)
    freqs, _, per_segment = spectral("welch", x, None, fs, window, nperseg, noverlap, nfft, detrend,
                                     return_onesided, scaling, axis, "psd")
    return freqs, _average(per_segment, average)
