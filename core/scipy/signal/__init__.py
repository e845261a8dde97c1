"""`core.scipy.signal`: signal processing as `jax.scipy.signal` has it, with SciPy's signatures.

Convolution and correlation, direct (`convolve`, `correlate`, `convolve2d`, `correlate2d`: one
`lax.conv_general_dilated` each) or through FFTs (`fftconvolve`); `detrend`; and the windowed-FFT
spectral estimates `stft`, `istft`, `welch` and `csd`, whose windows `get_window` (SciPy's name;
not in jax.scipy.signal) computes by name. Everything runs under jit, grad and vmap; the
arguments that fix shapes (segment lengths, axes, modes, windows given by name) are static.
"""
from ._convolve import convolve, convolve2d, correlate, correlate2d
from ._detrend import detrend
from ._fftconvolve import fftconvolve
from ._istft import istft
from ._spectral import csd, stft, welch
from ._windows import get_window

__all__ = ["convolve", "correlate", "convolve2d", "correlate2d", "fftconvolve", "detrend", "stft", "istft", "csd",
           "welch", "get_window"]

# the functions live in private modules but are documented (and their examples run) as this
# module's, as JAX's are under jax.scipy.signal
for _f in (convolve, correlate, convolve2d, correlate2d, fftconvolve, detrend, stft, istft, csd, welch, get_window):
    _f.__module__ = __name__
del _f
