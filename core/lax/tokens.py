"""`create_token` and `after_all`: XLA's tokens, values that carry only an order between
side-effecting operations (core/tokens.py says how they cross program boundaries).

Tokens flow through `jit` (arguments, results, closed-over constants), are pytree leaves, pass
through `vmap` unbatched (a token has no lanes: mapping one over an axis is an error) and have no
derivative (differentiation treats them as it treats integers).
"""
from ..interpreters import ad, batching, lowering
from ..tokens import AbstractToken, abstract_token
from ..trace import Primitive

__all__ = ["create_token", "after_all"]


def create_token(_=None):
    """A new token, with no preconditions: the start of a chain of ordered effects. The argument
    is ignored (kept for compatibility, as in JAX).

    >>> lax.create_token()
    Token()
    """
    return create_token_p.bind()


create_token_p = Primitive("create_token")
create_token_p.def_abstract_eval(lambda: abstract_token)
lowering.register(create_token_p, lambda ctx: ctx.b.op("stablehlo.create_token", [], [lowering.TOKEN_TYPE]))


def after_all(*operands):
    """A token that comes after every token in `operands` (XLA's AfterAll): effects ordered after
    it are ordered after all of theirs. With no operands it is a new token.

    >>> t = lax.create_token()
    >>> lax.after_all(t, lax.create_token())
    Token()
    """
    for i, x in enumerate(operands):
        aval = getattr(x, "aval", None)
        if type(aval) is not AbstractToken:
            what = aval.str_short() if aval is not None else type(x).__name__
            raise TypeError(f"after_all: every argument must be a token (from lax.create_token() or another "
                            f"after_all); argument {i} is {what}.")
    return after_all_p.bind(*operands)


def _after_all_abstract_eval(*avals):
    for i, a in enumerate(avals):
        if type(a) is not AbstractToken:
            raise TypeError(f"after_all: every argument must be a token; argument {i} is {a.str_short()}.")
    return abstract_token


after_all_p = Primitive("after_all")
after_all_p.def_abstract_eval(_after_all_abstract_eval)
lowering.register(after_all_p,
                  lambda ctx, *tokens: ctx.b.op("stablehlo.after_all", list(tokens), [lowering.TOKEN_TYPE]))

# No derivative: a token has none, and nothing differentiable flows into one.
ad.nondifferentiable.update((create_token_p, after_all_p))


def _after_all_batch(vals, dims):
    # tokens are never batched (vmap refuses to map one); an unbatched operand list only gets here
    # if a rule passed a token through, so the result is unbatched as well
    return after_all_p.bind(*vals), None


batching.batching_rules[after_all_p] = _after_all_batch
