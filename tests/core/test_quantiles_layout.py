"""
Tests of the distributed paths of median/percentile/quantile (heat/core/quantiles.py): the
chunked radix selection over all elements of a split array, and the in-place sort of the
resplit block when the split axis is reduced. NumPy is the oracle.
"""

import warnings

import numpy as np
import pytest
import torch

import heat as ht
from heat.core import quantiles as quantiles_module
from tests.helpers import assert_array_equal, collective_assert, random_array

METHODS = quantiles_module._QUANTILE_METHODS  # every method NumPy has
Q = [0, 0.1, 1 / 3, 0.5, 0.77, 0.999, 1]


def quiet(function, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return function(*args, **kwargs)


@pytest.fixture
def small_scans(monkeypatch):
    """Several chunks, radix rounds and a kept candidate pool already on small data."""
    monkeypatch.setattr(quantiles_module, "_SCAN_CHUNK", 64)
    monkeypatch.setattr(quantiles_module, "_GATHER_LIMIT", 16)


def _float_data(n, dtype, seed):
    data = random_array((n,), np.float64, seed=seed, low=-3, high=3)
    data[::5] = np.round(data[::5])  # ties
    data[7] = -0.0
    data[11] = 0.0
    data[13] = np.inf
    data[17] = -np.inf
    return data.astype(dtype)


@pytest.mark.parametrize("dtype", (np.float32, np.float64, np.float16))
def test_radix_selection_floats(dtype, small_scans):
    data = _float_data(3001, dtype, seed=1)
    x = ht.array(data, split=0)
    for i, method in enumerate(METHODS):
        q = Q if i % 2 == 0 else [0.25, 0.5]
        assert_array_equal(
            ht.quantile(x, q, method=method), quiet(np.quantile, data, q, method=method)
        )
    assert_array_equal(ht.median(x), np.median(data))
    # the input is left as it was
    assert_array_equal(x, data)


@pytest.mark.parametrize("dtype", (np.int8, np.uint8, np.int16, np.int32, np.int64, np.bool_))
def test_radix_selection_integers(dtype, small_scans):
    data = random_array((2500,), dtype, seed=2, low=-120, high=120)
    if np.dtype(dtype).kind == "i":
        info = np.iinfo(dtype)
        data[3], data[4] = info.min, info.max
    x = ht.array(data, split=0)
    for method in ("lower", "higher", "nearest", "inverted_cdf", "closest_observation"):
        assert_array_equal(ht.quantile(x, Q, method=method), np.quantile(data, Q, method=method))
    if dtype is not np.bool_:
        assert_array_equal(ht.percentile(x, [5, 50, 95]), np.percentile(data, [5, 50, 95]))


def test_radix_selection_nan(small_scans):
    data = _float_data(2000, np.float32, seed=3)
    bits = data.view(np.int32)
    data[100] = np.nan
    bits[200] = np.int32(-4194304)  # a NaN with the sign bit set (0xFFC00000)
    bits[300] = np.int32(0x7F800001)  # a NaN with another payload
    x = ht.array(data, split=0)
    assert_array_equal(ht.percentile(x, [10, 50]), quiet(np.percentile, data, [10, 50]))
    assert_array_equal(ht.median(x), quiet(np.median, data))
    assert_array_equal(ht.nanmedian(x), np.nanmedian(data))
    for method in ("linear", "nearest", "weibull"):
        assert_array_equal(
            ht.nanquantile(x, Q, method=method), np.nanquantile(data, Q, method=method)
        )
    all_nan = ht.array(np.full(100, np.nan), split=0)
    assert_array_equal(ht.nanmedian(all_nan), quiet(np.nanmedian, np.full(100, np.nan)))


def test_radix_selection_ties_and_layouts(small_scans):
    # constant data: the candidates never become few, every round scans the data
    for dtype in (np.float64, np.int64):
        constant = np.full(1500, 7, dtype=dtype)
        x = ht.array(constant, split=0)
        assert_array_equal(ht.quantile(x, Q), np.quantile(constant, Q))
    # two values only, at both ends of the float range
    two = np.where(np.arange(1000) % 3 == 0, -1e300, 1e300)
    assert_array_equal(ht.quantile(ht.array(two, split=0), Q), np.quantile(two, Q))
    # 2-D, split along 1, and all elements on one process / fewer rows than processes
    data = random_array((3, 700), np.float32, seed=4)
    x = ht.array(data, split=1)
    assert_array_equal(ht.quantile(x, Q), np.quantile(data, Q))
    y = ht.array(data, split=0)
    assert_array_equal(ht.quantile(y, Q, method="hazen"), np.quantile(data, Q, method="hazen"))
    if x.comm.size > 1:
        counts = [0] * x.comm.size
        counts[-1] = 700
        z = ht.redistribute(x, counts)
        assert_array_equal(ht.quantile(z, Q), np.quantile(data, Q))


def test_radix_selection_bfloat16(small_scans):
    data = _float_data(1200, np.float32, seed=5)
    rounded = torch.from_numpy(data).to(torch.bfloat16)
    exact = rounded.to(torch.float32).numpy()
    x = ht.array(rounded, split=0)
    for method in ("lower", "higher", "nearest"):
        result = ht.quantile(x, Q, method=method)
        assert result.dtype is ht.bfloat16
        np.testing.assert_array_equal(
            result.numpy().astype(np.float32), np.quantile(exact, Q, method=method)
        )


@pytest.mark.parametrize("split", (0, 1))
def test_reduced_split_axis_sorted_in_place(split):
    """The split axis reduced with kept axes: resplit, then the block is sorted in place."""
    data = random_array((13, 9), np.float64, seed=6)
    data[2, 3] = np.nan
    data[:, 4] = np.nan
    x = ht.array(data, split=split)
    axis = split
    for i, method in enumerate(METHODS):
        assert_array_equal(
            ht.quantile(x, [0.2, 0.5, 1], axis=axis, method=method, keepdims=i % 2 == 1),
            np.quantile(data, [0.2, 0.5, 1], axis=axis, method=method, keepdims=i % 2 == 1),
        )
    assert_array_equal(ht.nanmedian(x, axis=axis), quiet(np.nanmedian, data, axis=axis))
    assert_array_equal(
        ht.nanpercentile(x, [5, 95], axis=axis, method="lower"),
        quiet(np.nanpercentile, data, [5, 95], axis=axis, method="lower"),
    )
    assert_array_equal(x, data)  # the input is left as it was
    # several reduced axes, one of them split; integer and bool data; fewer rows than processes
    cube = random_array((2, 5, 4), np.int32, seed=7)
    c = ht.array(cube, split=0)
    assert_array_equal(ht.median(c, axis=(0, 2)), np.median(cube, axis=(0, 2)))
    assert_array_equal(
        ht.quantile(c, 0.3, axis=(0, 1), method="nearest"),
        np.quantile(cube, 0.3, axis=(0, 1), method="nearest"),
    )
    assert_array_equal(c, cube)
    flags = random_array((3, 6), np.bool_, seed=8)
    assert_array_equal(
        ht.quantile(ht.array(flags, split=0), 0.5, axis=0, method="lower"),
        np.quantile(flags, 0.5, axis=0, method="lower"),
    )
    halves = random_array((4, 7), np.float16, seed=9)
    assert_array_equal(
        ht.percentile(ht.array(halves, split=1), 40, axis=1),
        np.percentile(halves, 40, axis=1),
    )


def test_local_quantiles_leave_input():
    data = random_array((6, 5), np.float32, seed=10)
    for split in (None, 0, 1):
        x = ht.array(data, split=split)
        for axis in (0, 1, (0, 1), None):
            assert_array_equal(ht.median(x, axis=axis), np.median(data, axis=axis))
        assert_array_equal(x, data)
    collective_assert(True)
