"""
NumPy's and PyTorch's functions on DNDarrays (``__array_ufunc__``, ``__array_function__``,
``__torch_function__``): each call is heat's function of the same name, returns a DNDarray of the
expected layout without gathering it (a spy forbids ``numpy()``/``__array__`` during the call),
and gives NumPy's values on every split, several dtypes and uneven shapes. Functions heat lacks
raise TypeError on every rank; ``np.asarray(x)`` keeps giving the global NumPy array.
"""

from __future__ import annotations

import contextlib

import numpy as np
import pytest
import torch

import heat as ht
from tests.helpers import (
    assert_array_equal,
    assert_raises_then_collective_works,
    collective_assert,
    random_array,
)

LAYOUTS = (((7, 5), None), ((7, 5), 0), ((7, 5), 1), ((7, 5), -1), ((2, 3), 0))
DTYPES = (np.float32, np.float64, np.int64)


@contextlib.contextmanager
def no_gather():
    """Fail if anything converts a DNDarray to NumPy (the whole global array) meanwhile."""

    def forbidden(self, *args, **kwargs):
        raise AssertionError("a DNDarray was gathered into a NumPy array")

    saved = ht.DNDarray.numpy, ht.DNDarray.__array__
    ht.DNDarray.numpy = ht.DNDarray.__array__ = forbidden
    try:
        yield
    finally:
        ht.DNDarray.numpy, ht.DNDarray.__array__ = saved


def _call(function, *args, **kwargs):
    with no_gather():
        return function(*args, **kwargs)


def _check(result, expected, split="any", rtol=1e-5):
    collective_assert(
        isinstance(result, ht.DNDarray), f"got {type(result).__name__}, not a DNDarray"
    )
    if split != "any":
        collective_assert(result.split == split, f"split {result.split} != {split}")
    assert_array_equal(result, expected, rtol=rtol, atol=1e-6)


def _layouts(dtype):
    """Three of the layouts per dtype, rotated so every layout meets several dtypes (the full
    product makes the folder slow at 4 processes)."""
    start = DTYPES.index(dtype) if dtype in DTYPES else 0
    return [LAYOUTS[(start * 2 + k) % len(LAYOUTS)] for k in range(3)]


def _values(shape, dtype, seed):
    low, high = (1, 6) if np.dtype(dtype).kind == "i" else (0.5, 4)
    return random_array(shape, dtype, seed=seed, low=low, high=high)


# ---------------------------------------------------------------------------------------------
# ufuncs
# ---------------------------------------------------------------------------------------------
UNARY_UFUNCS = (
    np.sqrt,
    np.exp,
    np.negative,
    np.absolute,
    np.sin,
    np.floor,
    np.isnan,
    np.square,
    np.log1p,
    np.sign,
    np.conjugate,
)
BINARY_UFUNCS = (
    np.add,
    np.subtract,
    np.multiply,
    np.divide,
    np.floor_divide,
    np.power,
    np.maximum,
    np.minimum,
    np.equal,
    np.less,
    np.remainder,
    np.arctan2,
    np.hypot,
)


@pytest.mark.parametrize("dtype", DTYPES)
def test_unary_ufuncs(dtype):
    for shape, split in _layouts(dtype):
        a = _values(shape, dtype, seed=0)
        x = ht.array(a, split=split)
        for ufunc in UNARY_UFUNCS:
            _check(_call(ufunc, x), ufunc(a), split=x.split)


@pytest.mark.parametrize("dtype", DTYPES)
def test_binary_ufuncs(dtype):
    # each ufunc on two layouts per dtype, the layouts rotated over the ufuncs
    for i, ufunc in enumerate(BINARY_UFUNCS):
        if ufunc in (np.arctan2, np.hypot) and np.dtype(dtype).kind == "i":
            continue
        for shape, split in (LAYOUTS[i % len(LAYOUTS)], LAYOUTS[(i + 2) % len(LAYOUTS)]):
            a, b = _values(shape, dtype, seed=1), _values(shape, dtype, seed=2)
            x = ht.array(a, split=split)
            _check(_call(ufunc, x, ht.array(b, split=split)), ufunc(a, b), split=x.split)
            # the other operand split along another axis is aligned, not gathered
            _check(_call(ufunc, x, ht.array(b, split=0)), ufunc(a, b))
            _check(_call(ufunc, x, 3), ufunc(a, 3), split=x.split)
            _check(_call(ufunc, 2, x), ufunc(2, a), split=x.split)
            row = b[-1]
            _check(_call(ufunc, row, x), ufunc(row, a), split=x.split)


def test_ufunc_through_numpy_operands_and_operators():
    a = _values((7, 5), np.float64, seed=3)
    x = ht.array(a, split=0)
    # a NumPy array or scalar on the left of an operator gives the DNDarray's result, as before
    _check(_call(lambda: a[0] + x), a[0] + a, split=0)
    _check(_call(lambda: np.float32(2) * x), np.float32(2) * a, split=0)
    _check(_call(lambda: np.float64(2) - x), 2.0 - a, split=0)
    _check(_call(lambda: torch.ones(5, dtype=torch.float64) + x), 1 + a, split=0)
    # writing a distributed result into a NumPy array is refused
    z = np.zeros((7, 5))
    with pytest.raises(TypeError):
        z += x
    assert_raises_then_collective_works(TypeError, np.add, x, 1, out=np.zeros((7, 5)))


@pytest.mark.parametrize("split", [None, 0, 1])
def test_ufunc_out_and_where(split):
    a, b = _values((7, 5), np.float32, seed=4), _values((7, 5), np.float32, seed=5)
    x, y = ht.array(a, split=split), ht.array(b, split=split)
    out = ht.zeros((7, 5), split=0)
    result = _call(np.multiply, x, y, out=out)
    collective_assert(result is out and out.split == 0)
    assert_array_equal(out, a * b)
    mask = a > 2
    out = ht.full((7, 5), -1.0, split=split)
    result = _call(np.add, x, y, out=out, where=ht.array(mask, split=split))
    collective_assert(result is out)
    expected = np.full((7, 5), -1.0, dtype=np.float32)
    np.add(a, b, out=expected, where=mask)
    assert_array_equal(out, expected)
    # np.sqrt(x, out=x) is in place
    x = ht.array(a, split=split)
    collective_assert(_call(np.sqrt, x, out=x) is x)
    assert_array_equal(x, np.sqrt(a))
    # two outputs
    q, r = ht.zeros((7, 5), split=split), ht.zeros((7, 5), split=split)
    results = _call(np.divmod, ht.array(a, split=split), 2, out=(q, r))
    collective_assert(results[0] is q and results[1] is r)
    assert_array_equal(q, np.floor_divide(a, 2))
    assert_array_equal(r, np.remainder(a, 2))
    # a keyword heat's functions do not take
    assert_raises_then_collective_works(TypeError, np.add, x, y, dtype=np.float64)
    assert_raises_then_collective_works(TypeError, np.add, x, y, casting="unsafe")
    # the result must fit out's dtype ('same_kind')
    assert_raises_then_collective_works(
        TypeError, np.add, x, 1.5, out=ht.zeros((7, 5), dtype=ht.int64)
    )


@pytest.mark.parametrize("dtype", DTYPES)
def test_ufunc_reduce_and_accumulate(dtype):
    for shape, split in _layouts(dtype):
        a = _values(shape, dtype, seed=6)
        x = ht.array(a, split=split)
        for ufunc in (np.add, np.multiply, np.maximum, np.minimum):
            _check(_call(ufunc.reduce, x), ufunc.reduce(a), rtol=1e-4)
            _check(
                _call(ufunc.reduce, x, axis=1, keepdims=True),
                ufunc.reduce(a, axis=1, keepdims=True),
                rtol=1e-4,
            )
            _check(_call(ufunc.reduce, x, axis=None), ufunc.reduce(a, axis=None), rtol=1e-4)
        for ufunc in (np.add, np.multiply):
            _check(_call(ufunc.accumulate, x), ufunc.accumulate(a), split=x.split, rtol=1e-4)
            _check(
                _call(ufunc.accumulate, x, axis=1),
                ufunc.accumulate(a, axis=1),
                split=x.split,
                rtol=1e-4,
            )
        mask = a > 2
        m = ht.array(mask, split=split)
        _check(_call(np.logical_and.reduce, m, axis=0), np.logical_and.reduce(mask, axis=0))
        _check(_call(np.logical_or.reduce, m, axis=1), np.logical_or.reduce(mask, axis=1))


def test_ufunc_methods_heat_lacks_raise():
    x = ht.arange(6.0, split=0)
    assert_raises_then_collective_works(TypeError, np.add.outer, x, x)
    assert_raises_then_collective_works(TypeError, np.add.at, x, [0, 1], 1)
    assert_raises_then_collective_works(TypeError, np.add.reduceat, x, [0, 2])
    assert_raises_then_collective_works(TypeError, np.subtract.reduce, x)
    assert_raises_then_collective_works(TypeError, np.add.reduce, x, initial=1.0)
    assert_raises_then_collective_works(TypeError, np.spacing, x)


# ---------------------------------------------------------------------------------------------
# other NumPy functions
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
def test_array_functions(dtype):
    for shape, split in _layouts(dtype):
        a, b = _values(shape, dtype, seed=7), _values(shape, dtype, seed=8)
        x, y = ht.array(a, split=split), ht.array(b, split=split)
        _check(_call(np.mean, x), np.mean(a))
        _check(_call(np.mean, x, axis=0), np.mean(a, axis=0))
        _check(_call(np.sum, x, axis=0), np.sum(a, axis=0))
        _check(_call(np.sum, x, axis=1, keepdims=True), np.sum(a, axis=1, keepdims=True))
        _check(_call(np.std, x, axis=1, ddof=1), np.std(a, axis=1, ddof=1), rtol=1e-4)
        _check(_call(np.max, x, axis=1), np.max(a, axis=1))
        _check(_call(np.cumsum, x, axis=0), np.cumsum(a, axis=0), split=x.split)
        _check(_call(np.concatenate, [x, y]), np.concatenate([a, b]), split=x.split)
        _check(_call(np.concatenate, [x, y], axis=1), np.concatenate([a, b], axis=1), split=x.split)
        _check(_call(np.stack, [x, y], axis=1), np.stack([a, b], axis=1))
        _check(_call(np.transpose, x), np.transpose(a))
        _check(_call(np.reshape, x, (-1,)), np.reshape(a, (-1,)))
        _check(_call(np.clip, x, 2, 3), np.clip(a, 2, 3), split=x.split)
        _check(_call(np.where, x > 2, x, y), np.where(a > 2, a, b))
        _check(_call(np.flip, x, 0), np.flip(a, 0), split=x.split)
        _check(_call(np.diff, x, axis=0), np.diff(a, axis=0), split=x.split)
        _check(_call(np.isclose, x, y), np.isclose(a, b), split=x.split)
        _check(_call(np.expand_dims, x, 0), np.expand_dims(a, 0))
        same = _call(np.allclose, x, ht.array(a, split=0))
        collective_assert(bool(same) is True)
        collective_assert(_call(np.array_equal, x, y) == np.array_equal(a, b))
        collective_assert(_call(np.shape, x) == a.shape and _call(np.ndim, x) == a.ndim)
        collective_assert(_call(np.size, x) == a.size and _call(np.size, x, 1) == a.shape[1])


def test_array_functions_of_submodules():
    a = _values((8, 4), np.float64, seed=9)
    for split in (None, 0, 1):
        x = ht.array(a, split=split)
        _check(_call(np.linalg.norm, x), np.linalg.norm(a))
        _check(_call(np.fft.fft, x, axis=0), np.fft.fft(a, axis=0), split=x.split)


def test_array_functions_heat_lacks_raise():
    x = ht.arange(6.0, split=0)
    for function, args in (
        (np.lexsort, ((x, x),)),
        (np.packbits, (x,)),
        (np.unwrap, (x,)),
        (np.apply_along_axis, (np.sum, 0, x)),
        (np.linalg.cond, (ht.eye(3, split=0),)),
    ):
        with no_gather():
            assert_raises_then_collective_works(TypeError, function, *args)


def test_np_linalg_dispatches_to_heat_linalg():
    # np.linalg.slogdet and eigvals once were names heat lacked; now they reach ht.linalg's
    a = np.diag([2.0, -3.0, 0.5])
    for split in (None, 0, 1):
        sign, logabsdet = np.linalg.slogdet(ht.array(a, split=split))
        expected_sign, expected_log = np.linalg.slogdet(a)
        collective_assert(isinstance(sign, ht.DNDarray) and isinstance(logabsdet, ht.DNDarray))
        np.testing.assert_allclose(sign.item(), expected_sign)
        np.testing.assert_allclose(logabsdet.item(), expected_log, rtol=1e-12)


def test_asarray_still_gives_the_global_array():
    for split in (None, 0, 1):
        a = _values((7, 5), np.float32, seed=10)
        x = ht.array(a, split=split)
        g = np.asarray(x)
        collective_assert(type(g) is np.ndarray and g.shape == a.shape)
        np.testing.assert_array_equal(g, a)
        np.testing.assert_allclose(x, a)
        collective_assert(type(np.array(x)) is np.ndarray)


# ---------------------------------------------------------------------------------------------
# torch
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_torch_functions(dtype):
    for shape, split in LAYOUTS:
        a, b = _values(shape, dtype, seed=11), _values(shape, dtype, seed=12)
        x, y = ht.array(a, split=split), ht.array(b, split=split)
        _check(_call(torch.add, x, y), a + b, split=x.split)
        _check(_call(torch.add, x, 2), a + 2, split=x.split)
        _check(_call(torch.mul, x, y), a * b, split=x.split)
        _check(_call(torch.sub, input=x, other=y), a - b, split=x.split)
        _check(_call(torch.div, x, y), a / b, split=x.split)
        _check(_call(torch.exp, x), np.exp(a), split=x.split)
        _check(_call(torch.sqrt, x), np.sqrt(a), split=x.split)
        _check(_call(torch.sum, x), np.sum(a), rtol=1e-4)
        _check(
            _call(torch.sum, x, dim=0, keepdim=True), np.sum(a, axis=0, keepdims=True), rtol=1e-4
        )
        _check(_call(torch.mean, x, 1), np.mean(a, axis=1))
        _check(_call(torch.cat, [x, y], dim=1), np.concatenate([a, b], axis=1), split=x.split)
        _check(_call(torch.clamp, x, min=1.0, max=2.0), np.clip(a, 1.0, 2.0), split=x.split)
        _check(_call(torch.maximum, x, y), np.maximum(a, b), split=x.split)
        _check(_call(torch.unsqueeze, x, 0), a[None])
        _check(_call(torch.eq, x, y), a == b, split=x.split)
        _check(_call(torch.matmul, x, ht.array(b.T, split=0)), a @ b.T, rtol=1e-4)
        # a tensor method with a DNDarray argument
        t = torch.from_numpy(b[-1].copy())
        _check(_call(t.add, x), b[-1] + a, split=x.split)


def test_torch_functions_heat_lacks_or_means_differently_raise():
    x = ht.arange(6.0, split=0)
    # torch.std is unbiased, torch.sort returns indices too, torch.max(x, dim) too
    for function, args in (
        (torch.std, (x,)),
        (torch.sort, (x,)),
        (torch.max, (x, 0)),
        (torch.logdet, (ht.eye(3),)),
        (torch.add_, (x, 1)) if hasattr(torch, "add_") else (torch.logdet, (ht.eye(3),)),
    ):
        with no_gather():
            assert_raises_then_collective_works(TypeError, function, *args)


# ---------------------------------------------------------------------------------------------
# HeAT's names for NumPy's functions (scripts ported from HeAT call them)
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
def test_heat_aliases(dtype):
    for shape, split in _layouts(dtype):
        a, b = _values(shape, dtype, seed=13), _values(shape, dtype, seed=14)
        x, y = ht.array(a, split=split), ht.array(b, split=0)
        _check(ht.div(x, y), np.divide(a, b))
        _check(ht.mul(x, y), np.multiply(a, b))
        _check(ht.sub(x, 2), np.subtract(a, 2), split=x.split)
        _check(ht.floordiv(x, y), np.floor_divide(a, b))
        _check(ht.cumproduct(x, 1), np.cumprod(a, 1), split=x.split, rtol=1e-4)
        q, r = ht.divmod(x, y)
        eq, er = np.divmod(a, b)
        _check(q, eq)
        _check(r, er)
        q, r = ht.zeros(shape, dtype=x.dtype, split=split), ht.zeros(shape, dtype=x.dtype, split=0)
        results = ht.divmod(x, 3, q, r)
        collective_assert(results[0] is q and results[1] is r)
        _check(q, np.floor_divide(a, 3))
        _check(r, np.remainder(a, 3))
        results = ht.divmod(x, 3, out=(None, r))
        collective_assert(results[1] is r)
        copied = ht.copy(x)
        collective_assert(copied is not x and copied.split == x.split and copied.dtype is x.dtype)
        copied.larray.zero_()
        _check(x, a, split=x.split)
        collective_assert(ht.shape(x) == a.shape and ht.shape(a.tolist()) == a.shape)
    with pytest.raises(ValueError):
        ht.divmod(x, 3, q, r, out=(q, r))
    with pytest.raises(TypeError):
        ht.divmod(x, 3, out=q)
    with pytest.raises(TypeError):
        ht.copy(a)


def test_iscomplex_isreal():
    values = np.array([[1 + 1j, 1 + 0j, 4.5, 3], [2, 2j, -0.0j, np.nan], [1, 2, 3, 4.0j]])
    for dtype in (np.complex64, np.complex128, np.float32, np.int64):
        a = (
            values.astype(dtype)
            if np.dtype(dtype).kind == "c"
            else values.real.astype(dtype)
            if dtype is not np.int64
            else np.arange(12).reshape(3, 4)
        )
        for split in (None, 0, 1):
            x = ht.array(a, split=split)
            _check(ht.iscomplex(x), np.iscomplex(a), split=x.split)
            _check(ht.isreal(x), np.isreal(a), split=x.split)
    assert_raises_then_collective_works(TypeError, ht.iscomplex, [1j])


def test_broadcast_shape():
    for a, b in (((5, 4), (4,)), ((1, 100, 1), (10, 1, 5)), ((), (3,)), ((2, 1), (1, 0))):
        collective_assert(ht.broadcast_shape(a, b) == np.broadcast_shapes(a, b))
    with pytest.raises(ValueError):
        ht.broadcast_shape((2, 3), (4,))
    with pytest.raises(TypeError):
        ht.broadcast_shape((2, 3), "a")
