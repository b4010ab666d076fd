"""
Tests of heat.utils.data.reader: inspecting HDF5 datasets, the window size, and the background
reader (windows in order, buffers reused, a buffer still viewed replaced, failures handed over).

The oracle is the file's data read in one piece with h5py. The reader itself is per process; the
files are written once by rank 0 into a folder shared by all ranks.
"""

import os

import numpy as np
import pytest
import torch

from heat.utils.data.reader import DatasetInfo, WindowReader, inspect_datasets, window_rows_for
from tests.helpers import collective_assert
from tests.utils.data._files import rows_data, shared_dir, write_h5  # noqa: F401 (fixture)


@pytest.fixture(scope="module")
def files(shared_dir):  # noqa: F811
    x, y = rows_data(100, features=4)
    images = np.arange(100 * 2 * 3 * 3, dtype=np.uint8).reshape(100, 2, 3, 3)
    a = write_h5(shared_dir, "a.h5", {"x": x, "images": images}, chunks=True, compression="gzip")
    b = write_h5(shared_dir, "b.h5", {"y": y})
    return a, b, x, y, images


def test_inspect_datasets(files):
    a, b, x, y, images = files
    infos = inspect_datasets([a, b], ["y", "images", "x"])
    assert [i.name for i in infos] == ["y", "images", "x"]
    assert [i.path for i in infos] == [b, a, a]
    assert infos[1].shape == (100, 2, 3, 3) and infos[1].dtype == np.uint8
    assert infos[1].row_shape == (2, 3, 3) and infos[1].row_bytes == 18
    assert infos[0].chunk_rows is None and infos[0].chunk_bytes == 0  # contiguous storage
    assert infos[2].chunk_rows >= 1 and infos[2].chunk_bytes > 0
    assert infos[0].file_size == os.path.getsize(b)
    assert infos[2].describe()[:4] == (a, "x", [100, 4], "<f4")


def test_inspect_errors(files, shared_dir):  # noqa: F811
    a, b, x, y, _ = files
    with pytest.raises(FileNotFoundError, match="paths"):
        inspect_datasets([os.path.join(shared_dir, "none.h5")], ["x"])
    with pytest.raises(ValueError, match="none of"):
        inspect_datasets([a, b], ["labels"])
    with pytest.raises(ValueError, match="same number of rows"):
        other = write_h5(shared_dir, "short.h5", {"y": y[:50]})
        inspect_datasets([a, other], ["x", "y"])


def test_window_rows_for():
    def info(name, row_shape, chunk_rows, rows=1000, dtype="float32"):
        dtype = np.dtype(dtype)
        row = int(np.prod(row_shape)) * dtype.itemsize
        return DatasetInfo("f", name, (rows,) + row_shape, dtype, chunk_rows,
                           row * chunk_rows if chunk_rows else 0, 0)

    x = info("x", (4,), 100)  # 16 bytes a row, + 8 for the row numbers
    assert window_rows_for([x], 4 * 24 * 250, buffers=4) == 200  # whole chunks
    assert window_rows_for([x], 4 * 24 * 50, buffers=4) == 100  # never less than a chunk
    assert window_rows_for([x], 4 * 24 * 10**6, buffers=4) == 1000  # never more than the rows
    plain = info("x", (4,), None)
    assert window_rows_for([plain], 4 * 24 * 250, buffers=4) == 250  # contiguous: exact
    # two chunkings: aligned to both when that fits, else to the wider rows' chunks
    y = info("y", (), 60, dtype="int64")
    assert window_rows_for([x, y], 4 * 32 * 700, buffers=4) == 600
    assert window_rows_for([x, y], 4 * 32 * 450, buffers=4) == 300
    assert window_rows_for([x, y], 4 * 32 * 250, buffers=4) == 200


def test_reader_reads_windows_in_order_and_reuses_buffers(files):
    a, b, x, y, images = files
    infos = inspect_datasets([a, b], ["x", "y", "images"])
    windows = [(0, 30), (30, 60), (90, 100), (60, 90), (0, 0)]
    reader = WindowReader(infos, windows, capacity=30)
    ok, slots = True, set()
    for start, stop in windows:
        slot, arrays = reader.get()
        slots.add(slot)
        ok &= all(len(arr) == stop - start for arr in arrays)
        ok &= np.array_equal(arrays[0], x[start:stop]) and np.array_equal(arrays[1], y[start:stop])
        ok &= np.array_equal(arrays[2], images[start:stop])
        del arrays
        reader.release(slot)
    assert slots == {0, 1}  # a ring of two buffers
    assert reader.bytes_read == 100 * (16 + 8 + 18)
    with pytest.raises(IndexError):
        reader.get()
    reader.close()
    collective_assert(ok)


def test_reader_replaces_a_buffer_still_viewed(files):
    a, _, x, _, _ = files
    infos = inspect_datasets([a], ["x"])
    reader = WindowReader(infos, [(0, 10), (10, 20), (20, 30), (30, 40)], capacity=10)
    kept = []
    for i in range(4):
        slot, arrays = reader.get()
        kept.append(torch.from_numpy(arrays[0])[2:5])  # a batch that views the buffer
        del arrays
        reader.release(slot)
    reader.close()
    ok = all(np.array_equal(t.numpy(), x[10 * i + 2 : 10 * i + 5]) for i, t in enumerate(kept))
    collective_assert(ok, "a viewed buffer was overwritten")


def test_reader_hands_over_failures(files):
    a, _, _, _, _ = files
    infos = inspect_datasets([a], ["x"])
    reader = WindowReader(infos, [(0, 10), (95, 120)], capacity=30)  # past the end of the rows
    slot, arrays = reader.get()
    del arrays
    reader.release(slot)
    with pytest.raises(Exception):
        reader.get()
    reader.close()
    early = WindowReader(infos, [(0, 10)] * 5, capacity=10)
    early.close()  # before reading everything: the thread ends
    assert not early._thread.is_alive()
