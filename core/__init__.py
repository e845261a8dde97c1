"""purenn's core: NumPy-style arrays on XLA devices, and (with later issues) the transformations.

The public surface only; see docs/design.md for the layering.
"""
from .version import __version__, __version_info__  # noqa: F401
from .config import config  # noqa: F401
from . import dtypes  # noqa: F401
from .avals import ShapedArray, ShapeDtypeStruct  # noqa: F401
from . import array  # noqa: F401
from .array import device_put, device_get, block_until_ready  # noqa: F401
from .basearray import Array  # noqa: F401  (abstract: device arrays and tracers, as jax.Array)
from .runtime import (devices, local_devices, device_count, local_device_count,  # noqa: F401
                      default_backend, process_index, process_count)
from . import tree_util  # noqa: F401
from .tree_util import (tree_map, tree_leaves, tree_flatten, tree_unflatten,  # noqa: F401
                        tree_structure)
from . import lax  # noqa: F401
from . import numpy  # noqa: F401
from . import random  # noqa: F401
from .api import jit, make_jaxpr, eval_shape, disable_jit, named_call, xla_computation  # noqa: F401
from .autodiff import (jvp, linearize, vjp, grad, value_and_grad, jacfwd, jacrev, hessian,  # noqa: F401
                       linear_transpose)
from .batching_api import vmap  # noqa: F401
from .pmap import pmap  # noqa: F401
from .sharded import (ShardedArray, device_put_sharded, device_put_replicated, replicate,  # noqa: F401
                      unreplicate)
from .custom_derivatives import custom_jvp, custom_vjp, closure_convert  # noqa: F401
from .ad_checkpoint import checkpoint, remat, checkpoint_policies, checkpoint_name  # noqa: F401
from . import debugging as debug  # noqa: F401
from . import errors  # noqa: F401
from . import scipy  # noqa: F401
from . import nn  # noqa: F401  (jax.nn; after numpy, lax, random and scipy, which it uses)
from . import per_example  # noqa: F401
from . import distributed  # noqa: F401
from . import profiler  # noqa: F401
from . import image  # noqa: F401
from . import tree  # noqa: F401  (jax.tree: core.tree.map, leaves, ...)
from . import flatten_util  # noqa: F401
from . import ops  # noqa: F401  (segment_sum, segment_max, ...)
from .callbacks import pure_callback  # noqa: F401
from .scopes import ensure_compile_time_eval, named_scope  # noqa: F401
from . import test_util  # noqa: F401
from .per_example import (per_example_grads, per_example_grad_norms, clipped_grad,  # noqa: F401
                          ghost_plan)


def clear_caches():
    """Drop every compiled executable (eager, jit and pmap caches) and cached constants."""
    from .runtime import clear_executable_cache, host_memory
    from . import array as _array
    from .api import clear_jit_caches
    from .pmap import clear_pmap_caches
    clear_executable_cache()
    clear_jit_caches()
    clear_pmap_caches()
    _array._scalar_cache.clear()
    host_memory.release_free_memory()  # the freed executables' memory back to the system


def cache_info():
    """Hit and miss counters and sizes of the executable caches, by name."""
    from .runtime import cache_info as _info
    return _info()
from .config import checking_leaks, default_matmul_precision  # noqa: F401


# Every public function is an API entry point: errors leaving it show the user's frames only
# (core/traceback_util.py). core.numpy and core.lax do this for themselves.
from . import traceback_util as _traceback_util  # noqa: E402
for _namespace in (random.__dict__, scipy.special.__dict__, debug.__dict__, tree_util.__dict__, tree.__dict__,
                   ops.__dict__, flatten_util.__dict__, globals()):
    _traceback_util.boundaries_for_namespace(_namespace)
del _namespace
