"""Argument checks shared by the signal functions."""
import operator

import numpy as np

from ... import errors
from ...trace import Tracer


def short(x):
    """`float32[3, 4]`: an array's dtype and shape, for error messages."""
    return f"{np.dtype(x.dtype).name}{list(x.shape)}"


def static_int(function, argument, value):
    """`value` as a Python int (an integral float such as 8.0 too): these arguments fix the
    result's shape, so they must be concrete."""
    if isinstance(value, Tracer):
        raise errors.static_value_error(f"core.scipy.signal.{function}", argument, value, "a Python int")
    try:
        return operator.index(value)
    except TypeError:
        pass
    if isinstance(value, (float, np.floating)) and float(value).is_integer():  # 8.0, as SciPy's int() takes
        return int(value)
    raise TypeError(f"{function}: {argument} must be an integer; got {value!r}.")
