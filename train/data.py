"""Datasets, the batch order and prefetching for the trainer (docs/design.md, "The trainer", Data).

A dataset is host NumPy arrays: one `Split(x, y)` per split, `y` int32 class labels. `load_data`
reads one by name ("digits", "mnist", "fashion_mnist", "npz", "synthetic_classification",
"synthetic_sequence"), holds out a validation part, normalizes with statistics of the training
split only, and checks what it read (shapes, labels, finite values) so a bad file fails here
with a message, not as a NaN loss hours later.

The batch order is a pure function of `(seed, epoch, batch index)` (docs/reliability.md T9): epoch
`e` visits the permutation `default_rng([seed, e])`, and the augmentation of batch `i` draws from
`default_rng([seed, e, i, 1])`. There is no iterator state: resuming at `(epoch, index)` is
`batches(..., epoch=epoch, start=index)`, which yields exactly the batches the uninterrupted run
would have. Every batch has `batch_size` rows (the last partial one is padded and masked), so the
step compiles once.

This module depends only on NumPy and the standard library, and takes plain arguments rather than
a config object. An error that a config key can fix is a `DataError(key, message)` naming the
dotted key (e.g. "data.path"); the loop adds the config file and line.
"""
import collections
import gzip
import math
import os
import queue
import struct
import threading
from typing import NamedTuple, Optional

import numpy as np

__all__ = ["DataError", "Split", "Dataset", "load_data", "check_batch_size", "batches", "num_batches",
           "Prefetcher", "DATASETS", "NORMALIZATIONS", "AUGMENTATIONS"]

DATASETS = ("digits", "mnist", "fashion_mnist", "npz", "synthetic_classification", "synthetic_sequence")
NORMALIZATIONS = ("none", "scale", "standardize")
AUGMENTATIONS = ("none", "shift")

_REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DIGITS_PATH = os.path.join(_REPO, "examples", "data", "digits.csv.gz")
# The digits test split is this fixed permutation whatever the seeds, so the test set never
# changes between runs; it is examples/digits_convnet.py's default split (1,347 train / 450 test).
_DIGITS_TEST_SEED = 0
# Stream ids that keep the seeded draws of this module apart (validation hold-out, synthetic sets,
# augmentation), so no two of them ever share a random stream.
_VALIDATION_STREAM = 1
_SYNTHETIC_STREAM = 2
_AUGMENT_STREAM = 1

_IDX_IMAGES_MAGIC = 0x00000803
_IDX_LABELS_MAGIC = 0x00000801
_IDX_MAX_SIDE = 4096            # an image side larger than this is a corrupt header, not an image
_IDX_MAX_BYTES = 1 << 32        # refuse to allocate more than 4 GiB for one IDX file
_MNIST_FILES = {"train": ("train-images-idx3-ubyte", "train-labels-idx1-ubyte"),
                "test": ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte")}


class DataError(ValueError):
    """A problem with the data or a data setting, tied to the config key that can fix it.

    `key` is the dotted config key ("data.path", "data.batch_size", ...) and `message` says what is
    wrong and how to fix it; `str(err)` is "key: message". The loop turns it into a config error
    that also names the config file and line.

        >>> err = DataError("data.batch_size", "must be positive, got 0")
        >>> err.key, str(err)
        ('data.batch_size', 'data.batch_size: must be positive, got 0')
    """

    def __init__(self, key, message):
        super().__init__(f"{key}: {message}")
        self.key = key
        self.message = message

    def __reduce__(self):
        return (type(self), (self.key, self.message))


class Split(NamedTuple):
    """One split of a dataset: inputs `x` (N, ...) and int32 class labels `y` (N,), host arrays."""
    x: np.ndarray
    y: np.ndarray


class Dataset(NamedTuple):
    """A loaded dataset: its splits (validation and test may be None), the number of classes, one
    example's input shape and dtype, the task ("classification") and a one-line description."""
    train: Split
    validation: Optional[Split]
    test: Optional[Split]
    num_classes: int
    input_shape: tuple
    input_dtype: np.dtype
    task: str
    description: str
    name: str = ""


# ----- loading ---------------------------------------------------------------------------------

def load_data(name, path=None, *, seed=0, validation_fraction=0.1, test_fraction=0.25, normalize="scale",
              num_train=2048, num_test=512, num_classes=10, seq_len=16, vocab_size=32, input_dim=20):
    """Load dataset `name`, hold out validation, normalize, check it, and return a `Dataset`.

    `seed` is the dataset's own seed (config `data.seed`), never the run's seed: it picks the
    validation hold-out and generates the synthetic sets, so a new run seed changes neither. The
    digits test split is fixed whatever `seed` is. `validation_fraction` of the training examples
    (rounded up) are held out as validation (0: no validation split); `test_fraction` applies only
    to digits, which has no test file (450 of 1,797 at 0.25). `normalize` is "none", "scale"
    (divide by the data's maximum: 16 for digits, 255 for MNIST-like, the largest |x| of the
    training split otherwise) or "standardize" (per-feature mean and std of the training split,
    applied to every split; a std of 0 counts as 1); integer token inputs are never normalized.
    `path` is the directory of the IDX files (mnist, fashion_mnist), the .npz file (npz) or, for
    digits, another CSV in the bundled format. `num_classes` applies to npz (labels must lie in
    [0, num_classes)) and the synthetic sets; digits and the MNIST-like sets have 10.
    `num_train`, `num_test`, `input_dim`, `seq_len` and `vocab_size` size the synthetic sets.

        >>> ds = load_data("digits")
        >>> ds.description
        'digits: 1,212 train / 135 validation / 450 test, 8x8x1, 10 classes'
        >>> ds.train.x.dtype, ds.train.y.dtype, float(ds.train.x.max())
        (dtype('float32'), dtype('int32'), 1.0)
    """
    if name not in DATASETS:
        raise DataError("data.name", f"unknown dataset {name!r}; choose one of {', '.join(DATASETS)}")
    if normalize not in NORMALIZATIONS:
        raise DataError("data.normalize", f"unknown normalization {normalize!r}; choose one of "
                                          f"{', '.join(NORMALIZATIONS)}")
    _check_fraction("data.validation_fraction", validation_fraction)
    _check_fraction("data.test_fraction", test_fraction)
    seed = _check_seed("data.seed", seed)

    if name == "digits":
        x, y = _read_digits(DIGITS_PATH if path is None else os.fspath(path))
        num_classes, scale_max = 10, 16.0
        train, test = _digits_test_split(x, y, test_fraction)
        if len(train.y) == 0:
            raise DataError("data.test_fraction", f"digits: test_fraction {test_fraction} leaves no training "
                                                  f"examples of {len(y):,}")
    elif name in ("mnist", "fashion_mnist"):
        directory = _require_path(name, path, "a directory holding the four IDX files "
                                              f"({', '.join(_MNIST_FILES['train'] + _MNIST_FILES['test'])})")
        train, test = (_read_idx_split(name, directory, part) for part in ("train", "test"))
        if train.x.shape[1:] != test.x.shape[1:]:
            raise DataError("data.path", f"{name}: the train images are {_shape_str(train.x.shape[1:])} but the "
                                         f"test images are {_shape_str(test.x.shape[1:])} in {directory}")
        num_classes, scale_max = 10, 255.0
    elif name == "npz":
        train, test = _read_npz(_require_path(name, path, "a .npz file with arrays x_train, y_train, x_test, "
                                                           "y_test"))
        scale_max = None
    elif name == "synthetic_classification":
        _check_count("data.num_train", num_train)
        _check_count("data.num_test", num_test)
        _check_count("data.num_classes", num_classes, least=2)
        _check_count("data.input_dim", input_dim)
        train, test = _synthetic_classification(seed, num_train, num_test, num_classes, input_dim)
        scale_max = None
    else:  # synthetic_sequence
        _check_count("data.num_train", num_train)
        _check_count("data.num_test", num_test)
        _check_count("data.num_classes", num_classes, least=2)
        _check_count("data.seq_len", seq_len)
        _check_count("data.vocab_size", vocab_size, least=2)
        train, test = _synthetic_sequence(seed, num_train, num_test, num_classes, seq_len, vocab_size)
        scale_max = None

    if name == "npz":
        num_classes = _check_count("data.num_classes", num_classes, least=1)
    source = None if path is None else os.fspath(path)
    for split_name, split in (("train", train), ("test", test)):
        if split is not None:
            _check_split(name, split_name, split, num_classes, source,
                         classes_key="data.num_classes" if name == "npz" else "data.path")

    train, validation = _hold_out(train, validation_fraction, seed)
    if len(train.y) == 0:
        raise DataError("data.validation_fraction", f"{name}: holding out validation_fraction "
                                                    f"{validation_fraction} leaves no training examples")
    # Integer inputs stay integers (tokens for an embedding) for synthetic_sequence, and for npz
    # when asked not to normalize; everything else becomes float32.
    keep_integers = name == "synthetic_sequence" or (
        name == "npz" and normalize == "none" and np.issubdtype(train.x.dtype, np.integer))
    train, validation, test = _normalize(normalize, (train, validation, test), scale_max, keep_integers)
    return Dataset(train=train, validation=validation, test=test, num_classes=int(num_classes),
                   input_shape=tuple(train.x.shape[1:]), input_dtype=train.x.dtype, task="classification",
                   description=_describe(name, train, validation, test, num_classes), name=name)


def _check_fraction(key, value):
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < 1:
        raise DataError(key, f"must be a number in [0, 1), got {value!r}")


def _check_seed(key, value):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
        raise DataError(key, f"must be a non-negative integer, got {value!r}")
    return int(value)


def _check_count(key, value, least=1):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < least:
        raise DataError(key, f"must be an integer >= {least}, got {value!r}")
    return int(value)


def _require_path(name, path, what):
    if path is None or path == "":
        raise DataError("data.path", f"dataset {name!r} reads local files and nothing is downloaded: set "
                                     f"data.path to {what}")
    return os.fspath(path)


def _held_out_count(n, fraction):
    """How many of `n` examples a `fraction` holds out: rounded up (with a little slack for
    binary fractions such as 0.1), so 0.25 of digits' 1,797 is 450."""
    return min(n, math.ceil(n * fraction - 1e-9))


def _shape_str(shape):
    return "x".join(str(d) for d in shape) if shape else "scalar"


# ----- digits ----------------------------------------------------------------------------------

def _read_digits(path):
    if not os.path.isfile(path):
        raise DataError("data.path", f"digits: no file {path!r} (expected the bundled examples/data/digits.csv.gz "
                                     f"or a CSV of 64 pixel columns and a label)")
    try:
        opener = gzip.open if path.endswith(".gz") else open
        with opener(path, "rt") as f:
            table = np.loadtxt(f, delimiter=",", dtype=np.int64, ndmin=2)
    except (OSError, ValueError, EOFError) as e:
        raise DataError("data.path", f"digits: cannot read {path!r}: {e}") from None
    if table.shape[1] != 65:
        raise DataError("data.path", f"digits: {path!r} has {table.shape[1]} columns per row; expected 65 "
                                     f"(64 pixels then the label)")
    x = table[:, :64].reshape(-1, 8, 8, 1)
    return x, table[:, 64]


def _digits_test_split(x, y, test_fraction):
    order = np.random.default_rng(_DIGITS_TEST_SEED).permutation(len(y))
    num_train = len(y) - _held_out_count(len(y), test_fraction)
    train, test = order[:num_train], order[num_train:]
    return Split(x[train], y[train]), (Split(x[test], y[test]) if len(test) else None)


# ----- IDX (mnist, fashion_mnist) --------------------------------------------------------------

def _find_file(name, directory, filename):
    for candidate in (filename, filename + ".gz"):
        full = os.path.join(directory, candidate)
        if os.path.isfile(full):
            return full
    if not os.path.isdir(directory):
        raise DataError("data.path", f"{name}: {directory!r} is not a directory; set data.path to the directory "
                                     f"that holds {filename}")
    raise DataError("data.path", f"{name}: no file {filename} (or {filename}.gz) in {directory!r}")


def _open_idx(path):
    return gzip.open(path, "rb") if path.endswith(".gz") else open(path, "rb")


def _read_idx_header(f, path, magic, dims):
    """Read and check the header of IDX file `f`: returns (count, shape of one item), after checking
    the magic number and that the sizes are plausible, before anything large is allocated."""
    what = "images" if magic == _IDX_IMAGES_MAGIC else "labels"
    size = 4 + 4 * (1 + dims)
    header = f.read(size)
    if len(header) < size:
        raise DataError("data.path", f"{path!r} is truncated: {len(header)} bytes, shorter than an IDX {what} "
                                     f"header ({size} bytes)")
    found, count, *shape = struct.unpack(f">{2 + dims}I", header)
    if found != magic:
        raise DataError("data.path", f"{path!r} is not an IDX {what} file: magic number 0x{found:08x}, expected "
                                     f"0x{magic:08x}")
    shape = tuple(shape)
    if any(not 1 <= d <= _IDX_MAX_SIDE for d in shape):
        raise DataError("data.path", f"{path!r}: implausible image size {_shape_str(shape)} in the header (each "
                                     f"side must be 1..{_IDX_MAX_SIDE}); the file is corrupt")
    if count * math.prod(shape) > _IDX_MAX_BYTES:
        raise DataError("data.path", f"{path!r}: the header declares {count:,} {what} of {math.prod(shape):,} "
                                     f"bytes, more than the {_IDX_MAX_BYTES:,} bytes this reader accepts; the "
                                     f"header is corrupt")
    return count, shape


def _idx_count(path, magic, dims):
    try:
        with _open_idx(path) as f:
            return _read_idx_header(f, path, magic, dims)[0]
    except (OSError, EOFError) as e:
        raise DataError("data.path", f"cannot read {path!r}: {e}") from None


def _read_idx(path, magic, dims):
    """The uint8 array of IDX file `path` (`dims` dimensions after the count), its size checked
    against the header."""
    what = "images" if magic == _IDX_IMAGES_MAGIC else "labels"
    try:
        with _open_idx(path) as f:
            count, shape = _read_idx_header(f, path, magic, dims)
            expected = count * math.prod(shape)
            payload = f.read(expected + 1)
    except (OSError, EOFError) as e:   # gzip.BadGzipFile is an OSError
        raise DataError("data.path", f"cannot read {path!r}: {e}") from None
    if len(payload) < expected:
        raise DataError("data.path", f"{path!r} is truncated: the header declares {count:,} {what} "
                                     f"({expected:,} bytes of data) but the file holds {len(payload):,}")
    if len(payload) > expected:
        raise DataError("data.path", f"{path!r} has data after the {count:,} {what} its header declares; the "
                                     f"file is corrupt or not IDX")
    return np.frombuffer(payload, dtype=np.uint8).reshape((count,) + shape)


def _read_idx_split(name, directory, part):
    images_file, labels_file = _MNIST_FILES[part]
    images_path = _find_file(name, directory, images_file)
    labels_path = _find_file(name, directory, labels_file)
    num_images = _idx_count(images_path, _IDX_IMAGES_MAGIC, 2)
    num_labels = _idx_count(labels_path, _IDX_LABELS_MAGIC, 0)
    if num_images != num_labels:
        raise DataError("data.path", f"{name}: {images_path!r} holds {num_images:,} images but {labels_path!r} "
                                     f"holds {num_labels:,} labels; they must match")
    images = _read_idx(images_path, _IDX_IMAGES_MAGIC, 2)
    labels = _read_idx(labels_path, _IDX_LABELS_MAGIC, 0)
    return Split(images[..., None], labels)


# ----- npz -------------------------------------------------------------------------------------

_NPZ_ARRAYS = ("x_train", "y_train", "x_test", "y_test")


def _read_npz(path):
    if not os.path.isfile(path):
        raise DataError("data.path", f"npz: no file {path!r}")
    try:
        with np.load(path, allow_pickle=False) as archive:
            if not hasattr(archive, "files"):
                raise DataError("data.path", f"npz: {path!r} holds a single array, not an .npz archive of "
                                             f"{', '.join(_NPZ_ARRAYS)}")
            missing = [k for k in _NPZ_ARRAYS if k not in archive.files]
            if missing:
                raise DataError("data.path", f"npz: {path!r} has no array{'s' if len(missing) > 1 else ''} "
                                             f"{', '.join(missing)} (it has: {', '.join(archive.files) or 'none'}); "
                                             f"it needs {', '.join(_NPZ_ARRAYS)}")
            arrays = {k: archive[k] for k in _NPZ_ARRAYS}
    except DataError:
        raise
    except (OSError, ValueError, EOFError) as e:
        raise DataError("data.path", f"npz: cannot read {path!r}: {e}") from None
    splits = []
    for part in ("train", "test"):
        x, y = arrays[f"x_{part}"], arrays[f"y_{part}"]
        if x.ndim == 3:       # (N, H, W) grayscale images get their channel axis
            x = x[..., None]
        if x.ndim not in (2, 4):
            raise DataError("data.path", f"npz: x_{part} in {path!r} is {_array_str(x)}; expected (N, D), "
                                         f"(N, H, W) or (N, H, W, C)")
        if not (np.issubdtype(x.dtype, np.floating) or np.issubdtype(x.dtype, np.integer)
                or x.dtype == np.bool_):
            raise DataError("data.path", f"npz: x_{part} in {path!r} is {_array_str(x)}; expected numbers")
        splits.append(Split(x, y))
    if splits[0].x.shape[1:] != splits[1].x.shape[1:]:
        raise DataError("data.path", f"npz: x_train is {_array_str(splits[0].x)} but x_test is "
                                     f"{_array_str(splits[1].x)} in {path!r}; one example's shape must match")
    return splits


def _array_str(a):
    return f"{a.dtype}[{', '.join(str(d) for d in a.shape)}]"


# ----- synthetic -------------------------------------------------------------------------------

def _synthetic_classification(seed, num_train, num_test, num_classes, input_dim):
    """Gaussian blobs: class k is N(center_k, I) in `input_dim` dimensions, with balanced classes;
    the centers, the training and the test examples each come from their own seeded stream."""
    centers_rng = np.random.default_rng([seed, _SYNTHETIC_STREAM, 0])
    # Centers at a typical distance of 6 noise standard deviations, whatever the dimension: far
    # enough that a small MLP reaches well over 90 %, close enough that it has to learn.
    centers = centers_rng.normal(size=(num_classes, input_dim)) * (6.0 / math.sqrt(2 * input_dim))

    def sample(stream, n):
        rng = np.random.default_rng([seed, _SYNTHETIC_STREAM, stream])
        y = rng.permutation(np.arange(n) % num_classes)
        x = centers[y] + rng.normal(size=(n, input_dim))
        return Split(x.astype(np.float32), y)

    return sample(1, num_train), sample(2, num_test)


def _synthetic_sequence(seed, num_train, num_test, num_classes, seq_len, vocab_size):
    """Token sequences whose label is how many times the marker token 0 occurs (0 to
    num_classes - 1, balanced); the other tokens are uniform over 1..vocab_size - 1. Counting
    needs every position, so a model cannot solve it from one token."""
    if num_classes - 1 > seq_len:
        raise DataError("data.num_classes", f"synthetic_sequence labels a sequence by how many marker tokens it "
                                            f"holds (0..num_classes-1), so num_classes {num_classes} needs "
                                            f"seq_len >= {num_classes - 1}, got seq_len {seq_len}")

    def sample(stream, n):
        rng = np.random.default_rng([seed, _SYNTHETIC_STREAM, stream])
        y = rng.permutation(np.arange(n) % num_classes)
        x = rng.integers(1, vocab_size, size=(n, seq_len))
        # a random permutation of 0..seq_len-1 per row; the positions holding the values below y[i]
        # (exactly y[i] of them, at random places) get the marker
        perm = np.argsort(rng.random((n, seq_len)), axis=1)
        x[perm < y[:, None]] = 0
        return Split(x.astype(np.int32), y)

    return sample(3, num_train), sample(4, num_test)


# ----- checks, hold-out, normalization ---------------------------------------------------------

def _plural(count, word):
    return f"{count:,} {word}" + ("" if count == 1 else "s")


def _check_split(name, split_name, split, num_classes, source=None, classes_key="data.num_classes"):
    """Check one split as read: labels (N,) whole numbers in [0, num_classes), as many as inputs,
    not empty, finite inputs. Messages name the array (x_train, y_test, ...) and its source."""
    x, y = split
    xs, ys = f"x_{split_name}", f"y_{split_name}"
    where = f"{name}: {ys}" if source is None else f"{name}: {ys} of {source!r}"
    if y.ndim != 1:
        hint = " (one-hot? store the class indices, e.g. y.argmax(-1))" if y.ndim == 2 else ""
        raise DataError("data.path", f"{where} is {_array_str(y)}; expected class indices of shape (N,){hint}")
    if len(x) != len(y):
        raise DataError("data.path", f"{where}: {_plural(len(x), 'input')} in {xs} but {_plural(len(y), 'label')} "
                                     f"in {ys}; they must match")
    if len(y) == 0:
        raise DataError("data.path", f"{where}: the {split_name} split is empty")
    if not (np.issubdtype(y.dtype, np.integer) or np.issubdtype(y.dtype, np.floating)):
        raise DataError("data.path", f"{where} is {_array_str(y)}; expected integer class indices")
    if np.issubdtype(y.dtype, np.floating):
        bad = ~(np.isfinite(y) & (y == np.round(y)))
        if bad.any():
            first = int(np.argmax(bad))
            raise DataError("data.path", f"{where} has {_plural(int(bad.sum()), 'non-integer label')} "
                                         f"(the first is {ys}[{first}] = {y[first].item()}); expected "
                                         f"class indices")
    low, high = y.min().item(), y.max().item()
    if low < 0:
        first = int(np.argmax(y < 0))
        raise DataError("data.path", f"{where} has {_plural(int((y < 0).sum()), 'negative label')} (the first is "
                                     f"{ys}[{first}] = {y[first].item()}); labels must be in [0, num_classes)")
    if high >= num_classes:
        first = int(np.argmax(y >= num_classes))
        fix = (f"set data.num_classes to at least {int(high) + 1} or fix the labels"
               if classes_key == "data.num_classes" else f"{name} has {num_classes} classes; the file is corrupt")
        raise DataError(classes_key, f"{where} has {_plural(int((y >= num_classes).sum()), 'label')} >= num_classes "
                                     f"{num_classes} (the first is {ys}[{first}] = {y[first].item()}, the largest "
                                     f"{high}); {fix}")
    if np.issubdtype(x.dtype, np.floating):
        bad = ~np.isfinite(x)
        if bad.any():
            rows = bad.reshape(len(x), -1).any(axis=1)
            where = f"{name}: {xs}" if source is None else f"{name}: {xs} of {source!r}"
            raise DataError("data.path", f"{where} has {_plural(int(bad.sum()), 'NaN or inf value')} in "
                                         f"{_plural(int(rows.sum()), 'example')} (the first is "
                                         f"{xs}[{int(np.argmax(rows))}])")


def _hold_out(train, fraction, seed):
    """Split `fraction` of the training examples off as validation, by a permutation seeded from
    the dataset seed; both parts keep the original order of their examples."""
    n_val = _held_out_count(len(train.y), fraction)
    if n_val == 0:
        return train, None
    order = np.random.default_rng([seed, _VALIDATION_STREAM]).permutation(len(train.y))
    val, rest = np.sort(order[:n_val]), np.sort(order[n_val:])
    return Split(train.x[rest], train.y[rest]), Split(train.x[val], train.y[val])


def _normalize(normalize, splits, scale_max, keep_integers):
    """Every split's inputs as float32, normalized with statistics of the training split (the
    first) only; or, with `keep_integers`, as int32 tokens untouched."""
    train = splits[0]
    if keep_integers:
        convert = lambda x: x.astype(np.int32)  # noqa: E731
    elif normalize == "none":
        convert = lambda x: x.astype(np.float32)  # noqa: E731
    elif normalize == "scale":
        top = scale_max if scale_max is not None else float(np.max(np.abs(train.x.astype(np.float64))))
        top = np.float32(top if top > 0 else 1.0)
        convert = lambda x: x.astype(np.float32) / top  # noqa: E731
    else:
        x64 = train.x.astype(np.float64)
        mean, std = x64.mean(axis=0), x64.std(axis=0)
        std = np.where(std > 0, std, 1.0)
        del x64
        convert = lambda x: ((x - mean) / std).astype(np.float32)  # noqa: E731
    return tuple(None if s is None else Split(convert(s.x), s.y.astype(np.int32)) for s in splits)


def _describe(name, train, validation, test, num_classes):
    parts = [f"{len(train.y):,} train"]
    if validation is not None:
        parts.append(f"{len(validation.y):,} validation")
    if test is not None:
        parts.append(f"{len(test.y):,} test")
    shape = _shape_str(train.x.shape[1:])
    if np.issubdtype(train.x.dtype, np.integer):
        shape = f"{shape} int32 tokens"
    return f"{name}: {' / '.join(parts)}, {shape}, {num_classes} classes"


def check_batch_size(ds, batch_size, eval_batch_size=None):
    """Check the batch sizes against dataset `ds` before a run starts: both positive integers, and
    a training batch no larger than the training split (a padded batch that is mostly padding is
    almost surely a mistake, and with drop_remainder an epoch would have no batch at all).

        >>> ds = load_data("synthetic_classification", num_train=100, num_test=10, validation_fraction=0)
        >>> check_batch_size(ds, 32, 64)
        >>> check_batch_size(ds, 128)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        train.data.DataError: data.batch_size: batch_size 128 is larger than the 100 training examples ...
    """
    _check_batch_size_value("data.batch_size", batch_size)
    if eval_batch_size is not None:
        _check_batch_size_value("data.eval_batch_size", eval_batch_size)
    n = len(ds.train.y)
    if batch_size > n:
        raise DataError("data.batch_size", f"batch_size {batch_size} is larger than the {n:,} training examples "
                                           f"of {ds.name or 'the dataset'}; set data.batch_size to at most {n}")


def _check_batch_size_value(key, value):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise DataError(key, f"must be a positive integer, got {value!r}")


# ----- the batch order -------------------------------------------------------------------------

def num_batches(num_examples, batch_size, drop_remainder=False):
    """How many batches of `batch_size` one epoch of `num_examples` has: the last partial batch is
    padded (counted) or, with `drop_remainder`, dropped.

        >>> num_batches(10, 4), num_batches(10, 4, drop_remainder=True), num_batches(8, 4)
        (3, 2, 2)
    """
    _check_batch_size_value("data.batch_size", batch_size)
    if drop_remainder:
        return num_examples // batch_size
    return -(-num_examples // batch_size)


def batches(split, batch_size, *, seed, epoch, start=0, shuffle=True, augment="none", drop_remainder=False):
    """The batches of one epoch of `split`, from batch index `start` on, as `(index, batch)` pairs.

    `batch` is `{"x": x[batch_size, ...], "y": int32[batch_size], "mask": float32[batch_size]}`; x
    keeps the split's dtype. The order is a pure function of `(seed, epoch, index)`: the epoch
    visits `np.random.default_rng([seed, epoch]).permutation(n)` (or 0..n-1 without `shuffle`), and
    batch `i`'s augmentation draws from `default_rng([seed, epoch, i, 1])`, so `start=k` yields
    exactly the batches a full iteration yields from index k on (resuming needs no iterator
    state). The last partial batch is padded to `batch_size` by repeating its first row, with mask
    0 on the padding, or dropped with `drop_remainder`. `augment="shift"` moves each image (H, W,
    C) by up to one pixel in each direction, filling with zeros. Arguments are checked here, not
    at the first batch.

        >>> split = Split(np.arange(5, dtype=np.float32)[:, None], np.arange(5, dtype=np.int32))
        >>> for i, b in batches(split, 2, seed=0, epoch=0, shuffle=False):
        ...     print(i, b["y"].tolist(), b["mask"].tolist())
        0 [0, 1] [1.0, 1.0]
        1 [2, 3] [1.0, 1.0]
        2 [4, 4] [1.0, 0.0]
    """
    x, y = split
    n = len(y)
    _check_batch_size_value("data.batch_size", batch_size)
    seed = _check_seed("run.seed", seed)
    if isinstance(epoch, bool) or not isinstance(epoch, (int, np.integer)) or epoch < 0:
        raise ValueError(f"batches: epoch must be a non-negative integer, got {epoch!r}")
    if augment not in AUGMENTATIONS:
        raise DataError("data.augment", f"unknown augmentation {augment!r}; choose one of {', '.join(AUGMENTATIONS)}")
    if augment == "shift" and x.ndim != 4:
        raise DataError("data.augment", f"'shift' moves images of shape (H, W, C), but one example here has shape "
                                        f"{tuple(x.shape[1:])}; use augment: none")
    total = num_batches(n, batch_size, drop_remainder)
    if isinstance(start, bool) or not isinstance(start, (int, np.integer)) or not 0 <= start <= total:
        raise ValueError(f"batches: start must be a batch index in [0, {total}] (the epoch has {total} batches "
                         f"of {batch_size} from {n} examples), got {start!r}")
    order = np.random.default_rng([seed, int(epoch)]).permutation(n) if shuffle else np.arange(n)
    return _epoch_batches(x, y, order, batch_size, seed, int(epoch), int(start), total, augment)


def _epoch_batches(x, y, order, batch_size, seed, epoch, start, total, augment):
    for i in range(start, total):
        idx = order[i * batch_size:(i + 1) * batch_size]
        real = len(idx)
        mask = np.zeros(batch_size, np.float32)
        mask[:real] = 1.0
        if real < batch_size:
            idx = np.concatenate([idx, np.full(batch_size - real, idx[0], idx.dtype)])
        bx = x[idx]
        if augment == "shift":
            bx = _random_shifts(np.random.default_rng([seed, epoch, i, _AUGMENT_STREAM]), bx)
        yield i, {"x": bx, "y": y[idx].astype(np.int32, copy=False), "mask": mask}


def _random_shifts(rng, images):
    """Each image (H, W, C) moved by -1, 0 or +1 pixel along each of H and W, with zeros filling
    the vacated edge; the offsets are drawn from `rng`, two per image."""
    n, h, w, _ = images.shape
    padded = np.pad(images, ((0, 0), (1, 1), (1, 1), (0, 0)))
    dy, dx = rng.integers(0, 3, n), rng.integers(0, 3, n)
    rows = (dy[:, None] + np.arange(h))[:, :, None]
    cols = (dx[:, None] + np.arange(w))[:, None, :]
    return padded[np.arange(n)[:, None, None], rows, cols]


# ----- prefetching -----------------------------------------------------------------------------

# the trainer's batches travel from the prefetch thread in groups of about this size and at most
# this many batches (Prefetcher): the thread runs ahead by up to `data.prefetch` groups, and tiny
# batches (a few hundred bytes) would otherwise make groups of thousands
PREFETCH_GROUP_BYTES = 1 << 20
PREFETCH_GROUP_ITEMS = 32


def on_device(items):
    """The `(..., batch)` tuples of `items` (`(index, batch)` pairs, say) with each batch's arrays
    put on the default device.

    Run inside the `Prefetcher`'s thread, the host-to-device copy overlaps the step, and the step
    receives device Arrays, which jit's pytree fast path serves without converting anything
    (core/api.py); NumPy batches would take the general path, ~100 us a call for the digits MLP.

        >>> [(i, type(b["x"]).__name__) for i, b in on_device([(0, {"x": np.zeros(2)})])]
        [(0, 'Array')]
    """
    import core   # here, not at the top: data.py is usable without building a device client
    for *head, batch in items:
        yield (*head, {k: core.device_put(v) for k, v in batch.items()})


def _array_bytes(item):
    """Bytes of the arrays in `item` (an array, or a tuple, list or dict holding them)."""
    if isinstance(item, np.ndarray):
        return item.nbytes
    if hasattr(item, "aval") and hasattr(item, "nbytes"):   # a core.Array (a batch already on the device)
        return item.nbytes
    if isinstance(item, (tuple, list)):
        return sum(_array_bytes(x) for x in item)
    if isinstance(item, dict):
        return sum(_array_bytes(x) for x in item.values())
    return 0


class _Done:
    """The producer's last item: the end of the iterable, or the exception that ended it."""

    def __init__(self, error=None):
        self.error = error


class Prefetcher:
    """Iterate `iterable` on a background daemon thread into a queue of at most `size` items, so
    the next batches are built while the device computes; yields the items in order.

    With `group_bytes`, the thread hands items over in groups (lists, each `size` counting one)
    holding up to that many bytes of NumPy arrays (and at most `group_items` items), at least one
    item each: a
    fast consumer then pays one thread switch per group instead of per item. That matters for
    small batches: with the digits MLP (a step of ~0.3 ms), handing batches over one by one cost
    a third of a step in locks, wake-ups and GIL hand-offs (bench/RESULTS.md, "Trainer (issue
    14)"); batches as large as the budget still go one at a time.

    An exception raised by the producer is raised again in the consumer, with the producer's
    traceback, after the items made before it. `close()` (or leaving the `with` block) stops the
    thread promptly, also while it is blocked on a full queue, and closes the iterable if it is
    a generator. `size=0` means no thread: plain iteration in the caller's thread.

        >>> with Prefetcher(range(5), size=2) as items:
        ...     list(items)
        [0, 1, 2, 3, 4]
    """

    _POLL_S = 0.05   # how often a blocked producer or consumer looks at the stop flag

    def __init__(self, iterable, size=2, group_bytes=None, group_items=None):
        if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 0:
            raise DataError("data.prefetch", f"must be a non-negative integer, got {size!r}")
        if group_bytes is not None and (isinstance(group_bytes, bool) or not isinstance(group_bytes, (int, np.integer))
                                        or group_bytes < 1):
            raise ValueError(f"Prefetcher: group_bytes must be a positive integer or None, got {group_bytes!r}")
        self._size = int(size)
        self._group_bytes = group_bytes
        if group_items is not None and (isinstance(group_items, bool) or not isinstance(group_items, (int, np.integer))
                                        or group_items < 1):
            raise ValueError(f"Prefetcher: group_items must be a positive integer or None, got {group_items!r}")
        self._group_items = group_items or float("inf")
        self._iterable = iterable
        self._stop = threading.Event()
        self._finished = False
        self._ready = collections.deque()   # the rest of the group being consumed
        if self._size == 0:
            self._iterator = iter(iterable)
            self._thread = None
            return
        self._queue = queue.Queue(maxsize=self._size)
        self._thread = threading.Thread(target=self._produce, name="train-data-prefetch", daemon=True)
        self._thread.start()

    def _put(self, item):
        """Put `item`, waiting for room; False when stopped before there was room."""
        while not self._stop.is_set():
            try:
                self._queue.put(item, timeout=self._POLL_S)
                return True
            except queue.Full:
                continue
        return False

    def _produce(self):
        iterator, group, nbytes = None, [], 0
        try:
            iterator = iter(self._iterable)
            for item in iterator:
                if self._group_bytes is None:
                    if not self._put(item):
                        return
                    continue
                group.append(item)
                nbytes += _array_bytes(item)
                if nbytes >= self._group_bytes or len(group) >= self._group_items:
                    if not self._put(group):
                        return
                    group, nbytes = [], 0
            if group and not self._put(group):
                return
            self._put(_Done())
        except BaseException as e:  # noqa: BLE001 -- handed to the consumer, which re-raises it
            if not group or self._put(group):
                self._put(_Done(e))
        finally:
            close = getattr(iterator, "close", None)
            if close is not None and self._stop.is_set():
                try:
                    close()
                except Exception:  # noqa: BLE001 -- stopping; the consumer no longer wants its items
                    pass

    def __iter__(self):
        return self

    def __next__(self):
        if self._ready:
            return self._ready.popleft()
        if self._finished:
            raise StopIteration
        if self._thread is None:
            try:
                return next(self._iterator)
            except BaseException:
                self._finished = True
                raise
        while True:
            try:
                item = self._queue.get(timeout=self._POLL_S)
                break
            except queue.Empty:
                if self._stop.is_set() or not self._thread.is_alive() and self._queue.empty():
                    self._finished = True
                    raise StopIteration from None
        if isinstance(item, _Done):
            self._finished = True
            if item.error is not None:
                raise item.error
            raise StopIteration
        if self._group_bytes is None:
            return item
        self._ready.extend(item)
        return self._ready.popleft()

    def close(self):
        """Stop the producer thread and wait for it (it exits within one poll of the stop flag
        unless the iterable itself is blocked); further iteration ends at once."""
        self._finished = True
        self._ready.clear()
        self._stop.set()
        if self._thread is None:
            close = getattr(self._iterator, "close", None)
            if close is not None:
                close()
            return
        # drop what is queued so a producer blocked on put sees room, then the stop flag
        while True:
            try:
                self._queue.get_nowait()
            except queue.Empty:
                break
        if self._thread is not threading.current_thread():
            self._thread.join(timeout=10 * self._POLL_S + 1.0)

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()
        return False
