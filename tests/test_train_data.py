"""train/data.py: datasets (issue 14 item 4), the batch order (docs/reliability.md T9) and the
prefetcher. The oracles are independent: the CSV read with np.loadtxt, IDX files written here with
struct, statistics in float64, permutations from NumPy directly, and Python loops."""
import doctest
import gzip
import os
import pickle
import struct
import threading
import traceback

import numpy as np
import pytest

import train.data as data_module
from train.data import (DataError, Dataset, Prefetcher, Split, batches, check_batch_size, load_data,
                        num_batches)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DIGITS_CSV = os.path.join(ROOT, "examples", "data", "digits.csv.gz")


def test_docstring_examples_run():
    result = doctest.testmod(data_module)
    assert result.attempted >= 8 and result.failed == 0


def test_data_error_carries_key_and_message_and_pickles():
    err = DataError("data.path", "no file 'x'")
    assert (err.key, err.message, str(err)) == ("data.path", "no file 'x'", "data.path: no file 'x'")
    assert isinstance(err, ValueError)
    again = pickle.loads(pickle.dumps(err))
    assert (again.key, again.message) == (err.key, err.message)


# ----- digits (item 4) --------------------------------------------------------------------------

def _digits_oracle():
    with gzip.open(DIGITS_CSV, "rt") as f:
        table = np.loadtxt(f, delimiter=",", dtype=np.int64)
    # examples/digits_convnet.py's split: default_rng(0), the first 1,347 train, the rest test
    order = np.random.default_rng(0).permutation(len(table))
    return table[order[:1347]], table[order[1347:]]


def _sorted_rows(x, y):
    rows = np.concatenate([x.reshape(len(x), -1), y[:, None]], axis=1)
    return rows[np.lexsort(rows.T[::-1])]


def test_digits_split_sizes_values_and_the_fixed_test_set():
    train_rows, test_rows = _digits_oracle()
    ds = load_data("digits", normalize="none")
    assert isinstance(ds, Dataset) and ds.task == "classification" and ds.num_classes == 10
    assert (len(ds.train.y), len(ds.validation.y), len(ds.test.y)) == (1212, 135, 450)
    assert ds.input_shape == (8, 8, 1) and ds.input_dtype == np.float32
    assert ds.description == "digits: 1,212 train / 135 validation / 450 test, 8x8x1, 10 classes"
    # the test set is exactly the example's, in its order
    np.testing.assert_array_equal(ds.test.x.reshape(450, 64), test_rows[:, :64])
    np.testing.assert_array_equal(ds.test.y, test_rows[:, 64])
    # train and validation together are the example's training part, each example once
    both_x = np.concatenate([ds.train.x, ds.validation.x])
    both_y = np.concatenate([ds.train.y, ds.validation.y])
    np.testing.assert_array_equal(_sorted_rows(both_x, both_y), _sorted_rows(train_rows[:, :64], train_rows[:, 64]))
    for split in (ds.train, ds.validation, ds.test):
        assert split.x.dtype == np.float32 and split.y.dtype == np.int32
        assert split.x.min() == 0 and split.x.max() == 16 and set(np.unique(split.y)) == set(range(10))


def test_digits_test_set_ignores_the_data_seed_and_validation_follows_it():
    a = load_data("digits", seed=0)
    b = load_data("digits", seed=7)
    np.testing.assert_array_equal(a.test.x, b.test.x)
    assert not np.array_equal(a.validation.y, b.validation.y) or not np.array_equal(a.validation.x, b.validation.x)
    again = load_data("digits", seed=7)
    np.testing.assert_array_equal(b.validation.x, again.validation.x)
    np.testing.assert_array_equal(b.train.x, again.train.x)


def test_digits_fractions_and_scale():
    ds = load_data("digits", validation_fraction=0)
    assert ds.validation is None and (len(ds.train.y), len(ds.test.y)) == (1347, 450)
    assert ds.description == "digits: 1,347 train / 450 test, 8x8x1, 10 classes"
    assert float(ds.train.x.max()) == 1.0 and float(ds.train.x.min()) == 0.0
    raw = load_data("digits", validation_fraction=0, normalize="none")
    np.testing.assert_array_equal(ds.train.x, raw.train.x / np.float32(16))
    ds = load_data("digits", validation_fraction=0, test_fraction=0)
    assert ds.test is None and len(ds.train.y) == 1797


# ----- IDX: mnist and fashion_mnist (item 4) -----------------------------------------------------

def _idx_bytes(array, magic):
    return struct.pack(f">{1 + array.ndim}I", magic, *array.shape) + array.astype(np.uint8).tobytes()


def _write(path, payload, compress):
    if compress:
        with gzip.open(str(path) + ".gz", "wb") as f:
            f.write(payload)
    else:
        with open(path, "wb") as f:
            f.write(payload)


def _write_mnist(directory, rng, n_train=12, n_test=5, compress=(False, True, True, False)):
    images = {part: rng.integers(0, 256, (n, 28, 28)) for part, n in (("train", n_train), ("t10k", n_test))}
    labels = {part: rng.integers(0, 10, len(images[part])) for part in images}
    files = [("train-images-idx3-ubyte", _idx_bytes(images["train"], 0x803)),
             ("train-labels-idx1-ubyte", _idx_bytes(labels["train"], 0x801)),
             ("t10k-images-idx3-ubyte", _idx_bytes(images["t10k"], 0x803)),
             ("t10k-labels-idx1-ubyte", _idx_bytes(labels["t10k"], 0x801))]
    for (name, payload), gz in zip(files, compress):
        _write(directory / name, payload, gz)
    return images, labels


@pytest.mark.parametrize("name", ["mnist", "fashion_mnist"])
def test_idx_round_trip_plain_and_gzip(tmp_path, rng, name):
    images, labels = _write_mnist(tmp_path, rng)
    ds = load_data(name, tmp_path, validation_fraction=0, normalize="none")
    assert ds.input_shape == (28, 28, 1) and ds.num_classes == 10
    np.testing.assert_array_equal(ds.train.x[..., 0], images["train"])
    np.testing.assert_array_equal(ds.train.y, labels["train"])
    np.testing.assert_array_equal(ds.test.x[..., 0], images["t10k"])
    np.testing.assert_array_equal(ds.test.y, labels["t10k"])
    scaled = load_data(name, str(tmp_path), validation_fraction=0)
    np.testing.assert_allclose(scaled.test.x[..., 0], images["t10k"] / 255.0, rtol=1e-6)
    assert scaled.test.x.dtype == np.float32


def _mnist_error(tmp_path):
    with pytest.raises(DataError) as info:
        load_data("mnist", tmp_path)
    assert info.value.key == "data.path"
    return info.value.message


def test_idx_bad_magic(tmp_path, rng):
    _write_mnist(tmp_path, rng, compress=(False,) * 4)
    payload = bytearray((tmp_path / "train-labels-idx1-ubyte").read_bytes())
    payload[2:4] = b"\x08\x03"        # an images magic number in a labels file
    (tmp_path / "train-labels-idx1-ubyte").write_bytes(bytes(payload))
    message = _mnist_error(tmp_path)
    assert "train-labels-idx1-ubyte" in message and "magic number 0x00000803, expected 0x00000801" in message


def test_idx_count_mismatch(tmp_path, rng):
    _write_mnist(tmp_path, rng, compress=(False,) * 4)
    _write(tmp_path / "t10k-labels-idx1-ubyte", _idx_bytes(rng.integers(0, 10, 4), 0x801), False)
    message = _mnist_error(tmp_path)
    assert "holds 5 images" in message and "holds 4 labels" in message and "t10k-labels-idx1-ubyte" in message


@pytest.mark.parametrize("compress", [False, True])
def test_idx_truncated(tmp_path, rng, compress):
    _write_mnist(tmp_path, rng, compress=(False,) * 4)
    payload = (tmp_path / "train-images-idx3-ubyte").read_bytes()
    os.remove(tmp_path / "train-images-idx3-ubyte")
    _write(tmp_path / "train-images-idx3-ubyte", payload[:-100], compress)
    message = _mnist_error(tmp_path)
    assert "train-images-idx3-ubyte" in message and "truncated" in message
    assert f"{12 * 784:,} bytes of data" in message and f"holds {12 * 784 - 100:,}" in message


def test_idx_truncated_gzip_stream_and_short_header_and_trailing_data(tmp_path, rng):
    _write_mnist(tmp_path, rng, compress=(True, False, False, False))
    gz = (tmp_path / "train-images-idx3-ubyte.gz").read_bytes()
    (tmp_path / "train-images-idx3-ubyte.gz").write_bytes(gz[:len(gz) // 2])
    message = _mnist_error(tmp_path)
    assert "cannot read" in message and "train-images-idx3-ubyte.gz" in message
    (tmp_path / "train-images-idx3-ubyte.gz").unlink()
    (tmp_path / "train-images-idx3-ubyte").write_bytes(struct.pack(">2I", 0x803, 12))
    assert "shorter than an IDX images header (16 bytes)" in _mnist_error(tmp_path)
    (tmp_path / "train-images-idx3-ubyte").write_bytes(_idx_bytes(rng.integers(0, 256, (12, 28, 28)), 0x803) + b"x")
    assert "data after the 12 images" in _mnist_error(tmp_path)


def test_idx_implausible_header_is_refused_before_allocating(tmp_path, rng):
    _write_mnist(tmp_path, rng, compress=(False,) * 4)
    (tmp_path / "train-images-idx3-ubyte").write_bytes(struct.pack(">4I", 0x803, 12, 0, 28))
    assert "implausible image size 0x28" in _mnist_error(tmp_path)
    # 4 billion 28x28 images: refused from the header, not by trying to read them
    (tmp_path / "train-images-idx3-ubyte").write_bytes(struct.pack(">4I", 0x803, 0xFFFFFFFF, 28, 28))
    assert "header is corrupt" in _mnist_error(tmp_path)


def test_idx_labels_out_of_range(tmp_path, rng):
    _write_mnist(tmp_path, rng, compress=(False,) * 4)
    _write(tmp_path / "t10k-labels-idx1-ubyte", _idx_bytes(np.array([1, 2, 12, 3, 4]), 0x801), False)
    message = _mnist_error(tmp_path)
    assert "y_test" in message and "1 label >= num_classes 10" in message and "y_test[2] = 12" in message
    assert "the file is corrupt" in message


def test_idx_missing_file_and_missing_path(tmp_path, rng):
    _write_mnist(tmp_path, rng)
    os.remove(tmp_path / "t10k-images-idx3-ubyte.gz")
    message = _mnist_error(tmp_path)
    assert "t10k-images-idx3-ubyte" in message and "t10k-images-idx3-ubyte.gz" in message
    assert str(tmp_path) in message
    with pytest.raises(DataError) as info:
        load_data("fashion_mnist")
    assert info.value.key == "data.path" and "nothing is downloaded" in info.value.message
    with pytest.raises(DataError) as info:
        load_data("mnist", tmp_path / "nowhere")
    assert "is not a directory" in info.value.message and "nowhere" in info.value.message


# ----- npz (item 4) -------------------------------------------------------------------------------

def _npz(tmp_path, **arrays):
    path = tmp_path / "data.npz"
    np.savez(path, **arrays)
    return path


def test_npz_shapes_are_normalized_to_examples(tmp_path, rng):
    x_train, x_test = rng.integers(0, 256, (20, 5, 6)).astype(np.uint8), rng.integers(0, 256, (7, 5, 6))
    y_train, y_test = rng.integers(0, 3, 20), rng.integers(0, 3, 7)
    path = _npz(tmp_path, x_train=x_train, y_train=y_train, x_test=x_test.astype(np.uint8), y_test=y_test)
    ds = load_data("npz", path, num_classes=3, validation_fraction=0)
    assert ds.input_shape == (5, 6, 1) and ds.input_dtype == np.float32 and ds.num_classes == 3
    top = max(float(x_train.max()), 1.0)   # scale: the largest |x| of the training split
    np.testing.assert_allclose(ds.test.x[..., 0], x_test / top, rtol=1e-6)
    np.testing.assert_array_equal(ds.test.y, y_test)
    # (N, D) stays (N, D); (N, H, W, C) stays as it is
    for shape in ((20, 9), (20, 4, 4, 3)):
        xs = rng.normal(size=shape).astype(np.float32)
        path = _npz(tmp_path, x_train=xs, y_train=y_train, x_test=xs[:7], y_test=y_test)
        assert load_data("npz", path, num_classes=3).input_shape == shape[1:]
    # integer inputs with normalize none stay integers (tokens)
    path = _npz(tmp_path, x_train=x_train, y_train=y_train, x_test=x_test, y_test=y_test)
    assert load_data("npz", path, num_classes=3, normalize="none").input_dtype == np.int32


def _npz_error(path, **kwargs):
    with pytest.raises(DataError) as info:
        load_data("npz", path, **kwargs)
    return info.value


def test_npz_missing_arrays_are_named(tmp_path):
    path = _npz(tmp_path, x_train=np.zeros((4, 2)), y_train=np.zeros(4, int), images=np.zeros(3))
    err = _npz_error(path)
    assert err.key == "data.path"
    assert "no arrays x_test, y_test" in err.message and "it has: " in err.message and "images" in err.message
    assert _npz_error(tmp_path / "absent.npz").message.startswith("npz: no file")


def test_npz_object_arrays_are_refused(tmp_path):
    objects = np.empty(4, dtype=object)
    path = _npz(tmp_path, x_train=objects, y_train=np.zeros(4, int), x_test=objects, y_test=np.zeros(4, int))
    err = _npz_error(path)
    assert err.key == "data.path" and "cannot read" in err.message and "pickle" in err.message.lower()


def _bad_npz(tmp_path, x_train=None, y_train=None, **kwargs):
    x_train = np.ones((6, 3), np.float32) if x_train is None else x_train
    y_train = np.arange(6) % 3 if y_train is None else y_train
    path = _npz(tmp_path, x_train=x_train, y_train=y_train, x_test=np.ones((2, 3), np.float32),
                y_test=np.array([0, 1]))
    return _npz_error(path, num_classes=3, **kwargs)


def test_npz_validation_errors(tmp_path):
    err = _bad_npz(tmp_path, x_train=np.ones(6, np.float32))
    assert "x_train" in err.message and "float32[6]" in err.message and "(N, D)" in err.message
    err = _bad_npz(tmp_path, x_train=np.ones((5, 3), np.float32))
    assert "5 inputs in x_train but 6 labels in y_train" in err.message and "data.npz" in err.message
    err = _bad_npz(tmp_path, x_train=np.ones((0, 3), np.float32), y_train=np.zeros(0, int))
    assert "the train split is empty" in err.message
    err = _bad_npz(tmp_path, y_train=np.array([0, 1, -2, 1, -1, 0]))
    assert err.key == "data.path" and "2 negative labels" in err.message and "y_train[2] = -2" in err.message
    err = _bad_npz(tmp_path, y_train=np.array([0, 1, 2, 3, 7, 0]))
    assert err.key == "data.num_classes"
    assert "2 labels >= num_classes 3" in err.message and "y_train[3] = 3" in err.message
    assert "the largest 7" in err.message and "at least 8" in err.message
    err = _bad_npz(tmp_path, y_train=np.eye(3)[np.arange(6) % 3])
    assert "one-hot" in err.message and "float64[6, 3]" in err.message
    err = _bad_npz(tmp_path, y_train=np.array([0, 1, 2.5, 0, 1, 2]))
    assert "has 1 non-integer label (the first is" in err.message and "y_train[2] = 2.5" in err.message
    x = np.ones((6, 3), np.float32)
    x[1, 2], x[4, 0], x[4, 1] = np.nan, np.inf, -np.inf
    err = _bad_npz(tmp_path, x_train=x)
    assert "x_train of" in err.message
    assert "3 NaN or inf values in 2 examples (the first is x_train[1])" in err.message
    # whole-number float labels are accepted and become int32
    path = _npz(tmp_path, x_train=np.ones((6, 3)), y_train=np.arange(6.0) % 3, x_test=np.ones((2, 3)),
                y_test=np.array([0.0, 2.0]))
    assert load_data("npz", path, num_classes=3).train.y.dtype == np.int32


# ----- synthetic sets (item 4) -------------------------------------------------------------------

def test_synthetic_classification_shapes_determinism_and_learnability():
    ds = load_data("synthetic_classification", validation_fraction=0)
    assert ds.train.x.shape == (2048, 20) and ds.test.x.shape == (512, 20) and ds.input_dtype == np.float32
    np.testing.assert_array_equal(np.bincount(ds.train.y), [2048 // 10 + (k < 8) for k in range(10)])
    again = load_data("synthetic_classification", validation_fraction=0)
    np.testing.assert_array_equal(ds.train.x, again.train.x)
    np.testing.assert_array_equal(ds.test.y, again.test.y)
    other = load_data("synthetic_classification", seed=1, validation_fraction=0)
    assert not np.array_equal(ds.train.x, other.train.x)
    # learnable: a nearest-centroid classifier (a linear model) is already well over 90 %
    centroids = np.stack([ds.train.x[ds.train.y == k].mean(0) for k in range(10)])
    pred = ((ds.test.x[:, None] - centroids[None]) ** 2).sum(-1).argmin(1)
    assert (pred == ds.test.y).mean() > 0.9
    small = load_data("synthetic_classification", num_train=30, num_test=6, num_classes=3, input_dim=4)
    assert small.train.x.shape == (27, 4) and small.validation.x.shape == (3, 4) and small.num_classes == 3


def test_synthetic_sequence_label_is_the_marker_count():
    ds = load_data("synthetic_sequence", num_train=300, num_test=50, validation_fraction=0)
    assert ds.train.x.shape == (300, 16) and ds.train.x.dtype == np.int32 and ds.input_dtype == np.int32
    assert ds.description == "synthetic_sequence: 300 train / 50 test, 16 int32 tokens, 10 classes"
    for split in (ds.train, ds.test):
        assert split.x.min() >= 0 and split.x.max() < 32
        np.testing.assert_array_equal((split.x == 0).sum(axis=1), split.y)
    assert set(np.unique(ds.train.y)) == set(range(10))
    again = load_data("synthetic_sequence", num_train=300, num_test=50, validation_fraction=0,
                      normalize="standardize")   # tokens are never normalized
    np.testing.assert_array_equal(ds.train.x, again.train.x)
    other = load_data("synthetic_sequence", num_train=300, num_test=50, seed=3)
    assert not np.array_equal(ds.test.x, other.test.x)
    with pytest.raises(DataError) as info:
        load_data("synthetic_sequence", num_classes=20, seq_len=8)
    assert info.value.key == "data.num_classes" and "seq_len >= 19" in info.value.message


# ----- normalization (item 4) --------------------------------------------------------------------

def test_normalization_statistics_come_from_the_training_split_only(tmp_path, rng):
    x_train = rng.normal(3.0, 2.0, (40, 4)).astype(np.float32)   # float32: normalize "none" is exact
    x_train[:, 3] = 5.0                       # a constant feature: std 0 counts as 1
    x_test = rng.normal(-10.0, 9.0, (10, 4)).astype(np.float32)  # another distribution: must not leak in
    y = np.arange(50) % 2
    path = _npz(tmp_path, x_train=x_train, y_train=y[:40], x_test=x_test, y_test=y[40:])
    raw = load_data("npz", path, num_classes=2, normalize="none", validation_fraction=0.25)
    assert (len(raw.train.y), len(raw.validation.y)) == (30, 10)
    train_part = raw.train.x.astype(np.float64)  # the training split without the validation rows
    mean, std = train_part.mean(0), train_part.std(0)
    std[3] = 1.0
    assert not np.allclose(mean, x_train.mean(0))   # the hold-out changes the statistics
    ds = load_data("npz", path, num_classes=2, normalize="standardize", validation_fraction=0.25)
    for normalized, original in ((ds.train, raw.train), (ds.validation, raw.validation), (ds.test, Split(x_test, 0))):
        np.testing.assert_allclose(normalized.x, (original.x - mean) / std, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(ds.train.x[:, 3], 0)
    scaled = load_data("npz", path, num_classes=2, normalize="scale", validation_fraction=0.25)
    top = np.abs(train_part).max()
    np.testing.assert_allclose(scaled.validation.x, raw.validation.x / top, rtol=1e-6)
    np.testing.assert_allclose(scaled.test.x, x_test / top, rtol=1e-6)
    assert np.abs(scaled.train.x).max() == 1.0 and np.abs(scaled.test.x).max() > 1.0


def test_unknown_names_are_data_errors():
    for kwargs, key in ((dict(name="cifar"), "data.name"), (dict(name="digits", normalize="minmax"), "data.normalize"),
                        (dict(name="digits", validation_fraction=1.0), "data.validation_fraction"),
                        (dict(name="digits", test_fraction=-0.1), "data.test_fraction"),
                        (dict(name="digits", seed=-1), "data.seed"),
                        (dict(name="synthetic_classification", num_train=0), "data.num_train")):
        with pytest.raises(DataError) as info:
            load_data(**kwargs)
        assert info.value.key == key, kwargs
    with pytest.raises(DataError) as info:
        load_data("synthetic_classification", num_train=1, validation_fraction=0.5)
    assert "leaves no training examples" in info.value.message


# ----- check_batch_size ----------------------------------------------------------------------------

def _tiny_dataset(n=10):
    return load_data("synthetic_classification", num_train=n, num_test=3, num_classes=2, input_dim=2,
                     validation_fraction=0)


def test_check_batch_size():
    ds = _tiny_dataset(10)
    check_batch_size(ds, 10, 64)   # a batch as large as the training split is fine; eval batches are padded
    with pytest.raises(DataError) as info:
        check_batch_size(ds, 11)
    assert info.value.key == "data.batch_size"
    assert "batch_size 11 is larger than the 10 training examples of synthetic_classification" in info.value.message
    for bad in (0, -3, 2.0, True, "8"):
        with pytest.raises(DataError) as info:
            check_batch_size(ds, bad)
        assert info.value.key == "data.batch_size" and "positive integer" in info.value.message
    with pytest.raises(DataError) as info:
        check_batch_size(ds, 4, 0)
    assert info.value.key == "data.eval_batch_size"


# ----- the batch order (docs/reliability.md T9) ----------------------------------------------------

def _index_split(n, shape=()):
    """A split whose every input is filled with its own row number, so a batch shows which rows
    it holds; labels are row number * 10."""
    x = np.broadcast_to(np.arange(n, dtype=np.float32).reshape((n,) + (1,) * len(shape)), (n,) + shape).copy()
    return Split(x, np.arange(n, dtype=np.int32) * 10)


def test_num_batches():
    assert [num_batches(n, 4) for n in (1, 4, 5, 8, 9)] == [1, 1, 2, 2, 3]
    assert [num_batches(n, 4, drop_remainder=True) for n in (1, 4, 5, 8, 9)] == [0, 1, 1, 2, 2]
    with pytest.raises(DataError):
        num_batches(5, 0)


@pytest.mark.parametrize("n,batch_size", [(10, 4), (12, 4), (3, 5)])
def test_an_epoch_covers_every_example_once_and_pads_with_masked_rows(n, batch_size):
    split = _index_split(n, (2,))
    seen, count = [], 0
    for index, batch in batches(split, batch_size, seed=3, epoch=1):
        assert index == count
        count += 1
        assert batch["x"].shape == (batch_size, 2) and batch["x"].dtype == np.float32
        assert batch["y"].shape == (batch_size,) and batch["y"].dtype == np.int32
        assert batch["mask"].dtype == np.float32 and set(batch["mask"].tolist()) <= {0.0, 1.0}
        rows = batch["x"][:, 0].astype(int)
        np.testing.assert_array_equal(batch["y"], rows * 10)      # x and y stay paired
        real = batch["mask"] == 1
        seen.extend(rows[real].tolist())
        # the padding repeats the batch's first row and comes last
        assert np.all(real[:real.sum()]) and np.all(rows[~real] == rows[0])
    assert count == -(-n // batch_size)
    assert sorted(seen) == list(range(n)) and len(seen) == n   # mask sum == n: every example exactly once
    # the order is the documented permutation
    np.testing.assert_array_equal(seen, np.random.default_rng([3, 1]).permutation(n))


def test_drop_remainder_and_no_shuffle():
    split = _index_split(10)
    got = [(i, b["x"].astype(int).tolist(), b["mask"].tolist())
           for i, b in batches(split, 4, seed=0, epoch=5, shuffle=False, drop_remainder=True)]
    assert got == [(0, [0, 1, 2, 3], [1.0] * 4), (1, [4, 5, 6, 7], [1.0] * 4)]
    assert list(batches(split, 11, seed=0, epoch=0, drop_remainder=True)) == []


def _collect(iterator):
    return [(i, {k: v.copy() for k, v in b.items()}) for i, b in iterator]


def _assert_same_batches(a, b):
    assert [i for i, _ in a] == [i for i, _ in b]
    for (_, x), (_, y) in zip(a, b):
        assert x.keys() == y.keys()
        for key in x:
            np.testing.assert_array_equal(x[key], y[key])
            assert x[key].dtype == y[key].dtype


@pytest.mark.parametrize("augment", ["none", "shift"])
def test_start_k_yields_exactly_the_rest_of_the_full_epoch(rng, augment):
    images = rng.integers(1, 9, (11, 4, 4, 1)).astype(np.float32)
    split = Split(images, np.arange(11, dtype=np.int32))
    full = _collect(batches(split, 3, seed=9, epoch=2, augment=augment))
    assert len(full) == 4
    for k in range(len(full) + 1):
        _assert_same_batches(_collect(batches(split, 3, seed=9, epoch=2, start=k, augment=augment)), full[k:])


def test_order_depends_on_seed_and_epoch_only():
    split = _index_split(50)

    def order(seed, epoch):
        return np.concatenate([b["x"] for _, b in batches(split, 8, seed=seed, epoch=epoch)])[:50].astype(int)

    np.testing.assert_array_equal(order(1, 0), order(1, 0))
    assert not np.array_equal(order(1, 0), order(1, 1))
    assert not np.array_equal(order(1, 0), order(2, 0))
    np.testing.assert_array_equal(order(1, 4), np.random.default_rng([1, 4]).permutation(50))


def _shift_oracle(image, dy, dx):
    """`image` (H, W, C) moved by (dy, dx) in {-1, 0, 1}^2 with zero fill, by a plain loop."""
    h, w, _ = image.shape
    out = np.zeros_like(image)
    for r in range(h):
        for c in range(w):
            if 0 <= r - dy < h and 0 <= c - dx < w:
                out[r, c] = image[r - dy, c - dx]
    return out


def test_shift_augmentation_is_a_seeded_one_pixel_shift(rng):
    images = rng.integers(1, 9, (20, 5, 6, 2)).astype(np.float32)   # no zeros: shifts are distinguishable
    split = Split(images, np.arange(20, dtype=np.int32))
    plain = _collect(batches(split, 8, seed=4, epoch=3))
    shifted = _collect(batches(split, 8, seed=4, epoch=3, augment="shift"))
    offsets = []
    for (_, p), (i, s) in zip(plain, shifted):
        np.testing.assert_array_equal(p["y"], s["y"])       # augmentation never changes which examples
        np.testing.assert_array_equal(p["mask"], s["mask"])
        for original, moved in zip(p["x"], s["x"]):
            matches = [(dy, dx) for dy in (-1, 0, 1) for dx in (-1, 0, 1)
                       if np.array_equal(moved, _shift_oracle(original, dy, dx))]
            assert len(matches) == 1
            offsets.append(matches[0])
    assert len(set(offsets)) > 4                         # the shifts vary
    _assert_same_batches(shifted, _collect(batches(split, 8, seed=4, epoch=3, augment="shift")))
    other_epoch = _collect(batches(split, 8, seed=4, epoch=4, augment="shift", shuffle=False))
    same_epoch = _collect(batches(split, 8, seed=4, epoch=3, augment="shift", shuffle=False))
    assert any(not np.array_equal(a[1]["x"], b[1]["x"]) for a, b in zip(other_epoch, same_epoch))


def test_batches_keep_integer_tokens():
    ds = load_data("synthetic_sequence", num_train=20, num_test=4, validation_fraction=0)
    _, batch = next(iter(batches(ds.train, 8, seed=0, epoch=0)))
    assert batch["x"].dtype == np.int32 and batch["x"].shape == (8, 16)


def test_batches_argument_errors_are_raised_at_the_call():
    split = _index_split(10, (3,))
    with pytest.raises(DataError) as info:
        batches(split, 4, seed=0, epoch=0, augment="shift")
    assert info.value.key == "data.augment" and "(3,)" in info.value.message and "augment: none" in info.value.message
    with pytest.raises(DataError) as info:
        batches(split, 4, seed=0, epoch=0, augment="flip")
    assert info.value.key == "data.augment" and "'flip'" in info.value.message and "shift" in info.value.message
    with pytest.raises(DataError) as info:
        batches(split, 0, seed=0, epoch=0)
    assert info.value.key == "data.batch_size"
    with pytest.raises(DataError) as info:
        batches(split, 4, seed=-1, epoch=0)
    assert info.value.key == "run.seed"
    with pytest.raises(ValueError, match=r"start must be a batch index in \[0, 3\]"):
        batches(split, 4, seed=0, epoch=0, start=4)
    with pytest.raises(ValueError, match="epoch must be a non-negative integer"):
        batches(split, 4, seed=0, epoch=-1)
    assert list(batches(split, 4, seed=0, epoch=0, start=3)) == []   # resuming at the epoch's end


# ----- Prefetcher -----------------------------------------------------------------------------------

@pytest.mark.parametrize("size", [0, 1, 3])
def test_prefetcher_yields_items_in_order(size):
    split = _index_split(23, (2,))
    expected = _collect(batches(split, 4, seed=1, epoch=0))
    with Prefetcher(batches(split, 4, seed=1, epoch=0), size=size) as items:
        _assert_same_batches(_collect(items), expected)
        assert list(items) == []          # exhausted stays exhausted


def _failing_producer():
    yield 1
    yield 2
    raise ZeroDivisionError("producer failed at item 3")


@pytest.mark.parametrize("size", [0, 2])
def test_prefetcher_reraises_the_producer_exception_with_its_traceback(size):
    items = Prefetcher(_failing_producer(), size=size)
    assert next(items) == 1 and next(items) == 2
    with pytest.raises(ZeroDivisionError, match="producer failed at item 3") as info:
        next(items)
    frames = [frame.name for frame in traceback.extract_tb(info.value.__traceback__)]
    assert "_failing_producer" in frames
    with pytest.raises(StopIteration):
        next(items)
    items.close()


def test_prefetcher_close_stops_a_producer_blocked_on_a_full_queue():
    produced, closed = [], threading.Event()

    def endless():
        try:
            i = 0
            while True:
                produced.append(i)
                yield i
                i += 1
        finally:
            closed.set()

    items = Prefetcher(endless(), size=2)
    assert next(items) == 0
    # the producer fills the queue and then blocks on put: wait until it has made its items
    while len(produced) < 4:
        threading.Event().wait(0.01)
    items.close()
    assert not items._thread.is_alive()
    assert closed.is_set()            # the generator was closed, so its cleanup ran
    assert len(produced) <= 5         # it stopped instead of running on
    with pytest.raises(StopIteration):
        next(items)


def test_prefetcher_close_without_thread_closes_the_generator_and_size_is_checked():
    closed = threading.Event()

    def gen():
        try:
            yield 1
            yield 2
        finally:
            closed.set()

    with Prefetcher(gen(), size=0) as items:
        assert next(items) == 1
    assert closed.is_set()
    with pytest.raises(DataError) as info:
        Prefetcher([], size=-1)
    assert info.value.key == "data.prefetch"


# ----- Prefetcher groups (fewer thread switches for small batches) ------------------------------------

def _recording_puts(monkeypatch):
    """What the producer thread hands over, item by item of its queue."""
    handed = []
    original = Prefetcher._put

    def put(self, item):
        handed.append(item)
        return original(self, item)
    monkeypatch.setattr(Prefetcher, "_put", put)
    return handed


@pytest.mark.parametrize("group_bytes", [1, 100, 10 ** 9])
def test_prefetcher_groups_yield_the_same_items_in_order(group_bytes):
    split = _index_split(23, (2,))
    expected = _collect(batches(split, 4, seed=1, epoch=0))
    with Prefetcher(batches(split, 4, seed=1, epoch=0), size=2, group_bytes=group_bytes) as items:
        _assert_same_batches(_collect(items), expected)
        assert list(items) == []


def test_prefetcher_hands_items_over_in_groups_of_the_byte_budget(monkeypatch):
    handed = _recording_puts(monkeypatch)
    # batches of 4 rows: x float32[4, 2] (32 bytes), y int32[4] (16), mask float32[4] (16) = 64 bytes
    split = _index_split(23, (2,))
    with Prefetcher(batches(split, 4, seed=1, epoch=0), size=1, group_bytes=150) as items:
        assert [i for i, _ in items] == [0, 1, 2, 3, 4, 5]
    groups = [h for h in handed if isinstance(h, list)]
    # a group closes once it holds >= 150 bytes: 3 batches (192 bytes); the rest at the end
    assert [[i for i, _ in g] for g in groups] == [[0, 1, 2], [3, 4, 5]]
    assert len(handed) == len(groups) + 1          # and the end marker


def test_prefetcher_groups_hold_at_most_group_items(monkeypatch):
    """Tiny batches from an endless stream (the trainer's, across epochs) close a group at
    `group_items` long before the byte budget: the thread runs ahead by a bounded number of
    batches (once, 8,700 device batches of a tiny model piled up ahead of a 400-step run)."""
    handed = _recording_puts(monkeypatch)
    split = _index_split(23, (2,))
    with Prefetcher(batches(split, 4, seed=1, epoch=0), size=1, group_bytes=10 ** 9, group_items=4) as items:
        assert [i for i, _ in items] == [0, 1, 2, 3, 4, 5]
    groups = [[i for i, _ in h] for h in handed if isinstance(h, list)]
    assert groups == [[0, 1, 2, 3], [4, 5]]
    with pytest.raises(ValueError, match="group_items must be a positive integer or None, got 0"):
        Prefetcher([], group_bytes=1, group_items=0)


def test_prefetcher_group_before_an_error_is_delivered_then_the_error(monkeypatch):
    items = Prefetcher(_failing_producer(), size=2, group_bytes=10 ** 9)
    assert next(items) == 1 and next(items) == 2   # the partial group made before the error
    with pytest.raises(ZeroDivisionError, match="producer failed at item 3"):
        next(items)
    with pytest.raises(StopIteration):
        next(items)
    items.close()


def test_prefetcher_close_stops_a_grouping_producer_and_checks_group_bytes():
    produced, closed = [], threading.Event()

    def endless():
        try:
            i = 0
            while True:
                produced.append(i)
                yield np.zeros(8, np.uint8) + i % 256
                i += 1
        finally:
            closed.set()

    items = Prefetcher(endless(), size=2, group_bytes=16)   # groups of two 8-byte arrays
    assert int(next(items)[0]) == 0
    while len(produced) < 6:
        threading.Event().wait(0.01)
    items.close()
    assert not items._thread.is_alive() and closed.is_set()
    assert len(produced) <= 9          # 2 queued groups + one being made + the one consumed
    with pytest.raises(StopIteration):
        next(items)
    for bad in (0, -5, 1.5, True):
        with pytest.raises(ValueError, match="group_bytes"):
            Prefetcher([], size=1, group_bytes=bad)
