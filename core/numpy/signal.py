"""1-D discrete convolution and cross-correlation, `convolve` and `correlate`, as NumPy has them
(modes 'full', 'same', 'valid'), lowered to one `lax.conv_general_dilated`.

As in JAX, the longer input slides over the shorter one whatever their order (NumPy's rule too),
empty inputs are refused, and integer inputs stay integer. `precision` and
`preferred_element_type` are passed to the convolution.
"""
from .. import dtypes
from .. import lax
from ._util import asarray_operand, check_arraylike, promote_dtypes
from . import ufuncs as _u

__all__ = ["convolve", "correlate"]

_MODES = ("full", "same", "valid")


def _conv(name, a, v, mode, precision, preferred_element_type):
    check_arraylike(name, a, v)
    a, v = promote_dtypes(asarray_operand(a), asarray_operand(v))
    if a.ndim != 1 or v.ndim != 1:
        raise ValueError(f"{name}() only supports 1-dimensional inputs, got shapes {a.shape} and {v.shape}")
    if a.shape[0] == 0 or v.shape[0] == 0:
        raise ValueError(f"{name}: inputs cannot be empty, got shapes {a.shape} and {v.shape}")
    if mode not in _MODES:
        raise ValueError(f"{name}: mode must be one of {_MODES}, got {mode!r}")
    if dtypes.is_bool(a.dtype):
        raise TypeError(f"{name}: bool inputs are not supported (got {a.dtype}); cast them with .astype(int)")
    reverse_out = False
    if name == "correlate":
        v = _u.conjugate(v)
        if a.shape[0] < v.shape[0]:
            # correlate(a, v) is correlate(v, a) reversed (NumPy's rule for a shorter first input)
            a, v, reverse_out = v, a, True
    else:
        if a.shape[0] < v.shape[0]:
            a, v = v, a
        v = lax.rev(v, (0,))  # the convolution flips its kernel; lax's conv is a correlation
    m = v.shape[0]
    padding = {"valid": (0, 0), "same": (m // 2, m - m // 2 - 1), "full": (m - 1, m - 1)}[mode]
    out = lax.conv_general_dilated(lax.reshape(a, (1, 1, a.shape[0])), lax.reshape(v, (1, 1, m)), (1,), [padding],
                                   precision=precision, preferred_element_type=preferred_element_type)
    out = lax.reshape(out, (out.shape[-1],))
    return lax.rev(out, (0,)) if reverse_out else out


def convolve(a, v, mode="full", *, precision=None, preferred_element_type=None):
    """The discrete linear convolution `(a * v)[n] = sum_k a[k] v[n - k]` of 1-D `a` and `v`, the
    'full' result (length N + M - 1), its centre of length max(N, M) ('same'), or only the
    positions where they overlap fully ('valid', length max(N, M) - min(N, M) + 1).

    Example:
        >>> jnp.convolve(jnp.array([1.0, 2.0, 3.0]), jnp.array([0.0, 1.0, 0.5]))
        Array([0. , 1. , 2.5, 4. , 1.5], dtype=float32)
    """
    return _conv("convolve", a, v, mode, precision, preferred_element_type)


def correlate(a, v, mode="valid", *, precision=None, preferred_element_type=None):
    """The cross-correlation `c[k] = sum_n a[n + k] conj(v[n])` of 1-D `a` and `v`, in NumPy's
    modes ('valid' by default, 'same', 'full'); the same as `convolve(a, conj(v[::-1]))`.

    Example:
        >>> jnp.correlate(jnp.array([1.0, 2.0, 3.0]), jnp.array([0.0, 1.0, 0.5]), mode="full")
        Array([0.5, 2. , 3.5, 3. , 0. ], dtype=float32)
    """
    return _conv("correlate", a, v, mode, precision, preferred_element_type)
