"""`Precision`: how accurately float32 contractions (dot_general, conv_general_dilated) run.

As in JAX, a `precision=` argument is None, a `Precision`, one of its string aliases, or a pair
of those (lhs, rhs). `canonicalize_precision` turns it into the primitive parameter: None, or a
tuple of two `Precision` members (hashable, so part of every cache key). None means "not given":
the config option `default_matmul_precision` (alias `jax_default_matmul_precision`, context
manager `core.default_matmul_precision`) then decides, when set. Lowered, the pair is StableHLO's
`precision_config` on `dot_general` / `convolution`. XLA on CPU computes float32 exactly at every
precision; on GPU and TPU lower precisions may use TensorFloat-32 or bfloat16 passes.
"""
import enum

from ..config import MATMUL_PRECISION_STRINGS, config

__all__ = ["Precision"]


class Precision(enum.Enum):
    """The precision of a contraction's float32 operands, as `jax.lax.Precision`.

    DEFAULT (aliases 'default', 'fastest', 'bfloat16'), HIGH ('high', 'bfloat16_3x',
    'tensorfloat32') and HIGHEST ('highest', 'float32'). Construct from a member name's alias:

    >>> Precision("highest"), Precision("tensorfloat32")
    (Precision.HIGHEST, Precision.HIGH)
    """

    DEFAULT = 0
    HIGH = 1
    HIGHEST = 2

    @classmethod
    def _missing_(cls, value):
        if value is None:  # as JAX: Precision(None) is DEFAULT
            return cls.DEFAULT
        member = _PRECISION_STRINGS.get(value) if isinstance(value, str) else None
        if member is None:
            raise ValueError(f"Precision: unknown precision {value!r}; expected one of "
                             f"{sorted(_PRECISION_STRINGS)} or a Precision member.")
        return member

    def __repr__(self):
        return f"Precision.{self.name}"

    def __str__(self):
        return self.name


# JAX's aliases (jax 0.10.2): the spellings of the three members that programs use
_PRECISION_STRINGS = {
    "default": Precision.DEFAULT, "fastest": Precision.DEFAULT, "bfloat16": Precision.DEFAULT,
    "high": Precision.HIGH, "bfloat16_3x": Precision.HIGH, "tensorfloat32": Precision.HIGH,
    "highest": Precision.HIGHEST, "float32": Precision.HIGHEST,
}
PRECISION_STRINGS = tuple(_PRECISION_STRINGS)
assert PRECISION_STRINGS == MATMUL_PRECISION_STRINGS  # config validates with its copy of the list


def _one(value, where):
    if isinstance(value, Precision):
        return value
    if isinstance(value, str) and value in _PRECISION_STRINGS:
        return _PRECISION_STRINGS[value]
    raise ValueError(f"{where}: invalid precision {value!r}. Expected None, a lax.Precision "
                     f"(DEFAULT, HIGH, HIGHEST), one of the strings {list(PRECISION_STRINGS)}, or a "
                     "pair of two Precisions or two strings for (lhs, rhs).")


def canonicalize_precision(precision, where="precision"):
    """The primitive parameter for a user's `precision`: None or (lhs, rhs) `Precision` members.

    None defers to the config option `default_matmul_precision` (None when that is unset too).
    `where` names the calling function in errors.

    >>> canonicalize_precision("high")
    (Precision.HIGH, Precision.HIGH)
    >>> canonicalize_precision(("default", "highest"))
    (Precision.DEFAULT, Precision.HIGHEST)
    """
    if precision is None:
        default = config.default_matmul_precision
        if default is None:
            return None
        return canonicalize_precision(default, "config option default_matmul_precision")
    if isinstance(precision, (Precision, str)):
        p = _one(precision, where)
        return (p, p)
    if isinstance(precision, (tuple, list)) and len(precision) == 2 and (
            all(isinstance(p, Precision) for p in precision) or all(isinstance(p, str) for p in precision)):
        # as JAX: two members or two strings (a mixed pair is an error there too)
        return (_one(precision[0], where), _one(precision[1], where))
    return _one(precision, where)  # raises the error naming the value


def precision_attr(precision):
    """The `precision_config` attribute text for a canonical precision (None: none is written,
    which StableHLO reads as DEFAULT for both operands)."""
    if precision is None:
        return None
    return "[" + ", ".join(f"#stablehlo<precision {p.name}>" for p in precision) + "]"
