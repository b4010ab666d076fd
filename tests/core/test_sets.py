"""
Tests of heat/core/sets.py: unique (and the array-API variants), isin, in1d, intersect1d,
union1d, setdiff1d. NumPy is the oracle; the results must not depend on the process count.
"""

import numpy as np
import pytest

import heat as ht
from tests.helpers import (
    assert_array_equal,
    assert_raises_then_collective_works,
    collective_assert,
    splits_for,
)


def _data(shape, dtype=np.float64, seed=0, special=True):
    """Small integers (many duplicates); floats get NaNs and a -0.0 where there is room."""
    rng = np.random.default_rng(seed)
    data = rng.integers(-3, 4, size=shape)
    if np.dtype(dtype) == np.bool_:
        return (data > 0).astype(bool)
    data = data.astype(dtype)
    if special and np.dtype(dtype).kind == "f" and data.size >= 4:
        data.flat[1] = np.nan
        data.flat[-2] = np.nan
        data.flat[0] = -0.0
    return data


def _check_unique(x, data, **kwargs):
    """Every output of ht.unique against np.unique, plus the layout rules."""
    result = ht.unique(x, True, True, True, **kwargs)
    expected = np.unique(data, True, True, True, **kwargs)
    for actual, wanted in zip(result, expected):
        assert_array_equal(actual, wanted)
    values, index, inverse, counts = result
    axis = kwargs.get("axis")
    if x.split is None:
        assert values.split is None and index.split is None and counts.split is None
    else:
        assert values.split == (0 if axis is None else axis)
        assert index.split == 0 and counts.split == 0
        collective_assert(values.is_balanced(force_check=True), "unique values not balanced")
        collective_assert(counts.is_balanced(force_check=True), "unique counts not balanced")
    if axis is None:
        # the inverse has the input's shape and layout
        assert inverse.split == x.split and inverse.lshape == x.lshape


@pytest.mark.parametrize(
    "shape,split",
    [(s, sp) for s in ((7,), (5, 6), (2, 3, 4), (1, 5), (0, 3)) for sp in splits_for(len(s))],
)
def test_unique(shape, split):
    data = _data(shape, np.float64, seed=1)
    x = ht.array(data, split=split)
    _check_unique(x, data)
    _check_unique(x, data, equal_nan=False)  # every NaN on its own
    assert_array_equal(ht.unique(x), np.unique(data))


@pytest.mark.parametrize("dtype", (np.float16, np.float32, np.int32, np.int64, np.bool_, np.uint8))
def test_unique_dtypes(dtype):
    data = _data((5, 6), dtype, seed=2)
    for split in (None, 0, 1):
        _check_unique(ht.array(data, split=split), data)


@pytest.mark.parametrize(
    "shape,split",
    [(s, sp) for s in ((6, 3), (2, 3, 4)) for sp in splits_for(len(s))]
    + [((1, 4), 0), ((0, 3), 1)],
)
@pytest.mark.parametrize("row_ranks", (False, True))
def test_unique_axis(shape, split, row_ranks, monkeypatch):
    if row_ranks:
        # rank the columns one by one even for these small arrays
        monkeypatch.setattr(ht.core.sets, "_ROW_RANKS_MIN_ROWS_PER_COLUMN", 0)
    rng = np.random.default_rng(3)
    # few distinct slices: draw rows from a small pool
    data = rng.integers(0, 2, size=shape).astype(np.int32)
    x = ht.array(data, split=split)
    for axis in range(len(shape)):
        _check_unique(x, data, axis=axis)
    assert_array_equal(
        ht.unique(x.astype(ht.float32), axis=-1), np.unique(data.astype(np.float32), axis=-1)
    )


@pytest.mark.parametrize("split", (None, 0, 1))
def test_unique_axis_many_rows(split):
    # enough rows to rank column by column, with re-ranking (products of column ranks pass 2**32)
    rng = np.random.default_rng(23)
    data = rng.integers(-(2**40), 2**40, size=(1500, 5))
    data[::3] = data[1]  # duplicates
    data[::7, 0] = data[2, 0]  # rows that differ only in later columns
    x = ht.array(data, split=split)
    _check_unique(x, data, axis=0)
    floats = (data[:, :3] % 5).astype(np.float32) - 2.0  # few distinct rows, -0.0 not produced
    _check_unique(ht.array(floats, split=split), floats, axis=0)
    _check_unique(ht.array(floats.T.copy(), split=split), floats.T.copy(), axis=1)


@pytest.mark.parametrize("split", (None, 0))
def test_unique_larger(split):
    # many duplicates spread over every process
    data = np.random.default_rng(4).integers(0, 40, size=600)
    x = ht.array(data, split=split)
    _check_unique(x, data)
    values, counts = ht.unique(x.astype(ht.float64), return_counts=True)
    expected_values, expected_counts = np.unique(data.astype(np.float64), return_counts=True)
    assert_array_equal(values, expected_values)
    assert_array_equal(counts, expected_counts)


@pytest.mark.parametrize("split", (0, 1))
def test_unique_unpacked_exchange(split, monkeypatch):
    # large arrays send each column in its own Alltoallv instead of packing them
    monkeypatch.setattr(ht.core._sort_engine, "_PACK_LIMIT", 0)
    data = _data((6, 7), np.float64, seed=12)
    x = ht.array(data, split=split)
    _check_unique(x, data)
    test = np.array([1.0, -2.0, np.nan])
    assert_array_equal(ht.isin(x, ht.array(test, split=0)), np.isin(data, test))


@pytest.mark.parametrize("split", (None, 0, 1))
def test_unique_array_api(split):
    data = _data((4, 5), np.float32, seed=5)
    x = ht.array(data, split=split)
    # NumPy >= 2.3 leaves unique_values unsorted (hash table); heat's are sorted
    assert_array_equal(ht.unique_values(x), np.sort(np.unique_values(data)))
    counts = ht.unique_counts(x)
    expected = np.unique_counts(data)
    assert isinstance(counts, ht.UniqueCountsResult)
    assert_array_equal(counts.values, expected.values)
    assert_array_equal(counts.counts, expected.counts)
    inverse = ht.unique_inverse(x)
    expected = np.unique_inverse(data)
    assert_array_equal(inverse.values, expected.values)
    # NumPy's order among the (distinct) NaNs is arbitrary here; heat keeps them in index order
    reconstructed = inverse.values.numpy()[inverse.inverse_indices.numpy()]
    collective_assert(np.array_equal(reconstructed, data, equal_nan=True), "values[inverse] != x")
    assert inverse.inverse_indices.split == x.split and inverse.inverse_indices.lshape == x.lshape
    everything = ht.unique_all(x)
    expected = np.unique_all(data)
    for name in ("values", "indices", "inverse_indices", "counts"):
        assert_array_equal(getattr(everything, name), getattr(expected, name))
    assert_array_equal(x.unique(), np.unique(data))


def _check_exact(actual, expected):
    """Bit-for-bit equality (up to the sign of zero and NaN payloads) on top of the oracle check."""
    assert_array_equal(actual, expected)
    collective_assert(
        np.array_equal(actual.numpy(), expected, equal_nan=expected.dtype.kind == "f"),
        "unique result differs from NumPy's",
    )


@pytest.mark.parametrize("dtype", (np.float32, np.float64, np.float16, np.int32, np.int64))
@pytest.mark.parametrize("split", (None, 0))
def test_unique_all_distinct(dtype, split):
    # the sorting path: (nearly) every value distinct, with NaNs, infinities and both zeros
    rng = np.random.default_rng(20)
    if np.dtype(dtype).kind == "f":
        data = (rng.standard_normal(1001) * 1000).astype(dtype)
        data[[3, 500, 999]] = np.nan
        data[[7, 8]] = (np.inf, -np.inf)
        data[[10, 11, 12]] = (0.0, -0.0, -0.0)
    else:
        data = rng.permutation(1001).astype(dtype) * 7919 - 3_000_000
    x = ht.array(data, split=split)
    before = data.copy()
    _check_exact(ht.unique(x), np.unique(data))
    _check_unique(x, data)
    _check_unique(x, data, equal_nan=False)
    # NumPy >= 2.3 leaves unique_values unsorted (hash table); heat's are sorted
    assert_array_equal(ht.unique_values(x), np.sort(np.unique_values(data)))
    # unique never reorders the caller's data (the keys are sorted in place only when a copy)
    collective_assert(np.array_equal(x.numpy(), before, equal_nan=True), "unique changed its input")
    if np.dtype(dtype).kind == "f":
        zero = ht.unique(x).numpy()
        collective_assert(not np.signbit(zero[zero == 0]).any(), "the unique zero is not +0.0")


@pytest.mark.parametrize(
    "dtype,low,high",
    [
        (np.int64, 0, 40),
        (np.int64, -1000, -900),
        (np.int64, np.iinfo(np.int64).min, np.iinfo(np.int64).min + 30),
        (np.int64, np.iinfo(np.int64).max - 30, np.iinfo(np.int64).max),
        (np.int32, -50, 50),
        (np.int16, -300, -200),
        (np.int8, -128, 127),
        (np.uint8, 200, 256),
        (np.bool_, 0, 2),
    ],
)
@pytest.mark.parametrize("split", (None, 0, 1))
def test_unique_heavy_duplicates(dtype, low, high, split):
    # the counting path: few distinct integers, negative offsets and the ends of the range
    rng = np.random.default_rng(21)
    data = rng.integers(low, high, size=(40, 9), dtype=np.int64 if dtype != np.uint8 else np.uint16)
    data = data.astype(dtype) if dtype != np.bool_ else data.astype(bool)
    x = ht.array(data, split=split)
    _check_exact(ht.unique(x), np.unique(data))
    _check_unique(x, data)
    _, counts = ht.unique(x, return_counts=True)
    assert_array_equal(counts, np.unique(data, return_counts=True)[1])


@pytest.mark.parametrize("split", (None, 0, 1))
def test_unique_wide_int64_duplicates(split):
    # 64-bit keys spanning more than 32 bits, with many ties (the argsort path)
    pool = np.array([-(2**62), 5, 2**62, -7, np.iinfo(np.int64).max, np.iinfo(np.int64).min])
    data = np.random.default_rng(22).choice(pool, size=(30, 7))
    x = ht.array(data, split=split)
    _check_exact(ht.unique(x), np.unique(data))
    _check_unique(x, data)
    as_float = data.astype(np.float64) / 3
    _check_unique(ht.array(as_float, split=split), as_float)


@pytest.mark.parametrize("split", (None, 0))
def test_unique_count_or_sort_boundary(split, monkeypatch):
    # spans just below and just above the counting limit, and counting in several pieces
    monkeypatch.setattr(ht.core.sets, "_COUNT_CHUNK", 16)
    for span in (49, 50, 51, 52):
        data = np.arange(100, dtype=np.int64) % span - 17
        np.random.default_rng(span).shuffle(data)
        x = ht.array(data, split=split)
        _check_exact(ht.unique(x), np.unique(data))
        _check_unique(x, data)


@pytest.mark.parametrize("size", (0, 1, 2, 3))
@pytest.mark.parametrize("dtype", (np.float32, np.int64))
def test_unique_fewer_elements_than_processes(size, dtype):
    data = np.array(
        [2, np.nan, 2][:size] if dtype == np.float32 else [5, -1, 5][:size], dtype=dtype
    )
    x = ht.array(data, split=0)
    _check_exact(ht.unique(x), np.unique(data))
    _check_unique(x, data)
    _check_unique(x, data, equal_nan=False)


def test_set_operations_keep_inputs():
    # union1d sorts its concatenated keys in place: never the caller's data
    a = np.array([5.0, -0.0, 3.0, np.nan, 1.0], dtype=np.float32)
    b = np.array([4, 3, 9, 1], dtype=np.int64)
    for split in (None, 0):
        x, y = ht.array(a, split=split), ht.array(b, split=split)
        assert_array_equal(ht.union1d(x, y), np.union1d(a, b))
        assert_array_equal(ht.union1d(y, y), np.union1d(b, b))
        collective_assert(np.array_equal(x.numpy(), a, equal_nan=True), "union1d changed ar1")
        collective_assert(np.array_equal(y.numpy(), b), "union1d changed ar2")


def test_unique_bad_input():
    x = ht.array(_data((4, 3)), split=0)
    assert_raises_then_collective_works(TypeError, ht.unique, _data((3,)))
    assert_raises_then_collective_works(
        TypeError, ht.unique, ht.ones(3, dtype=ht.complex64, split=0)
    )
    assert_raises_then_collective_works(ValueError, ht.unique, x, axis=2)
    assert_raises_then_collective_works(ValueError, ht.unique, ht.array(1.0), axis=0)
    assert_raises_then_collective_works(TypeError, ht.unique, x, return_counts=1)
    assert_raises_then_collective_works(TypeError, ht.unique, x, equal_nan=None)


# ---------------------------------------------------------------------------------------------
# isin / in1d
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "dtype,shape,split,test_split",
    [
        (np.float32, (7,), None, 0),
        (np.float32, (7,), 0, None),
        (np.float32, (7,), 0, 0),
        (np.float32, (5, 6), 1, 0),
        (np.float64, (5, 6), -1, None),
        (np.int64, (5, 6), 0, 0),
        (np.int64, (1, 5), 0, 0),
        (np.int64, (0, 3), 0, 0),
        (np.int32, (2, 3, 4), 2, None),
        (np.bool_, (5, 6), 0, 0),
        (np.bool_, (7,), None, None),
        (np.float16, (7,), 0, 0),
    ],
)
def test_isin(dtype, shape, split, test_split):
    data = _data(shape, dtype, seed=6)
    test = _data((6,), dtype, seed=7)
    if np.dtype(dtype).kind == "f":
        test[2] = np.nan  # NaN is never found
        test[3] = 0.0  # -0.0 is found
    x = ht.array(data, split=split)
    t = ht.array(test, split=test_split)
    for invert in (False, True):
        result = ht.isin(x, t, invert=invert)
        assert_array_equal(result, np.isin(data, test, invert=invert))
        assert result.split == x.split and result.lshape == x.lshape


@pytest.mark.parametrize("split", (None, 0))
def test_isin_mixed_types_and_scalars(split):
    data = np.arange(-3, 9)
    x = ht.array(data, split=split)
    test = np.array([0.5, 2.0, 7.0])
    assert_array_equal(ht.isin(x, ht.array(test, split=0)), np.isin(data, test))
    assert_array_equal(ht.isin(x, 4), np.isin(data, 4))
    assert_array_equal(ht.isin(x, [100, 3]), np.isin(data, [100, 3]))
    assert_array_equal(ht.isin(x, ht.array(np.zeros(0), split=0)), np.isin(data, np.zeros(0)))
    result = ht.in1d(x, ht.array([1, 2], split=0), invert=True)
    assert_array_equal(result, ~np.isin(data, [1, 2]))
    # 2-D: in1d flattens
    grid = data.reshape(3, 4)
    result = ht.in1d(ht.array(grid, split=None if split is None else 1), [1, 2, 40])
    assert_array_equal(result, np.isin(grid.ravel(), [1, 2, 40]))


def test_isin_bad_input():
    x = ht.arange(5, split=0)
    assert_raises_then_collective_works(TypeError, ht.isin, x, ht.ones(2, dtype=ht.complex64))
    assert_raises_then_collective_works(TypeError, ht.isin, x, [1], invert="no")
    assert_raises_then_collective_works(ValueError, ht.isin, x, [1], kind="hash")
    assert_raises_then_collective_works(TypeError, ht.isin, x, object())


# ---------------------------------------------------------------------------------------------
# intersect1d / union1d / setdiff1d
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("splits", ((None, None), (0, None), (None, 0), (0, 0)))
def test_set_operations(splits):
    rng = np.random.default_rng(8)
    for sizes in ((7, 5), (0, 4), (3, 0), (12, 9)):
        a = rng.integers(-4, 4, size=sizes[0]).astype(np.float32)
        b = rng.integers(-4, 4, size=sizes[1]).astype(np.float32)
        if a.size > 2 and b.size > 2:
            a[0] = np.nan
            b[1] = np.nan
        x, y = ht.array(a, split=splits[0]), ht.array(b, split=splits[1])
        result_split = None if splits == (None, None) else 0
        for result, expected in (
            (ht.intersect1d(x, y), np.intersect1d(a, b)),
            (ht.union1d(x, y), np.union1d(a, b)),
            (ht.setdiff1d(x, y), np.setdiff1d(a, b)),
        ):
            assert_array_equal(result, expected)
            assert result.split == result_split
            collective_assert(result.is_balanced(force_check=True), "set result not balanced")


@pytest.mark.parametrize("splits", ((None, None), (0, None), (None, 0), (0, 0)))
def test_set_operations_options(splits):
    a = np.array([5, 1, 3, 1, 4, 9, 3])
    b = np.array([3.0, 9.0, 2.0, 3.0])
    x, y = ht.array(a, split=splits[0]), ht.array(b, split=splits[1])
    # promoted dtype
    assert_array_equal(ht.intersect1d(x, y), np.intersect1d(a, b))
    assert_array_equal(ht.union1d(x, y), np.union1d(a, b))
    # setdiff1d keeps ar1's dtype
    assert_array_equal(ht.setdiff1d(x, y), np.setdiff1d(a, b))
    unique_in_order = np.array([4, 9, 1, 5, 3])
    assert_array_equal(
        ht.setdiff1d(ht.array(unique_in_order, split=splits[0]), y, assume_unique=True),
        np.setdiff1d(unique_in_order, b, assume_unique=True),
    )
    result = ht.intersect1d(x, ht.array(b.astype(np.int64), split=splits[1]), return_indices=True)
    expected = np.intersect1d(a, b.astype(np.int64), return_indices=True)
    for actual, wanted in zip(result, expected):
        assert_array_equal(actual, wanted)
    # array-likes are accepted
    assert_array_equal(ht.union1d([1, 2], [2, 3]), np.union1d([1, 2], [2, 3]))


def test_set_operations_bad_input():
    x = ht.arange(4, split=0)
    assert_raises_then_collective_works(
        TypeError, ht.intersect1d, x, ht.ones(2, dtype=ht.complex64)
    )
    assert_raises_then_collective_works(TypeError, ht.union1d, ht.ones(2, dtype=ht.complex128), x)
    assert_raises_then_collective_works(TypeError, ht.setdiff1d, x, x, assume_unique=None)
    assert_raises_then_collective_works(TypeError, ht.intersect1d, x, x, return_indices="yes")
