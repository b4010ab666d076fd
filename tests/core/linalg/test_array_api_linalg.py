"""
Tests of the array API standard's linear-algebra functions that heat adds (tensordot,
matrix_power, svdvals, matrix_rank, pinv, eigvalsh, slogdet, cholesky) against NumPy on every
split, float32/float64, uneven sizes and fewer rows than processes.
"""

import numpy as np
import pytest

import heat as ht
from tests.helpers import (
    assert_arrays_equal,
    assert_raises_then_collective_works,
    collective_assert,
    random_array,
    skewed,
)

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


def well_conditioned(shape, dtype=np.float64, seed=0):
    n = shape[-1]
    a = random_array(shape, dtype=dtype, seed=seed, low=-1, high=1)
    return (a + n * np.eye(n)).astype(dtype)


def spd(shape, dtype=np.float64, seed=0):
    a = random_array(shape, dtype=np.float64, seed=seed, low=-1, high=1)
    return (a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])).astype(dtype)


SQUARE_SHAPES = [(5, 5), (2, 2), (1, 1), (3, 4, 4), (2, 1, 3, 3)]


@pytest.mark.parametrize("shape", SQUARE_SHAPES, ids=str)
def test_matrix_power(shape):
    cases = []
    for dtype in (np.float32, np.float64):
        a = well_conditioned(shape, dtype=dtype, seed=3) / shape[-1]
        for n in (0, 1, 2, 5, -1, -3):
            expected = np.linalg.matrix_power(a, n)
            for split in splits(len(shape)):
                result = ht.linalg.matrix_power(ht.array(a, split=split), n)
                cases.append((result, expected, {"rtol": 10 * RTOL[dtype], "atol": 1e-5}))
                assert result.split == split
    ints = np.array([[1, 1], [0, 1]])
    for split in splits(2):
        cases.append(
            (
                ht.linalg.matrix_power(ht.array(ints, split=split), 4),
                np.linalg.matrix_power(ints, 4),
            )
        )
    assert_arrays_equal(cases)


def test_matrix_power_errors():
    x = ht.zeros((3, 3), split=0)
    assert_raises_then_collective_works(TypeError, ht.linalg.matrix_power, x, 1.5)
    assert_raises_then_collective_works(
        ValueError, ht.linalg.matrix_power, ht.zeros((3, 4), split=0), 2
    )
    assert_raises_then_collective_works(ht.linalg.LinAlgError, ht.linalg.matrix_power, x, -1)


@pytest.mark.parametrize("shape", SQUARE_SHAPES, ids=str)
def test_slogdet(shape):
    cases = []
    for dtype in (np.float32, np.float64):
        a = well_conditioned(shape, dtype=dtype, seed=4)
        a[..., 0, :] *= -1
        sign, logabsdet = np.linalg.slogdet(a)
        for split in splits(len(shape)):
            result = ht.linalg.slogdet(ht.array(a, split=split))
            assert isinstance(result, tuple) and result._fields == ("sign", "logabsdet")
            cases.append((result.sign, sign))
            cases.append((result.logabsdet, logabsdet, {"rtol": RTOL[dtype]}))
    assert_arrays_equal(cases)


def test_slogdet_no_overflow_and_singular():
    big = np.diag(np.full(60, 1e10))  # det = 1e600 overflows float64; its log does not
    singular = np.array([[1.0, 2.0], [2.0, 4.0]])
    cases = []
    for split in splits(2):
        sign, logabsdet = ht.linalg.slogdet(ht.array(big, split=split))
        cases += [(sign, 1.0), (logabsdet, np.linalg.slogdet(big)[1])]
        sign, logabsdet = ht.linalg.slogdet(ht.array(singular, split=split))
        cases += [(sign, 0.0), (logabsdet, -np.inf)]
    assert_arrays_equal(cases)


@pytest.mark.parametrize("shape", SQUARE_SHAPES, ids=str)
def test_cholesky(shape):
    cases = []
    for dtype in (np.float32, np.float64):
        a = spd(shape, dtype=dtype, seed=5)
        lower = np.linalg.cholesky(a)
        for split in splits(len(shape)):
            for upper in (False, True):
                result = ht.linalg.cholesky(ht.array(a, split=split), upper=upper)
                assert result.split == split
                expected = np.swapaxes(lower, -1, -2) if upper else lower
                cases.append((result, expected, {"rtol": RTOL[dtype], "atol": 1e-5}))
    assert_arrays_equal(cases)


def test_cholesky_not_positive_definite():
    for split in splits(2):
        x = ht.array([[1.0, 2.0], [2.0, 1.0]], split=split)
        assert_raises_then_collective_works(ht.linalg.LinAlgError, ht.linalg.cholesky, x)
    assert_raises_then_collective_works(ValueError, ht.linalg.cholesky, ht.zeros((2, 3), split=0))


@pytest.mark.parametrize("n", [1, 3, 10], ids=str)
def test_cholesky_distributed_reads_one_triangle(n):
    """
    A single matrix split along rows or columns is factored in place (row panels / block
    columns, no gathering): only the triangle NumPy reads is read, balanced and skewed layouts,
    fewer rows than processes; the factor keeps the layout.
    """
    cases, wrong = [], []
    for dtype in (np.float32, np.float64, np.complex128):
        h = spd((n, n), dtype=np.float64, seed=6).astype(dtype)
        if np.iscomplexobj(h):
            imaginary = np.triu(random_array((n, n), seed=7, low=-1, high=1), 1)
            h = h + 1j * (imaginary - imaginary.T)
        lower = np.linalg.cholesky(h)
        noise = random_array((n, n), seed=8) * 100
        for upper in (False, True):
            # the unread triangle holds garbage
            a = (np.triu(h) + np.tril(noise, -1)) if upper else (np.tril(h) + np.triu(noise, 1))
            expected = lower.conj().T if upper else lower
            for split in (0, 1, -1):
                for x in (
                    ht.array(a.astype(dtype), split=split),
                    skewed(ht.array(a.astype(dtype), split=split)),
                ):
                    result = ht.linalg.cholesky(x, upper=upper)
                    if result.split != x.split or result.lshape != x.lshape:
                        wrong.append(
                            f"{dtype.__name__} split {split}: layout {result.split} {result.lshape}"
                        )
                    cases.append((result, expected, {"rtol": RTOL.get(dtype, 1e-9), "atol": 1e-5}))
    collective_assert(not wrong, "\n".join(wrong))
    assert_arrays_equal(cases)
    # a block that is not positive definite on a later process: every process raises
    bad = np.eye(max(n, 4))
    bad[-1, -1] = -1.0
    for split in (0, 1):
        for upper in (False, True):
            assert_raises_then_collective_works(
                ht.linalg.LinAlgError, ht.linalg.cholesky, ht.array(bad, split=split), upper=upper
            )


MATRIX_SHAPES = [(7, 3), (3, 7), (2, 5), (5, 5), (40, 2), (2, 40), (3, 4, 2), (2, 2, 3, 5)]


def low_rank(shape, rank, dtype, seed=0):
    a = random_array(shape[:-1] + (rank,), seed=seed, low=-1, high=1)
    b = random_array(shape[:-2] + (rank, shape[-1]), seed=seed + 1, low=-1, high=1)
    return (a @ b).astype(dtype)


@pytest.mark.parametrize("shape", MATRIX_SHAPES, ids=str)
def test_svdvals_matrix_rank_pinv(shape):
    cases = []
    for dtype in (np.float32, np.float64):
        full = random_array(shape, dtype=dtype, seed=6, low=-1, high=1)
        deficient = low_rank(shape, 1, dtype, seed=7)
        for a in (full, deficient):
            s = np.linalg.svd(a, compute_uv=False)
            rank = np.linalg.matrix_rank(a)
            rank_loose = np.linalg.matrix_rank(a, rtol=0.5)
            # the standard's default cut-off (NumPy's pinv defaults to rcond=1e-15 instead)
            inverse = np.linalg.pinv(a, rtol=max(shape[-2:]) * np.finfo(dtype).eps)
            for split in splits(len(shape)):
                x = ht.array(a, split=split)
                cases.append((ht.linalg.svdvals(x), s, {"rtol": RTOL[dtype], "atol": 1e-5}))
                cases.append((ht.linalg.matrix_rank(x), rank))
                cases.append((ht.linalg.matrix_rank(x, rtol=0.5), rank_loose))
                cases.append((ht.linalg.pinv(x), inverse, {"rtol": 10 * RTOL[dtype], "atol": 1e-4}))
    assert_arrays_equal(cases)


def test_rtol_array_and_errors():
    a = np.stack([np.diag([1.0, 0.1, 0.01]), np.diag([1.0, 0.5, 0.2])])
    rtol = np.array([0.05, 0.3])
    cases = []
    for split in splits(3):
        x = ht.array(a, split=split)
        cases.append(
            (ht.linalg.matrix_rank(x, rtol=ht.array(rtol)), np.linalg.matrix_rank(a, rtol=rtol))
        )
        cases.append(
            (ht.linalg.pinv(x, rtol=ht.array(rtol)), np.linalg.pinv(a, rtol=rtol), {"atol": 1e-10})
        )
    assert_arrays_equal(cases)
    x = ht.zeros((3, 3), split=0)
    for function in (ht.linalg.svdvals, ht.linalg.matrix_rank, ht.linalg.pinv, ht.linalg.eigvalsh):
        assert_raises_then_collective_works(ValueError, function, ht.zeros(3, split=0))
    assert_raises_then_collective_works(TypeError, ht.linalg.matrix_rank, x, rtol="big")
    assert_raises_then_collective_works(TypeError, ht.linalg.pinv, x, rtol=[0.1])
    assert_raises_then_collective_works(ValueError, ht.linalg.eigvalsh, ht.zeros((3, 4), split=0))


@pytest.mark.parametrize("shape", SQUARE_SHAPES + [(7, 7)], ids=str)
def test_eigvalsh(shape):
    cases = []
    for dtype in (np.float32, np.float64):
        a = spd(shape, dtype=dtype, seed=8) - shape[-1] * np.eye(shape[-1], dtype=dtype) * 1.5
        expected = np.linalg.eigvalsh(a)
        for split in splits(len(shape)):
            cases.append(
                (
                    ht.linalg.eigvalsh(ht.array(a, split=split)),
                    expected,
                    {"rtol": RTOL[dtype], "atol": 1e-4},
                )
            )
    assert_arrays_equal(cases)


def test_unbalanced_layouts_and_negative_split():
    """Skewed (unbalanced) blocks and split=-1 give the same values and keep the layout."""
    from tests.helpers import skewed

    a = well_conditioned((6, 6), seed=9)
    b = random_array((6, 4), seed=10)
    pd = spd((6, 6), seed=11)
    cases = []
    for split in (0, 1, -1):
        x = skewed(ht.array(a, split=split))
        y = skewed(ht.array(b, split=split))
        cases.append((ht.tensordot(x, y, axes=1), np.tensordot(a, b, axes=1)))
        cases.append((ht.tensordot(x, y, axes=([0], [0])), np.tensordot(a, b, axes=([0], [0]))))
        power = ht.linalg.matrix_power(x, 3)
        cases.append((power, np.linalg.matrix_power(a, 3), {"rtol": 1e-9}))
        cases.append((ht.linalg.matrix_power(x, 0), np.eye(6)))
        cases.append((ht.linalg.slogdet(x).logabsdet, np.linalg.slogdet(a)[1], {"rtol": 1e-9}))
        factor = ht.linalg.cholesky(skewed(ht.array(pd, split=split)))
        assert factor.split == split % 2
        cases.append((factor, np.linalg.cholesky(pd), {"rtol": 1e-9, "atol": 1e-12}))
        cases.append((ht.linalg.pinv(y), np.linalg.pinv(b), {"rtol": 1e-8, "atol": 1e-12}))
        cases.append(
            (ht.linalg.eigvalsh(skewed(ht.array(pd, split=split))), np.linalg.eigvalsh(pd))
        )
        cases.append((ht.linalg.matrix_rank(y), np.linalg.matrix_rank(b)))
    assert_arrays_equal(cases)
