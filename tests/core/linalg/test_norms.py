"""
Tests of heat/core/linalg/norms.py: vector_norm, matrix_norm and norm against NumPy on every
split, several dtypes, orders, axes, keepdims, uneven shapes and fewer rows than processes.
"""

import warnings

import numpy as np
import pytest

import heat as ht
from tests.helpers import assert_arrays_equal, assert_raises_then_collective_works, random_array

TOLERANCE = {np.float32: 1e-5, np.float64: 1e-12, np.int32: 1e-12, np.complex64: 1e-5}


def splits(ndim):
    return (None,) + tuple(range(ndim))


def numpy_quiet(function, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # divide by zero of negative orders, as NumPy's
        return function(*args, **kwargs)


VECTOR_CASES = [
    ((7,), None),
    ((7,), 0),
    ((5, 6), None),
    ((5, 6), 1),
    ((5, 6), (0, 1)),
    ((2, 3, 4), 0),
    ((2, 3, 4), (0, 2)),
    ((2, 3), -1),
    ((0, 3), 1),
]


@pytest.mark.parametrize("case", VECTOR_CASES, ids=str)
def test_vector_norm(case):
    shape, axis = case
    cases = []
    for dtype in (np.float32, np.float64, np.int32, np.complex64):
        a = random_array(shape, dtype=dtype, seed=3)
        if a.size:
            a.flat[0] = 0  # an exact zero for ord=0 and the negative orders
        for split in splits(len(shape)):
            x = ht.array(a, split=split)
            for ord in (None, 1, 2, np.inf, -np.inf, 0, 3, 0.5, -1):
                if a.size == 0 and ord in (-np.inf, -1, 0.5):
                    continue
                for keepdims in (False, True):
                    expected = numpy_quiet(
                        np.linalg.vector_norm,
                        a,
                        axis=axis,
                        keepdims=keepdims,
                        ord=2 if ord is None else ord,
                    )
                    result = ht.linalg.vector_norm(x, axis=axis, keepdims=keepdims, ord=ord)
                    cases.append((result, expected, {"rtol": TOLERANCE[dtype]}))
    assert_arrays_equal(cases)


MATRIX_CASES = [
    ((5, 6), None),
    ((6, 4), None),
    ((2, 3), None),
    ((3, 4, 5), None),
    ((3, 4, 5), (0, 2)),
    ((3, 4, 5), (2, 0)),
    ((4, 1), None),
]


@pytest.mark.parametrize("case", MATRIX_CASES, ids=str)
def test_matrix_norm(case):
    shape, axis = case
    cases = []
    for dtype in (np.float32, np.float64, np.int32):
        a = random_array(shape, dtype=dtype, seed=4)
        for split in splits(len(shape)):
            x = ht.array(a, split=split)
            for ord in ("fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf):
                for keepdims in (False, True):
                    if axis is None:
                        expected = np.linalg.matrix_norm(a, keepdims=keepdims, ord=ord)
                    else:
                        expected = np.linalg.norm(a, ord=ord, axis=axis, keepdims=keepdims)
                    result = ht.linalg.matrix_norm(x, axis=axis, keepdims=keepdims, ord=ord)
                    rtol = max(TOLERANCE[dtype], 1e-5 if ord in ("nuc", 2, -2) else 0)
                    cases.append((result, expected, {"rtol": rtol}))
    assert_arrays_equal(cases)


def test_norm_dispatch():
    a2 = random_array((5, 4), seed=5)
    a3 = random_array((2, 3, 4), seed=6)
    v = random_array((6,), seed=7)
    cases = []
    for split in (None, 0, 1):
        x2 = ht.array(a2, split=split)
        x3 = ht.array(a3, split=split)
        xv = ht.array(v, split=None if split is None else 0)
        cases += [
            (ht.norm(x2), np.linalg.norm(a2)),
            (ht.norm(x3), np.linalg.norm(a3)),
            (ht.norm(x3, keepdims=True), np.linalg.norm(a3, keepdims=True)),
            (ht.norm(x2, 1), np.linalg.norm(a2, 1)),
            (ht.norm(x2, "nuc"), np.linalg.norm(a2, "nuc")),
            (ht.norm(x2, np.inf, axis=1), np.linalg.norm(a2, np.inf, axis=1)),
            (ht.norm(x3, 2, axis=(1, 2)), np.linalg.norm(a3, 2, axis=(1, 2))),
            (ht.norm(x3, 3, axis=(2,)), np.linalg.norm(a3, 3, axis=(2,))),
            (ht.norm(xv, ord=-np.inf), np.linalg.norm(v, ord=-np.inf)),
            (
                ht.linalg.norm(ht.array(a2.astype(np.int64), split=split)),
                np.linalg.norm(a2.astype(np.int64)),
            ),
        ]
    assert_arrays_equal(cases, rtol=1e-10)


def test_norm_errors():
    x = ht.ones((3, 4), split=0)
    assert_raises_then_collective_works(ValueError, ht.norm, ht.ones((2, 3, 4), split=1), 2)
    assert_raises_then_collective_works(ValueError, ht.norm, x, 3)
    assert_raises_then_collective_works(ValueError, ht.norm, x, "fro", 1)
    assert_raises_then_collective_works(ValueError, ht.norm, x, None, (0, 1, 1))
    assert_raises_then_collective_works(ValueError, ht.linalg.vector_norm, x, ord="fro")
    assert_raises_then_collective_works(ValueError, ht.linalg.matrix_norm, ht.ones(3), ord=1)
    assert_raises_then_collective_works(ValueError, ht.linalg.matrix_norm, x, ord=3)
    assert_raises_then_collective_works(ValueError, ht.linalg.matrix_norm, x, axis=(1, 1))
    assert_raises_then_collective_works(ValueError, ht.linalg.vector_norm, x, axis=2)
    assert_raises_then_collective_works(TypeError, ht.norm, np.ones(3))
