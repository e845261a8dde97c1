"""Solves differentiated implicitly: `custom_linear_solve` (the `linear_solve` primitive) and
`custom_root`, as JAX's `lax` defines them.

A solver is usually an iteration (conjugate gradients, Newton) whose steps are not what a
derivative should follow: differentiating through them is slow, needs a reverse-differentiable
loop (our `while_loop` is not) and gives the derivative of the approximation, not of the solution.
Both functions therefore differentiate the *equation* instead:

* `custom_linear_solve(matvec, b, solve)`: x = A^-1 b with A = `matvec`. Differentiating
  A x = b gives dx = A^-1 (db - dA x), one more `solve`; transposing x = A^-1 b in b gives
  A^-T ct, a `transpose_solve` with the transposed `matvec`. So `linear_solve` is a primitive that
  holds four programs (matvec, its transpose vecmat, solve, transpose_solve) and is linear in b:
  its jvp binds itself again with the tangent right-hand side, its transpose binds itself with the
  programs swapped, its batching rule batches the four programs consistently, and it lowers to the
  `solve` program alone. Partial evaluation needs no rule: the tangent solve has known programs'
  constants and an unknown right-hand side, so it is staged whole, and transposes as above.
* `custom_root(f, x0, solve, tangent_solve)`: x* with f(x*) = 0. The implicit function theorem
  gives dx* = -(df/dx)^-1 (df/dparams . dparams), which `tangent_solve` computes with the
  linearized f. It is a `custom_jvp` function over the constants the three programs close over,
  so the derivative reaches the parameters of f and never the iterations of `solve`.

Operand layout of `linear_solve`, written once: `*matvec_consts, *vecmat_consts, *solve_consts,
*transpose_solve_consts, *b`; `const_lengths` has the four counts, `jaxprs` the four programs
(vecmat and transpose_solve are None when no `transpose_solve` was given), each constant-free and
taking `(*its consts, *x or b leaves)`. solve and transpose_solve return the solution's leaves
followed by the leaves of their aux output (`has_aux`); aux has no derivative.
"""
import builtins

from .. import dtypes
from ..interpreters import ad, batching, lowering
from ..interpreters.evaluation import eval_jaxpr
from ..trace import Primitive
from ..tree_util import tree_flatten, tree_unflatten, treedef_children
from .control_flow import (_batched_at_front, _call, _check_operands, _join_consts, _operand, _show, _trace,
                           _unbatched)
from .elementwise import neg, sub

__all__ = ["custom_linear_solve", "custom_root", "linear_solve_p"]


# ----- tracing the user's functions and checking what they return -----------------------------------

def _check_output_like(api, name, closed, out_tree, tree, avals, has_aux, *, like, shape_error, shape_words):
    """`api`'s user function `name`: its output (the first element with `has_aux`) must have the
    structure, shapes and dtypes of `like` (`tree`, `avals`); `shape_error(...shape_words...)` if not."""
    out_avals = closed.out_avals
    if has_aux:
        children = treedef_children(out_tree)
        if len(children) != 2:
            raise TypeError(f"{api}: {name} with has_aux=True must return a pair (x, aux), got "
                            f"{_show(out_tree, out_avals)}.")
        out_tree = children[0]
        out_avals = out_avals[:out_tree.num_leaves]
    if out_tree != tree:
        raise TypeError(f"{api}: {name}() output pytree structure must match {like}, got "
                        f"{_show(out_tree, out_avals)} and {like} {_show(tree, avals)}.")
    for got, want in zip(out_avals, avals, strict=True):
        if got.shape != want.shape or got.dtype != want.dtype:
            raise shape_error(f"{api}: {name}() output {shape_words} must match {like}, got "
                              f"{_show(out_tree, out_avals)} for {like} {_show(tree, avals)}.")


def _check_like_b(name, closed, out_tree, tree, avals, has_aux=False):
    """`name`'s output (its first element with `has_aux`) must have b's structure, shapes and dtypes."""
    _check_output_like("custom_linear_solve", name, closed, out_tree, tree, avals, has_aux, like="b",
                       shape_error=ValueError, shape_words="shapes")


def _transposed_matvec(matvec_closed, avals):
    """The transpose of the linear map `matvec_closed` (b leaves -> b leaves), as a flat function."""
    def vecmat(*cts):
        undefined = [ad.UndefinedPrimal(a.strip_weak_type()) for a in avals]
        outs = ad.backward_pass(matvec_closed.jaxpr, list(matvec_closed.consts) + undefined, list(cts))
        return [ad.instantiate_zeros(o) for o in outs]
    return vecmat


def custom_linear_solve(matvec, b, solve, transpose_solve=None, symmetric=False, has_aux=False):
    """Solve `matvec(x) == b` for x with `solve`, differentiated implicitly (as `jax.lax`).

    `matvec` is a linear function (pytree to pytree of b's structure, shapes and dtypes);
    `solve(matvec, b)` returns x (with `has_aux`, a pair `(x, aux)`, aux not differentiated).
    Derivatives never go through `solve`'s computation: the jvp is one more `solve` of
    `db - dA x`, and reverse mode needs `transpose_solve(vecmat, b)`, which solves with the
    transposed operator `vecmat` (with `symmetric=True`, `solve` serves as transpose_solve and
    matvec as vecmat). Runs under jit, vmap, grad and their compositions.

    Example:
        >>> a = jnp.array([[2., 1.], [1., 3.]])
        >>> x = lax.custom_linear_solve(lambda v: a @ v, jnp.array([3., 5.]),
        ...                             lambda mv, r: jnp.linalg.solve(a, r), symmetric=True)
        >>> x
        Array([0.8, 1.4], dtype=float32)
    """
    if transpose_solve is None and symmetric:
        transpose_solve = solve
    leaves, tree = tree_flatten(b)
    ops = [_operand(x) for x in leaves]
    avals = [x.aval for x in ops]
    for x, a in zip(leaves, avals, strict=True):
        if not dtypes.is_inexact(a.dtype):
            raise TypeError(f"custom_linear_solve: b must hold float or complex arrays, got a leaf of type "
                            f"{a.str_short()}. Convert it with `.astype(jnp.float32)`.")
    args_tree = tree_flatten((b,))[1]

    matvec_closed, out_tree = _trace(matvec, args_tree, avals, "custom_linear_solve matvec")
    _check_like_b("matvec", matvec_closed, out_tree, tree, avals)
    solve_closed, out_tree = _trace(lambda r: solve(matvec, r), args_tree, avals, "custom_linear_solve solve")
    _check_like_b("solve", solve_closed, out_tree, tree, avals, has_aux)
    out_tree_x = out_tree
    closeds = [matvec_closed, None, solve_closed, None]
    if transpose_solve is not None:
        if symmetric:
            vecmat_closed, vecmat = matvec_closed, matvec
        else:
            flat_vecmat = _transposed_matvec(matvec_closed, avals)

            def vecmat(y):
                y_leaves, y_tree = tree_flatten(y)
                if y_tree != tree:
                    raise TypeError(f"custom_linear_solve: the transposed matvec takes b's structure "
                                    f"{_show(tree, avals)}, got {y_tree}.")
                return tree_unflatten(tree, flat_vecmat(*y_leaves))

            vecmat_closed, _ = _trace(vecmat, args_tree, avals, "custom_linear_solve vecmat")
        tsolve_closed, t_tree = _trace(lambda r: transpose_solve(vecmat, r), args_tree, avals,
                                       "custom_linear_solve transpose_solve")
        _check_like_b("transpose_solve", tsolve_closed, t_tree, tree, avals, has_aux)
        closeds[1], closeds[3] = vecmat_closed, tsolve_closed
    jaxprs, consts = [], []
    for c in closeds:
        if c is None:
            jaxprs.append(None)
            consts.append([])
        else:
            (j,), cs = _join_consts([c])
            jaxprs.append(j)
            consts.append(list(cs))
    outs = linear_solve_p.bind(*[x for cs in consts for x in cs], *ops,
                               const_lengths=tuple(len(cs) for cs in consts), jaxprs=tuple(jaxprs))
    return tree_unflatten(out_tree_x, outs)


# ----- the primitive --------------------------------------------------------------------------------

def _split(args, const_lengths):
    """The operands as four constant lists and the right-hand side."""
    groups, start = [], 0
    for n in const_lengths:
        groups.append(list(args[start:start + n]))
        start += n
    return groups, list(args[start:])


def _swap(seq):
    """(matvec, vecmat, solve, transpose_solve) -> (vecmat, matvec, transpose_solve, solve)."""
    return (seq[1], seq[0], seq[3], seq[2])


def _abstract_eval(*args, const_lengths, jaxprs):
    consts, b = _split(args, const_lengths)
    names = ("matvec", "vecmat", "solve", "transpose_solve")
    for name, j, cs in zip(names, jaxprs, consts, strict=True):
        if j is not None:
            _check_operands(f"linear_solve {name}", j.in_avals, cs + b)
    n = len(b)
    solve_out = jaxprs[2].out_avals
    _check_operands("linear_solve solve output", [a.strip_weak_type() for a in b],
                    [a.strip_weak_type() for a in solve_out[:n]])
    return list(solve_out)


def _lowering(ctx, *args, const_lengths, jaxprs):
    consts, b = _split(args, const_lengths)
    return lowering.lower_jaxpr_into(ctx.b, jaxprs[2].jaxpr, consts[2] + b)


linear_solve_p = Primitive("linear_solve", multiple_results=True)
linear_solve_p.def_abstract_eval(_abstract_eval)
lowering.register(linear_solve_p, _lowering)


def _linear_solve_jvp(primals, tangents, *, const_lengths, jaxprs):
    # A x = b  =>  dA x + A dx = db  =>  dx = A^-1 (db - dA x); dA x is the jvp of matvec in its
    # constants at the fixed point x (zero tangent for x). aux gets no tangent.
    params = dict(const_lengths=const_lengths, jaxprs=jaxprs)
    out = linear_solve_p.bind(*primals, **params)
    consts, b = _split(primals, const_lengths)
    consts_t, b_t = _split(tangents, const_lengths)
    n = len(b)
    x = out[:n]
    rhs = [ad.instantiate_zeros(t) for t in b_t]
    if builtins.any(type(t) is not ad.Zero for t in consts_t[0]):
        matvec = jaxprs[0]
        x_zero = [ad.Zero(ad.tangent_aval(a)) for a in matvec.in_avals[len(consts[0]):]]
        _, dax = ad.jvp_flat(lambda *xs: _call(matvec, xs), consts[0] + x, consts_t[0] + x_zero,
                             instantiate=True)
        rhs = [sub(r, d) for r, d in zip(rhs, dax, strict=True)]
    dx = linear_solve_p.bind(*[c for cs in consts for c in cs], *rhs, **params)
    out_avals = jaxprs[2].out_avals
    return out, dx[:n] + [ad.Zero(ad.tangent_aval(a)) for a in out_avals[n:]]


def _linear_solve_transpose(cts, *args, const_lengths, jaxprs):
    # x = A^-1 b is linear in b; its transpose is A^-T ct, the same primitive with matvec/vecmat and
    # solve/transpose_solve swapped. aux outputs have no derivative, so their cotangents are dropped.
    if jaxprs[3] is None:
        raise TypeError("custom_linear_solve: transpose_solve is required for reverse-mode differentiation "
                        "(grad, vjp) of custom_linear_solve. Pass transpose_solve=..., or symmetric=True when "
                        "matvec is symmetric.")
    consts, b = _split(args, const_lengths)
    if builtins.any(ad.is_undefined(c) for cs in consts for c in cs):
        raise NotImplementedError("linear_solve is linear in b only; it cannot be transposed in the constants of "
                                  "its programs.")
    n = len(b)
    ct_x = [ad.instantiate_zeros(ct) for ct in cts[:n]]
    swapped = _swap(consts)
    outs = linear_solve_p.bind(*[c for cs in swapped for c in cs], *ct_x,
                               const_lengths=_swap(const_lengths), jaxprs=_swap(jaxprs))
    return [None] * builtins.sum(const_lengths) + [ct if ad.is_undefined(x) else None
                                                  for x, ct in zip(b, outs[:n], strict=True)]


ad.jvp_rules[linear_solve_p] = _linear_solve_jvp
ad.transpose_rules[linear_solve_p] = _linear_solve_transpose


def _linear_solve_batch_rule(axis, vals, dims, *, const_lengths, jaxprs):
    """Which leaves of x and b are batched must agree across the four programs (x and b have one
    structure, and the transposed primitive swaps their roles): a fixpoint over all four, starting
    from the batched leaves of b. aux outputs are batched (at 0) whenever the solve is."""
    present = [j for j in jaxprs if j is not None]
    n_out = len(jaxprs[2].out_avals)
    if _unbatched(axis, dims, present):
        return linear_solve_p.bind(*vals, const_lengths=const_lengths, jaxprs=jaxprs), [None] * n_out
    consts, b = _split(vals, const_lengths)
    c_dims, b_dims = _split(dims, const_lengths)
    n = len(b)
    n_aux = n_out - n
    bat = [d is not None for d in b_dims]
    for _ in range(n + 1):
        new = list(bat)
        for j, cd in zip(jaxprs, c_dims, strict=True):
            if j is None:
                continue
            chosen = batching.batch_jaxpr(j, axis, cd + _batched_at_front(bat), [None] * len(j.out_avals))[1]
            new = [x or d is not None for x, d in zip(new, chosen[:n], strict=True)]
        if new == bat:
            break
        bat = new
    lane_dims = _batched_at_front(bat)
    b = [batching.move_bdim(x, d, 0, axis.size) if on else x for x, d, on in zip(b, b_dims, bat, strict=True)]
    new_jaxprs, new_consts = [], []
    for k, (j, cs, cd) in enumerate(zip(jaxprs, consts, c_dims, strict=True)):
        if j is None:
            new_jaxprs.append(None)
            new_consts.append([])
            continue
        outs = lane_dims + [0] * n_aux if k in (2, 3) else lane_dims
        batched, _ = batching.batch_jaxpr(j, axis, cd + lane_dims, outs)
        (jb,), hoisted = _join_consts([batched])
        new_jaxprs.append(jb)
        new_consts.append(list(hoisted) + cs)
    outs = linear_solve_p.bind(*[c for cs in new_consts for c in cs], *b,
                               const_lengths=tuple(len(cs) for cs in new_consts), jaxprs=tuple(new_jaxprs))
    return outs, lane_dims + [0] * n_aux


batching.axis_batching_rules[linear_solve_p] = _linear_solve_batch_rule


# ----- custom_root ----------------------------------------------------------------------------------

def _check_root_tree(name, closed, out_tree, tree, avals, has_aux=False):
    _check_output_like("custom_root", name, closed, out_tree, tree, avals, has_aux, like="initial_guess",
                       shape_error=TypeError, shape_words="shapes and dtypes")


def custom_root(f, initial_guess, solve, tangent_solve, has_aux=False):
    """Find x with `f(x) == 0` using `solve`, differentiated implicitly (as `jax.lax.custom_root`).

    `solve(f, initial_guess)` returns the root (with `has_aux`, a pair `(x, aux)`); it is run but
    never differentiated. Derivatives with respect to what `f` closes over follow from
    f(x*(p), p) = 0: dx* = -J^-1 (df/dp dp) with J = df/dx at x*, where
    `tangent_solve(g, y)` must solve the linear system `g(x) = y` for x, `g` being f linearized at
    the root (for a scalar, `lambda g, y: y / g(1.0)`). For reverse mode `tangent_solve` must be
    linear in y (e.g. a matrix solve, or `custom_linear_solve`).

    Example:
        >>> def sqrt_newton(a):
        ...     f = lambda x: x * x - a
        ...     newton = lambda f, x0: lax.fori_loop(0, 20, lambda i, x: x - f(x) / (2 * x), x0)
        ...     return lax.custom_root(f, 1.0, newton, lambda g, y: y / g(1.0))
        >>> core.grad(sqrt_newton)(4.0)   # 1 / (2 sqrt(4))
        Array(0.25, dtype=float32)
    """
    from ..autodiff import linearize
    from ..custom_derivatives import custom_jvp
    leaves, tree = tree_flatten(initial_guess)
    guess = [_operand(x) for x in leaves]
    avals = [x.aval for x in guess]
    args_tree = tree_flatten((initial_guess,))[1]

    f_closed, f_tree = _trace(f, args_tree, avals, "custom_root f")
    _check_root_tree("f", f_closed, f_tree, tree, avals)
    solve_closed, s_tree = _trace(lambda x: solve(f, x), args_tree, avals, "custom_root solve")
    _check_root_tree("solve", solve_closed, s_tree, tree, avals, has_aux)

    def linearize_and_solve(x, rhs):
        _, f_jvp = linearize(f, x)
        return tangent_solve(f_jvp, rhs)

    pair_tree = tree_flatten((initial_guess, initial_guess))[1]
    ls_closed, ls_tree = _trace(linearize_and_solve, pair_tree, avals + avals, "custom_root tangent_solve")
    _check_root_tree("tangent_solve", ls_closed, ls_tree, tree, avals)

    programs, lengths, consts = [], [], []
    for c in (f_closed, solve_closed, ls_closed):
        (j,), cs = _join_consts([c])
        programs.append(j)
        lengths.append(len(cs))
        consts += list(cs)
    f_j, solve_j, ls_j = programs
    n = len(guess)

    def split(args):
        a, b_ = lengths[0], lengths[0] + lengths[1]
        c = b_ + lengths[2]
        return list(args[:a]), list(args[a:b_]), list(args[b_:c]), list(args[c:])

    @custom_jvp
    def root(*args):
        _, solve_c, _, x0 = split(args)
        return eval_jaxpr(solve_j.jaxpr, [], *solve_c, *x0)

    @root.defjvp
    def root_jvp(primals, tangents):
        # f(x*(p), p) = 0 gives J dx* = -(df/dp) dp: solve it with tangent_solve at the root. The
        # tangents of solve's constants and of the initial guess do not matter (implicit function).
        f_c, _, ls_c, _ = split(primals)
        f_t = [ad.Zero(ad.tangent_aval(_operand(c).aval)) if ad.is_float0(t) else t
               for c, t in zip(f_c, split(tangents)[0], strict=True)]
        out = root(*primals)
        x = list(out[:n])
        _, rhs = ad.jvp_flat(lambda *cs: eval_jaxpr(f_j.jaxpr, [], *cs, *x), f_c, list(f_t), instantiate=True)
        dx = eval_jaxpr(ls_j.jaxpr, [], *ls_c, *x, *rhs)
        aux_t = [ad.instantiate_zeros(ad.Zero(ad.tangent_aval(_operand(a).aval))) for a in out[n:]]
        return list(out), [neg(t) for t in dx] + aux_t

    outs = root(*consts, *guess)
    return tree_unflatten(s_tree, outs)
