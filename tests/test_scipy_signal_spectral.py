"""core.scipy.signal's transform-based functions (fftconvolve, detrend, stft, istft, csd, welch,
get_window) against scipy.signal in float64, derivatives against finite differences, and a
program written against jax.scipy.signal.

Each test runs its cases as the outputs of one jitted function: one compile per test, where the
same calls made eagerly would compile every primitive for every new shape (several times slower).
"""
import re
import warnings

import numpy as np
import pytest
import scipy.signal as ss

import core
import core.numpy as jnp
from core.tree_util import tree_map
from core.scipy import signal as cs
from core.scipy.signal import _windows
from jax_port import port  # tests/ is on sys.path

pytestmark = pytest.mark.usefixtures("x64")

# every window scipy.signal.get_window (and so jax.scipy.signal, which hands it every name but
# 'hann') accepts, with parameters where the window needs them
def canonical(window):
    """The canonical name of a window given by name or (name, *parameters)."""
    name = window if isinstance(window, str) else window[0]
    return _windows._ALIASES.get(name, name)


PARAMETERS = {"chebwin": (60.0,), "dpss": (2.5,), "gaussian": (1.7,), "general_cosine": ([0.5, 0.3, 0.2],),
              "general_gaussian": (1.5, 2.0), "general_hamming": (0.6,), "kaiser": (6.0,),
              "kaiser_bessel_derived": (4.0,)}
WINDOWS = [(name,) + PARAMETERS[canonical(name)] if canonical(name) in PARAMETERS else name
           for name in _windows.window_names()]
MORE_WINDOWS = [("tukey", 0.3), ("tukey", 0.0), ("tukey", 1.0), ("taylor", 5, 35, False), ("exponential", None, 3.0),
                ("chebwin", 100.0), 7.5, "hann_symmetric", "hamming_periodic", ("kbd_symmetric", 3.0)]


def close(actual, expected, tol=1e-10, what=""):
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.shape == expected.shape, (what, actual.shape, expected.shape)
    assert actual.dtype.kind == expected.dtype.kind, (what, actual.dtype, expected.dtype)
    np.testing.assert_allclose(actual, expected, rtol=tol, atol=tol, err_msg=str(what))


def host_jit(fn):
    """`core.jit(fn)` with its outputs as NumPy arrays: indexing them afterwards compiles nothing."""
    jitted = core.jit(fn)
    return lambda *args: tree_map(np.asarray, jitted(*args))


def jit_cases(fn, cases, *args):
    """[fn(*args, **case) for case in cases], computed by one jitted program."""
    return host_jit(lambda *a: [fn(*a, **case) for case in cases])(*args)


def quiet(fn, *args, **kwargs):
    """SciPy's result, its warnings (complex input, nperseg clipped) silenced."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


def test_get_window_matches_scipy_for_every_name():
    assert len(WINDOWS) == 67  # SciPy 1.17's canonical names and aliases
    for window in WINDOWS + MORE_WINDOWS:
        for n in (1, 2, 7, 8, 33):
            for fftbins in (True, False):
                try:
                    expected = quiet(ss.get_window, window, n, fftbins=fftbins)
                except ValueError:
                    with pytest.raises(ValueError, match="get_window"):  # refused by both
                        cs.get_window(window, n, fftbins=fftbins)
                    continue
                close(cs.get_window(window, n, fftbins=fftbins), expected, 1e-12, (window, n, fftbins))


def test_every_window_name_in_welch(rng):
    # a named window is get_window's array (checked above) in the array-window path: one vmapped
    # program runs welch with every window's values, against SciPy's welch given the name
    x = rng.standard_normal(40)
    kbd = [w for w in WINDOWS if canonical(w) == "kaiser_bessel_derived"]
    assert len(kbd) == 3  # only defined symmetric: named so below
    names = [w for w in WINDOWS if w not in kbd] + [("kaiser_bessel_derived_symmetric", 4.0), ("kbd_symmetric", 3.0)]
    windows = np.stack([cs.get_window(w, 16) for w in names])
    out = host_jit(core.vmap(lambda w: cs.welch(x, window=w)[1]))(windows)
    for w, pxx in zip(names, out):
        close(pxx, ss.welch(x, window=w, nperseg=16)[1], what=w)


# between them, the cases set every option of stft away from its default
STFT_CASES = [dict(nperseg=8),
              dict(nperseg=7, noverlap=5, nfft=12, window=("kaiser", 5.0), detrend="linear", fs=10.0,
                   boundary="even"),
              dict(nperseg=8, noverlap=0, boundary=None, padded=False, detrend="constant", return_onesided=False),
              dict(window=np.hanning(8), nperseg=None, boundary="odd", padded=False),
              dict(nperseg=64, boundary="constant")]  # longer than the signal: clipped to it, with a warning


def test_stft_options_match_scipy(rng):
    x = rng.standard_normal(50)
    xc = x + 1j * rng.standard_normal(50)
    with pytest.warns(UserWarning, match="nperseg=64 is greater than the input length 50"):
        out = jit_cases(cs.stft, STFT_CASES, x)
    with pytest.warns(UserWarning, match="the input is complex, so the spectrum is two-sided"):
        out_c = jit_cases(cs.stft, STFT_CASES[1:3], xc)
    for data, results, cases in ((x, out, STFT_CASES), (xc, out_c, STFT_CASES[1:3])):
        for case, (f, t, z) in zip(cases, results):
            f2, t2, z2 = quiet(ss.stft, data, **case)
            close(z, z2, what=case)
            close(f, f2, what=case)
            close(t, t2, what=case)


PSD_CASES = [dict(),  # 300 samples: nperseg=None means 256, as in SciPy (jax 0.10.2 uses all 300, against its docs)
             dict(nperseg=15, noverlap=10, nfft=20, detrend="linear", average="median", window="blackman", fs=3.0),
             dict(nperseg=16, detrend=False, scaling="spectrum", return_onesided=False)]


def test_welch_and_csd_options_match_scipy(rng):
    x, y = rng.standard_normal(300), rng.standard_normal(300)
    xc = x + 1j * rng.standard_normal(300)

    def run(x, y, xc):
        return ([cs.welch(x, **case) for case in PSD_CASES], [cs.csd(x, y, **case) for case in PSD_CASES[1:]],
                cs.csd(xc, y[:250], nperseg=16, average="median"))
    with pytest.warns(UserWarning, match="complex"):
        welch, csd, csd_c = host_jit(run)(x, y, xc)
    for case, (f, p) in zip(PSD_CASES, welch):
        f2, p2 = ss.welch(x, **case)
        close(p, p2, what=case)
        close(f, f2, what=case)
    for case, (f, pxy) in zip(PSD_CASES[1:], csd):
        f2, pxy2 = ss.csd(x, y, **case)
        close(pxy, pxy2, what=case)
        close(f, f2, what=case)
    assert welch[0][1].shape == (129,)
    # complex: two-sided, the median of real and imaginary parts; y is zero-padded to 300 samples
    close(csd_c[1], quiet(ss.csd, xc, y[:250], nperseg=16, average="median")[1])


def test_axis_argument_batch_and_broadcast(rng):
    x = rng.standard_normal((3, 40, 2))
    y = rng.standard_normal((1, 40, 2))  # broadcasts against x outside the axis

    def detrend_along_1(d):  # a callable detrend sees segments laid out as the data, along axis 1
        return d - d.mean(axis=1, keepdims=True)

    def run(x, y):
        return (cs.stft(x, nperseg=8, axis=1, detrend=detrend_along_1), cs.csd(x, y, nperseg=8, axis=-2),
                core.vmap(lambda row: cs.welch(row, nperseg=8)[1])(x[:, :, 0]))
    stft, csd, vmapped = host_jit(run)(x, y)
    close(stft[2], ss.stft(x, nperseg=8, axis=1, detrend=detrend_along_1)[2])
    close(csd[1], ss.csd(x, y, nperseg=8, axis=-2)[1])
    close(vmapped, np.stack([ss.welch(row, nperseg=8)[1] for row in x[:, :, 0]]))


ROUND_TRIPS = [dict(nperseg=8), dict(nperseg=7, noverlap=0, window="boxcar"),
               dict(nperseg=8, noverlap=6, nfft=12, window="hamming", fs=4.0), dict(nperseg=6, noverlap=5)]


def _istft_args(case):
    return {k: v for k, v in case.items() if k in ("nperseg", "noverlap", "nfft", "window", "fs")}


def test_istft_inverts_stft_and_matches_scipy(rng):
    x = rng.standard_normal(45)  # not a whole number of segments: stft pads, istft returns the padding too
    xc = x + 1j * rng.standard_normal(45)

    def run(x, xc):
        real = [cs.istft(cs.stft(x, **case)[2], **_istft_args(case)) for case in ROUND_TRIPS]
        two_sided = cs.istft(cs.stft(xc, nperseg=8, return_onesided=False)[2], nperseg=8, input_onesided=False)
        return real, two_sided
    real, two_sided = host_jit(run)(x, xc)
    for case, (t, xr) in zip(ROUND_TRIPS, real):
        t2, x2 = ss.istft(ss.stft(x, **case)[2], **_istft_args(case))
        close(xr, x2, what=case)
        close(t, t2, what=case)
        close(xr[:45], x, what=case)  # the round trip itself
    close(two_sided[1][:45], xc)
    assert two_sided[1].dtype == np.complex128


def test_istft_axes_batches_and_nola(rng):
    x = rng.standard_normal((3, 40, 2))
    z = ss.stft(x, nperseg=8, axis=1)[2]  # (3, frequencies, 2, segments)
    layouts = [(3, 1), (1, 3), (0, 2)]  # (time_axis, freq_axis)
    out = host_jit(lambda z: [cs.istft(jnp.moveaxis(z, (1, 3), (f, t)), nperseg=8, time_axis=t, freq_axis=f)
                              for t, f in layouts])(z)
    for (t_axis, f_axis), (t, xr) in zip(layouts, out):
        zt = np.moveaxis(z, (1, 3), (f_axis, t_axis))
        close(xr, ss.istft(zt, nperseg=8, time_axis=t_axis, freq_axis=f_axis)[1], what=(t_axis, f_axis))
    # one time per output sample (SciPy and JAX count the first axis of a batched result instead)
    t, xr = out[0]
    assert xr.shape == (3, 2, 40) and t.shape == (40,)
    # without stft's boundary extension the Hann window vanishes at the ends: both warn (NOLA)
    z1 = ss.stft(x[0, :, 0], nperseg=8, boundary=None, padded=False)[2]
    with pytest.warns(UserWarning, match="NOLA"):
        expected = ss.istft(z1, nperseg=8, boundary=False)[1]
    with pytest.warns(UserWarning, match="istft: the NOLA condition fails"):
        close(host_jit(lambda z: cs.istft(z, nperseg=8, boundary=False)[1])(z1), expected)


DETREND_CASES = [dict(), dict(type="constant"), dict(axis=0, bp=[1, 3]), dict(type="l", bp=[0, 5, 11, 12]),
                 dict(type="c", axis=0)]


def test_detrend_matches_scipy(rng):
    data = rng.standard_normal((5, 12))
    cdata = data + 1j * rng.standard_normal((5, 12))
    ramp = np.arange(12) ** 2  # integers become floats
    real, complex_, ramp_detrended = host_jit(lambda d, c, r: ([cs.detrend(d, **case) for case in DETREND_CASES],
                                                               cs.detrend(c, bp=[4]), cs.detrend(r)))(data, cdata, ramp)
    for case, result in zip(DETREND_CASES, real):
        close(result, ss.detrend(data, **case), what=case)
    close(complex_, ss.detrend(cdata, bp=[4]))
    close(ramp_detrended, ss.detrend(ramp.astype(float)))


# (in1 shape, in2 shape, axes, modes): either order of sizes (a swap in 'valid'), batch axes that
# broadcast, size-1 axes (a product: SciPy treats them as batch axes), four axes (past rfftn's three)
FFTCONVOLVE_CASES = [((7,), (3,), None, ("full", "same", "valid")), ((3,), (6,), None, ("valid",)),
                     ((6, 5), (3, 4), None, ("same",)), ((4, 6), (1, 3), -1, ("full",)),
                     ((1, 6), (3, 3), [1], ("same",)),
                     ((4, 3, 6), (2, 3, 3), (0, 2), ("valid",)), ((1, 4), (3, 1), None, ("valid",)),
                     ((2, 3, 4, 3), (2, 2, 2, 2), None, ("full",))]


def test_fftconvolve_matches_scipy(rng):
    cases = [(rng.standard_normal(s1), rng.standard_normal(s2), axes, mode)
             for s1, s2, axes, modes in FFTCONVOLVE_CASES for mode in modes]
    cases.append((rng.standard_normal((6, 5)) + 1j * rng.standard_normal((6, 5)), rng.standard_normal((3, 4)), None,
                  "same"))
    out = host_jit(lambda pairs: [cs.fftconvolve(a, b, mode=mode, axes=axes)
                                  for (a, b), (_, _, axes, mode) in zip(pairs, cases)])([c[:2] for c in cases])
    for (a, b, axes, mode), result in zip(cases, out):
        close(result, ss.fftconvolve(a, b, mode=mode, axes=axes), what=(a.shape, b.shape, axes, mode))


def test_gradients_match_finite_differences(rng):
    x, kernel, window = rng.standard_normal(24), rng.standard_normal(5), np.hanning(8)

    def scalar(x, kernel, window):  # stft (linear detrend, a Hamming window), welch, fftconvolve, csd
        z = cs.stft(x, nperseg=8, detrend="linear", window="hamming")[2]
        return (jnp.sum(jnp.abs(z) ** 2) + jnp.sum(jnp.sqrt(cs.welch(x, nperseg=8)[1]))
                + jnp.sum(cs.fftconvolve(x, kernel, mode="same") ** 2)
                + jnp.sum(cs.csd(x, x[::-1], window=window)[1].imag))  # a window array is differentiable too

    # directional derivatives: the gradient against central differences along random directions
    value, grads = host_jit(lambda *a: (scalar(*a), core.grad(scalar, argnums=(0, 1, 2))(*a)))(x, kernel, window)
    value_at = core.jit(scalar)
    eps = 1e-5
    for _ in range(3):
        directions = [rng.standard_normal(a.shape) for a in (x, kernel, window)]
        plus = value_at(*(a + eps * d for a, d in zip((x, kernel, window), directions)))
        minus = value_at(*(a - eps * d for a, d in zip((x, kernel, window), directions)))
        numeric = (float(plus) - float(minus)) / (2 * eps)
        analytic = sum(float(np.vdot(g, d)) for g, d in zip(grads, directions))
        np.testing.assert_allclose(analytic, numeric, rtol=1e-7)
    close(value, value_at(x, kernel, window))


def test_errors_name_the_problem():
    x = np.ones(20)
    with pytest.raises(ValueError, match=re.escape("stft: noverlap=8 must be in [0, nperseg=8)")):
        cs.stft(x, nperseg=8, noverlap=8)
    with pytest.raises(ValueError, match=re.escape("welch: nfft=4 must be at least nperseg=8")):
        cs.welch(x, nperseg=8, nfft=4)
    with pytest.raises(ValueError, match=re.escape("csd: nperseg=6 differs from the window's length 8")):
        cs.csd(x, x, window=np.ones(8), nperseg=6)
    with pytest.raises(ValueError, match=re.escape("welch: window must be 1-D; got float64[2, 4]")):
        cs.welch(x, window=np.ones((2, 4)))
    with pytest.raises(ValueError, match=re.escape("csd: x and y must broadcast together outside axis 1; got "
                                                   "float64[3, 20] and float64[2, 20]")):
        cs.csd(np.ones((3, 20)), np.ones((2, 20)))
    with pytest.raises(ValueError, match="get_window: unknown window 'hanning'"):
        cs.welch(x, window="hanning", nperseg=8)
    with pytest.raises(ValueError, match=re.escape("get_window: the 'kaiser' window needs parameters")):
        cs.stft(x, window="kaiser", nperseg=8)
    with pytest.raises(ValueError, match="stft: boundary must be one of"):
        cs.stft(x, boundary="periodic")
    with pytest.raises(ValueError, match="welch: average must be one of"):
        cs.welch(x, nperseg=4, average="max")
    with pytest.raises(ValueError, match=re.escape("istft: time_axis and freq_axis must differ; both are 1")):
        cs.istft(np.ones((5, 4)), time_axis=1, freq_axis=-1)
    with pytest.raises(ValueError, match=re.escape("fftconvolve: axis 0 is not convolved (axes=(1,)), so in1 and "
                                                   "in2 must have equal sizes there, or size 1 to broadcast; got "
                                                   "float64[3, 4] and float64[2, 2]")):
        cs.fftconvolve(np.ones((3, 4)), np.ones((2, 2)), axes=1)
    with pytest.raises(ValueError, match="in 'valid' mode one input must be at least as large"):
        cs.fftconvolve(np.ones((3, 2)), np.ones((2, 3)), mode="valid")
    with pytest.raises(TypeError, match=re.escape("welch: nperseg must be an integer; got 8.5")):
        cs.welch(x, nperseg=8.5)
    with pytest.raises(ValueError, match=re.escape("detrend: breakpoints must lie in [0, 20]")):
        cs.detrend(x, bp=[25])
    with pytest.raises(core.errors.ConcretizationTypeError, match="core.scipy.signal.stft requires a concrete value "
                                                                  "for the argument nperseg"):
        core.jit(lambda x, n: cs.stft(x, nperseg=n))(x, 8)


PROGRAM = '''
import jax
import jax.numpy as jnp
import jax.scipy.signal as jss


@jax.jit
def denoise(noisy, kernel):
    """Keep the STFT bins above a threshold, invert, and compare spectra before and after."""
    freqs, times, spectrum = jss.stft(noisy, nperseg=32, noverlap=24, window="hann")
    mask = jnp.abs(spectrum) > 0.1
    _, cleaned = jss.istft(jnp.where(mask, spectrum, 0.0), nperseg=32, noverlap=24, window="hann")
    cleaned = cleaned[:noisy.shape[0]]
    _, psd_before = jss.welch(noisy, nperseg=64, detrend="linear")
    _, psd_after = jss.welch(cleaned, nperseg=64, detrend="linear")
    smooth = jss.fftconvolve(jss.detrend(noisy), kernel, mode="same")
    return freqs, mask, cleaned, psd_before, psd_after, smooth


def band_power(signal):
    freqs, psd = jss.welch(signal, nperseg=64)
    return jnp.sum(jnp.where((freqs > 0.05) & (freqs < 0.15), psd, 0.0))


band_power_grad = jax.jit(jax.grad(band_power))
'''


def test_jax_style_program_matches_scipy(rng):
    namespace = {}
    exec(compile(port(PROGRAM), "<jax-style program>", "exec"), namespace)
    n = np.arange(256)
    noisy = np.sin(2 * np.pi * 0.1 * n) + 0.02 * n / 256 + 0.1 * rng.standard_normal(256)
    kernel = np.hanning(7) / np.hanning(7).sum()
    freqs, mask, cleaned, psd_before, psd_after, smooth = namespace["denoise"](noisy, kernel)
    f2, _, z2 = ss.stft(noisy, nperseg=32, noverlap=24, window="hann")
    close(freqs, f2)
    np.testing.assert_array_equal(np.asarray(mask), np.abs(z2) > 0.1)
    cleaned2 = ss.istft(np.where(np.abs(z2) > 0.1, z2, 0.0), nperseg=32, noverlap=24, window="hann")[1][:256]
    close(cleaned, cleaned2)
    close(psd_before, ss.welch(noisy, nperseg=64, detrend="linear")[1])
    close(psd_after, ss.welch(cleaned2, nperseg=64, detrend="linear")[1])
    close(smooth, ss.fftconvolve(ss.detrend(noisy), kernel, mode="same"))
    # the 0.1-cycle tone survives the mask: most of its band's power is kept
    f64, before = ss.welch(noisy, nperseg=64)
    in_band = (f64 > 0.05) & (f64 < 0.15)
    assert ss.welch(cleaned2, nperseg=64)[1][in_band].sum() > 0.8 * before[in_band].sum()
    # d(band power)/dx by central differences of SciPy's welch (exact up to rounding: it is quadratic)
    eps, grad = 1e-3, np.asarray(namespace["band_power_grad"](noisy))
    for i in (0, 37, 128, 255):
        e = np.zeros(256)
        e[i] = eps
        numeric = (ss.welch(noisy + e, nperseg=64)[1][in_band].sum()
                   - ss.welch(noisy - e, nperseg=64)[1][in_band].sum()) / (2 * eps)
        np.testing.assert_allclose(grad[i], numeric, rtol=1e-6, atol=1e-9)
