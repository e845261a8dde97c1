"""Replicated programs: one program run on N devices at once (what `pmap` compiles to).

A replicated module (`mhlo.num_replicas = N`) runs one copy per device; replica i runs on the i-th
device of the assignment and collectives (`stablehlo.all_reduce`, ...) address replicas by number.
jaxlib executes it on arrays that span the devices. We build those arrays from one single-device
buffer per local device under a "replicated" sharding: jaxlib only needs a sharding that names
the devices, and the program itself decides what each buffer means (here: device i's slice of the
mapped axis). Across processes the same program spans every process's devices; each process holds
and passes only the buffers of its own (local) devices.
"""
import numpy as np

from .client import _xla, xc, backend
from . import compilation_cache
from .buffers import put
from .executable import count_execution

__all__ = ["compile_replicated", "ReplicatedExecutable", "assemble", "shards_of", "put_shards", "device_of"]

_sharding_cache = {}


def spanning_sharding(devices):
    """The sharding jaxlib sees for an array with one buffer per device of `devices`."""
    devices = tuple(devices)
    s = _sharding_cache.get(devices)
    if s is None:  # setdefault is atomic: racing threads all get the one object that was stored
        s = _sharding_cache.setdefault(devices, _xla.GSPMDSharding(_xla.DeviceList(devices),
                                                                   xc.HloSharding.replicate()))
    return s


class ReplicatedExecutable:
    """A compiled replicated program. Call it with one spanning array per input (see `assemble`);
    it returns one spanning array per output, holding this process's per-device results."""
    __slots__ = ("loaded", "out_avals", "handlers", "devices", "local_devices", "text")

    def __init__(self, loaded, out_avals, devices, text):
        self.loaded, self.out_avals, self.devices, self.text = loaded, tuple(out_avals), tuple(devices), text
        pid = backend().client.process_index()
        self.local_devices = tuple(d for d in devices if d.process_index == pid)
        sharding = spanning_sharding(devices)
        self.handlers = [_xla.array_result_handler(a, sharding, True, True) for a in out_avals]

    def __call__(self, arrays):
        outs = self.loaded.execute_sharded(arrays).consume_with_handlers(self.handlers)
        count_execution()
        return outs

    def memory_stats(self):
        return self.loaded.get_compiled_memory_stats()


def compile_replicated(text, out_avals, devices):
    """Compile a replicated StableHLO module for `devices` (replica i on `devices[i]`; every
    process of a multi-process run passes the same global list). `out_avals` are per device."""
    b = backend()
    options = xc.CompileOptions()
    options.num_replicas, options.num_partitions = len(devices), 1
    options.device_assignment = xc.DeviceAssignment.create(np.array([[d.id] for d in devices]))
    loaded = compilation_cache.compile_and_load(b.client, text, _xla.DeviceList(tuple(devices)), tuple(devices),
                                                options, f"replicas={len(devices)}")
    return ReplicatedExecutable(loaded, out_avals, devices, text)


def assemble(aval, devices, bufs):
    """One spanning array over `devices` from single-device buffers `bufs` of per-device `aval`
    (one per local device of `devices`, in order)."""
    return _xla.ArrayImpl(aval, spanning_sharding(devices), list(bufs), True, True)


def shards_of(array):
    """The single-device buffers of a spanning array, in device order."""
    return array._arrays


def device_of(buf):
    """The device of a single-device buffer (a shard of a spanning array over one device keeps
    that array's sharding, so read the device assignment rather than `_device`)."""
    return buf._sharding._device_assignment[0]


def put_shards(values, aval, devices, local_devices):
    """Copy host `values` (one ndarray per local device) to those devices, as a spanning array."""
    return assemble(aval, devices, [put(v, aval, d) for v, d in zip(values, local_devices, strict=True)])
