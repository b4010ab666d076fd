"""
Tests of heat/core/trigonometrics.py against NumPy: every function and alias on every split,
float, integer, boolean and complex inputs, ``arctan2`` with mixed layouts, ``out=``/``where=``.
"""

import numpy as np
import pytest

import heat as ht
from tests.helpers import (
    assert_arrays_equal,
    assert_raises_then_collective_works,
    collective_assert,
    combinations,
    random_array,
)

# name: (NumPy function, low, high of the test data, complex supported)
UNARY = {
    "sin": (np.sin, -5, 5, True),
    "cos": (np.cos, -5, 5, True),
    "tan": (np.tan, -1.5, 1.5, True),
    "arcsin": (np.arcsin, -1, 1, True),
    "arccos": (np.arccos, -1, 1, True),
    "arctan": (np.arctan, -5, 5, True),
    "sinh": (np.sinh, -3, 3, True),
    "cosh": (np.cosh, -3, 3, True),
    "tanh": (np.tanh, -3, 3, True),
    "arcsinh": (np.arcsinh, -5, 5, True),
    "arccosh": (np.arccosh, 1, 6, True),
    "arctanh": (np.arctanh, -0.99, 0.99, True),
    "deg2rad": (np.deg2rad, -360, 360, False),
    "rad2deg": (np.rad2deg, -7, 7, False),
}
ALIASES = {
    "asin": "arcsin",
    "acos": "arccos",
    "atan": "arctan",
    "asinh": "arcsinh",
    "acosh": "arccosh",
    "atanh": "arctanh",
    "atan2": "arctan2",
    "radians": "deg2rad",
    "degrees": "rad2deg",
}


def tolerance(dtype):
    dtype = np.dtype(dtype)
    if dtype == np.float16:
        return {"rtol": 2e-3, "atol": 2e-3}
    if dtype in (np.float32, np.complex64):
        return {"rtol": 2e-5, "atol": 1e-5}
    return {"rtol": 1e-12, "atol": 1e-12}


def np_call(function, *args):
    with np.errstate(all="ignore"):
        return function(*args)


UNARY_CASES = [
    (name, dtype)
    for name, spec in UNARY.items()
    for dtype in ("float32", "float64", "int32", "int8", "complex128")
    if spec[3] or not dtype.startswith("complex")
]


@pytest.mark.parametrize("name,dtype", UNARY_CASES)
def test_unary_all_splits(name, dtype):
    np_function, low, high, _ = UNARY[name]
    if dtype.startswith("int"):
        low, high = (-3, 4) if low < 0 else (1, 6)
    function = getattr(ht, name)
    checks = []
    for shape, split in combinations():
        a = random_array(shape, dtype, seed=1, low=low, high=high)
        expected = np_call(np_function, a)
        checks.append((function(ht.array(a, split=split)), expected, tolerance(expected.dtype)))
    assert_arrays_equal(checks)


def test_aliases_and_special_values():
    for alias, name in ALIASES.items():
        assert getattr(ht, alias) is getattr(ht, name), alias
    a = np.array([0.0, -0.0, 1.0, -1.0, 2.0, np.inf, -np.inf, np.nan], dtype=np.float64)
    checks = []
    for split in (None, 0):
        x = ht.array(a, split=split)
        for name, (np_function, _, _, _) in UNARY.items():
            checks.append((getattr(ht, name)(x), np_call(np_function, a)))
        checks.append(
            (ht.sin(ht.array([True, False], split=split)), np.sin(np.array([True, False])))
        )
    assert_arrays_equal(checks)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_arccos_special_values(dtype):
    """
    acos of complex values as NumPy's (C99's cacos, the array API standard's special cases),
    signed zeros included: acos(-0 + 0j) is pi/2 - 0j (torch's complex128 kernel gives +0j on
    the real segment [-1, 1]).
    """
    reals = [0.0, -0.0, 0.5, -0.5, 1.0, -1.0, 2.0, -2.0, np.inf, -np.inf, np.nan]
    imags = [0.0, -0.0, 1.0, -1.0, np.inf, np.nan]
    a = np.array([[complex(r, i) for i in imags] for r in reals], dtype=dtype)
    with np.errstate(all="ignore"):
        expected = np.arccos(a)
    tol = tolerance(dtype)
    problems = []
    for split in (None, 0, 1, -1):
        for name in ("arccos", "acos"):
            actual = getattr(ht, name)(ht.array(a, split=split)).numpy()
            for part in ("real", "imag"):
                ours, theirs = getattr(actual, part), getattr(expected, part)
                same_nan = np.isnan(ours) == np.isnan(theirs)
                both = ~np.isnan(theirs) & ~np.isnan(ours)
                close = np.isclose(ours, theirs, **tol) | (ours == theirs)
                same_sign = np.signbit(ours) == np.signbit(theirs)
                bad = ~same_nan | (both & ~(close & same_sign))
                for index in zip(*np.nonzero(bad)):
                    problems.append(
                        f"split {split}: {name}({a[index]}) = {actual[index]}, "
                        f"NumPy {expected[index]}"
                    )
    collective_assert(not problems, "\n".join(sorted(set(problems))[:8]))


def test_methods_out_where():
    a = random_array((4, 5), np.float32, seed=2)
    mask = random_array((4, 5), np.bool_, seed=3)
    x = ht.array(a, split=1)
    checks = [
        (x.sin(), np.sin(a), tolerance(np.float32)),
        (x.cos(), np.cos(a), tolerance(np.float32)),
        (x.tan(), np.tan(a), tolerance(np.float32)),
        (x.tanh(), np.tanh(a), tolerance(np.float32)),
    ]
    for out_split in (None, 0, 1):
        out = ht.full((4, 5), 3.0, split=out_split)
        result = ht.cos(x, out=out, where=ht.array(mask, split=0))
        assert result is out
        expected = np.full((4, 5), 3.0, dtype=np.float32)
        np.cos(a, out=expected, where=mask)
        checks.append((out, expected, tolerance(np.float32)))
    assert_arrays_equal(checks)
    assert_raises_then_collective_works(TypeError, ht.sin, a)
    assert_raises_then_collective_works(
        TypeError, ht.sin, x, out=ht.zeros((4, 5), dtype=ht.int64, split=0)
    )
    assert_raises_then_collective_works(ValueError, ht.sin, x, out=ht.zeros((4, 4), split=0))
    assert_raises_then_collective_works(
        TypeError, ht.deg2rad, ht.ones(3, dtype=ht.complex64, split=0)
    )
    assert_raises_then_collective_works(TypeError, ht.rad2deg, ht.ones(3, dtype=ht.complex64))


def test_arctan2():
    checks = []
    for dtype in ("float32", "float64", "int32", "int16", "int8"):
        for shape, split in combinations(((7,), (5, 6), (2, 3, 4), (0, 3))):
            a = random_array(shape, dtype, seed=4)
            b = random_array(shape, dtype, seed=5)
            expected = np.arctan2(a, b)
            checks.append(
                (
                    ht.arctan2(ht.array(a, split=split), ht.array(b, split=split)),
                    expected,
                    tolerance(expected.dtype),
                )
            )
    a = random_array((4, 5), np.float64, seed=6)
    b = random_array((4, 1), np.float64, seed=7)
    for split_a, split_b in ((0, 1), (1, 0), (0, None), (None, 0), (1, 1)):
        checks.append(
            (ht.atan2(ht.array(a, split=split_a), ht.array(b, split=split_b)), np.arctan2(a, b))
        )
    checks.append((ht.arctan2(ht.array(a, split=0), -1.0), np.arctan2(a, -1.0)))
    checks.append((ht.arctan2(1, ht.array(a, split=1)), np.arctan2(1, a)))
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan])
    checks.append(
        (
            ht.arctan2(ht.array(special[:, None], split=0), ht.array(special, split=0)),
            np.arctan2(special[:, None], special),
        )
    )
    mask = random_array((4, 5), np.bool_, seed=8)
    out = ht.zeros((4, 5), dtype=ht.float64, split=1)
    ht.arctan2(ht.array(a, split=0), ht.array(b, split=0), out=out, where=ht.array(mask, split=0))
    expected = np.zeros((4, 5))
    np.arctan2(a, b, out=expected, where=mask)
    checks.append((out, expected))
    # mixed small integers: uint8 with int8 computes in float16 (NumPy's loop), not float32
    for first, second in (
        ("uint8", "int8"),
        ("int8", "uint8"),
        ("uint8", "int16"),
        ("int8", "int8"),
    ):
        a = random_array((5, 3), first, seed=9, low=0, high=5)
        b = random_array((5, 3), second, seed=10, low=0, high=5)
        expected = np.arctan2(a, b)
        for split_a, split_b in ((None, None), (0, 0), (1, 0), (-1, None)):
            checks.append(
                (
                    ht.arctan2(ht.array(a, split=split_a), ht.array(b, split=split_b)),
                    expected,
                    tolerance(expected.dtype),
                )
            )
    assert_arrays_equal(checks)
    assert_raises_then_collective_works(
        ValueError, ht.arctan2, ht.ones((4, 5), split=0), ht.ones((3, 5), split=1)
    )
    assert_raises_then_collective_works(TypeError, ht.arctan2, ht.ones(3, dtype=ht.complex64), 1.0)
