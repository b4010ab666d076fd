"""
Tests of heat/spatial/distance.py; the oracle is scipy.spatial.distance.cdist. Every combination
of splits of the two operands (rows, features, none; Y omitted), float32, float64 and integers,
uneven sizes and fewer rows than processes.
"""

import numpy as np
import pytest

import heat as ht
from tests.helpers import assert_array_equal, assert_raises_then_collective_works

scipy_distance = pytest.importorskip("scipy.spatial.distance")

SPLITS = [None, 0, 1]
# (rows of X, rows of Y, features): uneven at 2-4 processes, fewer rows than processes
SHAPES = [(7, 5, 3), (2, 9, 4), (1, 1, 2)]


def _operands(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    n, m, f = shape
    X = rng.normal(2.0, 3.0, size=(n, f))
    Y = rng.normal(-1.0, 3.0, size=(m, f))
    if np.dtype(dtype).kind in "iu":
        X, Y = np.round(X * 2), np.round(Y * 2)
    return X.astype(dtype), Y.astype(dtype)


def _expected_split(split_x, split_y):
    # the result's rows are X's rows (split 0 if X is split), its columns Y's rows
    if split_x is not None:
        return 0
    return 1 if split_y is not None else None


@pytest.mark.parametrize("split_x", SPLITS)
@pytest.mark.parametrize("split_y", SPLITS + ["omitted"])
def test_distances_match_scipy(split_x, split_y):
    for i, shape in enumerate(SHAPES):
        dtype = (np.float32, np.float64, np.int32)[i % 3]
        X, Y = _operands(shape, dtype, seed=i)
        x = ht.array(X, split=split_x)
        if split_y == "omitted":
            y, Y, result_split = None, X, _expected_split(split_x, split_x)
        else:
            y, result_split = ht.array(Y, split=split_y), _expected_split(split_x, split_y)
        float_type = np.float32 if dtype == np.float32 else np.float64
        tolerance = (
            {"rtol": 1e-4, "atol": 1e-4} if dtype == np.float32 else {"rtol": 1e-9, "atol": 1e-9}
        )
        euclidean = scipy_distance.cdist(X.astype(np.float64), Y.astype(np.float64))
        cityblock = scipy_distance.cdist(X.astype(np.float64), Y.astype(np.float64), "cityblock")
        results = [
            (ht.spatial.cdist(x, y), euclidean),
            (ht.spatial.cdist(x, y, quadratic_expansion=True), euclidean),
            (ht.spatial.rbf(x, y, sigma=4.0), np.exp(-(euclidean**2) / 32.0)),
            (
                ht.spatial.rbf(x, y, sigma=4.0, quadratic_expansion=True),
                np.exp(-(euclidean**2) / 32.0),
            ),
            (ht.spatial.manhattan(x, y), cityblock),
            (ht.spatial.manhattan(x, y, expand=True), cityblock),
        ]
        for actual, expected in results:
            assert actual.split == result_split
            if split_x == 0 or (split_x == 1 and split_y != 1):
                assert actual.balanced
            # the quadratic expansion loses up to sqrt(eps * |x|^2) on tiny distances
            loose = dict(tolerance, atol=2e-3 if dtype == np.float32 else 1e-6)
            assert_array_equal(actual, expected.astype(float_type), **loose)


def test_ring_with_unbalanced_operands():
    # Y with an unbalanced layout (a process may hold nothing): the ring still sees every block
    comm = ht.MPI_WORLD
    X, Y = _operands((6, 10, 3), np.float64, seed=7)
    holders = max(comm.size - 1, 1)  # process 0 holds no row of Y when there are several
    counts = [0] * (comm.size - holders) + [
        10 // holders + (r < 10 % holders) for r in range(holders)
    ]
    start = sum(counts[: comm.rank])
    y = ht.array(Y[start : start + counts[comm.rank]], is_split=0)
    x = ht.array(X, split=0)
    assert_array_equal(ht.spatial.cdist(x, y), scipy_distance.cdist(X, Y))
    assert_array_equal(ht.spatial.manhattan(y, x), scipy_distance.cdist(Y, X, "cityblock"))


def test_mixed_dtypes_promote():
    X, Y = _operands((4, 3, 2), np.float32)
    result = ht.spatial.cdist(ht.array(X, split=0), ht.array(Y.astype(np.float64)))
    assert result.dtype is ht.float64
    assert_array_equal(result, scipy_distance.cdist(X.astype(np.float64), Y), rtol=1e-6)
    # NumPy operands are taken as replicated data
    assert_array_equal(
        ht.spatial.cdist(X, Y), scipy_distance.cdist(X, Y).astype(np.float32), rtol=1e-5
    )


def test_bad_input_raises_on_every_process():
    x = ht.ones((5, 3), split=0)
    assert_raises_then_collective_works(ValueError, ht.spatial.cdist, x, ht.ones((4, 2), split=0))
    assert_raises_then_collective_works(ValueError, ht.spatial.manhattan, ht.ones(5, split=0))
    assert_raises_then_collective_works(TypeError, ht.spatial.cdist, "x")
    assert_raises_then_collective_works(ValueError, ht.spatial.rbf, x, sigma=0.0)
    assert_raises_then_collective_works(TypeError, ht.spatial.rbf, x, sigma="1")
