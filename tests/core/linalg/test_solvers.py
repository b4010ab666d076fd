"""
Tests of heat/core/linalg/solvers.py: det, inv, solve, solve_triangular, matrix_exp/expm and
condest against NumPy/SciPy on every split, float32/float64/integers, stacks of matrices,
unbalanced layouts and fewer rows than processes; LinAlgError raised on every process.
"""

import numpy as np
import pytest
import scipy.linalg

import heat as ht
from tests.helpers import (
    assert_array_equal,
    assert_arrays_equal,
    assert_raises_then_collective_works,
    collective_assert,
    random_array,
    skewed,
)

RTOL = {np.float32: 1e-4, np.float64: 1e-10, np.int32: 1e-10, np.complex128: 1e-10}


def splits(ndim):
    return (None,) + tuple(range(ndim))


def well_conditioned(shape, dtype=np.float64, seed=0):
    """Random square matrices with a dominant diagonal (integers: small values)."""
    n = shape[-1]
    a = random_array(shape, dtype=dtype, seed=seed, low=-3, high=4)
    return (a + (3 * n) * np.eye(n, dtype=a.dtype)).astype(dtype)


SQUARE_SHAPES = [(5, 5), (2, 2), (1, 1), (3, 4, 4), (2, 1, 3, 3)]


@pytest.mark.parametrize("shape", SQUARE_SHAPES, ids=str)
def test_det_inv(shape):
    cases = []
    for dtype in (np.float32, np.float64, np.int32, np.complex128):
        a = well_conditioned(shape, dtype=dtype, seed=1)
        expected_det = np.linalg.det(a)
        expected_inv = np.linalg.inv(a)
        for split in splits(len(shape)):
            for x in (ht.array(a, split=split), skewed(ht.array(a, split=split))):
                cases.append((ht.linalg.det(x), expected_det, {"rtol": RTOL[dtype]}))
                result = ht.linalg.inv(x)
                collective_assert(
                    result.split == x.split, f"inv changed split {x.split} to {result.split}"
                )
                cases.append((result, expected_inv, {"rtol": RTOL[dtype], "atol": 1e-7}))
    assert_arrays_equal(cases)


def test_det_singular_and_empty():
    cases = []
    singular = np.array([[1.0, 2.0], [2.0, 4.0]])
    for split in splits(2):
        cases.append((ht.linalg.det(ht.array(singular, split=split)), np.linalg.det(singular)))
        cases.append(
            (
                ht.linalg.det(ht.zeros((0, 0), split=split, dtype=ht.float64)),
                np.linalg.det(np.zeros((0, 0))),
            )
        )
        cases.append(
            (ht.linalg.inv(ht.zeros((0, 0), split=split, dtype=ht.float64)), np.zeros((0, 0)))
        )
    assert_arrays_equal(cases, atol=1e-12)


def test_det_inv_errors():
    for split in splits(2):
        x = ht.array(np.array([[1.0, 2.0], [2.0, 4.0]]), split=split)
        assert_raises_then_collective_works(ht.linalg.LinAlgError, ht.linalg.inv, x)
    # one singular matrix in a stack split along its batch axis: every process raises
    stack = well_conditioned((4, 3, 3))
    stack[3] = 0
    assert_raises_then_collective_works(
        ht.linalg.LinAlgError, ht.linalg.inv, ht.array(stack, split=0)
    )
    assert_raises_then_collective_works(
        ht.linalg.LinAlgError, ht.linalg.inv, ht.ones((3, 4), split=0)
    )
    assert_raises_then_collective_works(
        ht.linalg.LinAlgError, ht.linalg.det, ht.ones((2, 3, 4), split=1)
    )
    assert_raises_then_collective_works(ht.linalg.LinAlgError, ht.linalg.det, ht.ones(4, split=0))
    assert_raises_then_collective_works(TypeError, ht.linalg.det, ht.ones((2, 2), dtype=ht.float16))
    assert_raises_then_collective_works(TypeError, ht.linalg.inv, np.eye(2))
    collective_assert(issubclass(ht.linalg.LinAlgError, ValueError), "LinAlgError is no ValueError")


SYSTEMS = [
    ((5, 5), (5,)),
    ((5, 5), (5, 3)),
    ((2, 2), (2, 4)),
    ((3, 4, 4), (3, 4, 2)),
    ((4, 4), (3, 4, 2)),
    ((3, 4, 4), (4,)),
    ((2, 3, 3), (1, 3, 5)),
]


@pytest.mark.parametrize("shapes", SYSTEMS, ids=str)
def test_solve(shapes):
    shape_a, shape_b = shapes
    cases = []
    for dtype in (np.float32, np.float64, np.int32):
        a = well_conditioned(shape_a, dtype=dtype, seed=2)
        b = random_array(shape_b, dtype=dtype, seed=3)
        expected = np.linalg.solve(a, b)
        for sa in splits(len(shape_a)):
            for sb in splits(len(shape_b)):
                x = ht.linalg.solve(ht.array(a, split=sa), skewed(ht.array(b, split=sb)))
                cases.append((x, expected, {"rtol": RTOL[dtype], "atol": 1e-6}))
    assert_arrays_equal(cases)


@pytest.mark.parametrize("shapes", SYSTEMS[:4], ids=str)
def test_solve_triangular(shapes):
    shape_a, shape_b = shapes
    cases = []
    a = well_conditioned(shape_a, seed=4)
    b = random_array(shape_b, seed=5)
    for lower in (False, True):
        for unit in (False, True):
            t = np.tril(a) if lower else np.triu(a)
            if unit:
                t = (
                    t
                    - np.eye(shape_a[-1]) * np.diagonal(t, axis1=-2, axis2=-1)[..., None, :]
                    + np.eye(shape_a[-1])
                )
            expected = np.linalg.solve(t, b)
            for sa in splits(len(shape_a)):
                for sb in splits(len(shape_b)):
                    # the other triangle (and a unit diagonal) is not read: pass the full matrix
                    x = ht.linalg.solve_triangular(
                        ht.array(a, split=sa),
                        ht.array(b, split=sb),
                        lower=lower,
                        unit_diagonal=unit,
                    )
                    cases.append((x, expected))
    assert_arrays_equal(cases, rtol=1e-10, atol=1e-10)


def test_solve_errors():
    a = ht.array(well_conditioned((4, 4)), split=0)
    assert_raises_then_collective_works(ValueError, ht.linalg.solve, a, ht.ones(5, split=0))
    assert_raises_then_collective_works(ValueError, ht.linalg.solve, a, ht.ones((3, 4), split=1))
    assert_raises_then_collective_works(
        ValueError, ht.linalg.solve, ht.ones((2, 4, 4)), ht.ones((3, 4, 1))
    )
    assert_raises_then_collective_works(
        ht.linalg.LinAlgError, ht.linalg.solve, ht.ones((4, 4), split=1), ht.ones(4)
    )
    assert_raises_then_collective_works(
        ht.linalg.LinAlgError, ht.linalg.solve, ht.ones((4, 3), split=1), ht.ones(4)
    )
    singular = np.triu(well_conditioned((4, 4)))
    singular[2, 2] = 0
    assert_raises_then_collective_works(
        ht.linalg.LinAlgError,
        ht.linalg.solve_triangular,
        ht.array(singular, split=0),
        ht.ones((4, 2), split=1),
    )


@pytest.mark.parametrize("shape", [(4, 4), (2, 2), (3, 3, 3)], ids=str)
def test_matrix_exp(shape):
    cases = []
    for dtype in (np.float32, np.float64, np.int32):
        a = random_array(shape, dtype=dtype, seed=6, low=-1, high=2)
        expected = scipy.linalg.expm(a.astype(np.float64)).astype(
            np.float32 if dtype == np.float32 else np.float64
        )
        for split in splits(len(shape)):
            for x in (ht.array(a, split=split), skewed(ht.array(a, split=split))):
                result = ht.linalg.matrix_exp(x)
                collective_assert(result.split == x.split, "matrix_exp changed the layout")
                cases.append((result, expected, {"rtol": RTOL[dtype], "atol": 1e-5}))
    cases.append((ht.linalg.expm(ht.zeros((3, 3), split=0)), np.eye(3, dtype=np.float32)))
    assert_arrays_equal(cases)
    assert_raises_then_collective_works(
        ht.linalg.LinAlgError, ht.linalg.matrix_exp, ht.ones((2, 3), split=0)
    )


def test_condest():
    a = random_array((6, 6), seed=7) + np.diag(np.arange(1.0, 7.0) ** 3)
    cond1 = np.linalg.cond(a, 1)
    cond2 = np.linalg.cond(a, 2)
    bound = np.linalg.norm(a, "fro") * np.linalg.norm(np.linalg.inv(a), "fro")
    failures = []
    values = []
    for split in splits(2):
        x = ht.array(a, split=split)
        one = ht.linalg.condest(x, p=1).item()
        two = ht.linalg.condest(x).item()
        values.append(two)
        # Hager's estimate is a lower bound of the 1-norm condition number, exact here
        if not np.isclose(one, cond1, rtol=1e-8):
            failures.append(f"split {split}: p=1 estimate {one} != {cond1}")
        # the randomized Frobenius estimate lies near ||A||_F ||A^-1||_F >= cond2
        if not (0.2 * bound <= two <= 5 * bound and two >= 0.2 * cond2):
            failures.append(f"split {split}: p=2 estimate {two} far from {bound} (cond2 {cond2})")
    if not np.allclose(values, values[0], rtol=1e-10):
        failures.append(f"p=2 estimates differ between layouts: {values}")
    singular = ht.array(np.ones((3, 3)), split=0)
    if ht.linalg.condest(singular, p=1).item() != np.inf:
        failures.append("a singular matrix does not give inf")
    collective_assert(not failures, "\n".join(failures))
    assert_array_equal(ht.linalg.condest(ht.eye(4, split=1), p=1), np.array(1.0, dtype=np.float32))


def test_condest_errors():
    x = ht.ones((3, 3), split=0)
    assert_raises_then_collective_works(ValueError, ht.linalg.condest, x, p=3)
    assert_raises_then_collective_works(
        ValueError, ht.linalg.condest, x, p=1, algorithm="randomized"
    )
    assert_raises_then_collective_works(TypeError, ht.linalg.condest, x, algorithm=2)
    assert_raises_then_collective_works(ValueError, ht.linalg.condest, x, params={"nsamples": 0})
    assert_raises_then_collective_works(
        ValueError, ht.linalg.condest, ht.ones((3, 4), split=0), p=1
    )
    assert_raises_then_collective_works(
        ht.linalg.LinAlgError, ht.linalg.condest, ht.ones(3, split=0)
    )


@pytest.mark.parametrize("shape", [(9, 4), (4, 9), (2, 7)], ids=str)
def test_condest_of_non_square_matrices(shape):
    # HeAT 1.8 accepted non-square matrices: the 2-norm condition number sigma_max / sigma_min
    a = random_array(shape, seed=3)
    cond2 = np.linalg.cond(a)
    r = np.linalg.qr(a if shape[0] > shape[1] else a.T, mode="r")
    bound = np.linalg.norm(r, "fro") * np.linalg.norm(np.linalg.inv(r), "fro")
    failures, values = [], []
    for split in splits(2):
        estimate = ht.linalg.condest(ht.array(a, split=split)).item()
        values.append(estimate)
        if not (0.2 * bound <= estimate <= 5 * bound and estimate >= 0.2 * cond2):
            failures.append(f"split {split}: estimate {estimate} far from {bound} (cond2 {cond2})")
    if not np.allclose(values, values[0], rtol=1e-8):
        failures.append(f"estimates differ between layouts: {values}")
    collective_assert(not failures, "\n".join(failures))


@pytest.mark.parametrize("b_shape", [(5,), (5, 3)], ids=str)
def test_solve_out(b_shape):
    # HeAT's out= of solve: the solution lands in out, cast to its dtype, in its split
    a = well_conditioned((5, 5), seed=4)
    b = random_array(b_shape, seed=5)
    expected = np.linalg.solve(a, b)
    cases = []
    for a_split in splits(2):
        for out_split in splits(len(b_shape)):
            for out_dtype in (ht.float64, ht.float32):
                out = ht.zeros(b_shape, dtype=out_dtype, split=out_split)
                result = ht.linalg.solve(ht.array(a, split=a_split), ht.array(b, split=0), out=out)
                collective_assert(result is out, "solve did not return out")
                collective_assert(out.split == out_split and out.dtype == out_dtype, "out changed")
                cases.append(
                    (
                        out,
                        expected.astype(np.float64 if out_dtype == ht.float64 else np.float32),
                        {"rtol": 1e-4, "atol": 1e-5},
                    )
                )
    assert_arrays_equal(cases)
    assert_raises_then_collective_works(
        TypeError, ht.linalg.solve, ht.eye(3, split=0), ht.ones(3), out=np.zeros(3)
    )
    assert_raises_then_collective_works(
        ValueError, ht.linalg.solve, ht.eye(3, split=0), ht.ones(3), out=ht.zeros(4, split=0)
    )
