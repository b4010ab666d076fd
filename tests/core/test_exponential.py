"""
Tests of heat/core/exponential.py against NumPy: every function on every split, float, integer,
boolean and complex inputs (NumPy's result dtypes), ``out=``/``where=``, bfloat16, and errors.
"""

import numpy as np
import pytest
import torch

import heat as ht
from tests.helpers import (
    assert_arrays_equal,
    assert_raises_then_collective_works,
    collective_assert,
    combinations,
    random_array,
    splits_for,
)

# name: (NumPy function, low, high of the test data)
UNARY = {
    "exp": (np.exp, -5, 5),
    "expm1": (np.expm1, -5, 5),
    "exp2": (np.exp2, -5, 5),
    "log": (np.log, 0, 10),
    "log2": (np.log2, 0, 10),
    "log10": (np.log10, 0, 10),
    "log1p": (np.log1p, 0, 10),
    "sqrt": (np.sqrt, 0, 10),
    "square": (np.square, -5, 5),
}
DTYPES = ("float32", "float64", "int32", "int8", "bool", "complex64")


def np_call(function, *args, **kwargs):
    with np.errstate(all="ignore"):
        return function(*args, **kwargs)


def tolerance(dtype):
    dtype = np.dtype(dtype)
    if dtype == np.float16:
        return {"rtol": 2e-3, "atol": 2e-3}
    if dtype in (np.float32, np.complex64):
        return {"rtol": 2e-5, "atol": 1e-5}
    return {"rtol": 1e-12, "atol": 1e-12}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", list(UNARY))
def test_unary_all_splits(name, dtype):
    np_function, low, high = UNARY[name]
    function = getattr(ht, name)
    checks = []
    for shape, split in combinations():
        a = random_array(shape, dtype, seed=1, low=low, high=high)
        expected = np_call(np_function, a)
        checks.append((function(ht.array(a, split=split)), expected, tolerance(expected.dtype)))
    assert_arrays_equal(checks)


def test_special_values():
    a = np.array([0.0, -0.0, -1.0, np.inf, -np.inf, np.nan, 1e-10], dtype=np.float64)
    checks = []
    for split in (None, 0):
        x = ht.array(a, split=split)
        for name, (np_function, _, _) in UNARY.items():
            checks.append((getattr(ht, name)(x), np_call(np_function, a)))
    assert_arrays_equal(checks)


def test_methods_out_where():
    a = random_array((4, 5), np.float32, seed=2, low=0.5, high=4)
    mask = random_array((4, 5), np.bool_, seed=3)
    x = ht.array(a, split=0)
    checks = [
        (x.exp(), np.exp(a), tolerance(np.float32)),
        (x.log(), np.log(a), tolerance(np.float32)),
        (x.sqrt(), np.sqrt(a), tolerance(np.float32)),
        (x.square(), np.square(a), tolerance(np.float32)),
    ]
    for out_split in (None, 0, 1):
        out = ht.full((4, 5), -1.0, dtype=ht.float64, split=out_split)
        result = ht.log(x, out=out, where=ht.array(mask, split=1))
        assert result is out and out.split == out_split
        expected = np.full((4, 5), -1.0)
        np.log(a, out=expected, where=mask)
        checks.append((out, expected, tolerance(np.float32)))
    ints = ht.array(np.arange(12).reshape(3, 4), split=0)
    out = ht.zeros((3, 4), dtype=ht.int64, split=1)
    ht.square(ints, out=out)
    checks.append((out, np.square(np.arange(12).reshape(3, 4))))
    assert_arrays_equal(checks)
    # a float result does not fit an integer out (NumPy's same_kind rule)
    assert_raises_then_collective_works(
        TypeError, ht.exp, x, out=ht.zeros((4, 5), dtype=ht.int32, split=0)
    )
    assert_raises_then_collective_works(ValueError, ht.exp, x, out=ht.zeros((5, 4), split=0))
    assert_raises_then_collective_works(TypeError, ht.exp, a)
    assert_raises_then_collective_works(TypeError, ht.sqrt, [1.0, 2.0])


@pytest.mark.parametrize("shape,out_shape", [((4,), (3, 4)), ((3, 1), (2, 3, 4)), ((), (5, 2))])
def test_out_larger_than_the_result(shape, out_shape):
    # NumPy fills every row of an out the result broadcasts to: ht.sqrt(ht.arange(4.), out=...)
    a = random_array(shape, np.float32, seed=10, low=0, high=9)
    ints = random_array(shape, np.int32, seed=11, low=0, high=9)
    mask = random_array(out_shape, np.bool_, seed=12)
    checks = []
    for split in splits_for(len(shape)):
        x, i = ht.array(a, split=split), ht.array(ints, split=split)
        for out_split in splits_for(len(out_shape)):
            out = ht.full(out_shape, -1.0, split=out_split)
            collective_assert(ht.sqrt(x, out=out) is out)
            expected = np.full(out_shape, -1.0, dtype=np.float32)
            np.sqrt(a, out=expected)
            checks.append((out, expected, tolerance(np.float32)))
            # an integer input computed in float64, cast to out's float32
            out = ht.zeros(out_shape, split=out_split)
            ht.exp(i, out=out)
            expected = np.zeros(out_shape, dtype=np.float32)
            np.exp(ints, out=expected, casting="same_kind")
            checks.append((out, expected, tolerance(np.float32)))
            out = ht.full(out_shape, 7.0, dtype=ht.float64, split=out_split)
            ht.log1p(x, out=out, where=ht.array(mask, split=out_split))
            expected = np.full(out_shape, 7.0)
            np.log1p(a, out=expected, where=mask)
            checks.append((out, expected, tolerance(np.float32)))
    assert_arrays_equal(checks)
    # an out the result does not broadcast to (smaller, or of another length)
    for bad_shape in (shape[:-1] + (2,) if shape else (), out_shape[1:] + (7,)):
        with pytest.raises(ValueError):
            np.sqrt(np.ones(out_shape), out=np.zeros(bad_shape, np.float32))
        assert_raises_then_collective_works(
            ValueError, ht.sqrt, ht.ones(out_shape, split=0), out=ht.zeros(bad_shape)
        )


@pytest.mark.parametrize("name", ["logaddexp", "logaddexp2"])
def test_logaddexp(name):
    function, np_function = getattr(ht, name), getattr(np, name)
    checks = []
    for dtype in ("float32", "float64", "int32", "int8"):
        for shape, split in combinations(((7,), (5, 6), (0, 3))):
            a = random_array(shape, dtype, seed=4)
            b = random_array(shape, dtype, seed=5)
            expected = np_function(a, b)
            checks.append(
                (
                    function(ht.array(a, split=split), ht.array(b, split=split)),
                    expected,
                    tolerance(expected.dtype),
                )
            )
    a = random_array((4, 5), np.float64, seed=6)
    b = random_array((5,), np.float64, seed=7)
    for split_a, split_b in ((0, 0), (1, 0), (0, None), (None, 0)):
        checks.append(
            (function(ht.array(a, split=split_a), ht.array(b, split=split_b)), np_function(a, b))
        )
    checks.append((function(ht.array(a, split=1), 2.0), np_function(a, 2.0)))
    checks.append((function(-1.5, ht.array(a, split=0)), np_function(-1.5, a)))
    checks.append(
        (
            function(ht.array([-np.inf, np.inf, np.nan]), -np.inf),
            np_call(np_function, np.array([-np.inf, np.inf, np.nan], dtype=np.float32), -np.inf),
        )
    )
    # mixed small integers: uint8 with int8 computes in float16 (NumPy's loop), not float32
    for first, second in (
        ("uint8", "int8"),
        ("int8", "uint8"),
        ("uint8", "int16"),
        ("bool", "int8"),
    ):
        a = random_array((5, 3), first, seed=8, low=0, high=5)
        b = random_array((5, 3), second, seed=9, low=0, high=5)
        expected = np_function(a, b)
        for split_a, split_b in ((None, None), (0, 0), (1, 0), (-1, None)):
            checks.append(
                (
                    function(ht.array(a, split=split_a), ht.array(b, split=split_b)),
                    expected,
                    tolerance(expected.dtype),
                )
            )
    assert_arrays_equal(checks)
    assert_raises_then_collective_works(
        ValueError, function, ht.ones((4, 5), split=0), ht.ones((4,), split=0)
    )
    assert_raises_then_collective_works(TypeError, function, ht.ones(3, dtype=ht.complex64), 1.0)


def test_square_integers_and_bool():
    checks = []
    for dtype in ("int8", "int16", "int64", "uint8", "bool", "complex128"):
        a = random_array((5, 6), dtype, seed=8, low=0 if dtype == "uint8" else -10)
        for split in (None, 0, -1):
            checks.append((ht.square(ht.array(a, split=split)), np.square(a)))
    assert_arrays_equal(checks)


def test_bfloat16_and_float16():
    a = random_array((5, 6), np.float32, seed=9, low=0.5, high=4)
    checks = []
    for name, (np_function, _, _) in UNARY.items():
        for split in (None, 0):
            x16 = ht.array(a.astype(np.float16), split=split)
            checks.append(
                (getattr(ht, name)(x16), np_function(a.astype(np.float16)), tolerance(np.float16))
            )
            xb = ht.array(torch.from_numpy(a).to(torch.bfloat16), split=split)
            result = getattr(ht, name)(xb)
            assert result.dtype is ht.bfloat16
            checks.append(
                (
                    result.astype(ht.float32),
                    np_function(xb.astype(ht.float32).numpy()),
                    {"rtol": 2e-2, "atol": 2e-2},
                )
            )
    assert_arrays_equal(checks)
