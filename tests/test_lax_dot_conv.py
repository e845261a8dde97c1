"""lax.dot_general / dot / batch_matmul and the convolutions against NumPy float64 oracles:
np.einsum for contractions, a direct loop for convolutions, a scatter loop for conv_transpose."""
import string

import numpy as np
import pytest

import core.numpy as jnp
from core import dtypes, lax, test_util as tu

F32, F16, BF16, I32, I8, BOOL = (np.dtype(np.float32), np.dtype(np.float16), dtypes.bfloat16,
                                 np.dtype(np.int32), np.dtype(np.int8), np.dtype(np.bool_))


def _tol(dtype):
    # Contractions sum several rounded products: half precisions get a loose relative tolerance.
    return {F16: 1e-2, BF16: 5e-2}.get(np.dtype(dtype), None)


def _check(out, expected, dtype):
    tol = _tol(dtype)
    if tol is None:
        tu.assert_allclose(out, expected, dtype, atol=1e-5 if np.dtype(dtype) == F32 else None)
    else:
        tu.assert_allclose(out, expected, dtype, atol=tol * 4, rtol=tol)


# ----- dot_general ---------------------------------------------------------------------------

def dot_general_ref(x, y, dims):
    """np.einsum with one letter per axis: contracting and batch pairs share letters."""
    (lc, rc), (lb, rb) = dims
    letters = iter(string.ascii_letters)
    lhs = [next(letters) for _ in range(x.ndim)]
    rhs = [next(letters) for _ in range(y.ndim)]
    for a, b in zip(lc + lb, rc + rb):
        rhs[b] = lhs[a]
    out = [lhs[a] for a in lb]
    out += [lhs[i] for i in range(x.ndim) if i not in lb and i not in lc]
    out += [rhs[i] for i in range(y.ndim) if i not in rb and i not in rc]
    spec = f"{''.join(lhs)},{''.join(rhs)}->{''.join(out)}"
    if x.dtype == np.bool_:
        return np.einsum(spec, x.astype(np.int64), y.astype(np.int64)) > 0
    kind = np.int64 if x.dtype.kind in "iu" else np.float64
    return np.einsum(spec, x.astype(kind), y.astype(kind))


DOT_CASES = [
    ((3, 4), (4, 5), (((1,), (0,)), ((), ()))),
    ((2, 3, 4), (2, 4, 5), (((2,), (1,)), ((0,), (0,)))),
    ((4, 3), (5, 4), (((0,), (1,)), ((), ()))),
    ((2, 3, 4, 5), (5, 3, 2, 6), (((1, 3), (1, 0)), ((0,), (2,)))),
    ((3,), (3,), (((0,), (0,)), ((), ()))),
    ((2, 3), (4,), (((), ()), ((), ()))),
    ((0, 3), (3, 2), (((1,), (0,)), ((), ()))),
    ((2, 0), (0, 3), (((1,), (0,)), ((), ()))),
]


@pytest.mark.parametrize("case,dtype", tu.sample_cases(
    tu.product(range(len(DOT_CASES)), [F32, F16, BF16, I32, BOOL]), "dot_general", n=14))
def test_dot_general_matches_einsum(rng, case, dtype):
    ls, rs, dims = DOT_CASES[case]
    x, y = tu.rand(rng, ls, dtype), tu.rand(rng, rs, dtype)
    out = lax.dot_general(jnp.asarray(x), jnp.asarray(y), dims)
    assert out.dtype == np.dtype(dtype)
    _check(out, dot_general_ref(x, y, dims), dtype)


@pytest.mark.parametrize("case", [1, 3])
def test_dot_general_float32_layouts(rng, case):
    ls, rs, dims = DOT_CASES[case]
    x, y = tu.rand(rng, ls, F32), tu.rand(rng, rs, F32)
    _check(lax.dot_general(jnp.asarray(x), jnp.asarray(y), dims), dot_general_ref(x, y, dims), F32)


def test_dot_general_preferred_int8_accumulates_in_int32(rng):
    # 64 products of up to 127 * 128 overflow int8 but not int32.
    x = rng.integers(-128, 128, size=(3, 64)).astype(np.int8)
    y = rng.integers(-128, 128, size=(64, 2)).astype(np.int8)
    out = lax.dot(jnp.asarray(x), jnp.asarray(y), preferred_element_type=jnp.int32)
    assert out.dtype == I32
    np.testing.assert_array_equal(np.asarray(out), x.astype(np.int64) @ y.astype(np.int64))


def test_dot_general_preferred_bf16_to_f32(rng):
    x, y = tu.rand(rng, (4, 32), BF16), tu.rand(rng, (32, 3), BF16)
    out = lax.dot_general(jnp.asarray(x), jnp.asarray(y), (((1,), (0,)), ((), ())), preferred_element_type=F32)
    assert out.dtype == F32
    # bf16 products are exact in f32, so only f32 summation error remains
    tu.assert_allclose(out, x.astype(np.float64) @ y.astype(np.float64), F32, atol=1e-4, rtol=1e-5)


def test_dot_general_bool_preferred_int(rng):
    x, y = tu.rand(rng, (3, 5), BOOL), tu.rand(rng, (5, 2), BOOL)
    out = lax.dot(jnp.asarray(x), jnp.asarray(y), preferred_element_type=I32)
    assert out.dtype == I32
    np.testing.assert_array_equal(np.asarray(out), x.astype(np.int64) @ y.astype(np.int64))


@pytest.mark.parametrize("ls,rs", [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 2)), ((2, 3), (3, 4))])
def test_dot_vector_matrix_cases(rng, ls, rs):
    x, y = tu.rand(rng, ls, F32), tu.rand(rng, rs, F32)
    out = lax.dot(jnp.asarray(x), jnp.asarray(y))
    tu.assert_allclose(out, np.dot(x.astype(np.float64), y), F32, atol=1e-5)


def test_batch_matmul(rng):
    x, y = tu.rand(rng, (2, 3, 4, 5), F32), tu.rand(rng, (2, 3, 5, 2), F32)
    tu.assert_allclose(lax.batch_matmul(jnp.asarray(x), jnp.asarray(y)), x.astype(np.float64) @ y, F32, atol=1e-5)
    with pytest.raises(ValueError, match=r"batch_matmul requires operands of equal rank >= 2"):
        lax.batch_matmul(jnp.ones((2, 3)), jnp.ones((1, 3, 2)))


def test_dot_general_weak_type_and_shape_only():
    out = lax.dot_general(jnp.ones((2, 3)), jnp.ones((3,)), (((1,), (0,)), ((), ())))
    assert out.shape == (2,) and not out.weak_type


DOT_ERRORS = [
    ((3,), (4,), (((0,), (0,)), ((), ())), r"dot_general requires contracting dimensions to have the same shape, "
                                            r"got \(3,\) and \(4,\)\."),
    ((2, 3), (4, 3), (((1,), (1,)), ((0,), (0,))), r"batch dimensions to have the same shape, got \(2,\) and \(4,\)"),
    ((2, 3), (2, 3), (((1, 1), (1, 0)), ((), ())), r"lhs contracting dimensions to be distinct, got \(1, 1\)"),
    ((2, 3), (2, 3), (((1,), (1,)), ((1,), (0,))), r"lhs batch dimensions and lhs contracting dimensions to be "
                                                    r"disjoint, got lhs_batch \(1,\) and lhs_contracting \(1,\)"),
    ((2, 3), (2, 3), (((1,), (1,)), ((0,), ())), r"lhs batch dimensions and rhs batch dimensions to have the same "
                                                  r"length, got \(0,\) and \(\)"),
    ((2, 3), (2, 3), (((1, 0), (1,)), ((), ())), r"contracting dimensions to have the same length"),
    ((2, 3), (2, 3), (((2,), (1,)), ((), ())), r"lhs contracting dimensions to be in range \[0, 2\)"),
]


@pytest.mark.parametrize("ls,rs,dims,msg", DOT_ERRORS)
def test_dot_general_shape_errors(ls, rs, dims, msg):
    with pytest.raises(TypeError, match=msg):
        lax.dot_general(jnp.ones(ls), jnp.ones(rs), dims)


def test_dot_errors():
    with pytest.raises(TypeError, match=r"dot_general requires operands of the same dtype, got f32 and i32.*jnp"):
        lax.dot(jnp.ones(3), jnp.ones(3, jnp.int32))
    with pytest.raises(TypeError, match=r"preferred_element_type i32 is incompatible with operands of dtype f32"):
        lax.dot(jnp.ones(3), jnp.ones(3), preferred_element_type=jnp.int32)
    with pytest.raises(TypeError, match=r"Incompatible shapes for dot: got \(2, 3\) and \(4,\)"):
        lax.dot(jnp.ones((2, 3)), jnp.ones(4))
    with pytest.raises(TypeError, match=r"dot requires 1-D or 2-D operands"):
        lax.dot(jnp.ones((2, 3, 4)), jnp.ones(4))


# ----- conv_general_dilated ------------------------------------------------------------------

def _dilate_np(x, dil, axes_from=2):
    shape = list(x.shape)
    for i, d in enumerate(dil):
        n = shape[axes_from + i]
        shape[axes_from + i] = 0 if n == 0 else (n - 1) * d + 1
    out = np.zeros(shape, x.dtype)
    out[(slice(None),) * axes_from + tuple(slice(None, None, d) for d in dil)] = x
    return out


def _pad_np(x, pads):
    width = [(0, 0), (0, 0)] + [(max(lo, 0), max(hi, 0)) for lo, hi in pads]
    x = np.pad(x, width)
    crop = tuple(slice(max(-lo, 0), x.shape[2 + i] - max(-hi, 0)) for i, (lo, hi) in enumerate(pads))
    return x[(slice(None), slice(None)) + crop]


def conv_ref(x, w, strides, pads, lhs_dil=None, rhs_dil=None, fgc=1, bgc=1):
    """Direct loop over output positions, NC... inputs and OI... kernels, in float64."""
    if bgc > 1:
        return np.concatenate([conv_ref(xs, ws, strides, pads, lhs_dil, rhs_dil)
                               for xs, ws in zip(np.split(x, bgc, 0), np.split(w, bgc, 0))], axis=1)
    if fgc > 1:
        return np.concatenate([conv_ref(xs, ws, strides, pads, lhs_dil, rhs_dil)
                               for xs, ws in zip(np.split(x, fgc, 1), np.split(w, fgc, 0))], axis=1)
    nsp = x.ndim - 2
    x = _pad_np(_dilate_np(x, lhs_dil or (1,) * nsp), pads)
    w = _dilate_np(w, rhs_dil or (1,) * nsp)
    k = w.shape[2:]
    out_sp = [max(0, (n - kk) // s + 1) if n >= kk else 0 for n, kk, s in zip(x.shape[2:], k, strides)]
    out = np.zeros((x.shape[0], w.shape[0], *out_sp))
    for pos in np.ndindex(*out_sp):
        window = x[(slice(None), slice(None)) + tuple(slice(p * s, p * s + kk) for p, s, kk in zip(pos, strides, k))]
        out[(slice(None), slice(None)) + pos] = np.tensordot(window, w, axes=(list(range(1, nsp + 2)),
                                                                           list(range(1, nsp + 2))))
    return out


def _same_pads(in_sp, k_eff, strides, lower=False):
    pads = []
    for n, k, s in zip(in_sp, k_eff, strides):
        total = max((-(-n // s) - 1) * s + k - n, 0)
        pads.append((total - total // 2, total // 2) if lower else (total // 2, total - total // 2))
    return pads


# (lhs NC.. shape, rhs OI.. shape, strides, padding, lhs_dil, rhs_dil, fgc, bgc, layout)
CONV_CASES = [
    ((2, 3, 6, 5), (4, 3, 3, 2), (1, 1), "VALID", None, None, 1, 1, "NCHW"),
    ((2, 3, 7, 6), (4, 3, 3, 3), (2, 1), "SAME", None, None, 1, 1, "NCHW"),
    ((1, 2, 7, 6), (3, 2, 2, 3), (1, 2), "SAME_LOWER", None, (2, 1), 1, 1, "NHWC"),
    ((1, 2, 4, 5), (3, 2, 3, 2), (1, 1), ((1, 2), (0, 1)), (2, 1), None, 1, 1, "NCHW"),
    ((1, 2, 5, 5), (2, 2, 2, 2), (2, 2), ((-1, 0), (1, 1)), None, (1, 2), 1, 1, "NHWC"),
    ((2, 4, 5, 5), (8, 1, 3, 3), (1, 1), "SAME", None, None, 4, 1, "NHWC"),
    ((1, 4, 5, 4), (6, 2, 2, 2), (1, 1), "VALID", None, None, 2, 1, "NCHW"),
    ((4, 3, 5, 4), (6, 3, 2, 2), (1, 1), "VALID", None, None, 1, 2, "NCHW"),
    ((2, 3, 9), (4, 3, 3), (2,), "SAME", None, None, 1, 1, "NWC"),
    ((1, 2, 4, 5, 4), (3, 2, 2, 2, 2), (1, 2, 1), "VALID", None, (1, 1, 2), 1, 1, "NCDHW"),
    ((0, 2, 4, 4), (3, 2, 2, 2), (1, 1), "VALID", None, None, 1, 1, "NCHW"),
    ((1, 2, 2, 2), (3, 2, 3, 3), (1, 1), "VALID", None, None, 1, 1, "NCHW"),
]

_LAYOUTS = {"NCHW": ("NCHW", "OIHW", "NCHW"), "NHWC": ("NHWC", "HWIO", "NHWC"), "NWC": ("NWC", "WIO", "NWC"),
            "NCDHW": ("NCDHW", "OIDHW", "NCDHW")}


def _to_layout(a, spec, canonical):
    return np.transpose(a, [canonical.index(c) for c in spec])


def _run_conv_case(rng, case, dtype, preferred=None):
    ls, rs, strides, padding, lhs_dil, rhs_dil, fgc, bgc, layout = case
    x, w = tu.rand(rng, ls, dtype), tu.rand(rng, rs, dtype)
    lhs_spec, rhs_spec, out_spec = _LAYOUTS[layout]
    canon_l = "NC" + "".join(c for c in rhs_spec if c not in "OI")
    canon_r = "OI" + canon_l[2:]
    out = lax.conv_general_dilated(
        jnp.asarray(_to_layout(x, lhs_spec, canon_l)), jnp.asarray(_to_layout(w, rhs_spec, canon_r)), strides,
        padding, lhs_dilation=lhs_dil, rhs_dilation=rhs_dil, dimension_numbers=_LAYOUTS[layout],
        feature_group_count=fgc, batch_group_count=bgc, preferred_element_type=preferred)
    pads = padding
    if isinstance(padding, str):
        k_eff = [(k - 1) * d + 1 for k, d in zip(rs[2:], rhs_dil or (1,) * len(strides))]
        pads = ([(0, 0)] * len(strides) if padding == "VALID"
                else _same_pads(ls[2:], k_eff, strides, lower=padding == "SAME_LOWER"))
    kind = np.int64 if np.dtype(dtype).kind in "iu" else np.float64
    expected = conv_ref(x.astype(kind), w.astype(kind), strides, pads, lhs_dil, rhs_dil, fgc, bgc)
    return out, _to_layout(expected, out_spec, canon_l)


@pytest.mark.parametrize("case", range(len(CONV_CASES)))
def test_conv_general_dilated_matches_loop(rng, case):
    out, expected = _run_conv_case(rng, CONV_CASES[case], F32)
    assert out.dtype == F32
    tu.assert_allclose(out, expected, F32, atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("case,dtype", [(0, I32), (5, BF16), (1, F16), (6, BOOL)])
def test_conv_other_dtypes(rng, case, dtype):
    out, expected = _run_conv_case(rng, CONV_CASES[case], dtype)
    assert out.dtype == np.dtype(dtype)
    _check(out, expected, dtype)


def test_conv_preferred_int8_to_int32(rng):
    x = rng.integers(-128, 128, size=(1, 4, 5, 5)).astype(np.int8)
    w = rng.integers(-128, 128, size=(2, 4, 3, 3)).astype(np.int8)
    out = lax.conv(jnp.asarray(x), jnp.asarray(w), (1, 1), "VALID", preferred_element_type=jnp.int32)
    assert out.dtype == I32
    np.testing.assert_array_equal(np.asarray(out), conv_ref(x.astype(np.int64), w.astype(np.int64), (1, 1),
                                                            [(0, 0), (0, 0)]))


def test_conv_with_general_padding(rng):
    x, w = tu.rand(rng, (1, 2, 4, 4), F32), tu.rand(rng, (2, 2, 2, 2), F32)
    out = lax.conv_with_general_padding(jnp.asarray(x), jnp.asarray(w), (1, 1), ((1, 0), (0, 1)), (1, 2), (2, 1))
    expected = conv_ref(x.astype(np.float64), w, (1, 1), [(1, 0), (0, 1)], (1, 2), (2, 1))
    tu.assert_allclose(out, expected, F32, atol=1e-5, rtol=1e-5)


def test_conv_dimension_numbers_from_strings():
    dn = lax.conv_dimension_numbers((1, 5, 5, 3), (3, 3, 3, 8), ("NHWC", "HWIO", "NHWC"))
    assert dn == lax.ConvDimensionNumbers((0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2))
    # the spatial order follows the rhs spec
    dn = lax.conv_dimension_numbers((1, 3, 5, 5), (3, 3, 3, 8), ("NCHW", "WHIO", "NHWC"))
    assert dn == lax.ConvDimensionNumbers((0, 1, 3, 2), (3, 2, 0, 1), (0, 3, 2, 1))
    assert lax.conv_dimension_numbers((1, 2, 3), (1, 2, 3), None) == ((0, 1, 2),) * 3
    assert lax.padtype_to_pads((5, 7), (3, 2), (2, 3), "SAME") == ((1, 1), (0, 1))
    assert lax.padtype_to_pads((5, 7), (4, 2), (1, 3), "SAME_LOWER") == ((2, 1), (1, 0))


def test_conv_errors():
    x = jnp.ones((2, 4, 5, 5))
    with pytest.raises(TypeError, match=r"lhs feature dimension size divided by feature_group_count must equal the "
                                        r"rhs input feature dimension size, but 4 // 1 != 3"):
        lax.conv(x, jnp.ones((2, 3, 3, 3)), (1, 1), "VALID")
    with pytest.raises(TypeError, match=r"feature_group_count must divide the lhs feature dimension size, but 3 does "
                                        r"not divide 4"):
        lax.conv_general_dilated(x, jnp.ones((3, 1, 3, 3)), (1, 1), "VALID", feature_group_count=3)
    with pytest.raises(TypeError, match=r"output feature dimension size must be a multiple of feature_group_count, "
                                        r"but 3 is not a multiple of 2"):
        lax.conv_general_dilated(x, jnp.ones((3, 2, 3, 3)), (1, 1), "VALID", feature_group_count=2)
    with pytest.raises(TypeError, match=r"lhs batch dimension size must be a multiple of batch_group_count, but 2 is "
                                        r"not a multiple of 3"):
        lax.conv_general_dilated(x, jnp.ones((3, 4, 3, 3)), (1, 1), "VALID", batch_group_count=3)
    with pytest.raises(TypeError, match=r"lhs and rhs must have the same number of dimensions"):
        lax.conv(x, jnp.ones((2, 4, 3)), (1,), "VALID")
    with pytest.raises(TypeError, match=r"window_strides must have one entry per spatial dimension \(2\)"):
        lax.conv(x, jnp.ones((2, 4, 3, 3)), (1,), ((0, 0), (0, 0)))
    with pytest.raises(TypeError, match=r"spec must contain exactly one 'N' and one 'C'"):
        lax.conv_general_dilated(x, jnp.ones((2, 4, 3, 3)), (1, 1), "VALID", dimension_numbers=("NHWW", "OIHW", "NCHW"))
    with pytest.raises(TypeError, match=r"requires operands of the same dtype, got f32 and i32"):
        lax.conv(x, jnp.ones((2, 4, 3, 3), jnp.int32), (1, 1), "VALID")
    with pytest.raises(ValueError, match=r"String padding is not implemented for transposed convolution"):
        lax.conv_general_dilated(x, jnp.ones((2, 4, 3, 3)), (1, 1), "SAME", lhs_dilation=(2, 2))
    with pytest.raises(ValueError, match=r"Unknown padding type: 'FULL'"):
        lax.conv(x, jnp.ones((2, 4, 3, 3)), (1, 1), "FULL")


# ----- conv_transpose ------------------------------------------------------------------------

def conv_transpose_ref(x, w, strides, pads, rhs_dil):
    """Scatter form of JAX's conv_transpose (NH..C inputs, H..IO kernels, kernel not flipped):
    input element i and kernel tap k add x[i] * w[k] to output position s*i - d*k + pad_lo."""
    nsp = x.ndim - 2
    k_sp = w.shape[:nsp]
    out_sp = [(n - 1) * s + 1 + lo + hi - ((k - 1) * d + 1) + 1
              for n, s, (lo, hi), k, d in zip(x.shape[1:-1], strides, pads, k_sp, rhs_dil)]
    out = np.zeros((x.shape[0], *out_sp, w.shape[-1]))
    for i in np.ndindex(*x.shape[1:-1]):
        for k in np.ndindex(*k_sp):
            p = tuple(s * ii - d * kk + lo for ii, kk, s, d, (lo, _) in zip(i, k, strides, rhs_dil, pads))
            if all(0 <= pp < n for pp, n in zip(p, out_sp)):
                out[(slice(None),) + p] += x[(slice(None),) + i] @ w[k]
    return out


@pytest.mark.parametrize("ls,ks,strides,padding,rhs_dil", [
    ((2, 4, 3), (3, 3, 2), (2,), "SAME", (1,)),
    ((1, 5, 2), (4, 2, 3), (3,), "VALID", (1,)),
    ((1, 3, 4, 2), (3, 2, 2, 3), (2, 1), "SAME", (1, 2)),
    ((1, 3, 3, 2), (2, 2, 2, 2), (2, 2), ((1, 0), (2, 1)), (1, 1)),
])
def test_conv_transpose_matches_scatter(rng, ls, ks, strides, padding, rhs_dil):
    x, w = tu.rand(rng, ls, F32), tu.rand(rng, ks, F32)
    out = lax.conv_transpose(jnp.asarray(x), jnp.asarray(w), strides, padding, rhs_dilation=rhs_dil)
    if isinstance(padding, str):
        pads = []
        for k, s, d in zip(ks[:-2], strides, rhs_dil):
            k = (k - 1) * d + 1
            # JAX's definition: SAME pads k + s - 2 in all, VALID k + s - 2 + max(k - s, 0)
            total = k + s - 2 + (max(k - s, 0) if padding == "VALID" else 0)
            lo = k - 1 if padding == "VALID" or s > k - 1 else -(-total // 2)
            pads.append((lo, total - lo))
    else:
        pads = padding
    expected = conv_transpose_ref(x.astype(np.float64), w.astype(np.float64), strides, pads, rhs_dil)
    tu.assert_allclose(out, expected, F32, atol=1e-5, rtol=1e-5)
    if padding == "SAME":
        assert out.shape[1:-1] == tuple(n * s for n, s in zip(ls[1:-1], strides))
    if padding == "VALID":
        assert out.shape[1:-1] == tuple(n * s + max(k - s, 0) for n, s, k in zip(ls[1:-1], strides, ks[:-2]))


def test_conv_transpose_kernel_is_adjoint_of_conv(rng):
    # With transpose_kernel=True, conv_transpose is the adjoint of the strided VALID convolution
    # that uses the same kernel: <conv(x, w), y> == <x, conv_transpose(y, w)>.
    x, w = tu.rand(rng, (2, 9, 7, 3), F32), tu.rand(rng, (3, 3, 3, 4), F32)
    dn = ("NHWC", "HWIO", "NHWC")
    fwd = lax.conv_general_dilated(jnp.asarray(x), jnp.asarray(w), (2, 2), "VALID", dimension_numbers=dn)
    y = tu.rand(rng, fwd.shape, F32)
    back = lax.conv_transpose(jnp.asarray(y), jnp.asarray(w), (2, 2), "VALID", dimension_numbers=dn,
                              transpose_kernel=True)
    assert back.shape == x.shape
    lhs = np.sum(np.asarray(fwd, np.float64) * y)
    rhs = np.sum(x.astype(np.float64) * np.asarray(back, np.float64))
    np.testing.assert_allclose(lhs, rhs, rtol=1e-5)


def test_conv_transpose_errors():
    with pytest.raises(ValueError, match=r"conv_transpose padding must be 'SAME', 'VALID' or explicit pairs"):
        lax.conv_transpose(jnp.ones((1, 4, 2)), jnp.ones((3, 2, 2)), (2,), "SAME_LOWER")
    with pytest.raises(TypeError, match=r"conv_transpose requires operands of equal rank >= 3"):
        lax.conv_transpose(jnp.ones((1, 4)), jnp.ones((3, 2)), (), "SAME")


def test_transposed_convolution_with_a_kernel_larger_than_the_input_does_not_crash():
    # jaxlib 0.10's XLA aborts the process on this valid convolution (lhs_dilation > 1, kernel
    # spatially larger than the input); the wrapper dilates with interior padding instead
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 2, 3, 3)).astype(np.float32)
    k = rng.standard_normal((2, 2, 9, 2)).astype(np.float32)
    out = lax.conv_general_dilated(jnp.asarray(x), jnp.asarray(k), (2, 1), ((6, 8), (0, 0)), lhs_dilation=(1, 2))
    # oracle: dilate explicitly in NumPy, then a plain strided cross-correlation
    xd = np.zeros((2, 2, 3, 5), np.float64)
    xd[:, :, :, ::2] = x
    xp = np.pad(xd, ((0, 0), (0, 0), (6, 8), (0, 0)))
    oh, ow = (xp.shape[2] - 9) // 2 + 1, xp.shape[3] - 2 + 1
    expected = np.zeros((2, 2, oh, ow))
    for i in range(oh):
        for j in range(ow):
            expected[:, :, i, j] = np.einsum("ncij,ocij->no", xp[:, :, 2 * i:2 * i + 9, j:j + 2], k)
    np.testing.assert_allclose(np.asarray(out), expected, rtol=1e-4, atol=1e-4)
