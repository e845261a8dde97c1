"""One of the processes of tests/test_multiprocess.py (not a test module itself).

    python tests/multiprocess_worker.py ADDRESS NUM_PROCESSES PROCESS_ID

Joins the group, runs a psum over every device of every process and one data-parallel training
step (gradients averaged with pmean), and prints the results as one JSON line.
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402

import core  # noqa: E402
import core.distributed  # noqa: E402
from core import lax  # noqa: E402

import multiprocess_step  # noqa: E402  (the model and step, shared with the test)


def main():
    address, n, pid = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    core.distributed.initialize(address, n, pid, initialization_timeout=30)
    n_local = core.local_device_count()
    x = (np.arange(3 * n_local, dtype=np.float32).reshape(n_local, 3) + 10 * pid)
    total = core.pmap(lambda v: lax.psum(v, "i"), axis_name="i")(x)
    index = core.pmap(lambda v: lax.axis_index("i"), axis_name="i")(x)
    params = multiprocess_step.parallel_step_result(pid, n * n_local, n_local)
    print(json.dumps({"process_index": core.process_index(), "process_count": core.process_count(),
                      "devices": len(core.devices()), "local_devices": n_local,
                      "psum": np.asarray(total).tolist(), "axis_index": np.asarray(index).tolist(),
                      "params": [np.asarray(p).tolist() for p in params]}), flush=True)
    core.distributed.shutdown()


if __name__ == "__main__":
    main()
