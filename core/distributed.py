"""Several processes, one program: XLA's distributed runtime (docs/design.md, pmap, sharded
arrays and several processes).

Every process calls `initialize(coordinator_address, num_processes, process_id)` before it creates
any array. Process 0 also hosts the coordination service at `coordinator_address`; each process
connects to it, and its XLA client is made with the other processes in view: `core.devices()` then
lists every process's devices (`core.local_devices()` only this one's), and a `pmap` runs one
replica on every device of every process, each process feeding and receiving only its own
devices' slices. Collectives between CPU processes go over TCP (gloo); on GPU, the CUDA plugin
does them with NCCL.
"""
import atexit

from .runtime import client as _client

__all__ = ["initialize", "shutdown", "is_initialized"]


def initialize(coordinator_address, num_processes, process_id, *, initialization_timeout=60,
               hostname=None):
    """Join this process to a group of `num_processes` processes coordinated at
    `coordinator_address` ("host:port"; process 0 listens there). Must run before any array is
    created. `initialization_timeout` (seconds) bounds the wait for the other processes.

    Example (two shells): `core.distributed.initialize("127.0.0.1:12345", 2, 0)` and
    `core.distributed.initialize("127.0.0.1:12345", 2, 1)`; then `core.process_count()` is 2.
    """
    state = _client._state
    if state["distributed"] is not None:
        raise RuntimeError("core.distributed.initialize was already called in this process.")
    if not isinstance(coordinator_address, str) or ":" not in coordinator_address:
        raise ValueError(f"coordinator_address must be 'host:port', got {coordinator_address!r}.")
    if not isinstance(num_processes, int) or num_processes < 1:
        raise ValueError(f"num_processes must be a positive int, got {num_processes!r}.")
    if not isinstance(process_id, int) or not 0 <= process_id < num_processes:
        raise ValueError(f"process_id must be an int in [0, {num_processes}), got {process_id!r}.")
    if state["backend"] is not None:
        raise RuntimeError("core.distributed.initialize must be called before any array is created or any device "
                           "is queried: the XLA client of this process already exists without the other processes. "
                           "Call it first thing in the program.")
    xla = _client._xla
    timeout = int(initialization_timeout)
    service = None
    if process_id == 0:
        service = xla.get_distributed_runtime_service(coordinator_address, num_processes,
                                                      cluster_register_timeout=timeout)
    dist_client = xla.get_distributed_runtime_client(coordinator_address, process_id, init_timeout=timeout,
                                                     shutdown_on_destruction=False)
    try:
        dist_client.connect()
    except Exception as e:
        if service is not None:
            service.shutdown()
        raise RuntimeError(f"core.distributed.initialize: process {process_id} could not join the {num_processes} "
                           f"processes at {coordinator_address} within {timeout} s ({e}). Check that every process "
                           "was started with the same address and number of processes.") from None
    state["distributed"] = {"client": dist_client, "service": service, "process_id": process_id,
                            "num_processes": num_processes,
                            "hostname": hostname or coordinator_address.rsplit(":", 1)[0]}
    atexit.register(shutdown)


def is_initialized():
    """Whether `initialize` ran in this process (and `shutdown` did not since)."""
    return _client._state["distributed"] is not None


def shutdown():
    """Leave the group: disconnect from the coordination service (process 0 stops it). Runs
    automatically at exit; call it earlier to leave explicitly."""
    dist = _client._state["distributed"]
    if dist is None:
        return
    _client._state["distributed"] = None
    try:
        dist["client"].shutdown()
    finally:
        if dist["service"] is not None:
            dist["service"].shutdown()
