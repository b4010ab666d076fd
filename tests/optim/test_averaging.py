"""
Tests of heat/optim/averaging.py: the blend, reduced-precision packing and flat layouts, against
hand computations (pure tensor math; every rank computes the same).
"""

import pytest
import torch

from heat.optim.averaging import (
    FlatLayout,
    blend,
    bucket_bounds,
    chunk_bounds,
    pack,
    slice_bounds,
    sum_packed,
)


def test_blend_against_hand_computation():
    local = torch.tensor([1.0, 2.0, -4.0])
    node_sum = torch.tensor([3.0, 5.0, 0.5])  # sum over P = 2 nodes of their sent parameters
    # S = 3: (2*3*x_local + sum) / (2*3 + 2)
    expected = torch.tensor([(6 * 1.0 + 3.0) / 8, (6 * 2.0 + 5.0) / 8, (6 * -4.0 + 0.5) / 8])
    assert torch.equal(blend(local, node_sum, num_nodes=2, batches_waited=3), expected)
    # S = 0: the plain average of the nodes, the local value does not count
    assert torch.equal(blend(local, node_sum, 2, 0), node_sum / 2)
    # P = 3, S = 1: (2 x + sum) / 5
    assert torch.allclose(blend(local, node_sum, 3, 1), (2 * local + node_sum) / 5)


def test_blend_writes_into_out_and_checks_arguments():
    local = torch.tensor([2.0, 4.0])
    node_sum = torch.tensor([6.0, 6.0])
    result = blend(local, node_sum, 2, 1, out=local)
    assert result is local and torch.equal(local, torch.tensor([2.5, 3.5]))
    with pytest.raises(ValueError):
        blend(local, node_sum, 0, 1)
    with pytest.raises(ValueError):
        blend(local, node_sum, 2, -1)


def test_pack_and_float32_summation():
    values = torch.tensor([1.0, 3.0, 1000.0])
    packed = pack(values, torch.bfloat16, scale=0.5)
    assert packed.dtype == torch.bfloat16 and torch.equal(
        packed.float(), torch.tensor([0.5, 1.5, 500.0])
    )
    copy = pack(values, torch.float32)
    assert copy is not values and torch.equal(copy, values)
    # 256 + 1 + 1 in bfloat16 arithmetic rounds to 256 at each step; in float32 it is 258
    pieces = [
        torch.tensor([256.0], dtype=torch.bfloat16),
        torch.ones(1, dtype=torch.bfloat16),
        torch.ones(1, dtype=torch.bfloat16),
    ]
    bf16_sum = pieces[0] + pieces[1] + pieces[2]
    assert bf16_sum.item() == 256.0
    assert sum_packed(pieces, torch.empty(1)).item() == 258.0
    assert sum_packed([], torch.ones(2)).tolist() == [0.0, 0.0]


def test_bounds():
    assert [slice_bounds(10, 4, i) for i in range(4)] == [(0, 2), (2, 5), (5, 7), (7, 10)]
    assert [slice_bounds(2, 3, i) for i in range(3)] == [(0, 0), (0, 1), (1, 2)]
    assert chunk_bounds(3, 12, 4) == [(3, 7), (7, 11), (11, 12)]
    assert chunk_bounds(5, 5, 4) == []
    assert bucket_bounds([3, 3, 5, 1], capacity=6) == [(0, 2), (2, 4)]
    assert bucket_bounds([10, 1, 1], capacity=4) == [(0, 1), (1, 3)]  # too large: a bucket alone
    assert bucket_bounds([], capacity=4) == []


def test_flat_layout_gather_and_scatter_ranges():
    tensors = [torch.zeros(2, 3), torch.zeros(0), torch.zeros(4), torch.zeros(1, 1)]
    layout = FlatLayout(tensors)
    assert layout.numel == 11 and layout.offsets == [0, 6, 6, 10, 11]
    flat = torch.arange(11.0)
    layout.scatter(flat, tensors)
    assert torch.equal(tensors[0], torch.arange(6.0).reshape(2, 3))
    assert torch.equal(tensors[2], torch.tensor([6.0, 7.0, 8.0, 9.0]))
    assert torch.equal(layout.gather(tensors), flat)
    assert torch.equal(layout.gather(tensors, 4, 9), flat[4:9])
    # a partial write touches only its range
    layout.scatter(torch.tensor([-1.0, -2.0, -3.0]), tensors, start=5)
    assert layout.gather(tensors).tolist() == [0, 1, 2, 3, 4, -1, -2, -3, 8, 9, 10]
    # gather converts into the type of ``out`` (float32 view of float64 tensors)
    out = layout.gather([t.double() for t in tensors], 0, 3, out=torch.empty(3))
    assert out.dtype == torch.float32 and out.tolist() == [0, 1, 2]


def test_flat_layout_non_contiguous_target():
    base = torch.zeros(3, 2)
    transposed = base.t()  # (2, 3), not contiguous
    layout = FlatLayout([transposed])
    layout.scatter(torch.arange(6.0), [transposed])
    assert torch.equal(transposed, torch.arange(6.0).reshape(2, 3))
