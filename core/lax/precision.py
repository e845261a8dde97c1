"""`Precision`: how accurately float32 contractions (dot_general, conv_general_dilated) run.

As in JAX, a `precision=` argument is None, a `Precision`, one of its string aliases, or a pair
of those (lhs, rhs). `canonicalize_precision` turns it into the primitive parameter: None, or a
tuple of two `Precision` members (hashable, so part of every cache key). None means "not given":
the config option `default_matmul_precision` (alias `jax_default_matmul_precision`, context
manager `core.default_matmul_precision`) then decides, when set. Lowered, the pair is StableHLO's
`precision_config` on `dot_general` / `convolution`. XLA on CPU computes float32 exactly at every
precision; on GPU and TPU lower precisions may use TensorFloat-32 or bfloat16 passes.

`dot_general` (and what is built on it) also takes a dot algorithm: a `DotAlgorithm`, a
`DotAlgorithmPreset` or a preset's name. It is the primitive parameter as given (the preset
member, or the DotAlgorithm tuple) and is lowered to StableHLO's `algorithm` attribute, with the
operands first converted to the storage type the preset takes when theirs is not one of them (as
JAX does); XLA on CPU compiles every preset but ANY_F8_* (those need float8 operands, refused
with an error) and computes float32 and wider exactly at each. `DEFAULT` is None: no attribute.
Convolutions take only `Precision`. `AccuracyMode` and `Tolerance` are JAX's types for the
`accuracy=` of unary functions, which XLA on CPU has one implementation of; they exist so that
programs naming them import.
"""
import enum
from typing import NamedTuple

import numpy as np

from ..config import MATMUL_PRECISION_STRINGS, config

__all__ = ["Precision", "DotAlgorithm", "DotAlgorithmPreset", "AccuracyMode", "Tolerance"]


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


def canonicalize_precision(precision, where="precision", allow_algorithm=False):
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
    algorithm = _algorithm(precision)
    if algorithm is not None:
        if not allow_algorithm:
            raise ValueError(f"{where}: a dot algorithm ({precision!r}) is accepted by dot_general and the products "
                             "built on it only; give a lax.Precision here.")
        return None if algorithm is DotAlgorithmPreset.DEFAULT else algorithm
    if isinstance(precision, (Precision, str)):
        p = _one(precision, where)
        return (p, p)
    if isinstance(precision, (tuple, list)) and len(precision) == 2 and (
            all(isinstance(p, Precision) for p in precision) or all(isinstance(p, str) for p in precision)):
        # as JAX: two members or two strings (a mixed pair is an error there too)
        return (_one(precision[0], where), _one(precision[1], where))
    return _one(precision, where)  # raises the error naming the value


def precision_attr(precision):
    """The `precision_config` attribute text for a canonical precision (None or a dot algorithm:
    none is written, which StableHLO reads as DEFAULT for both operands)."""
    if precision is None or is_algorithm(precision):
        return None
    return "[" + ", ".join(f"#stablehlo<precision {p.name}>" for p in precision) + "]"


# ----- dot algorithms ----------------------------------------------------------------------------

class DotAlgorithm(NamedTuple):
    """How a dot product computes, as `jax.lax.DotAlgorithm`: the types the operands are rounded
    to (`lhs_precision_type`, `rhs_precision_type`), the accumulation type, how many components
    each operand is split into and how many products emulate the higher precision (1, 1, 1 for
    none), and whether accumulation may be imprecise. Pass it as `precision=` of `dot_general`.

    >>> alg = lax.DotAlgorithm(np.float32, np.float32, np.float32)
    >>> lax.dot(jnp.ones(3), jnp.ones(3), precision=alg)
    Array(3., dtype=float32)
    """
    lhs_precision_type: object
    rhs_precision_type: object
    accumulation_type: object
    lhs_component_count: int = 1
    rhs_component_count: int = 1
    num_primitive_operations: int = 1
    allow_imprecise_accumulation: bool = False


class DotAlgorithmPreset(enum.Enum):
    """Named dot algorithms, as `jax.lax.DotAlgorithmPreset` (names LHS_RHS_ACCUMULATOR, `_X3` etc.
    for products emulating a higher precision with 3, 6 or 9 passes). Pass a member or its name as
    `precision=`; `DEFAULT` lets the compiler choose.

    >>> lax.DotAlgorithmPreset["BF16_BF16_F32"], str(lax.DotAlgorithmPreset.F32_F32_F32)
    (DotAlgorithmPreset.BF16_BF16_F32, 'F32_F32_F32')
    """
    DEFAULT = enum.auto()
    ANY_F8_ANY_F8_F32 = enum.auto()
    ANY_F8_ANY_F8_F32_FAST_ACCUM = enum.auto()
    ANY_F8_ANY_F8_ANY = enum.auto()
    ANY_F8_ANY_F8_ANY_FAST_ACCUM = enum.auto()
    F16_F16_F16 = enum.auto()
    F16_F16_F32 = enum.auto()
    BF16_BF16_BF16 = enum.auto()
    BF16_BF16_F32 = enum.auto()
    BF16_BF16_F32_X3 = enum.auto()
    BF16_BF16_F32_X6 = enum.auto()
    BF16_BF16_F32_X9 = enum.auto()
    TF32_TF32_F32 = enum.auto()
    TF32_TF32_F32_X3 = enum.auto()
    F32_F32_F32 = enum.auto()
    F64_F64_F64 = enum.auto()

    def __repr__(self):
        return f"DotAlgorithmPreset.{self.name}"

    def __str__(self):
        return self.name


class AccuracyMode(enum.Enum):
    """The accuracy a unary function's implementation should favour (`jax.lax.AccuracyMode`).

    >>> lax.AccuracyMode.HIGHEST.value
    1
    """
    HIGHEST = 1
    DEFAULT = 2


class Tolerance:
    """Tolerances for the implementation of a unary function (`jax.lax.Tolerance`): at most two
    of `atol`, `rtol` and `ulps`, non-negative, at least one set.

    >>> lax.Tolerance(atol=1e-6, ulps=2).ulps
    2
    """

    def __init__(self, atol=0.0, rtol=0.0, ulps=0):
        if atol < 0.0 or rtol < 0.0 or ulps < 0:
            raise ValueError(f"Tolerance: tolerances must be non-negative, got atol={atol}, rtol={rtol}, ulps={ulps}.")
        if atol == 0.0 and rtol == 0.0 and ulps == 0:
            raise ValueError("Tolerance: at least one of atol, rtol or ulps must be set.")
        self.atol, self.rtol, self.ulps = atol, rtol, ulps

    def __repr__(self):
        return f"Tolerance(atol={self.atol}, rtol={self.rtol}, ulps={self.ulps})"


def is_algorithm(precision):
    return isinstance(precision, (DotAlgorithm, DotAlgorithmPreset))


def _algorithm(precision):
    """`precision` as a DotAlgorithm or preset, or None when it is not one (a preset's name is one)."""
    if is_algorithm(precision):
        return precision
    if isinstance(precision, str) and precision in DotAlgorithmPreset.__members__:
        return DotAlgorithmPreset[precision]
    return None


_TF32 = "tf32"  # no NumPy dtype: StableHLO's name is used directly
_F8_PRESETS = ("ANY_F8_ANY_F8_F32", "ANY_F8_ANY_F8_F32_FAST_ACCUM", "ANY_F8_ANY_F8_ANY", "ANY_F8_ANY_F8_ANY_FAST_ACCUM")


def _preset_algorithm(preset):
    """(storage types the operands may have, or None for any; the DotAlgorithm) of a preset."""
    from .. import dtypes
    f16, f32, f64, bf16 = np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64), dtypes.bfloat16
    name = preset.name
    lhs, rhs, acc = name.split("_")[:3]
    passes = int(name.rsplit("_X", 1)[1]) if "_X" in name else 1
    types = {"F16": f16, "BF16": bf16, "F32": f32, "F64": f64, "TF32": _TF32}
    storage = {"F16": (f16,), "BF16": (bf16, f32), "TF32": (f32,), "F32": (f32,), "F64": (f64,)}[lhs]
    if name in ("F16_F16_F32",):
        storage = (f16,)
    return storage, DotAlgorithm(types[lhs], types[rhs], types[acc], 1, 1, passes, False)


def algorithm_lowering(precision, lhs_dtype, rhs_dtype, where="dot_general"):
    """(the storage dtype to convert both operands to, or None; the accumulation dtype; the
    `algorithm` attribute text) for a canonical dot-algorithm precision."""
    from ..interpreters.lowering import element_type
    if isinstance(precision, DotAlgorithmPreset):
        if precision.name in _F8_PRESETS:
            raise ValueError(f"{where}: the dot algorithm {precision} needs float8 operands, got "
                             f"{np.dtype(lhs_dtype).name} and {np.dtype(rhs_dtype).name}; use a preset for their "
                             "type (e.g. F32_F32_F32 or BF16_BF16_F32).")
        storage, algorithm = _preset_algorithm(precision)
        convert = None if lhs_dtype in storage and rhs_dtype in storage else storage[0]
    else:
        algorithm, convert = precision, None

    def hlo_type(t):
        return t if isinstance(t, str) else element_type(np.dtype(t))
    a = algorithm
    text = (f"#stablehlo.dot_algorithm<lhs_precision_type = {hlo_type(a.lhs_precision_type)}, "
            f"rhs_precision_type = {hlo_type(a.rhs_precision_type)}, "
            f"accumulation_type = {hlo_type(a.accumulation_type)}, lhs_component_count = {int(a.lhs_component_count)}, "
            f"rhs_component_count = {int(a.rhs_component_count)}, "
            f"num_primitive_operations = {int(a.num_primitive_operations)}, "
            f"allow_imprecise_accumulation = {'true' if a.allow_imprecise_accumulation else 'false'}>")
    acc = a.accumulation_type
    return convert, (np.dtype(np.float32) if acc == _TF32 else np.dtype(acc)), text
