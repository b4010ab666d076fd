"""
Tests of the overlapped executions of heat/core/linalg/_matmul.py at sizes where they cut their
products into pieces (at least 2 x 64 rows per process): the point-to-point reduction of partial
products (both operands split along the contracted axis, e.g. ``x1`` split 1 and ``x2`` split
0), its pieces received straight into the result or through a temporary (batched results), the
ring in the transposed frame (``x1`` split 1, ``x2`` split 1) whose pieces are the result's
columns, and the row pieces themselves. NumPy is the oracle.
"""

import numpy as np
import pytest
import torch

import heat as ht
from heat.core.linalg import _matmul
from tests.helpers import assert_arrays_equal, collective_assert, random_array

TOLERANCES = {
    np.float32: {"rtol": 1e-4, "atol": 1e-3},
    np.float64: {"rtol": 1e-10, "atol": 1e-10},
}
SPLITS = (None, 0, 1)


def all_splits(a, b, dtype, splits_a=SPLITS, splits_b=SPLITS):
    expected = np.matmul(a, b)
    cases = []
    for sa in splits_a:
        for sb in splits_b:
            result = ht.matmul(ht.array(a, split=sa), ht.array(b, split=sb))
            cases.append((result, expected, TOLERANCES.get(dtype, {})))
    return cases


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
@pytest.mark.parametrize(
    "shapes",
    [
        ((300, 257), (257, 270)),  # uneven blocks, several pieces per process
        ((260, 300), (300, 3)),  # result much smaller than the operands: reduce
        ((3, 150), (150, 290)),  # fewer result rows than processes at 4
        ((2, 5), (5, 2)),  # tiny: single pieces, empty blocks
    ],
    ids=lambda s: f"{s[0]}@{s[1]}",
)
def test_matmul_pieces_every_split(shapes, dtype):
    a = random_array(shapes[0], dtype=dtype, seed=5)
    b = random_array(shapes[1], dtype=dtype, seed=6)
    assert_arrays_equal(all_splits(a, b, dtype))


def test_matmul_contracted_splits_keep_row_layout():
    # x1 split 1, x2 split 0 (both along k) of square matrices: partial products summed onto
    # the owners of the result's rows; the result is split along its rows, balanced
    a = random_array((256, 200), dtype=np.float64, seed=7)
    b = random_array((200, 256), dtype=np.float64, seed=8)
    result = ht.matmul(ht.array(a, split=1), ht.array(b, split=0))
    assert_arrays_equal([(result, a @ b, TOLERANCES[np.float64])])
    collective_assert(result.split == 0, f"split {result.split} instead of 0")
    collective_assert(result.balanced, "result not balanced")


def test_matmul_contracted_splits_vectors_and_batches():
    cases = []
    # 1-D @ 2-D, both along k: reduced along the result's columns
    v = random_array((300,), dtype=np.float64, seed=9)
    m = random_array((300, 200), dtype=np.float64, seed=10)
    cases += all_splits(v, m, np.float64, (None, 0), SPLITS)
    # batched, both along k: the result's row pieces are not contiguous (received through a
    # temporary)
    a = random_array((2, 300, 140), dtype=np.float32, seed=11)
    b = random_array((2, 140, 130), dtype=np.float32, seed=12)
    cases += all_splits(a, b, np.float32, (None, 2), (None, 1))
    assert_arrays_equal(cases)


def test_plan_chooses_reduction_for_square_contracted_splits():
    # the reduction moves (p-1)/p of the result; resplitting x1 and circulating x2 would move
    # (p-1)/p of both operands' blocks and more: the plan must take the reduction
    a = _matmul._Operand(None, (2000, 2000), 1, None, False, None, 0)
    b = _matmul._Operand(None, (2000, 2000), 0, None, False, None, 0)
    for p in (2, 3, 4):
        plan = _matmul._plan(a, b, (2000, 2000), (), p)
        assert plan == ("reduce", 0), (p, plan)
    # a result much larger than the operands: resplit the smaller one and circulate the other
    a = _matmul._Operand(None, (2000, 10), 1, None, False, None, 0)
    b = _matmul._Operand(None, (10, 2000), 0, None, False, None, 0)
    assert _matmul._plan(a, b, (2000, 2000), (), 2) == ("ring", False, "resplit")


def test_pieces_cover_the_block():
    for length in (0, 1, 63, 64, 127, 128, 129, 1000, 1001):
        pieces = _matmul._pieces(length)
        assert pieces[0][0] == 0
        assert sum(size for _, size in pieces) == length
        assert all(start + size == nxt for (start, size), (nxt, _) in zip(pieces, pieces[1:]))
        assert len(pieces) == max(1, min(_matmul._PIECES, length // _matmul._CHUNK_ROWS))


class _Pending:
    """A request that stays pending: makes _product_polling cut its product into pieces."""

    done = False

    def __init__(self):
        self.tests = 0

    def Test(self):
        self.tests += 1
        return False


@pytest.mark.parametrize("accumulate", [False, True])
def test_product_polling_transposed_out(accumulate, monkeypatch):
    shapes = []
    product_into = _matmul._product_into

    def recording(out, a, b, accumulate):
        shapes.append(tuple(out.shape))
        product_into(out, a, b, accumulate)

    monkeypatch.setattr(_matmul, "_product_into", recording)
    generator = torch.Generator().manual_seed(3)
    a = torch.randn(200, 150, dtype=torch.float64, generator=generator)
    b = torch.randn(150, 300, dtype=torch.float64, generator=generator)
    start = torch.randn(300, 200, dtype=torch.float64, generator=generator)
    # row-major result and the transposed frame's column-major view of one
    for transposed in (False, True):
        storage = start.clone() if transposed else start.mT.contiguous()
        out = storage.mT if transposed else storage
        initial = out.clone()
        pending = _Pending()
        shapes.clear()
        _matmul._product_polling(out, a, b, accumulate, [pending])
        # pieces of the rows as they lie in memory: a column-major out is cut along its columns
        assert shapes == ([(200, 150)] * 2 if transposed else [(100, 300)] * 2), shapes
        expected = a @ b + (initial if accumulate else 0)
        assert torch.allclose(out, expected, rtol=1e-12, atol=1e-12)
        assert pending.tests == 2  # two pieces, a Test after each
