"""
Tests of heat/core/rounding.py against NumPy: abs/fabs/ceil/floor/trunc/sign/sgn/round/clip/modf
on every split and several dtypes (NumPy 2's result dtypes), ``out=``/``where=``, array bounds of
``clip`` distributed differently from the input, Python's builtin ``abs`` and errors.
"""

import numpy as np
import pytest

import heat as ht
from tests.helpers import (
    assert_arrays_equal,
    assert_raises_then_collective_works,
    combinations,
    random_array,
    splits_for,
)

SPECIAL = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.0, -0.0, 1.7, -1.7, np.inf, -np.inf, np.nan])

# name: (NumPy function, dtypes)
UNARY = {
    "abs": (np.abs, ("float32", "float64", "int32", "int64", "int8", "bool", "complex64")),
    "absolute": (np.absolute, ("float64", "int16")),
    "fabs": (np.fabs, ("float32", "int32", "int8", "bool")),
    "ceil": (np.ceil, ("float32", "float64", "int32", "bool")),
    "floor": (np.floor, ("float32", "float64", "int64", "uint8")),
    "trunc": (np.trunc, ("float32", "float64", "int32", "bool")),
    "sign": (np.sign, ("float32", "float64", "int32", "int8", "complex128")),
}
UNARY_CASES = [(name, dtype) for name, spec in UNARY.items() for dtype in spec[1]]


def tolerance(dtype):
    dtype = np.dtype(dtype)
    if dtype == np.float16:
        return {"rtol": 1e-3, "atol": 1e-3}
    return {"rtol": 1e-6, "atol": 1e-7}


@pytest.mark.parametrize("name,dtype", UNARY_CASES)
def test_unary_all_splits(name, dtype):
    np_function = UNARY[name][0]
    function = getattr(ht, name)
    checks = []
    for shape, split in combinations():
        a = random_array(shape, dtype, seed=1, low=0 if dtype == "uint8" else -10)
        checks.append((function(ht.array(a, split=split)), np_function(a)))
    if dtype.startswith("float"):
        a = SPECIAL.astype(dtype)
        for split in (None, 0):
            checks.append((function(ht.array(a, split=split)), np_function(a)))
    assert_arrays_equal(checks)


def test_builtin_abs_sgn_methods():
    a = random_array((5, 6), np.float32, seed=2)
    z = random_array((5, 6), np.complex64, seed=3)
    z[0, 0] = 0
    checks = []
    for split in splits_for(2):
        x = ht.array(a, split=split)
        checks += [
            (abs(x), np.abs(a)),
            (x.abs(), np.abs(a)),
            (x.absolute(), np.abs(a)),
            (x.ceil(), np.ceil(a)),
            (x.floor(), np.floor(a)),
            (x.trunc(), np.trunc(a)),
            (abs(-ht.array(a.astype(np.int64), split=split)), np.abs(-a.astype(np.int64))),
            (ht.sgn(x), np.sign(a)),
            (ht.sgn(ht.array(z, split=split)), z / np.where(z == 0, 1, np.abs(z)), {"rtol": 1e-5}),
            (abs(ht.array(z, split=split)), np.abs(z), {"rtol": 1e-6}),
            (ht.abs(x, dtype=ht.float64), np.abs(a, dtype=np.float64)),
        ]
    assert_arrays_equal(checks)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "complex64"])
def test_round_floats(dtype):
    checks = []
    for shape, split in combinations(((7,), (5, 6), (2, 3, 4), (0, 3))):
        a = random_array(shape, dtype, seed=4, low=-1000, high=1000)
        x = ht.array(a, split=split)
        for decimals in (-2, 0, 1, 3):
            if dtype == "float16":
                # heat rounds half precision in float32; NumPy's float16 scaling loses digits
                expected = np.round(a.astype(np.float32), decimals).astype(np.float16)
            else:
                expected = np.round(a, decimals)
            checks.append((ht.round(x, decimals), expected, tolerance(dtype)))
    if dtype != "complex64":
        for split in (None, 0):
            a = SPECIAL.astype(dtype)
            checks.append((ht.round(ht.array(a, split=split)), np.round(a)))
            a = np.array([0.25, 0.35, 1.125, -0.45, 2.675, 150.0, 250.0, -350.0], dtype=dtype)
            for decimals in (-2, 1, 2):
                wide = a.astype(np.float32) if dtype == "float16" else a
                expected = np.around(wide, decimals=decimals).astype(dtype)
                checks.append(
                    (
                        ht.around(ht.array(a, split=split), decimals=decimals),
                        expected,
                        tolerance(dtype),
                    )
                )
    x = ht.array(random_array((4, 5), dtype, seed=5), split=0)
    checks.append((x.round(1), np.round(x.numpy(), 1), tolerance(dtype)))
    assert_arrays_equal(checks)


def test_round_integers_and_bool():
    checks = []
    a = np.array([15, 25, -15, -25, 14, 16, 150, 249, 250, 251, -250, 0, 5, -5], dtype=np.int64)
    for dtype in ("int64", "int32", "int16", "int8", "uint8"):
        values = (
            np.abs(a).astype(dtype)
            if dtype == "uint8"
            else a.astype(dtype)
            if dtype != "int8"
            else np.clip(a, -120, 120).astype(dtype)
        )
        for split in (None, 0):
            x = ht.array(values, split=split)
            for decimals in (-3, -2, -1, 0, 2):
                checks.append((ht.round(x, decimals), np.round(values, decimals)))
    b = random_array((3, 4), np.bool_, seed=6)
    checks.append((ht.round(ht.array(b, split=1)), np.round(b)))
    assert_arrays_equal(checks)
    assert_raises_then_collective_works(TypeError, ht.round, ht.ones(3, split=0), 1.5)


def test_rounding_out_where():
    a = random_array((4, 5), np.float32, seed=7)
    mask = random_array((4, 5), np.bool_, seed=8)
    x = ht.array(a, split=0)
    checks = []
    for name in ("abs", "fabs", "ceil", "floor", "trunc", "sign"):
        for out_split in (None, 1):
            out = ht.full((4, 5), 9.0, dtype=ht.float64, split=out_split)
            result = getattr(ht, name)(x, out=out, where=ht.array(mask, split=1))
            assert result is out
            expected = np.full((4, 5), 9.0)
            getattr(np, name)(a, out=expected, where=mask)
            checks.append((out, expected))
    out = ht.zeros((4, 5), split=1)
    ht.round(x, 1, out=out)
    checks.append((out, np.round(a, 1)))
    assert_arrays_equal(checks)
    assert_raises_then_collective_works(
        TypeError, ht.abs, x, out=ht.zeros((4, 5), dtype=ht.int32, split=0)
    )
    assert_raises_then_collective_works(TypeError, ht.fabs, ht.ones(3, dtype=ht.complex64, split=0))
    assert_raises_then_collective_works(TypeError, ht.ceil, ht.ones(3, dtype=ht.complex64, split=0))
    assert_raises_then_collective_works(TypeError, ht.floor, ht.ones(3, dtype=ht.complex64))
    assert_raises_then_collective_works(TypeError, ht.trunc, ht.ones(3, dtype=ht.complex128))
    assert_raises_then_collective_works(TypeError, ht.sign, ht.ones(3, dtype=ht.bool, split=0))
    assert_raises_then_collective_works(TypeError, ht.abs, a)
    assert_raises_then_collective_works(ValueError, ht.floor, x, out=ht.zeros((4, 4), split=0))


@pytest.mark.parametrize("dtype", ["float32", "int32", "int64"])
def test_clip_scalar_bounds(dtype):
    checks = []
    for shape, split in combinations():
        a = random_array(shape, dtype, seed=9)
        x = ht.array(a, split=split)
        for a_min, a_max in ((-3, 4), (None, 2), (-1, None), (5, -5), (-2.5, 3.5), (None, None)):
            checks.append((ht.clip(x, a_min, a_max), np.clip(a, a_min, a_max)))
    if dtype == "float32":
        a = SPECIAL.astype(np.float32)
        checks.append((ht.clip(ht.array(a, split=0), -1, 1), np.clip(a, -1, 1)))
    assert_arrays_equal(checks)


def test_clip_array_bounds():
    a = random_array((4, 5), np.float64, seed=10)
    low = random_array((4, 5), np.float64, seed=11, low=-8, high=0)
    high = random_array((5,), np.float32, seed=12, low=0, high=8)
    checks = []
    for split_x, split_low, split_high in (
        (0, 0, 0),
        (0, 1, None),
        (1, 0, 0),
        (None, 1, 0),
        (1, None, None),
    ):
        x = ht.array(a, split=split_x)
        lo, hi = ht.array(low, split=split_low), ht.array(high, split=split_high)
        checks += [
            (ht.clip(x, lo, hi), np.clip(a, low, high)),
            (ht.clip(x, None, hi), np.clip(a, None, high)),
            (ht.clip(x, lo, None), np.clip(a, low, None)),
            (ht.clip(x, low.tolist(), 2), np.clip(a, np.array(low.tolist()), 2)),
            (x.clip(-1, hi), np.clip(a, -1, high)),
        ]
    ints = ht.array(np.arange(10, dtype=np.int32), split=0)
    checks.append(
        (
            ht.clip(ints, ht.array(np.full(10, 2.5), split=0), 7),
            np.clip(np.arange(10, dtype=np.int32), np.full(10, 2.5), 7),
        )
    )
    mask = random_array((4, 5), np.bool_, seed=13)
    out = ht.full((4, 5), 100.0, dtype=ht.float64, split=1)
    result = ht.clip(
        ht.array(a, split=0), -1, ht.array(high, split=0), out=out, where=ht.array(mask, split=0)
    )
    assert result is out
    expected = np.full((4, 5), 100.0)
    np.clip(a, -1, high, out=expected, where=mask)
    checks.append((out, expected))
    out = ht.zeros((4, 5), dtype=ht.float64, split=None)
    ht.clip(ht.array(a, split=1), -2, 2, out=out)
    checks.append((out, np.clip(a, -2, 2)))
    assert_arrays_equal(checks)
    x = ht.array(a, split=0)
    assert_raises_then_collective_works(ValueError, ht.clip, x, ht.zeros((3, 5), split=0), 1)
    assert_raises_then_collective_works(ValueError, ht.clip, x, ht.zeros((2, 4, 5), split=0), None)
    assert_raises_then_collective_works(TypeError, ht.clip, x, "a", 1)
    assert_raises_then_collective_works(TypeError, ht.clip, ht.ones(3, dtype=ht.complex64), 0, 1)
    assert_raises_then_collective_works(
        TypeError,
        ht.clip,
        ht.ones(3, dtype=ht.int32, split=0),
        0,
        1,
        out=ht.zeros(3, dtype=ht.int32, split=0).astype(ht.bool),
    )


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int8"])
def test_modf(dtype):
    checks = []
    for shape, split in combinations(((7,), (5, 6), (2, 3, 4), (0, 3))):
        a = random_array(shape, dtype, seed=14)
        fraction, integral = ht.modf(ht.array(a, split=split))
        expected = np.modf(a)
        checks += [(fraction, expected[0], tolerance(expected[0].dtype)), (integral, expected[1])]
    if dtype.startswith("float"):
        a = SPECIAL.astype(dtype)
        fraction, integral = ht.modf(ht.array(a, split=0))
        expected = np.modf(a)
        checks += [(fraction, expected[0]), (integral, expected[1])]
        # the sign of zero fractions of infinities
        assert np.array_equal(np.signbit(fraction.numpy()), np.signbit(expected[0]))
    a = random_array((4, 5), np.float64, seed=15)
    outs = (
        ht.zeros((4, 5), dtype=ht.float64, split=1),
        ht.zeros((4, 5), dtype=ht.float64, split=None),
    )
    result = ht.modf(ht.array(a, split=0), out=outs)
    assert result[0] is outs[0] and result[1] is outs[1]
    checks += [(outs[0], np.modf(a)[0]), (outs[1], np.modf(a)[1])]
    assert_arrays_equal(checks)
    assert_raises_then_collective_works(TypeError, ht.modf, ht.ones(3, dtype=ht.complex64))
    assert_raises_then_collective_works(TypeError, ht.modf, ht.ones(3), out=ht.ones(3))
