"""`core.numpy`: the NumPy API over purenn's primitives, as `jax.numpy` is over JAX's.

Where JAX deliberately differs from NumPy, we do as JAX and say so in the function's docstring:
arrays are immutable (`x.at[i].set(v)` instead of `x[i] = v`), out-of-bounds indices clamp in
gathers and are dropped in scatters, and 64-bit types need `enable_x64`.
"""
from ..basearray import Array as ndarray  # noqa: F401  (device arrays and tracers, as jax.numpy.ndarray)
from ..basearray import Array  # noqa: F401
from .dtype_api import *  # noqa: F401,F403
from .creation import *  # noqa: F401,F403
from .ufuncs import *  # noqa: F401,F403
from .manipulation import *  # noqa: F401,F403
from .indexing import *  # noqa: F401,F403
from .reductions import *  # noqa: F401,F403
from .sorting import *  # noqa: F401,F403
from .products import *  # noqa: F401,F403
from .vectorize import *  # noqa: F401,F403
from .comparison import *  # noqa: F401,F403
from .array_api_aliases import *  # noqa: F401,F403
from .calculus import *  # noqa: F401,F403
from .signal import *  # noqa: F401,F403
from .statistics import *  # noqa: F401,F403
from .polynomial import *  # noqa: F401,F403
from .index_tricks import *  # noqa: F401,F403
from .windows import *  # noqa: F401,F403
from .histograms import *  # noqa: F401,F403
from .functional import *  # noqa: F401,F403
from .ufunc_api import *  # noqa: F401,F403  (after ufuncs: jnp.add and friends become ufunc objects)
from .printing import *  # noqa: F401,F403
from .host_io import *  # noqa: F401,F403
from . import manipulation as _manipulation, indexing as _indexing  # noqa: F401
from . import _array_methods
from . import linalg, fft  # noqa: F401

pi = 3.141592653589793
e = 2.718281828459045
inf = float("inf")
nan = float("nan")
euler_gamma = 0.5772156649015329
newaxis = None

for _name in ("_rewriting_take", "_IndexUpdateHelper"):
    if hasattr(_indexing, _name):
        globals()[_name] = getattr(_indexing, _name)
for _name in ("_astype", "_reshape_method", "_transpose_method", "_view"):
    if hasattr(_manipulation, _name):
        globals()[_name] = getattr(_manipulation, _name)

_array_methods.install_all()

from .. import traceback_util as _traceback_util  # noqa: E402
_traceback_util.boundaries_for_namespace(globals())
_traceback_util.boundaries_for_namespace(linalg.__dict__)
_traceback_util.boundaries_for_namespace(fft.__dict__)
_traceback_util.boundaries_for_methods(_indexing._IndexUpdateRef)  # x.at[i].set(...) and friends
