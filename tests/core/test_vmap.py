"""
ht.vmap against torch.func.vmap on the global tensors: every split axis as the mapped axis,
balanced and skewed layouts (empty blocks), fewer samples than processes, replicated inputs,
several outputs and out_dims, keyword arguments, chunk_size, randomness, and bad input.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import heat as ht
from tests.helpers import (
    assert_arrays_equal,
    collective_assert,
    expect_errors,
    random_array,
    skewed,
    splits_for,
)


def layouts(data, split):
    x = ht.array(data, split=split)
    yield x
    if split is not None and ht.MPI_WORLD.size > 1:
        yield skewed(x)


def reference(func, arrays, in_dims, out_dims=0, **kwargs):
    """torch.func.vmap on the global tensors, as NumPy arrays (always a tuple)."""
    tensors = [torch.from_numpy(np.ascontiguousarray(a)) for a in arrays]
    outputs = torch.func.vmap(func, in_dims=in_dims, out_dims=out_dims)(*tensors, **kwargs)
    outputs = (outputs,) if isinstance(outputs, torch.Tensor) else outputs
    return tuple(o.numpy() for o in outputs)


def _scaled_norm(sample, scale=1.0):
    return scale * torch.sum(sample * sample)


def _affine(sample, weight):
    return sample @ weight + 1


def _stats(sample):
    return sample.mean(0), sample.cumsum(-1)


@pytest.mark.parametrize("shape", [(7, 3), (2, 5), (5, 4, 3), (1, 6)], ids=str)
def test_vmap_matches_torch(shape):
    checks = []
    for dtype in (np.float32, np.float64):
        data = random_array(shape, dtype=dtype, seed=len(shape))
        for split in splits_for(len(shape)):
            if split is None:
                continue
            axis = split % len(shape)
            for x in layouts(data, split):
                (result,) = ht.vmap(_scaled_norm)(x)
                (expected,) = reference(_scaled_norm, [data], (axis,))
                checks.append((result, expected, {"rtol": 1e-5}))
                (result,) = ht.vmap(_scaled_norm, scale=3.0)(x)
                (expected,) = reference(_scaled_norm, [data], (axis,), scale=3.0)
                checks.append((result, expected, {"rtol": 1e-5}))
                if len(shape) == 3:
                    out_dims = (0, -1)
                    result = ht.vmap(_stats, out_dims=out_dims)(x)
                    expected = reference(_stats, [data], (axis,), out_dims)
                    checks.extend((r, e, {"rtol": 1e-5}) for r, e in zip(result, expected))
                    if result[1].split != result[1].ndim - 1:
                        checks.append((result[1], np.zeros(0)))  # fails: split is out_dims
    assert_arrays_equal(checks)


def test_vmap_replicated_and_differently_distributed_inputs():
    checks = []
    data = random_array((9, 4), seed=1)
    weight = random_array((4, 2), seed=2)
    other = random_array((9, 4), dtype=np.int64, seed=3)
    for x in layouts(data, 0):
        # a replicated weight goes whole to every sample
        (result,) = ht.vmap(_affine)(x, ht.array(weight))
        (expected,) = reference(_affine, [data, weight], (0, None))
        checks.append((result, expected))
        # a second split input distributed otherwise (balanced vs skewed) is aligned first
        (result,) = ht.vmap(lambda a, b: a * b, out_dims=1)(x, ht.array(other, split=0))
        (expected,) = reference(lambda a, b: a * b, [data, other], (0, 0), out_dims=1)
        checks.append((result, expected))
        # the mapped axes may differ between inputs: split 0 of one, split 1 of the other
        (result,) = ht.vmap(lambda a, b: a - b)(x, ht.array(other.T.copy(), split=1))
        (expected,) = reference(lambda a, b: a - b, [data, other.T.copy()], (0, 1))
        checks.append((result, expected))
    assert_arrays_equal(checks)


def test_vmap_chunk_size_and_int_outputs():
    data = random_array((6, 3), dtype=np.int64, seed=4)
    checks = []
    for chunk_size in (None, 1, 4):
        for x in layouts(data, 0):
            (result,) = ht.vmap(lambda row: row.max() * 2, chunk_size=chunk_size)(x)
            checks.append((result, data.max(1) * 2))
    assert_arrays_equal(checks)


def test_vmap_randomness():
    x = ht.zeros((8, 3), split=0)
    (result,) = ht.vmap(lambda row: row + torch.rand(3, device=row.device), randomness="different")(
        x
    )
    within = bool(((result.larray >= 0) & (result.larray < 1)).all())
    ok = result.shape == (8, 3) and result.split == 0 and within
    rows = result.larray
    # "different": every row draws its own numbers
    ok = ok and all(not torch.equal(rows[i], rows[j]) for i in range(len(rows)) for j in range(i))
    collective_assert(ok, f"randomness='different': {rows}")
    (same,) = ht.vmap(lambda row: row + torch.rand(3, device=row.device), randomness="same")(x)
    # "same": one draw shared by all the rows a call maps over
    local = same.larray
    ok = same.shape == (8, 3) and all(torch.equal(local[0], r) for r in local)
    collective_assert(ok, f"randomness='same': {local}")
    expect_errors([(RuntimeError, ht.vmap(lambda row: row + torch.rand(3)), (x,), {})])


def test_vmap_bad_input_raises_on_every_rank():
    x = ht.zeros((6, 3), split=0)
    y = ht.zeros((5, 3), split=0)
    identity = ht.vmap(lambda a: a)
    expect_errors(
        [
            (TypeError, ht.vmap, ("sum",), {}),
            (TypeError, ht.vmap, (torch.sum,), {"out_dims": 1.5}),
            (TypeError, ht.vmap, (torch.sum,), {"out_dims": (0, "1")}),
            (ValueError, ht.vmap, (torch.sum,), {"randomness": "sometimes"}),
            (ValueError, ht.vmap, (torch.sum,), {"chunk_size": 0}),
            (TypeError, ht.vmap, (torch.sum,), {"chunk_size": 2.0}),
            (TypeError, identity, (torch.zeros(6, 3),), {}),
            (ValueError, identity, (ht.zeros((6, 3)),), {}),
            (ValueError, ht.vmap(lambda a, b: a + b), (x, y), {}),
            (ValueError, ht.vmap(lambda a: (a, a), out_dims=(0, 0, 0)), (x,), {}),
        ]
    )
    collective_assert(ht.MPI_WORLD.allreduce(1) == ht.MPI_WORLD.size)


def test_vmap_error_on_one_process_raises_on_every_process():
    # only the block holding the last matrix fails (not positive definite); every process
    # raises, and processes without samples too
    for n in (2 * ht.MPI_WORLD.size, 1):
        data = np.tile(np.eye(2), (n, 1, 1))
        data[-1] = -np.eye(2)
        x = ht.array(data, split=0)
        expect_errors([(RuntimeError, ht.vmap(torch.linalg.cholesky), (x,), {})])
    collective_assert(ht.MPI_WORLD.allreduce(1) == ht.MPI_WORLD.size)
