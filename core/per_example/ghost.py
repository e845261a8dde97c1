"""Ghost norms: per-example gradient norms from each weight operation's input and output cotangent,
found by a pass over the traced per-example program (not by a layer library).

The plan (`analyze`). Nested `jit` calls are inlined; then each differentiated leaf is followed
forward through norm-preserving structural ops (reshape, transpose, squeeze, rev, float
conversions). A leaf whose chain ends as the weight operand of exactly one `dot_general`,
`conv_general_dilated` (the kernel) or `gather` (the table), and is used nowhere else, is *tapped*:
the example's gradient of that leaf is a function of the operation's other operand X (the
activation, or the indices) and its output cotangent G, and so is its norm:

* dot_general, X (T, d) and G (T, p) per example and per dot batch index (T: the positions the
  weight is shared over, the free dims of X): grad = X^T G, and
  ||X^T G||^2 = sum_{s,t} (x_s . x_t)(g_s . g_t)   (the Gram form, ~T^2 (d + p) per example),
  which for T = 1 is ||x||^2 ||g||^2 (dense); or materialize X^T G (~T d p per example).
* conv_general_dilated: the same with X the im2col patches of the input (one conv with a 0/1
  kernel), one Gram per feature group.
* gather (an embedding lookup): grad = the rows g_t added at rows idx_t, so
  ||grad||^2 = sum_{s,t} [idx_s = idx_t] (g_s . g_t), with the gather's out-of-bounds handling.

`auto` picks, per operation, the cheaper of Gram and materialized from the shapes at trace time
(mixed ghost clipping); `ghost` always uses the Gram form; `materialize` always materializes the
operation's per-example weight gradient. Leaves used only through add/sub/mul with an activation
(biases, norm scales; "elementwise") and any leaf no rule covers (weight sharing, a parameter in
a loop or a custom derivative, ...) get their per-example gradient materialized for that leaf
alone: a per-example zero `delta` is added to the leaf, and its cotangent is the leaf's
per-example gradient.

The pass (`run`). The per-example program is evaluated under vmap with a per-example zero
`probe` added to each tapped operation's output and X recorded; one vjp with respect to the
probes and deltas gives every G (already per example) and every materialized leaf gradient.
"""
import functools
import math

import numpy as np

from .. import numpy as jnp
from .. import lax
from ..autodiff import vjp
from ..custom_derivatives import _JvpRule
from ..batching_api import vmap
from ..interpreters import batching
from ..interpreters.evaluation import read_literal
from ..lax._base import _broadcasting_batch_rule
from ..ir import Literal
from ..lax.slicing import GatherScatterMode
from .program import inline_calls

__all__ = ["analyze", "run", "leaf_sq_norms", "clipped_sum_bookkeeping", "GhostPlan"]

METHODS = ("auto", "ghost", "materialize")

# norm-preserving ops a weight may pass through between the parameter and its operation
_CHAIN = {"reshape", "transpose", "squeeze", "rev", "convert_element_type", "name"}
# ops a bias or scale reaches its elementwise use through
_BROADCASTING = _CHAIN | {"broadcast_in_dim"}
_ELEMENTWISE = {"add", "sub", "mul", "add_any"}
_TAPPABLE = {"dot_general", "conv_general_dilated", "gather"}


class Tap:
    """One weight operation whose leaf's norm comes from (X, G)."""

    def __init__(self, **fields):
        self.__dict__.update(fields)


class LeafPlan:
    """How one differentiated leaf's per-example gradient norm is computed. `kind`: 'tap' (a
    rule on its one operation), 'elementwise' or 'materialize' (its per-example gradient is
    materialized through a delta), 'unused' (zero)."""

    def __init__(self, kind, tap=None, reason="", uses=()):
        self.kind, self.tap, self.reason, self.uses = kind, tap, reason, list(uses)


class GhostPlan:
    """The plan of a ghost-norm computation: one row per differentiated leaf. `str(plan)` is a
    table of parameter, operation, rule and estimated per-example cost."""

    def __init__(self, fname, method, size, paths, leaves, jaxpr, consts, n_diff):
        self.fname, self.method, self.size = fname, method, size
        self.paths, self.leaves = paths, leaves
        self.jaxpr, self.consts, self.n_diff = jaxpr, consts, n_diff
        self.taps = [lp.tap for lp in leaves if lp.kind == "tap"]
        # one probe per tapped operation: both operands of a dot_general may be parameters
        self.probe_eqns = []
        for t in self.taps:
            if t.index not in self.probe_eqns:
                self.probe_eqns.append(t.index)
            t.probe = self.probe_eqns.index(t.index)
        self.delta_leaves = [i for i, lp in enumerate(leaves) if lp.kind in ("elementwise", "materialize")]

    @property
    def rows(self):
        """`(parameter, operation, rule, cost)` per leaf; cost in multiply-adds per example for a
        rule on an operation, in materialized gradient elements per example otherwise."""
        rows = []
        for path, lp, aval in zip(self.paths, self.leaves, self.jaxpr.in_avals[:self.n_diff]):
            if lp.kind == "tap":
                t = lp.tap
                op = f"{t.eqn.primitive.name} {_shapes(t.eqn)}"
                cost = t.mat_cost if t.rule == "materialize" else t.gram_cost
                rows.append((path, op, t.rule, f"{cost:,} madd"))
            elif lp.kind == "unused":
                rows.append((path, "-", "unused", "0"))
            else:
                ops = ", ".join(dict.fromkeys(e.primitive.name for e in lp.uses)) or "-"
                rows.append((path, ops, lp.kind, f"{aval.size:,} elem"))
        return rows

    def __str__(self):
        header = ("parameter", "operation", "rule", "cost/example")
        rows = [header] + self.rows
        widths = [max(len(r[i]) for r in rows) for i in range(4)]
        lines = [f"ghost-norm plan of {self.fname} (method={self.method!r}, batch {self.size})"]
        for r in rows:
            lines.append("  " + "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
        notes = [f"  {p}: {lp.reason}" for p, lp in zip(self.paths, self.leaves) if lp.kind == "materialize"]
        if notes:
            lines.append("materialized because:")
            lines.extend(notes)
        return "\n".join(lines)

    __repr__ = __str__


def _shapes(eqn):
    return " x ".join(v.aval.str_short() for v in eqn.invars)


def _where(eqn):
    return f" at {eqn.source_info}" if eqn.source_info else ""


# ----- the plan --------------------------------------------------------------------------------

def analyze(prog, method):
    """The `GhostPlan` of the program `prog` for `method` ('auto', 'ghost' or 'materialize').
    With 'ghost', a leaf no ghost rule covers raises ValueError naming the operation and leaf."""
    if method not in METHODS:
        raise ValueError(f"{prog.where}: method must be one of {METHODS}, got {method!r}.")
    jaxpr, consts = inline_calls(prog.closed)
    uses = {}
    for i, eqn in enumerate(jaxpr.eqns):
        for pos, a in enumerate(eqn.invars):
            if not isinstance(a, Literal):
                uses.setdefault(id(a), []).append((i, pos))
    for a in jaxpr.outvars:
        if not isinstance(a, Literal):
            uses.setdefault(id(a), []).append((None, None))
    leaves = []
    for k, v in enumerate(jaxpr.invars[:prog.n_diff]):
        lp = _classify(jaxpr, uses, v, k, method)
        if method == "ghost" and lp.kind == "materialize":
            raise ValueError(
                f"{prog.where} with method='ghost': no ghost-norm rule covers the parameter {prog.diff_paths[k]}: "
                f"{lp.reason}. Use method='auto', which materializes this parameter's per-example gradient alone "
                "and uses ghost norms for the others.")
        leaves.append(lp)
    return GhostPlan(prog.fname, method, prog.size, prog.diff_paths, leaves, jaxpr, consts, prog.n_diff)


def _classify(jaxpr, uses, v, leaf, method):
    # follow the structural chain while each value has exactly one use
    chain = []
    cur = v
    while True:
        us = uses.get(id(cur), [])
        if len(us) == 1 and us[0][0] is not None:
            eqn = jaxpr.eqns[us[0][0]]
            if eqn.primitive.name in _CHAIN and _float_to_float(eqn):
                chain.append(eqn)
                cur = eqn.outvars[0]
                continue
        break
    if not uses.get(id(v)):
        return LeafPlan("unused")
    if len(us) == 1 and us[0][0] is not None:
        i, pos = us[0]
        eqn = jaxpr.eqns[i]
        name = eqn.primitive.name
        w_pos = {"dot_general": (0, 1), "conv_general_dilated": (1,), "gather": (0,)}.get(name, ())
        if pos in w_pos:
            tap = _make_tap(eqn, i, leaf, pos, chain, method)
            if tap.rule is not None:
                return LeafPlan("tap", tap, uses=[eqn])
            terminals = [eqn]
            return LeafPlan("materialize", reason=f"{tap.reason}{_where(eqn)}", uses=terminals)
    # not one weight operation: an elementwise use (bias, scale), or anything else
    terminals = []
    stack = [v]
    while stack:
        for i, pos in uses.get(id(stack.pop()), []):
            if i is None:
                terminals.append(None)
                continue
            eqn = jaxpr.eqns[i]
            if eqn.primitive.name in _BROADCASTING and _float_to_float(eqn):
                stack.append(eqn.outvars[0])
            else:
                terminals.append(eqn)
    if None in terminals:
        return LeafPlan("materialize", reason="it is returned as (part of) the loss itself",
                        uses=[e for e in terminals if e is not None])
    if all(e.primitive.name in _ELEMENTWISE for e in terminals):
        return LeafPlan("elementwise", uses=terminals)
    weights = [e for e in terminals if e.primitive.name in _TAPPABLE]
    if len(terminals) > 1 and weights:
        listing = ", ".join(f"{e.primitive.name}{_where(e)}" for e in terminals)
        reason = (f"it is used by {len(terminals)} operations ({listing}): with weight sharing its per-example "
                  "gradient is the sum of their contributions, so their norms do not add")
    else:
        others = [e for e in terminals if e.primitive.name not in _ELEMENTWISE]
        e = others[0]
        if e.primitive.name in _TAPPABLE:
            reason = f"it is an operand of {e.primitive.name}{_where(e)} in a position no rule covers"
        else:
            reason = f"it is used by {e.primitive.name}{_where(e)}, which no ghost-norm rule covers"
    return LeafPlan("materialize", reason=reason, uses=terminals)


def _float_to_float(eqn):
    if eqn.primitive.name != "convert_element_type":
        return True
    return all(np.dtype(a.aval.dtype).kind == "f" for a in eqn.invars + eqn.outvars)


def _make_tap(eqn, index, leaf, w_pos, chain, method):
    name = eqn.primitive.name
    x_pos = 1 - w_pos
    dims, gram_ok = {"dot_general": _dot_dims, "conv_general_dilated": _conv_dims,
                     "gather": _gather_dims}[name](eqn, x_pos)
    nb, T, d, p = dims["nb"], dims["T"], dims["d"], dims["p"]
    gram_cost = nb * (d + p) if T == 1 else nb * T * T * (d + p)
    mat_cost = dims.get("mat", nb * T * d * p)
    if method == "materialize":
        rule = "materialize"
    elif gram_ok is not True:
        if method == "ghost":
            return Tap(rule=None, reason=f"its {name} has {gram_ok}, which the Gram rule does not cover")
        rule = "materialize"
    elif method == "ghost" or gram_cost <= mat_cost:
        rule = "dense" if T == 1 and name != "gather" else "gram"
    else:
        rule = "materialize"
    return Tap(index=index, eqn=eqn, leaf=leaf, w_pos=w_pos, x_pos=x_pos, chain=chain, rule=rule, dims=dims,
               gram_cost=gram_cost, mat_cost=mat_cost, reason="")


def _prod(xs):
    return int(math.prod(xs))


def _dot_dims(eqn, x_pos):
    (lc, rc), (lb, rb) = eqn.params["dimension_numbers"]
    xc, xb = (lc, lb) if x_pos == 0 else (rc, rb)
    wc, wb = (rc, rb) if x_pos == 0 else (lc, lb)
    xs, ws = eqn.invars[x_pos].aval.shape, eqn.invars[1 - x_pos].aval.shape
    xf = [i for i in range(len(xs)) if i not in xc and i not in xb]
    wf = [i for i in range(len(ws)) if i not in wc and i not in wb]
    dims = dict(nb=_prod(xs[i] for i in xb), T=_prod(xs[i] for i in xf), d=_prod(xs[i] for i in xc),
                p=_prod(ws[i] for i in wf), xb=tuple(xb), xf=tuple(xf), xc=tuple(xc), nwf=len(wf))
    return dims, True


def _conv_dims(eqn, x_pos):
    prm = eqn.params
    dn = prm["dimension_numbers"]
    ls, ws, os_ = (eqn.invars[0].aval.shape, eqn.invars[1].aval.shape, eqn.outvars[0].aval.shape)
    g = prm["feature_group_count"]
    ci, co = ls[dn.lhs_spec[1]], ws[dn.rhs_spec[0]]
    k = _prod(ws[a] for a in dn.rhs_spec[2:])
    T = ls[dn.lhs_spec[0]] * _prod(os_[a] for a in dn.out_spec[2:])
    dims = dict(nb=g, T=T, d=(ci // g) * k, p=co // g, k=k, ci=ci)
    ok = True if prm["batch_group_count"] == 1 else f"batch_group_count={prm['batch_group_count']}"
    dims["gram_ok"] = ok is True
    return dims, ok


def _gather_dims(eqn, x_pos):
    prm = eqn.params
    dn, sizes = prm["dimension_numbers"], prm["slice_sizes"]
    ws, ids = eqn.invars[0].aval.shape, eqn.invars[1].aval.shape
    window = _prod(sizes)
    T, k = _prod(ids[:-1]), ids[-1]
    dims = dict(nb=1, T=T, d=k, p=window, mat=_prod(ws) + T * window)
    ok = True
    if dn.operand_batching_dims:
        ok = "operand batching dims"
    elif sorted(dn.collapsed_slice_dims) != sorted(dn.start_index_map) or \
            any(sizes[a] != 1 for a in dn.start_index_map) or \
            any(sizes[a] != ws[a] for a in range(len(ws)) if a not in dn.start_index_map):
        ok = "windows other than whole rows (slice_sizes {sizes})".format(sizes=tuple(sizes))
    return dims, ok


# ----- the tapped pass -----------------------------------------------------------------------------

def run(prog, plan, diff_leaves, cotangent, with_params=False):
    """Evaluate the batched loss with probes and deltas and pull `cotangent` (one weight per
    example) back. Returns `(acts, Gs, delta_grads, pullback, aux)`: per tap its X, per tapped
    operation its G (leading batch axis; `tap.probe` says which), per materialized leaf its
    per-example gradients, (with `with_params`) the pullback of the per-example loss vector with
    respect to the differentiated leaves, and the program's aux outputs per example."""
    jaxpr, consts, n_diff = plan.jaxpr, plan.consts, plan.n_diff
    taps = plan.taps
    taps_at = {}
    for k, t in enumerate(taps):
        taps_at.setdefault(t.index, []).append(k)
    probe_at = {idx: k for k, idx in enumerate(plan.probe_eqns)}
    delta_at = {leaf: k for k, leaf in enumerate(plan.delta_leaves)}
    B = prog.size
    squeezable = {i for i, eqn in enumerate(jaxpr.eqns) if _squeezable(eqn)}

    def one(diff, probes, deltas, ex):
        env = {}
        for v, c in zip(jaxpr.constvars, consts, strict=True):
            env[v] = c
        for i, (v, x) in enumerate(zip(jaxpr.invars[:n_diff], diff, strict=True)):
            env[v] = x if i not in delta_at else lax.add(x, deltas[delta_at[i]])
        for v, x in zip(jaxpr.invars[n_diff:], ex, strict=True):
            env[v] = x

        def read(a):
            return read_literal(a) if isinstance(a, Literal) else env[a]

        acts = [None] * len(taps)
        for idx, eqn in enumerate(jaxpr.eqns):
            ins = [read(a) for a in eqn.invars]
            for k in taps_at.get(idx, ()):
                acts[k] = ins[taps[k].x_pos]
            out = _bind_squeezed(eqn, ins) if idx in squeezable else eqn.primitive.bind(*ins, **eqn.params)
            if idx in probe_at:
                out = lax.add(out, probes[probe_at[idx]])
            if eqn.primitive.multiple_results:
                for v, o in zip(eqn.outvars, out, strict=True):
                    env[v] = o
            else:
                env[eqn.outvars[0]] = out
        return read(jaxpr.outvars[0]), (acts, [read(a) for a in jaxpr.outvars[1:]])

    outs = [jaxpr.eqns[i].outvars[0].aval for i in plan.probe_eqns]
    probes = [jnp.zeros((B,) + a.shape, a.dtype) for a in outs]
    avals = jaxpr.in_avals
    deltas = [jnp.zeros((B,) + avals[i].shape, avals[i].dtype) for i in plan.delta_leaves]
    batched = vmap(one, in_axes=(None, 0, 0, list(prog.ex_axes)))
    if with_params:
        def f(d, p, e):
            return batched(d, p, e, prog.ex_leaves)
        _, pullback, (acts, aux) = vjp(f, list(diff_leaves), probes, deltas, has_aux=True)
        _, gs, dgs = pullback(cotangent)
    else:
        def f(p, e):
            return batched(list(diff_leaves), p, e, prog.ex_leaves)
        _, pb, (acts, aux) = vjp(f, probes, deltas, has_aux=True)
        gs, dgs = pb(cotangent)
        pullback = None
    return acts, gs, dgs, pullback, aux


def _elementwise(eqn):
    """Whether `eqn` is an elementwise lax operation (one output, operands of its rank or scalars)."""
    rule = batching.batching_rules.get(eqn.primitive)
    if not (isinstance(rule, functools.partial) and rule.func is _broadcasting_batch_rule):
        return False
    if eqn.primitive.multiple_results or len(eqn.outvars) != 1:
        return False
    rank = len(eqn.outvars[0].aval.shape)
    return all(len(a.aval.shape) in (rank, 0) for a in eqn.invars)


def _squeezable(eqn):
    """Whether `_bind_squeezed` computes `eqn` without its size-1 dimensions: an elementwise
    operation, or a custom_jvp function of one array whose program is elementwise operations only
    (an activation such as relu), on values with size-1 dimensions."""
    if eqn.primitive.name == "custom_jvp_call":
        rule, call = eqn.params["jvp"], eqn.params["call_jaxpr"]
        inner = call.jaxpr
        if eqn.params["num_consts"] or not isinstance(rule, _JvpRule) or rule.nondiff or len(eqn.invars) != 1 \
                or rule.n_args != 1 or len(eqn.outvars) != 1 or any(np.ndim(c) for c in call.consts):
            return False
        shape = eqn.invars[0].aval.shape
        if eqn.outvars[0].aval.shape != shape or not all(
                _elementwise(e) and e.outvars[0].aval.shape == shape for e in inner.eqns):
            return False
    elif not _elementwise(eqn):
        return False
    return 1 in eqn.outvars[0].aval.shape


def _bind_squeezed(eqn, ins):
    """`eqn` applied to `ins` with the output's size-1 dimensions dropped and put back after.

    Why: a per-example loss usually runs its model on a batch of one (`x[None]`), so under the
    examples' vmap every activation has a size-1 dimension next to the batch, (B, 1, H, W, C), while
    a convolution's output is (B, H, W, C). XLA writes an elementwise result into its operand's
    buffer only when the two have the same dimensions, so the backward's ReLU mask on the
    convolution's output could not reuse that buffer: one activation more at the peak (49 MiB on
    the bench convnet at batch 256, which the non-private batch step does not hold). Elementwise
    operations computed without the size-1 dimensions have the convolution's dimensions, and so do
    their derivatives (a custom_jvp activation is called again on the squeezed values, so that
    its rule runs on them too). The reshapes are free (XLA bitcasts)."""
    shape = eqn.outvars[0].aval.shape
    keep = [i for i, d in enumerate(shape) if d != 1]

    def squeeze(x):
        return x if np.ndim(x) == 0 else jnp.reshape(x, tuple(np.shape(x)[i] for i in keep))
    args = [squeeze(x) for x in ins]
    if eqn.primitive.name == "custom_jvp_call":
        try:
            return [jnp.reshape(eqn.params["jvp"].f(*args), shape)]
        except Exception:  # noqa: BLE001 - a rule written for one shape only: run it as traced
            return eqn.primitive.bind(*ins, **eqn.params)
    return jnp.reshape(eqn.primitive.bind(*args, **eqn.params), shape)


def _chain_value(tap, leaf_value):
    v = leaf_value
    for eqn in tap.chain:
        v = eqn.primitive.bind(v, **eqn.params)
    return v


def _apply_op(tap, x, w):
    ops = [None, None]
    ops[tap.x_pos], ops[tap.w_pos] = x, w
    return tap.eqn.primitive.bind(*ops, **tap.eqn.params)


def _worth_keeping(t):
    """Whether a tap's materialized per-example gradients (d p per example and dot batch index) are
    kept for book-keeping: when they are no larger than the X and G the pass holds for that
    operation anyway (T (d + p)), which is what `auto` choosing 'materialize' implies."""
    dm = t.dims
    return t.rule == "materialize" and dm["d"] * dm["p"] <= dm["T"] * (dm["d"] + dm["p"])


def leaf_sq_norms(prog, plan, diff_leaves, acts, gs, dgs, keep=None):
    """Per leaf, the (B,) squared norms of the examples' gradients. With `keep` (a dict), the
    per-example gradients a 'materialize' rule formed are stored there by leaf when small enough
    (`_worth_keeping`), so book-keeping sums them instead of pulling back a second time."""
    B = prog.size
    sq = [None] * plan.n_diff
    for t, X in zip(plan.taps, acts, strict=True):
        G = gs[t.probe]
        name = t.eqn.primitive.name
        keep_this = keep is not None and _worth_keeping(t)
        per = None
        if name == "conv_general_dilated" and t.dims["gram_ok"]:
            sq[t.leaf], per = _conv_sq(t, X, G, "materialize" if t.rule == "materialize" else "gram", keep_this)
        elif t.rule == "materialize":
            W = _chain_value(t, diff_leaves[t.leaf])

            def one(x, g, t=t, W=W):
                return vjp(lambda w: _apply_op(t, x, w), W)[1](g)[0]
            per = vmap(one)(X, G)
            sq[t.leaf] = _sq_rows(per)
        elif name == "gather":
            sq[t.leaf] = _gather_gram(t, X, G)
        else:
            sq[t.leaf] = _gram(*_dot_canonical(t, X, G), t.rule == "dense")
        if keep_this and per is not None:
            keep[t.leaf] = per
    for leaf, D in zip(plan.delta_leaves, dgs, strict=True):
        sq[leaf] = _sq_rows(D)
    for i, s in enumerate(sq):
        if s is None:
            sq[i] = jnp.zeros((B,), diff_leaves[i].dtype)
    return sq


def _sq_rows(A):
    """sum of squares of each row of `A` flattened to 2-D (B rows): XLA fuses the square into a
    2-D row reduction, where a reduction over several axes (some of size 1, as the canonical forms
    have) made it copy the operand first: a copy the size of the activation, held at the peak."""
    return jnp.sum(jnp.square(jnp.reshape(A, (A.shape[0], -1))), axis=1)


def _gram(Xc, Gc, dense):
    """sum_b sum_{s,t} (x_s . x_t)(g_s . g_t) per example, from (B, nb, T, d) and (B, nb, T, p)."""
    if dense:  # T = 1: ||x||^2 ||g||^2
        B, nb = Xc.shape[:2]
        xs, gs = _sq_rows(jnp.reshape(Xc, (B * nb, -1))), _sq_rows(jnp.reshape(Gc, (B * nb, -1)))
        return jnp.sum(jnp.reshape(xs * gs, (B, nb)), axis=1)
    xx = jnp.einsum("nbsd,nbtd->nbst", Xc, Xc)
    gg = jnp.einsum("nbsp,nbtp->nbst", Gc, Gc)
    return jnp.sum(xx * gg, axis=(1, 2, 3))


def _dot_canonical(t, X, G):
    dm = t.dims
    B = X.shape[0]
    Xc = jnp.reshape(jnp.transpose(X, (0,) + tuple(1 + i for i in dm["xb"] + dm["xf"] + dm["xc"])),
                     (B, dm["nb"], dm["T"], dm["d"]))
    nbd, nxf, nwf = len(dm["xb"]), len(dm["xf"]), dm["nwf"]
    if t.x_pos == 0:   # output: batch dims, lhs (x) free dims, rhs (w) free dims
        xfree = tuple(range(nbd, nbd + nxf))
        wfree = tuple(range(nbd + nxf, nbd + nxf + nwf))
    else:
        wfree = tuple(range(nbd, nbd + nwf))
        xfree = tuple(range(nbd + nwf, nbd + nwf + nxf))
    perm = (0,) + tuple(1 + i for i in tuple(range(nbd)) + xfree + wfree)
    Gc = jnp.reshape(jnp.transpose(G, perm), (B, dm["nb"], dm["T"], dm["p"]))
    return Xc, Gc


def _conv_sq(t, X, G, rule, keep=False):
    """Per-example squared norms of a convolution's kernel gradient from its input X and output
    cotangent G. The patch vector of an output position is the input values every kernel tap
    multiplies; it is never formed whole: for each kernel position one strided slice of the padded
    input gives that tap's (T, C) slice, and the rules sum over kernel positions (the Gram matrix
    sum_k X_k X_k^T, or the squares of each tap's slice X_k^T G of the kernel gradient).
    Returns `(sq, per)`: `per`, with 'materialize' and `keep`, the per-example gradient slices
    (K, B, groups, C/groups, P/groups), the K kernel positions in `np.ndindex` order; else None.

    Memory: each slice is a copy of the input. Formed for the whole batch at once, XLA computed
    them as soon as the input existed, in the forward pass, and held them all until G came (9
    inputs' worth for a 3x3 kernel: twice the whole step's memory on the bench convnet; an
    optimization barrier does not order them on CPU, where XLA removes barriers early). So they are
    formed in a loop over chunks of examples: a loop cannot start before G, its operand, exists,
    and one iteration's slices are a chunk's, ~1/(2K) of the batch, so all K together are about
    half an input."""
    prm = t.eqn.params
    dn = prm["dimension_numbers"]
    dm = t.dims
    B = X.shape[0]
    g, ci, T, p = dm["nb"], dm["ci"], dm["T"], dm["p"]
    ws, os_ = t.eqn.invars[1].aval.shape, t.eqn.outvars[0].aval.shape
    # channels-last, the examples merged into the conv's batch (examples outermost): (N, sp..., C)
    lhs = jnp.transpose(X, (0, 1 + dn.lhs_spec[0]) + tuple(1 + a for a in dn.lhs_spec[2:]) + (1 + dn.lhs_spec[1],))
    lhs = jnp.reshape(lhs, (-1,) + lhs.shape[2:])
    per_example = lhs.shape[0] // B if B else 1   # the conv's own batch (images) per example
    config = [(0, 0, 0)] + [(lo, hi, d - 1) for (lo, hi), d in zip(prm["padding"], prm["lhs_dilation"])] + [(0, 0, 0)]
    ksp = [ws[a] for a in dn.rhs_spec[2:]]
    osp = [os_[a] for a in dn.out_spec[2:]]
    strides = tuple(prm["window_strides"])
    perm = (0, 1 + dn.out_spec[0]) + tuple(1 + a for a in dn.out_spec[2:]) + (1 + dn.out_spec[1],)
    Gc = jnp.reshape(jnp.transpose(G, perm), (B, T, g, p))
    offsets = list(np.ndindex(*ksp))
    materialize = rule == "materialize"
    dt = jnp.result_type(X.dtype, G.dtype)

    def on_chunk(lhs_c, G_c):
        """(squared norms, per-example gradient slices (K, n, g, c, p) or None) of n examples."""
        n = G_c.shape[0]
        padded = lax.pad(lhs_c, jnp.zeros((), lhs_c.dtype), config)
        pers, xx = [], None
        for offset in offsets:
            start = [0] + [j * r for j, r in zip(offset, prm["rhs_dilation"])] + [0]
            limit = [padded.shape[0]] + [s0 + (o - 1) * st + 1 for s0, o, st in zip(start[1:], osp, strides)] + [ci]
            Xk = jnp.reshape(lax.slice(padded, start, limit, (1,) + strides + (1,)), (n, T, g, ci // g))
            if materialize:
                pers.append(jnp.einsum("ntgc,ntgp->ngcp", Xk, G_c))
            else:
                part = jnp.einsum("nsgc,ntgc->ngst", Xk, Xk)
                xx = part if xx is None else xx + part
        if materialize:
            per = jnp.stack(pers)
            return _sq_rows(jnp.moveaxis(per, 0, 1)), (per if keep else None)
        gg = jnp.einsum("nsgp,ntgp->ngst", G_c, G_c)
        return jnp.sum(jnp.reshape(xx * gg, (n, -1)), axis=1), None

    chunk = max(1, -(-B // (2 * len(offsets))))
    n_chunks = -(-B // chunk)
    if n_chunks <= 1:
        sq, per = on_chunk(lhs, Gc)
    else:
        init = [jnp.zeros((B,), dt)]
        if materialize and keep:
            init.append(jnp.zeros((len(offsets), B, g, ci // g, p), dt))

        def body(i, acc):
            # the last chunk is moved back to end at B (examples computed twice write equal values)
            first = jnp.minimum(i * chunk, B - chunk)
            sq_c, per_c = on_chunk(lax.dynamic_slice_in_dim(lhs, first * per_example, chunk * per_example, 0),
                                   lax.dynamic_slice_in_dim(Gc, first, chunk, 0))
            out = [lax.dynamic_update_slice_in_dim(acc[0], sq_c.astype(dt), first, 0)]
            if len(acc) > 1:
                out.append(lax.dynamic_update_slice_in_dim(acc[1], per_c.astype(dt), first, 1))
            return out
        res = lax.fori_loop(0, n_chunks, body, init)
        sq, per = res[0], (res[1] if len(res) > 1 else None)
    return sq, per


def _gather_gram(t, I, G):
    """sum_{s,t} [idx_s = idx_t] (g_s . g_t) per example, indices treated as the gather treats them."""
    prm = t.eqn.params
    dn = prm["dimension_numbers"]
    ws = t.eqn.invars[0].aval.shape
    B = I.shape[0]
    T, k, p = t.dims["T"], t.dims["d"], t.dims["p"]
    idx = jnp.reshape(I, (B, T, k))
    out_rank = t.eqn.outvars[0].aval.ndim
    batch_out = [a for a in range(out_rank) if a not in dn.offset_dims]
    Gc = jnp.reshape(jnp.transpose(G, (0,) + tuple(1 + a for a in batch_out + list(dn.offset_dims))), (B, T, p))
    hi = jnp.asarray(np.array([ws[a] - 1 for a in dn.start_index_map]), idx.dtype)
    if prm["mode"] == GatherScatterMode.FILL_OR_DROP:
        # a window not wholly in bounds was filled, and its cotangent is dropped
        valid = jnp.all((idx >= 0) & (idx <= hi), axis=-1)
        Gc = jnp.where(valid[..., None], Gc, jnp.zeros_like(Gc))
    else:  # clip, and promise_in_bounds (which XLA clamps)
        idx = jnp.clip(idx, 0, hi)
    same = jnp.all(idx[:, :, None, :] == idx[:, None, :, :], axis=-1).astype(Gc.dtype)
    gg = jnp.einsum("nsp,ntp->nst", Gc, Gc)
    return jnp.sum(same * gg, axis=(1, 2))


# ----- book-keeping: the clipped sum from the same pass -----------------------------------------

def _kernel_from_slices(t, sums):
    """The kernel-shaped gradient from its slices (K, groups, C/groups, P/groups), the K kernel
    positions in `np.ndindex` order."""
    dn = t.eqn.params["dimension_numbers"]
    ws = t.eqn.invars[1].aval.shape
    ksp = [ws[a] for a in dn.rhs_spec[2:]]
    g, c, p = sums.shape[1:]
    a = jnp.reshape(sums, tuple(ksp) + (g, c, p))
    n = len(ksp)
    a = jnp.reshape(jnp.transpose(a, tuple(range(n)) + (n + 1, n, n + 2)), tuple(ksp) + (c, g * p))
    held = list(dn.rhs_spec[2:]) + [dn.rhs_spec[1], dn.rhs_spec[0]]   # the kernel dim of each axis of a
    return jnp.transpose(a, tuple(held.index(k) for k in range(len(ws))))


def _dot_weight_sum(t, X, Gw, w_shape):
    """The weight gradient sum_i X_i^T Gw_i of a tapped dot_general, in the weight's layout: one
    dot_general of the canonical forms, contracting the examples and the positions together. (The
    vjp of the vmapped operation contracts them as two dimensions, one of them often of size 1
    (a per-example batch of one); XLA then copied the whole activation X into a transposed layout
    first, a copy as large as X held until the end of the step.)"""
    dm = t.dims
    (lc, rc), (lb, rb) = t.eqn.params["dimension_numbers"]
    wc, wb = (rc, rb) if t.x_pos == 0 else (lc, lb)
    wf = [i for i in range(len(w_shape)) if i not in wc and i not in wb]
    Xc, Gc = _dot_canonical(t, X, Gw)                      # (B, nb, T, d), (B, nb, T, p)
    B, nb, T, d = Xc.shape
    p = Gc.shape[3]
    prec = t.eqn.params.get("precision")
    # X keeps its precision, the cotangent takes the weight's place (as in dot_general's transpose)
    prec = None if prec is None else (prec[t.x_pos], prec[t.w_pos])
    if nb == 1:
        gW = lax.dot_general(jnp.reshape(Xc, (B * T, d)), jnp.reshape(Gc, (B * T, p)), (((0,), (0,)), ((), ())),
                             precision=prec)
    else:
        Xm = jnp.reshape(jnp.transpose(Xc, (1, 0, 2, 3)), (nb, B * T, d))
        Gm = jnp.reshape(jnp.transpose(Gc, (1, 0, 2, 3)), (nb, B * T, p))
        gW = lax.dot_general(Xm, Gm, (((1,), (1,)), ((0,), (0,))), precision=prec)
    # (nb, d, p) holds the weight's batch dims, then its contracting dims in the order paired with
    # X's, then its free dims in order: back to the weight's own order
    held = list(wb) + list(wc) + wf
    gW = jnp.reshape(gW, tuple(w_shape[i] for i in held))
    perm = tuple(held.index(k) for k in range(len(w_shape)))
    return gW if perm == tuple(range(len(w_shape))) else jnp.transpose(gW, perm)


def clipped_sum_bookkeeping(prog, plan, diff_leaves, acts, gs, dgs, factors, kept=None):
    """sum_i c_i g_i per leaf, from the pass's X and G (no second backward pass), or from the
    per-example gradients `leaf_sq_norms` kept. `factors[leaf]` is the (B,) vector c of that leaf
    (the same vector for all leaves with flat clipping)."""
    out = [None] * plan.n_diff
    kept = kept or {}
    for t, X in zip(plan.taps, acts, strict=True):
        G = gs[t.probe]
        leaf = diff_leaves[t.leaf]
        W = _chain_value(t, leaf)
        c = factors[t.leaf].astype(G.dtype)
        if t.leaf in kept:
            per = kept[t.leaf]
            if t.eqn.primitive.name == "conv_general_dilated":   # (K, B, ...): the batch is axis 1
                gW = _kernel_from_slices(t, jnp.tensordot(c, per, axes=([0], [1])))
            else:
                gW = jnp.tensordot(c, per, axes=1)
        else:
            weighted = G * jnp.reshape(c, (-1,) + (1,) * (G.ndim - 1))
            if t.eqn.primitive.name == "dot_general" and X.dtype == G.dtype == W.dtype:
                gW = _dot_weight_sum(t, X, weighted, W.shape)
            else:
                gW = vjp(lambda w, t=t, X=X: vmap(lambda x: _apply_op(t, x, w))(X), W)[1](weighted)[0]
        out[t.leaf] = vjp(lambda v, t=t: _chain_value(t, v), leaf)[1](gW)[0] if t.chain else gW
    for i, D in zip(plan.delta_leaves, dgs, strict=True):
        # the same product D * c as a tap's weighted G (a bias's D is its layer's G, and XLA merges
        # the two): G's last use is then that product, which can take over G's buffer
        c = factors[i].astype(D.dtype)
        out[i] = jnp.sum(D * jnp.reshape(c, (-1,) + (1,) * (D.ndim - 1)), axis=0)
    for i, o in enumerate(out):
        if o is None:
            out[i] = jnp.zeros_like(diff_leaves[i])
    return out
