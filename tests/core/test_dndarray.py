import operator

import numpy as np
import pytest
import torch

import heat as ht
from tests.helpers import (
    assert_array_equal,
    assert_raises_then_collective_works,
    collective_assert,
    random_array,
    splits_for,
)


@pytest.mark.parametrize("shape", [(7,), (5, 6), (2, 3, 4), (0, 3)])
def test_metadata(shape):
    data = random_array(shape, np.float32)
    for split in splits_for(len(shape)):
        x = ht.array(data, split=split)
        assert x.shape == x.gshape == shape
        assert x.ndim == len(shape)
        assert x.size == x.gnumel == data.size
        assert x.lnumel == x.larray.numel()
        assert x.nbytes == data.nbytes and x.gnbytes == data.nbytes
        assert x.lnbytes == x.larray.numel() * 4
        assert x.dtype is ht.float32
        assert x.device == ht.get_device()
        assert x.comm.size == ht.MPI_WORLD.size
        lmap = x.lshape_map
        assert lmap.shape == (x.comm.size, len(shape))
        assert tuple(lmap[x.comm.rank].tolist()) == x.lshape
        assert x.balanced and x.is_balanced(force_check=True)
        assert len(x) == shape[0]


def test_conversions():
    for split in (None, 0):
        x = ht.array([3.5], split=split)
        assert float(x) == 3.5 and int(x) == 3 and complex(x) == 3.5 + 0j
        assert bool(ht.array([1], split=split)) is True
        assert x.item() == 3.5
        i = ht.array(4, dtype=ht.int64)
        assert [0, 1, 2, 3, 4, 5][i] == 4
        assert ht.array([[1, 2], [3, 4]], split=split).tolist() == [[1, 2], [3, 4]]
        assert np.asarray(ht.arange(4, split=split)).tolist() == [0, 1, 2, 3]
        assert np.array(ht.arange(3, split=split), dtype=np.float64).dtype == np.float64
    # a one-element array split over more processes than elements: the owner broadcasts
    one = ht.array([7], split=0)
    assert one.item() == 7
    b = ht.zeros(3, dtype=ht.bfloat16, split=0)
    assert b.numpy().dtype == np.float32
    assert_raises_then_collective_works(ValueError, ht.arange(3, split=0).item)
    assert_raises_then_collective_works(ValueError, bool, ht.arange(3, split=0))
    assert_raises_then_collective_works(TypeError, float, ht.arange(3, split=0))
    assert_raises_then_collective_works(TypeError, len, ht.array(3))
    assert_raises_then_collective_works(TypeError, lambda: [1, 2][ht.array(1.0)])


def _outcome(function, *args):
    """A call's value, or the class of the exception it raised."""
    try:
        return function(*args)
    except Exception as error:  # noqa: BLE001 - the class is what is compared
        return type(error)


def _same(actual, expected) -> bool:
    """Same type and value (NaN included: ``repr`` tells nan+0j from 0j)."""
    return type(actual) is type(expected) and (actual == expected or repr(actual) == repr(expected))


@pytest.mark.parametrize(
    "dtype", [np.float32, np.float16, np.int64, np.uint8, np.bool_, np.complex128]
)
def test_scalar_conversions_match_numpy(dtype):
    conversions = (int, float, complex, bool, operator.index)
    # every shape but the one-element ones NumPy 2.4 refuses and heat (as HeAT) converts
    for shape in [(), (3,), (0,), (2, 3), (0, 3)]:
        data = np.asarray(random_array(shape, dtype, low=1))  # 0-d arrays, not NumPy scalars
        for split in splits_for(len(shape)):
            x = ht.array(data, split=split)
            for convert in conversions:
                expected, actual = _outcome(convert, data), _outcome(convert, x)
                collective_assert(
                    _same(actual, expected),
                    f"{convert.__name__} of {shape} {dtype.__name__} split={split}: "
                    f"{actual!r}, NumPy {expected!r}",
                )
    # special values of 0-d arrays: NaN and infinity do not convert to int
    for value in (float("nan"), float("inf"), -2.5):
        data = np.array(value, dtype=dtype) if np.dtype(dtype).kind in "fc" else np.array(3, dtype)
        for convert in conversions:
            expected, actual = _outcome(convert, data), _outcome(convert, ht.array(data))
            collective_assert(_same(actual, expected), f"{convert.__name__}({data!r}): {actual!r}")


def test_format_matches_numpy():
    specs = [".2f", ">10", "d", "x", "e", "g", "+.3e", "^12", ".10f", "n"]
    values = [
        (4.5, np.float32),
        (0.1, np.float32),
        (-4.5, np.float64),
        (2.5, np.float16),
        (1 + 2j, np.complex64),
        (True, np.bool_),
        (3, np.int64),
        (200, np.uint8),
        (-7, np.int8),
    ]
    for value, dtype in values:
        data = np.array(value, dtype=dtype)
        x = ht.array(data)
        for spec in specs:
            expected, actual = _outcome(format, data, spec), _outcome(format, x, spec)
            collective_assert(
                actual == expected,
                f"format({dtype.__name__}, {spec!r}): {actual!r}, NumPy {expected!r}",
            )
        collective_assert(format(x, "") == str(x))
    # the case of the issue: a reduction's 0-d result in an f-string
    for split in (None, 0):
        mean = ht.mean(ht.arange(10, split=split))
        collective_assert(f"{mean:.2f}" == f"{np.mean(np.arange(10)):.2f}" == "4.50")
    # arrays of other dimensions take no format spec (NumPy: TypeError), only the empty one
    for shape in [(3,), (1,), (0,), (2, 3)]:
        for split in splits_for(len(shape)):
            x = ht.zeros(shape, split=split)
            with pytest.raises(TypeError):
                format(np.zeros(shape), ".2f")
            assert_raises_then_collective_works(TypeError, format, x, ".2f")
            collective_assert(f"{x}" == str(x))


@pytest.mark.parametrize("shape", [(6, 7, 8), (5,), (1, 5), (0, 3)])
def test_larray_setter_rejects_a_block_that_does_not_fit(shape):
    size = ht.MPI_WORLD.size
    for split in splits_for(len(shape)):
        x = ht.zeros(shape, split=split)
        expected = np.zeros(shape, np.float32)
        bad_blocks = [torch.zeros(int(np.prod(shape)) + 1), torch.zeros(shape + (1,))]
        longer = list(x.lshape)
        longer[0 if split is None else split] = shape[0 if split is None else split] + 1
        bad_blocks.append(torch.zeros(longer))
        if len(shape) > 1:
            other_axis = 1 if split in (0, None) else 0
            wrong = list(x.lshape)
            wrong[other_axis] += 1
            bad_blocks.append(torch.zeros(wrong))
        if split is None and shape[0] > 0:
            shorter = list(shape)
            shorter[0] -= 1
            bad_blocks.append(torch.zeros(shorter))
        for block in bad_blocks:
            assert_raises_then_collective_works(ValueError, setattr, x, "larray", block)
        # nothing changed, and a block of the right shape is still accepted
        assert_array_equal(x, expected)
        x.larray = torch.ones(x.lshape)
        assert_array_equal(x, np.ones(shape, np.float32))
        if split is not None and size > 1:
            # a block of any length along split fits; all rows on rank 0 keeps the invariants
            rows = shape[split] if x.comm.rank == 0 else 0
            block_shape = list(shape)
            block_shape[split] = rows
            x.larray = torch.full(block_shape, 2.0)
            assert_array_equal(x, np.full(shape, 2.0, np.float32))


def test_astype_and_devices():
    x = ht.arange(5, split=0, device="cpu")
    for dtype in (ht.float32, ht.int8, ht.bool, ht.complex64, ht.bfloat16):
        y = x.astype(dtype)
        assert y.dtype is dtype and y.larray.dtype == dtype.torch_type() and y.split == 0
    assert x.astype(ht.int64, copy=False) is x
    assert x.cpu() is x and x.to_device("cpu") is x
    assert_raises_then_collective_works(ValueError, x.to_device, "tpu")
    assert_raises_then_collective_works(TypeError, x.astype, "float128x")


def test_larray_setter_and_balanced_never_lies():
    x = ht.arange(8, split=0)
    size, rank = x.comm.size, x.comm.rank
    if size > 1:
        local = torch.arange(8) if rank == 0 else torch.zeros(0, dtype=torch.int64)
        x.larray = local
        collective_assert(x.balanced is False)
        x.balance_()
        assert x.balanced
        assert_array_equal(x, np.arange(8))
    with pytest.raises(TypeError):
        x.larray = np.zeros(3)


def test_operators_smoke():
    a = random_array((4, 5), np.float64, seed=3)
    b = random_array((4, 5), np.float64, seed=4) + 20
    ia = random_array((4, 5), np.int64, seed=5, low=1, high=50)
    for split in splits_for(2):
        x, y, ix = ht.array(a, split=split), ht.array(b, split=split), ht.array(ia, split=split)
        assert_array_equal(x + y, a + b)
        assert_array_equal(x - 1, a - 1)
        assert_array_equal(2 * x, 2 * a)
        assert_array_equal(x / y, a / b)
        assert_array_equal(1 / y, 1 / b)
        assert_array_equal(x // y, a // b)
        assert_array_equal(x % y, a % b)
        assert_array_equal(y**0.5, b**0.5)
        assert_array_equal(ix**2, ia**2)
        assert_array_equal(2**ix, 2**ia)
        assert_array_equal(-x, -a)
        assert_array_equal(+x, +a)
        assert_array_equal(abs(x), abs(a))
        assert_array_equal(ix & 6, ia & 6)
        assert_array_equal(ix | 6, ia | 6)
        assert_array_equal(ix ^ 6, ia ^ 6)
        assert_array_equal(~ix, ~ia)
        assert_array_equal(ix << 2, ia << 2)
        assert_array_equal(ix >> 1, ia >> 1)
        assert_array_equal(x < y, a < b)
        assert_array_equal(x <= 0, a <= 0)
        assert_array_equal(x > 0, a > 0)
        assert_array_equal(x >= y, a >= b)
        assert_array_equal(x == x, a == a)
        assert_array_equal(x != y, a != b)
        q, r = divmod(x, y)
        assert_array_equal(q, a // b)
        assert_array_equal(r, a % b)
        z = ht.array(a, split=split)
        z += 1
        z *= 2
        z -= y
        z /= 4
        assert_array_equal(z, ((a + 1) * 2 - b) / 4)
        assert_array_equal(x + np.float64(2.0), a + 2.0)


def test_numpy_array_on_left_defers_to_heat():
    a = np.arange(4.0)
    x = ht.arange(4, dtype=ht.float64, split=0)
    r = a + x
    assert isinstance(r, ht.DNDarray)
    assert_array_equal(r, a + a)


def test_method_delegation():
    x = ht.arange(6, split=0)
    assert x.T.gshape == (6,)
    collective_assert(hasattr(x, "fill"))
    x.fill(3)
    assert_array_equal(x, np.full(6, 3))
    c = x.copy()
    c.fill(1)
    assert_array_equal(x, np.full(6, 3))
    with pytest.raises(AttributeError):
        x.no_such_method
    assert x.lloc[0:0].shape == (0,)


_SHORTCUT_TYPES = [
    np.bool_,
    np.uint8,
    np.int8,
    np.int16,
    np.int32,
    np.int64,
    np.float16,
    np.float32,
    np.float64,
    np.complex64,
    np.complex128,
]


@pytest.mark.parametrize("dtype", _SHORTCUT_TYPES)
def test_operator_shortcuts_match_numpy(dtype):
    # same-type, same-layout operands and Python scalars take the operators' shortcut; the
    # results (values and dtypes) must equal NumPy's and the general path's
    a = random_array((5, 3), dtype, seed=11)
    b = random_array((5, 3), dtype, seed=12)
    for split in splits_for(2):
        x, y = ht.array(a, split=split), ht.array(b, split=split)
        if dtype is not np.bool_:
            assert_array_equal(x - y, a - b)
        assert_array_equal(x + y, a + b)
        assert_array_equal(x * y, a * b)
        assert_array_equal(x == y, a == b)
        assert_array_equal(x != y, a != b)
        for scalar in (2.5, 3, -1e300, 2**40):
            if dtype is np.bool_ or (
                np.issubdtype(dtype, np.integer)
                and type(scalar) is int
                and not np.can_cast(np.min_scalar_type(scalar), dtype)
            ):
                continue
            if np.issubdtype(dtype, np.integer) and type(scalar) is float:
                continue  # promotes to float64: the general path, tested elsewhere
            if np.issubdtype(dtype, np.complexfloating) and abs(scalar) > 1e30:
                continue  # complex overflow: torch and NumPy disagree on the imaginary part
            with np.errstate(over="ignore", invalid="ignore"):
                expected = [a + scalar, scalar + a, a * scalar, scalar * a, a > scalar, a <= scalar]
                if np.issubdtype(dtype, np.inexact):
                    expected.append(a / scalar)
            results = [x + scalar, scalar + x, x * scalar, scalar * x, x > scalar, x <= scalar]
            if np.issubdtype(dtype, np.inexact):
                results.append(x / scalar)
            for result, wanted in zip(results, expected):
                assert_array_equal(result, wanted)
        if not np.issubdtype(dtype, np.complexfloating):
            assert_array_equal(x < y, a < b)
            assert_array_equal(x <= y, a <= b)
            assert_array_equal(x > y, a > b)
            assert_array_equal(x >= y, a >= b)


def test_operator_shortcuts_fall_back():
    a = random_array((6, 4), np.float32, seed=2)
    # bool - bool is an error, raised on every rank
    flags = ht.array(a > 0.5, split=0)
    assert_raises_then_collective_works(TypeError, lambda: flags - flags)
    # complex comparisons are lexicographic (heat's rule), not torch's
    c = ht.array(np.array([1 + 2j, 1 + 1j, 0 + 5j]), split=0)
    d = ht.array(np.array([1 + 1j, 1 + 1j, 1 + 0j]), split=0)
    assert_array_equal(c > d, np.array([True, False, False]))
    # operands of different layouts, types or splits still work
    x = ht.array(a, split=0)
    for other in (
        ht.array(a, split=1),
        ht.array(a, split=None),
        ht.array(a.astype(np.float64), split=0),
        ht.array(a[:1], split=0),
        ht.redistribute(ht.array(a, split=0), [6] + [0] * (x.comm.size - 1)),
    ):
        assert_array_equal(x + other, a + other.numpy())
        assert_array_equal(x > other, a > other.numpy())
    # an unbalanced operand of the same shape must not take the shortcut
    skewed = ht.redistribute(ht.array(a, split=0), [6] + [0] * (x.comm.size - 1))
    assert_array_equal(skewed * skewed, a * a)
    # integer arrays with float scalars promote as NumPy does
    i = ht.array(np.arange(5, dtype=np.int32), split=0)
    assert_array_equal(i * 2.5, np.arange(5, dtype=np.int32) * 2.5)
    assert_array_equal(i / 2, np.arange(5, dtype=np.int32) / 2)
    with pytest.raises(OverflowError):
        ht.array(np.arange(3, dtype=np.int8), split=0) + 1000
    # a Python int beyond int64 goes through the general path
    big = ht.array(np.ones(3), split=0)
    assert_array_equal(big * 2**70, np.ones(3) * 2**70)


def test_methods_are_class_attributes():
    # x.sum() is ht.sum(x), looked up on the class (no per-call wrapper object)
    x = ht.arange(6, split=0)
    assert ht.DNDarray.sum is ht.sum
    assert x.sum().item() == 15
    assert "reshape" in dir(x)
    assert x.reshape((2, 3)).shape == (2, 3)
