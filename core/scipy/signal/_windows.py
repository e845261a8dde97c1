"""Window functions for the spectral estimators, by name, as `scipy.signal.get_window` has them.

A window depends only on its name, parameters and length, all static, so each is computed on the
host in NumPy float64 and enters a program as a constant (cast to the data's dtype by the caller).
jax.scipy.signal 0.10.2 computes 'hann' itself and hands every other name to SciPy's
`get_window`; here every name SciPy 1.17 accepts (aliases, the '_periodic' and '_symmetric'
suffixes, and parameters given in a tuple such as ('kaiser', 8.0)) has its own implementation,
so no SciPy import is needed at run time.

A symmetric window of length M is the classic definition; the periodic ("DFT-even") window that
spectral analysis uses (`fftbins=True`, the default) is the symmetric one of length M + 1 without
its last sample.
"""
import numbers

import numpy as np

__all__ = ["get_window"]


def _cosine_sum(M, coefficients):
    """sum_k a_k cos(k x) over x evenly spaced in [-pi, pi] (the Hann/Hamming/Blackman family)."""
    x = np.linspace(-np.pi, np.pi, M)
    return sum(a * np.cos(k * x) for k, a in enumerate(coefficients))


def _centred(M):
    """Sample positions relative to the window's centre, (M - 1) / 2."""
    return np.arange(M) - (M - 1) / 2.0


def _boxcar(M):
    return np.ones(M)


def _triang(M):
    # the triangle reaches zero one sample beyond each end (unlike Bartlett's)
    half = np.arange(1, (M + 1) // 2 + 1)
    up = (2 * half - 1.0) / M if M % 2 == 0 else 2 * half / (M + 1.0)
    return np.concatenate([up, up[::-1] if M % 2 == 0 else up[-2::-1]])


def _bartlett(M):
    n = np.arange(M)
    return np.where(n <= (M - 1) / 2.0, 2.0 * n / (M - 1), 2.0 - 2.0 * n / (M - 1))


def _parzen(M):
    # piecewise cubic: 1 - 6u^2 + 6|u|^3 in the middle half, 2 (1 - |u|)^3 outside, u = n / (M / 2)
    u = np.abs(_centred(M)) / (M / 2.0)
    inner = np.abs(_centred(M)) <= (M - 1) / 4.0
    return np.where(inner, 1 - 6 * u ** 2 + 6 * u ** 3, 2 * (1 - u) ** 3)


def _bohman(M):
    u = np.abs(np.linspace(-1, 1, M)[1:-1])
    return np.concatenate([[0.0], (1 - u) * np.cos(np.pi * u) + np.sin(np.pi * u) / np.pi, [0.0]])


def _general_hamming(M, alpha):
    return _cosine_sum(M, [alpha, 1.0 - alpha])


def _barthann(M):
    u = np.abs(np.arange(M) / (M - 1.0) - 0.5)
    return 0.62 - 0.48 * u + 0.38 * np.cos(2 * np.pi * u)


def _cosine(M):
    return np.sin(np.pi / M * (np.arange(M) + 0.5))


def _tukey(M, alpha=0.5):
    # a flat top of width (1 - alpha) (M - 1) between two half-periods of a cosine
    if alpha <= 0:
        return np.ones(M)
    if alpha >= 1.0:
        return _general_hamming(M, 0.5)
    n = np.arange(M)
    width = int(np.floor(alpha * (M - 1) / 2.0))
    rise = 0.5 * (1 + np.cos(np.pi * (-1 + 2.0 * n[:width + 1] / alpha / (M - 1))))
    fall = 0.5 * (1 + np.cos(np.pi * (-2.0 / alpha + 1 + 2.0 * n[M - width - 1:] / alpha / (M - 1))))
    return np.concatenate([rise, np.ones(M - 2 * (width + 1)), fall])


def _kaiser(M, beta):
    alpha = (M - 1) / 2.0
    return np.i0(beta * np.sqrt(1 - ((np.arange(M) - alpha) / alpha) ** 2.0)) / np.i0(float(beta))


def _kaiser_bessel_derived(M, beta):
    cumulative = np.cumsum(_kaiser(M // 2 + 1, beta))
    half = np.sqrt(cumulative[:-1] / cumulative[-1])
    return np.concatenate([half, half[::-1]])


def _gaussian(M, std):
    return np.exp(-_centred(M) ** 2 / (2.0 * std * std))


def _general_gaussian(M, p, sig):
    return np.exp(-0.5 * np.abs(_centred(M) / sig) ** (2 * p))


def _exponential(M, center=None, tau=1.0):
    centre = (M - 1) / 2.0 if center is None else center
    return np.exp(-np.abs(np.arange(M) - centre) / tau)


def _lanczos(M):
    return np.sinc(2.0 * np.arange(M) / (M - 1) - 1.0)


def _chebwin(M, at):
    """Dolph-Chebyshev: the window whose DFT is the Chebyshev polynomial T_{M-1} sampled at
    beta cos(pi k / M), so every sidelobe sits `at` dB below the main lobe. The inverse DFT is
    summed directly, centred on (M - 1) / 2, and scaled to a peak of one."""
    order = M - 1.0
    beta = np.cosh(np.arccosh(10 ** (abs(at) / 20.0)) / order)
    x = beta * np.cos(np.pi * np.arange(M) / M)
    with np.errstate(invalid="ignore"):
        # T_n(x) = cos(n acos x) inside [-1, 1], cosh(n acosh |x|) (times (-1)^n for x < -1) outside
        outside = np.cosh(order * np.arccosh(np.abs(x))) * np.where(x < -1, (-1.0) ** (M - 1), 1.0)
        spectrum = np.where(np.abs(x) <= 1, np.cos(order * np.arccos(np.clip(x, -1, 1))), outside)
    phase = -2j * np.pi * np.outer(_centred(M), np.arange(M)) / M
    w = np.real(np.exp(phase) @ spectrum)
    return w / w.max()


def _taylor(M, nbar=4, sll=30, norm=True):
    """Taylor's window: nbar - 1 nearly constant sidelobes `sll` dB down, written as one plus a
    cosine series whose coefficients F_m come from Taylor's closed form."""
    A = np.arccosh(10 ** (sll / 20.0)) / np.pi
    s2 = nbar ** 2 / (A ** 2 + (nbar - 0.5) ** 2)
    m = np.arange(1, nbar, dtype=float)
    coefficients = np.empty(nbar - 1)
    for i, mi in enumerate(m):
        others = np.delete(m, i)
        numerator = (-1) ** i * np.prod(1 - mi ** 2 / s2 / (A ** 2 + (m - 0.5) ** 2))
        coefficients[i] = numerator / (2 * np.prod(1 - mi ** 2 / others ** 2))

    def series(n):
        return 1 + 2 * coefficients @ np.cos(2 * np.pi * np.outer(m, n - M / 2.0 + 0.5) / M)

    w = series(np.arange(M))
    return w / series(np.array([(M - 1) / 2.0]))[0] if norm else w


def _dpss(M, NW):
    """The first discrete prolate spheroidal (Slepian) sequence: the eigenvector of the largest
    eigenvalue of a symmetric tridiagonal matrix, signed to a positive sum and scaled to a peak
    of one, with SciPy's 'approximate' correction M^2 / (M^2 + NW) for even M."""
    if not 0 < NW < M / 2.0:
        raise ValueError(f"get_window: dpss needs 0 < NW < M / 2; got NW={NW} for M={M}.")
    n = np.arange(M, dtype=float)
    diagonal = ((M - 1 - 2 * n) / 2.0) ** 2 * np.cos(2 * np.pi * NW / M)
    off = n[1:] * (M - n[1:]) / 2.0
    matrix = np.diag(diagonal) + np.diag(off, 1) + np.diag(off, -1)
    w = np.linalg.eigh(matrix)[1][:, -1]
    w = w if w.sum() >= 0 else -w
    w = w / w.max()
    return w * (M ** 2 / float(M ** 2 + NW)) if M % 2 == 0 else w


def _general_cosine(M, a):
    return _cosine_sum(M, a)


# name -> (function of (M, *parameters), whether parameters are required: True, False or None
# for optional)
_WINDOWS = {
    "barthann": (_barthann, False), "bartlett": (_bartlett, False),
    "blackman": (lambda M: _cosine_sum(M, [0.42, 0.50, 0.08]), False),
    "blackmanharris": (lambda M: _cosine_sum(M, [0.35875, 0.48829, 0.14128, 0.01168]), False),
    "bohman": (_bohman, False), "boxcar": (_boxcar, False), "chebwin": (_chebwin, True),
    "cosine": (_cosine, False), "dpss": (_dpss, True), "exponential": (_exponential, None),
    "flattop": (lambda M: _cosine_sum(M, [0.21557895, 0.41663158, 0.277263158, 0.083578947, 0.006947368]), False),
    "gaussian": (_gaussian, True), "general_cosine": (_general_cosine, True),
    "general_gaussian": (_general_gaussian, True), "general_hamming": (_general_hamming, True),
    "hamming": (lambda M: _general_hamming(M, 0.54), False), "hann": (lambda M: _general_hamming(M, 0.5), False),
    "kaiser": (_kaiser, True), "kaiser_bessel_derived": (_kaiser_bessel_derived, True),
    "lanczos": (_lanczos, False),
    "nuttall": (lambda M: _cosine_sum(M, [0.3635819, 0.4891775, 0.1365995, 0.0106411]), False),
    "parzen": (_parzen, False), "taylor": (_taylor, None), "triang": (_triang, False), "tukey": (_tukey, None),
}
_ALIASES = {
    "brthan": "barthann", "bth": "barthann", "bart": "bartlett", "brt": "bartlett", "black": "blackman",
    "blk": "blackman", "blackharr": "blackmanharris", "bkh": "blackmanharris", "bman": "bohman", "bmn": "bohman",
    "box": "boxcar", "ones": "boxcar", "rect": "boxcar", "rectangular": "boxcar", "cheb": "chebwin",
    "halfcosine": "cosine", "poisson": "exponential", "flat": "flattop", "flt": "flattop", "gauss": "gaussian",
    "gss": "gaussian", "general cosine": "general_cosine", "general gaussian": "general_gaussian",
    "general gauss": "general_gaussian", "general_gauss": "general_gaussian", "ggs": "general_gaussian",
    "general hamming": "general_hamming", "hamm": "hamming", "ham": "hamming", "han": "hann", "ksr": "kaiser",
    "kaiser bessel derived": "kaiser_bessel_derived", "kbd": "kaiser_bessel_derived", "sinc": "lanczos",
    "nutl": "nuttall", "nut": "nuttall", "parz": "parzen", "par": "parzen", "taylorwin": "taylor",
    "triangle": "triang", "tri": "triang", "tuk": "tukey",
}


def window_names():
    """Every name `get_window` accepts (canonical names and aliases), sorted."""
    return sorted(set(_WINDOWS) | set(_ALIASES))


def get_window(window, Nx, fftbins=True):
    """A window of `Nx` float64 samples by name, as `scipy.signal.get_window`: `window` is a
    name ('hann', 'hamming', 'blackman', 'boxcar', 'tukey', ...), a tuple of a name and its
    parameters (('kaiser', beta), ('gaussian', std), ('dpss', NW), ('chebwin', attenuation_db),
    ...) or a number (a Kaiser window with that beta). `fftbins=True` (the default) gives the
    periodic window spectral analysis uses, False the symmetric one; a '_periodic' or
    '_symmetric' suffix on the name overrides it. Computed on the host in NumPy.

    Example:
        >>> core.scipy.signal.get_window("hann", 4)
        array([0. , 0.5, 1. , 0.5])
        >>> core.scipy.signal.get_window(("tukey", 0.5), 5, fftbins=False)
        array([0., 1., 1., 1., 0.])
    """
    if isinstance(Nx, bool) or not isinstance(Nx, numbers.Integral) or Nx < 1:
        raise ValueError(f"get_window: Nx must be a positive integer; got {Nx!r}.")
    if not isinstance(fftbins, bool):
        raise ValueError(f"get_window: fftbins must be a bool; got {fftbins!r}.")
    if not isinstance(window, (str, tuple)):
        try:
            beta = float(window)
        except (TypeError, ValueError):
            raise ValueError(f"get_window: window must be a name, a (name, *parameters) tuple or a number (a "
                             f"Kaiser beta); got {window!r}.") from None
        window = ("kaiser", beta)
    name, parameters = (window, ()) if isinstance(window, str) else (window[0], tuple(window[1:]))
    if not isinstance(name, str):
        raise ValueError(f"get_window: a window tuple starts with the window's name; got {window!r}.")
    symmetric = not fftbins
    for suffix, is_symmetric in (("_symmetric", True), ("_periodic", False)):
        if name.endswith(suffix):
            name, symmetric = name[:-len(suffix)], is_symmetric
    canonical = _ALIASES.get(name, name)
    if canonical not in _WINDOWS:
        raise ValueError(f"get_window: unknown window {name!r} (in {window!r}); known windows: "
                         f"{', '.join(window_names())}.")
    function, needs_parameters = _WINDOWS[canonical]
    if needs_parameters is False and parameters:
        raise ValueError(f"get_window: the {canonical!r} window takes no parameters; got {window!r}.")
    if needs_parameters is True and not parameters:
        raise ValueError(f"get_window: the {canonical!r} window needs parameters, as a tuple such as "
                         f"({canonical!r}, value); got {window!r}.")
    if canonical == "general_cosine":
        parameters = (np.asarray(parameters[0], dtype=float),) + parameters[1:]
    if canonical == "kaiser_bessel_derived" and not symmetric:
        raise ValueError("get_window: a Kaiser-Bessel derived window is only defined symmetric; name it "
                         "'kaiser_bessel_derived_symmetric' (or pass fftbins=False).")
    if canonical == "kaiser_bessel_derived" and Nx % 2:
        raise ValueError(f"get_window: a Kaiser-Bessel derived window needs an even length; got Nx={Nx}.")
    if canonical == "exponential" and symmetric and len(parameters) > 0 and parameters[0] is not None:
        raise ValueError("get_window: a symmetric exponential window is centred; its center must be None.")
    if Nx == 1:
        return np.ones(1)
    length = Nx if symmetric else Nx + 1
    w = np.asarray(function(length, *parameters), dtype=np.float64)
    return w if symmetric else w[:-1]
