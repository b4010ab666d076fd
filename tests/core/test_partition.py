"""
Tests of heat/core/partition.py: DNDarray.__partitioned__, ht.from_partitioned and
ht.from_partition_dict. Every split, uneven sizes, fewer rows than processes, foreign
(non-heat) partition tables, and bad tables that must raise alike on every process.
"""

import numpy as np
import pytest
import torch

import heat as ht
from tests.helpers import (
    assert_array_equal,
    assert_raises_then_collective_works,
    collective_assert,
    splits_for,
)

SHAPES = [(7,), (5, 3), (2, 3, 4), (0, 3)]
DTYPES = [np.float32, np.float64, np.int64]


def _data(shape, dtype):
    return np.arange(int(np.prod(shape)), dtype=dtype).reshape(shape) * 3 % 11


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_partitioned_describes_the_layout(shape, dtype):
    expected = _data(shape, dtype)
    for split in splits_for(len(shape)):
        x = ht.array(expected, split=split)
        parts = x.__partitioned__
        comm = x.comm
        ok = parts["shape"] == shape and callable(parts["get"])
        if x.split is None:
            ok = ok and parts["partition_tiling"] == (1,) * len(shape)
            ok = ok and list(parts["partitions"]) == [(0,) * len(shape)]
        else:
            tiling = [1] * len(shape)
            tiling[x.split] = comm.size
            ok = ok and parts["partition_tiling"] == tuple(tiling)
            ok = ok and len(parts["partitions"]) == comm.size
        ok = ok and len(parts["locals"]) == 1
        # the partitions tile the array: each one's slice of the NumPy data is what its rank holds
        for tile, part in parts["partitions"].items():
            mine = tile in parts["locals"]
            ok = ok and (part["data"] is not None) == mine
            if mine:
                ok = ok and comm.rank in part["location"]
                ok = ok and part["data"].data_ptr() == x.larray.data_ptr()
                index = tuple(slice(s, s + n) for s, n in zip(part["start"], part["shape"]))
                ok = ok and np.array_equal(
                    parts["get"](part["data"]).cpu().numpy(), expected[index]
                )
        collective_assert(ok, f"bad __partitioned__ for shape {shape} split {split}: {parts}")


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_round_trip_shares_memory(shape, dtype):
    expected = _data(shape, dtype)
    for split in splits_for(len(shape)):
        x = ht.array(expected, split=split)
        for y in (ht.from_partitioned(x), ht.from_partition_dict(x.__partitioned__)):
            assert_array_equal(y, expected)
            same_split = y.split == x.split or (x.comm.size == 1 and y.split is None)
            collective_assert(same_split, f"split {y.split} != {x.split}")
            collective_assert(y.larray.data_ptr() == x.larray.data_ptr() or x.larray.numel() == 0)
        # no copy: writing into x shows in the array built from its partitions
        y = ht.from_partitioned(x)
        x.larray.fill_(5)
        collective_assert(bool((y.larray == 5).all()), "from_partitioned copied the data")


def test_unbalanced_array_round_trips():
    x = ht.array(_data((9, 2), np.float64), split=0)
    counts = [9] + [0] * (x.comm.size - 1)
    x = ht.redistribute(x, counts) if hasattr(ht, "redistribute") else x
    y = ht.from_partitioned(x)
    assert_array_equal(y, _data((9, 2), np.float64))
    collective_assert(y.lshape == x.lshape, f"{y.lshape} != {x.lshape}")


class _Foreign:
    """A distributed array of another library: NumPy partitions, tiled along axis 1."""

    def __init__(self, data: np.ndarray, counts):
        comm = ht.MPI_WORLD
        starts = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(int)
        n = data.shape[0]
        self.__partitioned__ = {
            "shape": data.shape,
            "partition_tiling": (1, len(counts)),
            "partitions": {
                (0, r): {
                    "start": (0, int(starts[r])),
                    "shape": (n, int(counts[r])),
                    "data": data[:, starts[r] : starts[r] + counts[r]].copy()
                    if r == comm.rank
                    else None,
                    "location": [r],
                }
                for r in range(len(counts))
            },
            "locals": [(0, comm.rank)],
            "get": lambda part: part,
        }


@pytest.mark.parametrize("columns", [2, 7, 10])
def test_from_foreign_numpy_partitions(columns):
    size = ht.MPI_WORLD.size
    data = _data((3, columns), np.float32)
    # uneven: the last process gets the rest, fewer columns than processes leaves blocks empty
    counts = [columns // size] * size
    counts[-1] += columns - sum(counts)
    foreign = _Foreign(data, counts)
    y = ht.from_partitioned(foreign)
    assert_array_equal(y, data)
    balanced = counts == list(y.comm.counts_displs_shape(data.shape, 1)[0])
    collective_assert(y.split == (1 if size > 1 else None), f"split {y.split}")
    if size > 1:
        collective_assert(y.is_balanced(force_check=True) == balanced)
        collective_assert(y.lshape[1] == counts[y.comm.rank])
    # NumPy data is shared, not copied
    local = foreign.__partitioned__["partitions"][(0, y.comm.rank)]["data"]
    local[...] = -1
    collective_assert(bool((y.larray == -1).all()), "NumPy partition was copied")
    # the result works with the rest of heat
    assert_array_equal(ht.sum(y, axis=0), -np.ones(columns, dtype=np.float32) * 3)


def test_several_partitions_per_process_and_replicated_copies():
    comm = ht.MPI_WORLD
    size = comm.size
    data = _data((2 * size + 1, 2), np.float64)
    # rank r holds rows [2r, 2r + 2) as two partitions; the last row is listed at every rank
    partitions, local = {}, []
    for r in range(size):
        for half in range(2):
            row = 2 * r + half
            partitions[(row, 0)] = {
                "start": (row, 0),
                "shape": (1, 2),
                "data": torch.tensor(data[row : row + 1]) if r == comm.rank else None,
                "location": [r],
            }
            if r == comm.rank:
                local.append((row, 0))
    last = 2 * size
    partitions[(last, 0)] = {
        "start": (last, 0),
        "shape": (1, 2),
        "data": torch.tensor(data[last:]),
        "location": list(range(size))[::-1],  # owned by the first location: the last rank
    }
    local.append((last, 0))
    parted = {"shape": data.shape, "partitions": partitions, "locals": local}
    y = ht.from_partition_dict(parted)
    assert_array_equal(y, data)
    expected_rows = 2 + (1 if comm.rank == size - 1 else 0)
    collective_assert(y.split == 0 and y.lshape[0] == expected_rows, f"{y.split} {y.lshape}")


def _parted_of(x):
    parts = dict(x.__partitioned__)
    parts["partitions"] = {k: dict(v) for k, v in parts["partitions"].items()}
    return parts


def test_bad_tables_raise_on_every_process():
    x = ht.array(_data((6, 4), np.float32), split=0)
    assert_raises_then_collective_works(TypeError, ht.from_partitioned, np.ones(3))
    assert_raises_then_collective_works(TypeError, ht.from_partition_dict, [1, 2])
    missing = _parted_of(x)
    del missing["locals"]
    assert_raises_then_collective_works(ValueError, ht.from_partition_dict, missing)
    # a gap along the split axis
    gap = _parted_of(x)
    gap["shape"] = (7, 4)
    assert_raises_then_collective_works(ValueError, ht.from_partition_dict, gap)
    # tiled along two axes
    size = x.comm.size
    two = {
        "shape": (2, 2 * size),
        "partitions": {
            (i, r): {"start": (i, 2 * r), "shape": (1, 2), "data": None, "location": [r]}
            for i in range(2)
            for r in range(size)
        },
        "locals": [],
    }
    if size == 1:
        two["partitions"][(0, 1)] = {
            "start": (0, 2),
            "shape": (1, 2),
            "data": None,
            "location": [0],
        }
    assert_raises_then_collective_works(ValueError, ht.from_partition_dict, two)
    # a rank outside the communicator
    outside = _parted_of(x)
    first = next(iter(outside["partitions"]))
    outside["partitions"][first]["location"] = [size]
    assert_raises_then_collective_works(ValueError, ht.from_partition_dict, outside)
    # data that does not fit the table on one process only: every process raises
    wrong = _parted_of(x)
    if x.comm.rank == size - 1:
        mine = wrong["locals"][0]
        wrong["partitions"][mine]["data"] = torch.zeros(17)
    assert_raises_then_collective_works(ValueError, ht.from_partition_dict, wrong)
    # owners out of rank order
    if size > 1:
        reversed_table = _parted_of(x)
        for part in reversed_table["partitions"].values():
            part["location"] = [size - 1 - part["location"][0]]
        assert_raises_then_collective_works(ValueError, ht.from_partition_dict, reversed_table)
