"""
heat.fft against numpy.fft (and scipy.fft for the n-D Hermitian transforms) on every split,
several dtypes, uneven and skewed layouts, fewer rows than processes, every norm, padding and
truncation, and axis combinations. Each test collects many results and checks them in one
batched collective (tests/helpers.py).
"""

from __future__ import annotations

import itertools
import zlib

import numpy as np
import pytest
import scipy.fft

import heat as ht
from tests.helpers import (
    assert_arrays_equal,
    collective_assert,
    expect_errors,
    random_array,
    skewed,
    splits_for,
)

NORMS = (None, "backward", "ortho", "forward")
DTYPES = (np.float32, np.float64, np.complex64, np.complex128, np.int32)
REAL_DTYPES = (np.float32, np.float64, np.int64)
# uneven at 2-4 processes; (2, 3, 4) and (1, 5) leave processes empty along axis 0
# 1-D: prime and tiny lengths are transformed whole; 12, 16 and 30 by the four-step algorithm
SHAPES_1D = ((7,), (2,), (1,), (12,), (16,), (30,))
SHAPES_ND = ((5, 6), (2, 3, 4), (1, 5), (4, 1), (6, 5, 3))


def tolerance(expected, dtype):
    """rtol/atol fitting the precision of the transform (errors scale with the largest value)."""
    scale = float(np.max(np.abs(expected))) if np.size(expected) else 1.0
    single = np.dtype(dtype) in (np.float32, np.complex64, np.float16)
    eps = 2e-6 if single else 1e-13
    if expected.dtype == np.float16:  # the result is rounded to half precision
        eps = 1e-3
    return {"rtol": 100 * eps, "atol": 100 * eps * max(scale, 1.0)}


def layouts(data, split, skew=True):
    """The balanced array and, at several processes, a skewed layout of the same data."""
    x = ht.array(data, split=split)
    yield x
    if skew and split is not None and split >= 0 and ht.MPI_WORLD.size > 1:
        yield skewed(x)


_DATA = {}


def data_for(shape, dtype):
    """Test data, the same on every rank (cached: tests ask for the same arrays often)."""
    key = (tuple(shape), np.dtype(dtype).name)
    if key not in _DATA:
        _DATA[key] = random_array(shape, dtype, seed=zlib.crc32(repr(key).encode()) % 1000)
    return _DATA[key]


def norm_for(i):
    return NORMS[i % len(NORMS)]


def one_d_cases(shapes, dtypes, lengths):
    """
    ``(data, dtype, x, axis, n, norm)`` for every shape, split, layout, axis (0 and -1) and
    length ``n`` from ``lengths(m)``; dtypes and norms rotate from case to case.
    """
    i = 0
    for shape in shapes:
        for split in splits_for(len(shape)):
            for axis in (0, -1) if len(shape) > 1 else (0,):
                for n in lengths(shape[axis]):
                    dtype = dtypes[i % len(dtypes)]
                    norm = norm_for(i)
                    i += 1
                    data = data_for(shape, dtype)
                    for x in layouts(data, split):
                        yield data, dtype, x, axis, n, norm


# ---------------------------------------------------------------------------------------------
# 1-D transforms
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["fft", "ifft"])
def test_complex_1d(name):
    ours, theirs = getattr(ht.fft, name), getattr(np.fft, name)
    pairs, errors = [], []
    lengths = lambda m: (None, m + 3, max(1, m - 1))
    for data, dtype, x, axis, n, norm in one_d_cases(SHAPES_1D + SHAPES_ND[:3], DTYPES, lengths):
        expected = theirs(data, n=n, axis=axis, norm=norm)
        run(ours, x, expected, dtype, pairs, errors, n=n, axis=axis, norm=norm)
    collective_assert(not errors, "\n".join(errors[:5]))
    assert_arrays_equal(pairs)


@pytest.mark.parametrize("name", ["rfft", "ihfft"])
def test_real_to_complex_1d(name):
    ours, theirs = getattr(ht.fft, name), getattr(np.fft, name)
    pairs, errors = [], []
    lengths = lambda m: (None, m + 2, max(1, m - 1))
    dtypes = REAL_DTYPES + (np.float16, np.bool_)
    for data, dtype, x, axis, n, norm in one_d_cases(SHAPES_1D + SHAPES_ND[:3], dtypes, lengths):
        expected = theirs(data, n=n, axis=axis, norm=norm)
        run(ours, x, expected, dtype, pairs, errors, n=n, axis=axis, norm=norm)
    collective_assert(not errors, "\n".join(errors[:5]))
    assert_arrays_equal(pairs)


@pytest.mark.parametrize("name", ["irfft", "hfft"])
def test_complex_to_real_1d(name):
    ours, theirs = getattr(ht.fft, name), getattr(np.fft, name)
    pairs, errors = [], []
    lengths = lambda m: (None, 2 * m + 1, m)
    dtypes = DTYPES + (np.float16,)
    for data, dtype, x, axis, n, norm in one_d_cases(
        ((7,), (2,), (12,), (5, 6), (2, 3, 4)), dtypes, lengths
    ):
        expected = reference(theirs, data, n=n, axis=axis, norm=norm)
        run(ours, x, expected, dtype, pairs, errors, n=n, axis=axis, norm=norm)
    collective_assert(not errors, "\n".join(errors[:5]))
    assert_arrays_equal(pairs)


# ---------------------------------------------------------------------------------------------
# n-D transforms
# ---------------------------------------------------------------------------------------------
def axes_and_sizes(shape):
    """(s, axes) pairs: defaults, single axes, pairs in both orders, padding and truncation."""
    ndim = len(shape)
    yield None, None
    yield None, (0,)
    yield None, (-1,)
    if ndim >= 2:
        yield None, (0, 1)
        yield None, (1, 0)
        yield (shape[0] + 2, max(1, shape[-1] - 1)), (0, -1)
        yield (-1, shape[1] + 1), (-1, 0) if ndim == 2 else (2, 1)
    if ndim >= 3:
        yield None, (0, 2)
        yield (3, -1), (1, 0)


SWAPPED = {None: "forward", "backward": "forward", "ortho": "ortho", "forward": "backward"}


def np_hfftn(data, s=None, axes=None, norm=None):
    """scipy.fft.hfftn's definition on NumPy's conventions (scipy differs for one input point)."""
    return np.fft.irfftn(np.conj(data), s=s, axes=axes, norm=SWAPPED[norm])


def np_ihfftn(data, s=None, axes=None, norm=None):
    return np.conj(np.fft.rfftn(data, s=s, axes=axes, norm=SWAPPED[norm]))


def np_hfft2(data, s=None, axes=(-2, -1), norm=None):
    return np_hfftn(data, s, axes, norm)


def np_ihfft2(data, s=None, axes=(-2, -1), norm=None):
    return np_ihfftn(data, s, axes, norm)


def reference(function, data, **kwargs):
    """NumPy's result, or the exception type it raises (heat must raise it too)."""
    try:
        return function(data, **kwargs)
    except ValueError:
        return ValueError


def run(ours, x, expected, dtype, pairs, errors, **kwargs):
    """Call ``ours``; collect the result, or check that it raises like NumPy did."""
    if expected is ValueError:
        try:
            ours(x, **kwargs)
            errors.append(f"{ours.__name__}({x.shape}, {kwargs}) did not raise ValueError")
        except ValueError:
            pass
        return
    result = ours(x, **kwargs)
    pairs.append((result, expected, tolerance(expected, dtype)))
    if result.split != x.split:
        errors.append(f"{ours.__name__} changed the split from {x.split} to {result.split}")


N_D = {
    "fftn": np.fft.fftn,
    "ifftn": np.fft.ifftn,
    "rfftn": np.fft.rfftn,
    "irfftn": np.fft.irfftn,
    "hfftn": np_hfftn,
    "ihfftn": np_ihfftn,
}


@pytest.mark.parametrize("name", list(N_D))
def test_nd(name):
    ours, theirs = getattr(ht.fft, name), N_D[name]
    real_input = name in ("rfftn", "ihfftn")
    dtypes = REAL_DTYPES if real_input else DTYPES
    pairs, errors, i = [], [], 0
    for shape in SHAPES_ND:
        for s, axes in axes_and_sizes(shape):
            dtype = dtypes[i % len(dtypes)]
            norm = norm_for(i)
            i += 1
            data = data_for(shape, dtype)
            expected = reference(theirs, data, s=s, axes=axes, norm=norm)
            for split in splits_for(len(shape)):
                for x in layouts(data, split, skew=i % 2 == 0):
                    run(ours, x, expected, dtype, pairs, errors, s=s, axes=axes, norm=norm)
    collective_assert(not errors, "\n".join(errors[:5]))
    assert_arrays_equal(pairs)


TWO_D = {
    "fft2": np.fft.fft2,
    "ifft2": np.fft.ifft2,
    "rfft2": np.fft.rfft2,
    "irfft2": np.fft.irfft2,
    "hfft2": np_hfft2,
    "ihfft2": np_ihfft2,
}


@pytest.mark.parametrize("name", list(TWO_D))
def test_2d(name):
    ours, theirs = getattr(ht.fft, name), TWO_D[name]
    real_input = name in ("rfft2", "ihfft2")
    pairs, errors, i = [], [], 0
    dtypes = (
        (np.float32, np.float64, np.int32) if real_input else (np.float32, np.complex128, np.int32)
    )
    for shape in ((5, 6), (2, 3, 4), (3, 1)):
        for kwargs in ({}, {"axes": (0, 1)}, {"axes": (-1, 0), "s": (4, 3)}, {"s": (2, 7)}):
            dtype = dtypes[i % len(dtypes)]
            norm = norm_for(i)
            i += 1
            data = data_for(shape, dtype)
            expected = reference(theirs, data, norm=norm, **kwargs)
            for split in splits_for(len(shape)):
                for x in layouts(data, split, skew=i % 2 == 0):
                    run(ours, x, expected, dtype, pairs, errors, norm=norm, **kwargs)
    collective_assert(not errors, "\n".join(errors[:5]))
    assert_arrays_equal(pairs)


def test_repeated_axes_and_round_trips():
    data = random_array((6, 5, 4), np.float64, seed=3)
    cdata = random_array((6, 5, 4), np.complex128, seed=4)
    pairs = []
    for split in splits_for(3):
        x = ht.array(data, split=split)
        c = ht.array(cdata, split=split)
        # an axis listed twice is transformed twice (NumPy applies the last listed first)
        pairs.append(
            (ht.fft.fftn(c, s=(4, 7), axes=(0, 0)), np.fft.fftn(cdata, s=(4, 7), axes=(0, 0)))
        )
        pairs.append((ht.fft.ifftn(ht.fft.fftn(c)), cdata))
        pairs.append((ht.fft.irfftn(ht.fft.rfftn(x), s=x.shape), data))
        pairs.append(
            (
                ht.fft.ihfftn(ht.fft.hfftn(c, s=(6, 5, 6)), s=(6, 5, 6)),
                scipy.fft.ihfftn(scipy.fft.hfftn(cdata, s=(6, 5, 6)), s=(6, 5, 6)),
            )
        )
        # scipy's n-D Hermitian transforms agree where the default lengths are defined
        pairs.append((ht.fft.hfft2(c, norm="ortho"), scipy.fft.hfft2(cdata, norm="ortho")))
        pairs.append((ht.fft.ihfftn(x, axes=(2, 0)), scipy.fft.ihfftn(data, axes=(2, 0))))
        for norm in NORMS:
            pairs.append(
                (ht.fft.irfft(ht.fft.rfft(x, axis=0, norm=norm), n=6, axis=0, norm=norm), data)
            )
    assert_arrays_equal(pairs, rtol=1e-10, atol=1e-10)


def test_zero_length_axes_and_empty_blocks():
    pairs = []
    data = random_array((0, 5), np.float64)
    for split in splits_for(2):
        x = ht.array(data, split=split)
        pairs.append((ht.fft.fft(x, axis=1), np.fft.fft(data, axis=1)))
        pairs.append((ht.fft.rfft(x, axis=1), np.fft.rfft(data, axis=1)))
        pairs.append((ht.fft.fft(x, n=3, axis=0), np.fft.fft(data, n=3, axis=0)))
    # 1 row over up to 4 processes, transformed along the split axis
    row = random_array((1, 3), np.complex64)
    for split in splits_for(2):
        x = ht.array(row, split=split)
        pairs.append((ht.fft.fft2(x, s=(3, 3)), np.fft.fft2(row, s=(3, 3)), {"atol": 1e-4}))
    assert_arrays_equal(pairs)


def test_split_vectors_are_never_gathered(monkeypatch):
    """Split vectors use the four-step (composite) or Bluestein (prime) algorithm, never an all-gather."""
    from heat.fft import _plan

    gathered = []
    original = _plan._gathered

    def spy(x, kind, n, norm):
        gathered.append(n)
        return original(x, kind, n, norm)

    monkeypatch.setattr(_plan, "_gathered", spy)
    data = random_array((24,), np.complex128, seed=5)
    real = random_array((20,), np.float64, seed=6)
    x = ht.array(data, split=0)
    r = ht.array(real, split=0)
    pairs = [
        (ht.fft.fft(x), np.fft.fft(data)),
        (ht.fft.ifft(x, n=36, norm="ortho"), np.fft.ifft(data, n=36, norm="ortho")),
        (
            ht.fft.fftn(x, s=(8,), norm="forward"),
            np.fft.fftn(data, s=(8,), axes=(0,), norm="forward"),
        ),
        (ht.fft.rfft(r), np.fft.rfft(real)),
        (ht.fft.irfft(x), np.fft.irfft(data)),
        (ht.fft.hfft(x, n=30), np.fft.hfft(data, n=30)),
        (ht.fft.ihfft(r, norm="forward"), np.fft.ihfft(real, norm="forward")),
        (ht.fft.fftn(x, s=(6, 10), axes=(0, 0)), np.fft.fftn(data, s=(6, 10), axes=(0, 0))),
    ]
    # prime lengths (Bluestein), forward and inverse, every norm, padding to a prime
    p = ht.array(data[:13], split=0)
    pairs += [
        (ht.fft.fft(p), np.fft.fft(data[:13])),
        (ht.fft.ifft(p, norm="ortho"), np.fft.ifft(data[:13], norm="ortho")),
        (ht.fft.fft(p, n=17, norm="forward"), np.fft.fft(data[:13], n=17, norm="forward")),
        (ht.fft.ifft(p, n=5, norm="forward"), np.fft.ifft(data[:13], n=5, norm="forward")),
        (ht.fft.rfft(r, n=11), np.fft.rfft(real, n=11)),
        (ht.fft.irfft(x, n=23, norm="ortho"), np.fft.irfft(data, n=23, norm="ortho")),
    ]
    assert_arrays_equal(pairs, rtol=1e-10, atol=1e-10)
    collective_assert(not gathered, f"transforms of lengths {gathered} were gathered")


def test_balanced_result_when_split_axis_transformed():
    data = random_array((9, 4), np.float32)
    x = skewed(ht.array(data, split=0))
    # along another axis the layout is kept; along the split axis the result is balanced
    kept = ht.fft.fft(x, axis=1)
    moved = ht.fft.fft(x, axis=0)
    counts_kept = tuple(kept.counts_displs()[0])
    collective_assert(
        counts_kept == tuple(x.counts_displs()[0]), "fft along axis 1 changed the layout"
    )
    collective_assert(
        moved.is_balanced(force_check=True), "fft along the split axis is not balanced"
    )
    assert_arrays_equal(
        [
            (kept, np.fft.fft(data, axis=1), {"atol": 1e-4}),
            (moved, np.fft.fft(data, axis=0), {"atol": 1e-4}),
        ]
    )


# ---------------------------------------------------------------------------------------------
# frequencies and shifts
# ---------------------------------------------------------------------------------------------
def test_fftfreq_rfftfreq():
    pairs = []
    for n, d in itertools.product((1, 2, 5, 8, 11), (1.0, 0.1, 3)):
        for split in (None, 0):
            # the default type is the namespace's default float (float32; NumPy's is float64)
            pairs.append(
                (ht.fft.fftfreq(n, d, split=split), np.fft.fftfreq(n, d).astype(np.float32))
            )
            pairs.append(
                (ht.fft.rfftfreq(n, d, split=split), np.fft.rfftfreq(n, d).astype(np.float32))
            )
            pairs.append(
                (ht.fft.fftfreq(n, d, dtype=ht.float64, split=split), np.fft.fftfreq(n, d))
            )
            pairs.append(
                (ht.fft.rfftfreq(n, d, dtype=ht.float64, split=split), np.fft.rfftfreq(n, d))
            )
    assert_arrays_equal(pairs, rtol=1e-6)
    default = ht.__array_namespace_info__().default_dtypes()["real floating"]
    assert ht.fft.fftfreq(4).dtype is default and ht.fft.rfftfreq(4).dtype is default


@pytest.mark.parametrize("name", ["fftshift", "ifftshift"])
def test_shifts(name):
    ours, theirs = getattr(ht.fft, name), getattr(np.fft, name)
    pairs = []
    for shape in ((7,), (8,), (5, 6), (2, 3, 5), (1, 4)):
        data = random_array(shape, np.float32, seed=len(shape))
        ndim = len(shape)
        for split in splits_for(ndim):
            for axes in (None, 0, -1, (0, ndim - 1), tuple(range(ndim))[::-1]):
                for x in layouts(data, split):
                    result = ours(x, axes=axes)
                    pairs.append((result, theirs(data, axes=axes)))
                    collective_assert(result.split == x.split, f"{name} changed the split")
    assert_arrays_equal(pairs)


# ---------------------------------------------------------------------------------------------
# bad input raises alike on every process, before any communication
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("split", [None, 0, 1])
def test_errors(split):
    x = ht.array(random_array((4, 6), np.float32), split=split)
    c = ht.array(random_array((4, 6), np.complex64), split=split)
    v = ht.array(random_array((1,), np.complex64), split=None if split is None else 0)
    scalar = ht.array(1.0)
    calls = []
    for function in (ht.fft.fft, ht.fft.ifft, ht.fft.rfft, ht.fft.irfft, ht.fft.hfft, ht.fft.ihfft):
        calls += [
            (TypeError, function, (np.ones(4),), {}),
            (ValueError, function, (x,), {"axis": 2}),
            (ValueError, function, (x,), {"axis": -3}),
            (TypeError, function, (x,), {"axis": 0.5}),
            (TypeError, function, (x,), {"axis": (0,)}),
            (ValueError, function, (x,), {"n": 0}),
            (ValueError, function, (x,), {"n": -2}),
            (TypeError, function, (x,), {"n": 2.0}),
            (ValueError, function, (x,), {"norm": "none"}),
            (ValueError, function, (scalar,), {}),
        ]
    for function in (
        ht.fft.fftn,
        ht.fft.ifftn,
        ht.fft.rfftn,
        ht.fft.irfftn,
        ht.fft.hfftn,
        ht.fft.ihfftn,
        ht.fft.fft2,
        ht.fft.ifft2,
        ht.fft.rfft2,
        ht.fft.irfft2,
        ht.fft.hfft2,
        ht.fft.ihfft2,
    ):
        calls += [
            (TypeError, function, ([[1.0]],), {}),
            (ValueError, function, (x,), {"axes": (0, 2)}),
            (ValueError, function, (x,), {"s": (3,), "axes": (0, 1)}),
            (ValueError, function, (x,), {"s": (0, 3), "axes": (0, 1)}),
            (TypeError, function, (x,), {"s": 3}),
            (TypeError, function, (x,), {"s": (2.5, 3)}),
            (ValueError, function, (x,), {"norm": "Ortho"}),
        ]
    calls += [
        (TypeError, ht.fft.rfft, (c,), {}),
        (TypeError, ht.fft.ihfft, (c,), {}),
        (TypeError, ht.fft.rfftn, (c,), {}),
        (TypeError, ht.fft.rfft2, (c,), {}),
        (TypeError, ht.fft.ihfftn, (c,), {}),
        (TypeError, ht.fft.ihfft2, (c,), {}),
        # one input point: the default output length 2 * (1 - 1) is 0
        (ValueError, ht.fft.irfft, (v,), {}),
        (ValueError, ht.fft.hfft, (v,), {}),
        (TypeError, ht.fft.fftfreq, (2.5,), {}),
        (ValueError, ht.fft.fftfreq, (0,), {}),
        (ValueError, ht.fft.rfftfreq, (4,), {"d": 0}),
        (TypeError, ht.fft.rfftfreq, (4,), {"d": "1"}),
        (TypeError, ht.fft.fftfreq, (4,), {"dtype": ht.int32}),
        (ValueError, ht.fft.fftfreq, (4,), {"split": 1}),
        (TypeError, ht.fft.fftshift, (np.ones(3),), {}),
        (ValueError, ht.fft.fftshift, (x,), {"axes": 2}),
        (TypeError, ht.fft.ifftshift, (x,), {"axes": 0.0}),
    ]
    expect_errors(calls)
    # the next collective still works
    assert_arrays_equal([(ht.fft.fft(x, axis=0), np.fft.fft(x.numpy(), axis=0), {"atol": 1e-4})])


def test_docstring_examples():
    """The Examples sections of heat.fft run and show what they claim (at every process count)."""
    import doctest

    from heat.fft import _helpers, _transforms

    failures = 0
    for module in (_transforms, _helpers, ht.fft):
        result = doctest.testmod(
            module,
            extraglobs={"ht": ht},
            optionflags=doctest.NORMALIZE_WHITESPACE,
            verbose=False,
            report=False,
        )
        failures += result.failed
    collective_assert(failures == 0, f"{failures} docstring examples of heat.fft failed")
