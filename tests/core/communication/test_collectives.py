"""
Tests of collectives.py: Bcast, point-to-point, Allgather, Gather, Scatter, Alltoall.

Run under 1-4 MPI processes: ``python scripts/run_tests.py --procs 1,3 tests/core/communication``.
Every test computes its outcome on each rank and asserts it on all ranks (``agree``).
"""

import pytest
import torch
from mpi4py import MPI

from tests.core.communication.comm_helpers import (
    ALL_DTYPES,
    RANK,
    SIZE,
    SOME_DTYPES,
    WORLD,
    agree,
    make,
    noncontig,
    same,
    strided,
)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_bcast(dtype):
    ok, msg = True, ""
    for root in sorted({0, SIZE - 1}):
        data = make(dtype, 12, root)
        buf = noncontig(data) if RANK == root else torch.zeros(4, 3, dtype=dtype).t()
        result = WORLD.Bcast(buf, root=root)
        if result is not buf or not same(buf, noncontig(data)):
            ok, msg = False, f"root {root}: {buf}"
        got = WORLD.bcast_tensor(noncontig(data) if RANK == root else None, root=root)
        if not same(got, noncontig(data)):
            ok, msg = False, f"bcast_tensor root {root}: {got}"
        request = WORLD.Ibcast(data.clone() if RANK == root else torch.zeros(12, dtype=dtype), root)
        if not same(request.Wait(), data):
            ok, msg = False, f"Ibcast root {root}"
    agree(ok, msg)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_allgather_gather_scatter_alltoall(dtype):
    everyone = [make(dtype, 6, r) for r in range(SIZE)]
    mine = everyone[RANK]
    stacked = torch.stack(everyone)
    ok, msg = True, ""
    out = torch.zeros(6, SIZE, dtype=dtype).t()  # (SIZE, 6), non-contiguous
    WORLD.Allgather(noncontig(mine, 2), out)
    if not same(out, torch.stack([noncontig(t, 2).reshape(-1) for t in everyone])):
        ok, msg = False, f"Allgather {out}"
    in_place = torch.zeros(SIZE, 6, dtype=dtype)
    in_place[RANK] = mine
    WORLD.Allgather(MPI.IN_PLACE, in_place)
    if not same(in_place, stacked):
        ok, msg = False, f"Allgather in place {in_place}"
    root = SIZE - 1
    gathered = WORLD.Gather(mine, torch.zeros(SIZE, 6, dtype=dtype) if RANK == root else None, root)
    if (RANK == root and not same(gathered, stacked)) or (RANK != root and gathered is not None):
        ok, msg = False, f"Gather {gathered}"
    if RANK == root:
        in_place = stacked.clone()
        in_place[[r for r in range(SIZE) if r != root]] = torch.zeros(6, dtype=dtype)
        WORLD.Gather(MPI.IN_PLACE, in_place, root)
        if not same(in_place, stacked):
            ok, msg = False, f"Gather in place {in_place}"
    else:
        WORLD.Gather(mine, None, root)
    source = make(dtype, 6 * SIZE, 99).reshape(SIZE, 6)
    recv = torch.zeros(3, 2, dtype=dtype).t()
    WORLD.Scatter(source if RANK == 0 else None, recv, root=0)
    if not same(recv, source[RANK].reshape(2, 3)):
        ok, msg = False, f"Scatter {recv}"
    scattered = WORLD.Scatter(
        source.clone() if RANK == 0 else None,
        MPI.IN_PLACE if RANK == 0 else torch.zeros(6, dtype=dtype),
        0,
    )
    if RANK and not same(scattered, source[RANK]):
        ok, msg = False, f"Scatter in place {scattered}"
    send = torch.stack([make(dtype, 2, 10 * RANK + q) for q in range(SIZE)])
    expected = torch.stack([make(dtype, 2, 10 * q + RANK) for q in range(SIZE)])
    recv = torch.zeros(2, SIZE, dtype=dtype).t()
    WORLD.Alltoall(send.t().contiguous().t(), recv)
    if not same(recv, expected):
        ok, msg = False, f"Alltoall {recv}"
    in_place = send.clone()
    WORLD.Alltoall(MPI.IN_PLACE, in_place)
    if not same(in_place, expected):
        ok, msg = False, f"Alltoall in place {in_place}"
    agree(ok, msg)


@pytest.mark.parametrize("dtype", SOME_DTYPES)
def test_point_to_point(dtype):
    right, left = (RANK + 1) % SIZE, (RANK - 1) % SIZE
    ok, msg = True, ""
    data = make(dtype, 12, RANK)
    recv = torch.zeros(4, 3, dtype=dtype).t()
    if SIZE > 1:
        if RANK % 2 == 0:
            WORLD.Send(noncontig(data), right, tag=3)
            WORLD.Recv(recv, left, tag=3)
        else:
            WORLD.Recv(recv, left, tag=3)
            WORLD.Send(noncontig(data), right, tag=3)
        if not same(recv, noncontig(make(dtype, 12, left))):
            ok, msg = False, f"Send/Recv {recv}"
    request_recv = WORLD.Irecv(torch.zeros(4, 3, dtype=dtype).t(), source=left, tag=5)
    request_send = WORLD.Isend(noncontig(data), right, tag=5)
    while not request_recv.Test():
        pass
    got = request_recv.Wait()
    if (
        request_send.Wait() is not None
        or not request_recv.done
        or not same(got, noncontig(make(dtype, 12, left)))
    ):
        ok, msg = False, f"Isend/Irecv {got}"
    # a short message into a larger, non-contiguous buffer leaves the rest untouched
    short = WORLD.Irecv(strided(torch.zeros(6, dtype=dtype)), source=left, tag=4)
    WORLD.Isend(make(dtype, 2, RANK), right, tag=4).Wait()
    got = short.Wait()
    if not same(got[:2], make(dtype, 2, left)) or not same(got[2:], torch.zeros(4, dtype=dtype)):
        ok, msg = False, f"short message {got}"
    status = MPI.Status()
    request = WORLD.Irecv(torch.zeros(2, dtype=dtype), source=MPI.ANY_SOURCE, tag=6)
    WORLD.Isend(make(dtype, 2, RANK), right, tag=6).Wait()
    request.Wait(status)
    if status.Get_source() != left:
        ok, msg = False, f"status source {status.Get_source()}"
    agree(ok, msg)
