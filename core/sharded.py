"""Arrays split across devices, and the helpers that place values on several devices.

`pmap` returns a `ShardedArray`: its leading axis runs over devices, one slice (shard) per device,
each kept where it was computed. Passed to the next pmap over the same devices it is used in place
(no copy, no host round trip). Everything else an Array can do works too: indexing one shard
(`x[0]`) returns that shard; any other use (arithmetic, `np.asarray`, a jitted function) sees the
whole value, gathered once onto the default device.
"""
import numpy as np

from . import dtypes
from .array import Array
from .avals import ShapedArray
from .runtime import client as _client
from .runtime import buffers as _buffers
from .runtime import replicated as _replicated
from .tree_util import physical_flatten, physical_map, tree_map, tree_unflatten

__all__ = ["ShardedArray", "device_put_sharded", "device_put_replicated", "replicate", "unreplicate"]


class ShardedArray(Array):
    """An Array whose leading axis is split over devices: slice i lives on `shard_devices[i]`.

    Example:
        >>> x = core.device_put_sharded([jnp.zeros(3), jnp.ones(3)], core.local_devices()[:2])
        >>> x.shape, x[1]
        ((2, 3), Array([1., 1., 1.], dtype=float32))
    """
    __slots__ = ("_span", "_span_devices", "_shard_aval", "_gathered")

    def __init__(self, span, shard_aval, span_devices, n_local):
        # `span` is a jaxlib array over `span_devices` (all processes' devices, for a multi-process
        # pmap) holding this process's `n_local` shards, which the leading axis counts. (Listing a
        # span's shards is not free: jaxlib builds an array object per shard on first access.)
        self._span, self._shard_aval, self._span_devices = span, shard_aval, tuple(span_devices)
        n = n_local
        self.aval = ShapedArray((n, *shard_aval.shape), shard_aval.dtype, shard_aval.weak_type)
        self._npy = None
        self._device = None
        self._fkey = None  # never on jit's fast path: that path takes single-device buffers
        self._gathered = None

    @property
    def _buf(self):
        """The whole value as one buffer on the default device (what eager ops and jit read)."""
        g = self._gathered
        if g is None:
            g = self._gathered = _buffers.put(self._value(), self.aval)
        return g

    @property
    def shard_devices(self):
        """The devices holding this process's shards, in order."""
        return [_replicated.device_of(s) for s in _replicated.shards_of(self._span)]

    @property
    def addressable_shards(self):
        """This process's shards, each an Array on its device."""
        default = _client.backend().default_device
        out = []
        for buf, dev in zip(_replicated.shards_of(self._span), self.shard_devices):
            out.append(Array(buf, self._shard_aval, None if dev == default else dev))
        return out

    def devices(self):
        return set(self.shard_devices)

    def _value(self):
        v = self._npy
        if v is None:
            self._raise_if_deleted()
            parts = [_buffers.to_numpy(s, self.aval.dtype) for s in _replicated.shards_of(self._span)]
            v = np.stack(parts) if parts else np.zeros(self.aval.shape, self.aval.dtype)
            v.flags.writeable = False
            self._npy = v
        return v

    def __getitem__(self, idx):
        if isinstance(idx, (int, np.integer)) and not isinstance(idx, bool):
            n = self.aval.shape[0]
            if not -n <= idx < n:
                raise IndexError(f"index {idx} is out of bounds for axis 0 with size {n} (one entry per device)")
            return self.addressable_shards[int(idx) % n]
        return Array.__getitem__(self, idx)

    def _raise_if_deleted(self):
        if self._span.is_deleted():
            raise RuntimeError(f"Array has been deleted with shape={self.aval.str_short()}. (It was donated "
                               "to a pmapped function or deleted explicitly; use the function's output instead.)")

    def block_until_ready(self):
        try:
            self._span.block_until_ready()
        except RuntimeError:
            self._raise_if_deleted()
            raise
        return self

    def is_deleted(self):
        return self._span.is_deleted()

    def delete(self):
        self._span.delete()

    def copy_to_host_async(self):
        for s in _replicated.shards_of(self._span):
            _buffers.copy_to_host_async(s)


def _host_value(x, what):
    if isinstance(x, Array):
        return x._value()
    value = np.asarray(x)
    if value.dtype not in dtypes._SUPPORTED_SET and value.dtype.kind not in "biufc":
        raise TypeError(f"{what}: a value of type {type(x).__name__} (dtype {value.dtype}) cannot be put on devices; "
                        "pass arrays, scalars or pytrees of them.")
    return value.astype(dtypes.canonicalize_dtype(value.dtype), copy=False)


def _weak(x):
    return isinstance(x, (int, float, complex)) and not isinstance(x, bool) or \
        (isinstance(x, Array) and x.aval.weak_type)


def _sharded_from_values(values, weak, span_devices, local):
    aval = ShapedArray(values[0].shape, values[0].dtype, weak)
    return ShardedArray(_replicated.put_shards(values, aval, span_devices, local), aval, span_devices, len(local))


def _check_devices(devices, what):
    devices = list(devices)
    if not devices:
        raise ValueError(f"{what} needs at least one device, got an empty list.")
    pid = _client.process_index()
    remote = [d for d in devices if d.process_index != pid]
    if remote:
        raise ValueError(f"{what}: devices {remote} belong to another process; each process places values on its "
                         "own local_devices().")
    return devices


def device_put_sharded(shards, devices):
    """Stack `shards` (a list of pytrees with equal structure, shapes and dtypes, one per device)
    along a new leading axis whose slice i lives on `devices[i]`: the input a pmap over those
    devices uses without copying.

    Example: `device_put_sharded([np.zeros(3), np.ones(3)], core.local_devices()[:2])` has shape (2, 3).
    """
    devices = _check_devices(devices, "device_put_sharded")
    if not isinstance(shards, (list, tuple)) or len(shards) != len(devices):
        n = len(shards) if isinstance(shards, (list, tuple)) else type(shards).__name__
        raise ValueError(f"device_put_sharded takes a list with one shard per device: got {n} shards for "
                         f"{len(devices)} devices.")
    flat = [physical_flatten(s) for s in shards]  # a typed key: its data (core/tree_util.py)
    tree = flat[0][1]
    for i, (_, t) in enumerate(flat):
        if t != tree:
            raise ValueError(f"device_put_sharded: shard {i} has tree structure {t}, but shard 0 has {tree}; "
                             "every shard must have the same structure.")
    leaves = []
    for j in range(tree.num_leaves):
        values = [_host_value(f[0][j], "device_put_sharded") for f in flat]
        for i, v in enumerate(values):
            if v.shape != values[0].shape or v.dtype != values[0].dtype:
                raise ValueError(f"device_put_sharded: leaf {j} of shard {i} is {v.dtype}{list(v.shape)}, but in "
                                 f"shard 0 it is {values[0].dtype}{list(values[0].shape)}; shards must match.")
        leaves.append(_sharded_from_values(values, _weak(flat[0][0][j]), devices, devices))
    return tree_unflatten(tree, leaves)


def device_put_replicated(x, devices):
    """A copy of pytree `x` on each of `devices`, stacked along a new leading axis (slice i on
    `devices[i]`).

    Example: `device_put_replicated(jnp.ones(3), core.local_devices())` has shape (n_devices, 3).
    """
    devices = _check_devices(devices, "device_put_replicated")

    def put_one(leaf):
        v = _host_value(leaf, "device_put_replicated")
        return _sharded_from_values([v] * len(devices), _weak(leaf), devices, devices)
    return physical_map(put_one, x)


def replicate(tree, devices=None):
    """`tree` copied to every local device (or to `devices`), each leaf with a new leading device
    axis: how parameters and optimizer state are passed to a pmapped training step.

    Example: `params = replicate(params)`; `unreplicate(params)` undoes it.
    """
    return device_put_replicated(tree, _client.local_devices() if devices is None else devices)


def unreplicate(tree):
    """The first device's copy of every leaf of a replicated `tree` (the inverse of `replicate`).

    Example: `unreplicate(replicate({"w": jnp.ones(2)}))["w"]` is `Array([1., 1.])`.
    """
    def first(x):
        if not hasattr(x, "shape") or len(x.shape) == 0:
            raise ValueError(f"unreplicate expects arrays with a leading device axis, got a value of shape "
                             f"{getattr(x, 'shape', type(x).__name__)}; was this tree replicated?")
        return x[0]
    return tree_map(first, tree)
