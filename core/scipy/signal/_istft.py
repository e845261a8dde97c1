"""`istft`: the inverse short-time Fourier transform, by weighted overlap-add.

Each segment's inverse FFT is windowed again and the segments are added at their offsets; the
sum is divided by the overlap-added squared window, which undoes `stft` wherever that sum is
non-zero (the NOLA condition). The overlap-add is a fixed reshaping (no scatter), so it is
deterministic and its transpose is as cheap.

Where jax.scipy.signal 0.10.2 departs from SciPy we follow SciPy: an odd `nperseg` with a
one-sided input (JAX raises a shape error), `noverlap=0` (JAX reads it as nperseg // 2), and a
warning when the NOLA condition fails for a concrete window. Unlike both, the returned times
have one entry per output sample also for batched input (both count the first axis).
"""
import warnings

import numpy as np

from ... import dtypes
from ... import numpy as jnp
from ...numpy._util import canonicalize_axis, check_arraylike
from ._spectral import segment_overlap_fft
from ._util import short, static_int
from ._windows import get_window


def overlap_add(frames, step):
    """Frames (..., n, length) added at offsets 0, step, 2 step, ...: (..., step (n - 1) + length).

    Each frame is cut into `blocks` pieces of `step` samples; piece b of frame j lands on output
    block j + b. Laying the pieces out as (blocks, n + blocks) rows of blocks (zeros after each
    row's n) and re-reading the flat buffer with rows one block shorter shifts row b by b blocks,
    so one sum over the rows adds everything where it belongs.
    """
    *batch, n, length = frames.shape
    blocks = -(-length // step)
    frames = jnp.pad(frames, [(0, 0)] * len(batch) + [(0, 0), (0, blocks * step - length)])
    pieces = jnp.moveaxis(frames.reshape(*batch, n, blocks, step), -2, -3)  # (..., blocks, n, step)
    rows = jnp.pad(pieces, [(0, 0)] * len(batch) + [(0, 0), (0, blocks), (0, 0)])  # (..., blocks, n + blocks, step)
    flat = rows.reshape(*batch, blocks * (n + blocks) * step)[..., :blocks * (n + blocks - 1) * step]
    shifted = flat.reshape(*batch, blocks, (n + blocks - 1) * step)
    return jnp.sum(shifted, axis=-2)[..., :step * (n - 1) + length]


def _window_squares_sum(win, nseg, nstep):
    """The overlap-added squared window (NumPy, for a concrete window)."""
    norm = np.zeros(nstep * (nseg - 1) + win.shape[0])
    index = np.arange(nseg)[:, None] * nstep + np.arange(win.shape[0])[None, :]
    np.add.at(norm, index, np.broadcast_to(np.abs(win) ** 2, index.shape))
    return norm


def istft(Zxx, fs=1.0, window="hann", nperseg=None, noverlap=None, nfft=None, input_onesided=True, boundary=True,
          time_axis=-1, freq_axis=-2):
    """The inverse short-time Fourier transform, as `scipy.signal.istft` (with
    jax.scipy.signal's signature): `Zxx` holds frequencies along `freq_axis` and segments along
    `time_axis` (one-sided unless `input_onesided=False`); `window`, `nperseg` (default: from
    Zxx's frequency count), `noverlap` (default nperseg // 2) and `nfft` must be those `stft`
    used; `boundary=True` drops the nperseg // 2 samples stft's boundary extension added.
    Returns (t, x): the sample times and the signal, real for a one-sided input. `stft` padding
    may leave extra samples at the end of x.

    Example:
        >>> x = jnp.array([1.0, 2.0, 3.0, 2.0, 1.0, 0.0, 1.0, 2.0])
        >>> _, _, Z = core.scipy.signal.stft(x, nperseg=4)
        >>> core.scipy.signal.istft(Z, nperseg=4)[1].round(4)
        Array([1., 2., 3., 2., 1., 0., 1., 2.], dtype=float32)
    """
    check_arraylike("istft", Zxx)
    Zxx = jnp.asarray(Zxx)
    if Zxx.ndim < 2:
        raise ValueError(f"istft: Zxx must have at least two dimensions (frequencies and segments); got {short(Zxx)}.")
    freq_axis = canonicalize_axis(static_int("istft", "freq_axis", freq_axis), Zxx.ndim, "istft")
    time_axis = canonicalize_axis(static_int("istft", "time_axis", time_axis), Zxx.ndim, "istft")
    if freq_axis == time_axis:
        raise ValueError(f"istft: time_axis and freq_axis must differ; both are {time_axis}.")
    if not dtypes.is_complex(Zxx.dtype):
        Zxx = Zxx.astype(np.complex128 if Zxx.dtype == np.float64 else np.complex64)
    real_dtype = np.dtype(np.float64 if Zxx.dtype == np.complex128 else np.float32)
    nfreq, nseg = Zxx.shape[freq_axis], Zxx.shape[time_axis]
    n_default = 2 * (nfreq - 1) if input_onesided else nfreq
    nperseg = n_default if nperseg is None else static_int("istft", "nperseg", nperseg)
    if nperseg < 1:
        raise ValueError(f"istft: nperseg must be a positive integer; got {nperseg}.")
    if nfft is None:  # a one-sided spectrum of nfreq bins came from nfft = 2 (nfreq - 1) or, odd, one more
        nfft = nperseg if input_onesided and nperseg == n_default + 1 else n_default
    noverlap, nfft = segment_overlap_fft("istft", nperseg, noverlap, nfft)
    nstep = nperseg - noverlap

    outer = [a for a in range(Zxx.ndim) if a not in (freq_axis, time_axis)]
    Zxx = jnp.transpose(Zxx, outer + [freq_axis, time_axis])
    inverse = jnp.fft.irfft if input_onesided else jnp.fft.ifft
    segments = jnp.swapaxes(inverse(Zxx, n=nfft, axis=-2)[..., :nperseg, :], -1, -2)  # (..., nseg, nperseg)

    if isinstance(window, (str, tuple)):
        win = get_window(window, nperseg)
    else:
        check_arraylike("istft", window)
        win = jnp.asarray(window)
        if win.ndim != 1 or win.shape[0] != nperseg:
            raise ValueError(f"istft: window must be 1-D with nperseg={nperseg} samples; got {short(win)}.")
    if isinstance(win, np.ndarray):
        win_sum = win.sum().item()
        norm = _window_squares_sum(win, nseg, nstep)
        win = win.astype(real_dtype)
    else:
        win_sum = jnp.sum(win)
        norm = overlap_add(jnp.broadcast_to(win * jnp.conj(win), (nseg, nperseg)), nstep)
    # stft scaled each segment by 1 / sum(window): undo it, window again, and add up
    x = overlap_add(segments * (win * win_sum), nstep)
    if boundary:
        half = nperseg // 2
        x, norm = x[..., half:x.shape[-1] - half], norm[..., half:norm.shape[-1] - half]
    if isinstance(norm, np.ndarray):
        if not np.all(norm > 1e-10):
            warnings.warn("istft: the NOLA condition fails (the overlap-added squared window vanishes somewhere), so "
                          "the STFT may not be invertible there" + ("" if boundary else
                                                                    "; possibly because boundary=False") + ".",
                          stacklevel=2)
        x = x / jnp.asarray(np.where(norm > 1e-10, norm, 1.0), dtype=real_dtype)
    else:
        x = x / jnp.where(norm > 1e-10, norm, 1.0)
    # the samples go where the segments were (one axis fewer: the frequencies are gone)
    out_axis = time_axis - 1 if freq_axis < time_axis else time_axis
    x = jnp.moveaxis(x, -1, out_axis)
    if isinstance(fs, (int, float, np.integer, np.floating)):
        fs = float(fs)  # weakly typed: float32 results keep float32 times
    times = jnp.arange(x.shape[out_axis], dtype=real_dtype) / fs
    return times, x
