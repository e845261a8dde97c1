"""glibc malloc settings for the CPU backend, whose device buffers are plain host memory.

XLA's CPU runtime allocates every output and temporary buffer of a program with malloc and frees
them when the last reference goes. A training step therefore frees and re-allocates megabytes per
call. glibc's defaults return the free top of a heap to the kernel once it exceeds a threshold that
adapts to the sizes seen so far (`M_TRIM_THRESHOLD`, at most 64 MiB), and whether it has adapted
depends on the history of the process. When it has not, the next step takes a page fault for every
4 KiB page it writes: measured on the 784-512-512-10 Adam step, ~500 faults per step and
10-25 % of its time (bench/RESULTS.md).

`tune()` pins the two adaptive thresholds where glibc's own adaptation would leave them at its
ceiling (mmap above 32 MiB, trim above 64 MiB), so the process no longer depends on its history.
The cost is at most 64 MiB of freed memory kept per malloc arena. It does nothing when the C
library is not glibc, when the user already chose malloc settings (`MALLOC_*_` or
`GLIBC_TUNABLES` in the environment), or when `PURENN_MALLOC_TUNING=0`.
"""
import ctypes
import ctypes.util
import os

_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
MMAP_THRESHOLD = 32 << 20
TRIM_THRESHOLD = 64 << 20

_state = {"applied": None}


def _user_chose_settings():
    return "glibc.malloc." in os.environ.get("GLIBC_TUNABLES", "") or any(k.startswith("MALLOC_") for k in os.environ)


def tune():
    """Apply the settings once per process; returns whether they are in effect."""
    if _state["applied"] is not None:
        return _state["applied"]
    applied = False
    if os.environ.get("PURENN_MALLOC_TUNING", "1") != "0" and not _user_chose_settings():
        try:
            libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
            gnu_libc_version = libc.gnu_get_libc_version  # only glibc has it (and mallopt's meaning)
            mallopt = libc.mallopt
        except (OSError, AttributeError):
            gnu_libc_version = mallopt = None
        if gnu_libc_version is not None:
            mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
            applied = bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(
                mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD))
    _state["applied"] = applied
    return applied


def tuning_applied():
    """True when `tune()` has set the malloc thresholds in this process."""
    return bool(_state["applied"])
