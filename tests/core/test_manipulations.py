"""
Tests of heat/core/manipulations.py: NumPy is the oracle (torch for ``unfold``).

Every function runs on every split of shapes that divide unevenly, have fewer rows than
processes or are empty, on balanced and on unbalanced inputs; bad input raises on every rank
and leaves the communicator usable.
"""

import numpy as np
import pytest
import torch

import heat as ht
from tests.helpers import (
    assert_array_equal,
    assert_raises_then_collective_works,
    collective_assert,
    combinations,
    random_array,
    splits_for,
)

SHAPES = ((7,), (5, 6), (2, 3, 4), (1, 5), (0, 3))
COMBOS = list(combinations(SHAPES))


def ids(combo):
    shape, split = combo
    return f"{'x'.join(map(str, shape)) or 'scalar'}-s{split}"


def unbalanced(x):
    """``x`` with a skewed layout (most rows on the last process), if it is distributed."""
    size = x.comm.size
    if x.split is None or size == 1:
        return x
    n = x.shape[x.split]
    counts = [0] * size
    counts[0] = n // 3
    counts[-1] = n - n // 3
    return ht.redistribute(x, counts)


def make(shape, split, dtype=np.float32, seed=0, skew=False):
    data = random_array(shape, dtype=dtype, seed=seed)
    x = ht.array(data, split=split)
    return data, (unbalanced(x) if skew else x)


# ---------------------------------------------------------------------------------------------
# reshape, flatten, ravel
# ---------------------------------------------------------------------------------------------
def reshape_targets(shape):
    size = int(np.prod(shape))
    targets = [(size,), (-1, 1), tuple(reversed(shape))]
    for k in (2, 3):
        if size % k == 0 and size:
            targets.append((k, -1))
            targets.append((size // k, 1, k))
    if size == 0:
        targets.append((3, 0, 2))
    return targets


@pytest.mark.parametrize("combo", COMBOS, ids=ids)
@pytest.mark.parametrize("skew", [False, True])
def test_reshape(combo, skew):
    shape, split = combo
    data, x = make(shape, split, np.float32, skew=skew)
    for target in reshape_targets(shape):
        expected = data.reshape(target)
        for new_split in [None] + list(range(expected.ndim)):
            result = ht.reshape(x, target, new_split=new_split)
            assert_array_equal(result, expected)
            if new_split is not None:
                collective_assert(result.split == new_split, f"split {result.split}")
            elif split is None:
                collective_assert(result.split is None, "split not None")


@pytest.mark.parametrize("dtype", [np.int64, np.bool_, np.complex64])
@pytest.mark.parametrize("split", [None, 0, 1])
def test_reshape_dtypes_and_forms(dtype, split):
    data, x = make((4, 6), split, dtype)
    assert_array_equal(ht.reshape(x, 3, 8), data.reshape(3, 8))
    assert_array_equal(x.reshape((2, 2, 6)), data.reshape(2, 2, 6))
    assert_array_equal(x.reshape(24), data.reshape(24))
    assert_array_equal(x.reshape(-1, 12), data.reshape(-1, 12))


@pytest.mark.parametrize("split", [0, 1, 2])
def test_reshape_default_split(split):
    data, x = make((4, 6, 5), split)
    # the split axis survives: kept (no data moves), else axis 0
    cases = {0: ((4, 30), 0), 1: ((24, 5), 0), 2: ((2, 12, 5), 2)}
    target, expected_split = cases[split]
    result = ht.reshape(x, target)
    assert_array_equal(result, data.reshape(target))
    collective_assert(result.split == expected_split, f"split {result.split} != {expected_split}")
    kept = ht.reshape(x, (2, 2) + x.shape[1:]) if split > 0 else ht.reshape(x, (4, 2, 3, 5))
    expected = data.reshape(kept.shape)
    assert_array_equal(kept, expected)
    collective_assert(kept.split == (split + 1 if split > 0 else 0), f"split {kept.split}")


def test_reshape_scalar_and_size_one():
    data, x = make((1, 1), 0)
    assert_array_equal(ht.reshape(x, ()), data.reshape(()))
    assert_array_equal(ht.reshape(ht.array(3.0), (1, 1), new_split=1), np.full((1, 1), 3.0, np.float32))


@pytest.mark.parametrize("combo", COMBOS, ids=ids)
def test_flatten_ravel(combo):
    shape, split = combo
    data, x = make(shape, split, np.int64, skew=True)
    flat = ht.flatten(x)
    assert_array_equal(flat, data.flatten())
    collective_assert(flat.split == (None if split is None else 0), "split")
    assert_array_equal(ht.ravel(x), data.ravel())
    assert_array_equal(x.flatten(), data.flatten())
    # flatten copies
    flat.larray.zero_()
    assert_array_equal(x, data)


def test_flatten_scalar():
    assert_array_equal(ht.flatten(ht.array(2.5)), np.array([2.5], dtype=np.float32))


# ---------------------------------------------------------------------------------------------
# squeeze, expand_dims, broadcast
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "combo", list(combinations(((1, 5), (3, 1, 4), (1, 1), (1,), (2, 1)))), ids=ids
)
def test_squeeze(combo):
    shape, split = combo
    data, x = make(shape, split, np.float64)
    axes = [None] + [i for i, d in enumerate(shape) if d == 1]
    if len(axes) > 2:
        axes.append(tuple(axes[1:]))
    for axis in axes:
        result = ht.squeeze(x, axis)
        assert_array_equal(result, np.squeeze(data, axis))
        if split is not None and result.ndim and x.comm.size > 1:
            collective_assert(result.split is not None, "squeeze lost the split")
    assert_array_equal(x.squeeze(), np.squeeze(data))


@pytest.mark.parametrize("combo", COMBOS, ids=ids)
def test_expand_dims(combo):
    shape, split = combo
    data, x = make(shape, split, np.int32, skew=True)
    for axis in (0, -1, 1, (0, 2), (-1, 0)):
        if isinstance(axis, int) and not -len(shape) - 1 <= axis <= len(shape):
            continue
        assert_array_equal(ht.expand_dims(x, axis), np.expand_dims(data, axis))
    assert_array_equal(x.expand_dims(0), np.expand_dims(data, 0))


@pytest.mark.parametrize(
    "shape, split, target",
    [
        ((1, 5), 0, (4, 5)),
        ((1, 5), 1, (3, 4, 5)),
        ((5,), 0, (3, 5)),
        ((3, 1), 1, (3, 6)),
        ((3, 1), 0, (2, 3, 2)),
        ((1,), 0, (7,)),
        ((1, 2), 0, (0, 2)),
        ((2, 3), None, (4, 2, 3)),
    ],
)
def test_broadcast_to(shape, split, target):
    data, x = make(shape, split, np.float32)
    result = ht.broadcast_to(x, target)
    assert_array_equal(result, np.broadcast_to(data, target))
    if split is not None:
        collective_assert(result.split == split + len(target) - len(shape), "split")


@pytest.mark.parametrize("splits", [(None, 0), (0, 1), (1, None)])
def test_broadcast_arrays(splits):
    a_np, a = make((3, 1), splits[0], np.float32)
    b_np, b = make((4,), None if splits[1] is None else 0, np.int64, seed=1)
    results = ht.broadcast_arrays(a, b)
    expected = np.broadcast_arrays(a_np, b_np)
    collective_assert(isinstance(results, tuple) and len(results) == 2, "not a pair")
    for r, e in zip(results, expected):
        assert_array_equal(r, e)


# ---------------------------------------------------------------------------------------------
# transpose, swapaxes, moveaxis
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("combo", COMBOS, ids=ids)
def test_transpose_family(combo):
    shape, split = combo
    data, x = make(shape, split, np.float32, skew=True)
    assert_array_equal(ht.transpose(x), data.T)
    assert_array_equal(x.T, data.T)
    ndim = len(shape)
    if ndim >= 2:
        axes = tuple(range(1, ndim)) + (0,)
        result = ht.transpose(x, axes)
        assert_array_equal(result, np.transpose(data, axes))
        if split is not None:
            collective_assert(result.split == axes.index(split % ndim), "split did not move")
        assert_array_equal(x.transpose((-1,) + tuple(range(ndim - 1))),
                           np.transpose(data, (-1,) + tuple(range(ndim - 1))))
        assert_array_equal(ht.swapaxes(x, 0, -1), np.swapaxes(data, 0, -1))
        assert_array_equal(ht.moveaxis(x, 0, -1), np.moveaxis(data, 0, -1))
    if ndim == 3:
        assert_array_equal(ht.moveaxis(x, (0, 1), (2, 0)), np.moveaxis(data, (0, 1), (2, 0)))


# ---------------------------------------------------------------------------------------------
# joining
# ---------------------------------------------------------------------------------------------
SPLIT_PAIRS = [(s1, s2) for s1 in (None, 0, 1) for s2 in (None, 0, 1)]


@pytest.mark.parametrize("splits", SPLIT_PAIRS)
@pytest.mark.parametrize("axis", [0, 1])
def test_concatenate_pairs(splits, axis):
    shapes = ((5, 3), (2, 3)) if axis == 0 else ((3, 5), (3, 2))
    a_np, a = make(shapes[0], splits[0], np.float32, skew=True)
    b_np, b = make(shapes[1], splits[1], np.float32, seed=1)
    result = ht.concatenate([a, b], axis=axis)
    assert_array_equal(result, np.concatenate([a_np, b_np], axis=axis))
    chosen = [s for s in splits if s is not None]
    if chosen and len(set(chosen)) == 1:
        collective_assert(result.split == chosen[0], f"split {result.split}")
    if result.split is not None:
        collective_assert(result.is_balanced(), "unbalanced")


@pytest.mark.parametrize("split", [None, 0, 1, 2])
def test_concatenate_many(split):
    arrays = [random_array((k, 2, 3), np.int64, seed=k) for k in (0, 3, 1, 4)]
    hts = [ht.array(a, split=split) for a in arrays]
    assert_array_equal(ht.concatenate(hts, axis=0), np.concatenate(arrays, axis=0))
    arrays1 = [random_array((2, k, 3), np.int32, seed=k) for k in (1, 0, 4)]
    hts1 = [ht.array(a, split=split) for a in arrays1]
    assert_array_equal(ht.concatenate(hts1, axis=1), np.concatenate(arrays1, axis=1))
    assert_array_equal(ht.concatenate(hts1, axis=None), np.concatenate(arrays1, axis=None))


@pytest.mark.parametrize("split", [None, 0])
def test_concatenate_dtypes(split):
    a_np = random_array((3, 2), np.int32)
    b_np = random_array((4, 2), np.float32, seed=1)
    c_np = random_array((2, 2), np.bool_, seed=2)
    a, b, c = (ht.array(v, split=split) for v in (a_np, b_np, c_np))
    assert_array_equal(ht.concatenate((a, b, c)), np.concatenate((a_np, b_np, c_np)))
    z_np = random_array((3, 2), np.complex64, seed=3)
    assert_array_equal(ht.concatenate((ht.array(z_np, split=split), b)),
                       np.concatenate((z_np, b_np)))
    assert_array_equal(ht.concatenate((c, c)), np.concatenate((c_np, c_np)))
    out = ht.zeros((5, 2), dtype=ht.float64, split=split)
    ht.concatenate((c, a), out=out)
    assert_array_equal(out, np.concatenate((c_np, a_np)).astype(np.float64))


@pytest.mark.parametrize("splits", [(None, None), (0, 0), (0, None), (None, 0)])
def test_stack_family(splits):
    a_np, a = make((5,), splits[0], np.float32)
    b_np, b = make((5,), splits[1], np.float32, seed=1)
    for axis in (0, 1, -1):
        assert_array_equal(ht.stack([a, b], axis=axis), np.stack([a_np, b_np], axis=axis))
    assert_array_equal(ht.hstack([a, b]), np.hstack([a_np, b_np]))
    assert_array_equal(ht.vstack([a, b]), np.vstack([a_np, b_np]))
    assert_array_equal(ht.row_stack([a, b]), np.vstack([a_np, b_np]))
    assert_array_equal(ht.column_stack([a, b]), np.column_stack([a_np, b_np]))
    assert_array_equal(ht.dstack([a, b]), np.dstack([a_np, b_np]))
    m_np, m = make((5, 2), splits[0], np.float32, seed=2)
    assert_array_equal(ht.column_stack([a, m]), np.column_stack([a_np, m_np]))
    assert_array_equal(ht.hstack([m, m]), np.hstack([m_np, m_np]))
    assert_array_equal(ht.vstack([m, m]), np.vstack([m_np, m_np]))
    assert_array_equal(ht.dstack([m, m]), np.dstack([m_np, m_np]))
    t_np, t = make((2, 3, 4), splits[0], np.float32, seed=3)
    assert_array_equal(ht.stack([t, t], axis=2), np.stack([t_np, t_np], axis=2))


# ---------------------------------------------------------------------------------------------
# splitting
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("combo", [c for c in COMBOS if c[0] != (0, 3)] + [((0, 3), 0)], ids=ids)
@pytest.mark.parametrize("skew", [False, True])
def test_split(combo, skew):
    shape, split = combo
    data, x = make(shape, split, np.float32, skew=skew)
    for axis in range(len(shape)):
        n = shape[axis]
        specs = [[1, 3], [-2, 10], [2, 1]]
        for k in (1, 2, 3):
            if n % k == 0:
                specs.append(k)
        for spec in specs:
            pieces = ht.split(x, spec, axis=axis)
            expected = np.split(data, spec, axis=axis)
            collective_assert(len(pieces) == len(expected), "piece count")
            for piece, e in zip(pieces, expected):
                assert_array_equal(piece, e)
        for spec in (2, 4):
            pieces = ht.array_split(x, spec, axis=axis)
            for piece, e in zip(pieces, np.array_split(data, spec, axis=axis)):
                assert_array_equal(piece, e)


def test_hsplit_vsplit_dsplit():
    data, x = make((4, 6, 2), 1)
    for piece, e in zip(ht.hsplit(x, 3), np.hsplit(data, 3)):
        assert_array_equal(piece, e)
    for piece, e in zip(ht.vsplit(x, [1]), np.vsplit(data, [1])):
        assert_array_equal(piece, e)
    for piece, e in zip(ht.dsplit(x, 2), np.dsplit(data, 2)):
        assert_array_equal(piece, e)
    v_np, v = make((7,), 0)
    for piece, e in zip(ht.hsplit(v, [3, 5]), np.hsplit(v_np, [3, 5])):
        assert_array_equal(piece, e)
    pieces = ht.split(v, ht.array([2, 4]))
    for piece, e in zip(pieces, np.split(v_np, [2, 4])):
        assert_array_equal(piece, e)


# ---------------------------------------------------------------------------------------------
# flip, rot90, roll
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("combo", COMBOS, ids=ids)
@pytest.mark.parametrize("skew", [False, True])
def test_flip(combo, skew):
    shape, split = combo
    data, x = make(shape, split, np.int64, skew=skew)
    for axis in [None] + list(range(len(shape))) + ([(0, -1)] if len(shape) > 1 else []):
        result = ht.flip(x, axis)
        assert_array_equal(result, np.flip(data, axis))
    if len(shape) >= 2:
        assert_array_equal(ht.fliplr(x), np.fliplr(data))
    assert_array_equal(ht.flipud(x), np.flipud(data))


@pytest.mark.parametrize("combo", [c for c in COMBOS if len(c[0]) >= 2], ids=ids)
def test_rot90(combo):
    shape, split = combo
    data, x = make(shape, split, np.float32)
    for k in (-1, 0, 1, 2, 3, 5):
        assert_array_equal(ht.rot90(x, k), np.rot90(data, k))
    if len(shape) == 3:
        assert_array_equal(ht.rot90(x, 1, (2, 0)), np.rot90(data, 1, (2, 0)))


@pytest.mark.parametrize("combo", COMBOS, ids=ids)
@pytest.mark.parametrize("skew", [False, True])
def test_roll(combo, skew):
    shape, split = combo
    data, x = make(shape, split, np.float32, skew=skew)
    for shift in (1, -3, 8):
        assert_array_equal(ht.roll(x, shift), np.roll(data, shift))
        for axis in range(len(shape)):
            result = ht.roll(x, shift, axis)
            assert_array_equal(result, np.roll(data, shift, axis))
    if len(shape) >= 2:
        assert_array_equal(ht.roll(x, (2, -1), (0, 1)), np.roll(data, (2, -1), (0, 1)))
        assert_array_equal(ht.roll(x, (2, 3), (0, 0)), np.roll(data, (2, 3), (0, 0)))
        assert_array_equal(ht.roll(x, 1, (0, 1)), np.roll(data, 1, (0, 1)))


@pytest.mark.parametrize("dtype", [np.bool_, np.complex64, np.int32])
@pytest.mark.parametrize("split", [None, 0])
def test_reorder_dtypes(dtype, split):
    data, x = make((5, 3), split, dtype)
    assert_array_equal(ht.flip(x, 0), np.flip(data, 0))
    assert_array_equal(ht.roll(x, 2, 0), np.roll(data, 2, 0))
    assert_array_equal(ht.rot90(x), np.rot90(data))
    assert_array_equal(ht.transpose(x), data.T)


# ---------------------------------------------------------------------------------------------
# pad, repeat, tile
# ---------------------------------------------------------------------------------------------
PAD_MODES = ["constant", "edge", "reflect", "symmetric", "wrap"]


@pytest.mark.parametrize("combo", [c for c in COMBOS if len(c[0]) <= 2], ids=ids)
@pytest.mark.parametrize("mode", PAD_MODES)
def test_pad(combo, mode):
    shape, split = combo
    data, x = make(shape, split, np.float32, skew=True)
    widths = [2, (1, 3), ((0, 2),) * len(shape), ((3, 1),) + ((1, 0),) * (len(shape) - 1)]
    if shape[0] >= 2:
        widths.append((9, 4))  # wider than the axis: repeated reflection / wrapping
    for width in widths:
        kwargs = {"constant_values": ((1, -2),) * len(shape)} if mode == "constant" else {}
        if mode != "constant" and 0 in shape:
            continue
        expected = np.pad(data, width, mode=mode, **kwargs)
        result = ht.pad(x, width, mode=mode, **kwargs)
        assert_array_equal(result, expected)
        collective_assert(result.split == x.split, "split changed")


@pytest.mark.parametrize("dtype", [np.int64, np.bool_, np.complex64])
@pytest.mark.parametrize("split", [None, 0, 1])
def test_pad_dtypes(dtype, split):
    data, x = make((3, 4, 2), split, dtype)
    assert_array_equal(ht.pad(x, 1), np.pad(data, 1))
    assert_array_equal(ht.pad(x, ((1, 2), (0, 1), (2, 0)), mode="reflect"),
                       np.pad(data, ((1, 2), (0, 1), (2, 0)), mode="reflect"))
    if dtype is np.int64:
        assert_array_equal(ht.pad(x, (2, 1), constant_values=7), np.pad(data, (2, 1), constant_values=7))
    assert_array_equal(x.pad(((0, 0), (0, 0), (1, 1))), np.pad(data, ((0, 0), (0, 0), (1, 1))))


@pytest.mark.parametrize("combo", COMBOS, ids=ids)
def test_repeat(combo):
    shape, split = combo
    data, x = make(shape, split, np.int64, skew=True)
    assert_array_equal(ht.repeat(x, 2), np.repeat(data, 2))
    assert_array_equal(ht.repeat(x, 0), np.repeat(data, 0))
    for axis in range(len(shape)):
        n = shape[axis]
        assert_array_equal(ht.repeat(x, 3, axis), np.repeat(data, 3, axis))
        reps = [(i * 7) % 4 for i in range(n)]
        assert_array_equal(ht.repeat(x, reps, axis), np.repeat(data, reps, axis))
        assert_array_equal(x.repeat([2], axis), np.repeat(data, [2], axis))
    reps = np.arange(data.size) % 3
    assert_array_equal(ht.repeat(x, reps), np.repeat(data, reps))


@pytest.mark.parametrize("combo", COMBOS, ids=ids)
def test_tile(combo):
    shape, split = combo
    data, x = make(shape, split, np.float32, skew=True)
    for reps in (2, (3, 1), (2, 1, 2), (1,) * len(shape), (0, 2), (2,) + (1,) * len(shape)):
        assert_array_equal(ht.tile(x, reps), np.tile(data, reps))


def test_repeat_tile_dtypes_scalar():
    for dtype in (np.bool_, np.complex64):
        data, x = make((3, 2), 0, dtype)
        assert_array_equal(ht.repeat(x, [1, 0, 2], 0), np.repeat(data, [1, 0, 2], 0))
        assert_array_equal(ht.tile(x, (2, 2)), np.tile(data, (2, 2)))
    s = ht.array(4)
    assert_array_equal(ht.repeat(s, 3), np.repeat(np.array(4), 3))
    assert_array_equal(ht.tile(s, (2, 3)), np.tile(np.array(4), (2, 3)))


# ---------------------------------------------------------------------------------------------
# unfold
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("combo", [c for c in COMBOS if 0 not in c[0]] + [((0, 3), 0)], ids=ids)
def test_unfold(combo):
    shape, split = combo
    data, x = make(shape, split, np.float64, skew=True)
    for axis in range(len(shape)):
        n = shape[axis]
        for size, step in ((1, 1), (2, 1), (n, 1), (2, 3), (min(3, n), 2)):
            if not 1 <= size <= n:
                continue
            expected = torch.from_numpy(data).unfold(axis, size, step).numpy()
            result = ht.unfold(x, axis, size, step)
            assert_array_equal(result, expected)
            collective_assert(result.split == x.split, "split changed")


# ---------------------------------------------------------------------------------------------
# bad input: the same exception on every rank, the communicator still works
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("split", [None, 0, 1])
def test_errors(split):
    x = ht.array(random_array((4, 6), np.float32), split=split)
    y = ht.array(random_array((3, 5), np.float32), split=split)
    v = ht.array(random_array((5,), np.float32), split=0 if split is not None else None)
    check = assert_raises_then_collective_works
    check(ValueError, ht.reshape, x, (5, 5))
    check(ValueError, ht.reshape, x, (-1, -1))
    check(ValueError, ht.reshape, x, (-2, 12))
    check(TypeError, ht.reshape, x, (2.0, 12))
    check(ValueError, ht.reshape, x, (24,), new_split=1)
    check(TypeError, ht.reshape, "not an array", (24,))
    check(ValueError, ht.concatenate, [x, y])
    check(ValueError, ht.concatenate, [x, x], axis=2)
    check(ValueError, ht.concatenate, [x, v])
    check(ValueError, ht.concatenate, [])
    check(TypeError, ht.concatenate, x)
    check(ValueError, ht.concatenate, [ht.array(1.0), ht.array(2.0)])
    check(ValueError, ht.stack, [x, y])
    check(ValueError, ht.pad, x, 1, mode="linear_ramp")
    check(ValueError, ht.pad, x, -1)
    check(TypeError, ht.pad, x, 1.5)
    check(ValueError, ht.pad, x, ((1, 2), (3, 4), (5, 6)))
    check(ValueError, ht.pad, ht.zeros((0, 3), split=split), 1, mode="reflect")
    check(ValueError, ht.split, x, 5)
    check(ValueError, ht.split, x, 0)
    check(ValueError, ht.split, x, 2, axis=2)
    check(TypeError, ht.split, x, 2.5)
    check(ValueError, ht.vsplit, v, 1)
    check(ValueError, ht.dsplit, x, 1)
    check(ValueError, ht.squeeze, x, 0)
    check(ValueError, ht.expand_dims, x, 4)
    check(ValueError, ht.expand_dims, x, (0, 0))
    check(ValueError, ht.transpose, x, (0, 0))
    check(ValueError, ht.transpose, x, (0,))
    check(ValueError, ht.swapaxes, x, 0, 2)
    check(ValueError, ht.moveaxis, x, (0, 1), 0)
    check(ValueError, ht.flip, x, 2)
    check(ValueError, ht.fliplr, v)
    check(ValueError, ht.rot90, x, 1, (0, 0))
    check(ValueError, ht.rot90, v)
    check(TypeError, ht.rot90, x, 1.5)
    check(ValueError, ht.roll, x, (1, 2, 3), (0, 1))
    check(TypeError, ht.roll, x, 1.5, 0)
    check(ValueError, ht.roll, x, 1, 2)
    check(ValueError, ht.repeat, x, [1, 2], 0)
    check(ValueError, ht.repeat, x, -1)
    check(TypeError, ht.repeat, x, 1.5)
    check(ValueError, ht.tile, x, (-1, 2))
    check(TypeError, ht.tile, x, 2.0)
    check(ValueError, ht.broadcast_to, x, (3, 6))
    check(ValueError, ht.broadcast_to, x, (6,))
    check(ValueError, ht.broadcast_arrays, x, y)
    check(ValueError, ht.unfold, x, 0, 5)
    check(ValueError, ht.unfold, x, 1, 0)
    check(ValueError, ht.unfold, x, 0, 2, 0)
    check(TypeError, ht.unfold, x, 0, 2.0)
    check(ValueError, ht.unfold, x, 2, 2)
