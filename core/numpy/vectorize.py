"""`vectorize`: NumPy's generalized-ufunc wrapper, built on `vmap` instead of a Python loop."""
import functools
import re

from ..batching_api import vmap
from ..tree_util import tree_flatten, tree_unflatten
from .creation import asarray
from .manipulation import reshape

__all__ = ["vectorize"]

_DIM = r"\w+"
_CORE = rf"\((?:{_DIM}(?:,{_DIM})*)?\)"
_ARGS = rf"{_CORE}(?:,{_CORE})*"
_SIGNATURE = re.compile(rf"^{_ARGS}->{_ARGS}$")


def _parse_signature(signature):
    """'(m,n),(n)->(m)' -> ([('m', 'n'), ('n',)], [('m',)])."""
    compact = signature.replace(" ", "")
    if not _SIGNATURE.match(compact):
        raise ValueError(f"not a valid gufunc signature: {signature!r} (expected e.g. '(m,n),(n)->(m)').")
    ins, outs = compact.split("->")
    parse = lambda side: [tuple(d for d in group.split(",") if d) for group in re.findall(r"\(([^)]*)\)", side)]
    return parse(ins), parse(outs)


def vectorize(pyfunc, *, excluded=frozenset(), signature=None):
    """Turn `pyfunc`, written for single elements (or, with `signature`, for arrays of given core
    shapes), into a function over arrays, as `numpy.vectorize` does; the loop over the leading
    (broadcast) dimensions is a `vmap`, so it compiles to batched operations.

    `signature` is a generalized-ufunc signature such as `'(n),(n)->()'`: the trailing dimensions
    named there are passed to `pyfunc` whole, the rest broadcast against each other. `excluded`
    holds positions or names of arguments passed through unchanged.

    Example: `jnp.vectorize(jnp.dot, signature='(n),(n)->()')(a, b)` with `a` of shape (5, 3) and `b`
    of shape (3,) gives the 5 dot products.
    """
    in_core, out_core = _parse_signature(signature) if signature is not None else (None, None)
    excluded = frozenset(excluded)

    @functools.wraps(pyfunc)
    def wrapped(*args, **kwargs):
        static_pos = {i: a for i, a in enumerate(args) if i in excluded}
        static_kw = {k: v for k, v in kwargs.items() if k in excluded}
        dyn_kw_names = [k for k in kwargs if k not in excluded]
        dyn = [asarray(a) for i, a in enumerate(args) if i not in excluded] + \
              [asarray(kwargs[k]) for k in dyn_kw_names]
        cores = in_core if in_core is not None else [()] * len(dyn)
        if len(cores) != len(dyn):
            raise TypeError(f"vectorize: the signature {signature!r} has {len(cores)} inputs, but "
                            f"{len(dyn)} arrays were passed.")
        sizes = {}
        loop_shapes = []
        for i, (x, core) in enumerate(zip(dyn, cores)):
            if x.ndim < len(core):
                raise ValueError(f"vectorize: input {i} has shape {x.shape}, fewer than the {len(core)} core "
                                 f"dimensions {core} of the signature {signature!r}.")
            for name, n in zip(core, x.shape[x.ndim - len(core):]):
                if sizes.setdefault(name, n) != n:
                    raise ValueError(f"vectorize: inconsistent size for core dimension {name!r}: "
                                     f"{sizes[name]} vs {n} (input {i} has shape {x.shape}).")
            loop_shapes.append(x.shape[:x.ndim - len(core)])
        loop_shape = _broadcast(loop_shapes)

        def call_core(*core_args):
            n_pos = len(core_args) - len(dyn_kw_names)
            pos, kw = iter(core_args[:n_pos]), core_args[n_pos:]
            full = [static_pos[i] if i in static_pos else next(pos) for i in range(len(args))]
            out = pyfunc(*full, **static_kw, **dict(zip(dyn_kw_names, kw)))
            if out_core is not None:
                _check_outputs(out, out_core, sizes, signature)
            return out

        # squeeze each input's size-1 loop dims (broadcast by not mapping it there), then one vmap
        # per loop dimension of size != 1, outermost first
        mapped_dims = [d for d, n in enumerate(loop_shape) if n != 1]
        prepared, has_dim = [], []
        for x, core, ls in zip(dyn, cores, loop_shapes):
            padded = (1,) * (len(loop_shape) - len(ls)) + tuple(ls)
            keep = [d for d in mapped_dims if padded[d] != 1]
            prepared.append(reshape(x, tuple(padded[d] for d in keep) + x.shape[len(ls):]))
            has_dim.append(set(keep))
        f = call_core
        for d in reversed(mapped_dims):
            f = vmap(f, in_axes=tuple(0 if d in h else None for h in has_dim))
        out = f(*prepared)
        leaves, tree = tree_flatten(out)
        shaped = [reshape(leaf, loop_shape + leaf.shape[len(mapped_dims):]) for leaf in leaves]
        return tree_unflatten(tree, shaped)

    return wrapped


def _broadcast(shapes):
    ndim = max((len(s) for s in shapes), default=0)
    out = []
    for d in range(ndim):
        sizes = {s[d - ndim + len(s)] for s in shapes if d - ndim + len(s) >= 0}
        big = sizes - {1}
        if len(big) > 1:
            raise ValueError(f"vectorize: the loop dimensions of the inputs do not broadcast: {shapes}.")
        out.append(big.pop() if big else 1)
    return tuple(out)


def _check_outputs(out, out_core, sizes, signature):
    outs = out if len(out_core) > 1 else (out,)
    if len(out_core) > 1 and (not isinstance(out, tuple) or len(out) != len(out_core)):
        raise ValueError(f"vectorize: the signature {signature!r} has {len(out_core)} outputs, but the function "
                         f"returned {type(out).__name__}.")
    for j, (o, core) in enumerate(zip(outs, out_core)):
        shape = asarray(o).shape
        if len(shape) != len(core):
            raise ValueError(f"vectorize: output {j} has shape {shape}, but the signature {signature!r} gives it "
                             f"{len(core)} core dimensions {core}.")
        for name, n in zip(core, shape):
            if sizes.setdefault(name, n) != n:
                raise ValueError(f"vectorize: inconsistent size for core dimension {name!r}: {sizes[name]} vs "
                                 f"{n} (output {j}).")
