"""
Tests of heat/core/linalg/basics.py: diag, diagonal, trace, tril, triu against NumPy on every
split, uneven shapes, fewer rows than processes, balanced and unbalanced inputs.
"""

import numpy as np
import pytest

import heat as ht
from tests.helpers import (
    assert_array_equal,
    assert_arrays_equal,
    assert_raises_then_collective_works,
    collective_assert,
    random_array,
    splits_for,
)

MATRIX_SHAPES = ((5, 6), (6, 4), (2, 3), (3, 4, 5), (0, 3))
COMBOS = [(shape, split) for shape in MATRIX_SHAPES for split in splits_for(len(shape))]


def ids(combo):
    shape, split = combo
    return f"{'x'.join(map(str, shape))}-s{split}"


def skewed(x):
    """``x`` with an unbalanced layout (most rows on the last process), if distributed."""
    size = x.comm.size
    if x.split is None or size == 1:
        return x
    n = x.shape[x.split]
    counts = [0] * size
    counts[0] = n // 3
    counts[-1] = n - n // 3
    return ht.redistribute(x, counts)


def local_block(x, expected):
    """The block of ``expected`` that this process holds in ``x``'s layout."""
    if x.split is None:
        return expected
    counts, displs = x.counts_displs()
    index = [slice(None)] * expected.ndim
    me = x.comm.rank
    index[x.split] = slice(displs[me], displs[me] + counts[me])
    return expected[tuple(index)]


@pytest.mark.parametrize("combo", COMBOS, ids=ids)
def test_tril_triu(combo):
    shape, split = combo
    failures = []
    for dtype in (np.float32, np.int32, np.bool_, np.complex64):
        a = random_array(shape, dtype=dtype, seed=1)
        for x in (ht.array(a, split=split), skewed(ht.array(a, split=split))):
            for k in (-7, -1, 0, 2):
                for name in ("tril", "triu"):
                    result = getattr(ht, name)(x, k)
                    expected = getattr(np, name)(a, k)
                    # layout and dtype are those of the input: compare the local blocks
                    if result.split != x.split or result.dtype is not x.dtype:
                        failures.append(f"{name} k={k} {dtype}: layout/dtype changed")
                    elif result.lshape != x.lshape:
                        failures.append(f"{name} k={k} {dtype}: lshape {result.lshape}")
                    elif not np.array_equal(result.larray.cpu().numpy(), local_block(x, expected)):
                        failures.append(f"{name} k={k} {dtype}: values differ")
    collective_assert(not failures, "\n".join(failures[:8]))
    assert_array_equal(
        ht.tril(ht.array(random_array(shape, seed=2), split=split)),
        np.tril(random_array(shape, seed=2)),
    )


@pytest.mark.parametrize("split", [None, 0])
def test_tril_triu_vector(split):
    v = np.arange(1, 8, dtype=np.int64)
    for k in (-2, 0, 1):
        assert_array_equal(ht.tril(ht.array(v, split=split), k), np.tril(v, k))
        assert_array_equal(ht.triu(ht.array(v, split=split), k), np.triu(v, k))


@pytest.mark.parametrize("combo", COMBOS, ids=ids)
def test_diagonal_and_trace(combo):
    shape, split = combo
    a = random_array(shape, dtype=np.float64, seed=3)
    axes_list = [(0, 1), (1, 0)]
    if len(shape) == 3:
        axes_list += [(0, 2), (2, 1), (-1, 0)]
    x = ht.array(a, split=split)
    pairs = []
    for xx in (x, skewed(x)):
        for axis1, axis2 in axes_list:
            for offset in (-7, -2, -1, 0, 1, 2, 9):
                pairs.append(
                    (ht.diagonal(xx, offset, axis1, axis2), np.diagonal(a, offset, axis1, axis2))
                )
        for offset in (-2, 0, 1):
            pairs.append((ht.trace(xx, offset), np.trace(a, offset)))
    if len(shape) == 2:
        pairs.append((ht.diag(x, 1), np.diag(a, 1)))
        pairs.append((x.diagonal(), a.diagonal()))
    assert_arrays_equal(pairs)


@pytest.mark.parametrize("dtype", [np.int32, np.bool_, np.float32, np.complex64])
def test_trace_dtypes(dtype):
    a = random_array((4, 5), dtype=dtype, seed=5)
    for split in (None, 0, 1):
        x = ht.array(a, split=split)
        assert_array_equal(ht.trace(x), np.trace(a), rtol=1e-4)
        if dtype is not np.complex64:
            assert_array_equal(ht.trace(x, dtype=ht.float64), np.trace(a, dtype=np.float64))
        if dtype in (np.int32, np.bool_):
            # a small requested type is the accumulator: the sum wraps (and bools are any)
            big = (a * 60).astype(dtype)
            for requested in (np.int8, np.uint8, np.bool_):
                assert_array_equal(
                    ht.trace(ht.array(big, split=split), dtype=requested),
                    np.trace(big, dtype=requested),
                )


@pytest.mark.parametrize("n", [7, 2, 1, 0])
@pytest.mark.parametrize("split", [None, 0])
def test_diag_build(n, split):
    v = random_array((n,), dtype=np.float32, seed=n)
    pairs = []
    for x in (ht.array(v, split=split), skewed(ht.array(v, split=split))):
        for k in (-3, -1, 0, 2, 5):
            result = ht.diag(x, k)
            collective_assert(split is None or result.split == 0, f"diag split {result.split}")
            pairs.append((result, np.diag(v, k)))
    assert_arrays_equal(pairs)


def test_errors():
    x = ht.zeros((3, 4), split=0)
    assert_raises_then_collective_works(ValueError, ht.diagonal, ht.zeros(3, split=0))
    assert_raises_then_collective_works(ValueError, ht.diagonal, x, 0, 1, 1)
    assert_raises_then_collective_works(ValueError, ht.diagonal, x, 0, 0, 2)
    assert_raises_then_collective_works(TypeError, ht.diagonal, x, 1.5)
    assert_raises_then_collective_works(TypeError, ht.diagonal, np.zeros((2, 2)))
    assert_raises_then_collective_works(ValueError, ht.diag, ht.zeros((2, 2, 2), split=0))
    assert_raises_then_collective_works(TypeError, ht.tril, x, 0.5)
    assert_raises_then_collective_works(ValueError, ht.triu, ht.array(1.0))
    assert_raises_then_collective_works(TypeError, ht.triu, [[1, 2], [3, 4]])
    assert_raises_then_collective_works(TypeError, ht.trace, x, 0, 0, 1, "not a type")
