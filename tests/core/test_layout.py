import numpy as np
import pytest
import torch

import heat as ht
from tests.helpers import (
    assert_array_equal,
    assert_raises_then_collective_works,
    collective_assert,
    random_array,
    splits_for,
)


@pytest.mark.parametrize("shape", [(7,), (5, 6), (2, 3, 4), (1, 5), (0, 3), (3, 0, 2)])
@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.bool_, np.complex128])
def test_resplit_every_pair(shape, dtype):
    data = random_array(shape, dtype)
    for source in splits_for(len(shape)):
        x = ht.array(data, split=source)
        for target in splits_for(len(shape)):
            y = ht.resplit(x, target)
            assert y.split == (None if target is None else target % len(shape))
            assert_array_equal(y, data)
            assert y.is_balanced(force_check=True)
        z = ht.array(data, split=source)
        z.resplit_(0)
        assert_array_equal(z, data)


@pytest.mark.parametrize("shape", [(11, 7), (2, 9), (5, 4, 6), (3, 1, 5)])
@pytest.mark.parametrize("slab_bytes", [1, 40, 10**9])
def test_resplit_in_packed_slabs(monkeypatch, shape, slab_bytes):
    # strided blocks to send (e.g. split 0 -> 1) are packed and exchanged in slabs along the
    # source split: one row per slab, a few rows, and everything in one slab
    from heat.core import _redistribution

    monkeypatch.setattr(_redistribution, "PACK_SLAB_BYTES", slab_bytes)
    data = random_array(shape, np.float64)
    for source in range(len(shape)):
        for target in range(len(shape)):
            x = ht.array(data, split=source)
            y = ht.resplit(x, target)
            assert_array_equal(y, data)
            assert y.is_balanced(force_check=True)
    # an unbalanced source, with empty blocks on some processes
    size = ht.MPI_WORLD.size
    x = ht.array(data, split=0)
    counts = [0] * size
    counts[-1] = shape[0]
    y = ht.redistribute(x, counts)
    assert_array_equal(ht.resplit(y, len(shape) - 1), data)


def test_resplit_returns_a_copy():
    data = np.zeros((3, 4), dtype=np.float32)
    for source in (None, 0, 1):
        x = ht.array(data, split=source)
        for target in (None, 0, 1):
            y = ht.resplit(x, target)
            y.larray.fill_(99)
            assert_array_equal(x, data)


def test_resplit_unbalanced_source():
    size = ht.MPI_WORLD.size
    data = np.arange(24.0).reshape(6, 4)
    x = ht.array(data, split=0)
    counts = [0] * size
    counts[-1] = 6
    y = ht.redistribute(x, counts)
    assert_array_equal(y, data)
    collective_assert(y.balanced == (size == 1))
    assert_array_equal(ht.resplit(y, 1), data)
    assert_array_equal(ht.resplit(y, None), data)


def test_redistribute_and_balance():
    size = ht.MPI_WORLD.size
    data = random_array((9, 3), np.float64)
    x = ht.array(data, split=0)
    for counts in ([9] + [0] * (size - 1), [0] * (size - 1) + [9], list(x.counts_displs()[0])):
        y = ht.redistribute(x, counts)
        assert y.lshape[0] == counts[ht.MPI_WORLD.rank]
        assert_array_equal(y, data)
        b = ht.balance(y)
        assert b.is_balanced(force_check=True)
        assert_array_equal(b, data)
        y.balance_()
        assert y.is_balanced(force_check=True) and y.lshape == x.lshape
    target = x.lshape_map.clone()
    target[:, 0] = 0
    target[0, 0] = 9
    x.redistribute_(target_map=target)
    assert x.lshape[0] == (9 if ht.MPI_WORLD.rank == 0 else 0)
    assert_array_equal(x, data)
    c = ht.collect(ht.array(data, split=1), target_rank=size - 1)
    assert c.lshape[1] == (3 if ht.MPI_WORLD.rank == size - 1 else 0)
    assert_array_equal(c, data)


def _skewed_counts(n: int, size: int):
    """Uneven counts: about two thirds of the rows on the last process."""
    counts = [0] * size
    counts[-1] = n - (n // 3) * (size > 1)
    counts[0] += n - counts[-1]
    return counts


@pytest.mark.parametrize(
    "shape,split", [((9, 3), 0), ((3, 10), 1), ((2, 7, 5), -1), ((1, 5), 0), ((0, 3), 1)]
)
@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.complex64])
def test_redistribute_with_known_lshape_map(shape, split, dtype, monkeypatch):
    comm = ht.MPI_WORLD
    size, rank = comm.size, comm.rank
    split = split % len(shape)
    data = random_array(shape, dtype)
    counts = _skewed_counts(shape[split], size)
    known = torch.tensor(shape, dtype=torch.int64).repeat(size, 1)
    known[:, split] = torch.tensor(counts)
    target = known.clone()
    target[:, split] = torch.tensor(list(reversed(counts)))
    # count the allgathers: a known lshape_map replaces the one that gathers the local shapes
    gathers = []
    allgather = comm.allgather

    def counting_allgather(*args, **kwargs):
        gathers.append(args)
        return allgather(*args, **kwargs)

    for target_map, expected_counts in ((target, list(reversed(counts))), (None, None)):
        x = ht.redistribute(ht.array(data, split=split), counts)  # layout not known to others
        monkeypatch.setattr(comm, "allgather", counting_allgather)
        x.redistribute_(lshape_map=known, target_map=target_map)
        monkeypatch.undo()
        collective_assert(not gathers, f"redistribute_ gathered the local shapes: {gathers}")
        if expected_counts is None:
            collective_assert(x.is_balanced(force_check=True))
        else:
            collective_assert(x.lshape[split] == expected_counts[rank])
        assert_array_equal(x, data)
    # a non-split array: the map is every process holding the whole array
    y = ht.array(data)
    y.redistribute_(lshape_map=torch.tensor([shape] * size))
    assert_array_equal(y, data)


def test_redistribute_lshape_map_bad_input():
    size = ht.MPI_WORLD.size
    x = ht.zeros((6, 4), split=0)
    good = x.lshape_map.clone()
    wrong_sum = good.clone()
    wrong_sum[0, 0] += 1
    wrong_column = good.clone()
    wrong_column[:, 1] = 5
    negative = good.clone()
    negative[0, 0] -= 7
    negative[-1, 0] += 7
    for bad in (good[:, :1], torch.cat([good, good]), wrong_sum, wrong_column):
        assert_raises_then_collective_works(ValueError, x.redistribute_, lshape_map=bad)
    if size > 1:
        assert_raises_then_collective_works(ValueError, x.redistribute_, lshape_map=negative)
    assert_raises_then_collective_works(TypeError, x.redistribute_, lshape_map=good.float())
    assert_raises_then_collective_works(TypeError, x.redistribute_, lshape_map="no map")
    assert_raises_then_collective_works(ValueError, x.redistribute_, target_map=good[:, :1])
    # a non-split array's map repeats its shape
    assert_raises_then_collective_works(
        ValueError, ht.zeros((6, 4)).redistribute_, lshape_map=torch.tensor([[6, 3]] * size)
    )
    # a map that adds up but contradicts the blocks of some processes (the first and the last
    # swapped): only those processes can see it, and still every process raises
    uneven = ht.zeros((7, 4), split=0)
    swapped = uneven.lshape_map.clone()
    swapped[[0, -1]] = swapped[[-1, 0]]
    if not torch.equal(swapped, uneven.lshape_map):
        assert_raises_then_collective_works(ValueError, uneven.redistribute_, lshape_map=swapped)
    # the array is unchanged and still usable
    x.redistribute_(lshape_map=good)
    assert_array_equal(x, np.zeros((6, 4), np.float32))


def test_layout_bad_input():
    x = ht.zeros((4, 3), split=0)
    assert_raises_then_collective_works(ValueError, ht.resplit, x, 2)
    assert_raises_then_collective_works(TypeError, ht.resplit, x, 1.0)
    assert_raises_then_collective_works(TypeError, ht.resplit, np.zeros(3), 0)
    assert_raises_then_collective_works(ValueError, ht.redistribute, x, [4] * (x.comm.size + 1))
    assert_raises_then_collective_works(
        ValueError, ht.redistribute, x, [5] + [0] * (x.comm.size - 1)
    )
    assert_raises_then_collective_works(ValueError, ht.redistribute, ht.zeros(3), [3])
    assert_raises_then_collective_works(ValueError, ht.collect, x, x.comm.size)


def test_lshape_map_counts_displs():
    size = ht.MPI_WORLD.size
    x = ht.arange(10, split=0)
    counts, displs = x.counts_displs()
    assert sum(counts) == 10 and displs[0] == 0
    assert [int(c) for c in x.lshape_map[:, 0]] == list(counts)
    expected = [10 // size + (1 if r < 10 % size else 0) for r in range(size)]
    assert list(counts) == expected
    assert x.global_offset() == displs[x.comm.rank]
    assert_raises_then_collective_works(ValueError, ht.zeros(3).counts_displs)


def test_binary_alignment_across_splits():
    a = random_array((5, 6), np.float64, seed=1)
    b = random_array((5, 6), np.float64, seed=2)
    row = random_array((6,), np.float64, seed=3)
    col = random_array((5, 1), np.float64, seed=4)
    for sa in splits_for(2):
        x = ht.array(a, split=sa)
        for sb in splits_for(2):
            y = ht.array(b, split=sb)
            r = x + y
            assert_array_equal(r, a + b)
            if sa is None or sb is None:
                # the split operand's layout wins over a non-split one
                split = sa if sa is not None else sb
                collective_assert(r.split == (None if split is None else split % 2))
        for sr in splits_for(1):
            assert_array_equal(x * ht.array(row, split=sr), a * row)
            assert_array_equal(ht.array(row, split=sr) - x, row - a)
        for sc in splits_for(2):
            assert_array_equal(x / ht.array(col, split=sc), a / col)
    # unbalanced operands with the same split axis are redistributed
    size = ht.MPI_WORLD.size
    x = ht.redistribute(ht.array(a, split=0), [5] + [0] * (size - 1))
    y = ht.array(b, split=0)
    assert_array_equal(x + y, a + b)
    assert_array_equal(y + x, a + b)


def test_binary_bad_input():
    x = ht.zeros((4, 3), split=0)
    assert_raises_then_collective_works(ValueError, lambda: x + ht.zeros((4, 4), split=1))
    assert_raises_then_collective_works(ValueError, lambda: ht.add(x, x, out=ht.zeros((3, 3))))
    assert_raises_then_collective_works(TypeError, lambda: x + "a")


def test_align_local_length_one_split_axis():
    # a split axis of global length 1 that the target also has length 1: a real layout,
    # not a broadcast, so processes without the row get an empty block
    from heat.core._operations import align_local

    leader = ht.array([3.0], split=0)
    local = align_local(ht.array([0.0]), (1,), 0, leader)
    collective_assert(
        tuple(local.shape) == leader.lshape, f"{tuple(local.shape)} != {leader.lshape}"
    )
    assert_array_equal(
        ht.array([[1.0, 2.0]], split=0) + ht.array([[5.0, 6.0]]),
        np.array([[6.0, 8.0]], dtype=np.float32),
    )


ALL_DTYPES = (
    np.bool_,
    np.uint8,
    np.int8,
    np.int16,
    np.int32,
    np.int64,
    np.float16,
    np.float32,
    np.float64,
    np.complex64,
    np.complex128,
)


@pytest.mark.parametrize("shape", [(5, 7), (1, 4), (0, 3), (2, 3, 5)])
def test_resplit_non_contiguous_inputs_every_dtype(shape):
    # transposed and sliced local blocks travel as strided MPI datatypes, never packed first;
    # (1, 4) and (0, 3) leave some processes with empty blocks on either side
    for dtype in ALL_DTYPES if shape == (5, 7) else (np.bool_, np.complex128):
        data = random_array(shape, dtype, seed=7)
        ndim = len(shape)
        for source in splits_for(ndim):
            transposed = ht.transpose(ht.array(np.ascontiguousarray(data.T), split=source))
            wide = np.repeat(data, 2, axis=-1)
            sliced = ht.array(wide, split=source)[..., ::2]
            for x in (transposed, sliced):
                for target in splits_for(ndim):
                    y = ht.resplit(x, target)
                    assert_array_equal(y, data)
                z = (
                    ht.redistribute(x, [0] * (x.comm.size - 1) + [x.gshape[x.split]])
                    if (x.split is not None)
                    else x
                )
                assert_array_equal(ht.resplit(z, (ndim - 1 if x.split == 0 else 0)), data)


def test_resplit_bfloat16():
    data = random_array((6, 5), np.int64, seed=3, low=-100, high=100).astype(np.float32)
    for source in splits_for(2):
        x = ht.array(data, dtype=ht.bfloat16, split=source)
        for target in splits_for(2):
            y = ht.resplit(ht.transpose(x), target)
            collective_assert(y.dtype == ht.bfloat16 and y.larray.dtype == torch.bfloat16)
            assert_array_equal(y.astype(ht.float32), data.T)
        counts = [6] + [0] * (x.comm.size - 1)
        if x.split == 0:
            assert_array_equal(ht.redistribute(x, counts).astype(ht.float32), data)


def test_redistribute_into_split_axis_one():
    # rows move along axis 1: the received blocks are strided column blocks of the result
    size = ht.MPI_WORLD.size
    data = random_array((3, 7, 2), np.complex64, seed=5)
    x = ht.array(data, split=1)
    for counts in ([7] + [0] * (size - 1), [0] * (size - 1) + [7]):
        y = ht.redistribute(x, counts)
        collective_assert(y.lshape[1] == counts[y.comm.rank])
        assert_array_equal(y, data)
        assert_array_equal(ht.balance(y), data)
