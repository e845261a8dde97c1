"""Products and contractions: dot, vdot, vecdot, inner, outer, matmul, tensordot, einsum, kron,
trace, diagonal and cross, as `numpy` / `jax.numpy` define them.

Every contraction here is one `lax.dot_general` (einsum: one per pairwise step), so it runs at
the speed of the backend's matrix products and later transformations see a single primitive.
Operands are promoted with JAX's rules first; `preferred_element_type` selects the accumulation
and result dtype (e.g. int8 operands with int32 results), `precision` (a `lax.Precision`, its name,
or an (lhs, rhs) pair) is the contraction's `precision_config`, as in JAX.
"""
import builtins
import string

import numpy as np

from .. import dtypes
from .. import lax
from ..lax._base import aval_of
from ..lax.precision import canonicalize_precision
from ._util import broadcast_shapes, canonicalize_axis, check_arraylike, promote_dtypes
from .ufuncs import multiply, subtract

__all__ = ["dot", "vdot", "vecdot", "inner", "outer", "matmul", "tensordot", "einsum", "einsum_path", "kron",
           "trace", "diagonal", "cross"]


def _precision(precision, name):
    # every product here is a dot_general, which also takes a dot algorithm (DotAlgorithmPreset)
    return canonicalize_precision(precision, name, allow_algorithm=True)


def _preferred(preferred_element_type):
    return None if preferred_element_type is None else dtypes.check_user_dtype(preferred_element_type, "dot")


def _dot_general(a, b, dims, preferred, precision=None):
    # jnp-level contractions of promoted operands: bool and narrow operands keep their dtype,
    # as jnp.dot does, unless preferred_element_type asks for another.
    return lax.dot_general(a, b, dims, precision=precision, preferred_element_type=preferred)


def _moveaxis_to_end(x, axis):
    nd = x.ndim
    perm = [i for i in range(nd) if i != axis] + [axis]
    return lax.transpose(x, perm)


# ----- dot, vdot, inner, outer ---------------------------------------------------------------

def dot(a, b, *, precision=None, preferred_element_type=None):
    """`numpy.dot`: for N-d `a` and M-d `b`, sum over the last axis of `a` and the second-to-last
    axis of `b` (the only axis when `b` is 1-D); 0-d operands multiply elementwise.

    Example: `jnp.dot(jnp.ones((2, 3)), jnp.ones((3, 4)))` has shape (2, 4), every element 3.
    """
    check_arraylike("dot", a, b)
    precision = _precision(precision, "dot")
    a, b = promote_dtypes(a, b)
    preferred = _preferred(preferred_element_type)
    if a.ndim == 0 or b.ndim == 0:
        out = multiply(a, b)
        return out if preferred is None else lax.convert_element_type(out, preferred)
    # dot_general's output order (a's free axes, then b's) is exactly NumPy's for N-d operands
    b_axis = 0 if b.ndim == 1 else b.ndim - 2
    return _dot_general(a, b, (((a.ndim - 1,), (b_axis,)), ((), ())), preferred, precision)


def vdot(a, b, *, precision=None, preferred_element_type=None):
    """`numpy.vdot`: the dot product of the flattened operands, conjugating the first.

    Example: `jnp.vdot(jnp.array([1+2j, 3j]), jnp.array([1, 1]))` is `(1-5j)`.
    """
    check_arraylike("vdot", a, b)
    precision = _precision(precision, "vdot")
    a, b = promote_dtypes(a, b)
    if dtypes.is_complex(a.dtype):
        a = lax.conj(a)
    a, b = lax.reshape(a, (a.size,)), lax.reshape(b, (b.size,))
    return _dot_general(a, b, (((0,), (0,)), ((), ())), _preferred(preferred_element_type), precision)


def vecdot(x1, x2, /, *, axis=-1, precision=None, preferred_element_type=None):
    """`numpy.vecdot`: the conjugated dot product of `x1` and `x2` along `axis`, broadcasting the
    other dimensions. Example: `jnp.vecdot(jnp.ones((2, 3)), jnp.arange(3.))` is `[3., 3.]`.
    """
    check_arraylike("vecdot", x1, x2)
    precision = _precision(precision, "vecdot")
    x1, x2 = promote_dtypes(x1, x2)
    if x1.ndim == 0 or x2.ndim == 0:
        raise ValueError("vecdot: input operands must have at least one dimension, got shapes "
                         f"{x1.shape} and {x2.shape}.")
    ax1 = canonicalize_axis(axis, x1.ndim, "vecdot")
    ax2 = canonicalize_axis(axis, x2.ndim, "vecdot")
    if x1.shape[ax1] != x2.shape[ax2]:
        raise ValueError(f"vecdot: axis {axis} of the operands must have equal sizes, got shapes {x1.shape} and "
                         f"{x2.shape}.")
    if dtypes.is_complex(x1.dtype):
        x1 = lax.conj(x1)
    x1, x2 = _moveaxis_to_end(x1, ax1), _moveaxis_to_end(x2, ax2)
    x1 = lax.expand_dims(x1, (x1.ndim - 1,))
    x2 = lax.expand_dims(x2, (x2.ndim,))
    out = matmul(x1, x2, precision=precision, preferred_element_type=preferred_element_type)
    return lax.reshape(out, out.shape[:-2])


def inner(a, b, *, precision=None, preferred_element_type=None):
    """`numpy.inner`: sum over the last axes of `a` and `b`; the result has the other axes of `a`
    then those of `b`. Example: `jnp.inner(jnp.ones((2, 3)), jnp.ones((4, 3)))` has shape (2, 4).
    """
    check_arraylike("inner", a, b)
    precision = _precision(precision, "inner")
    a, b = promote_dtypes(a, b)
    preferred = _preferred(preferred_element_type)
    if a.ndim == 0 or b.ndim == 0:
        out = multiply(a, b)
        return out if preferred is None else lax.convert_element_type(out, preferred)
    return _dot_general(a, b, (((a.ndim - 1,), (b.ndim - 1,)), ((), ())), preferred, precision)


def outer(a, b, out=None):
    """`numpy.outer`: `result[i, j] = a.ravel()[i] * b.ravel()[j]`.

    Example: `jnp.outer(jnp.arange(3), jnp.arange(2))` has shape (3, 2).
    """
    if out is not None:
        raise NotImplementedError("outer: the 'out' argument is not supported (arrays are immutable).")
    check_arraylike("outer", a, b)
    a, b = promote_dtypes(a, b)
    return multiply(lax.reshape(a, (a.size, 1)), lax.reshape(b, (1, b.size)))


# ----- matmul --------------------------------------------------------------------------------

def matmul(a, b, *, precision=None, preferred_element_type=None):
    """`numpy.matmul` (the `@` operator): matrix products over the last two axes, NumPy
    broadcasting over the leading (batch) axes; a 1-D operand is a row (left) or column (right)
    vector whose axis is removed from the result. 0-d operands raise ValueError, as in NumPy.

    Size-1 batch dimensions are squeezed rather than broadcast, so no operand is copied.
    Example: `jnp.matmul(jnp.ones((5, 1, 2, 3)), jnp.ones((4, 3, 6)))` has shape (5, 4, 2, 6).
    """
    check_arraylike("matmul", a, b)
    precision = _precision(precision, "matmul")
    a, b = promote_dtypes(a, b)
    for i, x in enumerate((a, b)):
        if x.ndim == 0:
            raise ValueError(f"matmul: Input operand {i} does not have enough dimensions (has 0, gufunc core "
                             "with signature (n?,k),(k,m?)->(n?,m?) requires 1); use * or jnp.multiply for scalars.")
    a_batch = a.shape[:-2]
    b_batch = b.shape[:-2]
    nb = builtins.max(len(a_batch), len(b_batch))
    try:
        out_batch = broadcast_shapes(a_batch, b_batch)
    except ValueError:
        raise ValueError(f"Incompatible shapes for matmul arguments: {a.shape} and {b.shape}") from None
    a_off, b_off = nb - len(a_batch), nb - len(b_batch)
    a_squeeze, b_squeeze, pairs, a_free, b_free = [], [], [], [], []
    # where each output batch position comes from: ("pair", k), ("a", k) or ("b", k)
    origin = []
    for i in range(nb):
        ai, bi = i - a_off, i - b_off
        da = a_batch[ai] if ai >= 0 else None
        db = b_batch[bi] if bi >= 0 else None
        if da is not None and db is not None and da == db:
            origin.append(("pair", len(pairs)))
            pairs.append((ai, bi))
        elif da is None or (db is not None and da == 1 and db != 1):
            if da is not None:
                a_squeeze.append(ai)
            origin.append(("b", len(b_free)))
            b_free.append(bi)
        else:
            if db is not None:
                b_squeeze.append(bi)
            origin.append(("a", len(a_free)))
            a_free.append(ai)
    a_vec, b_vec = a.ndim == 1, b.ndim == 1
    # Dimension indices after squeezing: size-1 batch dims that the other side broadcasts are
    # dropped, which keeps the operand un-copied.
    a_map = _after_squeeze(a.ndim, a_squeeze)
    b_map = _after_squeeze(b.ndim, b_squeeze)
    a = lax.squeeze(a, tuple(a_squeeze)) if a_squeeze else a
    b = lax.squeeze(b, tuple(b_squeeze)) if b_squeeze else b
    a_contract = a.ndim - 1
    b_contract = 0 if b_vec else b.ndim - 2
    dims = (((a_contract,), (b_contract,)), (tuple(a_map[p] for p, _ in pairs), tuple(b_map[q] for _, q in pairs)))
    out = _dot_general(a, b, dims, _preferred(preferred_element_type), precision)
    # dot_general gives: pairs, a's free dims in order (a_free, then M), b's (b_free, then N)
    n_pairs, n_af, n_bf = len(pairs), len(a_free), len(b_free)
    a_m = 0 if a_vec else 1
    start = {"pair": 0, "a": n_pairs, "b": n_pairs + n_af + a_m}
    perm = [start[kind] + k for kind, k in origin]
    if not a_vec:
        perm.append(n_pairs + n_af)
    if not b_vec:
        perm.append(n_pairs + n_af + a_m + n_bf)
    out = lax.transpose(out, tuple(perm))
    expected = out_batch + (() if a_vec else (a.shape[-2],)) + (() if b_vec else (b.shape[-1],))
    assert out.shape == expected, (out.shape, expected)
    return out


def _after_squeeze(ndim, squeezed):
    mapping, k = {}, 0
    for i in range(ndim):
        if i not in squeezed:
            mapping[i] = k
            k += 1
    return mapping


# ----- tensordot -----------------------------------------------------------------------------

def tensordot(a, b, axes=2, *, precision=None, preferred_element_type=None):
    """`numpy.tensordot`: sum over `axes` -- an int N (the last N axes of `a` with the first N of
    `b`) or a pair of axis sequences (or ints). The result has `a`'s other axes then `b`'s.

    Example: `jnp.tensordot(jnp.ones((2, 3, 4)), jnp.ones((3, 4, 5)))` has shape (2, 5).
    """
    check_arraylike("tensordot", a, b)
    precision = _precision(precision, "tensordot")
    a, b = promote_dtypes(a, b)
    if isinstance(axes, (int, np.integer)):
        n = int(axes)
        if n < 0 or n > builtins.min(a.ndim, b.ndim):
            raise TypeError(f"tensordot: number of contracted axes must be between 0 and the smaller rank "
                            f"{builtins.min(a.ndim, b.ndim)}, got {n}.")
        ca, cb = tuple(range(a.ndim - n, a.ndim)), tuple(range(n))
    elif isinstance(axes, (list, tuple)) and len(axes) == 2:
        ax_a, ax_b = axes
        ax_a = (ax_a,) if isinstance(ax_a, (int, np.integer)) else tuple(ax_a)
        ax_b = (ax_b,) if isinstance(ax_b, (int, np.integer)) else tuple(ax_b)
        if len(ax_a) != len(ax_b):
            raise TypeError(f"tensordot requires axes lists to have equal length, got {ax_a} and {ax_b}.")
        ca = tuple(canonicalize_axis(i, a.ndim, "tensordot") for i in ax_a)
        cb = tuple(canonicalize_axis(i, b.ndim, "tensordot") for i in ax_b)
    else:
        raise TypeError(f"tensordot axes argument must be an int or a pair of axis sequences, got {axes!r}.")
    return _dot_general(a, b, ((ca, cb), ((), ())), _preferred(preferred_element_type), precision)


# ----- einsum --------------------------------------------------------------------------------

_ELLIPSIS_BASE = 0x2460  # private labels for '...' dimensions: never valid user subscripts


def _parse_einsum(subscripts, shapes):
    """Labels (one character per axis) of each operand and of the output; '...' becomes private
    labels aligned from the right, shared by all operands (NumPy's broadcasting)."""
    subscripts = subscripts.replace(" ", "")
    if "->" in subscripts:
        inputs, output = subscripts.split("->")
        explicit = True
    else:
        inputs, output, explicit = subscripts, None, False
    in_specs = inputs.split(",")
    if len(in_specs) != len(shapes):
        raise ValueError(f"einsum: the subscripts {subscripts!r} name {len(in_specs)} operands, but "
                         f"{len(shapes)} were given.")
    labels, max_ell = [], 0
    for spec, shape in zip(in_specs, shapes, strict=True):
        body = spec.replace("...", "")
        for c in body:
            if c not in string.ascii_letters:
                raise ValueError(f"einsum: invalid subscript {c!r} in {subscripts!r}; use letters a-z, A-Z and '...'.")
        if "..." in spec:
            n_ell = len(shape) - len(body)
            if n_ell < 0:
                raise ValueError(f"einsum: operand subscripts {spec!r} have more labels than the operand's "
                                 f"{len(shape)} dimensions.")
            max_ell = builtins.max(max_ell, n_ell)
            ell = "".join(chr(_ELLIPSIS_BASE + n_ell - 1 - k) for k in range(n_ell))
            pre, post = spec.split("...")
            labels.append(pre + ell + post)
        else:
            if len(spec) != len(shape):
                raise ValueError(f"einsum: operand subscripts {spec!r} name {len(spec)} dimensions, but the operand "
                                 f"has shape {tuple(shape)}.")
            labels.append(spec)
    ell_labels = "".join(chr(_ELLIPSIS_BASE + max_ell - 1 - k) for k in range(max_ell))
    if explicit:
        if output.count("...") > 1 or any(c not in string.ascii_letters for c in output.replace("...", "")):
            raise ValueError(f"einsum: invalid output subscripts {output!r}.")
        if max_ell and "..." not in output:
            raise ValueError(f"einsum: the operands have {max_ell} dimension(s) under '...' but the output "
                             f"subscripts {output!r} have no '...' to place them; add '...' to the output.")
        out = output.replace("...", ell_labels)
        all_in = set("".join(labels))
        for c in out:
            if c not in all_in:
                raise ValueError(f"einsum: output subscript {c!r} never appears in an input.")
            if out.count(c) > 1:
                raise ValueError(f"einsum: output subscript {c!r} appears more than once.")
    else:
        counts = {}
        for lab in labels:
            for c in lab:
                counts[c] = counts.get(c, 0) + 1
        out = ell_labels + "".join(sorted(c for c, n in counts.items() if n == 1 and c in string.ascii_letters))
    return labels, out


def _label_sizes(labels, shapes):
    """The size of each label; a size-1 dimension broadcasts against any other size (NumPy)."""
    sizes = {}
    for lab, shape in zip(labels, shapes, strict=True):
        for c, d in zip(lab, shape, strict=True):
            prev = sizes.get(c)
            if prev is not None and d != 1 and prev != 1 and d != prev:
                name = "'...' dimension" if ord(c) >= _ELLIPSIS_BASE else f"subscript {c!r}"
                raise ValueError(f"einsum: size of {name} does not match: {prev} vs {d} (operand shapes "
                                 f"{[tuple(s) for s in shapes]}).")
            if prev is None or prev == 1:
                sizes[c] = d
    return sizes


def _greedy_path(labels, out, sizes):
    """NumPy-style contraction path: a list of operand-index pairs; each step removes the pair
    and appends the result. Greedy: the pair whose result is smallest goes first."""
    labels = [set(lab) for lab in labels]
    path = []
    while len(labels) > 1:
        best = None
        for i in range(len(labels)):
            for j in range(i + 1, len(labels)):
                others = set(out).union(*(labels[k] for k in range(len(labels)) if k not in (i, j)))
                res = (labels[i] | labels[j]) & others
                cost = (int(np.prod([sizes[c] for c in res])), -len(labels[i] & labels[j]))
                if best is None or cost < best[0]:
                    best = (cost, i, j, res)
        _, i, j, res = best
        path.append((i, j))
        labels = [lab for k, lab in enumerate(labels) if k not in (i, j)] + [res]
    return path


def _sum_labels(x, lab, drop, preferred):
    """Sum out the labels in `drop` from operand `x`; booleans reduce with OR."""
    axes = tuple(i for i, c in enumerate(lab) if c in drop)
    if not axes:
        return x, lab
    if preferred is not None and x.dtype != preferred:
        x = lax.convert_element_type(x, preferred)
    x = lax.reduce_or(x, axes) if x.dtype == dtypes.bool_ else lax.reduce_sum(x, axes)
    return x, "".join(c for c in lab if c not in drop)


def _take_diagonal(x, ax1, ax2):
    """The diagonal of axes `ax1` < `ax2` (equal sizes), as a new last axis, by the strided-slice
    trick: in the flattened (n, n) pair, the diagonal is every (n + 1)-th element."""
    n = x.shape[ax1]
    x = lax.transpose(x, [i for i in range(x.ndim) if i not in (ax1, ax2)] + [ax1, ax2])
    lead = x.shape[:-2]
    x = lax.reshape(x, lead + (n * n,))
    return lax.slice(x, (0,) * len(lead) + (0,), lead + (n * n,), (1,) * len(lead) + (n + 1,))


def _prepare_operand(x, lab, sizes):
    """Per-operand work before contracting: take diagonals of repeated labels, squeeze size-1
    dimensions that broadcast against larger ones, sum out labels needed nowhere else."""
    while True:
        dup = next((c for c in lab if lab.count(c) > 1), None)
        if dup is None:
            break
        i = lab.index(dup)
        j = lab.index(dup, i + 1)
        if x.shape[i] != x.shape[j]:
            raise ValueError(f"einsum: repeated subscript {dup!r} needs equal dimensions, got {x.shape[i]} and "
                             f"{x.shape[j]} in an operand of shape {x.shape}.")
        x = _take_diagonal(x, i, j)
        lab = "".join(c for k, c in enumerate(lab) if k not in (i, j)) + dup
    squeeze = tuple(i for i, c in enumerate(lab) if x.shape[i] == 1 and sizes[c] != 1)
    if squeeze:
        x = lax.squeeze(x, squeeze)
        lab = "".join(c for i, c in enumerate(lab) if i not in squeeze)
    return x, lab


def _contract_pair(x, lx, y, ly, keep, preferred, precision):
    x, lx = _sum_labels(x, lx, set(lx) - set(ly) - keep, preferred)
    y, ly = _sum_labels(y, ly, set(ly) - set(lx) - keep, preferred)
    if x.dtype != y.dtype:
        # an earlier step already produced preferred_element_type; widen the other side to it
        x, y = (lax.convert_element_type(v, preferred) for v in (x, y))
    shared = [c for c in lx if c in ly]
    batch = [c for c in shared if c in keep]
    contract = [c for c in shared if c not in keep]
    dims = ((tuple(lx.index(c) for c in contract), tuple(ly.index(c) for c in contract)),
            (tuple(lx.index(c) for c in batch), tuple(ly.index(c) for c in batch)))
    out = _dot_general(x, y, dims, preferred, precision)
    lab = "".join(batch) + "".join(c for c in lx if c not in shared) + "".join(c for c in ly if c not in shared)
    return out, lab


def _einsum_operands(operands):
    """Support NumPy's interleaved form einsum(x, [0, 1], y, [1, 2], [0, 2])."""
    if operands and isinstance(operands[0], str):
        return operands[0], list(operands[1:])
    ops = list(operands)
    out = ops.pop() if len(ops) % 2 else None

    def letters(sub):
        s = ""
        for v in sub:
            s += "..." if v is Ellipsis else string.ascii_letters[int(v)]
        return s
    arrays, subs = ops[0::2], ops[1::2]
    spec = ",".join(letters(s) for s in subs)
    if out is not None:
        spec += "->" + letters(out)
    return spec, arrays


def einsum(*operands, out=None, optimize="auto", precision=None, preferred_element_type=None):
    """`numpy.einsum`: the Einstein summation given by `subscripts` ('ij,jk->ik'), with '...'
    broadcasting, implicit output (labels used once, sorted, after '...'), repeated labels within
    an operand (diagonals, traces), labels summed within one operand, and any number of operands.
    Operands are contracted pairwise in a greedy order (smallest intermediate first), each step
    one `lax.dot_general`; `optimize` is accepted for compatibility and does not change the order.

    Example: `jnp.einsum('bij,bjk->bik', x, y)` is a batched matrix product; `jnp.einsum('ii', m)`
    is the trace of `m`.
    """
    if out is not None:
        raise NotImplementedError("einsum: the 'out' argument is not supported (arrays are immutable).")
    subscripts, arrays = _einsum_operands(operands)
    if not arrays:
        raise ValueError("einsum requires at least one operand.")
    check_arraylike("einsum", *arrays)
    precision = _precision(precision, "einsum")
    arrays = promote_dtypes(*arrays)
    preferred = _preferred(preferred_element_type)
    labels, out_labels = _parse_einsum(subscripts, [x.shape for x in arrays])
    sizes = _label_sizes(labels, [x.shape for x in arrays])
    ops = []
    for k, (x, lab) in enumerate(zip(arrays, labels, strict=True)):
        others = set(out_labels).union(*(set(labels[m]) for m in range(len(labels)) if m != k))
        x, lab = _prepare_operand(x, lab, sizes)
        x, lab = _sum_labels(x, lab, set(lab) - others, preferred)
        ops.append((x, lab))
    for i, j in _greedy_path([lab for _, lab in ops], out_labels, sizes):
        (x, lx), (y, ly) = ops[i], ops[j]
        rest = [ops[k] for k in range(len(ops)) if k not in (i, j)]
        keep = set(out_labels).union(*(set(lab) for _, lab in rest))
        ops = rest + [_contract_pair(x, lx, y, ly, keep, preferred, precision)]
    x, lab = ops[0]
    x, lab = _sum_labels(x, lab, set(lab) - set(out_labels), preferred)
    if preferred is not None and x.dtype != preferred:
        x = lax.convert_element_type(x, preferred)
    x = lax.transpose(x, tuple(lab.index(c) for c in out_labels))
    target = tuple(sizes[c] for c in out_labels)
    if x.shape != target:  # an output label whose size-1 copies were all that remained
        x = lax.broadcast_in_dim(x, target, tuple(range(len(target))))
    return x


def einsum_path(subscripts, *operands, optimize="greedy"):
    """The contraction order `einsum` uses, in NumPy's format: (['einsum_path', (i, j), ...],
    description). Each step contracts operands i and j of the current list and appends the result.

    Example: `jnp.einsum_path('ij,jk,kl->il', a, b, c)[0]` might be `['einsum_path', (0, 1), (0, 1)]`.
    """
    shapes = [aval_of(x).shape for x in operands]
    labels, out_labels = _parse_einsum(subscripts, shapes)
    sizes = _label_sizes(labels, shapes)
    path = _greedy_path([lab for lab in labels], out_labels, sizes)
    lines = [f"  Complete contraction:  {subscripts}", f"  Pairwise contractions: {len(path)} (greedy, smallest "
             "intermediate first; each one lax.dot_general)"]
    return ["einsum_path", *path], "\n".join(lines)


# ----- kron, trace, diagonal, cross ------------------------------------------------------------

def kron(a, b):
    """`numpy.kron`: the Kronecker product; the operand of lower rank gets leading size-1 axes.

    Example: `jnp.kron(jnp.eye(2), jnp.ones((2, 2)))` is a (4, 4) block-diagonal matrix of ones.
    """
    check_arraylike("kron", a, b)
    a, b = promote_dtypes(a, b)
    nd = builtins.max(a.ndim, b.ndim)
    ash = (1,) * (nd - a.ndim) + a.shape
    bsh = (1,) * (nd - b.ndim) + b.shape
    # interleave: a's axes at even positions, b's at odd positions, then merge each pair
    a = lax.reshape(a, tuple(d for s in ash for d in (s, 1)))
    b = lax.reshape(b, tuple(d for s in bsh for d in (1, s)))
    return lax.reshape(multiply(a, b), tuple(x * y for x, y in zip(ash, bsh, strict=True)))


def diagonal(a, offset=0, axis1=0, axis2=1):
    """`numpy.diagonal`: the diagonal of `a` over `axis1` and `axis2` (shifted by `offset`),
    placed as the last axis of the result. JAX returns a new array, never a view.

    Example: `jnp.diagonal(jnp.arange(9).reshape(3, 3), offset=1)` is `[1, 5]`.
    """
    check_arraylike("diagonal", a)
    from ._util import asarray_operand
    a = asarray_operand(a)
    if a.ndim < 2:
        raise ValueError(f"diagonal requires an array of at least two dimensions, got shape {a.shape}.")
    ax1 = canonicalize_axis(axis1, a.ndim, "diagonal")
    ax2 = canonicalize_axis(axis2, a.ndim, "diagonal")
    if ax1 == ax2:
        raise ValueError(f"diagonal: axis1 and axis2 cannot be the same, got {axis1} and {axis2}.")
    offset = int(offset)
    a = lax.transpose(a, [i for i in range(a.ndim) if i not in (ax1, ax2)] + [ax1, ax2])
    *lead, n, m = a.shape
    lead = tuple(lead)
    k = builtins.max(0, builtins.min(n, m - offset) if offset >= 0 else builtins.min(n + offset, m))
    flat = lax.reshape(a, lead + (n * m,))
    if k == 0:
        return lax.slice(flat, (0,) * (len(lead) + 1), lead + (0,))
    # element (r, r + offset) of the (n, m) pair sits at r * (m + 1) + offset in the flattening
    start = offset if offset >= 0 else -offset * m
    limit = start + (k - 1) * (m + 1) + 1
    return lax.slice(flat, (0,) * len(lead) + (start,), lead + (limit,), (1,) * len(lead) + (m + 1,))


def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    """`numpy.trace`: the sum of `diagonal(a, offset, axis1, axis2)` along its last axis; small
    integers and bools sum as the default int, like `jnp.sum`.

    Example: `jnp.trace(jnp.eye(3))` is `3.`.
    """
    if out is not None:
        raise NotImplementedError("trace: the 'out' argument is not supported (arrays are immutable).")
    from .reductions import sum as _sum
    return _sum(diagonal(a, offset, axis1, axis2), axis=-1, dtype=dtype)


def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """`numpy.cross`: the cross product of 3-vectors (or 2-vectors, whose z component is zero)
    along `axisa` of `a` and `axisb` of `b`, broadcasting the other axes; the vector axis of the
    result is `axisc` (`axis` sets all three). Two 2-vectors give the scalar z component.

    Example: `jnp.cross(jnp.array([1., 0, 0]), jnp.array([0., 1, 0]))` is `[0., 0., 1.]`.
    """
    check_arraylike("cross", a, b)
    a, b = promote_dtypes(a, b)
    if axis is not None:
        axisa = axisb = axisc = axis
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError(f"cross: operands must have at least one dimension, got shapes {a.shape} and {b.shape}.")
    a = _moveaxis_to_end(a, canonicalize_axis(axisa, a.ndim, "cross"))
    b = _moveaxis_to_end(b, canonicalize_axis(axisb, b.ndim, "cross"))
    if a.shape[-1] not in (2, 3) or b.shape[-1] not in (2, 3):
        raise ValueError("cross: incompatible dimensions for cross product (dimension must be 2 or 3), got "
                         f"{a.shape[-1]} and {b.shape[-1]}.")

    def comp(x, i):
        return lax.index_in_dim(x, i, axis=x.ndim - 1, keepdims=False)

    a0, a1, b0, b1 = comp(a, 0), comp(a, 1), comp(b, 0), comp(b, 1)
    if a.shape[-1] == 2 and b.shape[-1] == 2:
        return subtract(multiply(a0, b1), multiply(a1, b0))
    cz = subtract(multiply(a0, b1), multiply(a1, b0))
    if a.shape[-1] == 3 and b.shape[-1] == 3:
        a2, b2 = comp(a, 2), comp(b, 2)
        cx = subtract(multiply(a1, b2), multiply(a2, b1))
        cy = subtract(multiply(a2, b0), multiply(a0, b2))
    elif a.shape[-1] == 3:  # b's z component is zero
        a2 = comp(a, 2)
        cx, cy = multiply(lax.neg(a2), b1), multiply(a2, b0)
    else:  # a's z component is zero
        b2 = comp(b, 2)
        cx, cy = multiply(a1, b2), multiply(lax.neg(a0), b2)
    shape = broadcast_shapes(cx.shape, cy.shape, cz.shape)
    parts = [lax.broadcast_in_dim(c, shape + (1,), tuple(range(len(shape) - c.ndim, len(shape))))
             for c in (cx, cy, cz)]
    out = lax.concatenate(parts, len(shape))
    axc = canonicalize_axis(axisc, out.ndim, "cross")
    perm = list(range(out.ndim - 1))
    perm.insert(axc, out.ndim - 1)
    return lax.transpose(out, tuple(perm))
