"""The persistent compilation cache: compiled programs kept on disk, shared across processes.

Off until `config.compilation_cache_dir` (or `PURENN_COMPILATION_CACHE_DIR`) names a directory.
Then every compile first looks for an entry keyed by a SHA-256 of everything the compiled code
depends on (the StableHLO text, the jaxlib version, the platform and its version, on CPU the host
CPU's model and instruction-set flags, `XLA_FLAGS`, the devices' kind and assignment, the replica
count); a hit deserializes the executable instead of compiling.

A program whose compile took less than `config.persistent_cache_min_compile_time_secs` is not
written. The default is 0, unlike JAX's 1 s: loading even a small eager program (~1 ms) is much
faster than compiling it (~25 ms), and building the bench's convnet with its initialisation took
8.4 s cold and 1.15 s from the cache (175 entries, 2 MB). The directory is bounded by
`config.compilation_cache_max_size` (default 1 GiB; -1: no limit): past it, the least recently
used entries are deleted down to 80 % of the limit (a hit refreshes its entry's modification
time). Deleting the directory, or any entry, at any time is safe. Programs with host callbacks are
never cached (the callables cannot be serialized).

An entry is one file: a magic line, the SHA-256 of the payload, the payload (jaxlib's serialized
executable). It is written to a temporary file in the same directory and renamed into place, so a
crash or a concurrent writer never leaves a partial entry under an entry's name. A file that is
truncated or corrupted, or that this jaxlib cannot load, is reported once (RuntimeWarning with the
path), removed, and the program is compiled and written again. A directory that cannot be created
or written is reported once and the cache stays off for the process; compiling never fails
because of the cache.

Deserializing an executable runs machine code from the file: point the cache only at a directory
that no one else can write. New directories are created with mode 0700 and entries with 0600.
"""
import ctypes
import hashlib
import os
import platform
import tempfile
import threading
import time
import warnings

from ..config import config
from .client import jaxlib_version

MAGIC = b"purenn-xla-executable-v1\n"
_DIGEST_BYTES = 32

_stats = {"hits": 0, "misses": 0, "writes": 0, "evictions": 0, "errors": 0}
_reported = set()  # (kind, path) pairs already warned about: one warning each per process
_unusable = set()  # directories that could not be created or written: off for this process
_sizes = {}  # directory -> this process's running estimate of its entries' total size (bytes)
# Guards the counters, the sets and the size bookkeeping above (compiles run in any thread); the
# compile itself and the entry's file I/O run outside it.
_lock = threading.RLock()


def _count(name):
    with _lock:
        _stats[name] += 1


def _warn_once(kind, path, message):
    with _lock:
        if (kind, path) in _reported:
            return
        _reported.add((kind, path))
    warnings.warn(message, RuntimeWarning, stacklevel=4)


_host = {}


def _host_cpu_signature():
    """The host CPU's model and instruction-set flags: XLA CPU compiles for the features of the
    machine it runs on, so an entry written on one CPU must not be loaded on another (a directory
    shared over a network file system, say) where it could hit an illegal instruction."""
    sig = _host.get("cpu")
    if sig is not None:
        return sig
    with _lock:
        sig = _host.get("cpu")
        if sig is not None:
            return sig
        parts = [platform.machine(), platform.processor()]
        try:
            with open("/proc/cpuinfo") as f:
                seen = set()
                for line in f:
                    name = line.split(":", 1)[0].strip()
                    if name in ("model name", "flags", "Features", "CPU implementer", "CPU part") and name not in seen:
                        seen.add(name)
                        parts.append(line.strip())
        except OSError:
            pass
        sig = _host["cpu"] = hashlib.sha256("\n".join(parts).encode()).hexdigest()
    return sig


def _key(text, client, devices, options_key):
    h = hashlib.sha256()
    host = _host_cpu_signature() if client.platform == "cpu" else ""
    for part in (jaxlib_version, client.platform, client.platform_version, host, os.environ.get("XLA_FLAGS", ""),
                 ",".join(f"{d.device_kind}:{d.id}" for d in devices), options_key):
        h.update(str(part).encode())
        h.update(b"\0")
    h.update(text.encode() if isinstance(text, str) else text)
    return h.hexdigest()


def _read(path):
    """The payload of the entry at `path`, None when there is none; raises ValueError if corrupt."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        return None
    header = len(MAGIC) + _DIGEST_BYTES
    if len(data) < header or not data.startswith(MAGIC):
        raise ValueError("not a purenn cache entry (bad header or truncated)")
    digest, payload = data[len(MAGIC):header], data[header:]
    if hashlib.sha256(payload).digest() != digest:
        raise ValueError("its checksum does not match (truncated or corrupted)")
    return payload


def _write(directory, path, payload):
    """Write atomically: a temporary file in the same directory, flushed, then renamed."""
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=directory)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(MAGIC + hashlib.sha256(payload).digest())
            f.write(payload)    # not concatenated: that would copy the payload once more
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _usable_directory():
    directory = config.compilation_cache_dir
    if directory is None:
        return None
    directory = os.fspath(directory)
    if directory in _unusable:
        return None
    try:
        os.makedirs(directory, mode=0o700, exist_ok=True)
    except OSError as e:
        _unusable.add(directory)
        _warn_once("dir", directory, f"purenn: the compilation cache directory {directory!r} cannot be created "
                                     f"({e}); compiling without the persistent cache.")
        return None
    return directory


def _scan(directory):
    """(mtime, size, path) of every entry in `directory`."""
    found = []
    with os.scandir(directory) as it:
        for e in it:
            if e.name.endswith(".xla"):
                try:
                    st = e.stat()
                except FileNotFoundError:  # evicted by another process meanwhile
                    continue
                found.append((st.st_mtime, st.st_size, e.path))
    return found


def _account(directory, added):
    """Add a written entry's size to the directory's total; over the limit, delete the least
    recently used entries (oldest modification time: a hit touches its entry) down to 80 % of it.
    The total is re-read from the directory whenever it is first needed and at every eviction, so
    other processes' writes are counted then."""
    limit = config.compilation_cache_max_size
    if limit < 0:
        return
    with _lock:  # one thread at a time updates the total and evicts
        _account_locked(directory, added, limit)


def _account_locked(directory, added, limit):
    total = _sizes.get(directory)
    if total is None:
        total = sum(size for _, size, _ in _scan(directory))
    else:
        total += added
    if total > limit:
        entries = sorted(_scan(directory))
        total = sum(size for _, size, _ in entries)
        for _, size, path in entries:
            if total <= 0.8 * limit:
                break
            try:
                os.unlink(path)
                _stats["evictions"] += 1  # under _lock already
            except FileNotFoundError:
                pass
            total -= size
    _sizes[directory] = total


def compile_and_load(client, text, device_list, devices, options, options_key):
    """`client.compile_and_load(text, device_list, options)`, through the cache when it is on.
    `options_key` is a string that describes `options` (what else the compiled code depends on)."""
    directory = _usable_directory()
    if directory is None:
        return client.compile_and_load(text, device_list, options)
    path = os.path.join(directory, _key(text, client, devices, options_key) + ".xla")
    try:
        payload = _read(path)
        if payload is not None:
            loaded = client.deserialize_executable(payload, device_list, options)
            _count("hits")
            try:
                os.utime(path)  # recently used: evicted last
            except OSError:
                pass
            return loaded
    except Exception as e:  # a corrupt file or one this jaxlib cannot load: drop it, compile anew
        _count("errors")
        _warn_once("entry", path, f"purenn: compilation cache entry {path} could not be loaded ({e}); "
                                  "it is removed and the program compiled again.")
        try:
            os.unlink(path)
        except OSError:
            pass
    _count("misses")
    start = time.perf_counter()
    loaded = client.compile_and_load(text, device_list, options)
    if time.perf_counter() - start >= config.persistent_cache_min_compile_time_secs:
        try:
            payload = client.serialize_executable(loaded)
            _write(directory, path, payload)
            _count("writes")
            _account(directory, len(MAGIC) + _DIGEST_BYTES + len(payload))
            del payload
            _release_free_heap()
        except Exception as e:
            _count("errors")
            _unusable.add(directory)
            _warn_once("write", directory, f"purenn: could not write to the compilation cache directory "
                                           f"{directory!r} ({e}); programs still compile, uncached.")
    return loaded


def _release_free_heap():
    """Give the C heap's free pages back to the system (glibc's `malloc_trim`; elsewhere nothing).

    Serializing an executable churns through about 25 times the entry's size of C heap (12 MB for
    the digits MLP's 0.5 MB initialization program), which glibc frees but keeps: without this
    the persistent cache raised a trainer's peak resident memory by ~10 MB, as the next compile
    grew the heap on top of it (bench/RESULTS.md, "Trainer"). A trim takes about a millisecond,
    against the tens of milliseconds of the compile it follows."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


def _malloc_trim():
    if "trim" not in _host:
        trim = None
        try:
            trim = ctypes.CDLL(None).malloc_trim   # the process's own symbols: libc's, if glibc
            trim.argtypes, trim.restype = [ctypes.c_size_t], ctypes.c_int
        except (OSError, AttributeError):   # not glibc (macOS, musl): nothing to do
            pass
        _host["trim"] = trim
    return _host["trim"]


class _Info:
    """The cache's counters in `core.cache_info()["persistent"]`; `clear()` resets the counters
    only (the entries on disk stay: they are the point of a persistent cache)."""

    def info(self):
        return {**_stats, "directory": config.compilation_cache_dir}

    def clear(self):
        with _lock:
            for k in _stats:
                _stats[k] = 0


info = _Info()
