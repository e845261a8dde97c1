"""pmap across two OS processes (issue 6): XLA's distributed runtime on 127.0.0.1 with gloo
collectives. Both processes must agree with each other and with a single-process computation."""
import json
import os
import socket
import subprocess
import sys

import numpy as np
import pytest

import multiprocess_step

HERE = os.path.dirname(os.path.abspath(__file__))
TIMEOUT_S = 90


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _run_group(n_processes, devices_per_process):
    address = f"127.0.0.1:{_free_port()}"
    env = {**os.environ, "PURENN_NUM_CPU_DEVICES": str(devices_per_process), "PURENN_PLATFORM": "cpu"}
    procs = [subprocess.Popen([sys.executable, os.path.join(HERE, "multiprocess_worker.py"), address,
                               str(n_processes), str(pid)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, env=env)
             for pid in range(n_processes)]
    results = []
    try:
        for p in procs:
            out, err = p.communicate(timeout=TIMEOUT_S)
            assert p.returncode == 0, f"worker failed ({p.returncode}):\n{err[-3000:]}"
            results.append(json.loads(out.strip().splitlines()[-1]))
    finally:
        for p in procs:  # never leave a worker behind, whatever happened
            if p.poll() is None:
                p.kill()
                p.wait()
    return results


@pytest.mark.parametrize("devices_per_process", [1, 2])
def test_two_processes_psum_and_data_parallel_step_agree_with_one_process(devices_per_process):
    results = _run_group(2, devices_per_process)
    n_devices = 2 * devices_per_process
    xs = [np.arange(3 * devices_per_process, dtype=np.float32).reshape(devices_per_process, 3) + 10 * pid
          for pid in range(2)]
    expected_sum = np.concatenate(xs).sum(0)
    expected_params = [np.asarray(p) for p in multiprocess_step.single_step_result(n_devices)]
    for pid, r in enumerate(results):
        assert (r["process_index"], r["process_count"]) == (pid, 2)
        assert (r["devices"], r["local_devices"]) == (n_devices, devices_per_process)
        np.testing.assert_allclose(np.asarray(r["psum"]), np.broadcast_to(expected_sum, (devices_per_process, 3)))
        assert r["axis_index"] == list(range(pid * devices_per_process, (pid + 1) * devices_per_process))
        for got, want in zip(r["params"], expected_params, strict=True):
            np.testing.assert_allclose(np.asarray(got, np.float32), want, rtol=2e-5, atol=2e-6)
    assert results[0]["params"] == results[1]["params"]  # bit-identical replicas


def test_initialize_checks_its_arguments_and_must_come_first():
    import core
    import core.distributed
    with pytest.raises(ValueError, match=r"process_id must be an int in \[0, 2\), got 5"):
        core.distributed.initialize("127.0.0.1:1", 2, 5)
    with pytest.raises(ValueError, match="coordinator_address must be 'host:port'"):
        core.distributed.initialize("localhost", 2, 0)
    core.numpy.zeros(1)  # the client of this process exists now
    with pytest.raises(RuntimeError, match="must be called before any array is created"):
        core.distributed.initialize("127.0.0.1:1", 2, 0)
    assert not core.distributed.is_initialized()
