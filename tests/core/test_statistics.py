"""Tests of heat/core/statistics.py; the oracle is NumPy (scipy.stats for skew and kurtosis)."""

import numpy as np
import pytest
import scipy.stats

import heat as ht
from tests.helpers import (
    DTYPES,
    REDUCTION_CASES,
    REDUCTION_IDS,
    SHORT_CASES,
    SHORT_IDS,
    assert_array_equal,
    assert_arrays_equal,
    assert_raises_then_collective_works,
    axes_for,
    collective_assert,
    quiet,
    random_array,
    rotate,
)


# ---------------------------------------------------------------------------------------------
# extrema
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("shape,split", REDUCTION_CASES, ids=REDUCTION_IDS)
def test_max_min(shape, split):
    dtypes = DTYPES + (bool,)
    for i, axis in enumerate(axes_for(len(shape), split)):
        dtype = rotate(dtypes, i + len(shape) + (split or 0))
        data = random_array(shape, dtype, seed=i)
        x = ht.array(data, split=split)
        keepdims = i % 2 == 1
        assert_array_equal(
            ht.max(x, axis=axis, keepdims=keepdims), np.max(data, axis=axis, keepdims=keepdims)
        )
        assert_array_equal(
            ht.min(x, axis=axis, keepdims=keepdims), np.min(data, axis=axis, keepdims=keepdims)
        )


@pytest.mark.parametrize("dtype", DTYPES + (bool,))
def test_max_min_dtypes(dtype):
    data = random_array((5, 6), dtype, seed=3)
    for split in (None, 0):
        x = ht.array(data, split=split)
        assert_array_equal(ht.amax(x, axis=0), np.amax(data, axis=0))
        assert_array_equal(ht.amin(x), np.amin(data))
    x = ht.array(data, split=1)
    assert_array_equal(x.max(axis=1), data.max(axis=1))
    assert_array_equal(x.min(axis=(0, 1), keepdims=True), data.min(axis=(0, 1), keepdims=True))


def test_max_min_nan():
    data = random_array((5, 6), np.float64, seed=4)
    data[1, 2] = data[4, 0] = data[3, 3] = np.nan
    data[:, 5] = np.nan  # an all-NaN column
    for split, axis in ((None, 0), (0, None), (0, 0), (0, 1), (1, 0), (1, 1)):
        x = ht.array(data, split=split)
        assert_array_equal(ht.max(x, axis=axis), np.max(data, axis=axis))
        assert_array_equal(ht.min(x, axis=axis), np.min(data, axis=axis))
        assert_array_equal(ht.nanmax(x, axis=axis), quiet(np.nanmax, data, axis=axis))
        assert_array_equal(ht.nanmin(x, axis=axis), quiet(np.nanmin, data, axis=axis))
    # infinities and signed zeros keep their order
    special = np.array([0.0, -np.inf, 5.0, -0.0, np.inf, -3.5, 1e-300], dtype=np.float32)
    x = ht.array(special, split=0)
    assert_array_equal(ht.max(x), np.max(special))
    assert_array_equal(ht.min(x), np.min(special))
    assert_array_equal(ht.nanmin(x), np.nanmin(special))
    ints = random_array((7,), np.int32, seed=1)
    assert_array_equal(ht.nanmax(ht.array(ints, split=0)), np.nanmax(ints))


def test_max_min_empty_blocks_give_scalars():
    """(2,) at 3 or 4 processes: some processes hold nothing; the result is 0-d, not (1,)."""
    data = np.array([3.0, -1.0])
    x = ht.array(data, split=0)
    for ht_f, np_f in (
        (ht.max, np.max),
        (ht.min, np.min),
        (ht.mean, np.mean),
        (ht.var, np.var),
        (ht.std, np.std),
        (ht.median, np.median),
        (ht.ptp, np.ptp),
        (ht.argmax, np.argmax),
        (ht.argmin, np.argmin),
        (ht.nanmean, np.nanmean),
    ):
        result = ht_f(x)
        assert result.shape == ()
        assert_array_equal(result, np_f(data))
    assert_array_equal(ht.percentile(x, [10, 90]), np.percentile(data, [10, 90]))
    empty_rows = ht.array(np.zeros((0, 3), dtype=np.float32), split=0)
    assert_array_equal(ht.max(empty_rows, axis=1), np.zeros((0,), dtype=np.float32))
    assert_array_equal(ht.mean(empty_rows, axis=1), np.zeros((0,), dtype=np.float32))


def test_ptp():
    for i, (shape, split) in enumerate((((7,), 0), ((5, 6), 1), ((3, 4, 5), 0), ((2, 3), 0))):
        dtype = rotate(DTYPES, i)
        data = random_array(shape, dtype, seed=5)
        x = ht.array(data, split=split)
        assert_array_equal(ht.ptp(x), np.ptp(data))
        assert_array_equal(ht.ptp(x, axis=-1, keepdims=True), np.ptp(data, axis=-1, keepdims=True))
    wrap = np.array([-128, 127, 0], dtype=np.int8)
    assert_array_equal(ht.ptp(ht.array(wrap, split=0)), np.ptp(wrap))


@pytest.mark.parametrize("split1,split2", [(None, None), (0, 0), (None, 1), (1, 0)])
def test_maximum_minimum_fmax_fmin(split1, split2):
    a = random_array((5, 6), np.float32, seed=6)
    b = random_array((5, 6), np.float64, seed=7)
    a[0, 0] = b[1, 1] = a[2, 3] = b[2, 3] = np.nan
    x, y = ht.array(a, split=split1), ht.array(b, split=split2)
    assert_array_equal(ht.maximum(x, y), np.maximum(a, b))
    assert_array_equal(ht.minimum(x, y), np.minimum(a, b))
    assert_array_equal(ht.fmax(x, y), np.fmax(a, b))
    assert_array_equal(ht.fmin(x, y), np.fmin(a, b))
    row = random_array((6,), np.int32, seed=8)
    assert_array_equal(ht.maximum(x, ht.array(row)), np.maximum(a, row))
    ints = random_array((5, 6), np.int64, seed=9)
    assert_array_equal(ht.minimum(ht.array(ints, split=split1), 2), np.minimum(ints, 2))
    flags = random_array((5, 6), bool, seed=10)
    assert_array_equal(
        ht.maximum(ht.array(flags, split=split2), ht.array(flags)), np.maximum(flags, flags)
    )
    out = ht.zeros((5, 6), dtype=ht.float64, split=split2)
    ht.maximum(x, y, out=out)
    assert_array_equal(out, np.maximum(a, b))


def _complex_special(shape, dtype, seed):
    """Complex values built from 0, -0, +-1, 2, NaN and +-inf in either part (many ties)."""
    rng = np.random.default_rng(seed)
    parts = np.array([0.0, -0.0, 1.0, -1.0, 2.0, np.nan, np.inf, -np.inf])
    values = np.empty(shape, dtype)
    values.real = rng.choice(parts, shape)
    values.imag = rng.choice(parts, shape)
    return values


@pytest.mark.parametrize("split1,split2", [(None, None), (0, 0), (None, 1), (1, 0), (-1, None)])
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_maximum_minimum_fmax_fmin_complex(split1, split2, dtype):
    # NumPy orders complex values lexicographically; maximum/minimum return the first NaN
    # operand, fmax/fmin the other one (a value is NaN if either part is)
    a, b = _complex_special((7, 5), dtype, 12), _complex_special((7, 5), dtype, 13)
    x, y = ht.array(a, split=split1), ht.array(b, split=split2)
    real = random_array((5,), np.float32, seed=14)
    pairs = []
    for name in ("maximum", "minimum", "fmax", "fmin"):
        heat_function, numpy_function = getattr(ht, name), getattr(np, name)
        for heat_args, numpy_args in (
            ((x, y), (a, b)),
            ((y, x), (b, a)),
            ((x, ht.array(real)), (a, real)),  # a real operand, broadcast
            ((x, 1 + 0j), (a, 1 + 0j)),  # a Python scalar
            ((2.0, y), (2.0, b)),
        ):
            expected = numpy_function(*numpy_args)
            result = heat_function(*heat_args)
            collective_assert(result.dtype is ht.types.canonical_heat_type(expected.dtype))
            pairs += [(ht.real(result), expected.real), (ht.imag(result), expected.imag)]
        out = ht.zeros((7, 5), dtype=ht.complex128, split=split2)
        heat_function(x, y, out=out)
        expected = numpy_function(a, b).astype(np.complex128)
        pairs += [(ht.real(out), expected.real), (ht.imag(out), expected.imag)]
    assert_arrays_equal(pairs)


# ---------------------------------------------------------------------------------------------
# arg-extrema
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("shape,split", REDUCTION_CASES, ids=REDUCTION_IDS)
def test_argmax_argmin(shape, split):
    axes = [None] + list(range(len(shape))) + [-1]
    for i, axis in enumerate(axes):
        dtype = rotate(DTYPES, i + (split or 0))
        # few distinct values: ties inside and across process blocks
        data = random_array(shape, dtype, seed=i, low=0, high=3)
        x = ht.array(data, split=split)
        keepdims = i % 3 == 2
        assert_array_equal(
            ht.argmax(x, axis=axis, keepdims=keepdims),
            np.argmax(data, axis=axis, keepdims=keepdims),
        )
        assert_array_equal(
            ht.argmin(x, axis=axis, keepdims=keepdims),
            np.argmin(data, axis=axis, keepdims=keepdims),
        )


@pytest.mark.parametrize("axis", [1, 2, 0, None])
def test_argmin_3d_split0(axis):
    """HeAT 1.8 aborted the job on these at 3 processes."""
    data = random_array((3, 4, 5), np.float64, seed=11)
    x = ht.array(data, split=0)
    assert_array_equal(ht.argmin(x, axis=axis), np.argmin(data, axis=axis))
    assert_array_equal(ht.argmax(x, axis=axis), np.argmax(data, axis=axis))


def test_argmax_nan_and_nanarg():
    data = random_array((5, 6), np.float32, seed=12)
    data[3, 1] = data[1, 4] = data[4, 4] = np.nan
    for split, axis in ((None, 1), (0, None), (0, 0), (0, 1), (1, None), (1, 0)):
        x = ht.array(data, split=split)
        assert_array_equal(ht.argmax(x, axis=axis), np.argmax(data, axis=axis))
        assert_array_equal(ht.argmin(x, axis=axis), np.argmin(data, axis=axis))
        assert_array_equal(ht.nanargmax(x, axis=axis), np.nanargmax(data, axis=axis))
        assert_array_equal(
            ht.nanargmin(x, axis=axis, keepdims=True), np.nanargmin(data, axis=axis, keepdims=True)
        )
    bools = random_array((7,), bool, seed=13)
    assert_array_equal(ht.argmax(ht.array(bools, split=0)), np.argmax(bools))
    all_nan = data.copy()
    all_nan[:, 2] = np.nan
    for split in (0, 1):
        assert_raises_then_collective_works(
            ValueError, ht.nanargmax, ht.array(all_nan, split=split), axis=0
        )
    assert_raises_then_collective_works(
        ValueError, ht.nanargmin, ht.array(np.full(7, np.nan), split=0)
    )


def test_argmax_out_and_errors():
    data = random_array((5, 6), np.int64, seed=14)
    x = ht.array(data, split=0)
    out = ht.zeros((6,), dtype=ht.int64, split=0)
    ht.argmax(x, axis=0, out=out)
    assert_array_equal(out, np.argmax(data, axis=0))
    assert_raises_then_collective_works(ValueError, ht.argmax, x, axis=2)
    assert_raises_then_collective_works(TypeError, ht.argmin, x, axis=(0, 1))
    assert_raises_then_collective_works(
        ValueError, ht.argmax, ht.array(np.zeros((0, 3)), split=0), axis=0
    )
    assert_raises_then_collective_works(ValueError, ht.argmax, ht.zeros((0,), split=0))


def _ties_nans_zeros(shape, dtype, seed):
    """Few distinct values (ties within and across blocks); floats also get NaN and -0.0."""
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "b":
        return rng.integers(0, 2, size=shape).astype(bool)
    data = rng.integers(-1, 2, size=shape).astype(dtype)
    if np.dtype(dtype).kind == "f":
        data[rng.random(shape) < 0.2] = -0.0  # ties with 0.0: the first of them wins
        data[rng.random(shape) < 0.002] = np.nan
    return data


# runs of >= 64 elements take NumPy's kernel on CPU (uneven blocks at 2-4 processes, and fewer
# rows than processes for (2, 3, 100)); float16 and bfloat16 take torch's
ARG_KERNEL_SHAPES = ((301,), (3, 150), (130, 70), (2, 3, 100))
ARG_KERNEL_TYPES = (
    np.float32,
    np.float64,
    np.int64,
    np.int32,
    np.int16,
    np.int8,
    np.uint8,
    bool,
    np.float16,
)


@pytest.mark.parametrize("shape", ARG_KERNEL_SHAPES, ids=str)
def test_argmax_argmin_max_min_long_runs(shape):
    pairs = []
    for d, dtype in enumerate(ARG_KERNEL_TYPES):
        data = _ties_nans_zeros(shape, dtype, seed=d)
        for split in [None] + list(range(len(shape))):
            x = ht.array(data, split=split)
            for i, axis in enumerate([None] + list(range(len(shape))) + [-1]):
                keepdims = (i + d) % 2 == 1
                for heat_function, numpy_function in (
                    (ht.argmax, np.argmax),
                    (ht.argmin, np.argmin),
                    (ht.max, np.max),
                    (ht.min, np.min),
                ):
                    pairs.append(
                        (
                            heat_function(x, axis=axis, keepdims=keepdims),
                            numpy_function(data, axis=axis, keepdims=keepdims),
                        )
                    )
    assert_arrays_equal(pairs)


def test_argmax_argmin_signed_zero_nan_and_layouts():
    pairs = []
    # -0.0 and 0.0 tie: the first one wins, also when they lie on different processes
    zeros = np.array([-0.0, 0.0] * 40 + [0.0, -0.0] * 40, dtype=np.float32)
    for data in (zeros, zeros[::-1].copy(), np.concatenate([zeros[:80], [np.nan], zeros[80:]])):
        for split in (None, 0):
            x = ht.array(data, split=split)
            for heat_function, numpy_function in (
                (ht.argmax, np.argmax),
                (ht.argmin, np.argmin),
                (ht.nanargmax, np.nanargmax),
                (ht.nanargmin, np.nanargmin),
            ):
                pairs.append((heat_function(x), numpy_function(data)))
    # NaN at the last position of a block and in the middle: the first NaN is the extremum
    data = random_array((4, 97), np.float64, seed=21)
    data[1, 96] = data[2, 5] = data[3, 50] = np.nan
    for split in (None, 0, 1):
        x = ht.array(data, split=split)
        for axis in (None, 0, 1):
            pairs.append((ht.argmax(x, axis=axis), np.argmax(data, axis=axis)))
            pairs.append((ht.argmin(x, axis=axis), np.argmin(data, axis=axis)))
            pairs.append((ht.max(x, axis=axis), np.max(data, axis=axis)))
    # a non-contiguous local block (torch's kernel), bfloat16 (NumPy has none; small integers
    # are exact in it) and out=
    data = random_array((70, 90), np.float32, seed=22, low=0, high=4).round()
    for split in (None, 0, 1):
        x = ht.array(data, split=split)
        pairs.append((ht.argmax(x.T, axis=1), np.argmax(data.T, axis=1)))
        pairs.append((ht.argmin(x.T), np.argmin(data.T)))
        half = x.astype(ht.bfloat16)
        for axis in (None, 0, 1):
            pairs.append((ht.argmax(half, axis=axis), np.argmax(data, axis=axis)))
            pairs.append((ht.argmin(half, axis=axis), np.argmin(data, axis=axis)))
        out = ht.zeros((70, 1), dtype=ht.int64, split=0 if split == 0 else None)
        ht.argmax(x, axis=1, keepdims=True, out=out)
        pairs.append((out, np.argmax(data, axis=1, keepdims=True)))
    assert_arrays_equal(pairs)


# ---------------------------------------------------------------------------------------------
# mean, var, std and their NaN variants
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("shape,split", REDUCTION_CASES, ids=REDUCTION_IDS)
def test_mean_var_std(shape, split):
    for i, axis in enumerate(axes_for(len(shape), split)):
        dtype = rotate(DTYPES, i + (split or 0))
        data = random_array(shape, dtype, seed=20 + i)
        x = ht.array(data, split=split)
        keepdims = i % 2 == 0
        ddof = i % 2
        assert_array_equal(
            ht.mean(x, axis=axis, keepdims=keepdims), np.mean(data, axis=axis, keepdims=keepdims)
        )
        assert_array_equal(
            ht.var(x, axis=axis, ddof=ddof, keepdims=keepdims),
            quiet(np.var, data, axis=axis, ddof=ddof, keepdims=keepdims),
        )
        if i % 2 == 1 or axis is None:
            assert_array_equal(
                ht.std(x, axis=axis, ddof=1 - ddof), quiet(np.std, data, axis=axis, ddof=1 - ddof)
            )


def test_var_std_regressions():
    """HeAT 1.8: wrong var on split=1 axis=0, NaN std with ddof=1 on split=0."""
    data = random_array((5, 6), np.float64, seed=21)
    assert_array_equal(ht.var(ht.array(data, split=1), axis=0), np.var(data, axis=0))
    assert_array_equal(
        ht.std(ht.array(data, split=0), axis=0, ddof=1), np.std(data, axis=0, ddof=1)
    )
    assert_array_equal(ht.std(ht.array(data, split=0), ddof=1), np.std(data, ddof=1))
    # a large offset: sum(x**2)/n - mean**2 would lose every digit
    shifted = 1e9 + random_array((7, 3), np.float64, seed=22)
    for split in (None, 0, 1):
        x = ht.array(shifted, split=split)
        assert_array_equal(ht.var(x, axis=0), np.var(shifted, axis=0), rtol=1e-7)
        assert_array_equal(ht.var(x), np.var(shifted), rtol=1e-7)


def test_mean_var_dtypes_and_out():
    for dtype in (np.int8, np.int16, bool, np.float16, np.complex64):
        data = random_array((5, 3), np.float64, seed=23).astype(dtype)
        x = ht.array(data, split=0)
        rtol = 1e-2 if dtype == np.float16 else 1e-5
        assert_array_equal(ht.mean(x, axis=0), np.mean(data, axis=0), rtol=rtol)
        if dtype is not bool:
            assert_array_equal(ht.var(x), np.var(data), rtol=rtol)
            assert_array_equal(ht.std(x, axis=1), np.std(data, axis=1), rtol=rtol)
    data = random_array((5, 6), np.float32, seed=24)
    x = ht.array(data, split=1)
    assert_array_equal(
        ht.mean(x, axis=0, dtype=ht.float64), np.mean(data, axis=0, dtype=np.float64)
    )
    assert_array_equal(x.mean(axis=(0, 1)), data.mean(axis=(0, 1)))
    assert_array_equal(ht.var(x, ddof=1.5), np.var(data, ddof=1.5))
    for split in (None, 0):
        out = ht.zeros((6,), split=split)
        ht.var(x, axis=0, out=out)
        assert_array_equal(out, np.var(data, axis=0))
        ht.mean(x, axis=0, out=out)
        assert_array_equal(out, np.mean(data, axis=0))
        ht.std(x, axis=0, out=out)
        assert_array_equal(out, np.std(data, axis=0))
    # ddof >= N gives inf/nan as NumPy
    assert_array_equal(
        ht.var(ht.array(data[:2], split=0), axis=0, ddof=2), quiet(np.var, data[:2], axis=0, ddof=2)
    )
    assert_array_equal(
        ht.var(ht.array(data[:1], split=0), axis=0, ddof=1), quiet(np.var, data[:1], axis=0, ddof=1)
    )


def test_nan_mean_var_std():
    data = random_array((5, 6), np.float64, seed=25)
    data[0, 0] = data[2, 3] = data[4, 3] = np.nan
    data[:, 4] = np.nan
    for split, axis in ((None, 0), (0, None), (0, 0), (0, 1), (1, None), (1, 0)):
        x = ht.array(data, split=split)
        assert_array_equal(ht.nanmean(x, axis=axis), quiet(np.nanmean, data, axis=axis))
        assert_array_equal(
            ht.nanvar(x, axis=axis, ddof=1), quiet(np.nanvar, data, axis=axis, ddof=1)
        )
        assert_array_equal(
            ht.nanstd(x, axis=axis, keepdims=True), quiet(np.nanstd, data, axis=axis, keepdims=True)
        )
    ints = random_array((7,), np.int32, seed=26)
    assert_array_equal(ht.nanmean(ht.array(ints, split=0)), np.nanmean(ints))
    assert_array_equal(ht.nanvar(ht.array(ints, split=0)), np.nanvar(ints))


def test_mean_var_errors():
    x = ht.array(random_array((5, 6), np.float32), split=0)
    assert_raises_then_collective_works(ValueError, ht.mean, x, axis=2)
    assert_raises_then_collective_works(ValueError, ht.var, x, axis=(0, -3))
    assert_raises_then_collective_works(ValueError, ht.std, x, axis=(0, 0))
    assert_raises_then_collective_works(TypeError, ht.var, x, ddof="1")
    assert_raises_then_collective_works(TypeError, ht.mean, [1.0, 2.0])
    assert_raises_then_collective_works(ValueError, ht.mean, x, axis=0, out=ht.zeros((5,)))


# ---------------------------------------------------------------------------------------------
# average
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("split", [None, 0, 1, 2])
def test_average(split):
    """Weights of x's shape, along one axis (1-D), along two axes (transposed), and none."""
    data = random_array((3, 4, 5), np.float64, seed=30)
    x = ht.array(data, split=split)
    full = random_array((3, 4, 5), np.float32, seed=31, low=0, high=2)
    assert_array_equal(ht.average(x), np.average(data))
    assert_array_equal(
        ht.average(x, axis=1, weights=ht.array(full, split=split)),
        np.average(data, axis=1, weights=full),
    )
    if split in (None, 2):
        assert_array_equal(
            ht.average(x, weights=ht.array(full, split=0)), np.average(data, weights=full)
        )
    along = np.array([1.0, 2.0, 0.5, 3.0])
    avg, total = ht.average(
        x, axis=1, weights=ht.array(along, split=0 if split else None), returned=True
    )
    expected_avg, expected_total = np.average(data, axis=1, weights=along, returned=True)
    assert_array_equal(avg, expected_avg)
    assert_array_equal(total, expected_total)
    pair = random_array((5, 3), np.float64, seed=32, low=1, high=3)
    if split in (None, 1):
        assert_array_equal(
            ht.average(x, axis=(2, 0), weights=pair), np.average(data, axis=(2, 0), weights=pair)
        )
    else:
        assert_array_equal(
            ht.average(x, axis=(0, 2), weights=ht.array(pair.T.copy(), split=1), keepdims=True),
            np.average(data, axis=(0, 2), weights=pair.T, keepdims=True),
        )
    ints = random_array((3, 4, 5), np.int32, seed=33)
    if split in (0, 1):
        assert_array_equal(
            ht.average(ht.array(ints, split=split), axis=-1), np.average(ints, axis=-1)
        )
    avg, count = ht.average(ht.array(ints, split=split), axis=0, returned=True)
    expected_avg, expected_count = np.average(ints, axis=0, returned=True)
    assert_array_equal(avg, expected_avg)
    assert_array_equal(count, expected_count)


def test_average_errors():
    x = ht.array(random_array((5, 6), np.float64), split=0)
    assert_raises_then_collective_works(TypeError, ht.average, x, weights=np.ones(6))
    assert_raises_then_collective_works(ValueError, ht.average, x, axis=1, weights=np.ones(5))
    assert_raises_then_collective_works(ValueError, ht.average, x, axis=0, weights=np.ones((5, 2)))
    assert_raises_then_collective_works(ValueError, ht.average, x, axis=3)
    zero = np.ones((5, 6))
    zero[:, 2] = 0
    assert_raises_then_collective_works(
        ZeroDivisionError, ht.average, x, axis=0, weights=ht.array(zero, split=1)
    )


# ---------------------------------------------------------------------------------------------
# skew, kurtosis, cov
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("shape,split", SHORT_CASES, ids=SHORT_IDS)
def test_skew_kurtosis(shape, split):
    for i, axis in enumerate(axes_for(len(shape), split)):
        dtype = rotate((np.float64, np.int64, np.float32), i + (split or 0))
        data = random_array(shape, dtype, seed=50 + i)
        x = ht.array(data, split=split)
        unbiased = i % 2 == 0
        rtol = 1e-4 if dtype == np.float32 else 1e-6
        if (i + len(shape)) % 2 == 0:
            assert_array_equal(
                ht.skew(x, axis=axis, unbiased=unbiased),
                quiet(scipy.stats.skew, data, axis=axis, bias=not unbiased),
                rtol=rtol,
                atol=1e-6,
            )
        else:
            assert_array_equal(
                ht.kurtosis(x, axis=axis, unbiased=unbiased, fisher=i % 3 != 0),
                quiet(scipy.stats.kurtosis, data, axis=axis, bias=not unbiased, fisher=i % 3 != 0),
                rtol=rtol,
                atol=1e-6,
            )


def test_skew_kurtosis_special():
    constant = np.full((4, 5), 3.0)
    x = ht.array(constant, split=0)
    assert_array_equal(ht.skew(x, axis=0), quiet(scipy.stats.skew, constant, axis=0, bias=False))
    assert_array_equal(
        ht.kurtosis(x, axis=1, keepdims=True),
        quiet(scipy.stats.kurtosis, constant, axis=1, bias=False, keepdims=True),
    )
    assert_raises_then_collective_works(TypeError, ht.skew, x, unbiased="yes")
    assert_raises_then_collective_works(ValueError, ht.kurtosis, x, axis=2)


@pytest.mark.parametrize("split", [None, 0, 1])
def test_cov(split):
    data = random_array((4, 7), np.float64, seed=60)
    m = ht.array(data, split=split)
    assert_array_equal(ht.cov(m), np.cov(data))
    assert_array_equal(ht.cov(m, bias=True), np.cov(data, bias=True))
    assert_array_equal(ht.cov(m, ddof=3), np.cov(data, ddof=3))
    assert_array_equal(ht.cov(m, rowvar=False), np.cov(data, rowvar=False))
    other = random_array((2, 7), np.float32, seed=61)
    assert_array_equal(ht.cov(m, ht.array(other, split=0)), np.cov(data, other))
    assert_array_equal(ht.cov(m, other, rowvar=True, bias=True), np.cov(data, other, bias=True))
    freq = np.array([1, 2, 0, 3, 1, 1, 2])
    importance = np.array([0.5, 1.0, 2.0, 0.1, 1.0, 3.0, 0.2])
    assert_array_equal(ht.cov(m, fweights=freq), np.cov(data, fweights=freq))
    assert_array_equal(
        ht.cov(m, aweights=ht.array(importance, split=0)), np.cov(data, aweights=importance)
    )
    assert_array_equal(
        ht.cov(m, fweights=freq, aweights=importance, ddof=2),
        np.cov(data, fweights=freq, aweights=importance, ddof=2),
    )
    vector = random_array((7,), np.int32, seed=62)
    assert_array_equal(
        ht.cov(ht.array(vector, split=0 if split is not None else None)), np.cov(vector)
    )
    few = random_array((2, 3), np.float32, seed=63)
    assert_array_equal(ht.cov(ht.array(few, split=split), rowvar=False), np.cov(few, rowvar=False))


def test_cov_errors():
    m = ht.array(random_array((4, 7), np.float64), split=1)
    assert_raises_then_collective_works(ValueError, ht.cov, ht.zeros((2, 2, 2), split=0))
    assert_raises_then_collective_works(ValueError, ht.cov, m, ht.zeros((2, 6), split=1))
    assert_raises_then_collective_works(ValueError, ht.cov, m, ddof=1.5)
    assert_raises_then_collective_works(ValueError, ht.cov, m, fweights=np.ones(6, dtype=np.int64))
    assert_raises_then_collective_works(TypeError, ht.cov, m, fweights=np.full(7, 0.5))
    assert_raises_then_collective_works(
        ValueError, ht.cov, m, aweights=ht.array(-np.ones(7), split=0)
    )


# ---------------------------------------------------------------------------------------------
# errors common to the reductions
# ---------------------------------------------------------------------------------------------
def test_reduction_errors():
    x = ht.array(random_array((5, 6), np.float32), split=1)
    for function in (ht.max, ht.min, ht.nanmax, ht.ptp, ht.mean, ht.nanvar, ht.median):
        assert_raises_then_collective_works(ValueError, function, x, axis=2)
        assert_raises_then_collective_works(ValueError, function, x, axis=-3)
        assert_raises_then_collective_works(TypeError, function, x, axis=1.0)
    empty = ht.array(np.zeros((0, 3), dtype=np.float32), split=0)
    for function in (ht.max, ht.min, ht.nanmin, ht.ptp):
        assert_raises_then_collective_works(ValueError, function, empty, axis=0)
        assert_raises_then_collective_works(ValueError, function, empty)
    assert_raises_then_collective_works(ValueError, ht.max, x, axis=0, out=ht.zeros((5,)))
    assert_raises_then_collective_works(
        TypeError, ht.ptp, ht.array(np.array([True, False]), split=0)
    )
    assert_raises_then_collective_works(
        TypeError, ht.max, ht.array(np.ones(3, dtype=np.complex64), split=0)
    )


def test_extrema_out():
    data = random_array((5, 6), np.int32, seed=80)
    x = ht.array(data, split=0)
    for split in (None, 0):
        out = ht.zeros((6,), dtype=ht.int32, split=split)
        ht.max(x, axis=0, out=out)
        assert_array_equal(out, np.max(data, axis=0))
        ht.nanmin(x, axis=0, out=out)
        assert_array_equal(out, np.min(data, axis=0))
        ht.ptp(x, axis=0, out=out)
        assert_array_equal(out, np.ptp(data, axis=0))
    out = ht.zeros((5, 1), dtype=ht.float64, split=0)
    ht.min(x, axis=1, keepdims=True, out=out)
    assert_array_equal(out, np.min(data, axis=1, keepdims=True).astype(np.float64))
    collective_assert(ht.max(x, axis=1).split == 0, "max along a non-split axis keeps the split")


def test_unbalanced_layout():
    """All rows on one process (the others empty): offsets come from the real layout."""
    data = random_array((5, 6), np.float64, seed=81, low=0, high=4).round()
    for split in (0, 1):
        x = ht.collect(ht.array(data, split=split), ht.MPI_WORLD.size - 1)
        assert_array_equal(ht.argmax(x, axis=split), np.argmax(data, axis=split))
        assert_array_equal(ht.argmin(x), np.argmin(data))
        assert_array_equal(ht.max(x, axis=1 - split), np.max(data, axis=1 - split))
        assert_array_equal(ht.var(x, axis=split, ddof=1), np.var(data, axis=split, ddof=1))
        assert_array_equal(ht.median(x, axis=split), np.median(data, axis=split))
        assert_array_equal(ht.percentile(x, [20, 80]), np.percentile(data, [20, 80]))
        assert_array_equal(
            ht.average(x, axis=split, weights=ht.array(data + 1, split=split)),
            np.average(data, axis=split, weights=data + 1),
        )
