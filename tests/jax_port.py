"""The one change a port of a JAX program makes: its imports.

The JAX-style program tests (one per area of issue 16, and the stax/minmax ones) write a small
program with `import jax`-style names and run it after `port`, which rewrites only the import
lines: `jax.*` modules become `core.*`, and jax.example_libraries' stax and optimizers become `nn`
and `optim`.

    >>> print(port("import jax\\nimport jax.numpy as jnp\\nfrom jax import random\\n"
    ...            "from jax.example_libraries import stax"))
    import core as jax
    import core.numpy as jnp
    from core import random
    import nn as stax
"""
import re

_LIBRARIES = {"stax": "nn", "optimizers": "optim"}


def port(source):
    """`source` with its jax imports pointed at purenn's modules; nothing else changes."""
    source = re.sub(r"^from jax\.example_libraries import (stax|optimizers)$",
                    lambda m: f"import {_LIBRARIES[m[1]]} as {m[1]}", source, flags=re.M)
    source = re.sub(r"^import jax$", "import core as jax", source, flags=re.M)
    return re.sub(r"^(import|from) jax(?=[\s.])", r"\1 core", source, flags=re.M)
