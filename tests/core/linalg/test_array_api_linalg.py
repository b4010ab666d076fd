"""
Tests of the array API standard's linear-algebra functions that heat adds (tensordot,
matrix_power, svdvals, matrix_rank, pinv, eigvalsh, slogdet, cholesky) against NumPy on every
split, float32/float64, uneven sizes and fewer rows than processes.
"""

import numpy as np
import pytest

import heat as ht
from tests.helpers import assert_arrays_equal, assert_raises_then_collective_works, random_array

RTOL = {np.float32: 2e-4, np.float64: 1e-9}


def splits(ndim):
    return (None,) + tuple(range(ndim))


TENSORDOT_CASES = [
    ((2, 3, 4), (4, 3), ([1, 2], [1, 0])),
    ((5, 3), (3, 7), 1),
    ((2, 3, 4), (3, 4, 2), 2),
    ((3, 2), (2, 5), 0),
    ((2, 3), (2, 3), 2),
    ((1, 4), (4, 2), ([-1], [0])),
]


@pytest.mark.parametrize("case", TENSORDOT_CASES, ids=str)
def test_tensordot(case):
    shape1, shape2, axes = case
    cases = []
    for dtype in (np.float32, np.float64):
        a = random_array(shape1, dtype=dtype, seed=1)
        b = random_array(shape2, dtype=dtype, seed=2)
        expected = np.tensordot(a, b, axes=axes)
        for s1 in splits(len(shape1)):
            for s2 in splits(len(shape2)):
                result = ht.tensordot(ht.array(a, split=s1), ht.array(b, split=s2), axes=axes)
                cases.append((result, expected, {"rtol": RTOL[dtype], "atol": 1e-4}))
    assert_arrays_equal(cases)
    assert ht.linalg.tensordot is ht.tensordot


def test_tensordot_errors():
    a = ht.zeros((2, 3), split=0)
    b = ht.zeros((3, 4), split=1)
    assert_raises_then_collective_works(ValueError, ht.tensordot, a, b, axes=3)
    assert_raises_then_collective_works(ValueError, ht.tensordot, a, b, axes=-1)
    assert_raises_then_collective_works(ValueError, ht.tensordot, a, b, axes=([0], [0]))
    assert_raises_then_collective_works(ValueError, ht.tensordot, a, b, axes=([1, 0], [0]))
    assert_raises_then_collective_works(ValueError, ht.tensordot, a, b, axes=([5], [0]))
    assert_raises_then_collective_works(TypeError, ht.tensordot, a, b, axes="x")
    assert_raises_then_collective_works(TypeError, ht.tensordot, a, b, axes=True)
