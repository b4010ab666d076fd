"""
Tests of heat/core/logical.py against NumPy: the reductions ``all``/``any`` on every split, axis
and dtype (empty blocks contribute the neutral element), ``isclose``/``allclose`` (including the
split=0 case that crashed HeAT 1.8 at 3 processes), NaN/inf classification, ``signbit`` and the
elementwise logical operations with mixed layouts.
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


def sparse_data(shape, dtype, seed):
    """Mostly zeros (so all/any vary along axes), with NaN (truthy) in float arrays."""
    a = random_array(shape, np.float64, seed=seed, low=-1, high=1)
    a = np.where(np.abs(a) < 0.7, 0, a)
    if np.dtype(dtype).kind == "f" and a.size:
        a.ravel()[::5] = np.nan
    return a.astype(dtype)


@pytest.mark.parametrize("dtype", ["float32", "int64", "bool", "complex64"])
@pytest.mark.parametrize("name", ["all", "any"])
def test_all_any(name, dtype):
    function, np_function = getattr(ht, name), getattr(np, name)
    checks = []
    for shape, split in combinations():
        a = sparse_data(shape, dtype, seed=1)
        ones = np.ones(shape, dtype=dtype)
        x = ht.array(a, split=split)
        axes = [None, 0, -1] + ([(0, len(shape) - 1)] if len(shape) > 1 else [])
        for i, axis in enumerate(axes):
            keepdims = bool(i % 2)
            checks.append(
                (
                    function(x, axis=axis, keepdims=keepdims),
                    np_function(a, axis=axis, keepdims=keepdims),
                )
            )
        checks.append((function(ht.array(ones, split=split)), np_function(ones)))
    a = sparse_data((4, 5), dtype, seed=2)
    x = ht.array(a, split=0)
    checks.append((getattr(x, name)(axis=1), np_function(a, axis=1)))
    out = ht.zeros((5,), dtype=ht.bool, split=0)
    result = function(ht.array(a, split=1), axis=0, out=out)
    assert result is out
    checks.append((out, np_function(a, axis=0)))
    assert_arrays_equal(checks)
    assert_raises_then_collective_works(ValueError, function, x, axis=2)
    assert_raises_then_collective_works(TypeError, function, a)


def isclose_data(shape, seed):
    a = random_array(shape, np.float64, seed=seed)
    b = a + random_array(shape, np.float64, seed=seed + 1, low=-1e-5, high=1e-5) * (
        np.arange(a.size).reshape(shape) % 3
    )
    if a.size > 2:
        a.ravel()[0], b.ravel()[0] = np.nan, np.nan
        a.ravel()[1], b.ravel()[1] = np.inf, np.inf
        a.ravel()[2], b.ravel()[2] = -np.inf, np.inf
    return a, b


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_isclose_all_splits(dtype):
    checks = []
    for shape, split in combinations(((7,), (5, 6), (3, 4, 5), (2, 3), (0, 3))):
        a, b = isclose_data(shape, seed=3)
        a, b = a.astype(dtype), b.astype(dtype)
        x, y = ht.array(a, split=split), ht.array(b, split=split)
        for kwargs in ({}, {"equal_nan": True}, {"rtol": 0, "atol": 1e-6}):
            checks.append((ht.isclose(x, y, **kwargs), np.isclose(a, b, **kwargs)))
            checks.append((x.isclose(y, **kwargs), np.isclose(a, b, **kwargs)))
        collective_assert(ht.allclose(x, x, equal_nan=True) is True)
        collective_assert(ht.allclose(x, y) == bool(np.allclose(a, b)))
        collective_assert(
            ht.allclose(x, y, equal_nan=True, atol=1e-4)
            == bool(np.allclose(a, b, equal_nan=True, atol=1e-4))
        )
    assert_arrays_equal(checks)


def test_isclose_mixed():
    a, b = isclose_data((5, 6), seed=5)
    checks = []
    for split_a, split_b in ((0, 1), (1, 0), (0, None), (None, 1)):
        x, y = ht.array(a, split=split_a), ht.array(b, split=split_b)
        checks.append((ht.isclose(x, y), np.isclose(a, b)))
        checks.append((ht.isclose(x, ht.array(b[0], split=0)), np.isclose(a, b[0])))
        collective_assert(ht.allclose(x, ht.array(a, split=split_b), equal_nan=True))
        collective_assert(not ht.allclose(x, y))
    ints = np.arange(6, dtype=np.int32)
    checks.append((ht.isclose(ht.array(ints, split=0), 2), np.isclose(ints, 2)))
    checks.append((ht.isclose(ht.array(ints, split=0), ints + 1e-9), np.isclose(ints, ints + 1e-9)))
    checks.append(
        (
            ht.isclose(ht.array(ints.astype(bool), split=0), True),
            np.isclose(ints.astype(bool), True),
        )
    )
    checks.append((ht.isclose(ht.array(a, split=0), 1.0, atol=5), np.isclose(a, 1.0, atol=5)))
    z = np.array([1 + 1j, 2 + 1e-9j, np.nan + 0j])
    checks.append(
        (ht.isclose(ht.array(z, split=0), ht.array(z.real, split=0)), np.isclose(z, z.real))
    )
    assert_arrays_equal(checks)
    collective_assert(ht.allclose(ht.array(a, split=0), a, equal_nan=True))
    collective_assert(ht.allclose(ht.zeros((0, 3), split=0), ht.zeros((0, 3), split=1)))
    x = ht.array(a, split=0)
    assert_raises_then_collective_works(ValueError, ht.isclose, x, ht.ones((4, 6), split=0))
    assert_raises_then_collective_works(ValueError, ht.allclose, x, ht.ones((5, 5), split=1))
    assert_raises_then_collective_works(TypeError, ht.isclose, x, x, rtol="a")
    assert_raises_then_collective_works(TypeError, ht.isclose, x, "a")


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int32", "bool", "complex64"])
def test_classification(dtype):
    values = np.array([0.0, -0.0, 1.5, -2.0, np.inf, -np.inf, np.nan, 3.0])
    if dtype == "complex64":
        a = values.astype(np.complex64)
        a.imag = values[::-1]
    elif np.dtype(dtype).kind == "f":
        a = values.astype(dtype)
    else:
        a = random_array((8,), dtype, seed=6)
    a = np.tile(a, (3, 1))
    checks = []
    names = ["isnan", "isinf", "isfinite"] + (
        [] if dtype == "complex64" else ["isposinf", "isneginf", "signbit"]
    )
    for split in (None, 0, 1, -1):
        x = ht.array(a, split=split)
        for name in names:
            checks.append((getattr(ht, name)(x), getattr(np, name)(a)))
        checks += [
            (x.isnan(), np.isnan(a)),
            (x.isinf(), np.isinf(a)),
            (x.isfinite(), np.isfinite(a)),
        ]
    assert_arrays_equal(checks)
    if dtype == "complex64":
        for name in ("isposinf", "isneginf", "signbit"):
            assert_raises_then_collective_works(TypeError, getattr(ht, name), ht.array(a, split=0))


def test_classification_out_where():
    a = np.array([[np.nan, 1.0, np.inf], [-np.inf, -0.0, 2.0]])
    mask = np.array([[True, False, True], [True, True, False]])
    checks = []
    for name in ("isnan", "isinf", "isfinite", "signbit"):
        out = ht.ones((2, 3), dtype=ht.bool, split=1)
        result = getattr(ht, name)(ht.array(a, split=0), out=out, where=ht.array(mask, split=0))
        assert result is out
        expected = np.ones((2, 3), dtype=bool)
        getattr(np, name)(a, out=expected, where=mask)
        checks.append((out, expected))
    out = ht.zeros((2, 3), dtype=ht.bool, split=0)
    ht.isposinf(ht.array(a, split=1), out=out)
    checks.append((out, np.isposinf(a)))
    assert_arrays_equal(checks)
    assert_raises_then_collective_works(TypeError, ht.isnan, a)


@pytest.mark.parametrize("name", ["logical_and", "logical_or", "logical_xor"])
def test_logical_binary(name):
    function, np_function = getattr(ht, name), getattr(np, name)
    checks = []
    for dtype_a, dtype_b in (
        ("bool", "bool"),
        ("int32", "float64"),
        ("float32", "bool"),
        ("complex64", "int8"),
    ):
        for shape, split in combinations():
            a = sparse_data(shape, dtype_a, seed=7)
            b = sparse_data(shape, dtype_b, seed=8)
            checks.append(
                (function(ht.array(a, split=split), ht.array(b, split=split)), np_function(a, b))
            )
    a = sparse_data((4, 5), "float64", seed=9)
    b = sparse_data((5,), "int32", seed=10)
    for split_a, split_b in ((0, 0), (1, 0), (0, None), (None, 0)):
        checks.append(
            (function(ht.array(a, split=split_a), ht.array(b, split=split_b)), np_function(a, b))
        )
    checks += [
        (function(ht.array(a, split=0), True), np_function(a, True)),
        (function(0, ht.array(a, split=1)), np_function(0, a)),
        (function(ht.array(a, split=0), b.tolist()), np_function(a, b)),
    ]
    mask = random_array((4, 5), np.bool_, seed=11)
    out = ht.ones((4, 5), dtype=ht.bool, split=1)
    function(ht.array(a, split=0), ht.array(b, split=0), out=out, where=ht.array(mask, split=0))
    expected = np.ones((4, 5), dtype=bool)
    np_function(a, b, out=expected, where=mask)
    checks.append((out, expected))
    assert_arrays_equal(checks)
    assert_raises_then_collective_works(
        ValueError, function, ht.ones((4, 5), split=0), ht.ones((4,), split=0)
    )
    assert_raises_then_collective_works(TypeError, function, ht.ones(3), "a")


def test_logical_not():
    checks = []
    for dtype in ("bool", "int32", "float32", "complex64"):
        for shape, split in combinations():
            a = sparse_data(shape, dtype, seed=12)
            checks.append((ht.logical_not(ht.array(a, split=split)), np.logical_not(a)))
    a = sparse_data((4, 5), "float32", seed=13)
    out = ht.zeros((4, 5), dtype=ht.bool, split=0)
    ht.logical_not(ht.array(a, split=1), out=out)
    checks.append((out, np.logical_not(a)))
    assert_arrays_equal(checks)
    assert_raises_then_collective_works(TypeError, ht.logical_not, a)
