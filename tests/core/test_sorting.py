"""
Tests of heat/core/sorting.py: sort, argsort, topk, searchsorted. NumPy is the oracle.

Ties are frequent in the test data (small integer ranges), so argsort is compared with NumPy's
stable argsort; the descending order is compared with a NumPy reference built by lexsort (NaNs
first, ties in index order).
"""

import numpy as np
import pytest
import torch

import heat as ht
from heat.core import _sort_engine
from heat.core import sorting as ht_sorting
from tests.helpers import (
    assert_array_equal,
    assert_raises_then_collective_works,
    collective_assert,
    splits_for,
)

FLOATS = (np.float16, np.float32, np.float64)


def _data(shape, dtype=np.float64, seed=0, special=True):
    """Small integers (many ties); floats get NaN and -0.0 where there is room."""
    rng = np.random.default_rng(seed)
    data = rng.integers(-3, 4, size=shape)
    if np.dtype(dtype) == np.bool_:
        return (data > 0).astype(bool)
    data = data.astype(dtype)
    if special and np.dtype(dtype).kind == "f" and data.size >= 4:
        data.flat[1] = np.nan
        data.flat[data.size // 2] = np.nan
        data.flat[0] = -0.0
        data.flat[-1] = 0.0
    return data


def _descending_argsort(data, axis):
    """NumPy reference of argsort(descending=True): NaN first, larger first, ties by index."""
    if data.dtype == np.bool_:
        nan_last = np.ones(data.shape, dtype=np.int64)
        negated = (~data).astype(np.int64)
    elif data.dtype.kind == "f":
        nan_last = (~np.isnan(data)).astype(np.int64)
        negated = np.where(np.isnan(data), 0.0, -data.astype(np.float64)) + 0.0
    else:
        nan_last = np.ones(data.shape, dtype=np.int64)
        negated = -data.astype(np.int64)
    if axis is None:
        return np.lexsort((negated.ravel(), nan_last.ravel()))
    moved_keys = np.moveaxis(negated, axis, -1)
    moved_flags = np.moveaxis(nan_last, axis, -1)
    result = np.empty(moved_keys.shape, dtype=np.int64)
    for lane in np.ndindex(moved_keys.shape[:-1]):
        result[lane] = np.lexsort((moved_keys[lane], moved_flags[lane]))
    return np.moveaxis(result, -1, axis)


def _take(data, index, axis):
    return data.ravel()[index] if axis is None else np.take_along_axis(data, index, axis)


def _check_balanced_along(result, axis):
    """A result distributed along the sort axis must have the balanced layout."""
    if result.split is not None and result.split == axis:
        collective_assert(result.is_balanced(force_check=True), "sort result is not balanced")


SHAPES = ((7,), (5, 6), (2, 3, 4), (1, 5), (0, 3), (4, 0))


@pytest.mark.parametrize("shape,split", [(s, sp) for s in SHAPES for sp in splits_for(len(s))])
def test_sort_argsort(shape, split):
    data = _data(shape)
    x = ht.array(data, split=split)
    for axis in list(range(len(shape))) + [None]:
        expected = np.sort(data, axis=axis)
        result = ht.sort(x, axis=axis)
        assert_array_equal(result, expected)
        flat_axis = 0 if axis is None else axis
        _check_balanced_along(result, flat_axis)
        if axis is None:
            assert result.split == (None if split is None else 0)
        else:
            assert result.split == x.split

        index = ht.argsort(x, axis=axis)
        assert_array_equal(index, np.argsort(data, axis=axis, kind="stable"))
        _check_balanced_along(index, flat_axis)

        if split is None or axis is None or axis == split % len(shape):
            descending = ht.sort(x, axis=axis, descending=True)
            reference = _descending_argsort(data, axis)
            assert_array_equal(descending, _take(data, reference, axis))
            assert_array_equal(ht.argsort(x, axis=axis, descending=True), reference)


@pytest.mark.parametrize(
    "dtype", (np.float16, np.float32, np.int32, np.int64, np.bool_, np.uint8, np.int8)
)
def test_sort_dtypes(dtype):
    data = _data((5, 6), dtype, seed=1)
    for split in (None, 0, 1):
        x = ht.array(data, split=split)
        for axis in (0, None):
            assert_array_equal(ht.sort(x, axis=axis), np.sort(data, axis=axis))
            assert_array_equal(ht.argsort(x, axis=axis), np.argsort(data, axis=axis, kind="stable"))
            assert_array_equal(
                ht.argsort(x, axis=axis, descending=True), _descending_argsort(data, axis)
            )


@pytest.mark.parametrize("split", (None, 0))
def test_sort_bfloat16(split):
    data = _data((11,), np.float32, seed=2)
    x = ht.array(torch.from_numpy(data).to(torch.bfloat16), split=split)
    result = ht.sort(x)
    assert result.dtype is ht.bfloat16
    np.testing.assert_array_equal(result.numpy(), np.sort(data))
    assert_array_equal(ht.argsort(x), np.argsort(data, kind="stable"))


@pytest.mark.parametrize("split", (None, 0, 1))
def test_sort_larger_multilane(split):
    # several lanes along the split axis, enough data for every bucket of the sample sort
    data = _data((3, 200), np.float32, seed=3)
    x = ht.array(data, split=split)
    for axis in (1, 0):
        assert_array_equal(ht.sort(x, axis=axis), np.sort(data, axis=axis))
        assert_array_equal(ht.argsort(x, axis=axis), np.argsort(data, axis=axis, kind="stable"))
    result = ht.sort(x, axis=1, descending=True)
    assert_array_equal(result, _take(data, _descending_argsort(data, 1), 1))
    _check_balanced_along(result, 1)


# shapes whose split-axis sort deals whole lanes to the processes (every process gets one and
# the shares are even enough at 1-4 processes), and ones that fall back to the sample sort
LANE_EXCHANGE_CASES = (
    ((9, 12), 0),  # lanes after the split axis (columns)
    ((12, 9), 1),  # lanes before it (rows)
    ((2, 20), 0),  # fewer rows than processes
    ((20, 3), 1),  # fewer columns than processes
    ((1, 7, 4, 3), 1),  # leading length-1 axis, several trailing axes as lanes
    ((4, 3, 7, 1), 2),  # lanes before, trailing length-1 axis
    ((3, 7, 4), 1),  # lanes on both sides: sample sort
    ((11, 1), 0),  # a single lane: sample sort
)


@pytest.mark.parametrize("shape,axis", LANE_EXCHANGE_CASES)
@pytest.mark.parametrize(
    "dtype", (np.float32, np.float64, np.float16, np.int32, np.int8, np.uint8, np.int64, np.bool_)
)
def test_sort_split_axis_lanes(shape, axis, dtype):
    data = _data(shape, dtype, seed=12)
    if np.dtype(dtype).kind == "f":
        data.flat[3::7] = np.nan  # NaN in several lanes, ties everywhere
        data.flat[5::11] = -0.0
        data.flat[2::13] = np.inf
    x = ht.array(data, split=axis)
    result = ht.sort(x, axis=axis)
    assert_array_equal(result, np.sort(data, axis=axis))
    _check_balanced_along(result, axis)
    index = ht.argsort(x, axis=axis)
    assert_array_equal(index, np.argsort(data, axis=axis, kind="stable"))
    _check_balanced_along(index, axis)
    reference = _descending_argsort(data, axis)
    assert_array_equal(ht.argsort(x, axis=axis, descending=True), reference)
    assert_array_equal(ht.sort(x, axis=axis, descending=True), _take(data, reference, axis))
    # the input is left as it was
    assert_array_equal(x, data)


@pytest.mark.parametrize("lanes_split", (0, 1))
def test_sort_split_axis_lanes_unbalanced_and_special(lanes_split):
    data = _data((10, 14), np.float32, seed=13)
    if lanes_split == 1:
        data = data.T.copy()
    x = ht.array(data, split=lanes_split)
    if x.comm.size > 1:
        # every row on the last process but one on the first
        counts = [0] * x.comm.size
        counts[0] = 1
        counts[-1] = data.shape[lanes_split] - 1
        x = ht.redistribute(x, counts)
    result = ht.sort(x, axis=lanes_split)
    assert_array_equal(result, np.sort(data, axis=lanes_split))
    collective_assert(result.is_balanced(force_check=True))
    assert_array_equal(
        ht.argsort(x, axis=lanes_split), np.argsort(data, axis=lanes_split, kind="stable")
    )
    # constant data, bfloat16, out=
    constant = ht.full((6, 8), 2.5, split=0)
    assert_array_equal(
        ht.argsort(constant, axis=0), np.zeros((6, 8), np.int64) + np.arange(6)[:, None]
    )
    values = _data((8, 9), np.float32, seed=14)
    b = ht.array(torch.from_numpy(values).to(torch.bfloat16), split=0)
    sorted_b = ht.sort(b, axis=0, descending=True)
    assert sorted_b.dtype is ht.bfloat16
    reference = _descending_argsort(values, 0)
    np.testing.assert_array_equal(sorted_b.numpy(), _take(values, reference, 0))
    assert_array_equal(ht.argsort(b, axis=0), np.argsort(values, axis=0, kind="stable"))
    out = ht.empty((8, 9), dtype=ht.float32, split=1)
    ht.sort(ht.array(values, split=0), axis=0, out=out)
    assert_array_equal(out, np.sort(values, axis=0))


@pytest.mark.parametrize("split", (0, 1))
def test_sort_unpacked_exchange(split, monkeypatch):
    # large arrays send each column in its own Alltoallv instead of packing them
    monkeypatch.setattr(_sort_engine, "_PACK_LIMIT", 0)
    data = _data((4, 30), np.float32, seed=11)
    x = ht.array(data, split=split)
    assert_array_equal(ht.argsort(x, axis=split), np.argsort(data, axis=split, kind="stable"))
    assert_array_equal(ht.argsort(x, axis=None), np.argsort(data, axis=None, kind="stable"))
    assert_array_equal(
        ht.sort(x, axis=split, descending=True),
        _take(data, _descending_argsort(data, split), split),
    )
    monkeypatch.setattr(ht_sorting, "_TOPK_GATHER_LIMIT", 0)
    values, indices = ht.topk(x, 7, dim=1)
    expected_values, expected_indices = _topk_reference(data, 7, 1, True)
    assert_array_equal(values, expected_values)
    assert_array_equal(indices, expected_indices)


def test_sort_constant_and_unbalanced_input():
    # all values equal: the (value, index) splitters still balance the buckets
    x = ht.zeros(50, dtype=ht.int32, split=0)
    result = ht.sort(x)
    assert_array_equal(result, np.zeros(50, dtype=np.int32))
    collective_assert(result.is_balanced(force_check=True))
    assert_array_equal(ht.argsort(x), np.arange(50))
    assert_array_equal(ht.argsort(x, descending=True), np.arange(50))

    # every row on the last process
    data = _data((4, 23), np.float64, seed=4)
    x = ht.array(data, split=1)
    if x.comm.size > 1:
        counts = [0] * x.comm.size
        counts[-1] = 23
        x = ht.redistribute(x, counts)
    result = ht.sort(x, axis=1)
    assert_array_equal(result, np.sort(data, axis=1))
    collective_assert(result.is_balanced(force_check=True))
    assert_array_equal(ht.argsort(x, axis=1), np.argsort(data, axis=1, kind="stable"))


def test_sort_options_and_out():
    data = _data((9,), np.float32, seed=5)
    x = ht.array(data, split=0)
    expected = np.sort(data)
    for kwargs in ({"kind": "stable"}, {"kind": "quicksort"}, {"stable": True}, {"stable": False}):
        assert_array_equal(ht.sort(x, **kwargs), expected)
        assert_array_equal(ht.argsort(x, **kwargs), np.argsort(data, kind="stable"))
    out = ht.empty(9, dtype=ht.float32, split=0)
    returned = ht.sort(x, out=out)
    assert returned is out
    assert_array_equal(out, expected)
    assert_array_equal(x.sort(), expected)
    assert_array_equal(
        ht.sort(ht.array(_data((3, 4)), split=1), axis=-1), np.sort(_data((3, 4)), axis=-1)
    )
    assert_array_equal(x.argsort(), np.argsort(data, kind="stable"))
    # 0-d arrays sort only flattened
    assert_array_equal(
        ht.sort(ht.array(3.0), axis=None), np.sort(np.array(3.0, dtype=np.float32), axis=None)
    )


def test_sort_bad_input():
    x = ht.array(_data((4, 5)), split=0)
    assert_raises_then_collective_works(ValueError, ht.sort, x, axis=2)
    assert_raises_then_collective_works(ValueError, ht.argsort, x, axis=-3)
    assert_raises_then_collective_works(TypeError, ht.sort, x, axis=0.5)
    assert_raises_then_collective_works(TypeError, ht.sort, _data((3,)), 0)
    assert_raises_then_collective_works(TypeError, ht.sort, ht.ones(3, dtype=ht.complex64, split=0))
    assert_raises_then_collective_works(ValueError, ht.sort, x, kind="bogo")
    assert_raises_then_collective_works(ValueError, ht.sort, x, kind="stable", stable=False)
    assert_raises_then_collective_works(ValueError, ht.sort, x, order="f0")
    assert_raises_then_collective_works(TypeError, ht.sort, x, descending="yes")
    assert_raises_then_collective_works(ValueError, ht.sort, ht.array(1.0), axis=0)
    assert_raises_then_collective_works(ValueError, ht.sort, x, out=ht.empty((5, 4), split=0))


# ---------------------------------------------------------------------------------------------
# topk
# ---------------------------------------------------------------------------------------------
def _topk_reference(data, k, dim, largest):
    if largest:
        order = _descending_argsort(data, dim)
    else:
        order = np.argsort(data, axis=dim, kind="stable")
    index = np.take(order, np.arange(k), axis=dim)
    return np.take_along_axis(data, index, dim), index


@pytest.mark.parametrize(
    "shape,split",
    [(s, sp) for s in ((7,), (5, 6), (2, 3, 4), (1, 5), (0, 3)) for sp in splits_for(len(s))],
)
def test_topk(shape, split):
    data = _data(shape, np.float32, seed=6)
    x = ht.array(data, split=split)
    for dim in range(len(shape)):
        for k in sorted({min(1, shape[dim]), (shape[dim] + 1) // 2, shape[dim]}):
            for largest in (True, False) if k == (shape[dim] + 1) // 2 else (True,):
                values, indices = ht.topk(x, k, dim=dim, largest=largest)
                expected_values, expected_indices = _topk_reference(data, k, dim, largest)
                assert_array_equal(values, expected_values)
                assert_array_equal(indices, expected_indices)
                _check_balanced_along(values, dim)
                _check_balanced_along(indices, dim)


@pytest.mark.parametrize("dtype", (np.int64, np.bool_, np.float64))
@pytest.mark.parametrize("split", (None, 1))
def test_topk_sample_sort_path(dtype, split, monkeypatch):
    # force the distributed sample sort of the candidates instead of gathering them
    monkeypatch.setattr(ht_sorting, "_TOPK_GATHER_LIMIT", 0)
    data = _data((3, 40), dtype, seed=7)
    x = ht.array(data, split=split)
    for k in (1, 17, 40):
        for largest in (True, False):
            values, indices = ht.topk(x, k, dim=1, largest=largest)
            expected_values, expected_indices = _topk_reference(data, k, 1, largest)
            assert_array_equal(values, expected_values)
            assert_array_equal(indices, expected_indices)


def test_topk_out_and_bad_input():
    data = _data((10,), np.float64, seed=8)
    x = ht.array(data, split=0)
    out = (ht.empty(3, dtype=ht.float64, split=0), ht.empty(3, dtype=ht.int64, split=0))
    values, indices = ht.topk(x, 0)
    assert_array_equal(values, np.zeros(0))
    assert_array_equal(indices, np.zeros(0, dtype=np.int64))
    returned = ht.topk(x, 3, out=out)
    assert returned[0] is out[0] and returned[1] is out[1]
    expected_values, expected_indices = _topk_reference(data, 3, 0, True)
    assert_array_equal(out[0], expected_values)
    assert_array_equal(out[1], expected_indices)

    assert_raises_then_collective_works(ValueError, ht.topk, x, 11)
    assert_raises_then_collective_works(ValueError, ht.topk, x, -1)
    assert_raises_then_collective_works(TypeError, ht.topk, x, 2.0)
    assert_raises_then_collective_works(ValueError, ht.topk, x, 1, dim=1)
    assert_raises_then_collective_works(TypeError, ht.topk, x, 1, largest=None)
    assert_raises_then_collective_works(
        TypeError, ht.topk, ht.ones(4, dtype=ht.complex128, split=0), 1
    )
    assert_raises_then_collective_works(ValueError, ht.topk, ht.array(2.0), 1)


# ---------------------------------------------------------------------------------------------
# searchsorted
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("n", (0, 1, 6, 11))
@pytest.mark.parametrize("a_split", (None, 0))
def test_searchsorted(n, a_split):
    rng = np.random.default_rng(9)
    a_data = np.sort(rng.integers(-4, 4, size=n).astype(np.float64))
    if n > 4:
        a_data[-1] = np.nan
    v_data = rng.integers(-5, 5, size=(4, 3)).astype(np.float64)
    v_data[0, 0] = np.nan
    v_data[0, 1] = -0.0
    a = ht.array(a_data, split=a_split)
    for v_split in (None, 0, 1):
        v = ht.array(v_data, split=v_split)
        for side in ("left", "right"):
            result = ht.searchsorted(a, v, side=side)
            assert_array_equal(result, np.searchsorted(a_data, v_data, side=side))
            assert result.split == v.split and result.lshape == v.lshape
    scalar = ht.searchsorted(a, 1.0, side="right")
    assert scalar.shape == ()
    assert scalar.item() == np.searchsorted(a_data, 1.0, side="right")


@pytest.mark.parametrize("a_split", (None, 0))
@pytest.mark.parametrize("sorter_split", (None, 0))
def test_searchsorted_sorter_and_types(a_split, sorter_split):
    rng = np.random.default_rng(10)
    shuffled = rng.integers(-6, 6, size=9).astype(np.int32)
    sorter = np.argsort(shuffled, kind="stable")
    values = np.array([-7.0, -2.5, 0.0, 3.0, 9.0])
    result = ht.searchsorted(
        ht.array(shuffled, split=a_split),
        ht.array(values, split=0),
        sorter=ht.array(sorter, split=sorter_split),
    )
    assert_array_equal(result, np.searchsorted(shuffled, values, sorter=sorter))
    # integer a, float v: compared in the promoted type
    a_data = np.array([1, 3, 3, 5, 7])
    result = ht.searchsorted(
        ht.array(a_data, split=a_split), ht.array([2.5, 3.0, 8.0], split=0), side="right"
    )
    assert_array_equal(result, np.searchsorted(a_data, [2.5, 3.0, 8.0], side="right"))
    assert_array_equal(ht.searchsorted(a_data, [0, 3]), np.searchsorted(a_data, [0, 3]))


def test_searchsorted_bad_input():
    a = ht.array(np.arange(6.0), split=0)
    assert_raises_then_collective_works(ValueError, ht.searchsorted, ht.zeros((2, 3), split=0), 1.0)
    assert_raises_then_collective_works(ValueError, ht.searchsorted, a, 1.0, side="middle")
    assert_raises_then_collective_works(
        TypeError, ht.searchsorted, a, ht.ones(2, dtype=ht.complex64)
    )
    assert_raises_then_collective_works(ValueError, ht.searchsorted, a, 1.0, sorter=ht.arange(5))
    assert_raises_then_collective_works(TypeError, ht.searchsorted, a, 1.0, sorter=ht.zeros(6))
    assert_raises_then_collective_works(
        ValueError, ht.searchsorted, a, 1.0, sorter=ht.arange(6, split=0) + 1
    )
