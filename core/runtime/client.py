"""The XLA client: created once, on first use, with the devices of this process.

CPU is always there; `PURENN_NUM_CPU_DEVICES=N` gives N CPU devices in one process (pmap on CPU).
If a CUDA PJRT plugin package is installed (the `jax_cuda12_plugin`/`jax_cuda13_plugin` wheels),
its GPUs become the default backend; `PURENN_PLATFORM=cpu` (or JAX's `JAX_PLATFORMS=cpu`, or
`config.update("platforms", "cpu")` before the first computation) forces the CPU. JAX's
`XLA_FLAGS=--xla_force_host_platform_device_count=N` works as `PURENN_NUM_CPU_DEVICES=N`.
"""
import gc
import importlib.util
import os
import sys
import threading

# XLA logs client creation at INFO level to stderr; keep warnings and errors (as jax does). Users
# who want the INFO lines set TF_CPP_MIN_LOG_LEVEL=0 themselves.
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")



class _JaxAbsentFinder:
    """jaxlib tries `import jax` on some paths (its host read of every fresh buffer, used on GPU
    and for bfloat16/float8/int4; CPU reads go through DLPack instead: docs/design.md, Known
    deviations).
    When jax is not installed, answer at once instead of searching sys.path each time. A finder
    rather than `sys.modules["jax"] = None`, because libraries such as scipy take any 'jax' entry
    in sys.modules to mean that jax is importable."""

    def find_spec(self, name, path=None, target=None):
        if name == "jax" or name.startswith("jax."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


if "jax" not in sys.modules and importlib.util.find_spec("jax") is None:
    if not any(isinstance(f, _JaxAbsentFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _JaxAbsentFinder())

import jaxlib  # noqa: E402
from jaxlib import xla_client as xc  # noqa: E402
import jaxlib._jax as _xla  # noqa: E402


def _collect_xla_garbage(phase, info):
    """jaxlib drops the Python references that it releases without the GIL (on its own threads)
    into a queue, emptied only by `collect_garbage()`. jax empties it on every run of Python's
    cyclic GC (jax issue 14882), and so do we: without it, each execution left ~72 bytes behind,
    ~70 MB per million jitted calls (tests/test_runtime.py)."""
    _xla.collect_garbage()


gc.callbacks.append(_collect_xla_garbage)

jaxlib_version = getattr(jaxlib, "__version__", None) or getattr(getattr(jaxlib, "version", None), "__version__", "unknown")

_state = {"backend": None, "distributed": None}
# Held while the client is created: threads that need it at once must build it once (two clients in
# one process left buffers of one on the "same" device as the other's executables, and every later
# execution failed). Double-checked: a started process reads `_state` without taking the lock.
_backend_lock = threading.Lock()


def _patch_sharding_classes():
    """jaxlib's C++ reads attributes that `jax` normally patches onto its sharding classes."""
    if getattr(_xla.SingleDeviceSharding, "_purenn_patched", False):
        return
    for cls in (_xla.SingleDeviceSharding, _xla.GSPMDSharding):
        cls.memory_kind = property(lambda s: s._memory_kind)
        cls._to_xla_hlo_sharding = lambda s, ndim: xc.HloSharding.replicate()
        cls.is_fully_replicated = property(lambda s: True)
        cls.is_fully_addressable = property(lambda s: True)
    _xla.SingleDeviceSharding._device_assignment = property(lambda s: (s._device,))
    _xla.SingleDeviceSharding.device_set = property(lambda s: {s._device})
    _xla.SingleDeviceSharding.num_devices = property(lambda s: 1)
    _xla.GSPMDSharding._device_assignment = property(lambda s: tuple(s._devices))
    _xla.SingleDeviceSharding._purenn_patched = True


def _num_cpu_devices():
    """How many CPU devices: `PURENN_NUM_CPU_DEVICES`, else JAX's
    `XLA_FLAGS=--xla_force_host_platform_device_count=N` (ours wins when both are set), else 1."""
    var, raw = "PURENN_NUM_CPU_DEVICES", os.environ.get("PURENN_NUM_CPU_DEVICES")
    if raw is None:
        var, raw = "XLA_FLAGS --xla_force_host_platform_device_count", "1"
        for flag in os.environ.get("XLA_FLAGS", "").split():
            if flag.startswith("--xla_force_host_platform_device_count="):
                raw = flag.partition("=")[2]  # the last one wins, as in XLA's own flag parsing
    try:
        n = int(raw)
    except ValueError:
        raise ValueError(f"{var} must be a positive integer, got {raw!r}") from None
    if n < 1:
        raise ValueError(f"{var} must be a positive integer, got {n}")
    return n


def _cpu_only():
    """True when the `platforms` option (`JAX_PLATFORMS`, `PURENN_PLATFORM`) names no GPU platform."""
    from ..config import config
    platforms = config.platforms
    if not platforms:
        return False
    return not any(p.strip() in ("cuda", "gpu") for p in platforms.lower().split(","))


def _load_cuda_plugin():
    """Load the CUDA PJRT plugin if its wheel is installed; True when it is loaded."""
    if _cpu_only():
        return False
    for name in ("jax_cuda13_plugin", "jax_cuda12_plugin"):
        spec = importlib.util.find_spec(name)
        if spec is None or not spec.submodule_search_locations:
            continue
        lib = os.path.join(list(spec.submodule_search_locations)[0], "xla_cuda_plugin.so")
        if not os.path.exists(lib):
            continue
        try:
            if not xc.pjrt_plugin_loaded("cuda"):
                xc.load_pjrt_plugin_dynamically("cuda", lib)
            return True
        except Exception as e:  # a broken GPU setup must not stop CPU work
            print(f"purenn: CUDA plugin {name} found but failed to load ({e}); using CPU", file=sys.stderr)
    return False


def _make_client():
    """The client: on GPU if a CUDA plugin is installed, else on CPU. After
    `core.distributed.initialize` it joins the other processes: on CPU with gloo collectives over
    TCP; on GPU the plugin takes the distributed client and does NCCL itself (on paper until a GPU
    machine runs it)."""
    dist = _state["distributed"]
    if _load_cuda_plugin():
        try:
            if dist is None:
                return xc.make_c_api_client("cuda")
            return xc.make_c_api_client("cuda", {"node_id": dist["process_id"], "num_nodes": dist["num_processes"]},
                                        dist["client"])
        except Exception as e:
            print(f"purenn: CUDA plugin found but failed to start ({e}); using CPU", file=sys.stderr)
    from . import host_memory
    host_memory.tune()  # CPU device buffers are malloc'd host memory
    if dist is None:
        return xc.make_cpu_client(num_devices=_num_cpu_devices())
    collectives = _xla.make_gloo_tcp_collectives(dist["client"], hostname=dist["hostname"])
    return xc.make_cpu_client(distributed_client=dist["client"], node_id=dist["process_id"],
                              num_nodes=dist["num_processes"], collectives=collectives,
                              num_devices=_num_cpu_devices())


class Backend:
    """One XLA client and its devices."""

    def __init__(self):
        _patch_sharding_classes()
        self.client = _make_client()
        self.platform = self.client.platform
        self.devices = tuple(self.client.devices())
        self.local_devices = tuple(self.client.local_devices())
        self.default_device = self.local_devices[0]


def backend():
    """The process's one `Backend`, created on first use (once, whatever the number of threads)."""
    b = _state["backend"]
    if b is None:
        with _backend_lock:
            b = _state["backend"]
            if b is None:
                b = _state["backend"] = Backend()
    return b


def default_backend():
    """The platform name of the default backend: 'cpu' or 'gpu'."""
    p = backend().platform
    return "gpu" if p in ("cuda", "rocm", "gpu") else p


def devices(backend_name=None):
    """All devices of the backend, across processes (like `jax.devices()`)."""
    return list(backend().devices)


def local_devices(process_index=None, backend_name=None):
    """The devices this process can address."""
    return list(backend().local_devices)


def device_count(backend_name=None):
    return len(backend().devices)


def local_device_count(backend_name=None):
    return len(backend().local_devices)


def process_index():
    return backend().client.process_index()


def process_count():
    return len({d.process_index for d in backend().devices})
