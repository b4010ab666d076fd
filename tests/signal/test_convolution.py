"""
heat.signal.convolve against numpy.convolve and heat.signal.convolve2d against
scipy.signal.convolve2d: every mode, strides, every split of signal and kernel, balanced and
skewed layouts (empty blocks), kernels longer than local blocks (and than the signal), fewer
elements than processes, float32/float64/int/complex. Results are checked in batches.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import scipy.signal

import heat as ht
from tests.helpers import (
    assert_arrays_equal,
    collective_assert,
    expect_errors,
    random_array,
    skewed,
)

MODES = ("full", "same", "valid")
DTYPES = (np.float64, np.float32, np.int64, np.complex128, np.int32)


def options(dtype):
    single = np.dtype(dtype) in (np.float32, np.complex64)
    return {"rtol": 1e-4 if single else 1e-10, "atol": 1e-3 if single else 1e-9}


def layouts(data, split):
    x = ht.array(data, split=split)
    yield x
    if split is not None and ht.MPI_WORLD.size > 1:
        yield skewed(x)


def strided(result, stride):
    return result[tuple(slice(None, None, s) for s in stride)]


# (signal length, kernel length, stride): uneven lengths, kernels longer than the local blocks
# and than the signal (swapped as NumPy does), fewer elements than processes
CASES_1D = ((13, 3, 1), (13, 9, 3), (7, 2, 2), (3, 4, 1), (1, 1, 1), (2, 9, 4), (10, 1, 3))


@pytest.mark.parametrize("mode", MODES)
def test_convolve_matches_numpy(mode):
    checks = []
    for index, (n, m, stride) in enumerate(CASES_1D):
        dtype = DTYPES[index % len(DTYPES)]
        a = random_array((n,), dtype=dtype, seed=n)
        v = random_array((m,), dtype=dtype, seed=100 + m)
        expected = np.convolve(a, v, mode=mode)[::stride]
        for a_split, v_split in ((None, None), (0, None), (None, 0), (0, 0)):
            for x in layouts(a, a_split) if v_split is None else [ht.array(a, split=a_split)]:
                result = ht.signal.convolve(x, ht.array(v, split=v_split), mode=mode, stride=stride)
                checks.append((result, expected, options(dtype)))
                if (a_split is not None or v_split is not None) and result.split != 0:
                    checks.append((result, np.zeros(0)))  # fails: must be split along 0
                if not result.balanced:
                    checks.append((result, np.zeros(0)))  # fails: must be balanced
    assert_arrays_equal(checks)


def test_convolve_promotes_and_accepts_array_likes():
    a = random_array((11,), dtype=np.int32, seed=1)
    checks = [
        (
            ht.signal.convolve(ht.array(a, split=0), ht.array([0.5, 1.0], dtype=ht.float32)),
            np.convolve(a, np.array([0.5, 1.0], dtype=np.float32)),
            options(np.float64),
        ),
        (ht.signal.convolve(ht.array(a, split=0), [1, 2, 3]), np.convolve(a, np.array([1, 2, 3]))),
        (ht.signal.convolve(ht.array(a, split=0), 3), np.convolve(a, 3)),
        (
            ht.signal.convolve(a.tolist(), ht.array(a[:4], split=0)),
            np.convolve(np.array(a.tolist()), a[:4]),
        ),
        (
            ht.signal.convolve(ht.array(a > 0, split=0), ht.array([True, False, True])),
            np.convolve(a > 0, np.array([True, False, True])),
        ),
    ]
    assert_arrays_equal(checks)


def test_convolve_long_kernel_and_tiny_signal():
    # the kernel is longer than every local block; the signal shorter than the process count
    checks = []
    for n, m in ((40, 17), (2, 9), (3, 3)):
        a = random_array((n,), seed=n)
        v = random_array((m,), seed=m)
        for mode, stride in itertools.product(MODES, (1, 5)):
            for x in layouts(a, 0):
                checks.append(
                    (
                        ht.signal.convolve(x, ht.array(v, split=0), mode, stride),
                        np.convolve(a, v, mode)[::stride],
                    )
                )
    assert_arrays_equal(checks)


def test_convolve_bad_input_raises_on_every_rank():
    a = ht.arange(6, split=0, dtype=ht.float32)
    v = ht.ones(3)
    expect_errors(
        [
            (ValueError, ht.signal.convolve, (ht.ones((2, 3), split=0), ht.ones((3, 3))), {}),
            (ValueError, ht.signal.convolve, (ht.ones((2, 3), split=0), ht.ones((2, 2, 3))), {}),
            (
                ValueError,
                ht.signal.convolve,
                (ht.ones((4, 5), split=1), ht.ones((3, 2), split=0)),
                {},
            ),
            (ValueError, ht.signal.convolve, (ht.array(2.0), ht.ones((3, 2))), {}),
            (ValueError, ht.signal.convolve, (ht.ones((3, 0), split=0), v), {}),
            (ValueError, ht.signal.convolve, (ht.ones((3, 4), split=0), v), {"mode": "middle"}),
            (ValueError, ht.signal.convolve, (ht.ones((3, 4), split=0), v), {"stride": -1}),
            (ValueError, ht.signal.convolve, (ht.zeros(0, split=0), v), {}),
            (ValueError, ht.signal.convolve, (a, []), {}),
            (ValueError, ht.signal.convolve, (a, v), {"mode": "middle"}),
            (ValueError, ht.signal.convolve, (a, v), {"mode": 1}),
            (ValueError, ht.signal.convolve, (a, v), {"stride": 0}),
            (TypeError, ht.signal.convolve, (a, v), {"stride": 1.5}),
            (TypeError, ht.signal.convolve, (a, v), {"stride": True}),
            (TypeError, ht.signal.convolve, (a, v), {"stride": (1, 2)}),
            (TypeError, ht.signal.convolve, (a, object()), {}),
        ]
    )


# ------------------------------------------------------------------------------------------------
# batches (HeAT 1.8): every row along the last axis on its own, numpy.convolve row by row
# ------------------------------------------------------------------------------------------------
def batch_oracle(a, v, mode, stride):
    rows = a.reshape(-1, a.shape[-1])
    kernels = (
        v.reshape(-1, v.shape[-1]) if v.ndim > 1 else np.broadcast_to(v, (len(rows), v.shape[0]))
    )
    out = [np.convolve(r, k, mode)[::stride] for r, k in zip(rows, kernels, strict=True)]
    length = len(np.convolve(np.ones(a.shape[-1]), np.ones(v.shape[-1]), mode)[::stride])
    return np.array(out).reshape(a.shape[:-1] + (length,))


# (batch shape, N, M, stride): uneven batches, fewer rows than processes, kernels longer than
# the signal (swapped as NumPy does)
CASES_BATCH = (
    ((7,), 10, 3, 1),
    ((2,), 9, 4, 2),
    ((5,), 3, 6, 1),
    ((1,), 4, 4, 2),
    ((4, 3), 6, 2, 2),
)


@pytest.mark.parametrize("mode", MODES)
def test_convolve_batch_matches_numpy_row_by_row(mode):
    checks = []
    for index, (batch, n, m, stride) in enumerate(CASES_BATCH):
        dtype = DTYPES[index % len(DTYPES)]
        a = random_array(batch + (n,), dtype=dtype, seed=index)
        shared = random_array((m,), dtype=dtype, seed=50 + index)
        own = random_array(batch + (m,), dtype=dtype, seed=90 + index)
        for v, v_split in ((shared, None), (shared, 0), (own, None), (own, 0)):
            expected = batch_oracle(a, v, mode, stride)
            for a_split in (None, 0):
                for x in layouts(a, a_split):
                    result = ht.convolve(x, ht.array(v, split=v_split), mode=mode, stride=stride)
                    checks.append((result, expected, options(dtype)))
                    want = 0 if (a_split is not None or v_split is not None) else None
                    if result.split != want:
                        checks.append((result, np.zeros(0)))  # fails: wrong split
    assert_arrays_equal(checks)


def test_convolve_batch_heat_examples_and_other_layouts():
    batch = ht.ones((3, 10), split=0)
    kernels = ht.arange(6).reshape((3, 2)).astype(ht.float32)
    valid = ht.convolve(batch, kernels, mode="valid")
    full = ht.convolve(batch, ht.arange(2).astype(ht.float32), mode="full")
    a = random_array((5, 7), seed=3)
    v = random_array((5, 3), seed=4)
    checks = [
        (valid, np.repeat([[1.0], [5.0], [9.0]], 9, axis=1).astype(np.float32)),
        (full, batch_oracle(np.ones((3, 10)), np.arange(2.0), "full", 1).astype(np.float32)),
        # a batch split along its last axis is resplit along axis 0
        (
            ht.convolve(ht.array(a, split=1), ht.array(v, split=1), "same"),
            batch_oracle(a, v, "same", 1),
        ),
        (
            ht.convolve(ht.array(a, split=1), ht.array(v[0]), "full", 2),
            batch_oracle(a, v[0], "full", 2),
        ),
        # the split of a batched kernel along a batch axis is kept
        (ht.convolve(ht.array(a), ht.array(v, split=0), "valid"), batch_oracle(a, v, "valid", 1)),
        # a 1-D a with a batched v: the swapped call
        (
            ht.convolve(ht.array(v[0], split=0), ht.array(a, split=0), "same"),
            batch_oracle(a, v[0], "same", 1),
        ),
        # 3-D batch split along axis 1; kernels in another layout of that axis
        (
            ht.convolve(
                ht.array(random_array((2, 5, 6), seed=5), split=1),
                skewed(ht.array(random_array((2, 5, 3), seed=6), split=1)),
                "full",
            ),
            batch_oracle(
                random_array((2, 5, 6), seed=5), random_array((2, 5, 3), seed=6), "full", 1
            ),
        ),
    ]
    collective_assert(valid.split == 0 and full.split == 0 and checks[2][0].split == 0)
    collective_assert(checks[4][0].split == 0 and checks[6][0].split == 1)
    assert_arrays_equal(checks)


# (signal shape, kernel shape, stride): uneven shapes, kernels longer than the local blocks
# along either axis and than the signal, fewer rows or columns than processes
CASES_2D = (
    ((5, 6), (2, 3), 1),
    ((7, 3), (3, 2), (2, 3)),
    ((1, 4), (1, 1), 1),
    ((2, 9), (4, 4), (1, 2)),
    ((12, 10), (6, 5), 2),
    ((3, 5), (4, 2), 1),  # mode valid: neither fits the other
    ((2, 3), (5, 6), (3, 1)),  # mode valid: swapped
)


@pytest.mark.parametrize("mode", MODES)
def test_convolve2d_matches_scipy(mode):
    checks, expected_errors = [], []
    for index, (a_shape, v_shape, stride) in enumerate(CASES_2D):
        dtype = DTYPES[index % len(DTYPES)]
        a = random_array(a_shape, dtype=dtype, seed=sum(a_shape))
        v = random_array(v_shape, dtype=dtype, seed=7 * sum(v_shape))
        steps = stride if isinstance(stride, tuple) else (stride, stride)
        try:
            expected = strided(scipy.signal.convolve2d(a, v, mode=mode), steps)
        except ValueError:
            expected = None
        for a_split, v_split in ((None, None), (0, None), (1, None), (-1, 0), (None, 1), (0, 1)):
            xs = layouts(a, a_split) if v_split is None else [ht.array(a, split=a_split)]
            for x in xs:
                kernel = ht.array(v, split=v_split)
                if expected is None:
                    expected_errors.append(
                        (ValueError, ht.signal.convolve2d, (x, kernel), {"mode": mode})
                    )
                    continue
                result = ht.signal.convolve2d(x, kernel, mode=mode, stride=stride)
                checks.append((result, expected, options(dtype)))
                if not result.balanced:
                    checks.append((result, np.zeros(0)))  # fails: must be balanced
    assert_arrays_equal(checks)
    expect_errors(expected_errors)


def test_convolve2d_split_of_result():
    a = random_array((6, 5), seed=3)
    v = random_array((2, 2), seed=4)
    results = [
        ht.signal.convolve2d(ht.array(a, split=0), v).split,
        ht.signal.convolve2d(ht.array(a, split=1), v).split,
        ht.signal.convolve2d(a, ht.array(v, split=1)).split,
        ht.signal.convolve2d(a, v).split,
        # swapped in mode valid: the larger operand is the signal
        ht.signal.convolve2d(ht.array(v, split=0), ht.array(a, split=1), mode="valid").split,
    ]
    collective_assert(results == [0, 1, 1, None, 1], f"result splits {results}")


def test_convolve2d_bad_input_raises_on_every_rank():
    a = ht.ones((5, 4), split=0)
    v = ht.ones((2, 2))
    expect_errors(
        [
            (ValueError, ht.signal.convolve2d, (ht.ones(5, split=0), v), {}),
            (ValueError, ht.signal.convolve2d, (a, ht.ones(3)), {}),
            (ValueError, ht.signal.convolve2d, (ht.zeros((0, 3), split=0), v), {}),
            (ValueError, ht.signal.convolve2d, (a, ht.ones((6, 2))), {"mode": "valid"}),
            (ValueError, ht.signal.convolve2d, (a, v), {"mode": "circular"}),
            (ValueError, ht.signal.convolve2d, (a, v), {"stride": (1, 0)}),
            (ValueError, ht.signal.convolve2d, (a, v), {"stride": (1, 2, 3)}),
            (TypeError, ht.signal.convolve2d, (a, v), {"stride": (1, 2.0)}),
            (TypeError, ht.signal.convolve2d, (a, v), {"stride": "2"}),
        ]
    )


def test_inputs_keep_their_halos():
    x = ht.arange(12, split=0, dtype=ht.float64)
    x.get_halo(1)
    before = (x.halo_prev, x.halo_next)
    ht.signal.convolve(x, ht.ones(4))
    collective_assert(x.halo_prev is before[0] and x.halo_next is before[1], "halos changed")
