"""
Tests of tensors.py: tensor-level conveniences.

Run under 1-4 MPI processes: ``python scripts/run_tests.py --procs 1,3 tests/core/communication``.
Every test computes its outcome on each rank and asserts it on all ranks (``agree``).
"""

import functools

import pytest
import torch
from mpi4py import MPI

from tests.core.communication.comm_helpers import (
    RANK,
    SIZE,
    SOME_DTYPES,
    WORLD,
    agree,
    make,
    outcome,
    reference,
    same,
)


@pytest.mark.parametrize(
    "dtype,op,neutral",
    [
        (torch.float32, "MIN", float("inf")),
        (torch.float32, "MAX", float("-inf")),
        (torch.bfloat16, "PROD", 1.0),
        (torch.int64, "MIN", torch.iinfo(torch.int64).max),
        (torch.int16, "MAX", torch.iinfo(torch.int16).min),
        (torch.uint8, "BAND", 255),
        (torch.bool, "LAND", True),
        (torch.bool, "SUM", False),
        (torch.complex128, "PROD", 1.0),
    ],
)
def test_exscan_tensor_neutral_and_values(dtype, op, neutral):
    everyone = [make(dtype, 4, r, low=1, high=3) for r in range(SIZE)]
    result = WORLD.exscan_tensor(everyone[RANK], getattr(MPI, op))
    if RANK == 0:
        expected = torch.full((4,), neutral, dtype=dtype)
    else:
        expected = reference(dtype, op, everyone[:RANK])
    agree(same(result, expected), (result, expected))


def test_bcast_tensor_errors_everywhere():
    good, msg = outcome(TypeError, lambda: WORLD.bcast_tensor([1, 2] if RANK == 0 else None))
    good2, msg2 = outcome(ValueError, lambda: WORLD.bcast_tensor(torch.ones(1), root=SIZE))
    agree(good and "t must be" in msg and good2 and "root" in msg2, (msg, msg2))


@pytest.mark.parametrize("dtype", SOME_DTYPES + [torch.uint8])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_allgather_and_gather_tensors(dtype, axis):
    def block(r):
        rows = r % 3  # rank 0 holds nothing
        shape = [2, 3, 2]
        shape[axis] = rows
        return make(dtype, math_prod(shape), r).reshape(shape)

    everyone = [block(r) for r in range(SIZE)]
    mine = everyone[RANK].transpose(0, 2).contiguous().transpose(0, 2)  # non-contiguous values
    expected = torch.cat(everyone, dim=axis)
    result = WORLD.allgather_tensors(mine, axis=axis)
    ok = same(result, expected) and result.is_contiguous()
    root = SIZE - 1
    gathered = WORLD.gather_tensors(mine, root=root, axis=axis)
    ok = ok and (same(gathered, expected) if RANK == root else gathered is None)
    agree(ok, (result.shape, expected.shape))


def math_prod(shape):
    return functools.reduce(lambda a, b: a * b, shape, 1)


def test_allgather_tensors_errors_agree():
    dtype = torch.float64 if RANK == SIZE - 1 else torch.float32
    good1, msg1 = outcome(
        ValueError, lambda: WORLD.allgather_tensors(torch.zeros(2, 3, dtype=dtype))
    )
    shape = (2, 4) if RANK == SIZE - 1 else (2, 3)
    good2, msg2 = outcome(ValueError, lambda: WORLD.allgather_tensors(torch.zeros(shape)))
    good3, msg3 = outcome(
        TypeError, lambda: WORLD.gather_tensors(None if RANK == 0 else torch.zeros(1))
    )
    good4, msg4 = outcome(ValueError, lambda: WORLD.allgather_tensors(torch.zeros(2), axis=1))
    good5, msg5 = outcome(ValueError, lambda: WORLD.allgather_tensors(torch.tensor(1.0)))
    if SIZE == 1:  # nothing can disagree with a single process
        good1 = good2 = True
    ok = good1 and good2 and good3 and good4 and good5 and "axis" in msg4
    ok = ok and WORLD.allgather_tensors(torch.ones(1)).shape == (SIZE,)  # still in step
    agree(ok, (msg1, msg2, msg3, msg4, msg5))


@pytest.mark.parametrize("dtype", SOME_DTYPES)
@pytest.mark.parametrize("axis", [0, 1])
def test_alltoallv_tensors(dtype, axis):
    def block(src, dst):
        rows = (src + dst) % 3
        shape = [rows, 4] if axis == 0 else [4, rows]
        return make(dtype, 4 * rows, 10 * src + dst).reshape(shape)

    blocks = [block(RANK, q).t().contiguous().t() for q in range(SIZE)]  # non-contiguous
    result = WORLD.alltoallv_tensors(blocks, axis=axis)
    ok = len(result) == SIZE and all(same(result[q], block(q, RANK)) for q in range(SIZE))
    agree(ok, [r.shape for r in result])


def test_alltoallv_tensors_errors_agree():
    def bad_length():
        blocks = [torch.zeros(1)] * (SIZE + (1 if RANK == 0 else 0))
        return WORLD.alltoallv_tensors(blocks)

    def bad_dtype():
        dtype = torch.int32 if RANK == SIZE - 1 else torch.int64
        return WORLD.alltoallv_tensors([torch.zeros(1, dtype=dtype)] * SIZE)

    def bad_shape():
        cols = 3 if RANK == SIZE - 1 else 2
        return WORLD.alltoallv_tensors([torch.zeros(1, cols)] * SIZE)

    def bad_type():
        return WORLD.alltoallv_tensors(
            [torch.zeros(1)] * (SIZE - 1) + ["x" if RANK == 0 else torch.zeros(1)]
        )

    checks = [
        outcome(ValueError, bad_length),
        outcome(TypeError, bad_type),
        outcome(ValueError, bad_axis),
    ]
    if SIZE > 1:
        checks += [outcome(ValueError, bad_dtype), outcome(ValueError, bad_shape)]
    ok = all(good for good, _ in checks)
    ok = ok and len(WORLD.alltoallv_tensors([torch.ones(1)] * SIZE)) == SIZE  # still in step
    agree(ok, checks)


def bad_axis():
    return WORLD.alltoallv_tensors([torch.zeros(2)] * SIZE, axis=1 if RANK == 0 else 0)
