"""
Tests of heat/core/quantiles.py (median, percentile, quantile and their NaN variants); the oracle
is NumPy. The distributed paths on larger data are tested in test_quantiles_layout.py.
"""

import numpy as np
import pytest

import heat as ht
from heat.core import quantiles as quantiles_module
from tests.helpers import (
    DTYPES,
    SHORT_CASES,
    SHORT_IDS,
    assert_array_equal,
    assert_raises_then_collective_works,
    axes_for,
    quiet,
    random_array,
    rotate,
)

METHODS = (
    "linear",
    "lower",
    "higher",
    "nearest",
    "midpoint",
    "inverted_cdf",
    "averaged_inverted_cdf",
    "closest_observation",
    "interpolated_inverted_cdf",
    "hazen",
    "weibull",
    "median_unbiased",
    "normal_unbiased",
)


@pytest.mark.parametrize("shape,split", SHORT_CASES, ids=SHORT_IDS)
def test_median_percentile_quantile(shape, split):
    for i, axis in enumerate(axes_for(len(shape), split)):
        dtype = rotate(DTYPES, i + (split or 0))
        data = random_array(shape, dtype, seed=40 + i)
        x = ht.array(data, split=split)
        keepdims = i % 2 == 1
        method = rotate(METHODS, i + 3 * len(shape) + 2 * (split or 0))
        if i % 2 == 1:
            assert_array_equal(
                ht.median(x, axis=axis, keepdims=keepdims),
                np.median(data, axis=axis, keepdims=keepdims),
            )
        assert_array_equal(
            ht.percentile(x, [0, 12.5, 50, 99, 100], axis=axis, method=method, keepdims=keepdims),
            np.percentile(
                data, [0, 12.5, 50, 99, 100], axis=axis, method=method, keepdims=keepdims
            ),
        )
        if i % 2 == 0:
            assert_array_equal(
                ht.quantile(x, 0.3, axis=axis, method=rotate(METHODS, i + 5)),
                np.quantile(data, 0.3, axis=axis, method=rotate(METHODS, i + 5)),
            )


@pytest.mark.parametrize("method", METHODS)
def test_quantile_methods(method):
    """Every method, on 1-D data (the distributed selection) and along a split axis (resplit)."""
    q = np.array([[0.0, 0.07, 0.25], [0.5, 0.74, 1.0]])
    for split, dtype in ((None, np.int64), (0, np.float32), (0, np.int64)):
        data = random_array((7,), dtype, seed=41, low=-1000, high=1000)
        x = ht.array(data, split=split)
        assert_array_equal(ht.quantile(x, q, method=method), np.quantile(data, q, method=method))
    data = random_array((5, 6), np.float64, seed=42)
    x = ht.array(data, split=0)
    assert_array_equal(
        ht.quantile(x, q[1], axis=0, method=method), np.quantile(data, q[1], axis=0, method=method)
    )


def test_percentile_distributed_selection_values(monkeypatch):
    """Signed zeros, infinities, negative and repeated values, all dtypes, by radix selection."""
    # select by radix rounds down to the last bit (by default few candidates are gathered)
    monkeypatch.setattr(quantiles_module, "_GATHER_LIMIT", 0)
    floats = np.array([3.5, -0.0, np.inf, -7.25, 0.0, -np.inf, 3.5, 1e-30, -1e30, 2.0, 3.5])
    for dtype in (np.float32, np.float64, np.int8, np.int32, np.int64, np.float16):
        data = (
            floats
            if dtype in (np.float32, np.float64)
            else random_array((11,), dtype, seed=43, low=-100, high=100)
        )
        data = data.astype(dtype)
        x = ht.array(data, split=0)
        method = rotate(("lower", "higher", "nearest", "linear"), len(str(dtype)))
        assert_array_equal(
            ht.percentile(x, [0, 10, 50, 90, 100], method=method),
            quiet(np.percentile, data, [0, 10, 50, 90, 100], method=method),
        )
        if dtype in (np.int8, np.int32, np.int64):
            assert_array_equal(ht.median(x), np.median(data))
    big = np.array([np.iinfo(np.int64).min, np.iinfo(np.int64).max, 0, -1, 1], dtype=np.int64)
    assert_array_equal(
        ht.quantile(ht.array(big, split=0), [0, 0.5, 1], method="lower"),
        np.quantile(big, [0, 0.5, 1], method="lower"),
    )
    flags = np.array([True, False, True, True, False])
    assert_array_equal(
        ht.quantile(ht.array(flags, split=0), [0.2, 0.9], method="nearest"),
        np.quantile(flags, [0.2, 0.9], method="nearest"),
    )
    with_nan = np.array([2.0, np.nan, -1.0, 7.0, np.nan, 0.5])
    assert_array_equal(ht.nanmedian(ht.array(with_nan, split=0)), np.nanmedian(with_nan))
    assert_array_equal(ht.median(ht.array(with_nan, split=0)), np.median(with_nan))


def test_percentile_large_1d():
    """Enough elements for radix rounds before the remaining candidates are gathered."""
    data = random_array((6000,), np.float32, seed=47, low=-1, high=1)
    data[::7] = data[3]  # many ties
    x = ht.array(data, split=0)
    q = [0, 0.1, 33.3, 50, 99.99, 100]
    assert_array_equal(ht.percentile(x, q), np.percentile(data, q))
    assert_array_equal(
        ht.percentile(x, q, method="closest_observation"),
        np.percentile(data, q, method="closest_observation"),
    )


def test_percentile_q_types_and_out():
    data = random_array((5, 6), np.float32, seed=44)
    for split in (None, 0, 1):
        x = ht.array(data, split=split)
        assert_array_equal(ht.percentile(x, 40), np.percentile(data, 40))
        assert_array_equal(
            ht.percentile(x, np.float32(40), axis=1), np.percentile(data, np.float32(40), axis=1)
        )
        assert_array_equal(
            ht.quantile(x, np.array([0.1, 0.9]), axis=0),
            np.quantile(data, np.array([0.1, 0.9]), axis=0),
        )
        assert_array_equal(
            ht.quantile(x, ht.array([0.1, 0.9], dtype=ht.float32, split=0), axis=1),
            np.quantile(data, np.array([0.1, 0.9], dtype=np.float32), axis=1),
        )
        assert_array_equal(ht.percentile(x, [], axis=0), np.percentile(data, [], axis=0))
        out = ht.zeros((2, 6), split=1)
        ht.percentile(x, [25, 75], axis=0, out=out)
        assert_array_equal(out, np.percentile(data, [25, 75], axis=0).astype(np.float32))
    assert_array_equal(ht.array(data, split=0).median(axis=1), np.median(data, axis=1))


def test_nan_median_percentile_quantile():
    data = random_array((5, 6), np.float64, seed=45)
    data[0, 1] = data[3, 3] = data[4, 0] = np.nan
    data[:, 5] = np.nan
    for split, axis in ((None, 1), (0, None), (0, 0), (0, 1), (1, None), (1, 0)):
        x = ht.array(data, split=split)
        assert_array_equal(
            ht.percentile(x, [5, 50], axis=axis), np.percentile(data, [5, 50], axis=axis)
        )
        assert_array_equal(ht.nanmedian(x, axis=axis), quiet(np.nanmedian, data, axis=axis))
        assert_array_equal(
            ht.nanpercentile(x, [5, 50], axis=axis, method="nearest"),
            quiet(np.nanpercentile, data, [5, 50], axis=axis, method="nearest"),
        )
        assert_array_equal(
            ht.nanquantile(x, 0.7, axis=axis, keepdims=True),
            quiet(np.nanquantile, data, 0.7, axis=axis, keepdims=True),
        )
    all_nan = ht.array(np.full((4,), np.nan), split=0)
    assert_array_equal(ht.nanmedian(all_nan), quiet(np.nanmedian, np.full((4,), np.nan)))
    ints = random_array((7,), np.int32, seed=46)
    assert_array_equal(ht.nanpercentile(ht.array(ints, split=0), 35), np.nanpercentile(ints, 35))


def test_percentile_errors():
    x = ht.array(random_array((5, 6), np.float64), split=0)
    assert_raises_then_collective_works(ValueError, ht.percentile, x, 101)
    assert_raises_then_collective_works(ValueError, ht.percentile, x, [50, -1])
    assert_raises_then_collective_works(ValueError, ht.quantile, x, 1.5)
    assert_raises_then_collective_works(ValueError, ht.quantile, x, float("nan"))
    assert_raises_then_collective_works(ValueError, ht.percentile, x, 50, method="foo")
    assert_raises_then_collective_works(ValueError, ht.median, x, axis=2)
    assert_raises_then_collective_works(TypeError, ht.percentile, x, "50")
    assert_raises_then_collective_works(
        ValueError, ht.median, ht.array(np.zeros((0, 3)), split=0), axis=0
    )
    assert_raises_then_collective_works(
        TypeError, ht.median, ht.array(np.ones(3, dtype=np.complex64))
    )
