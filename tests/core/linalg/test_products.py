"""
Tests of heat/core/linalg/products.py (and the distributed product in _matmul.py): matmul and
the ``@`` operator on every split combination, 1-D and batched operands, uneven and unbalanced
layouts, fewer rows than processes; dot, vdot, vecdot, outer, cross, projection. NumPy is the
oracle.
"""

import warnings

import numpy as np
import pytest

import heat as ht
from tests.helpers import (
    assert_array_equal,
    assert_arrays_equal,
    assert_raises_then_collective_works,
    collective_assert,
    random_array,
    skewed,
)

TOLERANCES = {
    np.float32: {"rtol": 1e-4, "atol": 1e-3},
    np.float64: {"rtol": 1e-10, "atol": 1e-10},
    np.complex64: {"rtol": 1e-4, "atol": 1e-3},
}


def splits(ndim):
    return (None,) + tuple(range(ndim))


def matmul_cases(shape_a, shape_b, dtypes, skew=False, operator=False):
    """(result, expected, tolerance) for every split combination of the two shapes."""
    cases = []
    for i, dtype in enumerate(dtypes):
        a = random_array(shape_a, dtype=dtype, seed=1 + i)
        b = random_array(shape_b, dtype=dtype, seed=11 + i)
        expected = np.matmul(a, b)
        for sa in splits(len(shape_a)):
            for sb in splits(len(shape_b)):
                x, y = ht.array(a, split=sa), ht.array(b, split=sb)
                if skew:
                    x, y = skewed(x), skewed(y)
                result = x @ y if operator else ht.matmul(x, y)
                cases.append((result, expected, TOLERANCES.get(dtype, {})))
    return cases


MATRIX_PAIRS = [
    ((5, 7), (7, 3)),
    ((2, 3), (3, 5)),  # fewer rows than processes
    ((7, 1), (1, 6)),  # contracted length below the process count
    ((6, 4), (4, 6)),
    ((1, 9), (9, 1)),
]


@pytest.mark.parametrize("shapes", MATRIX_PAIRS, ids=lambda s: f"{s[0]}@{s[1]}")
def test_matmul_matrices(shapes):
    assert_arrays_equal(matmul_cases(*shapes, (np.float32, np.float64, np.int32, np.int64)))


@pytest.mark.parametrize("shapes", [((0, 3), (3, 4)), ((3, 0), (0, 4)), ((4, 3), (3, 0))], ids=str)
def test_matmul_empty(shapes):
    assert_arrays_equal(matmul_cases(*shapes, (np.float32, np.int64)))


def test_matmul_unbalanced():
    cases = matmul_cases((8, 7), (7, 9), (np.float64,), skew=True)
    cases += matmul_cases((7,), (7, 5), (np.float64,), skew=True)
    cases += matmul_cases((3, 6, 5), (5, 4), (np.float64,), skew=True)
    assert_arrays_equal(cases)


def test_matmul_other_dtypes():
    cases = matmul_cases((4, 5), (5, 3), (np.complex64, np.int8, np.uint8, np.int16))
    # booleans: NumPy's logical matrix product
    a, b = random_array((4, 5), dtype=bool, seed=3), random_array((5, 3), dtype=bool, seed=4)
    for sa in splits(2):
        for sb in splits(2):
            cases.append((ht.matmul(ht.array(a, split=sa), ht.array(b, split=sb)), a @ b))
    # promotion: int32 @ float32 -> float64, float32 @ float64 -> float64
    a, b = (
        random_array((4, 5), dtype=np.int32, seed=5),
        random_array((5, 3), dtype=np.float32, seed=6),
    )
    cases.append((ht.matmul(ht.array(a, split=0), ht.array(b, split=1)), a @ b))
    c = random_array((5, 3), dtype=np.float64, seed=7)
    cases.append((ht.matmul(ht.array(b.T.copy(), split=1), ht.array(c, split=0)), b.T @ c))
    assert_arrays_equal(cases)


def test_matmul_integer_overflow_wraps_as_numpy():
    a = np.full((3, 4), 100, dtype=np.int8)
    b = np.full((4, 2), 3, dtype=np.int8)
    cases = []
    for sa in splits(2):
        for sb in splits(2):
            cases.append((ht.matmul(ht.array(a, split=sa), ht.array(b, split=sb)), a @ b))
    assert_arrays_equal(cases)


# mixed signed / unsigned (and unsigned / floating) operands: NumPy's promoted result type
MIXED_PAIRS = [
    (np.int16, np.uint16),  # int32
    (np.int8, np.uint32),  # int64
    (np.uint32, np.int32),  # int64
    (np.int64, np.uint64),  # float64
    (np.float32, np.uint16),  # float32
    (np.uint32, np.float32),  # float64
    (np.complex64, np.uint64),  # complex128
    (np.bool_, np.uint16),  # uint16 (as before)
]


def _mixed(shape, dtype, seed):
    """Values that make the products wrap where the result type is an integer of 32 bits."""
    bounds = {np.int16: (-30000, 30000), np.uint16: (0, 60000), np.int8: (-100, 100)}
    low, high = bounds.get(dtype, (-10, 10))
    return random_array(shape, dtype=dtype, seed=seed, low=low, high=high)


@pytest.mark.parametrize("dtypes", MIXED_PAIRS, ids=lambda d: f"{d[0].__name__}x{d[1].__name__}")
def test_products_of_mixed_signed_and_unsigned_integers(dtypes):
    first, second = (ht.types.canonical_heat_type(d) for d in dtypes)
    cases = []
    for shape_a, shape_b in (((5, 7), (7, 3)), ((2, 3), (3, 5)), ((7,), (7, 2)), ((4,), (4,))):
        a, b, c = (
            _mixed(shape_a, dtypes[0], 1),
            _mixed(shape_b, dtypes[1], 2),
            _mixed(shape_a, dtypes[1], 3),
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # NumPy's overflow warnings of wrapping products
            expected = (
                np.matmul(a, b),
                np.dot(a, b),
                np.tensordot(a, b, 1),
                np.matmul(b.T, a.T),
                np.vecdot(a, c),
            )
        for sa in splits(len(shape_a)):
            for sb in splits(len(shape_b)):
                x, y = ht.array(a, split=sa), ht.array(b, split=sb)
                z = ht.array(c, split=sb if sb is None else min(sb, c.ndim - 1))
                results = (
                    ht.matmul(x, y),
                    ht.dot(x, y),
                    ht.tensordot(x, y, axes=1),
                    y.T @ x.T,
                    ht.vecdot(x, z),
                )
                cases += list(zip(results, expected))
        if a.ndim == 1:
            cases.append((ht.vdot(ht.array(a, split=0), ht.array(c)), np.vdot(a, c)))
    assert_arrays_equal(cases, rtol=1e-6)
    # the shapes are still checked on every rank before anything is communicated
    x, y = ht.ones((3, 4), dtype=first, split=0), ht.ones((3, 4), dtype=second, split=1)
    assert_raises_then_collective_works(ValueError, ht.matmul, x, y)
    assert_raises_then_collective_works(ValueError, ht.dot, x, y)
    assert_raises_then_collective_works(ValueError, ht.vecdot, x, ht.ones((3, 5), dtype=second))
    assert_raises_then_collective_works(ValueError, ht.tensordot, x, y, axes=([1], [0]))


VECTOR_PAIRS = [
    ((7,), (7,)),
    ((7,), (7, 3)),
    ((5, 7), (7,)),
    ((2,), (2, 6)),
    ((3, 4, 5), (5,)),
    ((4,), (2, 4, 3)),
]


@pytest.mark.parametrize("shapes", VECTOR_PAIRS, ids=lambda s: f"{s[0]}@{s[1]}")
def test_matmul_vectors(shapes):
    assert_arrays_equal(matmul_cases(*shapes, (np.float64, np.int32)))


BATCHED_PAIRS = [
    ((3, 4, 5), (5, 2)),
    ((4, 5), (3, 5, 2)),
    ((3, 4, 5), (3, 5, 2)),
    ((2, 1, 3, 4), (3, 4, 2)),
    ((1, 3, 4), (5, 4, 2)),  # a batch axis of length 1 broadcast against 5
    ((2, 3, 3, 4), (1, 3, 4, 2)),
]


@pytest.mark.parametrize("shapes", BATCHED_PAIRS, ids=lambda s: f"{s[0]}@{s[1]}")
def test_matmul_batched(shapes):
    assert_arrays_equal(matmul_cases(*shapes, (np.float64,)))


def test_matmul_operator_and_methods():
    a = random_array((6, 5), seed=1)
    b = random_array((5, 4), seed=2)
    cases = matmul_cases((6, 5), (5, 4), (np.float64,), operator=True)
    x = ht.array(a, split=0)
    # reflected: a NumPy array on the left defers to DNDarray.__rmatmul__
    cases.append((a @ ht.array(b, split=1), a @ b))
    cases.append((x @ b, a @ b))
    # in place: x @= square keeps x's layout
    square = random_array((5, 5), seed=3)
    y = ht.array(a, split=1)
    y @= ht.array(square, split=0)
    cases.append((y, a @ square))
    assert_arrays_equal(cases, rtol=1e-10)
    collective_assert(y.split == 1, f"x @= y changed the layout to split {y.split}")


def test_matmul_out():
    a, b = random_array((5, 6), seed=1), random_array((6, 3), seed=2)
    out = ht.zeros((5, 3), dtype=ht.float64, split=1)
    result = ht.matmul(ht.array(a, split=0), ht.array(b, split=0), out=out)
    collective_assert(result is out, "matmul(out=) did not return out")
    assert_array_equal(out, a @ b)


def test_matmul_allow_resplit():
    # HeAT's allow_resplit: two replicated operands; x1 is split along its rows in place
    a, b = random_array((7, 4), seed=3), random_array((4, 5), seed=4)
    x1, x2 = ht.array(a), ht.array(b)
    result = ht.matmul(x1, x2, allow_resplit=True)
    collective_assert(x1.split == 0 and result.split == 0, f"splits {x1.split} {result.split}")
    assert_array_equal(result, a @ b, rtol=1e-10)
    assert_array_equal(x1, a)
    # a distributed operand: the layouts are left as they are
    y1 = ht.array(a, split=1)
    result = ht.matmul(y1, x2, allow_resplit=True)
    collective_assert(y1.split == 1, "a distributed operand was resplit")
    assert_array_equal(result, a @ b, rtol=1e-10)
    # shapes are checked before x1 is touched
    z1 = ht.array(a)
    assert_raises_then_collective_works(
        ValueError, ht.matmul, z1, ht.ones((5, 2)), allow_resplit=True
    )
    collective_assert(z1.split is None, "x1 resplit although the shapes do not conform")
    assert_raises_then_collective_works(TypeError, ht.matmul, x1, x2, allow_resplit=1)


def test_matmul_layout_table():
    """The result layouts the products module documents for 2-D operands."""
    p = ht.MPI_WORLD.size
    n = 6
    x = ht.ones((n, n))
    expected = {
        (None, None): None,
        (0, None): 0,
        (None, 1): 1,
        (0, 0): 0,
        (0, 1): 0,  # equal sizes: B circulates, rows stay
        (1, 1): 1,
        (1, 0): 0,
        (None, 0): 0,
        (1, None): 1,
    }
    wrong = []
    for (sa, sb), split in expected.items():
        result = ht.matmul(ht.resplit(x, sa), ht.resplit(x, sb))
        want = split if p > 1 or (sa, sb) != (None, None) else None
        if result.split != want:
            wrong.append(f"{sa} x {sb}: split {result.split}, documented {want}")
    # the smaller operand circulates: a wide right operand keeps it, the left one circulates
    result = ht.matmul(ht.ones((3, 4), split=0), ht.ones((4, 40), split=1))
    if result.split != 1:
        wrong.append(f"(3, 4) split 0 x (4, 40) split 1: split {result.split}, documented 1")
    collective_assert(not wrong, "\n".join(wrong))


def test_matmul_bad_input():
    x = ht.ones((3, 4), split=0)
    assert_raises_then_collective_works(ValueError, ht.matmul, x, ht.ones((3, 4), split=1))
    assert_raises_then_collective_works(ValueError, ht.matmul, x, ht.array(2.0))
    assert_raises_then_collective_works(
        ValueError, ht.matmul, ht.ones((2, 3, 4)), ht.ones((3, 4, 2))
    )
    assert_raises_then_collective_works(
        ValueError, ht.matmul, ht.ones((5,)), ht.ones((4,), split=0)
    )
    assert_raises_then_collective_works(TypeError, ht.matmul, x, object())
    assert_raises_then_collective_works(ValueError, lambda: x @ ht.ones((5, 2), split=0))


# ---------------------------------------------------------------------------------------------
# dot, vdot, vecdot, outer, cross, projection
# ---------------------------------------------------------------------------------------------
DOT_PAIRS = [
    ((7,), (7,)),
    ((5, 7), (7, 3)),
    ((5, 7), (7,)),
    ((7,), (7, 2)),
    ((2, 3, 4), (4,)),
    ((2, 3, 4), (5, 4, 2)),
    ((3, 4), (2, 4, 5)),
    ((4,), (3, 4, 2)),
    ((), (3, 2)),
    ((3,), ()),
]


@pytest.mark.parametrize("shapes", DOT_PAIRS, ids=lambda s: f"{s[0]}.{s[1]}")
def test_dot(shapes):
    shape_a, shape_b = shapes
    cases = []
    for dtype in (np.float64, np.int64):
        a, b = (
            random_array(shape_a, dtype=dtype, seed=1),
            random_array(shape_b, dtype=dtype, seed=2),
        )
        expected = np.dot(a, b)
        for sa in splits(len(shape_a)):
            for sb in splits(len(shape_b)):
                cases.append((ht.dot(ht.array(a, split=sa), ht.array(b, split=sb)), expected))
    assert_arrays_equal(cases, rtol=1e-10)


def test_dot_scalars_out_and_errors():
    a = random_array((4, 3), seed=1)
    out = ht.zeros((4, 3), dtype=ht.float64, split=0)
    ht.dot(ht.array(a, split=1), 2.0, out=out)
    assert_array_equal(out, a * 2.0)
    assert_raises_then_collective_works(
        ValueError, ht.dot, ht.ones((4, 3)), ht.ones((4, 3), split=0)
    )
    assert_raises_then_collective_works(ValueError, ht.dot, ht.ones((2, 2, 3)), ht.ones((2, 4, 2)))


def test_vdot():
    cases = []
    for dtype in (np.float32, np.complex64, np.int32):
        a = random_array((3, 4), dtype=dtype, seed=1)
        b = random_array((2, 6), dtype=dtype, seed=2)
        for sa in splits(2):
            for sb in splits(2):
                cases.append(
                    (
                        ht.vdot(ht.array(a, split=sa), ht.array(b, split=sb)),
                        np.vdot(a, b),
                        TOLERANCES.get(dtype, {}),
                    )
                )
    assert_arrays_equal(cases)
    assert_raises_then_collective_works(ValueError, ht.vdot, ht.ones(3), ht.ones(4, split=0))


@pytest.mark.parametrize(
    "shapes_axis",
    [
        ((3, 4), (3, 4), -1),
        ((3, 4), (4,), -1),
        ((5, 3), (5, 1), 0),
        ((2, 3, 4), (2, 3, 4), 1),
        ((2, 4, 3), (4, 3), -2),
    ],
    ids=str,
)
def test_vecdot(shapes_axis):
    shape_a, shape_b, axis = shapes_axis
    cases = []
    for dtype in (np.float64, np.complex128, np.int32):
        a = random_array(shape_a, dtype=dtype, seed=1)
        b = random_array(shape_b, dtype=dtype, seed=2)
        expected = np.vecdot(a, b, axis=axis)
        for sa in splits(len(shape_a)):
            for sb in splits(len(shape_b)):
                x, y = ht.array(a, split=sa), ht.array(b, split=sb)
                cases.append((ht.vecdot(x, y, axis=axis), expected, {"rtol": 1e-10}))
                cases.append(
                    (
                        ht.linalg.vecdot(x, y, axis=axis, keepdims=True),
                        np.vecdot(a, b, axis=axis, keepdims=True),
                        {"rtol": 1e-10},
                    )
                )
    assert_arrays_equal(cases)
    assert_raises_then_collective_works(ValueError, ht.vecdot, ht.ones((3, 4)), ht.ones((3, 5)))


def test_outer():
    cases = []
    for dtype_a, dtype_b in (
        (np.float32, np.float32),
        (np.int32, np.float64),
        (np.int64, np.int64),
    ):
        a = random_array((5,), dtype=dtype_a, seed=1)
        b = random_array((2, 3), dtype=dtype_b, seed=2)  # flattened, as NumPy
        expected = np.outer(a, b)
        for sa in splits(1):
            for sb in splits(2):
                x, y = ht.array(a, split=sa), ht.array(b, split=sb)
                cases.append((ht.outer(x, y), expected))
                for split in (None, 0, 1):
                    result = ht.outer(x, y, split=split)
                    collective_assert(
                        result.split == split, f"outer split {result.split} != {split}"
                    )
                    cases.append((result, expected))
    out = ht.zeros((5, 6), dtype=ht.float64, split=1)
    ht.outer(ht.arange(5, split=0), ht.arange(6), out=out)
    cases.append((out, np.outer(np.arange(5), np.arange(6)).astype(np.float64)))
    assert_arrays_equal(cases)
    assert_raises_then_collective_works(ValueError, ht.outer, ht.ones(3), ht.ones(3), split=2)


CROSS_CASES = [
    ((5, 3), (5, 3), {}),
    ((4, 2), (4, 3), {}),
    ((2, 4), (2, 4), {"axis": 0}),
    ((3, 6), (6, 3), {"axisa": 0, "axisb": 1, "axisc": 0}),
    ((2, 5, 3), (5, 3), {}),
    ((3,), (4, 3), {}),
    ((6, 2), (6, 2), {}),
]


@pytest.mark.parametrize("case", CROSS_CASES, ids=str)
def test_cross(case):
    shape_a, shape_b, kwargs = case
    cases = []
    for dtype in (np.float64, np.int32):
        a = random_array(shape_a, dtype=dtype, seed=1)
        b = random_array(shape_b, dtype=dtype, seed=2)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # NumPy 2 deprecates 2-vectors
            expected = np.cross(a, b, **kwargs)
        for sa in splits(len(shape_a)):
            for sb in splits(len(shape_b)):
                cases.append(
                    (ht.cross(ht.array(a, split=sa), ht.array(b, split=sb), **kwargs), expected)
                )
    assert_arrays_equal(cases, rtol=1e-10)


def test_cross_errors():
    assert_raises_then_collective_works(
        ValueError, ht.cross, ht.ones((3, 4)), ht.ones((3, 4), split=0)
    )
    assert_raises_then_collective_works(ValueError, ht.cross, ht.ones((4, 3)), ht.ones((5, 3)))
    assert_raises_then_collective_works(
        TypeError, ht.cross, ht.ones(3, dtype=ht.bool), ht.ones(3, dtype=ht.bool)
    )


def test_projection():
    a, b = random_array((7,), seed=1), random_array((7,), seed=2)
    expected = np.dot(a, b) / np.dot(b, b) * b
    cases = [
        (ht.projection(ht.array(a, split=sa), ht.array(b, split=sb)), expected)
        for sa in (None, 0)
        for sb in (None, 0)
    ]
    assert_arrays_equal(cases, rtol=1e-10)
    assert_raises_then_collective_works(ValueError, ht.projection, ht.ones((2, 2)), ht.ones(2))
    assert_raises_then_collective_works(ValueError, ht.projection, ht.ones(3), ht.ones(2))
    assert_raises_then_collective_works(TypeError, ht.projection, [1.0, 2.0], ht.ones(2))
