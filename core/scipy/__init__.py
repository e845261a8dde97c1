"""`core.scipy`: SciPy-style functions over purenn's primitives, as `jax.scipy` is over JAX's."""
from . import special  # noqa: F401
from . import stats  # noqa: F401
from . import linalg  # noqa: F401
from . import signal  # noqa: F401
from . import optimize  # noqa: F401
