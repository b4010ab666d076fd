"""
Tests of reductions.py: Allreduce, Reduce, Scan, Exscan.

Run under 1-4 MPI processes: ``python scripts/run_tests.py --procs 1,3 tests/core/communication``.
Every test computes its outcome on each rank and asserts it on all ranks (``agree``).
"""

import pytest
import torch
from mpi4py import MPI

from heat.core import communication as hc
from tests.core.communication.comm_helpers import (
    ALL_DTYPES,
    RANK,
    SIZE,
    SOME_DTYPES,
    WORLD,
    agree,
    make,
    noncontig,
    ops_for,
    outcome,
    reference,
    same,
)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_allreduce_dtypes_ops(dtype):
    ok, msg = True, ""
    for op in ops_for(dtype):
        high = 3 if op == "PROD" else 5
        mine = make(dtype, 12, RANK, low=1 if op == "PROD" else 0, high=high)
        everyone = [
            make(dtype, 12, r, low=1 if op == "PROD" else 0, high=high) for r in range(SIZE)
        ]
        expected = reference(dtype, op, [noncontig(t) for t in everyone])
        out = torch.zeros(4, 3, dtype=dtype).t()  # non-contiguous receive buffer
        result = WORLD.Allreduce(noncontig(mine), out, getattr(MPI, op))
        if result is not out or not same(out, expected):
            ok, msg = False, f"{op}: {out} != {expected}"
        in_place = noncontig(mine).clone()
        WORLD.Allreduce(MPI.IN_PLACE, in_place, getattr(MPI, op))
        if not same(in_place, expected):
            ok, msg = False, f"{op} in place: {in_place}"
        fresh = WORLD.allreduce_tensor(noncontig(mine), getattr(MPI, op))
        if not same(fresh, expected):
            ok, msg = False, f"{op} allreduce_tensor: {fresh}"
        # contiguous small tensors take allreduce_tensor's direct path where the type allows
        direct = WORLD.allreduce_tensor(noncontig(mine).contiguous(), getattr(MPI, op))
        if not same(direct, expected) or direct.dtype != dtype:
            ok, msg = False, f"{op} allreduce_tensor (contiguous): {direct}"
        scalar = WORLD.allreduce_tensor(mine.reshape(-1)[0].clone(), getattr(MPI, op))
        if scalar.shape != () or not same(scalar, expected.reshape(-1)[0]):
            ok, msg = False, f"{op} allreduce_tensor (0-d): {scalar}"
    agree(ok, msg)


def test_allreduce_bad_arguments():
    checks = [
        outcome(ValueError, lambda: WORLD.Allreduce(torch.ones(2), torch.ones(2), MPI.BAND)),
        outcome(
            ValueError,
            lambda: WORLD.Allreduce(
                torch.ones(2, dtype=torch.complex64), torch.ones(2, dtype=torch.complex64), MPI.MAX
            ),
        ),
        outcome(
            ValueError,
            lambda: WORLD.Allreduce(
                torch.ones(2, dtype=torch.bfloat16), torch.ones(2, dtype=torch.bfloat16), MPI.LAND
            ),
        ),
        outcome(ValueError, lambda: WORLD.Allreduce(torch.ones(2), torch.ones(3), MPI.SUM)),
        outcome(TypeError, lambda: WORLD.Allreduce([1.0, 2.0], torch.ones(2), MPI.SUM)),
        outcome(TypeError, lambda: WORLD.Allreduce(torch.ones(2), torch.ones(2), "sum")),
    ]
    names = ["op", "op", "op", "recvbuf", "sendbuf", "op"]
    ok = all(good and name in msg for (good, msg), name in zip(checks, names))
    # the next collective still works
    ok = ok and WORLD.allreduce_tensor(torch.ones(1)).item() == SIZE
    agree(ok, checks)


def test_allreduce_same_tensor_is_in_place():
    x = torch.full((3,), float(RANK + 1))
    WORLD.Allreduce(x, x, MPI.SUM)
    agree(torch.equal(x, torch.full((3,), SIZE * (SIZE + 1) / 2)), x)


@pytest.mark.parametrize("dtype", SOME_DTYPES)
def test_reduce_scan_exscan(dtype):
    everyone = [make(dtype, 6, r) for r in range(SIZE)]
    mine = everyone[RANK]
    ok, msg = True, ""
    for root in sorted({0, SIZE - 1}):
        out = torch.zeros(3, 2, dtype=dtype).t() if RANK == root else None
        result = WORLD.Reduce(noncontig(mine, 2), out, MPI.SUM, root=root)
        if RANK == root:
            if not same(result, reference(dtype, "SUM", [noncontig(t, 2) for t in everyone])):
                ok, msg = False, f"Reduce root {root}: {result}"
        elif result is not None:
            ok, msg = False, "Reduce returned something on a non-root"
        in_place = mine.clone()
        WORLD.Reduce(
            MPI.IN_PLACE if RANK == root else in_place,
            in_place if RANK == root else None,
            MPI.SUM,
            root,
        )
        if RANK == root and not same(in_place, reference(dtype, "SUM", everyone)):
            ok, msg = False, f"Reduce in place: {in_place}"
    scanned = WORLD.scan_tensor(mine)
    if not same(scanned, reference(dtype, "SUM", everyone[: RANK + 1])):
        ok, msg = False, f"scan {scanned}"
    out = torch.zeros(6, dtype=dtype)
    WORLD.Scan(MPI.IN_PLACE, out.copy_(mine))
    if not same(out, scanned):
        ok, msg = False, f"Scan in place {out}"
    ex = WORLD.exscan_tensor(noncontig(mine))
    expected = (
        torch.zeros(6, dtype=dtype) if RANK == 0 else reference(dtype, "SUM", everyone[:RANK])
    )
    if not same(ex, noncontig(expected)):
        ok, msg = False, f"exscan {ex}"
    agree(ok, msg)


def test_user_defined_op_passes_through():
    op = MPI.Op.Create(lambda a, b, dt: None, commute=True)  # keeps the accumulated value
    try:
        out = WORLD.allreduce_tensor(torch.full((2,), 5, dtype=torch.int32), op)
        agree(torch.equal(out, torch.full((2,), 5, dtype=torch.int32)), out)
    finally:
        op.Free()


@pytest.mark.parametrize("dtype", SOME_DTYPES)
def test_iallreduce(dtype):
    everyone = [make(dtype, 6, r) for r in range(SIZE)]
    out = torch.zeros(3, 2, dtype=dtype).t()
    request = WORLD.Iallreduce(noncontig(everyone[RANK], 2), out, MPI.SUM)
    result = request.Wait()
    ok = result is out and same(out, reference(dtype, "SUM", [noncontig(t, 2) for t in everyone]))
    in_place = everyone[RANK].clone()
    op = "PROD" if dtype.is_complex else "MAX"
    requests = [
        WORLD.Iallreduce(MPI.IN_PLACE, in_place, getattr(MPI, op)),
        WORLD.Ibcast(torch.ones(2) if RANK == 0 else torch.zeros(2)),
    ]
    results = hc.Request.Waitall(requests)
    ok = (
        ok
        and same(results[0], reference(dtype, op, everyone))
        and torch.equal(results[1], torch.ones(2))
    )
    agree(ok, (out, results))


@pytest.mark.parametrize("dtype", SOME_DTYPES)
def test_reduce_scatter(dtype, monkeypatch):
    # uneven blocks, an empty one where there are several processes
    counts = [r % 3 + (1 if r == 0 else 0) for r in range(SIZE)]
    total, start = sum(counts), sum(counts[:RANK])
    everyone = [make(dtype, total, r) for r in range(SIZE)]
    expected = reference(dtype, "SUM", everyone)[start : start + counts[RANK]]
    out = torch.zeros(counts[RANK], dtype=dtype)
    ok = WORLD.Reduce_scatter(everyone[RANK], out, counts) is out and same(out, expected)
    pending = WORLD.Ireduce_scatter(everyone[RANK], torch.zeros(counts[RANK], dtype=dtype), counts)
    ok = ok and same(pending.Wait(), expected)
    # messages longer than one MPI call: the reduced whole, of which the own block is kept
    from heat.core.communication import buffers

    monkeypatch.setattr(buffers, "_MAX_COUNT", 2)
    long_out = torch.zeros(counts[RANK], dtype=dtype)
    ok = ok and same(WORLD.Ireduce_scatter(everyone[RANK], long_out, counts).Wait(), expected)
    bad = outcome(ValueError, lambda: WORLD.Reduce_scatter(torch.ones(total + 1), out, counts))
    wrong_counts = outcome(TypeError, lambda: WORLD.Reduce_scatter(everyone[RANK], out, 3))
    agree(ok and bad[0] and "sendbuf" in bad[1] and wrong_counts[0], (out, bad, wrong_counts))
