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

`release_free_memory()` (run by `core.clear_caches()`) gives the free memory of all arenas back to
the kernel, so that dropping compiled executables shrinks the resident set (docs/reliability.md F66).
"""
import ctypes
import ctypes.util
import os
import threading

_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
MMAP_THRESHOLD = 32 << 20
TRIM_THRESHOLD = 64 << 20

_state = {"applied": None}
_lock = threading.Lock()  # both lazily set entries of `_state` are built once, under it (double-checked)


def _user_chose_settings():
    return "glibc.malloc." in os.environ.get("GLIBC_TUNABLES", "") or any(k.startswith("MALLOC_") for k in os.environ)


def tune():
    """Apply the settings once per process; returns whether they are in effect."""
    if _state["applied"] is not None:
        return _state["applied"]
    libc = _glibc()
    with _lock:
        if _state["applied"] is None:
            applied = False
            if os.environ.get("PURENN_MALLOC_TUNING", "1") != "0" and not _user_chose_settings() and libc is not None:
                applied = bool(libc.mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(
                    libc.mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD))
            _state["applied"] = applied
    return _state["applied"]


def release_free_memory():
    """Hand the free memory of every malloc arena back to the kernel (glibc's `malloc_trim`);
    `core.clear_caches()` calls it. Freed executables otherwise stay in the process's resident
    set: 500 compiles of new shapes, then `clear_caches()`, left +106 MB resident, and +9 MB with
    the trim (docs/reliability.md F66). Returns whether it ran (glibc only)."""
    libc = _glibc()
    if libc is None:
        return False
    libc.malloc_trim(0)
    return True


def _glibc():
    lib = _state.get("libc", False)
    if lib is not False:
        return lib
    with _lock:
        lib = _state.get("libc", False)
        if lib is False:
            try:
                lib = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
                lib.gnu_get_libc_version  # only glibc has it (and mallopt/malloc_trim with these meanings)
                lib.malloc_trim.argtypes, lib.malloc_trim.restype = (ctypes.c_size_t,), ctypes.c_int
                lib.mallopt.argtypes, lib.mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
            except (OSError, AttributeError):
                lib = None
            _state["libc"] = lib
    return lib


def tuning_applied():
    """True when `tune()` has set the malloc thresholds in this process."""
    return bool(_state["applied"])
