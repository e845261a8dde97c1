"""`summary(layer, input_shape)`: a table of a network's layers, output shapes and parameter counts.

Layers are named by the `name` attribute their constructors set ("Dense(10)", "Relu"; a bare
stax-style pair shows as "layer"); `serial` and `parallel` also record their sublayers, so the
table nests them. Nothing is computed: inits are traced under `core.eval_shape`.
"""
import math

from core.tree_util import tree_leaves

from .combinators import abstract_init

__all__ = ["summary"]


def _count(params):
    return sum(math.prod(leaf.shape) for leaf in tree_leaves(params))


def _rows(lyr, input_shape, depth):
    out_shape, params = abstract_init(lyr, input_shape)
    rows = [(depth, getattr(lyr, "name", "layer"), out_shape, _count(params))]
    flow, subs = getattr(lyr, "flow", None), getattr(lyr, "sublayers", ())
    if flow == "serial":
        shape = input_shape
        for sub in subs:
            sub_rows = _rows(sub, shape, depth + 1)
            shape = sub_rows[0][2]
            rows += sub_rows
    elif flow == "parallel":
        for sub, shape in zip(subs, input_shape, strict=True):
            rows += _rows(sub, shape, depth + 1)
    return rows


def summary(layer, input_shape, print_fn=None):
    """The table of `layer`'s structure for inputs of `input_shape`, as a string: one row per layer
    (sublayers of `serial` / `parallel` indented under them) with its output shape and parameter
    count, then the total. It is returned, not printed; pass `print_fn` (e.g. `print_fn=print`, or a
    logger's method) to also have it called once with the table.

    Example:
        >>> from nn import serial, Dense, Relu
        >>> print(summary(serial(Dense(4), Relu, Dense(2)), (-1, 3)))
        Layer         Output shape    Params
        serial        (-1, 2)         26
          Dense(4)    (-1, 4)         16
          Relu        (-1, 4)         0
          Dense(2)    (-1, 2)         10
        Total params: 26
    """
    flat = all(isinstance(d, int) for d in input_shape)
    rows = _rows(layer, tuple(input_shape) if flat else input_shape, 0)
    cells = [("  " * depth + name, str(shape), str(count)) for depth, name, shape, count in rows]
    header = ("Layer", "Output shape", "Params")
    widths = [max(len(row[i]) for row in cells + [header]) for i in range(2)]
    lines = [f"{a:<{widths[0]}}    {b:<{widths[1]}}    {c}" for a, b, c in [header] + cells]
    lines.append(f"Total params: {rows[0][3]}")
    table = "\n".join(line.rstrip() for line in lines)
    if print_fn is not None:
        print_fn(table)
    return table
