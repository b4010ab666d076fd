"""
Tests of heat.utils.data.reader: inspecting HDF5 datasets, the window size, and the background
reader (windows in order, pool buffers reused only when free, failures handed over),
and its direct path (uncompressed rows read with os.preadv) against HDF5 on every storage layout.

The oracle is the file's data read in one piece with h5py. The reader itself is per process; the
files are written once by rank 0 into a folder shared by all ranks.
"""

import os

import h5py
import numpy as np
import pytest

import heat as ht
from heat.utils.data.buffers import BufferPool
from heat.utils.data.reader import (
    DatasetInfo,
    DirectLayout,
    WindowReader,
    direct_layout,
    inspect_datasets,
    window_rows_for,
)
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
        return DatasetInfo(
            "f",
            name,
            (rows,) + row_shape,
            dtype,
            chunk_rows,
            row * chunk_rows if chunk_rows else 0,
            0,
        )

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
    ok, buffers = True, set()
    for start, stop in windows:
        buffer = reader.get()
        buffers.add(id(buffer))
        arrays = [array[: buffer.filled] for array in buffer.arrays]
        ok &= all(len(arr) == stop - start for arr in arrays)
        ok &= np.array_equal(arrays[0], x[start:stop]) and np.array_equal(arrays[1], y[start:stop])
        ok &= np.array_equal(arrays[2], images[start:stop])
        reader.release(buffer)
    assert len(buffers) == 2 and reader.pool.allocated == 2  # a ring of two buffers
    assert reader.bytes_read == 100 * (16 + 8 + 18)
    assert reader.read_seconds > 0 and reader.wait_seconds >= 0
    with pytest.raises(IndexError):
        reader.get()
    reader.close()
    collective_assert(ok)


def test_reader_takes_another_buffer_while_one_is_viewed(files):
    a, _, x, _, _ = files
    infos = inspect_datasets([a], ["x"])
    reader = WindowReader(infos, [(0, 10), (10, 20), (20, 30), (30, 40)], capacity=10)
    kept = []
    for i in range(4):
        buffer = reader.get()
        kept.append(buffer.view(buffer.filled)[0][2:5])  # a batch that views the buffer
        reader.release(buffer)
    reader.close()
    ok = all(np.array_equal(t.numpy(), x[10 * i + 2 : 10 * i + 5]) for i, t in enumerate(kept))
    collective_assert(ok, "a viewed buffer was overwritten")
    assert reader.pool.allocated == 4  # every window viewed: none reused
    del kept
    assert reader.pool.counts() == (0, 4)  # all free again


def test_readers_share_a_pool_and_reuse_only_free_buffers(files):
    a, _, x, _, _ = files
    infos = inspect_datasets([a], ["x"])
    pool = BufferPool([info.row_shape for info in infos], [info.dtype for info in infos])
    windows = [(0, 10), (10, 20), (20, 25)]
    first = WindowReader(infos, windows, capacity=10, pool=pool)
    for i in range(len(windows)):
        buffer = first.get()
        if i == 2:
            held = buffer.view(buffer.filled)[0][:3]  # a batch of the last window, kept
        first.release(buffer)
    first.close()
    assert pool.allocated == 2 and pool.counts() == (1, 1)
    second = WindowReader(infos, windows, capacity=10, pool=pool)  # the next epoch
    rows = []
    for _ in windows:
        buffer = second.get()
        rows.append(buffer.arrays[0][: buffer.filled].copy())
        second.release(buffer)
    second.close()
    assert np.array_equal(np.concatenate(rows), x[:25])
    assert pool.allocated == 3  # the free buffer reused, a fresh one beside the viewed one
    assert np.array_equal(held.numpy(), x[20:23])  # the kept batch is intact


def test_reader_hands_over_failures(files):
    a, _, _, _, _ = files
    infos = inspect_datasets([a], ["x"])
    reader = WindowReader(infos, [(0, 10), (95, 120)], capacity=30)  # past the end of the rows
    reader.release(reader.get())
    with pytest.raises(IndexError):
        reader.get()
    reader.close()
    early = WindowReader(infos, [(0, 10)] * 5, capacity=10)
    early.close()  # before reading everything: the thread ends, the windows read go back
    assert not early._thread.is_alive()
    assert early.pool.counts()[0] == 0
    with pytest.raises(RuntimeError, match="closed"):
        early.get()


# -- the direct path: uncompressed rows read with os.preadv, bypassing HDF5 -----------------------


@pytest.fixture(scope="module")
def layouts(shared_dir):  # noqa: F811
    """One file per storage layout, written by rank 0; name -> (path, dataset name, data)."""
    comm = ht.MPI_WORLD
    rng = np.random.default_rng(5)
    cases = {
        # name: (data, create_dataset keywords, file keywords, rows written (None: all))
        "contiguous": (rng.random((53, 4)).astype(np.float32), {}, {}, None),
        "chunked": (rng.random((53, 2, 3)), {"chunks": (7, 2, 3)}, {}, None),
        "bool": (rng.random(50) > 0.5, {"chunks": (8,)}, {}, None),
        "complex": ((rng.random((41, 2)) + 1j).astype(np.complex64), {"chunks": (5, 2)}, {}, None),
        "int16": (rng.integers(-30000, 30000, (47, 3)).astype(np.int16), {}, {}, None),
        "partial rows": (rng.random((53, 4)).astype(np.float32), {"chunks": (7, 2)}, {}, None),
        "gzip": (
            rng.random((53, 4)).astype(np.float32),
            {"chunks": (7, 4), "compression": "gzip"},
            {},
            None,
        ),
        "shuffle filter": (
            rng.random((53, 4)).astype(np.float32),
            {"chunks": (7, 4), "shuffle": True},
            {},
            None,
        ),
        "big endian": (rng.random((53, 4)).astype(">f4"), {"chunks": (7, 4)}, {}, None),
        "user block": (
            rng.random((53, 4)).astype(np.float32),
            {"chunks": (7, 4)},
            {"userblock_size": 512},
            None,
        ),
        "never written": (np.zeros((30, 4), np.float32), {"fillvalue": 3.5}, {}, 0),
        # chunks 2 and 5 never written: HDF5 supplies the fill value for them
        "gaps": (
            rng.random((60, 4)).astype(np.float32),
            {"chunks": (8, 4), "fillvalue": -1.0, "maxshape": (None, 4)},
            {"libver": "latest"},
            "gaps",
        ),
        "earliest btree": (
            rng.random((60, 4)).astype(np.float32),
            {"chunks": (8, 4), "maxshape": (None, 4)},
            {"libver": "earliest"},
            None,
        ),
    }
    found = {}
    for i, (name, (data, kwargs, file_kwargs, written)) in enumerate(cases.items()):
        path = os.path.join(shared_dir, f"layout-{i}.h5")
        expected = data.copy()
        if written == 0:
            expected[:] = kwargs["fillvalue"]
        if written == "gaps":
            expected[16:24] = expected[40:48] = -1.0
        if comm.rank == 0:
            with h5py.File(path, "w", **file_kwargs) as f:
                if written is None:
                    f.create_dataset("d", data=data, **kwargs)
                else:
                    d = f.create_dataset("d", shape=data.shape, dtype=data.dtype, **kwargs)
                    if written == "gaps":
                        for start in (0, 8, 24, 32, 48, 56):
                            d[start : start + 8] = data[start : start + 8]
        found[name] = (path, expected)
    comm.handle.Barrier()
    return found


DIRECT = {"contiguous", "chunked", "bool", "complex", "int16", "gaps", "earliest btree"}


def test_direct_layout_only_where_the_bytes_are_the_rows(layouts):
    ok, wrong = True, []
    for name, (path, data) in layouts.items():
        with h5py.File(path, "r") as f:
            layout = direct_layout(f["d"])
        if (layout is not None) != (name in DIRECT):
            ok, wrong = False, wrong + [name]
    collective_assert(ok, f"direct_layout wrong for {wrong}")
    with h5py.File(layouts["gaps"][0], "r") as f:
        layout = direct_layout(f["d"])
    assert layout.block_rows == 8 and (layout.offsets < 0).tolist() == [
        i in (2, 5) for i in range(8)
    ]
    with h5py.File(layouts["contiguous"][0], "r") as f:
        layout = direct_layout(f["d"])
    assert layout.block_rows == 53 and len(layout.offsets) == 1 and layout.row_bytes == 16


def test_direct_layout_runs():
    layout = DirectLayout(4, np.array([0, 16, 32, -1, -1, 200, 100]), row_bytes=4)
    # blocks 0-2 follow each other in the file: one run; 3-4 never written; 5 and 6 apart
    assert list(layout.runs(1, 27)) == [
        (1, 12, 4),
        (12, 16, -1),
        (16, 20, -1),
        (20, 24, 200),
        (24, 27, 100),
    ]
    assert list(layout.runs(5, 6)) == [(5, 6, 20)]
    assert list(layout.runs(9, 9)) == []


def test_reader_direct_and_hdf5_paths_read_the_same(layouts):
    names = list(layouts)
    infos = [inspect_datasets([layouts[name][0]], ["d"])[0] for name in names]
    ok, wrong = True, []
    for info, name in zip(infos, names):
        data = layouts[name][1]
        rows = len(data)
        # windows across chunk borders, a single row, the whole dataset, the last rows, empty
        windows = [(0, rows), (3, 19), (rows - 5, rows), (10, 11), (5, 5), (0, 9)]
        shared = {}
        reader = WindowReader([info], windows, capacity=rows, layouts=shared)
        for start, stop in windows:
            buffer = reader.get()
            if not np.array_equal(buffer.arrays[0][: buffer.filled], data[start:stop]):
                ok, wrong = False, wrong + [(name, start, stop)]
            reader.release(buffer)
        reader.close()
        if (shared[(info.path, "d")] is not None) != (name in DIRECT):
            ok, wrong = False, wrong + [(name, "path")]
    collective_assert(ok, f"wrong rows: {wrong}")


def test_reader_direct_path_raises_on_a_truncated_file(layouts, shared_dir):  # noqa: F811
    comm = ht.MPI_WORLD
    source = layouts["contiguous"][0]
    path = os.path.join(shared_dir, "truncated.h5")
    info = inspect_datasets([source], ["d"])[0]
    with h5py.File(source, "r") as f:
        layout = direct_layout(f["d"])
    comm.handle.Barrier()
    if comm.rank == 0:
        with open(source, "rb") as f:
            content = f.read()
        with open(path, "wb") as f:  # cut inside the data
            f.write(content[: int(layout.offsets[0]) + 100])
    comm.handle.Barrier()
    shortened = DatasetInfo(path, "d", info.shape, info.dtype, None, 0, 0)
    # the layout of the intact file, as a loader would hold it from before the file was cut
    reader = WindowReader([shortened], [(0, 53)], capacity=53, layouts={(path, "d"): layout})
    with pytest.raises(OSError, match="truncated"):
        reader.get()
    reader.close()
    reader = WindowReader([shortened], [(0, 53)], capacity=53)  # HDF5 finds the file cut too
    with pytest.raises(OSError):
        reader.get()
    reader.close()
