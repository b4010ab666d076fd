"""
Tests of heat/core/arithmetics.py against NumPy: every binary function on every split and several
dtypes (scalars on either side), mixed layouts, ``out=``/``where=``, in-place operators, error
handling, reductions, cumulative operations, ``diff`` and ``nan_to_num``.
"""

import numpy as np
import pytest
import torch

import heat as ht
from tests.helpers import (
    assert_array_equal,
    assert_arrays_equal,
    assert_raises_then_collective_works,
    collective_assert,
    combinations,
    random_array,
    splits_for,
)


def np_call(function, *args, **kwargs):
    with np.errstate(all="ignore"):
        return function(*args, **kwargs)


def tolerance(dtype):
    dtype = np.dtype(dtype)
    if dtype in (np.float16, np.complex64) or dtype == np.float32:
        return {
            "rtol": 1e-3 if dtype == np.float16 else 1e-5,
            "atol": 1e-3 if dtype == np.float16 else 1e-6,
        }
    return {}


# name: (heat function, NumPy function, dtypes, data kind)
BINARY = {
    "add": (ht.add, np.add, ("float32", "int32", "int64", "bool", "complex64"), "any"),
    "subtract": (ht.subtract, np.subtract, ("float32", "float64", "int32", "complex64"), "any"),
    "multiply": (ht.multiply, np.multiply, ("float64", "int64", "bool", "complex128"), "any"),
    "divide": (ht.divide, np.divide, ("float32", "int32", "int64", "bool", "complex64"), "any"),
    "floor_divide": (
        ht.floor_divide,
        np.floor_divide,
        ("float64", "int32", "int64", "bool"),
        "any",
    ),
    "remainder": (ht.remainder, np.remainder, ("float64", "int32", "int64"), "any"),
    "fmod": (ht.fmod, np.fmod, ("float32", "int64", "int8"), "any"),
    "pow": (ht.pow, np.power, ("float32", "float64", "int32", "int64", "bool"), "pow"),
    "float_power": (ht.float_power, np.float_power, ("float32", "int32"), "pow"),
    "bitwise_and": (ht.bitwise_and, np.bitwise_and, ("int32", "int64", "bool"), "any"),
    "bitwise_or": (ht.bitwise_or, np.bitwise_or, ("int16", "bool"), "any"),
    "bitwise_xor": (ht.bitwise_xor, np.bitwise_xor, ("int64", "bool", "uint8"), "any"),
    "left_shift": (ht.left_shift, np.left_shift, ("int32", "int64", "uint8"), "shift"),
    "right_shift": (ht.right_shift, np.right_shift, ("int32", "int64"), "shift"),
    "hypot": (ht.hypot, np.hypot, ("float32", "float64", "int32", "int16"), "any"),
    "copysign": (ht.copysign, np.copysign, ("float32", "int64"), "any"),
    "gcd": (ht.gcd, np.gcd, ("int32", "int64"), "any"),
    "lcm": (ht.lcm, np.lcm, ("int16", "int64"), "any"),
}
BINARY_CASES = [(name, dtype) for name, spec in BINARY.items() for dtype in spec[2]]


def operands(kind, shape, dtype, seed=0):
    dtype = np.dtype(dtype)
    if kind == "pow":
        if dtype.kind in "iub":
            return random_array(shape, dtype, seed, -4, 5), random_array(
                shape, dtype, seed + 1, 0, 4
            )
        return random_array(shape, dtype, seed, 0, 3), random_array(shape, dtype, seed + 1, -2, 2)
    if kind == "shift":
        return random_array(shape, dtype, seed, 0 if dtype.kind == "u" else -50, 50), random_array(
            shape, dtype, seed + 1, 0, 5
        )
    low = 0 if dtype.kind == "u" else -10
    return random_array(shape, dtype, seed, low), random_array(shape, dtype, seed + 1, low)


def scalar_for(kind, dtype):
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return True
    if dtype.kind in "iu":
        return 2 if kind != "any" else 3
    if dtype.kind == "c":
        return 1.5 - 0.5j
    return 1.5


@pytest.mark.parametrize("name,dtype", BINARY_CASES)
def test_binary_all_splits(name, dtype):
    function, np_function, _, kind = BINARY[name]
    checks = []
    for shape, split in combinations():
        a, b = operands(kind, shape, dtype)
        x, y = ht.array(a, split=split), ht.array(b, split=split)
        expected = np_call(np_function, a, b)
        checks.append((function(x, y), expected, tolerance(expected.dtype)))
    # Python scalars on either side (weak: keep the array's dtype where NumPy does)
    a, b = operands(kind, (5, 6), dtype)
    s = scalar_for(kind, dtype)
    for split in (None, 0, 1):
        x = ht.array(a, split=split)
        expected = np_call(np_function, a, s)
        checks.append((function(x, s), expected, tolerance(expected.dtype)))
        if kind == "any" or np.dtype(dtype).kind in "f":
            base = np.abs(a) + 1 if kind == "pow" else b
            expected = np_call(np_function, s, base)
            checks.append(
                (function(s, ht.array(base, split=split)), expected, tolerance(expected.dtype))
            )
    assert_arrays_equal(checks)


OPERATORS = [
    ("+", np.add, "float32"),
    ("-", np.subtract, "int64"),
    ("*", np.multiply, "int32"),
    ("/", np.true_divide, "int64"),
    ("//", np.floor_divide, "int64"),
    ("%", np.remainder, "float64"),
    ("**", np.power, "float64"),
    ("&", np.bitwise_and, "int64"),
    ("|", np.bitwise_or, "bool"),
    ("^", np.bitwise_xor, "int32"),
    ("<<", np.left_shift, "int64"),
    (">>", np.right_shift, "int64"),
]


@pytest.mark.parametrize("symbol,np_function,dtype", OPERATORS)
def test_operators_and_inplace(symbol, np_function, dtype):
    kind = "pow" if symbol == "**" else ("shift" if symbol in ("<<", ">>") else "any")
    a, b = operands(kind, (4, 5), dtype, seed=3)
    expected = np_call(np_function, a, b)
    tol = tolerance(expected.dtype)
    # (heat creates float32 from Python floats, NumPy float64)
    listed = np.array(b.tolist())
    listed = listed.astype(np.float32) if listed.dtype == np.float64 else listed
    checks = []
    for split_x, split_y in ((0, 0), (0, 1), (1, None), (None, 0), (-1, 0)):
        x, y = ht.array(a, split=split_x), ht.array(b, split=split_y)  # noqa: F841 (read by eval)
        checks.append((eval(f"x {symbol} y"), expected, tol))
        # reflected operators with a NumPy array and a list on the left
        checks.append((eval(f"b {symbol} x"), np_call(np_function, b, a), tol))
        checks.append((eval(f"b.tolist() {symbol} x"), np_call(np_function, listed, a), tol))
        if expected.dtype == a.dtype:
            before = x
            exec(f"x {symbol}= y")
            assert x is before, "in-place operator returned a new object"
            assert x.split == (split_x % 2 if split_x is not None else None)
            checks.append((x, expected, tol))
    assert_arrays_equal(checks)


def test_inplace_casting_rules():
    x = ht.arange(6, split=0)
    assert_raises_then_collective_works(TypeError, lambda: x.__iadd__(1.5))
    assert_raises_then_collective_works(TypeError, lambda: x.__itruediv__(2))
    y = ht.zeros((6,), dtype=ht.float32, split=0)
    y += ht.arange(6, split=None)  # int64 -> float32 is a same_kind cast
    assert_array_equal(y, np.arange(6, dtype=np.float32))
    y -= np.ones(6)  # float64 -> float32
    assert_array_equal(y, np.arange(6, dtype=np.float32) - 1)


@pytest.mark.parametrize(
    "shape_x,split_x,shape_y,split_y",
    [
        ((4, 5), 0, (4, 5), 1),
        ((4, 5), 1, (4, 5), 0),
        ((4, 5), 1, (5,), 0),
        ((4, 5), 0, (5,), 0),
        ((1, 5), 0, (4, 5), 0),
        ((4, 1), 0, (1, 5), 1),
        ((4, 1), 1, (4, 5), None),
        ((3, 1, 5), 2, (4, 1), 0),
        ((2, 3), 0, (2, 3), 1),
        ((0, 3), 0, (3,), 0),
    ],
)
def test_broadcasting_mixed_splits(shape_x, split_x, shape_y, split_y):
    a = random_array(shape_x, np.float64, seed=1)
    b = random_array(shape_y, np.float64, seed=2)
    x, y = ht.array(a, split=split_x), ht.array(b, split=split_y)
    assert_arrays_equal(
        [
            (x + y, a + b),
            (y - x, b - a),
            (ht.divide(x, y), a / b),
            (ht.floor_divide(y, x), np_call(np.floor_divide, b, a)),
        ]
    )


def test_non_dndarray_operands():
    a = random_array((4, 5), np.int32, seed=4)
    x = ht.array(a, split=0)
    assert_arrays_equal(
        [
            (ht.add(x, a[0]), a + a[0]),
            (ht.add(a[:, :1], x), a[:, :1] + a),
            (ht.multiply(x, a.tolist()), a * np.array(a.tolist())),
            (ht.subtract([1, 2, 3, 4, 5], x), np.array([1, 2, 3, 4, 5]) - a),
            (ht.add(x, np.float32(0.5)), a + np.float32(0.5)),
            (ht.add(2, 3), np.add(2, 3)),
            (ht.multiply(np.ones(3), [1, 2, 3]), np.multiply(np.ones(3), [1, 2, 3])),
            (ht.add(x, True), a + True),
            (ht.divide(x, 2), a / 2),
            (ht.add(x, 2.5), a + 2.5),
            (ht.add(x, 1j), a + 1j),
            (ht.add(torch.ones(5, dtype=torch.int32), x), a + 1),
        ]
    )


@pytest.mark.parametrize("out_split", [None, 0, 1])
def test_out_and_where(out_split):
    a = random_array((4, 5), np.float32, seed=5)
    b = random_array((4, 5), np.float32, seed=6)
    mask = random_array((4, 5), np.bool_, seed=7)
    x, y = ht.array(a, split=0), ht.array(b, split=1)
    out = ht.full((4, 5), -1.0, split=out_split)
    result = ht.add(x, y, out=out)
    collective_assert(result is out, "out= did not return out")
    assert out.split == out_split
    assert_array_equal(out, a + b)
    # out of a wider dtype, and where= with a mask split along another axis
    expected = np.full((4, 5), -1.0)
    np.multiply(a, b, out=expected, where=mask)
    out = ht.full((4, 5), -1.0, dtype=ht.float64, split=out_split)
    ht.multiply(x, y, out=out, where=ht.array(mask, split=1 if out_split != 1 else 0))
    assert_array_equal(out, expected)
    # where without out: masked elements are zero here
    result = ht.subtract(x, 1.0, where=ht.array(mask, split=0))
    assert_array_equal(result, np.where(mask, a - 1, 0).astype(np.float32))
    # broadcast mask, unary function
    expected = np.full((4, 5), 7.0, dtype=np.float32)
    np.negative(a, out=expected, where=mask[0])
    out = ht.full((4, 5), 7.0, split=out_split)
    ht.negative(x, out=out, where=mask[0])
    assert_array_equal(out, expected)
    # out=(array,) as NumPy allows
    out = ht.zeros((4, 5), split=out_split)
    ht.add(x, 1, out=(out,))
    assert_array_equal(out, a + 1)


# (operand shapes, out shape): out larger than the broadcast result, as NumPy's ufuncs allow
BROADCAST_OUT_CASES = [
    (((4,), (4,)), (3, 4)),
    (((3, 1), (4,)), (2, 3, 4)),
    (((5, 4), ()), (2, 5, 4)),
    (((1, 4), (3, 1)), (2, 3, 4)),
]


@pytest.mark.parametrize("shapes,out_shape", BROADCAST_OUT_CASES)
def test_out_larger_than_the_result(shapes, out_shape):
    a = random_array(shapes[0], np.float32, seed=1)
    b = random_array(shapes[1], np.int32, seed=2)
    mask = random_array(out_shape[-2:], np.bool_, seed=3)
    checks = []
    for split_a in splits_for(a.ndim):
        for split_b in splits_for(b.ndim)[:2]:
            x, y = ht.array(a, split=split_a), ht.array(b, split=split_b)
            for out_split in splits_for(len(out_shape)):
                expected = np.full(out_shape, -1.0)
                np.add(a, b, out=expected)
                out = ht.full(out_shape, -1.0, dtype=ht.float64, split=out_split)
                collective_assert(ht.add(x, y, out=out) is out)
                checks.append((out, expected))
                # where= broadcasts against out's shape too
                expected = np.full(out_shape, -1.0, dtype=np.float32)
                np.multiply(a, b, out=expected, where=mask)
                out = ht.full(out_shape, -1.0, split=out_split)
                mask_split = None if split_a is None else 0
                ht.multiply(x, y, out=out, where=ht.array(mask, split=mask_split))
                checks.append((out, expected))
                # a Python scalar operand
                expected = np.zeros(out_shape, dtype=np.float32)
                np.subtract(a, 2, out=expected)
                out = ht.zeros(out_shape, split=out_split)
                ht.subtract(x, 2, out=out)
                checks.append((out, expected))
    assert_arrays_equal(checks)


def test_out_that_the_result_does_not_broadcast_to():
    for split in (None, 0):
        x = ht.ones((3, 4), split=split)
        # out smaller than the result, or not compatible with it: NumPy raises ValueError
        for out_shape in [(4,), (3, 1), (2, 4), (3, 5), (2, 2, 4)]:
            with pytest.raises(ValueError):
                np.add(np.ones((3, 4)), 1, out=np.zeros(out_shape))
            out = ht.zeros(out_shape, split=split)
            assert_raises_then_collective_works(ValueError, ht.add, x, 1, out=out)
            assert_raises_then_collective_works(ValueError, ht.add, x, x, out=out)


FLOAT_RESULT_FUNCTIONS = [
    (ht.hypot, np.hypot),
    (ht.copysign, np.copysign),
    (ht.arctan2, np.arctan2),
    (ht.logaddexp, np.logaddexp),
    (ht.logaddexp2, np.logaddexp2),
]
SMALL_EXACT_TYPES = ("bool", "uint8", "int8", "int16", "int32", "int64")


@pytest.mark.parametrize("first", SMALL_EXACT_TYPES)
def test_float_result_type_of_two_integer_arrays(first):
    # NumPy computes these in the first float loop both operands cast to safely: uint8 with
    # int8 gives float16, though the two integers promote to int16
    checks = []
    for second in SMALL_EXACT_TYPES:
        a = random_array((5, 3), first, seed=1, low=0, high=5)
        b = random_array((5, 3), second, seed=2, low=0, high=5)
        for function, np_function in FLOAT_RESULT_FUNCTIONS:
            expected = np_call(np_function, a, b)
            for split_a, split_b in ((None, None), (0, 0), (1, None), (-1, 0)):
                result = function(ht.array(a, split=split_a), ht.array(b, split=split_b))
                checks.append((result, expected, tolerance(expected.dtype)))
            # a NumPy array on one side is typed alike
            checks.append((function(ht.array(a, split=0), b), expected, tolerance(expected.dtype)))
            # out= accepts the result type
            out = ht.zeros((5, 3), dtype=ht.types.canonical_heat_type(expected.dtype), split=1)
            function(ht.array(a), ht.array(b, split=0), out=out)
            checks.append((out, expected, tolerance(expected.dtype)))
    assert_arrays_equal(checks)


def test_errors_then_collective_works():
    x = ht.ones((4, 5), split=0)
    assert_raises_then_collective_works(ValueError, ht.add, x, ht.ones((3, 5), split=0))
    assert_raises_then_collective_works(ValueError, ht.add, x, ht.ones((4, 4), split=1))
    assert_raises_then_collective_works(ValueError, lambda: x.__iadd__(ht.ones((2, 4, 5), split=0)))
    assert_raises_then_collective_works(ValueError, ht.add, x, 1, out=ht.zeros((5, 4), split=0))
    assert_raises_then_collective_works(TypeError, ht.add, x, 1, out=np.zeros((4, 5)))
    assert_raises_then_collective_works(TypeError, ht.add, x, "abc")
    assert_raises_then_collective_works(TypeError, ht.add, x, {"a": 1})
    assert_raises_then_collective_works(TypeError, ht.subtract, ht.ones(3, dtype=ht.bool), True)
    assert_raises_then_collective_works(TypeError, ht.neg, ht.ones(3, dtype=ht.bool, split=0))
    assert_raises_then_collective_works(TypeError, ht.pos, ht.ones(3, dtype=ht.bool, split=0))
    assert_raises_then_collective_works(TypeError, ht.bitwise_and, x, 1)
    assert_raises_then_collective_works(TypeError, ht.bitwise_not, x)
    assert_raises_then_collective_works(TypeError, ht.left_shift, x, 1)
    assert_raises_then_collective_works(TypeError, ht.gcd, x, 2)
    assert_raises_then_collective_works(TypeError, ht.gcd, ht.ones(2, dtype=ht.bool), True)
    assert_raises_then_collective_works(TypeError, ht.hypot, ht.ones(2, dtype=ht.complex64), 1)
    assert_raises_then_collective_works(
        TypeError, ht.floor_divide, ht.ones(2, dtype=ht.complex64), 1
    )
    assert_raises_then_collective_works(TypeError, ht.remainder, ht.ones(2, dtype=ht.complex64), 1)
    assert_raises_then_collective_works(TypeError, ht.fmod, ht.ones(2, dtype=ht.complex64), 1)
    assert_raises_then_collective_works(TypeError, ht.neg, np.ones(3))
    # integers to negative integer powers (a split exponent is checked collectively)
    ints = ht.arange(1, 7, split=0)
    assert_raises_then_collective_works(ValueError, ht.pow, ints, -1)
    exponents = np.array([2, 1, 0, 1, 2, -1])
    assert_raises_then_collective_works(ValueError, ht.pow, ints, ht.array(exponents, split=0))
    assert_raises_then_collective_works(ValueError, ht.pow, ints, exponents)
    assert_array_equal(ht.pow(ints, -1.0), np.arange(1, 7) ** -1.0)


@pytest.mark.parametrize("split", [None, 0])
@pytest.mark.parametrize("dtype", ["int8", "int32", "int64", "uint8"])
def test_integer_division_by_zero(split, dtype):
    a = (
        np.array([7, -7, 0, 5, -3, 9], dtype=dtype)
        if dtype != "uint8"
        else np.array([7, 6, 0, 5, 3, 9], dtype=dtype)
    )
    b = (
        np.array([0, 2, 0, -2, 0, 4], dtype=dtype)
        if dtype != "uint8"
        else np.array([0, 2, 0, 2, 0, 4], dtype=dtype)
    )
    x, y = ht.array(a, split=split), ht.array(b, split=split)
    checks = []
    for function, np_function in (
        (ht.floor_divide, np.floor_divide),
        (ht.remainder, np.remainder),
        (ht.fmod, np.fmod),
    ):
        checks.append((function(x, y), np_call(np_function, a, b)))
        checks.append((function(x, 0), np_call(np_function, a, np.array(0, dtype=dtype))))
    checks.append((divmod(x, y)[0], np_call(np.floor_divide, a, b)))
    checks.append((divmod(x, y)[1], np_call(np.remainder, a, b)))
    checks.append((ht.divide(x, y), np_call(np.divide, a, b)))
    assert_arrays_equal(checks)


def test_float_division_special_values():
    a = np.array([1.0, -1.0, 0.0, np.inf, np.nan, 5.5], dtype=np.float32)
    b = np.array([0.0, 0.0, 0.0, 2.0, 1.0, -2.0], dtype=np.float32)
    checks = []
    for split in (None, 0):
        x, y = ht.array(a, split=split), ht.array(b, split=split)
        for function, np_function in (
            (ht.divide, np.divide),
            (ht.floor_divide, np.floor_divide),
            (ht.remainder, np.remainder),
            (ht.fmod, np.fmod),
        ):
            checks.append((function(x, y), np_call(np_function, a, b)))
    assert_arrays_equal(checks)


@pytest.mark.parametrize("dtype", ["float32", "int64", "int8", "bool"])
def test_unary_operators(dtype):
    a = random_array((5, 6), dtype, seed=8)
    checks = []
    for split in splits_for(2):
        x = ht.array(a, split=split)
        if dtype != "bool":
            checks += [
                (-x, -a),
                (+x, +a),
                (ht.negative(x), np.negative(a)),
                (ht.positive(x), np.positive(a)),
                (abs(x), np.abs(a)),
            ]
        if dtype != "float32":
            checks += [
                (~x, ~a),
                (ht.invert(x), np.invert(a)),
                (ht.bitwise_not(x), np.bitwise_not(a)),
            ]
    assert_arrays_equal(checks)


# ---------------------------------------------------------------------------------------------
# reductions
# ---------------------------------------------------------------------------------------------
def reduction_axes(ndim):
    axes = [None, 0, -1]
    if ndim > 1:
        axes.append((0, ndim - 1))
    return axes


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "bool", "complex64"])
@pytest.mark.parametrize("name", ["sum", "prod"])
def test_sum_prod(name, dtype):
    function, np_function = getattr(ht, name), getattr(np, name)
    checks = []
    for shape, split in combinations():
        a = (
            random_array(shape, dtype, seed=9, low=-2, high=3)
            if dtype != "float32"
            else random_array(shape, dtype, 9, 0.5, 1.5)
        )
        x = ht.array(a, split=split)
        for i, axis in enumerate(reduction_axes(len(shape))):
            keepdims = bool((i + len(shape)) % 2)
            expected = np_function(a, axis=axis, keepdims=keepdims)
            checks.append((function(x, axis=axis, keepdims=keepdims), expected, tolerance(dtype)))
    # methods, dtype=, out= with another split
    a = random_array((4, 5), dtype, seed=10, low=-2, high=3)
    x = ht.array(a, split=0)
    checks.append((getattr(x, name)(axis=1), np_function(a, axis=1), tolerance(dtype)))
    if dtype != "complex64":
        checks.append(
            (function(x, axis=0, dtype=ht.float64), np_function(a, axis=0, dtype=np.float64))
        )
    out = ht.zeros((4,), dtype=ht.types.canonical_heat_type(np_function(a, axis=1).dtype), split=0)
    result = function(ht.array(a, split=1), axis=1, out=out)
    assert result is out
    checks.append((out, np_function(a, axis=1), tolerance(dtype)))
    assert_arrays_equal(checks)


def test_sum_few_rows_is_scalar():
    # HeAT 1.8 returned shape (1,) for a (2,) array split over 3 processes
    x = ht.array([1.0, 2.0], split=0)
    assert_arrays_equal(
        [
            (ht.sum(x), np.float32(3.0)),
            (ht.prod(ht.array(np.empty((0, 3)), split=0), axis=0), np.ones(3)),
            (ht.sum(ht.array(np.empty((0, 3)), split=0)), np.float64(0)),
            (ht.sum(ht.array(5)), np.int64(5)),
        ]
    )
    assert_raises_then_collective_works(ValueError, ht.sum, ht.ones((2, 3), split=0), axis=2)
    assert_raises_then_collective_works(ValueError, ht.sum, ht.ones((2, 3), split=0), axis=(0, 0))
    assert_raises_then_collective_works(TypeError, ht.sum, ht.ones((2, 3), split=0), axis=1.0)
    assert_raises_then_collective_works(TypeError, ht.sum, np.ones((2, 3)))


SMALL_TYPES = ("bool", "int8", "int16", "int32", "uint8", "uint16")


@pytest.mark.parametrize("name", ["sum", "prod", "nansum", "nanprod", "cumsum", "cumprod"])
def test_requested_dtype_is_the_accumulator(name):
    """
    ``dtype=`` a bool or small integer type: NumPy casts to it, accumulates in it (wrapping)
    and returns it; torch would accumulate in int64 (uint8 [200, 100] summed as uint8 is 44).
    """
    function, np_function = getattr(ht, name), getattr(np, name)
    cumulative = name.startswith("cum")
    checks = []
    for i, requested in enumerate(SMALL_TYPES):
        for source in ("bool", ("int8", "uint8", "int64")[i % 3], ("uint16", "int32")[i % 2]):
            for shape, split in combinations(((7,), (5, 6), (2, 3))):
                a = random_array(shape, source, seed=i, low=-120, high=250)
                x = ht.array(a, split=split)
                for axis in (None, 0, -1):
                    with np.errstate(all="ignore"):
                        expected = np_function(a, axis=axis, dtype=requested)
                    checks.append((function(x, axis=axis, dtype=requested), expected))
    a = np.array([200, 100], dtype=np.uint8)
    checks.append((function(ht.array(a, split=0), dtype=ht.uint8), np_function(a, dtype=np.uint8)))
    if not cumulative:
        # keepdims and out= keep the requested type
        a = random_array((5, 6), "int16", seed=3, low=-300, high=300)
        x = ht.array(a, split=1)
        checks.append(
            (
                function(x, axis=1, dtype=ht.int8, keepdims=True),
                np_function(a, axis=1, dtype=np.int8, keepdims=True),
            )
        )
        out = ht.zeros((6,), dtype=ht.int8, split=0)
        function(x, axis=0, dtype=ht.int8, out=out)
        checks.append((out, np_function(a, axis=0, dtype=np.int8)))
    assert_arrays_equal(checks)


@pytest.mark.parametrize("name", ["nansum", "nanprod"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_nan_reductions(name, dtype):
    function, np_function = getattr(ht, name), getattr(np, name)
    checks = []
    for shape, split in combinations(((7,), (5, 6), (0, 3))):
        a = (
            random_array(shape, dtype, seed=11, low=-2, high=3)
            if dtype == "int64"
            else random_array(shape, dtype, 11, 0.5, 1.5)
        )
        if dtype != "int64" and a.size:
            a.ravel()[::3] = np.nan
        x = ht.array(a, split=split)
        for axis in (None, 0, -1):
            checks.append((function(x, axis=axis), np_function(a, axis=axis), tolerance(dtype)))
    assert_arrays_equal(checks)


@pytest.mark.parametrize("name", ["cumsum", "cumprod"])
@pytest.mark.parametrize("dtype", ["float32", "int32", "bool", "float64"])
def test_cumulative(name, dtype):
    function, np_function = getattr(ht, name), getattr(np, name)
    checks = []
    for shape, split in combinations():
        a = random_array(shape, dtype, seed=12, low=-2, high=3)
        x = ht.array(a, split=split)
        for axis in range(len(shape)):
            checks.append((function(x, axis=axis), np_function(a, axis=axis), tolerance(dtype)))
    a = random_array((4, 5), dtype, seed=13, low=-2, high=3)
    x = ht.array(a, split=0)
    checks.append((function(x, axis=0, dtype=ht.float64), np_function(a, axis=0, dtype=np.float64)))
    out = ht.zeros((4, 5), dtype=ht.float64, split=1)
    function(x, 0, out=out)
    checks.append((out, np_function(a, axis=0).astype(np.float64), tolerance(dtype)))
    # axis=None scans the flattened array
    checks.append((function(x), np_function(a), tolerance(dtype)))
    checks.append((function(ht.array(a, split=1)), np_function(a), tolerance(dtype)))
    assert_arrays_equal(checks)
    assert_raises_then_collective_works(ValueError, function, x, 2)


@pytest.mark.parametrize("name", ["cumsum", "cumprod"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int8", "int16"])
def test_cumulative_row_scan(name, dtype, monkeypatch):
    # scans along an axis that is not the last one go row by row through NumPy on CPU (rows of
    # at least _ROW_SCAN_MIN_ROW elements, lowered here so that small data takes that path);
    # the result must be NumPy's, on every split
    from heat.core import arithmetics

    monkeypatch.setattr(arithmetics, "_ROW_SCAN_MIN_ROW", 4)
    function, np_function = getattr(ht, name), getattr(np, name)
    checks = []
    for shape in ((9, 13), (2, 7, 5), (6, 1, 8), (1, 12), (3, 0, 5)):
        a = random_array(shape, dtype, seed=21, low=-2, high=3)
        for split in splits_for(len(shape)):
            x = ht.array(a, split=split)
            for axis in range(len(shape) - 1):
                checks.append((function(x, axis=axis), np_function(a, axis=axis)))
    # a transposed (non-contiguous) block
    a = random_array((8, 6), dtype, seed=22, low=0, high=3)
    checks.append((function(ht.array(a, split=0).T, axis=0), np_function(a.T, axis=0)))
    assert_arrays_equal(checks)


# ---------------------------------------------------------------------------------------------
# diff
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float32", "int32", "bool"])
def test_diff(dtype):
    checks = []
    for shape, split in combinations():
        a = random_array(shape, dtype, seed=14)
        x = ht.array(a, split=split)
        for axis in sorted({0, len(shape) - 1}):
            for n in (1, 2, 9):
                checks.append((ht.diff(x, n=n, axis=axis), np.diff(a, n=n, axis=axis)))
    assert_arrays_equal(checks)


@pytest.mark.parametrize("split", [None, 0, 1])
def test_diff_prepend_append(split):
    a = random_array((5, 4), np.int32, seed=15)
    x = ht.array(a, split=split)
    column = random_array((5, 2), np.int64, seed=16)
    row = random_array((3, 4), np.int32, seed=17)
    cases = [
        dict(axis=0, prepend=0),
        dict(axis=0, append=row),
        dict(axis=0, prepend=row, append=2.5),
        dict(axis=1, prepend=column, append=7),
        dict(axis=1, n=3, prepend=1),
        dict(axis=0, n=7, prepend=row, append=row[:1]),
    ]
    checks = []
    for case in cases:
        expected = np.diff(a, **case)
        checks.append((ht.diff(x, **case), expected))
        # distributed prepend/append
        split_case = dict(case)
        for key in ("prepend", "append"):
            value = case.get(key)
            if isinstance(value, np.ndarray):
                split_case[key] = ht.array(value, split=0)
        checks.append((ht.diff(x, **split_case), expected))
    assert_arrays_equal(checks)
    collective_assert(ht.diff(x, n=0) is x)
    assert_raises_then_collective_works(ValueError, ht.diff, x, n=-1)
    assert_raises_then_collective_works(ValueError, ht.diff, ht.array(3))
    assert_raises_then_collective_works(ValueError, ht.diff, x, axis=0, prepend=np.ones((2, 3)))
    assert_raises_then_collective_works(ValueError, ht.diff, x, axis=2)
    assert_raises_then_collective_works(TypeError, ht.diff, x, n=1.5)


def test_diff_moves_only_boundary_rows():
    # a long split axis: the result is balanced and right
    a = np.arange(40.0) ** 2
    x = ht.array(a, split=0)
    result = ht.diff(x, n=2)
    assert_array_equal(result, np.diff(a, n=2))
    collective_assert(result.is_balanced(force_check=True))


# ---------------------------------------------------------------------------------------------
# nan_to_num
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "int32"])
def test_nan_to_num(dtype):
    a = np.array([[np.nan, np.inf, -np.inf], [1.0, -2.0, np.nan]])
    if dtype == "complex64":
        real = a
        a = real.astype(np.complex128)
        a.imag = real[::-1]
    a = a.astype(dtype) if dtype != "int32" else np.arange(6, dtype=dtype).reshape(2, 3)
    checks = []
    for split in splits_for(2):
        x = ht.array(a, split=split)
        checks.append((ht.nan_to_num(x), np.nan_to_num(a)))
        checks.append(
            (
                x.nan_to_num(nan=-1.0, posinf=9.0, neginf=-9.0),
                np.nan_to_num(a, nan=-1.0, posinf=9.0, neginf=-9.0),
            )
        )
        result = ht.nan_to_num(x, copy=False, nan=5.0)
        assert result is x
        checks.append((x, np.nan_to_num(a, nan=5.0)))
    assert_arrays_equal(checks)
    assert_raises_then_collective_works(TypeError, ht.nan_to_num, ht.ones(3), nan="a")
