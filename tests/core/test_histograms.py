"""
Tests of heat/core/histograms.py (histogram, histc, bincount, digitize, bucketize); the oracle is
NumPy, and torch for histc and bucketize.
"""

import numpy as np
import pytest
import torch

import heat as ht
from tests.helpers import (
    DTYPES,
    assert_array_equal,
    assert_raises_then_collective_works,
    quiet,
    random_array,
    rotate,
)


@pytest.mark.parametrize(
    "shape,split", [((7,), 0), ((5, 6), None), ((5, 6), 1), ((2, 3), 0), ((0, 3), 0)]
)
def test_histogram(shape, split):
    for i, kwargs in enumerate(
        (
            {},
            {"bins": 4, "range": (-5, 5)},
            {"bins": [-10, -2, 0, 0.5, 3, 11]},
            {"bins": 3, "density": True},
        )
    ):
        data = random_array(shape, rotate(DTYPES, i + len(shape)), seed=70)
        x = ht.array(data, split=split)
        hist, edges = ht.histogram(x, **kwargs)
        expected_hist, expected_edges = quiet(np.histogram, data, **kwargs)
        assert_array_equal(hist, expected_hist)
        assert_array_equal(edges, expected_edges)
    data = random_array(shape, np.float64, seed=71)
    weights = random_array(shape, np.float32, seed=72, low=0, high=1)
    hist, edges = ht.histogram(
        ht.array(data, split=split), bins=5, weights=ht.array(weights, split=split)
    )
    expected_hist, expected_edges = np.histogram(data, bins=5, weights=weights)
    assert_array_equal(hist, expected_hist)
    assert_array_equal(edges, expected_edges)


def test_histogram_edges_and_errors():
    data = np.array(
        [1.0, 2.0, 2.0, 3.0, 3.0, 3.0, 4.0]
    )  # values on the edges, the last edge included
    x = ht.array(data, split=0)
    for bins in (3, [1, 2, 3, 4], ht.array([1.0, 2.5, 4.0], split=0)):
        hist, edges = ht.histogram(x, bins=bins)
        expected = np.histogram(data, bins=bins.numpy() if isinstance(bins, ht.DNDarray) else bins)
        assert_array_equal(hist, expected[0])
        assert_array_equal(edges, expected[1])
    assert_array_equal(
        ht.histogram(ht.array(np.full(5, 2.0), split=0), bins=2)[1],
        np.histogram(np.full(5, 2.0), bins=2)[1],
    )
    assert_raises_then_collective_works(ValueError, ht.histogram, x, bins=0)
    assert_raises_then_collective_works(ValueError, ht.histogram, x, bins=[3, 1, 2])
    assert_raises_then_collective_works(ValueError, ht.histogram, x, range=(3, 1))
    assert_raises_then_collective_works(ValueError, ht.histogram, x, weights=np.ones(6))
    assert_raises_then_collective_works(TypeError, ht.histogram, x, bins="auto")
    with_nan = ht.array(np.array([1.0, np.nan, 2.0]), split=0)
    assert_raises_then_collective_works(ValueError, ht.histogram, with_nan)


@pytest.mark.parametrize("split", [None, 0, 1])
def test_histc(split):
    data = random_array((5, 6), np.float32, seed=73)
    x = ht.array(data, split=split)
    tensor = torch.from_numpy(data)
    for kwargs in (
        {},
        {"bins": 7},
        {"bins": 4, "min": -3, "max": 3},
        {"bins": 5, "min": 2.0, "max": 2.0},
    ):
        assert_array_equal(ht.histc(x, **kwargs), torch.histc(tensor, **kwargs).numpy())
    out = ht.zeros((3,), split=0)
    ht.histc(x, bins=3, out=out)
    assert_array_equal(out, torch.histc(tensor, bins=3).numpy())
    assert_raises_then_collective_works(TypeError, ht.histc, ht.array(np.arange(4), split=0))
    assert_raises_then_collective_works(ValueError, ht.histc, x, bins=0)
    assert_raises_then_collective_works(ValueError, ht.histc, x, min=2, max=1)


def test_bincount():
    for length in (7, 2, 0):
        data = random_array((length,), np.int64, seed=74, low=0, high=5)
        x = ht.array(data, split=0)
        assert_array_equal(ht.bincount(x), np.bincount(data))
        assert_array_equal(ht.bincount(x, minlength=8), np.bincount(data, minlength=8))
        weights = random_array((length,), np.float32, seed=75)
        assert_array_equal(
            ht.bincount(x, weights=ht.array(weights, split=0)), np.bincount(data, weights=weights)
        )
        assert_array_equal(
            ht.bincount(ht.array(data), weights=weights), np.bincount(data, weights=weights)
        )
    flags = np.array([True, False, True])
    assert_array_equal(ht.bincount(ht.array(flags, split=0)), np.bincount(flags))
    assert_array_equal(
        ht.bincount(ht.array(np.array([1, 3], dtype=np.int32), split=0)), np.bincount([1, 3])
    )
    assert_raises_then_collective_works(
        ValueError, ht.bincount, ht.array(np.array([1, -2, 3]), split=0)
    )
    assert_raises_then_collective_works(
        TypeError, ht.bincount, ht.array(np.array([1.0, 2.0]), split=0)
    )
    assert_raises_then_collective_works(
        ValueError, ht.bincount, ht.zeros((2, 2), dtype=ht.int64, split=0)
    )
    assert_raises_then_collective_works(
        ValueError, ht.bincount, ht.array(np.arange(3), split=0), minlength=-1
    )
    assert_raises_then_collective_works(
        ValueError, ht.bincount, ht.array(np.arange(3), split=0), weights=np.ones(4)
    )


@pytest.mark.parametrize("split", [None, 0, 1])
def test_digitize_bucketize(split):
    data = random_array((5, 6), np.float64, seed=76)
    data[0, :3] = [-2.0, 0.0, 4.0]  # exactly on edges
    x = ht.array(data, split=split)
    increasing = [-5.0, -2.0, 0.0, 4.0, 7.5]
    for i, bins in enumerate((increasing, increasing[::-1], np.array([-3, 1, 2], dtype=np.int32))):
        right = (i + (split or 0)) % 2 == 0
        assert_array_equal(ht.digitize(x, bins, right=right), np.digitize(data, bins, right=right))
    ints = random_array((7,), np.int32, seed=77)
    assert_array_equal(
        ht.digitize(ht.array(ints, split=0), ht.array([-4, 0, 4], split=0)),
        np.digitize(ints, [-4, 0, 4]),
    )
    tensor = torch.from_numpy(data)
    boundaries = torch.tensor(increasing, dtype=torch.float64)
    right = split == 1
    assert_array_equal(
        ht.bucketize(x, boundaries, right=right),
        torch.bucketize(tensor, boundaries, right=right).numpy(),
    )
    assert_array_equal(
        ht.bucketize(x, increasing, out_int32=True),
        torch.bucketize(tensor, boundaries, out_int32=True).numpy(),
    )
    assert_raises_then_collective_works(ValueError, ht.digitize, x, [1.0, 0.0, 2.0])
    assert_raises_then_collective_works(ValueError, ht.digitize, x, [[1.0, 2.0]])
    assert_raises_then_collective_works(ValueError, ht.bucketize, x, [[1.0, 2.0]])
