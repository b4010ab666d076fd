"""
Tests of the unsigned integer types uint16, uint32 and uint64 (stored as torch's unsigned tensors,
computed through heat/core/_operations.py's storage -> compute map) against NumPy: promotion,
conversions, factories, elementwise functions with wraparound, reductions, scans, ordering
functions (sort, unique, argmax, ...), joining and indexing, on every split, with values near
2**16 - 1, 2**32 - 1 and 2**64 - 1 (above 2**63 for uint64).
"""

import itertools
import operator
import os
import tempfile

import numpy as np
import pytest
import torch

import heat as ht
from tests.helpers import (
    assert_array_equal,
    assert_arrays_equal,
    assert_raises_then_collective_works,
    combinations,
    splits_for,
)

UNSIGNED = (np.uint16, np.uint32, np.uint64)
SHAPES = ((7,), (5, 6), (2, 3), (1, 5), (0, 3))
ALL_TYPES = (
    np.bool_,
    np.uint8,
    np.uint16,
    np.uint32,
    np.uint64,
    np.int8,
    np.int16,
    np.int32,
    np.int64,
    np.float16,
    np.float32,
    np.float64,
    np.complex64,
    np.complex128,
)


def values(shape, dtype, seed=0, low_only=False):
    """Small values mixed with values near the type's maximum (above 2**63 for uint64)."""
    rng = np.random.default_rng(seed)
    maximum = int(np.iinfo(dtype).max)
    size = int(np.prod(shape))
    small = rng.integers(0, 9, size=size).astype(dtype)
    if low_only:
        return small.reshape(shape)
    large = np.array(maximum, dtype=dtype) - rng.integers(0, 9, size=size).astype(dtype)
    middle = np.array(maximum // 2, dtype=dtype) + rng.integers(0, 5, size=size).astype(dtype)
    choice = rng.integers(0, 3, size=size)
    return (
        np.where(choice == 0, small, np.where(choice == 1, large, middle))
        .astype(dtype)
        .reshape(shape)
    )


def cases(dtypes=UNSIGNED, shapes=SHAPES):
    for dtype in dtypes:
        for shape, split in combinations(shapes):
            yield dtype, shape, split


@pytest.mark.parametrize("dtype", UNSIGNED)
def test_types_and_promotion(dtype):
    heat_type = ht.types.canonical_heat_type(dtype)
    name = np.dtype(dtype).name
    assert getattr(ht, name) is heat_type
    assert heat_type.torch_type() is getattr(torch, name)
    assert heat_type.numpy_type() == np.dtype(dtype) and heat_type.char() == np.dtype(dtype).char
    for spelling in (
        name,
        np.dtype(dtype).str,
        np.dtype(dtype).char,
        dtype,
        np.dtype(dtype),
        getattr(torch, name),
    ):
        assert ht.types.canonical_heat_type(spelling) is heat_type
    assert ht.issubdtype(heat_type, ht.unsignedinteger) and ht.issubdtype(heat_type, ht.integer)
    assert ht.isdtype(heat_type, "unsigned integer") and ht.isdtype(heat_type, "integral")
    assert not ht.isdtype(heat_type, "signed integer")
    assert ht.__array_namespace_info__().dtypes(kind="unsigned integer")[name] is heat_type
    info = ht.iinfo(heat_type)
    assert (info.min, info.max, info.bits) == (0, int(np.iinfo(dtype).max), np.iinfo(dtype).bits)
    assert ht.iinfo(ht.zeros(2, dtype=heat_type)).dtype is heat_type
    assert ht.types.heat_type_is_exact(heat_type)
    for other in ALL_TYPES:
        other_type = ht.types.canonical_heat_type(other)
        for a, b in ((heat_type, other_type), (other_type, heat_type)):
            expected = np.promote_types(a.numpy_type(), b.numpy_type())
            assert ht.promote_types(a, b).numpy_type() == expected, (a, b)
            assert ht.result_type(a, b).numpy_type() == np.result_type(
                a.numpy_type(), b.numpy_type()
            )
        for casting in ("safe", "same_kind"):
            assert ht.can_cast(heat_type, other_type, casting) == np.can_cast(dtype, other, casting)
            assert ht.can_cast(other_type, heat_type, casting) == np.can_cast(other, dtype, casting)
        for third in (np.int8, np.float16, np.uint64):
            triple = (dtype, other, third)
            assert ht.result_type(
                *[ht.types.canonical_heat_type(t) for t in triple]
            ).numpy_type() == np.result_type(*triple), triple
    for scalar in (True, 3, 2.5, 1j):
        assert ht.result_type(heat_type, scalar).numpy_type() == np.result_type(dtype, scalar)
    # the array API's / NumPy 2's table entries the issue names
    assert ht.promote_types(ht.uint16, ht.int16) is ht.int32
    assert ht.promote_types(ht.uint32, ht.int32) is ht.int64
    assert ht.promote_types(ht.uint64, ht.int64) is ht.float64
    assert ht.promote_types(ht.uint8, ht.uint16) is ht.uint16
    assert ht.promote_types(ht.uint32, ht.uint64) is ht.uint64
    assert ht.types.float_type_for(heat_type).numpy_type() == np.promote_types(dtype, np.float16)


def test_conversions_factories_and_transfers():
    checks = []
    for dtype, shape, split in cases():
        data = values(shape, dtype)
        x = ht.array(data, split=split)
        checks.append((x, data))
        assert x.larray.dtype == getattr(torch, np.dtype(dtype).name)
        if data.size:
            checks.append((ht.array(data.tolist(), dtype=x.dtype, split=split), data))
            checks.append((ht.asarray(data.tolist(), dtype=x.dtype), data))
        checks.append((x.astype(ht.float64), data.astype(np.float64)))
        checks.append((x.astype(ht.int64), data.astype(np.int64)))
        checks.append((x.astype(ht.uint8), data.astype(np.uint8)))
        checks.append(
            (
                ht.array(data.astype(np.float64), split=split).astype(x.dtype),
                data.astype(np.float64).astype(dtype),
            )
        )
        checks.append(
            (
                ht.array(data.astype(np.int64), split=split).astype(x.dtype),
                data.astype(np.int64).astype(dtype),
            )
        )
        checks.append(
            (
                ht.full(shape, np.iinfo(dtype).max, dtype=x.dtype, split=split),
                np.full(shape, np.iinfo(dtype).max, dtype=dtype),
            )
        )
        checks.append((ht.zeros(shape, dtype=x.dtype, split=split), np.zeros(shape, dtype)))
        checks.append((ht.ones_like(x), np.ones_like(data)))
        checks.append((ht.full_like(x, 7), np.full_like(data, 7)))
        if x.ndim == 2:
            for new_split in splits_for(2):
                checks.append((ht.resplit(x, new_split), data))
            checks.append((x.T, data.T))
        checks.append((x.copy(), data))
    for dtype in UNSIGNED:
        heat_type = ht.types.canonical_heat_type(dtype)
        checks.append(
            (ht.arange(3, 17, 3, dtype=heat_type, split=0), np.arange(3, 17, 3, dtype=dtype))
        )
        checks.append(
            (
                ht.asarray(np.array(np.iinfo(dtype).max, dtype=dtype)),
                np.array(np.iinfo(dtype).max, dtype=dtype),
            )
        )
        checks.append(
            (heat_type([1, int(np.iinfo(dtype).max)]), np.array([1, np.iinfo(dtype).max], dtype))
        )
    big = 2**64 - 1
    checks.append(
        (
            ht.array([big, 2**63, 5], dtype=ht.uint64, split=0),
            np.array([big, 2**63, 5], dtype=np.uint64),
        )
    )
    assert_arrays_equal(checks, rtol=0, atol=0)
    assert ht.array([big, 2**63], dtype=ht.uint64, split=0)[0].item() == big


def test_hdf5_round_trip():
    path = os.path.join(tempfile.gettempdir(), f"heat_uint_{ht.MPI_WORLD.size}.h5")
    path = ht.MPI_WORLD.bcast(path)
    checks = []
    for index, dtype in enumerate(UNSIGNED):
        data = values((5, 3), dtype, seed=index)
        for split in (None, 0, 1):
            ht.save_hdf5(ht.array(data, split=split), path, f"d{index}", mode="w")
            loaded = ht.load_hdf5(path, f"d{index}", split=split)
            checks.append((loaded, data))
    assert_arrays_equal(checks, rtol=0, atol=0)
    ht.MPI_WORLD.Barrier()
    if ht.MPI_WORLD.rank == 0 and os.path.exists(path):
        os.remove(path)


BINARY = [
    ("add", operator.add),
    ("subtract", operator.sub),
    ("multiply", operator.mul),
    ("floor_divide", operator.floordiv),
    ("remainder", operator.mod),
    ("bitwise_and", operator.and_),
    ("bitwise_or", operator.or_),
    ("bitwise_xor", operator.xor),
    ("equal", operator.eq),
    ("not_equal", operator.ne),
    ("less", operator.lt),
    ("less_equal", operator.le),
    ("greater", operator.gt),
    ("greater_equal", operator.ge),
    ("maximum", None),
    ("minimum", None),
    ("divide", operator.truediv),
    ("fmod", None),
]


@pytest.mark.parametrize("name,op", BINARY)
def test_binary_against_numpy(name, op):
    np_function = getattr(np, name)
    function = getattr(ht, name)
    checks = []
    for dtype, shape, split in cases():
        a, b = values(shape, dtype, seed=1), values(shape, dtype, seed=2)
        b[..., :1] = 0 if b.size else b[..., :1]  # division by zero gives 0, as NumPy
        x, y = ht.array(a, split=split), ht.array(b, split=split)
        with np.errstate(all="ignore"):
            expected = np_function(a, b)
            checks.append((function(x, y), expected))
            # the other operand along another axis (resplit) or not split
            other_split = None if split is not None else (0 if len(shape) else None)
            checks.append((function(x, ht.array(b, split=other_split)), expected))
            # broadcast rows and Python scalars on either side, wrapping too
            checks.append((function(x, ht.array(b[:1])), np_function(a, b[:1])))
            for scalar in (3, int(np.iinfo(dtype).max)):
                checks.append((function(x, scalar), np_function(a, np.array(scalar, dtype))))
                checks.append((function(scalar, x), np_function(np.array(scalar, dtype), a)))
            if op is not None:
                checks.append((op(x, y), op(a, b)))
    assert_arrays_equal(checks, rtol=1e-12, atol=0)


@pytest.mark.parametrize("dtype", UNSIGNED)
def test_shifts_and_powers(dtype):
    checks = []
    bits = np.iinfo(dtype).bits
    for shape, split in combinations(SHAPES[:3]):
        a = values(shape, dtype, seed=3)
        counts = (np.arange(int(np.prod(shape))).reshape(shape) * 7 % (bits + 3)).astype(dtype)
        x, n = ht.array(a, split=split), ht.array(counts, split=split)
        checks.append((ht.left_shift(x, n), np.left_shift(a, counts)))
        checks.append((ht.right_shift(x, n), np.right_shift(a, counts)))
        checks.append((x >> 1, a >> np.array(1, dtype)))
        checks.append((x << 3, a << np.array(3, dtype)))
        exponents = (counts % 5).astype(dtype)
        checks.append((x ** ht.array(exponents, split=split), a**exponents))
        checks.append((ht.pow(x, 3), a ** np.array(3, dtype)))
    assert_arrays_equal(checks, rtol=0, atol=0)


UNARY = [
    "negative",
    "positive",
    "abs",
    "bitwise_invert",
    "sign",
    "square",
    "floor",
    "ceil",
    "trunc",
    "round",
    "isnan",
    "isfinite",
    "isinf",
    "logical_not",
    "sqrt",
    "exp",
    "log1p",
    "sin",
]


@pytest.mark.parametrize("name", UNARY)
def test_unary_against_numpy(name):
    np_name = {"bitwise_invert": "invert"}.get(name, name)
    checks = []
    for dtype, shape, split in cases():
        a = values(shape, dtype, seed=4, low_only=name in ("exp",))
        with np.errstate(all="ignore"):
            expected = getattr(np, np_name)(a)
        checks.append((getattr(ht, name)(ht.array(a, split=split)), expected))
    assert_arrays_equal(checks, rtol=1e-6, atol=0)


def test_operators_and_inplace():
    checks = []
    for dtype, shape, split in cases(shapes=SHAPES[:3]):
        a, b = values(shape, dtype, seed=5), values(shape, dtype, seed=6)
        x = ht.array(a, split=split)
        checks.append((-x, -a))
        checks.append((~x, ~a))
        checks.append((abs(x), a))
        z = ht.array(a, split=split)
        z += ht.array(b, split=split)
        checks.append((z, a + b))
        z = ht.array(a, split=split)
        z *= 3
        checks.append((z, a * np.array(3, dtype)))
        z = ht.array(a, split=split)
        z //= ht.array(b | np.array(1, dtype), split=split)
        checks.append((z, a // (b | np.array(1, dtype))))
    assert_arrays_equal(checks, rtol=0, atol=0)


def test_mixed_types():
    checks = []
    pairs = (
        (np.uint16, np.int16),
        (np.uint32, np.int32),
        (np.uint64, np.int64),
        (np.uint16, np.uint8),
        (np.uint32, np.uint64),
        (np.uint16, np.float32),
        (np.uint32, np.float32),
        (np.uint64, np.float64),
        (np.uint64, np.bool_),
        (np.uint16, np.int8),
    )
    for (dtype_a, dtype_b), (shape, split) in itertools.product(pairs, combinations(SHAPES[:2])):
        a = values(shape, dtype_a, seed=7, low_only=True)
        b = (
            values(shape, np.uint8, seed=8, low_only=True).astype(dtype_b)
            if dtype_b != np.bool_
            else values(shape, np.uint8, seed=8, low_only=True) % 2 == 0
        )
        x, y = ht.array(a, split=split), ht.array(b, split=split)
        for name in ("add", "subtract", "multiply", "less", "maximum", "divide"):
            with np.errstate(all="ignore"):
                checks.append((getattr(ht, name)(x, y), getattr(np, name)(a, b)))
                checks.append((getattr(ht, name)(y, x), getattr(np, name)(b, a)))
        checks.append((x + 2.5, a + 2.5))
    assert_arrays_equal(checks, rtol=1e-6, atol=0)


REDUCTIONS = ["sum", "prod", "max", "min", "mean", "argmax", "argmin", "any", "all", "std", "var"]


@pytest.mark.parametrize("name", REDUCTIONS)
def test_reductions_against_numpy(name):
    checks = []
    arg = name.startswith("arg")
    for dtype, shape, split in cases(shapes=SHAPES[:4]):
        a = values(shape, dtype, seed=9, low_only=name in ("prod",) and dtype is np.uint64)
        x = ht.array(a, split=split)
        axes = [None] + list(range(len(shape)))
        if len(shape) > 1 and not arg:
            axes.append((0, 1))
        for axis in axes:
            with np.errstate(all="ignore"):
                expected = getattr(np, name)(a, axis=axis)
            tolerance = {"rtol": 1e-9, "atol": 0} if name in ("mean", "std", "var") else {}
            checks.append((getattr(ht, name)(x, axis=axis), expected, tolerance))
            if not arg:
                checks.append(
                    (
                        getattr(ht, name)(x, axis=axis, keepdims=True),
                        getattr(np, name)(a, axis=axis, keepdims=True),
                        tolerance,
                    )
                )
    assert_arrays_equal(checks, rtol=0, atol=0)


def test_sums_wrap_and_scans():
    checks = []
    for dtype, shape, split in cases():
        a = values(shape, dtype, seed=10)
        x = ht.array(a, split=split)
        for axis in range(len(shape)):
            checks.append((ht.cumsum(x, axis=axis), np.cumsum(a, axis=axis)))
            checks.append((ht.cumulative_sum(x, axis=axis), np.cumulative_sum(a, axis=axis)))
            checks.append((ht.cumprod(x, axis=axis), np.cumprod(a, axis=axis)))
            checks.append((ht.sum(x, axis=axis, dtype=x.dtype), np.sum(a, axis=axis, dtype=dtype)))
        checks.append((ht.sum(x), np.sum(a)))
    # 2**64 - 1 + 2 wraps to 1 in uint64
    wrap = np.array([2**64 - 1, 2], dtype=np.uint64)
    checks.append((ht.sum(ht.array(wrap, split=0)), np.sum(wrap)))
    assert_arrays_equal(checks, rtol=0, atol=0)


def test_sort_unique_search():
    checks = []
    for dtype, shape, split in cases():
        a = values(shape, dtype, seed=11)
        x = ht.array(a, split=split)
        axes = list(range(len(shape))) or [None]
        for axis in axes:
            checks.append((ht.sort(x, axis=axis), np.sort(a, axis=axis)))
            checks.append(
                (ht.sort(x, axis=axis, descending=True), np.flip(np.sort(a, axis=axis), axis=axis))
            )
            checks.append(
                (ht.argsort(x, axis=axis, stable=True), np.argsort(a, axis=axis, kind="stable"))
            )
        checks.append((ht.unique_values(x), np.unique(a)))
        if a.size:
            for largest in (True, False):
                top_values, top_indices = ht.topk(
                    x, 2 if shape[-1] > 1 else 1, dim=-1, largest=largest
                )
                order = np.argsort(a if not largest else ~a, axis=-1, kind="stable")[
                    ..., : top_values.gshape[-1]
                ]
                checks.append((top_values, np.take_along_axis(a, order, axis=-1)))
                checks.append((top_indices, order))
        counts = ht.unique_counts(x)
        expected = np.unique_counts(a)
        checks.append((counts.values, expected.values))
        checks.append((counts.counts, expected.counts))
        checks.append(
            (
                ht.where(
                    x > values(shape, dtype, seed=12), x, ht.array(a[::-1].copy(), split=split)
                ),
                np.where(a > values(shape, dtype, seed=12), a, a[::-1]),
            )
        )
        checks.append(
            (ht.clip(x, 4, np.iinfo(dtype).max - 2), np.clip(a, 4, np.iinfo(dtype).max - 2))
        )
        flat = np.sort(a.reshape(-1))
        probe = values((6,), dtype, seed=13)
        checks.append(
            (
                ht.searchsorted(ht.array(flat, split=0), ht.array(probe)),
                np.searchsorted(flat, probe),
            )
        )
        checks.append((ht.nonzero(x)[0], np.nonzero(a)[0]))
    assert_arrays_equal(checks, rtol=0, atol=0)


def test_joining_and_indexing():
    checks = []
    for dtype, shape, split in cases(shapes=SHAPES[:3]):
        a, b = values(shape, dtype, seed=14), values(shape, dtype, seed=15)
        x, y = ht.array(a, split=split), ht.array(b, split=split)
        checks.append((ht.concat([x, y], axis=0), np.concatenate([a, b], axis=0)))
        checks.append((ht.stack([x, y], axis=-1), np.stack([a, b], axis=-1)))
        checks.append((x[x > y], a[a > b]))
        checks.append((x[1:], a[1:]))
        checks.append((x[ht.array([0, shape[0] - 1])], a[[0, shape[0] - 1]]))
        z = x.copy()
        z[0] = np.iinfo(dtype).max
        expected = a.copy()
        expected[0] = np.iinfo(dtype).max
        checks.append((z, expected))
        checks.append((ht.flip(x, 0), np.flip(a, 0)))
        checks.append((ht.roll(x, 1, 0), np.roll(a, 1, 0)))
        checks.append((ht.reshape(x, (-1,)), a.reshape(-1)))
        if x.ndim == 2:
            checks.append((ht.expand_dims(x, 0), a[None]))
    assert_arrays_equal(checks, rtol=0, atol=0)


def test_uint64_above_int64_range():
    big = np.array([2**64 - 1, 2**63, 2**63 - 1, 0, 1, 2**63 + 12345, 10**19], dtype=np.uint64)
    for split in (None, 0):
        x = ht.array(big, split=split)
        assert_array_equal(x // np.uint64(3), big // np.uint64(3))
        assert_array_equal(x % np.uint64(2**63 + 1), big % np.uint64(2**63 + 1))
        assert_array_equal(
            x // ht.array(big[::-1].copy(), split=split),
            np.floor_divide(big, big[::-1], out=np.zeros_like(big), where=big[::-1] != 0),
        )
        assert_array_equal(x.astype(ht.float64), big.astype(np.float64), rtol=0)
        assert_array_equal(x.astype(ht.float32), big.astype(np.float32), rtol=0)
        assert_array_equal(ht.argsort(x), np.argsort(big, kind="stable"))
        assert_array_equal(ht.max(x), big.max())
        assert_array_equal(ht.argmin(x), big.argmin())
        assert_array_equal(x > 2**63, big > np.uint64(2**63))
        assert_array_equal(x + 1, big + np.uint64(1))
        assert_array_equal(ht.mean(x), big.mean(), rtol=1e-15)


def test_errors_raise_everywhere():
    x = ht.array(np.array([1, 2, 3], dtype=np.uint64), split=0)
    # NumPy 2 refuses Python ints outside the type
    assert_raises_then_collective_works(
        OverflowError, ht.add, ht.array([1], dtype=ht.uint16), 70000
    )
    assert_raises_then_collective_works(OverflowError, ht.add, x, -1)
    assert_raises_then_collective_works(ValueError, ht.iinfo, ht.float32)
    # an operation torch has no uint64 kernel for, and heat no unsigned kernel: a TypeError naming it
    assert_raises_then_collective_works(TypeError, ht.gcd, x, x)


def test_more_standard_functions():
    checks = []
    for dtype, shape, split in cases(shapes=((5, 6), (2, 3), (1, 5))):
        a = values(shape, dtype, seed=16)
        x = ht.array(a, split=split)
        heat_type = x.dtype
        checks.append(
            (
                ht.eye(shape[0], shape[1], dtype=heat_type, split=split),
                np.eye(shape[0], shape[1], dtype=dtype),
            )
        )
        for axis in (0, 1):
            checks.append((ht.diff(x, axis=axis), np.diff(a, axis=axis)))
            checks.append((ht.ptp(x, axis=axis), np.ptp(a, axis=axis)))
            checks.append((ht.count_nonzero(x, axis=axis), np.count_nonzero(a, axis=axis)))
            checks.append(
                (
                    ht.cumulative_prod(x, axis=axis, include_initial=True),
                    np.cumulative_prod(a, axis=axis, include_initial=True),
                )
            )
            checks.append(
                (
                    ht.take(x, ht.array([shape[axis] - 1, 0]), axis=axis),
                    np.take(a, [shape[axis] - 1, 0], axis=axis),
                )
            )
        checks.append((ht.unique_inverse(x).inverse_indices, np.unique_inverse(a).inverse_indices))
        checks.append((ht.reciprocal(x), np.reciprocal(a)))
        checks.append((ht.where(x > 5, x, 7), np.where(a > 5, a, np.array(7, dtype))))
        checks.append((ht.digitize(x, ht.array([2, 6])), np.digitize(a, [2, 6])))
        checks.append((ht.histogram(x, bins=4)[0], np.histogram(a.astype(np.float64), bins=4)[0]))
        z = x.copy()
        z[z > 5] = np.iinfo(dtype).max
        checks.append((z, np.where(a > 5, np.iinfo(dtype).max, a).astype(dtype)))
    big = ht.array(2**64 - 1)
    assert big.dtype is ht.uint64 and big.item() == 2**64 - 1
    assert_arrays_equal(checks, rtol=0, atol=0)


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.uint32, np.uint64])
@pytest.mark.parametrize("split", [None, 0, 1, -1])
def test_uint_triangles_diagonals_trace(dtype, split):
    # values near the top of the type (above 2**63 for uint64), uneven 5 x 3 shape
    a = np.arange(15, dtype=dtype).reshape(5, 3) + dtype(np.iinfo(dtype).max - 20)
    x = ht.array(a, split=split)
    for k in (-1, 0, 2):
        for ours, theirs in ((ht.tril, np.tril), (ht.triu, np.triu)):
            r = ours(x, k)
            assert r.dtype is ht.types.canonical_heat_type(dtype)
            np.testing.assert_array_equal(r.numpy(), theirs(a, k))
        r = ht.diagonal(x, k)
        assert r.dtype is ht.types.canonical_heat_type(dtype)
        np.testing.assert_array_equal(r.numpy(), np.diagonal(a, k))
        t = ht.trace(x, k)
        expected = np.trace(a, k)
        assert t.dtype is ht.types.canonical_heat_type(expected.dtype)
        assert t.item() == int(expected)
    v = ht.array(a[:, 0], split=None if split is None else 0)
    d = ht.diag(v, 1)
    assert d.dtype is ht.types.canonical_heat_type(dtype)
    np.testing.assert_array_equal(d.numpy(), np.diag(a[:, 0], 1))


@pytest.mark.parametrize("dtype", [np.uint16, np.uint32, np.uint64])
@pytest.mark.parametrize("split", [None, 0, 1, -1])
def test_uint_products(dtype, split):
    # near 2**k - 1 (above 2**63 for uint64): the products wrap as in NumPy; uneven shapes
    a = np.arange(15, dtype=dtype).reshape(5, 3) + dtype(np.iinfo(dtype).max - 20)
    b = np.arange(12, dtype=dtype).reshape(3, 4) + dtype(np.iinfo(dtype).max - 7)
    x = ht.array(a, split=split)
    for split2 in (None, 0, 1):
        y = ht.array(b, split=split2)
        cases = [
            (x @ y, a @ b),
            (ht.matmul(x, y), np.matmul(a, b)),
            (ht.dot(x, y), np.dot(a, b)),
            (ht.tensordot(x, y, axes=1), np.tensordot(a, b, axes=1)),
            (ht.vecdot(x, x), np.vecdot(a, a)),
            (ht.vecdot(x, x, axis=0), np.vecdot(a, a, axis=0)),
            (ht.dot(x[:, 0], x[:, 1]), np.dot(a[:, 0], a[:, 1])),
        ]
        for ours, expected in cases:
            assert ours.dtype is ht.types.canonical_heat_type(expected.dtype)
            np.testing.assert_array_equal(ours.numpy(), expected)
