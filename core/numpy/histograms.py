"""Histograms beyond `histogram`: `histogram_bin_edges`, `histogram2d`, `histogramdd`, and
`unwrap` of phase angles. Bin counts come from one `bincount` with a static length, so they run
under jit when the bins are given as counts with a `range` or as edges (as `histogram` does).

Example:
    >>> h, xe, ye = jnp.histogram2d(jnp.array([0.0, 0.5, 1.0]), jnp.array([0.0, 0.0, 1.0]), bins=2)
    >>> h
    Array([[1., 0.],
           [1., 1.]], dtype=float32)
"""
import math

import numpy as np

from .. import dtypes
from .. import lax
from ._util import asarray_operand, canonicalize_axis, check_arraylike, promote_dtypes_inexact
from . import ufuncs as _u
from . import reductions as _r
from . import manipulation as _m
from . import sorting as _s
from . import indexing as _ix
from .calculus import diff

__all__ = ["histogram_bin_edges", "histogram2d", "histogramdd", "unwrap"]


def histogram_bin_edges(a, bins=10, range=None, weights=None):  # noqa: A002 (NumPy's name)
    """The bin edges `histogram(a, bins, range)` uses: `bins + 1` equal-width edges over `range`
    (default the data's min and max) for an integer `bins`, or `bins` itself.
    Example: `jnp.histogram_bin_edges(jnp.array([0., 1., 2.]), bins=2)` is `[0., 1., 2.]`.
    """
    return _s.histogram(a, bins=bins, range=range)[1]


def _bin_index(x, edges):
    """The bin of each value for monotonic `edges` (the last bin closed on the right), and
    whether the value falls inside the edges at all."""
    nbins = edges.shape[0] - 1
    idx = _u.subtract(_s.searchsorted(edges, x, side="right"), 1)
    idx = _ix.where(_u.equal(x, edges[-1]), nbins - 1, idx)
    inside = _u.logical_and(_u.greater_equal(idx, 0), _u.less(idx, nbins))
    return idx, inside


def histogramdd(sample, bins=10, range=None, weights=None, density=None):  # noqa: A002 (NumPy's name)
    """The D-dimensional histogram of the `(N, D)` points `sample`: `bins` is an int, one int or
    edge array per dimension; `range` one (min, max) per dimension. Returns `(hist, edges)` with
    `edges` a list of D edge arrays; `density=True` normalizes to unit volume.

    Example:
        >>> h, edges = jnp.histogramdd(jnp.array([[0.0, 0.0], [1.0, 1.0], [1.0, 0.0]]), bins=2)
        >>> h
        Array([[1., 0.],
               [1., 1.]], dtype=float32)
    """
    check_arraylike("histogramdd", sample)
    sample = asarray_operand(sample)
    if sample.ndim == 1:
        sample = sample[:, None]
    if sample.ndim != 2:
        raise ValueError(f"histogramdd: sample must be (N, D) points, got shape {sample.shape}")
    (sample,) = promote_dtypes_inexact(sample)
    n, d = sample.shape
    bins = [bins] * d if isinstance(bins, (int, np.integer)) else list(bins)
    if len(bins) != d:
        raise ValueError(f"histogramdd: the dimension of bins ({len(bins)}) must equal the dimension of the "
                         f"sample ({d})")
    if range is None:
        range = [None] * d  # noqa: A001
    if len(range) != d:
        raise ValueError(f"histogramdd: range needs one (min, max) pair per dimension ({d}), got {len(range)}")
    edges, index, inside = [], [], None
    for k in builtins_range(d):
        e = _s.histogram(sample[:, k], bins=bins[k], range=range[k])[1].astype(sample.dtype)
        idx, ok = _bin_index(sample[:, k], e)
        edges.append(e)
        index.append(idx)
        inside = ok if inside is None else _u.logical_and(inside, ok)
    shape = tuple(e.shape[0] - 1 for e in edges)
    total = math.prod(shape)
    flat = _ix.ravel_multi_index(tuple(index), shape, mode="clip") if d else _u.zeros_like(index[0])
    flat = _ix.where(inside, flat, total)  # outside the edges: an extra bin, dropped below
    if weights is not None:
        check_arraylike("histogramdd", weights)
        weights = asarray_operand(weights)
    counts = _s.bincount(flat, weights, length=total + 1)[:total].astype(sample.dtype)
    hist = _m.reshape(counts, shape)
    if density:
        volume = None
        for k, e in enumerate(edges):
            w = _m.reshape(diff(e), tuple(-1 if j == k else 1 for j in builtins_range(d)))
            volume = w if volume is None else _u.multiply(volume, w)
        hist = _u.divide(hist, _u.multiply(_r.sum(hist), volume))
    return hist, edges


builtins_range = range


def histogram2d(x, y, bins=10, range=None, weights=None, density=None):  # noqa: A002 (NumPy's name)
    """The 2-D histogram of the points (`x`, `y`): `bins` an int, an edge array (both axes), or
    one of either per axis. Returns `(hist, xedges, yedges)`; `hist[i, j]` counts x in bin i, y in bin j.
    Example: `jnp.histogram2d(jnp.array([0., 1.]), jnp.array([0., 1.]), bins=2)[0]` is `[[1., 0.], [0., 1.]]`.
    """
    check_arraylike("histogram2d", x, y)
    x, y = promote_dtypes_inexact(asarray_operand(x), asarray_operand(y))
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"histogram2d: x and y must be 1-D of the same length, got shapes {x.shape} and {y.shape}")
    if not isinstance(bins, (int, np.integer)) and not (isinstance(bins, (list, tuple)) and len(bins) == 2):
        bins = [bins, bins]  # one edge array for both axes
    hist, (xe, ye) = histogramdd(_m.stack([x, y], axis=1), bins, range, weights, density)
    return hist, xe, ye


def unwrap(p, discont=None, axis=-1, period=2 * np.pi):
    """`p` with jumps between neighbours along `axis` larger than `discont` (default `period/2`)
    replaced by their equivalent modulo `period`: unwrapped phase angles. Integers become floats,
    as in JAX.

    Example:
        >>> jnp.unwrap(jnp.array([0.0, 5.0, 10.0]), period=6.0)
        Array([ 0., -1., -2.], dtype=float32)
    """
    check_arraylike("unwrap", p)
    (p,) = promote_dtypes_inexact(asarray_operand(p))
    axis = canonicalize_axis(axis, p.ndim, "unwrap")
    if p.shape[axis] == 0:
        return p
    half = _u.divide(asarray_operand(period), 2)
    discont = half if discont is None else discont
    dd = diff(p, axis=axis)
    ddmod = _u.subtract(_u.remainder(_u.add(dd, half), period), half)
    # a jump of exactly +period/2 stays positive (NumPy's rule for the ambiguous boundary)
    ddmod = _ix.where(_u.logical_and(_u.equal(ddmod, _u.negative(half)), _u.greater(dd, 0)), half, ddmod)
    correction = _ix.where(_u.less(_u.abs(dd), discont), 0.0, _u.subtract(ddmod, dd))
    first = lax.slice_in_dim(p, 0, 1, axis=axis)
    rest = _u.add(lax.slice_in_dim(p, 1, p.shape[axis], axis=axis), _r.cumsum(correction, axis=axis).astype(p.dtype))
    return _m.concatenate([first, rest], axis=axis)
