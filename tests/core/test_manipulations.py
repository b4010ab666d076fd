"""
Tests of heat/core/manipulations.py: NumPy is the oracle (torch for ``unfold``).

The checking machinery (:class:`Checks`, :func:`inputs`, :func:`skewed`, :func:`expect_errors`)
lives in tests/helpers.py, shared with tests/core/test_joining.py.

Every function runs on every split of shapes that divide unevenly, have fewer rows than
processes or are empty, on balanced and on skewed (unbalanced) inputs; bad input raises on every
rank and leaves the communicator usable.

Results are checked in batches (:class:`Checks`): each process compares its own block with the
matching slice of the NumPy result and checks the layout invariants of ``tests/helpers.
check_layout`` from one all-gather of the local shapes per test, so a test costs two collectives
for checking however many results it checks.
"""

import numpy as np
import pytest
import torch

import heat as ht
from tests.helpers import (
    SHAPES,
    Checks,
    assert_array_equal,
    assert_raises_then_collective_works,
    collective_assert,
    error_operands,
    expect_errors,
    inputs,
    random_array,
    shape_id,
    skewed,
)


# ---------------------------------------------------------------------------------------------
# reshape, flatten, ravel
# ---------------------------------------------------------------------------------------------
def reshape_targets(shape):
    size = int(np.prod(shape))
    targets = [(size,), tuple(reversed(shape)) + (1,)]
    if size % 2 == 0 and size:
        targets.append((2, -1))
    if size % 3 == 0 and size:
        targets.append((size // 3, 1, 3))
    if size == 0:
        targets.append((3, 0, 2))
    return targets


@pytest.mark.parametrize("shape", SHAPES, ids=shape_id)
def test_reshape(shape):
    check = Checks()
    for data, x, label in inputs(shape):
        for i, target in enumerate(reshape_targets(shape)):
            expected = data.reshape(target)
            # the default split, and one explicit split (cycling through the output axes)
            for new_split in (None, (i + len(label)) % expected.ndim):
                result = ht.reshape(x, target, new_split=new_split)
                check(result, expected, f"{label} -> {target} new_split={new_split}")
                if new_split is not None:
                    check.expect(result.split == new_split, f"split {result.split}")
                elif x.split is None:
                    check.expect(result.split is None, "split not None")
                else:
                    check.expect(result.split is not None, "split lost")
    check.verify()


@pytest.mark.parametrize("dtype", [np.int64, np.bool_, np.complex64])
def test_reshape_dtypes_and_forms(dtype):
    check = Checks()
    for data, x, label in inputs((4, 6), dtype, skew=False):
        check(ht.reshape(x, 3, 8), data.reshape(3, 8), label)
        check(x.reshape((2, 2, 6)), data.reshape(2, 2, 6), label)
        check(x.reshape(24), data.reshape(24), label)
        check(x.reshape(-1, 12), data.reshape(-1, 12), label)
    check.verify()


@pytest.mark.parametrize("split", [0, 1, 2])
def test_reshape_default_split(split):
    data = random_array((4, 6, 5), np.float32)
    x = ht.array(data, split=split)
    # the split axis survives: it is kept (and no data moves); otherwise axis 0
    cases = {
        0: [((4, 30), 0), ((2, 2, 6, 5), 0), ((4, 2, 3, 5), 0)],
        1: [((24, 5), 0), ((2, 2, 6, 5), 2), ((4, 6, 5, 1), 1)],
        2: [((2, 12, 5), 2), ((120,), 0), ((24, 5), 1)],
    }
    check = Checks()
    for target, expected_split in cases[split]:
        result = ht.reshape(x, target)
        check(result, data.reshape(target), f"{target}")
        check.expect(
            result.split == expected_split, f"{target}: split {result.split} != {expected_split}"
        )
    check.verify()


def _shares_memory(result, x):
    """Whether this process's block of ``result`` is a view of ``x``'s (vacuous when empty)."""
    if result.larray.numel() == 0:
        return True
    return result.larray.untyped_storage().data_ptr() == x.larray.untyped_storage().data_ptr()


@pytest.mark.parametrize("dtype", [np.float32, np.int16, np.bool_, np.complex128])
def test_reshape_without_moving_data(dtype):
    # every process holds the same flat elements in both balanced layouts: a local reshape that
    # returns a view (as NumPy does), at every process count
    p = ht.MPI_WORLD.size
    check = Checks()
    cases = [
        ((6 * p, 10), (10 * p, 6), 0),  # the benchmark's (2000, 2000) -> (2500, 1600) at p=2
        ((4 * p, 3), (12 * p,), 0),  # flattening
        ((3, 2 * p, 5), (3, 10 * p), 1),  # the same flat ranges of each of 3 leading slices
        ((2, 3, 4 * p), (2, 3, 2 * p, 2), 2),
    ]
    for shape, target, split in cases:
        data = random_array(shape, dtype, seed=2)
        x = ht.array(data, split=split)
        result = ht.reshape(x, target, new_split=split)
        check(result, data.reshape(target), f"{shape} -> {target}")
        check.expect(result.balanced is True or result.is_balanced(), f"{target} not balanced")
        collective_assert(_shares_memory(result, x), f"{shape} -> {target} moved data")
        # the view behaves like NumPy's: writing it writes the input
        if result.larray.numel():
            result.larray.view(-1)[0] = result.larray.view(-1)[1]
    check.verify()


@pytest.mark.parametrize("dtype", [np.float64, np.int8, np.bool_, np.complex64])
def test_reshape_that_must_move_data(dtype):
    # uneven or unbalanced layouts whose flat ranges differ: the shortcut must not fire, the
    # ranges are redistributed (strided views of every leading slice when it is not the first axis)
    p = ht.MPI_WORLD.size
    check = Checks()
    cases = [
        ((7, 6), (6, 7), 0),
        ((7, 3, 2), (21, 2), 0),
        ((3, 7, 4), (3, 4, 7), 1),
        ((2, 5, 3), (2, 15), 1),
        ((1, 2), (2, 1), 0),  # fewer rows than processes
    ]
    for shape, target, split in cases:
        data = random_array(shape, dtype, seed=4)
        for x, label in ((ht.array(data, split=split), "balanced"),):
            result = ht.reshape(x, target, new_split=split)
            check(result, data.reshape(target), f"{label} {shape} -> {target}")
    # an unbalanced input whose balanced layout would not move anything
    data = random_array((6 * p, 10), dtype, seed=5)
    x = skewed(ht.array(data, split=0))
    result = ht.reshape(x, (10 * p, 6), new_split=0)
    check(result, data.reshape(10 * p, 6), "skewed")
    if p > 1:
        moved = ht.MPI_WORLD.allreduce(not _shares_memory(result, x), op=ht.MPI.LOR)
        check.expect(moved, "a skewed input must be redistributed")
    # a transposed (non-contiguous) block whose flat ranges coincide: copied locally, no exchange
    y = ht.transpose(ht.array(np.ascontiguousarray(data.T), split=1))
    check(ht.reshape(y, (10 * p, 6), new_split=0), data.reshape(10 * p, 6), "transposed")
    check.verify()


def test_reshape_scalar_and_size_one():
    check = Checks()
    data = random_array((1, 1), np.float32)
    for split in (None, 0, 1):
        x = ht.array(data, split=split)
        check(ht.reshape(x, ()), data.reshape(()), f"split={split}")
        check(ht.reshape(x, (1, 1, 1), new_split=2), data.reshape(1, 1, 1), f"split={split}")
    check(ht.reshape(ht.array(3.0), (1, 1), new_split=1), np.full((1, 1), 3.0, np.float32))
    check.verify()


@pytest.mark.parametrize("shape", SHAPES + ((),), ids=shape_id)
def test_flatten_ravel(shape):
    check = Checks()
    for data, x, label in inputs(shape, np.int64):
        flat = ht.flatten(x)
        check(flat, data.flatten(), label)
        check.expect(flat.split == (None if x.split is None else 0), f"{label}: split")
        check(ht.ravel(x), data.ravel(), label)
        check(x.flatten(), data.flatten(), label)
        flat.larray.zero_()  # flatten copies
        check(x, data, label + " after modifying flatten's result")
    check.verify()


# ---------------------------------------------------------------------------------------------
# squeeze, expand_dims, broadcast
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(1, 5), (3, 1, 4), (1, 1), (1,), (2, 1)], ids=shape_id)
def test_squeeze(shape):
    check = Checks()
    axes = [None] + [i for i, d in enumerate(shape) if d == 1]
    if len(axes) > 2:
        axes.append(tuple(axes[1:]))
    for data, x, label in inputs(shape, np.float64):
        for axis in axes:
            result = ht.squeeze(x, axis)
            check(result, np.squeeze(data, axis), f"{label} axis={axis}")
            if x.split is not None and result.ndim:
                check.expect(result.split is not None, "squeeze lost the split")
        check(x.squeeze(), np.squeeze(data), label)
    check.verify()


@pytest.mark.parametrize("shape", SHAPES, ids=shape_id)
def test_expand_dims(shape):
    check = Checks()
    for data, x, label in inputs(shape, np.int32):
        for axis in (0, -1, 1, (0, 2), (-1, 0)):
            check(ht.expand_dims(x, axis), np.expand_dims(data, axis), f"{label} axis={axis}")
        check(x.expand_dims(0), np.expand_dims(data, 0), label)
    check.verify()


BROADCASTS = [
    ((1, 5), (4, 5)),
    ((1, 5), (3, 4, 5)),
    ((5,), (3, 5)),
    ((3, 1), (3, 6)),
    ((3, 1), (2, 3, 2)),
    ((1,), (7,)),
    ((1, 2), (0, 2)),
    ((2, 3), (4, 2, 3)),
]


def test_broadcast_to():
    check = Checks()
    for shape, target in BROADCASTS:
        for data, x, label in inputs(shape):
            result = ht.broadcast_to(x, target)
            check(result, np.broadcast_to(data, target), f"{shape}->{target} {label}")
            if x.split is not None:
                check.expect(result.split == x.split + len(target) - len(shape), "split")
    check.verify()


def test_broadcast_arrays():
    check = Checks()
    for splits in ((None, None), (None, 0), (0, 0), (1, None)):
        a_np = random_array((3, 1), np.float32)
        b_np = random_array((4,), np.int64, seed=1)
        a, b = ht.array(a_np, split=splits[0]), ht.array(b_np, split=splits[1])
        results = ht.broadcast_arrays(a, b)
        check.expect(isinstance(results, tuple) and len(results) == 2, "not a pair")
        for r, e in zip(results, np.broadcast_arrays(a_np, b_np)):
            check(r, e, f"splits={splits}")
    check.verify()


# ---------------------------------------------------------------------------------------------
# transpose, swapaxes, moveaxis
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("shape", SHAPES + ((),), ids=shape_id)
def test_transpose_family(shape):
    check = Checks()
    ndim = len(shape)
    for data, x, label in inputs(shape):
        check(ht.transpose(x), data.T, label)
        check(x.T, data.T, label)
        if ndim >= 2:
            axes = tuple(range(1, ndim)) + (0,)
            result = ht.transpose(x, axes)
            check(result, np.transpose(data, axes), f"{label} axes={axes}")
            if x.split is not None:
                check.expect(result.split == axes.index(x.split), "split did not move")
            negative = (-1,) + tuple(range(ndim - 1))
            check(x.transpose(negative), np.transpose(data, negative), label)
            check(ht.swapaxes(x, 0, -1), np.swapaxes(data, 0, -1), label)
            check(ht.moveaxis(x, 0, -1), np.moveaxis(data, 0, -1), label)
        if ndim == 3:
            check(ht.moveaxis(x, (0, 1), (2, 0)), np.moveaxis(data, (0, 1), (2, 0)), label)
    check.verify()


# ---------------------------------------------------------------------------------------------
# flip, rot90, roll
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("shape", SHAPES + ((),), ids=shape_id)
def test_flip(shape):
    check = Checks()
    ndim = len(shape)
    for data, x, label in inputs(shape, np.int64):
        for axis in [None] + list(range(ndim)) + ([(0, -1)] if ndim > 1 else []):
            result = ht.flip(x, axis)
            check(result, np.flip(data, axis), f"{label} axis={axis}")
        if ndim >= 2:
            check(ht.fliplr(x), np.fliplr(data), label)
        if ndim >= 1:
            check(ht.flipud(x), np.flipud(data), label)
    check.verify()


@pytest.mark.parametrize("shape", [(5, 6), (2, 3, 4), (1, 5), (0, 3)], ids=shape_id)
def test_rot90(shape):
    check = Checks()
    for data, x, label in inputs(shape, skew=False):
        for k in (-1, 0, 1, 2, 3, 5):
            check(ht.rot90(x, k), np.rot90(data, k), f"{label} k={k}")
        if len(shape) == 3:
            check(ht.rot90(x, 1, (2, 0)), np.rot90(data, 1, (2, 0)), label)
    check.verify()


@pytest.mark.parametrize("shape", SHAPES, ids=shape_id)
def test_roll(shape):
    check = Checks()
    for data, x, label in inputs(shape):
        check(ht.roll(x, 8), np.roll(data, 8), f"{label} shift=8 axis=None")
        for shift in (-3, 8):
            for axis in range(len(shape)):
                result = ht.roll(x, shift, axis)
                check(result, np.roll(data, shift, axis), f"{label} shift={shift} axis={axis}")
        if len(shape) >= 2:
            check(ht.roll(x, (2, -1), (0, 1)), np.roll(data, (2, -1), (0, 1)), label)
            check(ht.roll(x, (2, 3), (0, 0)), np.roll(data, (2, 3), (0, 0)), label)
            check(ht.roll(x, 1, (0, 1)), np.roll(data, 1, (0, 1)), label)
    check.verify()


@pytest.mark.parametrize("dtype", [np.bool_, np.complex64, np.int32])
def test_reorder_dtypes(dtype):
    check = Checks()
    for data, x, label in inputs((5, 3), dtype, skew=False):
        check(ht.flip(x, 0), np.flip(data, 0), label)
        check(ht.roll(x, 2, 0), np.roll(data, 2, 0), label)
        check(ht.rot90(x), np.rot90(data), label)
        check(ht.transpose(x), data.T, label)
        check(ht.swapaxes(x, 0, 1), data.swapaxes(0, 1), label)
    check.verify()


# ---------------------------------------------------------------------------------------------
# pad, repeat, tile
# ---------------------------------------------------------------------------------------------
PAD_MODES = ["constant", "edge", "reflect", "symmetric", "wrap"]


PAD_CASES = [
    (shape, mode)
    for mode in PAD_MODES
    for shape in ((7,), (5, 6), (1, 5), (0, 3))
    if mode == "constant" or 0 not in shape
]  # NumPy cannot extend empty axes otherwise


@pytest.mark.parametrize(
    "shape, mode", PAD_CASES, ids=lambda c: shape_id(c) if isinstance(c, tuple) else c
)
def test_pad(shape, mode):
    check = Checks()
    ndim = len(shape)
    widths = [2, (1, 3), ((0, 2),) * ndim, ((3, 1),) + ((1, 0),) * (ndim - 1)]
    if shape[0] >= 2:
        widths.append((9, 4))  # wider than the axis: repeated reflection / wrapping
    kwargs = {"constant_values": ((1, -2),) * ndim} if mode == "constant" else {}
    for data, x, label in inputs(shape):
        for width in widths:
            result = ht.pad(x, width, mode=mode, **kwargs)
            check(result, np.pad(data, width, mode=mode, **kwargs), f"{label} width={width}")
            check.expect(result.split == x.split, "split changed")
    check.verify()


@pytest.mark.parametrize("dtype", [np.int64, np.bool_, np.complex64])
def test_pad_dtypes(dtype):
    check = Checks()
    widths3 = ((1, 2), (0, 1), (2, 0))
    for data, x, label in inputs((3, 4, 2), dtype, skew=False):
        check(ht.pad(x, 1), np.pad(data, 1), label)
        check(ht.pad(x, widths3, mode="reflect"), np.pad(data, widths3, mode="reflect"), label)
        check(ht.pad(x, 1, mode="symmetric"), np.pad(data, 1, mode="symmetric"), label)
        if dtype is np.int64:
            check(
                ht.pad(x, (2, 1), constant_values=7), np.pad(data, (2, 1), constant_values=7), label
            )
            check(ht.pad(x, 1, constant_values=2.7), np.pad(data, 1, constant_values=2.7), label)
        widths = ((0, 0), (0, 0), (1, 1))
        check(x.pad(widths), np.pad(data, widths), label)
        check(ht.pad(x, 0), np.pad(data, 0), label)
    check.verify()


@pytest.mark.parametrize("shape", SHAPES + ((),), ids=shape_id)
def test_repeat(shape):
    check = Checks()
    for data, x, label in inputs(shape, np.int64):
        check(ht.repeat(x, 2), np.repeat(data, 2), label)
        check(ht.repeat(x, 0), np.repeat(data, 0), label)
        reps = np.arange(data.size) % 3
        check(ht.repeat(x, reps), np.repeat(data, reps), f"{label} flat array repeats")
        for axis in range(len(shape)):
            n = shape[axis]
            check(ht.repeat(x, 3, axis), np.repeat(data, 3, axis), f"{label} axis={axis}")
            reps = [(i * 7) % 4 for i in range(n)]
            check(
                ht.repeat(x, reps, axis), np.repeat(data, reps, axis), f"{label} axis={axis} {reps}"
            )
            check(x.repeat([2], axis), np.repeat(data, [2], axis), f"{label} axis={axis} [2]")
    check.verify()


@pytest.mark.parametrize("shape", SHAPES + ((),), ids=shape_id)
def test_tile(shape):
    check = Checks()
    for data, x, label in inputs(shape):
        for reps in (2, (3, 1), (2, 1, 2), (1,) * len(shape), (0, 2), (2,) + (1,) * len(shape)):
            check(ht.tile(x, reps), np.tile(data, reps), f"{label} reps={reps}")
    check.verify()


def test_repeat_tile_dtypes():
    check = Checks()
    for dtype in (np.bool_, np.complex64, np.float64):
        for data, x, label in inputs((3, 2), dtype, skew=False):
            check(ht.repeat(x, [1, 0, 2], 0), np.repeat(data, [1, 0, 2], 0), f"{dtype} {label}")
            check(ht.tile(x, (2, 2)), np.tile(data, (2, 2)), f"{dtype} {label}")
    check.verify()


# ---------------------------------------------------------------------------------------------
# unfold
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(7,), (5, 6), (2, 3, 4), (1, 5), (0, 3)], ids=shape_id)
def test_unfold(shape):
    check = Checks()
    for data, x, label in inputs(shape, np.float64):
        for axis in range(len(shape)):
            n = shape[axis]
            for size, step in ((2, 1), (n, 1), (3, 2)):
                if not 1 <= size <= n:
                    continue
                expected = torch.from_numpy(data).unfold(axis, size, step).numpy()
                result = ht.unfold(x, axis, size, step)
                check(result, expected, f"{label} axis={axis} size={size} step={step}")
                check.expect(result.split == x.split, "split changed")
    check.verify()


def test_unfold_dtypes():
    check = Checks()
    for dtype in (np.int64, np.bool_, np.complex64):
        for data, x, label in inputs((9, 2), dtype, skew=False):
            expected = torch.from_numpy(data).unfold(0, 4, 1).numpy()
            check(ht.unfold(x, 0, 4), expected, f"{dtype} {label}")
    check.verify()


# ---------------------------------------------------------------------------------------------
# results with the shared helper (full gather + invariants), as the rest of the suite checks
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("split", [None, 0, 1])
def test_with_shared_helper(split):
    data = random_array((5, 4), np.float32)
    x = ht.array(data, split=split)
    assert_array_equal(ht.reshape(x, (4, 5)), data.reshape(4, 5))
    assert_array_equal(ht.flip(x, 0), np.flip(data, 0))
    assert_array_equal(ht.pad(x, 2, mode="reflect"), np.pad(data, 2, mode="reflect"))


# ---------------------------------------------------------------------------------------------
# bad input: the same exception on every rank, the communicator still works
# ---------------------------------------------------------------------------------------------
def bad_calls(x, y, v):
    return [
        (ValueError, ht.reshape, (x, (5, 5)), {}),
        (ValueError, ht.reshape, (x, (-1, -1)), {}),
        (ValueError, ht.reshape, (x, (-2, 12)), {}),
        (TypeError, ht.reshape, (x, (2.0, 12)), {}),
        (ValueError, ht.reshape, (x, (24,)), {"new_split": 1}),
        (TypeError, ht.reshape, ("not an array", (24,)), {}),
        (ValueError, ht.pad, (x, 1), {"mode": "linear_ramp"}),
        (ValueError, ht.pad, (x, -1), {}),
        (TypeError, ht.pad, (x, 1.5), {}),
        (ValueError, ht.pad, (x, ((1, 2), (3, 4), (5, 6))), {}),
        (ValueError, ht.pad, (ht.zeros((0, 3), split=x.split), 1), {"mode": "reflect"}),
        (ValueError, ht.squeeze, (x, 0), {}),
        (ValueError, ht.expand_dims, (x, 4), {}),
        (ValueError, ht.expand_dims, (x, (0, 0)), {}),
        (ValueError, ht.transpose, (x, (0, 0)), {}),
        (ValueError, ht.transpose, (x, (0,)), {}),
        (ValueError, ht.swapaxes, (x, 0, 2), {}),
        (ValueError, ht.moveaxis, (x, (0, 1), 0), {}),
        (ValueError, ht.flip, (x, 2), {}),
        (ValueError, ht.fliplr, (v,), {}),
        (ValueError, ht.rot90, (x, 1, (0, 0)), {}),
        (ValueError, ht.rot90, (v,), {}),
        (TypeError, ht.rot90, (x, 1.5), {}),
        (ValueError, ht.roll, (x, (1, 2, 3), (0, 1)), {}),
        (TypeError, ht.roll, (x, 1.5, 0), {}),
        (ValueError, ht.roll, (x, 1, 2), {}),
        (ValueError, ht.repeat, (x, [1, 2], 0), {}),
        (ValueError, ht.repeat, (x, -1), {}),
        (TypeError, ht.repeat, (x, 1.5), {}),
        (ValueError, ht.tile, (x, (-1, 2)), {}),
        (TypeError, ht.tile, (x, 2.0), {}),
        (ValueError, ht.broadcast_to, (x, (3, 6)), {}),
        (ValueError, ht.broadcast_to, (x, (6,)), {}),
        (ValueError, ht.broadcast_arrays, (x, y), {}),
        (ValueError, ht.unfold, (x, 0, 5), {}),
        (ValueError, ht.unfold, (x, 1, 0), {}),
        (ValueError, ht.unfold, (x, 0, 2, 0), {}),
        (TypeError, ht.unfold, (x, 0, 2.0), {}),
        (ValueError, ht.unfold, (x, 2, 2), {}),
    ]


@pytest.mark.parametrize("split", [None, 0, 1])
def test_errors(split):
    x, y, v = error_operands(split)
    expect_errors(bad_calls(x, y, v))
    # the communicator still works after all these errors, also for a collective operation
    assert_raises_then_collective_works(ValueError, ht.reshape, x, (7, 7))
    assert_raises_then_collective_works(ValueError, ht.pad, x, 1, mode="unknown")
    assert_array_equal(ht.flip(x, 0), np.flip(x.numpy(), 0))
