"""Tokens: values that carry no data, only an order between side-effecting operations (XLA's
`token` type, `!stablehlo.token`), as `jax.lax.create_token` / `after_all` make them.

A token never crosses a program boundary here: a program's token arguments are made inside it
(`stablehlo.create_token`) and its token results are dropped, the caller getting a fresh `Token`
(core/dispatch.py). Nothing is lost: the programs of one device run in the order they are
dispatched, so only the order within a program needs a token, and that one stays in the program.
"""

from . import dtypes

__all__ = ["AbstractToken", "abstract_token", "Token", "is_token"]


class AbstractToken:
    """The type of a token (printed `Tok` in jaxprs). A token is not an array; it reports shape ()
    and dtype float0 (the dtype of values that carry no data), so that differentiation treats it
    as it treats integers (no tangent, a float0 zero where one is needed), and lowering a token as
    a tensor fails (float0 has no element type) instead of computing with it."""
    __slots__ = ()
    shape = ()
    ndim = 0
    size = 0
    dtype = dtypes.float0
    weak_type = False
    type_id = -1  # never an array's id: jit's fast paths key on array types only

    def __eq__(self, other):
        return type(other) is AbstractToken

    def __hash__(self):
        return hash(AbstractToken)

    def str_short(self):
        return "Tok"

    def strip_weak_type(self):
        return self

    def __repr__(self):
        return "AbstractToken()"

    __str__ = str_short


abstract_token = AbstractToken()


class Token:
    """A concrete token, as `create_token()` returns eagerly: no value, only its type. It is a
    pytree leaf and may be passed to and returned from `jit`ted functions.

    >>> lax.after_all(lax.create_token(), lax.create_token())
    Token()
    """
    __slots__ = ("__weakref__",)
    aval = abstract_token

    def block_until_ready(self):
        return self

    def __repr__(self):
        return "Token()"


def is_token(x):
    """Whether `x` is a token: a concrete `Token` or a traced value of type `AbstractToken`."""
    return type(getattr(x, "aval", None)) is AbstractToken
