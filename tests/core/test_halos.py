"""
Halos (heat/core/halos.py): DNDarray.get_halo, halo_prev / halo_next, array_with_halos and
is_distributed, checked against the rows of the global array on every split, balanced and
skewed layouts (empty blocks), halos longer than blocks, and several dtypes.
"""

from __future__ import annotations

import gc

import numpy as np
import pytest
import torch

import heat as ht
from tests.helpers import collective_assert, expect_errors, random_array, skewed, splits_for


def layouts(data, split):
    """The balanced array and, at several processes, skewed ones (empty blocks in between)."""
    x = ht.array(data, split=split)
    yield x
    if split is not None and ht.MPI_WORLD.size > 1:
        yield skewed(x)
        n, size = x.shape[split], x.comm.size
        counts = [0] * size
        counts[size // 2] = n  # every row on one process in the middle
        yield ht.redistribute(x, counts)


def expected_halos(x, data, size, prev, next):
    """(prev, next, with halos) this process should have, from the global data."""
    split = x.split % x.ndim
    counts, displs = x.counts_displs()
    rank = x.comm.rank
    start, stop = displs[rank], displs[rank] + counts[rank]
    n = x.shape[split]

    def rows(lo, hi):
        index = [slice(None)] * x.ndim
        index[split] = slice(lo, hi)
        return data[tuple(index)]

    if counts[rank] == 0 or size == 0:
        return None, None, rows(start, stop)
    before = rows(max(0, start - size), start) if prev and start > 0 else None
    after = rows(stop, min(n, stop + size)) if next and stop < n else None
    lo = start - (before.shape[split] if before is not None else 0)
    hi = stop + (after.shape[split] if after is not None else 0)
    return before, after, rows(lo, hi)


def same(actual, expected):
    if expected is None:
        return actual is None
    if not isinstance(actual, torch.Tensor):
        return False
    values = actual.cpu().numpy()
    return (
        values.shape == expected.shape
        and values.dtype == expected.dtype
        and np.array_equal(values, expected)
    )


@pytest.mark.parametrize("shape", [(7,), (5, 6), (2, 3, 4), (1, 5), (9, 2), (0, 4)], ids=str)
def test_halos_match_global_rows(shape):
    failures = []
    for dtype in (np.float32, np.int64, np.complex128):
        data = random_array(shape, dtype=dtype, seed=len(shape))
        for split in splits_for(len(shape)):
            if split is None:
                continue
            for x in layouts(data, split):
                for size in (0, 1, 2, 5):
                    for prev, next in ((True, True), (True, False), (False, True)):
                        x.get_halo(size, prev=prev, next=next)
                        if not x.is_distributed():
                            ok = x.halo_prev is None and x.halo_next is None
                            ok = ok and same(x.array_with_halos, data)
                        else:
                            before, after, whole = expected_halos(x, data, size, prev, next)
                            ok = same(x.halo_prev, before) and same(x.halo_next, after)
                            ok = ok and same(x.array_with_halos, whole)
                        if not ok:
                            failures.append(
                                f"{dtype.__name__} split={split} lshape={x.lshape} size={size} "
                                f"prev={prev} next={next}: {x.halo_prev} {x.halo_next}"
                            )
    collective_assert(not failures, "\n".join(failures[:5]))


def test_halo_across_several_blocks():
    # a halo longer than the neighbouring blocks gathers rows from all of them
    data = np.arange(10)
    x = ht.array(data, split=0)
    x.get_halo(10)
    counts, displs = x.counts_displs()
    rank = x.comm.rank
    ok = True
    if x.is_distributed() and counts[rank]:
        ok = same(x.array_with_halos, data)
    collective_assert(ok, f"{x.array_with_halos}")


def test_not_distributed_and_no_halo_yet():
    x = ht.arange(6)
    ok = not x.is_distributed() and x.halo_prev is None and x.array_with_halos is x.larray
    x.get_halo(2)
    ok = ok and x.halo_prev is None and x.halo_next is None
    y = ht.arange(6, split=0)
    ok = ok and y.is_distributed() == (y.comm.size > 1)
    ok = ok and y.halo_prev is None and y.halo_next is None and y.array_with_halos is y.larray
    collective_assert(ok)


def test_halos_belong_to_their_array():
    x = ht.arange(8, split=0)
    x.get_halo(1)
    y = x.copy()
    ok = y.halo_prev is None and y.halo_next is None
    # a new call replaces the halos; a collected array takes its halos with it
    x.get_halo(0)
    ok = ok and x.halo_prev is None and x.halo_next is None
    from heat.core import halos

    before = len(halos._HALOS)
    z = ht.arange(8, split=0)
    z.get_halo(1)
    del z
    gc.collect()
    ok = ok and len(halos._HALOS) <= before
    collective_assert(ok)


def test_bad_arguments_raise_on_every_rank():
    x = ht.arange(6, split=0)
    expect_errors(
        [
            (TypeError, x.get_halo, (1.5,), {}),
            (TypeError, x.get_halo, ("2",), {}),
            (TypeError, x.get_halo, (True,), {}),
            (ValueError, x.get_halo, (-1,), {}),
            (TypeError, x.get_halo, (1,), {"prev": 1}),
            (TypeError, x.get_halo, (1,), {"next": None}),
        ]
    )
    # the next collective still works
    x.get_halo(np.int64(1))
    collective_assert(ht.MPI_WORLD.allreduce(1) == ht.MPI_WORLD.size)
