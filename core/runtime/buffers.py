"""Host <-> device transfers of single-device buffers."""

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


def to_numpy(buf):
    """The host value of a single-device jaxlib array, as a read-only ndarray."""
    value, _ = buf._single_device_array_to_np_array_did_copy()
    return value
