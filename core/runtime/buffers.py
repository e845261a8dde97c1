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


def to_numpy(buf):
    """The host value of a single-device jaxlib array, as a read-only ndarray."""
    value, _ = buf._single_device_array_to_np_array_did_copy()
    return value
