"""
The in-place DNDarray methods HeAT users port (``x.add_(y)``, ``x.exp_()``, ``x.cumsum_(0)``,
...): NumPy's ``ufunc(a, b, out=a)`` is the oracle, values and errors alike (casting rule
``'same_kind'``), on every split, several dtypes, uneven shapes and fewer rows than processes.
Each method must return ``self``, keep its dtype and layout, and write into its local block.
"""

from __future__ import annotations

import numpy as np
import pytest

import heat as ht
from tests.helpers import (
    assert_array_equal,
    assert_raises_then_collective_works,
    collective_assert,
    random_array,
)

# (self shape, self split): uneven at 2-4 processes, and 2 rows (fewer than processes at 3, 4)
LAYOUTS = (((7, 5), None), ((7, 5), 0), ((7, 5), 1), ((7, 5), -1), ((2, 3), 0))

# method -> (NumPy ufunc, kind of operands: "real" any real dtype, "int" integers only)
BINARY = {
    "add_": (np.add, "real"),
    "sub_": (np.subtract, "real"),
    "mul_": (np.multiply, "real"),
    "div_": (np.divide, "real"),
    "floordiv_": (np.floor_divide, "real"),
    "pow_": (np.power, "real"),
    "mod_": (np.remainder, "real"),
    "fmod_": (np.fmod, "real"),
    "copysign_": (np.copysign, "real"),
    "hypot_": (np.hypot, "real"),
    "arctan2_": (np.arctan2, "real"),
    "bitwise_and_": (np.bitwise_and, "int"),
    "bitwise_or_": (np.bitwise_or, "int"),
    "bitwise_xor_": (np.bitwise_xor, "int"),
    "left_shift_": (np.left_shift, "int"),
    "right_shift_": (np.right_shift, "int"),
    "gcd_": (np.gcd, "int"),
    "lcm_": (np.lcm, "int"),
}
ALIASES = {
    "subtract_": "sub_",
    "multiply_": "mul_",
    "divide_": "div_",
    "true_divide_": "div_",
    "floor_divide_": "floordiv_",
    "power_": "pow_",
    "remainder_": "mod_",
    "bitwise_left_shift_": "left_shift_",
    "bitwise_right_shift_": "right_shift_",
    "negative_": "neg_",
    "absolute_": "abs_",
    "bitwise_not_": "invert_",
    "bitwise_invert_": "invert_",
    "cumproduct_": "cumprod_",
}
UNARY = {
    "neg_": (np.negative, "real"),
    "abs_": (np.abs, "real"),
    "invert_": (np.invert, "int"),
    "exp_": (np.exp, "real"),
    "expm1_": (np.expm1, "real"),
    "log_": (np.log, "real"),
    "log2_": (np.log2, "real"),
    "log1p_": (np.log1p, "real"),
    "sqrt_": (np.sqrt, "real"),
    "square_": (np.square, "real"),
    "sin_": (np.sin, "real"),
    "cos_": (np.cos, "real"),
    "tanh_": (np.tanh, "real"),
    "arctan_": (np.arctan, "real"),
    "ceil_": (np.ceil, "real"),
    "floor_": (np.floor, "real"),
    "trunc_": (np.trunc, "real"),
    "sign_": (np.sign, "real"),
    "reciprocal_": (np.reciprocal, "float"),
}
FLOATS = (np.float32, np.float64)
INTS = (np.int32, np.int64)


def _operand_values(kind: str, dtype, shape, seed: int) -> np.ndarray:
    """Values on which every operation is defined: positive (no zero divisors, no negative
    integer powers), small (no overflow of int32 powers and shifts)."""
    if np.dtype(dtype).kind == "f":
        return random_array(shape, dtype, seed=seed, low=0.5, high=3)
    return random_array(shape, dtype, seed=seed, low=1, high=5)


def _numpy_in_place(ufunc, a: np.ndarray, *operands) -> object:
    """NumPy's ``ufunc(a, *operands, out=a)``: the array, or the TypeError NumPy raises."""
    try:
        with np.errstate(all="ignore"):
            ufunc(a, *operands, out=a)
    except TypeError as error:  # numpy's UFuncTypeError is a TypeError
        return error
    return a


def _check_in_place(method: str, x: ht.DNDarray, expected, *args, rtol=1e-5) -> None:
    """``x.method(*args)`` gives ``expected`` in place (or raises TypeError where NumPy does)."""
    if isinstance(expected, TypeError):
        assert_raises_then_collective_works(TypeError, getattr(x, method), *args)
        return
    dtype, split, lshape, block = x.dtype, x.split, x.lshape, x.larray
    pointer = block.data_ptr()
    result = getattr(x, method)(*args)
    collective_assert(result is x, f"{method} did not return self")
    collective_assert(
        x.dtype is dtype and x.split == split and x.lshape == lshape, f"{method} changed the layout"
    )
    collective_assert(
        x.larray is block and x.larray.data_ptr() == pointer, f"{method} replaced the local block"
    )
    assert_array_equal(x, expected, rtol=rtol, atol=1e-6)


def _others(shape, dtype, kind: str):
    """The second operands: a Python scalar, arrays of the same shape split along every axis, a
    broadcast row, and a NumPy array."""
    scalar = 2 if kind == "int" or np.dtype(dtype).kind == "i" else 1.5
    b = _operand_values(kind, dtype, shape, seed=1)
    row = _operand_values(kind, dtype, shape[-1:], seed=2)
    yield scalar, scalar
    for split in (None, 0, 1):
        yield (lambda b=b, split=split: ht.array(b, split=split)), b
    yield (lambda: ht.array(row, split=0)), row
    yield row, row


def _rotated(dtypes):
    """(shape, split, dtype): every layout once, the dtypes rotated over them, each at least once
    (their full product would make the folder slow at 4 processes)."""
    for i, (shape, split) in enumerate(LAYOUTS):
        yield shape, split, dtypes[i % len(dtypes)]
        if i == 0 and len(dtypes) > 1:
            yield shape, split, dtypes[-1]


@pytest.mark.parametrize("method", sorted(BINARY))
def test_binary_in_place(method):
    ufunc, kind = BINARY[method]
    dtypes = INTS if kind == "int" else FLOATS if method == "arctan2_" else FLOATS + INTS
    for shape, split, dtype in _rotated(dtypes):
        a = _operand_values(kind, dtype, shape, seed=0)
        for other, other_np in _others(shape, dtype, kind):
            operand = other() if callable(other) else other
            expected = _numpy_in_place(ufunc, a.copy(), other_np)
            rtol = 1e-4 if method in ("pow_", "hypot_") else 1e-5
            _check_in_place(method, ht.array(a, split=split), expected, operand, rtol=rtol)


@pytest.mark.parametrize("split", [None, 0, 1])
def test_binary_casting_as_numpy(split):
    """'same_kind': an int array cannot take a float result; float32 takes float64 operands."""
    shape = (7, 5)
    a_int = random_array(shape, np.int64, seed=0, low=1, high=5)
    a_f32 = random_array(shape, np.float32, seed=0, low=1, high=5)
    b_f64 = random_array(shape, np.float64, seed=1, low=1, high=5)
    for method in ("add_", "sub_", "mul_", "pow_", "mod_"):
        ufunc = BINARY[method][0]
        _check_in_place(method, ht.array(a_int, split=split), TypeError(), 1.5)
        _check_in_place(method, ht.array(a_int, split=split), TypeError(), ht.array(b_f64, split=0))
        expected = _numpy_in_place(ufunc, a_f32.copy(), b_f64)
        _check_in_place(method, ht.array(a_f32, split=split), expected, ht.array(b_f64, split=1))
    # true division and arctan2 of integers are floats: not castable back
    for method in ("div_", "arctan2_"):
        _check_in_place(method, ht.array(a_int, split=split), TypeError(), 2)
    # bitwise operations of floats do not exist
    for method in ("bitwise_and_", "left_shift_", "gcd_"):
        _check_in_place(method, ht.array(a_f32, split=split), TypeError(), 2)


def test_binary_in_place_bool_and_shapes():
    a = random_array((6, 4), bool, seed=3)
    b = random_array((6, 4), bool, seed=4)
    for method, ufunc in (
        ("bitwise_and_", np.bitwise_and),
        ("bitwise_or_", np.bitwise_or),
        ("bitwise_xor_", np.bitwise_xor),
        ("add_", np.add),
        ("mul_", np.multiply),
    ):
        for split in (None, 0, 1):
            expected = _numpy_in_place(ufunc, a.copy(), b)
            _check_in_place(
                method, ht.array(a, split=split), expected, ht.array(b, split=1 - (split or 0))
            )
    # the result must have self's shape: a larger broadcast shape is an error, as NumPy's out=
    x = ht.zeros((1, 4), split=0)
    assert_raises_then_collective_works(ValueError, x.add_, ht.ones((3, 4), split=0))
    assert_raises_then_collective_works(ValueError, ht.zeros((3, 4), split=1).mul_, ht.ones((3, 5)))
    assert_raises_then_collective_works(TypeError, ht.zeros(3).add_, "a")


@pytest.mark.parametrize("method", sorted(UNARY))
def test_unary_in_place(method):
    ufunc, kind = UNARY[method]
    dtypes = INTS if kind == "int" else FLOATS if kind == "float" else FLOATS + INTS
    for shape, split, dtype in _rotated(dtypes):
        a = random_array(shape, dtype, seed=5, low=-4, high=4)
        if method.startswith(("log", "sqrt")):
            a = np.abs(a) + (1 if np.dtype(dtype).kind == "i" else 0.5)
        expected = _numpy_in_place(ufunc, a.copy())
        _check_in_place(method, ht.array(a, split=split), expected)
    # an integer array cannot hold a floating result
    if kind == "real" and method not in (
        "neg_",
        "abs_",
        "square_",
        "sign_",
        "ceil_",
        "floor_",
        "trunc_",
    ):
        x = ht.arange(6, split=0)
        expected = _numpy_in_place(ufunc, np.arange(6))
        collective_assert(
            isinstance(expected, TypeError), f"NumPy computed {method} of ints in place"
        )
        _check_in_place(method, x, expected)


def test_unary_in_place_complex():
    a = random_array((5, 3), np.complex128, seed=6)
    for method, ufunc in (
        ("neg_", np.negative),
        ("exp_", np.exp),
        ("sqrt_", np.sqrt),
        ("abs_", np.abs),
    ):
        for split in (None, 0, 1):
            _check_in_place(method, ht.array(a, split=split), _numpy_in_place(ufunc, a.copy()))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
def test_cumulative_in_place(dtype):
    for shape, split in LAYOUTS:
        a = random_array(shape, dtype, seed=7, low=-3, high=4)
        for axis in (0, 1):
            for method, function in (("cumsum_", np.cumsum), ("cumprod_", np.cumprod)):
                expected = a.copy()
                function(expected, axis=axis, out=expected)
                _check_in_place(method, ht.array(a, split=split), expected, axis)
    # axis=None scans a 1-D array; a 2-D one does not fit its flattened scan
    v = random_array((9,), dtype, seed=8, low=-3, high=4)
    _check_in_place("cumsum_", ht.array(v, split=0), np.cumsum(v).astype(dtype))
    assert_raises_then_collective_works(ValueError, ht.ones((3, 4), split=0).cumsum_)


def test_cumulative_in_place_bool_as_numpy():
    """NumPy counts bools in its default integer and casts the counts back: nonzero is True."""
    b = random_array((5, 2), bool, seed=9)
    for split in (None, 0, 1):
        for axis in (0, 1):
            expected = b.copy()
            np.cumsum(expected, axis=axis, out=expected)
            _check_in_place("cumsum_", ht.array(b, split=split), expected, axis)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
def test_clip_in_place(dtype):
    for shape, split in LAYOUTS:
        a = random_array(shape, dtype, seed=10)
        lo, hi = (-3, 4)
        expected = _numpy_in_place(np.clip, a.copy(), lo, hi)
        _check_in_place("clip_", ht.array(a, split=split), expected, lo, hi)
        bound = random_array(shape[-1:], dtype, seed=11, low=0, high=5)
        expected = _numpy_in_place(np.clip, a.copy(), None, bound)
        _check_in_place("clip_", ht.array(a, split=split), expected, None, ht.array(bound, split=0))
        x = ht.array(a, split=split)
        collective_assert(x.clip_(a_min=-1) is x)
        assert_array_equal(x, np.clip(a, -1, None))
    if np.dtype(dtype).kind == "i":
        a = random_array((7, 5), dtype, seed=12)
        expected = _numpy_in_place(np.clip, a.copy(), 0.5, 2.5)
        collective_assert(isinstance(expected, TypeError), "NumPy clipped ints by floats in place")
        _check_in_place("clip_", ht.array(a, split=0), expected, 0.5, 2.5)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_nan_to_num_and_round_in_place(dtype):
    for shape, split in LAYOUTS:
        a = random_array(shape, dtype, seed=13)
        a.flat[::3] = np.nan
        a.flat[1::4] = np.inf
        a.flat[2::5] = -np.inf
        expected = np.nan_to_num(a, nan=1.0, neginf=-7.0)
        _check_in_place("nan_to_num_", ht.array(a, split=split), expected, 1.0, None, -7.0)
        b = random_array(shape, dtype, seed=14)
        _check_in_place("round_", ht.array(b, split=split), np.round(b, 1), 1)
    ints = ht.arange(5, split=0)
    collective_assert(ints.nan_to_num_() is ints)
    assert_array_equal(ints, np.arange(5))


def test_aliases_and_docstrings():
    for alias, method in ALIASES.items():
        x_np = random_array(
            (5, 3),
            np.float64 if "shift" not in method and "invert" not in method else np.int64,
            seed=15,
            low=1,
            high=4,
        )
        x, y = ht.array(x_np, split=0), ht.array(x_np, split=0)
        args = (
            () if method in ("neg_", "abs_", "invert_") else (0,) if method == "cumprod_" else (2,)
        )
        getattr(x, alias)(*args)
        getattr(y, method)(*args)
        assert_array_equal(x, y.numpy())
    for name in (
        list(BINARY) + list(UNARY) + list(ALIASES) + ["clip_", "nan_to_num_", "cumsum_", "round_"]
    ):
        doc = getattr(ht.DNDarray, name).__doc__ or ""
        assert "Examples" in doc and "self" in doc, name
        assert getattr(ht.DNDarray, name).__name__ == name or name in ALIASES
