"""Compiling StableHLO text and running it, with a bounded cache of executables."""
import collections
import itertools
import threading

import numpy as np

from .client import _xla, xc, backend
from . import compilation_cache
from .buffers import single_device_sharding

# jaxlib puts the Python references that it releases on its own threads (an execution's operands,
# once it finishes) in a queue that only `collect_garbage()` empties. core/runtime/client.py
# empties it whenever Python's cyclic GC runs, but a steady loop of calls allocates and frees the
# same objects, so the GC may never run: the queue then grew by ~70-150 bytes per execution
# (40 MB per 100k blocked eager ops, measured by RSS; tests/test_eager_fast_path.py). Every path
# that executes therefore empties it every EXECUTIONS_PER_COLLECT executions, counted here (the
# C fast paths in core/_jitfast.c keep their own count). An empty queue costs ~0.1 us to collect.
EXECUTIONS_PER_COLLECT = 1024
_executions = itertools.count(1)
collect_garbage = _xla.collect_garbage


def count_execution():
    """Call after each execution: empties jaxlib's release queue every EXECUTIONS_PER_COLLECT calls."""
    if not next(_executions) % EXECUTIONS_PER_COLLECT:
        collect_garbage()


class Executable:
    """A compiled program for one device; call it with jaxlib arrays, get jaxlib arrays back."""
    __slots__ = ("loaded", "out_avals", "handlers", "device", "text")

    def __init__(self, loaded, out_avals, device, text):
        self.loaded, self.out_avals, self.device, self.text = loaded, tuple(out_avals), device, text
        sharding = single_device_sharding(device)
        self.handlers = [_xla.array_result_handler(a, sharding, True, True) for a in out_avals]

    def __call__(self, bufs):
        outs = self.loaded.execute_sharded(bufs).consume_with_handlers(self.handlers)
        count_execution()
        return outs

    def memory_stats(self):
        """XLA's memory analysis of the compiled program (bytes of arguments, outputs, temporaries)."""
        return self.loaded.get_compiled_memory_stats()

    def cost_analysis(self):
        """XLA's cost estimates of the compiled (optimized) program: a dict with 'flops',
        'bytes accessed', per-operand 'bytes accessed<i>{}' and more, as jaxlib reports them."""
        return dict(self.loaded.cost_analysis())


def module_cost_analysis(text):
    """XLA's cost estimates of a StableHLO module (text) before optimization, without compiling it:
    the dict `Executable.cost_analysis` gives, for the program as written (what JAX's
    `Lowered.cost_analysis` reports)."""
    computation = _xla.mlir.mlir_module_to_xla_computation(text, use_tuple_args=False, return_tuple=False)
    return dict(_xla.hlo_module_cost_analysis(backend().client, computation.get_hlo_module()))


def compile_module(text, out_avals, device=None):
    """Compile a StableHLO module (text) for `device` and return an `Executable`."""
    b = backend()
    device = device or b.default_device
    options = xc.CompileOptions()
    options.device_assignment = xc.DeviceAssignment.create(np.array([[device.id]]))
    loaded = compilation_cache.compile_and_load(b.client, text, _xla.DeviceList((device,)), (device,), options,
                                                "single-device")
    return Executable(loaded, out_avals, device, text)


class ExecutableCache:
    """An LRU cache of executables, bounded by entry count, with hit and miss counters.

    Safe to use from several threads. Changes of size (`put`, `clear`) hold the lock; a lookup,
    on every eager call, does not (a lock there cost ~300 ns of a ~7 us call here): each
    OrderedDict operation is atomic, and an entry evicted by another thread between the lookup and
    its `move_to_end` is simply returned (still valid). The counters may miss an increment when
    threads race. Two threads that miss the same key both compile it; the second `put` wins, and
    both results are valid."""

    def __init__(self, maxsize=4096):
        self.maxsize = maxsize
        self._entries = collections.OrderedDict()
        self._lock = threading.Lock()
        self.hits = self.misses = 0

    def get(self, key):
        entry = self._entries.get(key)
        if entry is None:
            self.misses += 1
        else:
            self.hits += 1
            try:
                self._entries.move_to_end(key)
            except KeyError:  # evicted by another thread since the lookup
                pass
        return entry

    def put(self, key, value):
        with self._lock:
            self._entries[key] = value
            while len(self._entries) > self.maxsize:
                self._entries.popitem(last=False)

    def clear(self):
        with self._lock:
            self._entries.clear()
            self.hits = self.misses = 0

    def __len__(self):
        return len(self._entries)

    def info(self):
        return {"hits": self.hits, "misses": self.misses, "size": len(self._entries), "maxsize": self.maxsize}


_caches = {"persistent": compilation_cache.info}


def register_cache(name, cache):
    _caches[name] = cache
    return cache


def cache_info():
    """Hit/miss counters and sizes of every executable cache, by name."""
    return {name: c.info() for name, c in _caches.items()}


def clear_executable_cache():
    for c in _caches.values():
        c.clear()


_mlir_state = {"context": None}
_mlir_lock = threading.Lock()


def _mlir_context():
    """An MLIR context with the dialects our modules use (only needed to pass host callbacks);
    created once, under a lock (double-checked)."""
    ctx = _mlir_state["context"]
    if ctx is not None:
        return ctx
    with _mlir_lock:
        ctx = _mlir_state["context"]
        if ctx is not None:
            return ctx
        from jaxlib.mlir import ir
        from jaxlib.mlir._mlir_libs import _jax_mlir_ext
        from jaxlib.mlir.dialects import chlo, stablehlo
        registry = ir.DialectRegistry()
        _jax_mlir_ext.register_dialects(registry)
        ctx = ir.Context()
        ctx.append_dialect_registry(registry)
        stablehlo.register_dialect(ctx)
        chlo.register_dialect(ctx)
        ctx.load_all_available_dialects()
        _mlir_state["context"] = ctx
    return ctx


def compile_module_with_callbacks(text, out_avals, device, host_callbacks):
    """Like `compile_module`, for a module whose `stablehlo.custom_call`s to the CPU target
    "xla_ffi_python_cpu_callback" name Python callables by `backend_config = {index = i : ui64}`.

    jaxlib accepts the callables only with a parsed MLIR module (its text overload takes none), so
    the text is parsed with jaxlib's MLIR bindings first. Each callable gets the operands as
    read-only NumPy arrays and must return a tuple of the results (an empty tuple for none).
    """
    from jaxlib.mlir import ir
    b = backend()
    device = device or b.default_device
    options = xc.CompileOptions()
    options.device_assignment = xc.DeviceAssignment.create(np.array([[device.id]]))
    with _mlir_context():
        module = ir.Module.parse(text)
        loaded = b.client.compile_and_load(module, _xla.DeviceList((device,)), options, list(host_callbacks))
    exe = Executable(loaded, out_avals, device, text)
    return exe
