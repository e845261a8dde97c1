"""The only package that touches jaxlib: client and devices, buffers, compilation and execution.

jaxlib's Python API is semi-private, so everything the rest of `core` needs from it goes through
the small surface defined here (see docs/design.md, "The jaxlib adapter").
"""
from .client import (backend, default_backend, devices, local_devices, device_count,
                     local_device_count, process_index, process_count, jaxlib_version)
from .buffers import put, to_numpy, single_device_sharding
from .executable import compile_module, Executable, cache_info, clear_executable_cache, ExecutableCache
