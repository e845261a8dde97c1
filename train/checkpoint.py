"""Atomic, verified checkpoints of a pytree of arrays (docs/design.md, "Checkpoints").

A checkpoint is a directory `<directory>/<step>` holding three files with fixed names:

- `arrays.npz`: every leaf, keyed by its pytree path (`opt_state/0/1/2`), as an uncompressed zip of
  `.npy` members; dtypes NumPy cannot name (bfloat16 and the other ml_dtypes) are stored as
  unsigned integers of the same width;
- `meta.json`: the caller's metadata plus `step`, `format_version`, `versions` (purenn, jaxlib,
  numpy, python), `leaves` (each leaf's path, shape and dtype) and, when given, `metric`;
- `COMMIT`: the size and SHA-256 of the other two files, written last.

Saving writes into `<step>.tmp-<nonce>` beside the final directory, fsyncs every file, writes and
fsyncs `COMMIT`, renames the directory into place and fsyncs the parent, so a crash at any
instant leaves either the committed step or a tmp directory (deleted by the next `Checkpointer`).
Loading trusts nothing in the files: sizes and checksums are checked before anything is parsed,
JSON files are size-capped, the tree structure comes from the caller's template, and every `.npy`
header is checked against the template (shape, dtype, member size) before an array is allocated.
Object arrays are refused on both sides, so no Python object is ever deserialized.
"""
import errno as _errno
import hashlib
import io
import json
import math
import os
import re
import shutil
import stat
import sys
import threading
import warnings
import zipfile
import zlib
import struct

import numpy as np

import core
from core import tree_util

__all__ = ["Checkpointer", "CheckpointError", "CheckpointCorruptError", "CheckpointMismatchError",
           "CheckpointWarning", "restore_path"]

FORMAT_VERSION = 1
ARRAYS, META, COMMIT = "arrays.npz", "meta.json", "COMMIT"
# meta.json and COMMIT are read whole; anything larger is refused before it is read
MAX_JSON_BYTES = 64 << 20
_RESERVED_META = ("step", "format_version", "versions", "leaves", "metric")
_STEP_NAME = re.compile(r"[0-9]+")
_TMP_NAME = re.compile(r"[0-9]+\.tmp-.+", re.DOTALL)
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*://")
_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_O_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
# what a damaged or hostile file can make the readers raise; MemoryError is deliberately absent
_READ_ERRORS = (OSError, ValueError, EOFError, KeyError, IndexError, TypeError, OverflowError,
                zipfile.BadZipFile, zipfile.LargeZipFile, struct.error, zlib.error,
                NotImplementedError)


class CheckpointError(Exception):
    """A checkpoint could not be saved or restored; the message names the path and the fix.

    A failed write carries `path` (the file being written) and `errno`.
    """

    def __init__(self, message, *, path=None, errno=None):
        super().__init__(message)
        self.path, self.errno = path, errno


class CheckpointCorruptError(CheckpointError):
    """Checkpoint `step` is unusable: `file` failed a check for `reason`."""

    def __init__(self, step, file, reason):
        self.step, self.file, self.reason = step, file, reason
        super().__init__(f"checkpoint step {step} is unusable: {file}: {reason}", path=file)

    def __reduce__(self):
        return type(self), (self.step, self.file, self.reason)


class CheckpointMismatchError(CheckpointCorruptError):
    """The checkpoint is intact but does not fit the template (a different model or optimizer).

    `restore_latest` raises it instead of falling back: an older checkpoint of the same run would
    not fit either, and silently starting afresh would discard the run.
    """


class CheckpointWarning(UserWarning):
    """A committed checkpoint was skipped (corrupt) or an old one could not be deleted."""


# --------------------------------------------------------------------------------------------
# Small helpers: names, dtypes, paths
# --------------------------------------------------------------------------------------------

def _path_key(path):
    return tree_util.keystr(path, simple=True, separator="/")


def _is_bits_dtype(dtype):
    """True for the ml_dtypes types (bfloat16, float8_*, int4...): NumPy stores them as opaque
    void, so the file keeps their bits as unsigned integers and meta.json keeps their name."""
    return (dtype.kind == "V" and dtype.fields is None and dtype.subdtype is None
            and dtype.type is not np.void and dtype.itemsize in (1, 2, 4, 8))


def _storage_dtype(dtype):
    return np.dtype(f"<u{dtype.itemsize}") if _is_bits_dtype(dtype) else dtype


def _dtype_ok(dtype):
    return dtype.kind in "biufc" or _is_bits_dtype(dtype)


def _describe(shape, dtype):
    return f"{dtype.name}[{','.join(str(d) for d in shape)}]"


def _step_arg(step, fname):
    if isinstance(step, (bool, np.bool_)) or not isinstance(step, (int, np.integer)) or step < 0:
        raise CheckpointError(f"Checkpointer.{fname}: step must be a non-negative int, got "
                              f"{step!r} ({type(step).__name__})")
    return int(step)


def _refuse_url(path, what):
    m = _URL.match(path)
    if m:
        raise CheckpointError(f"{what} {path!r} is a URL ({m.group(0)}); checkpoints are written "
                              "to and read from local paths only. Give a local directory (mount "
                              "remote storage first if you need it).")


def _errno_text(err):
    code = err.errno
    name = _errno.errorcode.get(code, "?") if code is not None else "?"
    text = err.strerror or (os.strerror(code) if code is not None else str(err))
    return f"[Errno {code}] {name}: {text}"


def _fsync_dir(path):
    fd = os.open(path, os.O_RDONLY | _O_DIRECTORY | _O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _remove_quietly(path):
    """Delete a directory we created (never following symlinks); failures only warn, since the
    next Checkpointer deletes tmp directories anyway."""
    try:
        if os.path.lexists(path):
            shutil.rmtree(path)
    except OSError as e:
        warnings.warn(CheckpointWarning(f"could not remove {path}: {_errno_text(e)}; it is deleted "
                                        "when the next Checkpointer starts"), stacklevel=3)


# --------------------------------------------------------------------------------------------
# Writing
# --------------------------------------------------------------------------------------------

class _FdWriter(io.RawIOBase):
    """A seekable binary stream over a file descriptor we opened, writing with `os.write` (a
    short write is retried, an error propagates as the OSError it is)."""

    def __init__(self, fd):
        super().__init__()
        self._fd = fd

    def writable(self):
        return True

    def seekable(self):
        return True

    def write(self, data):
        view = memoryview(data)
        if view.format != "B" or view.ndim != 1:
            view = view.cast("B")
        done = 0
        while done < len(view):
            done += os.write(self._fd, view[done:])
        return done

    def seek(self, offset, whence=os.SEEK_SET):
        return os.lseek(self._fd, offset, whence)

    def tell(self):
        return os.lseek(self._fd, 0, os.SEEK_CUR)


def _write_file(path, fill):
    """Create `path` (never an existing file or a symlink), let `fill(stream)` write it, fsync."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_NOFOLLOW | _O_CLOEXEC, 0o640)
    try:
        fill(_FdWriter(fd))
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_npz(stream, named_arrays):
    # np.savez's layout (a stored zip of .npy members) written by hand: np.savez takes the names as
    # keyword arguments, so a leaf called `file` would collide with one of its own
    # parameters; a fixed timestamp makes equal trees give byte-identical files
    # The archive is closed only on success: closing it while a member is still open (an
    # interrupt arrived mid-write) raises ValueError, which would hide the real exception. The
    # half-written file is in a tmp directory that the caller removes.
    zf = zipfile.ZipFile(stream, mode="w", compression=zipfile.ZIP_STORED, allowZip64=True)
    for key, arr in named_arrays:
        info = zipfile.ZipInfo(key + ".npy", date_time=(1980, 1, 1, 0, 0, 0))
        info.compress_type = zipfile.ZIP_STORED
        info.external_attr = 0o640 << 16
        with zf.open(info, mode="w", force_zip64=True) as member:
            np.lib.format.write_array(member, arr, allow_pickle=False)
    zf.close()


def _sha256_of_fd(fd):
    digest = hashlib.sha256()
    os.lseek(fd, 0, os.SEEK_SET)
    while True:
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            return digest.hexdigest()
        digest.update(chunk)


def _host_leaves(tree):
    """[(key, array to store)] and the `leaves` entries of meta.json; refuses what a checkpoint
    cannot hold, naming the leaf."""
    pairs, _ = tree_util.tree_flatten_with_path(tree)
    seen, stored, described = {}, [], []
    for path, leaf in pairs:
        key = _path_key(path)
        if key in seen:
            raise CheckpointError(
                f"Checkpointer.save: leaves {tree_util.keystr(seen[key])} and "
                f"{tree_util.keystr(path)} both have the checkpoint key {key!r} (paths are joined "
                "with '/'); rename one of the dict keys")
        seen[key] = path
        if isinstance(leaf, core.Array):
            leaf = core.device_get(leaf)
        if not isinstance(leaf, (np.ndarray, np.generic, bool, int, float, complex)) \
                and not hasattr(leaf, "__array__"):
            raise CheckpointError(f"Checkpointer.save: leaf {key!r} is a {type(leaf).__name__}; a "
                                  "checkpoint holds arrays, numbers and None only")
        arr = np.asarray(leaf)
        if not _dtype_ok(arr.dtype):
            raise CheckpointError(
                f"Checkpointer.save: leaf {key!r} has dtype {arr.dtype} "
                f"({_describe(arr.shape, arr.dtype)}); checkpoints hold bool, integer, float and complex arrays only (object, string "
                "and structured arrays are refused); convert it or keep it in meta")
        if not arr.dtype.isnative:
            arr = arr.astype(arr.dtype.newbyteorder("="))
        entry = {"path": key, "shape": list(arr.shape), "dtype": arr.dtype.name}
        if _is_bits_dtype(arr.dtype):
            entry["stored_as"] = _storage_dtype(arr.dtype).name
            arr = arr.view(_storage_dtype(arr.dtype))
        stored.append((key, np.asarray(arr, order="C")))
        described.append(entry)
    return stored, described


def _versions():
    from importlib import metadata
    out = {"numpy": np.__version__, "python": ".".join(str(v) for v in sys.version_info[:3])}
    for name in ("purenn", "jaxlib"):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


_VERSIONS = None


def _warm_versions():
    global _VERSIONS
    if _VERSIONS is None:
        _VERSIONS = _versions()


def _meta_bytes(step, meta, leaves, metric_entry):
    if meta is None:
        meta = {}
    if not isinstance(meta, dict):
        raise CheckpointError(f"Checkpointer.save: meta must be a dict, got {type(meta).__name__}")
    for key in _RESERVED_META:
        if key in meta and not (key == "step" and meta[key] == step):
            raise CheckpointError(f"Checkpointer.save: meta key {key!r} is reserved (the "
                                  f"checkpointer writes {', '.join(_RESERVED_META)}); rename it")
    _warm_versions()
    full = dict(meta, step=step, format_version=FORMAT_VERSION, versions=_VERSIONS, leaves=leaves)
    if metric_entry is not None:
        full["metric"] = metric_entry
    try:
        return json.dumps(full, indent=1, sort_keys=True).encode("utf-8")
    except (TypeError, ValueError) as e:
        raise CheckpointError(f"Checkpointer.save: meta is not JSON-serializable ({e}); keep "
                              "only dicts, lists, strings, numbers, booleans and None in it") from None


# --------------------------------------------------------------------------------------------
# Reading and verifying
# --------------------------------------------------------------------------------------------

def _open_regular(path, step):
    """A read-only file object for `path`, refusing symlinks and anything but a regular file."""
    try:
        fd = os.open(path, os.O_RDONLY | _O_NOFOLLOW | _O_CLOEXEC)
    except FileNotFoundError:
        raise CheckpointCorruptError(step, path, "the file is missing") from None
    except OSError as e:
        reason = ("is a symbolic link; refused" if e.errno == _errno.ELOOP
                  else f"cannot be opened: {_errno_text(e)}")
        raise CheckpointCorruptError(step, path, reason) from None
    f = os.fdopen(fd, "rb")
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        f.close()
        raise CheckpointCorruptError(step, path, "is not a regular file")
    return f


def _read_capped(f, path, step, limit=None):
    limit = MAX_JSON_BYTES if limit is None else limit
    size = os.fstat(f.fileno()).st_size
    if size > limit:
        raise CheckpointCorruptError(step, path, f"is {size} bytes, more than the {limit}-byte "
                                     "limit for JSON files; refused without reading it")
    data = f.read(limit + 1)
    if len(data) > limit:
        raise CheckpointCorruptError(step, path, f"grew past the {limit}-byte limit while read")
    return data


def _parse_json(data, path, step):
    try:
        return json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        raise CheckpointCorruptError(step, path, f"is not valid JSON ({e})") from None


def _read_commit(dirpath, step):
    """{file name: (size, sha256)} from COMMIT, validated; only the fixed names are accepted."""
    path = os.path.join(dirpath, COMMIT)
    if not os.path.lexists(path):
        raise CheckpointCorruptError(step, path, "the commit marker is missing: the save never "
                                     "finished, so the directory is not a checkpoint")
    with _open_regular(path, step) as f:
        commit = _parse_json(_read_capped(f, path, step), path, step)
    bad = CheckpointCorruptError(step, path, f"has an unexpected layout (format {FORMAT_VERSION} "
                                 "expects {'format_version', 'step', 'files': [{'name', 'size', "
                                 "'sha256'}]} listing arrays.npz and meta.json)")
    if not isinstance(commit, dict) or not isinstance(commit.get("files"), list):
        raise bad
    if commit.get("format_version") != FORMAT_VERSION:
        raise CheckpointCorruptError(step, path, f"format_version {commit.get('format_version')!r} "
                                     f"is not supported (this purenn reads {FORMAT_VERSION})")
    files = {}
    for entry in commit["files"]:
        if (not isinstance(entry, dict) or entry.get("name") not in (ARRAYS, META)
                or entry["name"] in files or type(entry.get("size")) is not int
                or not isinstance(entry.get("sha256"), str)):
            raise bad
        files[entry["name"]] = (entry["size"], entry["sha256"])
    if len(files) != 2:
        raise bad
    return files


def _check_size(f, path, step, size):
    actual = os.fstat(f.fileno()).st_size
    if actual != size:
        raise CheckpointCorruptError(step, path, f"is {actual} bytes but COMMIT recorded {size} "
                                     "(truncated or overwritten)")


def _check_sha(digest, path, step, expected):
    if digest != expected:
        raise CheckpointCorruptError(step, path, f"SHA-256 {digest} does not match {expected} "
                                     "recorded in COMMIT (the file changed after it was written)")


def _read_meta(dirpath, step, commit_files):
    path = os.path.join(dirpath, META)
    size, sha = commit_files[META]
    with _open_regular(path, step) as f:
        _check_size(f, path, step, size)
        data = _read_capped(f, path, step)
    _check_sha(hashlib.sha256(data).hexdigest(), path, step, sha)
    meta = _parse_json(data, path, step)
    if not isinstance(meta, dict) or meta.get("format_version") != FORMAT_VERSION:
        raise CheckpointCorruptError(step, path, f"is not a format-{FORMAT_VERSION} checkpoint's "
                                     "metadata (a JSON object with format_version "
                                     f"{FORMAT_VERSION})")
    if step is not None and meta.get("step") != step:
        raise CheckpointCorruptError(step, path, f"records step {meta.get('step')!r}, not the "
                                     f"directory's step {step}")
    return meta


def _meta_leaves(meta, path, step):
    """{key: (shape, dtype name, stored dtype name or None)} from meta.json, validated."""
    leaves = meta.get("leaves")
    out = {}
    if not isinstance(leaves, list):
        raise CheckpointCorruptError(step, path, "has no 'leaves' list")
    for e in leaves:
        ok = (isinstance(e, dict) and isinstance(e.get("path"), str)
              and isinstance(e.get("shape"), list) and isinstance(e.get("dtype"), str)
              and all(type(d) is int and d >= 0 for d in e["shape"]) and e["path"] not in out)
        if not ok:
            raise CheckpointCorruptError(step, path, f"has a malformed or repeated leaf entry "
                                         f"{str(e)[:200]}")
        out[e["path"]] = (tuple(e["shape"]), e["dtype"], e.get("stored_as"))
    return out


def _template_specs(template):
    """[(key, shape, dtype)] for the template's leaves, and its treedef."""
    pairs, treedef = tree_util.tree_flatten_with_path(template)
    specs, seen = [], set()
    for path, leaf in pairs:
        key = _path_key(path)
        if key in seen:
            raise CheckpointError(f"restore: two template leaves have the checkpoint key {key!r}")
        seen.add(key)
        if hasattr(leaf, "shape") and hasattr(leaf, "dtype"):
            shape, dtype = tuple(int(d) for d in leaf.shape), np.dtype(leaf.dtype)
        elif isinstance(leaf, (np.generic, bool, int, float, complex)):
            arr = np.asarray(leaf)
            shape, dtype = arr.shape, arr.dtype
        else:
            raise CheckpointError(f"restore: template leaf {key!r} is a {type(leaf).__name__}; "
                                  "template leaves must be arrays or objects with .shape and "
                                  ".dtype (e.g. core.ShapeDtypeStruct)")
        if not _dtype_ok(dtype):
            raise CheckpointError(f"restore: template leaf {key!r} has dtype {dtype}, which a "
                                  "checkpoint cannot hold")
        specs.append((key, shape, dtype.newbyteorder("=") if not dtype.isnative else dtype))
    return specs, treedef


def _match_template(step, path, specs, saved):
    template_keys = [k for k, _, _ in specs]
    missing = [k for k in template_keys if k not in saved]
    extra = [k for k in saved if k not in set(template_keys)]
    if missing or extra:
        parts = []
        if missing:
            parts.append(f"the template has leaves the checkpoint lacks: {missing[:5]}")
        if extra:
            parts.append(f"the checkpoint has leaves the template lacks: {extra[:5]}")
        raise CheckpointMismatchError(step, path, "the tree structure differs from the template ("
                                      + "; ".join(parts) + "); the checkpoint was written for "
                                      "another model or optimizer")
    for key, shape, dtype in specs:
        sshape, sdtype, stored_as = saved[key]
        if sshape != shape or sdtype != dtype.name:
            raise CheckpointMismatchError(
                step, path, f"leaf {key!r} is {sdtype}[{','.join(map(str, sshape))}] in the "
                f"checkpoint but {_describe(shape, dtype)} in the template")
        expected_storage = _storage_dtype(dtype).name if _is_bits_dtype(dtype) else None
        if stored_as != expected_storage:
            raise CheckpointCorruptError(step, path, f"leaf {key!r} is stored as {stored_as!r}, "
                                         f"expected {expected_storage!r} for {dtype.name}")


def _read_member(zf, key, shape, dtype, fail):
    """One leaf from the npz: the .npy header is checked against the template's shape and dtype
    and against the member's size before the array is allocated."""
    name = key + ".npy"
    info = zf.getinfo(name)
    if info.compress_type != zipfile.ZIP_STORED:
        fail(f"member {name!r} is compressed; checkpoints are written uncompressed")
    storage = _storage_dtype(dtype)
    with zf.open(info) as member:
        version = np.lib.format.read_magic(member)
        if version == (1, 0):
            hshape, fortran, hdtype = np.lib.format.read_array_header_1_0(member)
        elif version == (2, 0):
            hshape, fortran, hdtype = np.lib.format.read_array_header_2_0(member)
        else:
            fail(f"member {name!r} has .npy format version {version}; expected 1.0 or 2.0")
        if hdtype.hasobject:
            fail(f"member {name!r} holds an object array ({hdtype}); object arrays are refused "
                 "(loading them could run code from the file)")
        if tuple(hshape) != shape or hdtype != storage:
            fail(f"member {name!r} is {_describe(hshape, hdtype)} but meta.json and the template "
                 f"say {_describe(shape, storage)}")
        count = math.prod(shape)
        nbytes = count * storage.itemsize
        header_end = member.tell()
        if info.file_size != header_end + nbytes:
            fail(f"member {name!r} holds {info.file_size - header_end} bytes of data; "
                 f"{_describe(shape, storage)} needs {nbytes}")
        flat = np.empty(count, storage)
        view, done = memoryview(flat.view(np.uint8)), 0
        while done < nbytes:
            n = member.readinto(view[done:])
            if not n:
                fail(f"member {name!r} ended after {done} of {nbytes} data bytes")
            done += n
        member.read()  # to the member's end, so zipfile checks its CRC-32
    arr = flat.reshape(shape, order="F" if fortran else "C")
    return arr.view(dtype) if _is_bits_dtype(dtype) else arr


def _read_arrays(dirpath, step, commit_files, specs):
    path = os.path.join(dirpath, ARRAYS)
    size, sha = commit_files[ARRAYS]

    def fail(reason):
        raise CheckpointCorruptError(step, path, reason)

    with _open_regular(path, step) as f:
        _check_size(f, path, step, size)
        _check_sha(_sha256_of_fd(f.fileno()), path, step, sha)
        f.seek(0)
        try:
            with zipfile.ZipFile(f) as zf:
                names = [i.filename for i in zf.infolist()]
                expected = {key + ".npy" for key, _, _ in specs}
                if len(names) != len(set(names)) or set(names) != expected:
                    fail(f"its members {sorted(names)[:5]}... do not match the {len(expected)} "
                         "leaves in meta.json")
                return [_read_member(zf, key, shape, dtype, fail) for key, shape, dtype in specs]
        except CheckpointCorruptError:
            raise
        except _READ_ERRORS as e:
            raise CheckpointCorruptError(step, path, "cannot be read as an npz archive "
                                         f"({type(e).__name__}: {e})") from None


def _load(dirpath, step, template):
    commit_files = _read_commit(dirpath, step)
    meta = _read_meta(dirpath, step, commit_files)
    meta_path = os.path.join(dirpath, META)
    specs, treedef = _template_specs(template)
    _match_template(step, meta_path, specs, _meta_leaves(meta, meta_path, step))
    leaves = _read_arrays(dirpath, step, commit_files, specs)
    return treedef.unflatten(leaves), meta


def restore_path(path, template):
    """Restore the checkpoint directory at `path` into `template`'s structure: `(tree, meta)`.

    For `--resume PATH`. The directory's files are verified against its COMMIT marker, then each
    leaf's path, shape and dtype against the template (arrays, or `core.ShapeDtypeStruct`s); the
    leaves come back as NumPy arrays. Raises `CheckpointCorruptError(step, file, reason)`.

    >>> import tempfile, numpy as np
    >>> tmp = tempfile.TemporaryDirectory()
    >>> path = Checkpointer(tmp.name).save(3, {"w": np.arange(2.0)}, {"epoch": 1})
    >>> tree, meta = restore_path(path, {"w": np.zeros(2)})
    >>> tree["w"], meta["epoch"], meta["step"]
    (array([0., 1.]), 1, 3)
    >>> tmp.cleanup()
    """
    path = os.fspath(path)
    _refuse_url(str(path), "restore_path: checkpoint path")
    name = os.path.basename(os.path.normpath(path))
    step = int(name) if _STEP_NAME.fullmatch(name) else None
    if not os.path.isdir(path):
        raise CheckpointError(f"restore_path: {path} is not a directory; give a checkpoint "
                              "directory such as <workdir>/checkpoints/<step>")
    return _load(path, step, template)


# --------------------------------------------------------------------------------------------
# The checkpointer
# --------------------------------------------------------------------------------------------

def _prepare_directory(directory):
    path = os.fspath(directory)
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    if not path:
        raise CheckpointError("Checkpointer: directory is empty; give a local directory path")
    _refuse_url(path, "Checkpointer: directory")
    path = os.path.abspath(path)
    if os.path.islink(path):
        raise CheckpointError(f"Checkpointer: directory {path} is a symbolic link; refusing to "
                              f"write checkpoints through it. Give the real path "
                              f"({os.path.realpath(path)}) instead")
    created, p = [], path
    while not os.path.lexists(p):
        created.append(p)
        p = os.path.dirname(p)
    for p in reversed(created):  # each new level gets 0o750, not just the last one
        try:
            os.mkdir(p, 0o750)
        except FileExistsError:
            pass
    if not os.path.isdir(path):
        raise CheckpointError(f"Checkpointer: {path} exists and is not a directory")
    if created:
        _fsync_dir(os.path.dirname(created[-1]))
    return path


class Checkpointer:
    """Saves and restores checkpoints of a train-state pytree in `directory`, atomically.

    `keep` is how many of the newest steps survive a save (None keeps all); `keep_best` is None
    or `(metric_name, "max" | "min")`, and then the step with the best `metric` passed to `save`
    is kept as well. Construction creates `directory` (mode 0o750) and deletes tmp directories
    left by a crash. See the module docstring for the format.

    `background=True` commits on a thread of its own: `save` takes the host arrays and returns
    while the files are written and synced (a save's fsyncs took ~30 ms here, a hundred steps of
    a small model), so the caller goes on computing. At most one save is in flight: the next
    `save`, and `wait()`, wait for it and raise its error if it failed (the failed step leaves no
    trace, as a synchronous failure does); `steps()`, `latest_step()` and the readers wait for it
    first, so they list what is committed. A crash or kill during a background commit loses that
    step only, as during a synchronous one.

    >>> import tempfile, numpy as np
    >>> tmp = tempfile.TemporaryDirectory()
    >>> ck = Checkpointer(tmp.name + "/ckpt", keep=2)
    >>> for step in (10, 20, 30):
    ...     _ = ck.save(step, {"w": np.full(2, step, np.float32), "ema": None}, {"epoch": 0})
    >>> ck.steps()
    [20, 30]
    >>> step, tree, meta = ck.restore_latest({"w": np.zeros(2, np.float32), "ema": None})
    >>> step, tree["w"], tree["ema"]
    (30, array([30., 30.], dtype=float32), None)
    >>> tmp.cleanup()
    """

    def __init__(self, directory, keep=3, keep_best=None, background=False):
        if keep is not None and (isinstance(keep, bool) or not isinstance(keep, int) or keep < 1):
            raise CheckpointError(f"Checkpointer: keep must be a positive int or None (keep "
                                  f"all), got {keep!r}")
        if keep_best is not None:
            ok = (isinstance(keep_best, (tuple, list)) and len(keep_best) == 2
                  and isinstance(keep_best[0], str) and keep_best[1] in ("max", "min"))
            if not ok:
                raise CheckpointError(f"Checkpointer: keep_best must be None or (metric_name, "
                                      f"'max' | 'min'), got {keep_best!r}")
            keep_best = tuple(keep_best)
        self.directory = _prepare_directory(directory)
        self.keep, self.keep_best = keep, keep_best
        self.background = bool(background)
        self._pending_error = None   # a failed background save, raised by the next save or wait()
        self._writer = None          # the thread committing a background save, while it runs
        self._metrics = {}           # step -> metric value (None: no usable metric)
        self._delete_tmp_leftovers()
        if self.background and _VERSIONS is None:
            # reading the installed versions (importlib.metadata) costs ~15 ms; done now on a
            # thread of its own, it overlaps the caller's set-up instead of the first save
            threading.Thread(target=_warm_versions, name="checkpoint-versions", daemon=True).start()

    # -- listing ------------------------------------------------------------------------------

    def _step_dir(self, step):
        return os.path.join(self.directory, str(step))

    def steps(self):
        """The committed steps, ascending: `^[0-9]+$` directories (not symlinks) with a COMMIT."""
        self._join()
        out = []
        with os.scandir(self.directory) as entries:
            for e in entries:
                if (_STEP_NAME.fullmatch(e.name) and e.name == str(int(e.name))
                        and e.is_dir(follow_symlinks=False)
                        and os.path.isfile(os.path.join(e.path, COMMIT))
                        and not os.path.islink(os.path.join(e.path, COMMIT))):
                    out.append(int(e.name))
        return sorted(out)

    def latest_step(self):
        """The newest committed step, or None."""
        steps = self.steps()
        return steps[-1] if steps else None

    def _delete_tmp_leftovers(self):
        with os.scandir(self.directory) as entries:
            leftovers = [e for e in entries if _TMP_NAME.fullmatch(e.name)]
        for e in leftovers:
            if e.is_symlink():
                raise CheckpointError(
                    f"Checkpointer: {e.path} is a symbolic link named like a temporary "
                    "checkpoint; refusing to follow or delete it. Remove the link by hand")
            if e.is_dir(follow_symlinks=False):
                _remove_quietly(e.path)
            else:
                os.unlink(e.path)

    # -- saving -------------------------------------------------------------------------------

    def _raise_pending(self):
        err, self._pending_error = self._pending_error, None
        if err is not None:
            raise err

    def save(self, step, tree, meta=None, metric=None, before_commit=None):
        """Write `tree` (arrays, numbers, None) and `meta` (a JSON-able dict) as checkpoint `step`,
        atomically; returns its path. `metric` is the value `keep_best` ranks by. An existing step
        is never overwritten; a failed write raises CheckpointError naming the file and errno,
        leaving no trace of this step and earlier checkpoints untouched (with `background`, the
        write's error is raised by the next `save` or `wait()`). `before_commit()`, if given, runs
        after the files are written and before the step is renamed into place, on the committing
        thread: the trainer syncs its logs there, so that they are durable up to a step before
        the step is, without the caller waiting for the disk; an OSError it raises fails the save
        as a failed write does."""
        self.wait()
        step = _step_arg(step, "save")
        final = self._step_dir(step)
        if os.path.lexists(final):
            raise CheckpointError(f"Checkpointer.save: step {step} already exists ({final}); a "
                                  "checkpoint is never overwritten. Save under a new step or "
                                  "delete that directory first")
        metric_entry = self._metric_entry(metric)
        arrays, leaves = _host_leaves(tree)
        meta_data = _meta_bytes(step, meta, leaves, metric_entry)
        if not self.background:
            self._commit(step, final, arrays, meta_data, metric_entry, before_commit)
            return final
        # the caller may change its NumPy arrays once save returns: the thread writes copies of
        # the writeable ones (arrays fetched from the device are read-only views that the
        # runtime keeps intact even when their buffers are donated to the next step)
        arrays = [(key, arr.copy() if arr.flags.writeable else arr) for key, arr in arrays]
        self._writer = threading.Thread(target=self._commit_in_background, name=f"checkpoint-{step}",
                                        args=(step, final, arrays, meta_data, metric_entry, before_commit))
        self._writer.start()
        return final

    def _commit_in_background(self, *args):
        try:
            self._commit(*args)
        except BaseException as e:     # kept for the caller's next save or wait()
            self._pending_error = e

    def _commit(self, step, final, arrays, meta_data, metric_entry, before_commit=None):
        """Write, sync and rename checkpoint `step` into place, then drop old steps."""
        tmp = os.path.join(self.directory, f"{step}.tmp-{os.urandom(8).hex()}")
        current = tmp
        try:
            os.mkdir(tmp, 0o750)
            current = os.path.join(tmp, ARRAYS)
            _write_file(current, lambda s: _write_npz(s, arrays))
            current = os.path.join(tmp, META)
            _write_file(current, lambda s: s.write(meta_data))
            current = os.path.join(tmp, ARRAYS)
            fd = os.open(current, os.O_RDONLY | _O_NOFOLLOW | _O_CLOEXEC)
            try:
                arrays_size, arrays_sha = os.fstat(fd).st_size, _sha256_of_fd(fd)
            finally:
                os.close(fd)
            commit = {"format_version": FORMAT_VERSION, "step": step, "files": [
                {"name": ARRAYS, "size": arrays_size, "sha256": arrays_sha},
                {"name": META, "size": len(meta_data),
                 "sha256": hashlib.sha256(meta_data).hexdigest()}]}
            current = os.path.join(tmp, COMMIT)
            _write_file(current, lambda s: s.write(json.dumps(commit, indent=1).encode()))
            current = tmp
            _fsync_dir(tmp)
            if before_commit is not None:
                before_commit()
            if os.path.lexists(final):  # appeared while we wrote (another writer)
                raise FileExistsError(_errno.EEXIST, "the step appeared during the save", final)
            current = final
            os.rename(tmp, final)
        except OSError as e:
            _remove_quietly(tmp)
            raise CheckpointError(
                f"Checkpointer.save: saving step {step} failed writing {e.filename or current}: "
                f"{_errno_text(e)}. Step {step} was not committed, its partial files were "
                "removed and earlier checkpoints are untouched; free disk space or fix the "
                "device, then save again", path=e.filename or current, errno=e.errno) from None
        except BaseException:
            _remove_quietly(tmp)
            raise
        try:
            _fsync_dir(self.directory)
        except OSError as e:
            # the rename may not survive a crash: undo it, so a failed save never leaves a step
            self._delete_step(step)
            raise CheckpointError(
                f"Checkpointer.save: step {step} was written but syncing {self.directory} "
                f"failed: {_errno_text(e)}; the step was removed again and earlier checkpoints "
                "are untouched", path=self.directory, errno=e.errno) from None
        self._metrics[step] = metric_entry["value"] if metric_entry else None
        self._rotate(step)

    def _metric_entry(self, metric):
        if metric is None:
            return None
        try:
            value = float(np.asarray(metric))
        except (TypeError, ValueError):
            raise CheckpointError(f"Checkpointer.save: metric must be a real number, got "
                                  f"{metric!r}") from None
        return {"name": self.keep_best[0] if self.keep_best else None, "value": value}

    def wait(self):
        """Block until the last save is committed (durable); raise its error, once, if it failed."""
        self._join()
        self._raise_pending()

    def _join(self):
        """Wait for the background commit, if one runs (the commit itself lists and reads steps
        when it drops old ones: from its own thread this returns at once)."""
        writer = self._writer
        if writer is not None and writer is not threading.current_thread():
            writer.join()
            self._writer = None

    # -- keep-N ---------------------------------------------------------------------------------

    def _metric_of(self, step):
        if step not in self._metrics:
            try:
                entry = self.read_meta(step).get("metric")
            except CheckpointError:
                entry = None
            ok = (isinstance(entry, dict) and entry.get("name") == self.keep_best[0]
                  and isinstance(entry.get("value"), (int, float)))
            self._metrics[step] = float(entry["value"]) if ok else None
        return self._metrics[step]

    def _best_step(self, steps):
        best, best_value = None, None
        sign = 1.0 if self.keep_best[1] == "max" else -1.0
        for s in steps:
            v = self._metric_of(s)
            if v is None or not math.isfinite(v):
                continue
            if best is None or sign * v > sign * best_value:  # ties: the earlier step stays
                best, best_value = s, v
        return best

    def _rotate(self, new_step):
        if self.keep is None:
            return
        steps = self.steps()
        keep = set(steps[-self.keep:]) | {new_step}
        if self.keep_best is not None:
            best = self._best_step(steps)
            if best is not None:
                keep.add(best)
        for s in steps:
            if s not in keep:
                self._delete_step(s)

    def _delete_step(self, step):
        # renamed out of the listing first (one atomic step), then deleted: a crash in between
        # leaves a `<step>.tmp-*` directory, which the next start deletes
        gone = os.path.join(self.directory, f"{step}.tmp-delete-{os.urandom(4).hex()}")
        try:
            os.rename(self._step_dir(step), gone)
        except OSError as e:
            warnings.warn(CheckpointWarning(f"could not delete old checkpoint step {step} "
                                            f"({self._step_dir(step)}): {_errno_text(e)}"),
                          stacklevel=3)
            return
        self._metrics.pop(step, None)
        _remove_quietly(gone)

    # -- restoring ----------------------------------------------------------------------------

    def read_meta(self, step):
        """meta.json of committed `step` (its size and checksum verified against COMMIT)."""
        step = _step_arg(step, "read_meta")
        dirpath = self._existing_step_dir(step, "read_meta")
        return _read_meta(dirpath, step, _read_commit(dirpath, step))

    def _existing_step_dir(self, step, fname):
        self._join()
        dirpath = self._step_dir(step)
        if not os.path.lexists(dirpath):
            raise CheckpointError(f"Checkpointer.{fname}: no checkpoint step {step} in "
                                  f"{self.directory}; committed steps: {self.steps()}")
        if os.path.islink(dirpath) or not os.path.isdir(dirpath):
            raise CheckpointCorruptError(step, dirpath, "is not a directory (or is a symbolic "
                                         "link); refused")
        return dirpath

    def restore(self, step, template):
        """Checkpoint `step` as `(tree, meta)`, `tree` in `template`'s structure with NumPy leaves.

        Checks the COMMIT sizes and checksums, then each leaf's path, shape and dtype against the
        template; raises `CheckpointCorruptError(step, file, reason)` (or its subclass
        `CheckpointMismatchError` when the checkpoint is intact but does not fit the template).
        """
        step = _step_arg(step, "restore")
        return _load(self._existing_step_dir(step, "restore"), step, template)

    def restore_latest(self, template):
        """`(step, tree, meta)` of the newest valid checkpoint, or None if there is none.

        A corrupt newest checkpoint is skipped with a `CheckpointWarning` naming its step, file
        and reason, and the next newest is tried. A checkpoint that does not fit the template
        raises `CheckpointMismatchError` instead: an older one would not fit either.
        """
        for step in reversed(self.steps()):
            try:
                tree, meta = self.restore(step, template)
            except CheckpointMismatchError:
                raise
            except CheckpointCorruptError as e:
                warnings.warn(CheckpointWarning(
                    f"skipping checkpoint step {e.step}: {e.file}: {e.reason}; falling back to the "
                    "next newest committed checkpoint"), stacklevel=2)
                continue
            return step, tree, meta
        return None
