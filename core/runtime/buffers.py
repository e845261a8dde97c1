"""Host <-> device transfers of single-device buffers."""
import numpy as np

from .client import _xla, backend

_sharding_cache = {}


def single_device_sharding(device):
    s = _sharding_cache.get(device)
    if s is None:
        # setdefault is atomic: threads racing here all get the one object that was stored
        s = _sharding_cache.setdefault(device, _xla.SingleDeviceSharding(device))
    return s


def put(ndarray, aval, device=None):
    """Copy a host ndarray (already of `aval.dtype`) to `device`; returns a jaxlib array.

    The host buffer is copied unless it is read-only, so a later in-place change of a NumPy array
    never reaches an immutable device Array. A non-native byte order ('>f4') is converted here:
    jaxlib would copy its bytes as they are, giving other values.
    """
    if not ndarray.dtype.isnative:
        ndarray = ndarray.astype(ndarray.dtype.newbyteorder("="))
    device = device or backend().default_device
    semantics = (_xla.HostBufferSemantics.ZERO_COPY if not ndarray.flags.writeable
                 else _xla.HostBufferSemantics.IMMUTABLE_ONLY_DURING_CALL)
    return _xla.batched_device_put(aval, single_device_sharding(device), [ndarray], [device],
                                   True, False, semantics, True)


def copy(buf):
    """A new buffer on `buf`'s device holding its contents: a device-side copy (PJRT copies the
    bytes; nothing goes through the host and no program is compiled). A deleted buffer is a
    RuntimeError here: jaxlib 0.10.2 crashes the process copying one."""
    if buf.is_deleted():
        raise RuntimeError("Array has been deleted.")
    device = buf._sharding._device_assignment[0]  # as replicated.device_of: right for pmap shards too
    return _xla.batched_copy_array_to_devices_with_sharding(
        [buf], [_device_list(device)], [single_device_sharding(device)], [_xla.ArrayCopySemantics.ALWAYS_COPY])[0]


_device_lists = {}


def _device_list(device):
    dl = _device_lists.get(device)
    if dl is None:
        dl = _device_lists.setdefault(device, _xla.DeviceList((device,)))
    return dl


def to_numpy(buf, dtype=None):
    """The host value of a single-device jaxlib array, as a read-only ndarray (`dtype`, the
    array's dtype when the caller knows it, only picks the route).

    On CPU the device buffer is host memory, and the value is a zero-copy view of it through the
    Python buffer protocol, which jaxlib's arrays export there: the export waits until the buffer
    is computed and holds an external reference to it (PJRT then keeps its memory alive and
    unchanged: a donation while the view lives copies instead), and it is read-only. That route
    costs ~1.1 us over the wait; DLPack, used before, ~1.6 us (its capsule, then NumPy's protocol
    calls on a Python object). jaxlib's own reader (`_single_device_array_to_np_array_did_copy`)
    first wraps the buffer in a new jaxlib array, whose sharding it builds by trying
    `import jax._src.sharding_impls` on every call, not cached; without jax that import fails
    through the whole import machinery (~15 us of a ~20 us fetch of a fresh (8,) result;
    docs/design.md, Known deviations). It remains the route on GPU and for the dtypes the buffer
    protocol does not carry (bfloat16, float8, int4).
    """
    if (_platform[0] if _platform else _host_is_device()) and (dtype is None or dtype.kind in "biufc"):
        try:
            view = _memoryview(buf)
        except (BufferError, RuntimeError, TypeError, ValueError):
            if buf.is_deleted():
                raise RuntimeError("Array has been deleted.") from None
            # a dtype the protocol refuses (dtype unknown to the caller): jaxlib's reader below
        else:
            value = _asarray(view)
            if not view.readonly:  # jaxlib exports read-only views; make sure they stay so
                value.flags.writeable = False
            return value
    value, _ = buf._single_device_array_to_np_array_did_copy()
    return value


_memoryview = memoryview
_asarray = np.asarray


# Waits for every buffer of a list in one call (a deleted one is a RuntimeError).
block_until_ready_all = _xla.batched_block_until_ready


def copy_to_host_async(buf):
    """Start copying `buf` to the host, so that a later `to_numpy` need not wait for the transfer
    (`device_get` starts all of its leaves before reading any). Nothing to do on CPU, where device
    memory is host memory; jaxlib's call there would only build the wrapper `to_numpy` avoids."""
    if not _host_is_device():
        buf._copy_single_device_array_to_host_async()


_platform = []


def _host_is_device():
    """Whether device buffers are host memory (the CPU client): then DLPack hands them to NumPy."""
    if not _platform:
        _platform.append(backend().platform == "cpu")
    return _platform[0]
