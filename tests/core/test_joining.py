"""
Tests of heat/core/joining.py (concatenate, stack and relatives, split and relatives): NumPy is
the oracle.

Every function runs on every split, on balanced and skewed inputs, shapes that divide unevenly,
have fewer rows than processes or are empty; bad input raises on every rank and leaves the
communicator usable. Results are checked in batches with the machinery of
tests/helpers.py (two collectives per test however many results it checks).
"""

import numpy as np
import pytest

import heat as ht
from tests.helpers import (
    SHAPES,
    Checks,
    assert_array_equal,
    assert_raises_then_collective_works,
    error_operands,
    expect_errors,
    inputs,
    random_array,
    shape_id,
    skewed,
)


# ---------------------------------------------------------------------------------------------
# joining
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("axis", [0, 1])
def test_concatenate_pairs(axis):
    check = Checks()
    shapes = ((5, 3), (2, 3)) if axis == 0 else ((3, 5), (3, 2))
    a_np = random_array(shapes[0], np.float32)
    b_np = random_array(shapes[1], np.float32, seed=1)
    expected = np.concatenate([a_np, b_np], axis=axis)
    for s1 in (None, 0, 1):
        for s2 in (None, 0, 1):
            a = skewed(ht.array(a_np, split=s1))
            b = ht.array(b_np, split=s2)
            result = ht.concatenate([a, b], axis=axis)
            check(result, expected, f"splits {s1}, {s2}")
            chosen = [s for s in (s1, s2) if s is not None]
            if chosen:
                check.expect(result.split in chosen, f"split {result.split}")
                check.expect(result._balanced is True, "not balanced")
            else:
                check.expect(result.split is None, f"split {result.split}")
    check.verify()


@pytest.mark.parametrize("split", [None, 0, 1, 2])
def test_concatenate_many(split):
    check = Checks()
    arrays = [random_array((k, 2, 3), np.int64, seed=k) for k in (0, 3, 1, 4)]
    hts = [ht.array(a, split=split) for a in arrays]
    check(ht.concatenate(hts, axis=0), np.concatenate(arrays, axis=0), "axis 0")
    arrays1 = [random_array((2, k, 3), np.int32, seed=k) for k in (1, 0, 4)]
    hts1 = [skewed(ht.array(a, split=split)) for a in arrays1]
    check(ht.concatenate(hts1, axis=1), np.concatenate(arrays1, axis=1), "axis 1")
    check(ht.concatenate(hts1, axis=None), np.concatenate(arrays1, axis=None), "axis None")
    check(
        ht.concatenate([hts1[0], arrays1[1], hts1[2]], axis=1),
        np.concatenate(arrays1, axis=1),
        "with a NumPy operand",
    )
    check.verify()


@pytest.mark.parametrize("split", [None, 0])
def test_concatenate_dtypes(split):
    check = Checks()
    a_np = random_array((3, 2), np.int32)
    b_np = random_array((4, 2), np.float32, seed=1)
    c_np = random_array((2, 2), np.bool_, seed=2)
    z_np = random_array((3, 2), np.complex64, seed=3)
    a, b, c, z = (ht.array(v, split=split) for v in (a_np, b_np, c_np, z_np))
    check(ht.concatenate((a, b, c)), np.concatenate((a_np, b_np, c_np)), "int32+float32+bool")
    check(ht.concatenate((z, b)), np.concatenate((z_np, b_np)), "complex64+float32")
    check(ht.concatenate((c, c)), np.concatenate((c_np, c_np)), "bool")
    out = ht.zeros((5, 2), dtype=ht.float64, split=split)
    result = ht.concatenate((c, a), out=out)
    check.expect(result is out, "out not returned")
    check(out, np.concatenate((c_np, a_np)).astype(np.float64), "out")
    check.verify()


@pytest.mark.parametrize("splits", [(None, None), (0, 0), (0, None), (None, 0)])
def test_stack_family(splits):
    check = Checks()
    a_np = random_array((5,), np.float32)
    b_np = random_array((5,), np.float32, seed=1)
    m_np = random_array((5, 2), np.float32, seed=2)
    t_np = random_array((2, 3, 4), np.float32, seed=3)
    a, b = ht.array(a_np, split=splits[0]), ht.array(b_np, split=splits[1])
    m, t = ht.array(m_np, split=splits[0]), ht.array(t_np, split=splits[1])
    for axis in (0, 1, -1):
        check(ht.stack([a, b], axis=axis), np.stack([a_np, b_np], axis=axis), f"stack {axis}")
    check(ht.stack([t, t], axis=2), np.stack([t_np, t_np], axis=2), "stack 3-D")
    check(ht.hstack([a, b]), np.hstack([a_np, b_np]), "hstack 1-D")
    check(ht.vstack([a, b]), np.vstack([a_np, b_np]), "vstack 1-D")
    check(ht.row_stack([a, b]), np.vstack([a_np, b_np]), "row_stack")
    check(ht.column_stack([a, b]), np.column_stack([a_np, b_np]), "column_stack 1-D")
    check(ht.dstack([a, b]), np.dstack([a_np, b_np]), "dstack 1-D")
    check(ht.column_stack([a, m]), np.column_stack([a_np, m_np]), "column_stack mixed")
    check(ht.hstack([m, m]), np.hstack([m_np, m_np]), "hstack 2-D")
    check(ht.vstack([m, m]), np.vstack([m_np, m_np]), "vstack 2-D")
    check(ht.dstack([m, m]), np.dstack([m_np, m_np]), "dstack 2-D")
    check.verify()


# ---------------------------------------------------------------------------------------------
# splitting
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("shape", SHAPES, ids=shape_id)
def test_split(shape):
    check = Checks()
    for data, x, label in inputs(shape):
        for axis in range(len(shape)):
            n = shape[axis]
            specs = [[1, 3], [-2, 10], [2, 1]] + [k for k in (1, 2, 3) if n % k == 0]
            for spec in specs:
                pieces = ht.split(x, spec, axis=axis)
                expected = np.split(data, spec, axis=axis)
                check.expect(len(pieces) == len(expected), "piece count")
                for piece, e in zip(pieces, expected):
                    check(piece, e, f"{label} axis={axis} {spec}")
            for spec in (2, 4):
                for piece, e in zip(
                    ht.array_split(x, spec, axis=axis), np.array_split(data, spec, axis=axis)
                ):
                    check(piece, e, f"{label} array_split axis={axis} {spec}")
    check.verify()


def test_hsplit_vsplit_dsplit():
    check = Checks()
    data = random_array((4, 6, 2), np.float32)
    v_np = random_array((7,), np.float32)
    for split in (None, 0, 1, 2):
        x = ht.array(data, split=split)
        for piece, e in zip(ht.hsplit(x, 3), np.hsplit(data, 3)):
            check(piece, e, f"hsplit {split}")
        for piece, e in zip(ht.vsplit(x, [1]), np.vsplit(data, [1])):
            check(piece, e, f"vsplit {split}")
        for piece, e in zip(ht.dsplit(x, 2), np.dsplit(data, 2)):
            check(piece, e, f"dsplit {split}")
    v = ht.array(v_np, split=0)
    for piece, e in zip(ht.hsplit(v, [3, 5]), np.hsplit(v_np, [3, 5])):
        check(piece, e, "hsplit 1-D")
    for piece, e in zip(ht.split(v, ht.array([2, 4])), np.split(v_np, [2, 4])):
        check(piece, e, "indices as DNDarray")
    for piece, e in zip(ht.split(v, np.array([2, 4])), np.split(v_np, [2, 4])):
        check(piece, e, "indices as ndarray")
    check.verify()


# ---------------------------------------------------------------------------------------------
# results with the shared helper (full gather + invariants), as the rest of the suite checks
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("split", [None, 0, 1])
def test_with_shared_helper(split):
    data = random_array((5, 4), np.float32)
    x = ht.array(data, split=split)
    assert_array_equal(ht.concatenate([x, x], axis=0), np.concatenate([data, data], axis=0))
    assert_array_equal(ht.split(x, [2], axis=0)[1], np.split(data, [2], axis=0)[1])


# ---------------------------------------------------------------------------------------------
# bad input: the same exception on every rank, the communicator still works
# ---------------------------------------------------------------------------------------------
def bad_calls(x, y, v):
    return [
        (ValueError, ht.concatenate, ([x, y],), {}),
        (ValueError, ht.concatenate, ([x, x],), {"axis": 2}),
        (ValueError, ht.concatenate, ([x, v],), {}),
        (ValueError, ht.concatenate, ([],), {}),
        (TypeError, ht.concatenate, (x,), {}),
        (ValueError, ht.concatenate, ([ht.array(1.0), ht.array(2.0)],), {}),
        (ValueError, ht.stack, ([x, y],), {}),
        (ValueError, ht.split, (x, 5), {}),
        (ValueError, ht.split, (x, 0), {}),
        (ValueError, ht.split, (x, 2), {"axis": 2}),
        (TypeError, ht.split, (x, 2.5), {}),
        (ValueError, ht.vsplit, (v, 1), {}),
        (ValueError, ht.dsplit, (x, 1), {}),
    ]


@pytest.mark.parametrize("split", [None, 0, 1])
def test_errors(split):
    x, y, v = error_operands(split)
    expect_errors(bad_calls(x, y, v))
    # the communicator still works after these errors, also for a collective operation
    assert_raises_then_collective_works(ValueError, ht.concatenate, [x, y], axis=0)
    assert_array_equal(ht.concatenate([x, x], axis=0), np.concatenate([x.numpy()] * 2, axis=0))
