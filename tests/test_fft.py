"""lax.fft and core.numpy.fft against numpy.fft (computed in float64/complex128)."""
import numpy as np
import pytest

import core.numpy as jnp
from core import lax
from core import test_util as tu
from core.numpy import fft as jfft

C64, F32 = np.dtype(np.complex64), np.dtype(np.float32)
# float32 FFTs accumulate O(log n) rounding per output; scaled by the signal's magnitude
ATOL, RTOL = 2e-5, 2e-5


def _rand(rng, shape, complex_=False):
    x = rng.standard_normal(shape)
    if complex_:
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(C64 if complex_ else F32)


def _close(actual, expected, dtype=None):
    dtype = dtype or np.asarray(actual).dtype
    tu.assert_allclose(actual, expected, dtype, atol=ATOL * max(1.0, np.abs(expected).max(initial=0)), rtol=RTOL)


# ----- the primitive ---------------------------------------------------------------------------------

@pytest.mark.parametrize("fft_type,shape,lengths", [
    ("FFT", (3, 5), (5,)), ("IFFT", (2, 4, 6), (4, 6)), ("FFT", (2, 3, 4, 5), (3, 4, 5)),
    ("RFFT", (2, 7), (7,)), ("RFFT", (4, 6), (4, 6)), ("IRFFT", (3, 4), (6,)), ("IRFFT", (2, 5, 3), (5, 5)),
    ("FFT", (0, 4), (4,)),
])
def test_lax_fft_matches_numpy(rng, fft_type, shape, lengths):
    x = _rand(rng, shape, complex_=fft_type != "RFFT")
    k = len(lengths)
    axes = tuple(range(len(shape) - k, len(shape)))
    x64 = x.astype(np.complex128 if fft_type != "RFFT" else np.float64)
    expected = {"FFT": lambda: np.fft.fftn(x64, axes=axes), "IFFT": lambda: np.fft.ifftn(x64, axes=axes),
                "RFFT": lambda: np.fft.rfftn(x64, axes=axes),
                "IRFFT": lambda: np.fft.irfftn(x64, s=lengths, axes=axes)}[fft_type]() if x.size else np.zeros(shape)
    out = lax.fft(jnp.asarray(x), fft_type, lengths)
    assert out.dtype == (F32 if fft_type == "IRFFT" else C64)
    _close(out, expected)


def test_lax_fft_accepts_enum_and_checks_shapes():
    out = lax.fft(jnp.asarray(np.ones(4, C64)), lax.FftType.FFT, (4,))
    _close(out, [4, 0, 0, 0])
    with pytest.raises(ValueError, match=r"FFT with fft_lengths \(5,\) needs trailing dimensions \(5,\), got operand shape \(4,\)"):
        lax.fft(jnp.asarray(np.ones(4, C64)), "FFT", (5,))
    with pytest.raises(ValueError, match=r"fft_lengths must name 1 to 3 dimensions"):
        lax.fft(jnp.asarray(np.ones((1, 1, 1, 1), C64)), "FFT", (1, 1, 1, 1))
    with pytest.raises(TypeError, match=r"fft \(FFT\) does not accept dtype f32"):
        lax.fft(jnp.ones(4), "FFT", (4,))
    with pytest.raises(ValueError, match=r"unknown fft_type 'DCT'"):
        lax.fft(jnp.ones(4), "DCT", (4,))


# ----- numpy.fft -------------------------------------------------------------------------------------

ONE_AXIS = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"]
CASES = tu.product(ONE_AXIS, [(8,), (3, 7), (2, 5, 4)], [None, 5, 9], [-1, 0], [None, "ortho", "forward"])


@pytest.mark.parametrize("name,shape,n,axis,norm", tu.sample_cases(CASES, "fft_one_axis", 14))
def test_one_axis_transforms_match_numpy(rng, name, shape, n, axis, norm):
    complex_in = name in ("fft", "ifft", "irfft", "hfft")
    x = _rand(rng, shape, complex_=complex_in)
    expected = getattr(np.fft, name)(x.astype(np.complex128 if complex_in else np.float64), n=n, axis=axis, norm=norm)
    out = getattr(jfft, name)(jnp.asarray(x), n=n, axis=axis, norm=norm)
    assert out.dtype == (F32 if name in ("irfft", "hfft") else C64)
    _close(out, expected)


MULTI = [("fft2", None, (-2, -1)), ("ifft2", (3, 6), (0, 2)), ("rfft2", None, (1, 2)), ("irfft2", (4, 5), (-2, -1)),
         ("fftn", None, None), ("ifftn", (2, 3), (2, 0)), ("rfftn", (3, 4, 8), (0, 1, 2)), ("irfftn", None, (0, 1, 2))]


@pytest.mark.parametrize("name,s,axes", MULTI)
@pytest.mark.parametrize("norm", [None, "ortho"])
def test_multi_axis_transforms_match_numpy(rng, name, s, axes, norm):
    complex_in = not name.startswith("rfft")
    x = _rand(rng, (3, 4, 5), complex_=complex_in)
    kwargs = {"s": s, "norm": norm}
    if axes is not None:
        kwargs["axes"] = axes
    expected = getattr(np.fft, name)(x.astype(np.complex128 if complex_in else np.float64), **kwargs)
    _close(getattr(jfft, name)(jnp.asarray(x), **kwargs), expected)


def test_fftn_over_more_than_three_axes(rng):
    x = _rand(rng, (2, 3, 2, 3, 2), complex_=True)
    _close(jfft.fftn(jnp.asarray(x)), np.fft.fftn(x.astype(np.complex128)))


@pytest.mark.parametrize("n", [1, 6, 7])
@pytest.mark.parametrize("norm", [None, "ortho", "forward"])
def test_round_trips(rng, n, norm):
    x = _rand(rng, (2, n), complex_=True)
    _close(jfft.ifft(jfft.fft(jnp.asarray(x), norm=norm), norm=norm), x)
    r = _rand(rng, (3, n), complex_=False)
    _close(jfft.irfft(jfft.rfft(jnp.asarray(r), norm=norm), n=n, norm=norm), r)
    _close(jfft.irfftn(jfft.rfftn(jnp.asarray(r), norm=norm), s=r.shape, norm=norm), r)


def test_real_and_integer_inputs_promote(rng, x64):
    ints = np.arange(6)
    out = jfft.fft(jnp.asarray(ints))
    assert out.dtype == np.complex128  # int64 -> float64 -> complex128 under x64
    _close(out, np.fft.fft(ints))
    assert jfft.rfft(jnp.asarray(np.ones(4, np.float64))).dtype == np.complex128
    assert jfft.rfft(jnp.asarray(np.ones(4, np.float32))).dtype == np.complex64


def test_default_promotion_is_complex64():
    assert jfft.fft(jnp.asarray(np.arange(4))).dtype == C64
    assert jfft.fft(jnp.asarray(np.ones(4, np.float16))).dtype == C64


def test_freqs_and_shifts(rng):
    for n in (1, 4, 7):
        _close(jfft.fftfreq(n), np.fft.fftfreq(n))
        _close(jfft.fftfreq(n, d=0.1), np.fft.fftfreq(n, d=0.1))
        _close(jfft.rfftfreq(n, 2.0), np.fft.rfftfreq(n, 2.0))
    assert jfft.fftfreq(4).dtype == F32
    _close(jfft.fftfreq(5, d=jnp.asarray(np.float32(0.5))), np.fft.fftfreq(5, 0.5))
    x = _rand(rng, (3, 5, 4), complex_=False)
    for axes in (None, 1, (0, 2)):
        np.testing.assert_array_equal(np.asarray(jfft.fftshift(jnp.asarray(x), axes)), np.fft.fftshift(x, axes))
        np.testing.assert_array_equal(np.asarray(jfft.ifftshift(jnp.asarray(x), axes)), np.fft.ifftshift(x, axes))


def test_numpy_fft_errors():
    with pytest.raises(ValueError, match=r'Invalid norm value \'bad\'; should be "backward", "ortho" or "forward"'):
        jfft.fft(jnp.ones(4), norm="bad")
    with pytest.raises(TypeError, match=r"rfft family requires real input, got dtype complex64"):
        jfft.rfft(jnp.asarray(np.ones(4, C64)))
    with pytest.raises(ValueError, match=r"fft: invalid number of data points \(0,\)"):
        jfft.fft(jnp.ones(4), n=0)
    with pytest.raises(ValueError, match=r"fftn: shape s \(4,\) and axes \(0, 1\) must have the same length"):
        jfft.fftn(jnp.ones((4, 4)), s=(4,), axes=(0, 1))
    with pytest.raises(ValueError, match=r"fftn does not support repeated axes"):
        jfft.fftn(jnp.ones((4, 4)), axes=(0, 0))
    with pytest.raises(ValueError, match=r"fftfreq: n must be a positive integer"):
        jfft.fftfreq(0)
    with pytest.raises(TypeError, match=r"fft requires ndarray or scalar arguments.*list"):
        jfft.fft([1.0, 2.0])
