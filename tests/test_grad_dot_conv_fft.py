"""Derivatives of dot_general, conv_general_dilated and fft (issue 4).

dot_general and conv_general_dilated are bilinear, fft is linear; their jvp and transpose rules
are checked with `check_grads` (central differences, and the inner-product identity for vjp) to
order 2 in float64, and the transposes against independent NumPy oracles (einsum, dense Jacobian
matrices built from numpy.fft). Order 1 of a bilinear function is exactly quadratic, so central
differences with eps=1.0 are exact there (docs/reliability.md N1); the order-2 checks differentiate the
derivative functions, which are cubic, so those keep the default eps.
"""
import numpy as np
import pytest

import core
import core.numpy as jnp
from core import lax, test_util as tu


def _check_bilinear(f, args):
    tu.check_grads(f, args, order=1, modes=("fwd", "rev"), eps=1.0)
    tu.check_grads(f, args, order=2, modes=("fwd", "rev"))


# ----- dot_general ---------------------------------------------------------------------------

# (lhs shape, rhs shape, dimension_numbers)
DOT_CASES = [
    ((3, 4), (4,), (((1,), (0,)), ((), ()))),                       # matrix-vector
    ((4,), (4,), (((0,), (0,)), ((), ()))),                         # vector-vector
    ((4,), (4, 3), (((0,), (0,)), ((), ()))),                       # vector-matrix
    ((2, 3), (3, 5), (((1,), (0,)), ((), ()))),                     # matrix-matrix
    ((3, 2), (3, 5), (((0,), (0,)), ((), ()))),                     # contracting lhs axis 0 (x^T y)
    ((3, 2, 4), (4, 3, 5), (((2,), (0,)), ((0,), (1,)))),           # batch dims not leading in rhs
    ((2, 4, 3), (3, 4, 2, 5), (((1,), (1,)), ((2, 0), (0, 2)))),    # two batch dims, out of order
    ((2, 3, 4, 5), (5, 4, 2, 6), (((2, 3), (1, 0)), ((0,), (2,)))),  # two contracting dims, swapped
    ((5, 2, 3), (3, 5, 2), (((1, 2), (2, 0)), ((0,), (1,)))),       # everything contracted but batch
    ((2, 3), (4,), (((), ()), ((), ()))),                           # outer product
    ((), (), (((), ()), ((), ()))),                                 # scalars
    ((2, 0), (0, 3), (((1,), (0,)), ((), ()))),                     # size-0 contraction
]


@pytest.mark.parametrize("lhs_shape,rhs_shape,dims", DOT_CASES)
def test_dot_general_grads(x64, rng, lhs_shape, rhs_shape, dims):
    x, y = rng.standard_normal(lhs_shape), rng.standard_normal(rhs_shape)
    _check_bilinear(lambda a, b: lax.dot_general(a, b, dims), (x, y))


def _einsum_spec(lhs_ndim, rhs_ndim, dims):
    (lc, rc), (lb, rb) = dims
    letters = iter("abcdefghijklmnop")
    lhs = [next(letters) for _ in range(lhs_ndim)]
    rhs = [next(letters) for _ in range(rhs_ndim)]
    for l_ax, r_ax in zip(lc + lb, rc + rb):
        rhs[r_ax] = lhs[l_ax]
    out = ([lhs[a] for a in lb] + [lhs[a] for a in range(lhs_ndim) if a not in lb + lc]
           + [rhs[a] for a in range(rhs_ndim) if a not in rb + rc])
    return "".join(lhs), "".join(rhs), "".join(out)


@pytest.mark.parametrize("lhs_shape,rhs_shape,dims", tu.sample_cases(DOT_CASES, "dot_general vjp einsum", n=6))
def test_dot_general_vjp_matches_einsum(x64, rng, lhs_shape, rhs_shape, dims):
    # an oracle independent of the forward: each cotangent is an einsum of ct with the other operand
    x, y = rng.standard_normal(lhs_shape), rng.standard_normal(rhs_shape)
    out, pullback = core.vjp(lambda a, b: lax.dot_general(a, b, dims), x, y)
    ct = rng.standard_normal(out.shape)
    ls, rs, os_ = _einsum_spec(len(lhs_shape), len(rhs_shape), dims)
    ct_x, ct_y = pullback(ct)
    tu.assert_allclose(ct_x, np.einsum(f"{os_},{rs}->{ls}", ct, y), np.float64)
    tu.assert_allclose(ct_y, np.einsum(f"{ls},{os_}->{rs}", x, ct), np.float64)


def test_dot_general_complex_grads_do_not_conjugate(x64, rng):
    x = rng.standard_normal((2, 3)) + 1j * rng.standard_normal((2, 3))
    y = rng.standard_normal((3, 4)) + 1j * rng.standard_normal((3, 4))
    dims = (((1,), (0,)), ((), ()))
    _check_bilinear(lambda a, b: lax.dot_general(a, b, dims), (x, y))
    ct = rng.standard_normal((2, 4)) + 1j * rng.standard_normal((2, 4))
    ct_x, ct_y = core.vjp(lambda a, b: lax.dot_general(a, b, dims), x, y)[1](ct)
    tu.assert_allclose(ct_x, ct @ y.T, np.complex128)
    tu.assert_allclose(ct_y, x.T @ ct, np.complex128)


@pytest.mark.parametrize("in_dtype,out_dtype", [(np.float32, np.float64), (core.numpy.bfloat16, np.float32)])
def test_dot_general_preferred_element_type_cotangents_keep_operand_dtypes(x64, rng, in_dtype, out_dtype):
    x = rng.standard_normal((3, 2, 4)).astype(in_dtype)
    y = rng.standard_normal((4, 3)).astype(in_dtype)
    dims = (((2,), (0,)), ((0,), (1,)))

    def f(a, b):
        return lax.dot_general(a, b, dims, preferred_element_type=out_dtype)

    out, pullback = core.vjp(f, x, y)
    assert out.dtype == np.dtype(out_dtype)
    ct = rng.standard_normal(out.shape).astype(out_dtype)
    ct_x, ct_y = pullback(ct)
    assert ct_x.dtype == np.dtype(in_dtype) and ct_y.dtype == np.dtype(in_dtype)
    x64_, y64, ct64 = (np.asarray(v, np.float64) for v in (x, y, ct))
    tu.assert_allclose(ct_x, np.einsum("bm,kb->bmk", ct64, y64), in_dtype)
    tu.assert_allclose(ct_y, np.einsum("bmk,bm->kb", x64_, ct64), in_dtype)
    # and the jvp carries the preferred type
    t_out = core.jvp(f, (x, y), (x, y))[1]
    assert t_out.dtype == np.dtype(out_dtype)


def test_dot_wrappers_float32_smoke(rng):
    x = rng.standard_normal((3, 4)).astype(np.float32)
    y = rng.standard_normal((4,)).astype(np.float32)
    tu.check_grads(lax.dot, (x, y), order=1)
    b1 = rng.standard_normal((2, 3, 4)).astype(np.float32)
    b2 = rng.standard_normal((2, 4, 5)).astype(np.float32)
    tu.check_grads(lax.batch_matmul, (b1, b2), order=1)


def test_dot_general_grad_under_jit(x64, rng):
    x, y = rng.standard_normal((2, 3, 4)), rng.standard_normal((4, 2, 5))
    dims = (((2,), (0,)), ((0,), (1,)))

    def loss(a, b):
        return jnp.sum(jnp.sin(lax.dot_general(a, b, dims)))

    expected = core.grad(loss, argnums=(0, 1))(x, y)
    for g in (core.grad(core.jit(loss), argnums=(0, 1)), core.jit(core.grad(loss, argnums=(0, 1)))):
        for a, e in zip(g(x, y), expected):
            tu.assert_allclose(a, e, np.float64)


def test_dot_general_cannot_transpose_both_operands():
    x = jnp.ones((2, 2))
    with pytest.raises(ValueError, match="dot_general is bilinear"):
        core.linear_transpose(lambda a: lax.dot_general(a, a, (((1,), (0,)), ((), ()))), x)(x)


# ----- conv_general_dilated ------------------------------------------------------------------

# (lhs shape, rhs shape, keyword arguments)
CONV_CASES = [
    ((2, 3, 7), (4, 3, 3), dict(window_strides=(1,), padding=((0, 0),))),
    ((2, 3, 9), (4, 3, 3), dict(window_strides=(2,), padding=((1, 2),), rhs_dilation=(2,))),
    ((2, 3, 5), (4, 3, 2), dict(window_strides=(3,), padding=((2, -1),), lhs_dilation=(2,))),
    ((1, 2, 6), (3, 2, 3), dict(window_strides=(2,), padding="SAME")),
    ((2, 2, 5, 6), (3, 2, 3, 2), dict(window_strides=(2, 1), padding=((1, 1), (0, 1)))),   # NCHW
    ((2, 5, 6, 3), (3, 2, 3, 4), dict(window_strides=(2, 1), padding=((1, 1), (0, 2)),
                                      dimension_numbers=("NHWC", "HWIO", "NHWC"))),
    ((2, 5, 4, 2), (2, 2, 3, 3), dict(window_strides=(1, 1), padding=((2, 0), (1, 1)), lhs_dilation=(2, 1),
                                      rhs_dilation=(1, 2), dimension_numbers=("NHWC", "OIHW", "NCHW"))),
    ((2, 4, 5, 6), (6, 2, 2, 3), dict(window_strides=(1, 2), padding=((1, 0), (1, 1)), rhs_dilation=(2, 1),
                                      feature_group_count=2)),
    ((2, 6, 7, 6), (3, 3, 2, 6), dict(window_strides=(2, 2), padding=((1, 1), (1, 1)), lhs_dilation=(1, 2),
                                      feature_group_count=3, dimension_numbers=("NHWC", "HWIO", "NHWC"))),
    ((4, 3, 6), (4, 3, 2), dict(window_strides=(1,), padding=((1, 0),), batch_group_count=2)),
    ((6, 5, 2), (3, 2, 6), dict(window_strides=(2,), padding=((0, 1),), rhs_dilation=(2,), batch_group_count=3,
                                dimension_numbers=("NWC", "WIO", "NWC"))),
    ((0, 2, 4), (3, 2, 2), dict(window_strides=(1,), padding=((0, 0),))),   # empty batch
]


@pytest.mark.parametrize("lhs_shape,rhs_shape,kwargs", CONV_CASES)
def test_conv_general_dilated_grads(x64, rng, lhs_shape, rhs_shape, kwargs):
    x, w = rng.standard_normal(lhs_shape), rng.standard_normal(rhs_shape)
    _check_bilinear(lambda a, b: lax.conv_general_dilated(a, b, **kwargs), (x, w))


def _conv1d_dense(x, w, stride, pad, lhs_dil, rhs_dil):
    """NCW x OIW convolution by explicit loops: an oracle independent of XLA's convolution."""
    n, c, width = x.shape
    o, _, k = w.shape
    xd = np.zeros((n, c, (width - 1) * lhs_dil + 1))
    xd[:, :, ::lhs_dil] = x
    lo, hi = pad
    xp = np.zeros((n, c, xd.shape[2] + lo + hi))
    src = xd[:, :, max(0, -lo):xd.shape[2] - max(0, -hi)]
    xp[:, :, max(0, lo):max(0, lo) + src.shape[2]] = src
    kd = (k - 1) * rhs_dil + 1
    out_w = (xp.shape[2] - kd) // stride + 1
    out = np.zeros((n, o, out_w))
    for i in range(out_w):
        window = xp[:, :, i * stride:i * stride + kd:rhs_dil]
        out[:, :, i] = np.einsum("ncw,ocw->no", window, w)
    return out


def test_conv_vjp_matches_loop_oracle_jacobian(x64, rng):
    # the vjp against the transposed Jacobian of a loop implementation (not of XLA's convolution)
    x, w = rng.standard_normal((2, 2, 5)), rng.standard_normal((3, 2, 2))
    conf = dict(stride=2, pad=(2, -1), lhs_dil=2, rhs_dil=2)

    def f(a, b):
        return lax.conv_general_dilated(a, b, (conf["stride"],), (conf["pad"],), lhs_dilation=(conf["lhs_dil"],),
                                        rhs_dilation=(conf["rhs_dil"],))

    out, pullback = core.vjp(f, x, w)
    ref = _conv1d_dense(x, w, **conf)
    tu.assert_allclose(out, ref, np.float64)
    ct = rng.standard_normal(ref.shape)
    ct_x, ct_w = pullback(ct)
    jac_x = np.stack([_conv1d_dense(e.reshape(x.shape), w, **conf).ravel() for e in np.eye(x.size)], axis=1)
    jac_w = np.stack([_conv1d_dense(x, e.reshape(w.shape), **conf).ravel() for e in np.eye(w.size)], axis=1)
    tu.assert_allclose(ct_x, (jac_x.T @ ct.ravel()).reshape(x.shape), np.float64)
    tu.assert_allclose(ct_w, (jac_w.T @ ct.ravel()).reshape(w.shape), np.float64)


def test_conv_float32_smoke_and_preferred_element_type(x64, rng):
    x = rng.standard_normal((1, 2, 5, 5)).astype(np.float32)
    w = rng.standard_normal((3, 2, 3, 3)).astype(np.float32)
    tu.check_grads(lambda a, b: lax.conv(a, b, (1, 1), "SAME"), (x, w), order=1)
    f = lambda a, b: lax.conv(a, b, (2, 1), "VALID", preferred_element_type=np.float64)  # noqa: E731
    out, pullback = core.vjp(f, x, w)
    assert out.dtype == np.float64
    ct_x, ct_w = pullback(np.ones(out.shape))
    assert ct_x.dtype == np.float32 and ct_w.dtype == np.float32
    ref_x, ref_w = core.vjp(lambda a, b: lax.conv(a, b, (2, 1), "VALID"), x.astype(np.float64),
                            w.astype(np.float64))[1](np.ones(out.shape))
    tu.assert_allclose(ct_x, ref_x, np.float32)
    tu.assert_allclose(ct_w, ref_w, np.float32)


def test_conv_grad_under_jit(x64, rng):
    x, w = rng.standard_normal((2, 5, 5, 2)), rng.standard_normal((2, 2, 2, 3))

    def loss(a, b):
        y = lax.conv_general_dilated(a, b, (2, 1), ((1, 0), (0, 1)), dimension_numbers=("NHWC", "HWIO", "NHWC"))
        return jnp.sum(jnp.sin(y))

    expected = core.grad(loss, argnums=(0, 1))(x, w)
    for g in (core.grad(core.jit(loss), argnums=(0, 1)), core.jit(core.grad(loss, argnums=(0, 1)))):
        for a, e in zip(g(x, w), expected):
            tu.assert_allclose(a, e, np.float64)


# ----- fft ----------------------------------------------------------------------------------

FFT_LENGTHS = [((5,), (2,)), ((4,), ()), ((1,), (3,)), ((3, 4), ()), ((4, 3), (1,)), ((2, 3, 4), ()),
               ((2, 2, 5), (2,)), ((4,), (0,))]


def _fft_input_shape(fft_type, lengths, batch):
    if fft_type == "IRFFT":
        return batch + lengths[:-1] + (lengths[-1] // 2 + 1,)
    return batch + lengths


@pytest.mark.parametrize("fft_type,lengths,batch", tu.sample_cases(
    [(t, ln, b) for t in ("FFT", "IFFT") for ln, b in FFT_LENGTHS], "fft complex grads", n=8))
def test_fft_complex_grads(x64, rng, fft_type, lengths, batch):
    shape = _fft_input_shape(fft_type, lengths, batch)
    x = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
    tu.check_grads(lambda a: lax.fft(a, fft_type, lengths), (x,), order=2)


# RFFT maps reals to complex and IRFFT complex to reals: check_vjp's inner-product identity
# compares complex sums, which only agree in their real parts for such maps, so these are
# checked through real -> real wrappers (real and imaginary parts split).

@pytest.mark.parametrize("lengths,batch", tu.sample_cases(FFT_LENGTHS, "rfft grads", n=6))
def test_rfft_grads(x64, rng, lengths, batch):
    x = rng.standard_normal(_fft_input_shape("RFFT", lengths, batch))

    def f(a):
        y = lax.fft(a, "RFFT", lengths)
        return lax.real(y), lax.imag(y)

    tu.check_grads(f, (x,), order=2)


@pytest.mark.parametrize("lengths,batch", tu.sample_cases(FFT_LENGTHS, "irfft grads", n=6))
def test_irfft_grads(x64, rng, lengths, batch):
    shape = _fft_input_shape("IRFFT", lengths, batch)

    def f(re, im):
        c = lax.add(lax.convert_element_type(re, np.complex128),
                    lax.mul(lax.convert_element_type(im, np.complex128), np.complex128(1j)))
        return lax.fft(c, "IRFFT", lengths)

    tu.check_grads(f, (rng.standard_normal(shape), rng.standard_normal(shape)), order=2)


def _numpy_fft(fft_type, lengths):
    axes = tuple(range(-len(lengths), 0))
    return {"FFT": lambda a: np.fft.fftn(a, axes=axes), "IFFT": lambda a: np.fft.ifftn(a, axes=axes),
            "RFFT": lambda a: np.fft.rfftn(a, axes=axes),
            "IRFFT": lambda a: np.fft.irfftn(a, lengths, axes=axes)}[fft_type]


def _expected_transpose(fft_type, lengths, in_shape, ct):
    """The cotangent of the input in JAX's convention (a complex z = u + iv gets dL/du - i dL/dv),
    from the dense real Jacobian of numpy.fft over the real coordinates of the input."""
    g = _numpy_fft(fft_type, lengths)
    ct = ct.ravel()
    # ct stands for dL/du - i dL/dv of the output's real and imaginary parts
    dl_du, dl_dv = ct.real, -ct.imag
    size = int(np.prod(in_shape))
    cols = [g(e.reshape(in_shape)).ravel() for e in np.eye(size)]
    d_re = np.array([np.sum(dl_du * c.real + dl_dv * c.imag) for c in cols])
    if fft_type == "RFFT":
        return d_re.reshape(in_shape)
    cols = [g(1j * e.reshape(in_shape)).ravel() for e in np.eye(size)]
    d_im = np.array([np.sum(dl_du * c.real + dl_dv * c.imag) for c in cols])
    return (d_re - 1j * d_im).reshape(in_shape)


@pytest.mark.parametrize("fft_type,lengths,batch", tu.sample_cases(
    [(t, ln, b) for t in ("FFT", "IFFT", "RFFT", "IRFFT") for ln, b in FFT_LENGTHS],
    "fft transpose dense", n=12))
def test_fft_transpose_matches_dense_jacobian(x64, rng, fft_type, lengths, batch):
    in_shape = _fft_input_shape(fft_type, lengths, batch)
    dtype = np.float64 if fft_type == "RFFT" else np.complex128
    out_aval = core.eval_shape(lambda a: lax.fft(a, fft_type, lengths), np.zeros(in_shape, dtype))
    ct = rng.standard_normal(out_aval.shape)
    if out_aval.dtype == np.complex128:
        ct = ct + 1j * rng.standard_normal(out_aval.shape)
    (got,) = core.linear_transpose(lambda a: lax.fft(a, fft_type, lengths), np.zeros(in_shape, dtype))(ct)
    assert got.dtype == np.dtype(dtype) and got.shape == in_shape
    tu.assert_allclose(got, _expected_transpose(fft_type, lengths, in_shape, ct), dtype)


def test_fft_float32_smoke_and_jit(rng):
    x = (rng.standard_normal((2, 4)) + 1j * rng.standard_normal((2, 4))).astype(np.complex64)
    tu.check_grads(lambda a: lax.fft(a, "FFT", (4,)), (x,), order=1)
    r = rng.standard_normal((3, 6)).astype(np.float32)

    def loss(a):
        return jnp.sum(lax.real(lax.fft(a, "RFFT", (6,))) ** 2) + jnp.sum(lax.fft(lax.fft(a, "RFFT", (6,)),
                                                                                 "IRFFT", (6,)))

    expected = core.grad(loss)(r)
    tu.assert_allclose(core.grad(core.jit(loss))(r), expected, np.float32)
    tu.assert_allclose(core.jit(core.grad(loss))(r), expected, np.float32)
