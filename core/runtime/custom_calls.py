"""jaxlib's CPU LAPACK kernels as XLA custom-call targets: the one place that registers them.

jaxlib ships LAPACK wrappers (`jaxlib.cpu._lapack`) as typed XLA FFI handlers named
`lapack_<prefix><routine>_ffi` (prefix s/d/c/z for float32/float64/complex64/complex128). They
must be registered with the CPU platform before a module that calls them is compiled, and
`_lapack.initialize()` must bind them to SciPy's LAPACK. We do both once, on first use.

A lowering calls a target with `stablehlo.custom_call` (`api_version = 4`, the typed FFI), passing
the kernel's attributes in `backend_config = {...}` and column-major `operand_layouts` /
`result_layouts` for the matrix dimensions (see `core/lax/linalg.py`).
"""
import threading

import numpy as np

from .client import backend, xc

__all__ = ["lapack_target", "ensure_lapack_registered", "lapack_available"]

_LAPACK_PREFIX = {np.dtype(np.float32): "s", np.dtype(np.float64): "d",
                  np.dtype(np.complex64): "c", np.dtype(np.complex128): "z"}

_lock = threading.Lock()
_state = {"lapack": None}  # None: not tried yet; then the set of registered target names


def ensure_lapack_registered():
    """Register every LAPACK FFI target of jaxlib with the CPU platform (once); returns their names."""
    names = _state["lapack"]
    if names is not None:
        return names
    with _lock:
        if _state["lapack"] is None:
            from jaxlib.cpu import _lapack  # imported late: it loads SciPy's LAPACK
            _lapack.initialize()
            registered = set()
            for name, capsule in _lapack.registrations().items():
                if name.endswith("_ffi"):
                    # api_version 1 is XLA's typed FFI (what the `_ffi` handlers implement)
                    xc.register_custom_call_target(name, capsule, platform="cpu", api_version=1)
                    registered.add(name)
            _state["lapack"] = frozenset(registered)
    return _state["lapack"]


def lapack_available():
    """Whether the default backend runs jaxlib's CPU LAPACK kernels (they exist only on CPU)."""
    return backend().platform == "cpu"


def lapack_target(routine, dtype, what=None):
    """The registered FFI target name for LAPACK `routine` (e.g. "getrf") at `dtype`.

    Example: `lapack_target("potrf", np.float32)` is "lapack_spotrf_ffi". Raises NotImplementedError
    for dtypes LAPACK has no kernel for, or when the default backend is not the CPU.
    """
    what = what or routine
    prefix = _LAPACK_PREFIX.get(np.dtype(dtype))
    if prefix is None:
        raise NotImplementedError(f"{what} is implemented for float32, float64, complex64 and complex128 "
                                  f"(LAPACK), got dtype {np.dtype(dtype).name}.")
    if not lapack_available():
        raise NotImplementedError(f"{what} is implemented with jaxlib's CPU LAPACK kernels, which the "
                                  f"'{backend().platform}' backend cannot run. Use PURENN_PLATFORM=cpu.")
    name = f"lapack_{prefix}{routine}_ffi"
    if name not in ensure_lapack_registered():
        raise NotImplementedError(f"jaxlib has no LAPACK target {name!r} (needed by {what}).")
    return name
