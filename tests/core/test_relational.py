"""
Tests of heat/core/relational.py against NumPy: the six comparisons and their NumPy names on
every split, across dtypes (promotion), with scalars and array-likes on either side, the
operators (reflected too), complex ordering, NaN, mixed layouts, ``out=``/``where=`` and errors.
"""

import operator

import numpy as np
import pytest

import heat as ht
from tests.helpers import (
    assert_arrays_equal,
    assert_raises_then_collective_works,
    combinations,
    random_array,
)

# heat name, NumPy name, operator
COMPARISONS = [
    ("eq", "equal", operator.eq),
    ("ne", "not_equal", operator.ne),
    ("lt", "less", operator.lt),
    ("le", "less_equal", operator.le),
    ("gt", "greater", operator.gt),
    ("ge", "greater_equal", operator.ge),
]


@pytest.mark.parametrize("name,np_name,op", COMPARISONS)
def test_all_splits_and_dtypes(name, np_name, op):
    function, np_function = getattr(ht, name), getattr(np, np_name)
    assert getattr(ht, np_name) is function
    checks = []
    for dtype_a, dtype_b in (
        ("float32", "float32"),
        ("int32", "float64"),
        ("int64", "int64"),
        ("uint8", "int8"),
        ("bool", "int16"),
        ("bool", "bool"),
    ):
        for shape, split in combinations():
            # small value range: many ties
            a = random_array(shape, dtype_a, seed=1, low=0 if dtype_a == "uint8" else -3, high=3)
            b = random_array(shape, dtype_b, seed=2, low=-3, high=3)
            x, y = ht.array(a, split=split), ht.array(b, split=split)
            checks.append((function(x, y), np_function(a, b)))
    a = random_array((5, 6), np.float64, seed=3, low=-3, high=3).round()
    for split in (None, 0, 1):
        x = ht.array(a, split=split)
        checks += [
            (function(x, 1), np_function(a, 1)),
            (function(1.0, x), np_function(1.0, a)),
            (op(x, 0), op(a, 0)),
            (op(2, x), op(2, a)),
            (op(a[0], x), op(a[0], a)),  # NumPy array on the left: reflected operator
            (op(x, a[:, :1].tolist()), op(a, np.array(a[:, :1].tolist()))),
            (function(x, True), np_function(a, True)),
        ]
    assert_arrays_equal(checks)


def test_nan_inf_and_complex():
    a = np.array([np.nan, 1.0, np.inf, -np.inf, 0.0, -0.0, np.nan])
    b = np.array([np.nan, np.nan, np.inf, 1.0, -0.0, 0.0, 1.0])
    z1 = np.array([1 + 1j, 1 + 2j, 2 - 1j, 0j, -1 + 0j, 1 + 1j])
    z2 = np.array([1 + 2j, 1 + 1j, 1 + 5j, 0j, -1 - 1j, 1 + 1j])
    checks = []
    for split in (None, 0):
        for name, np_name, _ in COMPARISONS:
            function, np_function = getattr(ht, name), getattr(np, np_name)
            checks.append(
                (function(ht.array(a, split=split), ht.array(b, split=split)), np_function(a, b))
            )
            checks.append(
                (function(ht.array(z1, split=split), ht.array(z2, split=0)), np_function(z1, z2))
            )
            checks.append((function(ht.array(z1, split=split), 1 + 1j), np_function(z1, 1 + 1j)))
            checks.append(
                (
                    function(ht.array(z1.real, split=split), ht.array(z2, split=split)),
                    np_function(z1.real, z2),
                )
            )
    assert_arrays_equal(checks)


@pytest.mark.parametrize(
    "shape_x,split_x,shape_y,split_y",
    [
        ((4, 5), 0, (4, 5), 1),
        ((4, 5), 1, (5,), 0),
        ((1, 5), 0, (4, 5), 0),
        ((4, 1), 1, (1, 5), 0),
        ((2, 3), 0, (0, 1, 3), 1),
    ],
)
def test_mixed_layouts(shape_x, split_x, shape_y, split_y):
    a = random_array(shape_x, np.int32, seed=4, low=-2, high=2)
    b = random_array(shape_y, np.float32, seed=5, low=-2, high=2).round()
    x, y = ht.array(a, split=split_x), ht.array(b, split=split_y)
    assert_arrays_equal(
        [(op(x, y), op(a, b)) for _, _, op in COMPARISONS]
        + [(op(y, x), op(b, a)) for _, _, op in COMPARISONS]
    )


def test_non_numeric_operands():
    x = ht.array(np.arange(6), split=0)
    checks = [
        (x == None, np.zeros(6, dtype=bool)),  # noqa: E711
        (x != None, np.ones(6, dtype=bool)),  # noqa: E711
        (x == "a", np.zeros(6, dtype=bool)),
        (x != "a", np.ones(6, dtype=bool)),
        (ht.eq(x, object()), np.zeros(6, dtype=bool)),
    ]
    assert_arrays_equal(checks)
    assert_raises_then_collective_works(TypeError, ht.lt, x, "a")
    assert_raises_then_collective_works(TypeError, lambda: x >= None)
    assert_raises_then_collective_works(ValueError, ht.eq, x, ht.ones(5, split=0))
    assert_raises_then_collective_works(ValueError, lambda: x < ht.ones((2, 5), split=1))


def test_out_where():
    a = random_array((4, 5), np.float32, seed=6, low=-2, high=2)
    b = random_array((4, 5), np.float64, seed=7, low=-2, high=2)
    mask = random_array((4, 5), np.bool_, seed=8)
    checks = []
    for out_split in (None, 0, 1):
        out = ht.ones((4, 5), dtype=ht.bool, split=out_split)
        result = ht.less(
            ht.array(a, split=0), ht.array(b, split=1), out=out, where=ht.array(mask, split=1)
        )
        assert result is out
        expected = np.ones((4, 5), dtype=bool)
        np.less(a, b, out=expected, where=mask)
        checks.append((out, expected))
        out = ht.zeros((4, 5), dtype=ht.int32, split=out_split)  # bool casts to int safely
        ht.greater_equal(ht.array(a, split=1), 0, out=out)
        checks.append((out, (a >= 0).astype(np.int32)))
    assert_arrays_equal(checks)
    assert_raises_then_collective_works(
        ValueError, ht.eq, ht.ones(3), 1, out=ht.zeros(4, dtype=ht.bool)
    )
